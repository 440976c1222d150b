package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProfileSetSubset(t *testing.T) {
	ps := &ProfileSet{Format: "slatec-profile/1", Device: Device{Name: "d", SMs: 4},
		Kernels: []Kernel{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	sub, missing := ps.Subset([]string{"c", "a"})
	require.NotNil(t, sub)
	assert.Empty(t, missing)
	assert.Equal(t, ps.Device, sub.Device)
	require.Len(t, sub.Kernels, 2)
	assert.Equal(t, "c", sub.Kernels[0].Name, "in the order named")
	assert.Equal(t, "a", sub.Kernels[1].Name)
	sub, missing = ps.Subset([]string{"a", "x", "y"})
	assert.Nil(t, sub)
	assert.Equal(t, "x", missing)
	sub, missing = ps.Subset([]string{""})
	assert.Nil(t, sub)
	assert.Equal(t, "", missing)
}
