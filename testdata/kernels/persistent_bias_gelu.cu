// slatec-test: harness
// Persistent elementwise bias+GELU: grid = SMs x occupancy (cudaDevAttrMultiProcessorCount, cudaOccupancyMaxActiveBlocksPerMultiprocessor), float4 tiles in a tile loop; one event-timed launch.
#include "harness.h"

#include <vector>

#define THREADS 256
#define UNROLL 4
#define TILE4 (THREADS * UNROLL)  // float4 per tile: 4096 floats

__host__ __device__ __forceinline__ float gelu_tanh(float v) {
    const float k0 = 0.7978845608f, k1 = 0.044715f;
    return 0.5f * v * (1.0f + tanhf(k0 * (v + k1 * v * v * v)));
}

// y[r][c] = gelu(scale * x[r][c] + bias[c]) for a rows x cols matrix (cols % 4 == 0), as
// float4. Block b handles tiles b, b + gridDim.x, ... of TILE4 float4 each.
__global__ void __launch_bounds__(THREADS)
bias_gelu_persistent(const float4* __restrict__ x, const float4* __restrict__ bias, float4* __restrict__ y,
                     float scale, long long n4, int cols4, int ntiles) {
    for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const long long base = (long long)tile * TILE4 + threadIdx.x;
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {  // all loads first, then the math
            const long long i = base + u * THREADS;
            if (i < n4) v[u] = x[i];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const long long i = base + u * THREADS;
            if (i < n4) {
                const float4 b = bias[i % cols4];
                float4 o;
                o.x = gelu_tanh(scale * v[u].x + b.x);
                o.y = gelu_tanh(scale * v[u].y + b.y);
                o.z = gelu_tanh(scale * v[u].z + b.z);
                o.w = gelu_tanh(scale * v[u].w + b.w);
                y[i] = o;
            }
        }
    }
}

int main() {
    const int rows = (int)harness_scaled(8000), cols = 4096;  // 32.8M floats (unscaled)
    const long long n = (long long)rows * cols, n4 = n / 4;
    const int ntiles = (int)((n4 + TILE4 - 1) / TILE4);  // 8000 tiles (unscaled)
    const float scale = 1.75f;
    std::vector<float> x(n), bias(cols), y(n);
    harness_fill_float(x.data(), x.size(), -3.0f, 3.0f);
    harness_fill_float(bias.data(), bias.size(), -0.5f, 0.5f);
    float *d_x, *d_bias, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_bias, cols * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_bias, bias.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_y, 0, n * sizeof(float)));

    // Size the grid to exactly fill the GPU once: SMs x resident blocks per SM.
    int dev = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bias_gelu_persistent, THREADS, 0));
    if (per_sm < 1) return harness_fail("occupancy query says 0 blocks per SM");
    const int grid = std::min(ntiles, sms * per_sm);

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start, 0));
    harness_timed("bias_gelu_persistent", [&] {
        bias_gelu_persistent<<<grid, THREADS, 0, 0>>>(reinterpret_cast<const float4*>(d_x),
                                                      reinterpret_cast<const float4*>(d_bias),
                                                      reinterpret_cast<float4*>(d_y), scale, n4, cols / 4, ntiles);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("PROGRAM_TIME persistent_bias_gelu %.4f\n", (double)ms);
    CUDA_CHECK(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));

    for (long long i = 0; i < n; ++i) {
        const double v = (double)scale * x[i] + bias[i % cols];
        const double want = 0.5 * v * (1.0 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
        if (!(std::fabs(y[i] - want) <= 1e-5 * std::fabs(want) + 2e-6))
            return harness_fail("y[%lld] = %.9g, want %.9g", i, (double)y[i], want);
    }
    harness_dump("y", y.data(), y.size());
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_bias));
    CUDA_CHECK(cudaFree(d_y));
    return harness_pass();
}
