// slatec-test: refuse record_smid
// Inline PTX reading %smid (the SM a block runs on): meaningless once blocks become logical, so refused.
__device__ __forceinline__ unsigned smid() {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

__global__ void record_smid(unsigned* sm_of_block) {
    if (threadIdx.x == 0) sm_of_block[blockIdx.x] = smid();
}

// Acceptable: inline asm that reads only a lane id.
__global__ void lane_ids(unsigned* out) {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    out[blockIdx.x * blockDim.x + threadIdx.x] = lane;
}
