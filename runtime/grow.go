package runtime

/*
#include "shim.h"
*/
import "C"

import (
	"context"
	"fmt"
	"time"
)

// A deferred grow is a grow of one job onto SMs that another job holds,
// queued on the GPU to start the moment that other job (the trigger) ends:
// its launches wait on streams of their own for the trigger's end event, so
// the SMs the trigger frees get the grown job's workers without a host
// round trip. (The scheduler heard a completion 250-290 us after the GPU,
// and grew the partner 110-140 us later: bench/RESULTS.md, eleventh
// session.)
//
// A queued launch cannot be taken back; what keeps it correct whatever
// happens first:
//
//   - its workers take tasks from the job's own queue, so they run no
//     logical block twice and miss none, whenever they start;
//   - the job's end covers it once it can have started: a Resize to the
//     armed range after the trigger ended adopts it (the job stream waits
//     for its launches, as for growLocked's), and so does the monitor
//     before it decides the job's end, when the trigger's end event has
//     completed by then;
//   - a job that ends before its trigger leaves its queue empty (or its
//     retreat flag set, when cancelled), so the launches that run later find
//     no task: they are abandoned to the device's zombies, which keep their
//     streams and the job's control block out of the pools until they ran.
//
// Resizing or cancelling the trigger makes its running launch end at the
// drain: an armed grow then starts there, on SMs the trigger may take again
// (correct, but not the plan). Runtime.Scheduler arms grows only where no
// decision can come between: two tasks running, nothing queued, the
// scheduler closed to new tasks.
type deferredGrow struct {
	job     *Job
	trigger *Job
	to      SMRange
	// fired completes once the first stream's wait for the trigger's end
	// has passed (the trigger's own events are its to destroy).
	fired   C.CUevent
	streams []C.CUstream
	ends    []C.CUevent
	// stamps is a GPU clock pair (0 without a clock) whose slots take the
	// end of each piece's launch (at most two pieces): the job's end is the
	// latest of its own and these, since an adoption after the job's own
	// end queues no stamp on its stream (that one would mark the host's
	// adoption, not the work: the first measurement read it so).
	stamps DevicePtr
	zeroed C.CUevent // the slots' zeroing, while arming
}

// GrowAtEnd arms a deferred grow of j onto r, a superset of its range,
// that the GPU starts the moment trigger's running launch ends: one launch
// of j's workers per added piece, each on a stream of its own that waits
// for trigger's end event. Resize(r), once trigger has ended, adopts it and
// returns at once (ResizeStats.Deferred). An armed grow cannot be taken
// back: arming the same one again does nothing, and another on the same
// trigger is refused. It returns ErrJobFinished when either job has ended.
func (j *Job) GrowAtEnd(trigger *Job, r SMRange) error {
	d := j.dev
	if trigger == nil || trigger == j || trigger.dev != d {
		return fmt.Errorf("runtime: deferred grow of job %q: the trigger must be another job of the same device", j.name)
	}
	if !r.Valid(d.info.SMs) {
		return fmt.Errorf("runtime: deferred grow of job %q: SM range %v outside the device's [0,%d]", j.name, r, d.info.SMs-1)
	}
	d.reapZombies(false)
	// Lock order: j.resizeMu, trigger.mu, j.mu. Nothing takes a job's
	// resizeMu while holding another job's mu, and adoption (adoptArmed,
	// settleGrowsAtEnd) takes only the grown job's locks.
	j.resizeMu.Lock()
	defer j.resizeMu.Unlock()
	for _, g := range d.growsWhere(func(g *deferredGrow) bool { return g.job == j && g.trigger == trigger }) {
		if g.to == r {
			return nil
		}
		return fmt.Errorf("runtime: deferred grow of job %q onto %v: one onto %v is armed on the same job's end", j.name, r, g.to)
	}
	trigger.mu.Lock()
	// trigger.mu keeps its end event from being retired and destroyed
	// until the streams' waits below have captured it.
	defer trigger.mu.Unlock()
	trigEv := trigger.doneEv
	if trigger.state != jobRunning || trigger.ending || trigger.cancel || trigEv == nil ||
		C.slate_cuEventQuery(d.ctx, trigEv) == cudaSuccess {
		return ErrJobFinished
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state != jobRunning || j.ending || j.cancel {
		return ErrJobFinished
	}
	pieces := growPieces(j.rng, r)
	if pieces == nil {
		return fmt.Errorf("runtime: deferred grow of job %q: %v does not contain its range %v with more SMs", j.name, r, j.rng)
	}
	fired, err := d.newEvent()
	if err != nil {
		return fmt.Errorf("runtime: deferred grow of job %q: %w", j.name, err)
	}
	g := &deferredGrow{job: j, trigger: trigger, to: r, fired: fired}
	if j.clk != nil {
		if g.stamps, err = j.clk.pair(d); err != nil {
			d.destroyEvent(fired)
			return fmt.Errorf("runtime: deferred grow of job %q: %w", j.name, err)
		}
		// Zero: a piece that never ran leaves its slot so. A copy, as
		// every write on the control stream (a memset is a kernel, which
		// could wait for an SM slot behind the workers: device.go).
		err = d.putCtl(g.stamps, 0, constZero, 16, j.ctlStr)
		var set C.CUevent
		if err == nil {
			set, err = d.newEvent()
		}
		if err == nil {
			err = d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, set, j.ctlStr))
			g.zeroed = set
		}
		if err != nil {
			j.clk.put(g.stamps)
			d.destroyEvent(fired)
			return fmt.Errorf("runtime: deferred grow of job %q: %w", j.name, err)
		}
	}
	fail := func(step string, err error) error {
		// What was queued waits for the trigger like the whole grow
		// would have; the job must cover it as it covers an armed one.
		if len(g.streams) > 0 {
			d.growMu.Lock()
			d.grows = append(d.grows, g)
			d.growMu.Unlock()
		} else {
			d.destroyEvent(g.fired)
			d.destroyEvent(g.zeroed)
			if g.stamps != 0 {
				j.clk.put(g.stamps)
			}
		}
		return fmt.Errorf("runtime: deferred grow of job %q (%s): %w", j.name, step, err)
	}
	for i, p := range pieces {
		s, err := d.getStream(d.prioLeast)
		if err != nil {
			return fail("stream", err)
		}
		e, err := d.newEvent()
		if err != nil {
			d.putStream(d.prioLeast, s)
			return fail("event", err)
		}
		if g.zeroed != nil {
			if err := d.check("cuStreamWaitEvent", C.slate_cuStreamWaitEvent(d.ctx, s, g.zeroed)); err != nil {
				d.destroyEvent(e)
				d.putStream(d.prioLeast, s)
				return fail("wait", err)
			}
		}
		if err := d.check("cuStreamWaitEvent", C.slate_cuStreamWaitEvent(d.ctx, s, trigEv)); err != nil {
			d.destroyEvent(e)
			d.putStream(d.prioLeast, s)
			return fail("wait", err)
		}
		g.streams, g.ends = append(g.streams, s), append(g.ends, e)
		if i == 0 {
			if err := d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, g.fired, s)); err != nil {
				return fail("event", err)
			}
		}
		if err := j.launchOn(s, p); err != nil {
			return fail("launch", err)
		}
		if g.stamps != 0 {
			if err := j.clk.stamp(d, d.ctx, s, g.stamps+DevicePtr(8*i)); err != nil {
				return fail("stamp", err)
			}
		}
		if err := d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, e, s)); err != nil {
			return fail("event", err)
		}
	}
	d.destroyEvent(g.zeroed) // the waits have captured it
	g.zeroed = nil
	d.growMu.Lock()
	d.grows = append(d.grows, g)
	d.growMu.Unlock()
	return nil
}

