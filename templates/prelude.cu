// ---- slatec persistent-worker support (see docs/ABI.md) -------------------
// Injected once at the top of each transformed file; guarded so that several
// transformed files can be included into one translation unit.
#ifndef SLATE_PRELUDE_H
#define SLATE_PRELUDE_H

// SMs (by %smid) whose workers a partial-range launch ranks (docs/ABI.md).
#define SLATE_RANK_SMS 256

// One per job, in device memory, zeroed before a job's first launch.
struct __align__(8) slate_ctl {
    unsigned long long next;    // queue counter: first logical block not yet handed out
    unsigned long long done;    // logical blocks completed (with SLATE_FLAG_PROGRESS)
    unsigned int retreat;       // nonzero: take no new task, exit
    unsigned int exited;        // workers that have exited in this launch
    unsigned int* counts;       // test hooks: executions per logical block, or null
    unsigned int sm_rank[SLATE_RANK_SMS]; // partial range: the launch's workers now on each SM
    unsigned char sm_place[SLATE_RANK_SMS]; // SM s is at place sm_place[s] - 1 of the device's SM
                                            // order, or at place s where 0 (see slate_range_sm)
};

// Passed by value to every worker launch (docs/ABI.md). Logical block ids
// are 32-bit on the device (total <= SLATE_MAX_TOTAL); dividing an id by
// grid_x and a row by grid_y uses the host's magic numbers, so the worker
// never runs a division routine (which costs registers, and so occupancy).
struct __align__(8) slate_cfg {
    unsigned long long total;   // logical blocks: grid_x * grid_y * grid_z
    unsigned int grid_x, grid_y, grid_z;
    unsigned int iters;         // logical blocks per task (queue)
    unsigned int sm_low, sm_high; // inclusive SM range
    unsigned int flags;
    unsigned int workers;       // worker blocks launched
    unsigned int magic_x, shift_x; // n / grid_x == (umulhi(n, magic_x) + n) >> shift_x
    unsigned int magic_y, shift_y; // the same for grid_y
};

#define SLATE_FLAG_RESET 1u     // the last worker to exit zeroes the control block
#define SLATE_FLAG_PROGRESS 2u  // count completed logical blocks in ctl->done
#define SLATE_FLAG_ALL_SMS 4u   // the range is every SM: no %smid check
#define SLATE_FLAG_STATIC 8u    // a launch of k__slate_static: worker b runs logical blocks
                                // b, b + workers, ... without the queue (all SMs, never resized)
#define SLATE_FLAG_1D 16u       // grid_y == grid_z == 1: the id is blockIdx.x
#define SLATE_FLAG_FILL 32u     // a partial range's workers that take no task hold their SM until the
                                // launch's tasks are done (with SLATE_FLAG_PROGRESS; see slate_enter_range)
#define SLATE_STOP 0xffffffffffffffffull
#define SLATE_STOP32 0xffffffffu
// The largest grid a worker runs: ids and id + workers stay below 2^32.
#define SLATE_MAX_TOTAL 0xfff00000ull

// Register caps (slatec transform --match-regs): the blocks of T threads
// that fit an SM's 64K registers at R registers a thread, in [1, 32].
#define SLATE_FIT_BLOCKS(T, R) (65536 / ((R) * (((T) + 31) / 32 * 32)))
#define SLATE_MIN_BLOCKS(T, R) (SLATE_FIT_BLOCKS(T, R) < 1 ? 1 : SLATE_FIT_BLOCKS(T, R) > 32 ? 32 : SLATE_FIT_BLOCKS(T, R))
#define SLATE_MAX(a, b) ((a) > (b) ? (a) : (b))

// slate_udiv divides by a divisor whose magic number the host computed
// (Granlund-Montgomery, round-up variant; exact for every 32-bit n).
static __device__ __forceinline__ unsigned int slate_udiv(unsigned int n, unsigned int magic, unsigned int shift)
{
    return (unsigned int)(((unsigned long long)__umulhi(n, magic) + n) >> shift);
}

// slate_block maps a logical id to blockIdx in row-major order.
static __device__ __forceinline__ uint3 slate_block(unsigned int id, const slate_cfg& cfg)
{
    uint3 b;
    if (cfg.flags & SLATE_FLAG_1D) {
        b.x = id;
        b.y = 0u;
        b.z = 0u;
    } else {
        const unsigned int row = slate_udiv(id, cfg.magic_x, cfg.shift_x);
        b.x = id - row * cfg.grid_x;
        b.z = slate_udiv(row, cfg.magic_y, cfg.shift_y);
        b.y = row - b.z * cfg.grid_y;
    }
    return b;
}

// slate_run_block runs one logical block.
template <typename Body>
static __device__ __forceinline__ void slate_run_block(const slate_cfg& cfg, unsigned int id, Body& body,
                                                       slate_ctl* __restrict__ ctl)
{
#ifdef SLATE_TEST_HOOKS
    if ((threadIdx.x | threadIdx.y | threadIdx.z) == 0 && ctl && ctl->counts)
        atomicAdd(&ctl->counts[id], 1u);
#endif
    body(slate_block(id, cfg), dim3(cfg.grid_x, cfg.grid_y, cfg.grid_z));
}

// slate_static_loop is the worker of a launch on all SMs that is never
// resized (k__slate_static): worker b runs logical blocks b, b + workers, ...
// like a grid-stride loop, in the order the hardware would dispatch them (no
// queue, no atomics, no control block). It is a kernel of its own, apart
// from the queue worker, so that its registers and code are only its own.
// kSync adds a barrier between logical blocks, which kernels using shared
// memory, barriers or warp operations need (the next logical block reuses
// the shared memory, and lanes of two logical blocks must never meet in one
// warp operation).
// kPeel runs the first logical block outside the loop. Inside one, the
// compiler does not unroll the kernel's own loops whose trip count depends
// on blockIdx (grid-stride loops: the count is not invariant in the
// enclosing loop and costs a division to compute), and such kernels, run
// with grids of one wave, then lose their memory-level parallelism (a
// two-pass reduction ran 3.2x slower on an H100); one-wave grids run only
// the peeled copy. It costs a second copy of the body, whose instructions a
// program's first launch fetches cold: the transform peels only kernels with
// such loops (transform/peel.go).
template <bool kSync, bool kPeel, typename Body>
static __device__ __forceinline__ void slate_static_loop(slate_ctl* __restrict__ ctl, const slate_cfg& cfg, Body body)
{
    const unsigned int total = (unsigned int)cfg.total;
    unsigned int id = blockIdx.x;
    if (kPeel) {
        if (id >= total)
            return;
        slate_run_block(cfg, id, body, ctl);
        id += cfg.workers;
        if (id >= total)
            return;
        if (kSync)
            __syncthreads();
    }
    for (; id < total; id += cfg.workers) {
        slate_run_block(cfg, id, body, ctl);
        if (kSync)
            __syncthreads();
    }
}

// slate_last_out counts a worker's exit (SLATE_FLAG_RESET); the last one
// out gets 0 when tasks are left (then it runs them: see slate_worker_loop),
// else resets the control block and gets SLATE_STOP32, as do the others.
// The count is an acquire-release atomic and the reset ends with a release
// store, not __threadfence: ptxas keeps every global atomic of a kernel
// whose code holds a sequentially consistent fence as a returning ATOM, not
// a RED (a 4096-bin histogram's flush loop). Not inlined: inlined, 117 of
// the goldens' 177 queue workers needed 2 or more registers (some past an
// occupancy step), though as a call in the loop nest it makes ptxas put a
// YIELD into the body's loops (bench/RESULTS.md, twelfth session).
static __device__ __noinline__ unsigned int slate_last_out(slate_ctl* __restrict__ ctl, unsigned int total, unsigned int workers)
{
    unsigned int old;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(&ctl->exited) : "memory");
#else
    __threadfence();
    old = atomicAdd(&ctl->exited, 1u);
#endif
    if (old != workers - 1u)
        return SLATE_STOP32;
    if (*(volatile unsigned int*)&ctl->retreat == 0u && *(volatile unsigned long long*)&ctl->next < total) {
        atomicSub(&ctl->exited, 1u); // last again when it exits next
        return 0u;
    }
    ctl->next = 0ull;
    ctl->done = 0ull;
    ctl->retreat = 0u;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
    asm volatile("st.release.gpu.global.u32 [%0], 0;" ::"l"(&ctl->exited) : "memory");
#else
    ctl->exited = 0u;
    __threadfence();
#endif
    return SLATE_STOP32;
}

// slate_claim takes the next task for the block: its first logical block,
// or SLATE_STOP32 when the job retreats or has none left.
static __device__ __forceinline__ unsigned int slate_claim(slate_ctl* __restrict__ ctl, const slate_cfg& cfg,
                                                           unsigned int total)
{
    if (*(volatile const unsigned int*)&ctl->retreat != 0u)
        return SLATE_STOP32;
    const unsigned long long n = atomicAdd(&ctl->next, (unsigned long long)cfg.iters);
    return n < total ? (unsigned int)n : SLATE_STOP32;
}

// slate_claim_next is a worker's claim after its first. Where the launch
// has at most a task a worker (workers * iters >= total, the launcher's
// choice for short grids), that claim most likely finds none, and a load of
// the counter first spares it the atomic: atomics on one address take
// their turns at L2, and with 1024 workers a second claim each cost a 4 us
// launch 0.7-0.95 us, the load 0.06-0.1 us (bench/topology/claim_cost.cu,
// H100). Not ahead of every claim: with several tasks a worker the load
// adds a round trip to the claims that find one (vector_add with one
// logical block a task: 1.15x). The counter only grows while a worker runs
// (the last one out resets it), so a count at or past total means none is
// left.
static __device__ __forceinline__ unsigned int slate_claim_next(slate_ctl* __restrict__ ctl, const slate_cfg& cfg,
                                                                unsigned int total)
{
    if ((unsigned long long)cfg.workers * cfg.iters >= total &&
        *(volatile const unsigned long long*)&ctl->next >= total)
        return SLATE_STOP32;
    return slate_claim(ctl, cfg, total);
}

// slate_range_sm is the worker's SM when that SM is in the launch's range,
// else SLATE_STOP32. A range is of places in the device's SM order, which
// the host puts into the control block: the Go runtime orders the SMs GPC
// by GPC, so that a range is made of whole GPCs (kernels side by side on
// two ranges then share fewer of the GPCs' paths to L2: a triad beside a
// tiled SGEMM on the H100 slowed the SGEMM 11% on SM ids 0-39, 5% on three
// whole GPCs). A zeroed table (the drop-in launcher's) is %smid order.
static __device__ __forceinline__ unsigned int slate_range_sm(const slate_ctl* __restrict__ ctl, const slate_cfg& cfg)
{
    unsigned int smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    unsigned int place = smid;
    if (smid < SLATE_RANK_SMS) {
        const unsigned int p = ctl->sm_place[smid];
        if (p != 0u)
            place = p - 1u;
    }
    return place < cfg.sm_low || place > cfg.sm_high ? SLATE_STOP32 : smid;
}

