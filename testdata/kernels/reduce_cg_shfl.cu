// slatec-test: harness
// Two-pass sum reduction with cooperative groups: tile shuffles, cta.sync(), cg::sync(cta), this_thread_block().sync().
#include "harness.h"

#include <cooperative_groups.h>
#include <vector>

namespace cg = cooperative_groups;

// Sum within one warp tile; lane 0 ends up with the total.
__device__ float tile_sum(cg::thread_block_tile<32> warp, float v) {
    for (int off = warp.size() / 2; off > 0; off /= 2) v += warp.shfl_down(v, off);
    return v;
}

// Grid-stride accumulate, then warp shuffles, then one warp combines the warp totals.
template <int BLOCK>
__global__ void reduce_sum(const float* __restrict__ in, float* __restrict__ partial, int n) {
    static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps only");
    __shared__ float warp_totals[BLOCK / 32];
    cg::thread_block cta = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cta);

    float v = 0.0f;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += BLOCK * gridDim.x) v += in[i];
    v = tile_sum(warp, v);
    if (warp.thread_rank() == 0) warp_totals[warp.meta_group_rank()] = v;
    cta.sync();
    if (warp.meta_group_rank() == 0) {
        v = warp.thread_rank() < BLOCK / 32 ? warp_totals[warp.thread_rank()] : 0.0f;
        v = tile_sum(warp, v);
        if (cta.thread_rank() == 0) partial[blockIdx.x] = v;
    }
}

// Classic shared-memory tree (integer, so exact); blockDim.x must be a power of two.
__global__ void reduce_tree_int(const int* in, int* partial, int n) {
    extern __shared__ int sdata[];
    cg::thread_block cta = cg::this_thread_block();
    unsigned tid = cta.thread_rank();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0;
    cg::this_thread_block().sync();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        cg::sync(cta);
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}

int main() {
    const int n = (int)harness_scaled(1 << 22, 512);  // a multiple of iblock
    const int grid = (int)harness_scaled(2048);  // each thread accumulates 8 elements
    std::vector<float> x(n);
    std::vector<int> xi(n);
    harness_fill_float(x.data(), n, 0.0f, 1.0f);
    harness_fill_int(xi.data(), n, -1000, 1000);

    float *d_x, *d_partial, *d_sum;
    int *d_xi, *d_ipartial;
    const int iblock = 512, igrid = n / iblock;  // 8192 blocks
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_partial, grid * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_sum, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_xi, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_ipartial, igrid * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_xi, xi.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    harness_timed("reduce_sum+final", [&] {
        reduce_sum<256><<<grid, 256>>>(d_x, d_partial, n);
        CUDA_CHECK(cudaGetLastError());
        reduce_sum<1024><<<1, 1024>>>(d_partial, d_sum, grid);  // second pass: one block
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("reduce_tree_int", [&] {
        reduce_tree_int<<<igrid, iblock, iblock * sizeof(int)>>>(d_xi, d_ipartial, n);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> partial(grid);
    std::vector<int> ipartial(igrid);
    float sum = 0;
    CUDA_CHECK(cudaMemcpy(partial.data(), d_partial, grid * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&sum, d_sum, sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(ipartial.data(), d_ipartial, igrid * sizeof(int), cudaMemcpyDeviceToHost));

    double want = 0;
    for (int i = 0; i < n; ++i) want += x[i];
    if (std::fabs(sum - want) > 1e-4 * want) return harness_fail("sum %.3f, want %.3f", sum, want);
    std::vector<int> want_i(igrid, 0);
    for (int i = 0; i < n; ++i) want_i[i / iblock] += xi[i];
    if (!harness_equal("ipartial", ipartial.data(), want_i.data(), igrid)) return harness_fail("tree");

    harness_dump("partial", partial.data(), grid);
    harness_dump("sum", &sum, 1);
    harness_dump("ipartial", ipartial.data(), igrid);
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_partial));
    CUDA_CHECK(cudaFree(d_sum));
    CUDA_CHECK(cudaFree(d_xi));
    CUDA_CHECK(cudaFree(d_ipartial));
    return harness_pass();
}
