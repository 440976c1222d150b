// ---- slatec persistent-worker support (see docs/ABI.md) -------------------
// Injected once at the top of each transformed file; guarded so that several
// transformed files can be included into one translation unit.
#ifndef SLATE_PRELUDE_H
#define SLATE_PRELUDE_H

// One per job, in device memory, zeroed before a job's first launch.
struct __align__(8) slate_ctl {
    unsigned long long next;    // queue counter: first logical block not yet handed out
    unsigned long long done;    // logical blocks completed (with SLATE_FLAG_PROGRESS)
    unsigned int retreat;       // nonzero: take no new task, exit
    unsigned int exited;        // workers that have exited in this launch
    unsigned int* counts;       // test hooks: executions per logical block, or null
};

// Passed by value to every worker launch.
struct __align__(8) slate_cfg {
    unsigned long long total;   // logical blocks: grid_x * grid_y * grid_z
    unsigned int grid_x, grid_y, grid_z;
    unsigned int iters;         // logical blocks per task
    unsigned int sm_low, sm_high; // inclusive SM range
    unsigned int flags;
    unsigned int workers;       // worker blocks launched
};

#define SLATE_FLAG_RESET 1u     // the last worker to exit zeroes the control block
#define SLATE_FLAG_PROGRESS 2u  // count completed logical blocks in ctl->done
#define SLATE_FLAG_ALL_SMS 4u   // the range is every SM: no %smid check
#define SLATE_FLAG_STATIC 8u    // worker b runs tasks b, b + workers, ... without the queue
                                // (launches on all SMs that are never resized)
#define SLATE_STOP 0xffffffffffffffffull

// slate_worker_loop is the persistent worker: it runs body(blockIdx, gridDim)
// for each logical block of each task it takes from the queue. kSync adds a
// barrier between logical blocks, which kernels using shared memory or
// barriers need (the next logical block reuses the shared memory).
template <bool kSync, typename Body>
static __device__ __forceinline__ void slate_run_task(const slate_cfg& cfg, unsigned long long start, Body& body,
                                                      slate_ctl* __restrict__ ctl, bool leader)
{
    unsigned long long end = start + cfg.iters;
    if (end > cfg.total)
        end = cfg.total;
    // Row-major logical id -> (x, y, z): divide once per task, then count.
    const unsigned long long q = start / cfg.grid_x;
    const unsigned long long r = q / cfg.grid_y;
    uint3 b;
    b.x = (unsigned int)(start - q * cfg.grid_x);
    b.y = (unsigned int)(q - r * cfg.grid_y);
    b.z = (unsigned int)r;
    const dim3 grid(cfg.grid_x, cfg.grid_y, cfg.grid_z);
    for (unsigned long long id = start; id < end; ++id) {
#ifdef SLATE_TEST_HOOKS
        if (leader && ctl->counts)
            atomicAdd(&ctl->counts[id], 1u);
#endif
        body(b, grid);
        if (kSync)
            __syncthreads();
        if (++b.x == cfg.grid_x) {
            b.x = 0;
            if (++b.y == cfg.grid_y) {
                b.y = 0;
                ++b.z;
            }
        }
    }
    if (leader && (cfg.flags & SLATE_FLAG_PROGRESS))
        atomicAdd(&ctl->done, end - start);
}

