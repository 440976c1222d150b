package runtime

/*
#include "shim.h"
*/
import "C"

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"
)

// Errors a Job reports.

type jobState int

const (
	jobRunning jobState = iota
	jobSucceeded
	jobFailed
	jobCanceled
)

// ResizeStats describes one resize, timed with CUDA events on the GPU.

// JobStats summarises a job.

// Job is one kernel running as persistent workers (docs/ABI.md). It owns a
// control block, a stream for its launches and a high-priority control
// stream for its retreat flag and progress reads; a monitor goroutine
// notices its end, checks that every logical block ran, and frees its
// resources.
type Job struct {
	dev      *Device
	k        *Kernel
	name     string
	grid     Dim3
	block    Dim3
	shared   uint32
	cfg      Cfg    // Total, grid, Iters, Workers; the SM range is set per launch
	wave     uint32 // occupancy x SM count x waves: the workers of a launch on a partial range
	waves    uint32 // WithWaves, at least 1
	occ      int    // the worker's blocks per SM at shared
	respawns int    // relaunches of a starved job (respawnIfStarved)
	args     []byte
	offs     []C.ulonglong
	ctl      DevicePtr
	stream   C.CUstream
	ctlStr   C.CUstream // high priority: runs beside the workers
	// extra are streams of launches that grew the job onto more SMs
	// beside its running launch (Resize to a superset); the job stream
	// waits for them, so its end event is the end of all of them.
	extra []C.CUstream
	// stamps is the job's GPU clock pair (start, end) from clk; 0 and nil
	// without a clock.
	stamps DevicePtr
	clk    *gpuClock

	resizeMu sync.Mutex // serialises Resize and Cancel
	ctlMu    sync.RWMutex

	mu      sync.Mutex
	rng     SMRange
	gen     uint64 // bumped per relaunch
	doneEv  C.CUevent
	startEv C.CUevent
	// armed follows the job stream's last write of the control block
	// (the initial zeroing, then each resize's clear). The control stream
	// waits for it before setting retreat, so a flag is never overwritten
	// by an earlier clear that had not run yet (possible when a Resize's
	// wait was cut short by its context).
	armed   C.CUevent
	retired []C.CUevent // end events of earlier launches, freed at the end
	// abandoned are deferred grows (GrowAtEnd) whose trigger had not ended
	// when the job did: they keep the control block (addZombies).
	abandoned []*deferredGrow
	// growStamps are the clock pairs of adopted deferred grows (their
	// launches' ends: growEnd).
	growStamps []DevicePtr
	ending     bool // the monitor saw the last launch end
	cancel     bool
	state      jobState
	err        error
	final      Ctl
	stats      JobStats
	done       chan struct{} // closed when state leaves jobRunning
	released   chan struct{} // closed after resources are freed
}

// LaunchOption adjusts a launch.

// WithIters fixes the logical blocks per task instead of AutoIters.

// WithName names the job in errors and stats (default: the kernel name).

