package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		p    Profile
		want Class
	}{
		{Profile{ComputeUtil: 0.05, MemUtil: 0.13}, ClassLC}, // QuasiRandom
		{Profile{ComputeUtil: 0.3, MemUtil: 0.1}, ClassMC},
		{Profile{ComputeUtil: 0.9, MemUtil: 0.1}, ClassHC},
		{Profile{ComputeUtil: 0.9, MemUtil: 0.62}, ClassMM}, // memory intensity takes priority
		{Profile{ComputeUtil: 0.0, MemUtil: 1.0}, ClassHM},  // Transpose
	} {
		if got := Classify(c.p); got != c.want {
			t.Errorf("Classify(%+v) = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestSlateTable(t *testing.T) {
	// Spot checks against PLANNER.md, including the asymmetric entries.
	for _, c := range []struct {
		run, cand Class
		want      bool
	}{
		{ClassLC, ClassLC, true}, {ClassLC, ClassHC, false}, {ClassLC, ClassHM, true},
		{ClassMC, ClassMM, false}, {ClassMC, ClassHM, true},
		{ClassHC, ClassHC, false}, {ClassHC, ClassHM, true}, {ClassHC, ClassMM, false},
		{ClassMM, ClassHC, true}, {ClassMM, ClassMC, false}, {ClassMM, ClassLC, true},
		{ClassHM, ClassHM, false}, {ClassHM, ClassMC, true}, {ClassHM, ClassHC, false},
	} {
		if got := SlateCoRun(c.run, c.cand); got != c.want {
			t.Errorf("SlateCoRun(%v, %v) = %v, want %v", c.run, c.cand, got, c.want)
		}
	}
	if SlateCoRun(Class(9), ClassLC) {
		t.Error("bad class co-runs")
	}
}

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		sms     int
		weights []float64
		want    []SMRange
	}{
		{132, []float64{1}, []SMRange{{0, 131}}},
		{132, []float64{1, 1}, []SMRange{{0, 65}, {66, 131}}},
		{132, []float64{1, 3}, []SMRange{{0, 32}, {33, 131}}},
		{132, []float64{1, 1, 1}, []SMRange{{0, 43}, {44, 87}, {88, 131}}},
		{10, []float64{1, 1, 1}, []SMRange{{0, 3}, {4, 6}, {7, 9}}},
		{4, []float64{1000, 1, 1}, []SMRange{{0, 1}, {2, 2}, {3, 3}}},
		{132, []float64{0, -1}, []SMRange{{0, 65}, {66, 131}}},
	} {
		got, err := Split(c.sms, c.weights)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Split(%d, %v) = %v, %v; want %v", c.sms, c.weights, got, err, c.want)
		}
	}
	if _, err := Split(2, []float64{1, 1, 1}); err == nil {
		t.Error("more tasks than SMs accepted")
	}
	// Property: ranges tile [0, sms) in order, each non-empty.
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 1000; i++ {
		sms := 1 + r.Intn(200)
		n := 1 + r.Intn(min(sms, 6))
		w := make([]float64, n)
		for k := range w {
			w[k] = r.Float64() * 10
		}
		got, err := Split(sms, w)
		if err != nil {
			t.Fatal(err)
		}
		lo := 0
		for _, g := range got {
			if g.Low != lo || g.High < g.Low {
				t.Fatalf("Split(%d,%v) = %v", sms, w, got)
			}
			lo = g.High + 1
		}
		if lo != sms {
			t.Fatalf("Split(%d,%v) = %v does not cover", sms, w, got)
		}
	}
}

// fakeExec is an Executor whose tasks end when the test says so. It checks
// the invariant the scheduler must keep: running tasks' ranges never
// overlap (a resize that shrinks returns only after the drain, and new
// tasks start after all resizes).
type fakeExec struct {
	t   *testing.T
	sms int

	mu      sync.Mutex
	tasks   map[string]*fakeRun
	started []string
	failOn  string
	resizes int
	chained []string
}

