package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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
	// ./.cuda, or one in a directory above (go generate runs in the
	// package's directory of a project that installed it at its root).
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			prefixes = append(prefixes, filepath.Join(dir, ".cuda"))
			if filepath.Dir(dir) == dir {
				break
			}
		}
	} else {
		prefixes = append(prefixes, ".cuda")
	}
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
	return "", "nvcc not found ($SLATEC_NVCC, $SLATEC_CUDA_PREFIX, .cuda from scripts/cuda-tools.sh here or in a directory above, PATH)"
}

// reportArch is the architecture --report compiles for and whose occupancy
// rules it applies.
const reportArch = "sm_90"

// reportRow is one line of the merge report.
type reportRow struct {
	Kernel        string            `json:"kernel"`
	Block         string            `json:"block"`
	BlockAssumed  bool              `json:"block_assumed,omitempty"`
	Threads       int               `json:"threads"`
	Registers     int               `json:"registers"`
	StaticShared  int               `json:"static_shared"`
	DynamicShared int               `json:"dynamic_shared"`
	Spills        int               `json:"spill_bytes,omitempty"`
	BlocksPerSM   int               `json:"blocks_per_sm"`
	Occupancy     float64           `json:"occupancy"`
	Limiter       occupancy.Limiter `json:"limiter,omitempty"`
	Error         string            `json:"error,omitempty"`
}

// mergeReportData is what --report prints (and --json holds).
type mergeReportData struct {
	Arch    string      `json:"arch"`
	Skipped string      `json:"skipped,omitempty"`
	Rows    []reportRow `json:"rows,omitempty"`
	// Merged and Apart are the merged kernel's rows with the shared-memory
	// union and without it (when the union holds anything).
	Merged *reportRow `json:"merged,omitempty"`
	Apart  *reportRow `json:"apart,omitempty"`
	// Populations are mode split's worker kernels, one per input.
	Populations []reportRow `json:"populations,omitempty"`
	SMs         int         `json:"sms,omitempty"`
	// Model is the merge model's prediction (occupancy/merge.go).
	Model *occupancy.MergePrediction `json:"model,omitempty"`
	Notes []string                   `json:"notes,omitempty"`
}

