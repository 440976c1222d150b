package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBesideOne(t *testing.T) {
	ps := &ProfileSet{Device: Device{SMs: 132, MaxThreadsPerSM: 2048, MaxBlocksPerSM: 32, RegistersPerSM: 65536, SharedBytesPerSM: 228 << 10}}
	gemm := Kernel{ThreadsPerBlock: 256, Registers: 32, SharedBytes: 2052, BlocksPerSM: 8}
	chase := Kernel{ThreadsPerBlock: 128, Registers: 32, SharedBytes: 4}
	big := Kernel{ThreadsPerBlock: 128, Registers: 32, SharedBytes: 200 << 10}
	tests := []struct {
		name string
		c, a *Kernel
		want int
	}{
		{"threads and registers: one block fewer", &gemm, &chase, 7},
		{"shared memory: one fits", &Kernel{ThreadsPerBlock: 256, Registers: 16, SharedBytes: 16388, BlocksPerSM: 8}, &big, 1},
		{"shared memory: none fits", &Kernel{ThreadsPerBlock: 256, Registers: 16, SharedBytes: 40 << 10, BlocksPerSM: 5}, &big, 0},
		{"a small block beside many small ones", &Kernel{ThreadsPerBlock: 64, Registers: 16, BlocksPerSM: 32}, &chase, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ps.besideOne(tt.c, tt.a))
		})
	}
	// A limit the device does not give does not bind.
	bare := &ProfileSet{Device: Device{SMs: 132}}
	assert.Equal(t, 8, bare.besideOne(&gemm, &chase))
}

// The H200 run of 604ef96 (bench/results/corun.json): the chase (64 blocks
// of 128 threads) launched first and the tiled GEMM next, both as written,
// took 2.198 ms (streams mode), where the best spatial split with
// grow-on-completion took 2.381 and the scheduler's split 2.405.
func TestOverlapChaseBesideGEMM(t *testing.T) {
	all, err := ReadProfileFile("testdata/corun-h200-604ef96.json")
	require.NoError(t, err)
	ps := subset(t, all, "chase", "gemm_tiled")
	mdl, err := NewModel(ps)
	require.NoError(t, err)
	lat, first, _, finFirst, finSecond, ok := mdl.overlapBest(0, 1)
	require.True(t, ok)
	assert.Equal(t, 0, first, "the chase, whose 64 blocks fit one per SM, goes first")
	assert.InEpsilon(t, 2.198, lat, 0.03, "measured 2.198 ms")
	assert.Less(t, finFirst, finSecond, "the chase ends long before the GEMM")

	opts := SlateOptions{EitherOrder: true, MaxGroup: 3, ModelCorun: true}
	spatial, err := PlanSlateWith(ps, opts)
	require.NoError(t, err)
	opts.Overlap = true
	p, err := PlanSlateWith(ps, opts)
	require.NoError(t, err)
	require.Len(t, p.Phases, 1)
	ph := p.Phases[0]
	assert.True(t, ph.Overlap, "%+v", ph)
	require.Len(t, ph.Kernels, 2)
	assert.Equal(t, "chase", ph.Kernels[0].Name, "launched first")
	assert.Equal(t, 132, ph.Kernels[0].SMs)
	assert.Equal(t, 132, ph.Kernels[1].SMs)
	assert.Less(t, p.PredictedMs, overlapMargin*spatial.PredictedMs)
	assert.Contains(t, ph.Note, "chase first")
	for _, q := range spatial.Phases {
		assert.False(t, q.Overlap)
	}
}

// A dependent FMA chain of 96 blocks is the pair's last to end beside the
// GEMM: sharing its SMs' issue slots slows it (4.5% measured, 3.387 ms
// against the best split's 3.311), so the split stays.
func TestOverlapNotChosenWhenTheSmallKernelIsLast(t *testing.T) {
	all, err := ReadProfileFile("testdata/corun-h200-604ef96.json")
	require.NoError(t, err)
	ps := subset(t, all, "dep_chain", "gemm_tiled")
	mdl, err := NewModel(ps)
	require.NoError(t, err)
	lat, first, _, finFirst, finSecond, ok := mdl.overlapBest(0, 1)
	require.True(t, ok)
	assert.Equal(t, 0, first)
	assert.Greater(t, finFirst, finSecond)
	assert.InEpsilon(t, 3.387, lat, 0.03, "measured 3.387 ms")
	p, err := PlanSlateWith(ps, SlateOptions{EitherOrder: true, MaxGroup: 3, ModelCorun: true, Overlap: true})
	require.NoError(t, err)
	for _, ph := range p.Phases {
		assert.False(t, ph.Overlap, "%+v", ph)
	}
}

func TestOverlapNeedsOneBlockPerSM(t *testing.T) {
	all, err := ReadProfileFile("testdata/corun-h200-604ef96.json")
	require.NoError(t, err)
	ps := subset(t, all, "triad_f4", "gemm_tiled") // both grids many waves deep
	mdl, err := NewModel(ps)
	require.NoError(t, err)
	_, _, _, _, _, ok := mdl.overlapBest(0, 1)
	assert.False(t, ok)
	ps.Kernels[1].ThreadsPerBlock = 0 // unknown shape
	_, _, _, ok = mdl.overlapPair(1, 0)
	assert.False(t, ok)
}
