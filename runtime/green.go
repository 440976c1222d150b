package runtime

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"
)

// GreenSupported reports whether the loaded driver has green contexts and
// context-independent libraries (CUDA >= 12.4). It is false before the
// driver is loaded (Open).
func GreenSupported() bool { return C.slate_cuda_has_green() != 0 }

// GreenGranularity returns the device's SM resource as green contexts see
// it: the SMs, the smallest partition and the alignment partitions come
// in. Drivers before CUDA 13 report neither of the last two; then the
// architecture's documented minimum is given (8 SMs from compute
// capability 9.0, 4 on 8.x, 2 before), as cuda.h lists them.
func (d *Device) GreenGranularity() (GreenInfo, error) {
	if err := d.usable(); err != nil {
		return GreenInfo{}, err
	}
	if !GreenSupported() {
		return GreenInfo{}, ErrNoGreen
	}
	var n, minp, align C.uint
	if err := d.check("cuDeviceGetDevResource", C.slate_cuDeviceGetSmResource(d.dev, &n, &minp, &align)); err != nil {
		return GreenInfo{}, err
	}
	gi := GreenInfo{SMs: int(n), MinPartition: int(minp), Alignment: int(align)}
	gi.fill(d.info.Major)
	return gi, nil
}

// GreenSet is a set of green contexts that partition the device's SMs,
// with a stream in each.
type GreenSet struct {
	dev     *Device
	gs, tmp []C.CUgreenCtx
	ctxs    []C.CUcontext
	streams []C.CUstream
	got     []int
}

// NewGreenSet partitions the SMs into len(sizes)+1 green contexts: one of
// each of sizes (rounded by the driver to its granularity) and one of the
// rest. Parts says what each got.
func (d *Device) NewGreenSet(sizes []int) (*GreenSet, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	if !GreenSupported() {
		return nil, ErrNoGreen
	}
	n := len(sizes) + 1
	if n < 2 {
		return nil, errors.New("runtime: a green set needs at least one size")
	}
	cs := make([]C.uint, len(sizes))
	for i, s := range sizes {
		if s < 1 || s >= d.info.SMs {
			return nil, fmt.Errorf("runtime: green partition of %d SMs on a device of %d", s, d.info.SMs)
		}
		cs[i] = C.uint(s)
	}
	// C memory: the driver writes handles into these arrays.
	ptrBytes := C.size_t(unsafe.Sizeof(uintptr(0)))
	gs := (*C.CUgreenCtx)(C.calloc(C.size_t(n), ptrBytes))
	tmp := (*C.CUgreenCtx)(C.calloc(C.size_t(n), ptrBytes))
	ctxs := (*C.CUcontext)(C.calloc(C.size_t(n), ptrBytes))
	streams := (*C.CUstream)(C.calloc(C.size_t(n), ptrBytes))
	got := (*C.uint)(C.calloc(C.size_t(n), 4))
	csz := (*C.uint)(C.calloc(C.size_t(max(len(cs), 1)), 4))
	defer func() {
		for _, p := range []unsafe.Pointer{unsafe.Pointer(gs), unsafe.Pointer(tmp), unsafe.Pointer(ctxs), unsafe.Pointer(streams), unsafe.Pointer(got), unsafe.Pointer(csz)} {
			C.free(p)
		}
	}()
	copy(unsafe.Slice(csz, len(cs)), cs)
	var step C.int
	r := C.slate_green_create(d.ctx, d.dev, C.int(n), csz, gs, tmp, ctxs, streams, got, &step)
	s := &GreenSet{dev: d}
	s.gs = append(s.gs, unsafe.Slice(gs, n)...)
	s.tmp = append(s.tmp, unsafe.Slice(tmp, n)...)
	s.ctxs = append(s.ctxs, unsafe.Slice(ctxs, n)...)
	s.streams = append(s.streams, unsafe.Slice(streams, n)...)
	for _, g := range unsafe.Slice(got, n) {
		s.got = append(s.got, int(g))
	}
	if err := d.check("green context setup", r); err != nil {
		s.Close()
		return nil, fmt.Errorf("runtime: partitioning %d SMs as %v + rest (step %d): %w", d.info.SMs, sizes, int(step), err)
	}
	return s, nil
}

// Parts returns the SMs each green context got.
func (s *GreenSet) Parts() []int { return append([]int(nil), s.got...) }

// Close destroys the streams and green contexts. Nothing may run in them.
func (s *GreenSet) Close() error {
	var errs []error
	for i, st := range s.streams {
		if st != nil {
			errs = append(errs, cuErr("cuStreamDestroy", C.slate_cuStreamDestroy(s.ctxs[i], st)))
		}
	}
	for _, g := range append(append([]C.CUgreenCtx(nil), s.gs...), s.tmp...) {
		if g != nil {
			errs = append(errs, cuErr("cuGreenCtxDestroy", C.slate_green_destroy(g)))
		}
	}
	s.gs, s.tmp, s.streams = nil, nil, nil
	return errors.Join(errs...)
}

