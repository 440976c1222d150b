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
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Device attribute numbers (cuda.h, CUdevice_attribute).
const (
	attrMaxThreadsPerBlock     = 1
	attrClockRate              = 13
	attrMultiprocessorCount    = 16
	attrMemoryClockRate        = 36
	attrGlobalMemoryBusWidth   = 37
	attrL2CacheSize            = 38
	attrMaxThreadsPerSM        = 39
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76
	attrMaxSharedPerBlockOptin = 97
	attrMaxSharedPerSM         = 81
	attrMaxRegistersPerSM      = 82
	attrMaxBlocksPerSM         = 106
)

// Stream and event flags (cuda.h).
const (
	streamNonBlocking = 0x1 // no implicit sync with the legacy NULL stream
	eventDefault      = 0x0 // timing enabled: resize latencies are measured with events
)

// DeviceInfo describes a GPU.

// Arch is the real architecture name NVRTC needs, e.g. "sm_90".

// PeakBandwidth is the theoretical DRAM bandwidth in bytes/s: two
// transfers per memory clock (DDR/HBM) times the bus width. Zero when the
// driver reports no memory clock.

// Device is an open GPU: its primary context and the jobs launched on it.
// All methods are safe for concurrent use.
type Device struct {
	info DeviceInfo
	dev  C.CUdevice
	ctx  C.CUcontext
	// Stream priorities: numerically lower is higher priority.
	prioLeast, prioGreatest int

	// poisoned holds the first sticky (context-destroying) error; after it
	// every operation fails fast with a message saying why.
	poisoned atomic.Pointer[error]

	// life excludes Close from Launch: a launch in progress registers its
	// job before Close can collect the jobs to cancel.
	life   sync.RWMutex
	mu     sync.Mutex
	closed bool
	jobs   map[*Job]struct{}
	ctlMem *ctlPool
	// streams holds idle streams by priority for reuse: creating two
	// streams per job cost each launch ~10-20 us of host time, which lands
	// between a finished job and the next one a scheduler starts.
	streams map[int][]C.CUstream
	// clock stamps jobs and native launches on the GPU (EnableClock);
	// nil until then.
	clock *gpuClock

	pinned *pinnedPool
	// consts is page-locked host memory holding the values the runtime
	// writes into control blocks: constZero (CtlSize zero bytes) and constOne
	// (uint32 1). Control-block writes are host-to-device copies from
	// here, which the copy engine performs: a memset is a kernel, and a
	// kernel can wait forever for an SM slot while persistent workers fill
	// every slot and wait for the very flag it would write.
	consts unsafe.Pointer

	// flush is FlushL2's scratch buffer (twice the L2), flushWords its
	// length in 32-bit words, flushes how many flushes ran (the memset's
	// value, so that no write is elided as unchanged).
	flush      DevicePtr
	flushWords int
	flushes    uint32

	// order is the SM order (smorder.go): element p is the SM at place p;
	// orderSource says how it was made.
	order       []int
	orderSource string

	// growMu guards grows (deferred grows armed and not yet adopted or
	// abandoned: grow.go) and zombies (abandoned ones still queued).
	growMu  sync.Mutex
	grows   []*deferredGrow
	zombies []zombie

	// firstFault names the job whose monitor first saw the context die;
	// the fault itself may come from any kernel running at that time.
	firstFault string
}

var initOnce struct {
	sync.Mutex
	done bool
}

