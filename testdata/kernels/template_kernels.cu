// slatec-test: harness
// Kernel templates: type and non-type params, two type params, defaults, functor params, explicit and deduced launches.
#include "harness.h"

#include <vector>

// Functor arguments: the operation is a template type, passed by value.
struct AddOne {
    __device__ int operator()(int v) const { return v + 1; }
};
struct Affine {
    float a, b;
    __device__ float operator()(float v) const { return a * v + b; }
};

template <typename T, typename Op>
__global__ void map(const T* in, T* out, int n, Op op) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = op(in[i]);
}

// Conversion with two type parameters; each thread handles ITEMS consecutive elements.
template <typename From, typename To, int ITEMS = 4>
__global__ void convert(const From* in, To* out, int n) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * ITEMS;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
        if (base + k < n) out[base + k] = static_cast<To>(in[base + k]) * static_cast<To>(2);
}

// A block-size template parameter sizes shared memory and the launch bounds.
template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK) reverse_blocks(const T* in, T* out, int n) {
    __shared__ T s[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : T(0);
    __syncthreads();
    int j = blockIdx.x * BLOCK + (BLOCK - 1 - threadIdx.x);
    if (j < n) out[j] = s[threadIdx.x];
}

int main() {
    const int n = (int)harness_scaled(1 << 20, 512);  // a multiple of every block size below
    std::vector<int> ii(n), io(n);
    std::vector<float> fi(n), fo(n), co(n), ro(n);
    std::vector<double> dout(n);
    harness_fill_int(ii.data(), n, -1000, 1000);
    harness_fill_float(fi.data(), n, -1.0f, 1.0f);
    int *d_ii, *d_io;
    float *d_fi, *d_fo, *d_co, *d_ro;
    double* d_dout;
    CUDA_CHECK(cudaMalloc(&d_ii, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_io, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_fi, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_fo, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_co, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_ro, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_dout, n * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(d_ii, ii.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_fi, fi.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    const int grid = n / 256;  // 4096 blocks
    harness_timed("map_int", [&] {
        map<<<grid, 256>>>(d_ii, d_io, n, AddOne());  // T and Op deduced
        CUDA_CHECK(cudaGetLastError());
    });
    Affine aff = {2.0f, 0.5f};
    harness_timed("map_affine", [&] {
        map<float, Affine><<<grid, 256>>>(d_fi, d_fo, n, aff);  // explicit
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("convert_int_double", [&] {
        convert<int, double><<<(n / 4 + 127) / 128, 128>>>(d_ii, d_dout, n);  // ITEMS defaulted
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("convert_float_x2", [&] {
        convert<float, float, 2><<<(n / 2 + 255) / 256, 256>>>(d_fi, d_co, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("reverse_blocks", [&] {
        reverse_blocks<512, float><<<n / 512, 512>>>(d_fi, d_ro, n);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(io.data(), d_io, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(fo.data(), d_fo, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(dout.data(), d_dout, n * sizeof(double), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(co.data(), d_co, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(ro.data(), d_ro, n * sizeof(float), cudaMemcpyDeviceToHost));

    std::vector<int> want_io(n);
    std::vector<float> want_fo(n), want_co(n), want_ro(n);
    std::vector<double> want_d(n);
    for (int i = 0; i < n; ++i) {
        want_io[i] = ii[i] + 1;
        want_fo[i] = 2.0f * fi[i] + 0.5f;
        want_d[i] = 2.0 * ii[i];
        want_co[i] = 2.0f * fi[i];
        int b = i / 512 * 512;
        want_ro[i] = fi[b + 511 - (i - b)];
    }
    if (!harness_equal("map_int", io.data(), want_io.data(), n)) return harness_fail("map<int>");
    if (!harness_close("map_float", fo.data(), want_fo.data(), n, 1e-6, 1e-7)) return harness_fail("map<float>");
    if (!harness_close("conv_d", dout.data(), want_d.data(), n, 0.0, 0.0)) return harness_fail("convert<int,double>");
    if (!harness_close("conv_f", co.data(), want_co.data(), n, 0.0, 0.0)) return harness_fail("convert<float,float,2>");
    if (!harness_close("rev", ro.data(), want_ro.data(), n, 0.0, 0.0)) return harness_fail("reverse_blocks");
    harness_dump("map_int", io.data(), n);
    harness_dump("map_float", fo.data(), n);
    harness_dump("conv_d", dout.data(), n);
    harness_dump("conv_f", co.data(), n);
    harness_dump("rev", ro.data(), n);
    CUDA_CHECK(cudaFree(d_ii));
    CUDA_CHECK(cudaFree(d_io));
    CUDA_CHECK(cudaFree(d_fi));
    CUDA_CHECK(cudaFree(d_fo));
    CUDA_CHECK(cudaFree(d_co));
    CUDA_CHECK(cudaFree(d_ro));
    CUDA_CHECK(cudaFree(d_dout));
    return harness_pass();
}
