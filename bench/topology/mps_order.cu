// mps_order: does a kernel from one MPS client wait behind the grids another
// client queued earlier, even when SMs are free? (issue 13, fourteenth
// session: a latency-bound program of 48 blocks did almost nothing while a
// program that queues 20 launches of FMA chains at a time ran, under MPS and
// with static SM ranges alike.) scripts/mps-order.sh runs it.
//
//   mps_order hog BLOCKS LAUNCHES_AHEAD ROUNDS [THREADS [BLOCK_US]]
//       ROUNDS times: LAUNCHES_AHEAD launches of a kernel of BLOCKS blocks of
//       THREADS threads (default 1024; the hardware spreads them one an SM,
//       so with BLOCKS below the GPU's SMs the others stay free), each block
//       spinning BLOCK_US (default 1000), then a synchronize. (A hog of small
//       blocks on every SM leaves nearly all of each SM free: if the probe
//       still waits, an SM running one client's block takes none of
//       another's. Many short blocks, e.g. 16384 of 256 threads for 70 us,
//       make a kernel of many waves, as an FMA-chain program's.)
//       Prints "hog ready" and waits for the file $MPS_ORDER_GO.
//   mps_order probe COUNT [BLOCKS THREADS BLOCK_US]
//       COUNT times, 2 ms apart: one launch of a small kernel (default one
//       block, one warp, 5 us), timed from the host's launch call to its end
//       (event synchronize). Prints each latency and p50/p90/max in us.
//
//   mps_order chain COUNT BLOCKS THREADS ITERS
//       COUNT launches of a latency-bound kernel (chain), $MPS_ORDER_GAP_MS
//       apart (default 2), timed by its
//       blocks' own clocks, with each block's SM: where its blocks ran and
//       how long each took beside the other client's work. (spin's time is
//       fixed in cycles, so it sees dispatch waits but not a block slowed
//       by the SM's other warps.)
//
//   mps_order duo COUNT BLOCKS THREADS ITERS HOG_BLOCKS HOG_AHEAD HOG_ITERS
//       the chain probe beside fma_hog grids in the same process (two
//       streams): the same question without MPS. ($MPS_ORDER_HOG_KERNEL=fma
//       makes `hog` launch fma_hog, BLOCK_US read as its iters.)
//   Range-bound workers (see chain_tasks): $MPS_ORDER_RANGE=LO:HI for the
//   chain probe, $MPS_ORDER_HOG_RANGE=LO:HI for the FMA hog, in any mode;
//   $MPS_ORDER_GRID / $MPS_ORDER_HOG_GRID their grids (default: the wave).
//
// If grids dispatch in submission order across clients, the probe waits
// for the hog's queue even with BLOCKS well below the GPU's SMs; if not,
// its latency stays near its own run time whatever the hog queues.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <atomic>
#include <vector>

#define CHECK(x)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

// spin keeps one block busy for about `cycles` clock cycles.
__global__ void spin(long long cycles, int* out)
{
    const long long t0 = clock64();
    int x = threadIdx.x;
    while (clock64() - t0 < cycles)
        x = x * 1664525 + 1013904223;
    if (x == 42)
        out[0] = x; // never, but the loop is not dead code
}

// chain is a latency-bound block (each thread one dependent chain of
// reciprocal square roots and FMAs, as serve_dep_ms's kernel): unlike spin,
// whose time is fixed in clock cycles, its time grows when it gets fewer
// issue slots. Each block records its SM and its start and end (ns).
// chain_work runs one chain block and records it as record `slot`.
static __device__ __forceinline__ void chain_work(int iters, float* out, unsigned long long* rec, unsigned int slot)
{
    unsigned long long t0, t1;
    unsigned int sm;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    const float c = 0.5f + 0.001f * (float)threadIdx.x;
    float x = 1.0f;
    for (int t = 0; t < iters; ++t)
        x = rsqrtf(fmaf(x, x, c)) + 0.25f;
    if (x == 42.0f)
        out[0] = x; // never, but the loop is not dead code
    __syncthreads();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (threadIdx.x == 0) {
        rec[3 * slot] = t0;
        rec[3 * slot + 1] = t1;
        rec[3 * slot + 2] = sm;
    }
}

__global__ void chain(int iters, float* out, unsigned long long* rec) { chain_work(iters, out, rec, blockIdx.x); }