// slate_worker_loop is the persistent worker: it runs body(blockIdx, gridDim)
// for each logical block of each task it takes from the queue. kSync adds a
// barrier between logical blocks, which kernels using shared memory, barriers
// or warp operations need (the next logical block reuses the shared memory,
// and lanes of two logical blocks must never meet in one warp operation).
template <bool kSync, typename Body>
static __device__ __forceinline__ void slate_worker_loop(slate_ctl* __restrict__ ctl, const slate_cfg& cfg, Body body)
{
    // Double-buffered task slot: the leader writes slot p while the others
    // may still read slot p^1, so one barrier per task suffices.
    __shared__ unsigned long long slate_task[2];
    const bool leader = (threadIdx.x | threadIdx.y | threadIdx.z) == 0;
    if (!(cfg.flags & SLATE_FLAG_ALL_SMS)) {
        if (leader) {
            unsigned int smid;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
            slate_task[0] = (smid < cfg.sm_low || smid > cfg.sm_high) ? SLATE_STOP : 0ull;
        }
        __syncthreads();
        if (slate_task[0] == SLATE_STOP)
            goto exit;
    }
    if (cfg.flags & SLATE_FLAG_STATIC) {
        // A launch that is never resized needs no queue: stride over the
        // tasks (no atomics, no control block), like a grid-stride loop.
        const unsigned long long tasks = (cfg.total + cfg.iters - 1) / cfg.iters;
        for (unsigned long long t = blockIdx.x; t < tasks; t += cfg.workers)
            slate_run_task<kSync>(cfg, t * cfg.iters, body, ctl, leader);
        return;
    }
    {
        for (unsigned int parity = 1u;; parity ^= 1u) {
            if (leader) {
                unsigned long long t = SLATE_STOP;
                if (*(volatile const unsigned int*)&ctl->retreat == 0u) {
                    t = atomicAdd(&ctl->next, (unsigned long long)cfg.iters);
                    if (t >= cfg.total)
                        t = SLATE_STOP;
                }
                slate_task[parity] = t;
            }
            __syncthreads();
            const unsigned long long start = slate_task[parity];
            if (start == SLATE_STOP)
                break;
            slate_run_task<kSync>(cfg, start, body, ctl, leader);
        }
    }
exit:
    if (leader && (cfg.flags & SLATE_FLAG_RESET)) {
        __threadfence();
        if (atomicAdd(&ctl->exited, 1u) == cfg.workers - 1u) {
            ctl->next = 0ull;
            ctl->done = 0ull;
            ctl->retreat = 0u;
            ctl->exited = 0u;
            __threadfence();
        }
    }
}

// The type `auto x = e;` gives x, for declarations the return lowering splits.
template <class T> struct slate_plain { typedef T type; };
template <class T> struct slate_plain<T&> { typedef typename slate_plain<T>::type type; };
template <class T> struct slate_plain<T&&> { typedef typename slate_plain<T>::type type; };
template <class T> struct slate_plain<const T> { typedef typename slate_plain<T>::type type; };
template <class T> struct slate_plain<volatile T> { typedef typename slate_plain<T>::type type; };
template <class T> struct slate_plain<const volatile T> { typedef typename slate_plain<T>::type type; };

#ifndef __CUDACC_RTC__
// ---- host side: drop-in launch helpers -------------------------------------
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>
// SLATE_TEST_HOOKS: count executions per logical block, retreat and
// relaunch mid-run (tests). It implies SLATE_ENV: the SM range and task
// size come from $SLATE_SM_RANGE and $SLATE_ITERS (tests, benchmarks).
#ifdef SLATE_TEST_HOOKS
#ifndef SLATE_ENV
#define SLATE_ENV 1
#endif
#include <chrono>
#include <thread>
#endif