// Launch starts kernel k (a worker, docs/ABI.md) over the logical grid
// grid with the given block shape, dynamic shared memory and original
// arguments, bound to SMs r. It allocates and zeroes a control block and
// launches occupancy x SM-count worker blocks (capped at ceil(total /
// iters)) on the job's own stream. Unless WithIters says otherwise, iters
// is AutoIters(total, occupancy x SM count): the count for the whole
// device, since a job may grow to all SMs. The launch is asynchronous: use
// Wait.
func (d *Device) Launch(k *Kernel, grid, block Dim3, shared uint32, args []any, r SMRange, opts ...LaunchOption) (*Job, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	o := launchOpts{name: k.Name()}
	for _, f := range opts {
		f(&o)
	}
	if k.mod.dev != d {
		return nil, fmt.Errorf("runtime: job %q: kernel belongs to another device", o.name)
	}
	if err := checkAfter(d, o.after); err != nil {
		return nil, fmt.Errorf("runtime: job %q: %w", o.name, err)
	}
	total := grid.Count()
	if total == 0 {
		return nil, fmt.Errorf("runtime: job %q: empty grid %v", o.name, grid)
	}
	if total > MaxTotal {
		return nil, fmt.Errorf("runtime: job %q: grid %v has %d blocks; a worker runs at most %d (split the grid)", o.name, grid, total, uint64(MaxTotal))
	}
	threads := block.Count()
	if threads == 0 || threads > uint64(k.attrs.MaxThreadsPerBlock) {
		return nil, fmt.Errorf("runtime: job %q: block %v has %d threads; the kernel allows 1..%d",
			o.name, block, threads, k.attrs.MaxThreadsPerBlock)
	}
	if !r.Valid(d.info.SMs) {
		return nil, fmt.Errorf("runtime: job %q: SM range %v outside the device's [0,%d]", o.name, r, d.info.SMs-1)
	}
	occ, err := k.Occupancy(int(threads), int(shared))
	if err != nil {
		return nil, err
	}
	if occ < 1 {
		return nil, fmt.Errorf("runtime: job %q: kernel %q cannot run with block %v and %d bytes of dynamic shared memory (occupancy 0)",
			o.name, k.Name(), block, shared)
	}
	all := occ * d.info.SMs
	if o.waves < 0 || o.waves > 16 {
		return nil, fmt.Errorf("runtime: job %q: %d waves out of range [1,16]", o.name, o.waves)
	}
	waves := max(o.waves, 1)
	iters := o.iters
	if iters == 0 {
		iters = TaskIters(int64(min(total, 1<<62)), all, k.BlockTime(total, threads, shared))
	}
	if iters < 1 || iters > 1<<20 {
		return nil, fmt.Errorf("runtime: job %q: iters %d out of range", o.name, iters)
	}
	// The worker count of a launch on all SMs; a partial range launches the
	// whole wave (launchLocked), since blocks land wherever the hardware puts
	// them and those outside the range exit at once.
	workers := min(uint64(all), (total+uint64(iters)-1)/uint64(iters))
	buf, err := k.frame.marshal(k.layout, args)
	if err != nil {
		return nil, fmt.Errorf("job %q: %w", o.name, err)
	}

	cfg := jobCfg(grid, uint32(iters), uint32(workers))
	j := &Job{
		dev: d, k: k, name: o.name, grid: grid, block: block, shared: shared, args: buf,
		cfg:  cfg,
		wave: uint32(all * waves), waves: uint32(waves), occ: occ,
		done: make(chan struct{}), released: make(chan struct{}),
	}
	j.offs = make([]C.ulonglong, len(k.frame.slots))
	for i, s := range k.frame.slots {
		j.offs[i] = C.ulonglong(s.off)
	}
	d.life.RLock()
	defer d.life.RUnlock()
	if err := d.usable(); err != nil {
		return nil, err
	}
	if err := j.setup(r, o.after); err != nil {
		j.drainStream()
		j.freeResources()
		return nil, fmt.Errorf("runtime: launching job %q: %w", o.name, err)
	}
	d.mu.Lock()
	d.jobs[j] = struct{}{}
	d.mu.Unlock()
	go j.monitor()
	return j, nil
}

// setup allocates the job's resources and queues its first launch, after
// the launches of after (if not nil) have ended.
func (j *Job) setup(r SMRange, after Predecessor) error {
	d := j.dev
	var err error
	if j.ctl, err = d.ctlMem.get(); err != nil {
		return err
	}
	if j.stream, err = d.getStream(d.prioLeast); err != nil {
		return err
	}
	if j.ctlStr, err = d.getStream(d.prioGreatest); err != nil {
		return err
	}
	if j.startEv, err = d.newEvent(); err != nil {
		return err
	}
	if j.doneEv, err = d.newEvent(); err != nil {
		return err
	}
	if err := joinAfter(after, j.stream); err != nil {
		return err
	}
	if err := d.putCtl(j.ctl, 0, constZero, CtlSize, j.stream); err != nil {
		return err
	}
	if err := d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, j.startEv, j.stream)); err != nil {
		return err
	}
	j.armed = j.startEv
	d.mu.Lock()
	clk := d.clock
	d.mu.Unlock()
	if clk != nil {
		if j.stamps, err = clk.pair(d); err != nil {
			return err
		}
		j.clk = clk
		if err := clk.stamp(d, d.ctx, j.stream, j.stamps); err != nil {
			return err
		}
	}
	if err := j.launchLocked(r); err != nil {
		return err
	}
	if err := j.stampEnd(); err != nil {
		return err
	}
	return d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, j.doneEv, j.stream))
}

