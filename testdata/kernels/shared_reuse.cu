// slatec-test: harness
// Shared memory read after the last barrier (a following logical block must not overwrite it early), and per-thread scratch.
#include "harness.h"

#include <vector>

#define B 256

// Block reversal: the reads after the barrier are the kernel's last use of s.
__global__ void reverse_static(const int* in, int* out) {
    __shared__ int s[B];
    int i = blockIdx.x * B + threadIdx.x;
    s[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = s[B - 1 - threadIdx.x];
}

// The same through dynamic shared memory with a block-size-dependent stride.
__global__ void reverse_dynamic(const float* in, float* out) {
    extern __shared__ float ds[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    ds[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = ds[blockDim.x - 1 - threadIdx.x] + ds[(threadIdx.x + 17) % blockDim.x];
}

// Thread 0 broadcasts a value to the whole block, written once per block: stale values
// from a previous block would show up if a block started before the last one finished.
__global__ void broadcast_first(const int* in, int* out) {
    __shared__ int first;
    int i = blockIdx.x * B + threadIdx.x;
    if (threadIdx.x == 0) first = in[i];
    __syncthreads();
    out[i] = in[i] - first;
}

// Shared memory used as per-thread scratch only: no thread reads another's slot, so no
// barrier is needed anywhere.
__global__ void per_thread_scratch(const int* in, int* out) {
    __shared__ int scratch[B][4];
    int i = blockIdx.x * B + threadIdx.x;
    for (int k = 0; k < 4; ++k) scratch[threadIdx.x][k] = in[i] * (k + 1);
    out[i] = scratch[threadIdx.x][0] + scratch[threadIdx.x][3];
}

int main() {
    const int grid = (int)harness_scaled(4000), n = grid * B;
    std::vector<int> in(n), o1(n), o3(n), o4(n);
    std::vector<float> f(n), o2(n);
    harness_fill_int(in.data(), n, -100000, 100000);
    harness_fill_float(f.data(), n, -1.0f, 1.0f);
    int *d_in, *d_o1, *d_o3, *d_o4;
    float *d_f, *d_o2;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_o1, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_o3, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_o4, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_f, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_o2, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_f, f.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    harness_timed("reverse_static", [&] {
        reverse_static<<<grid, B>>>(d_in, d_o1);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("reverse_dynamic", [&] {
        reverse_dynamic<<<n / 128, 128, 128 * sizeof(float)>>>(d_f, d_o2);  // 8000 blocks
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("broadcast_first", [&] {
        broadcast_first<<<grid, B>>>(d_in, d_o3);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("per_thread_scratch", [&] {
        per_thread_scratch<<<grid, B>>>(d_in, d_o4);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(o1.data(), d_o1, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o2.data(), d_o2, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o3.data(), d_o3, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o4.data(), d_o4, n * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<int> w1(n), w3(n), w4(n);
    std::vector<float> w2(n);
    for (int i = 0; i < n; ++i) {
        int b = i / B * B, t = i - b;
        w1[i] = in[b + B - 1 - t];
        w3[i] = in[i] - in[b];
        w4[i] = in[i] + in[i] * 4;
        int b2 = i / 128 * 128, t2 = i - b2;
        w2[i] = f[b2 + 127 - t2] + f[b2 + (t2 + 17) % 128];
    }
    if (!harness_equal("rev", o1.data(), w1.data(), n)) return harness_fail("reverse_static");
    if (!harness_close("revdyn", o2.data(), w2.data(), n, 0.0, 0.0)) return harness_fail("reverse_dynamic");
    if (!harness_equal("bcast", o3.data(), w3.data(), n)) return harness_fail("broadcast_first");
    if (!harness_equal("scratch", o4.data(), w4.data(), n)) return harness_fail("per_thread_scratch");
    harness_dump("rev", o1.data(), n);
    harness_dump("revdyn", o2.data(), n);
    harness_dump("bcast", o3.data(), n);
    harness_dump("scratch", o4.data(), n);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_o1));
    CUDA_CHECK(cudaFree(d_o3));
    CUDA_CHECK(cudaFree(d_o4));
    CUDA_CHECK(cudaFree(d_f));
    CUDA_CHECK(cudaFree(d_o2));
    return harness_pass();
}
