// sm_topology.cu: which SMs (by %smid) share a GPC, and which SMs the
// driver's green contexts give a partition of n SMs. slatec binds workers
// to SM-id ranges; green contexts pick their SMs by the hardware's
// topology. Two kernels side by side on two SM sets contend for the links
// they share (a GPC's path to L2), so the shape of a set matters, not only
// its size (bench/RESULTS.md, session of 2026-11-26, eleventh).
//
//   nvcc -std=c++17 -O2 -arch=sm_90 -o sm_topology sm_topology.cu
//   ./sm_topology [green sizes...]     (default: 8 16 32 40 48 64)
//
// GPCs: thread-block clusters are scheduled within one GPC, so launches of
// clusters of 2..16 blocks, each block recording its %smid, join SMs into
// GPCs (union-find over SMs seen in one cluster). Green contexts: the driver
// API through cudaGetDriverEntryPoint (no link to libcuda); a kernel
// launched with many blocks in each partition records the SMs it ran on.
// Output: one line per GPC, then per green size the partition's SMs and how
// many of them lie in each GPC; and the same for the contiguous id range
// [0, n-1] for comparison. Then, for each green size from 16 to 64, a float4
// triad on n SMs beside a tiled SGEMM on the rest (corun/kernels/corun.cu's
// two kernels, copied as device functions), median of 9: simple persistent
// workers bound by an SM mask on the id range, on green's sets and on whole
// GPCs (with the SGEMM worker reading a flag and counting as slatec's does:
// modes 1, 2), and the native kernels in green contexts.
//
// Build options: -DSIMPLE_MINB=B gives the simple SGEMM worker
// __launch_bounds__(256, B); -DSLATE_KERNELS='"FILE"' includes slatec gen's
// output for corun/kernels/corun.cu (the source inside corun/kernels_slate.go)
// and adds runs of slatec's own triad_f4 and gemm_tiled workers, launched as
// the Go runtime launches them, alone, together, each beside the other's
// simple worker, with their workers per SM sampled mid-run.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <vector>

