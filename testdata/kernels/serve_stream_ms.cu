// slatec-test: harness
// Millisecond-scale memory-bound program for sharing between processes (slatec serve, issue 13):
// a float4 STREAM triad over 3 x 256 MB, eight launches a run, each about 0.25 ms on an H100 that has
// the GPU to itself. Bandwidth-bound: it saturates DRAM on a fraction of the SMs, so a compute-bound
// program beside it (serve_fma_ms) loses little while this one keeps most of its speed.
#include "harness.h"

#include <vector>

// a = b + s * c, one float4 per thread; a grid of exactly n4 / 256 blocks of 256.
__global__ void __launch_bounds__(256) stream_triad(float4* __restrict__ a, const float4* __restrict__ b,
                                                    const float4* __restrict__ c, float s, int n4) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        const float4 x = b[i];
        const float4 y = c[i];
        a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
    }
}

int main() {
    const int n4 = (int)harness_scaled(16 << 20, 256); // float4s: 256 MB an array unscaled
    const size_t n = (size_t)n4 * 4;
    std::vector<float> b(n), c(n), a(n);
    harness_fill_float(b.data(), n, -1.0f, 1.0f);
    harness_fill_float(c.data(), n, -1.0f, 1.0f);
    float4 *d_a, *d_b, *d_c;
    CUDA_CHECK(cudaMalloc(&d_a, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_c, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_b, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_c, c.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    // Eight passes with different scalars; the last one's result is checked. Idempotent.
    const float scales[8] = {0.5f, -1.25f, 2.0f, 0.75f, -0.5f, 1.5f, -2.0f, 3.0f};
    harness_timed("triad_x8", [&] {
        for (float s : scales) {
            stream_triad<<<n4 / 256, 256>>>(d_a, d_b, d_c, s, n4);
            CUDA_CHECK(cudaGetLastError());
        }
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(a.data(), d_a, n * sizeof(float), cudaMemcpyDeviceToHost));
    std::vector<float> want(n);
    for (size_t i = 0; i < n; ++i)
        want[i] = b[i] + 3.0f * c[i];
    if (!harness_close("a", a.data(), want.data(), n, 1e-6, 1e-6))
        return harness_fail("stream_triad");
    // Every element was checked above; the dump (original against transformed, bit for bit)
    // keeps the first 16 MB, not 256.
    harness_dump("a_head", a.data(), n < (size_t)(4 << 20) ? n : (size_t)(4 << 20));
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_c));
    return harness_pass();
}
