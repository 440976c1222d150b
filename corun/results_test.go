package corun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/slatec/slatec/plan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestComputeMetrics(t *testing.T) {
	tests := []struct {
		name       string
		ends, solo []float64
		antt, stp  float64
		slowdown   []float64
	}{
		{"no slowdown", []float64{1, 2}, []float64{1, 2}, 1, 2, []float64{1, 1}},
		{"sequential order", []float64{1, 3.5}, []float64{1, 2.5}, (1 + 1.4) / 2, 1 + 1/1.4, []float64{1, 1.4}},
		{"both doubled", []float64{2, 4}, []float64{1, 2}, 2, 1, []float64{2, 2}},
		{"missing solo counts as 1", []float64{2, 4}, []float64{0, 2}, 1.5, 1.5, []float64{1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := ComputeMetrics(tc.ends, tc.solo, maxOf(tc.ends))
			assert.InDelta(t, tc.antt, m.ANTT, 1e-12)
			assert.InDelta(t, tc.stp, m.STP, 1e-12)
			assert.InDeltaSlice(t, tc.slowdown, m.Slowdown, 1e-12)
			assert.Equal(t, maxOf(tc.ends), m.MakespanMs)
		})
	}
	assert.Equal(t, 0.0, ComputeMetrics(nil, nil, 0).ANTT)
}

func TestPercentile(t *testing.T) {
	us := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x)*time.Microsecond)
		}
		return d
	}
	tests := []struct {
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{us(7), 99, 7 * time.Microsecond},
		{us(5, 1, 3, 2, 4), 50, 3 * time.Microsecond},
		{us(1, 2, 3, 4), 50, 2 * time.Microsecond}, // nearest rank: the 2nd of 4
		{us(1, 2, 3, 4, 5, 6, 7, 8, 9, 100), 99, 100 * time.Microsecond},
		{us(1, 2, 3, 4, 5, 6, 7, 8, 9, 100), 90, 9 * time.Microsecond},
		{us(3, 1), 0, 1 * time.Microsecond},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, Percentile(tc.ds, tc.p), "%v p%v", tc.ds, tc.p)
	}
}

func TestGainAndRelError(t *testing.T) {
	assert.InDelta(t, 0.25, Gain(3, 4), 1e-12)
	assert.InDelta(t, -0.5, Gain(6, 4), 1e-12)
	assert.Equal(t, 0.0, Gain(1, 0))
	assert.InDelta(t, 0.1, RelError(1.1, 1), 1e-12)
	assert.True(t, math.IsInf(RelError(1, 0), 1))
	assert.Equal(t, 2.5, median([]float64{4, 1, 2, 3}))
	assert.Equal(t, 3.0, median([]float64{3, 9, 1}))
}

// fakeDocument runs the quick workloads in every mode on the fake and
// builds the document.
func fakeDocument(t *testing.T) *Document {
	t.Helper()
	b, f := newBench(t, FakeOptions{GreenGranularity: 4})
	ws, err := SelectWorkloads(Workloads(Catalogue()), nil, true)
	require.NoError(t, err)
	outs, err := b.Run(context.Background(), ws, AllModes)
	require.NoError(t, err)
	kn := map[string][]string{}
	for _, w := range ws {
		for _, k := range w.Kernels {
			kn[w.Name] = append(kn[w.Name], k.Name)
		}
	}
	return NewDocument(f.Info().Name, f.Info().SMs, "0123abc", "2026-11-23", true, "measured", outs, kn)
}

