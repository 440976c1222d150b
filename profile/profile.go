package profile

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/runtime"
)

// Launch is the shape of the profiled launch: the application's logical
// grid and block, its dynamic shared memory, and the logical blocks per
// task of the persistent workers (0: the runtime's AutoIters).
type Launch struct {
	Grid, Block runtime.Dim3
	Shared      uint32
	Iters       int
}

// KernelAttrs are the compiled worker's resources, which the profile
// records for the planners' occupancy model.
type KernelAttrs struct {
	Registers    int // per thread
	StaticShared int // bytes per block
	LocalBytes   int // per thread (register spills)
	BlocksPerSM  int // occupancy at the launch's block size and shared memory
}

// Target is a kernel loaded on a device with its arguments in device
// memory, ready to be run on any SM range.
type Target interface {
	Runner
	Attrs() KernelAttrs
	Close() error
}

// Device is the GPU side of profiling: what the profile says about the
// device, and loading a prepared kernel onto it. OpenCUDA returns the real
// one; tests use a fake.
type Device interface {
	Info() plan.Device
	Load(ctx context.Context, k *Prepared, l Launch, args []Bound) (Target, error)
	Close() error
}

// FlagError is a problem with a command-line value that shows only once
// the device is known (an SM count above M, a block too large for the
// kernel): the CLI reports it as a usage error.
type FlagError struct {
	Flag string
	Err  error
}

