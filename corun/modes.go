package corun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/runtime"
)

// Mode is a way of running a workload's kernels.
type Mode string

// The modes of issue 11, in report order.
const (
	Sequential Mode = "sequential" // one after another, each alone on all SMs
	Streams    Mode = "streams"    // all at once on all SMs (concurrent streams): the hardware shares
	MPS        Mode = "mps"        // one process per kernel under the MPS daemon
	Green      Mode = "green"      // green contexts: best static split at the driver's granularity
	Static     Mode = "static"     // slatec SM ranges: best static split
	Scheduler  Mode = "scheduler"  // runtime.Scheduler with Slate's table, resizing on arrival and completion
	STM        Mode = "stm"        // Liang's STM plan, phase after phase
	Oracle     Mode = "oracle"     // every split, survivors grown to all SMs on completion: the best of them
)

// AllModes lists every mode in report order.
var AllModes = []Mode{Sequential, Streams, MPS, Green, Static, Scheduler, STM, Oracle}

// ParseModes reads a comma-separated list of modes ("all" for every one).
// Sequential is always run (the other modes' metrics are relative to it),
// so it is added when missing.
func ParseModes(list []string) ([]Mode, error) {
	want := map[Mode]bool{Sequential: true}
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "all" {
			for _, m := range AllModes {
				want[m] = true
			}
			continue
		}
		ok := false
		for _, m := range AllModes {
			if string(m) == s {
				want[m], ok = true, true
			}
		}
		if !ok {
			var names []string
			for _, m := range AllModes {
				names = append(names, string(m))
			}
			return nil, fmt.Errorf("unknown mode %q (modes: %s, or all)", s, strings.Join(names, ", "))
		}
	}
	var out []Mode
	for _, m := range AllModes {
		if want[m] {
			out = append(out, m)
		}
	}
	return out, nil
}

// Options control a benchmark run.
type Options struct {
	// Reps is how often each configuration runs; its median counts
	// (default 3).
	Reps int
	// Step is the SM step of the split sweeps of pairs (static, oracle;
	// default 2) and TripleStep that of triples (default 8). Green uses the
	// driver's granularity, or a multiple of it no finer than Step.
	Step, TripleStep int
	// RunTimeout bounds one run of a workload (default 1 min).
	RunTimeout time.Duration
	// MPS runs the mps mode; nil makes it unavailable.
	MPS MPSRunner
	// MPSPercentages are the CUDA_MPS_ACTIVE_THREAD_PERCENTAGE settings
	// tried besides the default (default 25, 50, 75).
	MPSPercentages []int
	// Progress, if set, hears of each mode as it starts.
	Progress func(Progress)
	// Trace, if set, gets a line per scheduler decision of every scheduler
	// run (ms from the run's start on the device clock, the runtime's
	// event, the task, its range), then each job's span on the same clock.
	Trace io.Writer
	// NoDeferredGrow makes the scheduler mode grow a survivor only once the
	// host has noticed its partner's end, instead of arming the grow on the
	// GPU (runtime.SchedulerOptions.NoDeferredGrow): for comparing the two.
	NoDeferredGrow bool
	// NoSoloTail makes the scheduler mode wait for each solo kernel's end
	// before launching the next (plan.SlateOptions.SoloTail off): for
	// comparing the two.
	NoSoloTail bool
}

// Progress says what the benchmark is doing.
type Progress struct {
	Workload string
	Mode     Mode
	Index    int // steps done before this one
	Total    int
}

func (o *Options) defaults() {
	if o.Reps <= 0 {
		o.Reps = 3
	}
	if o.Step <= 0 {
		o.Step = 2
	}
	if o.TripleStep <= 0 {
		o.TripleStep = 8
	}
	if o.RunTimeout <= 0 {
		o.RunTimeout = time.Minute
	}
	if o.MPSPercentages == nil {
		o.MPSPercentages = []int{25, 50, 75}
	}
}

