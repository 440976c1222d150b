//go:build !cgo

package runtime

import (
	"context"
	"time"
)

// Without cgo there are no green contexts: every call returns ErrNoCgo.

// GreenSupported is false without cgo.
func GreenSupported() bool { return false }

// GreenGranularity returns ErrNoCgo.
func (d *Device) GreenGranularity() (GreenInfo, error) { return GreenInfo{}, ErrNoCgo }

// GreenSet is a set of green contexts; none can be made without cgo.
type GreenSet struct{}

// NewGreenSet returns ErrNoCgo.
func (d *Device) NewGreenSet(sizes []int) (*GreenSet, error) { return nil, ErrNoCgo }

// Parts returns nil.
func (s *GreenSet) Parts() []int { return nil }

// Close does nothing.
func (s *GreenSet) Close() error { return nil }

// Library is a context-independent library; none can be loaded without cgo.
type Library struct{}

// LoadLibrary returns ErrNoCgo.
func (d *Device) LoadLibrary(c *Compiled) (*Library, error) { return nil, ErrNoCgo }

// Unload does nothing.
func (l *Library) Unload() error { return nil }

// NativeKernel is a library kernel.
type NativeKernel struct{}

// Kernel returns ErrNoCgo.
func (l *Library) Kernel(name string, layout ParamLayout) (*NativeKernel, error) {
	return nil, ErrNoCgo
}

// NativeLaunch is a launch in a green context.
type NativeLaunch struct{ done chan struct{} }

// Launch returns ErrNoCgo.
func (s *GreenSet) Launch(part int, k *NativeKernel, grid, block Dim3, shared uint32, args []any) (*NativeLaunch, error) {
	return nil, ErrNoCgo
}

// LaunchNative returns ErrNoCgo.
func (d *Device) LaunchNative(k *NativeKernel, grid, block Dim3, shared uint32, args []any, opts ...LaunchOption) (*NativeLaunch, error) {
	return nil, ErrNoCgo
}

// Done returns a nil channel.
func (g *NativeLaunch) Done() <-chan struct{} { return g.done }

// Wait returns ErrNoCgo.
func (g *NativeLaunch) Wait(ctx context.Context) error { return ErrNoCgo }

// GPUTime returns 0.
func (g *NativeLaunch) GPUTime() time.Duration { return 0 }

// Span returns zero times: nothing launches without cgo.
func (g *NativeLaunch) Span() (start, end time.Time) { return time.Time{}, time.Time{} }
