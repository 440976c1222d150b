// slatec-test: harness
// Millisecond-scale compute-bound program for sharing between processes (slatec serve, issue 13):
// each thread runs four independent chains of 2048 dependent FMAs on registers, then writes one
// float; two launches a run, each about 1 ms on an H100 that has the GPU to itself. Compute-bound
// and scaling with SMs: it gains from the SMs a memory-bound program beside it (serve_stream_ms)
// does not need.
#include "harness.h"

#include <cmath>
#include <vector>

__global__ void __launch_bounds__(256) fma_chains(float* __restrict__ out, const float* __restrict__ in, int n,
                                                  int iters, float m, float k) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = in[i], b = a + 0.25f, c = a - 0.25f, d = 0.5f * a;
    for (int t = 0; t < iters; ++t) {
        a = fmaf(a, m, k);
        b = fmaf(b, m, k);
        c = fmaf(c, m, k);
        d = fmaf(d, m, k);
    }
    out[i] = a + b + c + d;
}

// The host's reference: the same FMAs in the same order (fmaf rounds once, as the GPU's FFMA).
static float chains(float x, int iters, float m, float k) {
    float a = x, b = x + 0.25f, c = x - 0.25f, d = 0.5f * x;
    for (int t = 0; t < iters; ++t) {
        a = std::fmaf(a, m, k);
        b = std::fmaf(b, m, k);
        c = std::fmaf(c, m, k);
        d = std::fmaf(d, m, k);
    }
    return a + b + c + d;
}

int main() {
    const int n = (int)harness_scaled(4 << 20, 256); // threads: 4M unscaled, 16K blocks of 256
    const int iters = 2048;
    // m < 1 keeps every chain bounded: x -> k / (1 - m).
    const float m = 0.999f, k = 0.001f;
    std::vector<float> in(n), out(n);
    harness_fill_float(in.data(), n, -1.0f, 1.0f);
    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    harness_timed("fma_x2", [&] {
        for (int rep = 0; rep < 2; ++rep) {
            fma_chains<<<(n + 255) / 256, 256>>>(d_out, d_in, n, iters, m, k);
            CUDA_CHECK(cudaGetLastError());
        }
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    // Every 1021st element: the reference costs 8K FMAs an element on the host.
    std::vector<float> got, want;
    for (int i = 0; i < n; i += 1021) {
        got.push_back(out[i]);
        want.push_back(chains(in[i], iters, m, k));
    }
    if (!harness_close("out", got.data(), want.data(), got.size(), 1e-5, 1e-6))
        return harness_fail("fma_chains");
    harness_dump("out", out.data(), n);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return harness_pass();
}
