// slatec-test: harness
// Vector add and STREAM-style triad: 1-D grid, bounds guard, __restrict__ params, extern "C", launches in a loop.
#include "harness.h"

#include <vector>

// c = a + b, one element per thread; the guard handles the partial last block.
__global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                           float* __restrict__ c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// a = b + s * c (STREAM triad). extern "C" keeps the symbol unmangled.
extern "C" __global__ void triad(float* __restrict__ a, const float* __restrict__ b,
                                 const float* __restrict__ c, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    a[i] = b[i] + s * c[i];
}

int main() {
    const int block = 256;
    const int n = (int)harness_scaled(1 << 20, block) + 77;  // not a multiple of the block size
    const int grid = (n + block - 1) / block;  // 4097 blocks (unscaled): several waves
    std::vector<float> a(n), b(n), c(n), t(n);
    harness_fill_float(a.data(), n, -1.0f, 1.0f);
    harness_fill_float(b.data(), n, -1.0f, 1.0f);

    float *d_a, *d_b, *d_c, *d_t, *d_u;
    size_t bytes = n * sizeof(float);
    CUDA_CHECK(cudaMalloc(&d_a, bytes));
    CUDA_CHECK(cudaMalloc(&d_b, bytes));
    CUDA_CHECK(cudaMalloc(&d_c, bytes));
    CUDA_CHECK(cudaMalloc(&d_t, bytes));
    CUDA_CHECK(cudaMalloc(&d_u, bytes));
    CUDA_CHECK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));

    harness_timed("vector_add", [&] {
        vector_add<<<grid, block>>>(d_a, d_b, d_c, n);
        CUDA_CHECK(cudaGetLastError());
    });

    // Triad repeated with different scalars; each launch reads the previous result
    // (ping-pong between two buffers: the parameters are __restrict__).
    const float scalars[3] = {0.5f, -1.25f, 3.0f};
    CUDA_CHECK(cudaMemcpy(d_t, d_a, bytes, cudaMemcpyDeviceToDevice));
    // Each run continues from the last one's result: under HARNESS_REPS the checked
    // run starts again from a copy of a.
    harness_timed_reset("triad_x3", [&] {
        for (int r = 0; r < 3; ++r) {
            triad<<<grid, block>>>(d_u, d_c, d_t, scalars[r], n);
            CUDA_CHECK(cudaGetLastError());
            float* tmp = d_t; d_t = d_u; d_u = tmp;
        }
    }, [&] { CUDA_CHECK(cudaMemcpy(d_t, d_a, bytes, cudaMemcpyDeviceToDevice)); });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(c.data(), d_c, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(t.data(), d_t, bytes, cudaMemcpyDeviceToHost));

    std::vector<float> want_c(n), want_t(n);
    for (int i = 0; i < n; ++i) {
        want_c[i] = a[i] + b[i];
        float x = a[i];
        for (int r = 0; r < 3; ++r) x = want_c[i] + scalars[r] * x;
        want_t[i] = x;
    }
    // The add is exact; the triad may be contracted to an FMA on the GPU.
    if (!harness_close("c", c.data(), want_c.data(), n, 0.0, 0.0)) return harness_fail("vector_add");
    if (!harness_close("t", t.data(), want_t.data(), n, 1e-5, 1e-6)) return harness_fail("triad");

    harness_dump("c", c.data(), n);
    harness_dump("t", t.data(), n);
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_c));
    CUDA_CHECK(cudaFree(d_t));
    CUDA_CHECK(cudaFree(d_u));
    return harness_pass();
}
