package plan

import (
	"fmt"
	"math"
	"sort"

	"github.com/slatec/slatec/internal/shares"
)

// Class is a Slate workload class (Allen, Feng, Ge, Table I). Memory
// intensity takes priority: a kernel of medium or high memory intensity is
// M_M or H_M whatever its compute intensity; a kernel of low memory
// intensity is split by compute intensity into L_C, M_C or H_C.
type Class string

// The five classes of Slate's policy table.
const (
	LC Class = "L_C"
	MC Class = "M_C"
	HC Class = "H_C"
	MM Class = "M_M"
	HM Class = "H_M"
)

var classOrder = []Class{LC, MC, HC, MM, HM}

// Memory reports whether the class is memory intensive (M_M or H_M).
func (c Class) Memory() bool { return c == MM || c == HM }

func classNames() []string {
	s := make([]string, len(classOrder))
	for i, c := range classOrder {
		s[i] = string(c)
	}
	return s
}

// Valid reports whether c is one of the five classes.
func (c Class) Valid() bool { return c.index() >= 0 }

func (c Class) index() int {
	for i, x := range classOrder {
		if x == c {
			return i
		}
	}
	return -1
}

// Policy is Slate's decision for a pair of kernels.
type Policy string

// Corun and Solo are the two entries of Slate's table.
const (
	Corun Policy = "corun"
	Solo  Policy = "solo"
)

// policyTable is Table I exactly as PLANNER.md gives it: rows are the kernel
// that is running (J_k), columns the candidate (J_k+1 or one further down
// the queue). It is NOT symmetric: (H_C, M_M) is solo but (M_M, H_C) corun,
// and (H_C, H_M) is corun but (H_M, H_C) solo. The table is empirical; we
// keep it verbatim rather than "fix" it, and read it row = running kernel.
var policyTable = [5][5]Policy{
	//          L_C    M_C    H_C    M_M    H_M
	/* L_C */ {Corun, Corun, Solo, Corun, Corun},
	/* M_C */ {Corun, Corun, Solo, Solo, Corun},
	/* H_C */ {Solo, Solo, Solo, Solo, Corun},
	/* M_M */ {Corun, Solo, Corun, Solo, Solo},
	/* H_M */ {Corun, Corun, Solo, Solo, Solo},
}

// PolicyFor returns Slate's table entry for running kernel class a and
// candidate class b. Unknown classes give Solo, the safe answer.
func PolicyFor(a, b Class) Policy {
	i, j := a.index(), b.index()
	if i < 0 || j < 0 {
		return Solo
	}
	return policyTable[i][j]
}

// Classification thresholds. Slate labels intensities L/M/H from nvprof
// GFLOP/s and bandwidth but publishes no cut-offs; these are calibrated so
// that the paper's own Table II (Titan Xp: 547.6 GB/s, 12,150 GFLOP/s peak)
// reproduces its labels: bandwidth 71.6 GB/s (13%) low; 340.9-403.5 GB/s
// (62-74%) medium; 568.6 GB/s (104%) high; 4.2 and 19.6 GFLOP/s (<0.2%)
// low; 161.3 (1.3%) medium; 1,525 (12.6%) high. Compute cut-offs are low
// because GFLOP/s of real kernels is a small fraction of the FMA peak.
const (
	MemHighFrac  = 0.80 // B[M]/Pb at or above: H_M
	MemMedFrac   = 0.25 // B[M]/Pb at or above: M_M
	FlopHighFrac = 0.10 // gflops/peak_gflops at or above: H_C
	FlopMedFrac  = 0.01 // gflops/peak_gflops at or above: M_C

	// Without FLOP counts, compute intensity falls back to parallel
	// efficiency from the smallest measured SM count m0 to all M SMs,
	// R[m0]·m0 / (R[M]·M): a kernel that keeps every SM busy (scales
	// linearly) is compute intensive; one that cannot use the SMs (too few
	// blocks, latency bound) is low, which is how Slate describes its L_C
	// example (RG, "unable to fully utilize GPU's capacity").
	EffHighFrac = 0.80
	EffMedFrac  = 0.40
)