namespace slate {

// Control blocks for drop-in launches. Each launch takes a slot, so
// launches on different streams never share a queue counter; a slot is
// reused only after the event recorded behind its last launch completed.
// The worker's self-reset (SLATE_FLAG_RESET) leaves a slot zeroed.
enum { kPoolSlots = 256, kMaxDevices = 64 };

struct device_state {
    bool ready;
    int sms;
    slate_ctl* ctls;
    cudaEvent_t events[kPoolSlots];
    bool recorded[kPoolSlots];
    unsigned int next_slot;
};

struct occupancy_entry {
    const void* func;
    int device, threads;
    size_t shmem;
    int blocks_per_sm;
};

struct state {
    std::mutex mu;
    device_state dev[kMaxDevices];
    std::vector<occupancy_entry> occupancy;
};

static state& global_state()
{
    static state s;
    return s;
}

// auto_iters: logical blocks per task; the same rule as the Go runtime's
// AutoIters (keep them in step). Per-task overhead (one atomic, one
// barrier) wants tasks of at least ~4 logical blocks (a light triad ran
// 1.79x slower with 1 per task, 1.01x with 4); the tail wants each worker
// to take ~8 tasks; a resize waits for the running task, so at most 32.
// With per = total/workers: iters = per/8, raised to min(4, per), in [1, 32].
static unsigned int auto_iters(unsigned long long total, unsigned long long workers)
{
    if (workers == 0 || total <= workers)
        return 1u;
    const unsigned long long per = total / workers;
    unsigned long long it = per / 8;
    const unsigned long long floor = per < 4 ? per : 4;
    if (it < floor)
        it = floor;
    if (it > 32)
        it = 32;
    return (unsigned int)(it < 1 ? 1 : it);
}

struct plan {
    slate_ctl* ctl;
    slate_cfg cfg;
    unsigned int workers;
    int device, slot;
    bool queue; // the launch takes tasks from the control block's queue
    cudaStream_t stream;
};

#ifdef SLATE_ENV
static bool env_range(const char* name, unsigned int* lo, unsigned int* hi)
{
    const char* v = std::getenv(name);
    return v && std::sscanf(v, "%u:%u", lo, hi) == 2;
}

// The environment's range and task size, read once per process.
struct env_config {
    bool has_range;
    unsigned int lo, hi, iters;
    env_config() : has_range(false), lo(0), hi(0), iters(0)
    {
        has_range = env_range("SLATE_SM_RANGE", &lo, &hi);
        if (const char* v = std::getenv("SLATE_ITERS"))
            iters = (unsigned int)std::strtoul(v, 0, 10);
    }
};

static const env_config& env()
{
    static env_config c;
    return c;
}
#endif

// make_plan prepares a worker launch. It returns false when the launch
// should be made natively instead: an empty grid or a configuration the
// worker cannot run with (the native launch then reports the same error a
// program would see), or a stream being captured into a graph.
static bool make_plan(plan* p, const void* worker, const void* native, dim3 grid, dim3 block, size_t shmem,
                      cudaStream_t stream, unsigned int iters)
{
    const unsigned long long total = (unsigned long long)grid.x * grid.y * grid.z;
    const int threads = (int)(block.x * block.y * block.z);
    if (total == 0 || threads <= 0)
        return false;
    // A stream being captured into a graph gets the native launch. The
    // legacy default stream cannot be captured: skip the query there (it is
    // a measurable part of a small kernel's launch).
    if (stream != 0) {
        cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone) {
            cudaGetLastError();
            return false;
        }
    }
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices)
        return false;
    // A kernel that opted in to more than 48 KB of dynamic shared memory:
    // give its worker the same limit.
    if (shmem > 48u * 1024u) {
        cudaFuncAttributes attr;
        if (cudaFuncGetAttributes(&attr, native) == cudaSuccess) {
            cudaFuncSetAttribute(worker, cudaFuncAttributeMaxDynamicSharedMemorySize, attr.maxDynamicSharedSizeBytes);
            cudaFuncSetAttribute(worker, cudaFuncAttributePreferredSharedMemoryCarveout, attr.preferredShmemCarveout);
        }
    }
    state& st = global_state();
    std::lock_guard<std::mutex> lock(st.mu);
    device_state& ds = st.dev[device];
    if (!ds.ready) {
        if (cudaDeviceGetAttribute(&ds.sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
            cudaMalloc((void**)&ds.ctls, sizeof(slate_ctl) * kPoolSlots) != cudaSuccess ||
            cudaMemset(ds.ctls, 0, sizeof(slate_ctl) * kPoolSlots) != cudaSuccess)
            return false;
        for (int i = 0; i < kPoolSlots; ++i)
            if (cudaEventCreateWithFlags(&ds.events[i], cudaEventDisableTiming) != cudaSuccess)
                return false;
        ds.ready = true;
    }
    int per_sm = -1;
    for (size_t i = 0; i < st.occupancy.size(); ++i) {
        const occupancy_entry& e = st.occupancy[i];
        if (e.func == worker && e.device == device && e.threads == threads && e.shmem == shmem) {
            per_sm = e.blocks_per_sm;
            break;
        }
    }
    if (per_sm < 0) {
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, worker, threads, shmem) != cudaSuccess) {
            cudaGetLastError();
            per_sm = 0;
        }
        occupancy_entry e = {worker, device, threads, shmem, per_sm};
        st.occupancy.push_back(e);
    }
    if (per_sm <= 0)
        return false;
    unsigned int sm_low = 0u, sm_high = 0xffffffffu;
    const unsigned long long all = (unsigned long long)per_sm * (unsigned long long)ds.sms;
