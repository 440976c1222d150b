package plan

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// steadySet is a 16-SM device with kernels of known curves: compute scales
// linearly (160/m ms), memory saturates DRAM (1000 GB/s) at 4 SMs, memory2
// is a second such kernel, and latency is unaffected by SMs past 2 but
// slowed 3x by a loaded DRAM.
func steadySet() *ProfileSet {
	ps := complementaryPair(256)
	mem2 := ps.Kernels[1]
	mem2.Name = "memory2"
	lat := Kernel{Name: "latency", Blocks: 32, ThreadsPerBlock: 256, Registers: 32, GlobalBytes: 1 << 20, DRAMSensitivity: 3}
	comp2 := ps.Kernels[0]
	comp2.Name = "compute2"
	for m := 1; m <= 16; m++ {
		lat.RMs = append(lat.RMs, Sample{m, 10 / float64(min(m, 2))})
		lat.BWGBs = append(lat.BWGBs, Sample{m, 1})
	}
	ps.Kernels = append(ps.Kernels, mem2, lat, comp2)
	return ps
}

func TestSteadySplitFor(t *testing.T) {
	ps := steadySet()
	for _, tc := range []struct {
		name   string
		names  []string
		sms    []int   // the split, in the order of names
		stp    float64 // predicted
		speeds []float64
	}{
		// The memory kernel gets the 4 SMs that saturate DRAM and keeps its
		// full speed; compute gets the other 12: 1 + 12/16.
		{"complementary", []string{"compute", "memory"}, []int{12, 4}, 1.75, []float64{0.75, 1}},
		{"the order of names is the order of shares", []string{"memory", "compute"}, []int{4, 12}, 1.75, []float64{1, 0.75}},
		// Two kernels that scale with SMs: every split does the work of
		// one kernel on the GPU (the first maximum, the smallest first share).
		{"two compute-bound", []string{"compute", "compute2"}, []int{4, 12}, 1, []float64{0.25, 0.75}},
		// Two bandwidth-bound kernels share DRAM: the penalty makes every
		// split one kernel's work (the first split that gives both the floor
		// of 1/4: 2 SMs, 1/3).
		{"two memory-bound", []string{"memory", "memory2"}, []int{2, 14}, 1, []float64{1.0 / 3, 2.0 / 3}},
		// The latency-bound kernel is slowed 3x by the other's full load:
		// 1/3 + 1, below the 1.15 that slatec serve asks.
		{"latency beside memory", []string{"latency", "memory"}, []int{2, 14}, 1.0/3 + 1, []float64{1.0 / 3, 1}},
		{"three", []string{"compute", "memory", "latency"}, []int{10, 4, 2}, 10.0/16 + 1 + 1.0/3, []float64{10.0 / 16, 1, 1.0 / 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := SteadySplitFor(ps, tc.names, SteadyOptions{})
			require.NoError(t, err)
			require.NotNil(t, s)
			assert.Equal(t, tc.names, s.Names)
			assert.Equal(t, tc.sms, s.SMs)
			// The compute kernels move 1 GB/s each: a penalty of 1.001 beside
			// a saturated DRAM.
			assert.InDelta(t, tc.stp, s.STP, 0.005)
			assert.InDeltaSlice(t, tc.speeds, s.Speeds, 0.005)
			total := 0
			for _, m := range s.SMs {
				total += m
			}
			assert.Equal(t, ps.Device.SMs, total, "the shares cover the GPU")
		})
	}
}

