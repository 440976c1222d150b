// smid_map: do two processes under MPS number the SMs alike?
//
// slatec serve hands each process an SM range by %smid; a range only
// isolates two processes if their %smid values name the same physical SMs.
// This probe tests that without trusting %smid: every block takes the
// device's whole opt-in shared memory, so an SM holds one block of either
// process at a time. A `hold` process keeps the SMs of a chosen set busy
// (by its own %smid) for a while; a `probe` process then fills every SM
// once. Probe blocks that start while the hold still runs can only be on
// SMs the hold does not use: if the numbering is shared, none of their
// %smid values lies in the hold's set.
//
//   smid_map hold range LO HI MS   spin MS ms on SMs LO..HI, others exit
//   smid_map hold bit B MS         spin on SMs whose id has bit B set
//   smid_map probe MS              one block per SM, each spins MS ms (as long
//                                  as the hold: every SM takes one probe block)
//   smid_map duo range LO HI MS    hold and probe in one process, two streams
//   smid_map probe2 MS             a probe that first fills the idle GPU once
//                                  (10 ms, printed as "first"), prints "probe
//                                  ready", waits for a line on stdin, then
//                                  probes: is a process's numbering fixed by
//                                  its first launch, or chosen per launch?
//
// SMID_GREEN=N:P runs the kernel in a green context: the device's SMs split
// by count N (cuDevSmResourceSplitByCount), P = 0 the group, 1 the rest. Two
// processes that each take a part of the same split hold the same physical
// SMs if part 0 in one and part 0 in the other exclude each other (no probe
// block starts while the hold runs) and part 0 beside part 1 do not.
//
// Each block prints "<role> smid S start T end U" (globaltimer ns, one
// clock for all processes of a device). A hold prints "hold launched" once
// its kernel is queued, so a script can start the probe after it.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#define CHECK(x)                                                                   \
    do {                                                                           \
        cudaError_t e_ = (x);                                                      \
        if (e_ != cudaSuccess) {                                                   \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            std::exit(1);                                                          \
        }                                                                          \
    } while (0)

__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ unsigned smid() {
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

// kind 0: spin where lo <= smid <= hi; kind 1: spin where bit lo of smid is
// set; kind 2: spin everywhere.
__global__ void occupy(int kind, unsigned lo, unsigned hi, unsigned long long spin_ns,
                       unsigned long long* rec) {
    extern __shared__ unsigned char pad[];
    unsigned long long t0 = now_ns();
    unsigned s = smid();
    bool spin = kind == 2 || (kind == 0 && s >= lo && s <= hi) || (kind == 1 && ((s >> lo) & 1u));
    unsigned long long t = t0;
    if (spin && threadIdx.x == 0) {
        while ((t = now_ns()) - t0 < spin_ns) pad[0] = (unsigned char)t; // keep the smem use
    }
    if (threadIdx.x == 0) {
        rec[3 * blockIdx.x + 0] = s;
        rec[3 * blockIdx.x + 1] = t0;
        rec[3 * blockIdx.x + 2] = spin ? t : t0;
    }
}

template <class F>
static F entry(const char* name) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12040, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !fn) {
        std::fprintf(stderr, "smid_map: no driver entry point %s\n", name);
        std::exit(1);
    }
    return (F)fn;
}

#define CU(x)                                                                       \
    do {                                                                            \
        CUresult r_ = (x);                                                          \
        if (r_ != CUDA_SUCCESS) {                                                   \
            std::fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #x, (int)r_); \
            std::exit(1);                                                           \
        }                                                                           \
    } while (0)