// mergeReport compiles the merged output (and, when the shared-memory union
// holds anything, the output without it) and computes each kernel's and the
// merged kernel's resources, theoretical occupancy and the merge model.
func mergeReport(cmd *cobra.Command, inputs []transform.MergeInput, opts transform.MergeOptions,
	res *transform.MergeResult, fl mergeFlags, refs []transform.KernelRef) (*mergeReportData, error) {
	data := &mergeReportData{Arch: reportArch, SMs: fl.sms}
	nvcc, why := findNVCC()
	if nvcc == "" {
		data.Skipped = why
		return data, nil
	}
	blocks, assumed, err := reportBlocks(fl.blocks, refs, res.Kernels)
	if err != nil {
		return nil, usagef("--block: %v", err)
	}
	dyn, err := reportShmem(fl.shmem, refs)
	if err != nil {
		return nil, usagef("--shmem: %v", err)
	}
	grids, err := reportNumbers(fl.grids, refs, "--grid")
	if err != nil {
		return nil, err
	}
	soloMs, err := reportFloats(fl.soloMs, refs)
	if err != nil {
		return nil, usagef("--solo-ms: %v", err)
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
		return nil, err
	}
	var apart []occupancy.Usage
	var apartRes *transform.MergeResult
	if union {
		o := opts
		o.NoShareShared = true
		if apartRes, err = transform.Merge(inputs, o); err != nil {
			return nil, err
		}
		if apart, err = compileUsage(cmd, nvcc, apartRes, dirs); err != nil {
			return nil, err
		}
	}

	dev := occupancy.SM90
	row := func(name, shape string, threads int, u occupancy.Usage, dynamic int) reportRow {
		rr := reportRow{Kernel: name, Block: shape, Threads: threads, Registers: u.Registers, StaticShared: u.StaticShared,
			DynamicShared: dynamic, Spills: u.SpillStores + u.SpillLoads}
		r, err := dev.Compute(occupancy.Kernel{Threads: threads, Registers: u.Registers, StaticShared: u.StaticShared, DynamicShared: dynamic})
		if err != nil {
			rr.Error = err.Error()
			return rr
		}
		rr.BlocksPerSM, rr.Occupancy, rr.Limiter = r.BlocksPerSM, r.Occupancy, r.Limiter
		return rr
	}
	maxThreads, maxDyn, maxRegs := 0, 0, 0
	var parts []occupancy.MergePart
	for i, k := range res.Kernels {
		threads := blocks[i][0] * blocks[i][1] * blocks[i][2]
		maxThreads = max(maxThreads, threads)
		maxDyn = max(maxDyn, dyn[i])
		u, ok := kernelUsage(withUnion, k)
		if !ok {
			data.Notes = append(data.Notes, fmt.Sprintf("no ptxas report for %s", k.QualifiedName))
			continue
		}
		maxRegs = max(maxRegs, u.Registers)
		shape := shapeText(blocks[i])
		if assumed[i] {
			shape += "?"
			data.Notes = append(data.Notes, fmt.Sprintf("%s: block shape assumed (give --block %s=...)", k.Name, k.Name))
		}
		rr := row(k.Name+argsOf(k), shape, threads, u, dyn[i])
		rr.BlockAssumed = assumed[i]
		data.Rows = append(data.Rows, rr)
		parts = append(parts, occupancy.MergePart{Name: k.Name + argsOf(k), Blocks: int64(grids[i]), Ms: soloMs[i],
			Alone: occupancy.Kernel{Threads: threads, Registers: u.Registers, StaticShared: u.StaticShared, DynamicShared: dyn[i]}})
	}
	if u, ok := mergedUsage(withUnion, res.Kernel); ok {
		label := "merged"
		if union {
			label = "merged, shared union"
		}
		if res.Split {
			label = "merged (split: one population per kernel; row = largest)"
		}
		r := row(label, strconv.Itoa(maxThreads), maxThreads, u, maxDyn)
		data.Merged = &r
		if u.Registers > maxRegs {
			data.Notes = append(data.Notes, fmt.Sprintf("the merged kernel needs %d registers, %d more than its largest part (dispatch and the idle-thread predicate)", u.Registers, u.Registers-maxRegs))
		}
		if len(parts) == len(res.Kernels) && !res.Split {
			m := occupancy.Kernel{Threads: maxThreads, Registers: u.Registers, StaticShared: u.StaticShared, DynamicShared: maxDyn}
			if p, err := dev.PredictMerge(fl.sms, parts, m, fl.dispatchUs); err == nil {
				data.Model = p
			} else {
				data.Notes = append(data.Notes, "merge model: "+err.Error())
			}
		}
	} else if !res.Split {
		data.Notes = append(data.Notes, "no ptxas report for the merged kernel")
	}
	if res.Split {
		// One population per kernel: its own block, registers and shared memory.
		for i, k := range res.Kernels {
			u, ok := mergedUsage(withUnion, fmt.Sprintf("%s_k%d", res.Kernel, i))
			if !ok {
				data.Notes = append(data.Notes, fmt.Sprintf("no ptxas report for population %d", i))
				continue
			}
			threads := blocks[i][0] * blocks[i][1] * blocks[i][2]
			data.Populations = append(data.Populations, row(fmt.Sprintf("population %d (%s)", i, k.Name+argsOf(k)), shapeText(blocks[i]), threads, u, dyn[i]))
		}
		data.Notes = append(data.Notes, "mode split: each population keeps its kernel's block and shared memory and has its own registers, so no kernel loses occupancy to the others; whether splitting the SMs beats running the kernels one after another depends on how each scales with SMs (slatec profile, slatec plan)")
	}
	if union {
		if u, ok := mergedUsage(apart, apartRes.Kernel); ok {
			r := row("merged, shared apart", strconv.Itoa(maxThreads), maxThreads, u, maxDyn)
			data.Apart = &r
		}
	}
	if !res.Split {
		data.Notes = append(data.Notes, "a merged block has the largest block's threads and the largest register count of the kernels (Liang et al., section 5), so kernels with smaller needs fit fewer blocks per SM than alone")
	}
	return data, nil
}