type fakeRun struct {
	x    *fakeExec
	name string
	rng  SMRange
	end  chan error
	done bool
	// after: started behind this run (ChainExecutor); not live before
	// it is done.
	after *fakeRun
}

// chainExec is a fakeExec that can also chain tasks (ChainExecutor).
type chainExec struct{ *fakeExec }

func (x chainExec) StartAfter(t *Task, r SMRange, prev Running) (Running, error) {
	p := prev.(*fakeRun)
	x.mu.Lock()
	x.chained = append(x.chained, t.Name+" after "+p.name)
	x.mu.Unlock()
	return x.start(t, r, p)
}

func newFakeExec(t *testing.T, sms int) *fakeExec {
	return &fakeExec{t: t, sms: sms, tasks: map[string]*fakeRun{}}
}

func (x *fakeExec) NumSMs() int { return x.sms }

func (x *fakeExec) Start(t *Task, r SMRange) (Running, error) { return x.start(t, r, nil) }

func (x *fakeExec) start(t *Task, r SMRange, after *fakeRun) (Running, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if t.Name == x.failOn {
		return nil, errors.New("injected start failure")
	}
	if !r.Valid(x.sms) {
		x.t.Errorf("start %s on invalid range %v", t.Name, r)
	}
	f := &fakeRun{x: x, name: t.Name, rng: r, end: make(chan error, 1), after: after}
	x.tasks[t.Name] = f
	x.started = append(x.started, t.Name)
	x.checkLocked()
	return f, nil
}

// checkLocked fails the test if live tasks overlap.
func (x *fakeExec) checkLocked() {
	var live []*fakeRun
	for _, f := range x.tasks {
		if !f.done && (f.after == nil || f.after.done) {
			live = append(live, f)
		}
	}
	for i, a := range live {
		for _, b := range live[i+1:] {
			if a.rng.Low <= b.rng.High && b.rng.Low <= a.rng.High {
				x.t.Errorf("overlapping ranges: %s %v and %s %v", a.name, a.rng, b.name, b.rng)
			}
		}
	}
}

func (f *fakeRun) Resize(ctx context.Context, r SMRange) error {
	f.x.mu.Lock()
	defer f.x.mu.Unlock()
	if f.done {
		return ErrJobFinished
	}
	grow := growPieces(f.rng, r) != nil
	f.rng = r
	f.x.resizes++
	if grow { // a grow comes after every other resize's drain
		f.x.checkLocked()
	}
	return nil
}

func (f *fakeRun) Wait(ctx context.Context) error {
	select {
	case err := <-f.end:
		f.x.mu.Lock()
		f.done = true
		f.x.checkLocked() // chained runs behind it are live now
		f.x.mu.Unlock()
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish ends a task. The scheduler learns of it asynchronously; wait for
// its handle.
func (x *fakeExec) finish(name string, err error) {
	x.mu.Lock()
	f := x.tasks[name]
	x.mu.Unlock()
	if f == nil {
		x.t.Fatalf("finish %s: not started", name)
	}
	f.end <- err
}

func (x *fakeExec) rangeOf(name string) SMRange {
	x.mu.Lock()
	defer x.mu.Unlock()
	if f := x.tasks[name]; f != nil {
		return f.rng
	}
	return SMRange{-1, -1}
}

func (x *fakeExec) isStarted(name string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.tasks[name] != nil
}

var profiles = map[Class]Profile{
	ClassLC: {ComputeUtil: 0.05, MemUtil: 0.05},
	ClassMC: {ComputeUtil: 0.4, MemUtil: 0.05},
	ClassHC: {ComputeUtil: 0.9, MemUtil: 0.05},
	ClassMM: {ComputeUtil: 0.3, MemUtil: 0.6},
	ClassHM: {ComputeUtil: 0.1, MemUtil: 0.95},
}

// harness runs a scheduler over a fake executor and records its events.
type harness struct {
	t  *testing.T
	x  *fakeExec
	s  *Scheduler
	mu sync.Mutex
	ev []Event
	h  map[string]*Handle
}

func newHarness(t *testing.T, sms int, opts SchedulerOptions) *harness {
	return newHarnessOn(t, sms, opts, false)
}

// newHarnessOn is newHarness, over a chainExec when chain is set.
func newHarnessOn(t *testing.T, sms int, opts SchedulerOptions, chain bool) *harness {
	hs := &harness{t: t, x: newFakeExec(t, sms), h: map[string]*Handle{}}
	opts.OnEvent = func(e Event) {
		hs.mu.Lock()
		hs.ev = append(hs.ev, e)
		hs.mu.Unlock()
	}
	var ex Executor = hs.x
	if chain {
		ex = chainExec{hs.x}
	}
	s, err := NewScheduler(ex, opts)
	if err != nil {
		t.Fatal(err)
	}
	hs.s = s
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// Close waits for every task: end the ones still running (and
		// those that start as the queue drains).
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Millisecond):
				}
				hs.x.mu.Lock()
				for _, f := range hs.x.tasks {
					if !f.done && len(f.end) == 0 {
						f.end <- nil
					}
				}
				hs.x.mu.Unlock()
			}
		}()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return hs
}

