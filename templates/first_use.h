// ---- slatec first use: load the workers where the program first uses the GPU ----
// With lazy module loading (CUDA's default) a kernel's module loads at its first
// launch, usually inside the region a program times; a transformed module holds
// the workers too, so it loads slower (docs/ABI.md, "Host cost of a drop-in
// launch"). The transform wraps the host runtime calls that set a program up
// (cudaMalloc, cudaMemcpy, cudaEventCreate, cudaSetDevice, ...) in
// slate_first_use(); the first of them that succeeds on a device runs every
// transformed file's preloader for that device, which loads the functions its
// launches will take. SLATE_PRELOAD=0 turns it off.
#ifndef SLATE_FIRST_USE_H
#define SLATE_FIRST_USE_H
#ifndef __CUDACC_RTC__
#include <cuda_runtime_api.h>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

// One registry per process, shared by every transformed translation unit:
// inline functions with external linkage, so the linker keeps one copy. The
// version in the name keeps files of slatec versions with another layout apart.
namespace slate_first_use_v1 {

typedef void (*preloader)(int device);

enum { kMaxPreloaders = 1024, kMaxDevices = 64 };

struct registry {
    std::mutex mu;
    preloader fns[kMaxPreloaders];
    int n;
    std::atomic<unsigned long long> done; // bit d: device d was preloaded
    registry() : n(0), done(0ull) {}
};

inline registry& reg()
{
    static registry r;
    return r;
}

inline bool enabled()
{
    static const bool on = [] {
        const char* v = std::getenv("SLATE_PRELOAD");
        return !(v && std::strcmp(v, "0") == 0);
    }();
    return on;
}

// add registers a translation unit's preloader (its static initialisation).
inline void add(preloader f)
{
    registry& r = reg();
    std::lock_guard<std::mutex> lock(r.mu);
    if (r.n < kMaxPreloaders)
        r.fns[r.n++] = f;
}

// touched runs the preloaders for the current device, once per device. A
// pending error the program has not read yet is left alone: nothing runs.
inline void touched()
{
    registry& r = reg();
    if (r.done.load(std::memory_order_acquire) == ~0ull || !enabled())
        return;
    int device = -1;
    if (cudaPeekAtLastError() != cudaSuccess)
        return;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) {
        cudaGetLastError(); // our call's, none was pending
        return;
    }
    const unsigned long long bit = 1ull << device;
    if (r.done.load(std::memory_order_acquire) & bit)
        return;
    preloader fns[kMaxPreloaders];
    int n = 0;
    {
        std::lock_guard<std::mutex> lock(r.mu);
        if (r.done.load(std::memory_order_relaxed) & bit)
            return;
        r.done.fetch_or(bit, std::memory_order_acq_rel);
        n = r.n;
        for (int i = 0; i < n; ++i)
            fns[i] = r.fns[i];
    }
    for (int i = 0; i < n; ++i)
        fns[i](device);
}

} // namespace slate_first_use_v1

// slate_first_use passes a setup call's result through and, when it
// succeeded, loads the workers for the device it ran on.
static inline cudaError_t slate_first_use(cudaError_t result)
{
    if (result == cudaSuccess)
        slate_first_use_v1::touched();
    return result;
}
#endif // __CUDACC_RTC__
#endif // SLATE_FIRST_USE_H