// Library is compiled code loaded independently of any context, so that
// its kernels launch in green contexts.
type Library struct {
	dev     *Device
	lib     C.CUlibrary
	lowered map[string]string
}

// LoadLibrary loads a compiled image as a context-independent library.
func (d *Device) LoadLibrary(c *Compiled) (*Library, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	if !GreenSupported() {
		return nil, ErrNoGreen
	}
	if c == nil || len(c.CUBIN) == 0 {
		return nil, errors.New("runtime: LoadLibrary: empty image")
	}
	img := C.CBytes(c.CUBIN)
	defer C.free(img)
	l := &Library{dev: d, lowered: c.Lowered}
	if err := d.check("cuLibraryLoadData", C.slate_cuLibraryLoadData(d.ctx, &l.lib, img)); err != nil {
		return nil, fmt.Errorf("runtime: loading library: %w", err)
	}
	return l, nil
}

// Unload releases the library. Its kernels must not be running.
func (l *Library) Unload() error {
	if l.lib == nil {
		return nil
	}
	err := cuErr("cuLibraryUnload", C.slate_cuLibraryUnload(l.dev.ctx, l.lib))
	l.lib = nil
	return err
}

// NativeKernel is a kernel of a Library launched as written (its own
// grid, no persistent worker), with its parameter layout.
type NativeKernel struct {
	lib    *Library
	name   string
	k      C.CUkernel
	layout ParamLayout
	frame  frame
}

// Kernel looks a kernel up by its name expression.
func (l *Library) Kernel(name string, layout ParamLayout) (*NativeKernel, error) {
	sym := name
	if s, ok := l.lowered[name]; ok {
		sym = s
	}
	f, err := nativeFrame(layout)
	if err != nil {
		return nil, err
	}
	k := &NativeKernel{lib: l, name: name, layout: layout, frame: f}
	cs := C.CString(sym)
	defer C.free(unsafe.Pointer(cs))
	if err := l.dev.check("cuLibraryGetKernel", C.slate_cuLibraryGetKernel(l.dev.ctx, &k.k, l.lib, cs)); err != nil {
		return nil, fmt.Errorf("runtime: kernel %q (symbol %q): %w", name, sym, err)
	}
	return k, nil
}

// NativeLaunch is a native kernel running, in a green context
// (GreenSet.Launch) or the primary one (Device.LaunchNative).
type NativeLaunch struct {
	done chan struct{}
	dev  *Device
	mu   sync.Mutex
	// endEv is the event behind the kernel, for launches that follow it
	// (WithAfter); nil once the launch ended and the event is destroyed.
	endEv      C.CUevent
	err        error
	gpu        time.Duration
	start, end time.Time // from GPU stamps (Device.EnableClock), else zero
}

// Launch runs k over grid in green context part, asynchronously, timed
// with events in that context.
func (s *GreenSet) Launch(part int, k *NativeKernel, grid, block Dim3, shared uint32, args []any) (*NativeLaunch, error) {
	if part < 0 || part >= len(s.ctxs) {
		return nil, fmt.Errorf("runtime: no green context %d of %d", part, len(s.ctxs))
	}
	return s.dev.launchNative(s.ctxs[part], s.streams[part], false, k, grid, block, shared, args)
}

// LaunchNative runs k over grid in the primary context on a stream of its
// own (destroyed when it ends), as a program's kernel runs: the baseline
// the persistent workers are compared with. Of the options only WithAfter
// applies (a native kernel has no tasks, and its name is the kernel's).
func (d *Device) LaunchNative(k *NativeKernel, grid, block Dim3, shared uint32, args []any, opts ...LaunchOption) (*NativeLaunch, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	var o launchOpts
	for _, f := range opts {
		f(&o)
	}
	if err := checkAfter(d, o.after); err != nil {
		return nil, fmt.Errorf("runtime: native launch of %s: %w", k.name, err)
	}
	st, err := d.newStream(d.prioLeast)
	if err != nil {
		return nil, err
	}
	if err := joinAfter(o.after, st); err != nil {
		C.slate_cuStreamDestroy(d.ctx, st)
		return nil, err
	}
	l, err := d.launchNative(d.ctx, st, true, k, grid, block, shared, args)
	if err != nil {
		C.slate_cuStreamDestroy(d.ctx, st)
	}
	return l, err
}