func (hs *harness) submit(name string, c Class, weight float64) *Handle {
	hs.t.Helper()
	h, err := hs.s.Submit(&Task{Name: name, Profile: profiles[c], Weight: weight})
	if err != nil {
		hs.t.Fatal(err)
	}
	if h.Class() != c {
		hs.t.Fatalf("%s classified %v, want %v", name, h.Class(), c)
	}
	hs.h[name] = h
	hs.settle()
	return h
}

// settle waits until the scheduler has processed everything posted so far.
func (hs *harness) settle() {
	done := make(chan struct{})
	hs.s.mu.RLock()
	if hs.s.closed {
		hs.s.mu.RUnlock()
		return
	}
	hs.s.post(func() { close(done) })
	hs.s.mu.RUnlock()
	<-done
}

func (hs *harness) finish(name string) {
	hs.t.Helper()
	hs.x.finish(name, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.h[name].Wait(ctx); err != nil {
		hs.t.Fatalf("%s: %v", name, err)
	}
	hs.settle()
}

func (hs *harness) wantRange(name string, r SMRange) {
	hs.t.Helper()
	if got := hs.x.rangeOf(name); got != r {
		hs.t.Errorf("%s on %v, want %v", name, got, r)
	}
}

func (hs *harness) wantQueued(name string) {
	hs.t.Helper()
	if hs.x.isStarted(name) {
		hs.t.Errorf("%s started, want it queued", name)
	}
}

func TestSchedulerSoloThenCoRunThenGrow(t *testing.T) {
	hs := newHarness(t, 132, SchedulerOptions{})
	hs.submit("lc", ClassLC, 0)
	hs.wantRange("lc", SMRange{0, 131}) // alone: all SMs
	hs.submit("hm", ClassHM, 0)         // L_C row, H_M column: corun
	hs.wantRange("lc", SMRange{0, 65})
	hs.wantRange("hm", SMRange{66, 131})
	hs.finish("lc")
	hs.wantRange("hm", SMRange{0, 131}) // the survivor grows at once
	if got := hs.h["lc"].Ranges(); fmt.Sprint(got) != "[[0,131] [0,65]]" {
		t.Errorf("lc ranges %v", got)
	}
}

// Tasks that arrive together are decided together: the pair starts on its
// split at once, with no resize of the first.
func TestSchedulerSubmitAll(t *testing.T) {
	hs := newHarness(t, 132, SchedulerOptions{})
	got, err := hs.s.SubmitAll(&Task{Name: "lc", Profile: profiles[ClassLC]}, &Task{Name: "hm", Profile: profiles[ClassHM]},
		&Task{Name: "hc", Profile: profiles[ClassHC]})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range got {
		hs.h[h.Name()] = h
	}
	hs.settle()
	hs.wantRange("lc", SMRange{0, 65})
	hs.wantRange("hm", SMRange{66, 131})
	hs.wantQueued("hc") // MaxCoRun 2
	if r := hs.h["lc"].Ranges(); fmt.Sprint(r) != "[[0,65]]" {
		t.Errorf("lc ranges %v, want one start and no resize", r)
	}
	hs.finish("lc")
	hs.wantRange("hm", SMRange{0, 131}) // H_M row, H_C column: solo
	hs.wantQueued("hc")
	if _, err := hs.s.SubmitAll(&Task{Name: "x"}, nil); err == nil {
		t.Error("SubmitAll with a nil task: no error")
	}
}

// A task that must wait for one running alone is started behind it in GPU
// order (ChainExecutor), on the range it would get, so no host round trip
// separates them; later arrivals wait for it. NoChain keeps it queued.
func TestSchedulerChainsSoloTasks(t *testing.T) {
	hs := newHarnessOn(t, 132, SchedulerOptions{}, true)
	hs.submit("hc", ClassHC, 0)
	hs.submit("lc", ClassLC, 0) // H_C row, L_C column: solo, chained behind hc
	hs.wantRange("hc", SMRange{0, 131})
	hs.wantRange("lc", SMRange{0, 131})
	hs.submit("hm", ClassHM, 0) // would co-run with hc, but the next set is chained
	hs.wantQueued("hm")
	hs.x.mu.Lock()
	got := fmt.Sprint(hs.x.chained)
	hs.x.mu.Unlock()
	if got != "[lc after hc]" {
		t.Errorf("chained %s", got)
	}
	hs.finish("hc")
	// lc runs; hm (L_C row, H_M column: corun) joins it now.
	hs.wantRange("lc", SMRange{0, 65})
	hs.wantRange("hm", SMRange{66, 131})
	if r := hs.h["lc"].Ranges(); fmt.Sprint(r) != "[[0,131] [0,65]]" {
		t.Errorf("lc ranges %v", r)
	}

	off := newHarnessOn(t, 132, SchedulerOptions{NoChain: true}, true)
	off.submit("hc", ClassHC, 0)
	off.submit("lc", ClassLC, 0)
	off.wantQueued("lc")
}

func TestSchedulerSoloWhenNotComplementary(t *testing.T) {
	hs := newHarness(t, 132, SchedulerOptions{})
	hs.submit("hc", ClassHC, 0)
	hs.submit("lc", ClassLC, 0) // H_C row, L_C column: solo
	hs.wantQueued("lc")
	hs.wantRange("hc", SMRange{0, 131})
	hs.finish("hc")
	hs.wantRange("lc", SMRange{0, 131})
}

func TestSchedulerLooksDownTheQueue(t *testing.T) {
	hs := newHarness(t, 132, SchedulerOptions{})
	hs.submit("hc", ClassHC, 0)
	hs.submit("mc", ClassMC, 0) // not complementary to H_C
	hs.submit("hm", ClassHM, 0) // complementary to H_C: overtakes mc
	hs.wantQueued("mc")
	hs.wantRange("hc", SMRange{0, 65})
	hs.wantRange("hm", SMRange{66, 131})
	hs.finish("hm")
	// mc still cannot join hc; hc grows back.
	hs.wantQueued("mc")
	hs.wantRange("hc", SMRange{0, 131})
	hs.finish("hc")
	hs.wantRange("mc", SMRange{0, 131})
}

func TestSchedulerAsymmetricTable(t *testing.T) {
	// M_M running accepts H_C ...
	hs := newHarness(t, 100, SchedulerOptions{})
	hs.submit("mm", ClassMM, 0)
	hs.submit("hc", ClassHC, 0)
	hs.wantRange("hc", SMRange{50, 99})
	// ... but H_C running does not accept M_M.
	hs2 := newHarness(t, 100, SchedulerOptions{})
	hs2.submit("hc", ClassHC, 0)
	hs2.submit("mm", ClassMM, 0)
	hs2.wantQueued("mm")
}

func TestSchedulerAging(t *testing.T) {
	hs := newHarness(t, 132, SchedulerOptions{MaxSkips: 1})
	hs.submit("hc", ClassHC, 0)
	hs.submit("mc", ClassMC, 0)
	hs.submit("hm1", ClassHM, 0) // overtakes mc (skips 0 -> 1)
	hs.wantRange("hm1", SMRange{66, 131})
	hs.finish("hm1")
	hs.submit("hm2", ClassHM, 0) // mc has been overtaken once: no more
	hs.wantQueued("hm2")
	hs.wantQueued("mc")
	hs.finish("hc")
	// mc starts (head), then hm2 joins it (M_C row, H_M column: corun).
	hs.wantRange("mc", SMRange{0, 65})
	hs.wantRange("hm2", SMRange{66, 131})
}

func TestSchedulerWeights(t *testing.T) {
	hs := newHarness(t, 132, SchedulerOptions{})
	hs.submit("a", ClassLC, 1)
	hs.submit("b", ClassLC, 3)
	hs.wantRange("a", SMRange{0, 32})
	hs.wantRange("b", SMRange{33, 131})
}

func TestSchedulerMaxCoRun(t *testing.T) {
	hs := newHarness(t, 90, SchedulerOptions{MaxCoRun: 3})
	hs.submit("a", ClassLC, 0)
	hs.submit("b", ClassLC, 0)
	hs.submit("c", ClassLC, 0)
	hs.submit("d", ClassLC, 0)
	hs.wantRange("a", SMRange{0, 29})
	hs.wantRange("b", SMRange{30, 59})
	hs.wantRange("c", SMRange{60, 89})
	hs.wantQueued("d")
	hs.finish("b")
	hs.wantRange("a", SMRange{0, 29})
	hs.wantRange("c", SMRange{30, 59})
	hs.wantRange("d", SMRange{60, 89})
}

func TestSchedulerStartFailure(t *testing.T) {
	hs := newHarness(t, 132, SchedulerOptions{})
	hs.x.failOn = "bad"
	hs.submit("lc", ClassLC, 0)
	h := hs.submit("bad", ClassLC, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err == nil {
		t.Fatal("failed start reported no error")
	}
	// The failed task's SMs went back to lc.
	hs.wantRange("lc", SMRange{0, 131})
	hs.submit("lc2", ClassLC, 0)
	hs.wantRange("lc2", SMRange{66, 131})
}

func TestSchedulerTaskError(t *testing.T) {
	hs := newHarness(t, 132, SchedulerOptions{})
	hs.submit("a", ClassLC, 0)
	boom := errors.New("CUDA_ERROR_ILLEGAL_ADDRESS (simulated)")
	hs.x.finish("a", boom)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.h["a"].Wait(ctx); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
}

// TestSchedulerConcurrentSubmit drives the scheduler from many goroutines
// while tasks end at random; run with -race. The executor checks that
// ranges never overlap; every handle must end.
func TestSchedulerConcurrentSubmit(t *testing.T) {
	x := newFakeExec(t, 132)
	s, err := NewScheduler(x, SchedulerOptions{MaxCoRun: 3})
	if err != nil {
		t.Fatal(err)
	}
	classes := []Class{ClassLC, ClassMC, ClassHC, ClassMM, ClassHM}
	var wg sync.WaitGroup
	handles := make(chan *Handle, 200)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(g)))
			for i := 0; i < 25; i++ {
				name := fmt.Sprintf("g%d-%d", g, i)
				h, err := s.Submit(&Task{Name: name, Profile: profiles[classes[r.Intn(len(classes))]], Weight: 1 + r.Float64()})
				if err != nil {
					t.Error(err)
					return
				}
				handles <- h
			}
		}(g)
	}
	// Finisher: end started tasks in random order until all handles end.
	stop := make(chan struct{})
	go func() {
		r := rand.New(rand.NewSource(99))
		for {
			select {
			case <-stop:
				return
			default:
			}
			x.mu.Lock()
			var live []*fakeRun
			for _, f := range x.tasks {
				if !f.done && len(f.end) == 0 {
					live = append(live, f)
				}
			}
			x.mu.Unlock()
			if len(live) > 0 {
				live[r.Intn(len(live))].end <- nil
			}
			time.Sleep(time.Duration(r.Intn(200)) * time.Microsecond)
		}
	}()
	wg.Wait()
	close(handles)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n := 0
	for h := range handles {
		if err := h.Wait(ctx); err != nil {
			t.Fatalf("%s: %v", h.Name(), err)
		}
		n++
	}
	close(stop)
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n != 200 || len(x.started) != 200 {
		t.Fatalf("%d handles, %d started", n, len(x.started))
	}
	if _, err := s.Submit(&Task{Name: "late"}); !errors.Is(err, ErrSchedulerClosed) {
		t.Errorf("Submit after Close: %v", err)
	}
	t.Logf("%d tasks, %d resizes", n, x.resizes)
}

