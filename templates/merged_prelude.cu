// ---- slatec merged-scheduler support (see docs/MERGE.md) ------------------
// Injected once at the top of each merged file, after the persistent-worker
// prelude (whose SLATE_STOP, slate_plain and slate::auto_iters it uses).
#ifndef SLATE_MERGED_PRELUDE_H
#define SLATE_MERGED_PRELUDE_H

#define SLATE_MERGED_MAX_KERNELS 16
// Modes (transform.MergeMode).
#define SLATE_MERGED_INTERLEAVED 0 // one merged block per logical block, leaky-bucket order
#define SLATE_MERGED_PERSISTENT 1  // workers take merged block ids from one queue
#define SLATE_MERGED_SMRANGE 2     // workers run the kernel whose SM range holds their SM
// smrange: a worker whose kernel's queue is empty helps the other kernels
// instead of exiting (work-conserving; the ranges then hold only while every
// kernel has work). Define SLATE_MERGED_STEAL to 1 to make it the default.
#define SLATE_MERGED_FLAG_STEAL 1u

// One per launch (persistent, smrange), in device memory; zero before the
// first launch and left zero by the last worker of each launch.
struct __align__(8) slate_mctl {
    unsigned long long next[SLATE_MERGED_MAX_KERNELS]; // queue counters: persistent next[0], smrange one per kernel
    unsigned int exited;                               // workers that have run out of work in this launch
    unsigned int reserved;
};

// Passed by value to every merged launch; N is the number of kernels.
template <int N>
struct __align__(8) slate_mcfg {
    unsigned long long total[N];     // logical blocks of each kernel
    unsigned long long merged_total; // their sum
    uint3 grid[N];                   // each kernel's grid (what its gridDim reads)
    uint3 block[N];                  // each kernel's block (what its blockDim reads)
    unsigned int nthreads[N];        // block[i].x * block[i].y * block[i].z
    unsigned int sm_low[N];          // smrange: kernel i runs on SMs sm_low[i]..sm_high[i]
    unsigned int sm_high[N];
    unsigned int iters[N];           // logical blocks per task (persistent: iters[0])
    unsigned int workers;            // blocks launched (persistent, smrange)
    unsigned int flags;              // SLATE_MERGED_FLAG_*
};

// Logical block id -> blockIdx, row-major in the kernel's grid; 32-bit
// arithmetic unless the id needs more.
static __device__ __forceinline__ uint3 slate_mblock(unsigned long long lb, const uint3 g)
{
    uint3 b;
    if ((lb >> 32) == 0ull) {
        const unsigned int l = (unsigned int)lb;
        const unsigned int q = l / g.x;
        b.x = l - q * g.x;
        b.y = q % g.y;
        b.z = q / g.y;
    } else {
        const unsigned long long q = lb / g.x;
        b.x = (unsigned int)(lb - q * g.x);
        b.y = (unsigned int)(q % g.y);
        b.z = (unsigned int)(q / g.y);
    }
    return b;
}

// Merged thread id -> the kernel's threadIdx (row-major in its block, as the
// hardware numbers threads, so warps hold the same threads). Threads beyond
// the kernel's block size are idle and see (0,0,0): the index arithmetic the
// body still runs for them then stays inside the block.
static __device__ __forceinline__ uint3 slate_mthread(unsigned int tid, const uint3 b, unsigned int n)
{
    uint3 t = make_uint3(0u, 0u, 0u);
    if (tid < n) {
        const unsigned int q = tid / b.x;
        t.x = tid - q * b.x;
        t.y = q % b.y;
        t.z = q / b.y;
    }
    return t;
}

// a[i] for a runtime i without indexing the parameter array dynamically
// (which can copy it to local memory).
template <int N, typename T>
static __device__ __forceinline__ T slate_msel(const T (&a)[N], int i)
{
    T v = a[0];
#pragma unroll
    for (int j = 1; j < N; ++j)
        if (j == i)
            v = a[j];
    return v;
}

