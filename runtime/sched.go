package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/slatec/slatec/internal/shares"
)

// Task is a kernel submitted to the Scheduler.
type Task struct {
	Name    string
	Profile Profile
	// Weight is the task's share of the SMs relative to its co-runners;
	// <= 0 means 1 (an equal split).
	Weight float64

	// What to launch (used by DeviceExecutor; a fake executor ignores it).
	Kernel *Kernel
	Grid   Dim3
	Block  Dim3
	Shared uint32
	Args   []any
	Iters  int // 0: AutoIters
}

// Executor runs tasks on SM ranges: the real device (DeviceExecutor) or a
// fake in tests. The scheduler calls it from one goroutine, except that
// Resize calls for different tasks run concurrently.
type Executor interface {
	NumSMs() int
	Start(t *Task, r SMRange) (Running, error)
}

// ChainExecutor is an Executor that can also start a task to run after a
// running one ends, in the GPU's own order (DeviceExecutor: a stream wait
// on the running job's end), so that the GPU does not idle while the host
// notices the end. The scheduler uses it when one task runs alone and the
// next ones in the queue must wait for it.
type ChainExecutor interface {
	Executor
	StartAfter(t *Task, r SMRange, prev Running) (Running, error)
}

// GrowingRunning is a Running task whose executor can queue a grow on the
// GPU to start when another task ends (DeviceExecutor: Job.GrowAtEnd), so
// that the SMs a finished task frees do not idle while the host notices.
// A later Resize onto r, once trigger ended, adopts the grow.
type GrowingRunning interface {
	Running
	GrowAtEnd(trigger Running, r SMRange) error
}

// Running is a started task.
type Running interface {
	// Resize moves the task to r and returns once its old workers drained.
	// It returns ErrJobFinished if the task has already ended.
	Resize(ctx context.Context, r SMRange) error
	// Wait returns when the task has ended, with its error.
	Wait(ctx context.Context) error
}

// Candidate is what a Policy sees of a task.
type Candidate struct {
	Name    string
	Class   Class
	Profile Profile
	Weight  float64
}

// Policy decides co-running.
type Policy interface {
	// CoRun reports whether cand may start now beside the running tasks
	// (non-empty, in start order).
	CoRun(running []Candidate, cand Candidate) bool
}

// SlatePolicy is Slate's Table I applied pairwise: a candidate co-runs
// only if it is complementary to every running task.
type SlatePolicy struct{}

// CoRun implements Policy.
func (SlatePolicy) CoRun(running []Candidate, cand Candidate) bool {
	for _, r := range running {
		if !SlateCoRun(r.Class, cand.Class) {
			return false
		}
	}
	return true
}

// SchedulerOptions configure a Scheduler. Zero values take defaults.
type SchedulerOptions struct {
	Policy     Policy     // default SlatePolicy{}
	Thresholds Thresholds // default DefaultThresholds
	// MaxCoRun bounds how many tasks share the GPU (default 2: Slate's
	// table is about pairs).
	MaxCoRun int
	// MaxSkips bounds starvation: a queued task that later arrivals have
	// overtaken this many times blocks further overtaking (default 4).
	MaxSkips int
	// ResizeTimeout bounds each resize's wait for the drain (default 10 s).
	ResizeTimeout time.Duration
	// NoChain turns off starting queued tasks in GPU order behind a task
	// running alone (see ChainExecutor).
	NoChain bool
	// NoDeferredGrow turns off arming grows on the GPU (GrowingRunning):
	// then a task grows onto a finished one's SMs when the host has
	// noticed the end.
	NoDeferredGrow bool
	// OnEvent, if set, is called (from the scheduler's goroutine) for
	// every decision; for logging and tests. It must not block.
	OnEvent func(Event)
}

// EventKind names a scheduler decision.
type EventKind int

const (
	EventQueued EventKind = iota
	EventStarted
	EventResized
	EventFinished
	EventResizeFailed
	// EventArmFailed: a deferred grow could not be queued (the task
	// grows when the host notices the end instead).
	EventArmFailed
)

func (k EventKind) String() string {
	names := [...]string{"queued", "started", "resized", "finished", "resize-failed", "arm-failed"}
	if k < 0 || int(k) >= len(names) {
		return fmt.Sprintf("EventKind(%d)", int(k))
	}
	return names[k]
}

// Event is one scheduler decision or outcome.
type Event struct {
	Kind  EventKind
	Task  string
	Range SMRange // for started and resized
	Err   error   // for finished and resize-failed
}