func (e *FlagError) Error() string { return e.Flag + ": " + e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// Request is one kernel to profile.
type Request struct {
	Kernel *Prepared
	// Name is the kernel's name in the profile; empty means the kernel's
	// qualified name. Profiling one kernel at two sizes needs two names.
	Name   string
	Launch Launch
	Args   []Bound
	SMs    Sweep
	Reps   int // timed runs per SM count (default 5)
	// Warmup untimed runs per SM count; negative means none, 0 the
	// default of one.
	Warmup int
	// BytesPerBlock is the DRAM traffic of one logical block, as the user
	// declares it; B[m] = blocks × BytesPerBlock / R[m]. Zero: bandwidth
	// unknown, recorded as 0.
	BytesPerBlock int64
	// PeakBWGBs overrides the device's peak bandwidth when positive (the
	// driver may not report the memory clock it is computed from).
	PeakBWGBs float64
	// DRAMSensitivity also measures the kernel on half the SMs with a
	// streaming kernel saturating DRAM from the other half (LoadedRunner);
	// the ratio to its time there alone is the profile's dram_sensitivity.
	// The stream also runs on fewer SMs (loadedStreams), each run with the
	// stream's own bandwidth there: the profile's dram_loaded.
	DRAMSensitivity bool
	RunTimeout      time.Duration
	Progress        func(Event)
}

// LoadedRunner is a Target that can also run the kernel on SMs [0, m-1]
// while a streaming kernel loads DRAM from the last stream SMs
// [M-stream, M-1] (stream <= M-m), and measure that stream's own bandwidth.
type LoadedRunner interface {
	RunLoaded(ctx context.Context, m, stream int) (time.Duration, error)
	// StreamGBs is the stream's DRAM bandwidth alone on its last stream
	// SMs, in GB/s.
	StreamGBs(ctx context.Context, stream int) (float64, error)
}

// NativeRunner is a Target that can also run the kernel as written (its
// own grid, no worker) on all SMs: the time a program pays without slatec,
// which a co-run must beat (the profile's native_ms).
type NativeRunner interface {
	RunNative(ctx context.Context) (time.Duration, error)
}

// ErrNoNative is RunNative's error when the target cannot launch the
// kernel as written (no library support in the driver, parameters of
// unknown size): the profile then has no native_ms.
var ErrNoNative = errors.New("the kernel cannot be launched as written here")

// Result is a finished profile.
type Result struct {
	// Set holds the device and the one profiled kernel; it is valid.
	Set    *plan.ProfileSet
	Points []Point
	Attrs  KernelAttrs
	// ClassReason says which of plan's rules chose the Slate class.
	ClassReason string
	// Notes are things the user should know about the numbers.
	Notes []string
}

// Kernel returns the profiled kernel.
func (r *Result) Kernel() *plan.Kernel { return &r.Set.Kernels[0] }

// DefaultReps is the default number of timed runs per SM count.
const DefaultReps = 5

// Profile measures req's kernel on dev for each SM count of the sweep and
// returns its profile: R[m] the median GPU time of the persistent form on
// SMs [0, m-1], B[m] from the declared bytes per block, the launch shape,
// the worker's registers and shared memory, the buffers' size, and the
// Slate class that plan's thresholds derive from these numbers.
func Profile(ctx context.Context, dev Device, req Request) (*Result, error) {
	if req.Kernel == nil {
		return nil, errors.New("profile: no kernel")
	}
	dinfo := dev.Info()
	if req.PeakBWGBs > 0 {
		dinfo.PeakBWGBs = req.PeakBWGBs
	}
	if !(dinfo.PeakBWGBs > 0) || math.IsInf(dinfo.PeakBWGBs, 0) {
		return nil, &FlagError{Flag: "--peak-bw", Err: fmt.Errorf("the driver does not report %s's memory clock, so its peak bandwidth is unknown: give it in GB/s", dinfo.Name)}
	}
	sms, err := req.SMs.Expand(dinfo.SMs)
	if err != nil {
		return nil, &FlagError{Flag: "--sms", Err: err}
	}
	if err := checkLaunch(req.Launch); err != nil {
		return nil, err
	}
	reps := req.Reps
	if reps == 0 {
		reps = DefaultReps
	}
	if reps < 1 {
		return nil, &FlagError{Flag: "--reps", Err: fmt.Errorf("must be at least 1, got %d", req.Reps)}
	}
	warmup := req.Warmup
	switch {
	case warmup == 0:
		warmup = 1
	case warmup < 0:
		warmup = 0
	}
	if req.BytesPerBlock < 0 {
		return nil, &FlagError{Flag: "--bytes-per-block", Err: fmt.Errorf("must not be negative, got %d", req.BytesPerBlock)}
	}
	args := make([]Arg, len(req.Args))
	for i, b := range req.Args {
		args[i] = b.Arg
	}

	tgt, err := dev.Load(ctx, req.Kernel, req.Launch, req.Args)
	if err != nil {
		return nil, err
	}
	points, err := Measure(ctx, tgt, sms, MeasureOptions{Reps: reps, Warmup: warmup, RunTimeout: req.RunTimeout, Progress: req.Progress})
	var native time.Duration
	if nr, ok := tgt.(NativeRunner); err == nil && ok {
		native, err = nativeTime(ctx, nr, reps, warmup)
	}
	sens := 0.0
	var loadedPts []plan.LoadedPoint
	if lr, ok := tgt.(LoadedRunner); err == nil && ok && req.DRAMSensitivity && dinfo.SMs >= 2 {
		sens, loadedPts, err = dramSensitivity(ctx, tgt, lr, dinfo.SMs/2, loadedStreams(dinfo.SMs), reps, warmup, req.RunTimeout)
	}
	attrs := tgt.Attrs()
	if cerr := tgt.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("releasing the kernel's memory: %w", cerr)
	}
	if err != nil {
		return nil, err
	}
	res, err := build(dinfo, req, args, points, attrs)
	if err == nil && native > 0 {
		res.Set.Kernels[0].NativeMs = round(native.Seconds()*1e3, 4)
	}
	if err == nil && sens > 0 {
		res.Set.Kernels[0].DRAMSensitivity = round(sens, 3)
		res.Set.Kernels[0].DRAMLoaded = loadedPts
	}
	return res, err
}

// nativeTime is the median GPU time of the kernel as written, or 0 when
// the target cannot run it so (ErrNoNative).
func nativeTime(ctx context.Context, nr NativeRunner, reps, warmup int) (time.Duration, error) {
	var ts []time.Duration
	for i := range warmup + reps {
		d, err := nr.RunNative(ctx)
		if errors.Is(err, ErrNoNative) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("the kernel as written: %w", err)
		}
		if i >= warmup {
			ts = append(ts, d)
		}
	}
	return Median(ts), nil
}