#ifdef SLATE_ENV
    if (env().has_range)
        sm_low = env().lo, sm_high = env().hi;
    if (env().iters)
        iters = env().iters;
#endif
    if (iters == 0u)
        iters = auto_iters(total, all);
    // Blocks land on SMs where the hardware puts them, and those outside
    // the range exit at once: with a partial range launch the whole wave, or
    // the few workers a small grid needs might all land outside it.
    unsigned long long workers = all;
    const unsigned long long tasks = (total + iters - 1) / iters;
    const bool full_range = sm_low == 0u && sm_high >= (unsigned int)(ds.sms - 1);
    if (full_range && workers > tasks)
        workers = tasks;
    // The next slot; wait for its previous launch if it is still running.
    // (A launch that never uses the queue leaves its slot untouched.)
    // Static tasks need every worker to run: only on all SMs (a worker
    // outside a partial range exits at once), and not when a test retreats.
    bool static_first = full_range;
#ifdef SLATE_TEST_HOOKS
    if (std::getenv("SLATE_RETREAT"))
        static_first = false;
#endif
    const bool queue = !static_first;
    int slot = 0;
    if (queue) {
        slot = (int)(ds.next_slot++ % kPoolSlots);
        if (ds.recorded[slot] && cudaEventQuery(ds.events[slot]) != cudaSuccess)
            cudaEventSynchronize(ds.events[slot]);
    }
    p->ctl = ds.ctls + slot;
    p->cfg.total = total;
    p->cfg.grid_x = grid.x;
    p->cfg.grid_y = grid.y;
    p->cfg.grid_z = grid.z;
    p->cfg.iters = iters;
    p->cfg.sm_low = sm_low;
    p->cfg.sm_high = sm_high;
    // A drop-in launch on all SMs is never resized: its workers stride over
    // the tasks and never touch the control block. Otherwise they take tasks
    // from the queue, and the last to exit zeroes the control block.
    p->cfg.flags = static_first ? (SLATE_FLAG_STATIC | SLATE_FLAG_ALL_SMS) : SLATE_FLAG_RESET;
    p->queue = queue;
    p->cfg.workers = (unsigned int)workers;
    p->workers = (unsigned int)workers;
    p->device = device;
    p->slot = slot;
    p->stream = stream;
    return true;
}

// finish records the slot's event behind a launch that uses the queue.
static void finish(const plan& p)
{
    if (!p.queue)
        return;
    state& st = global_state();
    std::lock_guard<std::mutex> lock(st.mu);
    device_state& ds = st.dev[p.device];
    if (cudaEventRecord(ds.events[p.slot], p.stream) == cudaSuccess)
        ds.recorded[p.slot] = true;
}

