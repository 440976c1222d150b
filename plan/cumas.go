package plan

import (
	"fmt"
	"math"
	"sort"
)

// CuMAS (Belviranli et al., ICS'16) treats a task as a three-machine flow
// shop job: H2D copy on the up-link S, kernel on the GPU P, D2H copy on the
// down-link R, in that order, each machine serving one job at a time.

// FlowJob is one task: s (H2D), p (kernel), r (D2H) times.
type FlowJob struct{ S, P, R float64 }

// FlowState is the time at which each machine becomes free.
type FlowState struct{ S, P, R float64 }

// Then returns the state after appending job j (the exact recurrence:
// S_i = S_{i-1} + s_i; P_i = max(S_i, P_{i-1}) + p_i;
// R_i = max(P_i, R_{i-1}) + r_i). The paper prints a delay recurrence for
// the down-link that differs; this one is exact for the flow shop.
func (st FlowState) Then(j FlowJob) FlowState {
	s := st.S + j.S
	p := max(s, st.P) + j.P
	return FlowState{S: s, P: p, R: max(p, st.R) + j.R}
}

// better orders end states: smaller R (the makespan so far), then smaller
// P (the GPU is free earlier for the next window).
func (st FlowState) better(o FlowState) bool {
	return st.R < o.R || (st.R == o.R && st.P < o.P)
}

// Makespan is R_N for the jobs in the given order from the idle state.
func Makespan(jobs []FlowJob, order []int) float64 {
	var st FlowState
	for _, i := range order {
		st = st.Then(jobs[i])
	}
	return st.R
}

// MaxWindow bounds the re-ordering window: the subset DP is O(2^w · w ·
// frontier).
const MaxWindow = 16

// BestOrderDP orders the jobs idx starting from state start, minimising the
// end state (R, then P), by a Held-Karp subset DP. For a subset U the H2D
// link is free at start.S + Σ_{U} s whatever the order, so a state is (P, R);
// the paper keeps one best state per subset, which is not exact (a state
// with a later P but earlier R can be the one that ends best). We keep the
// Pareto frontier of (P, R) per subset: the recurrence is monotone in both,
// so a dominated state can never lead to a better end, and the result
// equals brute force over all w! orders (tested).
func BestOrderDP(jobs []FlowJob, idx []int, start FlowState) ([]int, FlowState) {
	w := len(idx)
	if w == 0 {
		return nil, start
	}
	type state struct {
		st     FlowState
		parent int32 // index in frontier[U without last]
		last   int8
	}
	front := make([][]state, 1<<w)
	front[0] = []state{{st: start, parent: -1, last: -1}}
	for U := 0; U < 1<<w; U++ {
		for si, s := range front[U] {
			for t := range w {
				if U&(1<<t) != 0 {
					continue
				}
				ns := state{st: s.st.Then(jobs[idx[t]]), parent: int32(si), last: int8(t)}
				V := U | 1<<t
				dominated := false
				for _, o := range front[V] {
					if o.st.P <= ns.st.P && o.st.R <= ns.st.R {
						dominated = true // includes an equal state: first kept
						break
					}
				}
				if dominated {
					continue
				}
				kept := front[V][:0]
				for _, o := range front[V] {
					if !(ns.st.P <= o.st.P && ns.st.R <= o.st.R) {
						kept = append(kept, o)
					}
				}
				front[V] = append(kept, ns)
			}
		}
	}
	full := 1<<w - 1
	bi := 0
	for i, s := range front[full] {
		if s.st.better(front[full][bi].st) {
			bi = i
		}
	}
	order := make([]int, w)
	U, si := full, bi
	for pos := w - 1; pos >= 0; pos-- {
		s := front[U][si]
		order[pos] = idx[s.last]
		U &^= 1 << s.last
		si = int(s.parent)
	}
	return order, front[full][bi].st
}

