// slatec-test: harness
// Bottom-up merge sort: rank-sort of 256-key runs, then merge passes (merge-path co-ranks) in a host loop.
#include "harness.h"

#include <algorithm>
#include <vector>

#define RUN 256    // initial sorted run length == block size of the run sort
#define MTILE 256  // outputs per merge tile == block size of the merge

// Each thread counts how many keys of its run go before its own (stable on ties).
__global__ void sort_runs_rank(const int* in, int* out, int n) {
    __shared__ int s[RUN];
    const int base = blockIdx.x * RUN, t = threadIdx.x;
    const int len = min(RUN, n - base);
    if (t < len) s[t] = in[base + t];
    __syncthreads();
    if (t >= len) return;  // only the last run is short; no barrier follows
    int v = s[t], rank = 0;
    for (int j = 0; j < len; ++j) rank += (s[j] < v) || (s[j] == v && j < t);
    out[base + rank] = v;
}

// How many of the first k outputs of merge(a[0..m), b[0..n)) come from a (a wins ties).
__device__ int co_rank(int k, const int* a, int m, const int* b, int n) {
    int lo = max(0, k - n), hi = min(k, m);
    while (lo < hi) {
        int i = (lo + hi) / 2;
        if (a[i] <= b[k - i - 1]) lo = i + 1;
        else hi = i;
    }
    return lo;
}

// Merges neighbouring runs of length `width` into runs of 2*width. A block loops over
// output tiles; the tile's inputs are staged in shared memory, so barriers sit in the loop.
__global__ void merge_pass(const int* in, int* out, int n, int width) {
    __shared__ int sa[MTILE], sb[MTILE];
    __shared__ int range[4];
    const int ntiles = (n + MTILE - 1) / MTILE;
    for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int o = tile * MTILE;
        const int a0 = o / (2 * width) * (2 * width);
        const int m = min(width, n - a0);
        const int b0 = a0 + m;
        const int nb = max(0, min(width, n - b0));
        const int k0 = o - a0, k1 = min(k0 + MTILE, m + nb);
        if (threadIdx.x == 0) {
            int i0 = co_rank(k0, in + a0, m, in + b0, nb);
            int i1 = co_rank(k1, in + a0, m, in + b0, nb);
            range[0] = i0;
            range[1] = i1;
            range[2] = k0 - i0;
            range[3] = k1 - i1;
        }
        __syncthreads();
        const int la = range[1] - range[0], lb = range[3] - range[2];
        for (int t = threadIdx.x; t < la; t += blockDim.x) sa[t] = in[a0 + range[0] + t];
        for (int t = threadIdx.x; t < lb; t += blockDim.x) sb[t] = in[b0 + range[2] + t];
        __syncthreads();
        for (int t = threadIdx.x; t < la + lb; t += blockDim.x) {
            int i = co_rank(t, sa, la, sb, lb), j = t - i;
            out[o + t] = (j >= lb || (i < la && sa[i] <= sb[j])) ? sa[i] : sb[j];
        }
        __syncthreads();  // sa/sb/range are rewritten for the next tile
    }
}

int main() {
    const int n = (int)harness_scaled(1 << 19, RUN) - 100;  // (1 << 19) - 100 unscaled
    std::vector<int> keys(n), out(n);
    harness_fill_int(keys.data(), n, -100000, 100000);
    int *d_a, *d_b, *d_keys;
    CUDA_CHECK(cudaMalloc(&d_a, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_b, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_keys, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    int passes = 0;
    // The merge passes overwrite the input, and sorted input would merge differently:
    // every run first copies the keys from d_keys (a device copy, timed too).
    harness_timed("copy+sort", [&] {
        CUDA_CHECK(cudaMemcpyAsync(d_a, d_keys, n * sizeof(int), cudaMemcpyDeviceToDevice));
        sort_runs_rank<<<(n + RUN - 1) / RUN, RUN>>>(d_a, d_b, n);  // 2048 blocks
        CUDA_CHECK(cudaGetLastError());
        passes = 0;
        for (int width = RUN; width < n; width *= 2, ++passes) {
            merge_pass<<<1024, MTILE>>>(d_b, d_a, n, width);  // 2048 tiles: two per block
            CUDA_CHECK(cudaGetLastError());
            std::swap(d_a, d_b);
        }
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out.data(), d_b, n * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<int> want = keys;
    std::sort(want.begin(), want.end());
    int want_passes = 0;  // 11 unscaled
    while ((RUN << want_passes) < n) ++want_passes;
    if (passes != want_passes) return harness_fail("expected %d merge passes, ran %d", want_passes, passes);
    if (!harness_equal("sorted", out.data(), want.data(), n)) return harness_fail("merge sort");
    harness_dump("sorted", out.data(), n);
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_keys));
    return harness_pass();
}
