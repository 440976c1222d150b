// Package cachekey hashes the fields that select an on-disk cache entry
// (the runtime's CUBINs, the CLI's ptxas reports) into a hex sha256. Each
// field is length-prefixed, so that no two different field lists hash the
// same bytes.
package cachekey

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// Key accumulates fields.
type Key struct{ h hash.Hash }

// New starts a key with its kind and version (e.g. "slatec-cubin-v1").
func New(kind string) *Key {
	k := &Key{h: sha256.New()}
	k.Put(kind)
	return k
}

// Put adds a field: its length (8 bytes, little-endian), then its bytes.
func (k *Key) Put(s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	k.h.Write(n[:])
	k.h.Write([]byte(s))
}

// Hex is the key: the hex sha256 of the fields put so far.
func (k *Key) Hex() string { return hex.EncodeToString(k.h.Sum(nil)) }
