// slatec-test: no-harness
// Declaration attributes and qualifiers: __grid_constant__, __noinline__, alignas, [[nodiscard]], __restrict__ everywhere, const params, prototypes.
#include <cstdint>

struct Params {
    float scale;
    int n;
    float table[16];
};

// Forward declaration of a kernel, defined further down.
__global__ void declared_first(float* __restrict__ out, const Params p);

// __grid_constant__: the parameter is read in place from constant parameter space.
__global__ void grid_constant_param(float* out, const __grid_constant__ Params p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) out[i] = p.table[i % 16] * p.scale;
}

[[nodiscard]] __device__ __noinline__ int not_inlined(int v) { return v * 3 + (int)blockIdx.x; }

struct alignas(16) Quad {
    float v[4];
};

__global__ void qualifiers(const Quad* __restrict__ const in, Quad* __restrict__ out, const int n,
                           volatile int* flag) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Quad q = in[i];
#pragma unroll
    for (int k = 0; k < 4; ++k) q.v[k] += (float)not_inlined(k);
    out[i] = q;
    if (i == 0) *flag = 1;
}

__global__ void declared_first(float* __restrict__ out, const Params p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) out[i] = p.scale;
}

// A __device__ variable and a __constant__ table read by a kernel.
__device__ unsigned long long g_counter;
__constant__ float c_coeffs[8];

__global__ void globals(float* out) {
    atomicAdd(&g_counter, 1ull);
    out[blockIdx.x] = c_coeffs[blockIdx.x % 8];
}
