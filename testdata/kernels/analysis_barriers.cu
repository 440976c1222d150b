// slatec-test: no-harness
// Barrier placements for the analysis: block-uniform ifs, while/do-while, break/continue, switch, barriers in helpers, return-only loop exits.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#define B 128

// Barrier under a block-uniform condition (depends on blockIdx only).
__global__ void uniform_if(int* data) {
    __shared__ int s[B];
    s[threadIdx.x] = data[blockIdx.x * B + threadIdx.x];
    if (blockIdx.x % 2 == 0) {
        __syncthreads();
        data[blockIdx.x * B + threadIdx.x] = s[B - 1 - threadIdx.x];
    }
}

// while and do-while loops with barriers, a continue before one, a break after one.
__global__ void loop_forms(int* data, int rounds) {
    __shared__ int s[B];
    int v = data[blockIdx.x * B + threadIdx.x];
    int r = 0;
    while (r < rounds) {
        s[threadIdx.x] = v;
        __syncthreads();
        v += s[(threadIdx.x + 1) % B];
        __syncthreads();
        ++r;
    }
    int k = 0;
    do {
        s[threadIdx.x] = v;
        __syncthreads();
        if (k % 2) {
            ++k;
            continue;  // uniform: k is the same in every thread
        }
        v -= s[(threadIdx.x + 3) % B];
        __syncthreads();
        if (k > 4) break;
        ++k;
    } while (k < 8);
    data[blockIdx.x * B + threadIdx.x] = v;
}

// Early return, then barriers inside a switch on a kernel parameter (uniform).
__global__ void switch_barrier(const int* in, int* out, int n, int mode) {
    __shared__ int s[B];
    int i = blockIdx.x * B + threadIdx.x;
    if (i >= n) return;
    s[threadIdx.x] = in[i];
    switch (mode) {
        case 0:
            __syncthreads();
            out[i] = s[0];
            break;
        case 1:
            __syncthreads_or(s[threadIdx.x] > 0);
            out[i] = s[threadIdx.x];
            break;
        default:
            out[i] = -1;
            return;
    }
}

// A helper that contains the barrier; the kernel returns early before calling it.
__device__ int exchange(int* s, int v) {
    s[threadIdx.x] = v;
    cg::this_thread_block().sync();
    int w = s[threadIdx.x ^ 1];
    asm volatile("barrier.sync 0;" ::: "memory");
    return w;
}

__global__ void barrier_in_helper(const int* in, int* out, int n) {
    __shared__ int s[B];
    int i = blockIdx.x * B + threadIdx.x;
    if (i >= n) return;
    out[i] = exchange(s, in[i]);
}

// The loop's only exit is a per-thread return: when lowered, returned threads would
// have to keep attending barriers until every thread of the block has returned.
__global__ void return_only_exit(const int* len, int* out) {
    __shared__ int s[B];
    int n = len[blockIdx.x];
    for (int r = 0;; ++r) {
        int j = r * B + threadIdx.x;
        if (j >= n) return;
        s[threadIdx.x] = j;
        __syncthreads();
        out[blockIdx.x * 4096 + j] = s[(threadIdx.x + 1) % B];
        __syncthreads();
    }
}

// Barrier counts that differ per thread would be undefined behaviour natively; this one
// is only block-uniform because `flag` is loaded from one address by every thread.
__global__ void uniform_by_load(const int* flag, int* out) {
    __shared__ int s[B];
    s[threadIdx.x] = threadIdx.x;
    if (*flag) __syncthreads();
    out[blockIdx.x * B + threadIdx.x] = s[threadIdx.x];
}
