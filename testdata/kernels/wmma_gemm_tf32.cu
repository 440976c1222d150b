// slatec-test: harness
// WMMA tf32 GEMM (m16n16k8, float in with __float_to_tf32, float accumulate): cudaFuncGetAttributes check, 69 KB opted-in dynamic shared memory, one event-timed launch.
#include "harness.h"

#include <mma.h>

#include <vector>

using namespace nvcuda;

// Block tile 128x128, k-slab 32 floats, two stages filled through registers; 8 warps as
// 2 x 4, each warp 64x32 of D (4 x 2 accumulators of 16x16, k-steps of 8).
#define BM 128
#define BN 128
#define BK 32
#define THREADS 256
#define A_STRIDE (BK + 4)  // floats: 144-byte rows
#define B_STRIDE (BN + 4)  // 528-byte rows
#define A_STAGE (BM * A_STRIDE)
#define B_STAGE (BK * B_STRIDE)
#define SMEM_BYTES (2 * (A_STAGE + B_STAGE) * (int)sizeof(float))  // 70656 bytes > 48 KB

// D (M x N) = A (M x K) * B (K x N), all row-major float; products in tf32.
__global__ void __launch_bounds__(THREADS)
wmma_gemm_tf32(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
               float* __restrict__ D) {
    extern __shared__ __align__(128) float smem[];
    float* As = smem;                // [2][BM][A_STRIDE]
    float* Bs = smem + 2 * A_STAGE;  // [2][BK][B_STRIDE]
    const int tid = threadIdx.x, warp = tid / 32;
    const int wm = warp / 4, wn = warp % 4;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[4][2];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    float4 ra[4], rb[4];
    const int ktiles = K / BK;
    for (int kt = -1; kt < ktiles; ++kt) {
        // Fetch slab kt+1 into registers (iteration -1 only does this and the store).
        if (kt + 1 < ktiles) {
            const int k0 = (kt + 1) * BK;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                int v = tid + i * THREADS;  // 1024 float4 per operand slab
                int ar = v / (BK / 4), ac = (v % (BK / 4)) * 4;
                ra[i] = *reinterpret_cast<const float4*>(A + (size_t)(row0 + ar) * K + k0 + ac);
                int br = v / (BN / 4), bc = (v % (BN / 4)) * 4;
                rb[i] = *reinterpret_cast<const float4*>(B + (size_t)(k0 + br) * N + col0 + bc);
            }
        }
        if (kt >= 0) {
            const float* as = As + (kt & 1) * A_STAGE + (wm * 64) * A_STRIDE;
            const float* bs = Bs + (kt & 1) * B_STAGE + wn * 32;
#pragma unroll
            for (int kk = 0; kk < BK; kk += 8) {
                wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[4];
                wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb[2];
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    wmma::load_matrix_sync(fa[i], as + (i * 16) * A_STRIDE + kk, A_STRIDE);
#pragma unroll
                    for (int t = 0; t < fa[i].num_elements; ++t) fa[i].x[t] = wmma::__float_to_tf32(fa[i].x[t]);
                }
#pragma unroll
                for (int j = 0; j < 2; ++j) {
                    wmma::load_matrix_sync(fb[j], bs + kk * B_STRIDE + j * 16, B_STRIDE);
#pragma unroll
                    for (int t = 0; t < fb[j].num_elements; ++t) fb[j].x[t] = wmma::__float_to_tf32(fb[j].x[t]);
                }
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
            }
        }
        if (kt + 1 < ktiles) {
            const int st = (kt + 1) & 1;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                int v = tid + i * THREADS;
                int ar = v / (BK / 4), ac = (v % (BK / 4)) * 4;
                *reinterpret_cast<float4*>(As + st * A_STAGE + ar * A_STRIDE + ac) = ra[i];
                int br = v / (BN / 4), bc = (v % (BN / 4)) * 4;
                *reinterpret_cast<float4*>(Bs + st * B_STAGE + br * B_STRIDE + bc) = rb[i];
            }
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(D + (size_t)(row0 + wm * 64 + i * 16) * N + col0 + wn * 32 + j * 16, acc[i][j],
                                    N, wmma::mem_row_major);
}

int main() {
    const int M = (int)harness_scaled(2048, BM), N = (int)harness_scaled(2048, BN);
    const int K = (int)harness_scaled(2048, BK);
    std::vector<float> A((size_t)M * K), B((size_t)K * N), D((size_t)M * N);
    harness_fill_float(A.data(), A.size(), -1.0f, 1.0f);
    harness_fill_float(B.data(), B.size(), -1.0f, 1.0f);
    float *d_A, *d_B, *d_D;
    CUDA_CHECK(cudaMalloc(&d_A, A.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_B, B.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_D, D.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_A, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_B, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_D, 0, D.size() * sizeof(float)));

    // What a tuned program checks before choosing a configuration: the compiled kernel's
    // limits, and room for its static plus dynamic shared memory on this device.
    int dev = 0, optin = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, wmma_gemm_tf32));
    if (attr.maxThreadsPerBlock < THREADS)
        return harness_fail("wmma_gemm_tf32 allows only %d threads per block", attr.maxThreadsPerBlock);
    if ((int)attr.sharedSizeBytes + SMEM_BYTES > optin)
        return harness_fail("%d + %d bytes of shared memory exceed the opt-in limit %d", (int)attr.sharedSizeBytes,
                            SMEM_BYTES, optin);
    CUDA_CHECK(cudaFuncSetAttribute(wmma_gemm_tf32, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));

    dim3 grid(N / BN, M / BM);  // 16 x 16 (unscaled)
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start));
    harness_timed("wmma_gemm_tf32", [&] {
        wmma_gemm_tf32<<<grid, THREADS, SMEM_BYTES>>>(M, N, K, d_A, d_B, d_D);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("PROGRAM_TIME wmma_gemm_tf32 %.4f\n", (double)ms);
    CUDA_CHECK(cudaMemcpy(D.data(), d_D, D.size() * sizeof(float), cudaMemcpyDeviceToHost));

    // Sampled check against double products of the float inputs: tf32 keeps 10 mantissa
    // bits, so each product may be off by about 2^-10 relative; bound by sum |a*b|.
    uint64_t pick = 0x2545F4914F6CDD1Dull;
    for (int s = 0; s < 4096; ++s) {
        pick = pick * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((pick >> 33) % (uint64_t)M), j = (int)((pick >> 11) % (uint64_t)N);
        if (s < 4) { i = s < 2 ? 0 : M - 1; j = (s & 1) ? N - 1 : 0; }
        double acc = 0, mag = 0;
        for (int k = 0; k < K; ++k) {
            double p = (double)A[(size_t)i * K + k] * (double)B[(size_t)k * N + j];
            acc += p;
            mag += std::fabs(p);
        }
        double got = D[(size_t)i * N + j];
        if (!(std::fabs(got - acc) <= 3e-3 * mag + 1e-5))
            return harness_fail("D[%d][%d] = %.9g, want %.9g", i, j, got, acc);
    }
    harness_dump("D", D.data(), D.size());
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_A));
    CUDA_CHECK(cudaFree(d_B));
    CUDA_CHECK(cudaFree(d_D));
    return harness_pass();
}
