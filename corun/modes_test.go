package corun

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/runtime"
)

// The fake device's catalogue kernels on 16 SMs (see FakeModel):
//
//	triad_f4   1.0 ms on >= 5 SMs (saturates at 30%), 90% of peak bandwidth
//	fma_chain  2.5 ms on 16 SMs, scales linearly (40 SM-ms of work)
//	chase      2.5 ms on >= 8 SMs (runs out of blocks at 48%)
//	histogram  1.5 ms on >= 13 SMs, 35% of peak bandwidth
func kernelsByName(t *testing.T, names ...string) []*Kernel {
	t.Helper()
	var out []*Kernel
	for _, n := range names {
		found := false
		for _, k := range Catalogue() {
			if k.Name == n {
				out = append(out, k)
				found = true
			}
		}
		require.True(t, found, n)
	}
	return out
}

func workload(t *testing.T, names ...string) Workload {
	ks := kernelsByName(t, names...)
	return Workload{Name: names[0] + "+" + names[1], Kernels: ks, Complementary: complementary(ks[0].Class, ks[1].Class)}
}

func newBench(t *testing.T, o FakeOptions) (*Bench, *Fake) {
	t.Helper()
	f := NewFake(o)
	t.Cleanup(func() { f.Close() })
	ps, err := MeasureProfiles(context.Background(), f, Catalogue(), ProfileSweep(f.Info().SMs, 1), 1, nil)
	require.NoError(t, err)
	return &Bench{Dev: f, Profiles: ps, Opts: Options{Reps: 1, Step: 2, TripleStep: 4}}, f
}

func outcome(t *testing.T, outs []Outcome, m Mode) Outcome {
	t.Helper()
	for _, o := range outs {
		if o.Mode == m {
			return o
		}
	}
	t.Fatalf("no %s outcome", m)
	return Outcome{}
}

func TestFakeSolo(t *testing.T) {
	f := NewFake(FakeOptions{})
	defer f.Close()
	tests := []struct {
		kernel string
		sms    int
		wantMs float64
	}{
		{"triad_f4", 16, 1.0},
		{"triad_f4", 5, 1.0},       // saturated
		{"triad_f4", 1, 5.0},       // S = ceil(0.3*16) = 5
		{"fma_chain", 4, 10.0},     // linear
		{"chase", 8, 2.5},          // out of blocks
		{"histogram", 13, 1.5},     // S = ceil(0.8*16)
		{"histogram", 1, 1.5 * 13}, // 13 SM-widths of work on one
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s on %d", tc.kernel, tc.sms), func(t *testing.T) {
			k := kernelsByName(t, tc.kernel)[0]
			j, err := f.Start(k, runtime.SMRange{Low: 0, High: tc.sms - 1})
			require.NoError(t, err)
			i, err := f.WaitAny(context.Background(), []Job{j})
			require.NoError(t, err)
			assert.Equal(t, 0, i)
			s, e := j.Span()
			assert.InDelta(t, tc.wantMs, ms(e-s), 1e-6)
		})
	}
}

// The fake's clock moves for Job.Wait from other goroutines only once
// nothing was started or resized for Settle: a resize right after a start
// counts from time 0.
func TestFakeSettle(t *testing.T) {
	f := NewFake(FakeOptions{Settle: 20 * time.Millisecond})
	defer f.Close()
	k := kernelsByName(t, "fma_chain")[0]
	j, err := f.Start(k, runtime.SMRange{Low: 0, High: 3})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- j.Wait(context.Background()) }()
	_, err = j.Resize(context.Background(), runtime.SMRange{Low: 0, High: 15})
	require.NoError(t, err)
	require.NoError(t, <-done)
	_, e := j.Span()
	assert.InDelta(t, 2.5, ms(e), 1e-6, "the resize to 16 SMs happened at time 0")
	_, err = j.Resize(context.Background(), runtime.SMRange{Low: 0, High: 1})
	assert.ErrorIs(t, err, runtime.ErrJobFinished)
}

