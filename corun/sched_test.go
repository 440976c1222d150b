package corun

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slatec/slatec/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chainRecorder is a Fake that can chain native launches, recording what
// each one was launched behind.
type chainRecorder struct {
	*Fake
	after map[string]Job
}

func (c *chainRecorder) StartNativeAfter(k *Kernel, prev Job) (Job, error) {
	c.after[k.Name] = prev
	return c.StartNative(k)
}

// A solo task the plan marks Tail (plan.SlateOptions.SoloTail) is launched
// at once, on its own stream, not behind the solo task before it; one that
// is not marked waits for it.
func TestSoloTailLaunchesWithoutWaiting(t *testing.T) {
	f := NewFake(FakeOptions{})
	t.Cleanup(func() { f.Close() })
	dev := &chainRecorder{Fake: f, after: map[string]Job{}}
	ks := kernelsByName(t, "triad_f4", "histogram", "fma_chain")
	x := &schedExecutor{dev: dev, byName: map[string]*Kernel{}, jobs: map[string]Job{}, from: map[string]time.Duration{}, cur: map[string]runtime.SMRange{},
		native: map[string]bool{"triad_f4": true, "histogram": true, "fma_chain": true},
		tail:   map[string]bool{"histogram": true}}
	for _, k := range ks {
		x.byName[k.Name] = k
	}
	all := runtime.SMRange{Low: 0, High: f.Info().SMs - 1}
	first, err := x.start(&runtime.Task{Name: "triad_f4"}, all, nil)
	require.NoError(t, err)
	second, err := x.start(&runtime.Task{Name: "histogram"}, all, first.(*schedRunning))
	require.NoError(t, err)
	_, err = x.start(&runtime.Task{Name: "fma_chain"}, all, second.(*schedRunning))
	require.NoError(t, err)
	assert.Nil(t, dev.after["histogram"], "a tail task does not wait")
	assert.Same(t, x.jobs["histogram"], dev.after["fma_chain"], "a task not marked waits for the one before it")
}

// runRecorder is a Fake that records, per run (the L2 flush that starts
// each), whether it launched kernels as written or workers.
type runRecorder struct {
	*Fake
	runs []string
}

func (r *runRecorder) FlushL2() error { r.runs = append(r.runs, ""); return nil }
func (r *runRecorder) mark(c string) {
	if n := len(r.runs); n > 0 && !strings.Contains(r.runs[n-1], c) {
		r.runs[n-1] += c
	}
}
func (r *runRecorder) Start(k *Kernel, rg runtime.SMRange) (Job, error) {
	r.mark("w")
	return r.Fake.Start(k, rg)
}
func (r *runRecorder) StartNative(k *Kernel) (Job, error) {
	r.mark("n")
	return r.Fake.StartNative(k)
}

// The modes the targets compare (sequential, streams, scheduler) take
// their repetitions in rotation, one run of each per round, so that a
// drift over a workload's runs falls on all of them; the others run
// their repetitions together, after them.
func TestRotatedRepetitions(t *testing.T) {
	f := NewFake(FakeOptions{})
	t.Cleanup(func() { f.Close() })
	ps, err := MeasureProfiles(context.Background(), f, Catalogue(), ProfileSweep(f.Info().SMs, 1), 1, nil)
	require.NoError(t, err)
	rec := &runRecorder{Fake: f}
	b := &Bench{Dev: rec, Profiles: ps, Opts: Options{Reps: 3, Step: 8, TripleStep: 8}}
	w := workload(t, "triad_f4", "fma_chain")
	outs, err := b.Run(context.Background(), []Workload{w}, []Mode{Sequential, Streams, Scheduler, STM})
	require.NoError(t, err)
	// Sequential and streams launch the kernels as written (n), the
	// scheduler and STM their workers (w); STM's three runs come last.
	// Sequential flushes before each of its two kernels.
	round := []string{"n", "n", "n", "w"}
	want := append(append(append(append([]string{}, round...), round...), round...), "w", "w", "w")
	assert.Equal(t, want, rec.runs)
	assert.Equal(t, 3, b.Opts.Reps, "restored")
	var modes []Mode
	for _, o := range outs {
		modes = append(modes, o.Mode)
	}
	assert.Equal(t, []Mode{Sequential, Streams, Scheduler, STM}, modes)
	seq := outcome(t, outs, Sequential)
	assert.InDelta(t, 3.5, seq.MakespanMs, 1e-6)
	assert.NotZero(t, outcome(t, outs, Scheduler).Metrics.STP, "metrics from the sequential run's solo times")
}
