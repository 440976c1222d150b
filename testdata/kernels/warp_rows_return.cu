// slatec-test: harness
// Warp-per-row kernels, the shape of ML normalisation code: each warp owns a
// row, the warps past the last row return, and the others reduce across
// their lanes with shuffles in a helper. The last block is partly past the
// end (1003 rows, 8 warps a block), so in the persistent worker its
// returned warps are alive: they must run the helper's shuffles with the
// others (it is a pure collective), read nothing (the first lane's value is
// loaded inside a shuffle), and store nothing.
#include "harness.h"

#include <vector>

#define FULL_MASK 0xffffffffu

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

__device__ float warp_max(float v) {
    for (int offset = warpSize / 2; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, offset));
    return v;
}

// Normalises each row to zero mean and unit variance; lane 0 records the
// row's mean and reciprocal deviation.
__global__ void row_norm(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ mean,
                         float* __restrict__ rstd, int rows, int cols) {
    const int lane = threadIdx.x % warpSize;
    const int row = blockIdx.x * (blockDim.x / warpSize) + threadIdx.x / warpSize;
    if (row >= rows) return;
    const float* xr = x + (size_t)row * cols;
    float sum = 0.0f;
    for (int c = lane; c < cols; c += warpSize) sum += xr[c];
    sum = warp_sum(sum);
    const float m = sum / cols;
    float var = 0.0f;
    for (int c = lane; c < cols; c += warpSize) {
        const float d = xr[c] - m;
        var += d * d;
    }
    var = warp_sum(var);
    const float s = rsqrtf(var / cols + 1e-5f);
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = s;
    }
    float* yr = y + (size_t)row * cols;
    for (int c = lane; c < cols; c += warpSize) yr[c] = (xr[c] - m) * s;
}

// Subtracts from each row its first element and scales it by its largest
// magnitude: the first element comes to every lane in a shuffle whose
// operand is a load.
__global__ void row_shift(const float* __restrict__ x, float* __restrict__ z, int rows, int cols) {
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;
    const float first = __shfl_sync(FULL_MASK, x[(size_t)row * cols + lane], 0);
    float big = 0.0f;
    for (int c = lane; c < cols; c += 32) big = fmaxf(big, fabsf(x[(size_t)row * cols + c] - first));
    big = warp_max(big);
    const float inv = big > 0.0f ? 1.0f / big : 0.0f;
    for (int c = lane; c < cols; c += 32) z[(size_t)row * cols + c] = (x[(size_t)row * cols + c] - first) * inv;
}

int main() {
    const int rows = 1003, cols = 200, threads = 256, warps = threads / 32;
    const int blocks = (rows + warps - 1) / warps;
    const size_t n = (size_t)rows * cols;
    std::vector<float> x(n), y(n), z(n), mean(rows), rstd(rows);
    harness_fill_float(x.data(), n, -2.0f, 3.0f);
    float *d_x, *d_y, *d_z, *d_mean, *d_rstd;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_z, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_mean, rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_rstd, rows * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    harness_timed("row_norm", [&] {
        row_norm<<<blocks, threads>>>(d_x, d_y, d_mean, d_rstd, rows, cols);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("row_shift", [&] {
        row_shift<<<blocks, threads>>>(d_x, d_z, rows, cols);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(z.data(), d_z, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(mean.data(), d_mean, rows * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(rstd.data(), d_rstd, rows * sizeof(float), cudaMemcpyDeviceToHost));

    std::vector<float> want_y(n), want_z(n), want_mean(rows), want_rstd(rows);
    for (int r = 0; r < rows; ++r) {
        const float* xr = &x[(size_t)r * cols];
        double sum = 0.0;
        for (int c = 0; c < cols; ++c) sum += xr[c];
        const double m = sum / cols;
        double var = 0.0;
        for (int c = 0; c < cols; ++c) var += (xr[c] - m) * (xr[c] - m);
        const double s = 1.0 / std::sqrt(var / cols + 1e-5);
        want_mean[r] = (float)m;
        want_rstd[r] = (float)s;
        double big = 0.0;
        for (int c = 0; c < cols; ++c) {
            want_y[(size_t)r * cols + c] = (float)((xr[c] - m) * s);
            big = std::max(big, (double)std::fabs(xr[c] - xr[0]));
        }
        for (int c = 0; c < cols; ++c) want_z[(size_t)r * cols + c] = (float)((xr[c] - xr[0]) / big);
    }
    if (!harness_close("mean", mean.data(), want_mean.data(), rows, 1e-4, 1e-5)) return harness_fail("row_norm mean");
    if (!harness_close("rstd", rstd.data(), want_rstd.data(), rows, 1e-4, 1e-5)) return harness_fail("row_norm rstd");
    if (!harness_close("y", y.data(), want_y.data(), n, 1e-3, 1e-4)) return harness_fail("row_norm");
    if (!harness_close("z", z.data(), want_z.data(), n, 1e-4, 1e-5)) return harness_fail("row_shift");
    harness_dump("y", y.data(), n);
    harness_dump("z", z.data(), n);
    harness_dump("mean", mean.data(), rows);
    harness_dump("rstd", rstd.data(), rows);
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_z));
    CUDA_CHECK(cudaFree(d_mean));
    CUDA_CHECK(cudaFree(d_rstd));
    return harness_pass();
}