// Outcome is one mode's result on one workload.
type Outcome struct {
	Workload      string
	Complementary bool
	Mode          Mode
	// Setting distinguishes variants of a mode (mps: "default" or
	// "pct=50"); empty for the others.
	Setting    string
	MakespanMs float64
	// WallMs is the same run timed on the host alone: from before the
	// first launch call to the moment the last kernel's end was seen (for
	// mps, in the children). It can only overstate (host launch and
	// polling latency, tens of us), where the span-based MakespanMs can
	// err both ways, so a mode's gain is real only where WallMs agrees.
	WallMs float64
	// PredictedMs is the planner's makespan for modes that follow a plan
	// (sequential, stm, scheduler with Slate's plan); nil otherwise.
	PredictedMs *float64
	// Ends are the kernels' ends in ms from the run's start, in workload
	// order.
	Ends    []float64
	Metrics Metrics
	// Split is the SMs per kernel of the chosen configuration (static,
	// green, oracle: the best split; stm: its first phase), nil otherwise.
	Split []int
	// Sweep holds every configuration tried (static, green, oracle).
	Sweep   []SweepPoint
	Resizes []Resize
	// Gantt is the median run's schedule (scheduler, oracle).
	Gantt []Segment
	// Unavailable says why the mode could not run on this machine; then
	// nothing else is set.
	Unavailable string
	Notes       []string
}

// SweepPoint is one configuration of a split sweep.
type SweepPoint struct {
	Split      []int
	MakespanMs float64
}

// Segment is a kernel holding SMs [Low, High] from StartMs to EndMs.
type Segment struct {
	Kernel         string
	StartMs, EndMs float64
	Low, High      int
}

// Bench runs workloads on a device.
type Bench struct {
	Dev Device
	// Profiles are the kernels' profiles on Dev (slatec profile, or
	// MeasureProfiles), for the stm and scheduler modes and the
	// predictions; nil makes stm unavailable and the scheduler treat every
	// kernel as complementary to none.
	Profiles *plan.ProfileSet
	Opts     Options
}

// blockTimeSeeder is a Device whose runtime sizes worker tasks by the
// kernels' block times, which the profiles give before any job has run.
type blockTimeSeeder interface{ SeedBlockTimes(*plan.ProfileSet) }

// Run runs every workload in every mode (sequential always first) and
// returns the outcomes, each workload's in mode order. An unavailable mode
// gives an outcome saying why; any other failure stops the run.
//
// Green runs last, after every workload's other modes: its kernels run in
// other CUDA contexts, and a fault there would destroy the context the
// other modes need. A green failure is recorded as the mode being
// unavailable ("failed: ..."), for this and the remaining workloads, and
// the run ends with the other modes' results.
func (b *Bench) Run(ctx context.Context, ws []Workload, modes []Mode) ([]Outcome, error) {
	b.Opts.defaults()
	if s, ok := b.Dev.(blockTimeSeeder); ok {
		s.SeedBlockTimes(b.Profiles)
	}
	var early, late []Mode
	for _, m := range modes {
		if m == Green {
			late = append(late, m)
		} else {
			early = append(early, m)
		}
	}
	total := len(ws) * len(modes)
	step := 0
	byWorkload := make([][]Outcome, len(ws))
	solos := make([][]float64, len(ws))
	progress := func(i int, m Mode) {
		if b.Opts.Progress != nil {
			b.Opts.Progress(Progress{Workload: ws[i].Name, Mode: m, Index: step, Total: total})
		}
		step++
	}
	// finish labels a mode's outcomes and computes their metrics.
	finish := func(i int, m Mode, os []Outcome) {
		w := ws[i]
		for k := range os {
			o := &os[k]
			o.Workload, o.Complementary, o.Mode = w.Name, w.Complementary, m
			if m == Sequential {
				solos[i] = soloTimes(o.Ends)
			}
			if o.Unavailable == "" && solos[i] != nil {
				o.Metrics = ComputeMetrics(o.Ends, solos[i], o.MakespanMs)
			}
			if note := implausible(w, o.MakespanMs, b.Dev.Info().PeakBWGBs); o.Unavailable == "" && note != "" {
				o.Notes = append(o.Notes, note)
			}
		}
		byWorkload[i] = append(byWorkload[i], os...)
	}
	run := func(i int, m Mode) error {
		progress(i, m)
		os, err := b.runMode(ctx, ws[i], m, solos[i])
		if err != nil {
			return fmt.Errorf("%s, mode %s: %w", ws[i].Name, m, err)
		}
		finish(i, m, os)
		return nil
	}
	flat := func() []Outcome {
		var out []Outcome
		for _, os := range byWorkload {
			out = append(out, os...)
		}
		return out
	}
	var rotated, rest []Mode
	for _, m := range early {
		if rotatedModes[m] {
			rotated = append(rotated, m)
		} else {
			rest = append(rest, m)
		}
	}
	for i := range ws {
		os, err := b.runRotated(ctx, ws[i], rotated, func(m Mode) { progress(i, m) })
		if err != nil {
			return flat(), err
		}
		for k, m := range rotated {
			finish(i, m, os[k])
		}
		for _, m := range rest {
			if err := run(i, m); err != nil {
				return flat(), err
			}
		}
	}
	var failed error
	for i, w := range ws {
		for _, m := range late {
			if failed == nil {
				if err := run(i, m); err != nil {
					if ctx.Err() != nil {
						return flat(), err
					}
					failed = err
				} else {
					continue
				}
			}
			byWorkload[i] = append(byWorkload[i], Outcome{Workload: w.Name, Complementary: w.Complementary, Mode: m,
				Unavailable: "failed: " + failed.Error()})
		}
	}
	return flat(), nil
}

