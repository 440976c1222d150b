package profile

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/runtime"
)

// cudaDevice profiles on a real GPU through slatec's runtime.
type cudaDevice struct {
	dev  *runtime.Device
	comp *runtime.Compiler

	// stream is RunLoaded's DRAM load, loaded at its first use.
	streamMu sync.Mutex
	stream   *cudaTarget
}

// OpenCUDA opens GPU ordinal for profiling. Kernels are compiled with c
// (nil: a default Compiler, with the CUBIN disk cache). Without a CUDA
// driver or device the error is a *runtime.LibraryError or a CUDA error
// from runtime.Open; NoDriver recognises both.
func OpenCUDA(ordinal int, c *runtime.Compiler) (Device, error) {
	d, err := runtime.Open(ordinal)
	if err != nil {
		return nil, err
	}
	if c == nil {
		c = &runtime.Compiler{}
	}
	return &cudaDevice{dev: d, comp: c}, nil
}

// NoDriver reports whether err from OpenCUDA means there is no GPU to
// profile on (no driver library, no device), as opposed to a GPU that
// failed.
func NoDriver(err error) bool {
	var le *runtime.LibraryError
	return errors.As(err, &le) || runtime.IsCUDAError(err, 100 /* CUDA_ERROR_NO_DEVICE */) ||
		runtime.IsCUDAError(err, 35 /* CUDA_ERROR_INSUFFICIENT_DRIVER */)
}

// Info describes the device in the profile's terms: Pb is the theoretical
// DRAM bandwidth (memory clock × bus width), in GB/s.
func (d *cudaDevice) Info() plan.Device {
	i := d.dev.Info()
	return plan.Device{
		Name:             i.Name,
		SMs:              i.SMs,
		PeakBWGBs:        round(i.PeakBandwidth()/1e9, 3),
		MemBytes:         i.TotalMem,
		MaxThreadsPerSM:  i.MaxThreadsPerSM,
		MaxBlocksPerSM:   i.MaxBlocksPerSM,
		RegistersPerSM:   i.MaxRegistersPerSM,
		SharedBytesPerSM: i.MaxSharedPerSM,
	}
}

func (d *cudaDevice) Close() error {
	d.streamMu.Lock()
	if d.stream != nil {
		d.stream.Close()
		d.stream = nil
	}
	d.streamMu.Unlock()
	return d.dev.Close()
}

// Load compiles the persistent source for the device, binds the worker
// with the kernel's parameter layout and puts the arguments in device
// memory: inputs filled by Filler, outputs zeroed.
func (d *cudaDevice) Load(ctx context.Context, k *Prepared, l Launch, args []Bound) (Target, error) {
	info := d.dev.Info()
	names := []string{k.Worker}
	if k.Native != "" {
		names = append(names, k.Native)
	}
	comp, err := d.comp.Compile(runtime.CompileRequest{Name: k.File, Source: k.Source, Arch: info.Arch(), NameExpressions: names})
	if err != nil {
		return nil, fmt.Errorf("compiling %s for %s: %w", k.File, info.Arch(), err)
	}
	mod, err := d.dev.LoadModule(comp)
	if err != nil {
		return nil, err
	}
	t := &cudaTarget{owner: d, dev: d.dev, mod: mod, name: k.QualifiedName, launch: l}
	if t.k, err = mod.Kernel(k.Worker, k.Layout); err != nil {
		t.Close()
		return nil, err
	}
	threads := int(l.Block.Count())
	if lim := t.k.Attrs().MaxThreadsPerBlock; threads > lim {
		t.Close()
		return nil, &FlagError{Flag: "--block", Err: fmt.Errorf("%d threads; the compiled worker of %s allows at most %d (registers or __launch_bounds__)", threads, k.QualifiedName, lim)}
	}
	occ, err := t.k.Occupancy(threads, int(l.Shared))
	if err != nil {
		t.Close()
		return nil, err
	}
	if occ < 1 {
		t.Close()
		return nil, &FlagError{Flag: "--block", Err: fmt.Errorf("%s cannot run with %d threads and %d bytes of dynamic shared memory per block (occupancy 0)", k.QualifiedName, threads, l.Shared)}
	}
	t.occ = occ
	// The kernel as written, for its native time (RunNative); a driver
	// without libraries, or parameters of unknown size, leave it out.
	if k.Native != "" {
		if lib, err := d.dev.LoadLibrary(comp); err == nil {
			if nk, err := lib.Kernel(k.Native, k.Layout); err == nil {
				t.lib, t.nk = lib, nk
			} else {
				lib.Unload()
			}
		}
	}
	t.args = make([]any, len(args))
	for i, b := range args {
		if !b.Arg.IsBuffer() {
			t.args[i] = b.Value
			continue
		}
		if err := ctx.Err(); err != nil {
			t.Close()
			return nil, err
		}
		p, err := d.upload(b.Arg)
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("argument %d (%s): %w", i+1, b.Arg.Text, err)
		}
		t.bufs = append(t.bufs, p)
		t.args[i] = p
	}
	return t, nil
}

