// GPU driver for golden/merge/sgemm_vecadd.MODE.cu: compute-bound SGEMM (16x16 blocks)
// next to a bandwidth-bound vector add (256 threads). See common.h for the commands.
#include MERGED
#include "common.h"

struct Case {
    static const char* name() { return "sgemm_vecadd"; }
    static const int kernels = 2;
    static const char* kernel(int k) { return k == 0 ? "sgemm_tiled" : "vector_add"; }

    int M = 0, N = 0, K = 0, n = 0;
    const float alpha = 1.0f, beta = 0.25f;
    float *A = nullptr, *B = nullptr, *C = nullptr, *C0 = nullptr;
    float *x = nullptr, *y = nullptr, *z = nullptr;
    dim3 gs, bs, gv, bv;

    void init(Scale s) {
        switch (s) {
        case SMALL: M = 40, N = 56, K = 33, n = (1 << 14) + 77; break;
        case MEDIUM: M = 520, N = 600, K = 130, n = (4 << 20) + 77; break;
        case LARGE: M = 1536, N = 1536, K = 1536, n = 64 << 20; break;
        }
        std::vector<float> a((size_t)M * K), b((size_t)K * N), c((size_t)M * N), u(n), v(n);
        harness_fill_float(a.data(), a.size(), -1.0f, 1.0f);
        harness_fill_float(b.data(), b.size(), -1.0f, 1.0f);
        harness_fill_float(c.data(), c.size(), -1.0f, 1.0f);
        harness_fill_float(u.data(), n, -1.0f, 1.0f);
        harness_fill_float(v.data(), n, -1.0f, 1.0f);
        A = dev_copy(a), B = dev_copy(b), C0 = dev_copy(c), C = dev_alloc<float>(c.size());
        x = dev_copy(u), y = dev_copy(v), z = dev_alloc<float>(n);
        gs = dim3((N + 15) / 16, (M + 15) / 16), bs = dim3(16, 16);
        gv = dim3((n + 255) / 256), bv = dim3(256);
    }
    void reset(cudaStream_t s) {
        CUDA_CHECK(cudaMemcpyAsync(C, C0, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToDevice, s));
        CUDA_CHECK(cudaMemsetAsync(z, 0xff, (size_t)n * sizeof(float), s));
    }
    void launch(int k, cudaStream_t s) {
        if (k == 0)
            sgemm_tiled<<<gs, bs, 0, s>>>(M, N, K, alpha, A, B, beta, C);
        else
            vector_add<<<gv, bv, 0, s>>>(x, y, z, n);
    }
    cudaError_t merged(const unsigned* alloc, cudaStream_t s) {
        return slate_merged_sgemm_tiled_vector_add_launch_alloc(alloc, gs, bs, 0, gv, bv, 0, s,
                                                                M, N, K, alpha, A, B, beta, C, x, y, z, n);
    }
    void dump() {
        dump_dev("C", C, (size_t)M * N);
        dump_dev("z", z, (size_t)n);
    }
};

int main(int argc, char** argv) { return driver_main<Case>(argc, argv); }
