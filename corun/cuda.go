package corun

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/profile"
	"github.com/slatec/slatec/runtime"
)

// CUDADevice runs the catalogue's kernels on a GPU as persistent workers
// (the runtime package), from the launchers slatec gen made of
// kernels/corun.cu. Buffers are allocated and zeroed at a kernel's first
// start and kept until Close, so runs measure kernels, not allocation.
type CUDADevice struct {
	dev     *runtime.Device
	ks      *Kernels
	handles map[string]*runtime.Kernel
	epoch   time.Time
	// clockWhy says why spans fall back to host start + event time ("" when
	// the GPU clock stamps every job).
	clockWhy string
	peakBW   float64

	mu   sync.Mutex
	bufs map[string][]runtime.DevicePtr

	green greenState
}

// OpenCUDA opens GPU ordinal and loads the benchmark kernels (NVRTC, with
// the CUBIN cache of c; nil: a default compiler). Without a driver or a
// device the error is a *runtime.LibraryError or the driver's "no device"
// (NoGPU recognises both). peakBWGBs overrides the peak bandwidth the
// driver's memory clock gives, when positive.
func OpenCUDA(ordinal int, c *runtime.Compiler, peakBWGBs float64) (*CUDADevice, error) {
	d, err := runtime.Open(ordinal)
	if err != nil {
		return nil, err
	}
	ks, err := LoadKernels(d, c)
	if err != nil {
		d.Close()
		return nil, err
	}
	if peakBWGBs <= 0 {
		peakBWGBs = d.Info().PeakBandwidth() / 1e9
	}
	cd := &CUDADevice{dev: d, ks: ks, handles: kernelHandles(ks), epoch: time.Now(), peakBW: peakBWGBs, bufs: map[string][]runtime.DevicePtr{}}
	// Spans from GPU stamps: event times undercount kernels that waited
	// behind another stream's work in a shared hardware queue (RESULTS.md).
	if err := d.EnableClock(); err != nil {
		cd.clockWhy = err.Error()
	}
	cd.green.probe(d, c)
	return cd, nil
}

// NoGPU reports whether err from OpenCUDA means there is no GPU here (no
// driver library, no device, a driver too old), as opposed to a GPU that
// failed.
func NoGPU(err error) bool {
	var le *runtime.LibraryError
	return errors.As(err, &le) || strings.Contains(err.Error(), "built without cgo") ||
		runtime.IsCUDAError(err, 100 /* CUDA_ERROR_NO_DEVICE */) ||
		runtime.IsCUDAError(err, 35 /* CUDA_ERROR_INSUFFICIENT_DRIVER */) ||
		strings.Contains(err.Error(), "no CUDA device")
}

// kernelHandles maps the catalogue's names to the loaded workers.
func kernelHandles(k *Kernels) map[string]*runtime.Kernel {
	return map[string]*runtime.Kernel{
		"triad_f4": k.triadF4, "scale_f4": k.scaleF4, "fma_chain": k.fmaChain, "gemm_tc": k.gemmTc,
		"chase": k.chase, "dep_chain": k.depChain, "gemm_tiled": k.gemmTiled, "histogram": k.histogram,
	}
}

// Info implements Device.
func (d *CUDADevice) Info() plan.Device {
	i := d.dev.Info()
	return plan.Device{Name: i.Name, SMs: i.SMs, PeakBWGBs: round4(d.peakBW), MemBytes: i.TotalMem, MaxThreadsPerSM: i.MaxThreadsPerSM,
		MaxBlocksPerSM: i.MaxBlocksPerSM, RegistersPerSM: i.MaxRegistersPerSM, SharedBytesPerSM: i.MaxSharedPerSM}
}

// Timing implements Timed: how this device's spans are measured.
func (d *CUDADevice) Timing() string {
	if d.clockWhy != "" {
		return "events: " + d.clockWhy
	}
	return "gpu-stamps"
}

// SMOrder implements Ordered: what a range of places means on this device.
func (d *CUDADevice) SMOrder() string { return d.dev.SMOrderSource() }

// Runtime is the underlying device (for MPS children and tests).
func (d *CUDADevice) Runtime() *runtime.Device { return d.dev }

// FlushL2 evicts the L2 before a timed run (runtime.Device.FlushL2).
func (d *CUDADevice) FlushL2() error { return d.dev.FlushL2() }

// Now implements Device: host time since the device was opened.
func (d *CUDADevice) Now() time.Duration { return time.Since(d.epoch) }

// Close frees the buffers, unloads the kernels and closes the device.
func (d *CUDADevice) Close() error {
	d.mu.Lock()
	var errs []error
	for _, bs := range d.bufs {
		for _, p := range bs {
			errs = append(errs, d.dev.Free(p))
		}
	}
	d.bufs = nil
	d.mu.Unlock()
	d.green.close()
	errs = append(errs, d.ks.Close(), d.dev.Close())
	return errors.Join(errs...)
}

