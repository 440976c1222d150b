// slatec-test: harness
// Device printf from one thread of block 0 (1-D and 2-D grids, after a barrier); grid dimensions also written to memory.
#include "harness.h"

#include <vector>

__global__ void scale_and_report(const float* in, float* out, int n, float factor) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * factor;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        printf("scale_and_report: n=%d grid=%u block=%u factor=%.2f first=%.4f\n", n, gridDim.x, blockDim.x,
               factor, in[0] * factor);
}

// printf after a barrier in a 2-D grid; the printing thread also stores what it saw.
__global__ void tile_report(const int* in, int* tile_sums, int* dims_seen, int w, int h) {
    __shared__ int sum;
    if (threadIdx.x == 0 && threadIdx.y == 0) sum = 0;
    __syncthreads();
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) atomicAdd(&sum, in[y * w + x]);
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        tile_sums[blockIdx.y * gridDim.x + blockIdx.x] = sum;
        if (blockIdx.x == 0 && blockIdx.y == 0) {
            dims_seen[0] = gridDim.x;
            dims_seen[1] = gridDim.y;
            printf("tile_report: grid=%ux%u tile(0,0) sum=%d %s\n", gridDim.x, gridDim.y, sum, "ok");
        }
    }
}

int main() {
    const int n = (int)harness_scaled(700000);
    const int w = 640, h = (int)harness_scaled(480, 16);  // multiples of 16
    std::vector<float> in(n), out(n);
    std::vector<int> img((size_t)w * h);
    harness_fill_float(in.data(), n, -1.0f, 1.0f);
    harness_fill_int(img.data(), img.size(), 0, 9);
    dim3 block2(16, 16), grid2(w / 16, h / 16);  // 40 x 30 = 1200 tiles
    const int ntiles = grid2.x * grid2.y;
    float *d_in, *d_out;
    int *d_img, *d_sums, *d_dims;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_img, img.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sums, ntiles * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_dims, 2 * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_img, img.data(), img.size() * sizeof(int), cudaMemcpyHostToDevice));

    // Under HARNESS_REPS each kernel's line is printed once per run.
    harness_timed("scale_and_report", [&] {
        scale_and_report<<<(n + 255) / 256, 256>>>(d_in, d_out, n, 0.5f);  // 2735 blocks
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());  // keep the two printf lines in order
    harness_timed("tile_report", [&] {
        tile_report<<<grid2, block2>>>(d_img, d_sums, d_dims, w, h);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<int> sums(ntiles);
    int dims[2];
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, ntiles * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(dims, d_dims, sizeof dims, cudaMemcpyDeviceToHost));

    std::vector<float> want(n);
    std::vector<int> want_sums(ntiles, 0);
    for (int i = 0; i < n; ++i) want[i] = in[i] * 0.5f;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) want_sums[(y / 16) * grid2.x + x / 16] += img[(size_t)y * w + x];
    if (!harness_close("out", out.data(), want.data(), n, 0.0, 0.0)) return harness_fail("scale");
    if (!harness_equal("tile_sums", sums.data(), want_sums.data(), ntiles)) return harness_fail("tile sums");
    if (dims[0] != (int)grid2.x || dims[1] != (int)grid2.y) return harness_fail("dims %dx%d", dims[0], dims[1]);
    harness_dump("out", out.data(), n);
    harness_dump("tile_sums", sums.data(), ntiles);
    harness_dump("dims", dims, 2);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_img));
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_dims));
    return harness_pass();
}
