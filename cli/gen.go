package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/gen"
	"github.com/slatec/slatec/transform"
)

func init() { register(newGenCmd) }

func newGenCmd() *cobra.Command {
	var out, pkg, typ string
	var includes, kernels, instantiate, matchRegs []string
	cmd := &cobra.Command{
		Use:   "gen [flags] FILE.cu",
		Short: "Write a Go file with typed launchers for a CUDA file's kernels (for //go:generate)",
		Long: `gen transforms FILE.cu into persistent workers and writes a Go file that
embeds the result and has one typed method per kernel, launching it through
the slatec runtime on a range of SMs. C parameter types map to Go types
(pointers to runtime.DevicePtr, int to int32, float4 to [4]float32, ...).
Host code in FILE.cu is fenced out of what NVRTC compiles. --kernels limits
the launchers to the kernels named. Template kernels are skipped (they need
an explicit instantiation to be launched): --instantiate 'scale<float>'
(repeatable) gives one a launcher, method ScaleFloat. A C name that cannot be used as
is in Go (a Go keyword, a launcher parameter such as grid, a clash) gets a
trailing _ and a warning.

In a Go package:

  //go:generate slatec gen -o kernels_slate.go kernels.cu

The package name is --package, else $GOPACKAGE (which go generate sets),
else the output directory's name. The type is --type, else the file's name
with a Kernels suffix (saxpy.cu: SaxpyKernels, loaded by LoadSaxpyKernels;
kernels.cu: Kernels, loaded by LoadKernels).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if path == "-" {
				return usagef("gen needs a file name (its kernels are named after it)")
			}
			if out == "" {
				out = strings.TrimSuffix(path, filepath.Ext(path)) + "_slate.go"
			}
			if sameFile(out, path) {
				return usagef("output %s is the input %s", out, path)
			}
			if pkg == "" {
				pkg = os.Getenv("GOPACKAGE")
			}
			if pkg == "" {
				abs, err := filepath.Abs(filepath.Dir(out))
				if err != nil {
					return err
				}
				pkg = strings.ReplaceAll(filepath.Base(abs), "-", "_")
			}
			name, src, err := readInput(cmd, path)
			if err != nil {
				return err
			}
			if err := checkNotGenerated(name, src); err != nil {
				return err
			}
			a, err := transform.Load(name, src, includes)
			if err != nil {
				var d diag.Diagnostic
				if errors.As(err, &d) {
					printDiags(cmd, []diag.Diagnostic{d})
					return silentError{exitInput}
				}
				return err
			}
			var regCaps map[string]map[string]int
			var regInstances map[string]map[string]map[string]int
			if len(matchRegs) > 0 {
				if regCaps, regInstances, err = registerCaps([]string{path}, matchRegs, includes, nil); err != nil {
					return err
				}
				pruneRegCaps([]string{path}, matchRegs, includes, nil, transform.LoadOptions{IncludeDirs: includes}, regCaps, regInstances,
					func(msg string) { fmt.Fprintf(cmd.ErrOrStderr(), "slatec: warning: %s\n", msg) })
			}
			version, _ := BuildInfo()
			res, err := transform.Persistent(a, transform.Options{Kernels: kernels, NoLaunchRewrite: true, DeviceOnly: true,
				RegCaps: regCaps, RegCapInstances: regInstances,
				Version: version, Command: genCommandLine(kernels, matchRegs, name), LineFile: filepath.Base(name)})
			if err != nil {
				return usageError{err}
			}
			printDiags(cmd, res.Diags)
			if res.Diags.HasErrors() {
				return silentError{exitInput}
			}
			code, skipped, err := gen.Generate(res, a, gen.Options{Package: pkg, Type: typ, Source: filepath.Base(name), Version: version, Instantiate: instantiate,
				Warn: func(msg string) { fmt.Fprintf(cmd.ErrOrStderr(), "%s: warning: %s\n", name, msg) }})
			for _, s := range skipped {
				fmt.Fprintf(cmd.ErrOrStderr(), "slatec: note: template kernel %s has no Go launcher (give --instantiate '%s<...>')\n", s, s)
			}
			var oe *gen.OptionError
			if errors.As(err, &oe) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			return emit.WriteFileAtomic(out, code, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the Go file to write (default FILE_slate.go; - for stdout)")
	cmd.Flags().StringVar(&pkg, "package", "", "Go package name; wins over $GOPACKAGE (which go generate sets), the default, else the output directory's name")
	cmd.Flags().StringVar(&typ, "type", "", "name of the Go type holding the kernels (default from the file name: kernels.cu gives Kernels, saxpy.cu SaxpyKernels)")
	cmd.Flags().StringArrayVar(&instantiate, "instantiate", nil, "give a template kernel a launcher: 'scale<float>' (repeatable)")
	cmd.Flags().StringSliceVar(&kernels, "kernels", nil, "write launchers only for these kernels (comma-separated names)")
	cmd.Flags().StringSliceVarP(&includes, "include", "I", nil, "directories to search for #include \"...\" files")
	cmd.Flags().StringSliceVar(&matchRegs, "match-regs", nil, "cap each worker's registers at its kernel's on these architectures (e.g. sm_90), so it keeps the kernel's blocks per SM when NVRTC compiles it for one of them (runs nvcc -Xptxas -v on FILE at generate time)")
	return cmd
}

// genCommandLine renders the options that shape gen's output, for the header.
func genCommandLine(kernels, matchRegs []string, file string) string {
	parts := []string{"gen"}
	if len(kernels) > 0 {
		parts = append(parts, "--kernels", strings.Join(kernels, ","))
	}
	if len(matchRegs) > 0 {
		parts = append(parts, "--match-regs", strings.Join(matchRegs, ","))
	}
	return strings.Join(append(parts, filepath.ToSlash(file)), " ")
}
