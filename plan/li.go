package plan

import (
	"fmt"
	"math/big"
	"sort"
)

// Li, Narayana and El-Ghazawi, "A static task scheduling framework for
// independent tasks accelerated using a shared GPU". A task is an H2D copy,
// a kernel and a D2H copy; tasks are packed into groups whose kernels fit on
// the GPU together, groups run one after another, and inside a group the
// launch order decides how copies overlap.

// LiTask is one task of Li's model: copy-in, compute and copy-out times, and
// R_task = blocks / (SMs × blocks per SM), the fraction of the GPU its
// blocks occupy (exact rational, so bin packing has no float ties).
type LiTask struct {
	Name          string
	In, Comp, Out float64
	RTask         *big.Rat
}

// LiGroupTime is Li's Algorithm 1, the execution model of one group
// launched in the given order: H2D copies are serialised, so task i
// finishes computing at T_fc(i) = Σ_{n<=i} T_in(n) + T_comp(i); D2H copies
// are served first-finished first-served, so sorting by T_fc (stable on
// launch order), T_total(1) = T_fc(1) + T_out(1) and
// T_total(i) = max(T_fc(i), T_total(i-1)) + T_out(i). Returns the group time
// and each task's completion, indexed like order.
func LiGroupTime(tasks []LiTask, order []int) (float64, []float64) {
	n := len(order)
	fc := make([]float64, n)
	in := 0.0
	for p, t := range order {
		in += tasks[t].In
		fc[p] = in + tasks[t].Comp
	}
	byFC := make([]int, n)
	for p := range byFC {
		byFC[p] = p
	}
	sort.SliceStable(byFC, func(x, y int) bool { return fc[byFC[x]] < fc[byFC[y]] })
	done := make([]float64, n)
	total := 0.0
	for q, p := range byFC {
		if q == 0 {
			total = fc[p] + tasks[order[p]].Out
		} else {
			total = max(fc[p], total) + tasks[order[p]].Out
		}
		done[p] = total
	}
	return total, done
}

// LiOrder is Li's sequencing heuristic (Algorithms 2 and 3): the task with
// the largest T_comp + T_out goes first; then, after task i, among the
// remaining tasks j with T_in(j) + T_comp(j) >= T_comp(i) + T_out(i) (they
// cover i's compute and copy-out) the one with the largest T_comp + T_out;
// if none qualifies, the one with the largest T_comp (variant 2) or the
// smallest T_in (variant 3). The swaps are those of the paper's pseudo-code,
// so ties go to the earliest task in the current list.
func LiOrder(tasks []LiTask, group []int, variant int) []int {
	list := append([]int(nil), group...)
	n := len(list)
	if n == 0 {
		return list
	}
	co := func(t int) float64 { return tasks[t].Comp + tasks[t].Out }
	m := 0
	for j := 1; j < n; j++ {
		if co(list[j]) > co(list[m]) {
			m = j
		}
	}
	list[0], list[m] = list[m], list[0]
	for i := 0; i < n-1; i++ {
		need := co(list[i])
		k := -1
		for j := i + 1; j < n; j++ {
			t := list[j]
			if tasks[t].In+tasks[t].Comp >= need && (k < 0 || co(t) > co(list[k])) {
				k = j
			}
		}
		if k < 0 {
			k = i + 1
			for j := i + 2; j < n; j++ {
				t := list[j]
				if variant == 3 {
					if tasks[t].In < tasks[list[k]].In {
						k = j
					}
				} else if tasks[t].Comp > tasks[list[k]].Comp {
					k = j
				}
			}
		}
		list[i+1], list[k] = list[k], list[i+1]
	}
	return list
}

// Fit selects the bin-packing heuristic.
type Fit int

// First-Fit and Best-Fit decreasing.
const (
	FirstFit Fit = iota
	BestFit
)

