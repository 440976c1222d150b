package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/slatec/slatec/occupancy"
	"github.com/slatec/slatec/transform"
)

// findNVCC locates nvcc: $SLATEC_NVCC, then the project-local prefix
// ($SLATEC_CUDA_PREFIX, ./.cuda, .cuda next to the slatec binary) that
// scripts/cuda-tools.sh installs, then PATH. It returns "" and the reason
// when there is none.
func findNVCC() (path, why string) {
	if p := os.Getenv("SLATEC_NVCC"); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return "", fmt.Sprintf("$SLATEC_NVCC=%s does not exist", p)
		}
		return p, ""
	}
	var prefixes []string
	if p := os.Getenv("SLATEC_CUDA_PREFIX"); p != "" {
		prefixes = append(prefixes, p)
	}
	prefixes = append(prefixes, ".cuda")
	if exe, err := os.Executable(); err == nil {
		prefixes = append(prefixes, filepath.Join(filepath.Dir(exe), ".cuda"))
	}
	for _, pre := range prefixes {
		c := filepath.Join(pre, "nvidia", "cu13", "bin", "nvcc")
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c, ""
		}
	}
	if p, err := exec.LookPath("nvcc"); err == nil {
		return p, ""
	}
	return "", "nvcc not found ($SLATEC_NVCC, $SLATEC_CUDA_PREFIX, ./.cuda from scripts/cuda-tools.sh, PATH)"
}

// reportArch is the architecture --report compiles for and whose occupancy
// rules it applies.
const reportArch = "sm_90"

