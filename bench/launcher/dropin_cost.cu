// The drop-in launcher's cost against a native launch of the same kernel
// in the same process (issue 10). After `slatec transform`, the `<<<>>>`
// below is the drop-in launch; cudaLaunchKernel on the kernel's address is
// not rewritten and stays native. Rounds of N launches, the two kinds
// alternating round by round; prints, per kind, the median host time per
// launch (the enqueue loop's) and GPU time per launch (events around the
// round), and the medians of per-round differences (adjacent rounds share
// the host's state: its frequency, the core it runs on).
//   dropin_cost [N [ROUNDS [ELEMENTS]]]
// ELEMENTS 0 (default): one block that does nothing, so the GPU keeps up
// and the times are the host's; 1048576: a ~4 us triad of 4096 blocks, as
// fast as the host enqueues, where a GPU gap between launches would show.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void triad(float* a, const float* b, const float* c, float s, int n)
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
    int elems = argc > 3 ? std::atoi(argv[3]) : 0;
    const unsigned int grid = elems > 0 ? (unsigned int)((elems + 255) / 256) : 1u;
    const unsigned int block = elems > 0 ? 256u : 32u;
    float *a, *b, *c;
    const size_t bytes = (size_t)(elems > 0 ? elems : 1024) * sizeof(float);
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess || cudaMalloc(&c, bytes) != cudaSuccess)
        return 2;
    cudaMemset(b, 0, bytes);
    cudaMemset(c, 0, bytes);
    float s = 1.0f;
    void* args[] = {&a, &b, &c, &s, &elems};
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<double> host[2], gpu[2], dhost, dgpu;
    for (int r = 0; r <= rounds; ++r) {
        double th[2], tg[2];
        for (int k = 0; k < 2; ++k) {
            const int which = (r + k) % 2; // alternate which goes first
            cudaDeviceSynchronize();
            cudaEventRecord(e0, 0);
            const double t0 = now_us();
            if (which == 0) {
                for (int i = 0; i < n; ++i)
                    cudaLaunchKernel((const void*)triad, dim3(grid), dim3(block), args, 0, 0);
            } else {
                for (int i = 0; i < n; ++i)
                    triad<<<grid, block>>>(a, b, c, s, elems);
            }
            th[which] = (now_us() - t0) / n;
            cudaEventRecord(e1, 0);
            cudaEventSynchronize(e1);
            float ms = 0.0f;
            cudaEventElapsedTime(&ms, e0, e1);
            tg[which] = 1000.0 * ms / n;
        }
        if (r == 0)
            continue; // warm-up
        for (int k = 0; k < 2; ++k) {
            host[k].push_back(th[k]);
            gpu[k].push_back(tg[k]);
        }
        dhost.push_back(th[1] - th[0]);
        dgpu.push_back(tg[1] - tg[0]);
    }
    if (cudaGetLastError() != cudaSuccess) {
        std::printf("error\n");
        return 1;
    }
    std::printf("DROPIN elements=%d grid=%u: host native %.3f dropin %.3f (per-round diff %+.3f) us; gpu native %.3f dropin %.3f (per-round diff %+.3f) us per launch, medians of %d rounds of %d\n",
                elems, grid, median(host[0]), median(host[1]), median(dhost), median(gpu[0]), median(gpu[1]), median(dgpu), rounds, n);
    return 0;
}
