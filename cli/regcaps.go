package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/slatec/slatec/occupancy"
	"github.com/slatec/slatec/transform"
)

// registerCaps compiles each .cu input with nvcc -Xptxas -v for each
// architecture and returns, per architecture, the registers each kernel
// uses (the largest over its template instances): transform.Options.RegCaps.
// Headers are not compiled on their own; their kernels get no cap. The
// -I directories and -D/-U macros are the build's.
func registerCaps(paths []string, archs, includes, macroArgs []string) (map[string]map[string]int, map[string]map[string]map[string]int, error) {
	nvcc, why := findNVCC()
	if nvcc == "" {
		return nil, nil, fmt.Errorf("--match-regs needs nvcc: %s", why)
	}
	tmp, err := os.MkdirTemp("", "slatec-regs-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	caps := map[string]map[string]int{}
	instances := map[string]map[string]map[string]int{}
	for _, arch := range archs {
		if !strings.HasPrefix(arch, "sm_") {
			return nil, nil, usagef("--match-regs takes real architectures such as sm_90, not %q", arch)
		}
		caps[arch] = map[string]int{}
		instances[arch] = map[string]map[string]int{}
		for _, p := range paths {
			if p == "-" || !strings.HasSuffix(p, ".cu") {
				continue
			}
			out, err := runPtxas(nvcc, arch, p, "", tmp, includes, macroArgs)
			if err != nil {
				return nil, nil, fmt.Errorf("--match-regs: %s does not compile for %s (%s):\n%s", p, arch, filepath.Base(nvcc), err)
			}
			usages := occupancy.ParsePtxas(out)
			instArgs := templateArgs(usages)
			for i, u := range usages {
				if u.Registers > caps[arch][u.Name] {
					caps[arch][u.Name] = u.Registers
				}
				if u.Template && instArgs[i] != "" {
					if instances[arch][u.Name] == nil {
						instances[arch][u.Name] = map[string]int{}
					}
					instances[arch][u.Name][instArgs[i]] = u.Registers
				}
			}
		}
	}
	return caps, instances, nil
}

// templateArgs returns, for each template instance among us, its template
// arguments as C++ spells them ("64, 64, 2, 2"), demangled with c++filt;
// "" where c++filt is missing or the arguments are not plain (then the
// instance is capped at its kernel's largest instance).
func templateArgs(us []occupancy.Usage) []string {
	out := make([]string, len(us))
	filt, err := exec.LookPath("c++filt")
	if err != nil {
		return out
	}
	var in strings.Builder
	for _, u := range us {
		in.WriteString(u.Mangled + "\n")
	}
	cmd := exec.Command(filt)
	cmd.Stdin = strings.NewReader(in.String())
	res, err := cmd.Output()
	if err != nil {
		return out
	}
	lines := strings.Split(strings.TrimRight(string(res), "\n"), "\n")
	if len(lines) != len(us) {
		return out
	}
	for i, l := range lines {
		if !us[i].Template {
			continue
		}
		out[i] = instanceArgs(l, us[i].Name)
	}
	return out
}

// instanceArgs extracts "A, B" from "void ns::k<A, B>(params)" for name
// ns::k, or "" when the arguments are not plain C++ (lambdas, anonymous
// namespaces, nested parentheses).
func instanceArgs(demangled, name string) string {
	i := strings.Index(demangled, name+"<")
	if i < 0 {
		return ""
	}
	rest := demangled[i+len(name)+1:]
	depth := 1
	for j, c := range rest {
		switch c {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				a := rest[:j]
				if strings.ContainsAny(a, "{}") || strings.Contains(a, "anonymous") || strings.Contains(a, "lambda") {
					return ""
				}
				return a
			}
		}
	}
	return ""
}

// runPtxas compiles src with nvcc -Xptxas -v for arch (the object goes to
// objDir) and returns the output with ptxas's report; on failure the error
// holds nvcc's first lines. An unchanged compile's report comes from the
// ptxas cache (ptxas_cache.go), where keyPath stands for src: "" for src
// itself, or the input a temporary file was transformed from (alone in its
// directory, it finds its headers through includes only).
func runPtxas(nvcc, arch, src, keyPath, objDir string, includes, macroArgs []string) (string, error) {
	args := []string{"-std=c++17", "-arch=" + arch, "-Xptxas", "-v"}
	for _, d := range includes {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		args = append(args, "-I", d)
	}
	args = append(args, macroArgs...)
	cache, key := ptxasCacheDir(), ""
	if cache != "" {
		if keyPath == "" {
			keyPath = src
		}
		if key = ptxasKey(nvcc, args, src, keyPath); key != "" {
			if out, ok := ptxasLookup(cache, key); ok {
				return out, nil
			}
		}
	}
	depFile := filepath.Join(objDir, "out.d")
	run := append(args, "-c", "-o", filepath.Join(objDir, "out.o"))
	if key != "" {
		run = append(run, "-MD", "-MF", depFile)
	}
	run = append(run, src)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, nvcc, run...).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if lines := strings.Split(msg, "\n"); len(lines) > 12 {
			msg = strings.Join(lines[:12], "\n") + "\n..."
		}
		return "", errors.New(msg)
	}
	if key != "" {
		ptxasStore(cache, key, src, depFile, string(out))
	}
	return string(out), nil
}