// mergeReport compiles the merged output (and, when the shared-memory union
// holds anything, the output without it) and prints each kernel's and the
// merged kernel's resources and theoretical occupancy.
func mergeReport(cmd *cobra.Command, w io.Writer, inputs []transform.MergeInput, opts transform.MergeOptions,
	res *transform.MergeResult, fl mergeFlags, refs []transform.KernelRef) error {
	nvcc, why := findNVCC()
	if nvcc == "" {
		fmt.Fprintf(w, "merge report skipped: %s\n", why)
		return nil
	}
	blocks, assumed, err := reportBlocks(fl.blocks, refs, res.Kernels)
	if err != nil {
		return usagef("--block: %v", err)
	}
	dyn, err := reportShmem(fl.shmem, refs)
	if err != nil {
		return usagef("--shmem: %v", err)
	}
	var dirs []string
	seen := map[string]bool{}
	for _, in := range inputs {
		d := filepath.Dir(in.Analysis.File.Name)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	dirs = append(dirs, fl.includes...)
	union := false
	for _, k := range res.Kernels {
		union = union || k.SharedInUnion
	}
	withUnion, err := compileUsage(cmd, nvcc, res, dirs)
	if err != nil {
		return err
	}
	var apart []occupancy.Usage
	var apartRes *transform.MergeResult
	if union {
		o := opts
		o.NoShareShared = true
		if apartRes, err = transform.Merge(inputs, o); err != nil {
			return err
		}
		if apart, err = compileUsage(cmd, nvcc, apartRes, dirs); err != nil {
			return err
		}
	}

	dev := occupancy.SM90
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "merge report: %s, theoretical occupancy by the CUDA occupancy rules (registers and static shared memory from ptxas)\n", reportArch)
	fmt.Fprintln(tw, "KERNEL\tBLOCK\tTHREADS\tREGS\tSTATIC SMEM\tDYN SMEM\tBLOCKS/SM\tOCCUPANCY\tLIMIT\t")
	row := func(name, shape string, threads int, u occupancy.Usage, dynamic int) occupancy.Result {
		r, err := dev.Compute(occupancy.Kernel{Threads: threads, Registers: u.Registers, StaticShared: u.StaticShared, DynamicShared: dynamic})
		if err != nil {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t-\t-\t%v\t\n", name, shape, threads, u.Registers, u.StaticShared, dynamic, err)
			return r
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.1f%%\t%s\t\n", name, shape, threads, u.Registers, u.StaticShared, dynamic,
			r.BlocksPerSM, 100*r.Occupancy, r.Limiter)
		return r
	}
	maxThreads, maxDyn, maxRegs := 0, 0, 0
	var notes []string
	for i, k := range res.Kernels {
		threads := blocks[i][0] * blocks[i][1] * blocks[i][2]
		maxThreads = max(maxThreads, threads)
		maxDyn = max(maxDyn, dyn[i])
		u, ok := kernelUsage(withUnion, k)
		if !ok {
			notes = append(notes, fmt.Sprintf("no ptxas report for %s", k.QualifiedName))
			continue
		}
		maxRegs = max(maxRegs, u.Registers)
		shape := shapeText(blocks[i])
		if assumed[i] {
			shape += "?"
			notes = append(notes, fmt.Sprintf("%s: block shape assumed (give --block %s=...)", k.Name, k.Name))
		}
		row(k.Name+argsOf(k), shape, threads, u, dyn[i])
	}
	var r1, r2 occupancy.Result
	if u, ok := mergedUsage(withUnion, res.Kernel); ok {
		label := "merged"
		if union {
			label = "merged, shared union"
		}
		r1 = row(label, strconv.Itoa(maxThreads), maxThreads, u, maxDyn)
		if u.Registers > maxRegs {
			notes = append(notes, fmt.Sprintf("the merged kernel needs %d registers, %d more than its largest part (dispatch and the idle-thread predicate)", u.Registers, u.Registers-maxRegs))
		}
	} else {
		notes = append(notes, "no ptxas report for the merged kernel")
	}
	if union {
		if u, ok := mergedUsage(apart, apartRes.Kernel); ok {
			r2 = row("merged, shared apart", strconv.Itoa(maxThreads), maxThreads, u, maxDyn)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if union && r2.WarpsPerSM > 0 {
		fmt.Fprintf(w, "shared-memory union: %d -> %d blocks/SM, occupancy %.1f%% -> %.1f%% (%+.1f points)\n",
			r2.BlocksPerSM, r1.BlocksPerSM, 100*r2.Occupancy, 100*r1.Occupancy, 100*(r1.Occupancy-r2.Occupancy))
	}
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w, "note: a merged block has the largest block's threads and the largest register count of the kernels (Liang et al., section 5), so kernels with smaller needs fit fewer blocks per SM than alone")
	return nil
}

func argsOf(k *transform.MergedKernel) string {
	if k.TemplateArgs == "" {
		return ""
	}
	return "<" + k.TemplateArgs + ">"
}

func shapeText(b [3]int) string {
	switch {
	case b[2] > 1:
		return fmt.Sprintf("%dx%dx%d", b[0], b[1], b[2])
	case b[1] > 1:
		return fmt.Sprintf("%dx%d", b[0], b[1])
	}
	return strconv.Itoa(b[0])
}

// reportBlocks gives each kernel's block shape: --block, else its
// __launch_bounds__, else 256 (marked assumed).
func reportBlocks(s string, refs []transform.KernelRef, ks []*transform.MergedKernel) ([][3]int, []bool, error) {
	out := make([][3]int, len(refs))
	assumed := make([]bool, len(refs))
	given := make([]bool, len(refs))
	if s != "" {
		for _, p := range splitAssignments(s) {
			name, v, ok := strings.Cut(p, "=")
			if !ok {
				return nil, nil, fmt.Errorf("%q: want NAME=X[xY[xZ]]", p)
			}
			i, err := allocIndex(strings.TrimSpace(name), refs)
			if err != nil {
				return nil, nil, err
			}
			dims := strings.Split(strings.TrimSpace(v), "x")
			b := [3]int{1, 1, 1}
			if len(dims) > 3 {
				return nil, nil, fmt.Errorf("%q: at most three dimensions", p)
			}
			total := 1
			for j, d := range dims {
				n, err := strconv.Atoi(d)
				if err != nil || n < 1 {
					return nil, nil, fmt.Errorf("%q: %q is not a positive number", p, d)
				}
				b[j] = n
				total *= n
			}
			if total > occupancy.SM90.MaxThreadsPerBlock {
				return nil, nil, fmt.Errorf("%q: %d threads per block is more than %d", p, total, occupancy.SM90.MaxThreadsPerBlock)
			}
			out[i], given[i] = b, true
		}
	}
	for i := range out {
		if given[i] {
			continue
		}
		if lb := ks[i].LaunchBounds; lb > 0 && lb <= occupancy.SM90.MaxThreadsPerBlock {
			out[i] = [3]int{lb, 1, 1}
			continue
		}
		out[i], assumed[i] = [3]int{256, 1, 1}, true
	}
	return out, assumed, nil
}

func reportShmem(s string, refs []transform.KernelRef) ([]int, error) {
	out := make([]int, len(refs))
	if s == "" {
		return out, nil
	}
	for _, p := range splitAssignments(s) {
		name, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want NAME=BYTES", p)
		}
		i, err := allocIndex(strings.TrimSpace(name), refs)
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: bytes must be a number", p)
		}
		out[i] = n
	}
	return out, nil
}

