// slatec-test: refuse cluster_pair_exchange
// Thread block clusters (__cluster_dims__(2,1,1), cluster.sync(), distributed shared memory): refused by the transform.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// Each block of a 2-block cluster reads its partner's shared memory.
__global__ void __cluster_dims__(2, 1, 1) cluster_pair_exchange(const int* in, int* out) {
    __shared__ int s[128];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = in[i];
    cluster.sync();
    int* partner = cluster.map_shared_rank(s, rank ^ 1);
    out[i] = partner[threadIdx.x];
    cluster.sync();  // keep the partner's shared memory alive until read
}

__global__ void plain_copy(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
