// Drives first_use.h against a fake CUDA runtime (fake_cuda/cuda_runtime_api.h):
// prints one line per preloader run ("preload <fn> <device>") and per step.
#include <cstdio>
#include <cstring>

#include "first_use.h"

static void pre_a(int device) { std::printf("preload a %d\n", device); }
static void pre_b(int device) { std::printf("preload b %d\n", device); }

struct registration {
    registration()
    {
        slate_first_use_v1::add(&pre_a);
        slate_first_use_v1::add(&pre_b);
    }
} registration_v;

int main()
{
    std::printf("step failed call\n");
    slate_first_use(cudaErrorMemoryAllocation);
    std::printf("step pending error\n");
    fake_pending = cudaErrorLaunchFailure;
    slate_first_use(cudaSuccess);
    std::printf("pending kept %d\n", (int)cudaPeekAtLastError());
    fake_pending = cudaSuccess;
    std::printf("step device 0\n");
    slate_first_use(cudaSuccess);
    std::printf("step device 0 again\n");
    slate_first_use(cudaSuccess);
    std::printf("step device 1\n");
    fake_device = 1;
    slate_first_use(cudaSuccess);
    std::printf("step device 0 after 1\n");
    fake_device = 0;
    slate_first_use(cudaSuccess);
    std::printf("result %d\n", (int)slate_first_use(cudaErrorInvalidValue));
    return 0;
}
