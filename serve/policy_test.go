package serve

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/plan"
)

// The policy sizes the set of kernels the processes run for the steady
// state (H100 profiles of the bench kernels): a set whose best split is
// predicted to reach MinSTP gets its SM counts; one that gains less (two
// kernels that scale with SMs, a bandwidth-bound kernel beside a
// latency-bound one it slows), a kernel without a profile, one kernel
// twice or a process alone get none.
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
		{[]string{"triad_f4", "gemm_tiled"}, true},
		{[]string{"triad_f4", "dep_chain", "fma_chain"}, true},
		{[]string{"fma_chain", "gemm_tc"}, false}, // both scale with SMs
		{[]string{"triad_f4", "chase"}, false},    // the triad's load slows the chase more than the split gains
		{[]string{"triad_f4", "triad_f4"}, false},
		{[]string{"triad_f4", "no_such_kernel"}, false},
		{[]string{"triad_f4", ""}, false},
		{[]string{"triad_f4"}, false},
	} {
		if len(tc.kernels) > 1 && tc.kernels[0] != tc.kernels[1] && tc.kernels[1] != "" && tc.kernels[1] != "no_such_kernel" {
			want, err := plan.SteadySplitFor(ps, tc.kernels, plan.SteadyOptions{})
			require.NoError(t, err)
			require.NotNil(t, want)
			assert.Equal(t, tc.planned, want.STP >= MinSTP, "%v: predicted STP %.3f", tc.kernels, want.STP)
		}
		if tc.planned {
			assert.True(t, pol.Planned(tc.kernels), "%v", tc.kernels)
			st := pol.Steady(tc.kernels)
			require.NotNil(t, st)
			w := pol.Weights(tc.kernels)
			require.Len(t, w, len(tc.kernels))
			total := 0.0
			for i, k := range tc.kernels {
				total += w[i]
				for j, n := range st.Names {
					if n == k {
						assert.Equal(t, float64(st.SMs[j]), w[i], "%v: %s gets the split's SMs", tc.kernels, k)
					}
				}
			}
			assert.Equal(t, float64(ps.Device.SMs), total, "%v: the shares cover the GPU", tc.kernels)
			continue
		}
		assert.False(t, pol.Planned(tc.kernels), "%v", tc.kernels)
		assert.Nil(t, pol.Steady(tc.kernels), "%v", tc.kernels)
		for _, x := range pol.Weights(tc.kernels) {
			assert.Equal(t, 1.0, x, "%v: equal weights", tc.kernels)
		}
	}
	// Without profiles nothing is planned.
	none, err := NewPolicy(nil)
	require.NoError(t, err)
	assert.False(t, none.Planned([]string{"triad_f4", "fma_chain"}))
	assert.Equal(t, "grants: overlap (whole GPU, native)", none.Name(Overlap))
}

// TestPolicyBalanced: with Balanced the policy plans for the slowest
// kernel (plan.SteadyOptions.Balanced): on the H100 profiles of the serve
// programs the triad gets fewer SMs beside the FMA chains than STP gives it.
func TestPolicyBalanced(t *testing.T) {
	ps, err := plan.ReadProfileFile("../bench/results/raw/serve-profiles-5f1612a-h100.json")
	require.NoError(t, err)
	set := []string{"stream_triad", "fma_chains"}
	triad := func(balanced bool) int {
		pol, err := NewPolicy(ps)
		require.NoError(t, err)
		pol.Balanced = balanced
		st := pol.Steady(set)
		require.NotNil(t, st)
		for i, k := range st.Names {
			if k == "stream_triad" {
				return st.SMs[i]
			}
		}
		t.Fatalf("no stream_triad in %v", st.Names)
		return 0
	}
	assert.Less(t, triad(true), triad(false))
	pol, err := NewPolicy(ps)
	require.NoError(t, err)
	pol.Balanced = true
	assert.Contains(t, pol.Name(Overlap), "balanced")
}

