// slatec-test: harness
// Tile-templated WMMA fp16 GEMMs with half output (warp-staged epilogue): 128x256 tiles in 53 KB opted in through a const void* handle, 64x64 tiles for a skinny GEMM; occupancy checks; events around both.
#include "harness.h"

#include <cuda_fp16.h>
#include <mma.h>

#include <vector>

using namespace nvcuda;

#define BK 32
#define PAD 8  // halves per shared row

template <int BM, int BN, int WARPS_M, int WARPS_N>
struct TileCfg {
    static constexpr int threads = 32 * WARPS_M * WARPS_N;
    static constexpr int a_stride = BK + PAD, b_stride = BN + PAD;
    static constexpr int a_stage = BM * a_stride, b_stage = BK * b_stride;  // halves
    static constexpr int smem_bytes = 2 * (a_stage + b_stage) * (int)sizeof(__half);
    static constexpr int fm = BM / WARPS_M / 16, fn = BN / WARPS_N / 16;  // fragments per warp
    static constexpr int a_chunks = BM * BK / 8 / threads, b_chunks = BK * BN / 8 / threads;
    static_assert(a_chunks * threads * 8 == BM * BK && b_chunks * threads * 8 == BK * BN, "tile/threads");
};

// D (M x N, half) = A (M x K, half) * B (K x N, half), float accumulation, all row-major;
// M % BM == N % BN == K % BK == 0. Two shared stages filled through registers; the
// epilogue goes fragment by fragment through a 16x16 float scratch per warp.
template <int BM, int BN, int WARPS_M, int WARPS_N>
__global__ void __launch_bounds__(32 * WARPS_M * WARPS_N)
wmma_gemm_f16_tiles(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
                    __half* __restrict__ D) {
    typedef TileCfg<BM, BN, WARPS_M, WARPS_N> C;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __shared__ __align__(32) float scratch[WARPS_M * WARPS_N][16 * 16];
    __half* As = reinterpret_cast<__half*>(smem_raw);
    __half* Bs = As + 2 * C::a_stage;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[C::fm][C::fn];
#pragma unroll
    for (int i = 0; i < C::fm; ++i)
#pragma unroll
        for (int j = 0; j < C::fn; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    uint4 ra[C::a_chunks], rb[C::b_chunks];
    const int ktiles = K / BK;
    for (int kt = -1; kt < ktiles; ++kt) {
        if (kt + 1 < ktiles) {
            const int k0 = (kt + 1) * BK;
#pragma unroll
            for (int i = 0; i < C::a_chunks; ++i) {
                int v = tid + i * C::threads;
                ra[i] = *reinterpret_cast<const uint4*>(A + (size_t)(row0 + v / (BK / 8)) * K + k0 + (v % (BK / 8)) * 8);
            }
#pragma unroll
            for (int i = 0; i < C::b_chunks; ++i) {
                int v = tid + i * C::threads;
                rb[i] = *reinterpret_cast<const uint4*>(B + (size_t)(k0 + v / (BN / 8)) * N + col0 + (v % (BN / 8)) * 8);
            }
        }
        if (kt >= 0) {
            const __half* as = As + (kt & 1) * C::a_stage + (wm * C::fm * 16) * C::a_stride;
            const __half* bs = Bs + (kt & 1) * C::b_stage + wn * C::fn * 16;
#pragma unroll
            for (int kk = 0; kk < BK; kk += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[C::fm];
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[C::fn];
#pragma unroll
                for (int i = 0; i < C::fm; ++i) wmma::load_matrix_sync(fa[i], as + (i * 16) * C::a_stride + kk, C::a_stride);
#pragma unroll
                for (int j = 0; j < C::fn; ++j) wmma::load_matrix_sync(fb[j], bs + kk * C::b_stride + j * 16, C::b_stride);
#pragma unroll
                for (int i = 0; i < C::fm; ++i)
#pragma unroll
                    for (int j = 0; j < C::fn; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
            }
        }
        if (kt + 1 < ktiles) {
            const int st = (kt + 1) & 1;
#pragma unroll
            for (int i = 0; i < C::a_chunks; ++i) {
                int v = tid + i * C::threads;
                *reinterpret_cast<uint4*>(As + st * C::a_stage + (v / (BK / 8)) * C::a_stride + (v % (BK / 8)) * 8) = ra[i];
            }
#pragma unroll
            for (int i = 0; i < C::b_chunks; ++i) {
                int v = tid + i * C::threads;
                *reinterpret_cast<uint4*>(Bs + st * C::b_stage + (v / (BN / 8)) * C::b_stride + (v % (BN / 8)) * 8) = rb[i];
            }
        }
        __syncthreads();
    }

    // Epilogue: each 16x16 float fragment goes through the warp's scratch; each lane then
    // converts 8 consecutive elements of one row and writes them as one 16-byte store.
    float* sc = scratch[warp];
#pragma unroll
    for (int i = 0; i < C::fm; ++i)
#pragma unroll
        for (int j = 0; j < C::fn; ++j) {
            wmma::store_matrix_sync(sc, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            const int r = lane / 2, c = (lane % 2) * 8;
            __align__(16) __half h[8];
#pragma unroll
            for (int e = 0; e < 8; ++e) h[e] = __float2half_rn(sc[r * 16 + c + e]);
            const int gr = row0 + wm * C::fm * 16 + i * 16 + r, gc = col0 + wn * C::fn * 16 + j * 16 + c;
            *reinterpret_cast<uint4*>(D + (size_t)gr * N + gc) = *reinterpret_cast<const uint4*>(h);
            __syncwarp();  // the scratch is rewritten by the next fragment
        }
}

typedef TileCfg<128, 256, 2, 4> BigCfg;   // 256 threads, 54272 bytes of dynamic shared memory
typedef TileCfg<64, 64, 2, 2> SmallCfg;   // 128 threads, 19456 bytes

static bool check_sample(const char* name, const std::vector<__half>& A, const std::vector<__half>& B,
                         const std::vector<__half>& D, int M, int N, int K, uint64_t pick) {
    for (int s = 0; s < 3000; ++s) {
        pick = pick * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((pick >> 33) % (uint64_t)M), j = (int)((pick >> 11) % (uint64_t)N);
        if (s < 4) { i = s < 2 ? 0 : M - 1; j = (s & 1) ? N - 1 : 0; }
        double acc = 0, mag = 0;
        for (int k = 0; k < K; ++k) {
            double p = (double)__half2float(A[(size_t)i * K + k]) * (double)__half2float(B[(size_t)k * N + j]);
            acc += p;
            mag += std::fabs(p);
        }
        double got = __half2float(D[(size_t)i * N + j]);
        if (!(std::fabs(got - acc) <= 1e-3 * mag + 1e-3 * std::fabs(acc) + 1e-4)) {
            std::printf("%s[%d][%d] = %.6g, want %.6g\n", name, i, j, got, acc);
            return false;
        }
    }
    return true;
}

static void fill_half(std::vector<__half>& v, float lo, float hi) {
    std::vector<float> t(v.size());
    harness_fill_float(t.data(), t.size(), lo, hi);
    for (size_t i = 0; i < v.size(); ++i) v[i] = __float2half(t[i]);
}

int main() {
    // A wide GEMM for the big tiles, a skinny one (few output tiles, long K) for the small.
    const int M1 = (int)harness_scaled(4096, 128), N1 = (int)harness_scaled(2048, 256), K1 = (int)harness_scaled(1024, BK);
    const int M2 = (int)harness_scaled(512, 64), N2 = (int)harness_scaled(768, 64), K2 = (int)harness_scaled(4096, BK);
    std::vector<__half> A1((size_t)M1 * K1), B1((size_t)K1 * N1), D1((size_t)M1 * N1);
    std::vector<__half> A2((size_t)M2 * K2), B2((size_t)K2 * N2), D2((size_t)M2 * N2);
    fill_half(A1, -1.0f, 1.0f);
    fill_half(B1, -1.0f, 1.0f);
    fill_half(A2, -0.5f, 0.5f);
    fill_half(B2, -0.5f, 0.5f);
    __half *d_A1, *d_B1, *d_D1, *d_A2, *d_B2, *d_D2;
    CUDA_CHECK(cudaMalloc(&d_A1, A1.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_B1, B1.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_D1, D1.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_A2, A2.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_B2, B2.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_D2, D2.size() * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(d_A1, A1.data(), A1.size() * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_B1, B1.data(), B1.size() * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_A2, A2.data(), A2.size() * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_B2, B2.data(), B2.size() * sizeof(__half), cudaMemcpyHostToDevice));

    // The big configuration needs > 48 KB: opt in through the untyped handle, as table-driven
    // dispatchers do, then make sure both configurations can be resident at all.
    const void* big = (const void*)wmma_gemm_f16_tiles<128, 256, 2, 4>;
    const void* small = (const void*)wmma_gemm_f16_tiles<64, 64, 2, 2>;
    CUDA_CHECK(cudaFuncSetAttribute(big, cudaFuncAttributeMaxDynamicSharedMemorySize, BigCfg::smem_bytes));
    int occ_big = 0, occ_small = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_big, big, BigCfg::threads, BigCfg::smem_bytes));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_small, small, SmallCfg::threads, SmallCfg::smem_bytes));
    if (occ_big < 1 || occ_small < 1) return harness_fail("occupancy %d / %d blocks per SM", occ_big, occ_small);

    dim3 grid1(N1 / 256, M1 / 128);  // 8 x 32 = 256 blocks (unscaled)
    dim3 grid2(N2 / 64, M2 / 64);    // 12 x 8 = 96 blocks
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start, 0));
    harness_timed("wmma_f16_tiles_big", [&] {
        wmma_gemm_f16_tiles<128, 256, 2, 4><<<grid1, BigCfg::threads, BigCfg::smem_bytes, 0>>>(M1, N1, K1, d_A1, d_B1, d_D1);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("wmma_f16_tiles_small", [&] {
        wmma_gemm_f16_tiles<64, 64, 2, 2><<<grid2, SmallCfg::threads, SmallCfg::smem_bytes, 0>>>(M2, N2, K2, d_A2, d_B2, d_D2);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("PROGRAM_TIME wmma_gemm_f16_tiles %.4f\n", (double)ms);
    CUDA_CHECK(cudaMemcpy(D1.data(), d_D1, D1.size() * sizeof(__half), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(D2.data(), d_D2, D2.size() * sizeof(__half), cudaMemcpyDeviceToHost));

    if (!check_sample("D1", A1, B1, D1, M1, N1, K1, 0x243F6A8885A308D3ull)) return harness_fail("big-tile GEMM");
    if (!check_sample("D2", A2, B2, D2, M2, N2, K2, 0x13198A2E03707344ull)) return harness_fail("small-tile GEMM");
    // Dumped as raw 16-bit patterns packed two per u32 (the dump format has no half type).
    harness_dump("D1_bits", reinterpret_cast<const unsigned*>(D1.data()), D1.size() / 2);
    harness_dump("D2_bits", reinterpret_cast<const unsigned*>(D2.data()), D2.size() / 2);
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_A1));
    CUDA_CHECK(cudaFree(d_B1));
    CUDA_CHECK(cudaFree(d_D1));
    CUDA_CHECK(cudaFree(d_A2));
    CUDA_CHECK(cudaFree(d_B2));
    CUDA_CHECK(cudaFree(d_D2));
    return harness_pass();
}