// fillChunk bounds the host memory used to fill a buffer.
const fillChunk = 8 << 20

// upload allocates a buffer (rounded up to whole 32-bit words, which the
// zeroing memset writes) and fills it.
func (d *cudaDevice) upload(a Arg) (runtime.DevicePtr, error) {
	n := a.Bytes()
	alloc := (n + 3) &^ 3
	if alloc > int64(int(^uint(0)>>1)) {
		return 0, fmt.Errorf("%d bytes do not fit this platform's int", n)
	}
	p, err := d.dev.Alloc(int(alloc))
	if err != nil {
		return 0, err
	}
	if a.Kind == ArgOut {
		if err := d.dev.Memset32(p, 0, int(alloc/4)); err != nil {
			d.dev.Free(p)
			return 0, err
		}
		return p, nil
	}
	if err := FillDevice(d.dev, p, a); err != nil {
		d.dev.Free(p)
		return 0, err
	}
	return p, nil
}

// FillDevice writes input buffer a's values (Filler) to device memory at
// p, through a bounded host buffer. The co-running bench fills its inputs
// with it too, so that a kernel runs on the same data there as here.
func FillDevice(dev *runtime.Device, p runtime.DevicePtr, a Arg) error {
	f := NewFiller(a)
	n := a.Bytes()
	size := int64(a.Elem.Size())
	chunk := make([]byte, min(n, fillChunk/size*size))
	for off := int64(0); off < n; off += int64(len(chunk)) {
		c := chunk[:min(int64(len(chunk)), n-off)]
		f.Fill(c)
		if err := runtime.CopyToDevice(dev, p+runtime.DevicePtr(off), c); err != nil {
			return err
		}
	}
	return nil
}

// cudaTarget is a loaded worker with its arguments on the device.
type cudaTarget struct {
	owner  *cudaDevice
	dev    *runtime.Device
	mod    *runtime.Module
	k      *runtime.Kernel
	lib    *runtime.Library
	nk     *runtime.NativeKernel // nil: no native runs
	name   string
	launch Launch
	occ    int
	args   []any
	bufs   []runtime.DevicePtr
}

// Run launches the worker over the whole logical grid on SMs [0, m-1] and
// returns the job's GPU time (CUDA events around its launches). If the run
// does not finish in time the job is canceled, so the next run (or
// Close) does not find the SMs still busy.
func (t *cudaTarget) Run(ctx context.Context, m int) (time.Duration, error) {
	if sms := t.dev.Info().SMs; m < 1 || m > sms {
		return 0, fmt.Errorf("%d SMs asked for, the device has %d", m, sms)
	}
	var opts []runtime.LaunchOption
	if t.launch.Iters > 0 {
		opts = append(opts, runtime.WithIters(t.launch.Iters))
	}
	opts = append(opts, runtime.WithName(fmt.Sprintf("%s on %d SMs", t.name, m)))
	// Every timed run starts with a cold L2, whatever ran before it.
	if err := t.dev.FlushL2(); err != nil {
		return 0, err
	}
	j, err := t.dev.Launch(t.k, t.launch.Grid, t.launch.Block, t.launch.Shared, t.args, runtime.SMRange{Low: 0, High: m - 1}, opts...)
	if err != nil {
		return 0, err
	}
	if err := j.Wait(ctx); err != nil {
		j.Cancel()
		// Give the workers a moment to retreat; a hung kernel is reported
		// either way.
		wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = j.Wait(wctx)
		return 0, err
	}
	return j.Stats().GPUTime, nil
}

// Attrs reports the worker's registers, shared and local memory, and its
// occupancy at the profiled block size.
func (t *cudaTarget) Attrs() KernelAttrs {
	if t.k == nil {
		return KernelAttrs{}
	}
	a := t.k.Attrs()
	return KernelAttrs{Registers: a.Registers, StaticShared: a.StaticShared, LocalBytes: a.LocalBytes, BlocksPerSM: t.occ}
}

// Close frees the buffers and unloads the module.
func (t *cudaTarget) Close() error {
	var errs []error
	for _, p := range t.bufs {
		if err := t.dev.Free(p); err != nil {
			errs = append(errs, err)
		}
	}
	t.bufs = nil
	if t.mod != nil {
		if err := t.mod.Unload(); err != nil {
			errs = append(errs, err)
		}
		t.mod = nil
	}
	if t.lib != nil {
		if err := t.lib.Unload(); err != nil {
			errs = append(errs, err)
		}
		t.lib, t.nk = nil, nil
	}
	return errors.Join(errs...)
}

// RunNative implements NativeRunner: the kernel as written over its grid
// on all SMs (a stream of its own), after an L2 flush as Run; its GPU time.
func (t *cudaTarget) RunNative(ctx context.Context) (time.Duration, error) {
	if t.nk == nil {
		return 0, ErrNoNative
	}
	if err := t.dev.FlushL2(); err != nil {
		return 0, err
	}
	l, err := t.dev.LaunchNative(t.nk, t.launch.Grid, t.launch.Block, t.launch.Shared, t.args)
	if err != nil {
		return 0, err
	}
	if err := l.Wait(ctx); err != nil {
		return 0, err
	}
	return l.GPUTime(), nil
}

