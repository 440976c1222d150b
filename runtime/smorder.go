package runtime

import (
	"fmt"
	"slices"
)

// The device's SM order (docs/ABI.md, sm_place): an SMRange is a range of
// places in it, not of %smid values. %smid numbers interleave the GPCs two
// SMs at a time (SMs 0-39 of an H100 lie in all eight), and kernels side by
// side on two ranges contend for each GPC's path to L2 that both use: a
// float4 triad on SMs 0-39 slowed a tiled SGEMM on the other 92 by 11%, on
// three whole GPCs by 5% (bench/RESULTS.md). The order puts the SMs GPC by
// GPC, so that a range holds as few GPCs as its size allows, as a green
// context's partition does.

// EnvSMOrder selects the order: "gpc" (the default: GPC by GPC, found with
// thread-block clusters at Open) or "id" (%smid order, as the drop-in
// launch helpers use).
const EnvSMOrder = "SLATEC_SM_ORDER"

// smGroupsFromClusters turns cluster records — each the %smid of every
// block of one cluster, whose blocks the hardware runs in one GPC — into
// groups of SMs: SMs seen in a cluster together are one group
// (transitively); groups by their lowest SM, each in ascending SM order; SMs
// never seen come last, one group each. The SM order is the groups one
// after the other (a permutation of 0..sms-1).
func smGroupsFromClusters(sms int, clusters [][]uint32) [][]int {
	parent := make([]int, sms)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	seen := make([]bool, sms)
	for _, c := range clusters {
		first := -1
		for _, s := range c {
			if int(s) >= sms {
				continue // not an SM of this device: ignore
			}
			seen[s] = true
			if first < 0 {
				first = int(s)
				continue
			}
			a, b := find(first), find(int(s))
			if a != b {
				parent[max(a, b)] = min(a, b) // the root is the group's lowest SM
			}
		}
	}
	groups := map[int][]int{}
	var roots []int
	var unseen []int
	for s := range sms {
		if !seen[s] {
			unseen = append(unseen, s)
			continue
		}
		r := find(s)
		if _, ok := groups[r]; !ok {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], s)
	}
	slices.Sort(roots)
	out := make([][]int, 0, len(roots)+len(unseen))
	for _, r := range roots {
		out = append(out, groups[r])
	}
	for _, s := range unseen {
		out = append(out, []int{s})
	}
	return out
}

// orderOf concatenates groups.
func orderOf(groups [][]int) []int {
	var o []int
	for _, g := range groups {
		o = append(o, g...)
	}
	return o
}

// identityOrder is %smid order.
func identityOrder(sms int) []int {
	o := make([]int, sms)
	for i := range o {
		o[i] = i
	}
	return o
}

// placeTable is slate_ctl.sm_place for order: byte s is SM s's place plus
// one, 0 where the place is s itself or past what a byte holds (docs/ABI.md).
func placeTable(order []int) [RankSMs]byte {
	var t [RankSMs]byte
	for place, sm := range order {
		if sm < RankSMs && place < 255 && place != sm {
			t[sm] = byte(place + 1)
		}
	}
	return t
}

// checkOrder reports whether order is a permutation of 0..sms-1.
func checkOrder(order []int, sms int) error {
	if len(order) != sms {
		return fmt.Errorf("runtime: SM order of %d SMs for a device of %d", len(order), sms)
	}
	seen := make([]bool, sms)
	for _, s := range order {
		if s < 0 || s >= sms || seen[s] {
			return fmt.Errorf("runtime: SM order %v is not a permutation of the device's %d SMs", order, sms)
		}
		seen[s] = true
	}
	return nil
}
