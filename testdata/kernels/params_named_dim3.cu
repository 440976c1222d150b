// slatec-test: harness
// Parameters named like the CUDA types slatec's generated code uses: a
// 4-D permutation whose sizes are dim1..dim4 (real code names them so), and
// a kernel with a parameter called uint3. The worker and launcher must
// still compile and run: the code slatec adds where the parameters are in
// scope names the types ::dim3 and ::uint3.
#include "harness.h"

#include <vector>

// (dim1, dim2, dim3, dim4) -> (dim4, dim3, dim1, dim2)
__global__ void permute4(const float* in, float* out, int dim1, int dim2, int dim3, int dim4) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < dim1 * dim2 * dim3 * dim4) {
        const int i1 = (idx / (dim2 * dim3 * dim4)) % dim1;
        const int i2 = (idx / (dim3 * dim4)) % dim2;
        const int i3 = (idx / dim4) % dim3;
        const int i4 = idx % dim4;
        out[i4 * (dim3 * dim1 * dim2) + i3 * (dim1 * dim2) + i1 * dim2 + i2] = in[idx];
    }
}

__global__ void offsets(int* out, int uint3, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i * uint3 + (int)blockIdx.x;
}

int main() {
    const int d1 = 6, d2 = 5, d3 = 7, d4 = 9, n = d1 * d2 * d3 * d4, m = 1000;
    std::vector<float> in(n), out(n);
    std::vector<int> offs(m);
    harness_fill_float(in.data(), n, -1.0f, 1.0f);
    float *d_in, *d_out;
    int* d_offs;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_offs, m * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    harness_timed("permute4", [&] {
        permute4<<<(n + 127) / 128, 128>>>(d_in, d_out, d1, d2, d3, d4);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("offsets", [&] {
        offsets<<<(m + 63) / 64, 64>>>(d_offs, 3, m);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(offs.data(), d_offs, m * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<float> want(n);
    std::vector<int> want_offs(m);
    for (int idx = 0; idx < n; ++idx) {
        const int i1 = (idx / (d2 * d3 * d4)) % d1, i2 = (idx / (d3 * d4)) % d2, i3 = (idx / d4) % d3, i4 = idx % d4;
        want[i4 * (d3 * d1 * d2) + i3 * (d1 * d2) + i1 * d2 + i2] = in[idx];
    }
    for (int i = 0; i < m; ++i) want_offs[i] = i * 3 + i / 64;
    if (!harness_equal("permute4", out.data(), want.data(), n)) return harness_fail("permute4");
    if (!harness_equal("offsets", offs.data(), want_offs.data(), m)) return harness_fail("offsets");
    harness_dump("permute4", out.data(), n);
    harness_dump("offsets", offs.data(), m);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_offs));
    return harness_pass();
}