// rotatedModes are the modes the targets compare with each other (the
// scheduler against the better of sequential and streams): their
// repetitions rotate, one run of each mode and then the next round, so
// that what drifts over a workload's runs (the GPU's clocks, the host)
// falls on all of them alike. Run one after another, each mode's
// repetitions together with the sweeps between them, the rows of one
// workload moved 1-5% between suite runs (RESULTS, twenty-eighth
// session), more than the 1% the "never worse" target asks.
var rotatedModes = map[Mode]bool{Sequential: true, Streams: true, Scheduler: true}

// runRotated runs the given modes (rotatedModes, sequential first) for
// one workload in Reps rounds of one run each, and returns per mode the
// run of median makespan (the lower middle one, as median), with the
// resizes of every round. A mode unavailable in the first round is not
// tried again.
func (b *Bench) runRotated(ctx context.Context, w Workload, modes []Mode, progress func(Mode)) ([][]Outcome, error) {
	reps := b.Opts.Reps
	b.Opts.Reps = 1
	defer func() { b.Opts.Reps = reps }()
	runs := make([][]Outcome, len(modes))
	for r := range reps {
		for k, m := range modes {
			if r > 0 && len(runs[k]) == 1 && runs[k][0].Unavailable != "" {
				continue
			}
			if r == 0 {
				progress(m)
			}
			os, err := b.runMode(ctx, w, m, nil)
			if err != nil {
				return nil, fmt.Errorf("%s, mode %s: %w", w.Name, m, err)
			}
			if len(os) != 1 {
				return nil, fmt.Errorf("%s, mode %s: %d outcomes of one run", w.Name, m, len(os))
			}
			runs[k] = append(runs[k], os[0])
		}
	}
	out := make([][]Outcome, len(modes))
	for k, rs := range runs {
		var resizes []Resize
		for _, o := range rs {
			resizes = append(resizes, o.Resizes...)
		}
		o := medianRun(rs, func(o Outcome) float64 { return o.MakespanMs })
		o.Resizes = resizes
		out[k] = []Outcome{o}
	}
	return out, nil
}

// medianRun is the run of median makespan: the lower middle one for an
// even count, so that it is a real run.
func medianRun[T any](rs []T, makespan func(T) float64) T {
	rs = slices.Clone(rs)
	sort.SliceStable(rs, func(i, j int) bool { return makespan(rs[i]) < makespan(rs[j]) })
	return rs[(len(rs)-1)/2]
}

// implausible says why a makespan cannot be right, or "": no run moves
// the workload's DRAM traffic faster than the device's peak bandwidth. A
// row so marked has a measurement fault (its kernels' spans mix the host's
// clock with GPU times), not a gain.
func implausible(w Workload, makespanMs, peakGBs float64) string {
	var bytes int64
	for _, k := range w.Kernels {
		bytes += k.Bytes
	}
	if makespanMs <= 0 || peakGBs <= 0 || bytes == 0 {
		return ""
	}
	gbs := float64(bytes) / 1e9 / (makespanMs / 1e3)
	if gbs <= peakGBs {
		return ""
	}
	return fmt.Sprintf("implausible: %.2f GB in %.3f ms is %.0f GB/s, above the peak %.0f GB/s", float64(bytes)/1e9, makespanMs, gbs, peakGBs)
}

// soloTimes turns the sequential mode's cumulative ends into each
// kernel's own time.
func soloTimes(ends []float64) []float64 {
	solo := make([]float64, len(ends))
	prev := 0.0
	for i, e := range ends {
		solo[i], prev = e-prev, e
	}
	return solo
}

