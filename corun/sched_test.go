package corun

import (
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
