// slatec-test: refuse per_row_rounds
// Early return before a barrier loop whose trip count is loaded after the return: not block-uniform for returned threads, unsafe to lower.
#define B 128

// Natively fine only if every live thread of a block loads the same m (here: one row
// length per block). After lowering, the returned threads never load m, so they cannot
// know how many barriers to attend; the transform must refuse rather than guess.
__global__ void per_row_rounds(const int* len, const float* in, float* out, int nrows) {
    __shared__ float s[B];
    int row = blockIdx.x;
    int i = row * B + threadIdx.x;
    if (row >= nrows || threadIdx.x >= len[row]) return;
    int m = len[row];
    float v = in[i];
    for (int k = 0; k < m; ++k) {
        s[threadIdx.x] = v;
        __syncthreads();
        v = 0.5f * (v + s[(threadIdx.x + 1) % m]);
        __syncthreads();
    }
    out[i] = v;
}

// Acceptable neighbour: the trip count is loaded by every thread before the return.
__global__ void per_row_rounds_safe(const int* len, const float* in, float* out, int nrows) {
    __shared__ float s[B];
    int row = blockIdx.x;
    int m = row < nrows ? len[row] : 0;
    int i = row * B + threadIdx.x;
    if (row >= nrows || threadIdx.x >= m) return;
    float v = in[i];
    for (int k = 0; k < m; ++k) {
        s[threadIdx.x] = v;
        __syncthreads();
        v = 0.5f * (v + s[(threadIdx.x + 1) % m]);
        __syncthreads();
    }
    out[i] = v;
}
