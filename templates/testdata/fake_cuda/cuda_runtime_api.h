// The few runtime calls first_use.h, native_ahead.h and priority_stream.h
// make, faked for a CPU test. Events follow a fake GPU that runs one launch at a time: a launch
// takes fake_next_launch_us() and starts when the one before it ended or at
// fake_now_us(), whichever is later; an event ends with the launch before
// it, and waiting for one moves fake_now_us() to its end.
#ifndef FAKE_CUDA_RUNTIME_API_H
#define FAKE_CUDA_RUNTIME_API_H
#include <map>
#include <set>
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
// Stream order, for priority_stream.h: every operation queued on a stream
// (fake_launch, an event record, a wait) makes the stream's next one depend
// on everything it depended on; deps is that set of launches (ids). The
// legacy default stream (0) is fake_legacy().
struct fake_stream {
    int priority;
    int device;
    bool capturing;
    std::set<int> deps;
};
struct fake_event {
    double end_us;
    bool recorded;
    std::set<int> deps;
};
inline fake_stream* fake_legacy()
{
    static fake_stream s{0, 0, false, std::set<int>()};
    return &s;
}
inline fake_stream* fake_of(cudaStream_t s) { return s ? s : fake_legacy(); }
inline int& fake_streams_made()
{
    static int n = 0;
    return n;
}
inline bool& fake_fail_streams() // cudaStreamCreateWithPriority fails
{
    static bool f = false;
    return f;
}
// fake_launch queues a launch on s and returns its id (what it depends on:
// fake_launch_deps(id)).
inline std::set<int>& fake_launch_deps(int id)
{
    static std::map<int, std::set<int> > deps;
    return deps[id];
}
inline int fake_launch(cudaStream_t s)
{
    static int next = 0;
    const int id = ++next;
    fake_launch_deps(id) = fake_of(s)->deps;
    fake_of(s)->deps.insert(id);
    return id;
}
enum cudaStreamCaptureStatus { cudaStreamCaptureStatusNone = 0, cudaStreamCaptureStatusActive = 1 };
enum { cudaStreamDefault = 0, cudaStreamNonBlocking = 1 };
enum { cudaEventDefault = 0, cudaEventDisableTiming = 2 };
inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned int, int priority)
{
    if (fake_fail_streams())
        return cudaErrorMemoryAllocation;
    ++fake_streams_made();
    *s = new fake_stream{priority, fake_device, false, std::set<int>()};
    return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    delete s;
    return cudaSuccess;
}
inline cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* c)
{
    *c = fake_of(s)->capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}
// The device's stream priorities: 0 the least, -5 the greatest (an H100's).
inline cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest)
{
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
}
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
inline int& fake_creates()
{
    static int n = 0;
    return n;
}
inline cudaError_t cudaEventCreate(cudaEvent_t* e)
{
    ++fake_creates();
    *e = new fake_event{0, false, std::set<int>()};
    return cudaSuccess;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) { return cudaEventCreate(e); }
inline cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    delete e;
    return cudaSuccess;
}
// cudaEventRecord follows the launch just made (fake_next_launch_us long)
// and takes what the stream's next operation would depend on.
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    e->deps = fake_of(s)->deps;
    double start = fake_gpu_end_us() > fake_now_us() ? fake_gpu_end_us() : fake_now_us();
    fake_gpu_end_us() = start + fake_next_launch_us();
    e->end_us = fake_gpu_end_us();
    e->recorded = true;
    return cudaSuccess;
}
// cudaStreamWaitEvent: the stream's next operation depends on what the
// event's record did.
inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int)
{
    fake_of(s)->deps.insert(e->deps.begin(), e->deps.end());
    return cudaSuccess;
}
inline int& fake_queries()
{
    static int n = 0;
    return n;
}
inline cudaError_t cudaEventQuery(cudaEvent_t e)
{
    ++fake_queries();
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
