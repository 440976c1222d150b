package corun

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/plan"
)

// The pairs of a set of workloads: every ordered pair of kernels that
// share one, once, in workload order (a triple gives six).
func TestPartnerPairs(t *testing.T) {
	ws, err := SelectWorkloads(Workloads(Catalogue()), []string{"triad_f4+chase", "chase+triad_f4", "triad_f4+fma_chain+chase"}, false)
	require.NoError(t, err)
	var got []string
	for _, p := range PartnerPairs(ws) {
		got = append(got, p[0].Name+">"+p[1].Name)
	}
	assert.Equal(t, []string{"triad_f4>chase", "chase>triad_f4", "triad_f4>fma_chain", "fma_chain>triad_f4", "fma_chain>chase", "chase>fma_chain"}, got)
	assert.Equal(t, 33, PartnerSMs(132))
	assert.Equal(t, 1, PartnerSMs(3))
}

// MeasurePartners times each measured kernel on a quarter of the SMs alone
// and beside each partner on the rest, and writes the ratios into the
// profiles (replacing an earlier measurement of the pair), valid; kernels
// the profiles lack are skipped. On the fake device a triad beside a
// histogram shares DRAM's bandwidth, so it runs slower than alone.
func TestMeasurePartners(t *testing.T) {
	dev := NewFake(FakeOptions{SMs: 132})
	ks := Catalogue()
	ps, err := MeasureProfiles(context.Background(), dev, ks, ProfileSweep(132, 33), 1, nil)
	require.NoError(t, err)
	ws, err := SelectWorkloads(Workloads(ks), []string{"triad_f4+histogram"}, false)
	require.NoError(t, err)
	pairs := PartnerPairs(ws)
	i := ps.KernelIndex("triad_f4")
	var seen []string
	require.NoError(t, MeasurePartners(context.Background(), dev, ps, pairs, 2, func(v, p string) { seen = append(seen, v+">"+p) }))
	assert.Equal(t, []string{"triad_f4>histogram", "triad_f4>histogram", "histogram>triad_f4", "histogram>triad_f4"}, seen)
	tb := ps.Kernels[i].Beside
	require.Len(t, tb, 1)
	assert.Equal(t, "histogram", tb[0].Partner)
	assert.Equal(t, 33, tb[0].SMs)
	assert.Equal(t, 99, tb[0].PartnerSMs)
	assert.Greater(t, tb[0].Slowdown, 1.0)
	require.NoError(t, MeasurePartners(context.Background(), dev, ps, pairs, 1, nil))
	assert.Len(t, ps.Kernels[i].Beside, 1, "measured again: replaced, not added")

	small := *ps
	small.Kernels = []plan.Kernel{ps.Kernels[i]} // its partner is not profiled: nothing to measure
	var none []string
	require.NoError(t, MeasurePartners(context.Background(), dev, &small, pairs, 1, func(v, p string) { none = append(none, v) }))
	assert.Empty(t, none)
}
