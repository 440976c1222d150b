// saxpy.cu: the kernel `make demo` transforms. A grid-stride SAXPY and a
// block reduction whose out-of-range threads return before a barrier, so
// the demo shows both the persistent worker and the return lowering.
#include <cstdio>
#include <cuda_runtime.h>

#define GTID (blockIdx.x * blockDim.x + threadIdx.x)

__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    for (int i = GTID; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

// Sums each block's 256 elements; threads past the end leave early.
__global__ void __launch_bounds__(256) block_sum(const float* in, float* out, int n)
{
    __shared__ float partial[256];
    const int i = GTID;
    if (i >= n)
        return;
    partial[threadIdx.x] = in[i];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s && i + s < n)
            partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = partial[0];
}

int main()
{
    const int n = 1 << 20, threads = 256, blocks = (n + threads - 1) / threads;
    float *x, *y, *sums;
    cudaMallocManaged(&x, n * sizeof(float));
    cudaMallocManaged(&y, n * sizeof(float));
    cudaMallocManaged(&sums, blocks * sizeof(float));
    for (int i = 0; i < n; ++i) {
        x[i] = 1.0f;
        y[i] = 2.0f;
    }
    saxpy<<<blocks, threads>>>(n, 3.0f, x, y);
    block_sum<<<blocks, threads>>>(y, sums, n);
    cudaDeviceSynchronize();
    double total = 0;
    for (int b = 0; b < blocks; ++b)
        total += sums[b];
    printf("%s: sum = %.0f (expected %.0f)\n", total == 5.0 * n ? "PASS" : "FAIL", total, 5.0 * n);
    return total == 5.0 * n ? 0 : 1;
}