// Classify returns the Slate class of kernel i: its explicit class if the
// profile gives one, otherwise the class derived from the metrics with the
// thresholds above. The second result says which rule decided, for output.
func (ps *ProfileSet) Classify(i int) (Class, string) {
	k := &ps.Kernels[i]
	if k.Class != "" {
		return k.Class, "profile"
	}
	M := ps.Device.SMs
	mem := k.B(M) / ps.Device.PeakBWGBs
	switch {
	case mem >= MemHighFrac:
		return HM, fmt.Sprintf("bw %.0f%% of peak", 100*mem)
	case mem >= MemMedFrac:
		return MM, fmt.Sprintf("bw %.0f%% of peak", 100*mem)
	}
	if k.GFLOPS > 0 && ps.Device.PeakGFLOPS > 0 {
		f := k.GFLOPS / ps.Device.PeakGFLOPS
		switch {
		case f >= FlopHighFrac:
			return HC, fmt.Sprintf("%.1f%% of peak flops", 100*f)
		case f >= FlopMedFrac:
			return MC, fmt.Sprintf("%.1f%% of peak flops", 100*f)
		}
		return LC, fmt.Sprintf("%.2f%% of peak flops", 100*f)
	}
	m0 := k.RMs[0].M
	eff := k.R(m0) * float64(m0) / (k.R(M) * float64(M))
	switch {
	case m0 == M:
		// One measurement at M tells nothing about scaling; medium is the
		// neutral middle of the table.
		return MC, "no scaling data"
	case eff >= EffHighFrac:
		return HC, fmt.Sprintf("scaling efficiency %.0f%%", 100*eff)
	case eff >= EffMedFrac:
		return MC, fmt.Sprintf("scaling efficiency %.0f%%", 100*eff)
	}
	return LC, fmt.Sprintf("scaling efficiency %.0f%%", 100*eff)
}

// PlanSlate applies Slate's selection rule to the kernels in file (queue)
// order: the kernel at the head of the queue is J_k; the first later kernel
// whose class the table marks corun with J_k's class (row J_k, column the
// candidate) is co-run with it; if none is, J_k runs solo on all SMs.
// Both leave the queue and the rule repeats. A pair whose global memory does
// not fit on the device is never co-run.
//
// The latency of a co-run phase uses Slate's runtime semantics: persistent
// workers on disjoint SM ranges, and when one kernel finishes the survivor
// grows to all M SMs. With the pair on m and M-m SMs, both slowed by the
// bandwidth penalty of Liang's equation (3) while they overlap, the first
// finishes at t1 = min(R_a[m], R_b[M-m])·pen, the survivor has done
// t1/(R_s[m_s]·pen) of its work and finishes the rest at full width:
// (1 - t1/(R_s[m_s]·pen))·R_s[M]. The split m is the one minimising that
// (smallest m on ties). The first to finish takes at least its R[m]; the
// survivor at least the smaller of R[M-m] and R[M] (it runs on both). The
// table decides corun; the model only sizes it, so a pair the table calls
// complementary can still be predicted slower than solo runs: such a pair
// runs one after another instead (sequential is always possible) and a note
// says so.
func PlanSlate(ps *ProfileSet) (*Plan, error) { return PlanSlateWith(ps, SlateOptions{}) }

// SchedulerOptions is how the co-run scheduler plans a set of kernels
// that arrive together (slatec bench's scheduler mode, slatec serve's
// grants): either kernel order, groups of up to three, the model beside
// the table, overlap phases and native solo phases.
var SchedulerOptions = SlateOptions{EitherOrder: true, MaxGroup: 3, ModelCorun: true, Overlap: true, NativeSolo: true, SoloTail: true}