// The document the bench writes conforms to its schema, and the schema
// rejects what it should.
func TestDocumentSchema(t *testing.T) {
	sch, err := jsonschema.NewCompiler().Compile("../bench/results/corun.schema.json")
	require.NoError(t, err)
	d := fakeDocument(t)
	data, err := d.Marshal()
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(inst))

	// Contents: sequential rows have no gain, unavailable modes are listed
	// apart, scheduler runs have a Gantt, sweeps name their best split.
	modes := map[Mode]int{}
	for _, r := range d.Rows {
		modes[r.Mode]++
		if r.Mode == Sequential {
			assert.Zero(t, r.Gain)
			require.NotNil(t, r.PredictedMs)
		}
		if r.Mode == Oracle || r.Mode == Static || r.Mode == Streams {
			assert.Nil(t, r.PredictedMs, "%s", r.Mode)
		}
		assert.Len(t, r.Kernels, len(splitNames(r.Workload)))
	}
	assert.Equal(t, len(QuickWorkloads), modes[Sequential])
	assert.NotZero(t, modes[Scheduler])
	assert.NotEmpty(t, d.Unavailable, "mps has no runner on the fake")
	assert.NotEmpty(t, d.Gantts)
	assert.NotZero(t, d.ResizeLatency.Count)
	assert.InDelta(t, 40, d.ResizeLatency.P50Us, 1e-9, "the fake's resize latency")
	for _, s := range d.Sweeps {
		found := false
		for _, p := range s.Points {
			found = found || p.Split == s.Best
		}
		assert.True(t, found, "%s %s: best %s is one of the points", s.Workload, s.Mode, s.Best)
	}

	for _, bad := range []struct{ name, edit string }{
		{"unknown mode", `"mode": "sequential"`},
		{"zero makespan", `"makespan_ms"`},
		{"bad split", `"split"`},
	} {
		t.Run(bad.name, func(t *testing.T) {
			var doc map[string]any
			require.NoError(t, json.Unmarshal(data, &doc))
			row := doc["rows"].([]any)[0].(map[string]any)
			switch bad.name {
			case "unknown mode":
				row["mode"] = "fast"
			case "zero makespan":
				row["makespan_ms"] = 0
			case "bad split":
				row["split"] = "97"
			}
			b, err := json.Marshal(doc)
			require.NoError(t, err)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			require.NoError(t, err)
			assert.Error(t, sch.Validate(inst))
		})
	}
}

func splitNames(w string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(w); i++ {
		if i == len(w) || w[i] == '+' {
			out = append(out, w[start:i])
			start = i + 1
		}
	}
	return out
}

func TestSummarize(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	d := &Document{Rows: []Row{
		{Workload: "a+b", Complementary: true, Mode: Sequential, MakespanMs: 10, PredictedMs: p(10)},
		{Workload: "a+b", Complementary: true, Mode: Streams, MakespanMs: 9},
		{Workload: "a+b", Complementary: true, Mode: Scheduler, MakespanMs: 7, PredictedMs: p(7.7)},
		{Workload: "a+b", Complementary: true, Mode: Oracle, MakespanMs: 6},
		{Workload: "c+d", Mode: Sequential, MakespanMs: 4},
		{Workload: "c+d", Mode: Streams, MakespanMs: 3},
		{Workload: "c+d", Mode: Scheduler, MakespanMs: 4, PredictedMs: p(3.6)},
	}}
	s := d.Summarize()
	assert.Equal(t, map[string]float64{"a+b": 0.75}, s.SchedulerShare, "(10-7)/(10-6); c+d is not complementary")
	assert.Equal(t, map[string]float64{"a+b": round4(7.0 / 9), "c+d": round4(4.0 / 3)}, s.SchedulerVsBaseline)
	assert.Equal(t, 3, s.Predictions)
	assert.InDelta(t, 0.1, s.PredictionError, 1e-9, "errors 0, 0.1, 0.1")
	assert.Equal(t, 1, s.NeverWorse, "a+b 0.78; c+d 1.33 is worse than streams")
	assert.Equal(t, 1, s.Complementary)
	assert.InDelta(t, 10.0/7, s.SchedulerGain, 1e-4)
	assert.InDelta(t, 10.0/6, s.OracleGain, 1e-4)
	assert.InDelta(t, (10.0/7-1)/(10.0/6-1), s.ShareGeomean, 1e-3)
	assert.Zero(t, s.GreenRuns, "no green rows")
}

