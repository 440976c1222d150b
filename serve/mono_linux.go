//go:build linux

package serve

import "golang.org/x/sys/unix"

// monoNanos is CLOCK_MONOTONIC in nanoseconds, the clock a C++ client's
// steady_clock reads on Linux: a push's time and a client's receipt of it,
// on the same host, compare directly. 0 when unreadable.
func monoNanos() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return ts.Nano()
}