// SlateOptions vary Slate's selection rule.
type SlateOptions struct {
	// EitherOrder co-runs a pair when the table says corun with either
	// kernel as the running one: for kernels that arrive together, which one
	// is "running" is an accident of order, and the table is not symmetric
	// ((H_C, H_M) corun, (H_M, H_C) solo).
	EitherOrder bool
	// MaxGroup is how many kernels may co-run (default 2, Slate's pairs;
	// 3 admits a third that the table finds complementary to both, sized
	// by simulating the split in steps of GroupStep SMs).
	MaxGroup int
	// GroupStep is the SM step of the search for groups of three (default
	// 4).
	GroupStep int
	// ModelCorun also co-runs a pair the table calls solo when the model
	// predicts it at least 5% faster than one after another: the table is
	// a heuristic over classes, and a latency-bound kernel of a few long
	// blocks beside a compute-bound one (L_C, H_C: solo in the table)
	// leaves most SMs to it and still overlaps all its time. It does not
	// override the table for two memory-intensive kernels (M_M or H_M):
	// there the bandwidth penalty is least trustworthy (on an H100 a
	// histogram beside a triad ran 1.86x slower where the penalty said
	// 1.33x, and the pair lost to running one after another; on the H200,
	// measured beside each other (Kernel.Beside), a scale beside a
	// histogram was still predicted at 0.933 ms and ran 1.013, 4% behind
	// concurrent streams). And it
	// holds the table's co-runs to a predicted gain of 3%: a co-run phase
	// runs its kernels as persistent workers, and grown ones stay so to
	// their end, while a solo phase runs the kernel as written; the worker
	// costs 2-5% on some kernels (on the H200 a tiled GEMM beside a
	// histogram, predicted 0.2% faster than one after another, ran 15%
	// slower; a triad beside a pointer chase, predicted 4% faster, was
	// 4% faster).
	ModelCorun bool
	// Overlap also considers, for each pair, launching both kernels as
	// written on all SMs, the one of a small grid (no more blocks than
	// SMs) first (see overlap.go): chosen when the model predicts it
	// faster than the pair's best spatial split and 3% faster than one
	// after another. A pair that neither the table nor the spatial model
	// co-runs co-runs so when the overlap alone wins.
	Overlap bool
	// NativeSolo says that a kernel the plan runs alone runs as written
	// (the bench's scheduler chains such kernels natively): its phase
	// takes the profile's native_ms where measured, and a co-run must beat
	// the kernels' native times one after another, not their workers'
	// (R[M]). On an H100 a tiled GEMM's worker on all SMs was ~10% slower
	// than the kernel, and the pairs it co-ran to "gain" that back ran
	// 5-9% slower than the kernels as written one after another.
	NativeSolo bool
	// SoloTail (with NativeSolo) launches a solo phase's kernel without
	// waiting for the previous solo phase's to end when both grids fill
	// the GPU at least once (Phase.Tail): the second kernel's blocks then
	// take the SMs the first one's last wave frees, and run alone once it
	// is gone. A small grid (fewer blocks than a wave) would instead run
	// all its blocks beside the first kernel's, which the plan chose not
	// to do, so it waits. On an H100 the pairs planned solo ran 0.4-1.8%
	// slower one after another than on concurrent streams (corun.json,
	// 3cd5c21).
	SoloTail bool
}

// With ModelCorun a pair co-runs when its predicted latency is below
// modelCorunGain (the table said solo) or tableCorunGain (the table said
// corun) times one after another.
const (
	modelCorunGain = 0.95
	tableCorunGain = 0.97
)

