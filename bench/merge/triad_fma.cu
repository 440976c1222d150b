// GPU driver for golden/merge/triad_fma.MODE.cu: a complementary pair. triad4 (float4,
// 4x unrolled STREAM triad, 256 threads) saturates DRAM bandwidth on a fraction of the
// SMs; fma_chain (four FMA chains per thread, 256 threads) scales with SMs and barely
// touches memory. Same block size and similar registers, so the merged kernel costs
// neither kernel occupancy. See common.h for the commands.
#include MERGED
#include "common.h"

struct Case {
    static const char* name() { return "triad_fma"; }
    static const int kernels = 2;
    static const char* kernel(int k) { return k == 0 ? "triad4" : "fma_chain"; }

    int n4 = 0, n = 0, iters = 0;
    const float s = 0.75f;
    float4 *a = nullptr, *b = nullptr, *c = nullptr;
    float *in = nullptr, *out = nullptr;
    dim3 gt, bt, gf, bf;

    void init(Scale sc) {
        switch (sc) {
        case SMALL: n4 = (1 << 12) + 5, n = (1 << 12) + 3, iters = 16; break;
        case MEDIUM: n4 = (4 << 20) + 5, n = (256 << 10) + 3, iters = 256; break;
        case LARGE: n4 = 32 << 20, n = 1 << 20, iters = 2048; break;
        }
        std::vector<float> x((size_t)n4 * 4), y((size_t)n4 * 4), z(n);
        harness_fill_float(x.data(), x.size(), -1.0f, 1.0f);
        harness_fill_float(y.data(), y.size(), -1.0f, 1.0f);
        harness_fill_float(z.data(), z.size(), -1.0f, 1.0f);
        b = (float4*)dev_copy(x), c = (float4*)dev_copy(y), a = dev_alloc<float4>(n4);
        in = dev_copy(z), out = dev_alloc<float>(n);
        gt = dim3((n4 + 1023) / 1024), bt = dim3(256);
        gf = dim3((n + 255) / 256), bf = dim3(256);
    }
    void reset(cudaStream_t st) {
        CUDA_CHECK(cudaMemsetAsync(a, 0xff, (size_t)n4 * sizeof(float4), st));
        CUDA_CHECK(cudaMemsetAsync(out, 0xff, (size_t)n * sizeof(float), st));
    }
    void launch(int k, cudaStream_t st) {
        if (k == 0)
            triad4<<<gt, bt, 0, st>>>(a, b, c, s, n4);
        else
            fma_chain<<<gf, bf, 0, st>>>(out, in, n, iters);
    }
    cudaError_t merged(const unsigned* alloc, cudaStream_t st) {
        return slate_merged_triad4_fma_chain_launch_alloc(alloc, gt, bt, 0, gf, bf, 0, st, a, b, c, s, n4, out, in, n, iters);
    }
    void dump() {
        dump_dev("a", (const float*)a, (size_t)n4 * 4);
        dump_dev("out", out, (size_t)n);
    }
};

int main(int argc, char** argv) { return driver_main<Case>(argc, argv); }
