// slatec-test: harness
// Gaussian elimination without pivoting: per-pivot multiplier and 2-D update kernels launched in a host loop.
#include "harness.h"

#include <vector>

#define TB 16

// l[r] = a[r][k] / a[k][k] for every row below the pivot.
__global__ void gauss_multipliers(const float* a, float* l, int n, int k) {
    int r = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    l[r] = a[r * n + k] / a[k * n + k];
}

// Rank-1 update of the trailing rows; column n stands for the right-hand side b.
// The grid shrinks with k; the pivot row segment and the multipliers go through shared memory.
__global__ void gauss_eliminate(float* a, float* b, const float* l, int n, int k) {
    __shared__ float pivot_row[TB];
    __shared__ float mult[TB];
    const int col = k + blockIdx.x * TB + threadIdx.x;
    const int row = k + 1 + blockIdx.y * TB + threadIdx.y;
    if (threadIdx.y == 0) pivot_row[threadIdx.x] = col < n ? a[k * n + col] : (col == n ? b[k] : 0.0f);
    if (threadIdx.x == 0) mult[threadIdx.y] = row < n ? l[row] : 0.0f;
    __syncthreads();
    if (row >= n || col > n) return;  // all barriers are behind us
    float m = mult[threadIdx.y];
    if (col == k) a[row * n + k] = 0.0f;
    else if (col == n) b[row] -= m * pivot_row[threadIdx.x];
    else a[row * n + col] -= m * pivot_row[threadIdx.x];
}

int main() {
    const int n = (int)harness_scaled(256);
    std::vector<float> a((size_t)n * n), b(n), x_true(n);
    harness_fill_float(a.data(), a.size(), -1.0f, 1.0f);
    for (int i = 0; i < n; ++i) a[(size_t)i * n + i] += (float)n;  // diagonally dominant: no pivoting needed
    harness_fill_float(x_true.data(), n, -1.0f, 1.0f);
    for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int j = 0; j < n; ++j) s += (double)a[(size_t)i * n + j] * x_true[j];
        b[i] = (float)s;
    }
    float *d_a, *d_b, *d_l;
    CUDA_CHECK(cudaMalloc(&d_a, a.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_l, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    // The elimination works in place: under HARNESS_REPS the timed runs after the first
    // one eliminate the already triangular system, and the checked run starts again
    // from a and b.
    harness_timed_reset("eliminate", [&] {
        for (int k = 0; k < n - 1; ++k) {
            int rows = n - k - 1, cols = n + 1 - k;
            gauss_multipliers<<<(rows + 127) / 128, 128>>>(d_a, d_l, n, k);
            CUDA_CHECK(cudaGetLastError());
            dim3 grid((cols + TB - 1) / TB, (rows + TB - 1) / TB);
            gauss_eliminate<<<grid, dim3(TB, TB)>>>(d_a, d_b, d_l, n, k);
            CUDA_CHECK(cudaGetLastError());
        }
    }, [&] {
        CUDA_CHECK(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(d_b, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> u(a.size()), c(n);
    CUDA_CHECK(cudaMemcpy(u.data(), d_a, u.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(c.data(), d_b, n * sizeof(float), cudaMemcpyDeviceToHost));

    // Same elimination on the host (the GPU may fuse multiply-adds: compare with a tolerance).
    std::vector<float> ua = a, cb = b;
    for (int k = 0; k < n - 1; ++k)
        for (int r = k + 1; r < n; ++r) {
            float m = ua[(size_t)r * n + k] / ua[(size_t)k * n + k];
            for (int j = k + 1; j < n; ++j) ua[(size_t)r * n + j] -= m * ua[(size_t)k * n + j];
            ua[(size_t)r * n + k] = 0.0f;
            cb[r] -= m * cb[k];
        }
    if (!harness_close("U", u.data(), ua.data(), u.size(), 1e-4, 1e-4)) return harness_fail("elimination");
    if (!harness_close("c", c.data(), cb.data(), n, 1e-4, 1e-3)) return harness_fail("rhs");
    std::vector<float> x(n);
    for (int i = n - 1; i >= 0; --i) {
        double s = c[i];
        for (int j = i + 1; j < n; ++j) s -= (double)u[(size_t)i * n + j] * x[j];
        x[i] = (float)(s / u[(size_t)i * n + i]);
    }
    if (!harness_close("x", x.data(), x_true.data(), n, 1e-3, 1e-3)) return harness_fail("solution");
    harness_dump("U", u.data(), u.size());
    harness_dump("c", c.data(), n);
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_l));
    return harness_pass();
}