// PlanSlateWith is PlanSlate with options.
func PlanSlateWith(ps *ProfileSet, opts SlateOptions) (*Plan, error) {
	mdl, err := NewModel(ps)
	if err != nil {
		return nil, err
	}
	n := len(ps.Kernels)
	classes := make([]Class, n)
	why := make([]string, n)
	for i := range n {
		classes[i], why[i] = ps.Classify(i)
	}
	queue := make([]int, n)
	for i := range queue {
		queue[i] = i
	}
	b := newPlanBuilder(mdl, "slate")
	b.native = opts.NativeSolo
	corun := func(a, c int) bool {
		if PolicyFor(classes[a], classes[c]) == Corun || opts.EitherOrder && PolicyFor(classes[c], classes[a]) == Corun {
			return true
		}
		if classes[a].Memory() && classes[c].Memory() {
			return false
		}
		seq := b.solo1(a) + b.solo1(c)
		if opts.ModelCorun {
			if _, lat, _, _ := mdl.slatePair(a, c); lat < modelCorunGain*seq {
				return true
			}
		}
		if opts.Overlap {
			olat, _, _, _, _, ok := mdl.overlapBest(a, c)
			return ok && olat < tableCorunGain*seq
		}
		return false
	}
	if opts.GroupStep <= 0 {
		opts.GroupStep = 4
	}
	for len(queue) > 0 {
		a := queue[0]
		partner := -1
		for qi := 1; qi < len(queue); qi++ {
			c := queue[qi]
			if corun(a, c) && ps.Kernels[a].GlobalBytes+ps.Kernels[c].GlobalBytes <= ps.Device.MemBytes {
				partner = qi
				break
			}
		}
		if partner < 0 {
			b.soloPhase(a)
			queue = queue[1:]
			continue
		}
		c := queue[partner]
		if opts.MaxGroup >= 3 {
			third := -1
			for qi := partner + 1; qi < len(queue); qi++ {
				x := queue[qi]
				if corun(a, x) && corun(c, x) && ps.Kernels[a].GlobalBytes+ps.Kernels[c].GlobalBytes+ps.Kernels[x].GlobalBytes <= ps.Device.MemBytes {
					third = qi
					break
				}
			}
			if third >= 0 {
				g := []int{a, c, queue[third]}
				ms, lat, fin := mdl.slateGroup(g, max(1, opts.GroupStep))
				// Better than the pair, then the third alone.
				_, pairLat, _, _ := mdl.slatePair(a, c)
				if opts.Overlap {
					if ov, ok := mdl.overlapWins(a, c, pairLat, b.solo1(a)+b.solo1(c)); ok {
						pairLat = ov.lat
					}
				}
				if lat < pairLat+b.solo1(g[2]) {
					var rest []int
					for qi, k := range queue[1:] {
						if qi+1 != partner && qi+1 != third {
							rest = append(rest, k)
						}
					}
					queue = rest
					ph := Phase{LatencyMs: lat, Note: fmt.Sprintf("%s corun %s corun %s", classes[g[0]], classes[g[1]], classes[g[2]])}
					for i, k := range g {
						ph.Kernels = append(ph.Kernels, PhaseKernel{Name: ps.Kernels[k].Name, SMs: ms[i], FinishMs: fin[i]})
					}
					b.phase(ph)
					continue
				}
			}
		}
		m, lat, fa, fc := mdl.slatePair(a, c)
		queue = append(queue[1:partner:partner], queue[partner+1:]...)
		seq := b.solo1(a) + b.solo1(c)
		if opts.Overlap {
			if ov, ok := mdl.overlapWins(a, c, lat, seq); ok {
				b.phase(Phase{
					Overlap: true,
					Kernels: []PhaseKernel{
						{Name: ps.Kernels[ov.first].Name, SMs: mdl.M, FinishMs: ov.finFirst},
						{Name: ps.Kernels[ov.second].Name, SMs: mdl.M, FinishMs: ov.finSecond},
					},
					LatencyMs: ov.lat,
					Note: fmt.Sprintf("%s overlap %s: both as written on all SMs, %s first (best split predicted %.4f ms)",
						classes[ov.first], classes[ov.second], ps.Kernels[ov.first].Name, lat),
				})
				continue
			}
		}
		if lat > seq || opts.ModelCorun && lat >= tableCorunGain*seq {
			// The table says corun but the profiles say the pair loses
			// (or, refined by the model, gains too little to pay for the
			// workers): run them one after another.
			than := "slower than"
			if lat <= seq {
				than = fmt.Sprintf("less than %.0f%% faster than", 100*(1-tableCorunGain))
			}
			b.plan.Notes = append(b.plan.Notes, fmt.Sprintf("phases %d-%d: %s corun %s predicted at %.4f ms, %s one after another (%.4f ms): run solo", len(b.plan.Phases)+1, len(b.plan.Phases)+2, classes[a], classes[c], lat, than, seq))
			b.soloPhase(a)
			b.soloPhase(c)
			continue
		}
		b.phase(Phase{
			Kernels: []PhaseKernel{
				{Name: ps.Kernels[a].Name, SMs: m, FinishMs: fa},
				{Name: ps.Kernels[c].Name, SMs: mdl.M - m, FinishMs: fc},
			},
			LatencyMs: lat,
			Note:      fmt.Sprintf("%s corun %s", classes[a], classes[c]),
		})
	}
	p := b.finish()
	if opts.NativeSolo && opts.SoloTail {
		markSoloTails(p, ps, mdl.M)
	}
	for i := range n {
		p.Classes = append(p.Classes, KernelClass{Name: ps.Kernels[i].Name, Class: classes[i], Reason: why[i]})
	}
	return p, nil
}

// markSoloTails sets Tail on each solo phase that follows a solo phase
// when both kernels' grids are at least a wave on M SMs (SoloTail).
func markSoloTails(p *Plan, ps *ProfileSet, M int) {
	fills := func(ph *Phase) bool {
		if ph.Overlap || len(ph.Kernels) != 1 || ph.Kernels[0].SMs != M {
			return false
		}
		i := ps.KernelIndex(ph.Kernels[0].Name)
		if i < 0 {
			return false
		}
		k := &ps.Kernels[i]
		return k.ThreadsPerBlock > 0 && k.Blocks >= int64(M)*int64(max(1, ps.Occupancy(k)))
	}
	for i := 1; i < len(p.Phases); i++ {
		if ph := &p.Phases[i]; fills(&p.Phases[i-1]) && fills(ph) {
			ph.Tail = true
			if ph.Note != "" {
				ph.Note += "; "
			}
			ph.Note += "launched without waiting: its blocks fill the SMs the previous kernel's last wave frees"
		}
	}
}