// pruneRegCaps drops the register caps that the workers do not need: it
// transforms each .cu input without caps, compiles the output with ptxas,
// and keeps a kernel's cap on an architecture only where one of its workers
// (queue or static) then uses more registers than the cap would give it. A
// cap where the worker fits anyway only constrains ptxas: under
// __launch_bounds__(256, SLATE_MIN_BLOCKS(256, 32)) a tiled SGEMM's worker
// kept its 32 registers but lost the unrolling of its tile loop (one load
// pair in flight instead of several), and beside a bandwidth-bound partner it
// ran 15-20% slower than the same worker unrolled (bench/RESULTS.md, eleventh
// session). A file whose transform or compile fails keeps its caps. Template
// kernels keep theirs (instances are capped one by one).
// Then it compiles the output with the caps that are left and drops a
// kernel's cap on an architecture where both its capped workers spill and
// the uncapped ones did not: held to its kernel's registers by spilling, a
// worker ran slower than uncapped with fewer blocks an SM (a 64x64 wmma
// tile kernel: 80 registers and 24 bytes of spills in the static worker, 32
// in the queue one; 1.15x its kernel against 1.05x uncapped), where
// black_scholes' static worker, capped without spills, went from 1.17x to
// 1.03x (bench/RESULTS.md, twenty-fifth session). One worker's spills keep
// the cap, since it is the kernel's for both: black_scholes' queue worker
// spills 4 bytes capped, the co-run catalog's gemm_tc's static worker 84
// (its queue worker, which co-runs, none).
func pruneRegCaps(paths, archs, includes, macroArgs []string, loadOpts transform.LoadOptions,
	caps map[string]map[string]int, instances map[string]map[string]map[string]int, warn func(string)) {
	nvcc, _ := findNVCC()
	if nvcc == "" || len(caps) == 0 {
		return
	}
	tmp, err := os.MkdirTemp("", "slatec-regs-")
	if err != nil {
		return
	}
	defer os.RemoveAll(tmp)
	for _, p := range paths {
		if p == "-" || !strings.HasSuffix(p, ".cu") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		a, err := transform.LoadWith(p, src, loadOpts)
		if err != nil {
			continue
		}
		res, err := transform.Persistent(a, transform.Options{NoLaunchRewrite: true})
		if err != nil || res.Diags.HasErrors() || !res.Changed {
			continue
		}
		out := filepath.Join(tmp, filepath.Base(p))
		if err := os.WriteFile(out, res.Output, 0o644); err != nil {
			continue
		}
		inc := append([]string{filepath.Dir(p)}, includes...)
		spilled := map[string]bool{} // "arch name": an uncapped worker spills
		for _, arch := range archs {
			text, err := runPtxas(nvcc, arch, out, p, tmp, inc, macroArgs)
			if err != nil {
				warn(fmt.Sprintf("--match-regs: the uncapped workers of %s do not compile for %s; keeping every cap", p, arch))
				continue
			}
			worker := map[string]int{}
			for _, u := range occupancy.ParsePtxas(text) {
				worker[u.Name] = max(worker[u.Name], u.Registers)
				if u.SpillStores > 0 {
					spilled[arch+" "+u.Name] = true
				}
			}
			for _, k := range a.Kernels {
				q := k.Func.QualifiedName()
				regs, ok := caps[arch][q]
				if !ok || k.Func.IsTemplate() {
					continue
				}
				w := max(worker[q+"__slate"], worker[q+"__slate_static"])
				if w > 0 && w <= max((regs+7)/8*8, 32) {
					delete(caps[arch], q)
					delete(instances[arch], q)
				}
			}
		}
		dropSpillingCaps(a, p, archs, tmp, out, nvcc, inc, macroArgs, caps, instances, spilled, warn)
	}
}

// dropSpillingCaps compiles the workers of the input p (loaded as a) with
// the caps left in caps and instances, and drops, per architecture, the cap
// of every kernel whose capped queue and static workers both spill where
// the uncapped ones (spilled, from the uncapped compile) did not.
func dropSpillingCaps(a *transform.Analysis, p string, archs []string, tmp, out, nvcc string, inc, macroArgs []string,
	caps map[string]map[string]int, instances map[string]map[string]map[string]int, spilled map[string]bool, warn func(string)) {
	capped := func(arch string) bool {
		for _, k := range a.Kernels {
			if _, ok := caps[arch][k.Func.QualifiedName()]; ok {
				return true
			}
		}
		return false
	}
	if !slices.ContainsFunc(archs, capped) {
		return
	}
	// With its launches rewritten, so that template workers are instantiated.
	res, err := transform.Persistent(a, transform.Options{RegCaps: caps, RegCapInstances: instances})
	if err != nil || res.Diags.HasErrors() || !res.Changed {
		return
	}
	if err := os.WriteFile(out, res.Output, 0o644); err != nil {
		return
	}
	for _, arch := range archs {
		if !capped(arch) {
			continue
		}
		text, err := runPtxas(nvcc, arch, out, p, tmp, inc, macroArgs)
		if err != nil {
			warn(fmt.Sprintf("--match-regs: the capped workers of %s do not compile for %s; keeping every cap", p, arch))
			continue
		}
		spills := map[string]bool{}
		for _, u := range occupancy.ParsePtxas(text) {
			if u.SpillStores > 0 && !spilled[arch+" "+u.Name] {
				spills[u.Name] = true
			}
		}
		for _, k := range a.Kernels {
			q := k.Func.QualifiedName()
			if _, ok := caps[arch][q]; ok && spills[q+"__slate"] && spills[q+"__slate_static"] {
				delete(caps[arch], q)
				delete(instances[arch], q)
			}
		}
	}
}
