//go:build linux

package serve

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

// monoNanos, read through Go's clock, is CLOCK_MONOTONIC as a C++ client
// reads it: between two direct readings.
func TestMonoNanosIsClockMonotonic(t *testing.T) {
	for range 5 {
		var a, b unix.Timespec
		assert.NoError(t, unix.ClockGettime(unix.CLOCK_MONOTONIC, &a))
		m := monoNanos()
		assert.NoError(t, unix.ClockGettime(unix.CLOCK_MONOTONIC, &b))
		// (within 50 us of the window: the two readings of monoBase's pair)
		assert.GreaterOrEqual(t, m, a.Nano()-int64(50*time.Microsecond))
		assert.LessOrEqual(t, m, b.Nano()+int64(50*time.Microsecond))
		time.Sleep(2 * time.Millisecond)
	}
}
