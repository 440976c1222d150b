// slatec-test: no-harness
// Kernels and launches under #if/#else: each definition of a kernel gets its worker and launcher inside its own branch; launches are rewritten in every branch.
#include <cuda_runtime.h>

// A prototype outside the branches, launched before its definitions (three branches).
__global__ void fill(float* x, int n);

// Prototypes that differ by branch.
#ifdef USE_FAST
__global__ void combine(float* x, int n);
#else
__global__ void combine(float* x, int n, int m);
#endif

void early(float* x, int n) {
    fill<<<(n + 255) / 256, 256>>>(x, n);
#ifdef USE_FAST
    combine<<<(n + 255) / 256, 256>>>(x, n);
#else
    combine<<<(n + 255) / 256, 256>>>(x, n, 1);
#endif
}

#if USE_FAST
__global__ void fill(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 1.0f;
}
#elif defined(USE_MID)
__global__ void fill(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 2.0f;
}
#else
__global__ void fill(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 3.0f;
}
#endif

#ifdef USE_FAST
__global__ void combine(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}
#else
__global__ void combine(float* x, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 2.0f + m;
}
#endif

// A helper defined per branch, called by one kernel.
#ifdef USE_FAST
__device__ float twice(float v) { return v + v; }
#else
__device__ float twice(float v) { return 2.0f * v; }
#endif

// #if inside a kernel's body: the body is copied with its branches.
template <typename T>
__global__ void bump(T* x, int n) {
    __shared__ T tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : T(0);
#if defined(USE_FAST) && !defined(NO_SYNC)
    __syncthreads();
    if (i < n) x[i] = twice(tile[(threadIdx.x + 1) % blockDim.x]);
#else
    if (i < n) x[i] = twice(tile[threadIdx.x]);
#endif
}

void late(float* x, int n, cudaStream_t s) {
#ifdef USE_FAST
    bump<<<(n + 255) / 256, 256>>>(x, n);
    fill<<<(n + 255) / 256, 256>>>(x, n);
#else
    bump<float><<<(n + 255) / 256, 256, 0, s>>>(x, n);
    fill<<<(n + 255) / 256, 256, 0, s>>>(x, n);
#endif
}
