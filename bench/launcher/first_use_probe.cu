// What the first use of a kernel costs the host, call by call: the lazy
// loading of a function, the occupancy query with the function loaded and
// not, a first launch with the function loaded and not. Explains the
// first-launch row of the launcher benchmark (docs/ABI.md, "Host cost").
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>

static double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

__global__ void k_attr(float* a) { a[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }
__global__ void k_occ(float* a) { a[blockIdx.x * blockDim.x + threadIdx.x] = 2.0f; }
__global__ void k_launch(float* a) { a[blockIdx.x * blockDim.x + threadIdx.x] = 3.0f; }
__global__ void k_loaded(float* a) { a[blockIdx.x * blockDim.x + threadIdx.x] = 4.0f; }

#define T(label, expr)                                           \
    do {                                                         \
        const double t0_ = now_us();                             \
        expr;                                                    \
        std::printf("PROBE %-40s %8.2f us\n", label, now_us() - t0_); \
    } while (0)

int main()
{
    float* a;
    cudaMalloc(&a, 1 << 20);
    cudaDeviceSynchronize();
    int dev = 0, sms = 0, n = 0;
    cudaFuncAttributes attr;
    T("cudaGetDevice", cudaGetDevice(&dev));
    T("cudaDeviceGetAttribute(SMs)", cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    T("cudaFuncGetAttributes (not loaded)", cudaFuncGetAttributes(&attr, (const void*)k_attr));
    T("cudaFuncGetAttributes (loaded)", cudaFuncGetAttributes(&attr, (const void*)k_attr));
    T("occupancy query (loaded)", cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, (const void*)k_attr, 256, 0));
    T("occupancy query again", cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, (const void*)k_attr, 256, 0));
    T("occupancy query (not loaded)", cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, (const void*)k_occ, 256, 0));
    T("first launch (not loaded)", (k_launch<<<16, 256>>>(a)));
    cudaDeviceSynchronize();
    cudaFuncGetAttributes(&attr, (const void*)k_loaded);
    T("first launch (loaded by a query)", (k_loaded<<<16, 256>>>(a)));
    cudaDeviceSynchronize();
    T("second launch", (k_loaded<<<16, 256>>>(a)));
    cudaDeviceSynchronize();
    return 0;
}
