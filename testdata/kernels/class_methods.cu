// slatec-test: harness
// Member functions that read blockIdx/gridDim: a class template's static run() called as Tile<T>::run(...), const member functions called on an object, a method calling another method, a nested struct, members defined outside their class, private state; methods without index reads stay as they are.
#include "harness.h"

#include <vector>

template <typename T>
struct Tile {
    static __device__ int first() { return blockIdx.x * blockDim.x; }
    static __device__ void run(const T* in, T* out, int n) {
        int i = first() + threadIdx.x;
        if (i < n) out[i] = in[i] * (T)2 + (T)gridDim.x;
    }
};

class Grid2 {
  public:
    __device__ Grid2(int w) : w_(w) {}
    __device__ int col() const { return blockIdx.x * blockDim.x + threadIdx.x; }
    __device__ int row() const { return blockIdx.y * blockDim.y + threadIdx.y; }
    __device__ int at() const { return row() * w_ + col(); }
    struct Inner {
        __device__ static int plane() { return blockIdx.z; }
    };
    __device__ int width() const { return w_; }  // no index read

  private:
    int w_;
};

// Members declared in the class and defined outside it.
struct Strided {
    int stride;
    __device__ int start() const;
    static __device__ unsigned blocks();
};
__device__ int Strided::start() const { return (int)(blockIdx.x * blockDim.x + threadIdx.x) * stride; }
__device__ unsigned Strided::blocks() { return gridDim.x; }

__global__ void run_tile(const float* in, float* out, int n) { Tile<float>::run(in, out, n); }

__global__ void strided_ids(int* out, int n) {
    Strided s{2};
    if (s.start() < n) out[s.start()] = (int)Strided::blocks();
}

__global__ void fill_grid(int* out, int w, int h) {
    Grid2 g(w);
    if (g.col() < g.width() && g.row() < h) out[g.at()] = g.row() * 1000 + g.col() + Grid2::Inner::plane();
}

int main() {
    const int n = (int)harness_scaled(1 << 20, 256);
    std::vector<float> in(n), out(n);
    harness_fill_float(in.data(), n, -1.0f, 1.0f);
    const int w = 300, h = 200;
    std::vector<int> grid(w * h), ids(2 * 4096, -1);
    float *d_in, *d_out;
    int *d_grid, *d_ids;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_grid, grid.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_ids, ids.size() * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_ids, ids.data(), ids.size() * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    const int blocks = (n + 255) / 256;
    const dim3 gb((w + 15) / 16, (h + 15) / 16), bb(16, 16);
    harness_timed("run_tile", [&] {
        run_tile<<<blocks, 256>>>(d_in, d_out, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("fill_grid", [&] {
        fill_grid<<<gb, bb>>>(d_grid, w, h);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("strided_ids", [&] {
        strided_ids<<<32, 128>>>(d_ids, (int)ids.size());
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(ids.data(), d_ids, ids.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(grid.data(), d_grid, grid.size() * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[i] = in[i] * 2.0f + (float)blocks;
    std::vector<int> want_grid(w * h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) want_grid[y * w + x] = y * 1000 + x;
    std::vector<int> want_ids(ids.size(), -1);
    for (int t = 0; t < 4096; ++t) want_ids[2 * t] = 32;
    if (!harness_equal("ids", ids.data(), want_ids.data(), ids.size())) return harness_fail("strided_ids");
    if (!harness_close("out", out.data(), want.data(), n, 0.0, 0.0)) return harness_fail("run_tile");
    if (!harness_equal("grid", grid.data(), want_grid.data(), grid.size())) return harness_fail("fill_grid");
    harness_dump("out", out.data(), n);
    harness_dump("grid", grid.data(), grid.size());
    harness_dump("ids", ids.data(), ids.size());
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_grid));
    CUDA_CHECK(cudaFree(d_ids));
    return harness_pass();
}
