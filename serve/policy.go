package serve

import (
	"fmt"

	"github.com/slatec/slatec/plan"
	rt "github.com/slatec/slatec/runtime"
)

// KernelInfo is what the policy knows of one announced kernel.
type KernelInfo struct {
	Class plan.Class // "" when unknown
	Phase int        // STM phase index, -1 when the plan does not name it
	SMs   int        // the plan's SMs for it (its weight), 0 when none
}

// Policy decides co-running across processes. It adapts plan's Slate table
// (plan.PolicyFor) and an STM plan (plan.PlanSTM) to the runtime's
// scheduler interface (runtime.Policy), so the daemon runs the same
// Scheduler the in-process runtime does.
type Policy struct {
	// UnknownCoRuns says whether a kernel of unknown class co-runs with
	// anything (true) or only runs solo (false, Slate's safe answer).
	UnknownCoRuns bool
	// Plan, when set, is an STM plan: kernels it names co-run only with
	// kernels of the same phase, on SMs in proportion to the plan's.
	Plan *plan.Plan

	classes map[string]plan.Class
	phases  map[string]int
	sms     map[string]int
	lookup  func(task string) (ki KernelInfo, ended, ok bool)
}

// NewPolicy builds the policy from an optional profile set: with profiles,
// each profiled kernel gets its Slate class (plan's classification) and
// the STM plan is computed once.
func NewPolicy(ps *plan.ProfileSet, unknownCoRuns bool) (*Policy, error) {
	p := &Policy{UnknownCoRuns: unknownCoRuns, classes: map[string]plan.Class{}, phases: map[string]int{}, sms: map[string]int{}}
	if ps == nil {
		return p, nil
	}
	for i := range ps.Kernels {
		c, _ := ps.Classify(i)
		p.classes[ps.Kernels[i].Name] = c
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

// Name describes the policy for welcome and status.
func (p *Policy) Name() string {
	s := "slate-table"
	if p.Plan != nil {
		s = "stm-plan+slate-table"
	}
	if p.UnknownCoRuns {
		return s + " (unknown classes co-run)"
	}
	return s + " (unknown classes solo)"
}

// Info returns what the policy knows of a kernel identity, given the class
// its client announced (which a profile overrides).
func (p *Policy) Info(kernel, announced string) KernelInfo {
	ki := KernelInfo{Class: plan.Class(announced), Phase: -1}
	if c, ok := p.classes[kernel]; ok {
		ki.Class = c
	}
	if ph, ok := p.phases[kernel]; ok {
		ki.Phase, ki.SMs = ph, p.sms[kernel]
	}
	return ki
}

// pair applies the table to a running kernel and a candidate.
func (p *Policy) pair(run, cand KernelInfo) bool {
	if run.Phase >= 0 && cand.Phase >= 0 {
		return run.Phase == cand.Phase
	}
	if run.Class == "" || cand.Class == "" {
		return p.UnknownCoRuns
	}
	return plan.PolicyFor(run.Class, cand.Class) == plan.Corun
}

// CoRun implements runtime.Policy: cand co-runs only when it is
// complementary to every running task. A running task whose launch ended
// but whose completion the scheduler has not processed yet still counts,
// so that a candidate is not split in beside it; a candidate that ended
// while queued (its client left) never co-runs and so reaches the
// scheduler's Start, which drops it, only when the GPU is idle.
func (p *Policy) CoRun(running []rt.Candidate, cand rt.Candidate) bool {
	ci, ended, ok := p.lookup(cand.Name)
	if !ok || ended {
		return false
	}
	for _, r := range running {
		ri, _, ok := p.lookup(r.Name)
		if !ok {
			continue
		}
		if !p.pair(ri, ci) {
			return false
		}
	}
	return true
}
