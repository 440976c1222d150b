package runtime

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"
)

// stampPTX is a one-thread kernel that writes the GPU's %globaltimer (ns,
// one clock for every context and process on the device) to *p. PTX, so
// it needs neither NVRTC nor a CUBIN per architecture: the driver JITs it.
const stampPTX = `.version 6.0
.target sm_50
.address_size 64
.visible .entry slate_stamp(.param .u64 slate_stamp_p)
{
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [slate_stamp_p];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u64 %rd3, %globaltimer;
	st.global.u64 [%rd2], %rd3;
	ret;
}
`

// gpuClock times jobs and native launches on the GPU itself: a stamp
// kernel before and after each one on its own stream. Event timestamps are
// taken when the GPU's front end reaches them in a hardware queue that
// streams share, so a kernel that waited behind another stream's work was
// timed from when it could start, and concurrent runs looked faster than
// the hardware allows; a stamp kernel runs only when its stream's work
// before it has run, and the clock is common to every stream, context and
// process.
type gpuClock struct {
	lib *Library
	fn  C.CUfunction
	// offset is GPU ns minus host Unix ns (calibrated at EnableClock).
	offset int64

	mu    sync.Mutex
	slabs []DevicePtr
	free  []DevicePtr // 16-byte pairs: start, end
}

const stampSlabPairs = 1024

// EnableClock loads the stamp kernel and calibrates the GPU clock against
// the host's, so that JobStats.Start/End and NativeLaunch.Span come from
// GPU stamps from then on (jobs launched before keep event timing only).
// It needs context-independent libraries (CUDA 12.4+, GreenSupported).
func (d *Device) EnableClock() error {
	if err := d.usable(); err != nil {
		return err
	}
	d.mu.Lock()
	enabled := d.clock != nil
	d.mu.Unlock()
	if enabled {
		return nil
	}
	if !GreenSupported() {
		return errors.New("runtime: the GPU clock needs context-independent libraries (a CUDA 12.4+ driver)")
	}
	lib, err := d.LoadLibrary(&Compiled{CUBIN: append([]byte(stampPTX), 0)})
	if err != nil {
		return fmt.Errorf("runtime: loading the stamp kernel: %w", err)
	}
	k, err := lib.Kernel("slate_stamp", ParamLayout{})
	if err != nil {
		lib.Unload()
		return err
	}
	c := &gpuClock{lib: lib, fn: C.CUfunction(unsafe.Pointer(k.k))}
	if err := c.calibrate(d); err != nil {
		c.close(d)
		return fmt.Errorf("runtime: calibrating the GPU clock: %w", err)
	}
	d.mu.Lock()
	if d.clock == nil {
		d.clock = c
		c = nil
	}
	d.mu.Unlock()
	if c != nil {
		c.close(d)
	}
	return nil
}

// pair returns a device slot pair (start at p, end at p+8).
func (c *gpuClock) pair(d *Device) (DevicePtr, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.free) == 0 {
		var s C.CUdeviceptr
		if err := d.check("cuMemAlloc_v2", C.slate_cuMemAlloc(d.ctx, &s, C.size_t(stampSlabPairs*16))); err != nil {
			return 0, err
		}
		c.slabs = append(c.slabs, DevicePtr(s))
		for i := stampSlabPairs - 1; i >= 0; i-- {
			c.free = append(c.free, DevicePtr(s)+DevicePtr(16*i))
		}
	}
	p := c.free[len(c.free)-1]
	c.free = c.free[:len(c.free)-1]
	return p, nil
}

func (c *gpuClock) put(p DevicePtr) {
	if p == 0 {
		return
	}
	c.mu.Lock()
	c.free = append(c.free, p)
	c.mu.Unlock()
}

// stamp queues the stamp kernel writing to slot on stream s of context ctx.
func (c *gpuClock) stamp(d *Device, ctx C.CUcontext, s C.CUstream, slot DevicePtr) error {
	var arg [8]byte
	binary.LittleEndian.PutUint64(arg[:], uint64(slot))
	off := [1]C.ulonglong{0}
	return d.check("cuLaunchKernel (stamp)", C.slate_launch(ctx, c.fn, 1, 1, 1, 1, 1, 1, 0, s,
		(*C.uchar)(unsafe.Pointer(&arg[0])), &off[0], 1))
}

// read returns the pair at p, after the work that wrote it has completed.
func (c *gpuClock) read(d *Device, p DevicePtr) (start, end time.Time, err error) {
	var b [16]byte
	if err := d.check("cuMemcpyDtoH (stamps)", C.slate_cuMemcpyDtoH(d.ctx, unsafe.Pointer(&b[0]), C.CUdeviceptr(p), 16)); err != nil {
		return time.Time{}, time.Time{}, err
	}
	g0, g1 := binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
	if g0 == 0 || g1 < g0 {
		return time.Time{}, time.Time{}, fmt.Errorf("runtime: stamps %d, %d out of order", g0, g1)
	}
	return c.host(g0), c.host(g1), nil
}

// readOne returns the stamp at p, false if it is zero (not written).
func (c *gpuClock) readOne(d *Device, p DevicePtr) (time.Time, bool) {
	var b [8]byte
	if d.check("cuMemcpyDtoH (stamp)", C.slate_cuMemcpyDtoH(d.ctx, unsafe.Pointer(&b[0]), C.CUdeviceptr(p), 8)) != nil {
		return time.Time{}, false
	}
	g := binary.LittleEndian.Uint64(b[:])
	if g == 0 {
		return time.Time{}, false
	}
	return c.host(g), true
}

func (c *gpuClock) host(g uint64) time.Time { return time.Unix(0, int64(g)-c.offset) }

// calibrate sets offset from the round trip that bracketed a stamp most
// tightly (of 16): the stamp is taken as halfway through it, so the host
// times it maps to are off by at most half that round trip (a few us),
// the same for every stamp of the process.
func (c *gpuClock) calibrate(d *Device) error {
	s, err := d.getStream(d.prioGreatest)
	if err != nil {
		return err
	}
	defer d.putStream(d.prioGreatest, s)
	p, err := c.pair(d)
	if err != nil {
		return err
	}
	defer c.put(p)
	best := time.Duration(-1)
	for range 16 {
		h0 := time.Now()
		if err := c.stamp(d, d.ctx, s, p); err != nil {
			return err
		}
		for {
			r := C.slate_cuStreamQuery(d.ctx, s)
			if r == cudaSuccess {
				break
			}
			if r != cudaErrNotReady {
				return d.check("cuStreamQuery", r)
			}
		}
		h1 := time.Now()
		var b [8]byte
		if err := d.check("cuMemcpyDtoH (stamp)", C.slate_cuMemcpyDtoH(d.ctx, unsafe.Pointer(&b[0]), C.CUdeviceptr(p), 8)); err != nil {
			return err
		}
		if rtt := h1.Sub(h0); best < 0 || rtt < best {
			best = rtt
			mid := h0.UnixNano() + int64(rtt/2)
			c.offset = int64(binary.LittleEndian.Uint64(b[:])) - mid
		}
	}
	return nil
}

func (c *gpuClock) close(d *Device) {
	for _, s := range c.slabs {
		C.slate_cuMemFree(d.ctx, C.CUdeviceptr(s))
	}
	c.slabs, c.free = nil, nil
	c.lib.Unload()
}
