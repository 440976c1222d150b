package serve

import (
	"math"
	"time"
)

// busyMeter estimates how busy a process keeps the GPU from its load
// notes: each launch it announces joins a virtual queue at the profile's
// time a launch on its grant, and the meter is the share of recent time
// that queue had work, weighted exponentially over busyTau.
//
// Why a queue and not a launch rate: a program that enqueues its launches
// ahead (a loop of asynchronous launches, then one synchronize) sends them
// in one note and then nothing while the GPU works through them; its host
// may even be blocked in a launch, waiting for the grant's drain. A launch
// rate measured over a few milliseconds read such a program as busy 2.3,
// then 0.04 thirty milliseconds later, and the daemon undid the split it
// had just made (H100: triad + FMA chains, 1.14x MPS with the split, 1.00x
// without).
type busyMeter struct {
	queueEnd time.Time // when the announced launches end, one after another
	at       time.Time // the meter counts up to here
	since    time.Time // from here (its first note)
	busy     float64   // milliseconds the queue had work, weighted
	span     float64   // milliseconds counted, weighted the same way
}

// busyTau weighs the meter's history: a process that starts working after
// an idle while reads MinBusy about 35 ms later, one that stops reads below
// MinBusy/2 (so a split set is undone) about 70 ms after its queue ran dry.
// (A 10 ms reading beside it, to split sooner, lost on the H100: a split
// made while a process's native launches still queued ahead ran on the
// whole GPU held the others to their shares for nothing, and a short
// program's one burst was split for: triad + FMA chains 116-127 ms against
// 110-111 without it, a 9 ms SGEMM program beside the triad 3% behind MPS.)
const busyTau = 50 * time.Millisecond

// busyMinSpan is how much time the meter must have seen (since the
// process registered) before it says anything: a program that makes one
// burst of work and is done (a 9 ms SGEMM program on the H100) is not worth
// a split, and its first notes, a burst queued ahead, read busy.
const busyMinSpan = 20 * time.Millisecond

// busyMaxBacklog caps the virtual queue, so that a profile far slower than
// the kernel runs cannot keep a process busy for long after it stopped.
const busyMaxBacklog = time.Second

// advance counts the time from the meter's last point up to now, each
// instant weighted by exp(-age/tau) (exactly, however long the step:
// the queue works from the step's start for its first `worked`).
func (b *busyMeter) advance(now time.Time) {
	if b.at.IsZero() {
		b.at, b.since = now, now
		return
	}
	dt := now.Sub(b.at)
	if dt <= 0 {
		return
	}
	worked := min(max(b.queueEnd.Sub(b.at), 0), dt)
	tau := millis(busyTau)
	decay := math.Exp(-millis(dt) / tau)
	b.busy = b.busy*decay + tau*(math.Exp(-millis(dt-worked)/tau)-decay)
	b.span = b.span*decay + tau*(1-decay)
	b.at = now
}

// hold counts the queue as working up to now (a launch is known to be
// running or waiting for the GPU, whatever the profile says it takes).
func (b *busyMeter) hold(now time.Time) {
	if b.queueEnd.Before(now) {
		b.queueEnd = now
	}
}

// add puts n launches of launchMs each on the virtual queue at now.
func (b *busyMeter) add(now time.Time, n uint64, launchMs float64) {
	b.advance(now)
	if n == 0 || launchMs <= 0 {
		return
	}
	start := b.queueEnd
	if start.Before(now) {
		start = now
	}
	end := start.Add(time.Duration(float64(n) * launchMs * float64(time.Millisecond)))
	if limit := now.Add(busyMaxBacklog); end.After(limit) {
		end = limit
	}
	b.queueEnd = end
}

// value is the share of recent time the queue had work, in [0, 1], as of
// now; false until the meter has seen busyMinSpan. Work still queued
// counts as busy: a process with a backlog reads busy, though its host has
// gone quiet.
func (b busyMeter) value(now time.Time) (float64, bool) {
	b.advance(now)
	var ahead time.Duration
	if b.queueEnd.After(now) {
		ahead = b.queueEnd.Sub(now)
	}
	if b.at.IsZero() || now.Sub(b.since) < busyMinSpan {
		return 0, false
	}
	return (b.busy + millis(ahead)) / (b.span + millis(ahead)), true
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
