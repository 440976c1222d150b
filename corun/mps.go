package corun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// MPSRunner runs a workload's kernels in separate processes, one kernel
// each, started together, under NVIDIA's MPS daemon.
type MPSRunner interface {
	// Unavailable says why MPS cannot be used here ("" when it can).
	Unavailable() string
	// Run runs the kernels once with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
	// pct (0: unset) and returns each kernel's end in ms from the earliest
	// start, with the makespan.
	Run(ctx context.Context, ks []*Kernel, pct int) (ends []float64, makespan float64, err error)
}

// mps runs the mps mode: the default setting, then each thread
// percentage; the best percentage is reported beside the default.
func (b *Bench) mps(ctx context.Context, w Workload) ([]Outcome, error) {
	if b.Opts.MPS == nil {
		return []Outcome{{Setting: "default", Unavailable: "no MPS runner for this device"}}, nil
	}
	if why := b.Opts.MPS.Unavailable(); why != "" {
		return []Outcome{{Setting: "default", Unavailable: why}}, nil
	}
	run := func(pct int) (runResult, error) {
		return b.median(ctx, func() (runResult, error) {
			ends, mk, err := b.Opts.MPS.Run(ctx, w.Kernels, pct)
			return runResult{makespan: mk, ends: ends}, err
		})
	}
	def, err := run(0)
	if err != nil {
		return nil, err
	}
	out := []Outcome{def.outcome()}
	out[0].Setting = "default"
	var best *Outcome
	for _, pct := range b.Opts.MPSPercentages {
		r, err := run(pct)
		if err != nil {
			return nil, fmt.Errorf("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d: %w", pct, err)
		}
		if best == nil || r.makespan < best.MakespanMs {
			o := r.outcome()
			o.Setting = fmt.Sprintf("pct=%d", pct)
			best = &o
		}
	}
	if best != nil {
		out = append(out, *best)
	}
	return out, nil
}

// MPSPipeDir is where the MPS control daemon keeps its pipes: the
// CUDA_MPS_PIPE_DIRECTORY of the environment, else the default.
func MPSPipeDir() string {
	if d := os.Getenv("CUDA_MPS_PIPE_DIRECTORY"); d != "" {
		return d
	}
	return "/tmp/nvidia-mps"
}

// MPSDaemonRunning reports whether an MPS control daemon serves this
// environment: its control pipe exists in MPSPipeDir. It says why not
// otherwise.
func MPSDaemonRunning() (bool, string) {
	dir := MPSPipeDir()
	if _, err := os.Stat(filepath.Join(dir, "control")); err != nil {
		hint := "start it with 'nvidia-cuda-mps-control -d'"
		if _, lerr := exec.LookPath("nvidia-cuda-mps-control"); lerr != nil {
			hint = "nvidia-cuda-mps-control is not installed"
		}
		return false, fmt.Sprintf("no MPS daemon (no control pipe in %s; %s)", dir, hint)
	}
	return true, ""
}
