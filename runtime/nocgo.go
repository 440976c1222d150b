//go:build !cgo

package runtime

// Without cgo the runtime cannot reach the CUDA driver or NVRTC (it loads
// them with dlopen through cgo). This file stands in for the cgo files so
// that the package, and slatec's transformer that imports it, still build
// with CGO_ENABLED=0; every call that would reach the driver or NVRTC
// returns ErrNoCgo, saying so at use.

import (
	"context"
	"errors"
)

// ErrNoCgo is what every driver and NVRTC call returns in a build without
// cgo.
var ErrNoCgo = errors.New("runtime: this slatec was built without cgo (CGO_ENABLED=0); " +
	"running kernels needs cgo to load libcuda and NVRTC: rebuild with CGO_ENABLED=1 and a C compiler")

// Device is an open CUDA device. Without cgo none can be opened.
type Device struct{ info DeviceInfo }

// Open returns ErrNoCgo.
func Open(ordinal int) (*Device, error) { return nil, ErrNoCgo }

// Info returns the device's properties.
func (d *Device) Info() DeviceInfo { return d.info }

// FullRange is every SM of the device.
func (d *Device) FullRange() SMRange { return SMRange{0, d.info.SMs - 1} }

// Err returns ErrNoCgo.
func (d *Device) Err() error { return ErrNoCgo }

// Close does nothing.
func (d *Device) Close() error { return nil }

// Synchronize returns ErrNoCgo.
func (d *Device) Synchronize() error { return ErrNoCgo }

// Alloc returns ErrNoCgo.
func (d *Device) Alloc(bytes int) (DevicePtr, error) { return 0, ErrNoCgo }

// Free returns ErrNoCgo.
func (d *Device) Free(p DevicePtr) error { return ErrNoCgo }

// FlushL2 returns ErrNoCgo.
func (d *Device) FlushL2() error { return ErrNoCgo }

// Memset32 returns ErrNoCgo.
func (d *Device) Memset32(p DevicePtr, v uint32, n int) error { return ErrNoCgo }

// CopyToDevice returns ErrNoCgo.
func CopyToDevice[T Plain](d *Device, dst DevicePtr, src []T) error { return ErrNoCgo }

// CopyFromDevice returns ErrNoCgo.
func CopyFromDevice[T Plain](d *Device, dst []T, src DevicePtr) error { return ErrNoCgo }

// Launch returns ErrNoCgo.
func (d *Device) Launch(k *Kernel, grid, block Dim3, shared uint32, args []any, r SMRange, opts ...LaunchOption) (*Job, error) {
	return nil, ErrNoCgo
}

// LoadModule returns ErrNoCgo.
func (d *Device) LoadModule(c *Compiled) (*Module, error) { return nil, ErrNoCgo }

// Module is a loaded CUBIN.
type Module struct{}

// Unload does nothing.
func (m *Module) Unload() error { return nil }

// Kernel returns ErrNoCgo.
func (m *Module) Kernel(name string, layout ParamLayout) (*Kernel, error) { return nil, ErrNoCgo }

// Kernel is a loaded kernel.
type Kernel struct {
	name, symbol string
	attrs        FuncAttrs
	layout       ParamLayout
}

// Name is the kernel's source name.
func (k *Kernel) Name() string { return k.name }

// Symbol is the kernel's lowered name.
func (k *Kernel) Symbol() string { return k.symbol }

// Attrs are the kernel's function attributes.
func (k *Kernel) Attrs() FuncAttrs { return k.attrs }

// Layout is the kernel's parameter layout.
func (k *Kernel) Layout() ParamLayout { return k.layout }

// Occupancy returns ErrNoCgo.
func (k *Kernel) Occupancy(blockThreads, shared int) (int, error) { return 0, ErrNoCgo }

// Job is a launched kernel. Without cgo none can be launched.
type Job struct {
	name string
	done chan struct{}
}

// Name is the job's name.
func (j *Job) Name() string { return j.name }

// Total is the number of logical blocks.
func (j *Job) Total() uint64 { return 0 }

// Iters is the task size.
func (j *Job) Iters() int { return 0 }

// Workers is the number of workers.
func (j *Job) Workers() int { return 0 }

// Range is the job's SM range.
func (j *Job) Range() SMRange { return SMRange{} }

// Done is closed when the job ends.
func (j *Job) Done() <-chan struct{} { return j.done }

// Err returns ErrNoCgo.
func (j *Job) Err() error { return ErrNoCgo }

// Stats returns zero statistics.
func (j *Job) Stats() JobStats { return JobStats{} }

// Wait returns ErrNoCgo.
func (j *Job) Wait(ctx context.Context) error { return ErrNoCgo }

// SMOrder returns nil.
func (d *Device) SMOrder() []int { return nil }

// SMOrderSource returns "".
func (d *Device) SMOrderSource() string { return "" }

// SMsOf returns nil.
func (d *Device) SMsOf(r SMRange) []int { return nil }

// RankedWorkers returns ErrNoCgo.
func (j *Job) RankedWorkers(ctx context.Context) ([]uint32, error) { return nil, ErrNoCgo }

// Progress returns ErrNoCgo.
func (j *Job) Progress(ctx context.Context) (done, total uint64, err error) { return 0, 0, ErrNoCgo }

// Resize returns ErrNoCgo.
func (j *Job) Resize(ctx context.Context, r SMRange) (ResizeStats, error) {
	return ResizeStats{}, ErrNoCgo
}

// Cancel does nothing.
func (j *Job) Cancel() {}

// NVRTCVersion returns ErrNoCgo.
func NVRTCVersion() (major, minor int, err error) { return 0, 0, ErrNoCgo }

// NVRTCSupportedArchs returns ErrNoCgo.
func NVRTCSupportedArchs() ([]int, error) { return nil, ErrNoCgo }

func nvrtcCompile(name, src, arch string, opts, exprs []string) (cubin []byte, lowered map[string]string, log string, err error) {
	return nil, nil, "", ErrNoCgo
}

// EnableClock returns ErrNoCgo.
func (d *Device) EnableClock() error { return ErrNoCgo }

// SetBlockTime does nothing without cgo.
func (k *Kernel) SetBlockTime(total, threads uint64, shared uint32, ns float64) {}

// BlockTime is 0 without cgo.
func (k *Kernel) BlockTime(total, threads uint64, shared uint32) float64 { return 0 }

// GrowAtEnd returns ErrNoCgo.
func (j *Job) GrowAtEnd(trigger *Job, r SMRange) error { return ErrNoCgo }

// ArmedGrows returns 0.
func (j *Job) ArmedGrows() int { return 0 }