// runMode runs one mode; solo are the kernels' solo times (after the
// sequential mode ran).
func (b *Bench) runMode(ctx context.Context, w Workload, m Mode, solo []float64) ([]Outcome, error) {
	var o Outcome
	var err error
	switch m {
	case Sequential:
		o, err = b.sequential(ctx, w)
	case Streams:
		start, note := b.baselineStarter(w.Kernels)
		var r runResult
		r, err = b.median(ctx, func() (runResult, error) { return b.coRun(ctx, w.Kernels, start, false) })
		o = r.outcome()
		o.Notes = append(o.Notes, note)
	case Static, Oracle:
		o, err = b.sweep(ctx, w, m == Oracle)
	case Green:
		o, err = b.green(ctx, w)
	case Scheduler:
		o, err = b.scheduler(ctx, w)
	case STM:
		o, err = b.stm(ctx, w)
	case MPS:
		return b.mps(ctx, w)
	default:
		return nil, fmt.Errorf("unknown mode %q", m)
	}
	if errors.Is(err, ErrUnavailable) {
		return []Outcome{{Unavailable: strings.TrimPrefix(err.Error(), ErrUnavailable.Error()+": ")}}, nil
	}
	if err != nil {
		return nil, err
	}
	return []Outcome{o}, nil
}

// runResult is one run of a workload's kernels.
type runResult struct {
	makespan float64
	wall     float64 // host-observed (Outcome.WallMs)
	ends     []float64
	resizes  []Resize
	gantt    []Segment
}

func (r runResult) outcome() Outcome {
	return Outcome{MakespanMs: r.makespan, WallMs: r.wall, Ends: r.ends, Resizes: r.resizes, Gantt: r.gantt}
}

// median runs run Reps times and returns the run with the median makespan
// (the lower middle one for an even count, so it is a real run), with the
// resizes of every run.
func (b *Bench) median(ctx context.Context, run func() (runResult, error)) (runResult, error) {
	var rs []runResult
	var resizes []Resize
	for range b.Opts.Reps {
		if err := ctx.Err(); err != nil {
			return runResult{}, err
		}
		// Each run starts with a cold L2, as the profiles were measured: a
		// kernel's time must not depend on the run before it.
		if f, ok := b.Dev.(l2Flusher); ok {
			if err := f.FlushL2(); err != nil {
				return runResult{}, err
			}
		}
		r, err := run()
		if err != nil {
			return runResult{}, err
		}
		resizes = append(resizes, r.resizes...)
		rs = append(rs, r)
	}
	r := medianRun(rs, func(r runResult) float64 { return r.makespan })
	r.resizes = resizes
	return r, nil
}

// starter starts kernel i of a run.
type starter func(i int) (Job, runtime.SMRange, error)

func startRanges(dev Device, ks []*Kernel, rs []runtime.SMRange) starter {
	return func(i int) (Job, runtime.SMRange, error) {
		j, err := dev.Start(ks[i], rs[i])
		return j, rs[i], err
	}
}

