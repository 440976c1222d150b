// slatec-test: no-harness
// Call-graph cases for blockIdx/gridDim: overloads, recursion, templates, member functions, operators, lambdas, host-device helpers.
#include <cstdio>

// Overloads: only one of them reads blockIdx.
__device__ int pick(int v) { return v + blockIdx.x; }
__device__ float pick(float v) { return v * 2.0f; }

// Recursion through a helper that reads gridDim.
__device__ int depth_sum(int d) { return d <= 0 ? (int)gridDim.x : d + depth_sum(d - 1); }

// Function template instantiated for two types.
template <typename T>
__device__ T block_offset(T per_block) { return (T)blockIdx.y * per_block; }

struct Tile {
    int w, h;
    __device__ int origin_x() const { return blockIdx.x * w; }  // member function
    __device__ static int count() { return gridDim.x * gridDim.y; }  // static member
    __device__ int operator[](int k) const { return origin_x() + k; }  // operator
};

// Host and device: only the device side reads blockIdx.
__host__ __device__ int where() {
#ifdef __CUDA_ARCH__
    return (int)blockIdx.x;
#else
    return -1;
#endif
}

// Reached only through another helper that the kernel calls through a pointer variable.
__device__ int leaf() { return blockIdx.z; }
__device__ int middle(int (*f)()) { return f() + 1; }

__global__ void callgraph(int* out, float* fout) {
    Tile t = {16, 8};
    int lin = blockIdx.x * blockDim.x + threadIdx.x;
    auto local = [&](int k) { return k + (int)blockIdx.y + t[k]; };  // lambda reads blockIdx
    auto generic = [](auto v) { return v + gridDim.z; };
    int acc = pick(lin) + depth_sum(3) + block_offset(5) + (int)block_offset(2.0f) + Tile::count();
    acc += local(1) + (int)generic(2u) + where() + middle(&leaf);
    out[lin] = acc;
    fout[lin] = pick(1.0f);
}

// A helper that is never called from a kernel (dead code for the transform).
__device__ int unused_helper() { return blockIdx.x * 99; }

void host_only() { std::printf("%d\n", where()); }
