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
		if tc.planned {
			sub, missing := ps.Subset(tc.kernels)
			require.Empty(t, missing)
			want, err := plan.PlanSlateWith(sub, plan.SchedulerOptions)
			require.NoError(t, err)
			require.Len(t, want.Phases, 1, "%v: the scheduler's planner co-runs them", tc.kernels)
			assert.True(t, pol.Planned(tc.kernels), "%v", tc.kernels)
			w := pol.Weights(tc.kernels)
			require.Len(t, w, len(tc.kernels))
			for i, k := range tc.kernels {
				for _, pk := range want.Phases[0].Kernels {
					if pk.Name == k {
						assert.Equal(t, float64(pk.SMs), w[i], "%v: %s gets the plan's SMs", tc.kernels, k)
					}
				}
			}
			continue
		}
		assert.False(t, pol.Planned(tc.kernels), "%v", tc.kernels)
		for _, x := range pol.Weights(tc.kernels) {
			assert.Equal(t, 1.0, x, "%v: equal weights", tc.kernels)
		}
	}
	// A set the planner runs one after another is not split: its processes
	// overlap (or share equally).
	seq := []string{"fma_chain", "gemm_tc"}
	sub, missing := ps.Subset(seq)
	require.Empty(t, missing)
	p, err := plan.PlanSlateWith(sub, plan.SchedulerOptions)
	require.NoError(t, err)
	require.Greater(t, len(p.Phases), 1, "the planner runs %v one after the other", seq)
	assert.False(t, pol.Planned(seq))
	// Without profiles nothing is planned.
	none, err := NewPolicy(nil)
	require.NoError(t, err)
	assert.False(t, none.Planned([]string{"triad_f4", "fma_chain"}))
	assert.Equal(t, "grants: overlap (whole GPU, native)", none.Name(Overlap))
}
