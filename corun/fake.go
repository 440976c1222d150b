package corun

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/runtime"
)

// FakeModel is how the fake device runs a kernel, on Liang's model (the one
// the planners use): alone on m SMs it takes R(m) = SoloMs * S / min(m, S)
// milliseconds, where S = ceil(SatFrac * SMs) is where it stops scaling (a
// memory-bound kernel saturates DRAM early, a small grid runs out of
// blocks), and moves B(m) = BWFrac * peak * min(m, S) / S of bandwidth.
// Kernels running together all slow down by max(1, sum of B / peak).
type FakeModel struct {
	SoloMs  float64
	SatFrac float64
	BWFrac  float64
}

func (f FakeModel) sat(sms int) float64 {
	frac := f.SatFrac
	if frac <= 0 || frac > 1 {
		frac = 1
	}
	return math.Max(1, math.Ceil(frac*float64(sms)))
}

// R is the model's solo time in ms on m (possibly fractional) of sms SMs.
func (f FakeModel) R(m float64, sms int) float64 {
	s := f.sat(sms)
	return f.SoloMs * s / math.Min(m, s)
}

// B is the model's bandwidth in GB/s on m of sms SMs, for peak GB/s.
func (f FakeModel) B(m float64, sms int, peak float64) float64 {
	s := f.sat(sms)
	return f.BWFrac * peak * math.Min(m, s) / s
}

// FakeOptions shape a fake device.
type FakeOptions struct {
	SMs       int     // default 16
	PeakBWGBs float64 // default 3350
	// GreenGranularity > 0 gives the fake green contexts in steps of that
	// many SMs.
	GreenGranularity int
	// GreenFault, if set, is what every green launch fails with (a kernel
	// fault in a green context, for tests).
	GreenFault error
	// NoNative makes the fake refuse native launches (NativeDevice).
	NoNative bool
	// ResizeLatency is what every resize reports (default 40 us); the
	// virtual clock does not move during a resize.
	ResizeLatency time.Duration
	// Settle is how long the fake waits, in real time, after the last
	// Start or Resize before it moves its clock for jobs waited on with
	// Job.Wait from other goroutines (the runtime's Scheduler), so that the
	// scheduler has reacted to one completion before the next happens.
	// WaitAny never waits. Default 20 ms (a loaded CI machine still reacts well within it).
	Settle time.Duration
}

// Fake is a deterministic model of a GPU on a virtual clock: kernels
// progress at the rates of their FakeModel on the SMs they hold (an SM held
// by several jobs is shared equally, which is how it models streams), and
// time moves only when something waits. It implements GreenDevice and
// NativeDevice.
type Fake struct {
	opts FakeOptions
	info plan.Device

	mu         sync.Mutex
	now        float64 // ms
	running    []*fakeJob
	lastAction time.Time
	starts     int
	natives    int
	closed     bool
	stop       chan struct{}
	stopped    chan struct{}
}

type fakeJob struct {
	f       *Fake
	k       *Kernel
	rng     runtime.SMRange
	left    float64 // fraction of the work still to do
	start   float64
	end     float64
	ended   bool
	waiting int
	done    chan struct{}
}

// NewFake makes a fake device; Close stops its clock.
func NewFake(o FakeOptions) *Fake {
	if o.SMs <= 0 {
		o.SMs = 16
	}
	if o.PeakBWGBs <= 0 {
		o.PeakBWGBs = 3350
	}
	if o.ResizeLatency <= 0 {
		o.ResizeLatency = 40 * time.Microsecond
	}
	if o.Settle <= 0 {
		o.Settle = 20 * time.Millisecond
	}
	f := &Fake{opts: o, stop: make(chan struct{}), stopped: make(chan struct{}),
		info: plan.Device{Name: "fake GPU", SMs: o.SMs, PeakBWGBs: o.PeakBWGBs, MemBytes: 80 << 30}}
	go f.clock()
	return f
}

// Info implements Device.
func (f *Fake) Info() plan.Device { return f.info }

// Starts counts the kernels started so far.
func (f *Fake) Starts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.starts
}

// Close implements Device.
func (f *Fake) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	f.mu.Unlock()
	close(f.stop)
	<-f.stopped
	return nil
}

// Start implements Device.
func (f *Fake) Start(k *Kernel, r runtime.SMRange) (Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, runtime.ErrClosed
	}
	if !r.Valid(f.info.SMs) {
		return nil, fmt.Errorf("fake: SM range %v outside [0,%d]", r, f.info.SMs-1)
	}
	if k.Model.SoloMs <= 0 {
		return nil, fmt.Errorf("fake: kernel %s has no model", k.Name)
	}
	j := &fakeJob{f: f, k: k, rng: r, left: 1, start: f.now, done: make(chan struct{})}
	f.running = append(f.running, j)
	f.starts++
	f.lastAction = time.Now()
	return j, nil
}

// NativeStarts counts the native launches so far.
func (f *Fake) NativeStarts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.natives
}

// NativeUnavailable implements NativeDevice.
func (f *Fake) NativeUnavailable() string {
	if f.opts.NoNative {
		return "the fake device was made without native launches"
	}
	return ""
}