// ArmedGrows returns how many deferred grows of j are armed and not yet
// adopted or abandoned.
func (j *Job) ArmedGrows() int {
	return len(j.dev.growsWhere(func(g *deferredGrow) bool { return g.job == j }))
}

// growsWhere returns the pending deferred grows for which keep is true.
func (d *Device) growsWhere(keep func(*deferredGrow) bool) []*deferredGrow {
	d.growMu.Lock()
	defer d.growMu.Unlock()
	var out []*deferredGrow
	for _, g := range d.grows {
		if keep(g) {
			out = append(out, g)
		}
	}
	return out
}

// takeGrow takes g off the pending list; false if another caller did.
func (d *Device) takeGrow(g *deferredGrow) bool {
	d.growMu.Lock()
	defer d.growMu.Unlock()
	for i, x := range d.grows {
		if x == g {
			d.grows = append(d.grows[:i], d.grows[i+1:]...)
			return true
		}
	}
	return false
}

// adoptLocked makes g's launches part of j: the job stream waits for them
// before its new end event, as for growLocked, and j's range becomes g's.
// Called with j.mu held and g taken off the pending list.
func (j *Job) adoptLocked(g *deferredGrow, t0 time.Time) {
	d := j.dev
	st := ResizeStats{From: j.rng, To: g.to, Grow: true, Deferred: true}
	var err error
	for _, e := range g.ends {
		if err == nil {
			err = d.check("cuStreamWaitEvent", C.slate_cuStreamWaitEvent(d.ctx, j.stream, e))
		}
		d.destroyEvent(e) // the wait has captured it
	}
	d.destroyEvent(g.fired)
	j.extra = append(j.extra, g.streams...)
	if g.stamps != 0 {
		j.growStamps = append(j.growStamps, g.stamps)
	}
	var done C.CUevent
	if err == nil {
		done, err = d.newEvent()
	}
	if err == nil {
		if err = d.check("cuEventRecord", C.slate_cuEventRecord(d.ctx, done, j.stream)); err != nil {
			d.destroyEvent(done)
		}
	}
	if err != nil {
		j.finishLocked(jobFailed, fmt.Errorf("runtime: adopting a deferred grow of job %q: %w", j.name, err))
		return
	}
	j.retired = append(j.retired, j.doneEv)
	j.doneEv = done
	if g.to.Low <= j.rng.Low && g.to.High >= j.rng.High {
		j.rng = g.to
	}
	j.gen++
	st.Host = time.Since(t0)
	j.stats.Resizes = append(j.stats.Resizes, st)
}

