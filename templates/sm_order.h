// ---- slatec SM order: GPC by GPC, from thread-block clusters ----------------
// The drop-in launcher's SLATE_SM_ORDER=gpc (prelude.cu, gpc_places) orders
// the SMs as the Go runtime does (runtime/smorder.go, smGroupsFromClusters):
// the blocks of one thread-block cluster run in one GPC, so SMs seen in one
// cluster are one group (transitively); the groups by their lowest SM, each
// in ascending SM order, then the SMs never seen, one by one. Plain C++ (no
// CUDA), so that a CPU test checks it against the Go runtime's.
#ifndef SLATE_SM_ORDER_H
#define SLATE_SM_ORDER_H
#ifndef __CUDACC_RTC__
#include <cstring>
#include <vector>

namespace slate_sm_order {

inline int find_root(std::vector<int>& parent, int x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

// order_of returns the SM order of a device of sms SMs from cluster
// records: smids holds the %smid of blocks, cluster by cluster (each
// cluster `cluster` consecutive entries; ids outside 0..sms-1 ignored).
inline std::vector<int> order_of(int sms, const unsigned int* smids, long long n, int cluster)
{
    std::vector<int> parent(sms > 0 ? sms : 0);
    std::vector<bool> seen(parent.size(), false);
    for (int i = 0; i < sms; ++i)
        parent[i] = i;
    for (long long c = 0; cluster > 0 && c + cluster <= n; c += cluster) {
        int first = -1;
        for (long long b = c; b < c + cluster; ++b) {
            const unsigned int sm = smids[b];
            if (sm >= (unsigned int)sms)
                continue; // not an SM of this device
            seen[sm] = true;
            if (first < 0) {
                first = (int)sm;
                continue;
            }
            const int a = find_root(parent, first), r = find_root(parent, (int)sm);
            if (a != r)
                parent[a > r ? a : r] = a < r ? a : r; // the root is the group's lowest SM
        }
    }
    std::vector<int> order;
    for (int root = 0; root < sms; ++root) {
        if (!seen[root] || find_root(parent, root) != root)
            continue;
        for (int sm = root; sm < sms; ++sm)
            if (seen[sm] && find_root(parent, sm) == root)
                order.push_back(sm);
    }
    for (int sm = 0; sm < sms; ++sm)
        if (!seen[sm])
            order.push_back(sm);
    return order;
}

// place_table fills table (slate_ctl.sm_place, `size` bytes) for order:
// byte s is SM s's place plus one, 0 where the place is s itself or past
// what a byte holds (docs/ABI.md), as the Go runtime's placeTable.
inline void place_table(const std::vector<int>& order, unsigned char* table, int size)
{
    std::memset(table, 0, (size_t)size);
    for (int place = 0; place < (int)order.size(); ++place) {
        const int sm = order[place];
        if (sm >= 0 && sm < size && place < 255 && place != sm)
            table[sm] = (unsigned char)(place + 1);
    }
}

} // namespace slate_sm_order
#endif // __CUDACC_RTC__
#endif // SLATE_SM_ORDER_H
