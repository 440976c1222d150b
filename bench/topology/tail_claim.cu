// tail_claim.cu: what a static worker loses to the hardware's block
// placement on a grid whose last pass is partial, and how much a claim
// for the last pass gets back (issue 10; bench/RESULTS.md, twenty-fourth
// session). One kernel body (a block-wide settle loop like the testdata's
// settle_tail: rounds of shared-memory averaging between barriers, every
// 7th block settled after one round, the rest after `rounds`) run as
//   native  the grid itself, N blocks;
//   static  W = 8 a SM workers, worker w running w, w + W, ... (slatec's
//           static worker);
//   claim   the same workers running the full passes so, then each taking
//           its next block of the last pass from a counter (one atomic a
//           block; the last worker out zeroes the counters for the next
//           launch, as the queue worker's SLATE_FLAG_RESET does);
//   fresh   claim with a counter zeroed ahead for each launch (no exit
//           count: the claims' own cost);
//   mirror  static, but the last pass on the workers launched last (worker
//           w runs tail + W - 1 - w): no atomics;
//   spread  static, but the last pass's r blocks on r workers evenly spaced
//           in launch order (worker w runs tail + w * r / W when that
//           quotient steps at w): no atomics, and each SM gets its share of
//           the last pass however the hardware placed the workers.
// Prints the median of 30 launches each, for grids of 1.0x-3.7 waves, with
// ROUNDS rounds of a long block (argv[1], default 14) and every SHORT-th
// block one round (argv[2], default 7; 0: every block long).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define T 256

struct counters {
    unsigned int next, exited;
};

__device__ __forceinline__ void body(unsigned int b, const int* rounds_of, int* out)
{
    __shared__ int s[T];
    const int t = threadIdx.x;
    int v = (int)(b * 2654435761u + t * 40503u) & 0xffff;
    const int rounds = rounds_of[b];
    for (int r = 0; r < rounds; ++r) {
        s[t] = v;
        __syncthreads();
        v = (v + s[(t + 1) % T]) / 3 + (r & 1);
        __syncthreads();
    }
    if (t == 0)
        out[b] = v;
}

__global__ void native(const int* rounds_of, int* out) { body(blockIdx.x, rounds_of, out); }

__global__ void static_worker(const int* rounds_of, int* out, unsigned int total)
{
    for (unsigned int id = blockIdx.x; id < total; id += gridDim.x) {
        body(id, rounds_of, out);
        __syncthreads();
    }
}

__global__ void mirror_worker(const int* rounds_of, int* out, unsigned int total, unsigned int tail)
{
    for (unsigned int id = blockIdx.x; id < tail + gridDim.x; id += gridDim.x) {
        const unsigned int b = id < tail ? id : tail + tail + gridDim.x - 1u - id;
        if (b >= total)
            break;
        body(b, rounds_of, out);
        __syncthreads();
    }
}

__global__ void spread_worker(const int* rounds_of, int* out, unsigned int total, unsigned int tail)
{
    unsigned int id = blockIdx.x;
    for (; id < tail; id += gridDim.x) {
        body(id, rounds_of, out);
        __syncthreads();
    }
    const unsigned int r = total - tail, lo = blockIdx.x * r / gridDim.x, hi = (blockIdx.x + 1u) * r / gridDim.x;
    if (hi > lo)
        body(tail + lo, rounds_of, out);
}

__global__ void claim_worker(const int* rounds_of, int* out, unsigned int total, unsigned int tail, counters* c, bool count_exit)
{
    __shared__ unsigned int next;
    unsigned int id = blockIdx.x;
    for (; id < tail; id += gridDim.x) { // the full passes, in dispatch order
        body(id, rounds_of, out);
        __syncthreads();
    }
    for (;;) { // the last pass, claimed
        if (threadIdx.x == 0)
            next = tail + atomicAdd(&c->next, 1u);
        __syncthreads();
        id = next;
        __syncthreads();
        if (id >= total)
            break;
        body(id, rounds_of, out);
    }
    if (count_exit && threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&c->exited, 1u) == gridDim.x - 1u) {
            c->next = 0u;
            c->exited = 0u;
            __threadfence();
        }
    }
}

