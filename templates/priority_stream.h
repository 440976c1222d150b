// ---- slatec priority streams: a launch at another priority than its stream's ----
// The block scheduler hands freed SM slots to pending blocks by stream
// priority, also across MPS clients: beside back-to-back FMA grids of
// another process, a program of short SGEMM launches finished in 36.8 ms at
// the greatest priority against 101.5 at the default, the FMA program
// unchanged (H100, bench/RESULTS.md, seventeenth session). It orders
// dispatch only: a block slowed in place by the warps beside it on its SM
// runs as slowly at any priority. Priority is a scheduling hint only, so a
// launch may move to a stream of another priority as long as it keeps its
// order with its own stream: the shadow stream waits for an event recorded
// on the program's stream before the launch, and the program's stream waits
// for one recorded on the shadow after it. Whatever the program then does on
// its stream (synchronize, record, query, launch, copy) comes after the
// launch, as it would have without the move.
//
// Shadows are per host thread (a thread's per-thread default stream shares
// its handle with every other thread's) and per device, one for each stream
// handle the thread launches on, up to kShadows; beyond them, and for a
// stream being captured into a graph, a launch stays on its own stream.
#ifndef SLATE_PRIORITY_STREAM_H
#define SLATE_PRIORITY_STREAM_H
#ifndef __CUDACC_RTC__
#include <cuda_runtime_api.h>

namespace slate_priority_v1 {

enum level { kDefault = 0, kHigh = 1, kLow = 2 };

class shadows {
public:
    enum { kShadows = 32 };

    // enter returns the stream to launch on at level: stream itself (level
    // kDefault, a capture, no shadow to be had) or its shadow, made to wait
    // for what the program queued on stream so far.
    cudaStream_t enter(cudaStream_t stream, level want)
    {
        if (want == kDefault)
            return stream;
        cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
        if (stream != 0 && (cudaStreamIsCapturing(stream, &capture) != cudaSuccess ||
                            capture != cudaStreamCaptureStatusNone))
            return stream;
        int device = -1;
        if (cudaGetDevice(&device) != cudaSuccess)
            return stream;
        entry* e = find(stream, device, want);
        if (!e || cudaEventRecord(e->before, stream) != cudaSuccess ||
            cudaStreamWaitEvent(e->shadow, e->before, 0) != cudaSuccess)
            return stream;
        return e->shadow;
    }

    // leave makes stream wait for what was launched on launched (enter's
    // answer) since enter.
    void leave(cudaStream_t stream, cudaStream_t launched)
    {
        if (launched == stream)
            return;
        for (int i = 0; i < used_; ++i) {
            entry& e = entries_[i];
            if (e.shadow == launched) {
                cudaEventRecord(e.after, launched);
                cudaStreamWaitEvent(stream, e.after, 0);
                return;
            }
        }
    }

    int used() const { return used_; }

private:
    struct entry {
        cudaStream_t stream;
        int device;
        level lv;
        cudaStream_t shadow;
        cudaEvent_t before, after;
    };

    entry* find(cudaStream_t stream, int device, level want)
    {
        for (int i = 0; i < used_; ++i)
            if (entries_[i].stream == stream && entries_[i].device == device && entries_[i].lv == want)
                return &entries_[i];
        if (used_ == kShadows)
            return nullptr;
        int least = 0, greatest = 0;
        if (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess)
            return nullptr;
        entry e;
        e.stream = stream;
        e.device = device;
        e.lv = want;
        if (cudaStreamCreateWithPriority(&e.shadow, cudaStreamNonBlocking, want == kHigh ? greatest : least) !=
            cudaSuccess)
            return nullptr;
        if (cudaEventCreateWithFlags(&e.before, cudaEventDisableTiming) != cudaSuccess) {
            cudaStreamDestroy(e.shadow);
            return nullptr;
        }
        if (cudaEventCreateWithFlags(&e.after, cudaEventDisableTiming) != cudaSuccess) {
            cudaEventDestroy(e.before);
            cudaStreamDestroy(e.shadow);
            return nullptr;
        }
        entries_[used_] = e;
        return &entries_[used_++];
    }

    entry entries_[kShadows];
    int used_ = 0;
};

// The calling thread's shadows. Never destroyed: the streams and events
// outlive the thread (a stream's queued work does not need its creator).
inline shadows& mine()
{
    thread_local shadows* s = new shadows();
    return *s;
}

} // namespace slate_priority_v1
#endif // __CUDACC_RTC__
#endif // SLATE_PRIORITY_STREAM_H
