// slatec-test: harness
// __syncthreads_count/_and/_or after an early return (returned threads must not vote) and inline-asm `bar.sync 0;` barriers.
#include "harness.h"

#include <vector>

#define B 128

// Block-wide votes among the live threads. Thread 0 is live in every block that exists.
__global__ void votes(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    int positives = __syncthreads_count(v > 0);
    int all_nonzero = __syncthreads_and(v != 0);
    int any_big = __syncthreads_or(v > 90);
    if (threadIdx.x == 0) {
        out[3 * blockIdx.x + 0] = positives;
        out[3 * blockIdx.x + 1] = all_nonzero;
        out[3 * blockIdx.x + 2] = any_big;
    }
}

// Rotation through shared memory with PTX barriers written by hand.
__global__ void rotate_asm(const int* in, int* out, int n) {
    __shared__ int s[B];
    int t = threadIdx.x, i = blockIdx.x * B + t;
    s[t] = i < n ? in[i] : 0;
    asm volatile("bar.sync 0;" ::: "memory");
    int v = s[(t + 1) % B];
    asm volatile("bar.sync 0;" ::: "memory");
    s[t] = v * 2;
    asm volatile("bar.sync 0;" ::: "memory");
    if (i < n) out[i] = s[(t + 3) % B];
}

// Early return before an asm barrier: the tail block's live threads rotate among themselves.
__global__ void rotate_asm_tail(const int* in, int* out, int n) {
    __shared__ int s[B];
    int t = threadIdx.x, i = blockIdx.x * B + t;
    if (i >= n) return;
    int live = min(B, n - (int)blockIdx.x * B);
    s[t] = in[i];
    asm volatile("bar.sync 0;" ::: "memory");
    out[i] = s[(t + 1) % live];
}

int main() {
    const int n = (int)harness_scaled(400100 / B) * B + 400100 % B;  // 400100 unscaled
    const int grid = (n + B - 1) / B;  // 3126 blocks; the last one has 100 live threads
    std::vector<int> in(n), vo(3 * grid), r1(n), r2(n);
    harness_fill_int(in.data(), n, -5, 91);
    int *d_in, *d_vo, *d_r1, *d_r2;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_vo, 3 * grid * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_r1, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_r2, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    harness_timed("votes", [&] {
        votes<<<grid, B>>>(d_in, d_vo, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("rotate_asm", [&] {
        rotate_asm<<<grid, B>>>(d_in, d_r1, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("rotate_asm_tail", [&] {
        rotate_asm_tail<<<grid, B>>>(d_in, d_r2, n);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(vo.data(), d_vo, vo.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(r1.data(), d_r1, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(r2.data(), d_r2, n * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<int> want_vo(3 * grid), want_r1(n), want_r2(n);
    for (int b = 0; b < grid; ++b) {
        int base = b * B, live = std::min(B, n - base), pos = 0, all = 1, any = 0;
        for (int t = 0; t < live; ++t) {
            int v = in[base + t];
            pos += v > 0;
            all &= v != 0;
            any |= v > 90;
        }
        want_vo[3 * b] = pos;
        want_vo[3 * b + 1] = all;
        want_vo[3 * b + 2] = any;
        auto at = [&](int t) { return base + t < n ? in[base + t] : 0; };
        for (int t = 0; t < live; ++t) {
            want_r1[base + t] = 2 * at((t + 3 + 1) % B);
            want_r2[base + t] = in[base + (t + 1) % live];
        }
    }
    if (!harness_equal("votes", vo.data(), want_vo.data(), vo.size())) return harness_fail("votes");
    if (!harness_equal("rotate", r1.data(), want_r1.data(), n)) return harness_fail("rotate_asm");
    if (!harness_equal("rotate_tail", r2.data(), want_r2.data(), n)) return harness_fail("rotate_asm_tail");
    harness_dump("votes", vo.data(), vo.size());
    harness_dump("rotate", r1.data(), n);
    harness_dump("rotate_tail", r2.data(), n);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_vo));
    CUDA_CHECK(cudaFree(d_r1));
    CUDA_CHECK(cudaFree(d_r2));
    return harness_pass();
}
