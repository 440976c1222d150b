// slatec-test: harness
// Warp-per-row kernels whose reductions go through cooperative-groups tiles
// passed to helpers (tile_sum(cg::thread_block_tile<32> g, v), the CUDA
// samples' and CUB-style shape). The warps past the last row return; in the
// persistent worker they are alive and must run the helper's tile shuffles
// with the others, then the block barrier that combines the rows' results.
// 1003 rows, 8 warps a block: the last block has 3 live warps.
#include "harness.h"

#include <cooperative_groups.h>
#include <vector>

namespace cg = cooperative_groups;

// The loop runs to the tile's size: the helper's control flow comes from
// its tile argument, which the caller must give every lane alike.
__device__ float tile_sum(cg::thread_block_tile<32> g, float v) {
    for (int off = g.size() / 2; off > 0; off /= 2) v += g.shfl_down(v, off);
    return g.shfl(v, 0);
}

__device__ float tile_max(const cg::thread_block_tile<32>& g, float v) {
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, g.shfl_xor(v, off));
    return v;
}

// Each warp sums its row; the block's rows' largest sum is written once a
// block (the combination behind a barrier the returned warps must reach).
__global__ void row_sums_block_max(const float* __restrict__ x, float* __restrict__ sums,
                                   float* __restrict__ block_max, int rows, int cols) {
    __shared__ float warp_sums[32];
    cg::thread_block cta = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cta);
    const int w = threadIdx.x / 32;
    const int row = blockIdx.x * (blockDim.x / 32) + w;
    if (threadIdx.x < 32) warp_sums[threadIdx.x] = -1e30f;
    cta.sync();
    if (row >= rows) return;
    float s = 0.0f;
    for (int c = warp.thread_rank(); c < cols; c += 32) s += x[(size_t)row * cols + c];
    s = tile_sum(warp, s);
    if (warp.thread_rank() == 0) {
        sums[row] = s;
        warp_sums[w] = s;
    }
    cta.sync();
    if (threadIdx.x < 32) {
        float m = tile_max(warp, warp_sums[threadIdx.x]);
        if (threadIdx.x == 0) block_max[blockIdx.x] = m;
    }
}

// The tile is made after the return, by the warps that stay; the returned
// warps make theirs too when the return is lowered.
__global__ void row_scale(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= rows) return;
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    float big = 0.0f;
    for (int c = warp.thread_rank(); c < cols; c += 32) big = fmaxf(big, fabsf(x[(size_t)row * cols + c]));
    big = tile_max(warp, big);
    const float inv = big > 0.0f ? 1.0f / big : 0.0f;
    for (int c = warp.thread_rank(); c < cols; c += 32) y[(size_t)row * cols + c] = x[(size_t)row * cols + c] * inv;
}

int main() {
    const int rows = 1003, cols = 200, threads = 256, warps = threads / 32;
    const int blocks = (rows + warps - 1) / warps;
    const size_t n = (size_t)rows * cols;
    std::vector<float> x(n), y(n), sums(rows), bmax(blocks);
    harness_fill_float(x.data(), n, -2.0f, 3.0f);
    float *d_x, *d_y, *d_sums, *d_bmax;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_sums, rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_bmax, blocks * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    harness_timed("row_sums_block_max", [&] {
        row_sums_block_max<<<blocks, threads>>>(d_x, d_sums, d_bmax, rows, cols);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("row_scale", [&] {
        row_scale<<<blocks, threads>>>(d_x, d_y, rows, cols);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, rows * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(bmax.data(), d_bmax, blocks * sizeof(float), cudaMemcpyDeviceToHost));

    std::vector<float> want_y(n), want_sums(rows), want_bmax(blocks, -1e30f);
    for (int r = 0; r < rows; ++r) {
        const float* xr = &x[(size_t)r * cols];
        double s = 0.0, big = 0.0;
        for (int c = 0; c < cols; ++c) {
            s += xr[c];
            big = std::max(big, (double)std::fabs(xr[c]));
        }
        want_sums[r] = (float)s;
        want_bmax[r / warps] = std::max(want_bmax[r / warps], (float)s);
        for (int c = 0; c < cols; ++c) want_y[(size_t)r * cols + c] = (float)(xr[c] / big);
    }
    if (!harness_close("sums", sums.data(), want_sums.data(), rows, 1e-3, 1e-4)) return harness_fail("row_sums_block_max sums");
    if (!harness_close("bmax", bmax.data(), want_bmax.data(), blocks, 1e-3, 1e-4)) return harness_fail("row_sums_block_max max");
    if (!harness_close("y", y.data(), want_y.data(), n, 1e-5, 1e-6)) return harness_fail("row_scale");
    harness_dump("sums", sums.data(), rows);
    harness_dump("bmax", bmax.data(), blocks);
    harness_dump("y", y.data(), n);
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_bmax));
    return harness_pass();
}
