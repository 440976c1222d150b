// ---- slatec leaky-bucket interleaving (host C++) ---------------------------
// The same algorithm as plan.LeakyBucket (plan/bucket.go), line for line, so
// that the maps a merged launcher builds at run time are exactly the maps the
// planner summarised: templates/bucket_test.go compiles this file with g++
// and compares both on many random inputs. Change the two together.
//
// Kernel i has weight w_i (its SM allocation a_i, or a_i / latency_i
// quantised to 20 bits under latency compensation). Blocks are dispatched one
// per step, WF2Q style: a kernel is eligible once k_i * W <= t * w_i (its
// bucket has started filling the tokens of its next block), and among the
// eligible ones the kernel whose bucket fills first, smallest (k_i + 1) / w_i,
// goes; exact ties go to the lower index. W is the sum of the weights of the
// kernels that still have blocks; when one runs out, a new segment starts with
// the others. All comparisons are exact integer products (128-bit).
//
// The order is periodic with period W while the set of kernels is constant,
// so one period is stepped and the rest copied (replicate_periods).
#ifndef SLATE_BUCKET_H
#define SLATE_BUCKET_H

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace slate_bucket {

// Bounds, as in plan/bucket.go and plan/profile.go.
static const int kMaxSMs = 4096;
static const long long kMaxBlocks = 2147483647LL;

struct input {
    std::vector<int> alloc;        // a_i >= 1: SMs given to kernel i
    std::vector<long long> blocks; // TB_i >= 1: thread blocks of kernel i
    std::vector<double> latency;   // empty, or per-block latency > 0 per kernel
};

struct output {
    std::vector<int> map_kernel;   // kernel of merged block bid
    std::vector<unsigned> map_blk; // index of that block within its kernel
    std::vector<uint64_t> weights; // the integer weights used
};

// a*b < c*d without overflow.
static inline bool mul_less(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return (unsigned __int128)a * b < (unsigned __int128)c * d;
}

static inline bool positive(double v) { return v > 0 && !std::isinf(v); }

// weights validates the input and computes the integer weights; it returns
// false with a message on bad input (the messages follow bucket.go's).
static bool weights(const input& in, std::vector<uint64_t>* w, std::string* err)
{
    const size_t n = in.alloc.size();
    if (n == 0) {
        *err = "leaky bucket: no kernels";
        return false;
    }
    if (in.blocks.size() != n) {
        *err = "leaky bucket: allocations and block counts differ in number";
        return false;
    }
    if (!in.latency.empty() && in.latency.size() != n) {
        *err = "leaky bucket: allocations and latencies differ in number";
        return false;
    }
    long long total = 0;
    for (size_t i = 0; i < n; ++i) {
        if (in.alloc[i] < 1 || in.alloc[i] > kMaxSMs) {
            *err = "leaky bucket: kernel " + std::to_string(i) + ": allocation outside 1..4096";
            return false;
        }
        if (in.blocks[i] < 1) {
            *err = "leaky bucket: kernel " + std::to_string(i) + ": no blocks";
            return false;
        }
        total += in.blocks[i];
        if (total > kMaxBlocks) {
            *err = "leaky bucket: more than 2147483647 blocks in total";
            return false;
        }
        if (!in.latency.empty() && !positive(in.latency[i])) {
            *err = "leaky bucket: kernel " + std::to_string(i) + ": latency is not a positive number";
            return false;
        }
    }
    w->assign(n, 0);
    bool equal = true;
    for (size_t i = 0; i < in.latency.size(); ++i)
        if (in.latency[i] != in.latency[0])
            equal = false;
    if (in.latency.empty() || equal) {
        for (size_t i = 0; i < n; ++i)
            (*w)[i] = (uint64_t)in.alloc[i];
        return true;
    }
    // Compensated weights a_i / l_i, scaled so that the largest is 2^20.
    const double scale = 1 << 20;
    std::vector<double> x(n);
    double mx = 0.0;
    for (size_t i = 0; i < n; ++i) {
        x[i] = (double)in.alloc[i] / in.latency[i];
        if (x[i] > mx)
            mx = x[i];
    }
    for (size_t i = 0; i < n; ++i) {
        double v = std::round(x[i] / mx * scale);
        (*w)[i] = (uint64_t)(v < 1 ? 1 : v);
    }
    return true;
}

// sequence generates the interleaving one block at a time.
struct sequence {
    std::vector<uint64_t> w;
    std::vector<long long> remaining;
    std::vector<uint64_t> k;   // blocks released in the current segment
    std::vector<int> active;   // kernels with blocks left, in index order
    uint64_t W = 0;            // sum of the active weights
    uint64_t t = 0;            // step within the current segment
    long long left = 0;        // blocks left in total

    sequence(const std::vector<uint64_t>& weights, const std::vector<long long>& blocks)
        : w(weights), remaining(blocks), k(weights.size(), 0)
    {
        for (long long b : blocks)
            left += b;
        restart();
    }

    // restart begins a new segment over the kernels that still have blocks.
    void restart()
    {
        active.clear();
        W = 0;
        t = 0;
        for (size_t i = 0; i < remaining.size(); ++i) {
            if (remaining[i] > 0) {
                active.push_back((int)i);
                W += w[i];
                k[i] = 0;
            }
        }
    }

    // next returns the kernel of the next block, or -1 when all are released.
    int next()
    {
        if (left == 0)
            return -1;
        int best = -1;
        for (int i : active) {
            // eligible: k_i / w_i <= t / W
            if (mul_less(t, w[i], k[i], W))
                continue;
            // finish (k_i + 1) / w_i: smaller wins, ties to the lower index
            if (best < 0 || mul_less(k[i] + 1, w[best], k[best] + 1, w[i]))
                best = i;
        }
        // WF2Q always has an eligible kernel (summing k_i*W > t*w_i over all
        // i would give t*W > t*W).
        ++k[best];
        ++t;
        --left;
        if (--remaining[best] == 0)
            restart();
        return best;
    }

    // replicate_periods is the fast path: at a segment start, while no
    // kernel can run out within q periods, one period is stepped and copied
    // q-1 times (the state after a period equals the start state).
    size_t replicate_periods(output* out, std::vector<unsigned>& done, size_t bid)
    {
        uint64_t q = ~(uint64_t)0;
        for (int i : active) {
            const uint64_t c = (uint64_t)(remaining[i] - 1) / w[i];
            if (c < q)
                q = c;
        }
        if (q < 2)
            return bid;
        const size_t start = bid;
        for (uint64_t s = 0; s < W; ++s) {
            const int i = next();
            out->map_kernel[bid] = i;
            out->map_blk[bid] = done[i]++;
            ++bid;
        }
        const size_t end = bid;
        for (uint64_t c = 1; c < q; ++c) {
            for (size_t j = start; j < end; ++j) {
                const int i = out->map_kernel[j];
                out->map_kernel[bid] = i;
                out->map_blk[bid] = done[i]++;
                ++bid;
            }
        }
        for (int i : active) {
            remaining[i] -= (long long)((q - 1) * w[i]);
            k[i] = 0;
        }
        left -= (long long)((q - 1) * W);
        t = 0;
        return bid;
    }
};

// leaky_bucket computes mapKernel and mapBlk for the kernels of in. It
// returns false with a message on bad input.
static bool leaky_bucket(const input& in, output* out, std::string* err)
{
    if (!weights(in, &out->weights, err))
        return false;
    long long total = 0;
    for (long long b : in.blocks)
        total += b;
    out->map_kernel.assign((size_t)total, 0);
    out->map_blk.assign((size_t)total, 0);
    std::vector<unsigned> done(in.alloc.size(), 0);
    sequence s(out->weights, in.blocks);
    for (size_t bid = 0; bid < (size_t)total;) {
        if (s.t == 0)
            bid = s.replicate_periods(out, done, bid);
        const int i = s.next();
        out->map_kernel[bid] = i;
        out->map_blk[bid] = done[i]++;
        ++bid;
    }
    return true;
}

} // namespace slate_bucket
#endif // SLATE_BUCKET_H
// ---- end of slatec leaky bucket ---------------------------------------------
