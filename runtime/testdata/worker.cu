// worker.cu: persistent workers written by hand in the form of
// docs/ABI.md, for the runtime's tests (the transform that emits this form
// is developed in parallel; these are the reference it must agree with).
//
// vadd__slate is spelled out in full, as the transform emits it; the other
// kernels share the same loop through slate_worker() to stay short.
// No #include: NVRTC provides the CUDA built-ins, so this compiles with no
// CUDA headers on the include path.

#define SLATE_FLAG_RESET 1u     // the flags as templates/prelude.cu defines them
#define SLATE_FLAG_PROGRESS 2u  // (runtime/abi_test.go checks that they agree)

struct slate_ctl {                   // 32 bytes, zeroed before a job's first launch
    unsigned long long next;         //  0: first logical block not yet handed out
    unsigned long long done;         //  8: logical blocks completed
    unsigned int       retreat;      // 16: nonzero: take no new task, exit
    unsigned int       exited;       // 20: workers exited in this launch
    unsigned int       reserved[2];  // 24
    unsigned int       sm_rank[256]; // 32: in-range workers per SM (slate_worker counts them)
    unsigned char      sm_place[256]; // 1056: SM s is at place sm_place[s] - 1 (0: place s)
};

struct slate_cfg {                   // 56 bytes, passed by value
    unsigned long long total;        //  0: logical blocks
    unsigned int grid_x, grid_y, grid_z; // 8: the original grid
    unsigned int iters;              // 20: logical blocks per task
    unsigned int sm_low, sm_high;    // 24: inclusive range of places (sm_place)
    unsigned int flags;              // 32
    unsigned int workers;            // 36
    unsigned int magic_x, shift_x;   // 40: division by grid_x (docs/ABI.md)
    unsigned int magic_y, shift_y;   // 48: division by grid_y
};

static_assert(sizeof(slate_ctl) == 32 + 4 * 256 + 256, "slate_ctl ABI");
static_assert(sizeof(slate_cfg) == 56 && alignof(slate_cfg) == 8, "slate_cfg ABI");