// slate_fill_wait keeps a worker that takes no task on its SM until the
// launch's tasks are done or it retreats (SLATE_FLAG_FILL). Not inlined: it
// is off the path of every worker that works, and inlined its loop would
// cost the worker registers.
static __device__ __noinline__ void slate_fill_wait(const slate_ctl* __restrict__ ctl, unsigned int total)
{
    while (*(volatile const unsigned int*)&ctl->retreat == 0u && *(volatile const unsigned long long*)&ctl->done < total) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
        __nanosleep(2000);
#endif
    }
}

// slate_enter_range is a partial-range worker's start (its leader's): 0 to
// work, or SLATE_STOP32 to exit (at once, or with SLATE_FLAG_FILL once the
// launch's tasks are done: under MPS another process's blocks would take
// the room it leaves on an SM of the range, and a latency-bound kernel's
// few blocks then share their SMs with a compute-bound one's). Such a launch is the whole wave
// (blocks land where the hardware puts them), so with fewer tasks than the
// range has SMs several workers on one SM would take tasks while other SMs
// of the range idle: a 96-block GEMM on 131 SMs ran 2.5x slower than
// natively. Each worker takes a rank on its SM, and one whose rank times the
// range's SMs reaches the tasks left stays out: the tasks spread one per SM
// first, as the hardware spreads a native grid. Outside the range: out; on
// an SM past SLATE_RANK_SMS (not counted): in.
static __device__ __forceinline__ unsigned int slate_enter_range(slate_ctl* __restrict__ ctl, const slate_cfg& cfg,
                                                                 unsigned int total)
{
    const unsigned int smid = slate_range_sm(ctl, cfg);
    if (smid == SLATE_STOP32)
        return SLATE_STOP32;
    if (smid >= SLATE_RANK_SMS)
        return 0u;
    const unsigned int rank = atomicAdd(&ctl->sm_rank[smid], 1u);
    const unsigned long long next = *(volatile unsigned long long*)&ctl->next;
    const unsigned long long left = next >= total ? 0ull : total - next; // logical blocks
    // rank * SMs * iters >= left: no division (it would cost registers).
    if ((unsigned long long)rank * (cfg.sm_high - cfg.sm_low + 1u) * cfg.iters < left)
        return 0u;
    if (cfg.flags & SLATE_FLAG_FILL)
        slate_fill_wait(ctl, total);
    return SLATE_STOP32;
}

// slate_leave_range takes back the rank slate_enter_range took (every
// counted worker of a launch leaves once, at its very end, so the counts are
// zero again when the launch has ended).
static __device__ __forceinline__ void slate_leave_range(slate_ctl* __restrict__ ctl, const slate_cfg& cfg)
{
    const unsigned int smid = slate_range_sm(ctl, cfg);
    if (smid < SLATE_RANK_SMS)
        atomicSub(&ctl->sm_rank[smid], 1u);
}

// slate_worker_loop is the queue worker (k__slate: resizable jobs, partial
// SM ranges): it runs body(blockIdx, gridDim) for each logical block of each
// task it takes. Everything it keeps across a body is a 32-bit id and the
// slot's parity: the rest is re-read from the launch configuration (constant
// memory) or the task slot (shared memory), so the worker needs about as
// many registers as the kernel. kSync as for slate_static_loop.
//
// Two task slots: the block runs the task in one while its leader, as soon
// as its own threads are done with the task's last logical block, claims the
// next one into the other, so the claim's round trip to L2 overlaps the
// other warps' ends and one barrier per task publishes it (a claim between
// two barriers idled the whole block for it: the queue worker ran a tiled
// SGEMM 25% slower than the static one). The retreat flag is read at the
// claim, as before, so a retreat still drains after the running task.
//
// kPeel (as for slate_static_loop): with one logical block per task, the
// first task runs through a copy of the body outside every loop, so that a
// one-wave grid of a kernel whose loops depend on the block index (each
// worker runs one task) keeps those loops unrolled: a two-pass reduction's
// stats pass ran 3.4x native on the queue path without it, 1.04x static.
template <bool kSync, bool kPeel, typename Body>
static __device__ __forceinline__ void slate_worker_loop(slate_ctl* __restrict__ ctl, const slate_cfg& cfg, Body body)
{
    const unsigned int total = (unsigned int)cfg.total;
    // A slot is written by the leader only after a barrier that follows
    // every thread's last read of it; `slot` is the one the block reads now.
    __shared__ unsigned int slate_task[2];
    const bool leader = (threadIdx.x | threadIdx.y | threadIdx.z) == 0;
    unsigned int slot = 0u;
    // The range test is part of the first claim: a worker outside its range
    // (or one too many on its SM) claims nothing and goes to the exit. The
    // loops below are entered only at the top: jumps from the range test to
    // the exit and from the exit back to the claim made a loop region with
    // two entries, and the compiler kept more registers live through it
    // (ptxas -v, the goldens' queue workers: 134 of 177 need 1-6 fewer now,
    // 10 more; bench/RESULTS.md, twelfth session).
    if (leader)
        slate_task[0] = (cfg.flags & SLATE_FLAG_ALL_SMS) || slate_enter_range(ctl, cfg, total) != SLATE_STOP32
                            ? slate_claim(ctl, cfg, total)
                            : SLATE_STOP32;
    __syncthreads();
    if (kPeel && cfg.iters == 1u) {
        // The first task, through a copy of the body outside every loop
        // (run once per worker; the exit's second round does not peel).
        const unsigned int first = *(volatile unsigned int*)&slate_task[0];
        if (first != SLATE_STOP32) {
            slate_run_block(cfg, first, body, ctl);
            if (leader)
                slate_task[1] = slate_claim_next(ctl, cfg, total);
            __syncthreads();
            if (leader && (cfg.flags & SLATE_FLAG_PROGRESS))
                atomicAdd(&ctl->done, 1ull);
            slot = 1u;
        }
    }
    for (;;) {
        for (;;) {
            const unsigned int start = *(volatile unsigned int*)&slate_task[slot];
            if (start == SLATE_STOP32)
                break;
            // Only the id stays live across the body; the task's end is
            // recomputed from the slot.
            for (unsigned int id = start;;) {
                slate_run_block(cfg, id, body, ctl);
                const unsigned int s = *(volatile unsigned int*)&slate_task[slot];
                if (++id >= (total - s < cfg.iters ? total : s + cfg.iters))
                    break;
                if (kSync)
                    __syncthreads();
            }
            if (leader)
                slate_task[slot ^ 1u] = slate_claim_next(ctl, cfg, total);
            __syncthreads();
            // Counted after the barrier: every thread is done with the task.
            if (leader && (cfg.flags & SLATE_FLAG_PROGRESS)) {
                const unsigned int s = *(volatile unsigned int*)&slate_task[slot];
                atomicAdd(&ctl->done, (unsigned long long)((total - s < cfg.iters ? total : s + cfg.iters) - s));
            }
            slot ^= 1u;
        }
        if (!(cfg.flags & SLATE_FLAG_RESET))
            break;
        // The last worker of the launch to exit resets the control block;
        // but first it leaves no work behind. A launch on a partial range can
        // see every worker land outside the range and exit while other work
        // (another stream's kernel, another process's) holds the range's
        // SMs: no host waits for such a launch to relaunch it, so the last
        // worker out runs what is left, wherever it is (correct, if slow).
        // Its answer goes to the slot the block did not just read; a claim
        // then goes to the one read before that barrier.
        if (leader)
            slate_task[slot ^ 1u] = slate_last_out(ctl, total, cfg.workers);
        __syncthreads();
        if (*(volatile unsigned int*)&slate_task[slot ^ 1u] == SLATE_STOP32)
            break;
        if (leader)
            slate_task[slot] = slate_claim(ctl, cfg, total);
        __syncthreads();
    }
    if (leader && !(cfg.flags & SLATE_FLAG_ALL_SMS))
        slate_leave_range(ctl, cfg);
}

// The type `auto x = e;` gives x, for declarations the return lowering splits.
template <class T> struct slate_plain { typedef T type; };
template <class T> struct slate_plain<T&> { typedef typename slate_plain<T>::type type; };
template <class T> struct slate_plain<T&&> { typedef typename slate_plain<T>::type type; };
template <class T> struct slate_plain<const T> { typedef typename slate_plain<T>::type type; };
template <class T> struct slate_plain<volatile T> { typedef typename slate_plain<T>::type type; };
template <class T> struct slate_plain<const volatile T> { typedef typename slate_plain<T>::type type; };
// slate_zero<decltype(e)>() is a value of the type e reads: what a thread
// that returned gets instead of a read it must not make (return lowering).
template <class T> static __host__ __device__ __forceinline__ typename slate_plain<T>::type slate_zero()
{
    typename slate_plain<T>::type v{};
    return v;
}

#ifndef __CUDACC_RTC__
// ---- host side: drop-in launch helpers -------------------------------------
// What a drop-in launch costs the host (docs/ABI.md, "Host cost"): with
// SLATE_MODE=native, or auto with nothing asking to share, one branch on a
// value read once; a persistent launch on all SMs adds cudaGetDevice and a
// mutex-guarded cache look-up to the worker's launch. Per-kernel setup (the
// worker's occupancy, which loads it) happens once per kernel, block shape
// and shared size, or earlier where the program queries or configures the
// kernel (the rewritten cudaFuncSetAttribute, cudaFuncGetAttributes and
// cudaOccupancy* calls). Only queue launches (a partial SM range, or a task
// size that $SLATE_ITERS fixes) take a control block and record an event.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstddef>
#include <cstring>
#include <cmath>
#include <atomic>
#include <mutex>
#include <vector>
// @@SLATE_SERVE_CLIENT_H@@
// @@SLATE_NATIVE_AHEAD_H@@
// @@SLATE_PRIORITY_STREAM_H@@
// @@SLATE_FIRST_USE_H@@
// @@SLATE_SM_ORDER_H@@
// SLATE_TEST_HOOKS: count executions per logical block, retreat and
// relaunch mid-run (tests).
#ifdef SLATE_TEST_HOOKS
#include <chrono>
#include <thread>
#endif