// buffers returns k's device buffers, allocated at first use: outputs
// zeroed, inputs filled as `slatec profile` fills them (profile.Filler,
// seeded by the argument's position), so that a kernel runs on the same
// data in the bench as in its profile. A pointer chase over a zeroed table
// ran 2.6x slower than over the profile's.
func (d *CUDADevice) buffers(k *Kernel) ([]runtime.DevicePtr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if bs, ok := d.bufs[k.Name]; ok {
		return bs, nil
	}
	var bs []runtime.DevicePtr
	for _, b := range k.Buffers {
		n := (b.Bytes() + 3) &^ 3
		p, err := d.dev.Alloc(int(n))
		if err == nil {
			err = d.dev.Memset32(p, 0, int(n/4)) // outputs, and an input's word padding
		}
		if err == nil && !b.Out {
			a := profile.Arg{Index: argIndex(k, len(bs)), Kind: profile.ArgBuf, Elem: profile.Elem(b.Elem), Count: b.Count}
			err = profile.FillDevice(d.dev, p, a)
		}
		if err != nil {
			for _, q := range append(bs, p) {
				d.dev.Free(q)
			}
			return nil, fmt.Errorf("%s: %d-byte buffer: %w", k.Name, b.Bytes(), err)
		}
		bs = append(bs, p)
	}
	d.bufs[k.Name] = bs
	return bs, nil
}