// writeMergeReport prints the report as text.
func writeMergeReport(w io.Writer, data *mergeReportData) error {
	if data.Skipped != "" {
		_, err := fmt.Fprintf(w, "merge report skipped: %s\n", data.Skipped)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "merge report: %s, theoretical occupancy by the CUDA occupancy rules (registers and static shared memory from ptxas)\n", data.Arch)
	fmt.Fprintln(tw, "KERNEL\tBLOCK\tTHREADS\tREGS\tSTATIC SMEM\tDYN SMEM\tBLOCKS/SM\tOCCUPANCY\tLIMIT\t")
	rows := append([]reportRow(nil), data.Rows...)
	for _, r := range []*reportRow{data.Merged, data.Apart} {
		if r != nil {
			rows = append(rows, *r)
		}
	}
	rows = append(rows, data.Populations...)
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t-\t-\t%s\t\n", r.Kernel, r.Block, r.Threads, r.Registers, r.StaticShared, r.DynamicShared, r.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.1f%%\t%s\t\n", r.Kernel, r.Block, r.Threads, r.Registers, r.StaticShared,
			r.DynamicShared, r.BlocksPerSM, 100*r.Occupancy, r.Limiter)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if data.Merged != nil && data.Apart != nil && data.Apart.BlocksPerSM > 0 {
		fmt.Fprintf(w, "shared-memory union: %d -> %d blocks/SM, occupancy %.1f%% -> %.1f%% (%+.1f points)\n",
			data.Apart.BlocksPerSM, data.Merged.BlocksPerSM, 100*data.Apart.Occupancy, 100*data.Merged.Occupancy,
			100*(data.Merged.Occupancy-data.Apart.Occupancy))
	}
	if p := data.Model; p != nil {
		fmt.Fprintf(w, "merge model (docs/MERGE.md, occupancy/merge.go) on %d SMs, times in %s:\n", data.SMs, p.Unit)
		for _, pp := range p.Parts {
			fmt.Fprintf(w, "  %s: %d blocks/SM alone (%s), %d merged: slowdown %.2fx; alone %.4g, merged %.4g\n",
				pp.Name, pp.AloneBlocksPerSM, pp.AloneLimiter, pp.MergedBlocksPerSM, pp.Slowdown, pp.AloneTime, pp.MergedTime)
		}
		fmt.Fprintf(w, "  sequential %.4g, merged %.4g (dispatch %.4g, tail %.4g): %s\n", p.Sequential, p.Predicted, p.Dispatch, p.Tail, p.Verdict())
	}
	for _, n := range data.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// reportNumbers reads NAME=N,... (N ≥ 0) for --grid: blocks per kernel.
func reportNumbers(s string, refs []transform.KernelRef, flag string) ([]int, error) {
	out := make([]int, len(refs))
	if s == "" {
		return out, nil
	}
	for _, p := range splitAssignments(s) {
		name, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, usagef("%s: %q: want NAME=N", flag, p)
		}
		i, err := allocIndex(strings.TrimSpace(name), refs)
		if err != nil {
			return nil, usagef("%s: %v", flag, err)
		}
		n := 1
		for _, d := range strings.Split(strings.TrimSpace(v), "x") {
			x, err := strconv.Atoi(d)
			if err != nil || x < 1 {
				return nil, usagef("%s: %q: want blocks as N or XxY[xZ]", flag, p)
			}
			n *= x
		}
		out[i] = n
	}
	return out, nil
}