namespace slate {

// Control blocks for queue launches. Each launch takes a slot, so launches
// on different streams never share a queue counter; a slot is reused only
// after the event recorded behind its last launch completed. The worker's
// self-reset (SLATE_FLAG_RESET) leaves a slot zeroed.
enum { kPoolSlots = 256, kMaxDevices = 64 };

// quiet_error drops the error a helper's own call left, unless one was pending.
static void quiet_error(cudaError_t before)
{
    if (before == cudaSuccess)
        cudaGetLastError();
}

// launch_mode is $SLATE_MODE: auto (the default) launches the worker only
// when something asks this process to share the GPU ($SLATE_SM_RANGE);
// persistent always launches the worker; native never does.
enum launch_mode { kModeAuto, kModePersistent, kModeNative };

static bool env_range(const char* name, unsigned int* lo, unsigned int* hi)
{
    const char* v = std::getenv(name);
    return v && std::sscanf(v, "%u:%u", lo, hi) == 2 && *lo <= *hi;
}

// The environment's policy, range and task size, read once per process.
struct env_config {
    launch_mode mode;
    bool has_range;
    unsigned int lo, hi, iters;
    bool gpc_order; // $SLATE_SM_ORDER=gpc: ranges are of places GPC by GPC (gpc_places)
    slate_priority_v1::level priority; // $SLATE_PRIORITY=high|low: every launch at that stream priority
    unsigned int range_grid; // $SLATE_RANGE_GRID=N: a partial-range launch has at most N workers (0: the wave)
    env_config()
        : mode(kModeAuto), has_range(false), lo(0), hi(0), iters(0), gpc_order(false),
          priority(slate_priority_v1::kDefault), range_grid(0)
    {
        if (const char* v = std::getenv("SLATE_RANGE_GRID"))
            range_grid = (unsigned int)std::strtoul(v, 0, 10);
        if (const char* v = std::getenv("SLATE_PRIORITY")) {
            if (std::strcmp(v, "high") == 0)
                priority = slate_priority_v1::kHigh;
            else if (std::strcmp(v, "low") == 0)
                priority = slate_priority_v1::kLow;
            else if (*v && std::strcmp(v, "default") != 0)
                std::fprintf(stderr, "slatec: ignoring SLATE_PRIORITY=%s (want high, low or default)\n", v);
        }
        if (const char* o = std::getenv("SLATE_SM_ORDER")) {
            if (std::strcmp(o, "gpc") == 0)
                gpc_order = true;
            else if (*o && std::strcmp(o, "id") != 0)
                std::fprintf(stderr, "slatec: ignoring SLATE_SM_ORDER=%s (want id or gpc)\n", o);
        }
        if (const char* m = std::getenv("SLATE_MODE")) {
            if (std::strcmp(m, "persistent") == 0)
                mode = kModePersistent;
            else if (std::strcmp(m, "native") == 0)
                mode = kModeNative;
            else if (*m && std::strcmp(m, "auto") != 0)
                std::fprintf(stderr, "slatec: ignoring SLATE_MODE=%s (want auto, persistent or native)\n", m);
        }
        has_range = env_range("SLATE_SM_RANGE", &lo, &hi);
        // Under MPS a range is a count from 0 (slate_serve::range_mode).
        if (has_range && lo > 0 && slate_serve::static_ranges_count()) {
            if (std::getenv("SLATE_LOG"))
                std::fprintf(stderr, "slate: SLATE_SM_RANGE=%u:%u binds as the SM count 0:%u (MPS numbers each launch's SMs)\n", lo, hi, hi - lo);
            hi -= lo;
            lo = 0;
        }
        if (const char* v = std::getenv("SLATE_ITERS"))
            iters = (unsigned int)std::strtoul(v, 0, 10);
    }
};

static const env_config& env()
{
    static env_config c;
    return c;
}

// persistent reports whether launches take the worker at all.
static bool persistent()
{
    const env_config& e = env();
    return e.mode == kModePersistent || (e.mode == kModeAuto && e.has_range);
}

// servable reports whether slatec serve may serve this process: the auto
// policy, no range of its own, and a daemon's socket there (decide_policy
// then registers it at the first launch).
static bool servable()
{
    const env_config& e = env();
    return e.mode == kModeAuto && !e.has_range && slate_serve::socket_present(slate_serve::socket_path());
}

// static_launches reports whether the environment leaves persistent
// launches on a device of sms SMs static (no task size, no range short of
// every SM): they take k__slate_static, else the queue worker. make_plan
// decides so for unserved launches; prepare and preload load that worker.
static bool static_launches(int sms)
{
    const env_config& e = env();
    return e.iters == 0 && (!e.has_range || (e.lo == 0u && e.hi >= (unsigned int)(sms - 1)));
}

// The launch policy, decided once per translation unit at its first
// drop-in launch: native, persistent (the environment), or served by
// `slatec serve` (SLATE_MODE=auto, no SLATE_SM_RANGE, and a daemon answered
// the process's one connection attempt: docs/SERVE.md).
enum { kPolicyNative, kPolicyPersistent, kPolicyServed };

// served_device is the device the daemon serves (the one current at the
// first drop-in launch); launches on other devices run natively.
static int& served_device()
{
    static int d = -1;
    return d;
}

// native_drain waits for the native launches issued so far (those of an
// "alone" grant, on the whole GPU): the serve client runs it on a helper
// thread when another process arrives, and acknowledges the new grant after.
static void native_drain()
{
    if (cudaSetDevice(served_device()) == cudaSuccess)
        cudaDeviceSynchronize();
    cudaGetLastError(); // the helper thread's own
}

// The native launches of a served process that shares the GPU are followed
// (the serve client's native_launched): an event recorded after each on its
// stream, queried by the client's listener, so that its load notes say
// whether they are still running (a process whose launches wait behind
// another's is busy, not idle); while it shares, with $SLATE_SERVE_NATIVE_US
// set, they are held to that much GPU work queued ahead (native_ahead.h), so
// that a grant change's drain is short. Not on streams being captured into a graph.
static slate_native_ahead_v1::ring& native_ring()
{
    // (Timed only for a budget: untimed, a launch costs one event record.)
    static slate_native_ahead_v1::ring* r = new slate_native_ahead_v1::ring(slate_serve::native_budget_us() > 0); // never destroyed: threads may launch at exit
    return *r;
}

static bool native_mark(void* stream, bool hold)
{
    const cudaError_t before = cudaPeekAtLastError();
    int device = -1;
    bool held = false;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaGetDevice(&device) == cudaSuccess && device == served_device() &&
        cudaStreamIsCapturing((cudaStream_t)stream, &capture) == cudaSuccess && capture == cudaStreamCaptureStatusNone)
        held = native_ring().record((cudaStream_t)stream, hold ? slate_serve::native_budget_us() : 0.0);
    quiet_error(before);
    return held;
}

static bool native_pending()
{
    if (!native_ring().any())
        return false;
    if (cudaSetDevice(served_device()) != cudaSuccess) {
        cudaGetLastError(); // the listener thread's own
        return false;
    }
    const bool pending = native_ring().pending();
    cudaGetLastError();
    return pending;
}

static int decide_policy(const char* first_kernel)
{
    if (persistent())
        return kPolicyPersistent;
    const env_config& e = env();
    if (e.mode != kModeAuto || e.has_range)
        return kPolicyNative;
    if (!slate_serve::socket_present(slate_serve::socket_path())) {
        if (std::getenv("SLATE_LOG"))
            std::fprintf(stderr, "slate: serve: no daemon at %s\n", slate_serve::socket_path().c_str());
        return kPolicyNative;
    }
    const cudaError_t before = cudaPeekAtLastError();
    int device = 0, sms = 0;
    const bool ok = cudaGetDevice(&device) == cudaSuccess &&
                    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess && sms > 0;
    quiet_error(before);
    if (!ok)
        return kPolicyNative;
    served_device() = device;
    slate_serve::client* c = slate_serve::process_client(device, sms, first_kernel);
    if (!c)
        return kPolicyNative;
    c->set_native_drain(&native_drain);
    c->set_native_marks(&native_mark, &native_pending);
    return kPolicyServed;
}

// launch_policy is decided at the first launch (kernel: its name, which
// registration tells the daemon); later calls return it.
static int launch_policy(const char* kernel = 0)
{
    static const int p = decide_policy(kernel);
    return p;
}

// after_native follows a native launch of a served process (native_mark);
// otherwise it costs the policy's load and a branch.
static inline void after_native(cudaStream_t stream)
{
    if (launch_policy() == kPolicyServed)
        slate_serve::process_client(0, 0)->native_launched((void*)stream);
}

// priority_enter and priority_leave bracket a launch: with $SLATE_PRIORITY
// set it goes to a shadow of its stream at that priority, ordered with the
// stream by events (priority_stream.h); otherwise they cost a branch.
static inline cudaStream_t priority_enter(cudaStream_t stream)
{
    const slate_priority_v1::level want = env().priority;
    if (want == slate_priority_v1::kDefault)
        return stream;
    const cudaError_t before = cudaPeekAtLastError();
    const cudaStream_t s = slate_priority_v1::mine().enter(stream, want);
    quiet_error(before);
    return s;
}

static inline void priority_leave(cudaStream_t stream, cudaStream_t launched)
{
    if (launched == stream)
        return;
    const cudaError_t before = cudaPeekAtLastError();
    slate_priority_v1::mine().leave(stream, launched);
    quiet_error(before);
}

struct device_state {
    int sms;      // 0 until first asked
    bool pool;    // the control-block pool exists
    slate_ctl* ctls;
    cudaEvent_t events[kPoolSlots];
    cudaEvent_t starts[kPoolSlots], ends[kPoolSlots]; // around a timed launch (block_time), made at first use
    bool recorded[kPoolSlots];
    unsigned long long slot_uses[kPoolSlots]; // launches that took the slot
    unsigned int next_slot;
    // Served launches (slatec serve): a high-priority stream for the retreat
    // word's copies, and pinned host words: [0] one, [1..4] zeros, then one
    // read-back of `next` per pool slot.
    bool served;
    cudaStream_t serve_stream;
    unsigned long long* serve_host;
    // Queued served launches not yet seen ended, oldest first (a ring):
    // their pool slot, its use count, their expected time (queued_wait).
    enum { kQueued = 64 };
    int queued_slot[kQueued];
    unsigned long long queued_use[kQueued];
    double queued_expect[kQueued];
    unsigned int queued_head, queued_count;
    double queued_us; // the sum of their expected times
};

struct occupancy_entry {
    int device, threads;
    size_t shmem;
    bool stat; // of the static worker, else of the queue worker
    int blocks_per_sm;
};

// block_time is the measured time of one logical block of a kernel's queue
// launches with one grid, block and shared size (task_iters sizes its tasks
// by it): events around a launch, read at a later launch of the kernel once
// they completed (never waited for). A pending measurement names its slot
// and the slot's use count, so a slot reused meanwhile drops it.
struct block_time {
    unsigned long long total;
    int threads;
    size_t shmem;
    double ns; // 0: not measured
    unsigned int samples;
    unsigned int launches; // queue launches of this shape; every 32nd is timed once settled
    int slot;              // a timed launch not yet read, or -1
    unsigned long long use;
    unsigned long long busy; // workers that ran it (the range's, or the tasks)
};