// ErrSchedulerClosed is returned by Submit after Close.
var ErrSchedulerClosed = errors.New("runtime: scheduler closed")

// Scheduler co-runs tasks on one GPU. It decides on every arrival and
// completion: a task starts solo when the GPU is idle; it joins running
// tasks when the policy says they are complementary (looking down the queue
// past tasks that are not, as Slate does); the SMs are split in proportion
// to the weights, running tasks are resized to their new ranges first, and
// a task that finishes gives its SMs to the survivors at once. One goroutine
// owns all state; Submit and Close are safe from any goroutine.
type Scheduler struct {
	ex   Executor
	opts SchedulerOptions
	sms  int

	mu     sync.RWMutex // guards closed against Submit
	closed bool
	events chan func()
	idle   chan struct{} // closed when the loop ends

	// Owned by the loop goroutine.
	running []*entry
	queue   []*entry
	// chained are tasks started (ChainExecutor) to run when after, the
	// one task running, ends; until then nothing else is admitted.
	chained  []*entry
	after    *entry
	closing  bool
	inflight int // started tasks whose completion is not yet processed
}

type entry struct {
	task  *Task
	cand  Candidate
	h     *Handle
	run   Running
	rng   SMRange
	skips int
}

// Handle follows a submitted task.
type Handle struct {
	name  string
	class Class
	done  chan struct{}

	mu     sync.Mutex
	err    error
	run    Running
	ranges []SMRange
}

// Name returns the task's name.
func (h *Handle) Name() string { return h.name }

// Class returns the class the task was scheduled as.
func (h *Handle) Class() Class { return h.class }

// Done is closed when the task has ended.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Err returns the task's error after it ended.
func (h *Handle) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Wait blocks until the task ends or ctx is done.
func (h *Handle) Wait(ctx context.Context) error {
	select {
	case <-h.done:
		return h.Err()
	case <-ctx.Done():
		return fmt.Errorf("runtime: waiting for task %q: %w", h.name, ctx.Err())
	}
}

// Ranges returns the SM ranges the task was given, in order (start, then
// each resize).
func (h *Handle) Ranges() []SMRange {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]SMRange(nil), h.ranges...)
}

// Job returns the task's Job when it runs on a DeviceExecutor and has
// started, else nil.
func (h *Handle) Job() *Job {
	h.mu.Lock()
	defer h.mu.Unlock()
	if j, ok := h.run.(deviceRunning); ok {
		return j.Job
	}
	return nil
}

func (h *Handle) finish(err error) {
	h.mu.Lock()
	h.err = err
	h.mu.Unlock()
	close(h.done)
}

// NewScheduler starts a scheduler over ex.
func NewScheduler(ex Executor, opts SchedulerOptions) (*Scheduler, error) {
	if opts.Policy == nil {
		opts.Policy = SlatePolicy{}
	}
	if opts.Thresholds == (Thresholds{}) {
		opts.Thresholds = DefaultThresholds
	}
	if opts.MaxCoRun <= 0 {
		opts.MaxCoRun = 2
	}
	if opts.MaxSkips <= 0 {
		opts.MaxSkips = 4
	}
	if opts.ResizeTimeout <= 0 {
		opts.ResizeTimeout = 10 * time.Second
	}
	sms := ex.NumSMs()
	if sms < 1 {
		return nil, fmt.Errorf("runtime: executor reports %d SMs", sms)
	}
	opts.MaxCoRun = min(opts.MaxCoRun, sms)
	s := &Scheduler{ex: ex, opts: opts, sms: sms, events: make(chan func(), 64), idle: make(chan struct{})}
	go s.loop()
	return s, nil
}

func (s *Scheduler) loop() {
	defer close(s.idle)
	for f := range s.events {
		f()
		if s.closing && len(s.running) == 0 && len(s.queue) == 0 && s.inflight == 0 {
			return
		}
	}
}

// post runs f on the loop goroutine. Callers hold s.mu (read) with
// !s.closed, or are completion goroutines, which the loop outlives.
func (s *Scheduler) post(f func()) { s.events <- f }

// Submit queues a task and returns its handle. The decision (start now,
// co-run, or wait) is taken at once on the scheduler's goroutine.
func (s *Scheduler) Submit(t *Task) (*Handle, error) {
	hs, err := s.SubmitAll(t)
	if err != nil {
		return nil, err
	}
	return hs[0], nil
}

