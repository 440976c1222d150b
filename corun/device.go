package corun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/runtime"
)

// Device is the GPU side of the benchmark. The real one (OpenCUDA) runs the
// catalogue's kernels as persistent workers through the runtime; the fake
// (NewFake) models them on a virtual clock.
type Device interface {
	// Info describes the device as the planners see it.
	Info() plan.Device
	// Start launches kernel k over its whole logical grid on SMs r,
	// asynchronously.
	Start(k *Kernel, r runtime.SMRange) (Job, error)
	// WaitAny blocks until one of jobs has ended and returns its index
	// (the earliest to end when several have) and that job's error.
	WaitAny(ctx context.Context, jobs []Job) (int, error)
	// Now is the device's clock, the one Job.Span reads.
	Now() time.Duration
	Close() error
}

// l2Flusher is a Device that can evict its L2 cache before a timed run.
type l2Flusher interface{ FlushL2() error }

// Timed is a Device that says how it times spans (Document.Timing).
type Timed interface{ Timing() string }

// Ordered is a Device whose SM ranges are places in an SM order
// (Document.SMOrder).
type Ordered interface{ SMOrder() string }

// stampedJob is a Job whose Span came from GPU stamps (runtime
// Device.EnableClock) rather than from the host's launch time.
type stampedJob interface{ Stamped() bool }

// Resize is one resize of a job as the device saw it.
type Resize struct {
	// Latency is the runtime's retreat-to-drained plus relaunch gap (GPU
	// events); zero for a grow.
	Latency time.Duration
	// Grow: the job gained SMs without a drain (runtime.ResizeStats.Grow).
	Grow bool
	// Deferred: the grow was armed on the GPU and started at another
	// job's end (runtime.ResizeStats.Deferred); this Resize adopted it.
	Deferred bool
	// Task is the job's task time on the SMs it drained from, estimated
	// from its profile (R[m] per wave of blocks x blocks per task); zero
	// when unknown. A drain waits for the tasks running, so the issue's
	// target is latency <= one task + 30 us.
	Task time.Duration
}

// growJob is a Job that can arm a deferred grow: onto r, started on the
// GPU when trigger ends (runtime.Job.GrowAtEnd).
type growJob interface {
	GrowAtEnd(trigger Job, r runtime.SMRange) error
}

// itersJob is a Job that says its logical blocks per task.
type itersJob interface{ Iters() int }

// Job is a started kernel.
type Job interface {
	// Resize moves the job to SMs r and returns when its old workers have
	// drained (or, growing, once the added workers are queued). It returns
	// runtime.ErrJobFinished when the job ended.
	Resize(ctx context.Context, r runtime.SMRange) (Resize, error)
	// Wait blocks until the job has ended.
	Wait(ctx context.Context) error
	// Done is closed when the job has ended.
	Done() <-chan struct{}
	// Span is the job's start and end on the device's clock (valid once
	// it has ended).
	Span() (start, end time.Duration)
}

// GreenDevice is a Device that can also run kernels in green contexts:
// static partitions of the SMs made by the driver (CUDA 12.4+). A Device
// without it, or whose GreenGranularity is 0, has no green mode.
type GreenDevice interface {
	Device
	// GreenGranularity is the smallest SM partition the driver makes, and
	// the step partitions come in; 0 when green contexts are unavailable.
	GreenGranularity() int
	// GreenUnavailable says why there are no green contexts ("" when there
	// are).
	GreenUnavailable() string
	// StartGreen launches k, as its native (not persistent) kernel on all
	// its blocks, on a stream of a green context holding sms SMs, the
	// part'th partition of a split into len(parts) partitions of the sizes
	// in parts. The partitions are disjoint.
	StartGreen(k *Kernel, parts []int, part int) (Job, error)
}

// ChainDevice is a Device that can start a kernel to run after a job
// ends, in GPU order (runtime.WithAfter), for the scheduler mode.
type ChainDevice interface {
	Device
	StartAfter(k *Kernel, r runtime.SMRange, prev Job) (Job, error)
}

// NativeDevice is a Device that can also launch a kernel as written: its
// own grid over every SM, no persistent worker. Sequential and streams use
// it when it is there, so that the baselines are what a program would run.
type NativeDevice interface {
	Device
	// NativeUnavailable says why native launches are not possible here
	// ("" when they are).
	NativeUnavailable() string
	StartNative(k *Kernel) (Job, error)
}

// NativeChainDevice is a NativeDevice that can also start a native kernel
// behind a job in GPU order: the scheduler runs a kernel that its plan puts
// alone as written, as a drop-in program does (SLATE_MODE=auto), since
// nothing will ask it to share its SMs.
type NativeChainDevice interface {
	NativeDevice
	StartNativeAfter(k *Kernel, prev Job) (Job, error)
}

// ErrUnavailable marks a mode that this device or machine cannot run
// (no green contexts, no MPS daemon): a row says so, the run goes on.
var ErrUnavailable = errors.New("mode unavailable")

// unavailable wraps why a mode cannot run.
func unavailable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnavailable, fmt.Sprintf(format, args...))
}

// ms converts a duration to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
