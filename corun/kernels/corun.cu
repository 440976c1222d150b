// The kernels of `slatec bench` (issue 11), written for the benchmark: two of
// each class whose co-running behaviour the planners reason about. Each is a
// plain CUDA kernel launched with a fixed grid (the catalogue in
// corun/catalog.go gives the shapes and sizes); slatec gen turns the file into
// persistent workers and Go launchers (kernels_slate.go).
//
//   memory-bound, saturating bandwidth on few SMs:  triad_f4, scale_f4
//   compute-bound, scaling with SMs:                fma_chain, gemm_tc
//   latency/occupancy-bound (small grids, long blocks): chase, dep_chain
//   shared-memory heavy:                            gemm_tiled, histogram
#include <mma.h>

// STREAM triad on float4: a = b + s*c. 48 bytes of traffic per element,
// no reuse, so a few dozen SMs saturate DRAM.
__global__ void __launch_bounds__(256) triad_f4(float4* __restrict__ a, const float4* __restrict__ b,
                                                const float4* __restrict__ c, float s, int n4)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        const float4 x = b[i];
        const float4 y = c[i];
        a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
    }
}

// STREAM scale on float4: a = s*b, 32 bytes per element.
__global__ void __launch_bounds__(256) scale_f4(float4* __restrict__ a, const float4* __restrict__ b, float s, int n4)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        const float4 x = b[i];
        a[i] = make_float4(s * x.x, s * x.y, s * x.z, s * x.w);
    }
}

// Eight independent FMA chains per thread: enough instruction-level
// parallelism to keep the FP32 pipes busy, no memory traffic but one store.
__global__ void __launch_bounds__(256) fma_chain(float* __restrict__ out, int iters, float a, float b)
{
    float x0 = threadIdx.x, x1 = x0 + 1.f, x2 = x0 + 2.f, x3 = x0 + 3.f;
    float x4 = x0 + 4.f, x5 = x0 + 5.f, x6 = x0 + 6.f, x7 = x0 + 7.f;
    for (int i = 0; i < iters; ++i) {
        x0 = fmaf(x0, a, b);
        x1 = fmaf(x1, a, b);
        x2 = fmaf(x2, a, b);
        x3 = fmaf(x3, a, b);
        x4 = fmaf(x4, a, b);
        x5 = fmaf(x5, a, b);
        x6 = fmaf(x6, a, b);
        x7 = fmaf(x7, a, b);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

// Tensor-core GEMM (wmma, half inputs, float accumulation): C[m x n] =
// A[m x k] (row-major) * B[k x n] (column-major). A block of 4 warps computes
// a 16 x 64 strip of C, one 16 x 16 tile per warp; the warps of a block share
// the A fragment through L1. m, n, k are multiples of 16 (n of 64).
__global__ void __launch_bounds__(128) gemm_tc(const __half* __restrict__ A, const __half* __restrict__ B,
                                               float* __restrict__ C, int n, int kdim)
{
    using namespace nvcuda;
    const int warp = threadIdx.x / 32;
    const int row = blockIdx.y * 16;
    const int col = (blockIdx.x * 4 + warp) * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int kk = 0; kk < kdim; kk += 16) {
        wmma::load_matrix_sync(fa, A + (size_t)row * kdim + kk, kdim);
        wmma::load_matrix_sync(fb, B + (size_t)col * kdim + kk, kdim);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(C + (size_t)row * n + col, acc, n, wmma::mem_row_major);
}

// Dependent loads: each thread's next address depends on the value it just
// loaded, so a thread waits a full memory latency per step. A small grid of
// long blocks: it cannot use every SM, and what it uses it barely loads.
__global__ void __launch_bounds__(128) chase(const unsigned int* __restrict__ data, unsigned int* __restrict__ out,
                                             int steps, unsigned int mask)
{
    unsigned int i = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u & mask;
    unsigned int acc = 0;
    for (int s = 0; s < steps; ++s) {
        const unsigned int v = data[i];
        acc += v;
        i = (i * 1103515245u + 12345u + v) & mask;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// One long dependent chain of special-function and FMA instructions per
// thread, two warps per block, a grid smaller than a wave: bound by
// instruction latency, not throughput.
__global__ void __launch_bounds__(64) dep_chain(float* __restrict__ out, int iters)
{
    float x = 1.f + threadIdx.x * 1e-3f;
    for (int i = 0; i < iters; ++i)
        x = rsqrtf(fmaf(x, x, 0.5f)) + 0.25f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

// SGEMM with 16 x 16 shared-memory tiles: C[n x n] = A * B, row-major, n a
// multiple of 16. Two 1 KiB tiles per block, a barrier per tile step.
__global__ void __launch_bounds__(256) gemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                                  float* __restrict__ C, int n)
{
    __shared__ float ta[16][16];
    __shared__ float tb[16][16];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * 16 + ty;
    const int col = blockIdx.x * 16 + tx;
    float acc = 0.f;
    for (int t = 0; t < n; t += 16) {
        ta[ty][tx] = A[row * n + t + tx];
        tb[ty][tx] = B[(t + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int j = 0; j < 16; ++j)
            acc += ta[ty][j] * tb[j][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

// Histogram of 4096 bins in shared memory (16 KiB per block): each block
// counts per_block hashed values with shared atomics, then adds its non-zero
// bins to the global histogram.
__global__ void __launch_bounds__(256) histogram(const unsigned int* __restrict__ data, unsigned int* __restrict__ hist,
                                                 int per_block)
{
    __shared__ unsigned int bins[4096];
    for (int b = threadIdx.x; b < 4096; b += blockDim.x)
        bins[b] = 0;
    __syncthreads();
    const size_t base = (size_t)blockIdx.x * per_block;
    for (int j = threadIdx.x; j < per_block; j += blockDim.x) {
        const unsigned int v = data[base + j] ^ (unsigned int)(base + j);
        atomicAdd(&bins[(v * 2654435761u) >> 20], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 4096; b += blockDim.x)
        if (bins[b])
            atomicAdd(&hist[b], bins[b]);
}
