// slatec-test: harness
// Float and double atomicAdd across blocks: results depend on block order, so they are dumped with the tolerance flag.
#include "harness.h"

#include <vector>

#define B 256
#define NBINS 20

// Each block sums its 256 values in a fixed tree order, then one float atomic per block
// adds the block total to bin blockIdx.x % NBINS: ~100 order-dependent adds per bin.
__global__ void binned_block_sums(const float* in, float* bins, float* block_totals) {
    __shared__ float s[B];
    const int t = threadIdx.x;
    s[t] = in[blockIdx.x * B + t];
    __syncthreads();
    for (int stride = B / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) {
        block_totals[blockIdx.x] = s[0];  // deterministic
        atomicAdd(&bins[blockIdx.x % NBINS], s[0]);
    }
}

// Every element goes straight to one of 64 double bins (thousands of adds per bin;
// double keeps the order dependence far below the comparison tolerance).
__global__ void scatter_add_double(const double* in, const int* keys, double* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[keys[i]], in[i]);
}

int main() {
    const int nblocks = (int)harness_scaled(2000), n = nblocks * B;
    std::vector<float> in(n), bins(NBINS), totals(nblocks);
    std::vector<double> din(n), dbins(64);
    std::vector<int> keys(n);
    harness_fill_float(in.data(), n, 0.0f, 1.0f);
    harness_fill_double(din.data(), n, 0.0, 1.0);
    harness_fill_int(keys.data(), n, 0, 63);
    float *d_in, *d_bins, *d_totals;
    double *d_din, *d_dbins;
    int* d_keys;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_bins, NBINS * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_totals, nblocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_din, n * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&d_dbins, 64 * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&d_keys, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_din, din.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_bins, 0, NBINS * sizeof(float)));
    CUDA_CHECK(cudaMemset(d_dbins, 0, 64 * sizeof(double)));

    // Both kernels accumulate into their bins: under HARNESS_REPS the checked runs
    // start again from zeroed bins.
    harness_timed_reset("binned_block_sums", [&] {
        binned_block_sums<<<nblocks, B>>>(d_in, d_bins, d_totals);
        CUDA_CHECK(cudaGetLastError());
    }, [&] { CUDA_CHECK(cudaMemset(d_bins, 0, NBINS * sizeof(float))); });
    harness_timed_reset("scatter_add_double", [&] {
        scatter_add_double<<<(n + 255) / 256, 256>>>(d_din, d_keys, d_dbins, n);
        CUDA_CHECK(cudaGetLastError());
    }, [&] { CUDA_CHECK(cudaMemset(d_dbins, 0, 64 * sizeof(double))); });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(bins.data(), d_bins, NBINS * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(totals.data(), d_totals, nblocks * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(dbins.data(), d_dbins, 64 * sizeof(double), cudaMemcpyDeviceToHost));

    std::vector<float> want_totals(nblocks), want_bins(NBINS);
    std::vector<double> acc_bins(NBINS, 0.0), want_dbins(64, 0.0);
    for (int b = 0; b < nblocks; ++b) {
        std::vector<float> s(in.begin() + b * B, in.begin() + (b + 1) * B);
        for (int stride = B / 2; stride > 0; stride >>= 1)
            for (int t = 0; t < stride; ++t) s[t] += s[t + stride];
        want_totals[b] = s[0];
        acc_bins[b % NBINS] += s[0];
    }
    for (int k = 0; k < NBINS; ++k) want_bins[k] = (float)acc_bins[k];
    for (int i = 0; i < n; ++i) want_dbins[keys[i]] += din[i];
    if (!harness_close("totals", totals.data(), want_totals.data(), nblocks, 0.0, 0.0))
        return harness_fail("block totals");
    if (!harness_close("bins", bins.data(), want_bins.data(), NBINS, 1e-5, 1e-6)) return harness_fail("float bins");
    if (!harness_close("dbins", dbins.data(), want_dbins.data(), 64, 1e-12, 1e-9)) return harness_fail("double bins");
    harness_dump("totals", totals.data(), nblocks);
    harness_dump("bins", bins.data(), NBINS, HARNESS_TOLERANT);
    harness_dump("dbins", dbins.data(), 64, HARNESS_TOLERANT);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_bins));
    CUDA_CHECK(cudaFree(d_totals));
    CUDA_CHECK(cudaFree(d_din));
    CUDA_CHECK(cudaFree(d_dbins));
    CUDA_CHECK(cudaFree(d_keys));
    return harness_pass();
}
