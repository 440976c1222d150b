// slatec-test: refuse two_phase_grid_sum
// Grid-wide barrier via cg::this_grid().sync(): workers cannot emulate it, so the transform must refuse this kernel.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// Phase 1 writes per-block partial sums, the grid barrier publishes them, phase 2 lets
// block 0 add them up. Needs a cooperative launch with all blocks co-resident.
__global__ void two_phase_grid_sum(const float* in, float* partial, float* total, int n) {
    cg::thread_block cta = cg::this_thread_block();
    __shared__ float s[256];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) acc += in[i];
    s[threadIdx.x] = acc;
    cta.sync();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        cta.sync();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
    cg::this_grid().sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float t = 0.0f;
        for (unsigned b = 0; b < gridDim.x; ++b) t += partial[b];
        *total = t;
    }
}

// An ordinary kernel in the same file: acceptable.
__global__ void scale(float* v, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= s;
}