int main(int argc, char** argv)
{
    const int long_rounds = argc > 1 ? std::atoi(argv[1]) : 14;
    const int short_every = argc > 2 ? std::atoi(argv[2]) : 7;
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    const unsigned int sms = p.multiProcessorCount, W = sms * 8u;
    std::printf("%s, %u SMs, %u workers (8 of %d threads a SM)\n", p.name, sms, W, T);
    const unsigned int max_total = W * 4u;
    std::vector<int> rounds(max_total);
    for (unsigned int b = 0; b < max_total; ++b)
        rounds[b] = short_every > 0 && b % short_every == 0 ? 1 : long_rounds;
    int *d_rounds, *d_out;
    counters *d_c, *d_fresh;
    const int reps = 31;
    cudaMalloc(&d_rounds, max_total * sizeof(int));
    cudaMalloc(&d_out, max_total * sizeof(int));
    cudaMalloc(&d_c, sizeof(counters));
    cudaMemset(d_c, 0, sizeof(counters));
    cudaMalloc(&d_fresh, reps * sizeof(counters));
    cudaMemcpy(d_rounds, rounds.data(), max_total * sizeof(int), cudaMemcpyHostToDevice);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<int> want(max_total), got(max_total);
    const double waves[] = {1.0, 1.25, 1.5, 1.7, 1.9, 2.05, 2.23, 2.5, 3.7};
    std::printf("%d rounds a long block, every %d-th block short (0: none)\n%-6s %-7s %10s %8s %8s %8s %8s %8s  %s\n", long_rounds, short_every, "waves",
                "blocks", "native us", "static", "claim", "fresh", "mirror", "spread", "outputs");
    for (double wv : waves) {
        const unsigned int total = (unsigned int)(wv * W);
        const unsigned int tail = total / W * W; // the last pass's first id (total when every pass is full)
        double ms[6];
        bool same = true;
        cudaMemset(d_fresh, 0, reps * sizeof(counters));
        for (int m = 0; m < 6; ++m) {
            std::vector<float> ts;
            for (int rep = 0; rep < reps; ++rep) {
                cudaEventRecord(a);
                if (m == 0)
                    native<<<total, T>>>(d_rounds, d_out);
                else if (m == 1)
                    static_worker<<<std::min(W, total), T>>>(d_rounds, d_out, total);
                else if (m == 2)
                    claim_worker<<<std::min(W, total), T>>>(d_rounds, d_out, total, tail, d_c, true);
                else if (m == 3)
                    claim_worker<<<std::min(W, total), T>>>(d_rounds, d_out, total, tail, d_fresh + rep, false);
                else if (m == 4)
                    mirror_worker<<<std::min(W, total), T>>>(d_rounds, d_out, total, tail);
                else
                    spread_worker<<<std::min(W, total), T>>>(d_rounds, d_out, total, tail);
                cudaEventRecord(b);
                cudaEventSynchronize(b);
                float t = 0;
                cudaEventElapsedTime(&t, a, b);
                if (rep > 0)
                    ts.push_back(t);
            }
            std::sort(ts.begin(), ts.end());
            ms[m] = ts[ts.size() / 2];
            cudaMemcpy(m == 0 ? want.data() : got.data(), d_out, total * sizeof(int), cudaMemcpyDeviceToHost);
            if (m > 0)
                same = same && std::equal(want.begin(), want.begin() + total, got.begin());
        }
        if (cudaGetLastError() != cudaSuccess) {
            std::printf("error: %s\n", cudaGetErrorString(cudaGetLastError()));
            return 1;
        }
        std::printf("%-6.2f %-7u %10.2f %8.3f %8.3f %8.3f %8.3f %8.3f  %s\n", wv, total, ms[0] * 1e3, ms[1] / ms[0], ms[2] / ms[0], ms[3] / ms[0],
                    ms[4] / ms[0], ms[5] / ms[0], same ? "equal" : "DIFFER");
    }
    return 0;
}