// compileUsage compiles a merged output with nvcc -Xptxas -v and returns the
// kernels' usage. Template kernels are instantiated with the merged
// arguments, so that the separate kernels are reported too.
func compileUsage(cmd *cobra.Command, nvcc string, res *transform.MergeResult, dirs []string) ([]occupancy.Usage, error) {
	tmp, err := os.MkdirTemp("", "slatec-report-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var src strings.Builder
	src.Write(res.Output)
	src.WriteString("\n// slatec merge --report: the template kernels as merged\n")
	for _, k := range res.Kernels {
		if k.TemplateArgs == "" {
			continue
		}
		var types []string
		for _, p := range k.Params {
			types = append(types, p.Type)
		}
		name := strings.TrimSuffix(k.Body, "__merged_body<"+k.TemplateArgs+">")
		fmt.Fprintf(&src, "template __global__ void %s<%s>(%s);\n", name, k.TemplateArgs, strings.Join(types, ", "))
	}
	file := filepath.Join(tmp, "merged.cu")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		return nil, err
	}
	args := []string{"-std=c++17", "-arch=" + reportArch, "-Xptxas", "-v", "-c", "-o", filepath.Join(tmp, "merged.o")}
	for _, d := range dirs {
		args = append(args, "-I", d)
	}
	args = append(args, file)
	ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, nvcc, args...).CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) > 30 {
			lines = lines[:30]
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, fmt.Errorf("merge report: running %s: %v", nvcc, err)
		}
		return nil, fmt.Errorf("merge report: nvcc failed on the merged output:\n%s", strings.Join(lines, "\n"))
	}
	return occupancy.ParsePtxas(string(out)), nil
}

func mergedUsage(us []occupancy.Usage, name string) (occupancy.Usage, bool) {
	for _, u := range us {
		if u.Name == name {
			return u, true
		}
	}
	return occupancy.Usage{}, false
}

// kernelUsage finds a separate kernel's entry; among several instances of
// a template, the one whose demangled name carries the merged arguments.
func kernelUsage(us []occupancy.Usage, k *transform.MergedKernel) (occupancy.Usage, bool) {
	name := strings.TrimSuffix(k.Body, "__merged_body"+argsOf(k))
	var cands []occupancy.Usage
	for _, u := range us {
		if u.Name == name && u.Template == (k.TemplateArgs != "") {
			cands = append(cands, u)
		}
	}
	if len(cands) == 1 {
		return cands[0], true
	}
	if len(cands) == 0 {
		return occupancy.Usage{}, false
	}
	if filt, err := exec.LookPath("c++filt"); err == nil {
		want := strings.Join(strings.Fields(name+argsOf(k)+"("), "")
		for _, u := range cands {
			out, err := exec.Command(filt, u.Mangled).Output()
			if err == nil && strings.Contains(strings.Join(strings.Fields(string(out)), ""), want) {
				return u, true
			}
		}
	}
	return cands[0], true
}
