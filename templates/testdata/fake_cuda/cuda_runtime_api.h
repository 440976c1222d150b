// The few runtime calls first_use.h makes, faked for a CPU test.
#ifndef FAKE_CUDA_RUNTIME_API_H
#define FAKE_CUDA_RUNTIME_API_H
enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorLaunchFailure = 719 };
static cudaError_t fake_pending = cudaSuccess;
static int fake_device = 0;
inline cudaError_t cudaPeekAtLastError() { return fake_pending; }
inline cudaError_t cudaGetLastError()
{
    const cudaError_t e = fake_pending;
    fake_pending = cudaSuccess;
    return e;
}
inline cudaError_t cudaGetDevice(int* d)
{
    *d = fake_device;
    return cudaSuccess;
}
#endif
