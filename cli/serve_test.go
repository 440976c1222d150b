package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/serve"
	"github.com/slatec/slatec/serve/client"
)

func shortSocket(t *testing.T) string {
	dir, err := os.MkdirTemp("", "slcli")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "d", "serve.sock")
}

// startServe runs `slatec serve` until the returned stop is called.
func startServe(t *testing.T, f serveFlags) (stop func() error, log *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log = &bytes.Buffer{}
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, log, f) }() // read log only after stop
	deadline := time.Now().Add(3 * time.Second)
	for {
		if _, err := os.Stat(f.socket); err == nil {
			break
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve ended at start: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("serve did not listen")
		}
		time.Sleep(time.Millisecond)
	}
	var stopped bool
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(3 * time.Second):
			t.Fatal("serve did not stop")
			return nil
		}
	}
	t.Cleanup(func() { stop() })
	return stop, log
}

func TestServeAndTop(t *testing.T) {
	sock := shortSocket(t)
	stop, log := startServe(t, serveFlags{socket: sock, sms: 64, resizeTimeout: 100 * time.Millisecond})

	c, err := client.Connect(client.Options{Socket: sock, Name: "bench", HandshakeTimeout: 2 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, serve.Range{Lo: 0, Hi: 63}, c.Grant().Range)
	assert.True(t, c.Grant().Alone)
	require.NoError(t, c.Load(7, 1, "saxpy", "M_M"))
	// Load notes are not answered: wait until the daemon shows it.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		code, out, _ := slatec(t, "", "top", "--socket", sock)
		if code == 0 && strings.Contains(out, "saxpy M_M") || time.Now().After(deadline) {
			break
		}
	}

	code, out, errs := slatec(t, "", "top", "--socket", sock)
	assert.Equal(t, 0, code, errs)
	assert.Contains(t, out, "64 SMs")
	assert.Contains(t, out, "bench")
	assert.Contains(t, out, "0:63")
	assert.Contains(t, out, "native")
	assert.Contains(t, out, "saxpy M_M (1 running)")

	code, out, errs = slatec(t, "", "serve", "--status", "--json", "--socket", sock)
	assert.Equal(t, 0, code, errs)
	var st serve.Status
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	require.Len(t, st.Clients, 1)
	assert.Equal(t, 64, st.Clients[0].SMs)
	assert.Equal(t, 1, st.Running)

	// A second daemon on the same socket is refused.
	code, _, errs = slatec(t, "", "serve", "--socket", sock, "--sms", "64")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "another daemon answers")

	// Stopping tells the client and removes the socket.
	require.NoError(t, stop())
	select {
	case <-c.Lost():
	case <-time.After(2 * time.Second):
		t.Fatal("client not told of the shutdown")
	}
	_, err = os.Stat(sock)
	assert.True(t, os.IsNotExist(err), "socket left: %v", err)
	assert.Contains(t, log.String(), "listening on "+sock)
	assert.Contains(t, log.String(), "client 1 joined")
	assert.Contains(t, log.String(), "stopping")
}

func TestTopWithoutDaemon(t *testing.T) {
	sock := shortSocket(t)
	t0 := time.Now()
	code, out, errs := slatec(t, "", "top", "--socket", sock)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "no slatec serve daemon on "+sock)
	assert.Less(t, time.Since(t0), time.Second)
}

func TestServeFlagsAndMPSWarning(t *testing.T) {
	sock := shortSocket(t)
	code, _, errs := slatec(t, "", "serve", "--socket", sock, "--sms", "-1")
	assert.Equal(t, 2, code, errs)
	code, _, errs = slatec(t, "", "serve", "--socket", sock, "--unplanned", "split")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "--unplanned must be auto, overlap or equal")
	// A planned split gives each process at least a tenth by default.
	code, out, _ := slatec(t, "", "serve", "--help")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `--min-share float +.*\(default 0\.1\)`, out)
	code, _, errs = slatec(t, "", "serve", "--socket", sock, "--min-share", "0.6")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "--min-share must be in 0..0.5")
	code, _, errs = slatec(t, "", "serve", "--socket", sock, "--split-hold", "-1ms")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "--split-hold must not be negative")
	code, _, errs = slatec(t, "", "serve", "--socket", sock, "--objective", "makespan")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "--objective must be stp or balanced")
	code, _, errs = slatec(t, "", "serve", "--socket", sock, "--profiles", filepath.Join(t.TempDir(), "none.json"))
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "--profiles")

	t.Setenv("CUDA_MPS_PIPE_DIRECTORY", t.TempDir())
	logFile := filepath.Join(t.TempDir(), "serve.log")
	stop, errOut := startServe(t, serveFlags{socket: sock, logFile: logFile, profiles: "../plan/testdata/example-profiles.json", resizeTimeout: time.Second})
	require.NoError(t, stop())
	b, err := os.ReadFile(logFile)
	require.NoError(t, err)
	assert.Contains(t, string(b), "policy grants: planned per set of kernels (profiles, balanced), else equal shares under MPS unless profiled and no split pays, else overlap (whole GPU, native)")
	assert.Contains(t, string(b), "MPS is not active")
	assert.True(t, strings.Contains(errOut.String(), "nvidia-cuda-mps-control -d"), errOut.String())
}

// TestServeSIGTERM runs `slatec serve` in a child process (this test binary)
// and stops it with SIGTERM: exit 0, the client told, the socket removed.
func TestServeSIGTERM(t *testing.T) {
	if sock := os.Getenv("SLATEC_SERVE_CHILD_SOCKET"); sock != "" {
		os.Exit(run(newRootCmd(), []string{"serve", "--socket", sock, "--sms", "16"}))
	}
	sock := shortSocket(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeSIGTERM$")
	cmd.Env = append(os.Environ(), "SLATEC_SERVE_CHILD_SOCKET="+sock)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer cmd.Process.Kill()
	var c *client.Client
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var err error
		if c, err = client.Connect(client.Options{Socket: sock, HandshakeTimeout: time.Second}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child daemon not up: %v\n%s", err, stderr.String())
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, stderr.String())
	case <-time.After(5 * time.Second):
		t.Fatal("daemon did not exit on SIGTERM")
	}
	select {
	case <-c.Lost():
	case <-time.After(2 * time.Second):
		t.Fatal("client not told")
	}
	_, err := os.Stat(sock)
	assert.True(t, os.IsNotExist(err), "socket left after SIGTERM")
	assert.Contains(t, stderr.String(), "stopping")
}
