// slatec-test: no-harness
// Launches written with spaces inside the chevrons (k << < g, b >> > (args), k<< <g, b>> >(a)), next to template closers written > > that are not launches.
#include <cstdio>

template <typename T>
struct Box { T v; };

__global__ void fill(int* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = i;
}

template <typename T>
__global__ void scale(T* a, T s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= s;
}

int main() {
  int* a = nullptr;
  float* f = nullptr;
  int n = 1 << 10;
  dim3 grid((n + 127) / 128), block(128);
  Box<Box<Box<int>> > nested{};
  fill << < grid, block >> > (a, n);
  fill<< <grid, block>> >(a, n);
  fill <<<grid, block, 0>>> (a, n);
  scale<float> << < grid, block, 0, 0 >> > (f, 2.f, n);
  printf("%d\n", nested.v.v.v + (n >> 2));
  return 0;
}