// The geomean share, the green and MPS counts and the static-over-green
// tax, over several workloads.
func TestSummarizeTargets(t *testing.T) {
	rows := func(wl string, comp bool, seq, streams, sched, oracle, green, mpsA, mpsB float64) []Row {
		out := []Row{
			{Workload: wl, Complementary: comp, Mode: Sequential, MakespanMs: seq},
			{Workload: wl, Complementary: comp, Mode: Streams, MakespanMs: streams},
			{Workload: wl, Complementary: comp, Mode: Scheduler, MakespanMs: sched},
			{Workload: wl, Complementary: comp, Mode: Oracle, MakespanMs: oracle},
			{Workload: wl, Complementary: comp, Mode: Green, MakespanMs: green},
			{Workload: wl, Complementary: comp, Mode: MPS, Setting: "default", MakespanMs: mpsA},
			{Workload: wl, Complementary: comp, Mode: MPS, Setting: "pct=75", MakespanMs: mpsB},
		}
		return out
	}
	var d Document
	d.Rows = append(d.Rows, rows("a+b", true, 10, 10, 8, 8, 9, 9.5, 7.9)...) // beats green, not MPS at pct=75
	d.Rows = append(d.Rows, rows("c+d", true, 10, 9, 5, 4, 4.5, 6, 6)...)    // beats MPS, not green
	d.Rows = append(d.Rows, rows("e+f", false, 4, 4, 4.1, 4, 4, 4, 4)...)    // not complementary: not counted
	d.Sweeps = []Sweep{
		{Workload: "a+b", Mode: Static, Points: []SweepEntry{{Split: "2:6", MakespanMs: 11}, {Split: "4:4", MakespanMs: 10}, {Split: "6:2", MakespanMs: 12}}},
		{Workload: "a+b", Mode: Green, Points: []SweepEntry{{Split: "4:4", MakespanMs: 8}, {Split: "6:2", MakespanMs: 12}}},
		{Workload: "c+d", Mode: Static, Points: []SweepEntry{{Split: "4:4", MakespanMs: 5}}},
		{Workload: "c+d", Mode: Oracle, Points: []SweepEntry{{Split: "4:4", MakespanMs: 1}}},
	}
	s := d.Summarize()
	assert.Equal(t, 2, s.Complementary)
	assert.InDelta(t, math.Sqrt(10.0/8*10.0/5), s.SchedulerGain, 1e-4)
	assert.InDelta(t, math.Sqrt(10.0/8*10.0/4), s.OracleGain, 1e-4)
	assert.Equal(t, 1, s.BeatsGreen)
	assert.Equal(t, 2, s.GreenRuns)
	assert.Equal(t, 1, s.BeatsMPS, "a+b loses to MPS's better setting (7.9)")
	assert.Equal(t, 2, s.MPSRuns)
	assert.Equal(t, 2, s.NeverWorse, "e+f at 4.1 / 4 = 1.025 is worse")
	assert.Equal(t, map[string]float64{"a+b": 1.125}, s.StaticOverGreen, "median of 10/8 and 12/12; c+d has no green sweep")
	assert.InDelta(t, 1.125, s.StaticOverGreenMedian, 1e-9)
}

func TestDocumentDeterministic(t *testing.T) {
	a, err := fakeDocument(t).Marshal()
	require.NoError(t, err)
	b, err := fakeDocument(t).Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))
	assert.True(t, bytes.HasSuffix(a, []byte("}\n")), fmt.Sprintf("%q", a[len(a)-3:]))
}

// Drains with a task estimate are measured against one task + 30 us:
// the p99 of latency minus task, and how many exceed the target; grows and
// drains without an estimate only count.
func TestResizeLatencyAgainstTask(t *testing.T) {
	us := time.Microsecond
	outs := []Outcome{{Workload: "a+b", Mode: Scheduler, MakespanMs: 1, Resizes: []Resize{
		{Latency: 300 * us, Task: 280 * us},
		{Latency: 500 * us, Task: 200 * us},
		{Latency: 100 * us},
		{Grow: true},
	}}}
	d := NewDocument("dev", 132, "abc1234", "2026-11-23", true, "p.json", outs, nil)
	rl := d.ResizeLatency
	assert.Equal(t, 3, rl.Count)
	assert.Equal(t, 1, rl.Grows)
	assert.Equal(t, 2, rl.WithTask)
	assert.Equal(t, 1, rl.OverTarget, "500 us against a 200 us task")
	assert.InDelta(t, 300.0, rl.OverTaskP99Us, 1e-9)
}

// taskTime: a 64-block kernel fits one wave on 48 SMs (16 blocks an SM),
// so a task of one block takes R[48]; a 262 144-block one runs in waves.
func TestTaskTime(t *testing.T) {
	ps := &plan.ProfileSet{Format: plan.FormatVersion, Device: plan.Device{Name: "d", SMs: 132, PeakBWGBs: 3000, MemBytes: 1 << 34},
		Kernels: []plan.Kernel{
			{Name: "small", Blocks: 64, ThreadsPerBlock: 128, BlocksPerSM: 16, RMs: plan.Samples{{M: 1, V: 10}, {M: 132, V: 2}}, BWGBs: plan.Samples{{M: 1, V: 1}, {M: 132, V: 1}}},
			{Name: "big", Blocks: 262144, ThreadsPerBlock: 256, BlocksPerSM: 8, RMs: plan.Samples{{M: 1, V: 100}, {M: 132, V: 1}}, BWGBs: plan.Samples{{M: 1, V: 1}, {M: 132, V: 1}}},
		}}
	require.NoError(t, ps.Validate())
	b := &Bench{Profiles: ps}
	assert.Equal(t, time.Duration(ps.Kernels[0].R(48)*float64(time.Millisecond)), b.taskTime("small", 48, 1))
	waves := (262144 + 132*8 - 1) / (132 * 8)
	assert.InDelta(t, 4*1.0/float64(waves)*1e3, float64(b.taskTime("big", 132, 4))/1e3, 1e-3, "microseconds")
	assert.Zero(t, b.taskTime("none", 48, 1))
}