// PackDecreasing groups items of the given sizes into bins of capacity 1:
// items sorted by size, largest first (stable: equal sizes keep their input
// order); First-Fit puts each in the first bin where it fits, Best-Fit in
// the fullest bin where it fits (earliest on ties); an item that fits
// nowhere opens a new bin. An item larger than 1 gets a bin of its own that
// nothing else fits into. Returns bins of item indices, in opening order.
func PackDecreasing(sizes []*big.Rat, fit Fit) [][]int {
	idx := make([]int, len(sizes))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return sizes[idx[x]].Cmp(sizes[idx[y]]) > 0 })
	one := big.NewRat(1, 1)
	var bins [][]int
	var load []*big.Rat
	for _, it := range idx {
		chosen := -1
		for b := range bins {
			nl := new(big.Rat).Add(load[b], sizes[it])
			if nl.Cmp(one) > 0 {
				continue
			}
			if fit == FirstFit {
				chosen = b
				break
			}
			if chosen < 0 || load[b].Cmp(load[chosen]) > 0 {
				chosen = b
			}
		}
		if chosen < 0 {
			bins = append(bins, nil)
			load = append(load, new(big.Rat))
			chosen = len(bins) - 1
		}
		bins[chosen] = append(bins[chosen], it)
		load[chosen].Add(load[chosen], sizes[it])
	}
	return bins
}

// LiOptions configures PlanLi.
type LiOptions struct {
	Fit     Fit
	Variant int // 2 (T_comp prioritised) or 3 (T_in prioritised)
}

// LiTasks builds Li's tasks from a profile: T_comp is R[M] (in a group whose
// R_task sum is at most 1 every kernel has the SM resources it has alone;
// PlanLi stretches it by the group's bandwidth penalty), the
// copies come from the transfer field (zero when absent), and
// R_task = blocks / (M × occupancy).
func LiTasks(ps *ProfileSet) []LiTask {
	M := ps.Device.SMs
	var ts []LiTask
	for i := range ps.Kernels {
		k := &ps.Kernels[i]
		ts = append(ts, LiTask{
			Name: k.Name, In: k.In(), Comp: k.R(M), Out: k.Out(),
			RTask: big.NewRat(k.Blocks, int64(M)*int64(ps.Occupancy(k))),
		})
	}
	return ts
}