func TestSplits(t *testing.T) {
	tests := []struct {
		M, n, step int
		want       [][]int
	}{
		{8, 2, 2, [][]int{{2, 6}, {4, 4}, {6, 2}}},
		{10, 2, 4, [][]int{{4, 6}}}, // the last part takes the rest
		{16, 3, 4, [][]int{{4, 4, 8}, {4, 8, 4}, {8, 4, 4}}},
		{4, 3, 2, nil},
		{3, 2, 1, [][]int{{1, 2}, {2, 1}}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.M, tc.n, tc.step), func(t *testing.T) {
			got := Splits(tc.M, tc.n, tc.step)
			assert.Equal(t, tc.want, got)
			for _, s := range got {
				assert.Equal(t, tc.M, sum(s))
			}
		})
	}
}

// Each mode's makespan on the fake, worked out by hand from the models.
func TestModesOnFake(t *testing.T) {
	b, _ := newBench(t, FakeOptions{GreenGranularity: 4})
	w := workload(t, "triad_f4", "fma_chain")
	outs, err := b.Run(context.Background(), []Workload{w}, AllModes)
	require.NoError(t, err)

	seq := outcome(t, outs, Sequential)
	assert.InDelta(t, 3.5, seq.MakespanMs, 1e-6)
	assert.InDeltaSlice(t, []float64{1, 3.5}, seq.Ends, 1e-6)
	assert.InDelta(t, 3.5, *seq.PredictedMs, 1e-6, "sum of R[M]")
	assert.InDeltaSlice(t, []float64{1, 3.5 / 2.5}, seq.Metrics.Slowdown, 1e-6)

	// Streams: each gets half of every SM. triad needs only 5 SM-widths,
	// so it ends at 1.0; fma_chain did 1/5 by then and finishes the rest
	// on all 16 SMs: 1 + 0.8 * 2.5.
	st := outcome(t, outs, Streams)
	assert.InDelta(t, 3.0, st.MakespanMs, 1e-6)
	assert.Nil(t, st.PredictedMs)

	// Static: max(R_triad(m), R_fma(16-m)) is smallest at m = 2: 40/14.
	static := outcome(t, outs, Static)
	assert.Equal(t, []int{2, 14}, static.Split)
	assert.InDelta(t, 40.0/14, static.MakespanMs, 1e-6)
	assert.Len(t, static.Sweep, 7, "m = 2, 4, ..., 14")

	// Oracle: with the survivor grown, makespan = 2.5 + t1*m/16 with t1 =
	// 5/m while triad ends first: 2.8125 for every m <= 5; the first wins.
	or := outcome(t, outs, Oracle)
	assert.InDelta(t, 2.8125, or.MakespanMs, 1e-6)
	assert.Equal(t, []int{2, 14}, or.Split)
	assert.LessOrEqual(t, or.MakespanMs, static.MakespanMs)
	assert.NotEmpty(t, or.Resizes, "the survivor was grown")

	// Green: the same sweep in steps of the granularity (4).
	gr := outcome(t, outs, Green)
	assert.Equal(t, []int{4, 12}, gr.Split)
	assert.InDelta(t, 40.0/12, gr.MakespanMs, 1e-6)
	for _, p := range gr.Sweep {
		assert.Zero(t, p.Split[0]%4, "green partitions come in steps of 4: %v", p.Split)
	}

	// Scheduler: Slate's table says solo for (H_M running, H_C arriving)
	// but corun for (H_C, H_M); arrival order is an accident, so the pair
	// co-runs, on the Slate plan's split (2:14), and the survivor grows:
	// the oracle's makespan, as predicted.
	sc := outcome(t, outs, Scheduler)
	assert.InDelta(t, or.MakespanMs, sc.MakespanMs, 1e-6)
	assert.InDelta(t, sc.MakespanMs, *sc.PredictedMs, 1e-3)

	// STM: the plan's single phase on 2:14 is the static split.
	stm := outcome(t, outs, STM)
	assert.Equal(t, []int{2, 14}, stm.Split)
	assert.InDelta(t, 40.0/14, stm.MakespanMs, 1e-6)
	assert.InDelta(t, stm.MakespanMs, *stm.PredictedMs, 1e-3, "the fake runs Liang's model")
	assert.Equal(t, []string{"phases: triad_f4 on 2, fma_chain on 14"}, stm.Notes)

	mps := outcome(t, outs, MPS)
	assert.Contains(t, mps.Unavailable, "no MPS runner")

	for _, o := range outs {
		if o.Unavailable != "" {
			continue
		}
		assert.InDelta(t, o.MakespanMs, maxOf(o.Ends), 1e-6, "%s: makespan is the last end", o.Mode)
		assert.GreaterOrEqual(t, o.Metrics.ANTT, 1-1e-9, "%s", o.Mode)
		assert.LessOrEqual(t, o.Metrics.STP, 2+1e-9, "%s", o.Mode)
	}
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// The scheduler co-runs what Slate's table calls complementary, resizes
// the survivor when the other ends, and its Gantt shows it.
func TestSchedulerCoRuns(t *testing.T) {
	b, _ := newBench(t, FakeOptions{})
	w := workload(t, "triad_f4", "chase") // H_M running, M_C arriving: corun
	outs, err := b.Run(context.Background(), []Workload{w}, []Mode{Sequential, Scheduler})
	require.NoError(t, err)
	sc := outcome(t, outs, Scheduler)
	seq := outcome(t, outs, Sequential)
	assert.Less(t, sc.MakespanMs, seq.MakespanMs)
	assert.InDelta(t, *sc.PredictedMs, sc.MakespanMs, 1e-3, "the scheduler follows the Slate plan's split")
	require.NotEmpty(t, sc.Gantt)
	// Both arrive together: both start at once on the plan's split, and
	// nothing is drained (a survivor only grows).
	var kernels []string
	for _, s := range sc.Gantt {
		kernels = append(kernels, s.Kernel)
		assert.LessOrEqual(t, s.StartMs, s.EndMs+1e-9, "%+v", s)
		assert.True(t, runtime.SMRange{Low: s.Low, High: s.High}.Valid(16), "%+v", s)
	}
	assert.Equal(t, 0.0, sc.Gantt[0].StartMs)
	assert.Equal(t, 0.0, sc.Gantt[1].StartMs)
	assert.Contains(t, kernels, "triad_f4")
	assert.Contains(t, kernels, "chase")
	for _, z := range sc.Resizes {
		assert.True(t, z.Grow, "a resize that drained: %+v", z)
	}
}

func TestTriples(t *testing.T) {
	b, _ := newBench(t, FakeOptions{})
	ks := kernelsByName(t, "triad_f4", "fma_chain", "chase")
	w := Workload{Name: names(ks), Kernels: ks, Complementary: true}
	outs, err := b.Run(context.Background(), []Workload{w}, []Mode{Sequential, Static, Oracle, STM, Scheduler})
	require.NoError(t, err)
	seq := outcome(t, outs, Sequential)
	assert.InDelta(t, 6.0, seq.MakespanMs, 1e-6)
	static, or := outcome(t, outs, Static), outcome(t, outs, Oracle)
	assert.Len(t, static.Split, 3)
	assert.Len(t, static.Sweep, len(Splits(16, 3, 4)))
	assert.LessOrEqual(t, or.MakespanMs, static.MakespanMs+1e-9)
	assert.Less(t, or.MakespanMs, seq.MakespanMs)
	for _, m := range []Mode{STM, Scheduler} {
		o := outcome(t, outs, m)
		assert.Len(t, o.Ends, 3, "%s", m)
		assert.Less(t, o.MakespanMs, seq.MakespanMs, "%s", m)
	}
}

func TestUnavailableModes(t *testing.T) {
	f := NewFake(FakeOptions{SMs: 8})
	defer f.Close()
	b := &Bench{Dev: f, Opts: Options{Reps: 1, TripleStep: 4}}
	ks := kernelsByName(t, "triad_f4", "fma_chain", "chase")
	w := Workload{Name: names(ks), Kernels: ks}
	outs, err := b.Run(context.Background(), []Workload{w}, AllModes)
	require.NoError(t, err)
	want := map[Mode]string{
		Green:     "without green contexts",
		STM:       "no profiles",
		Scheduler: "no profiles",
		Static:    "8 SMs cannot be split 3 ways in steps of 4",
		Oracle:    "8 SMs cannot be split 3 ways in steps of 4",
		MPS:       "no MPS runner",
	}
	for m, why := range want {
		assert.Contains(t, outcome(t, outs, m).Unavailable, why, "%s", m)
	}
	assert.Empty(t, outcome(t, outs, Streams).Unavailable)
}

type fakeMPS struct {
	makespan map[int]float64
	calls    []int
}

func (m *fakeMPS) Unavailable() string { return "" }
func (m *fakeMPS) Run(_ context.Context, ks []*Kernel, pct int) ([]float64, float64, float64, error) {
	m.calls = append(m.calls, pct)
	mk, ok := m.makespan[pct]
	if !ok {
		return nil, 0, 0, errors.New("unexpected percentage")
	}
	ends := make([]float64, len(ks))
	for i := range ends {
		ends[i] = mk
	}
	return ends, mk, mk + 0.05, nil
}

func TestMPSBestPercentage(t *testing.T) {
	b, _ := newBench(t, FakeOptions{})
	m := &fakeMPS{makespan: map[int]float64{0: 3.2, 25: 3.4, 50: 2.9, 75: 3.0}}
	b.Opts.MPS = m
	outs, err := b.Run(context.Background(), []Workload{workload(t, "triad_f4", "fma_chain")}, []Mode{Sequential, MPS})
	require.NoError(t, err)
	var got []string
	for _, o := range outs {
		if o.Mode == MPS {
			got = append(got, fmt.Sprintf("%s %.1f", o.Setting, o.MakespanMs))
		}
	}
	assert.Equal(t, []string{"default 3.2", "pct=50 2.9"}, got)
	for _, o := range outs {
		if o.Mode == MPS {
			assert.InDelta(t, o.MakespanMs+0.05, o.WallMs, 1e-9, "the runner's wall makespan is kept")
		}
	}
	assert.Equal(t, []int{0, 25, 50, 75}, m.calls)
}

// Profiles measured on the fake follow its model, and the planner reads
// them.
func TestMeasureProfiles(t *testing.T) {
	f := NewFake(FakeOptions{})
	defer f.Close()
	ks := kernelsByName(t, "triad_f4", "fma_chain")
	var seen []string
	ps, err := MeasureProfiles(context.Background(), f, ks, []int{1, 4, 16}, 2, func(k string, m int) { seen = append(seen, fmt.Sprintf("%s %d", k, m)) })
	require.NoError(t, err)
	assert.Equal(t, []string{"triad_f4 1", "triad_f4 4", "triad_f4 16", "fma_chain 1", "fma_chain 4", "fma_chain 16"}, seen)
	tri := ps.Kernels[0]
	assert.InDelta(t, 5.0, tri.R(1), 1e-6)
	assert.InDelta(t, 1.0, tri.R(16), 1e-6)
	assert.InDelta(t, float64(ks[0].Bytes)/1e9/1e-3, tri.B(16), 1e-3)
	c, _ := ps.Classify(1)
	assert.Equal(t, plan.HC, c)
	_, err = MeasureProfiles(context.Background(), f, ks, []int{17}, 1, nil)
	assert.ErrorContains(t, err, "outside 1..16")
}

func TestProfileSweep(t *testing.T) {
	assert.Equal(t, []int{1, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 132}, ProfileSweep(132, 8))
	assert.Equal(t, []int{1, 2, 3}, ProfileSweep(3, 1))
	assert.Equal(t, []int{1}, ProfileSweep(1, 4))
}

// Two runs of the benchmark on the fake give the same outcomes, scheduler
// included.
func TestDeterministic(t *testing.T) {
	run := func() []Outcome {
		b, _ := newBench(t, FakeOptions{GreenGranularity: 4})
		ws, err := SelectWorkloads(Workloads(Catalogue()), nil, true)
		require.NoError(t, err)
		outs, err := b.Run(context.Background(), ws, AllModes)
		require.NoError(t, err)
		return outs
	}
	assert.Equal(t, run(), run())
}

func TestRunCanceled(t *testing.T) {
	b, _ := newBench(t, FakeOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.Run(ctx, []Workload{workload(t, "triad_f4", "fma_chain")}, []Mode{Sequential})
	assert.ErrorIs(t, err, context.Canceled)
}

// The baselines run native kernels where the device can, persistent
// workers on all SMs otherwise, and say which.
func TestBaselinesNative(t *testing.T) {
	for _, noNative := range []bool{false, true} {
		t.Run(fmt.Sprint("noNative=", noNative), func(t *testing.T) {
			f := NewFake(FakeOptions{NoNative: noNative})
			defer f.Close()
			b := &Bench{Dev: f, Opts: Options{Reps: 2}}
			outs, err := b.Run(context.Background(), []Workload{workload(t, "triad_f4", "fma_chain")}, []Mode{Sequential, Streams})
			require.NoError(t, err)
			want := "native kernels"
			natives := 2*2 + 2*2 // sequential: 2 kernels x 2 reps; streams: 2 reps x 2 kernels
			if noNative {
				want = "persistent workers on all SMs (the fake device was made without native launches)"
				natives = 0
			}
			for _, m := range []Mode{Sequential, Streams} {
				assert.Equal(t, []string{want}, outcome(t, outs, m).Notes, "%s", m)
			}
			assert.Equal(t, natives, f.NativeStarts())
			assert.InDelta(t, 3.0, outcome(t, outs, Streams).MakespanMs, 1e-6)
		})
	}
}

// Green runs after every workload's other modes; a failure there (a fault
// in a green context would destroy the CUDA context) ends green for this
// and the later workloads and keeps everything else.
func TestGreenFailureKeepsTheRest(t *testing.T) {
	f := NewFake(FakeOptions{GreenGranularity: 4, GreenFault: errors.New("CUDA_ERROR_ILLEGAL_ADDRESS")})
	defer f.Close()
	var order []string
	b := &Bench{Dev: f, Opts: Options{Reps: 1, Progress: func(p Progress) { order = append(order, p.Workload+" "+string(p.Mode)) }}}
	ws := []Workload{workload(t, "triad_f4", "fma_chain"), workload(t, "triad_f4", "chase")}
	outs, err := b.Run(context.Background(), ws, []Mode{Sequential, Green, Static})
	require.NoError(t, err)
	assert.Equal(t, []string{"triad_f4+fma_chain sequential", "triad_f4+fma_chain static", "triad_f4+chase sequential",
		"triad_f4+chase static", "triad_f4+fma_chain green"}, order, "green last, and not retried after it failed")
	var got []string
	for _, o := range outs {
		got = append(got, fmt.Sprintf("%s %s %q", o.Workload, o.Mode, o.Unavailable))
	}
	why := `"failed: triad_f4+fma_chain, mode green: split 4:12: starting triad_f4: CUDA_ERROR_ILLEGAL_ADDRESS"`
	assert.Equal(t, []string{
		`triad_f4+fma_chain sequential ""`, `triad_f4+fma_chain static ""`, "triad_f4+fma_chain green " + why,
		`triad_f4+chase sequential ""`, `triad_f4+chase static ""`, "triad_f4+chase green " + why,
	}, got)
}

func TestImplausible(t *testing.T) {
	w := workload(t, "triad_f4", "scale_f4") // 5 GiB of DRAM traffic
	assert.Equal(t, "", implausible(w, 1.8, 3352))
	assert.Contains(t, implausible(w, 1.071, 3352), "implausible: 5.37 GB in 1.071 ms is 5013 GB/s")
	assert.Equal(t, "", implausible(w, 1.071, 0), "no peak known: no verdict")
}