// Open loads the CUDA driver, initialises it and opens device ordinal,
// retaining its primary context (shared with any CUDA runtime code in the
// process, which is what co-running with other libraries needs).
func Open(ordinal int) (*Device, error) {
	if _, err := loadCUDA(); err != nil {
		return nil, err
	}
	initOnce.Lock()
	if !initOnce.done {
		if err := cuErr("cuInit", C.slate_cuInit()); err != nil {
			initOnce.Unlock()
			return nil, fmt.Errorf("runtime: initialising the CUDA driver: %w", err)
		}
		initOnce.done = true
	}
	initOnce.Unlock()

	var n C.int
	if err := cuErr("cuDeviceGetCount", C.slate_cuDeviceGetCount(&n)); err != nil {
		return nil, fmt.Errorf("runtime: counting devices: %w", err)
	}
	if ordinal < 0 || ordinal >= int(n) {
		return nil, fmt.Errorf("runtime: no CUDA device %d (%d present)", ordinal, int(n))
	}
	d := &Device{jobs: make(map[*Job]struct{})}
	if err := cuErr("cuDeviceGet", C.slate_cuDeviceGet(&d.dev, C.int(ordinal))); err != nil {
		return nil, fmt.Errorf("runtime: device %d: %w", ordinal, err)
	}
	if err := d.readInfo(ordinal); err != nil {
		return nil, err
	}
	if err := cuErr("cuDevicePrimaryCtxRetain", C.slate_cuDevicePrimaryCtxRetain(&d.ctx, d.dev)); err != nil {
		return nil, fmt.Errorf("runtime: device %d: retaining primary context: %w", ordinal, err)
	}
	var least, greatest C.int
	if err := cuErr("cuCtxGetStreamPriorityRange", C.slate_cuCtxGetStreamPriorityRange(d.ctx, &least, &greatest)); err != nil {
		d.release()
		return nil, fmt.Errorf("runtime: device %d: %w", ordinal, err)
	}
	d.prioLeast, d.prioGreatest = int(least), int(greatest)
	if err := d.check("cuMemAllocHost_v2", C.slate_cuMemAllocHost(d.ctx, &d.consts, constBytes)); err != nil {
		d.release()
		return nil, fmt.Errorf("runtime: device %d: allocating pinned memory: %w", ordinal, err)
	}
	c := unsafe.Slice((*byte)(d.consts), constBytes)
	clear(c)
	c[constOne] = 1 // little-endian uint32 1
	d.ctlMem = &ctlPool{dev: d}
	d.pinned = &pinnedPool{dev: d}
	if err := d.initSMOrder(); err != nil {
		C.slate_cuMemFreeHost(d.ctx, d.consts)
		d.release()
		return nil, err
	}
	return d, nil
}

func (d *Device) readInfo(ordinal int) error {
	var name [256]C.char
	if err := cuErr("cuDeviceGetName", C.slate_cuDeviceGetName(&name[0], C.int(len(name)), d.dev)); err != nil {
		return fmt.Errorf("runtime: device %d: %w", ordinal, err)
	}
	var mem C.size_t
	if err := cuErr("cuDeviceTotalMem_v2", C.slate_cuDeviceTotalMem(&mem, d.dev)); err != nil {
		return fmt.Errorf("runtime: device %d: %w", ordinal, err)
	}
	var ver C.int
	if err := cuErr("cuDriverGetVersion", C.slate_cuDriverGetVersion(&ver)); err != nil {
		return fmt.Errorf("runtime: %w", err)
	}
	attr := func(a int, optional bool) (int, error) {
		var v C.int
		if err := cuErr("cuDeviceGetAttribute", C.slate_cuDeviceGetAttribute(&v, C.int(a), d.dev)); err != nil {
			if optional {
				return 0, nil
			}
			return 0, fmt.Errorf("runtime: device %d: attribute %d: %w", ordinal, a, err)
		}
		return int(v), nil
	}
	i := DeviceInfo{Ordinal: ordinal, Name: C.GoString(&name[0]), TotalMem: uint64(mem), DriverVersion: int(ver)}
	for _, f := range []struct {
		dst      *int
		attr     int
		optional bool
	}{
		{&i.SMs, attrMultiprocessorCount, false},
		{&i.Major, attrComputeCapabilityMajor, false},
		{&i.Minor, attrComputeCapabilityMinor, false},
		{&i.MaxThreadsPerBlock, attrMaxThreadsPerBlock, false},
		{&i.MaxThreadsPerSM, attrMaxThreadsPerSM, false},
		{&i.MaxSharedOptin, attrMaxSharedPerBlockOptin, false},
		// Per-SM limits, for the planner's model of kernels sharing SMs.
		{&i.MaxSharedPerSM, attrMaxSharedPerSM, true},
		{&i.MaxRegistersPerSM, attrMaxRegistersPerSM, true},
		{&i.MaxBlocksPerSM, attrMaxBlocksPerSM, true},
		// Clock attributes are informational; newer drivers may drop them.
		{&i.MemClockKHz, attrMemoryClockRate, true},
		{&i.BusWidthBits, attrGlobalMemoryBusWidth, true},
		{&i.ClockKHz, attrClockRate, true},
		{&i.L2Bytes, attrL2CacheSize, true},
	} {
		v, err := attr(f.attr, f.optional)
		if err != nil {
			return err
		}
		*f.dst = v
	}
	d.info = i
	return nil
}

// Layout of Device.consts.
const (
	constZero  = 0       // CtlSize bytes: a fresh control block, zero but for sm_place (the SM order)
	constOne   = CtlSize // uint32 1
	constBytes = CtlSize + 32
)

