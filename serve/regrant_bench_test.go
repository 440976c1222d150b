package serve

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/slatec/slatec/plan"
)

// BenchmarkRegrant is the daemon's decision for a move: three busy
// processes of profiled kernels re-split (the part of a grant's delivery
// between the push's stamp and its frame's write, less the write).
func BenchmarkRegrant(b *testing.B) {
	ps, err := plan.ReadProfileFile(filepath.Join("..", "bench", "results", "raw", "serve-profiles-5f1612a-h100.json"))
	if err != nil {
		b.Skip(err)
	}
	d := newFakeConnDaemon(b, Config{Profiles: ps, MPS: &MPSState{Active: true}, IdleAfter: -1})
	kernels := []string{"stream_triad", "fma_chains", "dep_chains"}
	now := time.Now()
	for i, k := range kernels {
		c := &conn{d: d, id: uint64(i + 1), planKernel: k, kernel: k}
		c.meter.advance(now.Add(-time.Second))
		c.meter.add(now, 1000, 2)
		d.conns[c] = struct{}{}
	}
	d.pol.planOf(kernels) // planned ahead, as Prepare does
	d.mu.Lock()
	b.ResetTimer()
	for i := range b.N {
		// Alternate a process's idleness so that every regrant changes the split.
		for c := range d.conns {
			if c.id == 1 {
				c.idle = i%2 == 0
			}
		}
		if gs := d.regrantLocked(nil); len(gs.ps) == 0 {
			b.Fatal("no grant changed")
		}
	}
	b.StopTimer()
	d.mu.Unlock()
}

// TestRunningFirst: pushes to clients with a served launch running go
// first, in registration order, then the others in theirs.
func TestRunningFirst(t *testing.T) {
	for _, tc := range []struct {
		inflight []int
		want     []uint64
	}{
		{[]int{0, 0, 1}, []uint64{3, 1, 2}},
		{[]int{1, 0, 1}, []uint64{1, 3, 2}},
		{[]int{0, 2, 0, 1}, []uint64{2, 4, 1, 3}},
		{[]int{1, 1}, []uint64{1, 2}},
		{[]int{0, 0}, []uint64{1, 2}},
		{nil, nil},
	} {
		var ps []push
		for i, n := range tc.inflight {
			ps = append(ps, push{c: &conn{id: uint64(i + 1), inflight: n}})
		}
		runningFirst(ps)
		var got []uint64
		for _, p := range ps {
			got = append(got, p.c.id)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("inflight %v: order %v, want %v", tc.inflight, got, tc.want)
		}
	}
}

// TestRegrantPushesRunningLaunchFirst: a split that changes every
// client's grant pushes first to the one whose served launch runs.
func TestRegrantPushesRunningLaunchFirst(t *testing.T) {
	d := newFakeConnDaemon(t, Config{SMs: 132, IdleAfter: -1})
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, k := range []string{"a", "b", "c"} {
		c := &conn{d: d, id: uint64(i + 1), planKernel: k, kernel: k}
		if i == 2 {
			c.inflight = 1
		}
		d.conns[c] = struct{}{}
	}
	gs := d.regrantLocked(nil)
	if len(gs.ps) != 3 {
		t.Fatalf("%d pushes, want 3", len(gs.ps))
	}
	if gs.ps[0].c.id != 3 || gs.ps[1].c.id != 1 || gs.ps[2].c.id != 2 {
		t.Errorf("push order %d %d %d, want 3 1 2", gs.ps[0].c.id, gs.ps[1].c.id, gs.ps[2].c.id)
	}
	if gs.ps[0].g.Epoch <= gs.ps[1].g.Epoch {
		t.Errorf("epochs follow registration, not the push order: %d, %d", gs.ps[0].g.Epoch, gs.ps[1].g.Epoch)
	}
}

// newFakeConnDaemon is a daemon (on a socket in a temporary directory)
// whose tests add conns without connections: they are forgotten before
// it closes, with nothing to tell them.
func newFakeConnDaemon(tb testing.TB, cfg Config) *Daemon {
	tb.Helper()
	cfg.Socket = filepath.Join(tb.TempDir(), "s.sock")
	d, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		d.mu.Lock()
		clear(d.conns)
		d.mu.Unlock()
		d.Close()
	})
	return d
}

