package templates_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slatec/slatec/templates"
)

// TestNativeAheadHoldsTheBudget compiles native_ahead.h, as the prelude
// includes it, against a fake runtime whose GPU runs one launch at a time,
// and enqueues bursts of launches as fast as a host can: with a budget, the
// GPU work left queued never exceeds it once a launch's time is learned
// (two launches ahead before that; one launch longer than the budget is
// queued alone), the ring never holds more than 63, and the learned time is
// the launch's own: a program whose first launches waited behind another's
// learns its 40 us launches and is held only while it learns; with no
// budget, nothing waits and a record queries nothing (a served process's
// native launch costs one event record); an untimed ring (no budget set for
// the process) ignores a budget; the events are made as the ring first
// uses each (the first launch makes one). (held: waits for the budget once
// the time is known.)
func TestNativeAheadHoldsTheBudget(t *testing.T) {
	b := fakeCUDADriver(t, "native_ahead.h", templates.NativeAheadHeader(), "native_ahead_driver.cc")()
	assert.Equal(t, `events: 1 at the first launch, 64 after 201
fma 60x1000 budget 4000: ahead at most 4000 us, waits 56, held 54, launch 1000 us, queries 231, pending 1, after its synchronize 0
triad 240x270 budget 4000: ahead at most 3780 us, waits 226, held 224, launch 270 us, queries 931, pending 1, after its synchronize 0
long 10x10000 budget 4000: ahead at most 20000 us, waits 9, held 7, launch 10000 us, queries 37, pending 1, after its synchronize 0
tiny 500x5 budget 4000: ahead at most 315 us, waits 437, held 435, launch 5 us, queries 1873, pending 1, after its synchronize 0
starved sgemm 30x40 budget 4000: ahead at most 2080 us, waits 5, held 3, launch 40 us, queries 69, pending 1, after its synchronize 0
unbounded 60x1000: ahead at most 60000 us, waits 0, held 0, launch 0 us, queries 0, pending 1, after its synchronize 0
over the ring 100x1000 unbounded: ahead at most 100000 us, waits 0, held 0, launch 0 us, queries 0, pending 1, after its synchronize 0
untimed 100x1000: ahead at most 100000 us, waits 0, held 0, launch 0 us, queries 0, pending 1, after its synchronize 0
untimed, a budget given 60x1000: ahead at most 60000 us, waits 0, held 0, launch 0 us, queries 0, pending 1, after its synchronize 0
`, b)
}
