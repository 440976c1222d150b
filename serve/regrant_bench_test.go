package serve

import (
	"path/filepath"
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
	d, err := New(Config{Socket: filepath.Join(b.TempDir(), "s.sock"), Profiles: ps, MPS: &MPSState{Active: true}, IdleAfter: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		d.mu.Lock()
		clear(d.conns) // (fake connections: nothing to tell)
		d.mu.Unlock()
		d.Close()
	}()
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
