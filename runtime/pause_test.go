//go:build linux

package runtime

import (
	"slices"
	"testing"
	"time"
)

// TestPauseIsShort guards the polling loops' reaction time: a 50 µs pause
// must not become the millisecond that time.Sleep takes in an idle Go
// process. The bound is loose (a loaded CI machine), the regression it
// catches is 20x.
func TestPauseIsShort(t *testing.T) {
	const n = 41
	took := make([]time.Duration, n)
	for i := range took {
		t0 := time.Now()
		pause(50 * time.Microsecond)
		took[i] = time.Since(t0)
	}
	slices.Sort(took)
	if took[0] < 50*time.Microsecond {
		t.Errorf("pause(50µs) returned after %v", took[0])
	}
	if med := took[n/2]; med > 600*time.Microsecond {
		t.Errorf("pause(50µs) took %v (median of %d): the polls would see a job end that late", med, n)
	}
	t.Logf("pause(50µs): min %v, median %v, max %v", took[0], took[n/2], took[n-1])
}
