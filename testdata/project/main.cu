// slatec-test: no-harness
// Launches kernels defined in kernels/scale.cu and declared in include/scale.cuh.
#include <cstdio>
#include <cuda_runtime.h>

#include "include/scale.cuh"

int main()
{
    const int n = 1 << 20;
    float* a;
    if (cudaMalloc(&a, n * sizeof(float)) != cudaSuccess)
        return 2;
    fill_strided<1><<<(n + 255) / 256, 256>>>(a, n);
    scale<<<(n + 255) / 256, 256>>>(a, 2.0f, n);
    ops::shift<<<(n + 255) / 256, 256>>>(a, 1.0f, n);
    float h[3];
    cudaMemcpy(h, a + 1, sizeof(h), cudaMemcpyDeviceToHost);
    const bool ok = h[0] == 3.0f && h[1] == 5.0f && h[2] == 7.0f;
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    cudaFree(a);
    return ok ? 0 : 1;
}