// stampEnd queues the end stamp on the job stream, after everything queued
// there so far (each relaunch queues one more; the last one written is the
// job's end).
func (j *Job) stampEnd() error {
	if j.stamps == 0 {
		return nil
	}
	d := j.dev
	return j.clk.stamp(d, d.ctx, j.stream, j.stamps+8)
}

// checkAfter refuses a predecessor of another device than d.
func checkAfter(d *Device, after Predecessor) error {
	var dev *Device
	switch p := after.(type) {
	case *Job:
		if p != nil {
			dev = p.dev
		}
	case *NativeLaunch:
		if p != nil {
			dev = p.dev
		}
	}
	if dev != nil && dev != d {
		return errors.New("WithAfter names a launch of another device")
	}
	return nil
}

// joinAfter makes stream s wait for after's launches queued so far (none
// for nil or a launch that has ended).
func joinAfter(after Predecessor, s C.CUstream) error {
	switch p := after.(type) {
	case *Job:
		if p != nil {
			return p.joinStream(s)
		}
	case *NativeLaunch:
		if p != nil {
			return p.joinStream(s)
		}
	}
	return nil
}

// joinStream makes stream s wait for the launches of j queued so far.
// j.mu keeps j's end event alive while the wait captures it.
func (j *Job) joinStream(s C.CUstream) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.doneEv == nil || j.dev != nil && j.dev.Err() != nil {
		return nil
	}
	d := j.dev
	return d.check("cuStreamWaitEvent", C.slate_cuStreamWaitEvent(d.ctx, s, j.doneEv))
}

// launchLocked queues one launch of the workers on the job stream.
func (j *Job) launchLocked(r SMRange) error {
	if err := j.launchOn(j.stream, r); err != nil {
		return err
	}
	j.rng = r
	return nil
}

// launchOn queues a launch of the workers bound to r on stream s.
func (j *Job) launchOn(s C.CUstream, r SMRange) error {
	d := j.dev
	le := j.args
	binary.LittleEndian.PutUint64(le[0:], uint64(j.ctl))
	c := j.cfg
	c.SMLow, c.SMHigh = uint32(r.Low), uint32(r.High)
	// A partial range launches the whole wave: blocks land where the
	// hardware puts them, those outside the range exit, and a worker too
	// many on its SM for the tasks left stays out (slate_enter_range), so
	// that a small grid spreads one worker per SM. (The runtime used to pad
	// the worker's shared memory to that end, which took the SMs' L1: a
	// 64-block pointer chase ran 2.6x slower on 8 SMs, and the co-runs
	// beside it 1-4% slower; bench/RESULTS.md, twenty-ninth session.)
	if r != d.FullRange() {
		c.Workers = j.wave
	}
	c.put(le[cfgParamOffset : cfgParamOffset+CfgSize])
	err := d.check("cuLaunchKernel", C.slate_launch(d.ctx, j.k.fn, C.uint(c.Workers), 1, 1,
		C.uint(j.block.X), C.uint(j.block.Y), C.uint(j.block.Z), C.uint(j.shared), s,
		(*C.uchar)(unsafe.Pointer(&le[0])), &j.offs[0], C.int(len(j.offs))))
	if err != nil {
		return err
	}
	j.stats.Launches++
	return nil
}

