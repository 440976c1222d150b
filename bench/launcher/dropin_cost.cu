// The drop-in launcher's host cost against a native launch of the same
// kernel in the same process (issue 10). After `slatec transform`, the
// `<<<>>>` below is the drop-in launch; cudaLaunchKernel on the kernel's
// address is not rewritten and stays native. Rounds of N launches of a
// one-block kernel that does nothing (the GPU keeps up, so a round's time
// is the host's), the two kinds alternating round by round; prints the
// median time per launch of each and their difference, and the median of
// per-round differences (adjacent rounds share the host's state: its
// frequency, the core it runs on).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void tiny(float* a, const float* b, const float* c, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = b[i] + s * c[i];
}

static double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char** argv)
{
    const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 15;
    float* a;
    if (cudaMalloc(&a, 4096) != cudaSuccess)
        return 2;
    float s = 1.0f;
    int zero = 0;
    void* args[] = {&a, &a, &a, &s, &zero};
    std::vector<double> native, dropin, diff;
    for (int r = 0; r <= rounds; ++r) {
        double t[2];
        for (int k = 0; k < 2; ++k) {
            const int which = (r + k) % 2; // alternate which goes first
            cudaDeviceSynchronize();
            const double t0 = now_us();
            if (which == 0) {
                for (int i = 0; i < n; ++i)
                    cudaLaunchKernel((const void*)tiny, dim3(1), dim3(32), args, 0, 0);
            } else {
                for (int i = 0; i < n; ++i)
                    tiny<<<1, 32>>>(a, a, a, s, zero);
            }
            t[which] = (now_us() - t0) / n;
        }
        cudaDeviceSynchronize();
        if (r == 0)
            continue; // warm-up
        native.push_back(t[0]);
        dropin.push_back(t[1]);
        diff.push_back(t[1] - t[0]);
    }
    if (cudaGetLastError() != cudaSuccess) {
        std::printf("error\n");
        return 1;
    }
    std::printf("DROPIN native %.3f us  dropin %.3f us  per launch (medians of %d rounds of %d); median per-round difference %+.3f us\n", median(native),
                median(dropin), rounds, n, median(diff));
    return 0;
}
