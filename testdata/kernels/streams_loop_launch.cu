// slatec-test: harness
// Launches in a loop alternating two streams (2-D grids, 4-argument chevrons), pinned memory, cross-stream event waits.
#include "harness.h"

#include <vector>

#define W 512   // chunk width
#define H 1024  // chunk height

// L1 gradient magnitude of one chunk (integer, exact); the chunk index selects the slice.
__global__ void gradient(const int* in, int* out, int chunk) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    const int* c = in + (size_t)chunk * W * H;
    int gx = (x + 1 < W ? c[y * W + x + 1] : 0) - (x > 0 ? c[y * W + x - 1] : 0);
    int gy = (y + 1 < H ? c[(y + 1) * W + x] : 0) - (y > 0 ? c[(y - 1) * W + x] : 0);
    out[(size_t)chunk * W * H + y * W + x] = abs(gx) + abs(gy);
}

// Each block sums 1024 consecutive results (tree in dynamic shared memory, 64-bit).
__global__ void chunk_sums(const int* g, long long* sums, int count) {
    extern __shared__ long long s[];  // 256 entries
    long long acc = 0;
    for (int k = threadIdx.x; k < 1024; k += 256) {
        int i = blockIdx.x * 1024 + k;
        if (i < count) acc += g[i];
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = 128; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) sums[blockIdx.x] = s[0];
}

int main() {
    const int nchunks = std::max((int)harness_scaled(8), 2);  // both streams get chunks
    const size_t per = (size_t)W * H, total = per * nchunks;
    int *h_in, *h_out;
    CUDA_CHECK(cudaMallocHost(&h_in, total * sizeof(int)));
    CUDA_CHECK(cudaMallocHost(&h_out, total * sizeof(int)));
    harness_fill_int(h_in, total, 0, 255);
    int *d_in, *d_out;
    long long* d_sums;
    const int nsums = (int)(total / 1024);
    CUDA_CHECK(cudaMalloc(&d_in, total * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, total * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sums, nsums * sizeof(long long)));

    cudaStream_t streams[2];
    cudaEvent_t done[2];
    for (int s = 0; s < 2; ++s) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
        CUDA_CHECK(cudaEventCreate(&done[s]));
    }
    dim3 block(32, 8), grid(W / 32, H / 8);  // 16 x 128 = 2048 blocks per chunk
    // The streams are non-blocking, so the timed region (events on stream 0) ends with
    // cudaDeviceSynchronize(); it includes the chunks' copies to and from pinned memory.
    harness_timed("chunks+sums", [&] {
        for (int c = 0; c < nchunks; ++c) {
            cudaStream_t st = streams[c % 2];
            size_t off = (size_t)c * per;
            CUDA_CHECK(cudaMemcpyAsync(d_in + off, h_in + off, per * sizeof(int), cudaMemcpyHostToDevice, st));
            gradient<<<grid, block, 0, st>>>(d_in, d_out, c);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemcpyAsync(h_out + off, d_out + off, per * sizeof(int), cudaMemcpyDeviceToHost, st));
        }
        // The summary runs on stream 0 after both streams' kernels.
        for (int s = 0; s < 2; ++s) {
            CUDA_CHECK(cudaEventRecord(done[s], streams[s]));
            CUDA_CHECK(cudaStreamWaitEvent(streams[0], done[s], 0));
        }
        chunk_sums<<<nsums, 256, 256 * sizeof(long long), streams[0]>>>(d_out, d_sums, (int)total);  // 4096 blocks
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
    });
    std::vector<long long> sums(nsums);
    CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, nsums * sizeof(long long), cudaMemcpyDeviceToHost));

    std::vector<int> want(total);
    std::vector<long long> want_sums(nsums, 0);
    for (int c = 0; c < nchunks; ++c) {
        const int* in = h_in + (size_t)c * per;
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                int gx = (x + 1 < W ? in[y * W + x + 1] : 0) - (x > 0 ? in[y * W + x - 1] : 0);
                int gy = (y + 1 < H ? in[(y + 1) * W + x] : 0) - (y > 0 ? in[(y - 1) * W + x] : 0);
                want[(size_t)c * per + y * W + x] = std::abs(gx) + std::abs(gy);
            }
    }
    for (size_t i = 0; i < total; ++i) want_sums[i / 1024] += want[i];
    if (!harness_equal("grad", h_out, want.data(), total)) return harness_fail("gradient");
    if (!harness_equal("sums", sums.data(), want_sums.data(), nsums)) return harness_fail("chunk_sums");
    harness_dump("grad", h_out, total);
    harness_dump("sums", sums.data(), nsums);
    for (int s = 0; s < 2; ++s) {
        CUDA_CHECK(cudaStreamDestroy(streams[s]));
        CUDA_CHECK(cudaEventDestroy(done[s]));
    }
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFreeHost(h_in));
    CUDA_CHECK(cudaFreeHost(h_out));
    return harness_pass();
}