// adoptArmed adopts j's grow armed onto r once its trigger has ended, if
// there is one. Called with j.resizeMu held, not j.mu.
func (j *Job) adoptArmed(r SMRange) (ResizeStats, bool) {
	d := j.dev
	for _, g := range d.growsWhere(func(g *deferredGrow) bool { return g.job == j && g.to == r }) {
		if C.slate_cuEventQuery(d.ctx, g.fired) != cudaSuccess {
			select {
			case <-g.trigger.done:
				// Ended: the GPU front end passes the grow's wait within
				// microseconds of the end event the host has seen.
				ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
				err := d.waitEventSpin(ctx, g.fired, "deferred grow", time.Millisecond)
				cancel()
				if err != nil {
					continue
				}
			default:
				continue
			}
		}
		t0 := time.Now()
		j.mu.Lock()
		if j.state != jobRunning || j.ending || !d.takeGrow(g) {
			j.mu.Unlock()
			continue // the monitor settles it
		}
		n := len(j.stats.Resizes)
		j.adoptLocked(g, t0)
		var st ResizeStats
		if len(j.stats.Resizes) > n {
			st = j.stats.Resizes[n]
		}
		j.mu.Unlock()
		return st, true
	}
	return ResizeStats{}, false
}

// settleGrowsAtEnd is the monitor's step before it decides j's end: a
// pending grow whose trigger has ended may have taken tasks that j's end
// event does not cover, so it is adopted (and true returned: look again);
// the others are abandoned, their launches to run later on an empty queue.
// Called with j.resizeMu and j.mu held.
func (j *Job) settleGrowsAtEnd() (adopted bool) {
	d := j.dev
	for _, g := range d.growsWhere(func(g *deferredGrow) bool { return g.job == j }) {
		if !d.takeGrow(g) {
			continue
		}
		if C.slate_cuEventQuery(d.ctx, g.fired) == cudaSuccess {
			j.adoptLocked(g, time.Now())
			adopted = true
			continue
		}
		j.abandoned = append(j.abandoned, g)
	}
	return adopted
}

// growEnd is the latest end stamp of j's adopted deferred grows (zero
// when none ran), as host time.
func (j *Job) growEnd() time.Time {
	var end time.Time
	for _, p := range j.growStamps {
		for _, slot := range []DevicePtr{p, p + 8} {
			if t, ok := j.clk.readOne(j.dev, slot); ok && t.After(end) {
				end = t
			}
		}
	}
	return end
}

// A zombie is an abandoned grow: its launches wait for a trigger that has
// not ended, and run on an empty queue when it does. Its streams and the
// job's control block go back to the pools only then.
type zombie struct {
	streams []C.CUstream
	ends    []C.CUevent
	ctl     DevicePtr
	stamps  []DevicePtr // written when the launches run
	clk     *gpuClock
}

// addZombies takes over j's abandoned grows and its control block (called
// from freeResources, with j.mu held); false if there were none.
func (j *Job) addZombies() bool {
	if len(j.abandoned) == 0 {
		return false
	}
	d := j.dev
	z := zombie{ctl: j.ctl, clk: j.clk}
	for _, g := range j.abandoned {
		if g.stamps != 0 {
			z.stamps = append(z.stamps, g.stamps)
		}
		z.streams = append(z.streams, g.streams...)
		z.ends = append(z.ends, g.ends...)
		d.destroyEvent(g.fired) // safe while pending: the driver defers the release
	}
	j.abandoned = nil
	d.growMu.Lock()
	d.zombies = append(d.zombies, z)
	d.growMu.Unlock()
	return true
}

// reapZombies returns the streams and control blocks of zombies whose
// launches have run to the pools; with wait it waits (up to 5 s) for all.
func (d *Device) reapZombies(wait bool) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		d.growMu.Lock()
		var keep, idle []zombie
		for _, z := range d.zombies {
			busy := false
			for _, s := range z.streams {
				if C.slate_cuStreamQuery(d.ctx, s) == cudaErrNotReady {
					busy = true
					break
				}
			}
			if busy {
				keep = append(keep, z)
			} else {
				idle = append(idle, z)
			}
		}
		d.zombies = keep
		d.growMu.Unlock()
		for _, z := range idle {
			for _, e := range z.ends {
				d.destroyEvent(e)
			}
			for _, s := range z.streams {
				d.putStream(d.prioLeast, s)
			}
			if z.ctl != 0 && d.Err() == nil {
				d.ctlMem.put(z.ctl)
			}
			for _, p := range z.stamps {
				z.clk.put(p)
			}
		}
		if !wait || len(keep) == 0 || time.Now().After(deadline) || d.Err() != nil {
			return
		}
		pause(100 * time.Microsecond)
	}
}
