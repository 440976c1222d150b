// slatec-test: refuse parent_launch slatec: nvcc-skip
// Device-side kernel launch (dynamic parallelism): needs -rdc=true to compile, and is refused by the transform.
__global__ void child_fill(int* out, int base, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[base + i] = base + i;
}

// Each block launches a child grid for its own slice.
__global__ void parent_launch(int* out, int per_block) {
    if (threadIdx.x == 0) {
        int base = blockIdx.x * per_block;
        child_fill<<<(per_block + 127) / 128, 128>>>(out, base, per_block);
    }
}
