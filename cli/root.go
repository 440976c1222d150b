// Package cli holds slatec's cobra commands. Each command lives in a file of
// its own and is registered in newRootCmd.
package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes: 1 for input errors (bad CUDA, refused kernels, drift under
// --check), 2 for usage errors (unknown flags, wrong argument counts).
const (
	exitOK    = 0
	exitInput = 1
	exitUsage = 2
)

// usageError marks an error as a usage error (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// silentError is an error whose diagnostics have already been printed.
type silentError struct{ code int }

func (e silentError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "slatec",
		Short: "Spatial GPU sharing for CUDA kernels: persistent-worker and merged-scheduler transforms",
		Long: `slatec rewrites CUDA kernels source to source so that several kernels can share
one GPU spatially: persistent workers bound to a range of SMs (Slate) and merged
multi-kernel schedulers with leaky-bucket block interleaving (Liang et al.).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newVersionCmd())
	for _, add := range extraCommands {
		root.AddCommand(add())
	}
	return root
}

// extraCommands lets each command file register itself from an init function,
// so that commands developed in parallel do not edit the same lines.
var extraCommands []func() *cobra.Command

func register(f func() *cobra.Command) { extraCommands = append(extraCommands, f) }

// Execute runs the command line and returns the process exit code.
func Execute() int { return run(newRootCmd(), os.Args[1:]) }

func run(root *cobra.Command, args []string) int {
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var se silentError
	if errors.As(err, &se) {
		return se.code
	}
	fmt.Fprintf(root.ErrOrStderr(), "slatec: error: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsageError(err) {
		return exitUsage
	}
	return exitInput
}

// isCobraUsageError recognises the argument-count and unknown-command errors
// that cobra returns as plain errors.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "received ", "unknown flag", "unknown shorthand", "flag needs"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
