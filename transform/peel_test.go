package transform

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The static worker peels its first logical block only for kernels whose
// loops depend on the block index (peel.go): one copy of the body otherwise.
func TestPeelFirst(t *testing.T) {
	tests := []struct {
		name, kernel string
		peel         bool
	}{
		{"grid-stride loop", `__global__ void k(float* x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) x[i] = 0; }`, true},
		{"bound through locals", `__global__ void k(const int* rows, float* x) {
    const int r = blockIdx.x; int lo = rows[r], hi; hi = rows[r + 1];
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) x[i] = 0; }`, true},
		{"while loop on gridDim", `__global__ void k(float* x, int n) {
    int i = threadIdx.x; while (i < n * gridDim.x) { x[i] = 0; i += blockDim.x; } }`, true},
		{"GEMM: loops over K only", `__global__ void k(const float* a, float* c, int K) {
    const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x; float s = 0;
    for (int k = 0; k < K; ++k) s += a[row * K + k];
    c[row * 64 + col] = s; }`, false},
		{"no loop", `__global__ void k(float* x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 1; }`, false},
		{"no block index at all", `__global__ void k(float* x, int n) { for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] = 0; }`, false},
		{"a helper reads the index", `__device__ int first() { return blockIdx.x * blockDim.x; }
__global__ void k(float* x) { x[first() + threadIdx.x] = 1; }`, true},
		{"a macro reads the index", `#define GTID (blockIdx.x * blockDim.x + threadIdx.x)
__global__ void k(float* x) { x[GTID] = 1; }`, true},
		{"a macro reads the block size and lane only", `#define LANE (threadIdx.x % 32)
#define NWARPS (blockDim.x / 32)
__global__ void k(const float* a, float* x, int n) {
    float s = 0; for (int i = LANE; i < n; i += 32) s += a[i];
    x[blockIdx.x * NWARPS + threadIdx.x / 32] = s; }`, false},
		{"a macro reads gridDim", `#define STRIDE (blockDim.x * gridDim.x)
__global__ void k(float* x, int n) { for (int i = threadIdx.x; i < n; i += STRIDE) x[i] = 0; }`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := load(t, "t.cu", tt.kernel+"\n")
			require.NotEmpty(t, a.Kernels)
			k := a.Kernels[len(a.Kernels)-1]
			assert.Equal(t, tt.peel, peelFirst(a, k))
			res, err := Persistent(a, Options{Version: "test"})
			require.NoError(t, err)
			want := "false>"
			if tt.peel {
				want = "true>"
			}
			assert.Regexp(t, `slate_static_loop<(true|false), `+want, string(res.Output))
		})
	}
}
