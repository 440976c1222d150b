package serve

import (
	"math"
	"time"
)

// busyMeter estimates how busy a process keeps the GPU from its load
// notes: each launch it announces joins a virtual queue at the profile's
// time a launch on its grant, and the meter is the share of recent time
// that queue had work, weighted exponentially: the larger of two readings,
// over busyTaus[0] (a process that starts working reads busy within a few
// milliseconds, whatever it did before) and over busyTaus[1] (one that
// stops reads idle only after a while, so that a split set does not flap).
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
	queueEnd time.Time  // when the announced launches end, one after another
	at       time.Time  // the meter counts up to here
	since    time.Time  // from here (its first note)
	busy     [2]float64 // milliseconds the queue had work, weighted over each of busyTaus
	span     [2]float64 // milliseconds counted, weighted the same way
}

// busyTaus weigh the meter's history. A process that starts working reads
// MinBusy within 7 ms (its programs ran 70 ms on the H100: over 50 ms alone,
// the history of waiting at their start line held the split back 90 ms,
// until one of them was done); one that stops launching reads below
// MinBusy/2 (so a split set is undone) about 70 ms after its queue ran dry;
// one that starts with a backlog reads busy at once.
var busyTaus = [2]time.Duration{10 * time.Millisecond, 50 * time.Millisecond}

// busyMinSpan is how much time the meter must have counted before it says
// anything (the C++ client's notes come every 2 ms).
const busyMinSpan = 5 * time.Millisecond

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
	for i, t := range busyTaus {
		tau := millis(t)
		decay := math.Exp(-millis(dt) / tau)
		b.busy[i] = b.busy[i]*decay + tau*(math.Exp(-millis(dt-worked)/tau)-decay)
		b.span[i] = b.span[i]*decay + tau*(1-decay)
	}
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
// counts as busy: a process with a backlog of at least busyMinSpan reads
// busy at once, though its host has gone quiet.
func (b busyMeter) value(now time.Time) (float64, bool) {
	b.advance(now)
	var ahead time.Duration
	if b.queueEnd.After(now) {
		ahead = b.queueEnd.Sub(now)
	}
	if b.at.IsZero() || now.Sub(b.since)+ahead < busyMinSpan {
		return 0, false
	}
	v := 0.0
	for i := range busyTaus {
		v = max(v, (b.busy[i]+millis(ahead))/(b.span[i]+millis(ahead)))
	}
	return v, true
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
