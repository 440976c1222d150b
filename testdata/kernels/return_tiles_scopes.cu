// slatec-test: harness
// Early returns before tiled loops with barriers, in the shapes of tiled
// GEMMs such as cuda_hgemm's: the copies form addresses from the loop's
// counter and bound (&A[row * K + t * TILE]), a local counter array is
// incremented by index, and loops nested in or beside the tiled one
// declare their own counters of the same name. None of these writes the
// loop's bound or counter, so the return is lowered (threads that returned
// run the loop's barriers) rather than refused. Rows past the end return
// (1003 rows, 4 a block: the last block has 3).
#include "harness.h"

#include <vector>

#define TILE 32
#define ROWS_PER_BLOCK 4

// Row sums by tiles through shared memory; thread (x, y) copies column x of
// its row's tile. seen[] counts, per thread, the tiles whose column x lies
// inside the row and those past its end.
__global__ void tiled_row_sums(const float* A, float* sums, int* seen_out, int rows, int K) {
    __shared__ float tile[ROWS_PER_BLOCK][TILE];
    const int x = threadIdx.x, y = threadIdx.y;
    const int row = blockIdx.x * ROWS_PER_BLOCK + y;
    const int k_tiles = (K + TILE - 1) / TILE;
    if (row >= rows) return;
    float acc = 0.0f;
    int seen[2] = {0, 0};
    for (int t = 0; t < k_tiles; ++t) {
        const float* src = &A[(size_t)row * K + t * TILE];
        const int col = t * TILE + x;
        tile[y][x] = col < K ? src[x] : 0.0f;
        ++seen[col < K ? 0 : 1];
        __syncthreads();
        if (x == 0) {
            for (int t = 0; t < TILE; ++t) acc += tile[y][t];  // its own t
        }
        __syncthreads();
    }
    if (x == 0) sums[row] = acc;
    seen_out[row * TILE + x] = seen[0] * 1000 + seen[1];
}

// Two phases over the same counter name: the first around barriers (a
// neighbour's value through shared memory), the second, beside it, with a
// k_step of its own and no barrier.
__global__ void two_phase(const float* A, float* out, int rows, int K) {
    __shared__ float buf[ROWS_PER_BLOCK][TILE];
    const int x = threadIdx.x, y = threadIdx.y;
    const int row = blockIdx.x * ROWS_PER_BLOCK + y;
    if (row >= rows) return;
    float acc = 0.0f;
    for (int k_step = 0; k_step < 2; ++k_step) {
        buf[y][x] = A[(size_t)row * K + k_step * TILE + x];
        __syncthreads();
        acc += buf[y][(x + 1) % TILE];
        __syncthreads();
    }
    for (int k_step = 2; k_step < 4; ++k_step) acc += A[(size_t)row * K + k_step * TILE + x];
    out[row * TILE + x] = acc;
}

int main() {
    const int rows = 1003, K = 200;  // K is not a multiple of TILE; K >= 4 * TILE
    const int blocks = (rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    const int k_tiles = (K + TILE - 1) / TILE;
    const size_t n = (size_t)rows * K;
    std::vector<float> a(n), sums(rows), out((size_t)rows * TILE);
    std::vector<int> seen((size_t)rows * TILE);
    harness_fill_float(a.data(), n, -1.0f, 1.0f);
    float *d_a, *d_sums, *d_out;
    int* d_seen;
    CUDA_CHECK(cudaMalloc(&d_a, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_sums, rows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, (size_t)rows * TILE * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_seen, (size_t)rows * TILE * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_a, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    const dim3 block(TILE, ROWS_PER_BLOCK);

    harness_timed("tiled_row_sums", [&] {
        tiled_row_sums<<<blocks, block>>>(d_a, d_sums, d_seen, rows, K);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("two_phase", [&] {
        two_phase<<<blocks, block>>>(d_a, d_out, rows, K);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, rows * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, (size_t)rows * TILE * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(seen.data(), d_seen, (size_t)rows * TILE * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<float> want_sums(rows), want_out((size_t)rows * TILE);
    std::vector<int> want_seen((size_t)rows * TILE);
    for (int r = 0; r < rows; ++r) {
        const float* ar = &a[(size_t)r * K];
        float acc = 0.0f;  // in the kernel's order: tile by tile, column by column
        for (int t = 0; t < k_tiles; ++t)
            for (int c = 0; c < TILE; ++c) acc += t * TILE + c < K ? ar[t * TILE + c] : 0.0f;
        want_sums[r] = acc;
        for (int x = 0; x < TILE; ++x) {
            int inside = 0;
            for (int t = 0; t < k_tiles; ++t) inside += t * TILE + x < K;
            want_seen[(size_t)r * TILE + x] = inside * 1000 + (k_tiles - inside);
            float o = 0.0f;
            for (int k = 0; k < 2; ++k) o += ar[k * TILE + (x + 1) % TILE];
            for (int k = 2; k < 4; ++k) o += ar[k * TILE + x];
            want_out[(size_t)r * TILE + x] = o;
        }
    }
    if (!harness_close("sums", sums.data(), want_sums.data(), rows, 1e-5, 1e-6)) return harness_fail("tiled_row_sums sums");
    if (!harness_equal("seen", seen.data(), want_seen.data(), (size_t)rows * TILE)) return harness_fail("tiled_row_sums seen");
    if (!harness_close("out", out.data(), want_out.data(), (size_t)rows * TILE, 1e-6, 1e-6)) return harness_fail("two_phase");
    harness_dump("sums", sums.data(), rows);
    harness_dump("seen", seen.data(), (size_t)rows * TILE);
    harness_dump("out", out.data(), (size_t)rows * TILE);
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_seen));
    return harness_pass();
}
