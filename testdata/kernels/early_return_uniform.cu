// slatec-test: harness
// Returns that the whole block takes together (their condition is a block-wide vote) are
// left as returns, beside a tail-block return that is lowered: the block leaves its loop as
// soon as it settles, and the threads past n, inactive since the first return, leave with it.
#include "harness.h"

#include <vector>

#define B 256

// Neighbour averaging until the block settles; the last block is partial, its threads
// past n return first (lowered) and take part in the barriers without data.
__global__ void settle_tail(int* vals, int* iters_used, int n, int max_iters) {
    __shared__ int s[B];
    const int t = threadIdx.x, i = blockIdx.x * B + t;
    if (i >= n) return;
    const int live = min(B, n - (int)(blockIdx.x * B));
    int v = vals[i];
    for (int it = 0; it < max_iters; ++it) {
        s[t] = v;
        __syncthreads();
        int nv = (v + s[(t + 1) % live]) / 3;
        __syncthreads();
        int changed = nv != v;
        v = nv;
        if (__syncthreads_count(changed) == 0) {
            vals[i] = v;
            if (t == 0) iters_used[blockIdx.x] = it + 1;
            return;
        }
    }
    vals[i] = v;
    if (t == 0) iters_used[blockIdx.x] = -1;  // did not settle
}

int main() {
    const int n = (int)harness_scaled(1800) * B + 77;
    const int grid = (n + B - 1) / B;
    const int max_iters = 48;
    std::vector<int> vals(n), out(n), iters(grid);
    harness_fill_int(vals.data(), n, -1000000, 1000000);
    // Some blocks start settled (all zero): they leave after one round.
    for (int b = 0; b < grid; b += 7)
        for (int i = b * B; i < std::min(n, (b + 1) * B); ++i) vals[i] = 0;
    int *d_vals, *d_vals0, *d_iters;
    CUDA_CHECK(cudaMalloc(&d_vals, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_vals0, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_iters, grid * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_vals0, vals.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    harness_timed("copy+settle_tail", [&] {
        CUDA_CHECK(cudaMemcpyAsync(d_vals, d_vals0, n * sizeof(int), cudaMemcpyDeviceToDevice));
        settle_tail<<<grid, B>>>(d_vals, d_iters, n, max_iters);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out.data(), d_vals, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(iters.data(), d_iters, grid * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<int> want(vals), want_iters(grid, -1);
    for (int b = 0; b < grid; ++b) {
        const int base = b * B, live = std::min(B, n - base);
        std::vector<int> v(want.begin() + base, want.begin() + base + live), nv(live);
        for (int it = 0; it < max_iters; ++it) {
            int changed = 0;
            for (int t = 0; t < live; ++t) {
                nv[t] = (v[t] + v[(t + 1) % live]) / 3;
                changed += nv[t] != v[t];
            }
            v = nv;
            if (changed == 0) {
                want_iters[b] = it + 1;
                break;
            }
        }
        std::copy(v.begin(), v.end(), want.begin() + base);
    }
    if (!harness_equal("vals", out.data(), want.data(), n)) return harness_fail("settle_tail values");
    if (!harness_equal("iters", iters.data(), want_iters.data(), grid)) return harness_fail("settle_tail rounds");
    harness_dump("vals", out.data(), n);
    harness_dump("iters", iters.data(), grid);
    CUDA_CHECK(cudaFree(d_vals));
    CUDA_CHECK(cudaFree(d_vals0));
    CUDA_CHECK(cudaFree(d_iters));
    return harness_pass();
}
