// harness.h — shared helpers for the host harnesses of testdata/kernels/*.cu.
//
// CUDA_CHECK(expr)        abort with file:line and the CUDA error string (exit 2)
// harness_rng_*           deterministic splitmix64 PRNG, seeded from $HARNESS_SEED
// harness_fill_*          fill host arrays with reproducible values
// harness_dump(...)       append an output buffer to the file named by $HARNESS_OUT
// harness_pass/fail       print the verdict line the test driver looks for
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

#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

// -------------------------------------------------------------- checks ----

static inline int harness_pass() {
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
