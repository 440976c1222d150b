// slatec-test: harness
// 256-bin byte histogram: shared-memory atomics per block merged into global; per-warp sub-histograms variant.
#include "harness.h"

#include <vector>

// One shared histogram per block; grid-stride over the bytes; nonzero bins merged with
// one global atomic each.
__global__ void histogram256(const unsigned char* data, int n, unsigned* hist) {
    __shared__ unsigned local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b]) atomicAdd(&hist[b], local[b]);
}

// Each warp owns a sub-histogram in dynamic shared memory (less contention on hot bins);
// input read four bytes at a time, the tail (n % 4 bytes) by the first threads of the grid.
__global__ void histogram256_warp(const unsigned* words, const unsigned char* bytes, int n,
                                  unsigned* hist) {
    extern __shared__ unsigned sub[];  // (blockDim.x / 32) * 256
    const int nwarps = blockDim.x / 32;
    unsigned* mine = sub + (threadIdx.x / 32) * 256;
    for (int b = threadIdx.x; b < nwarps * 256; b += blockDim.x) sub[b] = 0;
    __syncthreads();
    const int gtid = blockIdx.x * blockDim.x + threadIdx.x;
    const int nwords = n / 4;
    for (int w = gtid; w < nwords; w += blockDim.x * gridDim.x) {
        unsigned v = words[w];
        atomicAdd(&mine[v & 0xff], 1u);
        atomicAdd(&mine[(v >> 8) & 0xff], 1u);
        atomicAdd(&mine[(v >> 16) & 0xff], 1u);
        atomicAdd(&mine[v >> 24], 1u);
    }
    if (gtid < n - nwords * 4) atomicAdd(&mine[bytes[nwords * 4 + gtid]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        unsigned total = 0;
        for (int w = 0; w < nwarps; ++w) total += sub[w * 256 + b];
        if (total) atomicAdd(&hist[b], total);
    }
}

int main() {
    const int n = (int)harness_scaled(8 << 20) + 13;
    std::vector<unsigned char> data(n);
    for (int i = 0; i < n; ++i) {
        unsigned r = harness_rng_u32();
        data[i] = (r % 10 < 3) ? 7 : (unsigned char)(r >> 8);  // bin 7 is hot
    }
    unsigned char* d_data;
    unsigned *d_h1, *d_h2;
    // cudaMalloc returns 256-byte aligned memory, so the byte buffer can be read as words.
    CUDA_CHECK(cudaMalloc(&d_data, n));
    CUDA_CHECK(cudaMalloc(&d_h1, 256 * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&d_h2, 256 * sizeof(unsigned)));
    CUDA_CHECK(cudaMemcpy(d_data, data.data(), n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_h1, 0, 256 * sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(d_h2, 0, 256 * sizeof(unsigned)));

    // Both kernels add into their histograms: under HARNESS_REPS the checked runs start
    // again from zeroed histograms.
    harness_timed_reset("histogram256", [&] {
        histogram256<<<2048, 256>>>(d_data, n, d_h1);
        CUDA_CHECK(cudaGetLastError());
    }, [&] { CUDA_CHECK(cudaMemset(d_h1, 0, 256 * sizeof(unsigned))); });
    const int block = 256;
    harness_timed_reset("histogram256_warp", [&] {
        histogram256_warp<<<2112, block, (block / 32) * 256 * sizeof(unsigned)>>>(
            reinterpret_cast<const unsigned*>(d_data), d_data, n, d_h2);
        CUDA_CHECK(cudaGetLastError());
    }, [&] { CUDA_CHECK(cudaMemset(d_h2, 0, 256 * sizeof(unsigned))); });
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<unsigned> h1(256), h2(256), want(256, 0);
    CUDA_CHECK(cudaMemcpy(h1.data(), d_h1, 256 * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h2.data(), d_h2, 256 * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) want[data[i]]++;
    if (!harness_equal("h1", h1.data(), want.data(), 256)) return harness_fail("histogram256");
    if (!harness_equal("h2", h2.data(), want.data(), 256)) return harness_fail("histogram256_warp");
    harness_dump("h1", h1.data(), 256);
    harness_dump("h2", h2.data(), 256);
    CUDA_CHECK(cudaFree(d_data));
    CUDA_CHECK(cudaFree(d_h1));
    CUDA_CHECK(cudaFree(d_h2));
    return harness_pass();
}
