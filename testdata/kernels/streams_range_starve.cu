// slatec-test: harness
// Two streams at once: a long kernel of 1024-thread blocks fills every SM it runs on while a short one is launched beside it. Under SLATE_SM_RANGE the short kernel's workers find the range full, land on the other SMs and exit: the launch must still run every block.
#include "harness.h"

#include <vector>

// Each block spins about `cycles` clock cycles, then writes its index: two
// blocks of 1024 threads hold all of an SM's threads while they spin.
__global__ void hold(long long cycles, int* marks) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
    if (threadIdx.x == 0) marks[blockIdx.x] = blockIdx.x + 1;
}

// A short kernel of many small blocks: out[i] = 3i + 1.
__global__ void stamp(int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 3 * i + 1;
}

int main() {
    int sms = 0, dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    int khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
    const long long cycles = (long long)khz / 5;  // about 200 us a block
    const int nhold = sms;                         // one wave on all SMs (half a wave's slots)
    const int n = (int)harness_scaled(1 << 20);
    int *d_marks, *d_out;
    CUDA_CHECK(cudaMalloc(&d_marks, nhold * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(int)));
    cudaStream_t a, b;
    CUDA_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    harness_timed("hold+stamp", [&] {
        CUDA_CHECK(cudaMemsetAsync(d_marks, 0, nhold * sizeof(int), a));
        CUDA_CHECK(cudaMemsetAsync(d_out, 0, n * sizeof(int), b));
        CUDA_CHECK(cudaDeviceSynchronize());
        hold<<<nhold, 1024, 0, a>>>(cycles, d_marks);
        CUDA_CHECK(cudaGetLastError());
        stamp<<<(n + 255) / 256, 256, 0, b>>>(d_out, n);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
    });
    std::vector<int> marks(nhold), out(n);
    CUDA_CHECK(cudaMemcpy(marks.data(), d_marks, nhold * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<int> want_marks(nhold), want_out(n);
    for (int i = 0; i < nhold; ++i) want_marks[i] = i + 1;
    for (int i = 0; i < n; ++i) want_out[i] = 3 * i + 1;
    if (!harness_equal("marks", marks.data(), want_marks.data(), nhold)) return harness_fail("hold");
    if (!harness_equal("out", out.data(), want_out.data(), n)) return harness_fail("stamp");
    harness_dump("marks", marks.data(), nhold);
    harness_dump("out", out.data(), n);
    CUDA_CHECK(cudaStreamDestroy(a));
    CUDA_CHECK(cudaStreamDestroy(b));
    CUDA_CHECK(cudaFree(d_marks));
    CUDA_CHECK(cudaFree(d_out));
    return harness_pass();
}