// SubmitAll queues tasks that arrive together and returns their handles,
// in order. One decision covers them all: submitted one by one, the first
// would start alone on every SM and be resized (a drain) as soon as the
// next arrived.
func (s *Scheduler) SubmitAll(ts ...*Task) ([]*Handle, error) {
	es := make([]*entry, len(ts))
	hs := make([]*Handle, len(ts))
	for i, t := range ts {
		if t == nil {
			return nil, errors.New("runtime: Submit(nil)")
		}
		w := t.Weight
		if w <= 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			w = 1
		}
		c := Candidate{Name: t.Name, Class: s.opts.Thresholds.Classify(t.Profile), Profile: t.Profile, Weight: w}
		es[i] = &entry{task: t, cand: c, h: &Handle{name: t.Name, class: c.Class, done: make(chan struct{})}}
		hs[i] = es[i].h
	}
	if len(es) == 0 {
		return nil, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrSchedulerClosed
	}
	s.post(func() {
		for _, e := range es {
			s.queue = append(s.queue, e)
			s.emit(Event{Kind: EventQueued, Task: e.cand.Name})
		}
		s.reschedule()
	})
	return hs, nil
}

// Close stops accepting tasks and waits until every submitted task has
// ended, or ctx is done.
func (s *Scheduler) Close(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		s.post(func() {
			s.closing = true
			s.armGrows()
		})
	}
	s.mu.Unlock()
	select {
	case <-s.idle:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("runtime: closing scheduler: %w", ctx.Err())
	}
}

func (s *Scheduler) emit(ev Event) {
	if s.opts.OnEvent != nil {
		s.opts.OnEvent(ev)
	}
}

// reschedule applies the policy until nothing changes: admit tasks, split
// the SMs, resize the running tasks, start the admitted ones.
func (s *Scheduler) reschedule() {
	if len(s.chained) > 0 {
		return // the next set is queued on the GPU behind the running task
	}
	defer s.armGrows()
	defer s.chain()
	for {
		admit := admitFromQueue(s.running, s.queue, s.opts.Policy, s.opts.MaxCoRun, s.opts.MaxSkips)
		set := append(append([]*entry(nil), s.running...), s.takeAdmitted(admit)...)
		if len(set) == 0 {
			return
		}

		weights := make([]float64, len(set))
		for i, e := range set {
			weights[i] = e.cand.Weight
		}
		nRun := len(s.running)
		ranges, err := Split(s.sms, weights)
		if err != nil { // cannot happen: MaxCoRun <= SMs
			for _, e := range set[nRun:] {
				e.h.finish(err)
			}
			return
		}
		s.resizeAll(ranges[:nRun])
		failed := false
		for i, e := range set[nRun:] {
			if !s.start(e, ranges[nRun+i]) {
				failed = true
			}
		}
		if !failed {
			return
		}
		// A start failed: its SMs are unassigned; plan again.
	}
}

// resizeAll moves running tasks to their new ranges and waits for all
// drains, so that SMs are free before new tasks start. Resizes run
// concurrently in three rounds: those that only give SMs up, then those
// that move (drain and relaunch elsewhere), then the grows, which take SMs
// at once without a drain (a grow into SMs still draining would leave its
// new workers nowhere to run). Moves can still meet each other's draining
// workers; a relaunch whose workers found no room is respawned by its job.
func (s *Scheduler) resizeAll(ranges []SMRange) {
	errs := make([]error, len(ranges))
	kind := func(from, to SMRange) int {
		switch {
		case to.Low >= from.Low && to.High <= from.High:
			return 0 // shrink
		case growPieces(from, to) != nil:
			return 2 // grow
		}
		return 1 // move
	}
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		for i, e := range s.running {
			if e.rng == ranges[i] || kind(e.rng, ranges[i]) != round {
				continue
			}
			wg.Add(1)
			go func(i int, e *entry) {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), s.opts.ResizeTimeout)
				defer cancel()
				errs[i] = e.run.Resize(ctx, ranges[i])
			}(i, e)
		}
		wg.Wait()
	}
	for i, e := range s.running {
		if e.rng == ranges[i] {
			continue
		}
		switch err := errs[i]; {
		case err == nil:
			e.rng = ranges[i]
			e.h.mu.Lock()
			e.h.ranges = append(e.h.ranges, e.rng)
			e.h.mu.Unlock()
			s.emit(Event{Kind: EventResized, Task: e.cand.Name, Range: e.rng})
		case errors.Is(err, ErrJobFinished):
			// Its completion is on the way and will re-plan; its SMs are
			// free already.
			e.rng = ranges[i]
		default:
			// The task's own Wait reports its failure; keep planning.
			e.rng = ranges[i]
			s.emit(Event{Kind: EventResizeFailed, Task: e.cand.Name, Range: ranges[i], Err: err})
		}
	}
}

