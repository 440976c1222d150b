package occupancy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ptxas facts of golden/merge/bs_vecadd.interleaved.cu (bench/RESULTS.md):
// black_scholes 32 registers in 128-thread blocks, vector_add 12 registers in
// 256-thread blocks, the merged kernel 32 registers in 256-thread blocks.
func TestPredictMergeBlackScholesLoses(t *testing.T) {
	parts := []MergePart{
		{Name: "black_scholes", Alone: Kernel{Threads: 128, Registers: 32}, Blocks: 16384, Ms: 0.35},
		{Name: "vector_add", Alone: Kernel{Threads: 256, Registers: 12}, Blocks: 524288, Ms: 0.35},
	}
	p, err := SM90.PredictMerge(132, parts, Kernel{Threads: 256, Registers: 32}, 0)
	require.NoError(t, err)
	assert.Equal(t, 16, p.Parts[0].AloneBlocksPerSM)
	assert.Equal(t, 8, p.Parts[0].MergedBlocksPerSM)
	assert.InDelta(t, 2.0, p.Parts[0].Slowdown, 1e-9)
	assert.InDelta(t, 0.5, p.Parts[0].IdleThreads, 1e-9)
	assert.Equal(t, 1.0, p.Parts[1].Slowdown)
	assert.True(t, p.Loses)
	assert.Equal(t, "ms", p.Unit)
	v := p.Verdict()
	assert.True(t, strings.HasPrefix(v, "merging is predicted to lose"), v)
	assert.Contains(t, v, "black_scholes runs 8 blocks/SM inside the merged kernel instead of 16")
	assert.Contains(t, v, "50% of its merged block idle")
}

// Equal blocks, equal registers: only the tails are gained, the dispatch
// and the merged tail paid.
func TestPredictMergeTailsAndDispatch(t *testing.T) {
	k := Kernel{Threads: 256, Registers: 32}
	// 1.5 waves each: half a wave of idle SMs at each kernel's end.
	parts := []MergePart{
		{Name: "a", Alone: k, Blocks: 132 * 8 * 3 / 2, Ms: 2},
		{Name: "b", Alone: k, Blocks: 132 * 8 * 3 / 2, Ms: 2},
	}
	p, err := SM90.PredictMerge(132, parts, k, 0.5)
	require.NoError(t, err)
	// merged_i = 2 · 0.75; tail = (2 / 2 waves) / 2 = 0.5; dispatch = 0.5 us · 3168 / 1056.
	assert.InDelta(t, 0.5, p.Tail, 1e-9)
	assert.InDelta(t, 0.0015, p.Dispatch, 1e-9)
	assert.InDelta(t, 3+0.5+0.0015, p.Predicted, 1e-9)
	assert.False(t, p.Loses)
	// Without times the model works in waves.
	parts[0].Ms, parts[1].Ms = 0, 0
	p, err = SM90.PredictMerge(132, parts, k, 0)
	require.NoError(t, err)
	assert.Equal(t, "waves", p.Unit)
	assert.Equal(t, 0.0, p.Dispatch)
	assert.InDelta(t, 4, p.Sequential, 1e-9)
}

func TestPredictMergeErrors(t *testing.T) {
	_, err := SM90.PredictMerge(0, []MergePart{{Alone: Kernel{Threads: 32}}}, Kernel{Threads: 32}, 0)
	assert.Error(t, err)
	_, err = SM90.PredictMerge(132, nil, Kernel{Threads: 32}, 0)
	assert.Error(t, err)
	_, err = SM90.PredictMerge(132, []MergePart{{Alone: Kernel{Threads: 32}}}, Kernel{Threads: 32, StaticShared: 300 << 10}, 0)
	assert.Error(t, err)
}

// A grid-stride kernel with one wave of long blocks: its blocks spread over
// the whole interleaving, so the merged kernel ends half a block after the
// last dispatch.
func TestPredictMergeLongBlocksTail(t *testing.T) {
	k := Kernel{Threads: 256, Registers: 32}
	parts := []MergePart{
		{Name: "gemm", Alone: k, Blocks: 132 * 8 * 100, Ms: 1},
		{Name: "hist", Alone: k, Blocks: 132 * 8, Ms: 0.4},
	}
	p, err := SM90.PredictMerge(132, parts, k, 0)
	require.NoError(t, err)
	assert.InDelta(t, 0.2, p.Tail, 1e-9)
	assert.True(t, p.Loses)
	assert.Contains(t, p.Verdict(), "the merged kernel's own tail costs 0.2 ms")
	assert.Contains(t, p.Verdict(), "half of hist's block time")
}
