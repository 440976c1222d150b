package serve

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBusyMeter drives the meter with launch notes on a made-up clock: a
// note every 2 ms (as the C++ client sends them) carrying the launches made
// since the last one, each of launchMs on the profile.
func TestBusyMeter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(msec float64) time.Time { return t0.Add(time.Duration(msec * float64(time.Millisecond))) }
	tests := []struct {
		name string
		// launches(k) is how many launches the note at 2k ms carries
		launches func(k int) uint64
		launchMs float64
		until    float64 // ms: the notes stop here
		read     float64 // ms: when the meter is read
		lo, hi   float64
	}{
		{"back to back", func(int) uint64 { return 2 }, 1, 300, 300, 0.97, 1},
		{"a fifth of the time", func(k int) uint64 { return uint64(b2i(k%5 == 0)) }, 2, 300, 300, 0.12, 0.28},
		// A loop of asynchronous launches, then a synchronize: 40 ms of work in
		// one note, then the host waits (or is blocked in a served launch).
		{"backlog, read as soon as known", func(k int) uint64 { return uint64(40 * b2i(k == 0)) }, 1, 300, 21, 0.99, 1},
		{"backlog, read as it drains", func(k int) uint64 { return uint64(40 * b2i(k == 0)) }, 1, 300, 38, 0.97, 1},
		{"backlog, long drained", func(k int) uint64 { return uint64(40 * b2i(k == 0)) }, 1, 300, 40 + 75, 0, 0.25},
		{"short bursts, host work between", func(k int) uint64 { return uint64(21 * b2i(k%15 == 0)) }, 0.06, 300, 300, 0, MinBusy / 2},
		// Registered, then 100 ms at a start line, then launches back to back.
		{"starts after waiting", func(k int) uint64 { return uint64(2 * b2i(k == 0 || k > 50)) }, 1, 300, 102 + 40, MinBusy, 1},
		// One burst of 9 ms of work, then done: not worth a split.
		{"one short burst", func(k int) uint64 { return uint64(9 * b2i(k == 0)) }, 1, 300, 21, 0, MinBusy},
		{"stops", func(k int) uint64 { return 2 }, 1, 200, 200 + 80, 0, MinBusy / 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m busyMeter
			for k := 0; float64(2*k) <= tc.until && float64(2*k) <= tc.read; k++ {
				m.add(at(float64(2*k)), tc.launches(k), tc.launchMs)
			}
			v, ok := m.value(at(tc.read))
			assert.True(t, ok)
			assert.GreaterOrEqual(t, v, tc.lo)
			assert.LessOrEqual(t, v, tc.hi)
		})
	}
}

func TestBusyMeterNeedsHistory(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var m busyMeter
	m.advance(t0)
	m.add(t0.Add(time.Millisecond), 1, 0.5)
	_, ok := m.value(t0.Add(2 * time.Millisecond))
	assert.False(t, ok, "2 ms of history with 0.5 ms queued: too little to say")
	_, ok = m.value(t0.Add(busyMinSpan))
	assert.True(t, ok)
}

func TestBusyMeterBacklogIsCapped(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var m busyMeter
	m.add(t0, 1<<40, 1)
	assert.Equal(t, t0.Add(busyMaxBacklog), m.queueEnd)
	v, ok := m.value(t0.Add(busyMaxBacklog + 200*time.Millisecond))
	assert.True(t, ok)
	assert.Less(t, v, MinBusy/2, "a second after the capped queue ran dry")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
