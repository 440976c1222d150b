// slatec-test: harness
// Early return followed by barriers inside loops with block-uniform trip counts (param, template, while, pre-return load).
#include "harness.h"

#include <vector>

#define B 128

// Iterated three-point smoothing among a block's live threads; `iters` is a kernel
// parameter, so every live thread runs the same number of barriers.
__global__ void smooth_in_block(const float* in, float* out, int n, int iters) {
    __shared__ float s[2][B];
    const int t = threadIdx.x, i = blockIdx.x * B + t;
    if (i >= n) return;
    const int last = min(B, n - (int)blockIdx.x * B) - 1;  // last live lane of this block
    int cur = 0;
    s[0][t] = in[i];
    for (int it = 0; it < iters; ++it) {
        __syncthreads();
        float l = s[cur][t > 0 ? t - 1 : t], r = s[cur][t < last ? t + 1 : t];
        s[1 - cur][t] = 0.25f * l + 0.5f * s[cur][t] + 0.25f * r;
        cur = 1 - cur;
    }
    out[i] = s[cur][t];
}

// Same smoothing with a compile-time trip count and a while loop around the barrier.
template <int ITERS>
__global__ void smooth_in_block_t(const float* in, float* out, int n) {
    __shared__ float s[2][B];
    const int t = threadIdx.x, i = blockIdx.x * B + t;
    if (i >= n) return;
    const int last = min(B, n - (int)blockIdx.x * B) - 1;
    int cur = 0, it = 0;
    s[0][t] = in[i];
    while (it < ITERS) {
        __syncthreads();
        float l = s[cur][t > 0 ? t - 1 : t], r = s[cur][t < last ? t + 1 : t];
        s[1 - cur][t] = 0.25f * l + 0.5f * s[cur][t] + 0.25f * r;
        cur = 1 - cur;
        ++it;
    }
    out[i] = s[cur][t];
}

// The trip count is data (per block) but is loaded by every thread BEFORE the return,
// so it is block-uniform and known to the threads that return: safe to lower.
__global__ void rotate_steps(const int* in, int* out, const int* steps, int n) {
    __shared__ int s[B];
    const int m = steps[blockIdx.x];
    const int t = threadIdx.x, i = blockIdx.x * B + t;
    if (i >= n) return;
    const int live = min(B, n - (int)blockIdx.x * B);
    int v = in[i];
    for (int k = 0; k < m; ++k) {
        s[t] = v;
        __syncthreads();
        v = s[(t + 1) % live] + k;
        __syncthreads();
    }
    out[i] = v;
}

static void smooth_ref(const std::vector<float>& in, std::vector<float>& out, int n, int iters) {
    for (int base = 0; base < n; base += B) {
        int live = std::min(B, n - base);
        std::vector<float> a(in.begin() + base, in.begin() + base + live), b(live);
        for (int it = 0; it < iters; ++it) {
            for (int t = 0; t < live; ++t) {
                float l = a[t > 0 ? t - 1 : t], r = a[t < live - 1 ? t + 1 : t];
                b[t] = 0.25f * l + 0.5f * a[t] + 0.25f * r;
            }
            a.swap(b);
        }
        std::copy(a.begin(), a.end(), out.begin() + base);
    }
}

int main() {
    const int n = (int)harness_scaled(300051 / B) * B + 300051 % B;  // 300051 unscaled
    const int grid = (n + B - 1) / B;  // 2345 blocks
    std::vector<float> in(n), o1(n), o2(n), w1(n), w2(n);
    std::vector<int> in_i(n), steps(grid), o3(n), w3(n);
    harness_fill_float(in.data(), n, -1.0f, 1.0f);
    harness_fill_int(in_i.data(), n, 0, 1 << 20);
    harness_fill_int(steps.data(), grid, 0, 6);
    float *d_in, *d_o1, *d_o2;
    int *d_in_i, *d_steps, *d_o3;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_o1, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_o2, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_in_i, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_steps, grid * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_o3, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_in_i, in_i.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_steps, steps.data(), grid * sizeof(int), cudaMemcpyHostToDevice));

    harness_timed("smooth_in_block", [&] {
        smooth_in_block<<<grid, B>>>(d_in, d_o1, n, 7);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("smooth_in_block_t", [&] {
        smooth_in_block_t<4><<<grid, B>>>(d_in, d_o2, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("rotate_steps", [&] {
        rotate_steps<<<grid, B>>>(d_in_i, d_o3, d_steps, n);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(o1.data(), d_o1, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o2.data(), d_o2, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o3.data(), d_o3, n * sizeof(int), cudaMemcpyDeviceToHost));

    smooth_ref(in, w1, n, 7);
    smooth_ref(in, w2, n, 4);
    for (int base = 0, b = 0; base < n; base += B, ++b) {
        int live = std::min(B, n - base);
        std::vector<int> v(in_i.begin() + base, in_i.begin() + base + live), nv(live);
        for (int k = 0; k < steps[b]; ++k) {
            for (int t = 0; t < live; ++t) nv[t] = v[(t + 1) % live] + k;
            v.swap(nv);
        }
        std::copy(v.begin(), v.end(), w3.begin() + base);
    }
    if (!harness_close("o1", o1.data(), w1.data(), n, 1e-5, 1e-6)) return harness_fail("smooth_in_block");
    if (!harness_close("o2", o2.data(), w2.data(), n, 1e-5, 1e-6)) return harness_fail("smooth_in_block_t");
    if (!harness_equal("o3", o3.data(), w3.data(), n)) return harness_fail("rotate_steps");
    harness_dump("o1", o1.data(), n);
    harness_dump("o2", o2.data(), n);
    harness_dump("o3", o3.data(), n);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_o1));
    CUDA_CHECK(cudaFree(d_o2));
    CUDA_CHECK(cudaFree(d_in_i));
    CUDA_CHECK(cudaFree(d_steps));
    CUDA_CHECK(cudaFree(d_o3));
    return harness_pass();
}