// enter_green makes a green context of $SMID_GREEN current (see above).
static void enter_green() {
    const char* v = std::getenv("SMID_GREEN");
    if (!v || !*v) return;
    int n = 0, part = 0;
    if (std::sscanf(v, "%d:%d", &n, &part) != 2 || n < 1 || part < 0 || part > 1) {
        std::fprintf(stderr, "smid_map: SMID_GREEN=%s, want N:P with P 0 or 1\n", v);
        std::exit(2);
    }
    CHECK(cudaFree(nullptr)); // the primary context
    auto getRes = entry<decltype(&cuDeviceGetDevResource)>("cuDeviceGetDevResource");
    auto split = entry<decltype(&cuDevSmResourceSplitByCount)>("cuDevSmResourceSplitByCount");
    auto genDesc = entry<decltype(&cuDevResourceGenerateDesc)>("cuDevResourceGenerateDesc");
    auto create = entry<decltype(&cuGreenCtxCreate)>("cuGreenCtxCreate");
    auto toCtx = entry<decltype(&cuCtxFromGreenCtx)>("cuCtxFromGreenCtx");
    auto setCur = entry<decltype(&cuCtxSetCurrent)>("cuCtxSetCurrent");
    CUdevResource in = {}, grp = {}, rem = {};
    CU(getRes(0, &in, CU_DEV_RESOURCE_TYPE_SM));
    unsigned int nb = 1;
    CU(split(&grp, &nb, &in, &rem, 0, n));
    CUdevResource parts[2] = {grp, rem};
    CUdevResourceDesc desc;
    CU(genDesc(&desc, &parts[part], 1));
    CUgreenCtx gc;
    CU(create(&gc, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    CUcontext c;
    CU(toCtx(&c, gc));
    CU(setCur(c));
    std::fprintf(stderr, "smid_map: green part %d of %u SMs (split by %d of %u)\n", part, parts[part].sm.smCount, n,
                 in.sm.smCount);
}

struct Launch {
    int grid = 0;
    size_t smem = 0;
    unsigned long long* rec = nullptr;
};

static Launch prepare() {
    int dev = 0, sms = 0, optin = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    CHECK(cudaFuncSetAttribute(occupy, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, occupy, 32, optin));
    if (per_sm != 1) {
        std::fprintf(stderr, "smid_map: %d blocks per SM at %d B shared memory, want 1\n", per_sm, optin);
        std::exit(1);
    }
    Launch l;
    l.grid = sms;
    l.smem = (size_t)optin;
    CHECK(cudaMalloc(&l.rec, sizeof(unsigned long long) * 3 * sms));
    return l;
}

static void report(const char* role, const Launch& l) {
    std::vector<unsigned long long> h(3 * l.grid);
    CHECK(cudaMemcpy(h.data(), l.rec, h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost));
    for (int b = 0; b < l.grid; b++)
        std::printf("%s smid %llu start %llu end %llu\n", role, h[3 * b], h[3 * b + 1], h[3 * b + 2]);
}

static int usage() {
    std::fprintf(stderr, "usage: smid_map hold range LO HI MS | hold bit B MS | probe MS | duo range LO HI MS\n");
    return 2;
}

int main(int argc, char** argv) {
    if (argc < 3) return usage();
    std::string mode = argv[1];
    int kind = 2;
    unsigned lo = 0, hi = 0;
    double ms = 0;
    if (mode == "probe" || mode == "probe2") {
        ms = std::atof(argv[2]);
    } else if ((mode == "hold" || mode == "duo") && !std::strcmp(argv[2], "range") && argc == 6) {
        kind = 0, lo = std::atoi(argv[3]), hi = std::atoi(argv[4]), ms = std::atof(argv[5]);
    } else if (mode == "hold" && !std::strcmp(argv[2], "bit") && argc == 5) {
        kind = 1, lo = std::atoi(argv[3]), ms = std::atof(argv[4]);
    } else {
        return usage();
    }
    unsigned long long spin = (unsigned long long)(ms * 1e6);
    enter_green();
    Launch a = prepare();
    if (mode == "duo") {
        Launch b = prepare();
        cudaStream_t s1, s2;
        CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
        occupy<<<a.grid, 32, a.smem, s1>>>(kind, lo, hi, spin, a.rec);
        CHECK(cudaGetLastError());
        // let the hold's blocks take their SMs before the probe's come
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, nullptr);
        occupy<<<b.grid, 32, b.smem, s2>>>(2, 0, 0, spin, b.rec);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        report("hold", a);
        report("probe", b);
        return 0;
    }
    if (mode == "probe2") {
        occupy<<<a.grid, 32, a.smem>>>(2, 0, 0, 10000000ull, a.rec);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        report("first", a);
        std::printf("probe ready\n");
        std::fflush(stdout);
        char line[64];
        if (!std::fgets(line, sizeof line, stdin)) return 1;
    }
    occupy<<<a.grid, 32, a.smem>>>(kind, lo, hi, spin, a.rec);
    CHECK(cudaGetLastError());
    if (mode == "hold") {
        std::printf("hold launched\n");
        std::fflush(stdout);
    }
    CHECK(cudaDeviceSynchronize());
    report(mode == "hold" ? "hold" : "probe", a);
    return 0;
}