// slatePair returns the best split for kernels a (on m SMs) and c (on M-m),
// the phase latency, and each kernel's finish time within the phase: the
// pair as simulateSlate runs it.
func (mdl *Model) slatePair(a, c int) (bestM int, bestLat, finA, finC float64) {
	M := mdl.M
	if M < 2 {
		// Nothing to split: run back to back.
		ra, rc := mdl.r[a][M], mdl.r[c][M]
		return 1, ra + rc, ra, ra + rc
	}
	bestLat = math.Inf(1)
	ks, split := []int{a, c}, make([]int, 2)
	for m := 1; m < M; m++ {
		split[0], split[1] = m, M-m
		lat, fin := mdl.simulateSlate(ks, split)
		if lat < bestLat {
			bestM, bestLat, finA, finC = m, lat, fin[0], fin[1]
		}
	}
	return
}

// slateGroup sizes a group of kernels co-running under Slate's rules: on
// disjoint SM ranges (each a multiple of step, the last taking the rest),
// slowed by the bandwidth penalty while they overlap, and each time one
// ends the survivors grow to all SMs in proportion to what they hold (as
// runtime.Scheduler splits them). It returns the best split, its latency
// and each kernel's finish.
func (mdl *Model) slateGroup(ks []int, step int) (best []int, bestLat float64, bestFin []float64) {
	M, n := mdl.M, len(ks)
	bestLat = math.Inf(1)
	split := make([]int, n)
	var rec func(k, left int)
	rec = func(k, left int) {
		if k == n-1 {
			if left < 1 {
				return
			}
			split[k] = left
			lat, fin := mdl.simulateSlate(ks, split)
			if lat < bestLat {
				best, bestLat, bestFin = append([]int(nil), split...), lat, fin
			}
			return
		}
		for m := step; left-m >= step*(n-1-k); m += step {
			split[k] = m
			rec(k+1, left-m)
		}
	}
	rec(0, M)
	if best == nil { // fewer SMs than the step allows: equal shares
		best = shares.LargestRemainder(M, make([]float64, n)) // zeros: equal shares
		bestLat, bestFin = mdl.simulateSlate(ks, best)
	}
	return best, bestLat, bestFin
}

// simulateSlate runs kernels ks from SM split ms to their ends (see
// slateGroup) and returns the makespan and each kernel's finish.
//
// A kernel that grows leaves its blocks in flight (the wave it started
// last, of m x its occupancy blocks) to finish where they run, at their
// own pace; its blocks not yet started get what its new range adds to
// the pace of those in flight (nothing, for a kernel whose pace is
// bandwidth-bound already), and all of it once they are done. A pointer
// chase of 64 long blocks started on 1 SM beside a histogram (16 blocks in
// flight) ran 3.1 ms after the histogram ended, on the H100, though it
// grew to all 132 SMs: a fluid model, whose work moved to the new SMs at
// once, had predicted 0.8 ms.
func (mdl *Model) simulateSlate(ks []int, ms []int) (float64, []float64) {
	n := len(ks)
	// left is the fraction of each kernel's work not yet done, or after a
	// grow not yet started; until floor, flight SMs of the m it holds run
	// its blocks in flight at the grow.
	left := make([]float64, n)
	floor := make([]float64, n)
	flight := make([]int, n)
	m := append([]int(nil), ms...)
	fin := make([]float64, n)
	alive := make([]int, n)
	for i := range alive {
		alive[i], left[i] = i, 1
	}
	// rate is the fraction of kernel i's work per ms its unstarted (or,
	// before any grow, all its) blocks progress at, unslowed.
	rate := func(i int) float64 {
		r := 1 / mdl.r[ks[i]][m[i]]
		if flight[i] > 0 {
			r = max(0, r-1/mdl.r[ks[i]][flight[i]])
		}
		return r
	}
	const eps = 1e-12
	t := 0.0
	for len(alive) > 0 {
		c := make([]Alloc, len(alive))
		for j, i := range alive {
			c[j] = Alloc{Kernel: ks[i], SMs: m[i]}
		}
		bw := mdl.bandwidth(c)
		pen := mdl.penaltyOf(bw)
		slow := make([]float64, n)
		for j, i := range alive {
			slow[i] = max(pen, mdl.loadedBeside(c, j))
		}
		dt := math.Inf(1)
		for _, i := range alive {
			if r := rate(i); left[i] > eps && r > 0 {
				dt = min(dt, left[i]/r*slow[i])
			}
			if flight[i] > 0 {
				dt = min(dt, max(0, floor[i]-t)) // its blocks in flight end
			}
		}
		t += dt
		var next []int
		var weights []float64
		for _, i := range alive {
			if left[i] > eps {
				left[i] -= dt * rate(i) / slow[i]
			}
			if flight[i] > 0 && t >= floor[i]-eps {
				flight[i] = 0
			}
			if left[i] <= eps && flight[i] == 0 {
				fin[i] = t
				continue
			}
			next = append(next, i)
			weights = append(weights, float64(m[i]))
		}
		if len(next) > 0 && len(next) < len(alive) {
			grown := shares.LargestRemainder(mdl.M, weights)
			for j, i := range next {
				if grown[j] <= m[i] {
					continue
				}
				if flight[i] == 0 && left[i] > eps {
					tail, notStarted := mdl.inFlight(ks[i], m[i], 1-left[i])
					floor[i], flight[i], left[i] = t+tail, m[i], notStarted
				}
				// Grown again before its blocks in flight ended: they keep
				// their SMs, the rest gets the added ones.
				m[i] = grown[j]
			}
		}
		alive = next
	}
	return t, fin
}

