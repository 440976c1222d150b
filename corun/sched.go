package corun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/runtime"
)

// phasePolicy co-runs what the Slate plan co-runs: a candidate joins the
// running tasks when the plan put it in the same phase as every one of
// them. The plan (plan.PlanSlateWith) applies Slate's table with either
// kernel as the running one (which of a workload's simultaneous arrivals
// starts first is an accident of submission order, and the table is not
// symmetric), refined by the model: a pair the table calls solo co-runs
// when the profiles predict it 5% faster than one after another, and a
// third kernel joins a pair when that beats the pair and then the third.
// The runtime's own SlatePolicy classifies runtime.Profile utilisations
// with other thresholds; the benchmark keeps one view, the planner's, for
// the scheduler and the predictions.
type phasePolicy map[string]int

// CoRun implements runtime.Policy.
func (p phasePolicy) CoRun(running []runtime.Candidate, cand runtime.Candidate) bool {
	ph, ok := p[cand.Name]
	if !ok {
		return false
	}
	for _, r := range running {
		if q, ok := p[r.Name]; !ok || q != ph {
			return false
		}
	}
	return true
}

// schedExecutor runs the scheduler's tasks on a Device and records what
// the scheduler did to them.
type schedExecutor struct {
	dev    Device
	byName map[string]*Kernel
	// task estimates a job's task time on n SMs (nil: unknown).
	task func(name string, n, iters int) time.Duration
	// native names the tasks the plan runs alone: started on all SMs they
	// run as written where the device can (NativeChainDevice), as a
	// drop-in program does when nothing asks it to share, since the
	// policy never puts another task beside them.
	native map[string]bool
	// overlap names the tasks of the plan's overlap phases: started as
	// written on all SMs whatever range the scheduler gives them (their
	// phase's kernels share every SM), and never resized.
	overlap map[string]bool
	// tail names the native solo tasks launched without waiting for the
	// solo task before them (plan.Phase.Tail): on a stream of their own,
	// their blocks take the SMs that task's last wave frees.
	tail map[string]bool

	mu      sync.Mutex
	jobs    map[string]Job
	from    map[string]time.Duration
	cur     map[string]runtime.SMRange
	gantt   []Segment
	resizes []Resize
}

func (x *schedExecutor) NumSMs() int { return x.dev.Info().SMs }

func (x *schedExecutor) Start(t *runtime.Task, r runtime.SMRange) (runtime.Running, error) {
	return x.start(t, r, nil)
}

func (x *schedExecutor) start(t *runtime.Task, r runtime.SMRange, prev *schedRunning) (runtime.Running, error) {
	k := x.byName[t.Name]
	if k == nil {
		return nil, fmt.Errorf("no kernel %q", t.Name)
	}
	var j Job
	var err error
	var after Job
	if prev != nil {
		after = prev.job
	}
	nd, nativeOK := x.dev.(NativeChainDevice)
	all := runtime.SMRange{Low: 0, High: x.dev.Info().SMs - 1}
	if x.overlap[t.Name] {
		// An overlap phase needs the kernels as written: without native
		// launches it cannot run (the plan's prediction would not hold).
		if !nativeOK || nd.NativeUnavailable() != "" {
			return nil, fmt.Errorf("overlap phase of %s: no native launches on this device", t.Name)
		}
		j, err = nd.StartNativeAfter(k, after)
		r = all
	} else if nativeOK && x.native[t.Name] && r == all && nd.NativeUnavailable() == "" {
		if x.tail[t.Name] && prev != nil && x.native[prev.name] {
			after = nil
		}
		j, err = nd.StartNativeAfter(k, after)
	} else if cd, ok := x.dev.(ChainDevice); ok && prev != nil {
		j, err = cd.StartAfter(k, r, prev.job)
	} else {
		j, err = x.dev.Start(k, r)
	}
	if err != nil {
		return nil, err
	}
	// Its first segment starts where its span does (GPU stamps where the
	// device has them): the host's clock at the launch call is not where
	// the GPU started it.
	from := chained
	x.mu.Lock()
	x.jobs[t.Name], x.from[t.Name], x.cur[t.Name] = j, from, r
	x.mu.Unlock()
	return &schedRunning{x: x, name: t.Name, job: j}, nil
}

// chainExecutor is a schedExecutor on a ChainDevice: the scheduler starts
// a task that must wait for one running alone behind it in GPU order.
type chainExecutor struct{ *schedExecutor }

