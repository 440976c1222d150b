// What a one-block launch of the static worker costs over its kernel's
// (issue 10: the tiny_grids timers, 2-3 us kernels of 1-8 blocks, read
// 1.08-1.12 held). Each variant adds one of the worker's differences to a
// copy of tiny_grids' cube_ids (a 2x2x2 grid of 4x4x4 blocks, a shared sum,
// two barriers) and serial_poly (1 block of 1 thread):
//
//   native        the kernel
//   params        + the worker's parameters (a control-block pointer and the
//                 64-byte configuration), unused
//   loop          the static worker's loop (id < total; id += workers), the
//                 id decoded from the configuration, a barrier after each
//                 logical block (kSync), as templates/prelude.cu has it
//   loop-nobar    the same, the barrier only between logical blocks
//   loop-1d       the loop with the 1-D flag test but the id as blockIdx
//   dowhile       the loop rotated: the first logical block unchecked (a
//                 static launch has no more workers than logical blocks),
//                 the test after the body; -grid strides by gridDim.x
//
// Timed on the GPU alone: REPS launches enqueued behind a kernel that waits
// for the host (as HARNESS_HOLD=1 does), between two events; ROUNDS rounds,
// the variants in a new order each round; per launch, the median and the
// extremes, and the median of the per-round differences to the kernel's
// native variant (cube or poly). bench/topology/held_rounds.h times them.
//
//   nvcc -std=c++17 -O2 -arch=native -o /tmp/tiny_cost bench/topology/tiny_cost.cu && /tmp/tiny_cost 200 15
#include "held_rounds.h"

struct ctl_t {
    unsigned long long next;
};

struct __align__(8) cfg_t {
    unsigned long long total;
    unsigned int grid_x, grid_y, grid_z;
    unsigned int iters;
    unsigned int sm_low, sm_high;
    unsigned int flags;
    unsigned int workers;
    unsigned int magic_x, shift_x;
    unsigned int magic_y, shift_y;
};

__device__ __forceinline__ unsigned int udiv(unsigned int n, unsigned int magic, unsigned int shift) {
    return (unsigned int)(((unsigned long long)__umulhi(n, magic) + n) >> shift);
}

__device__ __forceinline__ uint3 decode(unsigned int id, const cfg_t& c) {
    uint3 b;
    if (c.flags & 16u) {
        b.x = id, b.y = 0, b.z = 0;
    } else {
        const unsigned int row = udiv(id, c.magic_x, c.shift_x);
        b.x = id - row * c.grid_x;
        b.z = udiv(row, c.magic_y, c.shift_y);
        b.y = row - b.z * c.grid_y;
    }
    return b;
}

__device__ __forceinline__ void cube_body(uint3 bi, dim3 gd, int* out) {
    __shared__ int sum;
    int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    int b = (bi.z * gd.y + bi.y) * gd.x + bi.x;
    if (t == 0) sum = 0;
    __syncthreads();
    atomicAdd(&sum, t);
    __syncthreads();
    out[b * 64 + t] = sum + b * 1000 + t;
}

__device__ __forceinline__ void poly_body(const float* c, int degree, float x, float* out) {
    float r = 0.0f;
    for (int k = degree; k >= 0; --k) r = r * x + c[k];
    *out = r;
}

__global__ void cube_native(int* out) { cube_body(blockIdx, gridDim, out); }
__global__ void cube_params(ctl_t* ctl, cfg_t cfg, int* out) { cube_body(blockIdx, gridDim, out); }
__global__ void cube_loop(ctl_t* ctl, cfg_t cfg, int* out) {
    for (unsigned int id = blockIdx.x; id < (unsigned int)cfg.total; id += cfg.workers) {
        cube_body(decode(id, cfg), dim3(cfg.grid_x, cfg.grid_y, cfg.grid_z), out);
        __syncthreads();
    }
}
__global__ void cube_loop_nobar(ctl_t* ctl, cfg_t cfg, int* out) {
    unsigned int id = blockIdx.x;
    if (id >= (unsigned int)cfg.total) return;
    for (;;) {
        cube_body(decode(id, cfg), dim3(cfg.grid_x, cfg.grid_y, cfg.grid_z), out);
        id += cfg.workers;
        if (id >= (unsigned int)cfg.total) break;
        __syncthreads();
    }
}

