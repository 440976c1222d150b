// slatec-test: refuse via_macro
// A macro expands to a call of a helper that reads blockIdx: slatec does not expand macros, so it cannot redirect that call to the helper's persistent copy; the kernel is refused. Function-like macros that only compute (IN_RANGE) are macros, not unknown functions.
#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) < (hi))

__device__ int block_base() { return blockIdx.x * blockDim.x; }
#define GLOBAL_ID() (block_base() + threadIdx.x)

__global__ void via_macro(int* out, int n) {
  int i = GLOBAL_ID();
  if (IN_RANGE(i, 0, n)) out[i] = i;
}

__global__ void plain_macro(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (IN_RANGE(i, 0, n)) out[i] = 2 * i;
}

int main() {
  int* out = nullptr;
  via_macro<<<4, 64>>>(out, 200);
  plain_macro<<<4, 64>>>(out, 200);
  return 0;
}