// Interleaved: merged block b runs logical block mapBlk[b] of kernel mapKernel[b].
template <typename Run>
static __device__ __forceinline__ void slate_merged_interleaved(const int* __restrict__ map_kernel,
                                                                const unsigned int* __restrict__ map_blk, Run run)
{
    const unsigned int bid = blockIdx.x;
    run(map_kernel[bid], (unsigned long long)map_blk[bid]);
}

// The last worker of a launch zeroes the control block for the next one.
static __device__ __forceinline__ void slate_merged_reset(slate_mctl* __restrict__ ctl)
{
#pragma unroll
    for (int i = 0; i < SLATE_MERGED_MAX_KERNELS; ++i)
        ctl->next[i] = 0ull;
    ctl->exited = 0u;
    __threadfence();
}

// Persistent: each worker takes tasks of iters[0] merged block ids with one
// atomicAdd and runs them in leaky-bucket order. kSync adds a barrier
// between logical blocks (the next one reuses the shared memory). The task
// slot is double-buffered, so one barrier per task suffices.
template <bool kSync, int N, typename Run>
static __device__ __forceinline__ void slate_merged_persistent(slate_mctl* __restrict__ ctl, const slate_mcfg<N>& cfg,
                                                               const int* __restrict__ map_kernel,
                                                               const unsigned int* __restrict__ map_blk, Run run)
{
    __shared__ unsigned long long slate_mtask[2];
    const bool leader = threadIdx.x == 0u;
    const unsigned long long total = cfg.merged_total;
    const unsigned int iters = cfg.iters[0];
    for (unsigned int parity = 0u;; parity ^= 1u) {
        if (leader) {
            const unsigned long long t = atomicAdd(&ctl->next[0], (unsigned long long)iters);
            slate_mtask[parity] = t < total ? t : SLATE_STOP;
        }
        __syncthreads();
        const unsigned long long start = slate_mtask[parity];
        if (start == SLATE_STOP)
            break;
        const unsigned long long end = start + iters < total ? start + iters : total;
        // The next logical block's map entries are loaded before this one runs, so
        // only a task's first lookup is on the critical path.
        int k = map_kernel[start];
        unsigned int lb = map_blk[start];
        for (unsigned long long id = start; id < end; ++id) {
            int nk = k;
            unsigned int nlb = lb;
            if (id + 1 < end) {
                nk = map_kernel[id + 1];
                nlb = map_blk[id + 1];
            }
            run(k, (unsigned long long)lb);
            if (kSync)
                __syncthreads();
            k = nk;
            lb = nlb;
        }
    }
    if (leader) {
        __threadfence();
        if (atomicAdd(&ctl->exited, 1u) == cfg.workers - 1u)
            slate_merged_reset(ctl);
    }
}