// coRun starts the kernels together and waits for all. With grow, each
// completion re-splits all SMs among the survivors in proportion to the
// SMs they hold (contiguous ranges in kernel order) and resizes them.
func (b *Bench) coRun(ctx context.Context, ks []*Kernel, start starter, grow bool) (runResult, error) {
	ctx, cancel := context.WithTimeout(ctx, b.Opts.RunTimeout)
	defer cancel()
	dev := b.Dev
	t0 := dev.Now()
	n := len(ks)
	jobs := make([]Job, n)
	cur := make([]runtime.SMRange, n)
	segFrom := make([]time.Duration, n)
	var gantt []Segment
	// On failure, jobs still running are canceled and waited for, so that
	// they do not run into the next measurement.
	ok := false
	defer func() {
		if !ok {
			cleanup(dev, jobs)
		}
	}()
	for i := range ks {
		j, r, err := start(i)
		if err != nil {
			return runResult{}, fmt.Errorf("starting %s: %w", ks[i].Name, err)
		}
		jobs[i], cur[i] = j, r
		segFrom[i] = dev.Now()
	}
	var errs []error
	var resizes []Resize
	alive := make([]int, n)
	for i := range alive {
		alive[i] = i
	}
	for len(alive) > 0 {
		sub := make([]Job, len(alive))
		for i, a := range alive {
			sub[i] = jobs[a]
		}
		idx, err := dev.WaitAny(ctx, sub)
		if err != nil && ctx.Err() != nil {
			return runResult{}, fmt.Errorf("waiting for %s: %w", names(ks), err)
		}
		fin := alive[idx]
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ks[fin].Name, err))
		}
		_, end := jobs[fin].Span()
		gantt = append(gantt, Segment{Kernel: ks[fin].Name, StartMs: ms(segFrom[fin]), EndMs: ms(end), Low: cur[fin].Low, High: cur[fin].High})
		alive = append(alive[:idx], alive[idx+1:]...)
		if !grow || len(alive) == 0 {
			continue
		}
		weights := make([]float64, len(alive))
		for i, a := range alive {
			weights[i] = float64(cur[a].Count())
		}
		next, err := runtime.Split(dev.Info().SMs, weights)
		if err != nil {
			return runResult{}, err
		}
		lat := make([]Resize, len(alive))
		rerr := make([]error, len(alive))
		var wg sync.WaitGroup
		for i, a := range alive {
			if next[i] == cur[a] {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				lat[i], rerr[i] = jobs[a].Resize(ctx, next[i])
			}()
		}
		wg.Wait()
		now := dev.Now()
		for i, a := range alive {
			if next[i] == cur[a] {
				continue
			}
			switch {
			case rerr[i] == nil:
				resizes = append(resizes, lat[i])
				gantt = append(gantt, Segment{Kernel: ks[a].Name, StartMs: ms(segFrom[a]), EndMs: ms(now), Low: cur[a].Low, High: cur[a].High})
				cur[a], segFrom[a] = next[i], now
			case errors.Is(rerr[i], runtime.ErrJobFinished):
				// It ended meanwhile; the next WaitAny sees it.
			default:
				errs = append(errs, fmt.Errorf("resizing %s: %w", ks[a].Name, rerr[i]))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return runResult{}, err
	}
	ok = true
	r := spans(jobs, gantt, resizes)
	r.wall = ms(dev.Now() - t0)
	return r, nil
}

// canceler is a Job that can be stopped early (the real device's).
type canceler interface{ Cancel() }

// cleanup cancels the started jobs of a failed run (or a measurement's
// loads) and waits (briefly) for them to end.
func cleanup(dev Device, jobs []Job) {
	var started []Job
	for _, j := range jobs {
		if j == nil {
			continue
		}
		if c, ok := j.(canceler); ok {
			c.Cancel()
		}
		started = append(started, j)
	}
	// Through WaitAny, which returns the ended ones in turn (and moves the
	// fake device's clock, which waits on one job at a time would not while
	// another runs unwaited).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for len(started) > 0 {
		i, err := dev.WaitAny(ctx, started)
		if err != nil && ctx.Err() != nil {
			return
		}
		started = slices.Delete(started, i, i+1)
	}
}

// spans turns the jobs' spans into a run: times from the earliest start.
func spans(jobs []Job, gantt []Segment, resizes []Resize) runResult {
	t0 := time.Duration(-1)
	for _, j := range jobs {
		if s, _ := j.Span(); t0 < 0 || s < t0 {
			t0 = s
		}
	}
	r := runResult{ends: make([]float64, len(jobs)), resizes: resizes}
	for i, j := range jobs {
		_, e := j.Span()
		r.ends[i] = ms(e - t0)
		r.makespan = max(r.makespan, r.ends[i])
	}
	for _, s := range gantt {
		s.StartMs -= ms(t0)
		s.EndMs -= ms(t0)
		r.gantt = append(r.gantt, s)
	}
	sort.SliceStable(r.gantt, func(a, b int) bool {
		if r.gantt[a].StartMs != r.gantt[b].StartMs {
			return r.gantt[a].StartMs < r.gantt[b].StartMs
		}
		return r.gantt[a].Low < r.gantt[b].Low
	})
	return r
}

func names(ks []*Kernel) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.Name
	}
	return strings.Join(s, "+")
}

