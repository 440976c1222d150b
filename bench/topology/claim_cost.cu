// What one-address atomics cost a short launch (issue 10: the queue
// worker's fixed cost). With SLATE_ITERS=4 a 4.4 us vector_add (4096 blocks
// of 256) took 8.3 us held: 1024 workers, each claiming twice (one task,
// then the claim that finds none) and counting its exit, about 3000
// returning atomics on two addresses. This times a copy kernel of the same
// shape whose block leaders do K atomics on one address before (claims) or
// after (exit counts) their work, on a fresh counter per launch, held behind
// a gate kernel (as HARNESS_HOLD=1 does; bench/topology/held_rounds.h),
// median of ROUNDS rounds of REPS launches, variants in a new order each round:
//
//   native        4096 blocks, no atomics
//   stride        1024 workers striding over the 4096 blocks (the static worker)
//   claimK        1024 workers, K returning atomicAdds on one address by each
//                 leader, the result published in shared memory (as a claim)
//   claim1+exit   one claim and one acq_rel exit count on another address
//   claim2+exit   two claims and the exit count (the queue worker's pattern)
//   claim2-read   two claims, the second skipped when a plain load of the
//                 counter already shows none left
//   claim1-read   one claim behind a load of the counter
//   redK          K non-returning atomics (RED) at the end of each worker
//
//   nvcc -std=c++17 -O2 -arch=native -o /tmp/claim_cost bench/topology/claim_cost.cu && /tmp/claim_cost 200 15
#include "held_rounds.h"

constexpr int kThreads = 256, kBlocks = 4096, kWorkers = 1024, kPer = kBlocks / kWorkers;

__device__ __forceinline__ void add_block(const float* a, const float* b, float* c, unsigned int blk) {
    const unsigned int i = blk * kThreads + threadIdx.x;
    c[i] = a[i] + b[i];
}

__global__ void native_add(const float* a, const float* b, float* c) { add_block(a, b, c, blockIdx.x); }

__global__ void stride_add(const float* a, const float* b, float* c) {
    for (unsigned int blk = blockIdx.x; blk < kBlocks; blk += kWorkers) add_block(a, b, c, blk);
}

// K claims: the leader's atomics, the last one's result read by the block
// (so the block waits for it, as the queue worker waits for its task).
template <int K, bool kExit>
__global__ void claim_add(const float* a, const float* b, float* c, unsigned long long* ctr) {
    __shared__ unsigned long long got;
    if (threadIdx.x == 0) {
        unsigned long long v = 0;
        for (int k = 0; k < K; ++k) v += atomicAdd(&ctr[0], 1ull);
        got = v;
    }
    __syncthreads();
    const unsigned int off = got == ~0ull ? 1u : 0u; // 0: keeps the wait for the result
    for (int j = 0; j < kPer; ++j) add_block(a, b, c, (blockIdx.x * kPer + j + off) % kBlocks);
    if (kExit) {
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned int old;
            asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"((unsigned int*)&ctr[1]) : "memory");
            if (old == 0xffffffffu) c[0] = 0.0f;
        }
    }
}

// Two claims, the second only when a load of the counter shows work left.
__global__ void claim2_read_add(const float* a, const float* b, float* c, unsigned long long* ctr) {
    __shared__ unsigned long long got;
    if (threadIdx.x == 0) got = atomicAdd(&ctr[0], 1ull);
    __syncthreads();
    for (int j = 0; j < kPer; ++j) add_block(a, b, c, (blockIdx.x * kPer + j + (got == ~0ull ? 1u : 0u)) % kBlocks);
    __syncthreads();
    if (threadIdx.x == 0) {
        if (*(volatile unsigned long long*)&ctr[0] < kWorkers) got = atomicAdd(&ctr[0], 1ull);
        else got = ~0ull;
    }
    __syncthreads();
    if (got < kWorkers) c[1] = 0.0f; // never: every task is taken by then
}

// One claim behind a load of the counter (a claim that the load lets
// through pays both round trips).
__global__ void claim1_read_add(const float* a, const float* b, float* c, unsigned long long* ctr) {
    __shared__ unsigned long long got;
    if (threadIdx.x == 0)
        got = *(volatile unsigned long long*)&ctr[0] >= (unsigned long long)kBlocks ? ~0ull : atomicAdd(&ctr[0], 1ull);
    __syncthreads();
    for (int j = 0; j < kPer; ++j) add_block(a, b, c, (blockIdx.x * kPer + j + (got == ~0ull ? 1u : 0u)) % kBlocks);
}

