package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/transform"
)

func init() { register(newTransformCmd) }

type transformFlags struct {
	out             string
	kernels         []string
	iters           string
	noLaunchRewrite bool
	check           bool
	includes        []string
	asJSON          bool
	layout          string
	matchRegs       []string
	inPlace         bool
	report          bool
	macros          macroFlags
}

func newTransformCmd() *cobra.Command {
	var fl transformFlags
	cmd := &cobra.Command{
		Use:   "transform [flags] FILE...",
		Short: "Rewrite kernels into persistent workers bound to SM ranges, and their launches into drop-in helpers",
		Long: `transform writes, next to each untouched kernel k, its persistent form:
k__slate (a worker that takes tasks of logical blocks from a queue and runs
only on its SM range), the body k__slate_body, and a host launcher
k__slate_launch with the kernel's launch signature. Host launch sites in the
same file, k<<<g, b, shm, stream>>>(args), are rewritten to the launcher, so
the program keeps working unchanged (drop-in mode).

Output goes to stdout unless -o names a file; "-" is stdin/stdout. With
several FILEs (or when -o names an existing directory or ends in /), -o
names a directory and each input keeps its relative path under it:
kernel/k.cu goes to DIR/kernel/k.cu. When an input is given with an
absolute path or one that starts with .., every input is placed relative to
the inputs' common ancestor directory instead (/src/a/k.cu and /src/b/k.cu
go to DIR/a/k.cu and DIR/b/k.cu); standard input goes to DIR/stdin.cu.
--in-place writes each output over its input (atomically), the way to
transform a source tree in CI; it cannot be combined with -o.

-o writes a new file through a temporary file and a rename, so a failed run
leaves nothing behind; a symbolic link is followed (its target is replaced,
the link kept); a character device or FIFO (/dev/null, /dev/stdout) is
written through; other special files are refused, and so is an output that
is one of the inputs (use --in-place). An input that slatec generated, or
a binary file, is an error. Files with no kernels and no launch sites come
out byte for byte. A kernel slatec cannot transform safely is
refused with a diagnostic naming the line, and the file fails (exit 1)
unless --kernels leaves that kernel out.

--check compares with the existing output file and prints a unified diff
on drift (exit 1; a missing output is drift too); trouble, such as a missing
or unreadable input or a file that fails to transform, exits 2, as diff
does: the CI golden-file use. From Go:

  //go:generate slatec transform -o k_slate.cu k.cu

` + macroFlagsHelp + ` The -D and -U flags are written into the
output's header line.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := runTransform(cmd, args, fl)
			if fl.check {
				err = checkTrouble(err)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&fl.out, "output", "o", "-", "output file, directory (several inputs; keeps their relative paths), or - for stdout")
	f.StringSliceVar(&fl.kernels, "kernels", nil, "transform only these kernels (comma-separated names)")
	f.StringVar(&fl.iters, "iters", "auto", `logical blocks per task: "auto" (chosen per launch) or a number`)
	f.BoolVar(&fl.noLaunchRewrite, "no-launch-rewrite", false, "leave host launch sites unchanged")
	f.BoolVar(&fl.check, "check", false, "compare with the existing output and print a diff on drift (exit 1; trouble exits 2)")
	f.StringSliceVarP(&fl.includes, "include", "I", nil, "directories to search for #include \"...\" files")
	f.BoolVar(&fl.asJSON, "json", false, "print diagnostics and kernel layouts as JSON on stdout (needs -o or --in-place)")
	f.StringVar(&fl.layout, "layout", "", "write the transformed kernels' parameter layouts as JSON to this file")
	f.StringSliceVar(&fl.matchRegs, "match-regs", nil, "cap each worker's registers at its kernel's on these architectures (e.g. sm_90), so it keeps the kernel's blocks per SM (runs nvcc -Xptxas -v on each .cu input)")
	f.BoolVarP(&fl.inPlace, "in-place", "i", false, "write each output over its input (atomically); not with -o")
	f.BoolVar(&fl.report, "report", false, "compile each output with nvcc (sm_90) and print, on stderr, each kernel's and its worker's registers, shared memory and blocks per SM")
	fl.macros.register(f)
	return cmd
}

// checkTrouble maps errors under --check to diff's exit codes: drift stays
// 1, anything else (an unreadable input, a failed transform) becomes 2.
func checkTrouble(err error) error {
	if err == nil {
		return nil
	}
	var se silentError
	if errors.As(err, &se) {
		return err // already 1 for drift, 2 for trouble
	}
	var ue usageError
	if errors.As(err, &ue) {
		return err
	}
	return codeError{exitUsage, err}
}

// errDrift marks drift under --check (exit 1).
var errDrift = silentError{exitInput}

// outputPaths maps the inputs to the files their outputs go to. dir is
// whether -o names a directory.
func outputPaths(args []string, fl transformFlags, dir bool) ([]string, error) {
	outs := make([]string, len(args))
	switch {
	case fl.inPlace:
		copy(outs, args)
	case !dir:
		outs[0] = fl.out
	default:
		rels, err := relativeOutputNames(args)
		if err != nil {
			return nil, err
		}
		for i, r := range rels {
			outs[i] = filepath.Join(fl.out, r)
		}
	}
	seen := map[string]int{}
	for i, o := range outs {
		if o == "-" {
			continue
		}
		key := o
		if abs, err := filepath.Abs(o); err == nil {
			key = abs
		}
		if j, ok := seen[key]; ok {
			return nil, usagef("inputs %s and %s would both be written to %s", args[j], args[i], o)
		}
		seen[key] = i
	}
	return outs, nil
}

// relativeOutputNames gives each input's path under -o DIR: the path as
// given when every input is a relative path inside the working directory,
// else the path relative to the inputs' common ancestor directory.
// Standard input is stdin.cu.
func relativeOutputNames(args []string) ([]string, error) {
	rels := make([]string, len(args))
	local := true
	for _, a := range args {
		c := filepath.Clean(a)
		if a != "-" && (filepath.IsAbs(c) || c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator))) {
			local = false
		}
	}
	var abs []string
	ancestor := ""
	for i, a := range args {
		if a == "-" {
			rels[i] = "stdin.cu"
			continue
		}
		if local {
			rels[i] = filepath.Clean(a)
			continue
		}
		p, err := filepath.Abs(a)
		if err != nil {
			return nil, err
		}
		abs = append(abs, p)
		if ancestor == "" {
			ancestor = filepath.Dir(p)
		}
		for !within(p, ancestor) {
			ancestor = filepath.Dir(ancestor)
		}
	}
	if !local {
		k := 0
		for i, a := range args {
			if a == "-" {
				continue
			}
			r, err := filepath.Rel(ancestor, abs[k])
			if err != nil {
				return nil, err
			}
			rels[i] = r
			k++
		}
	}
	return rels, nil
}

// within reports whether path p lies under directory dir.
func within(p, dir string) bool {
	if dir == string(filepath.Separator) || dir == filepath.VolumeName(dir)+string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// sameFile reports whether two paths name one existing file (after links).
func sameFile(a, b string) bool {
	if a == "-" || b == "-" {
		return false
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// transformCommandLine renders the options that shape the output, for the
// header (the output path does not, so it is left out).
func transformCommandLine(fl transformFlags, file string) string {
	parts := []string{"transform"}
	if len(fl.kernels) > 0 {
		parts = append(parts, "--kernels", strings.Join(fl.kernels, ","))
	}
	parts = append(parts, "--iters", fl.iters)
	if fl.noLaunchRewrite {
		parts = append(parts, "--no-launch-rewrite")
	}
	if len(fl.matchRegs) > 0 {
		parts = append(parts, "--match-regs", strings.Join(fl.matchRegs, ","))
	}
	parts = append(parts, fl.macros.args()...)
	return strings.Join(append(parts, filepath.ToSlash(file)), " ")
}

func runTransform(cmd *cobra.Command, args []string, fl transformFlags) error {
	iters := 0
	if fl.iters != "auto" {
		n, err := strconv.Atoi(fl.iters)
		if err != nil || n < 1 || n > 1<<20 {
			return usagef("--iters must be \"auto\" or a number from 1 to %d, not %q", 1<<20, fl.iters)
		}
		iters = n
	}
	if fl.inPlace {
		switch {
		case cmd.Flags().Changed("output"):
			return usagef("--in-place writes each output over its input; it cannot be combined with -o")
		case fl.check:
			return usagef("--check compares with an output file; it cannot be combined with --in-place")
		case containsString(args, "-"):
			return usagef("--in-place cannot write over standard input")
		}
	}
	multi := len(args) > 1 && !fl.inPlace
	if fl.out != "-" && !fl.inPlace {
		if st, err := os.Stat(fl.out); (err == nil && st.IsDir()) || strings.HasSuffix(fl.out, "/") {
			multi = true // -o DIR: write DIR/<input path>, also for one input
		}
	}
	if multi && fl.out == "-" {
		return usagef("with several input files, -o must name a directory (or give --in-place)")
	}
	if fl.check && fl.out == "-" {
		return usagef("--check compares with an output file: give -o FILE")
	}
	if fl.asJSON && fl.out == "-" && !fl.inPlace {
		return usagef("--json prints to stdout, so the output needs -o FILE")
	}
	outs, err := outputPaths(args, fl, multi)
	if err != nil {
		return err
	}
	for i, a := range args {
		if fl.layout != "" && sameFile(fl.layout, a) {
			return usagef("--layout %s is the input %s", fl.layout, a)
		}
		if !fl.inPlace && sameFile(outs[i], a) {
			return usagef("output %s is the input %s; write elsewhere, or use --in-place to replace the input", outs[i], a)
		}
	}
	var regCaps map[string]map[string]int
	var regInstances map[string]map[string]map[string]int
	if len(fl.matchRegs) > 0 {
		caps, inst, err := registerCaps(args, fl.matchRegs, fl.includes, fl.macros.args())
		if err != nil {
			return err
		}
		lo, err := fl.macros.loadOptions(fl.includes)
		if err != nil {
			return err
		}
		pruneRegCaps(args, fl.matchRegs, fl.includes, fl.macros.args(), lo, caps, inst,
			func(msg string) { fmt.Fprintf(cmd.ErrOrStderr(), "slatec: warning: %s\n", msg) })
		regCaps, regInstances = caps, inst
	}
	version, _ := BuildInfo()
	type fileResult struct {
		File    string                    `json:"file"`
		Output  string                    `json:"output"`
		Changed bool                      `json:"changed"`
		Kernels []*transform.KernelLayout `json:"kernels"`
		Diags   []diag.Diagnostic         `json:"diagnostics"`
	}
	var results []fileResult
	var layouts []*transform.KernelLayout
	failed, drift := false, false
	type pendingWrite struct {
		path string
		data []byte
	}
	var writes []pendingWrite
	// Load every input first: kernels of one file may be launched from another.
	type loaded struct {
		name string
		a    *transform.Analysis
		err  error
	}
	loadOpts, err := fl.macros.loadOptions(fl.includes)
	if err != nil {
		return err
	}
	if len(args) > 1 {
		loadOpts.Inputs = args // headers of the run: their classes are followed
	}
	var inputs []loaded
	for _, path := range args {
		name, src, err := readInput(cmd, path)
		if err != nil {
			return err
		}
		if err := checkNotGenerated(name, src); err != nil {
			return err
		}
		a, err := transform.LoadWith(name, src, loadOpts)
		inputs = append(inputs, loaded{name, a, err})
	}
	names := make([]string, len(inputs))
	as := make([]*transform.Analysis, len(inputs))
	for i, in := range inputs {
		names[i], as[i] = in.name, in.a
	}
	isSelected := func(k *transform.KernelInfo) bool {
		return len(fl.kernels) == 0 || containsString(fl.kernels, k.Func.Name) || containsString(fl.kernels, k.Func.QualifiedName())
	}
	runKs := runKernels(names, as, isSelected)
	exports := exportedClones(names, as, isSelected)
	for i := range args {
		name, a, err := inputs[i].name, inputs[i].a, inputs[i].err
		out := outs[i]
		if err != nil {
			var d diag.Diagnostic
			if errors.As(err, &d) {
				failed = true
				results = append(results, fileResult{File: name, Output: out, Diags: []diag.Diagnostic{d}})
				if !fl.asJSON {
					printDiags(cmd, []diag.Diagnostic{d})
				}
				continue
			}
			return err
		}
		others, hidden, decls := crossFile(i, names, as, runKs)
		selected := fl.kernels
		if len(selected) > 0 {
			// In a multi-file run --kernels names kernels of any file.
			selected = nil
			for _, k := range a.Kernels {
				if containsString(fl.kernels, k.Func.Name) || containsString(fl.kernels, k.Func.QualifiedName()) {
					selected = append(selected, k.Func.QualifiedName())
				}
			}
			if len(selected) == 0 && !multi && !fl.inPlace {
				selected = fl.kernels // let the transform report the unknown name
			}
		}
		opts := transform.Options{Kernels: selected, Iters: iters, NoLaunchRewrite: fl.noLaunchRewrite,
			Version: version, Command: transformCommandLine(fl, name), OtherKernels: others, HiddenKernels: hidden, OtherLaunchers: decls, RegCaps: regCaps, RegCapInstances: regInstances,
			ExportClones: exports[i], FirstUse: len(runKs) > 0}
		if (multi || fl.inPlace) && len(fl.kernels) > 0 && len(selected) == 0 {
			opts.Kernels = []string{}
			opts.NoKernels = true
		}
		res, err := transform.Persistent(a, opts)
		if err != nil {
			return usageError{err}
		}
		results = append(results, fileResult{File: name, Output: out, Changed: res.Changed, Kernels: nonNil(res.Kernels), Diags: nonNil([]diag.Diagnostic(res.Diags))})
		if !fl.asJSON {
			printDiags(cmd, res.Diags)
		}
		if res.Diags.HasErrors() {
			failed = true
			continue
		}
		layouts = append(layouts, res.Kernels...)
		if fl.check {
			old, err := os.ReadFile(out)
			if err != nil && !os.IsNotExist(err) {
				var pe *os.PathError
				if errors.As(err, &pe) {
					err = pe.Err
				}
				return fmt.Errorf("%s: %v", out, err)
			}
			if d := emit.UnifiedDiff(out, out+" (regenerated)", string(old), string(res.Output)); d != "" {
				fmt.Fprint(cmd.OutOrStdout(), d)
				fmt.Fprintf(cmd.ErrOrStderr(), "slatec: %s is out of date; regenerate it with: slatec %s -o %s\n", out, transformCommandLine(fl, name), out)
				drift = true
			}
			continue
		}
		if fl.inPlace && !res.Changed {
			continue // nothing to transform: leave the file (and its mtime) alone
		}
		writes = append(writes, pendingWrite{out, res.Output})
		if fl.report && res.Changed {
			if err := workerReport(cmd.ErrOrStderr(), name, res.Output, fl.includes, fl.macros.args(), slices.Contains(fl.matchRegs, reportArch)); err != nil {
				return err
			}
		}
	}
	// All or nothing: the outputs of one run call each other's launchers, so
	// when one input fails none is written (no launch anywhere is rewritten
	// to a launcher that was not emitted).
	if failed && len(writes) > 0 && !fl.asJSON {
		fmt.Fprintf(cmd.ErrOrStderr(), "slatec: no output written: the files of one run are written together or not at all\n")
	}
	for _, w := range writes {
		if failed {
			break
		}
		if multi {
			if err := os.MkdirAll(filepath.Dir(w.path), 0o755); err != nil {
				var pe *os.PathError
				if errors.As(err, &pe) {
					err = pe.Err
				}
				return fmt.Errorf("%s: %v", filepath.Dir(w.path), err)
			}
		}
		if err := emit.WriteFileAtomic(w.path, w.data, cmd.OutOrStdout()); err != nil {
			return err
		}
	}
	if fl.layout != "" && !failed {
		data, err := jsonBytes(layouts)
		if err != nil {
			return err
		}
		if err := emit.WriteFileAtomic(fl.layout, data, cmd.OutOrStdout()); err != nil {
			return err
		}
	}
	if fl.asJSON {
		if err := writeJSON(cmd.OutOrStdout(), map[string]any{"format": "slatec-transform/1", "files": results}); err != nil {
			return err
		}
	}
	switch {
	case failed && fl.check:
		return silentError{exitUsage} // trouble, as diff says
	case failed:
		return silentError{exitInput}
	case drift:
		return errDrift
	}
	return nil
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
