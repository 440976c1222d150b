// slatec-test: harness
// Tiled matrix transpose through a 32x33 shared tile (2-D grid, 32x8 blocks), plus naive and tiled-copy baselines.
#include "harness.h"

#include <vector>

#define TILE 32
#define ROWS 8  // each thread moves TILE/ROWS elements

__global__ void copy_tiled(float* out, const float* in, int width, int height) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height) out[(y + j) * width + x] = tile[threadIdx.y + j][threadIdx.x];
}

__global__ void transpose_naive(float* out, const float* in, int width, int height) {
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height) out[x * height + y + j] = in[(y + j) * width + x];
}

// Coalesced reads and writes: the tile is read by rows and written back by columns.
// The extra column keeps the column reads free of shared-memory bank conflicts.
__global__ void transpose_tiled(float* out, const float* in, int width, int height) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;  // coordinates in the transposed matrix
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
    const int width = 2000, height = (int)harness_scaled(1088, 32) + 12;  // neither a multiple of 32
    const size_t count = (size_t)width * height;
    std::vector<float> in(count), copy(count), t1(count), t2(count);
    harness_fill_float(in.data(), count, -100.0f, 100.0f);
    float *d_in, *d_copy, *d_t1, *d_t2;
    CUDA_CHECK(cudaMalloc(&d_in, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_copy, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_t1, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_t2, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), count * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(TILE, ROWS);
    dim3 grid((width + TILE - 1) / TILE, (height + TILE - 1) / TILE);  // 63 x 35 = 2205 blocks
    harness_timed("copy_tiled", [&] {
        copy_tiled<<<grid, block>>>(d_copy, d_in, width, height);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("transpose_naive", [&] {
        transpose_naive<<<grid, block>>>(d_t1, d_in, width, height);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("transpose_tiled", [&] {
        transpose_tiled<<<grid, block>>>(d_t2, d_in, width, height);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(copy.data(), d_copy, count * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(t1.data(), d_t1, count * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(t2.data(), d_t2, count * sizeof(float), cudaMemcpyDeviceToHost));

    std::vector<float> want(count);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) want[(size_t)x * height + y] = in[(size_t)y * width + x];
    if (!harness_close("copy", copy.data(), in.data(), count, 0.0, 0.0)) return harness_fail("copy_tiled");
    if (!harness_close("t1", t1.data(), want.data(), count, 0.0, 0.0)) return harness_fail("transpose_naive");
    if (!harness_close("t2", t2.data(), want.data(), count, 0.0, 0.0)) return harness_fail("transpose_tiled");
    harness_dump("copy", copy.data(), count);
    harness_dump("t1", t1.data(), count);
    harness_dump("t2", t2.data(), count);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_copy));
    CUDA_CHECK(cudaFree(d_t1));
    CUDA_CHECK(cudaFree(d_t2));
    return harness_pass();
}
