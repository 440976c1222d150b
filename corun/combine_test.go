package corun

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func part(commit, workload string, count int, p99 float64) *Document {
	return &Document{Device: "H100", SMs: 132, Commit: commit, Date: "2026-11-23", Profiles: "profiles.json", Timing: "gpu-stamps",
		Rows:          []Row{{Workload: workload, Mode: Sequential, MakespanMs: 1}, {Workload: workload, Mode: Scheduler, MakespanMs: 0.9}},
		Sweeps:        []Sweep{{Workload: workload, Mode: Static}},
		ResizeLatency: ResizeLatency{Count: count, Grows: 2 * count, P50Us: p99 / 2, P99Us: p99, WithTask: count, OverTarget: 1, OverTaskP99Us: p99 / 3}}
}

// Parts of one suite run combine: rows and sweeps concatenated, resize
// counts added, percentiles the larger; parts of two devices, two builds,
// or with a row measured twice do not.
func TestCombine(t *testing.T) {
	d, err := Combine([]*Document{part("abc1234", "a+b", 10, 300), part("abc1234", "c+d", 20, 500)})
	require.NoError(t, err)
	assert.Len(t, d.Rows, 4)
	assert.Len(t, d.Sweeps, 2)
	assert.Equal(t, ResizeLatency{Count: 30, Grows: 60, P50Us: 250, P99Us: 500, WithTask: 30, OverTarget: 2, OverTaskP99Us: 500.0 / 3}, d.ResizeLatency)

	// Drains within their task (a negative over-task p99) in one part, a
	// part without drains: the combined figure is the first part's, not
	// the second's zero (the H200 suite at ae77143 read 0.0 for -7.6 us).
	within := part("abc1234", "a+b", 6, 300)
	within.ResizeLatency.OverTaskP99Us = -7.6
	none := part("abc1234", "c+d", 0, 0)
	d, err = Combine([]*Document{none, within})
	require.NoError(t, err)
	assert.InDelta(t, -7.6, d.ResizeLatency.OverTaskP99Us, 1e-12)
	assert.Equal(t, 6, d.ResizeLatency.WithTask)

	other := part("abc1234", "c+d", 1, 1)
	other.Device = "H200"
	for name, parts := range map[string][]*Document{
		"two devices": {part("abc1234", "a+b", 1, 1), other},
		"two builds":  {part("abc1234", "a+b", 1, 1), part("def5678", "c+d", 1, 1)},
		"a row twice": {part("abc1234", "a+b", 1, 1), part("abc1234", "a+b", 1, 1)},
		"nothing":     {},
	} {
		_, err := Combine(parts)
		assert.Error(t, err, name)
	}
}

// A combined document is what a run writes: it round-trips through
// ReadDocument, which refuses what is not a bench result.
func TestReadDocument(t *testing.T) {
	dir := t.TempDir()
	d, err := Combine([]*Document{part("abc1234", "a+b", 1, 10)})
	require.NoError(t, err)
	data, err := d.Marshal()
	require.NoError(t, err)
	p := filepath.Join(dir, "corun.json")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	back, err := ReadDocument(p)
	require.NoError(t, err)
	assert.Equal(t, d, back)
	require.NoError(t, os.WriteFile(p, []byte(`{"device": "x", "surprise": 1}`), 0o644))
	_, err = ReadDocument(p)
	assert.ErrorContains(t, err, "not a slatec bench result")
}
