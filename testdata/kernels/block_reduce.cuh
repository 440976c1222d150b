// block_reduce.cuh — a block-wide sum helper (barriers inside a __device__ function) and a kernel using it.
// Included by include_headers.cu.
#pragma once

#include "grid_index.cuh"

// Sum over all threads of the block; every thread gets the result. BLOCK must be a
// multiple of 32 and equal blockDim.x; every thread of the block must call it.
template <typename T, int BLOCK>
__device__ T block_reduce_sum(T v) {
    __shared__ T warp_part[BLOCK / 32];
    __shared__ T total;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) warp_part[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        T acc = T(0);
        for (int w = 0; w < BLOCK / 32; ++w) acc += warp_part[w];
        total = acc;
    }
    __syncthreads();
    T result = total;
    __syncthreads();  // the next call may overwrite warp_part/total
    return result;
}

// Grid-stride sum per block; a kernel that lives in a header.
template <int BLOCK>
__global__ void block_sum_kernel(const int* in, int* block_sums, int n) {
    int acc = 0;
    for (unsigned i = global_tid(); i < (unsigned)n; i += grid_size()) acc += in[i];
    int s = block_reduce_sum<int, BLOCK>(acc);
    if (threadIdx.x == 0) block_sums[blockIdx.x] = s;
}
