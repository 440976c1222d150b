// slatec-test: harness
// Grids smaller than the SM count: 1 block of 1024, 1 block of 1 thread, 7 blocks of 96, a 2x2x2 grid, 100 blocks with dynamic shared.
#include "harness.h"

#include <vector>

// One block scans 1024 values (Hillis-Steele, in place with a read/write barrier pair).
__global__ void single_block_scan(const int* in, int* out) {
    __shared__ int s[1024];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    for (int off = 1; off < 1024; off <<= 1) {
        int add = t >= off ? s[t - off] : 0;
        __syncthreads();
        s[t] += add;
        __syncthreads();
    }
    out[t] = s[t];
}

// A single thread does everything (serial fallback code exists in real programs).
__global__ void serial_poly(const float* c, int degree, float x, float* out) {
    float r = 0.0f;
    for (int k = degree; k >= 0; --k) r = r * x + c[k];
    *out = r;
}

// Non-power-of-two block (96 threads = 3 warps) rotating through shared memory.
__global__ void rotate96(const int* in, int* out) {
    __shared__ int s[96];
    int i = blockIdx.x * 96 + threadIdx.x;
    s[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = s[(threadIdx.x + 95) % 96] - s[(threadIdx.x + 1) % 96];
}

// 3-D grid of 3-D blocks: each block sums its linear thread ids in shared memory.
__global__ void cube_ids(int* out) {
    __shared__ int sum;
    int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    int b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    if (t == 0) sum = 0;
    __syncthreads();
    atomicAdd(&sum, t);
    __syncthreads();
    out[b * 64 + t] = sum + b * 1000 + t;
}

// Dynamic shared memory sized at launch: each block reverses its 200 floats.
__global__ void reverse_dyn(const float* in, float* out, int per_block) {
    extern __shared__ float buf[];
    const float* src = in + blockIdx.x * per_block;
    for (int k = threadIdx.x; k < per_block; k += blockDim.x) buf[k] = src[k];
    __syncthreads();
    for (int k = threadIdx.x; k < per_block; k += blockDim.x)
        out[blockIdx.x * per_block + k] = buf[per_block - 1 - k];
}

int main() {
    std::vector<int> in(1024), scan(1024), r_in(7 * 96), r_out(7 * 96), cube(8 * 64);
    std::vector<float> coef(6), rev_in(100 * 200), rev_out(100 * 200);
    harness_fill_int(in.data(), 1024, -50, 50);
    harness_fill_int(r_in.data(), r_in.size(), -1000, 1000);
    harness_fill_float(coef.data(), 6, -1.0f, 1.0f);
    harness_fill_float(rev_in.data(), rev_in.size(), -1.0f, 1.0f);
    int *d_in, *d_scan, *d_rin, *d_rout, *d_cube;
    float *d_coef, *d_poly, *d_rev_in, *d_rev_out;
    CUDA_CHECK(cudaMalloc(&d_in, 1024 * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_scan, 1024 * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_rin, r_in.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_rout, r_out.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_cube, cube.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_coef, 6 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_poly, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_rev_in, rev_in.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_rev_out, rev_out.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), 1024 * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_rin, r_in.data(), r_in.size() * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_coef, coef.data(), 6 * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_rev_in, rev_in.data(), rev_in.size() * sizeof(float), cudaMemcpyHostToDevice));

    // The grids are tiny on purpose: HARNESS_SCALE does not apply.
    harness_timed("single_block_scan", [&] {
        single_block_scan<<<1, 1024>>>(d_in, d_scan);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("serial_poly", [&] {
        serial_poly<<<1, 1>>>(d_coef, 5, 0.75f, d_poly);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("rotate96", [&] {
        rotate96<<<7, 96>>>(d_rin, d_rout);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("cube_ids", [&] {
        cube_ids<<<dim3(2, 2, 2), dim3(4, 4, 4)>>>(d_cube);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("reverse_dyn", [&] {
        reverse_dyn<<<100, 64, 200 * sizeof(float)>>>(d_rev_in, d_rev_out, 200);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    float poly = 0.0f;
    CUDA_CHECK(cudaMemcpy(scan.data(), d_scan, 1024 * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&poly, d_poly, sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(r_out.data(), d_rout, r_out.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(cube.data(), d_cube, cube.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(rev_out.data(), d_rev_out, rev_out.size() * sizeof(float), cudaMemcpyDeviceToHost));

    std::vector<int> want_scan(1024), want_r(r_in.size()), want_cube(cube.size());
    std::vector<float> want_rev(rev_in.size());
    for (int t = 0, acc = 0; t < 1024; ++t) want_scan[t] = acc += in[t];
    float want_poly = 0.0f;
    for (int k = 5; k >= 0; --k) want_poly = want_poly * 0.75f + coef[k];
    for (int b = 0; b < 7; ++b)
        for (int t = 0; t < 96; ++t)
            want_r[b * 96 + t] = r_in[b * 96 + (t + 95) % 96] - r_in[b * 96 + (t + 1) % 96];
    for (int b = 0; b < 8; ++b)
        for (int t = 0; t < 64; ++t) want_cube[b * 64 + t] = 63 * 64 / 2 + b * 1000 + t;
    for (int b = 0; b < 100; ++b)
        for (int k = 0; k < 200; ++k) want_rev[b * 200 + k] = rev_in[b * 200 + 199 - k];
    if (!harness_equal("scan", scan.data(), want_scan.data(), 1024)) return harness_fail("single_block_scan");
    if (std::fabs(poly - want_poly) > 1e-5f) return harness_fail("serial_poly %g, want %g", poly, want_poly);
    if (!harness_equal("rot96", r_out.data(), want_r.data(), r_out.size())) return harness_fail("rotate96");
    if (!harness_equal("cube", cube.data(), want_cube.data(), cube.size())) return harness_fail("cube_ids");
    if (!harness_close("rev", rev_out.data(), want_rev.data(), rev_out.size(), 0.0, 0.0))
        return harness_fail("reverse_dyn");
    harness_dump("scan", scan.data(), 1024);
    harness_dump("poly", &poly, 1);
    harness_dump("rot96", r_out.data(), r_out.size());
    harness_dump("cube", cube.data(), cube.size());
    harness_dump("rev", rev_out.data(), rev_out.size());
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_scan));
    CUDA_CHECK(cudaFree(d_rin));
    CUDA_CHECK(cudaFree(d_rout));
    CUDA_CHECK(cudaFree(d_cube));
    CUDA_CHECK(cudaFree(d_coef));
    CUDA_CHECK(cudaFree(d_poly));
    CUDA_CHECK(cudaFree(d_rev_in));
    CUDA_CHECK(cudaFree(d_rev_out));
    return harness_pass();
}
