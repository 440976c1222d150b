// slatec-test: harness
// blockIdx/gridDim mapping for 1-D, 2-D and 3-D grids of odd sizes: each block records its ids once; 3-D blocks with shared sums.
#include "harness.h"

#include <vector>

// Thread (0,0,0) records the block's coordinates and the grid it saw; every thread
// bumps the block's hit counter, so hits must equal the threads per block.
__global__ void record_ids(unsigned* rec, unsigned* hits) {
    unsigned long long b = ((unsigned long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        rec[4 * b + 0] = blockIdx.x;
        rec[4 * b + 1] = blockIdx.y;
        rec[4 * b + 2] = blockIdx.z;
        rec[4 * b + 3] = gridDim.x * 7919u + gridDim.y * 131u + gridDim.z;
    }
    atomicAdd(&hits[b], 1u);
}

// Shared-memory sum of linear thread ids per block, tagged with the z and y block index.
__global__ void block_thread_sums(unsigned* out) {
    __shared__ unsigned sum;
    unsigned t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (t == 0) sum = 0;
    __syncthreads();
    atomicAdd(&sum, t);
    __syncthreads();
    if (t == 0) {
        unsigned b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
        out[b] = sum + (blockIdx.z << 24) + (blockIdx.y << 12);
    }
}

struct Case {
    dim3 grid, block;
};

int main() {
    const Case cases[] = {
        {dim3(2500), dim3(64)},             // 1-D
        {dim3(300, 20), dim3(8, 8)},        // 2-D
        {dim3(7, 5, 3), dim3(4, 4, 4)},     // small 3-D, odd sizes
        {dim3(65, 1, 33), dim3(32, 1, 2)},  // 3-D with a unit middle dimension
        {dim3(1, 3000), dim3(32)},          // tall 2-D
        {dim3(13, 11, 17), dim3(2, 3, 5)},  // 2431 blocks, odd block shape
    };
    // Timer labels, one per case. The odd grid shapes are the test: not scaled.
    const char* const labels[] = {"1d", "2d", "3d_small", "3d_unit_y", "2d_tall", "3d_odd_block"};
    std::vector<unsigned> all_rec, all_hits, all_sums;
    int idx = 0;
    for (const Case& c : cases) {
        size_t nb = (size_t)c.grid.x * c.grid.y * c.grid.z;
        unsigned tpb = c.block.x * c.block.y * c.block.z;
        unsigned *d_rec, *d_hits, *d_sums;
        CUDA_CHECK(cudaMalloc(&d_rec, 4 * nb * sizeof(unsigned)));
        CUDA_CHECK(cudaMalloc(&d_hits, nb * sizeof(unsigned)));
        CUDA_CHECK(cudaMalloc(&d_sums, nb * sizeof(unsigned)));
        CUDA_CHECK(cudaMemset(d_hits, 0, nb * sizeof(unsigned)));
        // record_ids counts into d_hits: under HARNESS_REPS the checked run starts again
        // from zeroed counters.
        harness_timed_reset(labels[idx], [&] {
            record_ids<<<c.grid, c.block>>>(d_rec, d_hits);
            CUDA_CHECK(cudaGetLastError());
            block_thread_sums<<<c.grid, c.block>>>(d_sums);
            CUDA_CHECK(cudaGetLastError());
        }, [&] { CUDA_CHECK(cudaMemset(d_hits, 0, nb * sizeof(unsigned))); });
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<unsigned> rec(4 * nb), hits(nb), sums(nb);
        CUDA_CHECK(cudaMemcpy(rec.data(), d_rec, rec.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(hits.data(), d_hits, nb * sizeof(unsigned), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, nb * sizeof(unsigned), cudaMemcpyDeviceToHost));

        std::vector<unsigned> want_rec(4 * nb), want_hits(nb, tpb), want_sums(nb);
        for (unsigned z = 0; z < c.grid.z; ++z)
            for (unsigned y = 0; y < c.grid.y; ++y)
                for (unsigned x = 0; x < c.grid.x; ++x) {
                    size_t b = ((size_t)z * c.grid.y + y) * c.grid.x + x;
                    want_rec[4 * b] = x;
                    want_rec[4 * b + 1] = y;
                    want_rec[4 * b + 2] = z;
                    want_rec[4 * b + 3] = c.grid.x * 7919u + c.grid.y * 131u + c.grid.z;
                    want_sums[b] = tpb * (tpb - 1) / 2 + (z << 24) + (y << 12);
                }
        if (!harness_equal("rec", rec.data(), want_rec.data(), rec.size())) return harness_fail("case %d ids", idx);
        if (!harness_equal("hits", hits.data(), want_hits.data(), nb)) return harness_fail("case %d hits", idx);
        if (!harness_equal("sums", sums.data(), want_sums.data(), nb)) return harness_fail("case %d sums", idx);
        all_rec.insert(all_rec.end(), rec.begin(), rec.end());
        all_hits.insert(all_hits.end(), hits.begin(), hits.end());
        all_sums.insert(all_sums.end(), sums.begin(), sums.end());
        CUDA_CHECK(cudaFree(d_rec));
        CUDA_CHECK(cudaFree(d_hits));
        CUDA_CHECK(cudaFree(d_sums));
        ++idx;
    }
    harness_dump("rec", all_rec.data(), all_rec.size());
    harness_dump("hits", all_hits.data(), all_hits.size());
    harness_dump("sums", all_sums.data(), all_sums.size());
    return harness_pass();
}
