// slatec-test: harness
// Three kernels back to back (smooth, relax, block norms) in a 20-iteration host loop on one stream, timed end to end with events: where host launch cost shows.
#include "harness.h"

#include <vector>

#define THREADS 256
#define NORM_PER_THREAD 8
#define NORM_SPAN (THREADS * NORM_PER_THREAD)  // elements per norm block
#define ITERS 20

// y[i] = 0.25 x[i-1] + 0.5 x[i] + 0.25 x[i+1], clamped at the ends.
__global__ void smooth3(const float* __restrict__ x, float* __restrict__ y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float l = x[i > 0 ? i - 1 : 0], r = x[i < n - 1 ? i + 1 : n - 1];
    y[i] = 0.25f * l + 0.5f * x[i] + 0.25f * r;
}

// x[i] = y[i] + dt * (f[i] - y[i]).
__global__ void relax(float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ f, float dt, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = y[i] + dt * (f[i] - y[i]);
}

// norms[b] = sum of x^2 over the block's NORM_SPAN elements (shared-memory tree, fixed order).
__global__ void block_norms(const float* __restrict__ x, float* __restrict__ norms, int n) {
    __shared__ float s[THREADS];
    const int base = blockIdx.x * NORM_SPAN + threadIdx.x;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < NORM_PER_THREAD; ++k) {
        const int i = base + k * THREADS;
        if (i < n) acc += x[i] * x[i];
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) norms[blockIdx.x] = s[0];
}

int main() {
    const int n = (int)harness_scaled(8 * 1024 * 1024 + 1000);  // not a multiple of the block size
    const int grid = (n + THREADS - 1) / THREADS;              // 32772 blocks (unscaled)
    const int nb = (n + NORM_SPAN - 1) / NORM_SPAN;            // 4097 norm blocks
    const float dt = 0.125f;
    std::vector<float> x0(n), f(n), x(n), norms((size_t)ITERS * nb);
    harness_fill_float(x0.data(), n, -1.0f, 1.0f);
    harness_fill_float(f.data(), n, 0.0f, 1.0f);
    float *d_x, *d_y, *d_f, *d_norms;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_f, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_norms, norms.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x0.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_f, f.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    // x is updated in place: under HARNESS_REPS the checked run starts again from x0.
    // The stream is blocking, so harness_timed's events on stream 0 order with it.
    CUDA_CHECK(cudaEventRecord(start, stream));
    harness_timed_reset("smooth_relax_norms_x20", [&] {
        for (int it = 0; it < ITERS; ++it) {
            smooth3<<<grid, THREADS, 0, stream>>>(d_x, d_y, n);
            relax<<<grid, THREADS, 0, stream>>>(d_x, d_y, d_f, dt, n);
            block_norms<<<nb, THREADS, 0, stream>>>(d_x, d_norms + (size_t)it * nb, n);
        }
        CUDA_CHECK(cudaGetLastError());
    }, [&] { CUDA_CHECK(cudaMemcpy(d_x, x0.data(), n * sizeof(float), cudaMemcpyHostToDevice)); });
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("PROGRAM_TIME multi_kernel_loop %.4f\n", (double)ms);
    CUDA_CHECK(cudaMemcpy(x.data(), d_x, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(norms.data(), d_norms, norms.size() * sizeof(float), cudaMemcpyDeviceToHost));

    // CPU replica in double; the float GPU path differs by rounding only (the smoothing is
    // contractive, so errors do not grow).
    std::vector<double> cx(x0.begin(), x0.end()), cy(n);
    for (int it = 0; it < ITERS; ++it) {
        for (int i = 0; i < n; ++i)
            cy[i] = 0.25 * cx[i > 0 ? i - 1 : 0] + 0.5 * cx[i] + 0.25 * cx[i < n - 1 ? i + 1 : n - 1];
        for (int i = 0; i < n; ++i) cx[i] = cy[i] + (double)dt * (f[i] - cy[i]);
        for (int b = 0; b < nb; ++b) {
            double s = 0;
            for (int i = b * NORM_SPAN; i < std::min(n, (b + 1) * NORM_SPAN); ++i) s += cx[i] * cx[i];
            const double got = norms[(size_t)it * nb + b];
            if (!(std::fabs(got - s) <= 1e-4 * s + 1e-6))
                return harness_fail("iteration %d norm[%d] = %.9g, want %.9g", it, b, got, s);
        }
    }
    for (int i = 0; i < n; ++i)
        if (!(std::fabs(x[i] - cx[i]) <= 1e-5 * std::fabs(cx[i]) + 1e-6))
            return harness_fail("x[%d] = %.9g, want %.9g", i, (double)x[i], cx[i]);
    harness_dump("x", x.data(), n);
    harness_dump("norms", norms.data(), norms.size());
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_f));
    CUDA_CHECK(cudaFree(d_norms));
    return harness_pass();
}
