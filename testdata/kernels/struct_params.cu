// slatec-test: harness
// Struct-by-value kernel parameters: plain scalars, pointers inside a struct, array members, float4 members, member functions.
#include "harness.h"

#include <vector>

struct Affine {
    float scale, offset;
    int n;
};

// Pointers travel inside the struct; the kernel gets a copy of the struct itself.
struct Triple {
    const float* a;
    const float* b;
    float* out;
    int n;
};

// An array member makes the parameter 36 bytes; evaluated with Horner's rule.
struct Poly {
    float c[8];
    int degree;
    __host__ __device__ float operator()(float x) const {
        float r = c[degree];
        for (int k = degree - 1; k >= 0; --k) r = r * x + c[k];
        return r;
    }
};

struct __align__(16) Box {
    float4 lo, hi;
};

struct View2D {
    int rows, cols;
    float* data;
    __device__ float& at(int r, int c) const { return data[r * cols + c]; }
};

__global__ void affine(const float* in, float* out, Affine p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) out[i] = in[i] * p.scale + p.offset;
}

__global__ void add_triple(Triple t) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < t.n) t.out[i] = t.a[i] + t.b[i];
}

__global__ void eval_poly(const float* x, float* y, int n, const Poly p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = p(x[i]);
}

// Clamps each row r of a 2-D view into [lo.x + r, hi.x + r] (box given per component).
__global__ void clamp_view(View2D v, Box box) {
    int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
    if (c >= v.cols) return;
    float lo = box.lo.x + box.lo.y * r, hi = box.hi.x + box.hi.y * r;
    float& e = v.at(r, c);
    e = fminf(fmaxf(e, lo), hi);
}

int main() {
    const int n = (int)harness_scaled(1 << 20, 256);
    std::vector<float> x(n), y(n), o1(n), o2(n), o3(n);
    harness_fill_float(x.data(), n, -1.0f, 1.0f);
    harness_fill_float(y.data(), n, -1.0f, 1.0f);
    const int rows = (int)harness_scaled(300), cols = 1000;
    std::vector<float> m((size_t)rows * cols), mo((size_t)rows * cols);
    harness_fill_float(m.data(), m.size(), -500.0f, 500.0f);
    float *d_x, *d_y, *d_o1, *d_o2, *d_o3, *d_m;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_o1, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_o2, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_o3, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_m, m.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_y, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_m, m.data(), m.size() * sizeof(float), cudaMemcpyHostToDevice));

    const int grid = n / 256;  // 4096 blocks
    Affine aff = {1.5f, -0.25f, n};
    harness_timed("affine", [&] {
        affine<<<grid, 256>>>(d_x, d_o1, aff);
        CUDA_CHECK(cudaGetLastError());
    });
    Triple tr = {d_x, d_y, d_o2, n};
    harness_timed("add_triple", [&] {
        add_triple<<<grid, 256>>>(tr);
        CUDA_CHECK(cudaGetLastError());
    });
    Poly p = {{1.0f, -0.5f, 0.25f, 2.0f, -1.0f, 0.125f, 0.0f, 0.0f}, 5};
    harness_timed("eval_poly", [&] {
        eval_poly<<<grid, 256>>>(d_x, d_o3, n, p);
        CUDA_CHECK(cudaGetLastError());
    });
    Box box = {make_float4(-100.0f, 0.5f, 0.0f, 0.0f), make_float4(100.0f, 1.0f, 0.0f, 0.0f)};
    View2D view = {rows, cols, d_m};
    // Clamps d_m in place: idempotent.
    harness_timed("clamp_view", [&] {
        clamp_view<<<dim3((cols + 127) / 128, rows), 128>>>(view, box);  // 8 x 300 = 2400 blocks
        CUDA_CHECK(cudaGetLastError());
    });
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(o1.data(), d_o1, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o2.data(), d_o2, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o3.data(), d_o3, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(mo.data(), d_m, mo.size() * sizeof(float), cudaMemcpyDeviceToHost));

    std::vector<float> w1(n), w2(n), w3(n), wm(m.size());
    for (int i = 0; i < n; ++i) {
        w1[i] = x[i] * 1.5f - 0.25f;
        w2[i] = x[i] + y[i];
        w3[i] = p(x[i]);
    }
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            float lo = -100.0f + 0.5f * r, hi = 100.0f + 1.0f * r;
            wm[(size_t)r * cols + c] = std::fmin(std::fmax(m[(size_t)r * cols + c], lo), hi);
        }
    // Products feeding sums may become FMAs on the GPU.
    if (!harness_close("affine", o1.data(), w1.data(), n, 1e-6, 1e-7)) return harness_fail("affine");
    if (!harness_close("triple", o2.data(), w2.data(), n, 0.0, 0.0)) return harness_fail("add_triple");
    if (!harness_close("poly", o3.data(), w3.data(), n, 1e-5, 1e-6)) return harness_fail("eval_poly");
    if (!harness_close("view", mo.data(), wm.data(), mo.size(), 1e-6, 1e-6)) return harness_fail("clamp_view");
    harness_dump("affine", o1.data(), n);
    harness_dump("triple", o2.data(), n);
    harness_dump("poly", o3.data(), n);
    harness_dump("view", mo.data(), mo.size());
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_o1));
    CUDA_CHECK(cudaFree(d_o2));
    CUDA_CHECK(cudaFree(d_o3));
    CUDA_CHECK(cudaFree(d_m));
    return harness_pass();
}