// threeBusy registers three busy profiled processes on d (d.mu held), as
// BenchmarkRegrant does, and returns them in registration order.
func threeBusy(tb testing.TB, d *Daemon) []*conn {
	tb.Helper()
	kernels := []string{"stream_triad", "fma_chains", "dep_chains"}
	now := time.Now()
	var cs []*conn
	for i, k := range kernels {
		c := &conn{d: d, id: uint64(i + 1), planKernel: k, kernel: k}
		c.meter.advance(now.Add(-time.Second))
		c.meter.add(now, 1000, 2)
		d.conns[c] = struct{}{}
		cs = append(cs, c)
	}
	d.pol.planOf(kernels)
	return cs
}

// TestRehearsalChangesNothing: a rehearsal decides and encodes, and leaves
// the epochs, grants, owed acks and the split as they were; the regrant
// it rehearses then changes them.
func TestRehearsalChangesNothing(t *testing.T) {
	ps, err := plan.ReadProfileFile(filepath.Join("..", "bench", "results", "raw", "serve-profiles-5f1612a-h100.json"))
	if err != nil {
		t.Skip(err)
	}
	d := newFakeConnDaemon(t, Config{Profiles: ps, MPS: &MPSState{Active: true}, IdleAfter: -1})
	d.mu.Lock()
	defer d.mu.Unlock()
	cs := threeBusy(t, d)
	if gs := d.regrantLocked(nil); len(gs.ps) != 3 || !d.split {
		t.Fatalf("first regrant: %d pushes, split %v; want 3, split", len(gs.ps), d.split)
	}
	cs[0].idle = true // a regrant now would re-split the other two
	type state struct {
		epoch    uint64
		grants   []Grant
		owes     []owed
		split    bool
		splitAt  time.Time
		splitSet string
	}
	snap := func() state {
		s := state{epoch: d.epochs.Load(), split: d.split, splitAt: d.splitAt, splitSet: d.splitSet}
		for _, c := range cs {
			s.grants = append(s.grants, c.grant)
			s.owes = append(s.owes, c.owes)
		}
		return s
	}
	before := snap()
	d.rehearseLocked()
	if after := snap(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the rehearsal changed the daemon:\n before %+v\n after  %+v", before, after)
	}
	if len(d.rehearsal) == 0 {
		t.Error("the rehearsal encoded no frame")
	}
	if gs := d.regrantLocked(nil); len(gs.ps) == 0 || fmt.Sprint(snap()) == fmt.Sprint(before) {
		t.Errorf("the regrant after the rehearsal changed nothing (%d pushes)", len(gs.ps))
	}
}

// TestHotLocked: the watch spins with two processes or more, one of them
// with a served launch running, as Config.Spin says.
func TestHotLocked(t *testing.T) {
	for _, tc := range []struct {
		spin    Spin
		clients int
		running bool
		ranAgo  time.Duration // a note said a launch ran (0: never)
		want    bool
	}{
		{SpinOn, 2, true, 0, true},
		{SpinOn, 2, false, 0, false},
		{SpinOn, 2, false, hotLinger / 4, true},
		{SpinOn, 2, false, 2 * hotLinger, false},
		{SpinOn, 1, true, 0, false},
		{SpinOff, 3, true, 0, false},
		{SpinAuto, 2, true, 0, spinPays(2, runtime.NumCPU())},
	} {
		d := newFakeConnDaemon(t, Config{SMs: 132, IdleAfter: -1, Spin: tc.spin})
		d.mu.Lock()
		for i := range tc.clients {
			c := &conn{d: d, id: uint64(i + 1)}
			if i == tc.clients-1 && tc.running {
				c.inflight = 1
			}
			d.conns[c] = struct{}{}
		}
		d.conns[&conn{d: d}] = struct{}{} // connected, not registered: not counted
		if tc.ranAgo > 0 {
			d.ranAt = time.Now().Add(-tc.ranAgo)
		}
		if got := d.hotLocked(); got != tc.want {
			t.Errorf("spin %v, %d clients, running %v, ran %v ago: hot %v, want %v", tc.spin, tc.clients, tc.running, tc.ranAgo, got, tc.want)
		}
		d.mu.Unlock()
	}
}