// LaunchArgs turns a kernel's Args into the values the runtime passes:
// buffers as device pointers, scalars in the Go type of their spelling
// (f32 float32, i32 int32, u32 uint32).
func LaunchArgs(k *Kernel, bufs []runtime.DevicePtr) ([]any, error) {
	var out []any
	for _, a := range k.Args {
		if n, ok := bufIndex(a); ok {
			if n >= len(bufs) {
				return nil, fmt.Errorf("%s: argument %s: no such buffer", k.Name, a)
			}
			out = append(out, bufs[n])
			continue
		}
		typ, val, ok := strings.Cut(a, ":")
		if !ok {
			return nil, fmt.Errorf("%s: argument %q is neither buf:N nor TYPE:VALUE", k.Name, a)
		}
		var v any
		var err error
		switch typ {
		case "f32":
			var f float64
			f, err = strconv.ParseFloat(val, 32)
			v = float32(f)
		case "i32":
			var i int64
			i, err = strconv.ParseInt(val, 0, 32)
			v = int32(i)
		case "u32":
			var u uint64
			u, err = strconv.ParseUint(val, 0, 32)
			v = uint32(u)
		default:
			err = fmt.Errorf("unsupported type %s", typ)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: argument %q: %w", k.Name, a, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// prepare returns k's loaded kernel and its arguments (the device buffers
// kept for k across runs), for every way of starting it.
func (d *CUDADevice) prepare(k *Kernel) (*runtime.Kernel, []any, error) {
	h := d.handles[k.Name]
	if h == nil {
		return nil, nil, fmt.Errorf("no kernel %s loaded", k.Name)
	}
	bufs, err := d.buffers(k)
	if err != nil {
		return nil, nil, err
	}
	args, err := LaunchArgs(k, bufs)
	if err != nil {
		return nil, nil, err
	}
	return h, args, nil
}

// Start implements Device.
func (d *CUDADevice) Start(k *Kernel, r runtime.SMRange) (Job, error) { return d.StartAfter(k, r, nil) }

// StartAfter implements ChainDevice. The job's span starts when prev's
// ends (its launch waits for prev on the GPU).
func (d *CUDADevice) StartAfter(k *Kernel, r runtime.SMRange, prev Job) (Job, error) {
	var opts []runtime.LaunchOption
	if pred := predecessor(prev); pred != nil {
		opts = append(opts, runtime.WithAfter(pred))
	}
	return d.startJob(k, r, prev, opts)
}

// SMsOf returns the SMs (%smid) of a range of places (runtime.Device.SMsOf).
func (d *CUDADevice) SMsOf(r runtime.SMRange) []int { return d.dev.SMsOf(r) }

// StartWith is Start with the runtime's launch options (probes).
func (d *CUDADevice) StartWith(k *Kernel, r runtime.SMRange, opts ...runtime.LaunchOption) (Job, error) {
	return d.startJob(k, r, nil, opts)
}

func (d *CUDADevice) startJob(k *Kernel, r runtime.SMRange, prev Job, extra []runtime.LaunchOption) (Job, error) {
	h, args, err := d.prepare(k)
	if err != nil {
		return nil, err
	}
	opts := append([]runtime.LaunchOption{runtime.WithName(k.Name)}, extra...)
	start := d.Now()
	j, err := d.dev.Launch(h, k.Grid, k.Block, 0, args, r, opts...)
	if err != nil {
		return nil, err
	}
	return &cudaJob{j: j, start: start, after: prev, epoch: d.epoch}, nil
}

// predecessor is the runtime launch behind a Job of this device, or nil.
func predecessor(prev Job) runtime.Predecessor {
	switch p := prev.(type) {
	case *cudaJob:
		if p != nil {
			return p.j
		}
	case *nativeJob:
		if p != nil {
			return p.nl
		}
	}
	return nil
}

// WaitAny implements Device.
func (d *CUDADevice) WaitAny(ctx context.Context, jobs []Job) (int, error) {
	cases := make([]reflect.SelectCase, 0, len(jobs)+1)
	for _, j := range jobs {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(j.Done())})
	}
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
	i, _, _ := reflect.Select(cases)
	if i == len(jobs) {
		return 0, ctx.Err()
	}
	// Of several that ended, the earliest.
	best := i
	_, be := jobs[i].Span()
	for k, j := range jobs {
		select {
		case <-j.Done():
			if _, e := j.Span(); e < be {
				best, be = k, e
			}
		default:
		}
	}
	return best, jobs[best].Wait(ctx)
}

// cudaJob is a runtime job with its start on the device's clock.
type cudaJob struct {
	j     *runtime.Job
	start time.Duration
	after Job       // started behind it (StartAfter)
	epoch time.Time // the device's (Now's zero)
}

func (c *cudaJob) Resize(ctx context.Context, r runtime.SMRange) (Resize, error) {
	st, err := c.j.Resize(ctx, r)
	return Resize{Latency: st.Drain + st.Gap, Grow: st.Grow, Deferred: st.Deferred}, err
}

// GrowAtEnd arms a deferred grow of the job onto r at trigger's end
// (runtime.Job.GrowAtEnd); trigger must be a job of this device.
func (c *cudaJob) GrowAtEnd(trigger Job, r runtime.SMRange) error {
	t, ok := trigger.(*cudaJob)
	if !ok {
		return runtime.ErrNoDeferredGrow
	}
	return c.j.GrowAtEnd(t.j, r)
}

func (c *cudaJob) Wait(ctx context.Context) error { return c.j.Wait(ctx) }
func (c *cudaJob) Iters() int                     { return c.j.Iters() }
func (c *cudaJob) Stamped() bool                  { return !c.j.Stats().Start.IsZero() }
func (c *cudaJob) Done() <-chan struct{}          { return c.j.Done() }

// Span is the job's start and end from GPU stamps, mapped to the device's
// clock; without the GPU clock, the launch time plus the job's GPU time
// (events around its launches), so host polling does not enter the end.
func (c *cudaJob) Span() (time.Duration, time.Duration) {
	if st := c.j.Stats(); !st.Start.IsZero() {
		return st.Start.Sub(c.epoch), st.End.Sub(c.epoch) // GPU stamps
	}
	start := afterStart(c.start, c.after)
	return start, start + c.j.Stats().GPUTime
}

// afterStart is where a job's event-timed span starts without GPU stamps:
// its launch time, or the end of the job it was started behind, whichever
// is later (its GPU time counts from its first launch, which waited).
func afterStart(start time.Duration, after Job) time.Duration {
	if after != nil {
		_, e := after.Span()
		start = max(start, e)
	}
	return start
}

// Cancel stops the job's workers after their current tasks.
func (c *cudaJob) Cancel() { c.j.Cancel() }

// argIndex is the position of buffer i in k's arguments ("buf:i").
func argIndex(k *Kernel, i int) int {
	want := fmt.Sprintf("buf:%d", i)
	for ai, a := range k.Args {
		if a == want {
			return ai
		}
	}
	return i
}

// SeedBlockTimes tells the runtime how long each profiled benchmark
// kernel's logical blocks take (from R[M], its workers on all SMs), so that
// a kernel's first job in the bench sizes its tasks (runtime.TaskIters) as
// the measured ones after it do, and every mode and repetition runs the
// same task size.
func (d *CUDADevice) SeedBlockTimes(ps *plan.ProfileSet) {
	if ps == nil {
		return
	}
	for _, k := range Catalogue() {
		h := d.handles[k.Name]
		i := ps.KernelIndex(k.Name)
		if h == nil || i < 0 {
			continue
		}
		occ, err := h.Occupancy(int(k.Block.Count()), 0)
		if err != nil || occ < 1 {
			continue
		}
		sms := d.dev.Info().SMs
		total := k.Grid.Count()
		h.SetBlockTime(total, k.Block.Count(), 0, runtime.ProfileBlockTime(ps.Kernels[i].R(sms), total, occ*sms))
	}
}
