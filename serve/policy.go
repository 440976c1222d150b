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
// "Scheduling"). A process launches kernel after kernel, so the kernels
// the processes last announced are sized for the steady state
// (plan.SteadySplitFor): the split of the SMs that maximises the
// throughput (STP, the sum of each kernel's speed on its share relative to
// the whole GPU, with the co-run model's bandwidth penalty and DRAM
// sensitivity). When that split is predicted to do at least MinSTP times
// the work of running them one after another, the processes get its
// shares; else (no profiles, a kernel without one, one kernel twice, or
// kernels that gain too little from a split: two bandwidth-bound ones,
// two that scale with SMs) the whole GPU each (Overlap) or equal shares.
// Plans are cached per set.
type Policy struct {
	profiles *plan.ProfileSet
	// Balanced plans each set for its slowest kernel's speed, not STP
	// (plan.SteadyOptions.Balanced); set before the first plan.
	Balanced bool

	mu    sync.Mutex
	plans map[string]setPlan
}

// MinSTP is the predicted throughput a split must reach for the daemon to
// split: under MPS, kernels that overlap natively already gain a little
// (the tails of one filled by the other), which the model does not see,
// and a split that is not clearly better must not replace it.
const MinSTP = 1.15

// setPlan is the planned split of one set of kernels.
type setPlan struct {
	sms   map[string]int // SM counts when the set is split
	split *plan.SteadySplit
}

// NewPolicy builds the policy from an optional profile set, checked by
// tabulating its profiles once.
func NewPolicy(ps *plan.ProfileSet) (*Policy, error) {
	p := &Policy{profiles: ps, plans: map[string]setPlan{}}
	if ps == nil {
		return p, nil
	}
	if _, err := plan.NewModel(ps); err != nil {
		return nil, fmt.Errorf("serve: the profiles: %w", err)
	}
	return p, nil
}

// Name describes the policy for welcome and status, with what processes
// that no plan co-runs get.
func (p *Policy) Name(unplanned Unplanned) string {
	rest := "equal shares"
	switch unplanned {
	case Overlap:
		rest = "overlap (whole GPU, native)"
	case AutoUnplanned:
		rest = "equal shares under MPS unless profiled and no split pays, else overlap (whole GPU, native)"
	}
	if p.profiles != nil {
		how := "planned per set of kernels (profiles, stp)"
		if p.Balanced {
			how = "planned per set of kernels (profiles, balanced)"
		}
		return "grants: " + how + ", else " + rest
	}
	return "grants: " + rest
}

// Weights returns the split weights of clients whose latest kernels are
// kernels: the steady split's SM counts when the set is split, else equal.
func (p *Policy) Weights(kernels []string) []float64 {
	w, _ := p.split(kernels)
	return w
}

// Planned reports whether the set of kernels (two or more) is split by
// its steady plan, so that its SM counts say how to split the GPU.
func (p *Policy) Planned(kernels []string) bool {
	_, ok := p.split(kernels)
	return ok
}

// Profiled reports whether the profiles know every one of kernels, so that
// a set they do not split is one they predict no split pays for.
func (p *Policy) Profiled(kernels []string) bool {
	if p.profiles == nil || len(kernels) == 0 {
		return false
	}
	for _, k := range kernels {
		if k == "" || p.profiles.KernelIndex(k) < 0 {
			return false
		}
	}
	return true
}

// NoSplitPays reports whether the profiles know every one of kernels and
// their plan does not split them: the set is known not to gain from a split.
func (p *Policy) NoSplitPays(kernels []string) bool {
	return p.Profiled(kernels) && !p.Planned(kernels)
}

// LaunchMs is how long one launch of kernel takes on sms SMs by its
// profile (R[sms]); false without a profile of it.
func (p *Policy) LaunchMs(kernel string, sms int) (float64, bool) {
	if p.profiles == nil || kernel == "" {
		return 0, false
	}
	i := p.profiles.KernelIndex(kernel)
	if i < 0 {
		return 0, false
	}
	return p.profiles.Kernels[i].R(max(1, min(sms, p.profiles.Device.SMs))), true
}

