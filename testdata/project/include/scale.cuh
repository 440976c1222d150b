// The kernels' declarations, shared by the file that defines them and the
// files that launch them (the usual layout of a project).
#pragma once

__global__ void scale(float* a, float s, int n);

namespace ops {
__global__ void shift(float* a, float d, int n);
}

// A template kernel defined in the header: its launcher is defined here too.
template <int kStride>
__global__ void fill_strided(float* a, int n)
{
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * kStride;
    if (i < n)
        a[i] = (float)i;
}
