package serve

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/plan"
)

// The policy plans the set of kernels the processes run, as the co-run
// scheduler would (H100 profiles of the bench kernels): a set it co-runs
// gets its SM counts; one it runs one after another, a kernel without a
// profile, one kernel twice or a process alone get none.
func TestPolicyPlansEachSet(t *testing.T) {
	ps, err := plan.ReadProfileFile("../bench/results/corun-profiles.json")
	require.NoError(t, err)
	pol, err := NewPolicy(ps)
	require.NoError(t, err)
	assert.Contains(t, pol.Name(Overlap), "planned per set")

	for _, tc := range []struct {
		kernels []string
		planned bool
	}{
		{[]string{"triad_f4", "fma_chain"}, true},
		{[]string{"fma_chain", "triad_f4"}, true},
		{[]string{"triad_f4", "triad_f4"}, false},
		{[]string{"triad_f4", "no_such_kernel"}, false},
		{[]string{"triad_f4", ""}, false},
		{[]string{"triad_f4"}, false},
	} {
		want, err := plan.PlanSlateWith(subset(t, ps, tc.kernels), plan.SchedulerOptions)
		if tc.planned {
			require.NoError(t, err)
			require.Len(t, want.Phases, 1, "%v: the scheduler's planner co-runs them", tc.kernels)
		}
		assert.Equal(t, tc.planned, pol.Planned(tc.kernels), "%v", tc.kernels)
		w := pol.Weights(tc.kernels)
		require.Len(t, w, len(tc.kernels))
		if !tc.planned {
			for _, x := range w {
				assert.Equal(t, 1.0, x, "%v: equal weights", tc.kernels)
			}
			continue
		}
		sms := map[string]int{}
		for _, k := range want.Phases[0].Kernels {
			sms[k.Name] = k.SMs
		}
		for i, k := range tc.kernels {
			assert.Equal(t, float64(sms[k]), w[i], "%v: %s gets the plan's SMs", tc.kernels, k)
		}
	}
	// A set the planner runs one after another is not split: its processes
	// overlap (or share equally).
	seq := []string{"fma_chain", "gemm_tc"}
	p, err := plan.PlanSlateWith(subset(t, ps, seq), plan.SchedulerOptions)
	require.NoError(t, err)
	require.Greater(t, len(p.Phases), 1, "the planner runs %v one after the other", seq)
	assert.False(t, pol.Planned(seq))
	// Without profiles nothing is planned.
	none, err := NewPolicy(nil)
	require.NoError(t, err)
	assert.False(t, none.Planned([]string{"triad_f4", "fma_chain"}))
	assert.Equal(t, "grants: overlap (whole GPU, native)", none.Name(Overlap))
}

// subset is ps reduced to the named kernels that it profiles.
func subset(t *testing.T, ps *plan.ProfileSet, names []string) *plan.ProfileSet {
	t.Helper()
	sub := &plan.ProfileSet{Format: ps.Format, Device: ps.Device}
	for _, n := range names {
		if i := ps.KernelIndex(n); i >= 0 {
			sub.Kernels = append(sub.Kernels, ps.Kernels[i])
		}
	}
	return sub
}
