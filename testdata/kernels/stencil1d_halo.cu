// slatec-test: harness
// 1-D radius-3 stencil with halo cells in shared memory; weights in __constant__; an early-return variant.
#include "harness.h"

#include <vector>

#define RADIUS 3
#define BLOCK 256

__constant__ float c_weights[2 * RADIUS + 1];

// Canonical form: every thread reaches the barrier; loads are guarded, outside is zero.
__global__ void stencil1d(const float* in, float* out, int n) {
    extern __shared__ float s[];  // blockDim.x + 2 * RADIUS
    const int gi = blockIdx.x * blockDim.x + threadIdx.x;
    const int li = threadIdx.x + RADIUS;
    s[li] = gi < n ? in[gi] : 0.0f;
    if (threadIdx.x < RADIUS) {
        s[li - RADIUS] = gi >= RADIUS && gi - RADIUS < n ? in[gi - RADIUS] : 0.0f;
        int r = gi + blockDim.x;
        s[li + blockDim.x] = r < n ? in[r] : 0.0f;
    }
    __syncthreads();
    if (gi < n) {
        float acc = 0.0f;
        for (int j = -RADIUS; j <= RADIUS; ++j) acc += c_weights[j + RADIUS] * s[li + j];
        out[gi] = acc;
    }
}

// Threads past the end leave before the barrier. The last element's right neighbours are
// then loaded by nobody, so the last live thread zeroes them itself.
__global__ void stencil1d_early_return(const float* in, float* out, int n) {
    __shared__ float s[BLOCK + 2 * RADIUS];
    const int gi = blockIdx.x * BLOCK + threadIdx.x;
    const int li = threadIdx.x + RADIUS;
    if (gi >= n) return;
    s[li] = in[gi];
    if (threadIdx.x < RADIUS) {
        s[li - RADIUS] = gi >= RADIUS ? in[gi - RADIUS] : 0.0f;
        s[li + BLOCK] = gi + BLOCK < n ? in[gi + BLOCK] : 0.0f;
    }
    if (gi == n - 1 && threadIdx.x != BLOCK - 1)
        for (int j = 1; j <= RADIUS; ++j) s[li + j] = 0.0f;
    __syncthreads();
    float acc = 0.0f;
    for (int j = -RADIUS; j <= RADIUS; ++j) acc += c_weights[j + RADIUS] * s[li + j];
    out[gi] = acc;
}

int main() {
    const int n = (int)harness_scaled(1 << 20, BLOCK) + 45;
    const int grid = (n + BLOCK - 1) / BLOCK;  // 4097 blocks
    const float w[2 * RADIUS + 1] = {0.05f, -0.1f, 0.25f, 0.6f, 0.25f, -0.1f, 0.05f};
    std::vector<float> in(n), o1(n), o2(n);
    harness_fill_float(in.data(), n, -1.0f, 1.0f);
    float *d_in, *d_o1, *d_o2;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_o1, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_o2, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpyToSymbol(c_weights, w, sizeof w));

    harness_timed("stencil1d", [&] {
        stencil1d<<<grid, BLOCK, (BLOCK + 2 * RADIUS) * sizeof(float)>>>(d_in, d_o1, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("stencil1d_early_return", [&] {
        stencil1d_early_return<<<grid, BLOCK>>>(d_in, d_o2, n);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(o1.data(), d_o1, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o2.data(), d_o2, n * sizeof(float), cudaMemcpyDeviceToHost));

    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) {
        float acc = 0.0f;
        for (int j = -RADIUS; j <= RADIUS; ++j) {
            int k = i + j;
            acc += w[j + RADIUS] * (k >= 0 && k < n ? in[k] : 0.0f);
        }
        want[i] = acc;
    }
    if (!harness_close("o1", o1.data(), want.data(), n, 1e-5, 1e-6)) return harness_fail("stencil1d");
    if (!harness_close("o2", o2.data(), want.data(), n, 1e-5, 1e-6)) return harness_fail("early return");
    harness_dump("o1", o1.data(), n);
    harness_dump("o2", o2.data(), n);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_o1));
    CUDA_CHECK(cudaFree(d_o2));
    return harness_pass();
}