// armGrows queues on the GPU, for each of two running tasks, the grow the
// other makes when it ends (GrowingRunning), so that the survivor takes the
// freed SMs the moment the GPU frees them; the completion's reschedule then
// finds the grow done and adopts it. Only where nothing can come between:
// an armed grow cannot be taken back, so two tasks run, none is queued or
// chained, and the scheduler is closed to new tasks (Close). The survivor
// must get a superset of its range (Split of it alone: every SM).
func (s *Scheduler) armGrows() {
	if s.opts.NoDeferredGrow || !s.closing || len(s.running) != 2 || len(s.queue) > 0 || len(s.chained) > 0 {
		return
	}
	all := SMRange{0, s.sms - 1}
	for i, e := range s.running {
		other := s.running[1-i]
		g, ok := e.run.(GrowingRunning)
		if !ok || growPieces(e.rng, all) == nil {
			continue
		}
		if err := g.GrowAtEnd(other.run, all); err != nil && !errors.Is(err, ErrJobFinished) && !errors.Is(err, ErrNoDeferredGrow) {
			s.emit(Event{Kind: EventArmFailed, Task: e.cand.Name, Range: all, Err: err})
		}
	}
}

// takeAdmitted removes the queued tasks at the indices admit (ascending)
// from the queue and returns them; the tasks they overtook age.
func (s *Scheduler) takeAdmitted(admit []int) []*entry {
	var taken, rest []*entry
	ai := 0
	for i, q := range s.queue {
		if ai < len(admit) && admit[ai] == i {
			taken = append(taken, q)
			ai++
			continue
		}
		if ai < len(admit) {
			q.skips++
		}
		rest = append(rest, q)
	}
	s.queue = rest
	return taken
}

// chain starts, behind the one task running alone, the tasks that would
// start when it ends (the queue's head and those the policy lets join it,
// on the split they would get), in GPU order, so the GPU goes from one to
// the next without waiting for the host.
func (s *Scheduler) chain() {
	cx, ok := s.ex.(ChainExecutor)
	if !ok || s.opts.NoChain || len(s.running) != 1 || len(s.chained) > 0 || len(s.queue) == 0 {
		return
	}
	admit := admitFromQueue(nil, s.queue, s.opts.Policy, s.opts.MaxCoRun, s.opts.MaxSkips)
	if len(admit) == 0 {
		return
	}
	weights := make([]float64, len(admit))
	for i, qi := range admit {
		weights[i] = s.queue[qi].cand.Weight
	}
	ranges, err := Split(s.sms, weights)
	if err != nil {
		return
	}
	prev := s.running[0]
	set := s.takeAdmitted(admit)
	for i, e := range set {
		r := ranges[i]
		run, err := cx.StartAfter(e.task, r, prev.run)
		if err != nil {
			// Its SMs stay unused until the running task ends and the
			// scheduler plans again; the task reports the failure.
			err = fmt.Errorf("runtime: starting task %q: %w", e.cand.Name, err)
			e.h.finish(err)
			s.emit(Event{Kind: EventFinished, Task: e.cand.Name, Err: err})
			continue
		}
		s.launched(e, run, r)
		s.chained = append(s.chained, e)
	}
	if len(s.chained) > 0 {
		s.after = prev
	}
}

func (s *Scheduler) start(e *entry, r SMRange) bool {
	run, err := s.ex.Start(e.task, r)
	if err != nil {
		err = fmt.Errorf("runtime: starting task %q: %w", e.cand.Name, err)
		e.h.finish(err)
		s.emit(Event{Kind: EventFinished, Task: e.cand.Name, Err: err})
		return false
	}
	s.launched(e, run, r)
	s.running = append(s.running, e)
	return true
}

// launched records a started task and waits for its end in the background.
func (s *Scheduler) launched(e *entry, run Running, r SMRange) {
	e.run, e.rng = run, r
	e.h.mu.Lock()
	e.h.run = run
	e.h.ranges = append(e.h.ranges, r)
	e.h.mu.Unlock()
	s.inflight++
	s.emit(Event{Kind: EventStarted, Task: e.cand.Name, Range: r})
	go func() {
		err := run.Wait(context.Background())
		s.post(func() { s.completed(e, err) })
	}()
}

