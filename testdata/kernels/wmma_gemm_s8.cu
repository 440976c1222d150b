// slatec-test: harness
// WMMA int8 GEMM (s8 in, int32 accumulate, "TN" layout: A row-major, B column-major) with 32 KB static shared stages; one event-timed launch.
#include "harness.h"

#include <mma.h>

#include <vector>

using namespace nvcuda;

// Block tile 128x128, k-slab 64 bytes; 8 warps as 2 x 4, each warp 64x32 of D.
// Shared slabs are stored as [k/16][row][16 bytes] so every fragment pointer is
// 256-byte aligned with ldm = 16.
#define BM 128
#define BN 128
#define BK 64
#define THREADS 256

// D (M x N, int) = A (M x K, row-major s8) * B (K x N, stored column-major: Bt is N x K).
__global__ void __launch_bounds__(THREADS)
wmma_gemm_s8(int M, int N, int K, const signed char* __restrict__ A, const signed char* __restrict__ Bt,
             int* __restrict__ D) {
    __shared__ __align__(256) signed char As[2][BK / 16][BM][16];
    __shared__ __align__(256) signed char Bs[2][BK / 16][BN][16];
    const int tid = threadIdx.x, warp = tid / 32;
    const int wm = warp / 4, wn = warp % 4;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc[4][2];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0);

    // 128 rows x 4 chunks of 16 bytes per operand slab: 2 + 2 chunks per thread.
    uint4 ra[2], rb[2];
    auto fetch = [&](int k0) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            int v = tid + i * THREADS, r = v / 4, c = v % 4;
            ra[i] = *reinterpret_cast<const uint4*>(A + (size_t)(row0 + r) * K + k0 + 16 * c);
            rb[i] = *reinterpret_cast<const uint4*>(Bt + (size_t)(col0 + r) * K + k0 + 16 * c);
        }
    };
    auto put = [&](int st) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            int v = tid + i * THREADS, r = v / 4, c = v % 4;
            *reinterpret_cast<uint4*>(&As[st][c][r][0]) = ra[i];
            *reinterpret_cast<uint4*>(&Bs[st][c][r][0]) = rb[i];
        }
    };

    const int ktiles = K / BK;
    fetch(0);
    put(0);
    __syncthreads();
    for (int kt = 0; kt < ktiles; ++kt) {
        const int cur = kt & 1;
        if (kt + 1 < ktiles) fetch((kt + 1) * BK);
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa[4];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb[2];
#pragma unroll
            for (int i = 0; i < 4; ++i) wmma::load_matrix_sync(fa[i], &As[cur][kk][wm * 64 + i * 16][0], 16);
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &Bs[cur][kk][wn * 32 + j * 16][0], 16);
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
        if (kt + 1 < ktiles) put(cur ^ 1);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(D + (size_t)(row0 + wm * 64 + i * 16) * N + col0 + wn * 32 + j * 16, acc[i][j], N,
                                    wmma::mem_row_major);
}

int main() {
    const int M = (int)harness_scaled(3072, BM), N = (int)harness_scaled(3072, BN);
    const int K = (int)harness_scaled(2048, BK);
    std::vector<int> tmp;
    std::vector<signed char> A((size_t)M * K), Bt((size_t)N * K);
    tmp.resize(A.size());
    harness_fill_int(tmp.data(), tmp.size(), -128, 127);
    for (size_t i = 0; i < A.size(); ++i) A[i] = (signed char)tmp[i];
    tmp.resize(Bt.size());
    harness_fill_int(tmp.data(), tmp.size(), -128, 127);
    for (size_t i = 0; i < Bt.size(); ++i) Bt[i] = (signed char)tmp[i];
    std::vector<int> D((size_t)M * N);

    signed char *d_A, *d_Bt;
    int* d_D;
    CUDA_CHECK(cudaMalloc(&d_A, A.size()));
    CUDA_CHECK(cudaMalloc(&d_Bt, Bt.size()));
    CUDA_CHECK(cudaMalloc(&d_D, D.size() * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_A, A.data(), A.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_Bt, Bt.data(), Bt.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_D, 0, D.size() * sizeof(int)));

    dim3 grid(N / BN, M / BM), block(THREADS);  // 24 x 24 = 576 blocks (unscaled)
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start, 0));
    harness_timed("wmma_gemm_s8", [&] {
        wmma_gemm_s8<<<grid, block, 0, 0>>>(M, N, K, d_A, d_Bt, d_D);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("PROGRAM_TIME wmma_gemm_s8 %.4f\n", (double)ms);
    CUDA_CHECK(cudaMemcpy(D.data(), d_D, D.size() * sizeof(int), cudaMemcpyDeviceToHost));

    // Integer products: the sampled check is exact. One element per 16x16 fragment of the
    // first block tile, then random ones.
    uint64_t pick = 0xA0761D6478BD642Full;
    for (int s = 0; s < 64 + 4096; ++s) {
        pick = pick * 6364136223846793005ull + 1442695040888963407ull;
        int i, j;
        if (s < 64) {
            i = (s / 8) * 16 + (int)((pick >> 40) % 16);
            j = (s % 8) * 16 + (int)((pick >> 20) % 16);
        } else {
            i = (int)((pick >> 33) % (uint64_t)M);
            j = (int)((pick >> 11) % (uint64_t)N);
        }
        long long want = 0;
        for (int k = 0; k < K; ++k) want += (int)A[(size_t)i * K + k] * (int)Bt[(size_t)j * K + k];
        if (D[(size_t)i * N + j] != want)
            return harness_fail("D[%d][%d] = %d, want %lld", i, j, D[(size_t)i * N + j], want);
    }
    harness_dump("D", D.data(), D.size());
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_A));
    CUDA_CHECK(cudaFree(d_Bt));
    CUDA_CHECK(cudaFree(d_D));
    return harness_pass();
}