// reportFloats reads NAME=MS,... for --solo-ms.
func reportFloats(s string, refs []transform.KernelRef) ([]float64, error) {
	out := make([]float64, len(refs))
	if s == "" {
		return out, nil
	}
	for _, p := range splitAssignments(s) {
		name, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want NAME=MS", p)
		}
		i, err := allocIndex(strings.TrimSpace(name), refs)
		if err != nil {
			return nil, err
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || x <= 0 {
			return nil, fmt.Errorf("%q: milliseconds must be a positive number", p)
		}
		out[i] = x
	}
	return out, nil
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

// maxnregSpillBytes is the spill (stores + loads, in bytes per thread) a
// register cap chosen by --maxnreg auto may cost: a few bytes are typically
// the worker loop's state outside the body, spilled once per task.
const maxnregSpillBytes = 16

// resolveMaxnreg turns --maxnreg into a register cap for the merged kernel
// (0: none), or in mode split one per population. "auto" compiles the merge
// without a cap; outside split it takes as candidates the largest register
// count at which the merged kernel fits as many blocks per SM as each kernel
// does alone, compiles the merge with each, drops those where ptxas spills,
// and keeps the one the merge model predicts fastest, if it beats no cap; in
// split, each population whose worker loop costs it blocks per SM is capped
// at the largest count that gives it its kernel's own blocks per SM, unless
// ptxas then spills.
func resolveMaxnreg(cmd *cobra.Command, fl mergeFlags, inputs []transform.MergeInput, opts transform.MergeOptions,
	refs []transform.KernelRef) (int, []int, error) {
	split := opts.Mode == transform.MergeSplit
	switch {
	case fl.maxnreg == "":
		return 0, nil, nil
	case fl.maxnreg == "auto" && split:
		pop, err := resolvePopulationCaps(cmd, fl, inputs, opts, refs)
		return 0, pop, err
	case fl.maxnreg == "auto":
	default:
		var caps []int
		for _, f := range strings.Split(fl.maxnreg, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || (n != 0 && (n < 16 || n > 255)) {
				return 0, nil, usagef("--maxnreg must be \"auto\", a number from 16 to 255 or (mode split) one per kernel, not %q", fl.maxnreg)
			}
			caps = append(caps, n)
		}
		if !split {
			if len(caps) != 1 || caps[0] == 0 {
				return 0, nil, usagef("--maxnreg: one cap from 16 to 255 for the merged kernel (a list needs mode split)")
			}
			return caps[0], nil, nil
		}
		if len(caps) == 1 {
			for len(caps) < len(inputs) {
				caps = append(caps, caps[0])
			}
		}
		if len(caps) != len(inputs) {
			return 0, nil, usagef("--maxnreg: %d caps for %d kernels", len(caps), len(inputs))
		}
		return 0, caps, nil
	}
	n, err := resolveMergedCap(cmd, fl, inputs, opts, refs)
	return n, nil, err
}

// resolveMergedCap is --maxnreg auto outside mode split.
func resolveMergedCap(cmd *cobra.Command, fl mergeFlags, inputs []transform.MergeInput, opts transform.MergeOptions,
	refs []transform.KernelRef) (int, error) {
	nvcc, why := findNVCC()
	if nvcc == "" {
		return 0, usagef("--maxnreg auto needs nvcc: %s", why)
	}
	res, err := transform.Merge(inputs, opts)
	if err != nil {
		return 0, usageError{err}
	}
	if res.Diags.HasErrors() {
		return 0, nil // Merge reports them again
	}
	blocks, _, err := reportBlocks(fl.blocks, refs, res.Kernels)
	if err != nil {
		return 0, usagef("--block: %v", err)
	}
	dyn, err := reportShmem(fl.shmem, refs)
	if err != nil {
		return 0, usagef("--shmem: %v", err)
	}
	grids, err := reportNumbers(fl.grids, refs, "--grid")
	if err != nil {
		return 0, err
	}
	soloMs, err := reportFloats(fl.soloMs, refs)
	if err != nil {
		return 0, usagef("--solo-ms: %v", err)
	}
	var dirs []string
	for _, in := range inputs {
		dirs = append(dirs, filepath.Dir(in.Analysis.File.Name))
	}
	dirs = append(dirs, fl.includes...)
	us, err := compileUsage(cmd, nvcc, res, dirs)
	if err != nil {
		return 0, err
	}
	dev := occupancy.SM90
	maxThreads, maxDyn := 0, 0
	var parts []occupancy.MergePart
	for i, k := range res.Kernels {
		threads := blocks[i][0] * blocks[i][1] * blocks[i][2]
		maxThreads, maxDyn = max(maxThreads, threads), max(maxDyn, dyn[i])
		u, ok := kernelUsage(us, k)
		if !ok {
			return 0, fmt.Errorf("--maxnreg auto: no ptxas report for %s", k.QualifiedName)
		}
		parts = append(parts, occupancy.MergePart{Name: k.Name + argsOf(k), Blocks: int64(grids[i]), Ms: soloMs[i],
			Alone: occupancy.Kernel{Threads: threads, Registers: u.Registers, StaticShared: u.StaticShared, DynamicShared: dyn[i]}})
	}
	mu, ok := mergedUsage(us, res.Kernel)
	if !ok {
		return 0, fmt.Errorf("--maxnreg auto: no ptxas report for the merged kernel")
	}
	merged := occupancy.Kernel{Threads: maxThreads, Registers: mu.Registers, StaticShared: mu.StaticShared, DynamicShared: maxDyn}
	base, err := dev.PredictMerge(fl.sms, parts, merged, fl.dispatchUs)
	if err != nil {
		return 0, fmt.Errorf("--maxnreg auto: %v", err)
	}
	cands := maxnregCandidates(dev, merged, parts)
	w := cmd.ErrOrStderr()
	best, bestT := 0, base.Predicted
	fmt.Fprintf(w, "--maxnreg auto: no cap: %d registers, %d blocks/SM, predicted %.4g %s\n", mu.Registers, base.Merged.BlocksPerSM, base.Predicted, base.Unit)
	for _, r := range cands {
		o := opts
		o.MaxRegs = r
		cres, err := transform.Merge(inputs, o)
		if err != nil {
			return 0, usageError{err}
		}
		cus, err := compileUsage(cmd, nvcc, cres, dirs)
		if err != nil {
			return 0, err
		}
		cu, ok := mergedUsage(cus, cres.Kernel)
		if !ok {
			continue
		}
		if spill := cu.SpillStores + cu.SpillLoads; spill > maxnregSpillBytes {
			fmt.Fprintf(w, "--maxnreg auto: cap %d: %d registers, %d bytes of spills: rejected\n", r, cu.Registers, spill)
			continue
		}
		m := merged
		m.Registers, m.StaticShared = cu.Registers, cu.StaticShared
		p, err := dev.PredictMerge(fl.sms, parts, m, fl.dispatchUs)
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "--maxnreg auto: cap %d: %d registers, %d blocks/SM, predicted %.4g %s\n", r, cu.Registers, p.Merged.BlocksPerSM, p.Predicted, p.Unit)
		if p.Predicted < bestT {
			best, bestT = r, p.Predicted
		}
	}
	if best == 0 {
		fmt.Fprintln(w, "--maxnreg auto: no cap predicted faster without spills: none")
	} else {
		fmt.Fprintf(w, "--maxnreg auto: chose %d\n", best)
	}
	return best, nil
}