func TestFloorShares(t *testing.T) {
	cases := []struct {
		name string
		in   []float64
		min  float64
		want []float64
	}{
		{"off", []float64{27, 105}, 0, []float64{27, 105}},
		{"already above", []float64{40, 92}, 0.25, []float64{40, 92}},
		{"raised, the other pays", []float64{27, 105}, 0.25, []float64{33, 99}},
		{"equal at 1/n", []float64{27, 105}, 0.5, []float64{66, 66}},
		{"two raised, the third pays", []float64{4, 25, 103}, 0.25, []float64{33, 33, 66}},
		{"a cascade", []float64{10, 40, 82}, 0.3, []float64{39.6, 39.6, 52.8}},
	}
	for _, tc := range cases {
		got := FloorShares(tc.in, tc.min)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v", tc.name, got)
		}
		sum, want := 0.0, 0.0
		for i := range got {
			assert.InDelta(t, tc.want[i], got[i], 1e-9, "%s: weight %d of %v", tc.name, i, got)
			sum += got[i]
			want += tc.in[i]
		}
		assert.InDelta(t, want, sum, 1e-9, "%s: the sum stays", tc.name)
	}
}

// Prepare plans every set of two and three profiled kernels ahead (the
// daemon runs it as it starts, so that a join or a leave finds its set's
// plan made), the same plans as made on demand; closed, stop ends it
// before the first.
func TestPolicyPreparesSmallSets(t *testing.T) {
	all, err := plan.ReadProfileFile("../bench/results/raw/serve-profiles-5f1612a-h100.json")
	require.NoError(t, err)
	names := []string{"stream_triad", "fma_chains", "dep_chains", "sgemm_tiled"}
	ps, missing := all.Subset(names)
	require.Empty(t, missing)

	stopped, err := NewPolicy(ps)
	require.NoError(t, err)
	stop := make(chan struct{})
	close(stop)
	stopped.Prepare(3, stop)
	assert.Empty(t, stopped.plans, "stopped before the first set")

	pol, err := NewPolicy(ps)
	require.NoError(t, err)
	pol.Prepare(3, nil)
	assert.Len(t, pol.plans, 6+4, "every pair and triple of 4 kernels, no set of 4")
	fresh, err := NewPolicy(ps)
	require.NoError(t, err)
	sets := 0
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			for _, set := range [][]string{{names[i], names[j]}, {names[j], names[i]}} {
				assert.Equal(t, fresh.Planned(set), pol.Planned(set), "%v", set)
				assert.Equal(t, fresh.Weights(set), pol.Weights(set), "%v", set)
			}
			sets++
			for k := j + 1; k < len(names); k++ {
				set := []string{names[k], names[i], names[j]}
				assert.Equal(t, fresh.Planned(set), pol.Planned(set), "%v", set)
				assert.Equal(t, fresh.Weights(set), pol.Weights(set), "%v", set)
			}
		}
	}
	assert.Equal(t, 6, sets)
	assert.Len(t, pol.plans, 10, "the lookups above found every set made")
	assert.True(t, pol.Planned([]string{"dep_chains", "fma_chains", "stream_triad"}), "the three programs' set splits")
}

// A join plans the set it makes before the daemon's lock is taken (a set
// of three planned under it held every grant and the newcomer's welcome
// for 10 ms on the H100 host): preplan leaves it in the policy's cache.
func TestPreplanPlansTheSetAJoinMakes(t *testing.T) {
	all, err := plan.ReadProfileFile("../bench/results/raw/serve-profiles-5f1612a-h100.json")
	require.NoError(t, err)
	pol, err := NewPolicy(all)
	require.NoError(t, err)
	d := &Daemon{pol: pol, conns: map[*conn]struct{}{}}
	a := &conn{d: d, id: 1, planKernel: "fma_chains"}
	b := &conn{d: d, id: 2, planKernel: "stream_triad"}
	idle := &conn{d: d, id: 3, planKernel: "sgemm_tiled", idle: true}
	dialled := &conn{d: d} // connected, not registered
	for _, c := range []*conn{a, b, idle, dialled} {
		d.conns[c] = struct{}{}
	}
	newcomer := &conn{d: d}
	d.conns[newcomer] = struct{}{}
	d.preplan(newcomer, "dep_chains")
	_, ok := pol.plans["dep_chains\x00fma_chains\x00stream_triad"]
	assert.True(t, ok, "the active processes' set with the newcomer's kernel is planned")
	assert.Len(t, pol.plans, 1, "only that set (not the idle process's)")
	d.preplan(newcomer, "")
	assert.Len(t, pol.plans, 1, "no kernel named: nothing to plan")
}