// putCtl queues a copy of n bytes of consts at off into the control block
// at ctl+dst on stream s (see Device.consts for why not a memset).
func (d *Device) putCtl(ctl DevicePtr, dst int, off, n int, s C.CUstream) error {
	return d.check("cuMemcpyHtoDAsync_v2", C.slate_cuMemcpyHtoDAsync(d.ctx, C.CUdeviceptr(ctl+DevicePtr(dst)),
		unsafe.Add(d.consts, off), C.size_t(n), s))
}

// Info describes the device.
func (d *Device) Info() DeviceInfo { return d.info }

// FullRange is the range of all SMs.
func (d *Device) FullRange() SMRange { return SMRange{0, d.info.SMs - 1} }

// ErrClosed is returned by operations on a closed Device.

// check turns a driver result into an error, records sticky errors and
// explains them: after a kernel fault the context is gone for good.
func (d *Device) check(op string, r C.CUresult) error {
	err := cuErr(op, r)
	if err == nil {
		return nil
	}
	var ce *CUDAError
	if errors.As(err, &ce) && ce.Sticky() {
		perr := fmt.Errorf("%w (a kernel fault destroyed the CUDA context of device %d; "+
			"every later CUDA call in this process fails — restart the process)", err, d.info.Ordinal)
		d.poisoned.CompareAndSwap(nil, &perr)
		return perr
	}
	return err
}

// usable fails once the context is poisoned or the device closed.
func (d *Device) usable() error {
	if p := d.poisoned.Load(); p != nil {
		return fmt.Errorf("runtime: device unusable after an earlier error: %w", *p)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return nil
}

// Err returns the sticky error that made the device unusable, if any.
func (d *Device) Err() error {
	if p := d.poisoned.Load(); p != nil {
		return *p
	}
	return nil
}

// Close cancels jobs still running, waits (up to a few seconds) for
// them to drain, and releases the device's resources. Memory from Alloc
// and modules must be freed by their owners first.
func (d *Device) Close() error {
	d.life.Lock()
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		d.life.Unlock()
		return nil
	}
	d.closed = true
	jobs := make([]*Job, 0, len(d.jobs))
	for j := range d.jobs {
		jobs = append(jobs, j)
	}
	d.mu.Unlock()
	d.life.Unlock()

	var errs []error
	for _, j := range jobs {
		j.Cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, j := range jobs {
		select {
		case <-j.released:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("runtime: job %q did not drain before Close", j.name))
		}
	}
	if len(errs) > 0 {
		// Workers may still be running: keep their memory and the context
		// (releasing the last reference would destroy it under them).
		return errors.Join(errs...)
	}
	// Abandoned deferred grows run once their triggers (cancelled above)
	// have ended; their memory must outlive them.
	d.reapZombies(true)
	d.mu.Lock()
	for _, ss := range d.streams {
		for _, s := range ss {
			C.slate_cuStreamDestroy(d.ctx, s)
		}
	}
	d.streams = nil
	clk := d.clock
	d.clock = nil
	d.mu.Unlock()
	if clk != nil {
		clk.close(d)
	}
	if d.flush != 0 {
		C.slate_cuMemFree(d.ctx, C.CUdeviceptr(d.flush))
	}
	d.ctlMem.free()
	d.pinned.free()
	C.slate_cuMemFreeHost(d.ctx, d.consts)
	d.release()
	return nil
}

func (d *Device) release() {
	C.slate_cuDevicePrimaryCtxRelease(d.dev)
}

// Synchronize waits for all work in the context (blocking; prefer
// Job.Wait, which honours a context.Context).
func (d *Device) Synchronize() error {
	if err := d.usable(); err != nil {
		return err
	}
	return d.check("cuCtxSynchronize", C.slate_cuCtxSynchronize(d.ctx))
}

// getStream returns an idle stream of priority prio, reused or new.
func (d *Device) getStream(prio int) (C.CUstream, error) {
	d.mu.Lock()
	if free := d.streams[prio]; len(free) > 0 {
		s := free[len(free)-1]
		d.streams[prio] = free[:len(free)-1]
		d.mu.Unlock()
		return s, nil
	}
	d.mu.Unlock()
	return d.newStream(prio)
}

// putStream keeps an idle stream (nothing queued on it) for reuse.
func (d *Device) putStream(prio int, s C.CUstream) {
	if s == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.Err() != nil || len(d.streams[prio]) >= maxPooledStreams {
		C.slate_cuStreamDestroy(d.ctx, s)
		return
	}
	if d.streams == nil {
		d.streams = map[int][]C.CUstream{}
	}
	d.streams[prio] = append(d.streams[prio], s)
}

