// slatec-test: refuse ctaid_from_ptx
// Inline PTX reading %ctaid.x and %nctaid.x directly bypasses the blockIdx/gridDim rewrite: refused.
__global__ void ctaid_from_ptx(unsigned* out) {
    unsigned cta, ncta;
    asm("mov.u32 %0, %%ctaid.x;" : "=r"(cta));
    asm("mov.u32 %0, %%nctaid.x;" : "=r"(ncta));
    if (threadIdx.x == 0) out[cta] = ncta - cta;
}

// Acceptable: the same result through blockIdx/gridDim.
__global__ void ctaid_from_builtins(unsigned* out) {
    if (threadIdx.x == 0) out[blockIdx.x] = gridDim.x - blockIdx.x;
}