// StartNative implements NativeDevice: the model does not tell a native
// kernel from its worker on all SMs.
func (f *Fake) StartNative(k *Kernel) (Job, error) {
	if f.opts.NoNative {
		return nil, unavailable("%s", f.NativeUnavailable())
	}
	j, err := f.Start(k, runtime.SMRange{Low: 0, High: f.info.SMs - 1})
	if err == nil {
		f.mu.Lock()
		f.natives++
		f.mu.Unlock()
	}
	return j, err
}

// GreenGranularity implements GreenDevice.
func (f *Fake) GreenGranularity() int { return f.opts.GreenGranularity }

// GreenUnavailable implements GreenDevice.
func (f *Fake) GreenUnavailable() string {
	if f.opts.GreenGranularity > 0 {
		return ""
	}
	return "the fake device was made without green contexts"
}

// StartGreen implements GreenDevice: partition part of parts, laid out from
// SM 0 in order.
func (f *Fake) StartGreen(k *Kernel, parts []int, part int) (Job, error) {
	if f.opts.GreenGranularity <= 0 {
		return nil, unavailable("%s", f.GreenUnavailable())
	}
	if f.opts.GreenFault != nil {
		return nil, f.opts.GreenFault
	}
	lo := 0
	for _, p := range parts[:part] {
		lo += p
	}
	return f.Start(k, runtime.SMRange{Low: lo, High: lo + parts[part] - 1})
}

// rates returns each running job's progress per ms.
func (f *Fake) rates() []float64 {
	M := f.info.SMs
	holders := make([]int, M)
	for _, j := range f.running {
		for s := j.rng.Low; s <= j.rng.High; s++ {
			holders[s]++
		}
	}
	eff := make([]float64, len(f.running))
	bw := 0.0
	for i, j := range f.running {
		for s := j.rng.Low; s <= j.rng.High; s++ {
			eff[i] += 1 / float64(holders[s])
		}
		bw += j.k.Model.B(eff[i], M, f.info.PeakBWGBs)
	}
	pen := math.Max(1, bw/f.info.PeakBWGBs)
	rates := make([]float64, len(f.running))
	for i, j := range f.running {
		rates[i] = 1 / (j.k.Model.R(eff[i], M) * pen)
	}
	return rates
}

// advance moves the clock to the next completion and ends that job.
func (f *Fake) advance() {
	if len(f.running) == 0 {
		return
	}
	rates := f.rates()
	first, dt := 0, math.Inf(1)
	for i, j := range f.running {
		if t := j.left / rates[i]; t < dt {
			first, dt = i, t
		}
	}
	f.now += dt
	var still []*fakeJob
	for i, j := range f.running {
		j.left -= rates[i] * dt
		if i == first || j.left <= 1e-12 {
			j.left, j.end, j.ended = 0, f.now, true
			close(j.done)
			continue
		}
		still = append(still, j)
	}
	f.running = still
}

// WaitAny implements Device: it moves the clock until one of jobs ends.
func (f *Fake) WaitAny(ctx context.Context, jobs []Job) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		best := -1
		for i, j := range jobs {
			fj := j.(*fakeJob)
			if fj.ended && (best < 0 || fj.end < jobs[best].(*fakeJob).end) {
				best = i
			}
		}
		if best >= 0 {
			return best, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if len(f.running) == 0 {
			return 0, fmt.Errorf("fake: waiting for jobs that are not running")
		}
		f.advance()
	}
}

// clock moves time for jobs waited on with Job.Wait: when every running
// job has a waiter and nothing was started or resized for Settle.
func (f *Fake) clock() {
	defer close(f.stopped)
	t := time.NewTicker(f.opts.Settle / 4)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		f.mu.Lock()
		ready := len(f.running) > 0 && time.Since(f.lastAction) >= f.opts.Settle
		for _, j := range f.running {
			if j.waiting == 0 {
				ready = false
			}
		}
		if ready {
			f.advance()
			f.lastAction = time.Now()
		}
		f.mu.Unlock()
	}
}

// Resize implements Job.
func (j *fakeJob) Resize(ctx context.Context, r runtime.SMRange) (Resize, error) {
	f := j.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if j.ended {
		return Resize{}, runtime.ErrJobFinished
	}
	if !r.Valid(f.info.SMs) {
		return Resize{}, fmt.Errorf("fake: SM range %v outside [0,%d]", r, f.info.SMs-1)
	}
	// Like the runtime: a superset grows without a drain.
	grow := r != j.rng && r.Low <= j.rng.Low && r.High >= j.rng.High
	j.rng = r
	f.lastAction = time.Now()
	if grow {
		return Resize{Grow: true}, nil
	}
	return Resize{Latency: f.opts.ResizeLatency}, nil
}

// Wait implements Job.
func (j *fakeJob) Wait(ctx context.Context) error {
	f := j.f
	f.mu.Lock()
	j.waiting++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		j.waiting--
		f.mu.Unlock()
	}()
	select {
	case <-j.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done implements Job.
func (j *fakeJob) Done() <-chan struct{} { return j.done }

// Span implements Job.
func (j *fakeJob) Span() (start, end time.Duration) {
	j.f.mu.Lock()
	defer j.f.mu.Unlock()
	return msDur(j.start), msDur(j.end)
}

// Now implements Device.
func (f *Fake) Now() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return msDur(f.now)
}

func msDur(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Millisecond))) }