// kernel_state is what the launcher of one kernel (one instantiation of a
// template kernel) keeps: its workers' occupancy per device, block size and
// dynamic shared size, and the dynamic shared memory limits set on them.
struct kernel_state {
    const char* name;          // the kernel's name, announced to slatec serve
    const void* worker;        // k__slate: the queue worker
    const void* worker_static; // k__slate_static: static launches on all SMs
    const void* native;
    std::vector<occupancy_entry> occupancy;
    int dyn_limit[2][kMaxDevices]; // [static] the workers' cudaFuncAttributeMaxDynamicSharedMemorySize, 0: not set
    std::atomic<unsigned int> generation; // bumped when the occupancy entries are dropped
    block_time bt[kMaxDevices];
};

// last_static is a thread's last static launch: a launch of the same kernel,
// device, block size and shared size needs neither the mutex nor a look-up.
struct last_static {
    const kernel_state* k;
    int device, threads;
    size_t shmem;
    unsigned int generation;
    unsigned long long all; // occupancy x SM count
};

struct state {
    std::mutex mu;
    device_state dev[kMaxDevices];
    std::vector<kernel_state*> kernels;
};

static state& global_state()
{
    static state s;
    return s;
}

// kernel_for returns the state of a worker; launchers keep the pointer in a
// function-local static, so the look-up runs once per launcher.
static kernel_state* kernel_for(const void* worker, const void* worker_static, const void* native,
                                const char* name = 0)
{
    state& st = global_state();
    std::lock_guard<std::mutex> lock(st.mu);
    for (size_t i = 0; i < st.kernels.size(); ++i)
        if (st.kernels[i]->worker == worker) {
            if (name)
                st.kernels[i]->name = name;
            return st.kernels[i];
        }
    kernel_state* k = new kernel_state(); // lives as long as the process
    for (int d = 0; d < kMaxDevices; ++d)
        k->bt[d].slot = -1;
    k->name = name;
    k->worker = worker;
    k->worker_static = worker_static;
    k->native = native;
    st.kernels.push_back(k);
    return k;
}

static void quiet(cudaError_t before) { quiet_error(before); }

// sms_locked returns the device's SM count (st.mu held).
static int sms_locked(device_state& ds, int device)
{
    if (ds.sms == 0 && cudaDeviceGetAttribute(&ds.sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
        cudaGetLastError();
        ds.sms = 0;
    }
    return ds.sms;
}

// occupancy_locked returns the worker's blocks per SM for a block size and
// dynamic shared size (st.mu held). The first query of a kernel loads the
// worker. A dynamic shared size above 48 KB needs the opt-in the program
// gave the native kernel: the worker gets the same limit.
static int occupancy_locked(kernel_state& k, int device, int threads, size_t shmem, bool stat)
{
    for (size_t i = 0; i < k.occupancy.size(); ++i) {
        const occupancy_entry& e = k.occupancy[i];
        if (e.device == device && e.threads == threads && e.shmem == shmem && e.stat == stat)
            return e.blocks_per_sm;
    }
    const void* worker = stat ? k.worker_static : k.worker;
    const cudaError_t before = cudaPeekAtLastError();
    if (shmem > 48u * 1024u && (size_t)k.dyn_limit[stat][device] < shmem) {
        cudaFuncAttributes attr;
        if (cudaFuncGetAttributes(&attr, k.native) == cudaSuccess && (size_t)attr.maxDynamicSharedSizeBytes >= shmem &&
            cudaFuncSetAttribute(worker, cudaFuncAttributeMaxDynamicSharedMemorySize, attr.maxDynamicSharedSizeBytes) == cudaSuccess) {
            k.dyn_limit[stat][device] = attr.maxDynamicSharedSizeBytes;
            cudaFuncSetAttribute(worker, cudaFuncAttributePreferredSharedMemoryCarveout, attr.preferredShmemCarveout);
        }
    }
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, worker, threads, shmem) != cudaSuccess)
        per_sm = 0;
    quiet(before);
    occupancy_entry e = {device, threads, shmem, stat, per_sm};
    k.occupancy.push_back(e);
    return per_sm;
}

// ---- the SM order of ranges ($SLATE_SM_ORDER) --------------------------------
// A range (SLATE_SM_RANGE, a slatec serve grant) is of places in the
// device's SM order, which the control block's sm_place holds (zero: %smid
// order, the default of the drop-in launcher). %smid numbers interleave the
// GPCs two SMs at a time, so a range of ids spans every GPC and kernels on
// two ranges share each GPC's path to L2; SLATE_SM_ORDER=gpc orders the SMs
// GPC by GPC, as the Go runtime does by default (runtime/smorder.go, and
// the same discovery: clusters of 8 blocks run in one GPC). Every process
// sharing a GPU must use the same order (the daemon's ranges mean places).

namespace {
// slate_smid_probe records the SM of each block (thread 0), then spins so
// that the blocks of a launch stay resident together.
__global__ void slate_smid_probe(unsigned int* out, long long spin)
{
    if (threadIdx.x == 0) {
        unsigned int s;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
        out[blockIdx.x] = s;
        const long long t0 = clock64();
        while (clock64() - t0 < spin) {
        }
    }
}
} // namespace

// gpc_places fills place (sm_place of the control blocks) with the GPC order
// of the current device's SMs: SMs seen in one cluster are one group
// (transitively), groups by their lowest SM, each ascending, SMs never seen
// last. False (place untouched) where it cannot: before compute capability
// 9.0 (no clusters), a runtime before CUDA 12, more SMs than a byte holds,
// or a probe that fails; the caller keeps %smid order then.
static bool gpc_places(int device, int sms, unsigned char place[SLATE_RANK_SMS])
{
#if CUDART_VERSION >= 12000
    int major = 0;
    if (sms <= 0 || sms > 255 || sms > SLATE_RANK_SMS ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess || major < 9)
        return false;
    const cudaError_t before = cudaPeekAtLastError();
    const int cluster = 8, blocks = (sms * 8 + cluster - 1) / cluster * cluster;
    unsigned int* out = 0;
    if (cudaMalloc((void**)&out, sizeof(unsigned int) * blocks) != cudaSuccess) {
        quiet_error(before);
        return false;
    }
    std::vector<unsigned int> host(blocks), all;
    bool ok = true;
    for (int rep = 0; rep < 6 && ok; ++rep) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(32);
        cudaLaunchAttribute attr;
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = cluster;
        attr.val.clusterDim.y = 1;
        attr.val.clusterDim.z = 1;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        long long spin = 2000 + 1000 * rep;
        ok = cudaLaunchKernelEx(&cfg, slate_smid_probe, out, spin) == cudaSuccess &&
             cudaMemcpy(host.data(), out, sizeof(unsigned int) * blocks, cudaMemcpyDeviceToHost) == cudaSuccess;
        all.insert(all.end(), host.begin(), host.end());
    }
    cudaFree(out);
    quiet_error(before);
    if (!ok)
        return false;
    const std::vector<int> order = slate_sm_order::order_of(sms, all.data(), (long long)all.size(), cluster);
    if ((int)order.size() != sms)
        return false;
    slate_sm_order::place_table(order, place, SLATE_RANK_SMS);
    return true;
#else
    (void)device;
    (void)sms;
    (void)place;
    return false;
#endif
}

// pool_locked makes the device's control-block pool (st.mu held).
static bool pool_locked(device_state& ds)
{
    if (ds.pool)
        return true;
    // The zeroing must be done before a launch on any stream reads a slot:
    // cudaMemset runs on the default stream, which does not order with a
    // non-blocking stream's launch (a worker could read a slot not yet
    // zeroed), so wait for it here, once per device.
    if (cudaMalloc((void**)&ds.ctls, sizeof(slate_ctl) * kPoolSlots) != cudaSuccess ||
        cudaMemset(ds.ctls, 0, sizeof(slate_ctl) * kPoolSlots) != cudaSuccess)
        return false;
    // A process slatec serve may serve keeps %smid order: under MPS each
    // launch numbers its SMs itself and a grant is a count from 0
    // (serve_client.h, range_mode), which a GPC order would scatter; without
    // MPS processes time-slice, and an order buys nothing between them.
    const bool gpc = env().gpc_order, served = gpc && servable();
    if (served && std::getenv("SLATE_LOG"))
        std::fprintf(stderr, "slate: SM order: %%smid (SLATE_SM_ORDER=gpc does not apply to a served process)\n");
    if (gpc && !served) {
        // Every slot's sm_place, once; a failed discovery keeps %smid order.
        int device = 0;
        unsigned char place[SLATE_RANK_SMS];
        if (cudaGetDevice(&device) == cudaSuccess && gpc_places(device, sms_locked(ds, device), place)) {
            std::vector<unsigned char> all((size_t)kPoolSlots * SLATE_RANK_SMS);
            for (int i = 0; i < kPoolSlots; ++i)
                std::memcpy(&all[(size_t)i * SLATE_RANK_SMS], place, SLATE_RANK_SMS);
            if (cudaMemcpy2D((char*)ds.ctls + offsetof(slate_ctl, sm_place), sizeof(slate_ctl), all.data(), SLATE_RANK_SMS,
                             SLATE_RANK_SMS, kPoolSlots, cudaMemcpyHostToDevice) != cudaSuccess)
                return false;
            if (std::getenv("SLATE_LOG"))
                std::fprintf(stderr, "slate: SM order: gpc (from thread-block clusters)\n");
        } else if (std::getenv("SLATE_LOG")) {
            std::fprintf(stderr, "slate: SM order: id (SLATE_SM_ORDER=gpc, but the GPCs could not be found on this device)\n");
        }
    }
    if (cudaStreamSynchronize(0) != cudaSuccess)
        return false;
    for (int i = 0; i < kPoolSlots; ++i)
        if (cudaEventCreateWithFlags(&ds.events[i], cudaEventDisableTiming) != cudaSuccess)
            return false;
    ds.pool = true;
    return true;
}

// serve_locked makes the device's resources for served launches (st.mu
// held): the control-block pool, a high-priority non-blocking stream (its
// copies need no SM, and do not wait for the program's streams) and pinned
// host words.
static bool serve_locked(device_state& ds)
{
    if (ds.served)
        return true;
    if (!pool_locked(ds))
        return false;
    int lo = 0, hi = 0;
    if (cudaDeviceGetStreamPriorityRange(&lo, &hi) != cudaSuccess ||
        cudaStreamCreateWithPriority(&ds.serve_stream, cudaStreamNonBlocking, hi) != cudaSuccess)
        return false;
    if (cudaMallocHost((void**)&ds.serve_host, sizeof(unsigned long long) * (5 + kPoolSlots)) != cudaSuccess) {
        cudaStreamDestroy(ds.serve_stream);
        return false;
    }
    std::memset(ds.serve_host, 0, sizeof(unsigned long long) * (5 + kPoolSlots));
    *(unsigned int*)ds.serve_host = 1u;
    ds.served = true;
    return true;
}

