// slatec-test: harness
// Cooperative-groups grid group without grid sync: thread_rank/size/num_threads/block_rank/num_blocks/dim_blocks/block_index/thread_index/dim_threads/is_valid on this_grid(), in a kernel and in a helper, 1-D, 2-D and 3-D grids.
#include "harness.h"

#include <cooperative_groups.h>
#include <vector>

namespace cg = cooperative_groups;

// Every query of a 3-D grid of 3-D blocks, recorded per thread.
__global__ void grid_ids(unsigned long long* out) {
    cg::grid_group grid = cg::this_grid();
    unsigned long long r = grid.thread_rank();
    dim3 bi = grid.block_index();
    dim3 db = grid.dim_blocks();
    out[r * 5 + 0] = r;
    out[r * 5 + 1] = grid.block_rank();
    out[r * 5 + 2] = grid.size() * 1000 + grid.num_blocks();
    out[r * 5 + 3] = bi.x + 10 * bi.y + 100 * bi.z + 1000 * (db.x + 10 * db.y + 100 * db.z);
    out[r * 5 + 4] = grid.num_threads() + (grid.is_valid() ? 1u : 0u) * 0u + cg::grid_group::num_blocks();
}

// The rank from a helper (cloned so that it reads the logical index).
__device__ unsigned long long global_rank() { return cg::this_grid().thread_rank(); }

// A grid-stride loop over the grid group (a grid of fewer blocks than SMs).
__global__ void grid_stride_scale(const float* in, float* out, unsigned long long n) {
    auto g = cg::this_grid();
    for (unsigned long long i = global_rank(); i < n; i += g.num_threads())
        out[i] = 2.0f * in[i] + (float)(g.block_rank() % 3);
}

// 2-D: coordinates from thread_index() and the row width from dim_threads().
__global__ void grid_coords(int* out) {
    dim3 t = cg::this_grid().thread_index();
    unsigned w = cg::this_grid().dim_threads().x;
    out[t.y * w + t.x] = (int)(t.x * 1000 + t.y);
}

int main() {
    const dim3 g3(3, 2, 2), b3(8, 4, 2);
    const unsigned long long threads3 = 3ull * 2 * 2 * 64;
    std::vector<unsigned long long> ids(threads3 * 5);
    const unsigned long long n = (unsigned long long)harness_scaled(1 << 20);
    std::vector<float> in(n), out(n);
    harness_fill_float(in.data(), n, -1.0f, 1.0f);
    const dim3 g2(5, 3), b2(16, 8);
    const unsigned w = 5 * 16, h = 3 * 8;
    std::vector<int> coords(w * h);
    unsigned long long* d_ids;
    float *d_in, *d_out;
    int* d_coords;
    CUDA_CHECK(cudaMalloc(&d_ids, ids.size() * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_coords, coords.size() * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    harness_timed("grid_ids", [&] {
        grid_ids<<<g3, b3>>>(d_ids);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("grid_stride_scale", [&] {
        grid_stride_scale<<<40, 256>>>(d_in, d_out, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("grid_coords", [&] {
        grid_coords<<<g2, b2>>>(d_coords);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(ids.data(), d_ids, ids.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(coords.data(), d_coords, coords.size() * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<unsigned long long> want_ids(ids.size());
    for (unsigned bz = 0; bz < 2; ++bz)
        for (unsigned by = 0; by < 2; ++by)
            for (unsigned bx = 0; bx < 3; ++bx)
                for (unsigned t = 0; t < 64; ++t) {
                    unsigned long long br = (bz * 2 + by) * 3 + bx, r = br * 64 + t;
                    want_ids[r * 5 + 0] = r;
                    want_ids[r * 5 + 1] = br;
                    want_ids[r * 5 + 2] = threads3 * 1000 + 12;
                    want_ids[r * 5 + 3] = bx + 10 * by + 100 * bz + 1000 * (3 + 10 * 2 + 100 * 2);
                    want_ids[r * 5 + 4] = threads3 + 12;
                }
    std::vector<float> want_out(n);
    for (unsigned long long i = 0; i < n; ++i) want_out[i] = 2.0f * in[i] + (float)((i / 256 % 40) % 3);
    std::vector<int> want_coords(coords.size());
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x) want_coords[y * w + x] = (int)(x * 1000 + y);
    if (!harness_equal("ids", ids.data(), want_ids.data(), ids.size())) return harness_fail("grid_ids");
    if (!harness_close("scaled", out.data(), want_out.data(), n, 0.0, 0.0)) return harness_fail("grid_stride_scale");
    if (!harness_equal("coords", coords.data(), want_coords.data(), coords.size())) return harness_fail("grid_coords");
    harness_dump("ids", ids.data(), ids.size());
    harness_dump("scaled", out.data(), n);
    harness_dump("coords", coords.data(), coords.size());
    CUDA_CHECK(cudaFree(d_ids));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_coords));
    return harness_pass();
}