__device__ __forceinline__ unsigned int slate_smid() {
    unsigned int r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

// slate_in_range: whether SM sm's place in the runtime's SM order is in the
// launch's range (docs/ABI.md, sm_place).
__device__ __forceinline__ bool slate_in_range(const slate_ctl* ctl, const slate_cfg& cfg, unsigned int sm) {
    unsigned int place = sm;
    if (sm < 256u && ctl->sm_place[sm] != 0u) place = ctl->sm_place[sm] - 1u;
    return place >= cfg.sm_low && place <= cfg.sm_high;
}

// The last worker of a launch to exit zeroes the control block when asked
// (drop-in helpers only; the Go runtime keeps `next` across a retreat).
__device__ __forceinline__ void slate_exit(slate_ctl* ctl, const slate_cfg& cfg) {
    unsigned int prev = atomicAdd(&ctl->exited, 1u);
    if ((cfg.flags & SLATE_FLAG_RESET) && prev == cfg.workers - 1) {
        __threadfence();
        volatile slate_ctl* v = ctl;
        v->next = 0; v->done = 0; v->retreat = 0; v->exited = 0;
    }
}

// ---- vadd: c = a + b, in the transform's output form --------------------

// The user's body; `return` ends only the current logical block.
template <typename T>
__device__ __forceinline__ void vadd__body(uint3 slate_blockIdx, dim3 slate_gridDim,
                                           const T* a, const T* b, T* c, int n) {
    int i = slate_blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    c[i] = a[i] + b[i];
}

template <typename T>
__global__ void vadd__slate(slate_ctl* __restrict__ slate_ctl_p, slate_cfg slate_cfg_v,
                            const T* a, const T* b, T* c, int n) {
    __shared__ unsigned long long slate_first;
    const bool slate_leader = (threadIdx.x | threadIdx.y | threadIdx.z) == 0;
    if (slate_leader) {
        unsigned int sm = slate_smid();
        slate_first = slate_in_range(slate_ctl_p, slate_cfg_v, sm) ? 0ull : ~0ull;
    }
    __syncthreads();
    const bool slate_on = slate_first == 0;
    __syncthreads();
    const dim3 slate_grid(slate_cfg_v.grid_x, slate_cfg_v.grid_y, slate_cfg_v.grid_z);
    while (slate_on) {
        if (slate_leader) {
            unsigned long long t = ~0ull;
            if (*(volatile unsigned int*)&slate_ctl_p->retreat == 0)
                t = atomicAdd(&slate_ctl_p->next, (unsigned long long)slate_cfg_v.iters);
            slate_first = t;
        }
        __syncthreads();
        const unsigned long long first = slate_first;
        if (first >= slate_cfg_v.total) break;
        const unsigned long long last = min(first + slate_cfg_v.iters, slate_cfg_v.total);
        // One 64-bit div/mod per task; then increment.
        const unsigned long long q = first / slate_cfg_v.grid_x;
        uint3 bid = make_uint3((unsigned int)(first - q * slate_cfg_v.grid_x),
                               (unsigned int)(q % slate_cfg_v.grid_y),
                               (unsigned int)(q / slate_cfg_v.grid_y));
        for (unsigned long long slate_b = first; slate_b < last; ++slate_b) {
            // No barrier between logical blocks: the body uses neither
            // shared memory nor barriers.
            vadd__body<T>(bid, slate_grid, a, b, c, n);
            if (++bid.x == slate_cfg_v.grid_x) {
                bid.x = 0;
                if (++bid.y == slate_cfg_v.grid_y) { bid.y = 0; ++bid.z; }
            }
        }
        if (slate_leader && (slate_cfg_v.flags & SLATE_FLAG_PROGRESS)) atomicAdd(&slate_ctl_p->done, last - first);
        __syncthreads();  // everyone has read slate_first before the leader rewrites it
    }
    if (slate_leader) slate_exit(slate_ctl_p, slate_cfg_v);
}

// ---- the same loop, shared by the test kernels below -------------------

template <class Body>
__device__ __forceinline__ void slate_worker(slate_ctl* __restrict__ ctl, const slate_cfg& cfg, Body body) {
    __shared__ unsigned long long slate_first;
    const bool leader = (threadIdx.x | threadIdx.y | threadIdx.z) == 0;
    // In the range, each worker takes a rank on its SM and stays out when
    // rank x range SMs x iters reaches the logical blocks left, as the
    // transform's partial-range workers do (slate_enter_range, docs/ABI.md
    // sm_rank): a small grid spreads one worker per SM. Job.RankedWorkers
    // reads the counts; every ranked worker gives its rank back at its end.
    const unsigned int my_sm = slate_smid();
    const bool in_range = slate_in_range(ctl, cfg, my_sm);
    if (leader) {
        bool on = in_range;
        if (in_range && my_sm < 256u) {
            const unsigned int rank = atomicAdd(&ctl->sm_rank[my_sm], 1u);
            const unsigned long long next = *(volatile unsigned long long*)&ctl->next;
            const unsigned long long left = next >= cfg.total ? 0ull : cfg.total - next;
            on = (unsigned long long)rank * (cfg.sm_high - cfg.sm_low + 1u) * cfg.iters < left;
        }
        slate_first = on ? 0ull : ~0ull;
    }
    __syncthreads();
    const bool on = slate_first == 0;
    __syncthreads();
    while (on) {
        if (leader) {
            unsigned long long t = ~0ull;
            if (*(volatile unsigned int*)&ctl->retreat == 0)
                t = atomicAdd(&ctl->next, (unsigned long long)cfg.iters);
            slate_first = t;
        }
        __syncthreads();
        const unsigned long long first = slate_first;
        if (first >= cfg.total) break;
        const unsigned long long last = min(first + cfg.iters, cfg.total);
        const unsigned long long q = first / cfg.grid_x;
        uint3 bid = make_uint3((unsigned int)(first - q * cfg.grid_x), (unsigned int)(q % cfg.grid_y),
                               (unsigned int)(q / cfg.grid_y));
        for (unsigned long long b = first; b < last; ++b) {
            body(bid);
            __syncthreads();  // bodies may use shared memory and barriers
            if (++bid.x == cfg.grid_x) {
                bid.x = 0;
                if (++bid.y == cfg.grid_y) { bid.y = 0; ++bid.z; }
            }
        }
        if (leader && (cfg.flags & SLATE_FLAG_PROGRESS)) atomicAdd(&ctl->done, last - first);
    }
    if (in_range && leader && my_sm < 256u)
        atomicSub(&ctl->sm_rank[my_sm], 1u);
    if (leader) slate_exit(ctl, cfg);
}

// count__slate: instrumentation for the resize and SM-binding tests. For
// each logical block (any grid shape) it counts executions, records the SM
// it ran on, and spins `spin` clock cycles so that jobs last long enough to
// be resized many times.
__global__ void count__slate(slate_ctl* __restrict__ slate_ctl_p, slate_cfg slate_cfg_v,
                             unsigned int* counts, unsigned int* smids, long long spin) {
    __shared__ unsigned int tile[32];
    slate_worker(slate_ctl_p, slate_cfg_v, [&](uint3 bid) {
        if (threadIdx.x < 32) tile[threadIdx.x] = bid.x + threadIdx.x;
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned long long id = ((unsigned long long)bid.z * slate_cfg_v.grid_y + bid.y) * slate_cfg_v.grid_x + bid.x;
            atomicAdd(&counts[id], tile[0] == bid.x ? 1u : 1000u);
            smids[id] = slate_smid();
            long long t0 = clock64();
            while (clock64() - t0 < spin) {}
        }
    });
}

