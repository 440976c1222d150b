// slatec-test: harness
// Stream compaction two ways: warp-aggregated atomics (order varies: compared sorted) and a deterministic count/scan/scatter.
#include "harness.h"

#include <algorithm>
#include <vector>

#define B 256
#define FULL 0xffffffffu

__device__ __forceinline__ unsigned lanemask_lt() { return (1u << (threadIdx.x & 31)) - 1; }

// One atomic per warp reserves room for all of its kept elements.
__global__ void compact_atomic(const int* in, int* out, unsigned* count, int n, int threshold) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool keep = i < n && in[i] > threshold;
    unsigned m = __ballot_sync(FULL, keep);
    if (m == 0) return;  // warp-uniform: nothing to write
    int leader = __ffs(m) - 1;
    unsigned base = 0;
    if ((int)(threadIdx.x & 31) == leader) base = atomicAdd(count, (unsigned)__popc(m));
    base = __shfl_sync(FULL, base, leader);
    if (keep) out[base + __popc(m & lanemask_lt())] = in[i];
}

// Pass 1: how many elements each block keeps.
__global__ void count_kept(const int* in, int* block_counts, int n, int threshold) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int kept = __syncthreads_count(i < n && in[i] > threshold);
    if (threadIdx.x == 0) block_counts[blockIdx.x] = kept;
}

// Pass 2: scatter in input order, given each block's exclusive offset.
__global__ void scatter_kept(const int* in, int* out, const int* block_offsets, int n, int threshold) {
    __shared__ int warp_base[B / 32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, wid = threadIdx.x / 32;
    bool keep = i < n && in[i] > threshold;
    unsigned m = __ballot_sync(FULL, keep);
    if (lane == 0) warp_base[wid] = __popc(m);
    __syncthreads();
    if (threadIdx.x == 0) {
        int acc = 0;
        for (int w = 0; w < B / 32; ++w) {
            int c = warp_base[w];
            warp_base[w] = acc;
            acc += c;
        }
    }
    __syncthreads();
    if (keep) out[block_offsets[blockIdx.x] + warp_base[wid] + __popc(m & lanemask_lt())] = in[i];
}

int main() {
    const int n = (int)harness_scaled(1500011 / B) * B + 1500011 % B, threshold = 600;  // 1500011 unscaled
    const int grid = (n + B - 1) / B;  // 5860 blocks
    std::vector<int> in(n), counts(grid), offsets(grid);
    harness_fill_int(in.data(), n, 0, 999);
    int *d_in, *d_out1, *d_out2, *d_counts, *d_offsets;
    unsigned* d_count;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out1, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out2, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_counts, grid * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_offsets, grid * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_count, sizeof(unsigned)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    // The counter must start at zero on every run (it indexes d_out1): the memset is
    // inside the timed region.
    harness_timed("memset+compact_atomic", [&] {
        CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(unsigned)));
        compact_atomic<<<grid, B>>>(d_in, d_out1, d_count, n, threshold);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("count_kept", [&] {
        count_kept<<<grid, B>>>(d_in, d_counts, n, threshold);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(counts.data(), d_counts, grid * sizeof(int), cudaMemcpyDeviceToHost));
    int total = 0;
    for (int b = 0; b < grid; ++b) {
        offsets[b] = total;
        total += counts[b];
    }
    CUDA_CHECK(cudaMemcpy(d_offsets, offsets.data(), grid * sizeof(int), cudaMemcpyHostToDevice));
    harness_timed("scatter_kept", [&] {
        scatter_kept<<<grid, B>>>(d_in, d_out2, d_offsets, n, threshold);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    unsigned count = 0;
    CUDA_CHECK(cudaMemcpy(&count, d_count, sizeof count, cudaMemcpyDeviceToHost));
    std::vector<int> out1(total), out2(total);
    CUDA_CHECK(cudaMemcpy(out1.data(), d_out1, total * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out2.data(), d_out2, total * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<int> want;
    for (int v : in)
        if (v > threshold) want.push_back(v);
    if ((int)count != (int)want.size() || total != (int)want.size())
        return harness_fail("kept %u / %d, want %zu", count, total, want.size());
    if (!harness_equal("ordered", out2.data(), want.data(), want.size())) return harness_fail("scatter_kept");
    std::sort(out1.begin(), out1.end());
    std::sort(want.begin(), want.end());
    if (!harness_equal("atomic_sorted", out1.data(), want.data(), want.size())) return harness_fail("compact_atomic");
    harness_dump("counts", counts.data(), grid);
    harness_dump("ordered", out2.data(), total);
    harness_dump("atomic_sorted", out1.data(), total);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out1));
    CUDA_CHECK(cudaFree(d_out2));
    CUDA_CHECK(cudaFree(d_counts));
    CUDA_CHECK(cudaFree(d_offsets));
    CUDA_CHECK(cudaFree(d_count));
    return harness_pass();
}
