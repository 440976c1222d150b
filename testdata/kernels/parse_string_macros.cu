// slatec-test: no-harness
// Adjacent string literals with macros between them: "%d\t" FMT "\t%d", "a" FMT "b", "%" PRId64, FMT "..." first.
#include <cstdio>
#include <cinttypes>

#define FMT "%d"
#define SEP "\t"

__global__ void report(const int* v, int64_t total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (i == 0) {
    printf("%d\t" FMT "\t%d\n", n, v[0], (int)blockIdx.x);
    printf("a" FMT "b\n", v[i]);
    printf("total=%" PRId64 "\n", total);
    printf(FMT SEP FMT "\n", i, n);
  }
}

int main() {
  int* v = nullptr;
  report<<<2, 64>>>(v, 5, 100);
  return 0;
}
