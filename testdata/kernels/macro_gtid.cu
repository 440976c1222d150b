// slatec-test: harness
// blockIdx/gridDim hidden in macros (object-like, function-like, multi-line) used by kernels and by a helper.
#include "harness.h"

#include <vector>

#define GTID (blockIdx.x * blockDim.x + threadIdx.x)
#define NTHREADS (gridDim.x * blockDim.x)
#define BLOCK_BASE(b) ((b) * blockDim.x)
#define LAST_BLOCK (blockIdx.x == gridDim.x - 1)
#define GRID_LOOP(i, n) \
    for (int i = GTID; i < (n); i += NTHREADS)
#define TILE_ROW (blockIdx.y * blockDim.y + \
                  threadIdx.y)

// A helper that only sees blockIdx through a macro.
__device__ int offset_in_grid(int k) { return GTID * k - (int)BLOCK_BASE(blockIdx.x); }

__global__ void macro_stride(const int* in, int* out, int n) {
    GRID_LOOP(i, n) { out[i] = in[i] + offset_in_grid(3); }
}

// The last block (and only it) records the grid size it saw.
__global__ void macro_last_block(int* out, int* grid_seen, int n) {
    int i = GTID;
    if (i < n) out[i] = (int)blockIdx.x - (int)(gridDim.x / 2);
    if (LAST_BLOCK && threadIdx.x == 0) *grid_seen = gridDim.x;
}

// 2-D use: the row comes from a macro that spans two lines.
__global__ void macro_rows(int* out, int w, int h) {
    int row = TILE_ROW;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < h && col < w) out[row * w + col] = row * 2 - col;
}

int main() {
    const int n = (int)harness_scaled(2000000);
    std::vector<int> in(n), a(n), b(n);
    harness_fill_int(in.data(), n, -1000, 1000);
    const int w = 513, h = (int)harness_scaled(1000, 4) - 1;  // 999 unscaled: a partial row of blocks
    std::vector<int> rows((size_t)w * h);
    int *d_in, *d_a, *d_b, *d_grid_seen, *d_rows;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_a, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_b, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_grid_seen, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_rows, rows.size() * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    const int grid_a = (int)harness_scaled(2400), grid_b = (n + 255) / 256;  // 2400 (grid-stride) and 7813 blocks
    harness_timed("macro_stride", [&] {
        macro_stride<<<grid_a, 256>>>(d_in, d_a, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("macro_last_block", [&] {
        macro_last_block<<<grid_b, 256>>>(d_b, d_grid_seen, n);
        CUDA_CHECK(cudaGetLastError());
    });
    dim3 block(32, 4), grid((w + 31) / 32, (h + 3) / 4);  // 17 x 250 = 4250 blocks
    harness_timed("macro_rows", [&] {
        macro_rows<<<grid, block>>>(d_rows, w, h);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    int grid_seen = 0;
    CUDA_CHECK(cudaMemcpy(a.data(), d_a, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(b.data(), d_b, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&grid_seen, d_grid_seen, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(rows.data(), d_rows, rows.size() * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<int> want_a(n), want_b(n), want_rows(rows.size());
    const int total = grid_a * 256;
    for (int i = 0; i < n; ++i) {
        int g = i % total;  // thread that handles element i
        want_a[i] = in[i] + g * 3 - (g / 256) * 256;
        want_b[i] = i / 256 - grid_b / 2;
    }
    for (int r = 0; r < h; ++r)
        for (int c = 0; c < w; ++c) want_rows[(size_t)r * w + c] = r * 2 - c;
    if (!harness_equal("a", a.data(), want_a.data(), n)) return harness_fail("macro_stride");
    if (!harness_equal("b", b.data(), want_b.data(), n)) return harness_fail("macro_last_block");
    if (grid_seen != grid_b) return harness_fail("grid_seen %d, want %d", grid_seen, grid_b);
    if (!harness_equal("rows", rows.data(), want_rows.data(), rows.size())) return harness_fail("macro_rows");
    harness_dump("a", a.data(), n);
    harness_dump("b", b.data(), n);
    harness_dump("grid_seen", &grid_seen, 1);
    harness_dump("rows", rows.data(), rows.size());
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_grid_seen));
    CUDA_CHECK(cudaFree(d_rows));
    return harness_pass();
}