// auto_iters: logical blocks per task of a queue launch; the same rule as
// the Go runtime's AutoIters (keep them in step). Per-task overhead (one
// atomic, two barriers) wants tasks of at least ~4 logical blocks (a light
// triad ran 1.79x slower with 1 per task, 1.01x with 4); the tail wants
// each worker to take ~64 tasks (an H100 triad: 1.114 ms at 31 per task,
// 1.080 at 4); a resize waits for the running task, so at most 32; a small
// grid of heavy blocks still gives each worker ~4 tasks. With per =
// total/workers: iters = per/64, raised to min(4, per/4), in [1, 32].
static unsigned int auto_iters(unsigned long long total, unsigned long long workers)
{
    if (workers == 0 || total <= workers)
        return 1u;
    const unsigned long long per = total / workers;
    unsigned long long it = per / 64;
    const unsigned long long floor = per / 4 < 4 ? per / 4 : 4;
    if (it < floor)
        it = floor;
    if (it > 32)
        it = 32;
    return (unsigned int)(it < 1 ? 1 : it);
}

// task_iters: the task size from a measured block time; the same rule as
// the Go runtime's TaskIters (keep them in step; runtime/iters.go says why):
// a task lasts at least workers x 16 ns (the queue's one address takes an
// atomic about every 2 ns) and never less than workers x 8 ns, holds at most
// 1/50 of a worker's blocks (the tail) and 200 µs (a retreat waits for it);
// where even the hard bound leaves a worker two tasks or fewer, each takes
// one task of its whole share. block_ns <= 0: auto_iters.
static unsigned int task_iters(unsigned long long total, unsigned long long workers, double block_ns)
{
    if (!(block_ns > 0.0) || block_ns > 1e300)
        return auto_iters(total, workers);
    if (workers == 0 || total <= workers)
        return 1u;
    const double w = (double)workers, per = (double)total / w;
    const double soft = std::ceil(w * 16.0 / block_ns), hard = std::ceil(w * 8.0 / block_ns);
    const double hi = std::fmin(std::floor(per / 50.0), std::floor(200000.0 / block_ns));
    double it = std::fmax(std::fmax(std::fmin(soft, hi), hard), 1.0);
    if (it > 1.0 && it >= per / 2.0)
        it = std::ceil(per);
    return (unsigned int)std::fmin(it, 32.0);
}

// block_time_locked reads a kernel's pending measurement on a device if its
// events completed (st.mu held) and returns its block time for this shape
// (0: none yet); sample says whether this launch should be timed.
static double block_time_locked(device_state& ds, block_time& b, unsigned long long total, int threads, size_t shmem,
                                bool* sample)
{
    if (b.slot >= 0) {
        const int s = b.slot;
        if (ds.slot_uses[s] != b.use) {
            b.slot = -1; // the slot went to another launch first
        } else if (cudaEventQuery(ds.ends[s]) == cudaSuccess) {
            float ms = 0.f;
            if (cudaEventElapsedTime(&ms, ds.starts[s], ds.ends[s]) == cudaSuccess && ms > 0.f && b.total > 0) {
                const double ns = (double)ms * 1e6 * (double)b.busy / (double)b.total;
                b.ns = b.samples ? (b.ns + ns) / 2.0 : ns; // one disturbed run moves it half way
                ++b.samples;
            }
            cudaGetLastError();
            b.slot = -1;
        } else {
            cudaGetLastError(); // not ready: read it at a later launch
        }
    }
    if (b.total != total || b.threads != threads || b.shmem != shmem) {
        // Another shape: start over (programs relaunch one shape; a grid of
        // another size usually means another amount of work per block).
        b.total = total;
        b.threads = threads;
        b.shmem = shmem;
        b.ns = 0.0;
        b.samples = 0u;
        b.launches = 0u;
        b.slot = -1;
    }
    *sample = b.slot < 0 && (b.samples < 4u || (++b.launches & 31u) == 0u);
    return b.ns;
}

// magic sets m and s so that n / d == (umulhi(n, m) + n) >> s for every
// 32-bit n (d >= 1): s = ceil(log2 d), m = floor(2^32 (2^s - d) / d) + 1.
static void magic(unsigned int d, unsigned int* m, unsigned int* s)
{
    unsigned int l = 0;
    while ((1ull << l) < d)
        ++l;
    *m = (unsigned int)((((1ull << 32) * ((1ull << l) - d)) / d) + 1ull);
    *s = l;
}

// set_grid sets the grid, SLATE_FLAG_1D and the division constants.
static void set_grid(slate_cfg* c, dim3 grid)
{
    c->grid_x = grid.x;
    c->grid_y = grid.y;
    c->grid_z = grid.z;
    if (grid.y == 1u && grid.z == 1u) {
        c->flags |= SLATE_FLAG_1D;
        c->magic_x = c->shift_x = c->magic_y = c->shift_y = 0u; // unused
    } else {
        magic(grid.x, &c->magic_x, &c->shift_x);
        magic(grid.y, &c->magic_y, &c->shift_y);
    }
}

struct plan {
    slate_ctl* ctl;
    slate_cfg cfg;
    unsigned int workers;
    int device, slot;
    bool queue; // the launch takes tasks from the control block's queue
    bool served; // slatec serve gives the range (run_served)
    bool timed; // the slot's start event goes before the launch (block_time)
    cudaStream_t stream;
    kernel_state* k; // served launches: the kernel's name, grid, block
    dim3 grid, block;
    size_t shmem;
    int sms;
    double block_ns; // queue launches: the kernel's measured time a logical block (0: not known yet)
};

#ifndef SLATE_TEST_HOOKS
// static_cfg fills a static launch on all SMs (fast path of make_plan).
static void static_cfg(plan* p, dim3 grid, unsigned long long total, unsigned long long workers)
{
    p->cfg.flags = SLATE_FLAG_STATIC | SLATE_FLAG_ALL_SMS;
    set_grid(&p->cfg, grid);
    p->cfg.total = total;
    p->cfg.iters = 1u;
    p->cfg.sm_low = 0u;
    p->cfg.sm_high = 0xffffffffu;
    p->cfg.workers = (unsigned int)workers;
    p->workers = (unsigned int)workers;
    p->queue = false;
    p->served = false;
    p->timed = false;
    p->block_ns = 0.0;
}
#endif

// make_plan prepares a worker launch. It returns false when the launch
// should be made natively instead: by the launch policy, for an empty grid
// or a configuration the worker cannot run with (the native launch then
// reports the same error a program would see), or for a queue launch on a
// stream being captured into a graph.
static bool make_plan(plan* p, kernel_state& k, dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
                      unsigned int iters)
{
    // The unserved steady state costs this branch on a value decided once.
    const int policy = launch_policy(k.name);
    if (policy == kPolicyNative)
        return false;
    const bool served = policy == kPolicyServed;
    // Alone on the GPU (the grant says so), or the daemon gone: native, with
    // no message and no wait (three atomic loads and a relaxed count); the
    // kernel's name goes into the load notes, from which the daemon plans.
    if (served && slate_serve::process_client(0, 0)->take_native(k.name))
        return false;
    const env_config& e = env();
    const unsigned long long total = (unsigned long long)grid.x * grid.y * grid.z;
    const int threads = (int)(block.x * block.y * block.z);
    if (total == 0 || total > SLATE_MAX_TOTAL || threads <= 0)
        return false;
    // Sharing, a grid no larger than the range's SMs runs natively (the
    // serve client's take_small says why).
    if (served && slate_serve::process_client(0, 0)->take_small(total, k.name))
        return false;
    // A task size from the environment asks for the queue (tests, benchmarks);
    // a served launch always takes it (it may be resized).
    bool queue = e.iters != 0 || served;
#ifdef SLATE_TEST_HOOKS
    if (std::getenv("SLATE_RETREAT"))
        queue = true;
#endif
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices)
        return false;
#ifndef SLATE_TEST_HOOKS
    // The steady state of a drop-in program: the same launch again.
    static thread_local last_static last = {0, 0, 0, 0, 0, 0};
    if (!queue && !served && !e.has_range && last.k == &k && last.device == device && last.threads == threads &&
        last.shmem == shmem && last.generation == k.generation.load(std::memory_order_relaxed)) {
        static_cfg(p, grid, total, last.all < total ? last.all : total);
        p->ctl = 0;
        p->device = device;
        p->slot = 0;
        p->stream = stream;
        return true;
    }
    const unsigned int generation = k.generation.load(std::memory_order_relaxed);
#endif
    state& st = global_state();
    std::lock_guard<std::mutex> lock(st.mu);
    device_state& ds = st.dev[device];
    const int sms = sms_locked(ds, device);
    if (sms <= 0)
        return false;
    if (served && (device != served_device() || sms != slate_serve::process_client(0, 0)->sms() || !serve_locked(ds)))
        return false; // another device than the one the daemon serves
    const unsigned int sm_low = e.has_range ? e.lo : 0u;
    const unsigned int sm_high = e.has_range ? e.hi : 0xffffffffu;
    const bool full_range = sm_low == 0u && sm_high >= (unsigned int)(sms - 1);
    if (!full_range)
        queue = true;
    // (For unserved launches this is static_launches(sms), which prepare
    // and preload follow.)
    const int per_sm = occupancy_locked(k, device, threads, shmem, !queue);
    if (per_sm <= 0)
        return false;
    // Queue launches keep state between launches (the control block): on a
    // stream being captured into a graph they go native. The legacy default
    // stream cannot be captured.
    if (queue && stream != 0) {
        cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone) {
            cudaGetLastError();
            return false;
        }
    }
    const unsigned long long all = (unsigned long long)per_sm * (unsigned long long)sms;
#ifndef SLATE_TEST_HOOKS
    if (!queue && !e.has_range) {
        const last_static now = {&k, device, threads, shmem, generation, all};
        last = now;
    }