// inFlight splits what is left of kernel i, running on m SMs with
// fraction done of its work done, at a grow: the time its blocks in flight
// still need where they run (the rest of the current wave, a wave being m
// x its occupancy blocks, at the kernel's unloaded pace on m SMs), and the
// fraction of its work in blocks not yet started. Waves are counted as if
// the kernel had run on m SMs from its start, exact at its first grow.
func (mdl *Model) inFlight(i, m int, done float64) (tail, notStarted float64) {
	tb := mdl.tb[i]
	cap := int64(m) * int64(max(1, mdl.PS.Occupancy(&mdl.PS.Kernels[i])))
	done = min(max(done, 0), 1)
	if cap <= 0 || tb <= 0 {
		return 0, 1 - done // no block structure known: fluid
	}
	waves := float64(tb) / float64(cap)
	started := min(1, (math.Floor(done*waves)+1)/waves) // fraction of the blocks
	return (started - done) * mdl.r[i][m], 1 - started
}

// loaded is kernel i's loaded-latency factor beside kernels moving others
// GB/s: 1 + (s - 1) x min(1, others / Pb), s its measured DRAM
// sensitivity (1 when not measured). The bandwidth penalty slows kernels
// that share DRAM's throughput; this slows one that waits on its latency,
// which a saturated DRAM raises: a pointer chase moving 5% of the
// bandwidth ran 1.5-2.6x slower beside a triad on an H100.
//
// With dram_loaded (the factor measured at several loads), the factor is
// interpolated linearly in others' GB/s between no load (1) and the
// measured points, and stays at the most loaded point's beyond it: a
// kernel's latency grows far less than linearly with the load below
// saturation (on an H100 a tiled GEMM of sensitivity 2.30 ran 1.04x slower
// beside a triad moving half the bandwidth, where the linear factor said
// 1.63x).
func (mdl *Model) loaded(i int, others float64) float64 {
	k := &mdl.PS.Kernels[i]
	if pts := mdl.loadedPts[i]; len(pts) > 0 {
		return max(1, interpolateSorted(pts, others))
	}
	s := k.DRAMSensitivity
	if s <= 1 || mdl.Pb <= 0 {
		return 1
	}
	return 1 + (s-1)*min(1, others/mdl.Pb)
}

// sortLoaded orders points by load (stable: ties keep their order).
func sortLoaded(ps []LoadedPoint) {
	sort.SliceStable(ps, func(a, b int) bool { return ps[a].StreamGBs < ps[b].StreamGBs })
}

// interpolateSorted is the piecewise-linear curve through (0, 1) and the
// points (sorted by load: sortLoaded) at gbs, flat past the last point.
func interpolateSorted(ps []LoadedPoint, gbs float64) float64 {
	x0, y0 := 0.0, 1.0
	for _, p := range ps {
		if gbs <= p.StreamGBs {
			if p.StreamGBs <= x0 {
				return p.Slowdown
			}
			return y0 + (p.Slowdown-y0)*(max(0, gbs)-x0)/(p.StreamGBs-x0)
		}
		x0, y0 = p.StreamGBs, p.Slowdown
	}
	return y0
}

func (mdl *Model) penalty2(a, ma, c, mc int) float64 {
	return mdl.penaltyOf(mdl.b[a][ma] + mdl.b[c][mc])
}
