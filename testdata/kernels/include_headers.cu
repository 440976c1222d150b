// slatec-test: harness
// Kernels and helpers spread over .cuh headers: a header kernel template, a barrier inside a header helper, header macros.
#include "harness.h"

#include <vector>

#include "block_reduce.cuh"
#include "vec_math.cuh"

// Uses the header helper twice in a row (its trailing barrier protects the reuse).
__global__ void sum_and_sumsq(const int* in, int* sums, int* sumsqs, int n) {
    int i = global_tid();
    int v = i < n ? in[i] : 0;
    int s = block_reduce_sum<int, 256>(v);
    int q = block_reduce_sum<int, 256>(v * v);
    if (threadIdx.x == 0) {
        sums[blockIdx.x] = s;
        sumsqs[blockIdx.x] = q;
    }
}

// float2 helpers from vec_math.cuh; the last thread of the grid also writes a marker.
__global__ void project(const float2* p, float2 dir, float* out, int n, int* marker) {
    for (unsigned i = GLOBAL_TID; i < (unsigned)n; i += GRID_THREADS)
        out[i] = clampf(dot2(p[i] + 0.5f * dir, dir), -1.0f, 1.0f);
    if (is_last_thread_of_grid()) *marker = (int)block_first(blockDim.x);
}

int main() {
    const int n = (int)harness_scaled(1000000);
    const int grid1 = (n + 255) / 256;  // 3907 blocks
    std::vector<int> in(n), s(grid1), q(grid1), bs(2000);
    std::vector<float2> pts(n);
    std::vector<float> proj(n);
    harness_fill_int(in.data(), n, -100, 100);
    for (int i = 0; i < n; ++i) pts[i] = make_float2(harness_rng_float01() - 0.5f, harness_rng_float01() - 0.5f);
    int *d_in, *d_s, *d_q, *d_bs, *d_marker;
    float2* d_pts;
    float* d_proj;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_s, grid1 * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_q, grid1 * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_bs, 2000 * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_marker, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_pts, n * sizeof(float2)));
    CUDA_CHECK(cudaMalloc(&d_proj, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_pts, pts.data(), n * sizeof(float2), cudaMemcpyHostToDevice));

    harness_timed("sum_and_sumsq", [&] {
        sum_and_sumsq<<<grid1, 256>>>(d_in, d_s, d_q, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("block_sum_kernel", [&] {
        block_sum_kernel<128><<<2000, 128>>>(d_in, d_bs, n);
        CUDA_CHECK(cudaGetLastError());
    });
    const float2 dir = make_float2(0.6f, 0.8f);
    harness_timed("project", [&] {
        project<<<2100, 128>>>(d_pts, dir, d_proj, n, d_marker);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    int marker = 0;
    CUDA_CHECK(cudaMemcpy(s.data(), d_s, grid1 * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(q.data(), d_q, grid1 * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(bs.data(), d_bs, 2000 * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(proj.data(), d_proj, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&marker, d_marker, sizeof marker, cudaMemcpyDeviceToHost));

    std::vector<int> ws(grid1, 0), wq(grid1, 0), wbs(2000, 0);
    std::vector<float> wp(n);
    for (int i = 0; i < n; ++i) {
        ws[i / 256] += in[i];
        wq[i / 256] += in[i] * in[i];
        wbs[(i % (2000 * 128)) / 128] += in[i];
        wp[i] = clampf(dot2(pts[i] + 0.5f * dir, dir), -1.0f, 1.0f);
    }
    if (!harness_equal("sums", s.data(), ws.data(), grid1)) return harness_fail("sums");
    if (!harness_equal("sumsq", q.data(), wq.data(), grid1)) return harness_fail("sums of squares");
    if (!harness_equal("block_sums", bs.data(), wbs.data(), 2000)) return harness_fail("block_sum_kernel");
    if (!harness_close("proj", proj.data(), wp.data(), n, 1e-5, 1e-6)) return harness_fail("project");
    if (marker != 2099 * 128) return harness_fail("marker %d", marker);
    harness_dump("sums", s.data(), grid1);
    harness_dump("sumsq", q.data(), grid1);
    harness_dump("block_sums", bs.data(), 2000);
    harness_dump("proj", proj.data(), n);
    harness_dump("marker", &marker, 1);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_s));
    CUDA_CHECK(cudaFree(d_q));
    CUDA_CHECK(cudaFree(d_bs));
    CUDA_CHECK(cudaFree(d_marker));
    CUDA_CHECK(cudaFree(d_pts));
    CUDA_CHECK(cudaFree(d_proj));
    return harness_pass();
}
