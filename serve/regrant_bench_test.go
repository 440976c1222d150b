package serve

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	d.mu.Lock()
	cs := threeBusy(b, d) // (planned ahead, as Prepare does)
	b.ResetTimer()
	for i := range b.N {
		cs[0].idle = i%2 == 0 // every regrant changes the split
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
		assert.Equal(t, tc.want, got, "inflight %v", tc.inflight)
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
	require.Len(t, gs.ps, 3)
	assert.Equal(t, []uint64{3, 1, 2}, []uint64{gs.ps[0].c.id, gs.ps[1].c.id, gs.ps[2].c.id}, "push order")
	assert.Greater(t, gs.ps[0].g.Epoch, gs.ps[1].g.Epoch, "epochs follow registration, not the push order")
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

// threeBusy registers three busy processes of profiled kernels on d (d.mu
// held), their set planned ahead as Prepare does, and returns them in
// registration order.
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

// BenchmarkRegrantAfterGap times the decision (regrant and the first
// frame) after a gap, spent asleep or spinning, and reports its median
// (p50-us). Back to back it is BenchmarkRegrant's figure; after 5 ms the
// decision's code is out of the core's caches (26-40 us on this 2-core
// virtual machine, 4-8 us when the decision ran 1 ms before). A watch that
// spun and rehearsed the decision every millisecond to keep it warm made
// the GPU host's grants slower, not faster (bench/RESULTS.md,
// twenty-third session): this is the cost it was after.
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
