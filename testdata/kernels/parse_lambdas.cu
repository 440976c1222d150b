// slatec-test: no-harness
// C++17 in device code: lambdas (one calling __syncthreads), structured bindings, range-for, constexpr, auto returns, static_assert.
#include <cstdint>

struct Pair {
    int a, b;
};

__device__ constexpr int square(int x) { return x * x; }
static_assert(square(12) == 144, "constexpr device function usable at compile time");

__device__ auto split(int v) { return Pair{v & 0xffff, v >> 16}; }

// A lambda that reads blockIdx and a lambda that contains the block barrier.
__global__ void lambdas(const int* in, int* out, int n) {
    __shared__ int s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    auto idx = [] { return blockIdx.x * blockDim.x + threadIdx.x; };
    auto stage = [&](int v) {
        s[threadIdx.x] = v;
        __syncthreads();
        return s[(threadIdx.x + 1) % 128];
    };
    int v = i < n ? in[i] : 0;
    int w = stage(v);
    if ((int)idx() < n) out[i] = w;
}

// Structured bindings, range-for over a local array, init-statements in if/switch.
__global__ void modern_syntax(const int* in, int* out, int n) {
    int local[4] = {1, 2, 3, 4};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (int j = i; j < n) {
        auto [lo, hi] = split(in[j]);
        int acc = 0;
        for (int x : local) acc += x * lo;
        switch (int k = hi % 3; k) {
            case 0: acc += square(k); break;
            default: acc -= k; break;
        }
        out[j] = acc;
    }
}

// decltype, using-aliases and a nested struct declared inside a kernel.
__global__ void local_types(float* out) {
    using idx_t = decltype(blockIdx.x);
    struct Acc {
        float sum = 0.0f;
        __device__ void add(float v) { sum += v; }
    } acc;
    for (idx_t k = 0; k < blockDim.x; ++k) acc.add((float)k);
    out[blockIdx.x] = acc.sum;
}