// Name returns the job's name.
func (j *Job) Name() string { return j.name }

// Total returns the number of logical blocks.
func (j *Job) Total() uint64 { return j.cfg.Total }

// Iters returns the logical blocks per task.
func (j *Job) Iters() int { return int(j.cfg.Iters) }

// Workers returns the worker blocks of a launch on all SMs (a launch on a
// partial range launches a full wave of occupancy x SM count).
func (j *Job) Workers() int { return int(j.cfg.Workers) }

// Range returns the SM range of the current launch.
func (j *Job) Range() SMRange {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.rng
}

// Done is closed when the job has ended (successfully or not).
func (j *Job) Done() <-chan struct{} { return j.done }

// Err returns the job's error once it has ended (nil while it runs or
// after success).
func (j *Job) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Stats returns a snapshot of the job's launches and resizes.
func (j *Job) Stats() JobStats {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.stats
	s.Resizes = append([]ResizeStats(nil), s.Resizes...)
	return s
}

// Wait blocks until the job ends or ctx is done. It never blocks inside
// the driver, so a hung kernel cannot hang it: give ctx a deadline.
func (j *Job) Wait(ctx context.Context) error {
	select {
	case <-j.done:
		j.mu.Lock()
		defer j.mu.Unlock()
		return j.err
	case <-ctx.Done():
		return fmt.Errorf("runtime: waiting for job %q: %w", j.name, ctx.Err())
	}
}

// Progress returns the logical blocks completed so far and the total,
// reading the control block asynchronously on the high-priority control
// stream (it does not wait for the kernel).
func (j *Job) Progress(ctx context.Context) (done, total uint64, err error) {
	if err := j.dev.usable(); err != nil {
		return 0, j.cfg.Total, err
	}
	// ctlMu keeps the control block from being recycled during the read.
	j.ctlMu.RLock()
	defer j.ctlMu.RUnlock()
	j.mu.Lock()
	running, final, ctl, start := j.state == jobRunning, j.final, j.ctl, j.startEv
	j.mu.Unlock()
	if !running || ctl == 0 {
		return min(final.Done, j.cfg.Total), j.cfg.Total, nil
	}
	c, err := j.dev.readCtl(ctx, ctl, j.ctlStr, start)
	if err != nil {
		return 0, j.cfg.Total, fmt.Errorf("runtime: progress of job %q: %w", j.name, err)
	}
	return min(c.Done, j.cfg.Total), j.cfg.Total, nil
}