// PlanLi plans with Li et al.'s Algorithm 4: pack by R_task decreasing,
// order each group by the chosen variant, run groups one after another.
// A group's kernels overlap, so when their B[M] sum exceeds the peak every
// T_comp in it is multiplied by Liang's penalty (3); a group then predicted
// slower than its tasks one after another is split into one group per task
// (never worse than sequential), with a note.
func PlanLi(ps *ProfileSet, opt LiOptions) (*Plan, error) {
	if err := ps.Validate(); err != nil {
		return nil, err
	}
	if opt.Variant == 0 {
		opt.Variant = 3
	}
	if opt.Variant != 2 && opt.Variant != 3 {
		return nil, fmt.Errorf("li: variant must be 2 or 3, got %d", opt.Variant)
	}
	tasks := LiTasks(ps)
	sizes := make([]*big.Rat, len(tasks))
	for i, t := range tasks {
		sizes[i] = t.RTask
	}
	fitName := map[Fit]string{FirstFit: "first-fit", BestFit: "best-fit"}[opt.Fit]
	p := &Plan{Format: PlanFormat, Algorithm: "li", Device: ps.Device.Name, SMs: ps.Device.SMs}
	fin := make([]float64, len(tasks))
	now := 0.0
	M := ps.Device.SMs
	var groups [][]int
	for _, g := range PackDecreasing(sizes, opt.Fit) {
		// The kernels of a group overlap on the GPU and share its DRAM
		// bandwidth: Li's T_comp = R[M] holds for each alone, so a group
		// whose kernels together ask for more than the peak has every
		// T_comp stretched by Liang's penalty (equation (3) with B[M]).
		bw := 0.0
		for _, t := range g {
			bw += ps.Kernels[t].B(M)
		}
		pen := 1.0
		if len(g) > 1 && bw > ps.Device.PeakBWGBs {
			pen = bw / ps.Device.PeakBWGBs
		}
		gt := append([]LiTask(nil), tasks...)
		seq := 0.0
		for _, t := range g {
			gt[t].Comp *= pen
			seq += tasks[t].In + tasks[t].Comp + tasks[t].Out
		}
		order := LiOrder(gt, g, opt.Variant)
		total, _ := LiGroupTime(gt, order)
		if total > seq {
			// Running the group's tasks one after another is always
			// possible: never predict worse.
			p.Notes = append(p.Notes, fmt.Sprintf("groups %d-%d: the group was predicted at %.4f ms (bandwidth penalty %.3f), slower than its tasks one after another (%.4f ms): one task per group", len(groups)+1, len(groups)+len(g), total, pen, seq))
			for _, t := range order {
				groups = append(groups, []int{t})
				p.Phases = append(p.Phases, liPhase(tasks, tasks, []int{t}, len(p.Phases), &now, fin, 1))
			}
			continue
		}
		groups = append(groups, g)
		p.Phases = append(p.Phases, liPhase(gt, tasks, order, len(p.Phases), &now, fin, pen))
	}
	solo, bestM, seqFin := transferSolo(ps)
	for i, t := range tasks {
		p.SequentialMs += t.In + t.Comp + t.Out
		seqFin[i] = p.SequentialMs
	}
	p.PredictedMs = now
	if p.SequentialMs > 0 {
		p.Gain = 1 - now/p.SequentialMs
	}
	p.Metrics = ComputeMetrics(fin, solo, now)
	p.Sequential = ComputeMetrics(seqFin, solo, p.SequentialMs)
	p.Kernels = kernelTimes(ps, fin, solo, bestM)
	p.Notes = append(p.Notes, fmt.Sprintf("grouping: %s decreasing by R_task; ordering: variant %d; T_comp = R[M] × the group's bandwidth penalty; sequential = Σ (in + comp + out)", fitName, opt.Variant))
	return p, nil
}

// liPhase returns the group run in the given order (tasks carry the
// group's bandwidth penalty pen, alone the tasks without it) starting at
// *now, records each task's completion in fin and advances *now.
func liPhase(tasks, alone []LiTask, order []int, index int, now *float64, fin []float64, pen float64) Phase {
	total, done := LiGroupTime(tasks, order)
	ph := Phase{Index: index, StartMs: *now, LatencyMs: total}
	in := 0.0
	load := new(big.Rat)
	for pos, t := range order {
		ph.Order = append(ph.Order, tasks[t].Name)
		ph.Kernels = append(ph.Kernels, PhaseKernel{Name: tasks[t].Name, StartMs: *now + in, EndMs: *now + done[pos]})
		in += tasks[t].In
		fin[t] = *now + done[pos]
		ph.SequentialMs += alone[t].In + alone[t].Comp + alone[t].Out
		load.Add(load, tasks[t].RTask)
	}
	f, _ := load.Float64()
	ph.Note = fmt.Sprintf("R_task sum %.3f", f)
	if pen > 1 {
		ph.Note += fmt.Sprintf(", bandwidth penalty %.3f", pen)
	}
	*now += total
	return ph
}

// transferSolo returns, per kernel, its best solo turnaround with copies
// (in + min_m R[m] + out), the m of that minimum, and a zeroed slice for the
// sequential completions.
func transferSolo(ps *ProfileSet) (solo []float64, bestM []int, seqFin []float64) {
	M := ps.Device.SMs
	for i := range ps.Kernels {
		k := &ps.Kernels[i]
		bm := 1
		for m := 2; m <= M; m++ {
			if k.R(m) < k.R(bm) {
				bm = m
			}
		}
		solo = append(solo, k.In()+k.R(bm)+k.Out())
		bestM = append(bestM, bm)
	}
	return solo, bestM, make([]float64, len(ps.Kernels))
}
