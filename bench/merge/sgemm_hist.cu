// GPU driver for golden/merge/sgemm_hist*.MODE.cu: a 2-D 16x16 tiled SGEMM next to a
// 1-D byte histogram launched with 512-thread blocks, so in a merged block SGEMM's
// 256 threads run beside 256 idle ones. See common.h for the commands.
#include MERGED
#include "common.h"

struct Case {
    static const char* name() { return "sgemm_hist"; }
    static const int kernels = 2;
    static const char* kernel(int k) { return k == 0 ? "sgemm_tiled" : "histogram256"; }

    int M = 0, N = 0, K = 0, n = 0;
    const float alpha = 1.5f, beta = -0.5f;
    float *A = nullptr, *B = nullptr, *C = nullptr, *C0 = nullptr;
    unsigned char* data = nullptr;
    unsigned* hist = nullptr;
    dim3 gs, bs, gh, bh;

    void init(Scale s) {
        int hb = 0;
        switch (s) {
        case SMALL: M = 72, N = 88, K = 40, n = (1 << 16) + 13, hb = 12; break;
        case MEDIUM: M = 760, N = 776, K = 250, n = (8 << 20) + 13, hb = 512; break;
        case LARGE: M = 1536, N = 1536, K = 1536, n = 256 << 20, hb = 2048; break;
        }
        std::vector<float> a((size_t)M * K), b((size_t)K * N), c((size_t)M * N);
        harness_fill_float(a.data(), a.size(), -1.0f, 1.0f);
        harness_fill_float(b.data(), b.size(), -1.0f, 1.0f);
        harness_fill_float(c.data(), c.size(), -1.0f, 1.0f);
        std::vector<unsigned char> bytes(n);
        for (int i = 0; i < n; ++i) {
            unsigned r = harness_rng_u32();
            bytes[i] = (r % 10 < 3) ? 7 : (unsigned char)(r >> 8);  // bin 7 is hot
        }
        A = dev_copy(a), B = dev_copy(b), C0 = dev_copy(c), C = dev_alloc<float>(c.size());
        data = dev_copy(bytes), hist = dev_alloc<unsigned>(256);
        gs = dim3((N + 15) / 16, (M + 15) / 16), bs = dim3(16, 16);
        gh = dim3(hb), bh = dim3(512);
    }
    void reset(cudaStream_t s) {
        CUDA_CHECK(cudaMemcpyAsync(C, C0, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToDevice, s));
        CUDA_CHECK(cudaMemsetAsync(hist, 0, 256 * sizeof(unsigned), s));
    }
    void launch(int k, cudaStream_t s) {
        if (k == 0)
            sgemm_tiled<<<gs, bs, 0, s>>>(M, N, K, alpha, A, B, beta, C);
        else
            histogram256<<<gh, bh, 0, s>>>(data, n, hist);
    }
    cudaError_t merged(const unsigned* alloc, cudaStream_t s) {
        return slate_merged_sgemm_tiled_histogram256_launch_alloc(alloc, gs, bs, 0, gh, bh, 0, s,
                                                                  M, N, K, alpha, A, B, beta, C, data, n, hist);
    }
    void dump() {
        dump_dev("C", C, (size_t)M * N);
        dump_dev("hist", hist, 256);
    }
};

int main(int argc, char** argv) { return driver_main<Case>(argc, argv); }