// RankedWorkers returns the workers of the job's running launch on each
// SM, as its partial-range workers counted themselves (slate_ctl.sm_rank,
// docs/ABI.md): index i is SM i, for the first RankSMs SMs. A launch on all
// SMs does not count (all zeros), nor does a finished job (nil). The read
// runs beside the workers on the job's control stream. For diagnostics: it
// allocates page-locked memory on every call.
func (j *Job) RankedWorkers(ctx context.Context) ([]uint32, error) {
	if err := j.dev.usable(); err != nil {
		return nil, err
	}
	j.ctlMu.RLock()
	defer j.ctlMu.RUnlock()
	j.mu.Lock()
	running, ctl, start := j.state == jobRunning, j.ctl, j.startEv
	j.mu.Unlock()
	if !running || ctl == 0 {
		return nil, nil
	}
	b, err := j.dev.readBytes(ctx, ctl+ctlHeadSize, 4*RankSMs, j.ctlStr, start)
	if err != nil {
		return nil, fmt.Errorf("runtime: workers of job %q: %w", j.name, err)
	}
	n := make([]uint32, RankSMs)
	for i := range n {
		n[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return n, nil
}

// Resize moves the job to SMs r: it sets the retreat flag from the job's
// high-priority control stream, queues (on the job stream, after the flag)
// a clear of the flag and a relaunch on r, then waits for the old workers
// to drain. The queue counter carries over, so no logical block is lost or
// repeated. It returns ErrJobFinished when the job has already ended.
func (j *Job) Resize(ctx context.Context, r SMRange) (ResizeStats, error) {
	d := j.dev
	if !r.Valid(d.info.SMs) {
		return ResizeStats{}, fmt.Errorf("runtime: resize of job %q: SM range %v outside the device's [0,%d]", j.name, r, d.info.SMs-1)
	}
	j.resizeMu.Lock()
	defer j.resizeMu.Unlock()
	if st, ok := j.adoptArmed(r); ok {
		return st, nil
	}

	j.mu.Lock()
	if j.state != jobRunning || j.ending {
		j.mu.Unlock()
		return ResizeStats{}, ErrJobFinished
	}
	if j.cancel {
		j.mu.Unlock()
		return ResizeStats{}, ErrCanceled
	}
	// A launch that already ended by itself needs no relaunch; the monitor
	// will report the job finished.
	if C.slate_cuEventQuery(d.ctx, j.doneEv) == cudaSuccess {
		j.mu.Unlock()
		return ResizeStats{}, ErrJobFinished
	}
	if grow := growPieces(j.rng, r); grow != nil && !j.cancel {
		st, err := j.growLocked(r, grow)
		j.mu.Unlock()
		return st, err
	}
	var evs [4]C.CUevent // retreat, drained, relaunch (the next armed), done
	for i := range evs {
		e, err := d.newEvent()
		if err != nil {
			j.mu.Unlock()
			for _, e := range evs[:i] {
				d.destroyEvent(e)
			}
			return ResizeStats{}, fmt.Errorf("runtime: resize of job %q: %w", j.name, err)
		}
		evs[i] = e
	}
	from := j.rng
	steps := []func() error{
		func() error { return d.check("cuStreamWaitEvent", C.slate_cuStreamWaitEvent(d.ctx, j.ctlStr, j.armed)) },
		func() error { return d.putCtl(j.ctl, ctlOffRetreat, constOne, 4, j.ctlStr) },
		func() error { return d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, evs[0], j.ctlStr)) },
		// The clear must not overtake the set: order the job stream after it.
		func() error { return d.check("cuStreamWaitEvent", C.slate_cuStreamWaitEvent(d.ctx, j.stream, evs[0])) },
		func() error { return d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, evs[1], j.stream)) },
		// Clear retreat and exited (8 bytes at offset 16).
		func() error { return d.putCtl(j.ctl, ctlOffRetreat, constZero, 8, j.stream) },
		func() error { return d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, evs[2], j.stream)) },
		func() error { return j.launchLocked(r) },
		j.stampEnd,
		func() error { return d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, evs[3], j.stream)) },
	}
	for i, s := range steps {
		if err := s(); err != nil {
			// The job's stream is in an unknown state: fail the job. If
			// the flag was set, the old launch drains by itself.
			for _, e := range evs {
				d.destroyEvent(e)
			}
			err = fmt.Errorf("runtime: resize of job %q (step %d): %w", j.name, i, err)
			j.finishLocked(jobFailed, err)
			j.mu.Unlock()
			return ResizeStats{}, err
		}
	}
	j.retired = append(j.retired, j.doneEv)
	j.doneEv = evs[3]
	if j.armed != j.startEv {
		d.destroyEvent(j.armed) // the stream wait above has captured it
	}
	j.armed = evs[2]
	j.gen++
	j.mu.Unlock()

	st := ResizeStats{From: from, To: r}
	t0 := time.Now()
	err := d.waitEvent(ctx, evs[2], "resize drain")
	st.Host = time.Since(t0)
	if err == nil {
		if st.Drain, err = d.elapsed(evs[0], evs[1]); err == nil {
			st.Gap, err = d.elapsed(evs[1], evs[2])
		}
	}
	for _, e := range evs[:2] {
		d.destroyEvent(e) // safe while pending: the driver defers the release
	}
	if err != nil {
		return st, fmt.Errorf("runtime: resize of job %q: %w", j.name, err)
	}
	j.mu.Lock()
	j.stats.Resizes = append(j.stats.Resizes, st)
	j.mu.Unlock()
	return st, nil
}

