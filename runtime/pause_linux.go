package runtime

import (
	goruntime "runtime"
	"syscall"
	"time"
)

// pause sleeps for d. The runtime's polling loops (a job's end, a drain, a
// control-block copy) sleep tens of microseconds between polls, and
// time.Sleep or time.After cannot: in a process whose goroutines are all
// waiting, Go's timers wake from the netpoller, which waits in whole
// milliseconds, so a 50 µs sleep took 1.1 ms (measured on Linux, Go 1.26),
// and the scheduler saw a job end a millisecond late. nanosleep(2) blocks
// only this goroutine's thread and wakes within the thread's timer slack.
func pause(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

// prSetTimerslack is prctl(2)'s PR_SET_TIMERSLACK.
const prSetTimerslack = 29

// preciseThread locks the calling goroutine to its thread and lowers that
// thread's timer slack (50 µs by default) to 1 µs, so that its pauses wake
// on time: for a goroutine that polls for as long as it lives (a job's
// monitor). It never unlocks: the thread ends with the goroutine and its
// setting is never seen by another goroutine.
func preciseThread() {
	goruntime.LockOSThread()
	_, _, _ = syscall.Syscall(syscall.SYS_PRCTL, prSetTimerslack, 1000, 0)
}