func (d *Device) launchNative(ctx C.CUcontext, st C.CUstream, ownStream bool, k *NativeKernel, grid, block Dim3, shared uint32, args []any) (*NativeLaunch, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	buf, err := k.frame.marshalNative(k.layout, args)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.name, err)
	}
	var start, end C.CUevent
	if err := d.check("cuEventCreate", C.slate_cuEventCreate(ctx, &start, eventDefault)); err != nil {
		return nil, err
	}
	if err := d.check("cuEventCreate", C.slate_cuEventCreate(ctx, &end, eventDefault)); err != nil {
		C.slate_cuEventDestroy(ctx, start)
		return nil, err
	}
	offs := make([]C.ulonglong, len(k.layout.Params))
	for i, sl := range k.frame.slots {
		offs[i] = C.ulonglong(sl.off)
	}
	cbuf := C.CBytes(append(buf, 0))
	var coffs unsafe.Pointer
	if len(offs) > 0 {
		coffs = C.CBytes(unsafe.Slice((*byte)(unsafe.Pointer(&offs[0])), len(offs)*8))
	}
	d.mu.Lock()
	clk := d.clock
	d.mu.Unlock()
	var stamps DevicePtr
	if clk != nil {
		if stamps, err = clk.pair(d); err != nil {
			clk = nil // timed with events only
		}
	}
	var serr error // a stamp's failure
	r := C.slate_cuEventRecord(ctx, start, st)
	if r == cudaSuccess && clk != nil {
		serr = clk.stamp(d, ctx, st, stamps)
	}
	if r == cudaSuccess && serr == nil {
		r = C.slate_launch(ctx, C.CUfunction(unsafe.Pointer(k.k)), C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z),
			C.uint(block.X), C.uint(block.Y), C.uint(block.Z), C.uint(shared), st,
			(*C.uchar)(cbuf), (*C.ulonglong)(coffs), C.int(len(offs)))
	}
	if r == cudaSuccess && serr == nil && clk != nil {
		serr = clk.stamp(d, ctx, st, stamps+8)
	}
	if r == cudaSuccess && serr == nil {
		r = C.slate_cuEventRecord(ctx, end, st)
	}
	C.free(cbuf)
	if coffs != nil {
		C.free(coffs)
	}
	if err := d.check("native launch of "+k.name, r); err != nil || serr != nil {
		// The stamp pair may still be written by work queued on st: it is
		// not returned to the pool.
		C.slate_cuEventDestroy(ctx, start)
		C.slate_cuEventDestroy(ctx, end)
		return nil, errors.Join(err, serr)
	}
	nl := &NativeLaunch{done: make(chan struct{}), dev: d, endEv: end}
	go func() {
		preciseThread() // its polls decide how soon the launch is seen to end
		defer close(nl.done)
		defer C.slate_cuEventDestroy(ctx, start)
		defer func() {
			nl.mu.Lock()
			nl.endEv = nil
			nl.mu.Unlock()
			C.slate_cuEventDestroy(ctx, end)
		}()
		if ownStream {
			defer C.slate_cuStreamDestroy(ctx, st)
		}
		sleep := 10 * time.Microsecond
		for {
			r := C.slate_cuEventQuery(ctx, end)
			if r == cudaSuccess {
				var ms C.float
				err := d.check("cuEventElapsedTime", C.slate_cuEventElapsedTime(ctx, &ms, start, end))
				var s, e time.Time
				if clk != nil {
					s, e, _ = clk.read(d, stamps) // unreadable: event timing only
					clk.put(stamps)
				}
				nl.mu.Lock()
				nl.err, nl.gpu = err, time.Duration(float64(ms)*float64(time.Millisecond))
				nl.start, nl.end = s, e
				nl.mu.Unlock()
				return
			}
			if r != cudaErrNotReady {
				nl.mu.Lock()
				nl.err = d.check("kernel "+k.name, r)
				nl.mu.Unlock()
				return
			}
			pause(sleep)
			if sleep < pollMax {
				sleep *= 2
			}
		}
	}()
	return nl, nil
}

// Done is closed when the launch has ended.
func (g *NativeLaunch) Done() <-chan struct{} { return g.done }

// joinStream makes stream s wait for the kernel (nothing once it ended).
// Events of another context (a green context's) are waited on all the same.
func (g *NativeLaunch) joinStream(s C.CUstream) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.endEv == nil {
		return nil
	}
	return g.dev.check("cuStreamWaitEvent", C.slate_cuStreamWaitEvent(g.dev.ctx, s, g.endEv))
}

// Wait blocks until the launch has ended or ctx is done.
func (g *NativeLaunch) Wait(ctx context.Context) error {
	select {
	case <-g.done:
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Span is the kernel's start and end from GPU stamps on the host's clock
// (Device.EnableClock; zero times without it), valid once done. Unlike
// GPUTime it is comparable across launches, streams and contexts.
func (g *NativeLaunch) Span() (start, end time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.start, g.end
}

// GPUTime is the kernel's time between its events (valid once done).
func (g *NativeLaunch) GPUTime() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gpu
}
