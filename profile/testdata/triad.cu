// triad.cu: the STREAM triad c = a + s*b, the memory-bound kernel of the
// Slate paper's Fig. 1, for slatec profile's tests. Each block of 256
// threads moves 3 x 4 x 256 = 3072 bytes of DRAM traffic:
//
//   slatec profile triad.cu --kernel triad --block 256 --bytes-per-block 3072 \
//     --args 'buf:f32:16M,buf:f32:16M,out:f32:16M,i32:16M,f32:2.5'
#include <cuda_runtime.h>

__global__ void triad(const float* __restrict__ a, const float* __restrict__ b,
                      float* __restrict__ c, int n, float s)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + s * b[i];
}

// A kernel that uses shared memory and a barrier, so tests see a worker
// with static shared memory.
__global__ void block_sum(const float* in, float* out, int n)
{
    __shared__ float partial[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    partial[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = partial[0];
}

namespace ns {
__global__ void scale(double* x, double a, unsigned long long n)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}
}

template <typename T>
__global__ void fill(T* x, T v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = v;
}

int main()
{
    float *a, *b, *c;
    const int n = 1 << 24;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMalloc(&c, n * sizeof(float));
    triad<<<(n + 255) / 256, 256>>>(a, b, c, n, 2.5f);
    cudaDeviceSynchronize();
    return 0;
}
