// Held timing for the topology probes (tiny_cost.cu, claim_cost.cu): a
// round of one variant enqueues REPS launches behind a kernel that waits for
// the host (as testdata/include/harness.h's HARNESS_HOLD=1 does), so that
// the events around them time the GPU alone, not the host's launch rate.
// Variants run in a new order each round, so that none always follows
// another; a first round is a warm-up.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(x)                                                                             \
    do {                                                                                     \
        cudaError_t e_ = (x);                                                                \
        if (e_ != cudaSuccess) {                                                             \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

__global__ void held_gate(const volatile int* open) {
    while (*open == 0) {
    }
}

// held_rounds returns, per variant, the GPU time per launch in us of each
// round. prepare(v) enqueues what a round of v needs first (on s, ahead of
// the gate); launch(v, i) enqueues its i-th launch.
template <class Prepare, class Launch>
std::vector<std::vector<float>> held_rounds(int variants, int reps, int rounds, cudaStream_t s, Prepare prepare,
                                            Launch launch) {
    int *open = nullptr, *d_open = nullptr;
    CHECK(cudaHostAlloc(&open, sizeof(int), cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(&d_open, open, 0));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<std::vector<float>> us(variants);
    std::vector<int> order(variants);
    for (int v = 0; v < variants; ++v) order[v] = v;
    unsigned int seed = 12345u;
    for (int r = -1; r < rounds; ++r) {
        for (int v = variants - 1; v > 0; --v) {
            seed = seed * 1103515245u + 12345u;
            std::swap(order[v], order[(seed >> 8) % (unsigned int)(v + 1)]);
        }
        for (int v : order) {
            prepare(v);
            *(volatile int*)open = 0;
            held_gate<<<1, 1, 0, s>>>(d_open);
            CHECK(cudaEventRecord(e0, s));
            for (int i = 0; i < reps; ++i) launch(v, i);
            CHECK(cudaEventRecord(e1, s));
            *(volatile int*)open = 1;
            CHECK(cudaStreamSynchronize(s));
            CHECK(cudaGetLastError());
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 0) us[v].push_back(ms * 1000.0f / reps);
        }
    }
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    CHECK(cudaFreeHost(open));
    return us;
}

// held_print prints each variant's median, least and largest time per launch
// and the median of its per-round differences to its base variant's.
inline void held_print(const std::vector<std::string>& names, const std::vector<std::vector<float>>& us,
                       const std::vector<int>& base, int reps) {
    const size_t rounds = us.empty() ? 0 : us[0].size();
    std::printf("%-18s us/launch (median of %zu rounds, %d launches each)   min    max   - base\n", "variant", rounds, reps);
    for (size_t v = 0; v < names.size(); ++v) {
        std::vector<float> x = us[v], d;
        std::sort(x.begin(), x.end());
        for (size_t r = 0; r < rounds; ++r) d.push_back(us[v][r] - us[base[v]][r]);
        std::sort(d.begin(), d.end());
        std::printf("%-18s %8.3f %8.3f %8.3f %+8.3f\n", names[v].c_str(), x[x.size() / 2], x.front(), x.back(),
                    d[d.size() / 2]);
    }
}