// loadedStreams is how many SMs the DRAM stream of each loaded run takes on
// a device of sms SMs, lightest first: an eighth and a quarter of the half
// that the kernel leaves (loads below saturation), then that whole half
// (dram_sensitivity's run).
func loadedStreams(sms int) []int {
	half := sms - sms/2
	var out []int
	for _, k := range []int{half / 8, half / 4, half} {
		if k >= 1 && (len(out) == 0 || k > out[len(out)-1]) {
			out = append(out, k)
		}
	}
	return out
}

// loadedRuns is a LoadedRunner's loaded runs, the stream on its last
// stream SMs, as a Runner.
type loadedRuns struct {
	LoadedRunner
	stream int
}

func (l loadedRuns) Run(ctx context.Context, m int) (time.Duration, error) {
	return l.RunLoaded(ctx, m, l.stream)
}

// dramSensitivity times the kernel on m SMs alone and beside the DRAM
// stream on each of streams' SM counts, alternating so that clock drift
// falls on all, and returns the ratio of the medians with the stream on the
// last (most) SMs, and each ratio with the stream's own bandwidth there.
func dramSensitivity(ctx context.Context, r Runner, lr LoadedRunner, m int, streams []int, reps, warmup int, timeout time.Duration) (float64, []plan.LoadedPoint, error) {
	var idle []time.Duration
	loaded := make([][]time.Duration, len(streams))
	for i := range warmup + reps {
		a, err := runOnce(ctx, r, m, timeout)
		if err != nil {
			return 0, nil, fmt.Errorf("DRAM sensitivity on %d SMs: %w", m, err)
		}
		if i >= warmup {
			idle = append(idle, a)
		}
		for j, k := range streams {
			b, err := runOnce(ctx, loadedRuns{lr, k}, m, timeout)
			if err != nil {
				return 0, nil, fmt.Errorf("DRAM sensitivity on %d SMs, the stream on %d: %w", m, k, err)
			}
			if i >= warmup {
				loaded[j] = append(loaded[j], b)
			}
		}
	}
	mi := Median(idle)
	if mi <= 0 {
		return 0, nil, fmt.Errorf("DRAM sensitivity on %d SMs: no time measured", m)
	}
	pts := make([]plan.LoadedPoint, 0, len(streams))
	for j, k := range streams {
		ml := Median(loaded[j])
		if ml <= 0 {
			return 0, nil, fmt.Errorf("DRAM sensitivity on %d SMs, the stream on %d: no time measured", m, k)
		}
		gbs, err := lr.StreamGBs(ctx, k)
		if err != nil {
			return 0, nil, fmt.Errorf("the DRAM stream's bandwidth on %d SMs: %w", k, err)
		}
		if gbs <= 0 {
			return 0, nil, fmt.Errorf("the DRAM stream's bandwidth on %d SMs: none measured", k)
		}
		pts = append(pts, plan.LoadedPoint{StreamGBs: round(gbs, 1), Slowdown: round(float64(ml)/float64(mi), 3)})
	}
	return float64(Median(loaded[len(loaded)-1])) / float64(mi), pts, nil
}

// checkLaunch rejects launch shapes no GPU runs, before any device work.
func checkLaunch(l Launch) error {
	blocks := l.Grid.Count()
	if blocks == 0 {
		return &FlagError{Flag: "--grid", Err: fmt.Errorf("the grid %v is empty", l.Grid)}
	}
	if blocks > math.MaxInt32 {
		return &FlagError{Flag: "--grid", Err: fmt.Errorf("%d blocks; a profile holds at most %d", blocks, math.MaxInt32)}
	}
	if t := l.Block.Count(); t == 0 || t > 1024 {
		return &FlagError{Flag: "--block", Err: fmt.Errorf("block %v has %d threads; CUDA allows 1..1024", l.Block, t)}
	}
	if l.Iters < 0 {
		return &FlagError{Flag: "--iters", Err: fmt.Errorf("must not be negative, got %d", l.Iters)}
	}
	return nil
}