// streamSource is the DRAM load of RunLoaded: a copy-scale over buffers far
// larger than any L2, its logical grid as long as it is let run.
const streamSource = `// slatec profile: DRAM load for dram_sensitivity
__global__ void slatec_dram_stream(float4* __restrict__ a, const float4* __restrict__ b, unsigned int mask)
{
    const unsigned int i = (blockIdx.x * blockDim.x + threadIdx.x) & mask;
    const float4 x = b[i];
    a[i] = make_float4(2.f * x.x, 2.f * x.y, 2.f * x.z, 2.f * x.w);
}
`

// streamArgs: two 256 MiB buffers of float4 (2^24 each) and the mask.
const streamArgs = "out:f32:64M,buf:f32:64M,u32:16777215"

// streamBlocks is the stream's logical grid: seconds of traffic, far more
// than one loaded run needs; the job is canceled after the run.
const streamBlocks = 1 << 28

// loadStream loads the DRAM stream of RunLoaded once per device.
func (d *cudaDevice) loadStream(ctx context.Context) (*cudaTarget, error) {
	d.streamMu.Lock()
	defer d.streamMu.Unlock()
	if d.stream != nil {
		return d.stream, nil
	}
	prep, _, err := Prepare("slatec_dram_stream.cu", []byte(streamSource), "slatec_dram_stream", nil)
	if err != nil {
		return nil, fmt.Errorf("the DRAM stream: %w", err)
	}
	args, err := ParseArgs(streamArgs)
	if err != nil {
		return nil, err
	}
	bound, err := CheckArgs(args, prep.Layout)
	if err != nil {
		return nil, err
	}
	l := Launch{Grid: runtime.D1(streamBlocks), Block: runtime.D1(256)}
	tgt, err := d.Load(ctx, prep, l, bound)
	if err != nil {
		return nil, fmt.Errorf("loading the DRAM stream: %w", err)
	}
	d.stream = tgt.(*cudaTarget)
	return d.stream, nil
}

// streamBlockBytes is the DRAM traffic of one block of the stream: 256
// threads, each reading and writing one float4.
const streamBlockBytes = 256 * 2 * 16

// startStream launches the DRAM stream on the last stream SMs of the
// device; stop cancels it and waits for its workers to leave.
func (t *cudaTarget) startStream(ctx context.Context, stream int) (j *runtime.Job, stop func(), err error) {
	s, err := t.owner.loadStream(ctx)
	if err != nil {
		return nil, nil, err
	}
	M := t.dev.Info().SMs
	j, err = t.dev.Launch(s.k, s.launch.Grid, s.launch.Block, 0, s.args, runtime.SMRange{Low: M - stream, High: M - 1}, runtime.WithName("DRAM stream"))
	if err != nil {
		return nil, nil, err
	}
	stop = func() {
		j.Cancel()
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = j.Wait(wctx)
	}
	time.Sleep(200 * time.Microsecond) // the stream's workers are running
	return j, stop, nil
}

// RunLoaded implements LoadedRunner: Run on SMs [0, m-1] while the DRAM
// stream runs on [M-stream, M-1], started first so that DRAM is loaded when
// the kernel starts, and canceled after it.
func (t *cudaTarget) RunLoaded(ctx context.Context, m, stream int) (time.Duration, error) {
	M := t.dev.Info().SMs
	if m < 1 || stream < 1 || m+stream > M {
		return 0, fmt.Errorf("a loaded run needs SMs left for the DRAM stream: %d and %d of %d asked for", m, stream, M)
	}
	_, stop, err := t.startStream(ctx, stream)
	if err != nil {
		return 0, err
	}
	defer stop()
	return t.Run(ctx, m)
}

// StreamGBs implements LoadedRunner: the stream alone on its last stream
// SMs, its logical blocks counted over a few milliseconds (the job's
// progress, read before and after).
func (t *cudaTarget) StreamGBs(ctx context.Context, stream int) (float64, error) {
	M := t.dev.Info().SMs
	if stream < 1 || stream > M {
		return 0, fmt.Errorf("the DRAM stream on %d of %d SMs", stream, M)
	}
	j, stop, err := t.startStream(ctx, stream)
	if err != nil {
		return 0, err
	}
	defer stop()
	d0, _, err := j.Progress(ctx)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	time.Sleep(5 * time.Millisecond)
	d1, _, err := j.Progress(ctx)
	if err != nil {
		return 0, err
	}
	dt := time.Since(t0).Seconds()
	if d1 <= d0 || dt <= 0 {
		return 0, fmt.Errorf("the DRAM stream on %d SMs made no progress in %.1f ms", stream, 1e3*dt)
	}
	return float64(d1-d0) * streamBlockBytes / dt / 1e9, nil
}