// growLocked moves the job to r, a superset of its range, without a
// drain: the running launch keeps its SMs, and one more launch per added
// piece, each on a stream of its own, takes tasks from the same queue on
// the new SMs. The job stream waits for those launches before the job's
// new end event, so a later retreat drains all of them and the monitor
// sees the job end only when every launch has. Called with j.mu held.
func (j *Job) growLocked(r SMRange, pieces []SMRange) (ResizeStats, error) {
	d := j.dev
	st := ResizeStats{From: j.rng, To: r, Grow: true}
	t0 := time.Now()
	fail := func(step string, err error) (ResizeStats, error) {
		// Launches already queued take tasks from the shared queue and end
		// with it; the job is failed so that nothing waits on it in vain.
		err = fmt.Errorf("runtime: growing job %q (%s): %w", j.name, step, err)
		j.finishLocked(jobFailed, err)
		return st, err
	}
	for _, p := range pieces {
		s, err := d.getStream(d.prioLeast)
		if err != nil {
			return fail("stream", err)
		}
		j.extra = append(j.extra, s)
		if err := j.launchOn(s, p); err != nil {
			return fail("launch", err)
		}
		ev, err := d.newEvent()
		if err != nil {
			return fail("event", err)
		}
		err = d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, ev, s))
		if err == nil {
			err = d.check("cuStreamWaitEvent", C.slate_cuStreamWaitEvent(d.ctx, j.stream, ev))
		}
		d.destroyEvent(ev) // the wait has captured it
		if err != nil {
			return fail("join", err)
		}
	}
	if err := j.stampEnd(); err != nil {
		return fail("stamp", err)
	}
	done, err := d.newEvent()
	if err != nil {
		return fail("event", err)
	}
	if err := d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, done, j.stream)); err != nil {
		d.destroyEvent(done)
		return fail("end event", err)
	}
	j.retired = append(j.retired, j.doneEv)
	j.doneEv = done
	j.rng = r
	j.gen++
	st.Host = time.Since(t0)
	j.stats.Resizes = append(j.stats.Resizes, st)
	return st, nil
}

// Cancel asks the job's workers to stop after their current tasks. The
// job then ends with ErrCanceled (or succeeds, if all blocks had run).
func (j *Job) Cancel() {
	j.resizeMu.Lock()
	defer j.resizeMu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.cancelLocked()
}

func (j *Job) cancelLocked() {
	if j.state != jobRunning || j.ending || j.cancel {
		return
	}
	j.cancel = true
	d := j.dev
	err := d.check("cuStreamWaitEvent", C.slate_cuStreamWaitEvent(d.ctx, j.ctlStr, j.armed))
	if err == nil {
		err = d.putCtl(j.ctl, ctlOffRetreat, constOne, 4, j.ctlStr)
	}
	if err != nil {
		j.finishLocked(jobFailed, fmt.Errorf("runtime: canceling job %q: %w", j.name, err))
	}
}

// finishLocked records the job's outcome once.
func (j *Job) finishLocked(s jobState, err error) {
	if j.state != jobRunning {
		return
	}
	j.state, j.err = s, err
	close(j.done)
}

