// slatec-test: no-harness
// extern "C" kernels (specifier and block) declaring extern __shared__ arrays, a launch before the kernel's definition, and helpers reading blockIdx that are defined after the kernels using them (prototype first, one with a default argument).
__device__ int row_base(int k);
__device__ float weight(float x, float s = 2.0f);
extern "C" __global__ void reverse_rows(float* a, int n);

void launch_early(float* a, int n) { reverse_rows<<<(n + 127) / 128, 128, 128 * sizeof(float)>>>(a, n); }

extern "C" __global__ void reverse_rows(float* a, int n) {
  extern __shared__ float buf[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? a[i] : 0.0f;
  __syncthreads();
  if (i < n) a[i] = weight(buf[blockDim.x - 1 - threadIdx.x]) + (float)row_base(1);
}

extern "C" {
__global__ void copy_tile(const float* in, float* out, int n) {
  extern __shared__ float tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = tile[threadIdx.x] + (float)row_base(2);
}
}

__device__ int row_base(int k) { return (int)(blockIdx.y * k); }
__device__ float weight(float x, float s) { return x * s + (float)blockIdx.x; }

int main() {
  float *a = nullptr, *b = nullptr;
  launch_early(a, 1000);
  copy_tile<<<8, 128, 128 * sizeof(float)>>>(a, b, 1000);
  return 0;
}
