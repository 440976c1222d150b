package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/plan"
)

func TestMergePlotSweep(t *testing.T) {
	dir := t.TempDir()
	res := mergeResults{Device: "NVIDIA H200", Commit: "7b8729b", Date: "2026-11-23"}
	add := func(mode, split string, ms float64, kernel string) {
		res.Rows = append(res.Rows, mergeRow{Case: "pair", Complementary: true, Mode: mode, Split: split, Ms: ms, Kernel: kernel})
	}
	add("sequential", "-", 1.0, "")
	add("streams", "-", 0.95, "")
	add("solo", "-", 0.4, "compute")
	add("solo", "-", 0.6, "memory")
	for a := 1; a < 16; a += 3 {
		add("interleaved", fmt.Sprintf("%d:%d", a, 16-a), 0.8+0.01*float64(a), "")
		add("split", fmt.Sprintf("%d:%d", a, 16-a), 0.7+0.01*float64(a), "")
	}
	add("split", "default", 0.75, "")
	data, err := json.Marshal(res)
	require.NoError(t, err)
	results := write(t, dir, "merge.json", string(data))

	out := filepath.Join(dir, "sweep.svg")
	code, _, errs := slatec(t, "", "merge", "--plot-sweep", results, "--case", "pair", "-o", out)
	require.Equal(t, 0, code, errs)
	svg, err := os.ReadFile(out)
	require.NoError(t, err)
	s := string(svg)
	assert.Contains(t, s, "<svg")
	assert.Contains(t, s, "interleaved (best")
	assert.Contains(t, s, "split (best 1.408x)")
	assert.Contains(t, s, "streams (1.053x)")
	assert.NotContains(t, s, "predicted")

	// With a profile: the planner's predicted curve.
	ps := plan.ProfileSet{Format: plan.FormatVersion, Device: plan.Device{Name: "test-16", SMs: 16, PeakBWGBs: 1000, MemBytes: 1 << 34}}
	for _, k := range []struct {
		name string
		r    func(m int) float64
	}{{"compute", func(m int) float64 { return 6.4 / float64(m) }}, {"memory", func(m int) float64 { return 2.4 / float64(min(m, 4)) }}} {
		pk := plan.Kernel{Name: k.name, Blocks: 1024, ThreadsPerBlock: 256, Registers: 32, GlobalBytes: 1 << 20}
		for m := 1; m <= 16; m++ {
			pk.RMs = append(pk.RMs, plan.Sample{M: m, V: k.r(m)})
			pk.BWGBs = append(pk.BWGBs, plan.Sample{M: m, V: 10})
		}
		ps.Kernels = append(ps.Kernels, pk)
	}
	pdata, err := json.Marshal(ps)
	require.NoError(t, err)
	prof := write(t, dir, "prof.json", string(pdata))
	code, _, errs = slatec(t, "", "merge", "--plot-sweep", results, "--plot-profile", prof, "-o", out)
	require.Equal(t, 0, code, errs)
	svg, _ = os.ReadFile(out)
	assert.Contains(t, string(svg), "predicted (plan: con_lat / seq_lat)")

	// Usage errors: kernels with --plot-sweep, an unknown case, no file.
	for _, args := range [][]string{
		{"merge", "--plot-sweep", results, "a.cu:k"},
		{"merge", "--plot-sweep", results, "--case", "nope", "-o", out},
		{"merge", "--plot-sweep", filepath.Join(dir, "missing.json"), "-o", out},
	} {
		code, _, errs := slatec(t, "", args...)
		assert.Equal(t, 2, code, "%v: %s", args, errs)
	}
	// A case without a sequential row cannot be drawn.
	res.Rows = res.Rows[1:]
	data, _ = json.Marshal(res)
	results = write(t, dir, "merge2.json", string(data))
	code, _, errs = slatec(t, "", "merge", "--plot-sweep", results, "-o", out)
	assert.Equal(t, 1, code)
	assert.True(t, strings.Contains(errs, "no sequential row"), errs)
}

// The speedup axis has round labelled ticks, at most eight.
func TestSpeedupTicks(t *testing.T) {
	for _, tc := range []struct{ hi, step float64 }{{0.7, 0.1}, {1.9, 0.25}, {2.4, 0.5}, {12, 2}} {
		st := speedupStep(tc.hi)
		assert.Equal(t, tc.step, st, "hi %v", tc.hi)
		var labels []string
		for _, tk := range (roundTicks{st}).Ticks(0, tc.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		assert.LessOrEqual(t, len(labels), 9, "%v", labels)
		assert.Equal(t, "0", labels[0])
	}
	var got []string
	for _, tk := range (roundTicks{0.25}).Ticks(0, 1) {
		got = append(got, tk.Label)
	}
	assert.Equal(t, []string{"0", "", "0.25", "", "0.5", "", "0.75", "", "1"}, got)
}
