// slatec-test: harness
// Millisecond-scale latency-bound program for sharing between processes (slatec serve, issue 13):
// 48 blocks of 64 threads, each thread one long dependent chain of reciprocal square roots and FMAs
// (about 1 ms a launch on an H100, two launches a run). A grid smaller than a wave: it needs few SMs,
// does not touch DRAM while it runs, and its speed is set by instruction latency, so it can run on a
// small share beside a bandwidth-bound program (serve_stream_ms) and a compute-bound one (serve_fma_ms).
#include "harness.h"

#include <cmath>
#include <vector>

__global__ void __launch_bounds__(64) dep_chains(float* __restrict__ out, const float* __restrict__ in, int n, int iters) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float c = 0.5f + 0.25f * in[i]; // in [0.25, 0.75]: each thread its own fixed point
    float x = 1.0f;
    for (int t = 0; t < iters; ++t)
        x = rsqrtf(fmaf(x, x, c)) + 0.25f;
    out[i] = x;
}

// The host's reference. x -> 1/sqrt(x*x + c) + 0.25 is a contraction (|slope| about 0.5 at its fixed
// point), so the GPU's approximate rsqrtf and the host's 1/sqrt end at the same fixed point within a
// few ulp, whatever the iterations.
static float chain(float in, int iters) {
    const float c = 0.5f + 0.25f * in;
    float x = 1.0f;
    for (int t = 0; t < iters; ++t)
        x = 1.0f / std::sqrt(std::fmaf(x, x, c)) + 0.25f;
    return x;
}

int main() {
    const int n = 48 * 64; // 48 blocks of 64: fewer blocks than SMs
    const int iters = (int)harness_scaled(49152, 1); // dependent steps a thread: ~1 ms unscaled
    std::vector<float> in(n), out(n);
    harness_fill_float(in.data(), n, -1.0f, 1.0f);
    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    harness_timed("dep_x2", [&] {
        for (int rep = 0; rep < 2; ++rep) {
            dep_chains<<<n / 64, 64>>>(d_out, d_in, n, iters);
            CUDA_CHECK(cudaGetLastError());
        }
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    // Every 7th element: the reference costs iters steps an element on the host.
    std::vector<float> got, want;
    for (int i = 0; i < n; i += 7) {
        got.push_back(out[i]);
        want.push_back(chain(in[i], iters));
    }
    if (!harness_close("out", got.data(), want.data(), got.size(), 1e-4, 1e-6))
        return harness_fail("dep_chains");
    harness_dump("out", out.data(), n);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return harness_pass();
}