template <int K>
__global__ void red_add(const float* a, const float* b, float* c, unsigned long long* ctr) {
    for (unsigned int blk = blockIdx.x; blk < kBlocks; blk += kWorkers) add_block(a, b, c, blk);
    __syncthreads();
    if (threadIdx.x == 0)
        for (int k = 0; k < K; ++k) atomicAdd(&ctr[0], 1ull);
}

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::atoi(argv[1]) : 200;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 15;
    float *a, *b, *c;
    const size_t n = (size_t)kBlocks * kThreads;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMalloc(&c, n * sizeof(float)));
    CHECK(cudaMemset(a, 0, n * sizeof(float)));
    CHECK(cudaMemset(b, 0, n * sizeof(float)));
    // A fresh pair of counters per launch of a round, each on its own 128-byte line.
    unsigned long long* ctrs = nullptr;
    const size_t stride = 16;
    CHECK(cudaMalloc(&ctrs, (size_t)reps * stride * sizeof(unsigned long long)));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    using L = void (*)(cudaStream_t, const float*, const float*, float*, unsigned long long*);
    struct variant {
        const char* name;
        L launch;
    };
    const variant vs[] = {
        {"native", [](cudaStream_t s, const float* a, const float* b, float* c, unsigned long long*) {
             native_add<<<kBlocks, kThreads, 0, s>>>(a, b, c);
         }},
        {"stride", [](cudaStream_t s, const float* a, const float* b, float* c, unsigned long long*) {
             stride_add<<<kWorkers, kThreads, 0, s>>>(a, b, c);
         }},
        {"claim0", [](cudaStream_t s, const float* a, const float* b, float* c, unsigned long long* k) {
             claim_add<0, false><<<kWorkers, kThreads, 0, s>>>(a, b, c, k);
         }},
        {"claim1", [](cudaStream_t s, const float* a, const float* b, float* c, unsigned long long* k) {
             claim_add<1, false><<<kWorkers, kThreads, 0, s>>>(a, b, c, k);
         }},
        {"claim2", [](cudaStream_t s, const float* a, const float* b, float* c, unsigned long long* k) {
             claim_add<2, false><<<kWorkers, kThreads, 0, s>>>(a, b, c, k);
         }},
        {"claim3", [](cudaStream_t s, const float* a, const float* b, float* c, unsigned long long* k) {
             claim_add<3, false><<<kWorkers, kThreads, 0, s>>>(a, b, c, k);
         }},
        {"claim1+exit", [](cudaStream_t s, const float* a, const float* b, float* c, unsigned long long* k) {
             claim_add<1, true><<<kWorkers, kThreads, 0, s>>>(a, b, c, k);
         }},
        {"claim2+exit", [](cudaStream_t s, const float* a, const float* b, float* c, unsigned long long* k) {
             claim_add<2, true><<<kWorkers, kThreads, 0, s>>>(a, b, c, k);
         }},
        {"claim2-read", [](cudaStream_t s, const float* a, const float* b, float* c, unsigned long long* k) {
             claim2_read_add<<<kWorkers, kThreads, 0, s>>>(a, b, c, k);
         }},
        {"claim1-read", [](cudaStream_t s, const float* a, const float* b, float* c, unsigned long long* k) {
             claim1_read_add<<<kWorkers, kThreads, 0, s>>>(a, b, c, k);
         }},
        {"red1", [](cudaStream_t s, const float* a, const float* b, float* c, unsigned long long* k) {
             red_add<1><<<kWorkers, kThreads, 0, s>>>(a, b, c, k);
         }},
        {"red3", [](cudaStream_t s, const float* a, const float* b, float* c, unsigned long long* k) {
             red_add<3><<<kWorkers, kThreads, 0, s>>>(a, b, c, k);
         }},
    };
    const int nv = sizeof(vs) / sizeof(vs[0]);
    const auto us = held_rounds(
        nv, reps, rounds, s,
        [&](int) { CHECK(cudaMemsetAsync(ctrs, 0, (size_t)reps * stride * sizeof(unsigned long long), s)); },
        [&](int v, int i) { vs[v].launch(s, a, b, c, ctrs + (size_t)i * stride); });
    std::vector<std::string> names;
    for (const variant& v : vs) names.push_back(v.name);
    held_print(names, us, std::vector<int>(nv, 0), reps); // each against the native grid
    return 0;
}
