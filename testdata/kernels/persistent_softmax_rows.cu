// slatec-test: harness
// Persistent row softmax (tiled block reductions): grid = SMs x occupancy, rows taken in a tile loop, max and sum by warp shuffle + shared memory; one event-timed launch.
#include "harness.h"

#include <vector>

#define THREADS 256
#define COLS 2048
#define PER (COLS / THREADS)  // row elements held in registers per thread
#define FULL 0xffffffffu

// Block-wide reductions in a fixed order (deterministic): xor shuffles inside each warp,
// one slot per warp in shared memory, every thread folds the slots in order. The trailing
// barrier lets the caller reuse `slots` at once.
__device__ __forceinline__ float block_max(float v, float* slots) {
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL, v, off));
    if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = v;
    __syncthreads();
    float r = slots[0];
    for (int w = 1; w < THREADS / 32; ++w) r = fmaxf(r, slots[w]);
    __syncthreads();
    return r;
}

__device__ __forceinline__ float block_sum(float v, float* slots) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(FULL, v, off);
    if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = v;
    __syncthreads();
    float r = slots[0];
    for (int w = 1; w < THREADS / 32; ++w) r += slots[w];
    __syncthreads();
    return r;
}

// y[row] = softmax(x[row]) over COLS columns; also records each row's max and sum of exps.
__global__ void __launch_bounds__(THREADS)
softmax_rows_persistent(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ row_max,
                        float* __restrict__ row_sum, int ntiles) {
    __shared__ float slots[THREADS / 32];
    for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const float* xr = x + (size_t)tile * COLS;
        float v[PER];
#pragma unroll
        for (int k = 0; k < PER; ++k) v[k] = xr[threadIdx.x + k * THREADS];
        float m = v[0];
#pragma unroll
        for (int k = 1; k < PER; ++k) m = fmaxf(m, v[k]);
        m = block_max(m, slots);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < PER; ++k) {
            v[k] = expf(v[k] - m);
            s += v[k];
        }
        s = block_sum(s, slots);
        const float inv = 1.0f / s;
        float* yr = y + (size_t)tile * COLS;
#pragma unroll
        for (int k = 0; k < PER; ++k) yr[threadIdx.x + k * THREADS] = v[k] * inv;
        if (threadIdx.x == 0) {
            row_max[tile] = m;
            row_sum[tile] = s;
        }
    }
}

int main() {
    const int rows = (int)harness_scaled(16384);  // 32M floats (unscaled)
    const size_t n = (size_t)rows * COLS;
    std::vector<float> x(n), y(n), rmax(rows), rsum(rows);
    harness_fill_float(x.data(), n, -8.0f, 8.0f);
    float *d_x, *d_y, *d_max, *d_sum;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_max, rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_sum, rows * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    int dev = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, softmax_rows_persistent, THREADS, 0));
    if (per_sm < 1) return harness_fail("occupancy query says 0 blocks per SM");
    const int grid = std::min(rows, sms * per_sm);

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start, 0));
    harness_timed("softmax_rows_persistent", [&] {
        softmax_rows_persistent<<<grid, THREADS, 0, 0>>>(d_x, d_y, d_max, d_sum, rows);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("PROGRAM_TIME persistent_softmax_rows %.4f\n", (double)ms);
    CUDA_CHECK(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(rmax.data(), d_max, rows * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(rsum.data(), d_sum, rows * sizeof(float), cudaMemcpyDeviceToHost));

    std::vector<double> e(COLS);
    for (int r = 0; r < rows; ++r) {
        const float* xr = &x[(size_t)r * COLS];
        float m = xr[0];
        for (int c = 1; c < COLS; ++c) m = std::max(m, xr[c]);
        if (rmax[r] != m) return harness_fail("row_max[%d] = %.9g, want %.9g", r, (double)rmax[r], (double)m);
        double s = 0;
        for (int c = 0; c < COLS; ++c) s += (e[c] = std::exp((double)xr[c] - m));
        if (!(std::fabs(rsum[r] - s) <= 1e-5 * s))
            return harness_fail("row_sum[%d] = %.9g, want %.9g", r, (double)rsum[r], s);
        for (int c = 0; c < COLS; ++c) {
            const double want = e[c] / s, got = y[(size_t)r * COLS + c];
            if (!(std::fabs(got - want) <= 2e-5 * want + 1e-12))
                return harness_fail("y[%d][%d] = %.9g, want %.9g", r, c, got, want);
        }
    }
    harness_dump("y", y.data(), n);
    harness_dump("row_max", rmax.data(), rows);
    harness_dump("row_sum", rsum.data(), rows);
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_max));
    CUDA_CHECK(cudaFree(d_sum));
    return harness_pass();
}
