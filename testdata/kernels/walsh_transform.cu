// slatec-test: harness
// Fast Walsh-Hadamard transform: shared-memory stages inside a block, then global butterfly steps in a host loop.
#include "harness.h"

#include <vector>

#define CHUNK 1024  // elements transformed per block in shared memory (512 threads)

// Strides 1..CHUNK/2 of the transform on one CHUNK-element slice; a barrier per stage.
__global__ void fwt_shared(int* data) {
    __shared__ int s[CHUNK];
    int* base = data + (size_t)blockIdx.x * CHUNK;
    const int t = threadIdx.x;
    s[t] = base[t];
    s[t + CHUNK / 2] = base[t + CHUNK / 2];
    for (int stride = 1; stride < CHUNK; stride <<= 1) {
        __syncthreads();
        int lo = (t / stride) * 2 * stride + (t % stride);
        int a = s[lo], b = s[lo + stride];
        s[lo] = a + b;
        s[lo + stride] = a - b;
    }
    __syncthreads();
    base[t] = s[t];
    base[t + CHUNK / 2] = s[t + CHUNK / 2];
}

// One butterfly stage with a stride too large for a block: one pair per thread.
__global__ void fwt_global_step(int* data, int half_n, int stride) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= half_n) return;
    int lo = (p / stride) * 2 * stride + (p % stride);
    int a = data[lo], b = data[lo + stride];
    data[lo] = a + b;
    data[lo + stride] = a - b;
}

int main() {
    int log_n = 20;  // HARNESS_SCALE: the largest power of two <= (1 << 20) / scale, at least CHUNK
    while ((1 << log_n) > CHUNK && (1 << log_n) > harness_scaled(1 << 20)) --log_n;
    const int n = 1 << log_n;
    std::vector<int> x(n), out(n);
    harness_fill_int(x.data(), n, -8, 8);
    int* d;
    CUDA_CHECK(cudaMalloc(&d, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d, x.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    // The stages of a Walsh-Hadamard transform commute, so the order of strides is free.
    // The transform works in place: under HARNESS_REPS the checked run starts again from x.
    harness_timed_reset("fwt", [&] {
        fwt_shared<<<n / CHUNK, CHUNK / 2>>>(d);
        CUDA_CHECK(cudaGetLastError());
        for (int stride = CHUNK; stride < n; stride <<= 1) {
            fwt_global_step<<<(n / 2 + 255) / 256, 256>>>(d, n / 2, stride);  // 2048 blocks
            CUDA_CHECK(cudaGetLastError());
        }
    }, [&] { CUDA_CHECK(cudaMemcpy(d, x.data(), n * sizeof(int), cudaMemcpyHostToDevice)); });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<int> want = x;
    for (int h = 1; h < n; h <<= 1)
        for (int i = 0; i < n; i += 2 * h)
            for (int j = i; j < i + h; ++j) {
                int a = want[j], b = want[j + h];
                want[j] = a + b;
                want[j + h] = a - b;
            }
    if (!harness_equal("fwt", out.data(), want.data(), n)) return harness_fail("walsh transform");
    harness_dump("fwt", out.data(), n);
    CUDA_CHECK(cudaFree(d));
    return harness_pass();
}