// -DSLATE_KERNELS='"kernels_slate.cu"' (corun/kernels_slate.go's source,
// slatec gen's output) adds runs of slatec's own triad_f4 and gemm_tiled
// workers, launched here as the Go runtime launches them.
#ifdef SLATE_KERNELS
#include SLATE_KERNELS
#endif

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)
#define CU(x)                                                                   \
    do {                                                                        \
        CUresult r_ = (x);                                                      \
        if (r_ != CUDA_SUCCESS) {                                               \
            fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #x, \
                    (int)r_);                                                   \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

__device__ __forceinline__ unsigned int smid()
{
    unsigned int r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

// Each block spins a little so that a launch spreads over every SM it may use.
__global__ void record(unsigned int* out, long long spin)
{
    if (threadIdx.x == 0) {
        out[blockIdx.x] = smid();
        long long t0 = clock64();
        while (clock64() - t0 < spin) {
        }
    }
}

__global__ void record_cluster(unsigned int* out, long long spin)
{
    if (threadIdx.x == 0) {
        out[blockIdx.x] = smid();
        long long t0 = clock64();
        while (clock64() - t0 < spin) {
        }
    }
}


// ---- Interference: triad_f4 beside gemm_tiled (corun/kernels/corun.cu) on
// two SM sets, as persistent workers bound by an SM mask (the shape of
// slatec's worker: blocks outside the mask leave, the others take logical
// blocks from a counter), against the same kernels natively in green
// contexts. Sizes as the co-run benchmark's.

__device__ __forceinline__ bool in_mask(const unsigned int* mask)
{
    const unsigned int s = smid();
    return (mask[s >> 5] >> (s & 31)) & 1u;
}

__device__ __forceinline__ void triad_body(unsigned int bx, float4* __restrict__ a, const float4* __restrict__ b,
                                           const float4* __restrict__ c, float s, int n4)
{
    const int i = bx * blockDim.x + threadIdx.x;
    if (i < n4) {
        const float4 x = b[i];
        const float4 y = c[i];
        a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
    }
}

__device__ __forceinline__ void gemm_body(unsigned int bx, unsigned int by, const float* __restrict__ A,
                                          const float* __restrict__ B, float* __restrict__ C, int n,
                                          float (&ta)[16][16], float (&tb)[16][16])
{
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = by * 16 + ty;
    const int col = bx * 16 + tx;
    float acc = 0.f;
    for (int t = 0; t < n; t += 16) {
        ta[ty][tx] = A[row * n + t + tx];
        tb[ty][tx] = B[(t + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int j = 0; j < 16; ++j)
            acc += ta[ty][j] * tb[j][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

__global__ void __launch_bounds__(256) triad_native(float4* a, const float4* b, const float4* c, float s, int n4)
{
    triad_body(blockIdx.x, a, b, c, s, n4);
}

__global__ void __launch_bounds__(256) gemm_native(const float* A, const float* B, float* C, int n)
{
    __shared__ float ta[16][16], tb[16][16];
    gemm_body(blockIdx.x, blockIdx.y, A, B, C, n, ta, tb);
}

// iters logical blocks a claim, as slatec's queue worker (4 for the triad, 1 for the GEMM).
__global__ void __launch_bounds__(256) triad_worker(const unsigned int* mask, unsigned int* next, unsigned int total,
                                                    unsigned int iters, float4* a, const float4* b, const float4* c,
                                                    float s, int n4)
{
    __shared__ unsigned int first;
    if (!in_mask(mask))
        return;
    for (;;) {
        if (threadIdx.x == 0)
            first = atomicAdd(next, iters);
        __syncthreads();
        const unsigned int f = first;
        __syncthreads();
        if (f >= total)
            return;
        for (unsigned int id = f; id < f + iters && id < total; id++)
            triad_body(id, a, b, c, s, n4);
    }
}

// mode 1 reads a flag next to the counter before each claim (volatile, as
// slatec's worker reads its retreat flag); mode 2 also counts each finished
// block with an atomic (slatec's progress count).
#ifndef SIMPLE_MINB
#define SIMPLE_MINB 1
#endif
__global__ void __launch_bounds__(256, SIMPLE_MINB) gemm_worker(const unsigned int* mask, unsigned int* next, unsigned int gx,
                                                   unsigned int total, const float* A, const float* B, float* C, int n,
                                                   int mode)
{
    __shared__ float ta[16][16], tb[16][16];
    __shared__ unsigned int first;
    if (!in_mask(mask))
        return;
    for (;;) {
        if ((threadIdx.x | threadIdx.y) == 0) {
            if (mode >= 1 && *(volatile unsigned int*)(next + 2) != 0u)
                first = total;
            else
                first = atomicAdd(next, 1u);
        }
        __syncthreads();
        const unsigned int f = first;
        if (f >= total)
            return;
        gemm_body(f % gx, f / gx, A, B, C, n, ta, tb);
        __syncthreads();
        if (mode >= 2 && (threadIdx.x | threadIdx.y) == 0)
            atomicAdd(next + 4, 1u);
    }
}

struct UnionFind {
    std::vector<int> p;
    explicit UnionFind(int n) : p(n) { std::iota(p.begin(), p.end(), 0); }
    int find(int x) { return p[x] == x ? x : p[x] = find(p[x]); }
    void join(int a, int b) { p[find(a)] = find(b); }
};

template <class F>
static F entry(const char* name)
{
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion(name, &fn, 12040, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !fn) {
        fprintf(stderr, "no driver entry point %s\n", name);
        exit(1);
    }
    return (F)fn;
}

int main(int argc, char** argv)
{
    std::vector<int> sizes;
    for (int i = 1; i < argc; i++)
        sizes.push_back(atoi(argv[i]));
    if (sizes.empty())
        sizes = {8, 16, 32, 40, 48, 64};
    CK(cudaSetDevice(0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    printf("device %s, %d SMs\n", prop.name, sms);

    const int nblocks = sms * 64;
    unsigned int* d_out;
    CK(cudaMalloc(&d_out, nblocks * sizeof(unsigned int)));
    std::vector<unsigned int> h(nblocks);

    // GPCs from clusters.
    UnionFind uf(sms);
    std::vector<int> seen(sms, 0);
    for (int cs : {2, 4, 8, 16}) {
        if (cs == 16)
            CK(cudaFuncSetAttribute(record_cluster, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        for (int rep = 0; rep < 8; rep++) {
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(nblocks / cs * cs);
            cfg.blockDim = dim3(32);
            cudaLaunchAttribute at[1];
            at[0].id = cudaLaunchAttributeClusterDimension;
            at[0].val.clusterDim.x = cs;
            at[0].val.clusterDim.y = 1;
            at[0].val.clusterDim.z = 1;
            cfg.attrs = at;
            cfg.numAttrs = 1;
            cudaError_t e = cudaLaunchKernelEx(&cfg, record_cluster, d_out, 2000LL + 500 * rep);
            if (e != cudaSuccess) {
                printf("clusters of %d: %s\n", cs, cudaGetErrorString(e));
                cudaGetLastError();
                break;
            }
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(h.data(), d_out, cfg.gridDim.x * sizeof(unsigned int), cudaMemcpyDeviceToHost));
            for (unsigned int b = 0; b < cfg.gridDim.x; b += cs) {
                for (int j = 0; j < cs; j++) {
                    seen[h[b + j]] = 1;
                    uf.join(h[b], h[b + j]);
                }
            }
        }
    }
    std::map<int, std::vector<int>> gpcs;
    for (int s = 0; s < sms; s++)
        if (seen[s])
            gpcs[uf.find(s)].push_back(s);
    std::vector<int> gpc_of(sms, -1);
    int g = 0;
    printf("GPCs (from clusters): %zu\n", gpcs.size());
    for (auto& kv : gpcs) {
        printf("gpc %d (%zu SMs):", g, kv.second.size());
        for (int s : kv.second) {
            printf(" %d", s);
            gpc_of[s] = g;
        }
        printf("\n");
        g++;
    }
    const int ngpc = g;
    auto describe = [&](const char* what, const std::set<int>& set) {
        std::vector<int> per(ngpc + 1, 0);
        for (int s : set)
            per[gpc_of[s] < 0 ? ngpc : gpc_of[s]]++;
        printf("%s (%zu SMs): per GPC", what, set.size());
        for (int i = 0; i <= ngpc; i++)
            if (i < ngpc || per[i])
                printf(" %d", per[i]);
        printf("; SMs");
        for (int s : set)
            printf(" %d", s);
        printf("\n");
    };

    // Green partitions.
    auto getRes = entry<decltype(&cuDeviceGetDevResource)>("cuDeviceGetDevResource");
    auto split = entry<decltype(&cuDevSmResourceSplitByCount)>("cuDevSmResourceSplitByCount");
    auto genDesc = entry<decltype(&cuDevResourceGenerateDesc)>("cuDevResourceGenerateDesc");
    auto create = entry<decltype(&cuGreenCtxCreate)>("cuGreenCtxCreate");
    auto destroy = entry<decltype(&cuGreenCtxDestroy)>("cuGreenCtxDestroy");
    auto toCtx = entry<decltype(&cuCtxFromGreenCtx)>("cuCtxFromGreenCtx");
    auto setCur = entry<decltype(&cuCtxSetCurrent)>("cuCtxSetCurrent");
    auto getCur = entry<decltype(&cuCtxGetCurrent)>("cuCtxGetCurrent");
    CUcontext primary;
    CU(getCur(&primary));
    std::map<int, std::set<int>> green_first; // size -> the first partition's SMs
    for (int n : sizes) {
        CUdevResource in = {}, grp = {}, rem = {};
        CU(getRes(0, &in, CU_DEV_RESOURCE_TYPE_SM));
        unsigned int nb = 1;
        CU(split(&grp, &nb, &in, &rem, 0, n));
        CUdevResource parts[2] = {grp, rem};
        for (int p = 0; p < 2; p++) {
            CUdevResourceDesc desc;
            CU(genDesc(&desc, &parts[p], 1));
            CUgreenCtx gc;
            CU(create(&gc, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
            CUcontext c;
            CU(toCtx(&c, gc));
            CU(setCur(c));
            unsigned int* o;
            CK(cudaMalloc(&o, nblocks * sizeof(unsigned int)));
            std::set<int> set;
            for (int rep = 0; rep < 4; rep++) {
                record<<<nblocks, 32>>>(o, 20000);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(h.data(), o, nblocks * sizeof(unsigned int), cudaMemcpyDeviceToHost));
                for (int b = 0; b < nblocks; b++)
                    set.insert((int)h[b]);
            }
            CK(cudaFree(o));
            CU(setCur(primary));
            CU(destroy(gc));
            char what[64];
            snprintf(what, sizeof what, "green %d: part %d of %u", n, p, parts[p].sm.smCount);
            describe(what, set);
            if (p == 0)
                green_first[n] = set;
        }
        std::set<int> range;
        for (int s = 0; s < n; s++)
            range.insert(s);
        char what[64];
        snprintf(what, sizeof what, "range [0,%d]", n - 1);
        describe(what, range);
    }
    // Interference runs: triad on n SMs, gemm on the rest.
    const int n4 = 1 << 26, gn = 2048, gx = gn / 16, gtotal = gx * gx, ttotal = n4 / 256;
    float4 *ta, *tb, *tc;
    float *A, *B, *C;
    CK(cudaMalloc(&ta, (size_t)n4 * 16));
    CK(cudaMalloc(&tb, (size_t)n4 * 16));
    CK(cudaMalloc(&tc, (size_t)n4 * 16));
    CK(cudaMemset(tb, 0, (size_t)n4 * 16));
    CK(cudaMemset(tc, 0, (size_t)n4 * 16));
    CK(cudaMalloc(&A, (size_t)gn * gn * 4));
    CK(cudaMalloc(&B, (size_t)gn * gn * 4));
    CK(cudaMalloc(&C, (size_t)gn * gn * 4));
    CK(cudaMemset(A, 0, (size_t)gn * gn * 4));
    CK(cudaMemset(B, 0, (size_t)gn * gn * 4));
    unsigned int *masks, *counters;
    CK(cudaMalloc(&masks, 2 * 8 * sizeof(unsigned int)));
    CK(cudaMalloc(&counters, 8 * sizeof(unsigned int)));
    int occT = 0, occG = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occT, triad_worker, 256, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occG, gemm_worker, 256, 0));
    cudaStream_t s0, s1;
    CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    cudaEvent_t e[4];
    for (auto& ev : e)
        CK(cudaEventCreate(&ev));
    // Evicts L2 between runs.
    char* flush;
    const size_t flushBytes = 256u << 20;
    CK(cudaMalloc(&flush, flushBytes));
    auto mask_of = [&](const std::set<int>& set) {
        std::vector<unsigned int> m(8, 0);
        for (int x : set)
            m[x >> 5] |= 1u << (x & 31);
        return m;
    };
    auto rest_of = [&](const std::set<int>& set) {
        std::set<int> r;
        for (int x = 0; x < sms; x++)
            if (!set.count(x))
                r.insert(x);
        return r;
    };
    // One run of both workers on SM sets st and sg: {triad ms, gemm ms, makespan ms}.
    auto run_workers = [&](const std::set<int>& st, const std::set<int>& sg, bool withT, bool withG, int mode = 0) {
        std::vector<unsigned int> m = mask_of(st), mg = mask_of(sg);
        m.insert(m.end(), mg.begin(), mg.end());
        CK(cudaMemcpy(masks, m.data(), 16 * sizeof(unsigned int), cudaMemcpyHostToDevice));
        CK(cudaMemset(counters, 0, 8 * sizeof(unsigned int)));
        CK(cudaMemset(flush, 1, flushBytes));
        CK(cudaDeviceSynchronize());
        CK(cudaEventRecord(e[0], s0));
        if (withT)
            triad_worker<<<occT * sms, 256, 0, s0>>>(masks, counters, ttotal, 4, ta, tb, tc, 2.5f, n4);
        CK(cudaEventRecord(e[1], s0));
        CK(cudaStreamWaitEvent(s1, e[0]));
        if (withG)
            gemm_worker<<<occG * sms, dim3(16, 16), 0, s1>>>(masks + 8, counters + 1, gx, gtotal, A, B, C, gn, mode);
        CK(cudaEventRecord(e[2], s1));
        CK(cudaDeviceSynchronize());
        float t = 0, g = 0;
        CK(cudaEventElapsedTime(&t, e[0], e[1]));
        CK(cudaEventElapsedTime(&g, e[0], e[2]));
        return std::vector<float>{t, g, std::max(t, g)};
    };
#ifdef SLATE_KERNELS
    bool sample_ranks = false;
    // slatec's workers on SM ranges of places: the places are the order
    // `order` (SM at each place), written into each control block.
    slate_ctl* ctls;
    CK(cudaMalloc(&ctls, 2 * sizeof(slate_ctl)));
    int occST = 0, occSG = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occST, triad_f4__slate, 256, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occSG, gemm_tiled__slate, 256, 0));
    // mix: 0 both slatec's; 1 slatec's triad beside the simple GEMM worker;
    // 2 the simple triad worker beside slatec's GEMM (id ranges).
    auto run_slate = [&](const std::vector<int>& order, int n, bool withT, bool withG, int mix = 0) {
        std::vector<slate_ctl> h(2);
        memset(h.data(), 0, 2 * sizeof(slate_ctl));
        for (int p = 0; p < (int)order.size(); p++)
            if (order[p] != p)
                h[0].sm_place[order[p]] = h[1].sm_place[order[p]] = (unsigned char)(p + 1);
        CK(cudaMemcpy(ctls, h.data(), 2 * sizeof(slate_ctl), cudaMemcpyHostToDevice));
        std::vector<unsigned int> m(16, 0);
        for (int x = 0; x < sms; x++)
            m[(x < n ? 0 : 8) + (x >> 5)] |= 1u << (x & 31);
        CK(cudaMemcpy(masks, m.data(), 16 * sizeof(unsigned int), cudaMemcpyHostToDevice));
        CK(cudaMemset(counters, 0, 8 * sizeof(unsigned int)));
        slate_cfg ct = {}, cg = {};
        slate::set_grid(&ct, dim3(ttotal));
        ct.total = ttotal;
        ct.iters = 4;
        ct.sm_low = 0;
        ct.sm_high = n - 1;
        ct.flags |= SLATE_FLAG_PROGRESS;
        ct.workers = occST * sms;
        slate::set_grid(&cg, dim3(gx, gx));
        cg.total = gtotal;
        cg.iters = 1;
        cg.sm_low = n;
        cg.sm_high = sms - 1;
        cg.flags |= SLATE_FLAG_PROGRESS;
        cg.workers = occSG * sms;
        CK(cudaMemset(flush, 1, flushBytes));
        CK(cudaDeviceSynchronize());
        CK(cudaEventRecord(e[0], s0));
        if (withT && mix == 2)
            triad_worker<<<occT * sms, 256, 0, s0>>>(masks, counters, ttotal, 4, ta, tb, tc, 2.5f, n4);
        else if (withT)
            triad_f4__slate<<<ct.workers, 256, 0, s0>>>(ctls, ct, ta, tb, tc, 2.5f, n4);
        CK(cudaEventRecord(e[1], s0));
        CK(cudaStreamWaitEvent(s1, e[0]));
        if (withG && mix == 1)
            gemm_worker<<<occG * sms, dim3(16, 16), 0, s1>>>(masks + 8, counters + 1, gx, gtotal, A, B, C, gn, 0);
        else if (withG)
            gemm_tiled__slate<<<cg.workers, dim3(16, 16), 0, s1>>>(ctls + 1, cg, A, B, C, gn);
        CK(cudaEventRecord(e[2], s1));
        if (sample_ranks && withG && mix != 1) {
            // Workers per SM of the GEMM's range mid-run (its control block's
            // sm_rank), read beside the kernels.
            static unsigned int* hr = nullptr;
            if (!hr)
                CK(cudaMallocHost(&hr, 256 * sizeof(unsigned int)));
            cudaStream_t s2;
            CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
            const auto t0 = std::chrono::steady_clock::now();
            while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(800)) {
            }
            CK(cudaMemcpyAsync(hr, ctls[1].sm_rank, 256 * sizeof(unsigned int), cudaMemcpyDeviceToHost, s2));
            CK(cudaStreamSynchronize(s2));
            std::map<unsigned int, int> hist;
            for (int x = n; x < sms; x++)
                hist[hr[order[x]]]++;
            printf("   gemm workers per SM at ~0.8 ms (mix %d):", mix);
            for (auto& kv : hist)
                printf(" %ux%d", kv.first, kv.second);
            printf("\n");
            CK(cudaStreamDestroy(s2));
        }
        CK(cudaDeviceSynchronize());
        float t = 0, g = 0;
        CK(cudaEventElapsedTime(&t, e[0], e[1]));
        CK(cudaEventElapsedTime(&g, e[0], e[2]));
        return std::vector<float>{t, g, std::max(t, g)};
    };
#endif
    // The same kernels natively, each in a green context (part 0: the triad).
    auto run_green = [&](int n, bool withT, bool withG) {
        CUdevResource in = {}, grp = {}, rem = {};
        CU(getRes(0, &in, CU_DEV_RESOURCE_TYPE_SM));
        unsigned int nb = 1;
        CU(split(&grp, &nb, &in, &rem, 0, n));
        CUdevResource parts[2] = {grp, rem};
        CUgreenCtx gc[2];
        CUcontext cx[2];
        cudaStream_t st[2];
        cudaEvent_t ev[2][2];
        for (int p = 0; p < 2; p++) {
            CUdevResourceDesc desc;
            CU(genDesc(&desc, &parts[p], 1));
            CU(create(&gc[p], desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
            CU(toCtx(&cx[p], gc[p]));
            CU(setCur(cx[p]));
            CK(cudaStreamCreateWithFlags(&st[p], cudaStreamNonBlocking));
            CK(cudaEventCreate(&ev[p][0]));
            CK(cudaEventCreate(&ev[p][1]));
            // Load the kernels in this context before timing.
            if (p == 0)
                triad_native<<<1, 256, 0, st[p]>>>(ta, tb, tc, 2.5f, 0);
            else
                gemm_native<<<1, dim3(16, 16), 0, st[p]>>>(A, B, C, 16);
            CK(cudaStreamSynchronize(st[p]));
        }
        CU(setCur(primary));
        CK(cudaMemset(flush, 1, flushBytes));
        CK(cudaDeviceSynchronize());
        CU(setCur(cx[0]));
        CK(cudaEventRecord(ev[0][0], st[0]));
        if (withT)
            triad_native<<<ttotal, 256, 0, st[0]>>>(ta, tb, tc, 2.5f, n4);
        CK(cudaEventRecord(ev[0][1], st[0]));
        CU(setCur(cx[1]));
        CK(cudaEventRecord(ev[1][0], st[1]));
        if (withG)
            gemm_native<<<dim3(gx, gx), dim3(16, 16), 0, st[1]>>>(A, B, C, gn);
        CK(cudaEventRecord(ev[1][1], st[1]));
        float t = 0, g = 0;
        CU(setCur(cx[0]));
        CK(cudaEventSynchronize(ev[0][1]));
        CK(cudaEventElapsedTime(&t, ev[0][0], ev[0][1]));
        CU(setCur(cx[1]));
        CK(cudaEventSynchronize(ev[1][1]));
        CK(cudaEventElapsedTime(&g, ev[1][0], ev[1][1]));
        for (int p = 0; p < 2; p++) {
            CU(setCur(cx[p]));
            CK(cudaStreamDestroy(st[p]));
            CK(cudaEventDestroy(ev[p][0]));
            CK(cudaEventDestroy(ev[p][1]));
        }
        CU(setCur(primary));
        for (int p = 0; p < 2; p++)
            CU(destroy(gc[p]));
        return std::vector<float>{t, g, std::max(t, g)};
    };
    auto median = [](std::vector<float> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    const int reps = 9;
    printf("\ninterference: triad_f4 on n SMs beside gemm_tiled on the rest, median of %d (ms; triad, gemm, makespan)\n", reps);
    for (auto& kv : green_first) {
        const int n = kv.first;
        if (n < 16 || n > 64)
            continue;
        std::set<int> range;
        for (int x = 0; x < n; x++)
            range.insert(x);
        // Whole GPCs first, in the order found, then the rest of the last one.
        std::set<int> compact;
        for (auto& gp : gpcs)
            for (int x : gp.second)
                if ((int)compact.size() < n)
                    compact.insert(x);
        describe("gpc-compact", compact);
        struct Cfg {
            const char* name;
            int kind; // 0 workers on range, 1 workers on green's sets, 2 green contexts, 3 workers on whole GPCs,
                      // 4/5 whole GPCs with the GEMM worker's mode 1/2
            bool t, g;
        } cfgs[] = {{"workers, id range, both", 0, true, true}, {"workers, green sets, both", 1, true, true},
                    {"green contexts, both", 2, true, true},   {"workers, id range, triad", 0, true, false},
                    {"workers, id range, gemm", 0, false, true}, {"workers, green sets, triad", 1, true, false},
                    {"workers, green sets, gemm", 1, false, true}, {"green contexts, triad", 2, true, false},
                    {"green contexts, gemm", 2, false, true},  {"workers, gpc-compact, both", 3, true, true},
                    {"workers, gpc-compact, triad", 3, true, false}, {"workers, gpc-compact, gemm", 3, false, true},
                    {"gpc-compact, flag read, both", 4, true, true}, {"gpc-compact, flag+count, both", 5, true, true},
                    {"gpc-compact, flag+count, gemm", 5, false, true},
#ifdef SLATE_KERNELS
                    {"slatec workers, id, both", 6, true, true}, {"slatec workers, gpc, both", 7, true, true},
                    {"slatec workers, id, triad", 6, true, false}, {"slatec workers, id, gemm", 6, false, true},
                    {"slatec triad + simple gemm", 8, true, true}, {"simple triad + slatec gemm", 9, true, true},
#endif
        };
        std::vector<std::vector<float>> res(sizeof cfgs / sizeof cfgs[0], std::vector<float>());
        std::vector<std::vector<std::vector<float>>> all(sizeof cfgs / sizeof cfgs[0]);
        for (int r = 0; r < reps; r++) {
            for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
                const Cfg& f = cfgs[c];
                std::vector<float> v;
                if (f.kind == 0)
                    v = run_workers(range, rest_of(range), f.t, f.g);
                else if (f.kind == 1)
                    v = run_workers(kv.second, rest_of(kv.second), f.t, f.g);
                else if (f.kind == 3)
                    v = run_workers(compact, rest_of(compact), f.t, f.g);
                else if (f.kind == 4 || f.kind == 5)
                    v = run_workers(compact, rest_of(compact), f.t, f.g, f.kind - 3);
#ifdef SLATE_KERNELS
                else if (f.kind == 6) {
                    std::vector<int> id(sms);
                    std::iota(id.begin(), id.end(), 0);
                    v = run_slate(id, n, f.t, f.g);
                } else if (f.kind == 7) {
                    std::vector<int> ord(compact.begin(), compact.end());
                    for (int x : rest_of(compact))
                        ord.push_back(x);
                    v = run_slate(ord, n, f.t, f.g);
                } else if (f.kind == 8 || f.kind == 9) {
                    std::vector<int> id(sms);
                    std::iota(id.begin(), id.end(), 0);
                    v = run_slate(id, n, f.t, f.g, f.kind - 7);
                }
#endif
                else
                    v = run_green(n, f.t, f.g);
                all[c].push_back(v);
            }
        }
#ifdef SLATE_KERNELS
        {
            std::vector<int> id(sms);
            std::iota(id.begin(), id.end(), 0);
            sample_ranks = true;
            run_slate(id, n, true, true, 0);
            run_slate(id, n, true, true, 2);
            run_slate(id, n, false, true, 0);
            sample_ranks = false;
        }
#endif
        for (size_t c = 0; c < all.size(); c++) {
            std::vector<float> t, g, m;
            for (auto& v : all[c]) {
                t.push_back(v[0]);
                g.push_back(v[1]);
                m.push_back(v[2]);
            }
            printf("n=%-3d %-28s triad %.4f  gemm %.4f  makespan %.4f\n", n, cfgs[c].name,
                   cfgs[c].t ? median(t) : 0.f, cfgs[c].g ? median(g) : 0.f, median(m));
        }
    }
    return 0;
}