#endif
    unsigned long long workers = all;
    p->cfg.flags = 0u;
    p->block_ns = 0.0;
    bool sample = false;
    if (!queue) {
        // On all SMs, never resized: the workers stride over the logical
        // blocks and never touch the control block.
        iters = 1u;
        if (workers > total)
            workers = total;
        p->cfg.flags = SLATE_FLAG_STATIC | SLATE_FLAG_ALL_SMS;
    } else {
        if (e.iters)
            iters = e.iters;
        const double block_ns = block_time_locked(ds, k.bt[device], total, threads, shmem, &sample);
        if (block_ns > 0.0 && block_ns < 1e300)
            p->block_ns = block_ns;
        if (iters == 0u)
            iters = task_iters(total, all, block_ns);
        // Blocks land on SMs where the hardware puts them, and those outside
        // the range exit at once: on a partial range launch the whole wave,
        // or the few workers a small grid needs might all land outside it.
        const unsigned long long tasks = (total + iters - 1) / iters;
        // A served launch may be moved to a partial range: the whole wave.
        if (full_range && !served && workers > tasks)
            workers = tasks;
        // $SLATE_RANGE_GRID: fewer workers on a partial range (an experiment:
        // a wave of a small kernel's blocks, most exiting at once, may itself
        // slow the launch beside other work). Safe at any size: the last
        // worker out runs what the others left (slate_last_out).
        if ((!full_range || served) && e.range_grid > 0u && workers > e.range_grid)
            workers = e.range_grid;
        p->cfg.flags = SLATE_FLAG_RESET | (full_range ? SLATE_FLAG_ALL_SMS : 0u);
    }
    int slot = 0;
    p->ctl = 0;
#ifdef SLATE_TEST_HOOKS
    const bool need_ctl = true; // the execution counts live in the control block
#else
    const bool need_ctl = queue;
#endif
    if (need_ctl) {
        if (!pool_locked(ds))
            return false;
        // The next slot; wait for its previous launch if it is still running.
        if (queue) {
            slot = (int)(ds.next_slot++ % kPoolSlots);
            if (ds.recorded[slot] && cudaEventQuery(ds.events[slot]) != cudaSuccess)
                cudaEventSynchronize(ds.events[slot]);
            ++ds.slot_uses[slot];
            if (sample && !ds.starts[slot] &&
                (cudaEventCreate(&ds.starts[slot]) != cudaSuccess || cudaEventCreate(&ds.ends[slot]) != cudaSuccess)) {
                cudaGetLastError();
                ds.starts[slot] = ds.ends[slot] = 0;
                sample = false;
            }
            if (sample) {
                // Time this launch: the workers of its range ran its tasks
                // (a served launch corrects this to its granted range).
                block_time& b = k.bt[device];
                const unsigned long long range_sms =
                    full_range ? (unsigned long long)sms : (unsigned long long)((sm_high < (unsigned int)sms ? sm_high : (unsigned int)sms - 1u) - sm_low + 1u);
                const unsigned long long tasks = (total + iters - 1) / iters;
                b.slot = slot;
                b.use = ds.slot_uses[slot];
                b.busy = (unsigned long long)per_sm * range_sms < tasks ? (unsigned long long)per_sm * range_sms : tasks;
            }
        }
        p->ctl = ds.ctls + slot;
    } else {
        sample = false;
    }
    p->cfg.total = total;
    p->cfg.iters = iters;
    p->cfg.sm_low = sm_low;
    p->cfg.sm_high = sm_high;
    p->cfg.workers = (unsigned int)workers;
    set_grid(&p->cfg, grid);
    p->queue = queue;
    p->served = served;
    p->timed = sample && queue;
    p->workers = (unsigned int)workers;
    p->device = device;
    p->slot = slot;
    p->stream = stream;
    p->k = &k;
    p->grid = grid;
    p->block = block;
    p->shmem = shmem;
    p->sms = sms;
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
    if (p.timed)
        cudaEventRecord(ds.ends[p.slot], p.stream);
    if (cudaEventRecord(ds.events[p.slot], p.stream) == cudaSuccess)
        ds.recorded[p.slot] = true;
}

// prepare loads the worker and, for a block size, computes its occupancy:
// the rewritten queries on a kernel call it, so that the worker loads where
// the program expects its kernel to load.
// (A template, so that a file whose program makes no such call has no
// unused function.)
template <class K>
static void prepare(K& k, int threads, size_t shmem)
{
    const cudaError_t before = cudaPeekAtLastError();
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) {
        quiet(before);
        return;
    }
    if (!persistent()) {
        // The worker is never launched.
    } else {
        // The worker the program's launches will take.
        state& st = global_state();
        std::unique_lock<std::mutex> lock(st.mu);
        const bool stat = static_launches(sms_locked(st.dev[device], device));
        if (threads > 0) {
            occupancy_locked(k, device, threads, shmem, stat);
        } else {
            lock.unlock();
            cudaFuncAttributes attr;
            cudaFuncGetAttributes(&attr, stat ? k.worker_static : k.worker);
        }
    }
    quiet(before);
}

// preload loads, for one device, the function each kernel of this file
// will launch: its static worker, its queue worker where launches take the
// queue (an SM range, a task size, or a slatec serve daemon that may resize
// them), the native kernel in auto mode; with a daemon there it connects to
// it (slate_serve::process_dial). slate_first_use() runs it at the
// program's first setup call on the device (first_use.h), so that the
// module loads there and not at a launch the program times.
static void preload(int device)
{
    const env_config& e = env();
    if (e.mode == kModeNative)
        return;
    const cudaError_t before = cudaPeekAtLastError();
    if (before != cudaSuccess)
        return;
    const bool served = servable();
    std::vector<kernel_state*> ks;
    int sms = 0;
    {
        state& st = global_state();
        std::lock_guard<std::mutex> lock(st.mu);
        ks = st.kernels;
        sms = sms_locked(st.dev[device], device);
    }
    // The daemon's connection too (hello waits for the first launch, which
    // names its kernel): the launch that registers then only sends hello.
    if (served && sms > 0)
        slate_serve::process_dial(sms);
    const bool queue = !static_launches(sms);
    cudaFuncAttributes attr;
    for (size_t i = 0; i < ks.size(); ++i) {
        if (persistent())
            cudaFuncGetAttributes(&attr, queue ? ks[i]->worker : ks[i]->worker_static);
        else
            cudaFuncGetAttributes(&attr, ks[i]->native);
        if (served)
            cudaFuncGetAttributes(&attr, ks[i]->worker);
    }
    quiet(before);
}

namespace {
// Registers this file's preloader when the program starts (no CUDA call).
struct preload_registration {
    preload_registration() { slate_first_use_v1::add(&preload); }
} preload_registration_v;

// registered<...>::k registers a kernel when the program starts, before its
// first launch, so that preload() knows it; a launcher names it, which
// instantiates it for each template instance the file launches.
template <class W, W w, class S, S s, class N, N n>
struct registered {
    static kernel_state* const k;
};
template <class W, W w, class S, S s, class N, N n>
kernel_state* const registered<W, w, S, s, N, n>::k = kernel_for((const void*)w, (const void*)s, (const void*)n);
} // namespace

// ---- host calls on a kernel, rewritten to reach its worker too -------------
// Setters apply to both; queries answer for the native kernel and prepare
// the worker. The native call's result is what the program sees.

template <class N, class W, class S>
static cudaError_t func_set_attribute(N native, W worker, S worker_static, cudaFuncAttribute attr, int value)
{
    const cudaError_t r = cudaFuncSetAttribute((const void*)native, attr, value);
    if (r != cudaSuccess)
        return r;
    const cudaError_t before = cudaPeekAtLastError();
    kernel_state* k = kernel_for((const void*)worker, (const void*)worker_static, (const void*)native);
    const bool ok[2] = {cudaFuncSetAttribute(k->worker, attr, value) == cudaSuccess,
                        cudaFuncSetAttribute(k->worker_static, attr, value) == cudaSuccess};
    quiet(before);
    state& st = global_state();
    std::lock_guard<std::mutex> lock(st.mu);
    int device = 0;
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize && cudaGetDevice(&device) == cudaSuccess &&
        device >= 0 && device < kMaxDevices)
        for (int i = 0; i < 2; ++i)
            if (ok[i])
                k->dyn_limit[i][device] = value;
    k->occupancy.clear(); // limits and carveout change the worker's occupancy
    k->generation.fetch_add(1u);
    return r;
}

template <class N, class W, class S>
static cudaError_t func_set_cache_config(N native, W worker, S worker_static, cudaFuncCache config)
{
    const cudaError_t r = cudaFuncSetCacheConfig((const void*)native, config);
    if (r == cudaSuccess) {
        const cudaError_t before = cudaPeekAtLastError();
        cudaFuncSetCacheConfig((const void*)worker, config);
        cudaFuncSetCacheConfig((const void*)worker_static, config);
        quiet(before);
    }
    return r;
}

template <class N, class W, class S, class C>
static cudaError_t func_set_shared_mem_config(N native, W worker, S worker_static, C config)
{
    const cudaError_t r = cudaFuncSetSharedMemConfig((const void*)native, config);
    if (r == cudaSuccess) {
        const cudaError_t before = cudaPeekAtLastError();
        cudaFuncSetSharedMemConfig((const void*)worker, config);
        cudaFuncSetSharedMemConfig((const void*)worker_static, config);
        quiet(before);
    }
    return r;
}

template <class N, class W, class S>
static cudaError_t func_get_attributes(cudaFuncAttributes* attr, N native, W worker, S worker_static)
{
    const cudaError_t r = cudaFuncGetAttributes(attr, (const void*)native);
    if (r == cudaSuccess)
        prepare(*kernel_for((const void*)worker, (const void*)worker_static, (const void*)native), 0, 0);
    return r;
}

template <class N, class W, class S>
static cudaError_t occupancy_max_active_blocks_per_multiprocessor(int* blocks, N native, W worker, S worker_static, int threads,
                                                                  size_t shmem)
{
    const cudaError_t r = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, (const void*)native, threads, shmem);
    if (r == cudaSuccess)
        prepare(*kernel_for((const void*)worker, (const void*)worker_static, (const void*)native), threads, shmem);
    return r;
}

template <class N, class W, class S>
static cudaError_t occupancy_max_active_blocks_per_multiprocessor_with_flags(int* blocks, N native, W worker, S worker_static,
                                                                             int threads, size_t shmem,
                                                                             unsigned int flags)
{
    const cudaError_t r =
        cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, (const void*)native, threads, shmem, flags);
    if (r == cudaSuccess)
        prepare(*kernel_for((const void*)worker, (const void*)worker_static, (const void*)native), threads, shmem);
    return r;
}

// The block-size searches are templates of the runtime API taking the
// kernel itself; the worker is prepared for the block size they found.
template <class N, class W, class S, class... A>
static cudaError_t occupancy_max_potential_block_size(int* grid, int* threads, N native, W worker, S worker_static, A... a)
{
    const cudaError_t r = cudaOccupancyMaxPotentialBlockSize(grid, threads, native, a...);
    if (r == cudaSuccess)
        prepare(*kernel_for((const void*)worker, (const void*)worker_static, (const void*)native), 0, 0);
    return r;
}

