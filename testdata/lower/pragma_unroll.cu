// slatec-test: no-harness
// An early return before a barrier, with #pragma unroll on loops after it:
// the lowering's guards must not separate a pragma from its loop.
__global__ void unrolled(const float* in, float* out, int n)
{
    __shared__ float s[128];
    const int i = blockIdx.x * 128 + threadIdx.x;
    if (i >= n)
        return;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k)
        acc += in[(i + k) % n];
    s[threadIdx.x] = acc;
    __syncthreads();
    #pragma unroll 2
    for (int k = 1; k < 4; ++k)
        acc += s[(threadIdx.x + k) % 128];
    out[i] = acc;
}
