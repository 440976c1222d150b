// slatec-test: harness
// Monte-Carlo estimate of pi: per-thread xorshift32 RNG, shared-memory block reduction, 64-bit global atomic.
#include "harness.h"

#include <vector>

__host__ __device__ __forceinline__ unsigned xorshift32(unsigned& s) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
}

__host__ __device__ __forceinline__ unsigned seed_for(unsigned gtid, unsigned seed) {
    unsigned s = seed ^ (gtid * 0x9E3779B9u);
    return s ? s : 1u;  // xorshift must not start at zero
}

// Points with 16-bit integer coordinates; the inside test is exact integer math, so the
// host can reproduce every count bit for bit.
__global__ void mc_pi(unsigned* block_hits, unsigned long long* total_hits, int samples, unsigned seed) {
    __shared__ unsigned counts[256];
    const unsigned gtid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned s = seed_for(gtid, seed);
    unsigned inside = 0;
    for (int k = 0; k < samples; ++k) {
        unsigned long long x = xorshift32(s) >> 16, y = xorshift32(s) >> 16;
        inside += (x * x + y * y < 65536ull * 65536ull) ? 1u : 0u;
    }
    counts[threadIdx.x] = inside;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) counts[threadIdx.x] += counts[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        block_hits[blockIdx.x] = counts[0];
        atomicAdd(total_hits, (unsigned long long)counts[0]);
    }
}

int main() {
    const int grid = (int)harness_scaled(2048), block = 256, samples = 64;
    const unsigned seed = (unsigned)harness_rng_u32();
    unsigned* d_block_hits;
    unsigned long long* d_total;
    CUDA_CHECK(cudaMalloc(&d_block_hits, grid * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&d_total, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemset(d_total, 0, sizeof(unsigned long long)));
    // mc_pi adds into d_total: under HARNESS_REPS the checked run starts again from zero.
    harness_timed_reset("mc_pi", [&] {
        mc_pi<<<grid, block>>>(d_block_hits, d_total, samples, seed);
        CUDA_CHECK(cudaGetLastError());
    }, [&] { CUDA_CHECK(cudaMemset(d_total, 0, sizeof(unsigned long long))); });
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> hits(grid);
    unsigned long long total = 0;
    CUDA_CHECK(cudaMemcpy(hits.data(), d_block_hits, grid * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&total, d_total, sizeof total, cudaMemcpyDeviceToHost));

    std::vector<unsigned> want(grid, 0);
    unsigned long long want_total = 0;
    for (unsigned g = 0; g < (unsigned)(grid * block); ++g) {
        unsigned s = seed_for(g, seed);
        for (int k = 0; k < samples; ++k) {
            unsigned long long x = xorshift32(s) >> 16, y = xorshift32(s) >> 16;
            if (x * x + y * y < 65536ull * 65536ull) want[g / block]++;
        }
    }
    for (unsigned h : want) want_total += h;
    if (!harness_equal("block_hits", hits.data(), want.data(), grid)) return harness_fail("block counts");
    if (total != want_total) return harness_fail("total %llu, want %llu", total, want_total);
    double pi = 4.0 * (double)total / ((double)grid * block * samples);
    // 1e-3 for 2048 blocks; a scaled-down run has fewer samples and a larger standard error.
    const double tol = 1e-3 * std::sqrt(2048.0 / grid);
    if (std::fabs(pi - 3.14159265358979) > tol) return harness_fail("pi estimate %.6f", pi);
    harness_dump("block_hits", hits.data(), grid);
    harness_dump("total", &total, 1);
    CUDA_CHECK(cudaFree(d_block_hits));
    CUDA_CHECK(cudaFree(d_total));
    return harness_pass();
}