template <class N, class W, class S, class... A>
static cudaError_t occupancy_max_potential_block_size_with_flags(int* grid, int* threads, N native, W worker, S worker_static, A... a)
{
    const cudaError_t r = cudaOccupancyMaxPotentialBlockSizeWithFlags(grid, threads, native, a...);
    if (r == cudaSuccess)
        prepare(*kernel_for((const void*)worker, (const void*)worker_static, (const void*)native), 0, 0);
    return r;
}

template <class N, class W, class S>
static cudaError_t occupancy_available_dynamic_smem_per_block(size_t* smem, N native, W worker, S worker_static, int blocks,
                                                              int threads)
{
    const cudaError_t r = cudaOccupancyAvailableDynamicSMemPerBlock(smem, (const void*)native, blocks, threads);
    if (r == cudaSuccess)
        prepare(*kernel_for((const void*)worker, (const void*)worker_static, (const void*)native), 0, 0);
    return r;
}

#ifdef SLATE_TEST_HOOKS
// Test hooks: count executions per logical block, and retreat mid-run and
// relaunch on another SM range. Compiled in only with -DSLATE_TEST_HOOKS.

// count_begin gives the launch's control block a zeroed execution count per
// logical block ($SLATE_COUNT; the stream synchronized first), or null.
static unsigned int* count_begin(const plan& p)
{
    if (!std::getenv("SLATE_COUNT"))
        return 0;
    unsigned int* counts = 0;
    cudaStreamSynchronize(p.stream);
    cudaMalloc((void**)&counts, sizeof(unsigned int) * p.cfg.total);
    // On the launch's stream: a legacy-stream memset or pageable copy does
    // not order with a launch on a non-blocking stream (the worker could
    // run before its counts are zeroed and attached).
    cudaMemsetAsync(counts, 0, sizeof(unsigned int) * p.cfg.total, p.stream);
    cudaMemcpyAsync(&p.ctl->counts, &counts, sizeof(counts), cudaMemcpyHostToDevice, p.stream);
    cudaStreamSynchronize(p.stream);
    return counts;
}

// count_end checks that every logical block ran exactly once (aborting
// with a message otherwise) and detaches the counts.
static void count_end(const plan& p, unsigned int* counts, bool log)
{
    if (!counts)
        return;
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
    cudaMemcpyAsync(&p.ctl->counts, &none, sizeof(none), cudaMemcpyHostToDevice, p.stream);
    cudaStreamSynchronize(p.stream);
    cudaFree(counts);
}

template <typename Launch>
static void run_hooked(plan p, Launch launch)
{
    const bool log = std::getenv("SLATE_LOG") != 0;
    unsigned int rlo = 0, rhi = 0;
    const bool retreat = env_range("SLATE_RETREAT", &rlo, &rhi);
    if (retreat)
        cudaStreamSynchronize(p.stream);
    unsigned int* counts = count_begin(p);
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
        cudaMemcpyAsync(&p.ctl->retreat, &zero, sizeof(zero), cudaMemcpyHostToDevice, p.stream); // before the relaunch
        if (log)
            std::fprintf(stderr, "slate: retreat after %llu of %llu logical blocks; relaunch on sms=[%u,%u]\n",
                         next < p.cfg.total ? next : p.cfg.total, p.cfg.total, rlo, rhi);
        slate_cfg second = p.cfg;
        second.flags &= ~SLATE_FLAG_ALL_SMS;
        second.sm_low = rlo;
        second.sm_high = rhi;
        launch(p.ctl, second, p.workers);
        cudaFreeHost(one);
        cudaStreamDestroy(ctl_stream);
    }
    count_end(p, counts, log);
}
#endif

// serve_fill says whether a served launch on [lo, hi] holds its SMs
// (SLATE_FLAG_FILL): its grants bind as SM counts (MPS), where another
// process's blocks may take the room its workers leave on an SM, and it
// has fewer tasks than the range has workers, so that the workers that
// take none would leave room. $SLATE_SERVE_FILL=0 turns it off.
static bool serve_fill(const plan& p, unsigned int lo, unsigned int hi)
{
    static const bool off = [] {
        const char* v = std::getenv("SLATE_SERVE_FILL");
        return v && std::strcmp(v, "0") == 0;
    }();
    if (off || hi < lo || p.sms <= 0 || !slate_serve::process_client(0, 0)->counts())
        return false;
    const unsigned long long per_sm = p.workers / (unsigned int)p.sms;
    const unsigned long long tasks = (p.cfg.total + p.cfg.iters - 1) / p.cfg.iters;
    return tasks < (unsigned long long)(hi - lo + 1u) * per_sm;
}

// served_cfg is a served launch's configuration on [lo, hi] (as the
// client places it): every SM when the range is all of them, else the range,
// its SMs held (SLATE_FLAG_FILL) where serve_fill says so. The caller
// decides SLATE_FLAG_RESET.
static slate_cfg served_cfg(const plan& p, unsigned int lo, unsigned int hi)
{
    slate_cfg c = p.cfg;
    c.flags &= ~SLATE_FLAG_ALL_SMS;
    c.sm_low = lo;
    c.sm_high = hi;
    if (lo == 0u && hi + 1u >= (unsigned int)p.sms)
        c.flags |= SLATE_FLAG_ALL_SMS;
    else if (serve_fill(p, lo, hi))
        c.flags |= SLATE_FLAG_FILL | SLATE_FLAG_PROGRESS;
    return c;
}

// served_ops runs one served launch on the device for the serve client
// (templates/serve_client.h): the worker on a range with the control block
// of its pool slot and its progress kept (no self-reset), the slot's event
// behind each launch, and the retreat word set and cleared with copies on
// the device's serve stream.
template <typename Launch>
struct served_ops : slate_serve::launch_ops {
    const plan& p;
    Launch& launch;
    cudaEvent_t event;
    cudaStream_t ctl_stream;
    unsigned long long* host; // pinned: [0] one, [1..4] zeros, [5 + slot] next
    // clean: no error was pending before the launch and the first worker
    // launch left none, so errors seen later are the client's own queries'
    // (cudaErrorNotReady) and are dropped; otherwise they stay for the program.
    bool clean, started;
    bool signalled; // the listener set the retreat word (signal; read after the client's lock)
    bool failed;    // the last drain saw a device error (settle: done)
    // unstarted: the last drain found that no worker had taken a task since
    // the start (the launch still queued behind another process's grid), so
    // it returned before the launch ended; settle waits for it. start_next:
    // the queue counter at the last start (0, then each settle's).
    bool unstarted;
    unsigned long long start_next;
    unsigned int first_lo, first_hi; // the range of the first launch (block_time)

    // One task: its logical blocks times the kernel's measured time a block
    // (the solo measure; beside other work a block may take longer); none
    // when the drain waited for no task.
    double task_us() { return !unstarted && p.block_ns > 0.0 ? p.block_ns * p.cfg.iters / 1000.0 : 0.0; }
    served_ops(const plan& p_, Launch& l)
        : p(p_), launch(l), event(0), ctl_stream(0), host(0), clean(cudaPeekAtLastError() == cudaSuccess), started(false),
          signalled(false), failed(false), unstarted(false), start_next(0ull), first_lo(0u), first_hi(0u)
    {
        state& st = global_state();
        std::lock_guard<std::mutex> lock(st.mu);
        device_state& ds = st.dev[p.device];
        event = ds.events[p.slot];
        ds.recorded[p.slot] = true;
        ctl_stream = ds.serve_stream;
        host = ds.serve_host;
    }
    void start(unsigned int lo, unsigned int hi)
    {
        if (!started) {
            first_lo = lo;
            first_hi = hi;
        }
        slate_cfg c = served_cfg(p, lo, hi);
        c.flags &= ~SLATE_FLAG_RESET; // its progress is kept across moves
        if (std::getenv("SLATE_LOG"))
            std::fprintf(stderr, "slate: serve: %s total=%llu workers=%u iters=%u sms=[%u,%u]%s\n", p.k->name ? p.k->name : "?",
                         c.total, p.workers, c.iters, lo, hi, (c.flags & SLATE_FLAG_FILL) ? " filled" : "");
        launch(p.ctl, c, p.workers);
        if (!started && cudaPeekAtLastError() != cudaSuccess)
            clean = false;
        started = true;
        if (p.timed) // the last launch's end is the served launch's
            cudaEventRecord(global_state().dev[p.device].ends[p.slot], p.stream);
        cudaEventRecord(event, p.stream);
    }
    bool query()
    {
        if (cudaEventQuery(event) != cudaErrorNotReady)
            return true;
        if (clean)
            cudaGetLastError();
        return false;
    }
    bool complete()
    {
        unsigned long long* next = host + 5 + p.slot;
        *next = 0ull;
        if (cudaMemcpyAsync(next, &p.ctl->next, sizeof(unsigned long long), cudaMemcpyDeviceToHost, ctl_stream) != cudaSuccess ||
            cudaStreamSynchronize(ctl_stream) != cudaSuccess)
            return true; // a device error: nothing more will run
        return *next >= p.cfg.total;
    }
    // drain: the retreat word set and the workers waited for (launch_ops);
    // settle: the progress read back and the word cleared.
    bool drain(long wait_ms)
    {
        failed = false;
        unstarted = false;
        // The retreat word from pinned memory on the high-priority stream
        // (a copy needs no SM); then the drain: the event behind the worker.
        // Not waited for: the drain is (the copies after it on the same
        // stream, and their synchronisation, follow it and report its
        // error); a synchronisation here added a round trip to every move.
        // Signalled, the listener thread has set it already.
        const bool set = signalled;
        signalled = false;
        if (!set && cudaMemcpyAsync(&p.ctl->retreat, host, sizeof(unsigned int), cudaMemcpyHostToDevice, ctl_stream) != cudaSuccess) {
            failed = true; // a device error: nothing more will run (settle: done)
            return true;
        }
        // Then the queue counter read back behind the word (one stream: a
        // worker that claims after the read sees the word and takes no
        // task). Unchanged since the start, no worker has run a task on the
        // range: the launch is still queued (under MPS a grid that holds
        // every SM keeps other processes' grids out until it ends: a move
        // waited 0.8-2.3 ms for such a launch on the H100), and the range is
        // free now. (A worker between its look at the word and its claim as
        // the counter is read would run one task there: a late ack's cost,
        // not a wrong result; settle waits for the launch either way.)
        unsigned long long* probe = host + 5 + p.slot;
        *probe = ~0ull;
        const bool probing = cudaMemcpyAsync(probe, &p.ctl->next, sizeof(unsigned long long), cudaMemcpyDeviceToHost, ctl_stream) == cudaSuccess;
        cudaError_t e = cudaSuccess;
        if (wait_ms <= 0) {
            e = cudaEventSynchronize(event);
        } else {
            // Spin for the first 2 ms (a drain waits for one task, typically
            // tens of microseconds, and a sleep of 20 us oversleeps by the
            // timer slack, ~50 us: drains measured 76-205 us over the task on
            // the H100), then poll every 20 us. Grant changes are rare; the
            // spin costs one core for a task's time.
            const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
            const std::chrono::steady_clock::time_point end = start + std::chrono::milliseconds(wait_ms);
            const std::chrono::steady_clock::time_point spin_end = start + std::chrono::microseconds(2000);
            bool probed = !probing;
            for (;;) {
                e = cudaEventQuery(event);
                if (e == cudaErrorNotReady && !probed && cudaStreamQuery(ctl_stream) == cudaSuccess) {
                    probed = true;
                    if (*probe == start_next) {
                        unstarted = true;
                        e = cudaSuccess;
                        break;
                    }
                }
                const std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
                if (e != cudaErrorNotReady || now >= end)
                    break;
                if (now >= spin_end)
                    std::this_thread::sleep_for(std::chrono::microseconds(20));
            }
        }
        if (clean)
            cudaGetLastError(); // (the queries' not-ready)
        if (e == cudaErrorNotReady) {
            // Not drained: withdraw the word; the launch runs on.
            cudaMemcpyAsync(&p.ctl->retreat, host + 1, sizeof(unsigned int), cudaMemcpyHostToDevice, ctl_stream);
            cudaStreamSynchronize(ctl_stream);
            return false;
        }
        failed = e != cudaSuccess;
        return true;
    }
    retreat_result settle()
    {
        unsigned long long* next = host + 5 + p.slot;
        *next = 0ull;
        if (unstarted && !failed) {
            unstarted = false;
            // The ack went before the launch ran: it leaves at its first
            // claim, once dispatched. Its end first; then the word cleared.
            if (cudaEventSynchronize(event) != cudaSuccess)
                failed = true;
        }
        if (failed ||
            cudaMemcpyAsync(next, &p.ctl->next, sizeof(unsigned long long), cudaMemcpyDeviceToHost, ctl_stream) != cudaSuccess ||
            cudaMemcpyAsync(&p.ctl->retreat, host + 1, sizeof(unsigned int), cudaMemcpyHostToDevice, ctl_stream) != cudaSuccess ||
            cudaStreamSynchronize(ctl_stream) != cudaSuccess)
            return retreat_done; // a device error: nothing more will run; do not relaunch
        start_next = *next; // the relaunch goes on from here
        return *next >= p.cfg.total ? retreat_done : retreat_drained;
    }
    retreat_result retreat(long wait_ms) { return drain(wait_ms) ? settle() : retreat_stuck; }
    // signal: the retreat word set from the listener thread (the client's
    // lock held), on the serve stream, not waited for. Its errors are the
    // listener thread's own (CUDA's last error is per thread).
    void signal()
    {
        if (cudaSetDevice(p.device) == cudaSuccess &&
            cudaMemcpyAsync(&p.ctl->retreat, host, sizeof(unsigned int), cudaMemcpyHostToDevice, ctl_stream) == cudaSuccess)
            signalled = true;
        cudaGetLastError();
    }
    void finish()
    {
        // The queue counter, progress, retreat and exit count back to zero
        // (the test hooks' counts pointer stays), behind the launch on its
        // stream (the pinned zeros never change), and the slot's event
        // behind the reset: make_plan reuses the slot only once it is done.
        // Not waited for: the program's next launch follows at once (a
        // synchronous reset on the serve stream cost ~10 us between served
        // launches, 3% of a 300 us triad's).
        cudaMemcpyAsync(p.ctl, host + 1, 3 * sizeof(unsigned long long), cudaMemcpyHostToDevice, p.stream);
        cudaEventRecord(event, p.stream);
    }
    // detach: the same reset, behind a worker still running.
    void detach() { finish(); }
};

