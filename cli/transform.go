package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
several FILEs, -o names a directory. Files with no kernels and no launch
sites come out byte for byte. A kernel slatec cannot transform safely is
refused with a diagnostic naming the line, and the file fails (exit 1)
unless --kernels leaves that kernel out.

--check compares with the existing output file and prints a unified diff
on drift (exit 1): the CI golden-file use. From Go:

  //go:generate slatec transform -o k_slate.cu k.cu`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTransform(cmd, args, fl) },
	}
	f := cmd.Flags()
	f.StringVarP(&fl.out, "output", "o", "-", "output file, directory (several inputs), or - for stdout")
	f.StringSliceVar(&fl.kernels, "kernels", nil, "transform only these kernels (comma-separated names)")
	f.StringVar(&fl.iters, "iters", "auto", `logical blocks per task: "auto" (chosen per launch) or a number`)
	f.BoolVar(&fl.noLaunchRewrite, "no-launch-rewrite", false, "leave host launch sites unchanged")
	f.BoolVar(&fl.check, "check", false, "compare with the existing output and print a diff on drift (exit 1)")
	f.StringSliceVarP(&fl.includes, "include", "I", nil, "directories to search for #include \"...\" files")
	f.BoolVar(&fl.asJSON, "json", false, "print diagnostics and kernel layouts as JSON on stdout (needs -o FILE)")
	f.StringVar(&fl.layout, "layout", "", "write the transformed kernels' parameter layouts as JSON to this file")
	f.StringSliceVar(&fl.matchRegs, "match-regs", nil, "cap each worker's registers at its kernel's on these architectures (e.g. sm_90), so it keeps the kernel's blocks per SM (runs nvcc -Xptxas -v on each .cu input)")
	return cmd
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
	multi := len(args) > 1
	if st, err := os.Stat(fl.out); err == nil && st.IsDir() && fl.out != "-" {
		multi = true // -o DIR: write DIR/<input name>, also for one input
	}
	if multi && fl.out == "-" {
		return usagef("with several input files, -o must name a directory")
	}
	if fl.check && fl.out == "-" {
		return usagef("--check compares with an output file: give -o FILE")
	}
	if fl.asJSON && fl.out == "-" {
		return usagef("--json prints to stdout, so the output needs -o FILE")
	}
	if multi {
		if err := os.MkdirAll(fl.out, 0o755); err != nil {
			return err
		}
		seen := map[string]string{}
		for _, a := range args {
			b := filepath.Base(a)
			if prev, ok := seen[b]; ok {
				return usagef("inputs %s and %s would both be written to %s", prev, a, filepath.Join(fl.out, b))
			}
			seen[b] = a
		}
	}
	var regCaps map[string]map[string]int
	if len(fl.matchRegs) > 0 {
		caps, err := registerCaps(args, fl.matchRegs, fl.includes)
		if err != nil {
			return err
		}
		regCaps = caps
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
	// Load every input first: kernels of one file may be launched from another.
	type loaded struct {
		name string
		a    *transform.Analysis
		err  error
	}
	var inputs []loaded
	var allKernels []string
	for _, path := range args {
		name, src, err := readInput(cmd, path)
		if err != nil {
			return err
		}
		a, err := transform.Load(name, src, fl.includes)
		inputs = append(inputs, loaded{name, a, err})
		if a != nil {
			for _, k := range a.Kernels {
				if len(fl.kernels) == 0 || containsString(fl.kernels, k.Func.Name) || containsString(fl.kernels, k.Func.QualifiedName()) {
					allKernels = append(allKernels, k.Func.QualifiedName())
				}
			}
		}
	}
	for i, path := range args {
		name, a, err := inputs[i].name, inputs[i].a, inputs[i].err
		out := fl.out
		if multi {
			out = filepath.Join(fl.out, filepath.Base(path))
		}
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
		var own, others []string
		for _, k := range a.Kernels {
			own = append(own, k.Func.QualifiedName())
		}
		for _, q := range allKernels {
			if !containsString(own, q) {
				others = append(others, q)
			}
		}
		selected := fl.kernels
		if len(selected) > 0 {
			// In a multi-file run --kernels names kernels of any file.
			selected = nil
			for _, k := range a.Kernels {
				if containsString(fl.kernels, k.Func.Name) || containsString(fl.kernels, k.Func.QualifiedName()) {
					selected = append(selected, k.Func.QualifiedName())
				}
			}
			if len(selected) == 0 && !multi {
				selected = fl.kernels // let the transform report the unknown name
			}
		}
		opts := transform.Options{Kernels: selected, Iters: iters, NoLaunchRewrite: fl.noLaunchRewrite,
			Version: version, Command: transformCommandLine(fl, name), OtherKernels: others, RegCaps: regCaps}
		if multi && len(fl.kernels) > 0 && len(selected) == 0 {
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
				return err
			}
			if d := emit.UnifiedDiff(out, out+" (regenerated)", string(old), string(res.Output)); d != "" {
				fmt.Fprint(cmd.OutOrStdout(), d)
				fmt.Fprintf(cmd.ErrOrStderr(), "slatec: %s is out of date; regenerate it with: slatec %s -o %s\n", out, transformCommandLine(fl, name), out)
				drift = true
			}
			continue
		}
		if err := emit.WriteFileAtomic(out, res.Output, cmd.OutOrStdout()); err != nil {
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
	if failed || drift {
		return silentError{exitInput}
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
