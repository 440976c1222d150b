package profile

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/slatec/slatec/plan"
)

// fakeDevice stands in for a GPU: its kernel's latency on m SMs comes
// from a model, so everything around the measurement runs on the CPU.
type fakeDevice struct {
	info    plan.Device
	model   func(m, run int) time.Duration
	attrs   KernelAttrs
	loadErr error
	runErr  func(m, run int) error

	mu       sync.Mutex
	runs     map[int]int // runs per m
	order    []int       // m of each run, in order
	launch   Launch
	args     []Bound
	kernel   *Prepared
	closed   bool
	tgtClose int
}

func h200() plan.Device {
	return plan.Device{Name: "NVIDIA H200", SMs: 132, PeakBWGBs: 4800, MemBytes: 150754820096, MaxThreadsPerSM: 2048}
}

// memBound models a streaming kernel moving bytes: each SM pulls perSM
// GB/s until the device's achievable bandwidth is reached.
func memBound(bytes float64, perSM, achievable float64) func(m, run int) time.Duration {
	return func(m, _ int) time.Duration {
		bw := min(float64(m)*perSM, achievable) * 1e9
		return time.Duration(bytes / bw * float64(time.Second))
	}
}

// computeBound models a kernel that scales perfectly: work/m.
func computeBound(work time.Duration) func(m, run int) time.Duration {
	return func(m, _ int) time.Duration { return work / time.Duration(m) }
}

func newFake(model func(m, run int) time.Duration) *fakeDevice {
	return &fakeDevice{info: h200(), model: model, runs: map[int]int{},
		attrs: KernelAttrs{Registers: 16, StaticShared: 0, BlocksPerSM: 8}}
}

func (d *fakeDevice) Info() plan.Device { return d.info }

func (d *fakeDevice) Load(_ context.Context, k *Prepared, l Launch, args []Bound) (Target, error) {
	if d.loadErr != nil {
		return nil, d.loadErr
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.kernel, d.launch, d.args = k, l, args
	return &fakeTarget{d: d}, nil
}

func (d *fakeDevice) Close() error { d.closed = true; return nil }

type fakeTarget struct{ d *fakeDevice }

func (t *fakeTarget) Run(ctx context.Context, m int) (time.Duration, error) {
	d := t.d
	d.mu.Lock()
	d.runs[m]++
	run := d.runs[m]
	d.order = append(d.order, m)
	d.mu.Unlock()
	if m < 1 || m > d.info.SMs {
		return 0, fmt.Errorf("fake: %d SMs", m)
	}
	if d.runErr != nil {
		if err := d.runErr(m, run); err != nil {
			return 0, err
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return d.model(m, run), nil
}

func (t *fakeTarget) Attrs() KernelAttrs { return t.d.attrs }

func (t *fakeTarget) Close() error { t.d.tgtClose++; return nil }

// sequence returns a Runner answering from a fixed list per m.
type listRunner map[int][]time.Duration

func (l listRunner) Run(_ context.Context, m int) (time.Duration, error) {
	s := l[m]
	if len(s) == 0 {
		return 0, fmt.Errorf("no more runs for m = %d", m)
	}
	d := s[0]
	l[m] = s[1:]
	return d, nil
}

// loadedTarget is a fakeTarget that also runs with DRAM loaded: its time
// is the model's times factor.
type loadedTarget struct {
	fakeTarget
	factor  float64
	loaded  []int // m of each loaded run
	streams []int // the stream's SMs in each loaded run
}

// RunLoaded slows the kernel by factor with the stream on half the SMs, and
// in proportion to the square of the stream's share of that below it.
func (t *loadedTarget) RunLoaded(ctx context.Context, m, stream int) (time.Duration, error) {
	d, err := t.Run(ctx, m)
	t.loaded = append(t.loaded, m)
	t.streams = append(t.streams, stream)
	share := float64(stream) / 66 // half of the fake device's 132 SMs
	return time.Duration(float64(d) * (1 + (t.factor-1)*share*share)), err
}

// StreamGBs: 100 GB/s per SM.
func (t *loadedTarget) StreamGBs(ctx context.Context, stream int) (float64, error) {
	return 100 * float64(stream), nil
}
