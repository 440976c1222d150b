package cachekey

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Fields are length-prefixed: moving bytes between fields changes the key.
func TestKeyFieldsDoNotRunTogether(t *testing.T) {
	a, b := New("k"), New("k")
	a.Put("ab")
	a.Put("c")
	b.Put("a")
	b.Put("bc")
	assert.NotEqual(t, a.Hex(), b.Hex())
	c := New("k")
	c.Put("ab")
	c.Put("c")
	assert.Equal(t, a.Hex(), c.Hex(), "the same fields, the same key")
	assert.Len(t, a.Hex(), 64)
}
