package serve

import (
	"fmt"
	"math"

	"github.com/slatec/slatec/plan"
)

// Policy decides how the SMs are split between processes. Protocol v2
// grants every registered process a standing range (docs/SERVE.md,
// "Scheduling"): when an STM plan (from profiles) co-runs the kernels the
// processes last announced, shares in proportion to the plan's SM counts;
// else the whole GPU to each (Overlap) or equal shares.
type Policy struct {
	// Plan, when set, is an STM plan computed once from the profiles.
	Plan *plan.Plan

	phases map[string]int
	sms    map[string]int
}

// NewPolicy builds the policy from an optional profile set: with profiles,
// the STM plan is computed once.
func NewPolicy(ps *plan.ProfileSet) (*Policy, error) {
	p := &Policy{phases: map[string]int{}, sms: map[string]int{}}
	if ps == nil {
		return p, nil
	}
	pl, err := plan.PlanSTM(ps, plan.STMOptions{Eval: plan.EvalFluid})
	if err != nil {
		return nil, fmt.Errorf("serve: STM plan from the profiles: %w", err)
	}
	p.Plan = pl
	for _, ph := range pl.Phases {
		for _, k := range ph.Kernels {
			p.phases[k.Name] = ph.Index
			p.sms[k.Name] = k.SMs
		}
	}
	return p, nil
}

// Name describes the policy for welcome and status, with what processes
// that no plan co-runs get.
func (p *Policy) Name(unplanned Unplanned) string {
	rest := "equal shares"
	if unplanned != EqualShares {
		rest = "overlap (whole GPU, native)"
	}
	if p.Plan != nil {
		return "grants: stm-plan weights, else " + rest
	}
	return "grants: " + rest
}

// Weight is the STM plan's SM count for a kernel, 0 when it names none.
func (p *Policy) Weight(kernel string) int {
	if kernel == "" {
		return 0
	}
	return p.sms[kernel]
}

// Weights returns the split weights of clients whose latest kernels are
// kernels: the plan's SM counts when the plan names every one of them
// in the same phase, else equal.
func (p *Policy) Weights(kernels []string) []float64 {
	w, _ := p.split(kernels)
	return w
}

// Planned reports whether the plan co-runs all of kernels (two or more)
// in one phase, so that its SM counts say how to split the GPU.
func (p *Policy) Planned(kernels []string) bool {
	_, ok := p.split(kernels)
	return ok
}

func (p *Policy) split(kernels []string) ([]float64, bool) {
	w := make([]float64, len(kernels))
	plannedAll := len(kernels) > 1
	phase := -2
	for i, k := range kernels {
		n := p.Weight(k)
		ph, ok := p.phases[k]
		if n <= 0 || !ok || (phase != -2 && ph != phase) {
			plannedAll = false
		}
		phase = ph
		w[i] = float64(n)
	}
	if !plannedAll {
		for i := range w {
			w[i] = 1
		}
	}
	return w, plannedAll
}

// Split divides sms SMs into contiguous ranges, in order, in proportion to
// weights (all positive); each range has at least one SM. With more
// clients than SMs, client i gets SM i mod sms (shared).
func Split(sms int, weights []float64) []Range {
	n := len(weights)
	out := make([]Range, n)
	if n == 0 || sms <= 0 {
		return out
	}
	if n > sms {
		for i := range out {
			out[i] = Range{i % sms, i % sms}
		}
		return out
	}
	total := 0.0
	for _, w := range weights {
		total += max(w, 0)
	}
	counts := make([]int, n)
	sum := 0
	for i, w := range weights {
		c := 1
		if total > 0 {
			c = max(1, int(math.Floor(float64(sms)*max(w, 0)/total)))
		}
		counts[i] = c
		sum += c
	}
	for sum > sms { // minimums pushed it over: take from the largest
		j := 0
		for i := range counts {
			if counts[i] > counts[j] {
				j = i
			}
		}
		counts[j]--
		sum--
	}
	for sum < sms { // the floors' leftovers: to the most under-served (first on ties)
		j, best := 0, math.Inf(-1)
		for i, w := range weights {
			if need := max(w, 0)/total*float64(sms) - float64(counts[i]); total > 0 && need > best+1e-9 {
				j, best = i, need
			}
		}
		counts[j]++
		sum++
	}
	lo := 0
	for i, c := range counts {
		out[i] = Range{lo, lo + c - 1}
		lo += c
	}
	return out
}