// fma_hog is an FMA-bound block (each thread four independent FMA chains of
// iters steps, as serve_fma_ms's kernel): with $MPS_ORDER_HOG_KERNEL=fma
// the hog launches it, BLOCK_US read as its iters.
static __device__ __forceinline__ void fma_work(int iters, float* out)
{
    float a = threadIdx.x * 1e-3f, b = a + 0.25f, c = a - 0.25f, d = 0.5f * a;
    for (int t = 0; t < iters; ++t) {
        a = fmaf(a, 0.999f, 0.001f);
        b = fmaf(b, 0.999f, 0.001f);
        c = fmaf(c, 0.999f, 0.001f);
        d = fmaf(d, 0.999f, 0.001f);
    }
    if (a + b + c + d == 42.0f)
        out[0] = a; // never, but the loop is not dead code
}

__global__ void fma_hog(int iters, float* out) { fma_work(iters, out); }

static bool fma_kind()
{
    const char* k = std::getenv("MPS_ORDER_HOG_KERNEL");
    return k && !std::strcmp(k, "fma");
}

// ---- Range-bound workers, as slatec's queue worker runs a kernel on an SM
// range (without slatec: the same pattern, so that what the hardware does
// with it is seen apart from the launcher). A block whose SM is outside
// [lo, hi] exits at once; the others take tasks (one task = one block of the
// plain kernel) from a counter until none is left. $MPS_ORDER_RANGE=LO:HI
// makes the chain probe such a worker, $MPS_ORDER_HOG_RANGE=LO:HI the FMA
// hog; $MPS_ORDER_GRID / $MPS_ORDER_HOG_GRID set the grid (default the
// whole wave: the occupancy times the SMs, as slatec launches a partial
// range).
struct sm_range {
    unsigned int lo, hi;
    bool on;
};

static sm_range range_from_env(const char* env)
{
    sm_range r = {0u, 0xffffffffu, false};
    const char* v = std::getenv(env);
    if (v && *v && std::sscanf(v, "%u:%u", &r.lo, &r.hi) == 2)
        r.on = true;
    return r;
}

static __device__ __forceinline__ unsigned int my_smid()
{
    unsigned int sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    return sm;
}

// chain_tasks: the chain probe as a range-bound worker; each task records
// its SM and its start and end as chain's blocks do.
__global__ void chain_tasks(int iters, float* out, unsigned long long* rec, unsigned int* next, unsigned int tasks,
                            unsigned int lo, unsigned int hi)
{
    __shared__ unsigned int task;
    const unsigned int sm = my_smid();
    if (sm < lo || sm > hi)
        return;
    for (;;) {
        if (threadIdx.x == 0)
            task = atomicAdd(next, 1u);
        __syncthreads();
        const unsigned int t = task;
        if (t >= tasks)
            return;
        chain_work(iters, out, rec, t); // ends with a barrier: every thread has read task
    }
}

// fma_tasks: the FMA hog as a range-bound worker (tasks = the plain hog's blocks).
__global__ void fma_tasks(int iters, float* out, unsigned int* next, unsigned int tasks, unsigned int lo, unsigned int hi)
{
    __shared__ unsigned int task;
    const unsigned int sm = my_smid();
    if (sm < lo || sm > hi)
        return;
    for (;;) {
        if (threadIdx.x == 0)
            task = atomicAdd(next, 1u);
        __syncthreads();
        if (task >= tasks)
            return;
        fma_work(iters, out);
        __syncthreads();
    }
}

// wave_grid is the grid of a range-bound worker: $ENV, else the whole wave.
template <typename K>
static int wave_grid(const char* env, K kernel, int threads)
{
    if (const char* g = std::getenv(env))
        if (std::atoi(g) > 0)
            return std::atoi(g);
    int per_sm = 0, sms = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    return per_sm * sms;
}

