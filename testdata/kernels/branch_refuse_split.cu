// slatec-test: no-harness
// Braces split across #if branches, and a launch cut by #if, are refused, naming the lines.
#include <cuda_runtime.h>

// The body closes in one branch and goes on in the other.
__global__ void closes_early(float* x) {
    x[blockIdx.x] = 1.0f;
#ifdef USE_FAST
}
#else
    x[blockIdx.x] += 1.0f;
}
#endif

__global__ void cut_launch(float* x) { x[blockIdx.x] = 1.0f; }

void run(float* x, cudaStream_t s) {
    closes_early<<<4, 256>>>(x);
    cut_launch<<<4, 256
#ifdef USE_FAST
        , 0, s
#endif
        >>>(x);
}

// Each branch opens the body; one closing brace after #endif.
#ifdef USE_FAST
__global__ void opens_twice(float* x) {
    x[blockIdx.x] = 1.0f;
#else
__global__ void opens_twice(float* x) {
    x[blockIdx.x] = 2.0f;
#endif
}