// maxPooledStreams bounds the idle streams kept per priority.
const maxPooledStreams = 64

func (d *Device) newStream(prio int) (C.CUstream, error) {
	var s C.CUstream
	if err := d.check("cuStreamCreateWithPriority", C.slate_cuStreamCreateWithPriority(d.ctx, &s, streamNonBlocking, C.int(prio))); err != nil {
		return nil, err
	}
	return s, nil
}

func (d *Device) newEvent() (C.CUevent, error) {
	var e C.CUevent
	if err := d.check("cuEventCreate", C.slate_cuEventCreate(d.ctx, &e, eventDefault)); err != nil {
		return nil, err
	}
	return e, nil
}

func (d *Device) destroyEvent(e C.CUevent) {
	if e != nil {
		C.slate_cuEventDestroy(d.ctx, e)
	}
}

// waitEvent polls e until it completes, fails or ctx ends. It never
// blocks in the driver, so a hung kernel cannot hang the caller.
func (d *Device) waitEvent(ctx context.Context, e C.CUevent, op string) error {
	return d.waitEventSpin(ctx, e, op, 0)
}

// waitEventSpin is waitEvent that first polls without sleeping for up to
// spin: for waits known to be short (a 32-byte copy), where one sleep of
// the Go scheduler (tens of us, however short the request) would be most
// of the wait.
func (d *Device) waitEventSpin(ctx context.Context, e C.CUevent, op string, spin time.Duration) error {
	if spin > 0 {
		until := time.Now().Add(spin)
		for time.Now().Before(until) {
			switch r := C.slate_cuEventQuery(d.ctx, e); r {
			case cudaSuccess:
				return nil
			case cudaErrNotReady:
				goruntime.Gosched()
			default:
				return d.check(op, r)
			}
		}
	}
	sleep := 10 * time.Microsecond
	for {
		r := C.slate_cuEventQuery(d.ctx, e)
		if r == cudaSuccess {
			return nil
		}
		if r != cudaErrNotReady {
			return d.check(op, r)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("runtime: waiting for %s: %w", op, err)
		}
		pause(sleep)
		if sleep < pollMax {
			sleep *= 2
		}
	}
}

// pollMax bounds the event polling interval, and so how late the host
// notices a finished job: the scheduler's reaction time to a completion.
// The polls pause (pause_linux.go): with time.Sleep every poll of an idle
// process took about a millisecond whatever the interval asked. A poll is
// one cgo call (~0.5 us), so a job being watched costs a few percent of a
// core.
const pollMax = 50 * time.Microsecond

// ctlReadSpin is how long a control-block read polls before it sleeps:
// the copy lands within a few microseconds unless the copy engine is busy.
const ctlReadSpin = 100 * time.Microsecond