// served_busy sets the workers that ran a timed served launch: those of the
// range it started on (a resize mid-launch makes the sample a mean of both
// ranges, which the smoothing of later samples absorbs).
static void served_busy(const plan& p, unsigned int lo, unsigned int hi)
{
    state& st = global_state();
    std::lock_guard<std::mutex> lock(st.mu);
    block_time& b = p.k->bt[p.device];
    if (b.slot == p.slot && b.use == st.dev[p.device].slot_uses[p.slot] && hi >= lo) {
        const unsigned long long per_sm = p.sms > 0 ? p.workers / (unsigned int)p.sms : 0u;
        const unsigned long long range = (unsigned long long)(hi - lo + 1u) * per_sm;
        const unsigned long long tasks = (p.cfg.total + p.cfg.iters - 1) / p.cfg.iters;
        b.busy = range < tasks ? range : tasks;
    }
}

// queued_wait waits, oldest first, for the device's queued served launches
// until those still running are expected to take at most budget_us (the
// ring full counts as over it).
static void queued_wait(int device, double budget_us)
{
    state& st = global_state();
    for (;;) {
        cudaEvent_t oldest = 0;
        {
            std::lock_guard<std::mutex> lock(st.mu);
            device_state& ds = st.dev[device];
            while (ds.queued_count > 0) {
                const unsigned int i = ds.queued_head;
                const int slot = ds.queued_slot[i];
                if (ds.slot_uses[slot] == ds.queued_use[i] && cudaEventQuery(ds.events[slot]) == cudaErrorNotReady)
                    break;
                ds.queued_us -= ds.queued_expect[i];
                ds.queued_head = (i + 1u) % device_state::kQueued;
                --ds.queued_count;
            }
            if (ds.queued_count == 0) {
                ds.queued_us = 0;
                return;
            }
            if (ds.queued_count < device_state::kQueued && ds.queued_us <= budget_us)
                return;
            oldest = ds.events[ds.queued_slot[ds.queued_head]];
        }
        cudaEventSynchronize(oldest); // outside the lock; a later query drops it
    }
}

// queued_push records a queued served launch behind which the slot's event
// was just recorded (finish).
static void queued_push(const plan& p, double expect_us)
{
    state& st = global_state();
    std::lock_guard<std::mutex> lock(st.mu);
    device_state& ds = st.dev[p.device];
    if (ds.queued_count >= device_state::kQueued)
        return; // (queued_wait made room; another thread took it: not followed)
    const unsigned int i = (ds.queued_head + ds.queued_count) % device_state::kQueued;
    ds.queued_slot[i] = p.slot;
    ds.queued_use[i] = ds.slot_uses[p.slot];
    ds.queued_expect[i] = expect_us;
    ds.queued_us += expect_us;
    ++ds.queued_count;
}

// run_queued makes a queued served launch (the serve client's
// begin_queued): a self-completing worker (SLATE_FLAG_RESET: its last
// worker out runs what the range's workers left) on [lo, hi] on the
// program's stream, not waited for, once the launches queued before it are
// expected to end within the budget. It is never moved; the client's ack of
// a grant change waits for it (the native drain).
template <typename Launch>
static void run_queued(const plan& p, Launch& launch, unsigned int lo, unsigned int hi, double expect_us)
{
    // (Its event queries' cudaErrorNotReady must not reach the program's
    // cudaGetLastError.)
    const cudaError_t before = cudaPeekAtLastError();
    queued_wait(p.device, slate_serve::queue_budget_us() - expect_us);
    quiet_error(before);
    slate_cfg c = served_cfg(p, lo, hi);
    c.flags |= SLATE_FLAG_RESET; // self-completing: never moved
    if (std::getenv("SLATE_LOG"))
        std::fprintf(stderr, "slate: serve: %s queued total=%llu workers=%u iters=%u sms=[%u,%u]%s (expected %.0f us)\n",
                     p.k->name ? p.k->name : "?", c.total, p.workers, c.iters, lo, hi, (c.flags & SLATE_FLAG_FILL) ? " filled" : "",
                     expect_us);
    if (p.timed) {
        cudaEventRecord(global_state().dev[p.device].starts[p.slot], p.stream);
        served_busy(p, lo, hi);
    }
    launch(p.ctl, c, p.workers);
    finish(p);
    queued_push(p, expect_us);
    slate_serve::process_client(0, 0)->native_launched((void*)p.stream, false); // (held by queued_wait)
}

// run_served makes a served launch on the process's granted range: it
// returns when the launch completed (docs/SERVE.md, "The C++ client":
// synchronous), moved whenever the grant changed. If the grant became
// "alone" meanwhile (or the daemon went away), the worker runs on all SMs as
// an ordinary queue launch.
template <typename Launch>
static void run_served(const plan& p, Launch& launch)
{
#ifdef SLATE_TEST_HOOKS
    unsigned int* counts = count_begin(p); // $SLATE_COUNT: every block once, across resizes
    struct counted {
        const plan& p;
        unsigned int* c;
        ~counted() { count_end(p, c, std::getenv("SLATE_LOG") != 0); }
    } check = {p, counts};
#endif
    slate_serve::launch_spec s;
    s.kernel = p.k->name ? p.k->name : "kernel";
    s.grid[0] = p.grid.x;
    s.grid[1] = p.grid.y;
    s.grid[2] = p.grid.z;
    s.block[0] = p.block.x;
    s.block[1] = p.block.y;
    s.block[2] = p.block.z;
    s.shmem = p.shmem;
    s.cls = 0;
    slate_serve::client* const client = slate_serve::process_client(0, 0);
    unsigned int lo = 0, hi = 0;
    double expect_us = 0;
    unsigned long long token = 0;
    if (client->begin_queued(s, &lo, &hi, &expect_us, &token)) {
        run_queued(p, launch, lo, hi, expect_us);
        client->end_queued(token);
        return;
    }
    served_ops<Launch> ops(p, launch);
    // The stream's earlier work first: the SMs the daemon grants are then
    // used at once, and a drain waits only for the tasks running.
    if (cudaStreamSynchronize(p.stream) != cudaSuccess)
        ops.clean = false;
    if (p.timed)
        cudaEventRecord(global_state().dev[p.device].starts[p.slot], p.stream);
    if (client->run(s, ops)) {
        if (ops.clean)
            cudaGetLastError();
        if (p.timed && ops.started)
            served_busy(p, ops.first_lo, ops.first_hi);
        return;
    }
    slate_cfg c = p.cfg; // RESET and ALL_SMS: an ordinary queue launch on all SMs
    c.flags |= SLATE_FLAG_RESET | SLATE_FLAG_ALL_SMS;
    c.sm_low = 0u;
    c.sm_high = 0xffffffffu;
    launch(p.ctl, c, p.workers);
    if (p.timed)
        cudaEventRecord(global_state().dev[p.device].ends[p.slot], p.stream);
    cudaEventRecord(ops.event, p.stream);
}

// run launches the worker(s) for a plan.
template <typename Launch>
static void run(const plan& p, Launch launch)
{
    if (p.served) {
        run_served(p, launch);
        return;
    }
    if (p.timed)
        cudaEventRecord(global_state().dev[p.device].starts[p.slot], p.stream);
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