// monitor polls the end event of the job's latest launch. When it
// completes without a newer launch queued, the job has ended: it reads the
// control block to check that every logical block ran, records the
// outcome, and frees the job's resources.
func (j *Job) monitor() {
	d := j.dev
	// Its polls decide how soon the scheduler sees the job end.
	preciseThread()
	defer j.release()
	sleep := 10 * time.Microsecond
	for {
		j.mu.Lock()
		if j.state != jobRunning {
			j.mu.Unlock()
			return
		}
		ev, gen := j.doneEv, j.gen
		j.mu.Unlock()

		r := C.slate_cuEventQuery(d.ctx, ev)
		if r == cudaErrNotReady {
			pause(sleep)
			sleep = min(sleep*2, pollMax)
			continue
		}
		j.mu.Lock()
		if r != cudaSuccess {
			err := d.check("cuEventQuery", r)
			if d.Err() != nil {
				// A sticky error belongs to the context, not to one
				// kernel: say which job saw it first.
				d.mu.Lock()
				if d.firstFault == "" {
					d.firstFault = j.name
				}
				first := d.firstFault
				d.mu.Unlock()
				if first != j.name {
					err = fmt.Errorf("%w (first reported by job %q; the faulting kernel is one of the jobs running then)", err, first)
				}
			}
			j.finishLocked(jobFailed, fmt.Errorf("runtime: job %q (kernel %s) failed: %w", j.name, j.k.Name(), err))
			j.mu.Unlock()
			return
		}
		if j.gen != gen {
			// A resize relaunched meanwhile; that end was only a drain.
			j.mu.Unlock()
			sleep = 10 * time.Microsecond
			continue
		}
		// Decide under resizeMu, so a Resize never sees a launch that ends
		// only to be respawned as finished.
		j.mu.Unlock()
		j.resizeMu.Lock()
		j.mu.Lock()
		if j.gen != gen || j.state != jobRunning || j.settleGrowsAtEnd() {
			// (A deferred grow whose trigger ended is now part of the job.)
			j.mu.Unlock()
			j.resizeMu.Unlock()
			sleep = 10 * time.Microsecond
			continue
		}
		// One read of the control block decides: respawn a starved
		// launch, or end the job.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, rerr := d.readCtl(ctx, j.ctl, j.ctlStr, nil)
		cancel()
		if rerr == nil && j.respawnIfStarved(c) {
			j.mu.Unlock()
			j.resizeMu.Unlock()
			// The range was busy: back off before looking again.
			pause(sleep)
			sleep = min(sleep*2, pollMax)
			continue
		}
		j.ending = true // Resize and Cancel now see the job as finished
		if gpu, err := d.elapsed(j.startEv, j.doneEv); err == nil {
			j.stats.GPUTime = gpu
			// A job that ran on one range from start to end says how long
			// its blocks take (what sizes the kernel's next tasks).
			if rerr == nil && !j.cancel && len(j.stats.Resizes) == 0 && j.respawns == 0 && c.Done == j.cfg.Total {
				n := j.rng.High - j.rng.Low + 1
				j.k.recordBlockTime(blockShape{j.cfg.Total, j.block.Count(), j.shared},
					blockTimeNs(float64(gpu.Nanoseconds()), j.cfg.Total, j.cfg.Iters, j.occ*n))
			}
		}
		if j.stamps != 0 && rerr == nil {
			// A stamp that cannot be read leaves Start/End zero: callers
			// fall back to event timing.
			j.stats.Start, j.stats.End, _ = j.clk.read(d, j.stamps)
			if e := j.growEnd(); !j.stats.End.IsZero() && e.After(j.stats.End) {
				j.stats.End = e
			}
		}
		canceled := j.cancel
		j.final = c
		j.resizeMu.Unlock()
		switch {
		case rerr != nil:
			j.finishLocked(jobFailed, fmt.Errorf("runtime: job %q: reading its control block: %w", j.name, rerr))
		case c.Done == j.cfg.Total && c.Next >= j.cfg.Total:
			j.finishLocked(jobSucceeded, nil)
		case canceled:
			j.finishLocked(jobCanceled, fmt.Errorf("%w: job %q stopped after %d of %d logical blocks", ErrCanceled, j.name, c.Done, j.cfg.Total))
		default:
			j.finishLocked(jobFailed, fmt.Errorf("runtime: job %q ended with %d of %d logical blocks done (queue at %d): "+
				"the worker does not follow docs/ABI.md", j.name, c.Done, j.cfg.Total, c.Next))
		}
		j.mu.Unlock()
		return
	}
}