// build turns the measurements into a validated one-kernel profile set.
func build(dinfo plan.Device, req Request, args []Arg, points []Point, attrs KernelAttrs) (*Result, error) {
	name := req.Name
	if name == "" {
		name = req.Kernel.QualifiedName
	}
	blocks := int64(req.Launch.Grid.Count())
	k := plan.Kernel{
		Name:            name,
		Blocks:          blocks,
		ThreadsPerBlock: int(req.Launch.Block.Count()),
		Registers:       attrs.Registers,
		SharedBytes:     attrs.StaticShared + int(req.Launch.Shared),
		GlobalBytes:     GlobalBytes(args),
		BlocksPerSM:     max(attrs.BlocksPerSM, 0),
	}
	for _, p := range points {
		k.RMs = append(k.RMs, plan.Sample{M: p.M, V: round(p.Ms(), 6)})
		k.BWGBs = append(k.BWGBs, plan.Sample{M: p.M, V: round(BandwidthGBs(blocks, req.BytesPerBlock, p.Median), 3)})
	}
	res := &Result{Points: points, Attrs: attrs}
	dinfo.SustainedBWGBs = round(plan.SustainedBW(dinfo.PeakBWGBs, []plan.Kernel{k}), 3)
	ps := &plan.ProfileSet{Format: plan.FormatVersion, Device: dinfo, Kernels: []plan.Kernel{k}}
	if req.BytesPerBlock == 0 {
		res.Notes = append(res.Notes, "no --bytes-per-block: B[m] is recorded as 0, and the Slate class rests on scaling alone (a memory-bound kernel may be labelled L_C or M_C)")
	}
	if attrs.LocalBytes > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("the worker spills %d bytes per thread to local memory", attrs.LocalBytes))
	}
	if err := ps.Validate(); err != nil {
		return nil, fmt.Errorf("internal error: the measured profile is invalid: %w", err)
	}
	// Record the class so the file says how the planners will treat the
	// kernel; it is what plan would derive from the same numbers.
	ps.Kernels[0].Class, res.ClassReason = ps.Classify(0)
	res.Set = ps
	return res, nil
}

// DeviceMismatchError refuses to mix devices in one profile file: R[m] and
// B[m] are properties of a kernel on one device.
type DeviceMismatchError struct {
	File, Measured plan.Device
}

func (e *DeviceMismatchError) Error() string {
	return fmt.Sprintf("the profile file is for %s (%d SMs, %d bytes), this device is %s (%d SMs, %d bytes); a profile file describes one device",
		e.File.Name, e.File.SMs, e.File.MemBytes, e.Measured.Name, e.Measured.SMs, e.Measured.MemBytes)
}

// SameDevice checks that a measured device is the one a profile file
// describes: same name, SM count and memory size. Peak bandwidth is not
// compared, since it may have been given by hand.
func SameDevice(file, measured plan.Device) error {
	if file.Name != measured.Name || file.SMs != measured.SMs || file.MemBytes != measured.MemBytes {
		return &DeviceMismatchError{File: file, Measured: measured}
	}
	return nil
}

// Merge adds the kernels of add to old (--append): a kernel of the same
// name is replaced where it stands, a new one goes at the end, so the
// order the planners see (Slate's queue) is kept. The devices must be the
// same; old's device entry is kept, with any fields added by hand. The
// result is validated; old is not modified.
func Merge(old, add *plan.ProfileSet) (merged *plan.ProfileSet, replaced []string, err error) {
	if err := SameDevice(old.Device, add.Device); err != nil {
		return nil, nil, err
	}
	out := &plan.ProfileSet{Format: plan.FormatVersion, Device: old.Device, Kernels: append([]plan.Kernel(nil), old.Kernels...)}
	// What the device sustains is the most any profile saw (both files'
	// values are already at least SustainedFrac of the peak).
	out.Device.SustainedBWGBs = max(old.Device.SustainedBWGBs, min(add.Device.SustainedBWGBs, out.Device.PeakBWGBs))
	for _, k := range add.Kernels {
		if i := out.KernelIndex(k.Name); i >= 0 {
			out.Kernels[i] = k
			replaced = append(replaced, k.Name)
			continue
		}
		out.Kernels = append(out.Kernels, k)
	}
	if err := out.Validate(); err != nil {
		return nil, nil, err
	}
	return out, replaced, nil
}