func (s *Scheduler) completed(e *entry, err error) {
	s.inflight--
	for i, r := range s.running {
		if r == e {
			s.running = append(s.running[:i], s.running[i+1:]...)
			break
		}
	}
	for i, r := range s.chained {
		if r == e { // ended before its predecessor's end was processed
			s.chained = append(s.chained[:i], s.chained[i+1:]...)
			break
		}
	}
	if e == s.after {
		// The chained tasks are running now, on the ranges they started with.
		s.running = append(s.running, s.chained...)
		s.chained, s.after = nil, nil
	}
	e.h.finish(err)
	s.emit(Event{Kind: EventFinished, Task: e.cand.Name, Err: err})
	s.reschedule()
}

// admitFromQueue returns the indices (ascending) of queued tasks to start
// now beside running. With nothing running the queue head starts solo.
// Then, in queue order, each task the policy finds complementary to all
// tasks in the set joins it, up to maxCoRun; a task that is not
// complementary is passed over unless it has been overtaken maxSkips times
// already, which stops all overtaking until it can run.
func admitFromQueue(running, queue []*entry, pol Policy, maxCoRun, maxSkips int) []int {
	set := make([]Candidate, 0, maxCoRun)
	for _, r := range running {
		set = append(set, r.cand)
	}
	var out []int
	for i, q := range queue {
		if len(set) >= maxCoRun {
			break
		}
		if len(set) == 0 || pol.CoRun(set, q.cand) {
			out = append(out, i)
			set = append(set, q.cand)
			continue
		}
		if q.skips >= maxSkips {
			break
		}
	}
	return out
}

// Split divides numSMs SMs into contiguous ranges, one per weight, in
// proportion to the weights (largest remainder; every range gets at least
// one SM). Non-positive weights count as 1.
func Split(numSMs int, weights []float64) ([]SMRange, error) {
	n := len(weights)
	if n == 0 {
		return nil, nil
	}
	if n > numSMs {
		return nil, fmt.Errorf("runtime: cannot split %d SMs among %d tasks", numSMs, n)
	}
	share := shares.LargestRemainder(numSMs, weights)
	out := make([]SMRange, n)
	lo := 0
	for i, c := range share {
		out[i] = SMRange{lo, lo + c - 1}
		lo += c
	}
	return out, nil
}

// growPieces returns the SM ranges that r adds to from when r contains
// from and is larger (one or two pieces, beside from), else nil.
func growPieces(from, r SMRange) []SMRange {
	if r == from || r.Low > from.Low || r.High < from.High {
		return nil
	}
	var out []SMRange
	if r.Low < from.Low {
		out = append(out, SMRange{r.Low, from.Low - 1})
	}
	if r.High > from.High {
		out = append(out, SMRange{from.High + 1, r.High})
	}
	return out
}

// DeviceExecutor runs tasks as Jobs on a Device.
type DeviceExecutor struct{ Dev *Device }

// NumSMs implements Executor.
func (x DeviceExecutor) NumSMs() int { return x.Dev.Info().SMs }

// Start implements Executor.
func (x DeviceExecutor) Start(t *Task, r SMRange) (Running, error) { return x.launch(t, r, nil) }

// StartAfter implements ChainExecutor: the job's launch waits on the GPU
// for prev's (WithAfter).
func (x DeviceExecutor) StartAfter(t *Task, r SMRange, prev Running) (Running, error) {
	p, _ := prev.(deviceRunning)
	return x.launch(t, r, p.Job)
}

func (x DeviceExecutor) launch(t *Task, r SMRange, after *Job) (Running, error) {
	if t.Kernel == nil {
		return nil, fmt.Errorf("runtime: task %q has no kernel", t.Name)
	}
	opts := []LaunchOption{WithName(t.Name)}
	if t.Iters > 0 {
		opts = append(opts, WithIters(t.Iters))
	}
	if after != nil {
		opts = append(opts, WithAfter(after))
	}
	j, err := x.Dev.Launch(t.Kernel, t.Grid, t.Block, t.Shared, t.Args, r, opts...)
	if err != nil {
		return nil, err
	}
	return deviceRunning{j}, nil
}

type deviceRunning struct{ *Job }

// GrowAtEnd implements GrowingRunning.
func (d deviceRunning) GrowAtEnd(trigger Running, r SMRange) error {
	t, ok := trigger.(deviceRunning)
	if !ok {
		return fmt.Errorf("runtime: deferred grow of job %q: the trigger is not a job of this executor", d.Name())
	}
	return d.Job.GrowAtEnd(t.Job, r)
}

func (d deviceRunning) Resize(ctx context.Context, r SMRange) error {
	_, err := d.Job.Resize(ctx, r)
	return err
}