// baselineStarter starts kernels the way the baselines run them: native
// kernels over all SMs when the device can, else persistent workers on
// all SMs; the note says which.
func (b *Bench) baselineStarter(ks []*Kernel) (starter, string) {
	all := runtime.SMRange{Low: 0, High: b.Dev.Info().SMs - 1}
	if nd, ok := b.Dev.(NativeDevice); ok && nd.NativeUnavailable() == "" {
		return func(i int) (Job, runtime.SMRange, error) {
			j, err := nd.StartNative(ks[i])
			return j, all, err
		}, "native kernels"
	}
	why := "the device has no native launches"
	if nd, ok := b.Dev.(NativeDevice); ok {
		why = nd.NativeUnavailable()
	}
	rs := make([]runtime.SMRange, len(ks))
	for i := range rs {
		rs[i] = all
	}
	return startRanges(b.Dev, ks, rs), "persistent workers on all SMs (" + why + ")"
}

// sequential runs each kernel alone on all SMs (natively where the device
// can); the makespan is the sum of their solo times.
func (b *Bench) sequential(ctx context.Context, w Workload) (Outcome, error) {
	M := b.Dev.Info().SMs
	var o Outcome
	t := 0.0
	var note string
	for _, k := range w.Kernels {
		ks := []*Kernel{k}
		var start starter
		start, note = b.baselineStarter(ks)
		r, err := b.median(ctx, func() (runResult, error) { return b.coRun(ctx, ks, start, false) })
		if err != nil {
			return Outcome{}, err
		}
		t += r.makespan
		o.WallMs += r.wall
		o.Ends = append(o.Ends, t)
	}
	o.MakespanMs = t
	o.Notes = append(o.Notes, note)
	if ps, _ := b.subset(w); ps != nil {
		p := 0.0
		for i := range ps.Kernels {
			p += ps.Kernels[i].R(M)
		}
		o.PredictedMs = &p
	}
	return o, nil
}