// The loop rotated: a static launch has no more workers than logical
// blocks, so the first runs unchecked and the test follows the body.
__global__ void cube_dowhile(ctl_t* ctl, cfg_t cfg, int* out) {
    unsigned int id = blockIdx.x;
    for (;;) {
        cube_body(decode(id, cfg), dim3(cfg.grid_x, cfg.grid_y, cfg.grid_z), out);
        id += cfg.workers;
        if (id >= (unsigned int)cfg.total) break;
        __syncthreads();
    }
}
__global__ void cube_dowhile_grid(ctl_t* ctl, cfg_t cfg, int* out) {
    unsigned int id = blockIdx.x;
    for (;;) {
        cube_body(decode(id, cfg), dim3(cfg.grid_x, cfg.grid_y, cfg.grid_z), out);
        id += gridDim.x;
        if (id >= (unsigned int)cfg.total) break;
        __syncthreads();
    }
}

__global__ void poly_native(const float* c, int degree, float x, float* out) { poly_body(c, degree, x, out); }
__global__ void poly_params(ctl_t* ctl, cfg_t cfg, const float* c, int degree, float x, float* out) {
    poly_body(c, degree, x, out);
}
__global__ void poly_loop(ctl_t* ctl, cfg_t cfg, const float* c, int degree, float x, float* out) {
    for (unsigned int id = blockIdx.x; id < (unsigned int)cfg.total; id += cfg.workers) poly_body(c, degree, x, out);
}
__global__ void poly_loop_1d(ctl_t* ctl, cfg_t cfg, const float* c, int degree, float x, float* out) {
    for (unsigned int id = blockIdx.x; id < (unsigned int)cfg.total; id += cfg.workers) {
        uint3 b = decode(id, cfg);
        if (b.x == 0xffffffffu) out[1] = 0; // keeps the decode
        poly_body(c, degree, x, out);
    }
}

__global__ void poly_dowhile(ctl_t* ctl, cfg_t cfg, const float* c, int degree, float x, float* out) {
    unsigned int id = blockIdx.x;
    do {
        poly_body(c, degree, x, out);
        id += cfg.workers;
    } while (id < (unsigned int)cfg.total);
}
__global__ void poly_dowhile_1d(ctl_t* ctl, cfg_t cfg, const float* c, int degree, float x, float* out) {
    unsigned int id = blockIdx.x;
    do {
        uint3 b = decode(id, cfg);
        if (b.x == 0xffffffffu) out[1] = 0; // keeps the decode
        poly_body(c, degree, x, out);
        id += cfg.workers;
    } while (id < (unsigned int)cfg.total);
}

__global__ void empty_kernel() {}

