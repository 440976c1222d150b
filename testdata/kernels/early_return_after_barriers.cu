// slatec-test: harness
// Early returns only after the last barrier (no predication needed), plus a kernel whose only return has no barrier at all.
#include "harness.h"

#include <vector>

#define B 256

// Tree sum per block; all threads reach every barrier, then all but thread 0 leave.
__global__ void block_sums(const int* in, int* sums, int n) {
    __shared__ int s[B];
    const int t = threadIdx.x, i = blockIdx.x * B + t;
    s[t] = i < n ? in[i] : 0;
    __syncthreads();
    for (int stride = B / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t != 0) return;
    sums[blockIdx.x] = s[0];
}

// Centre each element on its block's mean; returns in nested branches after the barriers.
__global__ void center(const int* in, int* out, int n) {
    __shared__ int s[B];
    __shared__ int mean;
    const int t = threadIdx.x, i = blockIdx.x * B + t;
    const int live = min(B, n - (int)blockIdx.x * B);
    s[t] = i < n ? in[i] : 0;
    __syncthreads();
    if (t == 0) {
        int acc = 0;
        for (int k = 0; k < live; ++k) acc += s[k];
        mean = acc / live;
    }
    __syncthreads();
    if (i >= n) return;
    int d = s[t] - mean;
    if (d < 0) {
        if (d < -500) {
            out[i] = -500;
            return;
        }
        out[i] = d;
        return;
    }
    out[i] = d > 500 ? 500 : d;
}

// No shared memory, no barrier: the return needs no special care.
__global__ void clamp_copy(const int* in, int* out, int n, int lo, int hi) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    if (v < lo) {
        out[i] = lo;
        return;
    }
    out[i] = v > hi ? hi : v;
}

int main() {
    const int n = (int)harness_scaled(1000009 / B) * B + 1000009 % B;  // 1000009 unscaled
    const int grid = (n + B - 1) / B;  // 3907 blocks
    std::vector<int> in(n), sums(grid), c(n), k(n);
    harness_fill_int(in.data(), n, -1000, 1000);
    int *d_in, *d_sums, *d_c, *d_k;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sums, grid * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_c, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_k, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    harness_timed("block_sums", [&] {
        block_sums<<<grid, B>>>(d_in, d_sums, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("center", [&] {
        center<<<grid, B>>>(d_in, d_c, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("clamp_copy", [&] {
        clamp_copy<<<(n + 511) / 512, 512>>>(d_in, d_k, n, -300, 700);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, grid * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(c.data(), d_c, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(k.data(), d_k, n * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<int> want_sums(grid, 0), want_c(n), want_k(n);
    for (int i = 0; i < n; ++i) want_sums[i / B] += in[i];
    for (int b = 0; b < grid; ++b) {
        int live = std::min(B, n - b * B), mean = want_sums[b] / live;
        for (int t = 0; t < live; ++t) {
            int d = in[b * B + t] - mean;
            want_c[b * B + t] = d < -500 ? -500 : d > 500 ? 500 : d;
        }
    }
    for (int i = 0; i < n; ++i) want_k[i] = in[i] < -300 ? -300 : in[i] > 700 ? 700 : in[i];
    if (!harness_equal("sums", sums.data(), want_sums.data(), grid)) return harness_fail("block_sums");
    if (!harness_equal("center", c.data(), want_c.data(), n)) return harness_fail("center");
    if (!harness_equal("clamp", k.data(), want_k.data(), n)) return harness_fail("clamp_copy");
    harness_dump("sums", sums.data(), grid);
    harness_dump("center", c.data(), n);
    harness_dump("clamp", k.data(), n);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_c));
    CUDA_CHECK(cudaFree(d_k));
    return harness_pass();
}