// BestOrderBrute orders the jobs idx by trying every permutation in
// lexicographic order (the first best is kept). For checking the DP.
func BestOrderBrute(jobs []FlowJob, idx []int, start FlowState) ([]int, FlowState) {
	perm := append([]int(nil), idx...)
	sort.Ints(perm)
	best := append([]int(nil), perm...)
	bestSt := FlowState{R: math.Inf(1)}
	for {
		st := start
		for _, i := range perm {
			st = st.Then(jobs[i])
		}
		if st.better(bestSt) {
			bestSt = st
			copy(best, perm)
		}
		if !nextPermutation(perm) {
			return best, bestSt
		}
	}
}

func nextPermutation(a []int) bool {
	i := len(a) - 2
	for i >= 0 && a[i] >= a[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(a) - 1
	for a[j] <= a[i] {
		j--
	}
	a[i], a[j] = a[j], a[i]
	for l, r := i+1, len(a)-1; l < r; l, r = l+1, r-1 {
		a[l], a[r] = a[r], a[l]
	}
	return true
}

// CuMASOptions configures PlanCuMAS.
type CuMASOptions struct {
	// Window is the re-ordering window w (default 8).
	Window int
}

// PlanCuMAS orders the kernels (in profile order = arrival order) window by
// window: each window of w consecutive tasks is ordered by BestOrderDP
// starting from the state the previous window left, as CuMAS does. A task's
// kernel time is R[M] (kernels run one at a time on the whole GPU in the
// flow-shop model); copies come from the transfer field.
func PlanCuMAS(ps *ProfileSet, opt CuMASOptions) (*Plan, error) {
	if err := ps.Validate(); err != nil {
		return nil, err
	}
	w := opt.Window
	if w == 0 {
		w = 8
	}
	if w < 1 || w > MaxWindow {
		return nil, fmt.Errorf("cumas: window must be between 1 and %d, got %d", MaxWindow, w)
	}
	M := ps.Device.SMs
	jobs := make([]FlowJob, len(ps.Kernels))
	solo := make([]float64, len(jobs))
	p := &Plan{Format: PlanFormat, Algorithm: "cumas", Device: ps.Device.Name, SMs: M}
	best, bestM, seqFin := transferSolo(ps)
	for i := range ps.Kernels {
		k := &ps.Kernels[i]
		jobs[i] = FlowJob{S: k.In(), P: k.R(M), R: k.Out()}
		solo[i] = jobs[i].S + jobs[i].P + jobs[i].R
		p.SequentialMs += solo[i]
		seqFin[i] = p.SequentialMs
	}
	fin := make([]float64, len(jobs))
	var st FlowState
	for start := 0; start < len(jobs); start += w {
		idx := make([]int, 0, w)
		for i := start; i < min(start+w, len(jobs)); i++ {
			idx = append(idx, i)
		}
		order, _ := BestOrderDP(jobs, idx, st)
		ph := Phase{Index: len(p.Phases), StartMs: st.S}
		prevR := st.R
		for _, i := range order {
			s0 := st.S
			st = st.Then(jobs[i])
			fin[i] = st.R
			ph.Order = append(ph.Order, ps.Kernels[i].Name)
			ph.Kernels = append(ph.Kernels, PhaseKernel{Name: ps.Kernels[i].Name, StartMs: s0, EndMs: st.R})
			ph.SequentialMs += solo[i]
		}
		ph.LatencyMs = st.R - prevR
		ph.Note = fmt.Sprintf("window ends at %.4g ms", st.R)
		p.Phases = append(p.Phases, ph)
	}
	p.PredictedMs = st.R
	if p.SequentialMs > 0 {
		p.Gain = 1 - st.R/p.SequentialMs
	}
	// The flow shop never does worse than one task after another (each
	// machine serves the tasks in one order; the makespan is at most the
	// sum), and each task ends at least in + R[M] + out after time 0.
	p.Metrics = ComputeMetrics(fin, best, st.R)
	p.Sequential = ComputeMetrics(seqFin, best, p.SequentialMs)
	p.Kernels = kernelTimes(ps, fin, best, bestM)
	p.Notes = append(p.Notes, fmt.Sprintf("re-ordering window %d, Pareto subset DP; phase latency = increase of the makespan; sequential = Σ (in + comp + out)", w))
	return p, nil
}
