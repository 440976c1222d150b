// common.h — the shared part of the merged-scheduler GPU drivers (bench/merge/*.cu).
//
// Each driver includes one merged file (golden/merge/CASE.MODE.cu, chosen with
// -DMERGED='"golden/merge/CASE.MODE.cu"') and defines a struct Case with:
//
//   static const char* name();               the case, e.g. "sgemm_hist"
//   static const int kernels;                how many kernels were merged
//   static const char* kernel(int k);        kernel k's name
//   void init(Scale s);                      allocate and fill the inputs
//   void reset(cudaStream_t s);              restore the outputs' initial contents
//   void launch(int k, cudaStream_t s);      launch original kernel k
//   cudaError_t merged(const unsigned* alloc, cudaStream_t s);   the merged launcher
//   void dump();                             copy the outputs back, harness_dump them
//
// and ends with `int main(int argc, char** argv) { return driver_main<Case>(argc, argv); }`.
//
// Commands:
//   DRIVER check sep               run the kernels one after another, dump ($HARNESS_OUT)
//   DRIVER check merged [ALLOC]    run the merged kernel three times (outputs reset before
//                                  each, so control blocks and maps are reused), dump the last
//   DRIVER bench [baselines]       time the merged kernel for the allocation sweep of
//                                  Liang et al.'s Fig. 2 and (worker modes) for the task
//                                  sizes $BENCH_ITERS; with "baselines" also the kernels
//                                  run alone, sequentially and on concurrent streams
// ALLOC: default (the allocation slatec was given), equal (an equal share), min0 (kernel 0
// gets 1 SM, the others split the rest), max0 (the others get 1 SM each), or a list a,b,...
// Sizes: $HARNESS_SCALE = small (sanitizers), medium (check; the default) or large (bench's default).
// Timing: CUDA events on one stream, $BENCH_WARMUP (2) warm-up runs, median of $BENCH_REPS (7);
// the sweep visits every $SWEEP_STEP-th allocation (default: about 32 points).
#pragma once

#include "harness.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

enum Scale { SMALL, MEDIUM, LARGE };

static inline Scale scale_from_env(Scale fallback) {
    const char* v = std::getenv("HARNESS_SCALE");
    if (!v || !*v) return fallback;
    if (!std::strcmp(v, "small")) return SMALL;
    if (!std::strcmp(v, "large")) return LARGE;
    return MEDIUM;
}

static inline int env_int(const char* name, int fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::atoi(v) : fallback;
}

static inline int device_sms() {
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    return sms;
}

// parse_alloc turns an ALLOC word into SMs per kernel; nullptr means the default.
static inline bool parse_alloc(const std::string& s, int n, int sms, std::vector<unsigned>* out) {
    out->assign(n, 0u);
    if (s == "default") return false;
    if (s == "equal") return true;
    if (s == "min0" || s == "max0") {
        if (n == 1) {
            (*out)[0] = s == "min0" ? 1u : (unsigned)sms;
            return true;
        }
        if (s == "min0") {
            (*out)[0] = 1;
            for (int i = 1; i < n; ++i) (*out)[i] = (unsigned)((sms - 1) / (n - 1));
        } else {
            for (int i = 1; i < n; ++i) (*out)[i] = 1;
            (*out)[0] = (unsigned)(sms - (n - 1));
        }
        return true;
    }
    size_t at = 0;
    for (int i = 0; i < n; ++i) {
        size_t comma = s.find(',', at);
        (*out)[i] = (unsigned)std::strtoul(s.substr(at, comma - at).c_str(), nullptr, 10);
        if (comma == std::string::npos) {
            if (i != n - 1) break;
        }
        at = comma + 1;
    }
    return true;
}