func (d *Device) elapsed(a, b C.CUevent) (time.Duration, error) {
	var ms C.float
	if err := d.check("cuEventElapsedTime", C.slate_cuEventElapsedTime(d.ctx, &ms, a, b)); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// Alloc allocates device memory.
func (d *Device) Alloc(bytes int) (DevicePtr, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	if bytes <= 0 {
		return 0, fmt.Errorf("runtime: Alloc(%d): size must be positive", bytes)
	}
	var p C.CUdeviceptr
	if err := d.check("cuMemAlloc_v2", C.slate_cuMemAlloc(d.ctx, &p, C.size_t(bytes))); err != nil {
		return 0, fmt.Errorf("runtime: allocating %d bytes: %w", bytes, err)
	}
	return DevicePtr(p), nil
}

// Free releases memory from Alloc. Freeing 0 is a no-op.
func (d *Device) Free(p DevicePtr) error {
	if p == 0 {
		return nil
	}
	return d.check("cuMemFree_v2", C.slate_cuMemFree(d.ctx, C.CUdeviceptr(p)))
}

// Memset32 sets n 32-bit words at p to v (synchronous). A memset is a
// kernel: while persistent workers fill every SM it waits for them.
func (d *Device) Memset32(p DevicePtr, v uint32, n int) error {
	if err := d.usable(); err != nil {
		return err
	}
	return d.check("cuMemsetD32_v2", C.slate_cuMemsetD32(d.ctx, C.CUdeviceptr(p), C.uint(v), C.size_t(n)))
}

// FlushL2 evicts the L2 cache before a timed run, as Nsight Compute's
// --cache-control all does between replays: it writes a scratch buffer of
// twice the L2's size (synchronously; allocated at the first call and kept
// until Close). Profiles and benchmarks flush before each timed run so that
// a kernel's time does not depend on what ran before it: a pointer chase
// over a table the size of the L2 ran 2.6x faster when repeated alone
// (profile) than after a triad (benchmark).
func (d *Device) FlushL2() error {
	if err := d.usable(); err != nil {
		return err
	}
	// The memset runs without d.mu: it is a kernel, and may wait for SM
	// slots that running jobs' monitors need d.mu to give back.
	d.mu.Lock()
	if d.flush == 0 {
		words := max(2*d.info.L2Bytes, 8<<20) / 4
		var p C.CUdeviceptr
		if err := d.check("cuMemAlloc_v2", C.slate_cuMemAlloc(d.ctx, &p, C.size_t(words*4))); err != nil {
			d.mu.Unlock()
			return fmt.Errorf("runtime: allocating the L2 flush buffer: %w", err)
		}
		d.flush, d.flushWords = DevicePtr(p), words
	}
	d.flushes++
	p, n, v := d.flush, d.flushWords, d.flushes
	d.mu.Unlock()
	return d.check("cuMemsetD32_v2", C.slate_cuMemsetD32(d.ctx, C.CUdeviceptr(p), C.uint(v), C.size_t(n)))
}

// Plain is the set of element types that can be copied to and from the
// device as raw bytes (fixed size, no Go pointers).

// CopyToDevice copies src to device address dst (synchronous).
func CopyToDevice[T Plain](d *Device, dst DevicePtr, src []T) error {
	if err := d.usable(); err != nil {
		return err
	}
	b := sliceBytes(src)
	if len(b) == 0 {
		return nil
	}
	return d.check("cuMemcpyHtoD_v2", C.slate_cuMemcpyHtoD(d.ctx, C.CUdeviceptr(dst), unsafe.Pointer(&b[0]), C.size_t(len(b))))
}

// CopyFromDevice copies len(dst) elements from device address src
// (synchronous).
func CopyFromDevice[T Plain](d *Device, dst []T, src DevicePtr) error {
	if err := d.usable(); err != nil {
		return err
	}
	b := sliceBytes(dst)
	if len(b) == 0 {
		return nil
	}
	return d.check("cuMemcpyDtoH_v2", C.slate_cuMemcpyDtoH(d.ctx, unsafe.Pointer(&b[0]), C.CUdeviceptr(src), C.size_t(len(b))))
}

// ctlPool hands out 32-byte control blocks from device slabs, so that a
// job launch does not pay for a cuMemAlloc (which can serialise with work
// in flight).
type ctlPool struct {
	dev   *Device
	mu    sync.Mutex
	slabs []DevicePtr
	free_ []DevicePtr
}

const ctlSlabSlots = 1024

func (p *ctlPool) get() (DevicePtr, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free_) == 0 {
		var s C.CUdeviceptr
		if err := p.dev.check("cuMemAlloc_v2", C.slate_cuMemAlloc(p.dev.ctx, &s, C.size_t(ctlSlabSlots*CtlSize))); err != nil {
			return 0, fmt.Errorf("runtime: allocating control blocks: %w", err)
		}
		p.slabs = append(p.slabs, DevicePtr(s))
		for i := ctlSlabSlots - 1; i >= 0; i-- {
			p.free_ = append(p.free_, DevicePtr(s)+DevicePtr(i*CtlSize))
		}
	}
	c := p.free_[len(p.free_)-1]
	p.free_ = p.free_[:len(p.free_)-1]
	return c, nil
}

func (p *ctlPool) put(c DevicePtr) {
	p.mu.Lock()
	p.free_ = append(p.free_, c)
	p.mu.Unlock()
}

func (p *ctlPool) free() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slabs {
		C.slate_cuMemFree(p.dev.ctx, C.CUdeviceptr(s))
	}
	p.slabs, p.free_ = nil, nil
}

// pinnedPool hands out 32-byte slots of page-locked host memory, the
// target of asynchronous control-block reads (an async copy to pageable
// memory would block the calling thread in the driver).
type pinnedPool struct {
	dev   *Device
	mu    sync.Mutex
	bufs  []unsafe.Pointer
	free_ []unsafe.Pointer
}

const pinnedSlots = 128

