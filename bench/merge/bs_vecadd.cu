// GPU driver for golden/merge/bs_vecadd.MODE.cu: Liang et al.'s Fig. 2 pair, compute-bound
// Black-Scholes (128-thread blocks, grid-stride) next to a bandwidth-bound vector add
// (256 threads): half of every merged block is idle while it prices options.
#include MERGED
#include "common.h"

struct Case {
    static const char* name() { return "bs_vecadd"; }
    static const int kernels = 2;
    static const char* kernel(int k) { return k == 0 ? "black_scholes" : "vector_add"; }

    int nopt = 0, n = 0;
    const float rate = 0.02f, vol = 0.30f;
    float *call = nullptr, *put = nullptr, *spot = nullptr, *strike = nullptr, *years = nullptr;
    float *x = nullptr, *y = nullptr, *z = nullptr;
    dim3 gb, bb, gv, bv;

    void init(Scale s) {
        int grid = 0;
        switch (s) {
        case SMALL: nopt = 20000 + 3, n = (1 << 14) + 77, grid = 40; break;
        case MEDIUM: nopt = 2 * 1000 * 1000 + 3, n = (4 << 20) + 77, grid = 4096; break;
        case LARGE: nopt = 32 * 1000 * 1000, n = 128 << 20, grid = 16384; break;
        }
        std::vector<float> sp(nopt), st(nopt), yr(nopt), u(n), v(n);
        harness_fill_float(sp.data(), nopt, 5.0f, 30.0f);
        harness_fill_float(st.data(), nopt, 1.0f, 100.0f);
        harness_fill_float(yr.data(), nopt, 0.25f, 10.0f);
        harness_fill_float(u.data(), n, -1.0f, 1.0f);
        harness_fill_float(v.data(), n, -1.0f, 1.0f);
        spot = dev_copy(sp), strike = dev_copy(st), years = dev_copy(yr);
        call = dev_alloc<float>(nopt), put = dev_alloc<float>(nopt);
        x = dev_copy(u), y = dev_copy(v), z = dev_alloc<float>(n);
        gb = dim3(grid), bb = dim3(128);
        gv = dim3((n + 255) / 256), bv = dim3(256);
    }
    void reset(cudaStream_t s) {
        CUDA_CHECK(cudaMemsetAsync(call, 0xff, (size_t)nopt * sizeof(float), s));
        CUDA_CHECK(cudaMemsetAsync(put, 0xff, (size_t)nopt * sizeof(float), s));
        CUDA_CHECK(cudaMemsetAsync(z, 0xff, (size_t)n * sizeof(float), s));
    }
    void launch(int k, cudaStream_t s) {
        if (k == 0)
            black_scholes<<<gb, bb, 0, s>>>(call, put, spot, strike, years, rate, vol, nopt);
        else
            vector_add<<<gv, bv, 0, s>>>(x, y, z, n);
    }
    cudaError_t merged(const unsigned* alloc, cudaStream_t s) {
        return slate_merged_black_scholes_vector_add_launch_alloc(alloc, gb, bb, 0, gv, bv, 0, s,
                                                                  call, put, spot, strike, years, rate, vol, nopt, x, y, z, n);
    }
    void dump() {
        dump_dev("call", call, (size_t)nopt);
        dump_dev("put", put, (size_t)nopt);
        dump_dev("z", z, (size_t)n);
    }
};

int main(int argc, char** argv) { return driver_main<Case>(argc, argv); }
