// What each part of the drop-in launcher's steady state costs the host
// (issue 10): the harness's 4-5 us timers are host-bound (a native launch
// enqueues in ~4.4 us on the H100 machine), so every 0.1 us the launcher
// adds shows there. Times, per call, over N calls in rounds that alternate:
//   native4     k(a, b, c, n): a kernel of four parameters, as programs launch
//   worker4     the same kernel with the static worker's parameters in front
//               (slate_ctl* and the 56-byte slate_cfg by value)
//   worker4ctl  the worker's parameters without the slate_cfg (8 bytes more)
//   getdevice   cudaGetDevice alone
//   peek        cudaPeekAtLastError alone
// Launches use one block of 32 threads of an empty body, so the GPU keeps up
// and the loop's time is the host's.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

struct __align__(8) cfg56 {
    unsigned long long total;
    unsigned int grid_x, grid_y, grid_z, iters, sm_low, sm_high, flags, workers, magic_x, shift_x, magic_y, shift_y;
};

__global__ void native4(float* a, const float* b, const float* c, int n)
{
    if (n < 0)
        a[threadIdx.x] = b[threadIdx.x] + c[threadIdx.x];
}

__global__ void worker4(void* ctl, cfg56 cfg, float* a, const float* b, const float* c, int n)
{
    if (n < 0 && cfg.total == 7u && ctl)
        a[threadIdx.x] = b[threadIdx.x] + c[threadIdx.x];
}

__global__ void worker4ctl(void* ctl, float* a, const float* b, const float* c, int n)
{
    if (n < 0 && ctl)
        a[threadIdx.x] = b[threadIdx.x] + c[threadIdx.x];
}

static double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char** argv)
{
    const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
    float* a;
    cudaMalloc(&a, 4096);
    cfg56 cfg = {};
    cfg.total = 1;
    const char* names[] = {"native4", "worker4", "worker4ctl", "getdevice", "peek"};
    const int cases = 5;
    std::vector<std::vector<double>> us(cases);
    for (int r = 0; r < rounds + 1; ++r) {
        for (int c = 0; c < cases; ++c) {
            cudaDeviceSynchronize();
            const double t0 = now_us();
            int dev = 0;
            for (int i = 0; i < n; ++i) {
                switch (c) {
                case 0: native4<<<1, 32>>>(a, a, a, n); break;
                case 1: worker4<<<1, 32>>>(nullptr, cfg, a, a, a, n); break;
                case 2: worker4ctl<<<1, 32>>>(nullptr, a, a, a, n); break;
                case 3: cudaGetDevice(&dev); break;
                case 4: (void)cudaPeekAtLastError(); break;
                }
            }
            const double t = (now_us() - t0) / n;
            cudaDeviceSynchronize();
            if (r > 0) // the first round warms up
                us[c].push_back(t);
        }
    }
    if (cudaGetLastError() != cudaSuccess) {
        std::printf("error\n");
        return 1;
    }
    for (int c = 0; c < cases; ++c) {
        std::sort(us[c].begin(), us[c].end());
        std::printf("HOST %-11s median %.3f us  min %.3f  max %.3f (per call, %d rounds of %d)\n", names[c], us[c][us[c].size() / 2], us[c][0], us[c].back(),
                    rounds, n);
    }
    return 0;
}
