// grid_index.cuh — index helpers and macros that read blockIdx/gridDim, for inclusion by kernels.
// Included by include_headers.cu; the helpers reach blockIdx directly and through each other.
#pragma once

#define GLOBAL_TID (blockIdx.x * blockDim.x + threadIdx.x)
#define GRID_THREADS (gridDim.x * blockDim.x)

__device__ __forceinline__ unsigned global_tid() { return GLOBAL_TID; }
__device__ __forceinline__ unsigned grid_size() { return GRID_THREADS; }

// First element owned by this block when each block owns `per_block` elements.
__device__ inline unsigned block_first(unsigned per_block) { return blockIdx.x * per_block; }

// Transitive use: no blockIdx here, only calls.
__device__ inline bool is_last_thread_of_grid() { return global_tid() == grid_size() - 1; }
