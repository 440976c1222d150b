package transform

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A return that the whole block takes together (its condition is a
// block-wide vote) is not lowered: lowering it would keep every thread of
// a finished block looping through the remaining iterations (measured on
// the H100: a settle loop 2.25x slower). Any other return before a barrier
// is.
func TestUniformReturns(t *testing.T) {
	for _, tc := range []struct {
		name, stmt string
		uniform    bool
	}{
		{"or", "if (!__syncthreads_or(changed)) return;", true},
		{"and, braced, work first", "if (__syncthreads_and(done)) { out[t] = v; return; }", true},
		{"count compared with a literal", "if (__syncthreads_count(changed) == 0) return;", true},
		{"else branch", "if (__syncthreads_or(changed)) { v += 1; } else { return; }", true},
		{"vote and a thread's value", "if (!__syncthreads_or(changed) && t == 0) return;", false},
		{"vote and a parameter", "if (n > 0 && !__syncthreads_or(changed)) return;", false},
		{"nested thread condition", "if (!__syncthreads_or(changed)) { if (t == 0) return; }", false},
		{"warp vote", "if (!__any_sync(0xffffffffu, changed)) return;", false},
		{"plain condition", "if (v > 100) return;", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `__global__ void k(int* out, int n) {
    __shared__ int s[256];
    const int t = threadIdx.x;
    int v = out[blockIdx.x * 256 + t];
    for (int it = 0; it < 64; ++it) {
        s[t] = v;
        __syncthreads();
        int changed = s[(t + 1) % 256] != v;
        int done = !changed;
        v = s[(t + 1) % 256];
        ` + tc.stmt + `
        __syncthreads();
    }
    out[blockIdx.x * 256 + t] = v;
}`
			a := load(t, "k.cu", src)
			require.Len(t, a.Kernels, 1)
			k := a.Kernels[0]
			require.Len(t, k.Returns, 1)
			r := k.Returns[0]
			assert.True(t, r.BeforeSync, "a barrier follows the return in the loop")
			assert.Equal(t, tc.uniform, r.Uniform)
			assert.Equal(t, !tc.uniform, k.NeedsLowering)
			if !tc.uniform {
				edits, diags := a.Lower(k, LowerOptions{})
				require.Empty(t, diags)
				assert.NotEmpty(t, edits)
			}
		})
	}
}
