// slatec-test: harness
// 2-D five-point stencil streaming whole rows through a 4-row ring (64 KB opted-in dynamic shared) with cuda::memcpy_async completing on cuda::barrier objects; one event-timed launch.
#include "harness.h"

#include <cooperative_groups.h>
#include <cuda/barrier>

#include <vector>

namespace cg = cooperative_groups;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

#define W 4096       // row length (floats): one row is 16 KB
#define RING 4       // rows resident: three being read, one arriving
#define BAND 16      // output rows per block
#define THREADS 256

// out[r][c] = 0.5 in[r][c] + 0.125 (in[r-1][c] + in[r+1][c] + in[r][c-1] + in[r][c+1]), zero
// outside the H x W grid. `inpad` has a zero row above and below: padded row p = row p-1.
__global__ void __launch_bounds__(THREADS)
rowstream_stencil(const float* __restrict__ inpad, float* __restrict__ out, int H) {
    extern __shared__ __align__(16) float ring[];  // [RING][W]
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bars[RING];
#pragma nv_diag_default static_var_with_dynamic_init
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0)
        for (int s = 0; s < RING; ++s) init(&bars[s], block.size());
    block.sync();

    const int r0 = blockIdx.x * BAND;
    const int r1 = min(r0 + BAND, H);
    // Output row r reads padded rows r, r+1, r+2; padded row p lives in slot p % RING.
    auto issue = [&](int p) {
        cuda::memcpy_async(block, ring + (p % RING) * W, inpad + (size_t)p * W, cuda::aligned_size_t<16>(sizeof(float) * W),
                           bars[p % RING]);
    };
    issue(r0);
    issue(r0 + 1);
    issue(r0 + 2);
    bars[r0 % RING].arrive_and_wait();
    bars[(r0 + 1) % RING].arrive_and_wait();
    for (int r = r0; r < r1; ++r) {
        // Everyone has arrived here, so everyone is done with row r-1's slot: refill it.
        bars[(r + 2) % RING].arrive_and_wait();
        if (r + 3 <= r1 + 1) issue(r + 3);
        const float* up = ring + (r % RING) * W;
        const float* mid = ring + ((r + 1) % RING) * W;
        const float* dn = ring + ((r + 2) % RING) * W;
        for (int c = threadIdx.x; c < W; c += THREADS) {
            const float left = c > 0 ? mid[c - 1] : 0.0f;
            const float right = c < W - 1 ? mid[c + 1] : 0.0f;
            out[(size_t)r * W + c] = 0.5f * mid[c] + 0.125f * ((up[c] + dn[c]) + (left + right));
        }
    }
    // Every copy issued has been waited for (the last, padded row r1+1, at r = r1-1): none
    // is in flight when the block exits.
}

int main() {
    const int H = (int)harness_scaled(4096 + 8);  // 257 bands, the last one short (unscaled)
    const int grid = (H + BAND - 1) / BAND;
    const int smem = RING * W * (int)sizeof(float);  // 65536 bytes > 48 KB
    std::vector<float> in((size_t)H * W), inpad((size_t)(H + 2) * W, 0.0f), out((size_t)H * W);
    harness_fill_float(in.data(), in.size(), -1.0f, 1.0f);
    std::copy(in.begin(), in.end(), inpad.begin() + W);
    float *d_inpad, *d_out;
    CUDA_CHECK(cudaMalloc(&d_inpad, inpad.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, out.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_inpad, inpad.data(), inpad.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0, out.size() * sizeof(float)));
    CUDA_CHECK(cudaFuncSetAttribute(rowstream_stencil, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start, 0));
    harness_timed("rowstream_stencil", [&] {
        rowstream_stencil<<<grid, THREADS, smem, 0>>>(d_inpad, d_out, H);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("PROGRAM_TIME barrier_rowstream_stencil %.4f\n", (double)ms);
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));

    auto at = [&](int r, int c) -> double { return (r < 0 || r >= H || c < 0 || c >= W) ? 0.0 : in[(size_t)r * W + c]; };
    for (int r = 0; r < H; ++r)
        for (int c = 0; c < W; ++c) {
            const double want = 0.5 * at(r, c) + 0.125 * (at(r - 1, c) + at(r + 1, c) + at(r, c - 1) + at(r, c + 1));
            const double got = out[(size_t)r * W + c];
            if (!(std::fabs(got - want) <= 1e-6))
                return harness_fail("out[%d][%d] = %.9g, want %.9g", r, c, got, want);
        }
    harness_dump("out", out.data(), out.size());
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_inpad));
    CUDA_CHECK(cudaFree(d_out));
    return harness_pass();
}
