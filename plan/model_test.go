package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Dispatch shares follow block rates, not SMs: a kernel of many short
// blocks planned on few SMs beside one of few long blocks on many gets
// the larger share (the H100's triad_fma: 36:96 SMs -> 114:18 shares).
func TestMergeShares(t *testing.T) {
	c := []Alloc{{Kernel: 0, SMs: 36}, {Kernel: 1, SMs: 96}}
	ks := []PhaseKernel{{FinishMs: 0.549023}, {FinishMs: 0.424863}}
	assert.Equal(t, []int{114, 18}, mergeShares(132, c, ks, []int64{32768, 4096}))
	// Every kernel keeps at least one share.
	assert.Equal(t, []int{131, 1}, mergeShares(132, c, ks, []int64{1 << 30, 1}))
	// No finish time: the SMs.
	assert.Equal(t, []int{36, 96}, mergeShares(132, c, []PhaseKernel{{FinishMs: 0}, {FinishMs: 1}}, []int64{1, 1}))
}
