// harness.h — shared helpers for the host harnesses of testdata/kernels/*.cu.
//
// CUDA_CHECK(expr)        abort with file:line and the CUDA error string (exit 2)
// harness_rng_*           deterministic splitmix64 PRNG, seeded from $HARNESS_SEED
// harness_fill_*          fill host arrays with reproducible values
// harness_dump(...)       append an output buffer to the file named by $HARNESS_OUT
// harness_pass/fail       print the verdict line the test driver looks for
// harness_timed(label,fn) run fn() once, or time it when $HARNESS_REPS is set (GPU time per run)
// harness_timed_reset     the same for a phase that is not idempotent
//                         ($HARNESS_SPAN: harness_pass prints the timed phases' wall-clock span;
//                         $HARNESS_GATE=DIR:N: the first timed phase waits until N programs are ready;
//                         $HARNESS_HOLD=1: each round's runs held back until all are enqueued)
// harness_scale()         problem-size divisor from $HARNESS_SCALE
//
// Dump record (little endian, appended; remove the file before a run):
//   u32 name_len | name bytes | u32 dtype | u32 tolerance | u64 count | raw data
// dtype: 1=f32 2=f64 3=i32 4=u32 5=i64 6=u64 7=u8.
// tolerance: 0 = the buffer must be bit-identical between two runs;
//            1 = float results legitimately depend on block execution order
//                (e.g. float atomics across blocks): compare with a tolerance.
// scripts/cmpdump.py compares two such files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#define CUDA_CHECK(expr)                                                      \
    do {                                                                      \
        cudaError_t harness_err_ = (expr);                                    \
        if (harness_err_ != cudaSuccess) {                                    \
            std::fprintf(stderr, "%s:%d: CUDA error in %s: %s\n", __FILE__,   \
                         __LINE__, #expr, cudaGetErrorString(harness_err_));  \
            std::exit(2);                                                     \
        }                                                                     \
    } while (0)

// ---------------------------------------------------------------- PRNG ----

static const uint64_t HARNESS_DEFAULT_SEED = 0x5EEDC0DE12345678ull;

static inline uint64_t& harness_rng_state() {
    static uint64_t state = 0;
    static bool seeded = false;
    if (!seeded) {
        seeded = true;
        state = HARNESS_DEFAULT_SEED;
        if (const char* s = std::getenv("HARNESS_SEED")) {
            if (*s) state = std::strtoull(s, nullptr, 0);
        }
    }
    return state;
}

// splitmix64: one 64-bit output per call, full period, good enough for test data.
static inline uint64_t harness_rng_u64() {
    uint64_t z = (harness_rng_state() += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint32_t harness_rng_u32() { return (uint32_t)(harness_rng_u64() >> 32); }

// Uniform in [0, 1) with 24 random bits: exactly representable as a float.
static inline float harness_rng_float01() {
    return (float)(harness_rng_u64() >> 40) * (1.0f / 16777216.0f);
}

// Uniform in [0, 1) with 53 random bits.
static inline double harness_rng_double01() {
    return (double)(harness_rng_u64() >> 11) * (1.0 / 9007199254740992.0);
}

static inline void harness_fill_float(float* p, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; ++i) p[i] = lo + (hi - lo) * harness_rng_float01();
}

static inline void harness_fill_double(double* p, size_t n, double lo, double hi) {
    for (size_t i = 0; i < n; ++i) p[i] = lo + (hi - lo) * harness_rng_double01();
}

// Integers uniform in [lo, hi] (inclusive; hi >= lo).
static inline void harness_fill_int(int* p, size_t n, int lo, int hi) {
    uint64_t span = (uint64_t)((int64_t)hi - (int64_t)lo) + 1;
    for (size_t i = 0; i < n; ++i) p[i] = (int)((int64_t)lo + (int64_t)(harness_rng_u64() % span));
}

static inline void harness_fill_uint(unsigned* p, size_t n, unsigned lo, unsigned hi) {
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    for (size_t i = 0; i < n; ++i) p[i] = lo + (unsigned)(harness_rng_u64() % span);
}

// ---------------------------------------------------------------- dump ----

enum { HARNESS_EXACT = 0, HARNESS_TOLERANT = 1 };

template <class T> struct harness_dtype;  // no code for other types: a compile error
template <> struct harness_dtype<float> { static const uint32_t code = 1; };
template <> struct harness_dtype<double> { static const uint32_t code = 2; };
template <> struct harness_dtype<int> { static const uint32_t code = 3; };
template <> struct harness_dtype<unsigned> { static const uint32_t code = 4; };
template <> struct harness_dtype<long> { static const uint32_t code = sizeof(long) == 8 ? 5 : 3; };
template <> struct harness_dtype<long long> { static const uint32_t code = 5; };
template <> struct harness_dtype<unsigned long> { static const uint32_t code = sizeof(long) == 8 ? 6 : 4; };
template <> struct harness_dtype<unsigned long long> { static const uint32_t code = 6; };
template <> struct harness_dtype<unsigned char> { static const uint32_t code = 7; };

static inline void harness_put_u32(FILE* f, uint32_t v) {
    unsigned char b[4];
    for (int i = 0; i < 4; ++i) b[i] = (unsigned char)(v >> (8 * i));
    std::fwrite(b, 1, 4, f);
}

static inline void harness_put_u64(FILE* f, uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = (unsigned char)(v >> (8 * i));
    std::fwrite(b, 1, 8, f);
}

// Appends one record; the element bytes are written as they are in memory
// (every CUDA host is little endian). Does nothing when $HARNESS_OUT is unset.
template <class T>
static inline void harness_dump(const char* name, const T* host_ptr, size_t n,
                                int tolerance = HARNESS_EXACT) {
    const char* path = std::getenv("HARNESS_OUT");
    if (!path || !*path) return;
    FILE* f = std::fopen(path, "ab");
    if (!f) {
        std::fprintf(stderr, "harness_dump: cannot open %s\n", path);
        std::exit(2);
    }
    uint32_t len = (uint32_t)std::strlen(name);
    harness_put_u32(f, len);
    std::fwrite(name, 1, len, f);
    harness_put_u32(f, harness_dtype<T>::code);
    harness_put_u32(f, tolerance ? 1u : 0u);
    harness_put_u64(f, (uint64_t)n);
    if (n && std::fwrite(host_ptr, sizeof(T), n, f) != n) {
        std::fprintf(stderr, "harness_dump: short write to %s\n", path);
        std::exit(2);
    }
    if (std::fclose(f) != 0) {
        std::fprintf(stderr, "harness_dump: cannot close %s\n", path);
        std::exit(2);
    }
}

// -------------------------------------------------------------- timing ----

// $HARNESS_REPS as a count >= 1, or 0 when unset (or not a positive integer).
static inline int harness_reps() {
    static int reps = -1;
    if (reps < 0) {
        reps = 0;
        if (const char* s = std::getenv("HARNESS_REPS")) {
            char* end = nullptr;
            long v = std::strtol(s, &end, 10);
            if (*s && end && *end == '\0' && v >= 1) reps = v > 1000000 ? 1000000 : (int)v;
        }
    }
    return reps;
}

// Runs fn(), normally a lambda doing the kernel launches of one logical phase.
//
// $HARNESS_REPS unset: fn() runs exactly once, with no extra synchronisation
// and no output, so the harness behaves as if the launches were written inline.
//
// $HARNESS_REPS=N (N >= 1): fn() runs once as a warm-up (then the device is
// synchronised), then N more times, each between two cudaEventRecord calls on
// the legacy default stream (stream 0) followed by cudaEventSynchronize; prints
//   HARNESS_TIME <label> <median_us> <min_us>
// on stdout (label: no spaces; unique within the program). The buffers fn()
// writes hold the result of its last run, so fn() must be idempotent: a
// harness with in-place updates or accumulating atomics either restores its
// inputs inside fn() (the restore is then timed too) or uses
// harness_timed_reset. Work on other streams is not ordered with the events on
// stream 0 (never for non-blocking streams), so a harness that launches on
// other streams ends fn() with cudaDeviceSynchronize() (or synchronises each
// of its streams): the timed region then includes that synchronisation.
// $HARNESS_MIN_US (optional): raise the runs per round so that a round lasts
// at least this long (a calibration round of $HARNESS_REPS runs decides), so
// that 5 us kernels are timed over enough launches to resolve a few percent.
static inline double harness_min_us() {
    const char* s = std::getenv("HARNESS_MIN_US");
    return s && *s ? std::strtod(s, nullptr) : 0.0;
}

// $HARNESS_HOLD=1 (a diagnostic, issue 10): each round's runs are enqueued
// behind a kernel that holds the GPU until the host has enqueued them all,
// so the time per run is the GPU's alone (kernels and the gaps between
// them), not bounded by the host's launch rate: a launch takes ~4.4 us to
// enqueue on the H100 machine, so 4-5 us kernels are timed by their host
// otherwise. A watchdog thread opens the gate after 200 ms whatever the
// host is doing (a run that synchronises, a full launch queue); harness_timed
// then tries fewer runs a round, and a timer whose rounds still were not
// held prints HARNESS_HOLD_LATE <label>: its time includes the host's.
static inline bool harness_hold() {
    static const bool on = [] {
        const char* s = std::getenv("HARNESS_HOLD");
        return s && *s && std::strcmp(s, "0") != 0;
    }();
    return on;
}

static inline bool& harness_hold_late() {
    static bool late = false;
    return late;
}

static __global__ void harness_hold_kernel(const volatile int* open) {
    while (*open == 0) __nanosleep(1000);
}

// harness_round_us times `reps` back-to-back runs of fn() between one pair
// of events and returns the GPU time per run in microseconds.
template <class F>
static inline float harness_round_us(cudaEvent_t start, cudaEvent_t stop, int reps, F& fn) {
    static volatile int* open = nullptr;
    const bool held = harness_hold();
    std::atomic<bool> enqueued{false}, late{false};
    std::thread watchdog;
    if (held) {
        if (open == nullptr) CUDA_CHECK(cudaHostAlloc((void**)&open, sizeof(int), cudaHostAllocMapped));
        *open = 0;
        harness_hold_kernel<<<1, 1>>>(open);
        CUDA_CHECK(cudaGetLastError());
        watchdog = std::thread([&] {
            const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
            while (!enqueued.load() && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            late = !enqueued.load();
            *open = 1;
        });
    }
    CUDA_CHECK(cudaEventRecord(start, 0));
    for (int r = 0; r < reps; ++r) fn();
    CUDA_CHECK(cudaEventRecord(stop, 0));
    if (held) {
        enqueued = true;
        watchdog.join();
        if (late) harness_hold_late() = true;
    }
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return 1000.0f * ms / (float)reps;
}

// The wall-clock span (microseconds since the epoch, comparable across
// processes) from the start of the first timed phase to the end of the last:
// $HARNESS_SPAN set prints it at harness_pass, as
//   HARNESS_SPAN <start_us> <end_us>
// so that two programs run at once can be timed by their GPU work, without
// their processes' start (CUDA initialisation, input generation).
static inline long long harness_now_us() {
    return (long long)std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}
static inline long long& harness_span_start() {
    static long long t = 0;
    return t;
}
static inline long long& harness_span_end() {
    static long long t = 0;
    return t;
}

// $HARNESS_GATE=DIR:N is a start line for N programs run at once: the first
// timed phase of each announces itself in DIR (a file ready.<pid>) and waits
// until N have, so that the span of the pair is their GPU work together, not
// the difference of their processes' start-up (CUDA initialisation and input
// generation differ by tens of ms run to run). The wait polls every 20 us
// and gives up after 30 s (a partner that failed), saying so on stderr.
static inline void harness_gate() {
    const char* g = std::getenv("HARNESS_GATE");
    if (!g || !*g)
        return;
    const std::string spec(g);
    const size_t colon = spec.rfind(':');
    const std::string dir = spec.substr(0, colon);
    const long want = colon == std::string::npos ? 1 : std::atol(spec.c_str() + colon + 1);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::ofstream(dir + "/ready." + std::to_string((long long)getpid())).put('\n');
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
        long n = 0;
        for (const auto& e : std::filesystem::directory_iterator(dir, ec))
            n += e.path().filename().string().rfind("ready.", 0) == 0;
        if (n >= want)
            return;
        if (std::chrono::steady_clock::now() > deadline) {
            std::fprintf(stderr, "harness: gate %s: %ld of %ld ready after 30 s; going on\n", dir.c_str(), n, want);
            return;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
}

template <class F>
static inline void harness_timed(const char* label, F fn) {
    int reps = harness_reps();
    if (reps == 0) {
        fn();
        return;
    }
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    if (harness_span_start() == 0) {
        harness_gate();
        harness_span_start() = harness_now_us();
    }
    // With $HARNESS_SPAN, the wall-clock time of the warm-up and of each
    // round too, in the order they ran (where a program run beside others
    // spent its span): HARNESS_WALL <label> <warmup_us> <round_us>...
    const bool wall = std::getenv("HARNESS_SPAN") != nullptr;
    std::vector<long long> walls;
    long long w0 = harness_now_us();
    fn();  // warm-up: module loading, first-touch, caches
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    walls.push_back(harness_now_us() - w0);
    if (const double min_us = harness_min_us(); min_us > 0.0) {
        const double per_run = harness_round_us(start, stop, reps, fn);  // calibration
        if (per_run > 0.0 && per_run * reps < min_us)
            reps = (int)std::min(100000.0, std::ceil(min_us / per_run));
    }
    // Held rounds must fit the launch queue: a round the host could not
    // enqueue whole is tried again with a quarter of the runs (a phase of
    // many launches: an elimination's, a multi-pass scan's), down to one.
    if (harness_hold()) {
        harness_hold_late() = false;
        harness_round_us(start, stop, reps, fn);
        while (harness_hold_late() && reps > 1) {
            reps = std::max(1, reps / 4);
            harness_hold_late() = false;
            harness_round_us(start, stop, reps, fn);
        }
        harness_hold_late() = false;
    }
    // Three rounds of `reps` back-to-back runs between one pair of events:
    // the host enqueues ahead of the GPU, so the time per run is the GPU's
    // (kernels and the gaps between them), not the host's launch latency.
    // Printed: the median round and the best round, per run.
    std::vector<float> us;
    for (int round = 0; round < 3; ++round) {
        w0 = harness_now_us();
        us.push_back(harness_round_us(start, stop, reps, fn));
        walls.push_back(harness_now_us() - w0);
    }
    CUDA_CHECK(cudaGetLastError());
    harness_span_end() = harness_now_us();
    std::sort(us.begin(), us.end());
    std::printf("HARNESS_TIME %s %.2f %.2f\n", label, (double)us[1], (double)us[0]);
    if (harness_hold_late()) std::printf("HARNESS_HOLD_LATE %s\n", label);
    harness_hold_late() = false;
    if (wall) {
        std::printf("HARNESS_WALL %s", label);
        for (long long w : walls) std::printf(" %lld", w);
        std::printf("\n");
    }
    std::fflush(stdout);
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
}

// For a phase that is not idempotent (in-place updates, counters that atomics
// accumulate into, sorts in place). $HARNESS_REPS unset: runs fn() once, like
// harness_timed. $HARNESS_REPS set: times fn() as harness_timed does (the timed
// runs see the data earlier runs left behind), then calls reset() to put back
// what fn() changed (typically the setup's own copies and memsets), then runs
// fn() once more, untimed, for the checked and dumped results.
template <class F, class R>
static inline void harness_timed_reset(const char* label, F fn, R reset) {
    if (harness_reps() == 0) {
        fn();
        return;
    }
    harness_timed(label, fn);
    reset();
    CUDA_CHECK(cudaGetLastError());
    fn();
}

// Problem-size divisor from $HARNESS_SCALE: unset (or empty) -> 1, "small" -> 8,
// a positive integer -> that integer; anything else -> 1 with a warning on stderr.
// Harnesses divide simple sizes by it (e.g. to keep compute-sanitizer racecheck
// fast) and must still self-check correctly at any scale.
static inline int harness_scale() {
    static int scale = 0;
    if (scale == 0) {
        scale = 1;
        const char* s = std::getenv("HARNESS_SCALE");
        if (s && *s) {
            char* end = nullptr;
            long v = std::strtol(s, &end, 10);
            if (std::strcmp(s, "small") == 0) scale = 8;
            else if (end && *end == '\0' && v >= 1) scale = v > (1 << 30) ? (1 << 30) : (int)v;
            else std::fprintf(stderr, "harness: ignoring HARNESS_SCALE=%s\n", s);
        }
    }
    return scale;
}

// n / harness_scale() rounded down to a multiple of `multiple`, and never below
// `multiple` (so never below 1).
static inline long long harness_scaled(long long n, long long multiple = 1) {
    long long v = n / harness_scale() / multiple * multiple;
    return v < multiple ? multiple : v;
}

// -------------------------------------------------------------- checks ----

static inline int harness_pass() {
    if (std::getenv("HARNESS_SPAN") && harness_span_start() != 0)
        std::printf("HARNESS_SPAN %lld %lld\n", harness_span_start(), harness_span_end());
    std::printf("PASS\n");
    std::fflush(stdout);
    return 0;
}

// Prints "FAIL: <message>" and returns 1, so a harness can `return harness_fail(...)`.
static inline int harness_fail(const char* fmt, ...) {
    std::va_list ap;
    va_start(ap, fmt);
    std::printf("FAIL: ");
    std::vprintf(fmt, ap);
    std::printf("\n");
    va_end(ap);
    std::fflush(stdout);
    return 1;
}

// |got - want| <= abs_tol + rel_tol * |want| for every element; reports the first miss.
template <class T>
static inline bool harness_close(const char* what, const T* got, const T* want, size_t n,
                                 double rel_tol, double abs_tol) {
    for (size_t i = 0; i < n; ++i) {
        double g = (double)got[i], w = (double)want[i];
        if (!(std::fabs(g - w) <= abs_tol + rel_tol * std::fabs(w))) {
            std::printf("%s[%zu]: got %.9g, want %.9g\n", what, i, g, w);
            return false;
        }
    }
    return true;
}

// Exact equality for integer buffers; reports the first miss.
template <class T>
static inline bool harness_equal(const char* what, const T* got, const T* want, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        if (got[i] != want[i]) {
            std::printf("%s[%zu]: got %lld, want %lld\n", what, i, (long long)got[i],
                        (long long)want[i]);
            return false;
        }
    }
    return true;
}
