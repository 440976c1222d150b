// GPU driver for golden/merge/triad_sgemm.MODE.cu: a complementary pair. triad4 (float4,
// 4x unrolled STREAM triad, 256 threads) saturates DRAM bandwidth on a fraction of the
// SMs; the 16x16 tiled SGEMM (256 threads, shared-memory tiles) is compute bound and
// scales with SMs. See common.h for the commands.
#include MERGED
#include "common.h"

struct Case {
    static const char* name() { return "triad_sgemm"; }
    static const int kernels = 2;
    static const char* kernel(int k) { return k == 0 ? "triad4" : "sgemm_tiled"; }

    int n4 = 0, M = 0, N = 0, K = 0;
    const float s = 0.75f, alpha = 1.0f, beta = 0.25f;
    float4 *a = nullptr, *b = nullptr, *c = nullptr;
    float *A = nullptr, *B = nullptr, *C = nullptr, *C0 = nullptr;
    dim3 gt, bt, gs, bs;

    void init(Scale sc) {
        switch (sc) {
        case SMALL: n4 = (1 << 12) + 5, M = 40, N = 56, K = 33; break;
        case MEDIUM: n4 = (4 << 20) + 5, M = 520, N = 600, K = 130; break;
        case LARGE: n4 = 32 << 20, M = 1536, N = 1536, K = 1536; break;
        }
        std::vector<float> x((size_t)n4 * 4), y((size_t)n4 * 4), ma((size_t)M * K), mb((size_t)K * N), mc((size_t)M * N);
        harness_fill_float(x.data(), x.size(), -1.0f, 1.0f);
        harness_fill_float(y.data(), y.size(), -1.0f, 1.0f);
        harness_fill_float(ma.data(), ma.size(), -1.0f, 1.0f);
        harness_fill_float(mb.data(), mb.size(), -1.0f, 1.0f);
        harness_fill_float(mc.data(), mc.size(), -1.0f, 1.0f);
        b = (float4*)dev_copy(x), c = (float4*)dev_copy(y), a = dev_alloc<float4>(n4);
        A = dev_copy(ma), B = dev_copy(mb), C0 = dev_copy(mc), C = dev_alloc<float>(mc.size());
        gt = dim3((n4 + 1023) / 1024), bt = dim3(256);
        gs = dim3((N + 15) / 16, (M + 15) / 16), bs = dim3(16, 16);
    }
    void reset(cudaStream_t st) {
        CUDA_CHECK(cudaMemsetAsync(a, 0xff, (size_t)n4 * sizeof(float4), st));
        CUDA_CHECK(cudaMemcpyAsync(C, C0, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToDevice, st));
    }
    void launch(int k, cudaStream_t st) {
        if (k == 0)
            triad4<<<gt, bt, 0, st>>>(a, b, c, s, n4);
        else
            sgemm_tiled<<<gs, bs, 0, st>>>(M, N, K, alpha, A, B, beta, C);
    }
    cudaError_t merged(const unsigned* alloc, cudaStream_t st) {
        return slate_merged_triad4_sgemm_tiled_launch_alloc(alloc, gt, bt, 0, gs, bs, 0, st, a, b, c, s, n4, M, N, K, alpha, A, B, beta, C);
    }
    void dump() {
        dump_dev("a", (const float*)a, (size_t)n4 * 4);
        dump_dev("C", C, (size_t)M * N);
    }
};

int main(int argc, char** argv) { return driver_main<Case>(argc, argv); }
