// slatec-test: no-harness
// Type names from headers slatec does not open (uint32_t, int64_t, half, ptrdiff_t): shared arrays, declarations, C casts (T)x and (T)(a - b), ctor-style declarations.
#include <stdint.h>
#include <stddef.h>
#include <cuda_fp16.h>

__global__ void hash_rows(const uint32_t* keys, uint32_t* out, int64_t n) {
  __shared__ uint32_t buf[128];
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t h = (uint32_t)(keys[i % n] - (uint32_t)i);
  ptrdiff_t off = (ptrdiff_t)threadIdx.x;
  buf[off] = h ^ (uint32_t)~h;
  __syncthreads();
  if (i < n) out[i] = buf[(off + 1) % blockDim.x] + (uint32_t)!h;
}

__global__ void scale_half(half* x, float s, int n) {
  half2 acc(0.f, 0.f);
  half factor = (half)s;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = __hmul(x[i], factor) + acc.x;
}

int main() {
  uint32_t *k = nullptr, *o = nullptr;
  half* x = nullptr;
  hash_rows<<<4, 128>>>(k, o, 512);
  scale_half<<<4, 128>>>(x, 2.f, 512);
  return 0;
}