#ifdef SLATE_TEST_HOOKS
// Test hooks: count executions per logical block, and retreat mid-run and
// relaunch on another SM range. Compiled in only with -DSLATE_TEST_HOOKS.
template <typename Launch>
static void run_hooked(plan p, Launch launch)
{
    const bool log = std::getenv("SLATE_LOG") != 0;
    const bool count = std::getenv("SLATE_COUNT") != 0;
    unsigned int rlo = 0, rhi = 0;
    const bool retreat = env_range("SLATE_RETREAT", &rlo, &rhi);
    unsigned int* counts = 0;
    if (count || retreat)
        cudaStreamSynchronize(p.stream);
    if (count) {
        cudaMalloc((void**)&counts, sizeof(unsigned int) * p.cfg.total);
        cudaMemset(counts, 0, sizeof(unsigned int) * p.cfg.total);
        cudaMemcpy(&p.ctl->counts, &counts, sizeof(counts), cudaMemcpyHostToDevice);
    }
    if (log)
        std::fprintf(stderr, "slate: launch total=%llu workers=%u iters=%u sms=[%u,%u]\n", p.cfg.total, p.workers,
                     p.cfg.iters, p.cfg.sm_low, p.cfg.sm_high);
    if (!retreat) {
        launch(p.ctl, p.cfg, p.workers);
    } else {
        // First launch keeps its progress (no reset); a high-priority
        // non-blocking stream copies the retreat flag from pinned host
        // memory (a copy needs no SM, unlike a memset kernel).
        slate_cfg first = p.cfg;
        first.flags &= ~SLATE_FLAG_RESET;
        launch(p.ctl, first, p.workers);
        int lo = 0, hi = 0;
        cudaDeviceGetStreamPriorityRange(&lo, &hi);
        cudaStream_t ctl_stream;
        cudaStreamCreateWithPriority(&ctl_stream, cudaStreamNonBlocking, hi);
        unsigned int* one = 0;
        cudaMallocHost((void**)&one, sizeof(unsigned int));
        *one = 1u;
        const char* d = std::getenv("SLATE_RETREAT_DELAY_US");
        std::this_thread::sleep_for(std::chrono::microseconds(d ? std::atoi(d) : 20));
        cudaMemcpyAsync(&p.ctl->retreat, one, sizeof(unsigned int), cudaMemcpyHostToDevice, ctl_stream);
        cudaStreamSynchronize(ctl_stream);
        cudaStreamSynchronize(p.stream);
        unsigned long long next = 0;
        cudaMemcpy(&next, &p.ctl->next, sizeof(next), cudaMemcpyDeviceToHost);
        const unsigned int zero = 0u;
        cudaMemcpy(&p.ctl->retreat, &zero, sizeof(zero), cudaMemcpyHostToDevice);
        if (log)
            std::fprintf(stderr, "slate: retreat after %llu of %llu logical blocks; relaunch on sms=[%u,%u]\n",
                         next < p.cfg.total ? next : p.cfg.total, p.cfg.total, rlo, rhi);
        slate_cfg second = p.cfg;
        second.sm_low = rlo;
        second.sm_high = rhi;
        launch(p.ctl, second, p.workers);
        cudaFreeHost(one);
        cudaStreamDestroy(ctl_stream);
    }
    if (count) {
        cudaStreamSynchronize(p.stream);
        std::vector<unsigned int> h(p.cfg.total);
        cudaMemcpy(h.data(), counts, sizeof(unsigned int) * p.cfg.total, cudaMemcpyDeviceToHost);
        unsigned long long bad = 0, first_bad = 0;
        for (unsigned long long i = 0; i < p.cfg.total; ++i)
            if (h[i] != 1u && bad++ == 0)
                first_bad = i;
        if (bad) {
            std::fprintf(stderr, "slate: FAIL %llu of %llu logical blocks ran a wrong number of times (block %llu ran %u times)\n",
                         bad, p.cfg.total, first_bad, h[first_bad]);
            std::abort();
        }
        if (log)
            std::fprintf(stderr, "slate: all %llu logical blocks ran exactly once\n", p.cfg.total);
        unsigned int* none = 0;
        cudaMemcpy(&p.ctl->counts, &none, sizeof(none), cudaMemcpyHostToDevice);
        cudaFree(counts);
    }
}
#endif

// run launches the worker(s) for a plan.
template <typename Launch>
static void run(const plan& p, Launch launch)
{
#ifdef SLATE_TEST_HOOKS
    run_hooked(p, launch);
#else
    launch(p.ctl, p.cfg, p.workers);
#endif
    finish(p);
}

} // namespace slate
#endif // __CUDACC_RTC__
#endif // SLATE_PRELUDE_H
// ---- end of slatec support --------------------------------------------------