func (x chainExecutor) StartAfter(t *runtime.Task, r runtime.SMRange, prev runtime.Running) (runtime.Running, error) {
	p, ok := prev.(*schedRunning)
	if !ok {
		return x.Start(t, r)
	}
	return x.start(t, r, p)
}

// chained marks in schedExecutor.from a job's first segment: it starts at
// the job's span's start (GPU stamps), known once the job has started.
const chained = time.Duration(-1)

// segStart is where the current Gantt segment of the named job starts.
// Called with x.mu held.
func (x *schedExecutor) segStart(name string) time.Duration {
	if f := x.from[name]; f != chained {
		return f
	}
	s, _ := x.jobs[name].Span()
	return s
}

type schedRunning struct {
	x    *schedExecutor
	name string
	job  Job
}

func (r *schedRunning) Resize(ctx context.Context, to runtime.SMRange) error {
	if r.x.overlap[r.name] {
		return nil // as written on all SMs already
	}
	lat, err := r.job.Resize(ctx, to)
	if err != nil {
		return err
	}
	x := r.x
	now := x.dev.Now()
	x.mu.Lock()
	defer x.mu.Unlock()
	c := x.cur[r.name]
	if ij, ok := r.job.(itersJob); ok && !lat.Grow && x.task != nil {
		lat.Task = x.task(r.name, c.High-c.Low+1, ij.Iters())
	}
	x.resizes = append(x.resizes, lat)
	x.gantt = append(x.gantt, Segment{Kernel: r.name, StartMs: ms(x.segStart(r.name)), EndMs: ms(now), Low: c.Low, High: c.High})
	x.from[r.name], x.cur[r.name] = now, to
	return nil
}

// GrowAtEnd implements runtime.GrowingRunning for jobs that can arm a
// deferred grow (growJob); others say runtime.ErrNoDeferredGrow.
func (r *schedRunning) GrowAtEnd(trigger runtime.Running, to runtime.SMRange) error {
	t, ok := trigger.(*schedRunning)
	g, can := r.job.(growJob)
	if !ok || !can || r.x.overlap[r.name] || r.x.overlap[t.name] {
		return runtime.ErrNoDeferredGrow
	}
	return g.GrowAtEnd(t.job, to)
}

func (r *schedRunning) Wait(ctx context.Context) error {
	err := r.job.Wait(ctx)
	x := r.x
	begin, end := r.job.Span()
	x.mu.Lock()
	defer x.mu.Unlock()
	c := x.cur[r.name]
	x.gantt = append(x.gantt, Segment{Kernel: r.name, StartMs: ms(x.segStart(r.name)), EndMs: ms(end), Low: c.Low, High: c.High})
	// Resizes are placed on the host's clock when they returned; the span
	// is GPU stamps. Every segment of the job is kept inside its span, and
	// one that ends up empty (a resize made after the job had drained its
	// queue unnoticed) is dropped.
	b, e := ms(begin), ms(end)
	for i := range x.gantt {
		if g := &x.gantt[i]; g.Kernel == r.name {
			g.StartMs = min(max(g.StartMs, b), e)
			g.EndMs = min(max(g.EndMs, b), e)
		}
	}
	x.gantt = slices.DeleteFunc(x.gantt, func(g Segment) bool { return g.Kernel == r.name && g.EndMs <= g.StartMs })
	return err
}

// scheduler submits the workload's kernels, all at time 0 in workload
// order (one SubmitAll), to a runtime.Scheduler that co-runs what the Slate
// plan co-runs (phasePolicy), up to three at once, on the plan's SM split.
// The scheduler resizes running kernels when one arrives beside them and
// when one ends, and chains the ones that must wait behind those running.
func (b *Bench) scheduler(ctx context.Context, w Workload) (Outcome, error) {
	ps, why := b.subset(w)
	if ps == nil {
		return Outcome{}, unavailable("%s", why)
	}
	opts := SchedulerPlanOptions
	if nd, ok := b.Dev.(NativeChainDevice); !ok || nd.NativeUnavailable() != "" {
		// Its overlap phases run the kernels as written, and so do its
		// solo phases (NativeSolo): without native launches, neither.
		opts.Overlap, opts.NativeSolo = false, false
	}
	if b.Opts.NoSoloTail {
		opts.SoloTail = false
	}
	p, err := plan.PlanSlateWith(ps, opts)
	if err != nil {
		return Outcome{}, fmt.Errorf("planning: %w", err)
	}
	weight := map[string]float64{}
	pol := phasePolicy{}
	native := map[string]bool{}
	overlap := map[string]bool{}
	tail := map[string]bool{}
	var order []string // the plan's order: phases, and launch order within one
	for i, ph := range p.Phases {
		for _, pk := range ph.Kernels {
			pol[pk.Name] = i
			order = append(order, pk.Name)
			switch {
			case ph.Overlap:
				overlap[pk.Name] = true
			case len(ph.Kernels) > 1:
				weight[pk.Name] = float64(pk.SMs)
			default:
				native[pk.Name] = true
				tail[pk.Name] = ph.Tail
			}
		}
	}
	r, err := b.median(ctx, func() (runResult, error) { return b.schedOnce(ctx, w, order, pol, weight, native, overlap, tail) })
	if err != nil {
		return Outcome{}, err
	}
	o := r.outcome()
	pred := p.PredictedMs
	o.PredictedMs = &pred
	return o, nil
}

