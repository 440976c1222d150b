// GPU driver for golden/merge/templates.MODE.cu: one template kernel merged with two
// argument lists (map<float, Affine> with 256 threads, map<int, AddOne> with 96, a partial
// warp) and reverse_blocks<128, float>, whose shared array is sized by its template argument.
#include MERGED
#include "common.h"

struct Case {
    static const char* name() { return "templates"; }
    static const int kernels = 3;
    static const char* kernel(int k) { return k == 0 ? "map<float,Affine>" : k == 1 ? "map<int,AddOne>" : "reverse_blocks<128,float>"; }

    int n = 0;
    float *fi = nullptr, *fo = nullptr, *ro = nullptr;
    int *ii = nullptr, *io = nullptr;
    Affine aff = {2.0f, 0.5f};
    dim3 g0, b0, g1, b1, g2, b2;

    void init(Scale s) {
        n = s == SMALL ? 5000 + 3 : s == MEDIUM ? (1 << 20) + 3 : (64 << 20) + 3;
        std::vector<float> f(n);
        std::vector<int> i(n);
        harness_fill_float(f.data(), n, -1.0f, 1.0f);
        harness_fill_int(i.data(), n, -1000, 1000);
        fi = dev_copy(f), fo = dev_alloc<float>(n), ro = dev_alloc<float>(n);
        ii = dev_copy(i), io = dev_alloc<int>(n);
        g0 = dim3((n + 255) / 256), b0 = dim3(256);
        g1 = dim3((n + 95) / 96), b1 = dim3(96);
        g2 = dim3((n + 127) / 128), b2 = dim3(128);
    }
    void reset(cudaStream_t s) {
        CUDA_CHECK(cudaMemsetAsync(fo, 0xff, (size_t)n * sizeof(float), s));
        CUDA_CHECK(cudaMemsetAsync(ro, 0xff, (size_t)n * sizeof(float), s));
        CUDA_CHECK(cudaMemsetAsync(io, 0xff, (size_t)n * sizeof(int), s));
    }
    void launch(int k, cudaStream_t s) {
        if (k == 0)
            map<float, Affine><<<g0, b0, 0, s>>>(fi, fo, n, aff);
        else if (k == 1)
            map<int, AddOne><<<g1, b1, 0, s>>>(ii, io, n, AddOne());
        else
            reverse_blocks<128, float><<<g2, b2, 0, s>>>(fi, ro, n);
    }
    cudaError_t merged(const unsigned* alloc, cudaStream_t s) {
        return slate_merged_map_float_Affine_map_int_AddOne_reverse_blocks_128_float_launch_alloc(alloc, g0, b0, 0, g1, b1, 0, g2, b2, 0, s,
            fi, fo, n, aff, ii, io, n, AddOne(), fi, ro, n);
    }
    void dump() {
        dump_dev("map_float", fo, (size_t)n);
        dump_dev("map_int", io, (size_t)n);
        dump_dev("reverse", ro, (size_t)n);
    }
};

int main(int argc, char** argv) { return driver_main<Case>(argc, argv); }