func TestSpinPays(t *testing.T) {
	for _, tc := range []struct {
		clients, cores int
		want           bool
	}{{2, 2, false}, {2, 8, false}, {2, 10, true}, {3, 14, true}, {3, 13, false}, {4, 16, false}, {4, 18, true}} {
		if got := spinPays(tc.clients, tc.cores); got != tc.want {
			t.Errorf("spinPays(%d clients, %d cores) = %v, want %v", tc.clients, tc.cores, got, tc.want)
		}
	}
}

// TestWaitTickRehearsesWhileHot: a hot wait rehearses the decision until
// the tick, returns false once stop is closed, and a wait that is not
// hot only waits.
func TestWaitTickRehearsesWhileHot(t *testing.T) {
	d := newFakeConnDaemon(t, Config{SMs: 132, IdleAfter: -1, Spin: SpinOn})
	d.mu.Lock()
	for i := range 2 {
		d.conns[&conn{d: d, id: uint64(i + 1), inflight: 1, kernel: "k", planKernel: "k"}] = struct{}{}
	}
	d.mu.Unlock()
	tick := make(chan time.Time, 1)
	go func() { time.Sleep(5 * hotRehearse); tick <- time.Now() }()
	stop := make(chan struct{})
	if !d.waitTick(stop, tick, true) {
		t.Fatal("waitTick returned false before stop closed")
	}
	d.mu.Lock()
	n := len(d.rehearsal)
	d.rehearsal = d.rehearsal[:0]
	d.mu.Unlock()
	if n == 0 {
		t.Error("a hot wait of 5 rehearsal periods rehearsed nothing")
	}
	close(stop)
	if d.waitTick(stop, tick, true) {
		t.Error("waitTick returned true after stop closed")
	}
	go func() { tick <- time.Now() }()
	if !d.waitTick(make(chan struct{}), tick, false) {
		t.Error("a cold wait returned false")
	}
	if len(d.rehearsal) != 0 {
		t.Error("a cold wait rehearsed")
	}
}

// BenchmarkRegrantAfterGap times the decision (regrant and the first
// frame) after a gap, spent asleep or spinning, and reports its median
// (p50-us): what a spinning watch's rehearsals buy. Hot, back to back,
// it is BenchmarkRegrant's figure; after 5 ms the decision's code is out
// of the core's caches (36-40 us on this 2-core virtual machine, 8 us
// with a rehearsal every 1-2 ms; bench/RESULTS.md, twenty-third session).
func BenchmarkRegrantAfterGap(b *testing.B) {
	ps, err := plan.ReadProfileFile(filepath.Join("..", "bench", "results", "raw", "serve-profiles-5f1612a-h100.json"))
	if err != nil {
		b.Skip(err)
	}
	for _, tc := range []struct {
		name string
		gap  time.Duration
		spin bool
	}{{"back-to-back", 0, false}, {"spin-1ms", time.Millisecond, true}, {"spin-5ms", 5 * time.Millisecond, true}, {"sleep-5ms", 5 * time.Millisecond, false}} {
		b.Run(tc.name, func(b *testing.B) {
			d := newFakeConnDaemon(b, Config{Profiles: ps, MPS: &MPSState{Active: true}, IdleAfter: -1})
			d.mu.Lock()
			cs := threeBusy(b, d)
			d.mu.Unlock()
			var us []float64
			for i := range b.N {
				if tc.spin {
					for end := time.Now().Add(tc.gap); time.Now().Before(end); {
					}
				} else if tc.gap > 0 {
					time.Sleep(tc.gap)
				}
				t0 := monoNanos()
				d.mu.Lock()
				cs[0].idle = i%2 == 0 // every regrant changes the split
				gs := d.regrantLocked(nil)
				d.mu.Unlock()
				_ = appendGrant(nil, gs.ps[0].g)
				us = append(us, float64(monoNanos()-t0)/1000)
			}
			slices.Sort(us)
			b.ReportMetric(us[len(us)/2], "p50-us")
		})
	}
}
