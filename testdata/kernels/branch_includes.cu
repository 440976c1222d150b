// slatec-test: no-harness
// Includes under #if: missing headers in branches no build takes (#if 0, a comparison of a macro #defined earlier) are neither followed nor reported; an include under #ifdef is followed when found.
#include <cuda_runtime.h>

#define HAVE_LEVEL 2
#if 0
#include "no_such_header.cuh"
#endif
#if HAVE_LEVEL > 3 && !defined(NO_LEVEL4)
#include "no_such_level4.cuh"
#else
__device__ float ext_scale(float v) { return 2.0f * v; }
#endif
#ifdef USE_VEC
#include "vec_math.cuh"
#endif

__global__ void scale_ext(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef USE_VEC
    if (i < n) x[i] = clampf(ext_scale(x[i]), 0.0f, 1.0f);
#else
    if (i < n) x[i] = ext_scale(x[i]);
#endif
}

void run_ext(float* x, int n) { scale_ext<<<(n + 127) / 128, 128>>>(x, n); }
