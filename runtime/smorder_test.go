package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Clusters join SMs into groups transitively; the order is the groups by
// their lowest SM, each ascending, then the SMs never seen.
func TestSMGroupsFromClusters(t *testing.T) {
	// An H100-like interleave: SM ids go two by two round the GPCs.
	const sms = 16
	clusters := [][]uint32{
		{0, 1, 8, 9}, // GPC A: 0 1 8 9
		{9, 8, 0, 1},
		{2, 3, 10},   // GPC B: 2 3 10 11, joined through 10
		{10, 11, 11}, // the same SM twice in one cluster
		{4, 5, 12, 13},
		{99, 4}, // not an SM of this device: ignored
	}
	groups := smGroupsFromClusters(sms, clusters)
	assert.Equal(t, [][]int{{0, 1, 8, 9}, {2, 3, 10, 11}, {4, 5, 12, 13}, {6}, {7}, {14}, {15}}, groups)
	order := orderOf(groups)
	require.NoError(t, checkOrder(order, sms))
	assert.Equal(t, []int{0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15}, order)
	assert.Equal(t, [][]int{{0}, {1}, {2}}, smGroupsFromClusters(3, nil), "no clusters: %smid order")
}

func TestCheckOrder(t *testing.T) {
	assert.NoError(t, checkOrder([]int{2, 0, 1}, 3))
	assert.ErrorContains(t, checkOrder([]int{0, 1}, 3), "of 2 SMs for a device of 3")
	assert.ErrorContains(t, checkOrder([]int{0, 0, 1}, 3), "not a permutation")
	assert.ErrorContains(t, checkOrder([]int{0, 1, 3}, 3), "not a permutation")
}

// The place table holds place+1 where an SM's place is not its id, 0
// elsewhere (the worker then uses the id: a zeroed table is %smid order).
func TestPlaceTable(t *testing.T) {
	tab := placeTable([]int{0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15})
	assert.Equal(t, byte(0), tab[0])
	assert.Equal(t, byte(0), tab[1])
	assert.Equal(t, byte(3), tab[8], "SM 8 is at place 2")
	assert.Equal(t, byte(5), tab[2], "SM 2 is at place 4")
	assert.Equal(t, byte(0), tab[15], "SM 15 keeps its place")
	assert.Equal(t, [RankSMs]byte{}, placeTable(identityOrder(132)))
	// Places past 254 do not fit the byte (devices of more than 255 SMs
	// keep %smid order: initSMOrder).
	big := identityOrder(300)
	big[0], big[299] = 299, 0
	tab = placeTable(big)
	assert.Equal(t, byte(0), tab[0], "SM 0 at place 299: not representable")
}
