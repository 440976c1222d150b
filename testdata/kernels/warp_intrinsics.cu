// slatec-test: harness
// Warp intrinsics: __ballot_sync/__any_sync/__all_sync/__popc votes, shuffle down/xor/up reductions and scans, __activemask after a return.
#include "harness.h"

#include <algorithm>
#include <vector>

#define FULL 0xffffffffu

// Per-warp vote statistics; lanes past n vote with v = 0 (no early exit, full masks).
__global__ void warp_votes(const int* in, unsigned* ballots, int* stats, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    unsigned b = __ballot_sync(FULL, v > 0);
    int any_big = __any_sync(FULL, v > 95);
    int all_nonneg = __all_sync(FULL, v >= 0);
    if ((threadIdx.x & 31) == 0) {
        int w = i / 32;
        ballots[w] = b;
        stats[3 * w] = __popc(b);
        stats[3 * w + 1] = any_big;
        stats[3 * w + 2] = all_nonneg;
    }
}

// Warp sum two ways (tree with shfl_down, butterfly with shfl_xor) and an inclusive scan
// with shfl_up. Output per thread: butterfly total * 1000 + scan; lane 0 adds the tree total.
__global__ void warp_sums(const int* in, int* out, int* tree, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = i < n ? in[i] : 0;
    int t = v;
    for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(FULL, t, off);
    int b = v;
    for (int mask = 1; mask < 32; mask <<= 1) b += __shfl_xor_sync(FULL, b, mask);
    int s = v;
    for (int off = 1; off < 32; off <<= 1) {
        int up = __shfl_up_sync(FULL, s, off);
        if (lane >= off) s += up;
    }
    if (i < n) out[i] = b * 1000 + s;
    if (lane == 0) tree[i / 32] = t;
}

// After the early return only live lanes remain: __activemask() names them, and one
// atomic per warp reserves output slots for all of them (warp-aggregated atomics).
// Correct for whatever subset of lanes __activemask() reports.
__global__ void compact_live(const int* in, int* out, unsigned* counter, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned m = __activemask();
    int lane = threadIdx.x & 31;
    int leader = __ffs(m) - 1;
    unsigned base = 0;
    if (lane == leader) base = atomicAdd(counter, (unsigned)__popc(m));
    base = __shfl_sync(m, base, leader);
    unsigned rank = __popc(m & ((1u << lane) - 1));
    out[base + rank] = in[i];
}

int main() {
    const int n = (int)harness_scaled(1000017 / 32) * 32 + 1000017 % 32;  // the last warp is partial
    const int block = 256, grid = (n + block - 1) / block;  // 3907 blocks
    const int nwarps = grid * block / 32;
    std::vector<int> in(n), stats(3 * nwarps), sums(n), tree(nwarps), compact(n);
    std::vector<unsigned> ballots(nwarps);
    harness_fill_int(in.data(), n, -3, 96);
    int *d_in, *d_stats, *d_sums, *d_tree, *d_compact;
    unsigned *d_ballots, *d_counter;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_stats, stats.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sums, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_tree, nwarps * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_compact, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_ballots, nwarps * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&d_counter, sizeof(unsigned)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    harness_timed("warp_votes", [&] {
        warp_votes<<<grid, block>>>(d_in, d_ballots, d_stats, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("warp_sums", [&] {
        warp_sums<<<grid, block>>>(d_in, d_sums, d_tree, n);
        CUDA_CHECK(cudaGetLastError());
    });
    // The counter must start at zero on every run (it indexes d_compact): the memset is
    // inside the timed region.
    harness_timed("memset+compact_live", [&] {
        CUDA_CHECK(cudaMemsetAsync(d_counter, 0, sizeof(unsigned)));
        compact_live<<<grid, block>>>(d_in, d_compact, d_counter, n);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    unsigned counter = 0;
    CUDA_CHECK(cudaMemcpy(ballots.data(), d_ballots, nwarps * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(stats.data(), d_stats, stats.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(tree.data(), d_tree, nwarps * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(compact.data(), d_compact, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&counter, d_counter, sizeof counter, cudaMemcpyDeviceToHost));

    std::vector<unsigned> want_b(nwarps);
    std::vector<int> want_stats(3 * nwarps), want_sums(n), want_tree(nwarps);
    for (int w = 0; w < nwarps; ++w) {
        unsigned b = 0;
        int any = 0, all = 1, total = 0;
        for (int l = 0; l < 32; ++l) {
            int i = w * 32 + l, v = i < n ? in[i] : 0;
            b |= (v > 0 ? 1u : 0u) << l;
            any |= v > 95;
            all &= v >= 0;
            total += v;
        }
        want_b[w] = b;
        want_stats[3 * w] = __builtin_popcount(b);
        want_stats[3 * w + 1] = any;
        want_stats[3 * w + 2] = all;
        want_tree[w] = total;
        int scan = 0;
        for (int l = 0; l < 32 && w * 32 + l < n; ++l) {
            scan += in[w * 32 + l];
            want_sums[w * 32 + l] = total * 1000 + scan;
        }
    }
    if (!harness_equal("ballots", ballots.data(), want_b.data(), nwarps)) return harness_fail("ballot");
    if (!harness_equal("stats", stats.data(), want_stats.data(), stats.size())) return harness_fail("votes");
    if (!harness_equal("sums", sums.data(), want_sums.data(), n)) return harness_fail("warp_sums");
    if (!harness_equal("tree", tree.data(), want_tree.data(), nwarps)) return harness_fail("tree sums");
    // Slot order depends on warp scheduling: compare as multisets.
    std::vector<int> sorted_in = in;
    std::sort(sorted_in.begin(), sorted_in.end());
    std::sort(compact.begin(), compact.end());
    if (counter != (unsigned)n) return harness_fail("counter %u, want %d", counter, n);
    if (!harness_equal("compact", compact.data(), sorted_in.data(), n)) return harness_fail("compact_live");
    harness_dump("ballots", ballots.data(), nwarps);
    harness_dump("stats", stats.data(), stats.size());
    harness_dump("sums", sums.data(), n);
    harness_dump("tree", tree.data(), nwarps);
    harness_dump("compact_sorted", compact.data(), n);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_stats));
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_tree));
    CUDA_CHECK(cudaFree(d_compact));
    CUDA_CHECK(cudaFree(d_ballots));
    CUDA_CHECK(cudaFree(d_counter));
    return harness_pass();
}