// maxnregCandidates returns, for each kernel that fits more blocks per SM
// alone than inside the merged kernel, the largest register count (a
// multiple of 8, at least 16) at which the merged kernel fits as many,
// other limits permitting; in decreasing order, without duplicates.
func maxnregCandidates(dev occupancy.Device, merged occupancy.Kernel, parts []occupancy.MergePart) []int {
	mr, err := dev.Compute(merged)
	if err != nil {
		return nil
	}
	seen := map[int]bool{}
	var out []int
	for _, pt := range parts {
		own, err := dev.Compute(pt.Alone)
		if err != nil || own.BlocksPerSM <= mr.BlocksPerSM {
			continue
		}
		for r := (merged.Registers - 1) / 8 * 8; r >= 16; r -= 8 {
			k := merged
			k.Registers = r
			c, err := dev.Compute(k)
			if err != nil || c.BlocksPerSM <= mr.BlocksPerSM {
				continue
			}
			if c.BlocksPerSM >= own.BlocksPerSM || c.Limiter != occupancy.LimitRegisters {
				if !seen[r] {
					seen[r] = true
					out = append(out, r)
				}
				break
			}
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

// resolvePopulationCaps is --maxnreg auto in mode split.
func resolvePopulationCaps(cmd *cobra.Command, fl mergeFlags, inputs []transform.MergeInput, opts transform.MergeOptions,
	refs []transform.KernelRef) ([]int, error) {
	nvcc, why := findNVCC()
	if nvcc == "" {
		return nil, usagef("--maxnreg auto needs nvcc: %s", why)
	}
	res, err := transform.Merge(inputs, opts)
	if err != nil {
		return nil, usageError{err}
	}
	if res.Diags.HasErrors() {
		return nil, nil
	}
	blocks, _, err := reportBlocks(fl.blocks, refs, res.Kernels)
	if err != nil {
		return nil, usagef("--block: %v", err)
	}
	dyn, err := reportShmem(fl.shmem, refs)
	if err != nil {
		return nil, usagef("--shmem: %v", err)
	}
	var dirs []string
	for _, in := range inputs {
		dirs = append(dirs, filepath.Dir(in.Analysis.File.Name))
	}
	dirs = append(dirs, fl.includes...)
	us, err := compileUsage(cmd, nvcc, res, dirs)
	if err != nil {
		return nil, err
	}
	dev := occupancy.SM90
	w := cmd.ErrOrStderr()
	caps := make([]int, len(res.Kernels))
	any := false
	for i, k := range res.Kernels {
		threads := blocks[i][0] * blocks[i][1] * blocks[i][2]
		own, ok1 := kernelUsage(us, k)
		pop, ok2 := mergedUsage(us, fmt.Sprintf("%s_k%d", res.Kernel, i))
		if !ok1 || !ok2 {
			continue
		}
		ro, err1 := dev.Compute(occupancy.Kernel{Threads: threads, Registers: own.Registers, StaticShared: own.StaticShared, DynamicShared: dyn[i]})
		pk := occupancy.Kernel{Threads: threads, Registers: pop.Registers, StaticShared: pop.StaticShared, DynamicShared: dyn[i]}
		rp, err2 := dev.Compute(pk)
		if err1 != nil || err2 != nil || rp.BlocksPerSM >= ro.BlocksPerSM {
			continue
		}
		for r := (pop.Registers - 1) / 8 * 8; r >= 16; r -= 8 {
			pk.Registers = r
			if c, err := dev.Compute(pk); err == nil && c.BlocksPerSM >= ro.BlocksPerSM {
				caps[i], any = r, true
				fmt.Fprintf(w, "--maxnreg auto: population %d (%s): %d registers, %d blocks/SM; %s alone %d: cap %d\n",
					i, k.Name, pop.Registers, rp.BlocksPerSM, k.Name, ro.BlocksPerSM, r)
				break
			}
		}
	}
	if !any {
		fmt.Fprintln(w, "--maxnreg auto: every population has its kernel's blocks per SM: no caps")
		return nil, nil
	}
	o := opts
	o.PopulationMaxRegs = caps
	cres, err := transform.Merge(inputs, o)
	if err != nil {
		return nil, usageError{err}
	}
	cus, err := compileUsage(cmd, nvcc, cres, dirs)
	if err != nil {
		return nil, err
	}
	for i := range caps {
		if caps[i] == 0 {
			continue
		}
		u, ok := mergedUsage(cus, fmt.Sprintf("%s_k%d", cres.Kernel, i))
		switch {
		case !ok || u.SpillStores+u.SpillLoads > maxnregSpillBytes:
			fmt.Fprintf(w, "--maxnreg auto: population %d spills %d bytes under cap %d: no cap\n", i, u.SpillStores+u.SpillLoads, caps[i])
			caps[i] = 0
		case u.SpillStores+u.SpillLoads > 0:
			fmt.Fprintf(w, "--maxnreg auto: population %d spills %d bytes under cap %d (accepted: at most %d)\n", i, u.SpillStores+u.SpillLoads, caps[i], maxnregSpillBytes)
		}
	}
	for _, c := range caps {
		if c > 0 {
			return caps, nil
		}
	}
	return nil, nil
}
