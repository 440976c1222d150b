// slatec-test: no-harness
// Preprocessor cases: blockIdx/gridDim in #define bodies (multi-line, #, ##, #undef/redefine), a barrier hidden in a macro, a macro-made kernel.
#include <cstdio>

#define BID_X blockIdx.x
#define FLAT_BLOCK (blockIdx.z * gridDim.y * gridDim.x + \
                    blockIdx.y * gridDim.x +             \
                    blockIdx.x)
#define TID_OF(dim) (blockIdx.dim * blockDim.dim + threadIdx.dim)
#define NAME_OF(x) #x
#define CAT(a, b) a##b
#define GRID_OF(axis) CAT(grid, Dim).axis

// Redefined halfway through the file: later uses see the new body.
#define SCALE 2
__device__ int scaled_block() { return BID_X * SCALE; }
#undef SCALE
#define SCALE (gridDim.x + 1)
__device__ int scaled_block_v2() { return BID_X * SCALE; }

// A barrier that only a preprocessor-aware analysis can see. An early return before it
// must be handled exactly like a plain __syncthreads().
#define BLOCK_SYNC() __syncthreads()
#define STAGE(buf, v)          \
    do {                       \
        buf[threadIdx.x] = (v); \
        BLOCK_SYNC();          \
    } while (0)

__global__ void hidden_barrier(const int* in, int* out, int n) {
    __shared__ int s[256];
    int i = TID_OF(x);
    if (i >= n) return;
    STAGE(s, in[i]);
    out[i] = s[threadIdx.x ^ 1] + scaled_block() + scaled_block_v2();
}

__global__ void flat_ids(unsigned* out) {
    if (threadIdx.x == 0) out[FLAT_BLOCK] = GRID_OF(x) + GRID_OF(y) + GRID_OF(z);
#ifdef __CUDA_ARCH__
    if (FLAT_BLOCK == 0 && threadIdx.x == 0) printf("%s\n", NAME_OF(blockIdx.x));
#endif
}

// A kernel whose definition only exists after macro expansion.
#define DEFINE_FILL(T)                                            \
    __global__ void fill_##T(T* p, T v, int n) {                   \
        int i = blockIdx.x * blockDim.x + threadIdx.x;             \
        if (i < n) p[i] = v + (T)blockIdx.x;                       \
    }
DEFINE_FILL(int)
DEFINE_FILL(float)

void launch_all(int* d_in, int* d_out, unsigned* d_ids, float* d_f, int n) {
    hidden_barrier<<<(n + 255) / 256, 256>>>(d_in, d_out, n);
    flat_ids<<<dim3(4, 3, 2), 64>>>(d_ids);
    fill_int<<<(n + 255) / 256, 256>>>(d_out, 7, n);
    fill_float<<<(n + 255) / 256, 256>>>(d_f, 1.5f, n);
}
