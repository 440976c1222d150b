// slatec-test: harness
// Declarations after an early return whose declarators read each other: `T a = load, b = f(a);`.
// Lowering the return hoists the load (a {} now, assigned under the guard after the
// declaration); b, c, ... must still see a's value, so they follow the guard in order.
#include "harness.h"

#include <vector>

#define B 256

// A loaded declarator followed by arithmetic ones that read it, read after the barrier.
__global__ void load_then_derive(const int* in, int* out, int n) {
    __shared__ int s[B];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = in[i], b = 3 * a + 1, c = b - a, d = 7;
    s[threadIdx.x] = c;
    __syncthreads();
    out[i] = s[threadIdx.x] * 1000 + b * 10 + d + (a & 1);
}

// Guarded, derived, guarded again: an index loaded, scaled, and used for a second load.
// const declarators lose their const to be assigned after the declaration.
__global__ void gather_chain(const int* idx, const int* data, int* out, int n) {
    __shared__ int s[B];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int j = idx[i], k = j / 2 + 1, v = data[k], w = v + k;
    s[threadIdx.x] = w;
    __syncthreads();
    int t = threadIdx.x;
    int live = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x));
    int u = t + 1 < live ? t + 1 : t;
    out[i] = s[u] - j;
}

int main() {
    const int n = (int)harness_scaled(300037 / B) * B + 300037 % B;  // the last block is partial
    const int grid = (n + B - 1) / B;
    const int m = n / 2 + 2;  // data[] is indexed by idx/2 + 1 with idx in [0, n)
    std::vector<int> in(n), idx(n), data(m), out1(n), out2(n);
    harness_fill_int(in.data(), n, -100000, 100000);
    harness_fill_int(idx.data(), n, 0, n - 1);
    harness_fill_int(data.data(), m, -1000, 1000);
    int *d_in, *d_idx, *d_data, *d_out1, *d_out2;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_idx, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_data, m * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out1, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out2, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_idx, idx.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_data, data.data(), m * sizeof(int), cudaMemcpyHostToDevice));

    harness_timed("load_then_derive", [&] {
        load_then_derive<<<grid, B>>>(d_in, d_out1, n);
        CUDA_CHECK(cudaGetLastError());
    });
    harness_timed("gather_chain", [&] {
        gather_chain<<<grid, B>>>(d_idx, d_data, d_out2, n);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out1.data(), d_out1, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out2.data(), d_out2, n * sizeof(int), cudaMemcpyDeviceToHost));

    std::vector<int> want1(n), want2(n);
    auto w = [&](int q) {
        int j = idx[q], k = j / 2 + 1;
        return data[k] + k;
    };
    for (int i = 0; i < n; ++i) {
        int a = in[i], b = 3 * a + 1, c = b - a;
        want1[i] = c * 1000 + b * 10 + 7 + (a & 1);
        int base = i / B * B, t = i - base, live = std::min(B, n - base);
        int u = t + 1 < live ? t + 1 : t;
        want2[i] = w(base + u) - idx[i];
    }
    if (!harness_equal("derive", out1.data(), want1.data(), n)) return harness_fail("load_then_derive");
    if (!harness_equal("gather", out2.data(), want2.data(), n)) return harness_fail("gather_chain");
    harness_dump("derive", out1.data(), n);
    harness_dump("gather", out2.data(), n);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_idx));
    CUDA_CHECK(cudaFree(d_data));
    CUDA_CHECK(cudaFree(d_out1));
    CUDA_CHECK(cudaFree(d_out2));
    return harness_pass();
}