// TestSteadySplitForBalanced: on the H100 profiles of the serve programs,
// STP gives the triad 32 SMs beside the FMA chains (its speed 0.86, theirs
// 0.76); balanced gives it fewer, for a higher slowest speed, where the
// two speeds are about equal.
func TestSteadySplitForBalanced(t *testing.T) {
	ps, err := ReadProfileFile("../bench/results/raw/serve-profiles-5f1612a-h100.json")
	require.NoError(t, err)
	names := []string{"stream_triad", "fma_chains"}
	stp, err := SteadySplitFor(ps, names, SteadyOptions{})
	require.NoError(t, err)
	bal, err := SteadySplitFor(ps, names, SteadyOptions{Balanced: true})
	require.NoError(t, err)
	require.NotNil(t, stp)
	require.NotNil(t, bal)
	t.Logf("stp %v %.3f %v; balanced %v %.3f %v", stp.SMs, stp.STP, stp.Speeds, bal.SMs, bal.STP, bal.Speeds)
	assert.Equal(t, []int{32, 100}, stp.SMs)
	assert.Less(t, bal.SMs[0], stp.SMs[0], "balanced gives the triad fewer SMs")
	assert.Greater(t, min(bal.Speeds[0], bal.Speeds[1]), min(stp.Speeds[0], stp.Speeds[1]))
	// Equal speeds within the SM step: the two kernels' speeds are close.
	assert.InDelta(t, bal.Speeds[0], bal.Speeds[1], 0.02)
}

func TestSteadySplitForBounds(t *testing.T) {
	ps := steadySet()
	// A floor every kernel must get: a split giving compute 12/16 = 0.75
	// is refused at 0.8, and none reaches 0.8 for both (4 SMs of compute
	// is 0.25, and memory needs 4 of 16 for 1).
	s, err := SteadySplitFor(ps, []string{"compute", "memory"}, SteadyOptions{MinSpeed: 0.8})
	require.NoError(t, err)
	assert.Nil(t, s)
	// Shares in steps of 5 SMs (the last one takes the rest): compute 12
	// is not one; 10+6 (10/16 + 1) beats 5+11.
	s, err = SteadySplitFor(ps, []string{"compute", "memory"}, SteadyOptions{Step: 5})
	require.NoError(t, err)
	require.NotNil(t, s)
	assert.Equal(t, []int{10, 6}, s.SMs)
	_, err = SteadySplitFor(ps, []string{"compute"}, SteadyOptions{})
	assert.ErrorContains(t, err, "two or more kernels")
	_, err = SteadySplitFor(ps, []string{"compute", "nope"}, SteadyOptions{})
	assert.ErrorContains(t, err, `no profile of kernel "nope"`)
}

// Sets of many kernels are searched in coarser steps: six kernels on 132
// SMs plan in well under a second and still cover the GPU.
func TestSteadySplitForManyKernels(t *testing.T) {
	ps := &ProfileSet{Format: FormatVersion, Device: Device{Name: "test-132", SMs: 132, PeakBWGBs: 1000, MemBytes: 1 << 34}}
	var names []string
	for i := range 6 {
		k := Kernel{Name: fmt.Sprintf("k%d", i), Blocks: 4096, ThreadsPerBlock: 256, Registers: 32, GlobalBytes: 1 << 20}
		for m := 1; m <= 132; m++ {
			k.RMs = append(k.RMs, Sample{m, float64(10+i) / float64(min(m, 20+10*i))})
			k.BWGBs = append(k.BWGBs, Sample{m, 1})
		}
		ps.Kernels = append(ps.Kernels, k)
		names = append(names, k.Name)
	}
	start := time.Now()
	s, err := SteadySplitFor(ps, names, SteadyOptions{})
	took := time.Since(start)
	require.NoError(t, err)
	require.NotNil(t, s)
	total := 0
	for _, m := range s.SMs {
		total += m
	}
	assert.Equal(t, 132, total)
	assert.Less(t, took, 2*time.Second, "six kernels took %v", took)
	t.Logf("six kernels: %v in %v, STP %.3f", s.SMs, took, s.STP)
	assert.Less(t, compositions(132, 6), 1e9)
	assert.Equal(t, 0.0, compositions(3, 4))
	assert.Equal(t, 131.0, compositions(132, 2))
}
