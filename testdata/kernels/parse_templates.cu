// slatec-test: no-harness
// Template syntax: explicit specialization and instantiation of kernels, variadic kernels, if constexpr, enable_if, >> in launches.
#include <type_traits>

template <typename T>
struct Wrapper {
    T value;
    using value_type = T;
};

// Primary template plus an explicit specialization for int.
template <typename T>
__global__ void describe(T* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = T(1);
}
template <>
__global__ void describe<int>(int* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = (int)blockIdx.x;
}

// Explicit instantiation definition.
template __global__ void describe<float>(float*);

// Dependent types and a defaulted non-type parameter that uses an earlier one.
template <typename W, int N = sizeof(typename W::value_type) * 8>
__global__ void unwrap(const W* in, typename W::value_type* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i].value + (typename W::value_type)N;
}

// Variadic kernel: sums any number of scalar arguments into each element.
template <typename... Ts>
__global__ void add_all(float* out, int n, Ts... xs) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (0.0f + ... + (float)xs);
}

// if constexpr on a bool non-type parameter, with a barrier in one branch only.
template <bool USE_SHARED, int BLOCK>
__global__ void maybe_shared(const int* in, int* out) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if constexpr (USE_SHARED) {
        __shared__ int s[BLOCK];
        s[threadIdx.x] = in[i];
        __syncthreads();
        out[i] = s[BLOCK - 1 - threadIdx.x];
    } else {
        out[i] = in[i];
    }
}

// SFINAE-constrained device helper.
template <typename T>
__device__ typename std::enable_if<std::is_integral<T>::value, T>::type half_of(T v) { return v / 2; }
template <typename T>
__device__ typename std::enable_if<std::is_floating_point<T>::value, T>::type half_of(T v) { return v * 0.5f; }

template <typename T>
__global__ void halve(T* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = half_of(p[i]);
}

constexpr int pick_block(int n) { return n > 1000 ? 256 : 64; }

void launches(float* f, int* d, Wrapper<int>* w, int n) {
    describe<int><<<4, 64>>>(d);
    describe<float><<<4, 64>>>(f);
    unwrap<Wrapper<int>><<<(n + 127) / 128, 128>>>(w, d, n);  // '>>' then '<<<'
    unwrap<Wrapper<int>, 3><<<(n + 127) / 128, 128>>>(w, d, n);
    add_all<<<(n + 255) / 256, 256>>>(f, n, 1, 2.5f, 3.0);
    add_all<int, float><<<(n + 255) / 256, 256>>>(f, n, 4, 0.25f);
    maybe_shared<(pick_block(2000) > 100), 256><<<n / 256, 256>>>(d, d);
    maybe_shared<false, 64><<<n / 64, 64>>>(d, d);
    halve<<<(n + 255) / 256, 256>>>(d, n);
    halve<float><<<(n + 255) / 256, 256>>>(f, n);
}
