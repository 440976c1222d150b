// slatec-test: harness
// Huge 1-D grids of tiny blocks doing a few loads/stores each: 1,048,576 blocks of 32 (float axpy with a mirrored read) and 1.2M blocks of 64 (byte LUT map); events around both.
#include "harness.h"

#include <vector>

__constant__ unsigned char c_lut[256];

// y[i] = a * x[i] + x[n - 1 - i]: two coalesced loads, one store per thread.
__global__ void mirror_axpy(const float* __restrict__ x, float* __restrict__ y, float a, unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + x[n - 1 - i];
}

// out[i] = lut[in[i]] ^ (i & 0xff): a byte per thread through a constant-memory table.
__global__ void byte_lut_map(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                             unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (unsigned char)(c_lut[in[i]] ^ (unsigned char)(i & 0xffu));
}

int main() {
    // More than 1e6 blocks is the point of this test: the sizes ignore HARNESS_SCALE.
    const unsigned blocks1 = 1u << 20, threads1 = 32;      // 1,048,576 blocks of 32
    const unsigned blocks2 = 1200000, threads2 = 64;       // 1.2M blocks of 64
    const unsigned long long n1 = (unsigned long long)blocks1 * threads1;       // 33.5M floats
    const unsigned long long n2 = (unsigned long long)blocks2 * threads2 - 17;  // ragged last block
    const float a = -0.375f;
    std::vector<float> x(n1), y(n1);
    harness_fill_float(x.data(), n1, -2.0f, 2.0f);
    std::vector<unsigned> tmp(n2);
    harness_fill_uint(tmp.data(), n2, 0, 255);
    std::vector<unsigned char> in(n2), out(n2);
    for (unsigned long long i = 0; i < n2; ++i) in[i] = (unsigned char)tmp[i];
    tmp.clear();
    tmp.shrink_to_fit();
    unsigned char lut[256];
    for (int i = 0; i < 256; ++i) lut[i] = (unsigned char)((i * 167 + 13) & 0xff);  // a bijection

    float *d_x, *d_y;
    unsigned char *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_x, n1 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, n1 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_in, n2));
    CUDA_CHECK(cudaMalloc(&d_out, n2));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n1 * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpyToSymbol(c_lut, lut, sizeof lut));

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start, 0));
    harness_timed("mirror_axpy", [&] {
        mirror_axpy<<<blocks1, threads1, 0, 0>>>(d_x, d_y, a, n1);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("byte_lut_map", [&] {
        byte_lut_map<<<dim3(blocks2), dim3(threads2), 0, 0>>>(d_in, d_out, n2);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("PROGRAM_TIME tiny_blocks_huge_grid %.4f\n", (double)ms);
    CUDA_CHECK(cudaMemcpy(y.data(), d_y, n1 * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n2, cudaMemcpyDeviceToHost));

    for (unsigned long long i = 0; i < n1; ++i) {
        const double want = (double)a * x[i] + x[n1 - 1 - i];
        if (!(std::fabs(y[i] - want) <= 1e-6 * (std::fabs(a * x[i]) + std::fabs(x[n1 - 1 - i])) + 1e-7))
            return harness_fail("y[%llu] = %.9g, want %.9g", i, (double)y[i], want);
    }
    for (unsigned long long i = 0; i < n2; ++i) {
        const unsigned char want = (unsigned char)(lut[in[i]] ^ (unsigned char)(i & 0xff));
        if (out[i] != want) return harness_fail("out[%llu] = %u, want %u", i, out[i], want);
    }
    harness_dump("y", y.data(), n1);
    harness_dump("out", out.data(), n2);
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return harness_pass();
}
