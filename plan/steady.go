package plan

import (
	"fmt"
	"math"
)

// SteadySplit is a split of the SMs between kernels that run continuously
// side by side, launch after launch: what processes sharing a GPU under
// slatec serve do. The planners above size one launch of each kernel (a
// phase ends when its kernels do); a process's next launch follows at
// once, so what matters there is the rate at which each one progresses
// while they share the GPU.
type SteadySplit struct {
	Names []string
	// SMs is each kernel's share, in the order of Names (contiguous ranges
	// in that order cover all SMs).
	SMs []int
	// Speeds are each kernel's predicted progress rates on its share, as
	// fractions of its rate alone on the GPU (its best solo time).
	Speeds []float64
	// STP is the system throughput, the sum of Speeds (Luley's STP, in
	// the steady state): above 1, sharing does more work per second than
	// running the kernels one after another.
	STP float64
}

// SteadyOptions bound the search of SteadySplitFor.
type SteadyOptions struct {
	// Step is the granularity of the shares: each a multiple of Step, the
	// last taking the rest (default 1 SM).
	Step int
	// MinSpeed is the least speed a kernel may be given (default
	// 1/(2n) of n kernels): maximising the throughput alone could starve
	// one process to speed up another by a little more.
	MinSpeed float64
	// Balanced maximises the slowest kernel's speed instead of STP (ties,
	// within 0.5%, go to the higher STP): processes with about as much
	// work each end about together, which is what their makespan asks. STP
	// rewards a bandwidth-bound kernel's last few percent of speed bought
	// with many SMs: on the H100 it gave a triad 32 SMs beside FMA chains,
	// whose pair then took 115 ms on static ranges, where 20 took 99.
	// slatec serve plans with it by default: once its splits held, it was
	// as fast as STP or faster on every workload measured (bench/RESULTS.md,
	// sixteenth session).
	Balanced bool
}

// SteadySplitFor returns the split of the device's SMs between the
// kernels names (two or more, each profiled) that maximises STP (or, with
// opts.Balanced, the slowest kernel's speed), each
// kernel's speed being best_i / (R_i[m_i] x slow_i): slow_i is the larger
// of the bandwidth penalty of all of them together (Liang's equation 3)
// and kernel i's loaded-latency factor beside the others' bandwidth (its
// measured DRAM sensitivity), as the co-run model of the scheduler's
// planner has it. Only splits that give every kernel at least
// opts.MinSpeed are considered; nil when none does.
func SteadySplitFor(ps *ProfileSet, names []string, opts SteadyOptions) (*SteadySplit, error) {
	n := len(names)
	if n < 2 {
		return nil, fmt.Errorf("plan: a steady split needs two or more kernels, got %d", n)
	}
	sub, missing := ps.Subset(names)
	if sub == nil {
		return nil, fmt.Errorf("plan: no profile of kernel %q", missing)
	}
	mdl, err := NewModel(sub)
	if err != nil {
		return nil, err
	}
	step := max(opts.Step, 1)
	// The search is exhaustive over shares in steps: coarser steps for
	// larger sets keep it to about maxSteadySplits splits (a daemon plans
	// a new set while processes wait for their grants).
	for compositions(mdl.M/step, n) > maxSteadySplits {
		step++
	}
	floor := opts.MinSpeed
	if floor <= 0 {
		floor = 1 / float64(2*n)
	}
	M := mdl.M
	if M < step*n {
		return nil, nil
	}
	var best *SteadySplit
	// Balanced: a first pass finds the best slowest speed (maxMin), the
	// second the highest STP among splits within 0.5% of it.
	maxMin, pass := 0.0, 2
	if opts.Balanced {
		pass = 1
	}
	split := make([]int, n)
	speeds := make([]float64, n)
	c := make([]Alloc, n)
	eval := func() {
		for j := range split {
			c[j] = Alloc{Kernel: j, SMs: split[j]}
		}
		bw := mdl.bandwidth(c)
		pen := mdl.penaltyOf(bw)
		stp, slowest := 0.0, math.Inf(1)
		for j := range split { // sub holds the kernels in the order of names
			slow := max(pen, mdl.loadedBeside(c, j))
			speeds[j] = mdl.best[j] / (mdl.r[j][split[j]] * slow)
			if speeds[j] < floor || math.IsNaN(speeds[j]) {
				return
			}
			stp += speeds[j]
			slowest = min(slowest, speeds[j])
		}
		if pass == 1 {
			maxMin = max(maxMin, slowest)
			return
		}
		if opts.Balanced && slowest < maxMin/1.005 {
			return
		}
		if best == nil || stp > best.STP+1e-12 {
			best = &SteadySplit{Names: append([]string(nil), names...), SMs: append([]int(nil), split...),
				Speeds: append([]float64(nil), speeds...), STP: stp}
		}
	}
	var rec func(k, left int)
	rec = func(k, left int) {
		if k == n-1 {
			split[k] = left
			eval()
			return
		}
		for m := step; left-m >= step*(n-1-k); m += step {
			split[k] = m
			rec(k+1, left-m)
		}
	}
	rec(0, M)
	if pass == 1 {
		pass = 2
		rec(0, M)
	}
	return best, nil
}

// maxSteadySplits bounds the splits SteadySplitFor evaluates.
const maxSteadySplits = 200000

// compositions is how many ways k units split into n positive parts,
// C(k-1, n-1), saturating at math.MaxFloat64 (0 when k < n).
func compositions(k, n int) float64 {
	if n <= 0 || k < n {
		return 0
	}
	c := 1.0
	for i := 1; i < n; i++ {
		c = c * float64(k-i) / float64(i)
	}
	return c
}