// maxRespawns bounds relaunches of a starved job (see respawnIfStarved).
const maxRespawns = 1 << 20

// respawnIfStarved relaunches a job whose launch ended with logical blocks
// still in the queue and no retreat or cancel asked for. That happens when
// other work held every SM of the job's range at launch time: the worker
// blocks were dispatched to SMs outside the range and exited at once
// (docs/ABI.md). The queue counter carries progress, so a relaunch on the
// same range resumes exactly where the queue stands. Called with j.mu and
// j.resizeMu held, after the launch's done event fired; c is the control
// block read after it.
func (j *Job) respawnIfStarved(c Ctl) bool {
	if j.cancel || j.respawns >= maxRespawns {
		return false
	}
	d := j.dev
	if c.Next >= j.cfg.Total || c.Retreat != 0 {
		return false
	}
	ev, err := d.newEvent()
	if err != nil {
		return false
	}
	if err := j.launchLocked(j.rng); err != nil {
		d.destroyEvent(ev)
		return false
	}
	if err := j.stampEnd(); err != nil {
		d.destroyEvent(ev)
		return false
	}
	if err := d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, ev, j.stream)); err != nil {
		d.destroyEvent(ev)
		return false
	}
	j.retired = append(j.retired, j.doneEv)
	j.doneEv = ev
	j.gen++
	j.respawns++
	j.stats.Respawns++
	return true
}

// release waits until nothing of the job can still be running on the GPU,
// then frees its resources and forgets it.
func (j *Job) release() {
	d := j.dev
	j.drainStream()
	// resizeMu: a Resize may still be reading its events (the armed one
	// among them) after the monitor saw the end.
	j.resizeMu.Lock()
	j.ctlMu.Lock()
	j.freeResources()
	j.ctlMu.Unlock()
	j.resizeMu.Unlock()
	d.mu.Lock()
	delete(d.jobs, j)
	d.mu.Unlock()
	close(j.released)
}

// drainStream waits until the job's streams are idle (or the context is
// dead) before its control block is recycled: after a failed resize the old
// launch may still be draining, and a Cancel's flag copy may still be in
// flight on the control stream after the job ended by itself; landing in a
// recycled block, it would stop another job.
func (j *Job) drainStream() {
	d := j.dev
	j.mu.Lock()
	streams := append([]C.CUstream{j.stream, j.ctlStr}, j.extra...)
	j.mu.Unlock()
	for _, s := range streams {
		if s == nil {
			continue
		}
		sleep := 10 * time.Microsecond
		for d.Err() == nil && C.slate_cuStreamQuery(d.ctx, s) == cudaErrNotReady {
			pause(sleep)
			sleep = min(sleep*2, 10*time.Millisecond)
		}
	}
}

func (j *Job) freeResources() {
	d := j.dev
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.armed != j.startEv {
		d.destroyEvent(j.armed)
	}
	for _, e := range append(j.retired, j.doneEv, j.startEv) {
		d.destroyEvent(e)
	}
	j.retired, j.doneEv, j.startEv, j.armed = nil, nil, nil, nil
	if j.stamps != 0 {
		j.clk.put(j.stamps)
		j.stamps = 0
	}
	for _, p := range j.growStamps {
		j.clk.put(p)
	}
	j.growStamps = nil
	// drainStream saw every stream idle: they go back to the pool.
	d.putStream(d.prioLeast, j.stream)
	d.putStream(d.prioGreatest, j.ctlStr)
	for _, s := range j.extra {
		d.putStream(d.prioLeast, s)
	}
	j.stream, j.ctlStr, j.extra = nil, nil, nil
	if j.ctl != 0 {
		// Abandoned deferred grows still read the control block when
		// their trigger ends: it goes back to the pool after them.
		if !j.addZombies() && d.Err() == nil {
			d.ctlMem.put(j.ctl)
		}
		j.ctl = 0
	}
}
