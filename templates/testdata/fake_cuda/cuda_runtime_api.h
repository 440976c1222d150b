// The few runtime calls first_use.h and native_ahead.h make, faked for a CPU
// test. Events follow a fake GPU that runs one launch at a time: a launch
// takes fake_next_launch_us() and starts when the one before it ended or at
// fake_now_us(), whichever is later; an event ends with the launch before
// it, and waiting for one moves fake_now_us() to its end.
#ifndef FAKE_CUDA_RUNTIME_API_H
#define FAKE_CUDA_RUNTIME_API_H
enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorNotReady = 600,
    cudaErrorLaunchFailure = 719
};
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

typedef struct fake_event* cudaEvent_t;
typedef struct fake_stream* cudaStream_t;
struct fake_event {
    double end_us;
    bool recorded;
};
inline double& fake_now_us()
{
    static double t = 0;
    return t;
}
inline double& fake_next_launch_us()
{
    static double t = 0;
    return t;
}
inline double& fake_gpu_end_us() // when the last launch ends
{
    static double t = 0;
    return t;
}
inline int& fake_waits()
{
    static int n = 0;
    return n;
}
inline cudaError_t cudaEventCreate(cudaEvent_t* e)
{
    *e = new fake_event{0, false};
    return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    delete e;
    return cudaSuccess;
}
// cudaEventRecord follows the launch just made (fake_next_launch_us long).
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t)
{
    double start = fake_gpu_end_us() > fake_now_us() ? fake_gpu_end_us() : fake_now_us();
    fake_gpu_end_us() = start + fake_next_launch_us();
    e->end_us = fake_gpu_end_us();
    e->recorded = true;
    return cudaSuccess;
}
inline cudaError_t cudaEventQuery(cudaEvent_t e)
{
    return !e->recorded || e->end_us <= fake_now_us() ? cudaSuccess : cudaErrorNotReady;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    ++fake_waits();
    if (e->recorded && e->end_us > fake_now_us())
        fake_now_us() = e->end_us;
    return cudaSuccess;
}
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b)
{
    if (!a->recorded || !b->recorded)
        return cudaErrorInvalidValue;
    *ms = (float)((b->end_us - a->end_us) / 1000.0);
    return cudaSuccess;
}
#endif