// affine__slate: a user struct and a char among the parameters, to check
// the driver-reported parameter layout and raw-byte marshalling.
struct Affine {   // 24 bytes, align 8
    float a;
    double b;
    int c;
};

__global__ void affine__slate(slate_ctl* __restrict__ slate_ctl_p, slate_cfg slate_cfg_v,
                              char tag, Affine f, float* out, int n) {
    slate_worker(slate_ctl_p, slate_cfg_v, [&](uint3 bid) {
        int i = bid.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        out[i] = (float)(f.a * i + f.b + f.c + tag);
    });
}

// oob__slate: writes far outside any allocation (CUDA_ERROR_ILLEGAL_ADDRESS).
extern "C" __global__ void oob__slate(slate_ctl* __restrict__ slate_ctl_p, slate_cfg slate_cfg_v,
                                      float* x, long long stride) {
    slate_worker(slate_ctl_p, slate_cfg_v, [&](uint3 bid) {
        x[(long long)(bid.x * blockDim.x + threadIdx.x) * stride] = 1.0f;
    });
}

// spin__slate: each logical block spins `spin` cycles on its leader; the
// resize benchmark runs it "forever" (huge grid) and cancels it.
__global__ void spin__slate(slate_ctl* __restrict__ slate_ctl_p, slate_cfg slate_cfg_v, long long spin) {
    slate_worker(slate_ctl_p, slate_cfg_v, [&](uint3) {
        if (threadIdx.x == 0) {
            long long t0 = clock64();
            while (clock64() - t0 < spin) {}
        }
    });
}

// where__slate: each logical block records the SM it ran on and spins
// `spin` cycles (so that blocks that start together overlap).
__global__ void where__slate(slate_ctl* __restrict__ slate_ctl_p, slate_cfg slate_cfg_v, unsigned int* sm, long long spin) {
    slate_worker(slate_ctl_p, slate_cfg_v, [&](uint3 bid) {
        if (threadIdx.x == 0) {
            unsigned int s;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
            sm[bid.x] = s;
            long long t0 = clock64();
            while (clock64() - t0 < spin) {}
        }
    });
}
