// slatec-test: refuse grid_in_struct
// A cg::grid_group stored in a struct and queried through it: slatec follows a grid group only where it is queried directly or passed to a function it can see, so this kernel is refused.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

struct Ranker {
    cg::grid_group g;
    __device__ unsigned long long rank() const { return g.thread_rank(); }
};

__global__ void grid_in_struct(unsigned long long* out, unsigned long long n) {
    cg::grid_group grid = cg::this_grid();
    Ranker r{grid};
    unsigned long long i = r.rank();
    if (i < n) out[i] = i;
}

int main() {
    unsigned long long* out = nullptr;
    grid_in_struct<<<4, 64>>>(out, 256);
    return 0;
}