static double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// wait_for_go waits for the file $MPS_ORDER_GO (the script's start line).
static void wait_for_go()
{
    const char* go = std::getenv("MPS_ORDER_GO");
    if (!go)
        return;
    for (;;) {
        if (std::FILE* f = std::fopen(go, "r")) {
            std::fclose(f);
            return;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}

static long long cycles_for_us(double us)
{
    int khz = 0;
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    return (long long)(us * (double)khz / 1000.0);
}

// stream_from_env: the default stream, or with $ENV=high a new stream at the
// device's greatest priority ($ENV=low: its least; the default stream has the
// least). $MPS_ORDER_PRIORITY is the probe's, $MPS_ORDER_HOG_PRIORITY the hog's.
static cudaStream_t stream_from_env(const char* env)
{
    const char* p = std::getenv(env);
    if (!p || !*p)
        return 0;
    int least = 0, greatest = 0;
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, !std::strcmp(p, "high") ? greatest : least));
    return s;
}

// hog_launch queues one hog grid on st: spin for `cycles`, or fma_hog, or
// (with $MPS_ORDER_HOG_RANGE) fma_tasks on that range, its counter zeroed
// on st first.
static void hog_launch(int blocks, int threads, long long cycles, int iters, int* out, float* fout, cudaStream_t st)
{
    static const sm_range r = range_from_env("MPS_ORDER_HOG_RANGE");
    if (fma_kind() && r.on) {
        static unsigned int* next = nullptr;
        static int grid = 0;
        if (!next) {
            CHECK(cudaMalloc(&next, sizeof(unsigned int)));
            grid = wave_grid("MPS_ORDER_HOG_GRID", fma_tasks, threads);
        }
        CHECK(cudaMemsetAsync(next, 0, sizeof(unsigned int), st));
        fma_tasks<<<grid, threads, 0, st>>>(iters, fout, next, (unsigned int)blocks, r.lo, r.hi);
    } else if (fma_kind())
        fma_hog<<<blocks, threads, 0, st>>>(iters, fout);
    else
        spin<<<blocks, threads, 0, st>>>(cycles, out);
}

static int hog(int blocks, int ahead, int rounds, int threads, double block_us)
{
    int* out;
    float* fout;
    CHECK(cudaMalloc(&out, sizeof(int)));
    CHECK(cudaMalloc(&fout, sizeof(float)));
    const long long c = cycles_for_us(block_us);
    hog_launch(blocks, threads, c / 100, (int)block_us, out, fout, 0); // load the module, warm up
    CHECK(cudaDeviceSynchronize());
    std::printf("hog ready\n");
    std::fflush(stdout);
    wait_for_go();
    const cudaStream_t st = stream_from_env("MPS_ORDER_HOG_PRIORITY");
    const double t0 = now_us();
    for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < ahead; ++i)
            hog_launch(blocks, threads, c, (int)block_us, out, fout, st);
        CHECK(cudaDeviceSynchronize());
    }
    std::printf("hog blocks=%d threads=%d ahead=%d rounds=%d ms=%.1f\n", blocks, threads, ahead, rounds, (now_us() - t0) / 1000.0);
    return 0;
}

