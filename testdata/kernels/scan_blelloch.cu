// slatec-test: harness
// Work-efficient (Blelloch) exclusive scan, template<int BLOCK>, recursive multi-level host driver.
#include "harness.h"

#include <vector>

// Scans 2*BLOCK elements per block: up-sweep builds partial sums in place, the root is
// cleared, the down-sweep pushes prefixes back down. Barriers sit inside both loops.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) blelloch_scan(const int* in, int* out, int* sums, int n) {
    __shared__ int temp[2 * BLOCK];
    const int base = blockIdx.x * 2 * BLOCK;
    if (base >= n) return;  // the grid is rounded up: whole blocks past the end leave
    const int t = threadIdx.x;
    temp[2 * t] = base + 2 * t < n ? in[base + 2 * t] : 0;
    temp[2 * t + 1] = base + 2 * t + 1 < n ? in[base + 2 * t + 1] : 0;

    int offset = 1;
    for (int d = BLOCK; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }
    if (t == 0) {
        sums[blockIdx.x] = temp[2 * BLOCK - 1];
        temp[2 * BLOCK - 1] = 0;
    }
    for (int d = 1; d < 2 * BLOCK; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
            int x = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += x;
        }
    }
    __syncthreads();
    if (base + 2 * t < n) out[base + 2 * t] = temp[2 * t];
    if (base + 2 * t + 1 < n) out[base + 2 * t + 1] = temp[2 * t + 1];
}

template <int BLOCK>
__global__ void add_block_offsets(int* out, const int* offsets, int n) {
    int base = blockIdx.x * 2 * BLOCK;
    int add = offsets[blockIdx.x];
    for (int k = threadIdx.x; k < 2 * BLOCK && base + k < n; k += BLOCK) out[base + k] += add;
}

// Exclusive scan of d_in[0..n) into d_out; recursion scans the per-block sums.
template <int BLOCK>
void scan(const int* d_in, int* d_out, int n) {
    int blocks = (n + 2 * BLOCK - 1) / (2 * BLOCK);
    int grid = (blocks + 15) / 16 * 16;  // rounded up on purpose
    int *d_sums, *d_sums_scanned;
    CUDA_CHECK(cudaMalloc(&d_sums, grid * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sums_scanned, grid * sizeof(int)));
    blelloch_scan<BLOCK><<<grid, BLOCK>>>(d_in, d_out, d_sums, n);
    CUDA_CHECK(cudaGetLastError());
    if (blocks > 1) {
        scan<BLOCK>(d_sums, d_sums_scanned, blocks);
        add_block_offsets<BLOCK><<<blocks, BLOCK>>>(d_out, d_sums_scanned, n);
        CUDA_CHECK(cudaGetLastError());
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_sums_scanned));
}

int main() {
    const int n = (int)harness_scaled(1 << 20) + 5000;  // level sizes (unscaled): 2058 blocks, then 5, then 1
    std::vector<int> in(n), out(n);
    harness_fill_int(in.data(), n, 0, 9);
    int *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    // The timed region includes scan()'s per-level cudaMalloc/cudaFree and its synchronisation.
    harness_timed("scan256", [&] { scan<256>(d_in, d_out, n); });
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));

    // A second, small instantiation: one block, BLOCK = 64.
    const int m = 100;
    int *d_small, *d_small_out;
    std::vector<int> small_out(m);
    CUDA_CHECK(cudaMalloc(&d_small, m * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_small_out, m * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_small, in.data(), m * sizeof(int), cudaMemcpyHostToDevice));
    harness_timed("scan64_small", [&] { scan<64>(d_small, d_small_out, m); });
    CUDA_CHECK(cudaMemcpy(small_out.data(), d_small_out, m * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<int> want(n);
    int acc = 0;
    for (int i = 0; i < n; ++i) {
        want[i] = acc;
        acc += in[i];
    }
    if (!harness_equal("out", out.data(), want.data(), n)) return harness_fail("scan<256>");
    if (!harness_equal("small", small_out.data(), want.data(), m)) return harness_fail("scan<64>");
    harness_dump("out", out.data(), n);
    harness_dump("small", small_out.data(), m);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_small));
    CUDA_CHECK(cudaFree(d_small_out));
    return harness_pass();
}
