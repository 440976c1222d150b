// slatec-test: harness
// Cooperative-groups block barriers (cta.sync(), cg::sync(cta), this_thread_block().sync()) with and without early returns.
#include "harness.h"

#include <cooperative_groups.h>
#include <vector>

namespace cg = cooperative_groups;

#define B 256
#define T2 16

// Scale each element by its block's largest magnitude. Tail threads return before the
// first cta.sync(); the tree skips positions past the live ones.
__global__ void scale_by_block_max(const float* in, float* out, int n) {
    cg::thread_block cta = cg::this_thread_block();
    __shared__ float s[B];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned live = min((unsigned)blockDim.x, n - blockIdx.x * blockDim.x);
    const unsigned r = cta.thread_rank();
    s[r] = fabsf(in[i]);
    cta.sync();
    for (unsigned stride = B / 2; stride > 0; stride >>= 1) {
        if (r < stride && r + stride < live) s[r] = fmaxf(s[r], s[r + stride]);
        cg::sync(cta);
    }
    out[i] = in[i] / s[0];
}

// 2-D blocks: normalise every row of a 16x16 tile by the row's sum.
__global__ void normalize_tile_rows(const float* in, float* out, int w, int h) {
    __shared__ float tile[T2][T2];
    __shared__ float row_sum[T2];
    cg::thread_block cta = cg::this_thread_block();
    const int x = blockIdx.x * T2 + threadIdx.x, y = blockIdx.y * T2 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = (x < w && y < h) ? in[y * w + x] : 0.0f;
    cg::this_thread_block().sync();
    if (threadIdx.x == 0) {
        float acc = 0.0f;
        for (int k = 0; k < T2; ++k) acc += tile[threadIdx.y][k];
        row_sum[threadIdx.y] = acc;
    }
    cta.sync();
    if (x < w && y < h) out[y * w + x] = tile[threadIdx.y][threadIdx.x] / row_sum[threadIdx.y];
}

int main() {
    const int n = (int)harness_scaled(555555 / B, 1) * B + 35;  // 555555 unscaled: a partial last block
    const int grid = (n + B - 1) / B;  // 2171 blocks
    const int w = 700, h = (int)harness_scaled(640, T2) + 10;  // 44 x 41 = 1804 tiles (unscaled)
    std::vector<float> in(n), out(n), img((size_t)w * h), nimg((size_t)w * h);
    for (int i = 0; i < n; ++i) {
        float m = 0.5f + 1.5f * harness_rng_float01();
        in[i] = (harness_rng_u32() & 1) ? m : -m;
    }
    harness_fill_float(img.data(), img.size(), 0.25f, 1.0f);
    float *d_in, *d_out, *d_img, *d_nimg;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_img, img.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_nimg, img.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_img, img.data(), img.size() * sizeof(float), cudaMemcpyHostToDevice));

    harness_timed("scale_by_block_max", [&] {
        scale_by_block_max<<<grid, B>>>(d_in, d_out, n);
        CUDA_CHECK(cudaGetLastError());
    });
    dim3 grid2((w + T2 - 1) / T2, (h + T2 - 1) / T2);
    harness_timed("normalize_tile_rows", [&] {
        normalize_tile_rows<<<grid2, dim3(T2, T2)>>>(d_img, d_nimg, w, h);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(nimg.data(), d_nimg, nimg.size() * sizeof(float), cudaMemcpyDeviceToHost));

    std::vector<float> want(n), want_img(img.size());
    for (int base = 0; base < n; base += B) {
        int end = std::min(n, base + B);
        float m = 0.0f;
        for (int i = base; i < end; ++i) m = std::fmax(m, std::fabs(in[i]));
        for (int i = base; i < end; ++i) want[i] = in[i] / m;
    }
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int x0 = x / T2 * T2;
            float acc = 0.0f;
            for (int k = 0; k < T2; ++k) acc += x0 + k < w ? img[(size_t)y * w + x0 + k] : 0.0f;
            want_img[(size_t)y * w + x] = img[(size_t)y * w + x] / acc;
        }
    if (!harness_close("scaled", out.data(), want.data(), n, 0.0, 0.0)) return harness_fail("scale_by_block_max");
    if (!harness_close("rows", nimg.data(), want_img.data(), nimg.size(), 0.0, 0.0))
        return harness_fail("normalize_tile_rows");
    harness_dump("scaled", out.data(), n);
    harness_dump("rows", nimg.data(), nimg.size());
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_img));
    CUDA_CHECK(cudaFree(d_nimg));
    return harness_pass();
}
