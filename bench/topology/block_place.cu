// block_place.cu: where the hardware puts the blocks of a grid that fits
// the GPU in one wave (issue 10: a static worker runs logical blocks
// w, w + workers, ... and so inherits the placement of its workers w).
// For each shape (blocks of T threads, G blocks, at most R resident a SM),
// every block records its %smid; printed: how many SMs there are, the
// blocks each SM got, and the blocks of SM 0..3 and of two high SMs.
#include <cstdio>
#include <vector>
#include <map>

__global__ void place(unsigned int* sm, long long spin)
{
    unsigned int s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    if (threadIdx.x == 0)
        sm[blockIdx.x] = s;
    const long long t0 = clock64();
    while (clock64() - t0 < spin) {
    }
}

int main()
{
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    const int sms = p.multiProcessorCount;
    struct shape { int threads, per_sm; };
    const shape shapes[] = {{256, 8}, {512, 4}, {128, 12}, {128, 16}, {1024, 2}};
    for (const shape& sh : shapes) {
        const int g = sms * sh.per_sm;
        unsigned int* d;
        cudaMalloc(&d, g * sizeof(unsigned int));
        // Pad shared memory so that exactly per_sm blocks fit an SM.
        const size_t smem = p.sharedMemPerMultiprocessor / sh.per_sm - 1024;
        cudaFuncSetAttribute(place, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        place<<<g, sh.threads, smem>>>(d, 200000);
        if (cudaDeviceSynchronize() != cudaSuccess) {
            std::printf("shape %d x %d: %s\n", g, sh.threads, cudaGetErrorString(cudaGetLastError()));
            continue;
        }
        std::vector<unsigned int> h(g);
        cudaMemcpy(h.data(), d, g * sizeof(unsigned int), cudaMemcpyDeviceToHost);
        cudaFree(d);
        std::map<unsigned int, std::vector<int>> by;
        for (int b = 0; b < g; ++b)
            by[h[b]].push_back(b);
        int lo = g, hi = 0;
        for (auto& e : by) {
            lo = std::min(lo, (int)e.second.size());
            hi = std::max(hi, (int)e.second.size());
        }
        std::printf("shape %d blocks x %d threads (%d a SM wanted): %zu SMs used, %d..%d blocks each\n", g, sh.threads, sh.per_sm,
                    by.size(), lo, hi);
        // blocks b -> smid, first 40 in order
        std::printf("  first 40 blocks' SMs:");
        for (int b = 0; b < 40 && b < g; ++b)
            std::printf(" %u", h[b]);
        std::printf("\n");
        for (unsigned int s : {0u, 1u, 2u, 3u, (unsigned)sms / 2, (unsigned)sms - 1}) {
            std::printf("  SM %u:", s);
            for (int b : by[s])
                std::printf(" %d", b);
            std::printf("\n");
        }
    }
    return 0;
}