// Splits returns the SM splits of a sweep: every way of giving n kernels
// contiguous ranges of M SMs in multiples of step, each at least step
// (the last takes what is left, so it need not be a multiple), in
// lexicographic order.
func Splits(M, n, step int) [][]int {
	if step < 1 {
		step = 1
	}
	var out [][]int
	var rec func(prefix []int, left, k int)
	rec = func(prefix []int, left, k int) {
		if k == 1 {
			if left >= step {
				out = append(out, append(append([]int(nil), prefix...), left))
			}
			return
		}
		for m := step; left-m >= step*(k-1); m += step {
			rec(append(prefix, m), left-m, k-1)
		}
	}
	rec(nil, M, n)
	return out
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// rangesOf lays out a split from SM 0 in kernel order.
func rangesOf(split []int) []runtime.SMRange {
	rs := make([]runtime.SMRange, len(split))
	lo := 0
	for i, m := range split {
		rs[i] = runtime.SMRange{Low: lo, High: lo + m - 1}
		lo += m
	}
	return rs
}

func (b *Bench) stepFor(n int) int {
	if n >= 3 {
		return b.Opts.TripleStep
	}
	return b.Opts.Step
}

// sweep tries every split; with grow the survivors take the SMs of each
// kernel that finishes (the oracle), without they keep their ranges
// (static). The best split wins (the first on ties).
func (b *Bench) sweep(ctx context.Context, w Workload, grow bool) (Outcome, error) {
	M := b.Dev.Info().SMs
	splits := Splits(M, len(w.Kernels), b.stepFor(len(w.Kernels)))
	if len(splits) == 0 {
		return Outcome{}, unavailable("%d SMs cannot be split %d ways in steps of %d", M, len(w.Kernels), b.stepFor(len(w.Kernels)))
	}
	return b.bestOf(ctx, splits, func(split []int) (runResult, error) {
		return b.coRun(ctx, w.Kernels, startRanges(b.Dev, w.Kernels, rangesOf(split)), grow)
	})
}

func (b *Bench) bestOf(ctx context.Context, splits [][]int, run func([]int) (runResult, error)) (Outcome, error) {
	var best Outcome
	var resizes []Resize
	for _, s := range splits {
		r, err := b.median(ctx, func() (runResult, error) { return run(s) })
		if err != nil {
			return Outcome{}, fmt.Errorf("split %s: %w", splitText(s), err)
		}
		resizes = append(resizes, r.resizes...)
		best.Sweep = append(best.Sweep, SweepPoint{Split: s, MakespanMs: r.makespan})
		if best.Split == nil || r.makespan < best.MakespanMs {
			sw := best.Sweep
			best = r.outcome()
			best.Split, best.Sweep = s, sw
		}
	}
	best.Resizes = resizes
	return best, nil
}

// phaseText describes a phase: "triad_f4 on 2, fma_chain on 14".
func phaseText(ks []*Kernel, split []int) string {
	p := make([]string, len(ks))
	for i, k := range ks {
		p[i] = fmt.Sprintf("%s on %d", k.Name, split[i])
	}
	return strings.Join(p, ", ")
}

func splitText(s []int) string {
	p := make([]string, len(s))
	for i, x := range s {
		p[i] = fmt.Sprint(x)
	}
	return strings.Join(p, ":")
}

// green sweeps static splits made of green contexts.
func (b *Bench) green(ctx context.Context, w Workload) (Outcome, error) {
	g, ok := b.Dev.(GreenDevice)
	if !ok {
		return Outcome{}, unavailable("this device has no green contexts")
	}
	gran := g.GreenGranularity()
	if gran <= 0 {
		return Outcome{}, unavailable("%s", g.GreenUnavailable())
	}
	step := gran
	for step < b.stepFor(len(w.Kernels)) {
		step += gran
	}
	M := b.Dev.Info().SMs
	splits := Splits(M, len(w.Kernels), step)
	if len(splits) == 0 {
		return Outcome{}, unavailable("%d SMs cannot be split %d ways in green partitions of %d", M, len(w.Kernels), step)
	}
	return b.bestOf(ctx, splits, func(split []int) (runResult, error) {
		start := func(i int) (Job, runtime.SMRange, error) {
			j, err := g.StartGreen(w.Kernels[i], split, i)
			return j, rangesOf(split)[i], err
		}
		return b.coRun(ctx, w.Kernels, start, false)
	})
}

// subset is the profile set of w's kernels, or nil with the reason.
func (b *Bench) subset(w Workload) (*plan.ProfileSet, string) {
	if b.Profiles == nil {
		return nil, "no profiles (give --profiles, or let the bench measure them)"
	}
	names := make([]string, len(w.Kernels))
	for i, k := range w.Kernels {
		names[i] = k.Name
	}
	ps, missing := b.Profiles.Subset(names)
	if ps == nil {
		return nil, fmt.Sprintf("no profile of %s", missing)
	}
	return ps, ""
}

// stm runs Liang's STM plan: each phase's kernels on their SM allocations
// (contiguous ranges in the phase's order), the next phase when all of a
// phase have ended. The makespan is the sum of the phases' makespans.
func (b *Bench) stm(ctx context.Context, w Workload) (Outcome, error) {
	ps, why := b.subset(w)
	if ps == nil {
		return Outcome{}, unavailable("%s", why)
	}
	p, err := plan.PlanSTM(ps, plan.STMOptions{})
	if err != nil {
		return Outcome{}, fmt.Errorf("planning: %w", err)
	}
	index := map[string]int{}
	for i, k := range w.Kernels {
		index[k.Name] = i
	}
	o := Outcome{Ends: make([]float64, len(w.Kernels))}
	var desc []string
	pred := p.PredictedMs
	o.PredictedMs = &pred
	offset := 0.0
	for pi, ph := range p.Phases {
		var ks []*Kernel
		var split []int
		for _, pk := range ph.Kernels {
			ks = append(ks, w.Kernels[index[pk.Name]])
			split = append(split, max(pk.SMs, 1))
		}
		if sum(split) > b.Dev.Info().SMs {
			return Outcome{}, fmt.Errorf("phase %d allocates %d SMs of %d", pi+1, sum(split), b.Dev.Info().SMs)
		}
		// A split names every kernel of the workload; a plan whose first
		// phase leaves some out (or runs one alone) has none.
		if pi == 0 && len(split) == len(w.Kernels) && len(split) > 1 {
			o.Split = split
		}
		desc = append(desc, phaseText(ks, split))
		r, err := b.median(ctx, func() (runResult, error) {
			return b.coRun(ctx, ks, startRanges(b.Dev, ks, rangesOf(split)), false)
		})
		if err != nil {
			return Outcome{}, fmt.Errorf("phase %d: %w", pi+1, err)
		}
		for i, k := range ks {
			o.Ends[index[k.Name]] = offset + r.ends[i]
		}
		offset += r.makespan
		o.WallMs += r.wall
	}
	o.MakespanMs = offset
	o.Notes = append(o.Notes, "phases: "+strings.Join(desc, " | "))
	if p.Fallback {
		o.Notes = append(o.Notes, "the STM plan fell back to sequential")
	}
	return o, nil
}
