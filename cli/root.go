// Package cli holds slatec's cobra commands. Each command lives in a file of
// its own and is registered in newRootCmd.
package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slatec/slatec/diag"
)

// Exit codes: 1 for input errors (bad CUDA, refused kernels, drift under
// --check), 2 for usage errors (unknown flags, wrong argument counts) and,
// under --check, for trouble (a missing or unreadable input), as diff does.
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

// argError is a usage error cobra found in the command line (a bad flag);
// it prints the usage line.
type argError struct{ err error }

func (e argError) Error() string { return e.err.Error() }
func (e argError) Unwrap() error { return usageError{e.err} }

// silentError is an error whose diagnostics have already been printed.
type silentError struct{ code int }

func (e silentError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// codeError is an error to print (as a diagnostic when it is one) that
// exits with a given code.
type codeError struct {
	code int
	err  error
}

func (e codeError) Error() string { return e.err.Error() }
func (e codeError) Unwrap() error { return e.err }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "slatec",
		Short: "Spatial GPU sharing for CUDA kernels: persistent-worker and merged-scheduler transforms",
		Long: `slatec rewrites CUDA kernels source to source so that several kernels can share
one GPU spatially: persistent workers bound to a range of SMs (Slate) and merged
multi-kernel schedulers with leaky-bucket block interleaving (Liang et al.).`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate(strings.ReplaceAll(versionLine(), "{{", "{{`{{`}}"))
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return argError{err} })
	root.AddCommand(newVersionCmd())
	for _, add := range extraCommands {
		root.AddCommand(add())
	}
	registerEnumCompletions(root)
	return root
}

// enumFlags lists the values of each command's enumerated flags, offered by
// shell completion (slatec completion bash|zsh|fish|powershell).
var enumFlags = map[string]map[string][]string{
	"transform": {"iters": {"auto"}},
	"merge":     {"mode": {"interleaved", "persistent", "smrange", "split"}},
	"serve":     {"unplanned": {"overlap", "equal"}, "objective": {"stp", "balanced"}},
	"plan": {
		"algo":    {"stm", "optimal", "slate", "li", "cumas"},
		"eval":    {"fluid", "exact"},
		"fit":     {"ff", "bf"},
		"variant": {"2", "3"},
	},
	"profile": {"sms": {"all", "step:"}},
}

func registerEnumCompletions(root *cobra.Command) {
	for _, c := range root.Commands() {
		for flag, values := range enumFlags[c.Name()] {
			if c.Flags().Lookup(flag) == nil {
				continue
			}
			values := values
			_ = c.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return values, cobra.ShellCompDirectiveNoFileComp
			})
		}
	}
}

// extraCommands lets each command file register itself from an init function,
// so that commands developed in parallel do not edit the same lines.
var extraCommands []func() *cobra.Command

func register(f func() *cobra.Command) { extraCommands = append(extraCommands, f) }

// Execute runs the command line and returns the process exit code.
func Execute() int { return run(newRootCmd(), os.Args[1:]) }

func run(root *cobra.Command, args []string) int {
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	var se silentError
	if errors.As(err, &se) {
		return se.code
	}
	stderr := root.ErrOrStderr()
	var d diag.Diagnostic
	if errors.As(err, &d) {
		diag.Write(stderr, []diag.Diagnostic{d})
	} else {
		fmt.Fprintf(stderr, "slatec: error: %v\n", err)
	}
	var ce codeError
	if errors.As(err, &ce) {
		return ce.code
	}
	var ae argError
	if errors.As(err, &ae) || isCobraUsageError(err) {
		if cmd == nil {
			cmd = root
		}
		use := cmd.UseLine()
		if !cmd.Runnable() && cmd.HasAvailableSubCommands() {
			use = cmd.CommandPath() + " COMMAND [flags]"
		}
		fmt.Fprintf(stderr, "usage: %s\nRun '%s --help' for more.\n", use, cmd.CommandPath())
		return exitUsage
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitInput
}

// isCobraUsageError recognises the argument-count and unknown-command errors
// that cobra returns as plain errors.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "received ", "unknown flag", "unknown shorthand", "flag needs", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
