// slatec-test: no-harness
// A cg::grid_group passed to a helper taking `const cg::grid_group&` (thread_rank over the whole grid, no sync): the helper is copied and its queries read the logical block index; a block-level neighbour.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__device__ unsigned long long grid_rank(const cg::grid_group& g) { return g.thread_rank(); }

__global__ void grid_rank_fill(unsigned long long* out, unsigned long long n) {
    cg::grid_group grid = cg::this_grid();
    unsigned long long r = grid_rank(grid);
    if (r < n) out[r] = r * 3 + grid.size();
}

// Acceptable neighbour: block-level cooperative groups only.
__global__ void block_rank_fill(unsigned* out, int n) {
    cg::thread_block cta = cg::this_thread_block();
    int i = blockIdx.x * blockDim.x + cta.thread_rank();
    if (i < n) out[i] = cta.thread_rank();
}