// SM range: a worker runs the kernel whose range [sm_low, sm_high] holds its
// SM, taking tasks of iters[k] of that kernel's logical blocks from its own
// counter; workers on SMs outside every range run nothing. Whatever no
// worker could take (a range on which the hardware placed no worker) is run
// by the last worker to run out of work, so every logical block runs exactly
// once whatever the placement.
template <bool kSync, int N, typename Run>
static __device__ __forceinline__ void slate_merged_smrange(slate_mctl* __restrict__ ctl, const slate_mcfg<N>& cfg, Run run)
{
    __shared__ unsigned long long slate_mtask[2];
    __shared__ unsigned long long slate_mend[2];
    __shared__ int slate_mkernel[2];
    __shared__ int slate_mlast;
    const bool leader = threadIdx.x == 0u;
    int cur = -1;       // leader: the kernel it takes tasks from
    bool drain = false; // the last worker: it runs whatever is left
    if (leader) {
        unsigned int smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
#pragma unroll
        for (int i = 0; i < N; ++i)
            if (smid >= cfg.sm_low[i] && smid <= cfg.sm_high[i])
                cur = i;
    }
    for (unsigned int parity = 0u;; parity ^= 1u) {
        if (leader) {
            unsigned long long t = SLATE_STOP, e = 0ull;
            int k = -1;
            const bool roam = drain || (cfg.flags & SLATE_MERGED_FLAG_STEAL) != 0u;
            for (int tries = 0; cur >= 0 && tries < N; ++tries) {
                const unsigned long long total = slate_msel(cfg.total, cur);
                if (*(volatile const unsigned long long*)&ctl->next[cur] < total) {
                    const unsigned int iters = slate_msel(cfg.iters, cur);
                    t = atomicAdd(&ctl->next[cur], (unsigned long long)iters);
                    if (t < total) {
                        k = cur;
                        e = t + iters < total ? t + iters : total;
                        break;
                    }
                }
                if (!roam)
                    break;
                cur = cur + 1 == N ? 0 : cur + 1;
            }
            slate_mtask[parity] = k >= 0 ? t : SLATE_STOP;
            slate_mend[parity] = e;
            slate_mkernel[parity] = k;
        }
        __syncthreads();
        const unsigned long long start = slate_mtask[parity];
        if (start == SLATE_STOP) {
            if (drain)
                break;
            if (leader) {
                __threadfence();
                slate_mlast = atomicAdd(&ctl->exited, 1u) == cfg.workers - 1u;
                cur = 0;
            }
            __syncthreads();
            if (!slate_mlast)
                return;
            drain = true;
            continue;
        }
        const unsigned long long end = slate_mend[parity];
        const int k = slate_mkernel[parity];
        for (unsigned long long id = start; id < end; ++id) {
            run(k, id);
            if (kSync)
                __syncthreads();
        }
    }
    if (leader)
        slate_merged_reset(ctl);
}

#ifndef __CUDACC_RTC__
// ---- host side: leaky bucket, maps, launch planning -------------------------
#include <cuda_runtime.h>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>
// @@SLATE_BUCKET_H@@
#ifndef SLATE_MERGED_STEAL
#define SLATE_MERGED_STEAL 0
#endif

