package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/occupancy"
	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/transform"
)

func init() { register(newMergeCmd) }

type mergeFlags struct {
	out           string
	alloc         string
	planFile      string
	mode          string
	name          string
	includes      []string
	noShareShared bool
	report        bool
	blocks        string
	shmem         string
	grids         string
	soloMs        string
	sms           int
	dispatchUs    float64
	check         bool
	asJSON        bool
	maxnreg       string
	// maxnregResolved is the cap --maxnreg resolved to (0: none).
	maxnregResolved int
	// maxnregPopulations are mode split's caps per population (nil: none).
	maxnregPopulations []int
	plotSweep          string
	plotCase           string
	plotProfile        string
}

func newMergeCmd() *cobra.Command {
	var fl mergeFlags
	cmd := &cobra.Command{
		Use:   "merge -o OUT [flags] FILE:KERNEL[<ARGS>]... | merge --plot-sweep RESULTS.json --case NAME -o SVG",
		Short: "Merge kernels into one scheduler kernel that interleaves their blocks (Liang et al.)",
		Long: `merge writes ONE CUDA file holding the given kernels' files (their host code
fenced off with #if 0), a body function per kernel that sees its own blockIdx,
gridDim, threadIdx and blockDim, and a merged kernel slate_merged_NAME whose
blocks each run one logical block of one kernel, with a host launcher
slate_merged_NAME_launch(gridA, blockA, shmemA, gridB, ..., stream, params...).

A merged block has as many threads as the largest block; the threads beyond a
kernel's block size stay idle but reach its barriers. Static __shared__
variables of the bodies are overlaid in one union (--no-share-shared keeps
them apart). Parameters that two kernels name alike are prefixed with the
kernel's name.

Modes:
  interleaved  one merged block per logical block, in leaky-bucket order: each
               kernel gets the share of dispatch slots its SMs give it
  persistent   occupancy x SMs workers take merged block ids from one queue,
               in the same order
  smrange      each kernel's workers run on its own range of SMs and take its
               logical blocks from its own queue
  split        one worker population per kernel, each its own kernel (its own
               registers, block size and shared memory) on its own SM range,
               launched concurrently on streams forked from the caller's

The allocation (SMs per kernel) comes from --alloc A=9,B=6 (kernel names, or
values in argument order: --alloc 9,6), from --plan PLAN.json (the first phase
of a "slatec plan --json" plan that holds exactly these kernels), or is an
equal share of the device at launch. Template kernels need their arguments:
a.cu:scale<float>.

--report compiles the output with nvcc ($SLATEC_NVCC, the project's .cuda
prefix, or PATH) and prints each kernel's and the merged kernel's registers,
static shared memory and theoretical occupancy on sm_90, with and without the
shared-memory union; --block A=16x16,B=256 and --shmem B=4096 give the block
shapes and dynamic shared memory it assumes. The report ends with the merge
model's verdict (docs/MERGE.md, "The merge model"): each kernel's blocks run
at the merged kernel's occupancy instead of their own, the merged kernel fills
the kernels' tails, and each logical block pays a dispatch cost; --grid
A=96x96,B=262144 (blocks), --solo-ms A=0.9,B=0.4 (each kernel alone) and
--sms make it quantitative, and it says "merging is predicted to lose because
..." when it does.

--check compares with the existing output file and prints a unified diff on
drift (exit 1; exit 2 when it cannot check). --json prints the diagnostics,
the merged kernels and the report (with --report) as JSON on stdout (format
slatec-merge/1; needs -o FILE).

--plot-sweep RESULTS.json --case NAME -o SWEEP.svg (no kernels) draws Liang et
al.'s Fig. 2 from the benchmark's rows (scripts/merge-gpu.sh writes them to
$OUT/merge.json): the speedup over sequential execution against the first
kernel's SMs, one curve per mode, with streams and sequential as references;
--plot-profile PROFILES.json adds the planner's predicted curve (con_lat over
seq_lat of slatec plan's model, for the same splits).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if fl.plotSweep != "" {
				if len(args) > 0 {
					return usagef("--plot-sweep draws from results: give no kernels")
				}
				return runMergePlot(cmd, fl)
			}
			if len(args) == 0 {
				return usagef("give the kernels to merge: FILE:KERNEL[<ARGS>]...")
			}
			return runMerge(cmd, args, fl)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&fl.out, "output", "o", "-", "output file, or - for stdout")
	f.StringVar(&fl.alloc, "alloc", "", "SMs per kernel: NAME=N,... or N,... in argument order (default: equal share)")
	f.StringVar(&fl.planFile, "plan", "", "take the allocation from a plan (slatec plan --json output)")
	f.StringVar(&fl.mode, "mode", "interleaved", "interleaved, persistent, smrange or split")
	f.StringVar(&fl.name, "name", "", "name the merged kernel slate_merged_NAME (default: from the kernels)")
	f.StringSliceVarP(&fl.includes, "include", "I", nil, "directories to search for #include \"...\" files")
	f.BoolVar(&fl.noShareShared, "no-share-shared", false, "keep the bodies' static shared memory apart instead of in one union")
	f.BoolVar(&fl.report, "report", false, "print registers, shared memory and occupancy of the kernels and the merged kernel (needs nvcc)")
	f.StringVar(&fl.blocks, "block", "", "for --report: block shapes, NAME=X[xY[xZ]],... (default: __launch_bounds__, else 256)")
	f.StringVar(&fl.shmem, "shmem", "", "for --report: dynamic shared memory in bytes, NAME=N,...")
	f.StringVar(&fl.grids, "grid", "", "for --report's model: blocks per kernel, NAME=N or NAME=XxY[xZ],...")
	f.StringVar(&fl.soloMs, "solo-ms", "", "for --report's model: each kernel's time alone in ms, NAME=MS,...")
	f.IntVar(&fl.sms, "sms", 132, "for --report's model: SMs of the device (H100 SXM and H200: 132)")
	f.Float64Var(&fl.dispatchUs, "dispatch-us", occupancy.DefaultDispatchUs, "for --report's model: dispatch cost per logical block in microseconds")
	f.StringVar(&fl.plotSweep, "plot-sweep", "", "draw the allocation sweep (Liang et al., Fig. 2) of --case from merge results (bench/results/merge.json) as SVG to -o; no kernels")
	f.StringVar(&fl.plotCase, "case", "", "for --plot-sweep: the case to draw")
	f.StringVar(&fl.plotProfile, "plot-profile", "", "for --plot-sweep: a slatec-profile/1 file of the case's kernels: draw the planner's predicted speedup beside")
	f.BoolVar(&fl.check, "check", false, "compare with the existing output and print a diff on drift (exit 1)")
	f.BoolVar(&fl.asJSON, "json", false, "print diagnostics, the merged kernels and the report as JSON on stdout (needs -o FILE)")
	f.StringVar(&fl.maxnreg, "maxnreg", "", "cap the merged kernel's registers per thread with __maxnreg__: N, or \"auto\" (with nvcc: chosen by the merge model, see docs/MERGE.md); in mode split one cap per population: N for all, N,M,... or auto")
	return cmd
}

// mergeCommandLine renders the options that shape the output, for its header.
func mergeCommandLine(fl mergeFlags, mode transform.MergeMode, alloc []int, refs []transform.KernelRef) string {
	parts := []string{"merge", "--mode", string(mode)}
	if alloc != nil {
		var a []string
		for _, n := range alloc {
			a = append(a, strconv.Itoa(n))
		}
		parts = append(parts, "--alloc", strings.Join(a, ","))
	}
	if fl.name != "" {
		parts = append(parts, "--name", fl.name)
	}
	if fl.noShareShared {
		parts = append(parts, "--no-share-shared")
	}
	if fl.maxnreg != "" && fl.maxnregResolved > 0 {
		parts = append(parts, "--maxnreg", strconv.Itoa(fl.maxnregResolved))
	}
	if fl.maxnreg != "" && fl.maxnregPopulations != nil {
		var caps []string
		for _, n := range fl.maxnregPopulations {
			caps = append(caps, strconv.Itoa(n))
		}
		parts = append(parts, "--maxnreg", strings.Join(caps, ","))
	}
	for _, r := range refs {
		r.File = filepath.ToSlash(r.File)
		parts = append(parts, r.String())
	}
	return strings.Join(parts, " ")
}

func runMerge(cmd *cobra.Command, args []string, fl mergeFlags) error {
	mode, err := transform.ParseMergeMode(fl.mode)
	if err != nil {
		return usagef("--mode: %v", err)
	}
	if fl.alloc != "" && fl.planFile != "" {
		return usagef("give --alloc or --plan, not both")
	}
	if fl.check && fl.out == "-" {
		return usagef("--check compares with an output file: give -o FILE")
	}
	if fl.asJSON && fl.out == "-" {
		return usagef("--json prints to stdout, so the output needs -o FILE")
	}
	if fl.sms < 1 || fl.sms > plan.MaxSMs {
		return usagef("--sms must be between 1 and %d", plan.MaxSMs)
	}
	var refs []transform.KernelRef
	for _, a := range args {
		r, err := transform.ParseKernelRef(a)
		if err != nil {
			return usagef("%v", err)
		}
		if r.File == "-" {
			return usagef("%s: merge reads files, not standard input", a)
		}
		refs = append(refs, r)
	}
	if len(refs) > transform.MaxMergeKernels {
		return usagef("%d kernels: a merged kernel holds at most %d", len(refs), transform.MaxMergeKernels)
	}
	// Load each file once: its kernels share one analysis.
	loaded := map[string]*transform.Analysis{}
	var inputs []transform.MergeInput
	failed := false
	var loadDiags []diag.Diagnostic
	for _, r := range refs {
		a, ok := loaded[r.File]
		if !ok {
			name, src, err := readInput(cmd, r.File)
			if err != nil {
				return err
			}
			a, err = transform.Load(name, src, fl.includes)
			if err != nil {
				var d diag.Diagnostic
				if errors.As(err, &d) {
					if !fl.asJSON {
						printDiags(cmd, []diag.Diagnostic{d})
					}
					loadDiags = append(loadDiags, d)
					failed = true
					loaded[r.File] = nil
					continue
				}
				return err
			}
			loaded[r.File] = a
		}
		if a != nil {
			inputs = append(inputs, transform.MergeInput{Analysis: a, Kernel: r.Kernel, TemplateArgs: r.TemplateArgs})
		}
	}
	if failed {
		if fl.asJSON {
			if err := writeJSON(cmd.OutOrStdout(), map[string]any{"format": "slatec-merge/1", "output": fl.out,
				"mode": string(mode), "kernels": []any{}, "diagnostics": loadDiags}); err != nil {
				return err
			}
		}
		return silentError{exitInput}
	}
	var alloc []int
	switch {
	case fl.alloc != "":
		if alloc, err = parseAlloc(fl.alloc, refs); err != nil {
			return usagef("--alloc: %v", err)
		}
	case fl.planFile != "":
		if alloc, err = allocFromPlan(fl.planFile, refs, mode, cmd.ErrOrStderr()); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: error: %v\n", fl.planFile, err)
			return silentError{exitInput}
		}
	}
	version, _ := BuildInfo()
	outName := fl.out
	if outName == "-" {
		outName = "<stdout>"
	}
	opts := transform.MergeOptions{Mode: mode, Name: fl.name, Alloc: alloc, NoShareShared: fl.noShareShared,
		Version: version, Command: mergeCommandLine(fl, mode, alloc, refs), OutputName: filepath.ToSlash(outName)}
	if opts.MaxRegs, opts.PopulationMaxRegs, err = resolveMaxnreg(cmd, fl, inputs, opts, refs); err != nil {
		return err
	}
	fl.maxnregResolved = opts.MaxRegs
	fl.maxnregPopulations = opts.PopulationMaxRegs
	if opts.MaxRegs > 0 || opts.PopulationMaxRegs != nil {
		opts.Command = mergeCommandLine(fl, mode, alloc, refs) // records the resolved cap
	}
	res, err := transform.Merge(inputs, opts)
	if err != nil {
		return usageError{err}
	}
	type jsonDoc struct {
		Format  string                    `json:"format"`
		Output  string                    `json:"output"`
		Kernel  string                    `json:"kernel,omitempty"`
		Mode    string                    `json:"mode"`
		Changed bool                      `json:"changed"`
		Diff    string                    `json:"diff,omitempty"`
		Kernels []*transform.MergedKernel `json:"kernels"`
		Diags   []diag.Diagnostic         `json:"diagnostics"`
		Report  *mergeReportData          `json:"report,omitempty"`
	}
	doc := jsonDoc{Format: "slatec-merge/1", Output: fl.out, Kernel: res.Kernel, Mode: string(mode),
		Kernels: nonNil(res.Kernels), Diags: nonNil([]diag.Diagnostic(res.Diags))}
	finish := func(code int) error {
		if fl.asJSON {
			if err := writeJSON(cmd.OutOrStdout(), doc); err != nil {
				return err
			}
		}
		if code != exitOK {
			return silentError{code}
		}
		return nil
	}
	if !fl.asJSON {
		printDiags(cmd, res.Diags)
	}
	if res.Diags.HasErrors() {
		return finish(exitInput)
	}
	drift := false
	if fl.check {
		old, err := os.ReadFile(fl.out)
		if err != nil && !os.IsNotExist(err) {
			fmt.Fprintf(cmd.ErrOrStderr(), "slatec: error: --check: %v\n", err)
			return finish(exitUsage)
		}
		if d := emit.UnifiedDiff(fl.out, fl.out+" (regenerated)", string(old), string(res.Output)); d != "" {
			drift, doc.Changed = true, true
			if fl.asJSON {
				doc.Diff = d
			} else {
				fmt.Fprint(cmd.OutOrStdout(), d)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "slatec: %s is out of date; regenerate it with: slatec %s -o %s\n", fl.out, opts.Command, fl.out)
		}
	} else {
		if old, err := os.ReadFile(fl.out); err != nil || string(old) != string(res.Output) {
			doc.Changed = true
		}
		if err := emit.WriteFileAtomic(fl.out, res.Output, cmd.OutOrStdout()); err != nil {
			return err
		}
	}
	if fl.report {
		data, err := mergeReport(cmd, inputs, opts, res, fl, refs)
		if err != nil {
			var ue usageError
			if errors.As(err, &ue) {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "slatec: error: %v\n", err)
			return finish(exitUsage)
		}
		if fl.asJSON {
			doc.Report = data
		} else {
			w := cmd.OutOrStdout()
			if fl.out == "-" || fl.check {
				w = cmd.ErrOrStderr()
			}
			if err := writeMergeReport(w, data); err != nil {
				return err
			}
		}
	}
	if drift {
		return finish(exitInput)
	}
	return finish(exitOK)
}

// allocKey matches NAME in NAME=N against a kernel reference: its name,
// qualified name, name with template arguments, or argument position.
func allocIndex(name string, refs []transform.KernelRef) (int, error) {
	match := -1
	for i, r := range refs {
		short := r.Kernel
		if j := strings.LastIndex(short, "::"); j >= 0 {
			short = short[j+2:]
		}
		cands := []string{r.Kernel, short, r.Kernel + "<" + r.TemplateArgs + ">", short + "<" + r.TemplateArgs + ">"}
		for _, c := range cands {
			if c == name {
				if match >= 0 && match != i {
					return -1, fmt.Errorf("%q names more than one kernel: write NAME<ARGS>", name)
				}
				match = i
			}
		}
	}
	if match < 0 {
		var names []string
		for _, r := range refs {
			names = append(names, r.Kernel+argsText(r))
		}
		return -1, fmt.Errorf("no kernel %q among %s", name, strings.Join(names, ", "))
	}
	return match, nil
}

func argsText(r transform.KernelRef) string {
	if r.TemplateArgs == "" {
		return ""
	}
	return "<" + r.TemplateArgs + ">"
}

// splitAssignments splits "A=9,B<int,2>=6" at the commas that separate
// assignments (not those inside template arguments).
func splitAssignments(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// parseAlloc reads --alloc: NAME=N,... or N,... in argument order.
func parseAlloc(s string, refs []transform.KernelRef) ([]int, error) {
	parts := splitAssignments(s)
	alloc := make([]int, len(refs))
	positional := !strings.Contains(s, "=")
	if positional && len(parts) != len(refs) {
		return nil, fmt.Errorf("%d values for %d kernels", len(parts), len(refs))
	}
	for i, p := range parts {
		idx, val := i, p
		if !positional {
			name, v, ok := strings.Cut(p, "=")
			if !ok {
				return nil, fmt.Errorf("%q: want NAME=SMS", p)
			}
			var err error
			if idx, err = allocIndex(strings.TrimSpace(name), refs); err != nil {
				return nil, err
			}
			if alloc[idx] != 0 {
				return nil, fmt.Errorf("%s is given twice", name)
			}
			val = v
		}
		n, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil || n < 1 || n > plan.MaxSMs {
			return nil, fmt.Errorf("%q: SMs must be a number from 1 to %d", p, plan.MaxSMs)
		}
		alloc[idx] = n
	}
	for i, a := range alloc {
		if a == 0 {
			return nil, fmt.Errorf("no allocation for %s", refs[i].Kernel+argsText(refs[i]))
		}
	}
	return alloc, nil
}

// allocFromPlan takes the allocation from the first phase of a plan (the
// JSON of slatec plan --json) whose kernels are exactly the merged ones:
// its SMs for the modes that bind kernels to SMs (smrange, split), its
// dispatch shares (merge_shares) for those that interleave blocks
// (interleaved, persistent), where an allocation is a dispatch ratio.
func allocFromPlan(path string, refs []transform.KernelRef, mode transform.MergeMode, warn io.Writer) ([]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	var p plan.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("not a plan (slatec plan --json): %v", err)
	}
	if p.Format != "" && !strings.HasPrefix(p.Format, "slatec-plan/") {
		return nil, fmt.Errorf("format %q is not a slatec plan", p.Format)
	}
	for _, ph := range p.Phases {
		if len(ph.Kernels) != len(refs) {
			continue
		}
		alloc := make([]int, len(refs))
		shares := len(ph.MergeShares) == len(ph.Kernels) && (mode == transform.MergeInterleaved || mode == transform.MergePersistent)
		ok := true
		for k, pk := range ph.Kernels {
			i, err := allocIndex(pk.Name, refs)
			if err != nil || alloc[i] != 0 {
				ok = false
				break
			}
			if pk.SMs < 1 {
				return nil, fmt.Errorf("phase %d holds these kernels but gives %s no SMs (plans of --algo %s do not split SMs)",
					ph.Index+1, pk.Name, p.Algorithm)
			}
			alloc[i] = pk.SMs
			if shares {
				alloc[i] = max(1, ph.MergeShares[k])
			}
		}
		if ok {
			if ph.Merge != nil && !ph.Merge.Recommended {
				fmt.Fprintf(warn, "%s: warning: phase %d: %s\n", path, ph.Index+1, ph.Merge.Reason)
			}
			return alloc, nil
		}
	}
	var names []string
	for _, r := range refs {
		names = append(names, r.Kernel+argsText(r))
	}
	return nil, fmt.Errorf("no phase holds exactly the kernels %s", strings.Join(names, ", "))
}
