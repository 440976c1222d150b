package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// complementaryPair is a compute-bound kernel that scales with SMs next to
// a bandwidth-bound one that saturates at 4 of 16 SMs: STM runs them in one
// phase. threads0 sets the compute kernel's block size.
func complementaryPair(threads0 int) *ProfileSet {
	ps := &ProfileSet{Format: FormatVersion, Device: Device{Name: "test-16", SMs: 16, PeakBWGBs: 1000, MemBytes: 1 << 34}}
	comp := Kernel{Name: "compute", Blocks: 1024, ThreadsPerBlock: threads0, Registers: 32, GlobalBytes: 1 << 20}
	mem := Kernel{Name: "memory", Blocks: 4096, ThreadsPerBlock: 256, Registers: 12, GlobalBytes: 1 << 20}
	for m := 1; m <= 16; m++ {
		comp.RMs = append(comp.RMs, Sample{m, 160 / float64(m)})
		comp.BWGBs = append(comp.BWGBs, Sample{m, 1})
		mem.RMs = append(mem.RMs, Sample{m, 40 / float64(min(m, 4))})
		mem.BWGBs = append(mem.BWGBs, Sample{m, 250 * float64(min(m, 4))})
	}
	ps.Kernels = []Kernel{comp, mem}
	return ps
}

func mergedPhase(t *testing.T, p *Plan) *Phase {
	t.Helper()
	for i := range p.Phases {
		if len(p.Phases[i].Kernels) > 1 {
			return &p.Phases[i]
		}
	}
	t.Fatalf("no phase runs both kernels: %+v", p.Phases)
	return nil
}

func TestMergeAdviceRecommends(t *testing.T) {
	p, err := PlanSTM(complementaryPair(256), STMOptions{Eval: EvalExact})
	require.NoError(t, err)
	ph := mergedPhase(t, p)
	require.NotNil(t, ph.Merge)
	assert.True(t, ph.Merge.Recommended, ph.Merge.Reason)
	assert.NotNil(t, ph.Bucket)
}

// 64-thread blocks fit 32 per SM alone but 8 in a 256-thread merged block:
// the merged kernel runs the compute kernel at a quarter of its occupancy.
func TestMergeAdviceRefusesALosingMerge(t *testing.T) {
	p, err := PlanSTM(complementaryPair(64), STMOptions{Eval: EvalExact})
	require.NoError(t, err)
	ph := mergedPhase(t, p)
	require.NotNil(t, ph.Merge)
	assert.False(t, ph.Merge.Recommended)
	assert.Nil(t, ph.Bucket, "a losing merge must not get leaky-bucket maps")
	assert.Contains(t, ph.Note, "merge predicted to lose")
	assert.Contains(t, ph.Merge.Reason, "compute runs 8 blocks/SM inside the merged kernel instead of 32")
	found := false
	for _, n := range p.Notes {
		found = found || strings.Contains(n, "merging is predicted to lose")
	}
	assert.True(t, found, p.Notes)
}

// Without threads and registers the model cannot judge: no advice.
func TestMergeAdviceNeedsResources(t *testing.T) {
	ps := complementaryPair(64)
	ps.Kernels[0].Registers = 0
	p, err := PlanSTM(ps, STMOptions{Eval: EvalExact})
	require.NoError(t, err)
	ph := mergedPhase(t, p)
	assert.Nil(t, ph.Merge)
	assert.NotNil(t, ph.Bucket)
}

// Two memory-intensive kernels in a phase are not merged, whatever the
// occupancy model says: their DRAM sharing is what the model predicts least
// well. The phase still co-runs them (STM's split), and a note says why.
func TestMergeAdviceRefusesTwoMemoryKernels(t *testing.T) {
	ps := complementaryPair(256)
	// The compute kernel becomes memory intensive too (B[M] at 60% of peak),
	// but still scales with SMs, so STM keeps the pair in one phase.
	for i := range ps.Kernels[0].BWGBs {
		ps.Kernels[0].BWGBs[i].V = 600 * float64(ps.Kernels[0].BWGBs[i].M) / 16
	}
	cl, _ := ps.Classify(0)
	require.True(t, cl.Memory(), "class %s", cl)
	p, err := PlanSTM(ps, STMOptions{Eval: EvalExact})
	require.NoError(t, err)
	ph := mergedPhase(t, p)
	require.NotNil(t, ph.Merge)
	assert.False(t, ph.Merge.Recommended)
	assert.Contains(t, ph.Merge.Reason, "memory intensive")
	assert.Contains(t, ph.Note, "not merged")
	assert.True(t, strings.Contains(strings.Join(p.Notes, "\n"), "compute (M_M), memory (H_M)"), "notes: %v", p.Notes)
}
