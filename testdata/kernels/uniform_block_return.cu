// slatec-test: harness
// Returns the whole block takes together because of the values it reads:
// a grid launched larger than the work (blocks past the end return before
// their barriers), and blocks that each handle a few rows, counted down
// from the last, whose loop returns once its row is below zero (the shape
// of llm.c's softmax_autoregressive_backward_inplace_kernel). slatec leaves
// such returns as they are: every thread of the block leaves together.
#include "harness.h"

#include <vector>

#define ROW 256

// Reverses each row of ROW values through shared memory; blocks past the
// last row return at once.
__global__ void reverse_rows(const float* in, float* out, int rows) {
    __shared__ float s[ROW];
    if (blockIdx.x >= rows) return;
    s[threadIdx.x] = in[blockIdx.x * ROW + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * ROW + threadIdx.x] = s[ROW - 1 - threadIdx.x];
}

// Each block handles rows t0, t0 - 1, ..., t0 - 3 (t0 from the end), each
// row summed in shared memory and scaled by its sum; the loop returns when
// the row count runs out.
__global__ void normalise_rows_backwards(const float* in, float* out, int rows) {
    constexpr int per_block = 4;
    __shared__ float s[ROW];
    const int t0 = rows - 1 - per_block * (int)blockIdx.x;
    for (int to = 0; to < per_block; ++to) {
        const int t = t0 - to;
        if (t < 0) return;
        const float v = in[t * ROW + threadIdx.x];
        s[threadIdx.x] = v;
        __syncthreads();
        for (int stride = ROW / 2; stride > 0; stride /= 2) {
            if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
            __syncthreads();
        }
        out[t * ROW + threadIdx.x] = v / s[0];
        __syncthreads();
    }
}

int main() {
    const int rows = 1021; // not a multiple of 4: the last block returns in its loop
    const int n = rows * ROW;
    std::vector<float> in(n), rev(n), norm(n);
    harness_fill_float(in.data(), n, 1.0f, 2.0f);
    float *d_in, *d_rev, *d_norm;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_rev, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_norm, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    harness_timed("reverse_rows", [&] {
        reverse_rows<<<rows + 37, ROW>>>(d_in, d_rev, rows);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("normalise_rows_backwards", [&] {
        normalise_rows_backwards<<<(rows + 3) / 4, ROW>>>(d_in, d_norm, rows);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(rev.data(), d_rev, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(norm.data(), d_norm, n * sizeof(float), cudaMemcpyDeviceToHost));
    std::vector<float> want_rev(n), want_norm(n);
    for (int r = 0; r < rows; ++r) {
        double sum = 0.0;
        for (int c = 0; c < ROW; ++c) {
            want_rev[r * ROW + c] = in[r * ROW + ROW - 1 - c];
            sum += in[r * ROW + c];
        }
        for (int c = 0; c < ROW; ++c) want_norm[r * ROW + c] = (float)(in[r * ROW + c] / sum);
    }
    if (!harness_equal("rev", rev.data(), want_rev.data(), n)) return harness_fail("reverse_rows");
    if (!harness_close("norm", norm.data(), want_norm.data(), n, 1e-4, 1e-7)) return harness_fail("normalise_rows_backwards");
    harness_dump("rev", rev.data(), n);
    harness_dump("norm", norm.data(), n);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_rev));
    CUDA_CHECK(cudaFree(d_norm));
    return harness_pass();
}