static cfg_t make_cfg(dim3 g, unsigned int workers) {
    cfg_t c{};
    c.total = (unsigned long long)g.x * g.y * g.z;
    c.grid_x = g.x, c.grid_y = g.y, c.grid_z = g.z;
    c.iters = 1;
    c.sm_high = 0xffffffffu;
    c.flags = (g.y == 1 && g.z == 1) ? 16u : 0u;
    c.workers = workers;
    auto magic = [](unsigned int d, unsigned int* m, unsigned int* s) {
        unsigned int l = 0;
        while ((1ull << l) < d) ++l;
        *s = l;
        *m = (unsigned int)(((1ull << 32) * ((1ull << l) - d)) / d + 1);
    };
    magic(g.x, &c.magic_x, &c.shift_x);
    magic(g.y, &c.magic_y, &c.shift_y);
    return c;
}

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 200;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 15;
    int* cube = nullptr;
    float *coef = nullptr, *poly = nullptr;
    CHECK(cudaMalloc(&cube, 8 * 64 * sizeof(int)));
    CHECK(cudaMalloc(&coef, 8 * sizeof(float)));
    CHECK(cudaMalloc(&poly, 2 * sizeof(float)));
    CHECK(cudaMemset(coef, 0, 8 * sizeof(float)));
    ctl_t* ctl = nullptr;
    CHECK(cudaMalloc(&ctl, sizeof(ctl_t)));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const dim3 cg(2, 2, 2);
    const cfg_t ccfg = make_cfg(cg, 8), pcfg = make_cfg(dim3(1), 1);
    struct variant {
        const char* name;
        void (*launch)(cudaStream_t, int*, float*, float*, ctl_t*, const cfg_t&, const cfg_t&);
    };
    const variant vs[] = {
        {"empty 1x1", [](cudaStream_t s, int*, float*, float*, ctl_t*, const cfg_t&, const cfg_t&) { empty_kernel<<<1, 1, 0, s>>>(); }},
        {"cube native", [](cudaStream_t s, int* o, float*, float*, ctl_t*, const cfg_t&, const cfg_t&) {
             cube_native<<<dim3(2, 2, 2), dim3(4, 4, 4), 0, s>>>(o);
         }},
        {"cube params", [](cudaStream_t s, int* o, float*, float*, ctl_t* k, const cfg_t& c, const cfg_t&) {
             cube_params<<<dim3(2, 2, 2), dim3(4, 4, 4), 0, s>>>(k, c, o);
         }},
        {"cube loop", [](cudaStream_t s, int* o, float*, float*, ctl_t* k, const cfg_t& c, const cfg_t&) {
             cube_loop<<<8, dim3(4, 4, 4), 0, s>>>(k, c, o);
         }},
        {"cube loop-nobar", [](cudaStream_t s, int* o, float*, float*, ctl_t* k, const cfg_t& c, const cfg_t&) {
             cube_loop_nobar<<<8, dim3(4, 4, 4), 0, s>>>(k, c, o);
         }},
        {"cube dowhile", [](cudaStream_t s, int* o, float*, float*, ctl_t* k, const cfg_t& c, const cfg_t&) {
             cube_dowhile<<<8, dim3(4, 4, 4), 0, s>>>(k, c, o);
         }},
        {"cube dowhile-grid", [](cudaStream_t s, int* o, float*, float*, ctl_t* k, const cfg_t& c, const cfg_t&) {
             cube_dowhile_grid<<<8, dim3(4, 4, 4), 0, s>>>(k, c, o);
         }},
        {"poly native", [](cudaStream_t s, int*, float* c, float* o, ctl_t*, const cfg_t&, const cfg_t&) {
             poly_native<<<1, 1, 0, s>>>(c, 5, 0.75f, o);
         }},
        {"poly params", [](cudaStream_t s, int*, float* c, float* o, ctl_t* k, const cfg_t&, const cfg_t& p) {
             poly_params<<<1, 1, 0, s>>>(k, p, c, 5, 0.75f, o);
         }},
        {"poly loop", [](cudaStream_t s, int*, float* c, float* o, ctl_t* k, const cfg_t&, const cfg_t& p) {
             poly_loop<<<1, 1, 0, s>>>(k, p, c, 5, 0.75f, o);
         }},
        {"poly loop-1d", [](cudaStream_t s, int*, float* c, float* o, ctl_t* k, const cfg_t&, const cfg_t& p) {
             poly_loop_1d<<<1, 1, 0, s>>>(k, p, c, 5, 0.75f, o);
         }},
        {"poly dowhile", [](cudaStream_t s, int*, float* c, float* o, ctl_t* k, const cfg_t&, const cfg_t& p) {
             poly_dowhile<<<1, 1, 0, s>>>(k, p, c, 5, 0.75f, o);
         }},
        {"poly dowhile-1d", [](cudaStream_t s, int*, float* c, float* o, ctl_t* k, const cfg_t&, const cfg_t& p) {
             poly_dowhile_1d<<<1, 1, 0, s>>>(k, p, c, 5, 0.75f, o);
         }},
    };
    const int nv = sizeof(vs) / sizeof(vs[0]);
    const auto us = held_rounds(
        nv, reps, rounds, s, [](int) {},
        [&](int v, int) { vs[v].launch(s, cube, coef, poly, ctl, ccfg, pcfg); });
    // Each variant against its kernel's native one: the first whose name
    // starts with the same word (the empty kernel against itself).
    std::vector<std::string> names;
    std::vector<int> base;
    for (int v = 0; v < nv; ++v) {
        names.push_back(vs[v].name);
        int b = 0;
        while (std::string(vs[b].name).substr(0, 4) != names.back().substr(0, 4)) ++b;
        base.push_back(b);
    }
    held_print(names, us, base, reps);
    return 0;
}