func (p *pinnedPool) get() (unsafe.Pointer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free_) == 0 {
		var b unsafe.Pointer
		if err := p.dev.check("cuMemAllocHost_v2", C.slate_cuMemAllocHost(p.dev.ctx, &b, C.size_t(pinnedSlots*ctlHeadSize))); err != nil {
			return nil, fmt.Errorf("runtime: allocating pinned memory: %w", err)
		}
		p.bufs = append(p.bufs, b)
		for i := pinnedSlots - 1; i >= 0; i-- {
			p.free_ = append(p.free_, unsafe.Add(b, i*ctlHeadSize))
		}
	}
	s := p.free_[len(p.free_)-1]
	p.free_ = p.free_[:len(p.free_)-1]
	return s, nil
}

func (p *pinnedPool) put(s unsafe.Pointer) {
	p.mu.Lock()
	p.free_ = append(p.free_, s)
	p.mu.Unlock()
}

func (p *pinnedPool) free() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.bufs {
		C.slate_cuMemFreeHost(p.dev.ctx, b)
	}
	p.bufs, p.free_ = nil, nil
}

// readBytes copies n bytes of device memory at src on stream s, after the
// event after (if not nil), through page-locked memory of its own, and
// waits for them with ctx. Not for hot paths: it allocates.
func (d *Device) readBytes(ctx context.Context, src DevicePtr, n int, s C.CUstream, after C.CUevent) ([]byte, error) {
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("runtime: device unusable after an earlier error: %w", err)
	}
	var host unsafe.Pointer
	if err := d.check("cuMemAllocHost_v2", C.slate_cuMemAllocHost(d.ctx, &host, C.size_t(n))); err != nil {
		return nil, err
	}
	ev, err := d.newEvent()
	if err != nil {
		C.slate_cuMemFreeHost(d.ctx, host)
		return nil, err
	}
	defer d.destroyEvent(ev)
	if after != nil {
		err = d.check("cuStreamWaitEvent", C.slate_cuStreamWaitEvent(d.ctx, s, after))
	}
	if err == nil {
		err = d.check("cuMemcpyDtoHAsync_v2", C.slate_cuMemcpyDtoHAsync(d.ctx, host, C.CUdeviceptr(src), C.size_t(n), s))
	}
	if err == nil {
		err = d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, ev, s))
	}
	if err == nil {
		err = d.waitEventSpin(ctx, ev, "device read", ctlReadSpin)
	}
	if err != nil {
		// On cancellation the copy may still land: leak the buffer.
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			C.slate_cuMemFreeHost(d.ctx, host)
		}
		return nil, err
	}
	b := make([]byte, n)
	copy(b, unsafe.Slice((*byte)(host), n))
	C.slate_cuMemFreeHost(d.ctx, host)
	return b, nil
}

// readCtl reads a control block asynchronously on control stream s (a
// job's high-priority stream, which runs beside its kernels) and waits for
// it with ctx.
//
// after, if not nil, is an event the read must follow (the job's initial
// zeroing: a recycled control block still holds its last job's values).
func (d *Device) readCtl(ctx context.Context, ctl DevicePtr, s C.CUstream, after C.CUevent) (Ctl, error) {
	if err := d.Err(); err != nil {
		return Ctl{}, fmt.Errorf("runtime: device unusable after an earlier error: %w", err)
	}
	slot, err := d.pinned.get()
	if err != nil {
		return Ctl{}, err
	}
	ev, err := d.newEvent()
	if err != nil {
		d.pinned.put(slot)
		return Ctl{}, err
	}
	if after != nil {
		err = d.check("cuStreamWaitEvent", C.slate_cuStreamWaitEvent(d.ctx, s, after))
	}
	if err == nil {
		err = d.check("cuMemcpyDtoHAsync_v2", C.slate_cuMemcpyDtoHAsync(d.ctx, slot, C.CUdeviceptr(ctl), ctlHeadSize, s))
	}
	if err == nil {
		err = d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, ev, s))
	}
	if err == nil {
		err = d.waitEventSpin(ctx, ev, "control block read", ctlReadSpin)
	}
	if err != nil {
		// On cancellation the copy may still land in the slot: leak it
		// rather than hand it to another reader.
		d.destroyEvent(ev)
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			d.pinned.put(slot)
		}
		return Ctl{}, err
	}
	d.destroyEvent(ev)
	b := make([]byte, ctlHeadSize)
	copy(b, unsafe.Slice((*byte)(slot), ctlHeadSize))
	d.pinned.put(slot)
	return decodeCtl(b), nil
}