// With $MPS_ORDER_BURST=B (default 1), each probe is B back-to-back launches
// (as a program that queues its work), with an event after each: printed are
// the burst's latency from the first launch call to the last kernel's end, and
// the GPU time between consecutive events (a kernel's own run plus any wait to
// be dispatched), p50 and max over all kernels.
static int probe(int count, int blocks, int threads, double block_us)
{
    int* out;
    CHECK(cudaMalloc(&out, sizeof(int)));
    const char* b = std::getenv("MPS_ORDER_BURST");
    const int burst = b && std::atoi(b) > 0 ? std::atoi(b) : 1;
    const cudaStream_t st = stream_from_env("MPS_ORDER_PRIORITY");
    std::vector<cudaEvent_t> ev(burst + 1);
    for (auto& e : ev)
        CHECK(cudaEventCreateWithFlags(&e, cudaEventBlockingSync));
    const long long c = cycles_for_us(block_us);
    spin<<<blocks, threads, 0, st>>>(c, out); // load the module before the hog starts
    CHECK(cudaDeviceSynchronize());
    std::printf("probe ready\n");
    std::fflush(stdout);
    wait_for_go();
    std::this_thread::sleep_for(std::chrono::milliseconds(5)); // the hog's first queue is in
    std::vector<double> us, host, gpu;
    for (int i = 0; i < count; ++i) {
        const double t0 = now_us();
        CHECK(cudaEventRecord(ev[0], st));
        for (int k = 0; k < burst; ++k) {
            spin<<<blocks, threads, 0, st>>>(c, out);
            CHECK(cudaEventRecord(ev[k + 1], st));
        }
        host.push_back(now_us() - t0);
        CHECK(cudaEventSynchronize(ev[burst]));
        us.push_back(now_us() - t0);
        for (int k = 0; k < burst; ++k) {
            float ms = 0.0f;
            CHECK(cudaEventElapsedTime(&ms, ev[k], ev[k + 1]));
            gpu.push_back(1000.0 * ms);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::sort(us.begin(), us.end());
    std::sort(host.begin(), host.end());
    std::sort(gpu.begin(), gpu.end());
    std::printf("probe n=%d burst=%d p50_us=%.0f p90_us=%.0f max_us=%.0f host_launch_p50_us=%.0f host_launch_max_us=%.0f kernel_p50_us=%.0f kernel_max_us=%.0f\n",
                count, burst, us[us.size() / 2], us[us.size() * 9 / 10], us.back(), host[host.size() / 2], host.back(),
                gpu[gpu.size() / 2], gpu.back());
    return 0;
}

// chain_probe: COUNT launches of chain (BLOCKS of THREADS, ITERS steps),
// 2 ms apart, each timed by its blocks' own records: per launch the span
// (first start to last end), the start spread and the block times; printed
// p50/max over launches and, for the slowest launch, each block's SM and time.
static int chain_probe(int count, int blocks, int threads, int iters, cudaStream_t st)
{
    float* out;
    unsigned long long* rec;
    CHECK(cudaMalloc(&out, sizeof(float)));
    CHECK(cudaMalloc(&rec, sizeof(unsigned long long) * 3 * blocks));
    std::vector<unsigned long long> h(3 * blocks);
    // With $MPS_ORDER_RANGE the probe is a range-bound worker (chain_tasks).
    const sm_range r = range_from_env("MPS_ORDER_RANGE");
    unsigned int* next = nullptr;
    int grid = blocks;
    if (r.on) {
        CHECK(cudaMalloc(&next, sizeof(unsigned int)));
        grid = wave_grid("MPS_ORDER_GRID", chain_tasks, threads);
    }
    auto launch = [&] {
        if (r.on) {
            CHECK(cudaMemsetAsync(next, 0, sizeof(unsigned int), st));
            chain_tasks<<<grid, threads, 0, st>>>(iters, out, rec, next, (unsigned int)blocks, r.lo, r.hi);
        } else
            chain<<<blocks, threads, 0, st>>>(iters, out, rec);
    };
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    launch(); // load the module before the hog starts
    CHECK(cudaDeviceSynchronize());
    std::printf("probe ready\n");
    std::fflush(stdout);
    wait_for_go();
    if (const char* d = std::getenv("MPS_ORDER_DELAY_MS"))
        std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(d)));
    const char* g = std::getenv("MPS_ORDER_GAP_MS");
    const int gap_ms = g && *g ? std::atoi(g) : 2;
    std::vector<double> span, spread, block, event;
    double worst = -1.0;
    std::vector<unsigned long long> worst_rec;
    // The wall clock (us since the epoch, as the harness's HARNESS_SPAN) at
    // the first launch and after the last, to line the spans up with a hog's.
    const long long wall0 = std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::system_clock::now().time_since_epoch()).count();
    for (int i = 0; i < count; ++i) {
        CHECK(cudaEventRecord(e0, st));
        launch();
        CHECK(cudaEventRecord(e1, st));
        CHECK(cudaStreamSynchronize(st));
        float ms = 0.0f;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        event.push_back(1000.0 * ms);
        CHECK(cudaMemcpyAsync(h.data(), rec, sizeof(unsigned long long) * 3 * blocks, cudaMemcpyDeviceToHost, st));
        CHECK(cudaStreamSynchronize(st));
        unsigned long long s0 = ~0ull, s1 = 0, e1 = 0;
        for (int b = 0; b < blocks; ++b) {
            s0 = std::min(s0, h[3 * b]);
            s1 = std::max(s1, h[3 * b]);
            e1 = std::max(e1, h[3 * b + 1]);
            block.push_back((h[3 * b + 1] - h[3 * b]) / 1000.0);
        }
        span.push_back((e1 - s0) / 1000.0);
        spread.push_back((s1 - s0) / 1000.0);
        if (span.back() > worst) {
            worst = span.back();
            worst_rec = h;
        }
        if (gap_ms > 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
    }
    auto p = [](std::vector<double> v, double q) { std::sort(v.begin(), v.end()); return v[(size_t)(q * (v.size() - 1))]; };
    std::printf("chain n=%d blocks=%d%s span_p50_us=%.0f span_max_us=%.0f spread_p50_us=%.0f block_p50_us=%.0f block_max_us=%.0f event_p50_us=%.0f event_max_us=%.0f\n",
                count, blocks, r.on ? " (range-bound worker)" : "", p(span, 0.5), p(span, 1.0), p(spread, 0.5), p(block, 0.5),
                p(block, 1.0), p(event, 0.5), p(event, 1.0));
    if (r.on)
        std::printf("chain worker range %u:%u grid %d\n", r.lo, r.hi, grid);
    const long long wall1 = std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::system_clock::now().time_since_epoch()).count();
    std::printf("chain wall_us %lld %lld\n", wall0, wall1);
    std::printf("chain spans_ms:");
    for (double v : span)
        std::printf(" %.1f", v / 1000.0);
    std::printf("\n");
    std::printf("chain events_ms:");
    for (double v : event)
        std::printf(" %.1f", v / 1000.0);
    std::printf("\n");
    std::printf("chain slowest:");
    for (int b = 0; b < blocks; ++b)
        std::printf(" %llu:%.0f", worst_rec[3 * b + 2], (worst_rec[3 * b + 1] - worst_rec[3 * b]) / 1000.0);
    std::printf("\n");
    return 0;
}

