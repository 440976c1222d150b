//go:build linux

package serve

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// monoBase pairs one CLOCK_MONOTONIC reading with a time.Time: Go's
// monotonic clock is CLOCK_MONOTONIC too, so a later reading is the base
// plus time.Since (the vDSO, where unix.ClockGettime is a system call:
// ~0.5 us here, more in a virtual machine, on the way of every grant).
var monoBase = sync.OnceValues(func() (int64, time.Time) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0, time.Time{}
	}
	return ts.Nano(), time.Now()
})

// monoNanos is CLOCK_MONOTONIC in nanoseconds, the clock a C++ client's
// steady_clock reads on Linux: a push's time and a client's receipt of it,
// on the same host, compare directly. 0 when unreadable.
func monoNanos() int64 {
	base, at := monoBase()
	if base == 0 {
		return 0
	}
	return base + int64(time.Since(at))
}
