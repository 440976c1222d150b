// slatec-test: harness
// Two independent triads on two streams at once (<<<g,b,0,stream>>>), async copies, events, 2-stream ordering.
#include "harness.h"

#include <vector>

__global__ void scale_add(float* out, const float* x, const float* y, float alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = alpha * x[i] + y[i];
}

// Second step on each stream: reads what scale_add wrote on the same stream.
__global__ void square_in_place(float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = v[i] * v[i];
}

struct Job {
    int n;
    float alpha;
    std::vector<float> x, y, out;
    float *d_x, *d_y, *d_out;
    cudaStream_t stream;
};

int main() {
    Job jobs[2];
    jobs[0].n = (int)harness_scaled(600000);  // 2344 blocks of 256 (unscaled)
    jobs[1].n = (int)harness_scaled(523777) | 1;  // 2046 blocks (unscaled), partial tail: odd
    jobs[0].alpha = 1.5f;
    jobs[1].alpha = -0.75f;
    for (Job& j : jobs) {
        j.x.resize(j.n);
        j.y.resize(j.n);
        j.out.resize(j.n);
        harness_fill_float(j.x.data(), j.n, -2.0f, 2.0f);
        harness_fill_float(j.y.data(), j.n, -2.0f, 2.0f);
        size_t bytes = j.n * sizeof(float);
        CUDA_CHECK(cudaStreamCreateWithFlags(&j.stream, cudaStreamNonBlocking));
        CUDA_CHECK(cudaMalloc(&j.d_x, bytes));
        CUDA_CHECK(cudaMalloc(&j.d_y, bytes));
        CUDA_CHECK(cudaMalloc(&j.d_out, bytes));
    }

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start, 0));

    // The streams are non-blocking: the timed region (events on stream 0) ends with both
    // streams synchronised, and includes the copies (pageable host memory).
    harness_timed("two_stream_triads", [&] {
        // Issue both streams' work before waiting on either, so the kernels can overlap.
        for (Job& j : jobs) {
            size_t bytes = j.n * sizeof(float);
            CUDA_CHECK(cudaMemcpyAsync(j.d_x, j.x.data(), bytes, cudaMemcpyHostToDevice, j.stream));
            CUDA_CHECK(cudaMemcpyAsync(j.d_y, j.y.data(), bytes, cudaMemcpyHostToDevice, j.stream));
            int grid = (j.n + 255) / 256;
            scale_add<<<grid, 256, 0, j.stream>>>(j.d_out, j.d_x, j.d_y, j.alpha, j.n);
            CUDA_CHECK(cudaGetLastError());
            square_in_place<<<grid, 256, 0, j.stream>>>(j.d_out, j.n);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemcpyAsync(j.out.data(), j.d_out, bytes, cudaMemcpyDeviceToHost, j.stream));
        }
        for (Job& j : jobs) CUDA_CHECK(cudaStreamSynchronize(j.stream));
    });
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaDeviceSynchronize());

    for (int k = 0; k < 2; ++k) {
        Job& j = jobs[k];
        std::vector<float> want(j.n);
        for (int i = 0; i < j.n; ++i) {
            float v = j.alpha * j.x[i] + j.y[i];
            want[i] = v * v;
        }
        if (!harness_close(k ? "out1" : "out0", j.out.data(), want.data(), j.n, 1e-5, 1e-6))
            return harness_fail("stream %d result", k);
    }
    harness_dump("out0", jobs[0].out.data(), jobs[0].n);
    harness_dump("out1", jobs[1].out.data(), jobs[1].n);

    for (Job& j : jobs) {
        CUDA_CHECK(cudaFree(j.d_x));
        CUDA_CHECK(cudaFree(j.d_y));
        CUDA_CHECK(cudaFree(j.d_out));
        CUDA_CHECK(cudaStreamDestroy(j.stream));
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return harness_pass();
}
