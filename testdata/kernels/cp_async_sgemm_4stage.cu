// slatec-test: harness
// 4-stage cp.async pipelined SGEMM: inline PTX cp.async.ca/.cg.shared.global, commit_group and wait_group, 64x64x16 tiles; one event-timed launch.
#include "harness.h"

#include <vector>

#define BM 64
#define BN 64
#define BK 16
#define STAGES 4
#define THREADS 256
#define A_STRIDE (BK + 4)  // floats: 80-byte rows keep every 16-byte copy aligned
#define B_STRIDE (BN + 4)  // 272-byte rows
#define A_STAGE (BM * A_STRIDE)
#define B_STAGE (BK * B_STRIDE)
#define SMEM_BYTES (STAGES * (A_STAGE + B_STAGE) * (int)sizeof(float))  // 37888 bytes

__device__ __forceinline__ void cp_async_ca16(void* smem, const void* gmem) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}

__device__ __forceinline__ void cp_async_cg16(void* smem, const void* gmem) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// D = alpha * A * B + beta * C; A: M x K, B: K x N, C and D: M x N, row-major.
// Each thread computes a 4x4 patch of the 64x64 block tile.
__global__ void __launch_bounds__(THREADS)
sgemm_cp_async(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
               float beta, const float* __restrict__ C, float* __restrict__ D) {
    extern __shared__ __align__(16) float smem[];
    float* As = smem;                     // [STAGES][BM][A_STRIDE]
    float* Bs = smem + STAGES * A_STAGE;  // [STAGES][BK][B_STRIDE]
    const int tid = threadIdx.x;
    const int ty = tid / 16, tx = tid % 16;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    // One 16-byte chunk of A (64 rows x 4 chunks) and one of B (16 rows x 16 chunks) per thread.
    const int ar = tid / 4, ac = (tid % 4) * 4;
    const int br = tid / 16, bc = (tid % 16) * 4;
    const int ktiles = K / BK;

    // Prologue: slabs 0 .. STAGES-2 in flight, one commit group each.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) {
            cp_async_ca16(As + s * A_STAGE + ar * A_STRIDE + ac, A + (size_t)(row0 + ar) * K + s * BK + ac);
            cp_async_cg16(Bs + s * B_STAGE + br * B_STRIDE + bc, B + (size_t)(s * BK + br) * N + col0 + bc);
        }
        cp_async_commit();
    }

    float acc[4][4] = {};
    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<STAGES - 2>();  // this thread's copies of slab kt are done
        __syncthreads();              // everyone's are; slab kt-1 is no longer read
        const int nk = kt + STAGES - 1;
        if (nk < ktiles) {
            const int st = nk % STAGES;
            cp_async_ca16(As + st * A_STAGE + ar * A_STRIDE + ac, A + (size_t)(row0 + ar) * K + nk * BK + ac);
            cp_async_cg16(Bs + st * B_STAGE + br * B_STRIDE + bc, B + (size_t)(nk * BK + br) * N + col0 + bc);
        }
        cp_async_commit();  // an empty group past the end keeps the wait count uniform

        const float* as = As + (kt % STAGES) * A_STAGE;
        const float* bs = Bs + (kt % STAGES) * B_STAGE;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[4];
#pragma unroll
            for (int r = 0; r < 4; ++r) a[r] = as[(ty * 4 + r) * A_STRIDE + k];
            const float4 b = *reinterpret_cast<const float4*>(bs + k * B_STRIDE + tx * 4);
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                acc[r][0] += a[r] * b.x;
                acc[r][1] += a[r] * b.y;
                acc[r][2] += a[r] * b.z;
                acc[r][3] += a[r] * b.w;
            }
        }
    }
    cp_async_wait<0>();

#pragma unroll
    for (int r = 0; r < 4; ++r) {
        const size_t off = (size_t)(row0 + ty * 4 + r) * N + col0 + tx * 4;
        const float4 c = *reinterpret_cast<const float4*>(C + off);
        float4 d;
        d.x = alpha * acc[r][0] + beta * c.x;
        d.y = alpha * acc[r][1] + beta * c.y;
        d.z = alpha * acc[r][2] + beta * c.z;
        d.w = alpha * acc[r][3] + beta * c.w;
        *reinterpret_cast<float4*>(D + off) = d;
    }
}

int main() {
    const int M = (int)harness_scaled(1536, BM), N = (int)harness_scaled(1536, BN);
    const int K = (int)harness_scaled(1024, BK);
    const float alpha = 1.25f, beta = 0.5f;
    std::vector<float> A((size_t)M * K), B((size_t)K * N), C((size_t)M * N), D((size_t)M * N);
    harness_fill_float(A.data(), A.size(), -1.0f, 1.0f);
    harness_fill_float(B.data(), B.size(), -1.0f, 1.0f);
    harness_fill_float(C.data(), C.size(), -1.0f, 1.0f);
    float *d_A, *d_B, *d_C, *d_D;
    CUDA_CHECK(cudaMalloc(&d_A, A.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_B, B.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_C, C.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_D, D.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_A, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_B, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_C, C.data(), C.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_D, 0, D.size() * sizeof(float)));

    dim3 grid(N / BN, M / BM), block(THREADS);  // 24 x 24 = 576 blocks (unscaled)
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start, 0));
    harness_timed("sgemm_cp_async", [&] {
        sgemm_cp_async<<<grid, block, SMEM_BYTES, 0>>>(M, N, K, alpha, d_A, d_B, beta, d_C, d_D);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("PROGRAM_TIME sgemm_cp_async_4stage %.4f\n", (double)ms);
    CUDA_CHECK(cudaMemcpy(D.data(), d_D, D.size() * sizeof(float), cudaMemcpyDeviceToHost));

    uint64_t pick = 0x94D049BB133111EBull;
    for (int s = 0; s < 4096; ++s) {
        pick = pick * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((pick >> 33) % (uint64_t)M), j = (int)((pick >> 11) % (uint64_t)N);
        if (s < 4) { i = s < 2 ? 0 : M - 1; j = (s & 1) ? N - 1 : 0; }
        double acc = 0, mag = 0;
        for (int k = 0; k < K; ++k) {
            double p = (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
            acc += p;
            mag += std::fabs(p);
        }
        double c = C[(size_t)i * N + j];
        double want = alpha * acc + beta * c, got = D[(size_t)i * N + j];
        if (!(std::fabs(got - want) <= 1e-4 * (std::fabs(alpha) * mag + std::fabs(c)) + 1e-6))
            return harness_fail("D[%d][%d] = %.9g, want %.9g", i, j, got, want);
    }
    harness_dump("D", D.data(), D.size());
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_A));
    CUDA_CHECK(cudaFree(d_B));
    CUDA_CHECK(cudaFree(d_C));
    CUDA_CHECK(cudaFree(d_D));
    return harness_pass();
}
