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

// Returns the whole block takes by the values it reads: computed from
// blockIdx, the parameters, constants and loop counters with uniform
// bounds, under control flow every thread follows, with no lowered return
// before them. They are not lowered.
func TestValueUniformReturns(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		uniform    []bool // per return, in order
	}{
		{"block index past the end", "if (blockIdx.x >= n) return;\n", []bool{true}},
		{"derived in a loop with constant bounds", "const int per = 4;\nint t0 = n - 1 - per * blockIdx.x;\nfor (int to = 0; to < per; ++to) {\nint t = t0 - to;\nif (t < 0) return;\n__syncthreads();\n}\n", []bool{true}},
		{"pure function of uniform values", "if (min(blockIdx.x, 4u) == 3u) return;\n", []bool{true}},
		{"thread index", "if (threadIdx.x >= n) return;\n", []bool{false}},
		{"assigned under a thread condition", "int r = blockIdx.x;\nif (threadIdx.x == 0) r = 5;\nif (r > n) return;\n", []bool{false}},
		{"loaded from memory", "int r = in[blockIdx.x];\nif (r > 0) return;\n", []bool{false}},
		{"added a thread value", "int r = blockIdx.x;\nr += threadIdx.x;\nif (r > 4) return;\n", []bool{false}},
		{"address taken", "int r = blockIdx.x;\nint* p = &r;\n*p = threadIdx.x;\nif (r > 0) return;\n", []bool{false}},
		{"written by a lambda", "int r = blockIdx.x;\nauto f = [&] { r = threadIdx.x; };\nf();\nif (r > 0) return;\n", []bool{false}},
		{"after a thread's return", "if (threadIdx.x > 100) return;\nif (blockIdx.x > n) return;\n", []bool{false, false}},
		{"before a thread's return", "if (blockIdx.x > n) return;\nif (threadIdx.x > 100) return;\n", []bool{true, false}},
		{"inside a thread condition", "if (threadIdx.x < 32) { if (blockIdx.x > n) return; }\n", []bool{false}},
		{"loop left by a thread", "for (int i = 0; i < n; ++i) {\nif (in[threadIdx.x] > i) break;\nif (i > blockIdx.x) return;\n__syncthreads();\n}\n", []bool{false}},
		{"loop bound read from memory", "for (int i = 0; i < in[0]; ++i) {\nif (i > blockIdx.x) return;\n__syncthreads();\n}\n", []bool{false}},
		{"thread return later in the loop", "for (int i = 0; i < n; ++i) {\nif (i > blockIdx.x) return;\n__syncthreads();\nif (threadIdx.x == i) return;\n}\n", []bool{false, false}},
		{"a goto in the body", "if (blockIdx.x > n) return;\ngoto done;\ndone:;\n", []bool{false}},
		{"passed to a helper", "int r = blockIdx.x;\nset_lane(r);\nif (r > 0) return;\n", []bool{false}},
		{"changed by inline assembly", "int r = blockIdx.x;\nasm(\"mov.u32 %0, %%laneid;\" : \"=r\"(r));\nif (r > 0) return;\n", []bool{false}},
		{"a shared value", "__shared__ int flag;\nif (threadIdx.x == 0) flag = n;\n__syncthreads();\nif (flag > 3) return;\n", []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "__device__ void set_lane(int& x) { x = threadIdx.x % 32; }\n__global__ void k(const int* in, int* out, int n) {\n" + tc.body + "__syncthreads();\nout[blockIdx.x * blockDim.x + threadIdx.x] = n;\n}\n"
			a := load(t, "k.cu", src)
			require.Len(t, a.Kernels, 1)
			k := a.Kernels[0]
			require.Len(t, k.Returns, len(tc.uniform))
			for i, r := range k.Returns {
				assert.Equal(t, tc.uniform[i], r.Uniform, "return %d (line %d)", i, r.Line)
			}
		})
	}
}