// A timed region on stream s: the median of reps runs after warm-up runs.
template <class F>
static double time_ms(cudaStream_t s, F run) {
    const int warmup = env_int("BENCH_WARMUP", 2), reps = std::max(1, env_int("BENCH_REPS", 7));
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    for (int i = 0; i < warmup; ++i) run();
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
        CUDA_CHECK(cudaEventRecord(a, s));
        run();
        CUDA_CHECK(cudaEventRecord(b, s));
        CUDA_CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

template <class Case>
static int check(Case& c, int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s check sep|merged [ALLOC]\n", argv[0]);
        return 2;
    }
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    c.init(scale_from_env(MEDIUM));
    if (!std::strcmp(argv[2], "sep")) {
        c.reset(s);
        for (int k = 0; k < Case::kernels; ++k) c.launch(k, s);
        CUDA_CHECK(cudaGetLastError());
    } else {
        std::vector<unsigned> alloc;
        const bool given = parse_alloc(argc > 3 ? argv[3] : "default", Case::kernels, device_sms(), &alloc);
        for (int rep = 0; rep < 3; ++rep) {
            c.reset(s);
            CUDA_CHECK(c.merged(given ? alloc.data() : nullptr, s));
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    c.dump();
    CUDA_CHECK(cudaStreamDestroy(s));
    return harness_pass();
}

// print_alloc_ms prints "BENCH CASE MODE WHAT A:B[:C] MS" (scripts/merge-bench-report.py).
static void print_alloc_ms(const char* cname, const char* what, const std::vector<unsigned>& alloc, double ms) {
    std::printf("BENCH %s %s %s", cname, MERGE_MODE, what);
    for (size_t k = 0; k < alloc.size(); ++k) std::printf("%c%u", k ? ':' : ' ', alloc[k]);
    std::printf(" %.4f\n", ms);
}

template <class Case>
static int bench(Case& c, int argc, char** argv) {
    const bool baselines = argc > 2 && !std::strcmp(argv[2], "baselines");
    const int sms = device_sms();
    const int n = Case::kernels;
    c.init(scale_from_env(LARGE));
    std::vector<cudaStream_t> st(n);
    for (auto& x : st) CUDA_CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    cudaStream_t s = st[0];
    std::vector<cudaEvent_t> ev(n);
    for (auto& e : ev) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    c.reset(s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    // $BENCH_CASE names the case in the output (a variant built from the same driver,
    // e.g. bs_vecadd_cap, must not mix its rows with the plain case's).
    const char* cname = std::getenv("BENCH_CASE") && *std::getenv("BENCH_CASE") ? std::getenv("BENCH_CASE") : Case::name();
    std::printf("BENCH %s %s sms %d\n", cname, MERGE_MODE, sms);
    // `bench planned A,B[,C]`: only the planner's allocation (scripts/merge-gpu.sh, phase plan).
    if (argc > 3 && !std::strcmp(argv[2], "planned")) {
        std::vector<unsigned> alloc;
        parse_alloc(argv[3], n, sms, &alloc);
        print_alloc_ms(cname, "planned", alloc, time_ms(s, [&] { CUDA_CHECK(c.merged(alloc.data(), s)); }));
        for (auto& x : st) CUDA_CHECK(cudaStreamDestroy(x));
        for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
        return 0;
    }
    if (baselines) {
        for (int k = 0; k < n; ++k) {
            const double ms = time_ms(s, [&] { c.launch(k, s); });
            std::printf("BENCH %s %s solo %s %.4f\n", cname, MERGE_MODE, Case::kernel(k), ms);
        }
        const double seq = time_ms(s, [&] {
            for (int k = 0; k < n; ++k) c.launch(k, s);
        });
        std::printf("BENCH %s %s sequential - %.4f\n", cname, MERGE_MODE, seq);
        // Concurrent streams: fork from s, one stream per kernel, join back into s.
        const double conc = time_ms(s, [&] {
            CUDA_CHECK(cudaEventRecord(ev[0], s));
            for (int k = 1; k < n; ++k) CUDA_CHECK(cudaStreamWaitEvent(st[k], ev[0], 0));
            for (int k = 0; k < n; ++k) c.launch(k, st[k]);
            for (int k = 1; k < n; ++k) {
                CUDA_CHECK(cudaEventRecord(ev[k], st[k]));
                CUDA_CHECK(cudaStreamWaitEvent(s, ev[k], 0));
            }
        });
        std::printf("BENCH %s %s concurrent - %.4f\n", cname, MERGE_MODE, conc);
    }
    const double eq = time_ms(s, [&] { CUDA_CHECK(c.merged(nullptr, s)); });
    std::printf("BENCH %s %s merged default %.4f\n", cname, MERGE_MODE, eq);
    // Task sizes (persistent, smrange, split): logical blocks per queue atomic, at the
    // default allocation; $BENCH_ITERS lists them (default "1 4 16 64", and "period" in
    // mode persistent: one leaky-bucket period per task), "none" skips.
    if (std::strcmp(MERGE_MODE, "interleaved") != 0) {
        const char* list = std::getenv("BENCH_ITERS");
        std::string its = list && *list ? list : std::strcmp(MERGE_MODE, "persistent") == 0 ? "1 4 16 64 period" : "1 4 16 64";
        if (its != "none") {
            size_t at = 0;
            while (at < its.size()) {
                size_t sp = its.find(' ', at);
                const std::string it = its.substr(at, sp == std::string::npos ? std::string::npos : sp - at);
                at = sp == std::string::npos ? its.size() : sp + 1;
                if (it.empty()) continue;
                setenv("SLATE_ITERS", it.c_str(), 1);
                const double ms = time_ms(s, [&] { CUDA_CHECK(c.merged(nullptr, s)); });
                std::printf("BENCH %s %s iters %s %.4f\n", cname, MERGE_MODE, it.c_str(), ms);
            }
            unsetenv("SLATE_ITERS");
        }
    }
    // Fig. 2: every split a : rest of the SMs (the rest shared equally by the other kernels).
    const int step = std::max(1, env_int("SWEEP_STEP", std::max(1, sms / 32)));
    for (int a = 1; a <= sms - (n - 1); a += step) {
        std::vector<unsigned> alloc(n);
        alloc[0] = (unsigned)a;
        const int rest = sms - a;
        for (int k = 1; k < n; ++k) alloc[k] = (unsigned)(rest / (n - 1) + (k - 1 < rest % (n - 1) ? 1 : 0));
        print_alloc_ms(cname, "sweep", alloc, time_ms(s, [&] { CUDA_CHECK(c.merged(alloc.data(), s)); }));
    }
    for (auto& x : st) CUDA_CHECK(cudaStreamDestroy(x));
    for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
    return 0;
}

template <class Case>
static int driver_main(int argc, char** argv) {
    Case c;
    if (argc >= 2 && !std::strcmp(argv[1], "check")) return check(c, argc, argv);
    if (argc >= 2 && !std::strcmp(argv[1], "bench")) return bench(c, argc, argv);
    std::fprintf(stderr, "usage: %s check sep|merged [ALLOC] | bench [baselines | planned ALLOC]\n", argv[0]);
    return 2;
}

// Device buffers, freed at exit by the driver's process end (the drivers are short-lived).
template <class T>
static T* dev_alloc(size_t n) {
    T* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T)));
    return p;
}

template <class T>
static T* dev_copy(const std::vector<T>& h) {
    T* p = dev_alloc<T>(h.size());
    CUDA_CHECK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return p;
}

template <class T>
static void dump_dev(const char* name, const T* d, size_t n, int tolerance = HARNESS_EXACT) {
    std::vector<T> h(n);
    CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    harness_dump(name, h.data(), n, tolerance);
}

#ifndef MERGE_MODE
#define MERGE_MODE "?"
#endif