// SchedulerPlanOptions is how the scheduler mode plans (and predicts).
var SchedulerPlanOptions = plan.SchedulerOptions

// schedOnce submits the workload's kernels in the plan's order (order: its
// phases, and within an overlap phase the kernel to launch first first).
func (b *Bench) schedOnce(ctx context.Context, w Workload, order []string, pol phasePolicy, weight map[string]float64, native, overlap, tail map[string]bool) (runResult, error) {
	ctx, cancel := context.WithTimeout(ctx, b.Opts.RunTimeout)
	defer cancel()
	x := &schedExecutor{dev: b.Dev, byName: map[string]*Kernel{}, native: native, overlap: overlap, tail: tail, task: b.taskTime, jobs: map[string]Job{}, from: map[string]time.Duration{}, cur: map[string]runtime.SMRange{}}
	for _, k := range w.Kernels {
		x.byName[k.Name] = k
	}
	var ex runtime.Executor = x
	if _, ok := b.Dev.(ChainDevice); ok {
		ex = chainExecutor{x}
	}
	// The workload's kernels arrive together: one decision for all.
	t0 := b.Dev.Now()
	opts := runtime.SchedulerOptions{Policy: pol, MaxCoRun: 3, ResizeTimeout: b.Opts.RunTimeout, NoDeferredGrow: b.Opts.NoDeferredGrow}
	if tr := b.Opts.Trace; tr != nil {
		var mu sync.Mutex
		opts.OnEvent = func(ev runtime.Event) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(tr, "%s\t%.4f\t%s\t%s\t%v\n", w.Name, ms(b.Dev.Now()-t0), ev.Kind, ev.Task, ev.Range)
		}
		defer func() {
			for _, k := range w.Kernels {
				if j := x.jobs[k.Name]; j != nil {
					st, en := j.Span()
					fmt.Fprintf(tr, "%s\t%.4f\tspan\t%s\t%.4f ms\n", w.Name, ms(st-t0), k.Name, ms(en-st))
				}
			}
		}()
	}
	s, err := runtime.NewScheduler(ex, opts)
	if err != nil {
		return runResult{}, err
	}
	var ts []*runtime.Task
	for _, name := range order {
		ts = append(ts, &runtime.Task{Name: name, Weight: weight[name]})
	}
	hs, err := s.SubmitAll(ts...)
	if err != nil {
		_ = s.Close(ctx)
		return runResult{}, err
	}
	if err := s.Close(ctx); err != nil {
		return runResult{}, err
	}
	var errs []error
	for _, h := range hs {
		if err := h.Err(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", h.Name(), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return runResult{}, err
	}
	jobs := make([]Job, len(w.Kernels))
	for i, k := range w.Kernels {
		jobs[i] = x.jobs[k.Name]
	}
	r := spans(jobs, x.gantt, x.resizes)
	r.wall = ms(b.Dev.Now() - t0)
	return r, nil
}

// taskTime estimates a job's task time on n SMs from its profile: R[n]
// over the waves of blocks it runs there (n x blocks per SM at a time),
// times the blocks of a task. Zero without a profile.
func (b *Bench) taskTime(name string, n, iters int) time.Duration {
	if b.Profiles == nil || n < 1 || iters < 1 {
		return 0
	}
	i := b.Profiles.KernelIndex(name)
	if i < 0 {
		return 0
	}
	k := &b.Profiles.Kernels[i]
	perWave := int64(n) * int64(max(1, b.Profiles.Occupancy(k)))
	waves := max(1, (k.Blocks+perWave-1)/perWave)
	ms := k.R(n) / float64(waves) * float64(iters)
	return time.Duration(ms * float64(time.Millisecond))
}
