// GPU driver for golden/merge/early_transpose.MODE.cu: two kernels whose threads return
// before barriers (pair_then_quad with 128-thread blocks, neighbor_mix with 64) merged with
// a 32x8 transpose: the returned threads and the idle ones (beyond 128 or 64 of a merged
// block's 256) must all reach the barriers. Sizes leave a partial last block.
#include MERGED
#include "common.h"

struct Case {
    static const char* name() { return "early_transpose"; }
    static const int kernels = 3;
    static const char* kernel(int k) { return k == 0 ? "pair_then_quad" : k == 1 ? "neighbor_mix" : "transpose_tiled"; }

    int n = 0, w = 0, h = 0;
    float *fin = nullptr, *fout = nullptr, *tin = nullptr, *tout = nullptr;
    int *iin = nullptr, *iout = nullptr;
    dim3 gq, bq, gm, bm, gt, bt;

    void init(Scale s) {
        switch (s) {
        case SMALL: n = 3000 + 77, w = 70, h = 45; break;
        case MEDIUM: n = 600000 + 77, w = 2000, h = 1100; break;
        case LARGE: n = (16 << 20) + 77, w = 8192, h = 4096; break;
        }
        std::vector<float> f(n), t((size_t)w * h);
        std::vector<int> ii(n);
        harness_fill_float(f.data(), n, -1.0f, 1.0f);
        harness_fill_int(ii.data(), n, -1000, 1000);
        harness_fill_float(t.data(), t.size(), -100.0f, 100.0f);
        fin = dev_copy(f), fout = dev_alloc<float>(n), iin = dev_copy(ii), iout = dev_alloc<int>(n);
        tin = dev_copy(t), tout = dev_alloc<float>(t.size());
        gq = dim3((n + 127) / 128), bq = dim3(128);
        gm = dim3((n + 63) / 64), bm = dim3(64);
        gt = dim3((w + 31) / 32, (h + 31) / 32), bt = dim3(32, 8);
    }
    void reset(cudaStream_t s) {
        CUDA_CHECK(cudaMemsetAsync(fout, 0xff, (size_t)n * sizeof(float), s));
        CUDA_CHECK(cudaMemsetAsync(iout, 0xff, (size_t)n * sizeof(int), s));
        CUDA_CHECK(cudaMemsetAsync(tout, 0xff, (size_t)w * h * sizeof(float), s));
    }
    void launch(int k, cudaStream_t s) {
        if (k == 0)
            pair_then_quad<<<gq, bq, 0, s>>>(fin, fout, n);
        else if (k == 1)
            neighbor_mix<<<gm, bm, 0, s>>>(iin, iout, n);
        else
            transpose_tiled<<<gt, bt, 0, s>>>(tout, tin, w, h);
    }
    cudaError_t merged(const unsigned* alloc, cudaStream_t s) {
        return slate_merged_pair_then_quad_neighbor_mix_transpose_tiled_launch_alloc(alloc, gq, bq, 0, gm, bm, 0, gt, bt, 0, s,
            fin, fout, n, iin, iout, n, tout, tin, w, h);
    }
    void dump() {
        dump_dev("pair_then_quad", fout, (size_t)n);
        dump_dev("neighbor_mix", iout, (size_t)n);
        dump_dev("transposed", tout, (size_t)w * h);
    }
};

int main(int argc, char** argv) { return driver_main<Case>(argc, argv); }