// duo: the chain probe and an FMA hog in ONE process, on two non-blocking
// streams (no MPS involved): does a latency-bound block slow beside
// FMA-bound warps of the same context as it does beside another client's?
// A host thread keeps HOG_AHEAD launches of fma_hog (HOG_BLOCKS of 256
// threads, HOG_ITERS steps) queued until the probe is done.
static int duo(int count, int blocks, int threads, int iters, int hog_blocks, int hog_ahead, int hog_iters)
{
    float* fout;
    CHECK(cudaMalloc(&fout, sizeof(float)));
    cudaStream_t hs, ps;
    CHECK(cudaStreamCreateWithFlags(&hs, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&ps, cudaStreamNonBlocking));
    int* iout;
    CHECK(cudaMalloc(&iout, sizeof(int)));
    setenv("MPS_ORDER_HOG_KERNEL", "fma", 1); // hog_launch: fma_hog, or fma_tasks with $MPS_ORDER_HOG_RANGE
    hog_launch(hog_blocks, 256, 0, hog_iters, iout, fout, hs);
    CHECK(cudaDeviceSynchronize());
    std::atomic<bool> stop(false);
    int rounds = 0;
    std::thread h([&] {
        while (!stop.load()) {
            for (int i = 0; i < hog_ahead; ++i)
                hog_launch(hog_blocks, 256, 0, hog_iters, iout, fout, hs);
            cudaStreamSynchronize(hs);
            ++rounds;
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int rc = chain_probe(count, blocks, threads, iters, ps);
    stop = true;
    h.join();
    std::printf("duo hog rounds=%d\n", rounds);
    return rc;
}

int main(int argc, char** argv)
{
    if (argc == 6 && !std::strcmp(argv[1], "chain"))
        return chain_probe(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]),
                           stream_from_env("MPS_ORDER_PRIORITY"));
    if (argc == 9 && !std::strcmp(argv[1], "duo"))
        return duo(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]), std::atoi(argv[6]),
                   std::atoi(argv[7]), std::atoi(argv[8]));
    if (argc >= 5 && argc <= 7 && !std::strcmp(argv[1], "hog"))
        return hog(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), argc >= 6 ? std::atoi(argv[5]) : 1024,
                   argc == 7 ? std::atof(argv[6]) : 1000.0);
    if (argc == 3 && !std::strcmp(argv[1], "probe"))
        return probe(std::atoi(argv[2]), 1, 32, 5.0);
    if (argc == 6 && !std::strcmp(argv[1], "probe"))
        return probe(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), std::atof(argv[5]));
    std::fprintf(stderr, "usage: mps_order hog BLOCKS LAUNCHES_AHEAD ROUNDS [THREADS [BLOCK_US]] | mps_order probe COUNT [BLOCKS THREADS BLOCK_US]\n");
    return 2;
}
