package serve

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/slatec/slatec/plan"
)

// Policy decides how the SMs are split between processes. Protocol v2
// grants every registered process a standing range (docs/SERVE.md,
// "Scheduling"): the kernels the processes last announced are planned as
// a set, with the co-run scheduler's planner (plan.SchedulerOptions, what
// `slatec bench`'s scheduler mode runs), and when that plan co-runs them
// all in one phase they get its SM counts; else (no profiles, a kernel
// without one, a plan that runs them one after another or as written on
// all SMs) the whole GPU to each (Overlap) or equal shares. Plans are
// cached per set.
type Policy struct {
	profiles *plan.ProfileSet

	mu    sync.Mutex
	plans map[string]setPlan
}

// setPlan is the planned split of one set of kernels.
type setPlan struct {
	sms map[string]int // SM counts when the plan co-runs the whole set
}

// NewPolicy builds the policy from an optional profile set, checked by
// planning all its kernels once.
func NewPolicy(ps *plan.ProfileSet) (*Policy, error) {
	p := &Policy{profiles: ps, plans: map[string]setPlan{}}
	if ps == nil {
		return p, nil
	}
	if _, err := plan.PlanSlateWith(ps, plan.SchedulerOptions); err != nil {
		return nil, fmt.Errorf("serve: planning the profiles: %w", err)
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
	if p.profiles != nil {
		return "grants: planned per set of kernels (profiles), else " + rest
	}
	return "grants: " + rest
}

// Weights returns the split weights of clients whose latest kernels are
// kernels: the plan's SM counts when it co-runs all of them in one phase,
// else equal.
func (p *Policy) Weights(kernels []string) []float64 {
	w, _ := p.split(kernels)
	return w
}

// Planned reports whether the plan of kernels (two or more) co-runs all of
// them in one phase, so that its SM counts say how to split the GPU.
func (p *Policy) Planned(kernels []string) bool {
	_, ok := p.split(kernels)
	return ok
}

func (p *Policy) split(kernels []string) ([]float64, bool) {
	w := make([]float64, len(kernels))
	for i := range w {
		w[i] = 1
	}
	sp := p.planOf(kernels)
	if sp.sms == nil {
		return w, false
	}
	for i, k := range kernels {
		w[i] = float64(sp.sms[k])
	}
	return w, true
}

// planOf plans the set of kernels (cached): SM counts when the planner
// co-runs all of them (two or more, distinct, each profiled) in one phase
// on its own split, nil otherwise.
func (p *Policy) planOf(kernels []string) setPlan {
	if p.profiles == nil || len(kernels) < 2 {
		return setPlan{}
	}
	names := append([]string(nil), kernels...)
	sort.Strings(names)
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			return setPlan{} // one kernel twice: its profile says nothing of the pair
		}
	}
	key := strings.Join(names, "\x00")
	p.mu.Lock()
	defer p.mu.Unlock()
	if sp, ok := p.plans[key]; ok {
		return sp
	}
	sp := setPlan{}
	sub, _ := p.profiles.Subset(names)
	if sub == nil {
		p.plans[key] = sp
		return sp
	}
	if pl, err := plan.PlanSlateWith(sub, plan.SchedulerOptions); err == nil && len(pl.Phases) == 1 &&
		!pl.Phases[0].Overlap && len(pl.Phases[0].Kernels) == len(names) {
		sp.sms = map[string]int{}
		for _, k := range pl.Phases[0].Kernels {
			sp.sms[k.Name] = max(k.SMs, 1)
		}
	}
	p.plans[key] = sp
	return sp
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
