// slatec-test: harness
// 1-D radius-4 stencil streamed through a 3-stage cuda::pipeline (cuda::memcpy_async of halo'd chunks into shared memory); one event-timed launch.
#include "harness.h"

#include <cooperative_groups.h>
#include <cuda/pipeline>

#include <vector>

namespace cg = cooperative_groups;

#define RADIUS 4
#define TILE 2048  // outputs per chunk: 256 threads x 8
#define STAGES 3
#define THREADS 256
#define CHUNKS_PER_BLOCK 8

__constant__ float c_w[2 * RADIUS + 1];

// y[i] = sum_j w[j] * x[i + j - RADIUS], with x zero outside [0, n). xpad holds x shifted
// by RADIUS with zero borders, so chunk c needs xpad[c*TILE, c*TILE + TILE + 2*RADIUS):
// 16-byte aligned and a multiple of 16 bytes long. n % TILE == 0.
__global__ void __launch_bounds__(THREADS)
stencil_pipelined(const float* __restrict__ xpad, float* __restrict__ y, int n) {
    __shared__ __align__(16) float buf[STAGES][TILE + 2 * RADIUS];
    // The pipeline state has a constructor; shared variables are never dynamically
    // initialised, which nvcc warns about: cuda::make_pipeline initialises it instead.
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
#pragma nv_diag_default static_var_with_dynamic_init
    auto block = cg::this_thread_block();
    auto pipe = cuda::make_pipeline(block, &state);

    const int first = blockIdx.x * CHUNKS_PER_BLOCK;  // chunk index
    const int nch = min(CHUNKS_PER_BLOCK, n / TILE - first);
    for (int fetch = 0, comp = 0; comp < nch; ++comp) {
        // Keep up to STAGES chunks in flight ahead of the one being computed.
        for (; fetch < nch && fetch < comp + STAGES; ++fetch) {
            pipe.producer_acquire();
            cuda::memcpy_async(block, buf[fetch % STAGES], xpad + (size_t)(first + fetch) * TILE,
                               cuda::aligned_size_t<16>(sizeof(float) * (TILE + 2 * RADIUS)), pipe);
            pipe.producer_commit();
        }
        pipe.consumer_wait();
        const float* b = buf[comp % STAGES];
        float* out = y + (size_t)(first + comp) * TILE;
        for (int t = threadIdx.x; t < TILE; t += blockDim.x) {
            float s = 0.0f;
#pragma unroll
            for (int j = 0; j <= 2 * RADIUS; ++j) s += c_w[j] * b[t + j];
            out[t] = s;
        }
        pipe.consumer_release();
    }
}

int main() {
    const int n = (int)harness_scaled((1 << 24) + 5 * TILE, TILE);  // the last block gets 5 chunks
    const int nchunks = n / TILE;
    const int grid = (nchunks + CHUNKS_PER_BLOCK - 1) / CHUNKS_PER_BLOCK;  // 1025 blocks (unscaled)
    const float w[2 * RADIUS + 1] = {0.02f, -0.05f, 0.1f, 0.2f, 0.46f, 0.2f, 0.1f, -0.05f, 0.02f};
    std::vector<float> x(n), xpad((size_t)n + 2 * RADIUS, 0.0f), y(n);
    harness_fill_float(x.data(), x.size(), -4.0f, 4.0f);
    std::copy(x.begin(), x.end(), xpad.begin() + RADIUS);
    float *d_xpad, *d_y;
    CUDA_CHECK(cudaMalloc(&d_xpad, xpad.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, y.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_xpad, xpad.data(), xpad.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_y, 0, y.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpyToSymbol(c_w, w, sizeof w));

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start));
    harness_timed("stencil_pipelined", [&] {
        stencil_pipelined<<<grid, THREADS>>>(d_xpad, d_y, n);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("PROGRAM_TIME stencil_pipeline_3stage %.4f\n", (double)ms);
    CUDA_CHECK(cudaMemcpy(y.data(), d_y, y.size() * sizeof(float), cudaMemcpyDeviceToHost));

    for (int i = 0; i < n; ++i) {
        double s = 0, mag = 0;
        for (int j = -RADIUS; j <= RADIUS; ++j) {
            int k = i + j;
            double v = (k >= 0 && k < n) ? (double)w[j + RADIUS] * x[k] : 0.0;
            s += v;
            mag += std::fabs(v);
        }
        if (!(std::fabs(y[i] - s) <= 2e-6 * mag + 1e-6))
            return harness_fail("y[%d] = %.9g, want %.9g", i, (double)y[i], s);
    }
    harness_dump("y", y.data(), y.size());
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_xpad));
    CUDA_CHECK(cudaFree(d_y));
    return harness_pass();
}
