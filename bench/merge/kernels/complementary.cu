// Complementary kernels for the merged-scheduler benchmark (bench/merge/triad_*.cu):
// one saturates DRAM bandwidth on a fraction of the SMs, the other scales with SMs
// and hardly touches memory, so running them side by side on split SMs can beat
// running them one after another (Liang et al., Fig. 2; Slate's "complementary").

// STREAM triad a = b + s * c on float4, four float4 per thread (a block covers
// 4 * blockDim.x consecutive float4, each unrolled access coalesced): many bytes in
// flight per SM, so a few dozen SMs reach the device's bandwidth.
__global__ void triad4(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c, float s,
                       int n4) {
    const int base = blockIdx.x * blockDim.x * 4 + threadIdx.x;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
        const int i = base + u * blockDim.x;
        if (i < n4) {
            const float4 x = b[i], y = c[i];
            a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
        }
    }
}

// Four independent FMA chains per thread, `iters` steps each: compute bound, one
// load and one store per thread. fmaf keeps the result independent of -fmad.
__global__ void fma_chain(float* __restrict__ out, const float* __restrict__ in, int n, int iters) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = in[i], b = 0.5f * a + 0.25f, c = 0.25f - a, d = 1.0f + 0.125f * a;
    for (int k = 0; k < iters; ++k) {
        a = fmaf(a, 0.99990f, 0.00010f);
        b = fmaf(b, 1.00010f, -0.00010f);
        c = fmaf(c, 0.99995f, 0.00005f);
        d = fmaf(d, 1.00005f, -0.00005f);
    }
    out[i] = a + b + c + d;
}
