package corun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary be an MPS child: ProcessMPS re-executes it
// with CORUN_TEST_MPS_CHILD set, and it serves the kernel named last on
// its command line on a fake device.
func TestMain(m *testing.M) {
	if os.Getenv("CORUN_TEST_MPS_CHILD") != "" {
		os.Exit(mpsTestChild())
	}
	os.Exit(m.Run())
}

func mpsTestChild() int {
	name := os.Args[len(os.Args)-1]
	if os.Getenv("CORUN_TEST_MPS_CHILD") == "env" {
		// The parent's environment reached us: the daemon's pipes and the
		// thread percentage.
		if os.Getenv("CUDA_MPS_PIPE_DIRECTORY") != os.Getenv("SLATEC_MPS_PIPE_DIRECTORY") || os.Getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") != "30" {
			fmt.Println("error wrong environment: " + os.Getenv("CUDA_MPS_PIPE_DIRECTORY") + " " + os.Getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"))
			return 1
		}
	}
	f := NewFake(FakeOptions{})
	defer f.Close()
	for _, k := range Catalogue() {
		if k.Name == name {
			if err := ServeMPSChild(context.Background(), f, k, os.Stdin, os.Stdout, time.Now); err != nil {
				return 1
			}
			return 0
		}
	}
	fmt.Println("error no kernel " + name)
	return 1
}

func testMPS(t *testing.T) *ProcessMPS {
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Setenv("CORUN_TEST_MPS_CHILD", "1")
	p := &ProcessMPS{Exe: exe, Args: []string{"-test.run=^$", "--"}, Ready: 30 * time.Second}
	t.Cleanup(p.Close)
	return p
}

// The parent and child sides of ProcessMPS agree: the children start
// together, report their GPU times, and are reused across repetitions.
func TestProcessMPS(t *testing.T) {
	p := testMPS(t)
	ks := kernelsByName(t, "triad_f4", "fma_chain")
	first := 0
	for rep := range 2 {
		ends, mk, wall, err := p.Run(context.Background(), ks, 50)
		require.NoError(t, err)
		require.Len(t, ends, 2)
		assert.Greater(t, wall, 0.0, "rep %d: the children report when they saw their ends", rep)
		// The fake's solo times (1.0 and 2.5 ms) plus the children's
		// start skew, which is well under a second.
		assert.InDelta(t, 1.0, ends[0], 1000, "rep %d", rep)
		assert.GreaterOrEqual(t, ends[0], 1.0-1e-6)
		assert.GreaterOrEqual(t, ends[1], 2.5-1e-6)
		assert.Equal(t, max(ends[0], ends[1]), mk)
		if rep == 0 {
			first = p.children[0].cmd.Process.Pid
		} else {
			assert.Equal(t, first, p.children[0].cmd.Process.Pid, "children are reused")
		}
	}
	pid := p.children[0].cmd.Process.Pid
	_, _, _, err := p.Run(context.Background(), ks, 25)
	require.NoError(t, err)
	assert.NotEqual(t, pid, p.children[0].cmd.Process.Pid, "a new percentage starts new children")
}

func TestProcessMPSChildFails(t *testing.T) {
	p := testMPS(t)
	_, _, _, err := p.Run(context.Background(), []*Kernel{{Name: "nope"}}, 0)
	assert.ErrorContains(t, err, "no kernel nope")
	assert.Empty(t, p.children, "failed children are cleaned up")
}

func TestServeMPSChild(t *testing.T) {
	f := NewFake(FakeOptions{})
	defer f.Close()
	k := kernelsByName(t, "fma_chain")[0]
	var out strings.Builder
	at := time.Unix(100, 0)
	require.NoError(t, ServeMPSChild(context.Background(), f, k, strings.NewReader("go\nnoise\ngo\n"), &out, func() time.Time { return at }))
	assert.Equal(t, "ready\ndone 100000000000 2500000 100000000000\ndone 100000000000 2500000 100000000000\n", out.String())
	assert.Equal(t, 3, f.Starts(), "a warm-up and two runs")
	assert.Equal(t, 3, f.NativeStarts(), "the kernel as written, as the baselines run it")
}

func TestMPSDaemonRunning(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CUDA_MPS_PIPE_DIRECTORY", dir)
	ok, why := MPSDaemonRunning()
	assert.False(t, ok)
	assert.Contains(t, why, "no MPS daemon (no control pipe in "+dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "control"), nil, 0o600))
	ok, why = MPSDaemonRunning()
	assert.True(t, ok, why)
	assert.Empty(t, (&ProcessMPS{}).Unavailable())

	// The bench's own variable wins, so its process need not be a client.
	own := t.TempDir()
	t.Setenv("SLATEC_MPS_PIPE_DIRECTORY", own)
	assert.Equal(t, own, MPSPipeDir())
	ok, _ = MPSDaemonRunning()
	assert.False(t, ok)
}

// Children are told where the daemon is.
func TestProcessMPSChildEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SLATEC_MPS_PIPE_DIRECTORY", dir)
	t.Setenv("CUDA_MPS_PIPE_DIRECTORY", "")
	p := testMPS(t)
	t.Setenv("CORUN_TEST_MPS_CHILD", "env")
	_, _, _, err := p.Run(context.Background(), kernelsByName(t, "triad_f4"), 30)
	require.NoError(t, err)
}
