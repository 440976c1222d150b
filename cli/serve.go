package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/serve"
)

func init() { register(newServeCmd) }

// DefaultMinShare is `slatec serve --min-share`'s default (serve.Config's
// MinShare says why a split gives no process less).
const DefaultMinShare = 0.1

type serveFlags struct {
	socket        string
	profiles      string
	resizeTimeout time.Duration
	idleAfter     time.Duration
	splitHold     time.Duration
	minShare      float64
	objective     string
	logFile       string
	sms           int
	status        bool
	asJSON        bool
	unplanned     string
	traceNotes    bool
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon that shares one GPU's SMs among drop-in transformed programs",
		Long: `serve runs the cross-process scheduler: one daemon per GPU and user. Programs
transformed with slatec transform find it through a Unix socket ($SLATEC_SOCKET,
else $XDG_RUNTIME_DIR/slatec/serve.sock, else /tmp/slatec-$UID/serve.sock),
register and get a standing SM range (a grant) that the daemon pushes again
whenever a process joins or leaves: a program alone on the GPU launches
natively, others launch on their range without asking the daemon, and their
running kernels are moved when their range changes. With --profiles, the
kernels the processes run are split between them for the most throughput
(a bandwidth-bound kernel gets the SMs that saturate DRAM, a compute-bound
one the rest) when the profiles predict that the split does at least 1.15x
the work of running them one after another and each process keeps the GPU
busy (its launches at its kernel's time a launch fill at least half of
the recent time, launches queued ahead included; a process idle for
--idle-after gives its share to the others); others each get the whole GPU
with native launches, overlapping as MPS schedules them (--unplanned
overlap, the default: without a plan no split is known to pay), or equal
shares (--unplanned equal). A program that finds no daemon runs
natively. The protocol (version 2) is in docs/SERVE.md.

Kernels of different processes run at once only under MPS
(nvidia-cuda-mps-control -d); serve says at start whether MPS is active.
SIGINT or SIGTERM stops the daemon: clients are told and fall back to the
whole GPU, and the socket is removed. --status prints the state of a running
daemon (as slatec top) instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.status {
				return runTop(cmd, f.socket, f.asJSON)
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.socket, "socket", "", "socket path (default $SLATEC_SOCKET, $XDG_RUNTIME_DIR/slatec/serve.sock or /tmp/slatec-$UID/serve.sock)")
	fl.StringVar(&f.profiles, "profiles", "", "kernel profiles (slatec-profile/1): each set of the processes' kernels is split between them for the most throughput when the profiles predict that it pays (docs/SERVE.md, Scheduling)")
	fl.DurationVar(&f.resizeTimeout, "resize-timeout", 100*time.Millisecond, "how long a client may take to acknowledge a new grant before it is marked stuck")
	fl.DurationVar(&f.idleAfter, "idle-after", serve.DefaultIdleAfter, "how long a process may go without launching before its share goes to the others (0: never)")
	fl.DurationVar(&f.splitHold, "split-hold", serve.DefaultSplitHold, "how long a split stays made while the same processes stay active, whatever their busy readings (0: no hold)")
	fl.Float64Var(&f.minShare, "min-share", DefaultMinShare, "the least share of the SMs (0 to 0.5) a planned split gives each process (0: the plan's counts)")
	fl.StringVar(&f.logFile, "log", "", "append the log to this file (default standard error)")
	fl.IntVar(&f.sms, "sms", 0, "the GPU's SM count (default: the profiles', else the first client's)")
	fl.BoolVar(&f.status, "status", false, "print a running daemon's state and exit (as slatec top)")
	fl.BoolVar(&f.asJSON, "json", false, "with --status: print JSON")
	fl.BoolVar(&f.traceNotes, "trace-notes", false, "log every load note (launches, running, native_pending, busy): why a set is or is not split")
	fl.StringVar(&f.objective, "objective", "balanced", "what a planned split maximises: balanced (the slowest kernel's predicted speed) or stp (the sum of their speeds)")
	fl.StringVar(&f.unplanned, "unplanned", string(serve.AutoUnplanned), "what processes that no plan co-runs get: auto (equal shares under MPS, unless the profiles know their kernels and predict no split pays; else overlap), overlap (the whole GPU each, native launches) or equal (equal shares)")
	return cmd
}

func runServe(ctx context.Context, stderr io.Writer, f serveFlags) error {
	if f.resizeTimeout <= 0 {
		return usagef("--resize-timeout must be positive")
	}
	if f.sms < 0 || f.sms > plan.MaxSMs {
		return usagef("--sms must be in 0..%d", plan.MaxSMs)
	}
	if f.idleAfter < 0 {
		return usagef("--idle-after must not be negative")
	}
	idleAfter := f.idleAfter
	if idleAfter == 0 {
		idleAfter = -1 // never (serve.Config: 0 takes the default)
	}
	if f.splitHold < 0 {
		return usagef("--split-hold must not be negative")
	}
	splitHold := f.splitHold
	if splitHold == 0 {
		splitHold = -1 // none (serve.Config: 0 takes the default)
	}
	if f.unplanned == "" {
		f.unplanned = string(serve.AutoUnplanned)
	}
	if f.minShare < 0 || f.minShare > 0.5 {
		return usagef("--min-share must be in 0..0.5, got %g", f.minShare)
	}
	if f.objective == "" {
		f.objective = "balanced"
	}
	if f.objective != "stp" && f.objective != "balanced" {
		return usagef("--objective must be stp or balanced, got %q", f.objective)
	}
	if u := serve.Unplanned(f.unplanned); u != serve.AutoUnplanned && u != serve.Overlap && u != serve.EqualShares {
		return usagef("--unplanned must be %s, %s or %s, got %q", serve.AutoUnplanned, serve.Overlap, serve.EqualShares, f.unplanned)
	}
	var w io.Writer = stderr
	if f.logFile != "" {
		lf, err := os.OpenFile(f.logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return codeError{exitInput, fmt.Errorf("--log: %w", err)}
		}
		defer lf.Close()
		w = lf
	}
	lg := log.New(w, "slatec serve: ", log.LstdFlags|log.Lmicroseconds)
	cfg := serve.Config{
		Socket: f.socket, SMs: f.sms, ResizeTimeout: f.resizeTimeout, IdleAfter: idleAfter, SplitHold: splitHold, MinShare: f.minShare, Balanced: f.objective == "balanced", Version: Version, Logf: lg.Printf,
		Unplanned: serve.Unplanned(f.unplanned), TraceNotes: f.traceNotes,
	}
	if f.profiles != "" {
		ps, err := plan.ReadProfileFile(f.profiles)
		if err != nil {
			return codeError{exitInput, fmt.Errorf("--profiles: %w", err)}
		}
		cfg.Profiles = ps
	}
	d, err := serve.New(cfg)
	if err != nil {
		return codeError{exitInput, err}
	}
	mps := d.MPS()
	lg.Printf("listening on %s (pid %d), policy %s, resize timeout %v, idle after %v", d.Socket(), os.Getpid(), d.PolicyName(), f.resizeTimeout, f.idleAfter)
	if msg := mps.Warning(); msg != "" {
		lg.Printf("warning: %s", msg)
		if w != stderr {
			fmt.Fprintf(stderr, "slatec serve: warning: %s\n", msg)
		}
	} else {
		lg.Printf("%s: kernels of different processes can run at once", mps.Detail)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve() }()
	select {
	case <-ctx.Done():
		lg.Printf("stopping: telling clients, removing %s", d.Socket())
		err := d.Close()
		<-served
		return err
	case err := <-served:
		d.Close()
		if err != nil {
			return codeError{exitInput, err}
		}
		return errors.New("serve: listener closed")
	}
}
