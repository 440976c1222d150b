package serve_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/serve"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// TestStatusText: `slatec top`'s table for a daemon with a split pair (one
// moving), a process idle, one stuck, one whose native launches wait, and
// resizes (newest first), against testdata/top.golden.
func TestStatusText(t *testing.T) {
	busy := func(b float64) *float64 { return &b }
	at := time.Date(2026, 11, 26, 21, 29, 11, 8000000, time.UTC)
	st := &serve.Status{
		Daemon: "v0.test", PID: 4242, Socket: "/run/user/1000/slatec/serve.sock", SMs: 132,
		Policy: "planned per set of kernels (profiles), else overlap", MPS: serve.MPSState{Active: true},
		ResizeTimeoutMs: 100, UptimeS: 12.4, Running: 2,
		Clients: []serve.ClientStatus{
			{Client: 1, PID: 100, Name: "serve_fma_ms.placed", SMs: 92, Range: serve.Range{Lo: 40, Hi: 131}, Epoch: 7, Acked: true,
				Launches: 62, InFlight: 1, Kernel: "fma_chains", Class: "H_C", Busy: busy(0.97)},
			{Client: 2, PID: 101, Name: "serve_stream_ms", SMs: 40, Range: serve.Range{Lo: 0, Hi: 39}, Epoch: 8,
				Launches: 88, InFlight: 1, Kernel: "stream_triad", Busy: busy(0.93)},
			{Client: 3, PID: 102, Name: "serve_dep_ms", SMs: 132, Range: serve.Range{Lo: 0, Hi: 131}, Epoch: 9, Alone: true, Acked: true,
				Launches: 2, NativePending: true, Kernel: "dep_chains", Busy: busy(0.12)},
			{Client: 4, PID: 103, Name: "sgemm_tiled", SMs: 132, Range: serve.Range{Lo: 0, Hi: 131}, Epoch: 9, Alone: true, Acked: true, Idle: true,
				Launches: 21, Kernel: "sgemm_tiled"},
			{Client: 5, PID: 104, Name: "hung", Stuck: true, SMs: 132, Range: serve.Range{Lo: 0, Hi: 131}, Epoch: 3, Alone: true},
		},
		Resizes: []serve.ResizeRecord{
			{At: at, Client: 1, Name: "serve_fma_ms.placed", Epoch: 7, From: serve.Range{Lo: 0, Hi: 131}, To: serve.Range{Lo: 40, Hi: 131},
				NativeUs: 2300, LatencyUs: 2412, Outcome: "ok"},
			{At: at.Add(30 * time.Millisecond), Client: 2, Name: "serve_stream_ms", Epoch: 8, From: serve.Range{Lo: 0, Hi: 131},
				To: serve.Range{Lo: 0, Hi: 39}, Moved: 1, DrainUs: 138, LatencyUs: 304, Outcome: "ok"},
		},
	}
	var got bytes.Buffer
	st.WriteText(&got)
	golden := filepath.Join("testdata", "top.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, got.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got.String())
}