// growExec is a fakeExec whose runs can arm deferred grows
// (GrowingRunning); it records each arm.
type growExec struct {
	*fakeExec
	armMu sync.Mutex
	arms  []string
}

type growRun struct {
	*fakeRun
	gx *growExec
}

func (x *growExec) Start(t *Task, r SMRange) (Running, error) {
	run, err := x.fakeExec.Start(t, r)
	if err != nil {
		return nil, err
	}
	return growRun{run.(*fakeRun), x}, nil
}

func (g growRun) GrowAtEnd(trigger Running, r SMRange) error {
	g.gx.armMu.Lock()
	defer g.gx.armMu.Unlock()
	g.gx.arms = append(g.gx.arms, fmt.Sprintf("%s when %s ends: %v", g.name, trigger.(growRun).name, r))
	return nil
}

func (x *growExec) armed() []string {
	x.armMu.Lock()
	defer x.armMu.Unlock()
	return append([]string(nil), x.arms...)
}

// The scheduler arms a grow on the GPU for each of two running tasks only
// once nothing else can happen: closed to new tasks, nothing queued.
func TestSchedulerArmsDeferredGrows(t *testing.T) {
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoDeferredGrow=%v", off), func(t *testing.T) {
			x := &growExec{fakeExec: newFakeExec(t, 100)}
			s, err := NewScheduler(x, SchedulerOptions{MaxCoRun: 2, NoDeferredGrow: off})
			require.NoError(t, err)
			hs, err := s.SubmitAll(&Task{Name: "lc", Profile: profiles[ClassLC]},
				&Task{Name: "hm", Profile: profiles[ClassHM]}, &Task{Name: "lc2", Profile: profiles[ClassLC]})
			require.NoError(t, err)
			closed := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				closed <- s.Close(ctx)
			}()
			sync := func() {
				done := make(chan struct{})
				s.post(func() { close(done) })
				<-done
			}
			for {
				s.mu.RLock()
				c := s.closed
				s.mu.RUnlock()
				if c {
					break
				}
				time.Sleep(100 * time.Microsecond)
			}
			sync()
			assert.Empty(t, x.armed(), "lc2 is queued: its start could come between")
			x.finish("lc", nil)
			require.NoError(t, hs[0].Wait(context.Background()))
			sync()
			if off {
				assert.Empty(t, x.armed())
			} else {
				assert.Equal(t, []string{"hm when lc2 ends: [0,99]", "lc2 when hm ends: [0,99]"}, x.armed())
			}
			x.finish("lc2", nil)
			x.finish("hm", nil)
			require.NoError(t, <-closed)
			assert.Len(t, x.armed(), map[bool]int{false: 2, true: 0}[off], "no arms with one task left")
		})
	}
}
