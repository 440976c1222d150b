//go:build !linux

package runtime

import (
	goruntime "runtime"
	"time"
)

// pause sleeps for d (see pause_linux.go for why Linux does not use
// time.Sleep).
func pause(d time.Duration) { time.Sleep(d) }

// preciseThread locks the calling goroutine to its thread; only Linux
// lowers the thread's timer slack.
func preciseThread() { goruntime.LockOSThread() }
