// slatec-test: harness
// Black-Scholes European call/put pricing: per-element float math, grid-stride loop, __launch_bounds__(128, 4).
#include "harness.h"

#include <vector>

// Cumulative normal distribution, Abramowitz & Stegun 26.2.17 polynomial.
__device__ __forceinline__ float cnd(float d) {
    const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f;
    const float a4 = -1.821255978f, a5 = 1.330274429f;
    const float rsqrt2pi = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float c = rsqrt2pi * __expf(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0 ? 1.0f - c : c;
}

__global__ void __launch_bounds__(128, 4)
black_scholes(float* __restrict__ call, float* __restrict__ put, const float* __restrict__ spot,
              const float* __restrict__ strike, const float* __restrict__ years, float rate,
              float vol, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float s = spot[i], x = strike[i], t = years[i];
        float sqrt_t = sqrtf(t);
        float d1 = (__logf(s / x) + (rate + 0.5f * vol * vol) * t) / (vol * sqrt_t);
        float d2 = d1 - vol * sqrt_t;
        float cd1 = cnd(d1), cd2 = cnd(d2);
        float discount = __expf(-rate * t);
        call[i] = s * cd1 - x * discount * cd2;
        put[i] = x * discount * (1.0f - cd2) - s * (1.0f - cd1);
    }
}

static double cnd_ref(double d) {
    const double a1 = 0.31938153, a2 = -0.356563782, a3 = 1.781477937;
    const double a4 = -1.821255978, a5 = 1.330274429;
    double k = 1.0 / (1.0 + 0.2316419 * std::fabs(d));
    double c = 0.39894228040143267794 * std::exp(-0.5 * d * d) *
               (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0 ? 1.0 - c : c;
}

int main() {
    const int n = (int)harness_scaled(4 * 1000 * 1000);
    const float rate = 0.02f, vol = 0.30f;
    std::vector<float> spot(n), strike(n), years(n), call(n), put(n);
    harness_fill_float(spot.data(), n, 5.0f, 30.0f);
    harness_fill_float(strike.data(), n, 1.0f, 100.0f);
    harness_fill_float(years.data(), n, 0.25f, 10.0f);
    float *d_call, *d_put, *d_spot, *d_strike, *d_years;
    size_t bytes = n * sizeof(float);
    CUDA_CHECK(cudaMalloc(&d_call, bytes));
    CUDA_CHECK(cudaMalloc(&d_put, bytes));
    CUDA_CHECK(cudaMalloc(&d_spot, bytes));
    CUDA_CHECK(cudaMalloc(&d_strike, bytes));
    CUDA_CHECK(cudaMalloc(&d_years, bytes));
    CUDA_CHECK(cudaMemcpy(d_spot, spot.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_strike, strike.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_years, years.data(), bytes, cudaMemcpyHostToDevice));

    harness_timed("black_scholes", [&] {
        black_scholes<<<4096, 128>>>(d_call, d_put, d_spot, d_strike, d_years, rate, vol, n);
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(call.data(), d_call, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(put.data(), d_put, bytes, cudaMemcpyDeviceToHost));

    std::vector<float> want_call(n), want_put(n);
    for (int i = 0; i < n; ++i) {
        double s = spot[i], x = strike[i], t = years[i], r = rate, v = vol;
        double d1 = (std::log(s / x) + (r + 0.5 * v * v) * t) / (v * std::sqrt(t));
        double d2 = d1 - v * std::sqrt(t);
        double disc = std::exp(-r * t);
        want_call[i] = (float)(s * cnd_ref(d1) - x * disc * cnd_ref(d2));
        want_put[i] = (float)(x * disc * (1.0 - cnd_ref(d2)) - s * (1.0 - cnd_ref(d1)));
    }
    // Fast-math __expf/__logf and float rounding: a few 1e-4 of absolute error on prices up to 100.
    if (!harness_close("call", call.data(), want_call.data(), n, 1e-4, 2e-3)) return harness_fail("call");
    if (!harness_close("put", put.data(), want_put.data(), n, 1e-4, 2e-3)) return harness_fail("put");
    harness_dump("call", call.data(), n);
    harness_dump("put", put.data(), n);
    CUDA_CHECK(cudaFree(d_call));
    CUDA_CHECK(cudaFree(d_put));
    CUDA_CHECK(cudaFree(d_spot));
    CUDA_CHECK(cudaFree(d_strike));
    CUDA_CHECK(cudaFree(d_years));
    return harness_pass();
}
