// slatec-test: harness
// __device__ helpers that read blockIdx/gridDim directly, transitively (helper -> helper), through a template and a __noinline__ call.
#include "harness.h"

#include <vector>

__device__ int block_linear() { return blockIdx.y * gridDim.x + blockIdx.x; }
__device__ int thread_linear() { return threadIdx.y * blockDim.x + threadIdx.x; }
// Transitive: reads blockIdx/gridDim only through block_linear().
__device__ int global_linear() { return block_linear() * (blockDim.x * blockDim.y) + thread_linear(); }
__device__ int grid_threads() { return gridDim.x * gridDim.y * blockDim.x * blockDim.y; }
__device__ __forceinline__ int2 global_xy() {
    return make_int2(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y);
}
template <typename T>
__device__ T block_tag() { return (T)(blockIdx.x + 1000 * blockIdx.y); }
// A real call, not inlined, two levels above blockIdx.
__device__ __noinline__ int tagged(int v) { return v * 7 + block_tag<int>() - global_linear(); }

// Labels each pixel of a 2-D image with its block's tag and position.
__global__ void label_2d(int* out, int w, int h) {
    int2 p = global_xy();
    if (p.x >= w || p.y >= h) return;
    out[p.y * w + p.x] = block_tag<int>() * 4 + (block_linear() & 3);
}

// A 1-D array walked with a 2-D grid: the helpers define the linear order and stride.
__global__ void grid_stride_2d(const int* in, int* out, int n) {
    for (int i = global_linear(); i < n; i += grid_threads()) out[i] = tagged(in[i]);
}

int main() {
    const int w = 1000, h = (int)harness_scaled(700);
    dim3 block2(32, 8), grid2((w + 31) / 32, (h + 7) / 8);  // 32 x 88 = 2816 blocks
    const int n = (int)harness_scaled(3000000);
    dim3 block3(16, 16), grid3(40, 25);  // 1000 blocks, 256000 threads: ~12 items each
    std::vector<int> label((size_t)w * h), in(n), out(n);
    harness_fill_int(in.data(), n, -100000, 100000);
    int *d_label, *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_label, label.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    harness_timed("label_2d", [&] {
        label_2d<<<grid2, block2>>>(d_label, w, h);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("grid_stride_2d", [&] {
        grid_stride_2d<<<grid3, block3>>>(d_in, d_out, n);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(label.data(), d_label, label.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<int> want_label(label.size()), want_out(n);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int bx = x / 32, by = y / 8;
            int tag = bx + 1000 * by, lin = by * (int)grid2.x + bx;
            want_label[(size_t)y * w + x] = tag * 4 + (lin & 3);
        }
    const int threads_per_block = 256, total = 40 * 25 * 256;
    for (int i = 0; i < n; ++i) {
        int g = i % total;  // the global linear id of the thread that handles i
        int bl = g / threads_per_block, bx = bl % 40, by = bl / 40;
        want_out[i] = in[i] * 7 + (bx + 1000 * by) - g;
    }
    if (!harness_equal("label", label.data(), want_label.data(), label.size())) return harness_fail("label_2d");
    if (!harness_equal("out", out.data(), want_out.data(), n)) return harness_fail("grid_stride_2d");
    harness_dump("label", label.data(), label.size());
    harness_dump("out", out.data(), n);
    CUDA_CHECK(cudaFree(d_label));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return harness_pass();
}
