// GPU driver for golden/merge/transpose_reduce_hist.MODE.cu: three kernels, a 32x8 tiled
// transpose, a cooperative-groups block reduction (reduce_sum<256>) and a per-warp
// histogram in dynamic shared memory with 128-thread blocks (half of a merged block idle).
#include MERGED
#include "common.h"

struct Case {
    static const char* name() { return "transpose_reduce_hist"; }
    static const int kernels = 3;
    static const char* kernel(int k) { return k == 0 ? "transpose_tiled" : k == 1 ? "reduce_sum<256>" : "histogram256_warp"; }

    int w = 0, h = 0, nr = 0, nh = 0, rgrid = 0;
    float *tin = nullptr, *tout = nullptr, *rin = nullptr, *partial = nullptr;
    unsigned char* bytes = nullptr;
    unsigned* hist = nullptr;
    dim3 gt, bt, gr, br, gh, bh;
    size_t shh = 0;

    void init(Scale s) {
        int hgrid = 0;
        switch (s) {
        case SMALL: w = 70, h = 45, nr = 1 << 14, rgrid = 16, nh = (1 << 15) + 3, hgrid = 10; break;
        case MEDIUM: w = 2000, h = 1100, nr = 1 << 22, rgrid = 2048, nh = (4 << 20) + 3, hgrid = 1024; break;
        case LARGE: w = 8192, h = 8192, nr = 1 << 26, rgrid = 8192, nh = 128 << 20, hgrid = 4096; break;
        }
        std::vector<float> t((size_t)w * h), r(nr);
        harness_fill_float(t.data(), t.size(), -100.0f, 100.0f);
        harness_fill_float(r.data(), nr, 0.0f, 1.0f);
        std::vector<unsigned char> b(nh);
        for (int i = 0; i < nh; ++i) b[i] = (unsigned char)(harness_rng_u32() >> 13);
        tin = dev_copy(t), tout = dev_alloc<float>(t.size());
        rin = dev_copy(r), partial = dev_alloc<float>(rgrid);
        bytes = dev_copy(b), hist = dev_alloc<unsigned>(256);
        gt = dim3((w + 31) / 32, (h + 31) / 32), bt = dim3(32, 8);
        gr = dim3(rgrid), br = dim3(256);
        gh = dim3(hgrid), bh = dim3(128), shh = (128 / 32) * 256 * sizeof(unsigned);
    }
    void reset(cudaStream_t s) {
        CUDA_CHECK(cudaMemsetAsync(tout, 0xff, (size_t)w * h * sizeof(float), s));
        CUDA_CHECK(cudaMemsetAsync(partial, 0xff, (size_t)rgrid * sizeof(float), s));
        CUDA_CHECK(cudaMemsetAsync(hist, 0, 256 * sizeof(unsigned), s));
    }
    void launch(int k, cudaStream_t s) {
        if (k == 0)
            transpose_tiled<<<gt, bt, 0, s>>>(tout, tin, w, h);
        else if (k == 1)
            reduce_sum<256><<<gr, br, 0, s>>>(rin, partial, nr);
        else
            histogram256_warp<<<gh, bh, shh, s>>>(reinterpret_cast<const unsigned*>(bytes), bytes, nh, hist);
    }
    cudaError_t merged(const unsigned* alloc, cudaStream_t s) {
        return slate_merged_transpose_tiled_reduce_sum_256_histogram256_warp_launch_alloc(alloc, gt, bt, 0, gr, br, 0, gh, bh, shh, s,
            tout, tin, w, h, rin, partial, nr, reinterpret_cast<const unsigned*>(bytes), bytes, nh, hist);
    }
    void dump() {
        dump_dev("transposed", tout, (size_t)w * h);
        dump_dev("partial", partial, (size_t)rgrid);
        dump_dev("hist", hist, 256);
    }
};

int main(int argc, char** argv) { return driver_main<Case>(argc, argv); }