// Steady returns the steady split the policy found for the set of kernels
// (in any order) when it splits them, else nil: for logs and status.
func (p *Policy) Steady(kernels []string) *plan.SteadySplit { return p.planOf(kernels).split }

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

// planOf plans the set of kernels (cached): SM counts when the steady
// split of all of them (two or more, distinct, each profiled) reaches
// MinSTP, nil otherwise.
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
	sp, ok := p.plans[key]
	p.mu.Unlock()
	if ok {
		return sp
	}
	// Planned without the lock: a set of three takes ~10 ms (H100 host),
	// and a cached set must not wait behind it (two that plan the same set
	// at once both do; the first stored wins, and the plans are equal).
	if st, err := plan.SteadySplitFor(p.profiles, names, plan.SteadyOptions{Balanced: p.Balanced}); err == nil && st != nil && st.STP >= MinSTP {
		sp.sms, sp.split = map[string]int{}, st
		for i, k := range st.Names {
			sp.sms[k] = st.SMs[i]
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.plans[key]; ok {
		return prev
	}
	p.plans[key] = sp
	return sp
}

// Prepare plans every set of two to maxSet profiled kernels ahead (at
// most maxPrepared sets, the pairs first), so that a process joining or
// leaving finds its set's plan made: planned at the join, under the
// daemon's lock, a set of three held every grant and the newcomer's
// welcome 10 ms (H100 host). It stops early when stop closes.
func (p *Policy) Prepare(maxSet int, stop <-chan struct{}) {
	if p.profiles == nil {
		return
	}
	var names []string
	seen := map[string]bool{}
	for _, k := range p.profiles.Kernels {
		if !seen[k.Name] {
			seen[k.Name] = true
			names = append(names, k.Name)
		}
	}
	sort.Strings(names)
	planned := 0
	set := make([]string, 0, maxSet)
	var subsets func(size, from int) bool
	subsets = func(size, from int) bool {
		if len(set) == size {
			select {
			case <-stop:
				return false
			default:
			}
			p.planOf(set)
			planned++
			return planned < maxPrepared
		}
		for i := from; i < len(names); i++ {
			set = append(set, names[i])
			ok := subsets(size, i+1)
			set = set[:len(set)-1]
			if !ok {
				return false
			}
		}
		return true
	}
	for size := 2; size <= maxSet && size <= len(names); size++ {
		if !subsets(size, 0) {
			return
		}
	}
}

// maxPrepared bounds the sets Prepare plans (a few seconds of one core at
// ~10 ms a set of three).
const maxPrepared = 512

// FloorShares raises every weight to at least min (a fraction, 0 to 0.5)
// of their sum, taking the difference from the others in proportion, so
// the sum stays; with min >= 1/len(weights) the weights become equal.
func FloorShares(weights []float64, min float64) []float64 {
	n := len(weights)
	if n == 0 || min <= 0 {
		return weights
	}
	total := 0.0
	for _, w := range weights {
		total += w
	}
	out := append([]float64(nil), weights...)
	if min*float64(n) >= 1 {
		for i := range out {
			out[i] = total / float64(n)
		}
		return out
	}
	floor := min * total
	raised := make([]bool, n)
	// Raising one weight lowers the others, which may fall below the
	// floor in turn: at most n rounds.
	for round := 0; round < n; round++ {
		low, rest := 0, 0.0
		for i, w := range out {
			if raised[i] || w < floor {
				raised[i] = true
				low++
			} else {
				rest += w
			}
		}
		if rest <= 0 {
			break
		}
		scale := (total - float64(low)*floor) / rest
		changed := false
		for i := range out {
			if raised[i] {
				out[i] = floor
			} else {
				out[i] *= scale
				changed = changed || out[i] < floor
			}
		}
		if !changed {
			break
		}
	}
	return out
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
