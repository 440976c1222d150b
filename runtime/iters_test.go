package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// EvenWorkers launches no more workers than fit, every task's worker when
// they fit, and otherwise as few as keep the rounds: each worker then takes
// the same number of tasks (give or take one).
func TestEvenWorkers(t *testing.T) {
	for _, tc := range []struct {
		tasks uint64
		slots int
		want  uint32
	}{
		{4096, 1056, 1024},  // 3.88 waves: four tasks each
		{8192, 1056, 1024},  // 7.76: eight each
		{16384, 1056, 1024}, // 15.5: sixteen each
		{1056, 1056, 1056},
		{1057, 1056, 529}, // two rounds: 529 + 528
		{96, 1056, 96},
		{0, 1056, 0},
		{10, 0, 0},
	} {
		got := EvenWorkers(tc.tasks, tc.slots)
		assert.Equal(t, tc.want, got, "%d tasks on %d slots", tc.tasks, tc.slots)
		if got == 0 {
			continue
		}
		assert.LessOrEqual(t, int(got), tc.slots)
		if tc.tasks > uint64(tc.slots) {
			rounds := (tc.tasks + uint64(tc.slots) - 1) / uint64(tc.slots)
			assert.Equal(t, rounds, (tc.tasks+uint64(got)-1)/uint64(got), "the rounds stay")
		}
	}
}
