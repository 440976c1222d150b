// Launcher microbenchmark (issue 10): back-to-back launches of an empty
// kernel (also two in turn) and of a ~4 us triad, and the first launch of a kernel, timed the
// way programs time them. Built natively and after `slatec transform`; the
// two binaries run alternately (bench/launcher/run.sh) and the report prints
// native vs slatec side by side.
//
// Output, one line per measurement:
//   LAUNCH <case> cpu_us=<host time per launch> gpu_us=<GPU time per launch>
// cpu_us: wall time of the host loop that enqueues the launches, divided by
// the count (the host may block when the launch queue is full; then it
// waits for the GPU, as a program would). gpu_us: CUDA events before the
// first and after the last launch, divided by the count.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                     \
        }                                                                                     \
    } while (0)

__global__ void empty_kernel() {}
__global__ void empty_kernel_b() {}

__global__ void triad(float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = b[i] + s * c[i];
}

// A kernel launched exactly once in this process, timed as single-launch
// programs do (events around one launch, no warm-up): includes the launcher's
// first-use setup and the lazy loading of the kernel.
__global__ void first_use(float* __restrict__ a, const float* __restrict__ b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = 2.0f * b[i];
}

static double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class F>
static void measure(const char* name, int count, cudaStream_t stream, F launch)
{
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < 1000; ++i)
        launch(); // warm-up: loading, first-use setup
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventRecord(start, stream));
    const double t0 = now_us();
    for (int i = 0; i < count; ++i)
        launch();
    const double t1 = now_us();
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("LAUNCH %s cpu_us=%.4f gpu_us=%.4f\n", name, (t1 - t0) / count, 1000.0 * ms / count);
    std::fflush(stdout);
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
}

int main(int argc, char** argv)
{
    const int count = argc > 1 ? std::atoi(argv[1]) : 100000;
    const int n = 1 << 20;
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMalloc(&c, n * sizeof(float)));
    CHECK(cudaMemset(b, 0, n * sizeof(float)));
    CHECK(cudaMemset(c, 0, n * sizeof(float)));

    // First use, timed like a single-launch program: host wall time of the
    // launch call, and GPU time between events around it.
    {
        cudaEvent_t start, stop;
        CHECK(cudaEventCreate(&start));
        CHECK(cudaEventCreate(&stop));
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaEventRecord(start, 0));
        const double t0 = now_us();
        first_use<<<(n + 255) / 256, 256>>>(a, b, n);
        const double t1 = now_us();
        CHECK(cudaEventRecord(stop, 0));
        CHECK(cudaEventSynchronize(stop));
        CHECK(cudaGetLastError());
        float ms = 0.0f;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        std::printf("LAUNCH first_launch cpu_us=%.4f gpu_us=%.4f\n", t1 - t0, 1000.0 * ms);
    }
    measure("empty_256x128", count, 0, [&] { empty_kernel<<<256, 128>>>(); });
    measure("empty_1x32", count, 0, [&] { empty_kernel<<<1, 32>>>(); });
    // Two kernels in turn, as loops of several kernels launch them (an
    // elimination step's two kernels, a scan's passes).
    bool flip = false;
    measure("empty_alternating", count, 0, [&] {
        if ((flip = !flip))
            empty_kernel<<<256, 128>>>();
        else
            empty_kernel_b<<<256, 128>>>();
    });
    measure("triad_1M", count / 4, 0, [&] { triad<<<(n + 255) / 256, 256>>>(a, b, c, 3.0f, n); });
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    measure("triad_1M_stream", count / 4, s, [&] { triad<<<(n + 255) / 256, 256, 0, s>>>(a, b, c, 3.0f, n); });
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    std::printf("PASS\n");
    return 0;
}
