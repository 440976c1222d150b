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
	var includes []string
	cmd := &cobra.Command{
		Use:   "gen [flags] FILE.cu",
		Short: "Write a Go file with typed launchers for a CUDA file's kernels (for //go:generate)",
		Long: `gen transforms FILE.cu into persistent workers and writes a Go file that
embeds the result and has one typed method per kernel, launching it through
the slatec runtime on a range of SMs. C parameter types map to Go types
(pointers to runtime.DevicePtr, int to int32, float4 to [4]float32, ...).
Host code in FILE.cu is fenced out of what NVRTC compiles. Template kernels
are skipped (they need an explicit instantiation to be launched).

In a Go package:

  //go:generate slatec gen -o kernels_slate.go kernels.cu

The package name is $GOPACKAGE (set by go generate), else --package, else
the output directory's name.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if path == "-" {
				return usagef("gen needs a file name (its kernels are named after it)")
			}
			if out == "" {
				out = strings.TrimSuffix(path, filepath.Ext(path)) + "_slate.go"
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
			a, err := transform.Load(name, src, includes)
			if err != nil {
				var d diag.Diagnostic
				if errors.As(err, &d) {
					printDiags(cmd, []diag.Diagnostic{d})
					return silentError{exitInput}
				}
				return err
			}
			version, _ := BuildInfo()
			res, err := transform.Persistent(a, transform.Options{NoLaunchRewrite: true, DeviceOnly: true,
				Version: version, Command: "gen " + filepath.ToSlash(name), LineFile: filepath.Base(name)})
			if err != nil {
				return usageError{err}
			}
			printDiags(cmd, res.Diags)
			if res.Diags.HasErrors() {
				return silentError{exitInput}
			}
			code, skipped, err := gen.Generate(res, a, gen.Options{Package: pkg, Type: typ, Source: filepath.Base(name), Version: version})
			for _, s := range skipped {
				fmt.Fprintf(cmd.ErrOrStderr(), "slatec: note: template kernel %s has no Go launcher (instantiate it in a wrapper kernel)\n", s)
			}
			if err != nil {
				return err
			}
			return emit.WriteFileAtomic(out, code, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the Go file to write (default FILE_slate.go; - for stdout)")
	cmd.Flags().StringVar(&pkg, "package", "", "Go package name (default $GOPACKAGE, else the output directory's name)")
	cmd.Flags().StringVar(&typ, "type", "", "name of the Go type holding the kernels (default from the file name)")
	cmd.Flags().StringSliceVarP(&includes, "include", "I", nil, "directories to search for #include \"...\" files")
	return cmd
}
