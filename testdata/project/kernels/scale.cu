// slatec-test: no-harness
// Defines the kernels that include/scale.cuh declares; main.cu launches them.
#include "../include/scale.cuh"
#include "../include/tile.cuh"

__global__ void scale(float* a, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] *= s;
}

namespace ops {
__global__ void shift(float* a, float d, int n)
{
    int i = Tile<256>::index(); // launched with 256 threads a block
    if (i < n)
        a[i] += d;
}
} // namespace ops
