// slatec-test: harness
// Two-pass reductions on grids smaller than one wave (64 blocks of 1024, 100 blocks of 256): grid-stride loops, warp shuffles + shared memory; events around the passes.
#include "harness.h"

#include <climits>
#include <vector>

#define FULL 0xffffffffu

// Pass 1 (float): each thread sums float4s at a grid stride, in a fixed order; the block
// folds its warps' sums. partial[blockIdx.x] = the block's sum.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
sum_pass1(const float4* __restrict__ x, long long n4, float* __restrict__ partial) {
    __shared__ float warp_sums[BLOCK / 32];
    float s = 0.0f;
    for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n4; i += (long long)gridDim.x * BLOCK) {
        const float4 v = x[i];
        s += (v.x + v.y) + (v.z + v.w);
    }
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(FULL, s, off);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(FULL, s, off);
        if (threadIdx.x == 0) partial[blockIdx.x] = s;
    }
}

// Pass 2 (float): one block folds the per-block partials.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) sum_pass2(const float* __restrict__ partial, int n, float* __restrict__ out) {
    __shared__ float warp_sums[BLOCK / 32];
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += BLOCK) s += partial[i];
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(FULL, s, off);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int w = 0; w < BLOCK / 32; ++w) t += warp_sums[w];
        *out = t;
    }
}

struct Stats {
    long long sum;
    int mn, mx;
};

__device__ __forceinline__ Stats warp_stats(Stats s) {
    for (int off = 16; off > 0; off >>= 1) {
        s.sum += __shfl_down_sync(FULL, s.sum, off);
        s.mn = min(s.mn, __shfl_down_sync(FULL, s.mn, off));
        s.mx = max(s.mx, __shfl_down_sync(FULL, s.mx, off));
    }
    return s;
}

// Pass 1 (int): sum, min and max, blockDim.x threads per block (a multiple of 32, <= 1024),
// block-stride loop starting at the block's first element.
__global__ void stats_pass1(const int* __restrict__ v, long long n, Stats* __restrict__ partial) {
    __shared__ Stats warp_part[32];
    Stats s = {0, INT_MAX, INT_MIN};
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int a = v[i];
        s.sum += a;
        s.mn = min(s.mn, a);
        s.mx = max(s.mx, a);
    }
    s = warp_stats(s);
    const int nwarps = blockDim.x / 32;
    if (threadIdx.x % 32 == 0) warp_part[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        Stats t = {0, INT_MAX, INT_MIN};
        if ((int)threadIdx.x < nwarps) t = warp_part[threadIdx.x];
        t = warp_stats(t);
        if (threadIdx.x == 0) partial[blockIdx.x] = t;
    }
}

// Pass 2 (int): one warp folds the partials.
__global__ void stats_pass2(const Stats* __restrict__ partial, int n, Stats* __restrict__ out) {
    Stats s = {0, INT_MAX, INT_MIN};
    for (int i = threadIdx.x; i < n; i += 32) {
        s.sum += partial[i].sum;
        s.mn = min(s.mn, partial[i].mn);
        s.mx = max(s.mx, partial[i].mx);
    }
    s = warp_stats(s);
    if (threadIdx.x == 0) *out = s;
}

int main() {
    const long long n = harness_scaled(1 << 24, 4);   // floats
    const long long ni = harness_scaled(12000037);     // ints (odd count: ragged last stride)
    const int fblocks = 64, iblocks = 100;           // both below one wave on 132 SMs
    std::vector<float> x(n);
    std::vector<int> v(ni);
    harness_fill_float(x.data(), n, -1.0f, 1.0f);
    harness_fill_int(v.data(), ni, -1000000, 1000000);
    float *d_x, *d_partial, *d_sum;
    int* d_v;
    Stats *d_ipartial, *d_stats;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_partial, fblocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_sum, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_v, ni * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_ipartial, iblocks * sizeof(Stats)));
    CUDA_CHECK(cudaMalloc(&d_stats, sizeof(Stats)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_v, v.data(), ni * sizeof(int), cudaMemcpyHostToDevice));

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start, 0));
    harness_timed("sum_two_pass", [&] {
        sum_pass1<1024><<<fblocks, 1024, 0, 0>>>(reinterpret_cast<const float4*>(d_x), n / 4, d_partial);
        sum_pass2<64><<<1, 64, 0, 0>>>(d_partial, fblocks, d_sum);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("stats_two_pass", [&] {
        stats_pass1<<<iblocks, 256, 0, 0>>>(d_v, ni, d_ipartial);
        stats_pass2<<<1, 32, 0, 0>>>(d_ipartial, iblocks, d_stats);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("PROGRAM_TIME reduce_small_grid %.4f\n", (double)ms);

    std::vector<float> partial(fblocks);
    float sum = 0.0f;
    std::vector<Stats> ipartial(iblocks);
    Stats stats;
    CUDA_CHECK(cudaMemcpy(partial.data(), d_partial, fblocks * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&sum, d_sum, sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(ipartial.data(), d_ipartial, iblocks * sizeof(Stats), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&stats, d_stats, sizeof(Stats), cudaMemcpyDeviceToHost));

    // Float: each block's partial against a double sum of the float4s it owns.
    const long long n4 = n / 4;
    double total = 0, total_mag = 0;
    for (int b = 0; b < fblocks; ++b) {
        double s = 0, mag = 0;
        for (long long i = (long long)b * 1024; i < n4; i += (long long)fblocks * 1024)
            for (long long t = i; t < i + 1024 && t < n4; ++t)
                for (int c = 0; c < 4; ++c) {
                    s += x[4 * t + c];
                    mag += std::fabs(x[4 * t + c]);
                }
        if (!(std::fabs(partial[b] - s) <= 1e-5 * mag + 1e-6))
            return harness_fail("partial[%d] = %.9g, want %.9g", b, (double)partial[b], s);
        total += s;
        total_mag += mag;
    }
    if (!(std::fabs(sum - total) <= 1e-5 * total_mag + 1e-6)) return harness_fail("sum = %.9g, want %.9g", (double)sum, total);
    // Int: exact.
    long long want_sum = 0;
    int want_mn = INT_MAX, want_mx = INT_MIN;
    for (long long i = 0; i < ni; ++i) {
        want_sum += v[i];
        want_mn = std::min(want_mn, v[i]);
        want_mx = std::max(want_mx, v[i]);
    }
    if (stats.sum != want_sum || stats.mn != want_mn || stats.mx != want_mx)
        return harness_fail("stats %lld %d %d, want %lld %d %d", stats.sum, stats.mn, stats.mx, want_sum, want_mn, want_mx);

    std::vector<long long> isums(iblocks);
    std::vector<int> imins(iblocks), imaxs(iblocks);
    for (int b = 0; b < iblocks; ++b) {
        isums[b] = ipartial[b].sum;
        imins[b] = ipartial[b].mn;
        imaxs[b] = ipartial[b].mx;
    }
    long long result[3] = {stats.sum, stats.mn, stats.mx};
    harness_dump("partial", partial.data(), fblocks);
    harness_dump("sum", &sum, 1);
    harness_dump("ipartial_sum", isums.data(), iblocks);
    harness_dump("ipartial_min", imins.data(), iblocks);
    harness_dump("ipartial_max", imaxs.data(), iblocks);
    harness_dump("stats", result, 3);
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_partial));
    CUDA_CHECK(cudaFree(d_sum));
    CUDA_CHECK(cudaFree(d_v));
    CUDA_CHECK(cudaFree(d_ipartial));
    CUDA_CHECK(cudaFree(d_stats));
    return harness_pass();
}
