// slatec-test: harness
// Multi-block inclusive scan: Hillis-Steele per block (dynamic shared), chunked single-block pass, offset add.
#include "harness.h"

#include <vector>

// Inclusive scan of one block's elements, double-buffered so no step reads what it writes.
__global__ void scan_block(const int* in, int* out, int* block_sums, int n) {
    extern __shared__ int buf[];  // 2 * blockDim.x ints
    const int B = blockDim.x, t = threadIdx.x;
    const int i = blockIdx.x * B + t;
    int pout = 0, pin = 1;
    buf[t] = i < n ? in[i] : 0;
    __syncthreads();
    for (int off = 1; off < B; off <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        int v = buf[pin * B + t];
        if (t >= off) v += buf[pin * B + t - off];
        buf[pout * B + t] = v;
        __syncthreads();
    }
    if (i < n) out[i] = buf[pout * B + t];
    if (t == B - 1) block_sums[blockIdx.x] = buf[pout * B + t];
}

// Exclusive scan of m block sums with one block, chunk by chunk, carrying the running total.
__global__ void scan_sums_one_block(int* sums, int m) {
    __shared__ int s[1024];
    __shared__ int carry;
    const int t = threadIdx.x, B = blockDim.x;  // B <= 1024
    if (t == 0) carry = 0;
    __syncthreads();
    for (int base = 0; base < m; base += B) {
        int v = base + t < m ? sums[base + t] : 0;
        s[t] = v;
        __syncthreads();
        for (int off = 1; off < B; off <<= 1) {
            int add = t >= off ? s[t - off] : 0;
            __syncthreads();  // everyone has read before anyone writes
            s[t] += add;
            __syncthreads();
        }
        if (base + t < m) sums[base + t] = carry + s[t] - v;  // inclusive -> exclusive
        __syncthreads();  // all reads of carry done
        if (t == B - 1) carry += s[t];
        __syncthreads();
    }
}

// out[i] += offset of its block. Threads past n leave before the barrier.
__global__ void add_offsets(int* out, const int* offsets, int n) {
    __shared__ int off;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (threadIdx.x == 0) off = offsets[blockIdx.x];
    __syncthreads();
    out[i] += off;
}

int main() {
    const int n = (int)harness_scaled(1 << 20) + 123;
    const int B = 512, grid = (n + B - 1) / B;  // 2049 blocks
    std::vector<int> in(n), out(n), sums(grid);
    harness_fill_int(in.data(), n, -50, 100);

    int *d_in, *d_out, *d_sums;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sums, grid * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    // Each run rewrites d_out and d_sums from d_in before updating them in place.
    harness_timed("scan+sums+offsets", [&] {
        scan_block<<<grid, B, 2 * B * sizeof(int)>>>(d_in, d_out, d_sums, n);
        CUDA_CHECK(cudaGetLastError());
        scan_sums_one_block<<<1, 1024>>>(d_sums, grid);
        CUDA_CHECK(cudaGetLastError());
        add_offsets<<<grid, B>>>(d_out, d_sums, n);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, grid * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<int> want(n), want_sums(grid);
    int acc = 0;
    for (int i = 0; i < n; ++i) {
        if (i % B == 0) want_sums[i / B] = acc;
        acc += in[i];
        want[i] = acc;
    }
    if (!harness_equal("sums", sums.data(), want_sums.data(), grid)) return harness_fail("block offsets");
    if (!harness_equal("out", out.data(), want.data(), n)) return harness_fail("inclusive scan");
    harness_dump("out", out.data(), n);
    harness_dump("sums", sums.data(), grid);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_sums));
    return harness_pass();
}
