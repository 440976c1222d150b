// slatec-test: harness
// __launch_bounds__ in its forms: (256), (128, 4), before and after __global__, on extern "C" and template kernels.
#include "harness.h"

#include <vector>

__global__ void __launch_bounds__(256) lb_square(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * in[i];
}

__launch_bounds__(128, 4) __global__ void lb_shared_shift(const int* in, int* out, int n) {
    __shared__ int s[128];
    int i = blockIdx.x * 128 + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    if (i < n) out[i] = s[(threadIdx.x + 127) % 128] + s[threadIdx.x];
}

extern "C" __global__ void __launch_bounds__(512, 2) lb_extern_c(unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (unsigned)i * 2654435761u;
}

template <int THREADS, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) lb_template_sum(const int* in, int* out) {
    __shared__ int s[THREADS];
    s[threadIdx.x] = in[blockIdx.x * THREADS + threadIdx.x];
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

int main() {
    const int n = (int)harness_scaled(1 << 20, 512);  // a multiple of every block size below
    std::vector<float> f(n), sq(n);
    std::vector<int> in(n), shift(n), sums(n / 64);
    std::vector<unsigned> hashes(n);
    harness_fill_float(f.data(), n, -3.0f, 3.0f);
    harness_fill_int(in.data(), n, -1000, 1000);
    float *d_f, *d_sq;
    int *d_in, *d_shift, *d_sums;
    unsigned* d_hash;
    CUDA_CHECK(cudaMalloc(&d_f, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_sq, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_shift, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sums, (n / 64) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_hash, n * sizeof(unsigned)));
    CUDA_CHECK(cudaMemcpy(d_f, f.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    harness_timed("lb_square", [&] {
        lb_square<<<n / 256, 256>>>(d_f, d_sq, n);  // 4096 blocks
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("lb_shared_shift", [&] {
        lb_shared_shift<<<n / 128, 128>>>(d_in, d_shift, n);  // 8192 blocks
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("lb_extern_c", [&] {
        lb_extern_c<<<n / 512, 512>>>(d_hash, n);  // 2048 blocks
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("lb_template_sum", [&] {
        lb_template_sum<64, 8><<<n / 64, 64>>>(d_in, d_sums);  // 16384 blocks
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(sq.data(), d_sq, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(shift.data(), d_shift, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hashes.data(), d_hash, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, (n / 64) * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<float> want_sq(n);
    std::vector<int> want_shift(n), want_sums(n / 64, 0);
    std::vector<unsigned> want_hash(n);
    for (int i = 0; i < n; ++i) {
        want_sq[i] = f[i] * f[i];
        int b = i / 128 * 128;
        want_shift[i] = in[b + (i - b + 127) % 128] + in[i];
        want_hash[i] = (unsigned)i * 2654435761u;
        want_sums[i / 64] += in[i];
    }
    if (!harness_close("sq", sq.data(), want_sq.data(), n, 0.0, 0.0)) return harness_fail("lb_square");
    if (!harness_equal("shift", shift.data(), want_shift.data(), n)) return harness_fail("lb_shared_shift");
    if (!harness_equal("hash", hashes.data(), want_hash.data(), n)) return harness_fail("lb_extern_c");
    if (!harness_equal("sums", sums.data(), want_sums.data(), n / 64)) return harness_fail("lb_template_sum");
    harness_dump("sq", sq.data(), n);
    harness_dump("shift", shift.data(), n);
    harness_dump("hash", hashes.data(), n);
    harness_dump("sums", sums.data(), n / 64);
    CUDA_CHECK(cudaFree(d_f));
    CUDA_CHECK(cudaFree(d_sq));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_shift));
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_hash));
    return harness_pass();
}