namespace slate {
namespace merged {

enum { kPoolSlots = 64, kMaxDevices = 64, kMaxMaps = 32 };

// A device copy of mapKernel/mapBlk for one configuration (blocks per kernel
// and allocation). Entries are pinned while a launch that reads them is
// being made, and evicted least recently used once launches finished.
struct maps_entry {
    int device;
    std::vector<unsigned long long> blocks;
    std::vector<unsigned int> alloc;
    int* map_kernel;
    unsigned int* map_blk;
    cudaEvent_t used; // recorded behind the last launch that read the maps
    bool recorded;
    int pins;
    unsigned long long id, stamp;
};

// Control blocks: each persistent or smrange launch takes a slot, so
// launches on different streams never share counters; a slot is reused once
// the event recorded behind its last launch has completed.
struct device_state {
    bool ready;
    int sms;
    slate_mctl* ctls;
    cudaEvent_t events[kPoolSlots];
    bool recorded[kPoolSlots];
    bool busy[kPoolSlots];
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
    std::vector<maps_entry> maps;
    std::vector<occupancy_entry> occupancy;
    unsigned long long clock;
};

static state& global_state()
{
    static state s;
    return s;
}

// plan is one merged launch, from prepare to finish.
template <int N>
struct plan {
    slate_mcfg<N> cfg;
    const int* map_kernel;
    const unsigned int* map_blk;
    slate_mctl* ctl;
    unsigned int blocks;  // blocks of the merged launch
    unsigned int threads; // threads per merged block: the largest block
    size_t shmem;         // dynamic shared memory: the largest request
    bool empty;           // no kernel has blocks: nothing to launch
    int device, slot;
    unsigned long long maps; // map cache entry id, 0 for none
    cudaStream_t stream;
};

// resolve_alloc turns the requested SMs per kernel into the allocation used.
// All zero: an equal share of the device. smrange needs the ranges to fit the
// device: a larger total is scaled down in proportion (each kernel keeps at
// least one SM). Kernels with no blocks get none.
static cudaError_t resolve_alloc(int n, const unsigned int* req, const unsigned long long* total, int sms,
                                 int mode, unsigned int* out)
{
    int live = 0, zeros = 0;
    unsigned long long sum = 0;
    for (int i = 0; i < n; ++i) {
        if (total[i] == 0)
            continue;
        ++live;
        if (req[i] == 0)
            ++zeros;
        if (req[i] > 4096u)
            return cudaErrorInvalidValue;
        sum += req[i];
    }
    if (zeros != 0 && zeros != live)
        return cudaErrorInvalidValue; // all or nothing
    if (live > sms && mode == SLATE_MERGED_SMRANGE)
        return cudaErrorInvalidValue; // not one SM per kernel
    int seen = 0;
    for (int i = 0; i < n; ++i) {
        out[i] = 0u;
        if (total[i] == 0)
            continue;
        if (zeros) {
            const int share = sms / live + (seen < sms % live ? 1 : 0);
            out[i] = share > 0 ? (unsigned int)share : 1u;
        } else {
            out[i] = req[i];
        }
        ++seen;
    }
    if (zeros || mode != SLATE_MERGED_SMRANGE || sum <= (unsigned long long)sms)
        return cudaSuccess;
    // Scale down: floor of the proportional share, at least 1, then trim
    // the largest until the total fits.
    unsigned long long scaled = 0;
    for (int i = 0; i < n; ++i) {
        if (out[i] == 0u)
            continue;
        unsigned long long s = (unsigned long long)out[i] * (unsigned long long)sms / sum;
        out[i] = s > 0 ? (unsigned int)s : 1u;
        scaled += out[i];
    }
    while (scaled > (unsigned long long)sms) {
        int big = -1;
        for (int i = 0; i < n; ++i)
            if (out[i] > 1u && (big < 0 || out[i] > out[big]))
                big = i;
        --out[big];
        --scaled;
    }
    return cudaSuccess;
}

// get_maps finds or builds the device maps for a configuration; the entry
// comes back pinned. Callers hold the state lock.
template <int N>
static cudaError_t get_maps(state& st, int device, const unsigned long long* total, const unsigned int* alloc,
                            maps_entry** found)
{
    std::vector<unsigned long long> blocks(total, total + N);
    std::vector<unsigned int> al(alloc, alloc + N);
    for (size_t i = 0; i < st.maps.size(); ++i) {
        maps_entry& e = st.maps[i];
        if (e.device == device && e.blocks == blocks && e.alloc == al) {
            e.stamp = ++st.clock;
            ++e.pins;
            *found = &e;
            return cudaSuccess;
        }
    }
    // The bucket runs over the kernels that have blocks.
    slate_bucket::input in;
    std::vector<int> index;
    for (int i = 0; i < N; ++i) {
        if (total[i] == 0)
            continue;
        in.alloc.push_back((int)alloc[i]);
        in.blocks.push_back((long long)total[i]);
        index.push_back(i);
    }
    slate_bucket::output out;
    std::string err;
    if (!slate_bucket::leaky_bucket(in, &out, &err))
        return cudaErrorInvalidValue;
    for (size_t b = 0; b < out.map_kernel.size(); ++b)
        out.map_kernel[b] = index[out.map_kernel[b]];
    if (st.maps.size() >= (size_t)kMaxMaps) {
        size_t lru = st.maps.size();
        for (size_t i = 0; i < st.maps.size(); ++i)
            if (st.maps[i].pins == 0 && (lru == st.maps.size() || st.maps[i].stamp < st.maps[lru].stamp))
                lru = i;
        if (lru < st.maps.size()) {
            maps_entry& e = st.maps[lru];
            if (e.recorded)
                cudaEventSynchronize(e.used);
            cudaFree(e.map_kernel);
            cudaFree(e.map_blk);
            cudaEventDestroy(e.used);
            st.maps.erase(st.maps.begin() + (long)lru);
        }
    }
    maps_entry e = maps_entry();
    e.device = device;
    e.blocks = blocks;
    e.alloc = al;
    const size_t n = out.map_kernel.size();
    cudaError_t r;
    if ((r = cudaMalloc((void**)&e.map_kernel, n * sizeof(int))) != cudaSuccess)
        return r;
    if ((r = cudaMalloc((void**)&e.map_blk, n * sizeof(unsigned int))) != cudaSuccess) {
        cudaFree(e.map_kernel);
        return r;
    }
    // A pageable copy returns before its DMA lands and the default stream
    // does not order with a launch on a non-blocking stream: wait for it.
    if ((r = cudaMemcpy(e.map_kernel, out.map_kernel.data(), n * sizeof(int), cudaMemcpyHostToDevice)) != cudaSuccess ||
        (r = cudaMemcpy(e.map_blk, out.map_blk.data(), n * sizeof(unsigned int), cudaMemcpyHostToDevice)) != cudaSuccess ||
        (r = cudaStreamSynchronize(0)) != cudaSuccess ||
        (r = cudaEventCreateWithFlags(&e.used, cudaEventDisableTiming)) != cudaSuccess) {
        cudaFree(e.map_kernel);
        cudaFree(e.map_blk);
        return r;
    }
    e.pins = 1;
    e.id = e.stamp = ++st.clock;
    st.maps.push_back(e);
    *found = &st.maps.back();
    return cudaSuccess;
}

#ifdef SLATE_ENV
static unsigned int env_uint(const char* name)
{
    const char* v = std::getenv(name);
    return v ? (unsigned int)std::strtoul(v, 0, 10) : 0u;
}
#endif

// prepare plans a merged launch: per-kernel configuration, the merged block
// shape, maps (interleaved, persistent), worker count, task sizes, SM ranges
// and a control block (persistent, smrange). It returns an error for a
// configuration the merged kernel cannot run, and sets empty when no kernel
// has blocks.
template <int N>
static cudaError_t prepare(plan<N>* p, const void* func, int mode, const dim3* grids, const dim3* blocks,
                           const size_t* shmem, const unsigned int* alloc, cudaStream_t stream)
{
    *p = plan<N>();
    p->slot = -1;
    p->stream = stream;
    unsigned long long merged = 0;
    int live = 0;
    for (int i = 0; i < N; ++i) {
        const unsigned long long total = (unsigned long long)grids[i].x * grids[i].y * grids[i].z;
        const unsigned long long threads = (unsigned long long)blocks[i].x * blocks[i].y * blocks[i].z;
        p->cfg.total[i] = total;
        p->cfg.grid[i] = make_uint3(grids[i].x, grids[i].y, grids[i].z);
        p->cfg.block[i] = make_uint3(blocks[i].x, blocks[i].y, blocks[i].z);
        if (total == 0)
            continue;
        if (threads == 0 || threads > 1024)
            return cudaErrorInvalidConfiguration;
        p->cfg.nthreads[i] = (unsigned int)threads;
        if (threads > p->threads)
            p->threads = (unsigned int)threads;
        if (shmem[i] > p->shmem)
            p->shmem = shmem[i];
        merged += total;
        ++live;
    }
    if (live == 0) {
        p->empty = true;
        return cudaSuccess;
    }
    p->cfg.merged_total = merged;
    if (mode != SLATE_MERGED_SMRANGE && merged > 2147483647ull)
        return cudaErrorInvalidValue; // the maps hold 32-bit ids
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t r = cudaStreamIsCapturing(stream, &capture);
    if (r != cudaSuccess)
        return r;
    if (capture != cudaStreamCaptureStatusNone)
        return cudaErrorStreamCaptureUnsupported; // maps and control blocks are set up synchronously
    int device = 0;
    if ((r = cudaGetDevice(&device)) != cudaSuccess)
        return r;
    if (device < 0 || device >= kMaxDevices)
        return cudaErrorInvalidDevice;
    if (p->shmem > 48u * 1024u &&
        (r = cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p->shmem)) != cudaSuccess)
        return r;
    state& st = global_state();
    std::lock_guard<std::mutex> lock(st.mu);
    device_state& ds = st.dev[device];
    if (!ds.ready) {
        if ((r = cudaDeviceGetAttribute(&ds.sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess ||
            (r = cudaMalloc((void**)&ds.ctls, sizeof(slate_mctl) * kPoolSlots)) != cudaSuccess ||
            (r = cudaMemset(ds.ctls, 0, sizeof(slate_mctl) * kPoolSlots)) != cudaSuccess ||
            (r = cudaStreamSynchronize(0)) != cudaSuccess) // zeroed before any stream's launch reads it
            return r;
        for (int i = 0; i < kPoolSlots; ++i)
            if ((r = cudaEventCreateWithFlags(&ds.events[i], cudaEventDisableTiming)) != cudaSuccess)
                return r;
        ds.ready = true;
    }
    unsigned int a[N];
    if ((r = resolve_alloc(N, alloc, p->cfg.total, ds.sms, mode, a)) != cudaSuccess)
        return r;
    // Occupancy of the merged kernel, cached per block shape and shared size.
    int per_sm = -1;
    for (size_t i = 0; i < st.occupancy.size(); ++i) {
        const occupancy_entry& e = st.occupancy[i];
        if (e.func == func && e.device == device && e.threads == (int)p->threads && e.shmem == p->shmem) {
            per_sm = e.blocks_per_sm;
            break;
        }
    }
    if (per_sm < 0) {
        if ((r = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func, (int)p->threads, p->shmem)) != cudaSuccess)
            return r;
        occupancy_entry e = {func, device, (int)p->threads, p->shmem, per_sm};
        st.occupancy.push_back(e);
    }
    if (per_sm <= 0)
        return cudaErrorInvalidConfiguration; // the merged block does not fit an SM
    const unsigned long long all = (unsigned long long)per_sm * (unsigned long long)ds.sms;
    unsigned int iters_env = 0u;
    bool iters_period = false;
#ifdef SLATE_ENV
    iters_env = env_uint("SLATE_ITERS");
    if (const char* v = std::getenv("SLATE_ITERS"))
        iters_period = std::strcmp(v, "period") == 0;
#endif
    // A control block (persistent, smrange): the next free slot, once its
    // last launch completed.
    if (mode != SLATE_MERGED_INTERLEAVED) {
        for (int tries = 0; tries < kPoolSlots && p->slot < 0; ++tries) {
            const int s = (int)(ds.next_slot++ % kPoolSlots);
            if (!ds.busy[s])
                p->slot = s;
        }
        if (p->slot < 0)
            return cudaErrorLaunchOutOfResources; // kPoolSlots launches being made at once
        if (ds.recorded[p->slot] && cudaEventQuery(ds.events[p->slot]) != cudaSuccess)
            cudaEventSynchronize(ds.events[p->slot]);
        ds.busy[p->slot] = true;
        p->device = device;
        p->ctl = ds.ctls + p->slot;
    }
    if (mode != SLATE_MERGED_SMRANGE) {
        maps_entry* e = 0;
        if ((r = get_maps<N>(st, device, p->cfg.total, a, &e)) != cudaSuccess) {
            if (p->slot >= 0)
                ds.busy[p->slot] = false;
            return r;
        }
        p->map_kernel = e->map_kernel;
        p->map_blk = e->map_blk;
        p->maps = e->id;
    }
    if (mode == SLATE_MERGED_INTERLEAVED) {
        p->blocks = (unsigned int)merged;
    } else if (mode == SLATE_MERGED_PERSISTENT) {
        unsigned int iters = iters_env ? iters_env : auto_iters(merged, all);
        if (iters_period) {
            // One leaky-bucket period per task: the allocation reduced by its
            // gcd, summed; every task then holds each kernel's share of blocks.
            unsigned int g = 0u, period = 0u;
            for (int i = 0; i < N; ++i) {
                unsigned int x = a[i], y = g; // g = gcd(g, a[i])
                while (x != 0u) {
                    const unsigned int t = y % x;
                    y = x;
                    x = t;
                }
                g = y;
            }
            for (int i = 0; i < N; ++i)
                period += g ? a[i] / g : 0u;
            iters = period ? period : 1u;
        }
        p->cfg.iters[0] = iters;
        const unsigned long long tasks = (merged + iters - 1) / iters;
        p->blocks = (unsigned int)(all < tasks ? all : tasks);
    } else {
        // smrange: kernel i on SMs [sm_low, sm_high], in input order.
        unsigned int lo = 0u;
        for (int i = 0; i < N; ++i) {
            if (a[i] == 0u) {
                p->cfg.sm_low[i] = 1u; // an empty range: no worker runs it
                p->cfg.sm_high[i] = 0u;
                p->cfg.iters[i] = 1u;
                continue;
            }
            p->cfg.sm_low[i] = lo;
            p->cfg.sm_high[i] = lo + a[i] - 1u;
            lo += a[i];
            p->cfg.iters[i] = iters_env ? iters_env : auto_iters(p->cfg.total[i], (unsigned long long)per_sm * a[i]);
        }
        // Workers for every SM: the hardware places them, and those on SMs
        // outside every range exit at once.
        p->blocks = (unsigned int)all;
        bool steal = SLATE_MERGED_STEAL != 0;
#ifdef SLATE_ENV
        if (const char* v = std::getenv("SLATE_MERGED_STEAL"))
            steal = *v == '1';
#endif
        p->cfg.flags = steal ? SLATE_MERGED_FLAG_STEAL : 0u;
    }
    p->cfg.workers = p->blocks;
    return cudaSuccess;
}

// finish records the launch behind its control block and maps, releases
// them, and returns the launch's error.
template <int N>
static cudaError_t finish(const plan<N>& p)
{
    cudaError_t launch = cudaGetLastError();
    if (launch == cudaErrorNotReady)
        launch = cudaSuccess; // a pending event query in prepare, not the launch
    state& st = global_state();
    std::lock_guard<std::mutex> lock(st.mu);
    if (p.slot >= 0) {
        device_state& ds = st.dev[p.device];
        if (cudaEventRecord(ds.events[p.slot], p.stream) == cudaSuccess)
            ds.recorded[p.slot] = true;
        ds.busy[p.slot] = false;
    }
    for (size_t i = 0; i < st.maps.size(); ++i) {
        maps_entry& e = st.maps[i];
        if (e.id != p.maps || p.maps == 0)
            continue;
        if (cudaEventRecord(e.used, p.stream) == cudaSuccess)
            e.recorded = true;
        --e.pins;
    }
    return launch;
}

// ---- split: one worker population per kernel --------------------------------
// Each population is its own __global__ function (its own registers, block
// size and shared memory) running the smrange loop with a configuration in
// which only its kernel has blocks, on that kernel's SM range of the whole
// allocation; population 0 runs on the caller's stream, the others on helper
// streams forked from it (an event) and joined back into it by finish_split.

struct split_streams {
    bool ready;
    cudaStream_t s[SLATE_MERGED_MAX_KERNELS];
};

static split_streams* split_state()
{
    static split_streams st[kMaxDevices];
    return st;
}

template <int N>
static cudaError_t prepare_split(plan<N>* p, const void* const* funcs, const dim3* grids, const dim3* blocks,
                                 const size_t* shmem, const unsigned int* alloc, cudaStream_t stream,
                                 cudaStream_t* streams)
{
    unsigned long long total[N];
    int live = 0;
    for (int i = 0; i < N; ++i) {
        p[i] = plan<N>();
        p[i].slot = -1;
        p[i].empty = true;
        streams[i] = stream;
        total[i] = (unsigned long long)grids[i].x * grids[i].y * grids[i].z;
        live += total[i] != 0;
    }
    if (live == 0)
        return cudaSuccess;
    int device = 0, sms = 0;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t r = cudaStreamIsCapturing(stream, &capture);
    if (r != cudaSuccess)
        return r;
    if (capture != cudaStreamCaptureStatusNone)
        return cudaErrorStreamCaptureUnsupported; // control blocks are set up synchronously
    if ((r = cudaGetDevice(&device)) != cudaSuccess)
        return r;
    if (device < 0 || device >= kMaxDevices)
        return cudaErrorInvalidDevice;
    if ((r = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess)
        return r;
    unsigned int a[N];
    if ((r = resolve_alloc(N, alloc, total, sms, SLATE_MERGED_SMRANGE, a)) != cudaSuccess)
        return r;
    {
        state& st = global_state();
        std::lock_guard<std::mutex> lock(st.mu);
        split_streams& ss = split_state()[device];
        if (!ss.ready) {
            for (int i = 0; i < SLATE_MERGED_MAX_KERNELS; ++i)
                if ((r = cudaStreamCreateWithFlags(&ss.s[i], cudaStreamNonBlocking)) != cudaSuccess)
                    return r;
            ss.ready = true;
        }
        for (int i = 1; i < N; ++i)
            streams[i] = ss.s[i];
    }
    unsigned int lo = 0u;
    for (int i = 0; i < N; ++i) {
        if (total[i] == 0)
            continue;
        dim3 g[N];
        unsigned int one[N];
        for (int j = 0; j < N; ++j) {
            g[j] = j == i ? grids[j] : dim3(0u, 1u, 1u);
            one[j] = j == i ? a[j] : 0u;
        }
        if ((r = prepare<N>(&p[i], funcs[i], SLATE_MERGED_SMRANGE, g, blocks, shmem, one, streams[i])) != cudaSuccess) {
            for (int j = 0; j < i; ++j)
                if (!p[j].empty)
                    finish<N>(p[j]); // releases the control blocks taken so far
            return r;
        }
        // The population's range is its kernel's range of the whole allocation.
        p[i].cfg.sm_low[i] = lo;
        p[i].cfg.sm_high[i] = lo + a[i] - 1u;
        lo += a[i];
    }
    // Fork: the helper streams wait for the work queued on the caller's stream.
    cudaEvent_t fork;
    if ((r = cudaEventCreateWithFlags(&fork, cudaEventDisableTiming)) != cudaSuccess)
        return r;
    r = cudaEventRecord(fork, stream);
    for (int i = 1; i < N && r == cudaSuccess; ++i)
        if (!p[i].empty)
            r = cudaStreamWaitEvent(streams[i], fork, 0);
    cudaEventDestroy(fork);
    return r;
}

// finish_split releases each population's control block and joins the
// helper streams back into the caller's stream.
template <int N>
static cudaError_t finish_split(const plan<N>* p, cudaStream_t stream, const cudaStream_t* streams)
{
    cudaError_t launch = cudaSuccess;
    for (int i = 0; i < N; ++i) {
        if (p[i].empty)
            continue;
        const cudaError_t e = finish<N>(p[i]);
        if (launch == cudaSuccess)
            launch = e;
        if (i == 0)
            continue;
        cudaEvent_t join;
        cudaError_t r = cudaEventCreateWithFlags(&join, cudaEventDisableTiming);
        if (r == cudaSuccess) {
            r = cudaEventRecord(join, streams[i]);
            if (r == cudaSuccess)
                r = cudaStreamWaitEvent(stream, join, 0);
            cudaEventDestroy(join);
        }
        if (launch == cudaSuccess)
            launch = r;
    }
    return launch;
}

} // namespace merged
} // namespace slate
#endif // __CUDACC_RTC__
#endif // SLATE_MERGED_PRELUDE_H
// ---- end of slatec merged-scheduler support ---------------------------------
