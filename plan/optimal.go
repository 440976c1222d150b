package plan

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
)

// Search-space bounds of the optimal planner. The search is exhaustive over
// set partitions (Bell(n) schedules, done as a DP over subsets, 3^n steps)
// and, for every subset P that can be a phase, over all C(M-1, |P|-1)
// allocations of the M SMs with at least one SM each. The number of
// allocations evaluated is
//
//	Σ_{s=1..min(n,M)} C(n, s) · C(M-1, s-1)
//
// and it is refused above MaxOptimalConfigs (2 million: a few seconds with
// fluid evaluation, more with exact DRR on large kernels). For example on
// 132 SMs, 3 kernels need 8,911 allocations, 4 kernels 400,995, 5 kernels
// 13.6 million (refused); on 15 SMs, 5 kernels need 3,876 and 8 kernels
// 170,544.
const (
	MaxOptimalKernels = 16
	MaxOptimalConfigs = 2_000_000
)

// OptimalConfigs returns the number of allocations the optimal planner
// evaluates for n kernels on M SMs (as a float: it can be astronomically
// large).
func OptimalConfigs(n, M int) float64 {
	total := 0.0
	for s := 1; s <= min(n, M); s++ {
		total += binom(n, s) * binom(M-1, s-1)
	}
	return total
}

func binom(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return math.Round(r)
}

// OptimalOptions configures PlanOptimal.
type OptimalOptions struct {
	Eval Eval
	// MaxConfigs overrides MaxOptimalConfigs when positive.
	MaxConfigs float64
}

// ErrSearchTooLarge is returned when the optimal search space exceeds the
// bound.
type ErrSearchTooLarge struct {
	Kernels, SMs int
	Configs, Max float64
}

func (e *ErrSearchTooLarge) Error() string {
	return fmt.Sprintf("optimal search refused: %d kernels on %d SMs need %.4g SM allocations, more than the bound of %.4g (use --algo stm)", e.Kernels, e.SMs, e.Configs, e.Max)
}

// OptimalPhases returns the minimum-latency schedule of the kernels ks
// (Liang et al.'s Algorithms 2 and 3) and its model latency.
func (mdl *Model) OptimalPhases(ks []int, opt OptimalOptions) ([][]Alloc, float64, error) {
	n := len(ks)
	limit := opt.MaxConfigs
	if limit <= 0 {
		limit = MaxOptimalConfigs
	}
	if cfgs := OptimalConfigs(n, mdl.M); n > MaxOptimalKernels || cfgs > limit {
		return nil, 0, &ErrSearchTooLarge{n, mdl.M, cfgs, limit}
	}
	full := uint32(1)<<n - 1
	lat := make([]float64, full+1)
	alloc := make([][]Alloc, full+1)
	for P := uint32(1); P <= full; P++ {
		alloc[P], lat[P] = mdl.bestAllocation(ks, P, opt.Eval)
	}
	best := make([]float64, full+1)
	choice := make([]uint32, full+1)
	for U := uint32(1); U <= full; U++ {
		low := U & -U
		best[U] = math.Inf(1)
		rest := U &^ low
		// every phase P ⊆ U that contains U's lowest kernel
		for sub := rest; ; sub = (sub - 1) & rest {
			P := sub | low
			if v := lat[P] + best[U&^P]; v < best[U] {
				best[U], choice[U] = v, P
			}
			if sub == 0 {
				break
			}
		}
	}
	var phases [][]Alloc
	for U := full; U != 0; U &^= choice[U] {
		phases = append(phases, alloc[choice[U]])
	}
	return phases, best[full], nil
}

// bestAllocation returns the best SM allocation for the kernels in subset P
// (Algorithm 2) and its con_lat.
func (mdl *Model) bestAllocation(ks []int, P uint32, eval Eval) ([]Alloc, float64) {
	var members []int
	for b := P; b != 0; b &= b - 1 {
		members = append(members, ks[bits.TrailingZeros32(b)])
	}
	s := len(members)
	M := mdl.M
	if s == 1 {
		return []Alloc{{members[0], M}}, mdl.r[members[0]][M]
	}
	if s > M {
		return nil, math.Inf(1)
	}
	probe := make([]Alloc, s)
	for j, k := range members {
		probe[j] = Alloc{k, 1}
	}
	if !mdl.fits(probe) {
		return nil, math.Inf(1)
	}
	type cand struct {
		lo   float64
		alls []int
	}
	var cands []cand
	cur := make([]int, s)
	var rec func(pos, left int)
	rec = func(pos, left int) {
		if pos == s-1 {
			cur[pos] = left
			c := make([]Alloc, s)
			for j := range s {
				c[j] = Alloc{members[j], cur[j]}
			}
			lo, _ := mdl.fluidBounds(c)
			cands = append(cands, cand{lo * mdl.penalty(c), append([]int(nil), cur...)})
			return
		}
		for m := 1; m <= left-(s-1-pos); m++ {
			cur[pos] = m
			rec(pos+1, left-m)
		}
	}
	rec(0, M)
	mk := func(sms []int) []Alloc {
		c := make([]Alloc, s)
		for j := range s {
			c[j] = Alloc{members[j], sms[j]}
		}
		return c
	}
	if eval == EvalFluid {
		bi := 0
		for i, c := range cands {
			if c.lo < cands[bi].lo {
				bi = i
			}
		}
		return mk(cands[bi].alls), cands[bi].lo
	}
	// Exact: evaluate in increasing order of the fluid lower bound and stop
	// once no remaining allocation can beat the best exact latency.
	sort.SliceStable(cands, func(x, y int) bool { return cands[x].lo < cands[y].lo })
	bestLat := math.Inf(1)
	var bestC []Alloc
	for _, c := range cands {
		if c.lo >= bestLat {
			break
		}
		cfg := mk(c.alls)
		if v := mdl.ConLat(cfg); v < bestLat {
			bestLat, bestC = v, cfg
		}
	}
	return bestC, bestLat
}

// PlanOptimal plans with the exhaustive reference search.
func PlanOptimal(ps *ProfileSet, opt OptimalOptions) (*Plan, error) {
	mdl, err := NewModel(ps)
	if err != nil {
		return nil, err
	}
	if err := mdl.checkFits(); err != nil {
		return nil, err
	}
	ks := make([]int, len(ps.Kernels))
	for i := range ks {
		ks[i] = i
	}
	phases, _, err := mdl.OptimalPhases(ks, opt)
	if err != nil {
		return nil, err
	}
	b := newPlanBuilder(mdl, "optimal")
	for _, c := range phases {
		if err := b.configPhase(c, ""); err != nil {
			return nil, err
		}
	}
	p := b.finish()
	p.Notes = append(p.Notes, "search evaluation: "+opt.Eval.String()+"; phase latencies: exact DRR × bandwidth penalty")
	return p, nil
}
