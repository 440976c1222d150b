package serve

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A grant's delivery is the client's receipt less the push, both
// CLOCK_MONOTONIC on the daemon's host; unknown or inconsistent times
// (another host's clock, a receipt before the push) give 0, not a number.
func TestDeliverUs(t *testing.T) {
	for _, tc := range []struct {
		pushed int64
		recv   uint64
		want   float64
	}{
		{1_000_000, 1_250_000, 250},
		{1_000_000, 1_000_000, 0},
		{0, 1_250_000, 0},
		{1_000_000, 0, 0},
		{1_000_000, 999_000, 0},
		{1_000_000, 1_000_000 + uint64(2*time.Minute), 0},
	} {
		assert.Equal(t, tc.want, deliverUs(tc.pushed, tc.recv), "pushed %d, received %d", tc.pushed, tc.recv)
	}
	for _, tc := range []struct {
		pushed, wrote int64
		want          float64
	}{
		{1_000_000, 1_040_000, 40},
		{1_000_000, 0, 0}, // queued: not stamped
		{0, 1_040_000, 0},
		{1_000_000, 999_000, 0},
	} {
		assert.Equal(t, tc.want, owed{mono: tc.pushed, wrote: tc.wrote}.writtenUs(), "pushed %d, written %d", tc.pushed, tc.wrote)
	}
	if runtime.GOOS == "linux" {
		a := monoNanos()
		b := monoNanos()
		assert.Positive(t, a)
		assert.GreaterOrEqual(t, b, a, "monotonic")
	}
}
