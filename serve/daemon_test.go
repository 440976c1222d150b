package serve_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/slatec/slatec/serve"
	"github.com/slatec/slatec/serve/client"
)

const testSMs = 100

// harness runs a daemon on a fresh socket and collects its events.
type harness struct {
	t      *testing.T
	d      *serve.Daemon
	sock   string
	events chan serve.Event
	logs   chan string
	served chan error
}

func newHarness(t *testing.T, cfg serve.Config) *harness {
	t.Helper()
	dir, err := os.MkdirTemp("", "slsv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	h := &harness{t: t, sock: filepath.Join(dir, "s", "serve.sock"), events: make(chan serve.Event, 1024), logs: make(chan string, 1024), served: make(chan error, 1)}
	cfg.Socket = h.sock
	cfg.OnEvent = func(ev serve.Event) {
		select {
		case h.events <- ev:
		default:
		}
	}
	cfg.Logf = func(f string, a ...any) {
		t.Logf("daemon: "+f, a...)
		select {
		case h.logs <- f:
		default:
		}
	}
	if cfg.MPS == nil {
		cfg.MPS = &serve.MPSState{Active: true}
	}
	d, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.d = d
	go func() { h.served <- d.Serve() }()
	t.Cleanup(func() {
		d.Close()
		select {
		case <-h.served:
		case <-time.After(3 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return h
}

func (h *harness) connect(name string) *client.Client {
	h.t.Helper()
	c, err := client.Connect(client.Options{Socket: h.sock, Name: name, SMs: testSMs, HandshakeTimeout: 2 * time.Second})
	if err != nil {
		h.t.Fatalf("connect %s: %v", name, err)
	}
	h.t.Cleanup(func() { c.Abort() })
	return c
}

// waitEvent waits for an event of kind (and client, when nonzero).
func (h *harness) waitEvent(kind string, clientID uint64, d time.Duration) serve.Event {
	h.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev := <-h.events:
			if ev.Kind == kind && (clientID == 0 || ev.Client == clientID) {
				return ev
			}
		case <-deadline:
			h.t.Fatalf("no %s event for client %d within %v", kind, clientID, d)
		}
	}
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func spec(kernel, class string) client.LaunchSpec {
	return client.LaunchSpec{Kernel: kernel, Grid: [3]uint32{1000, 1, 1}, Block: [3]uint32{256, 1, 1}, Class: class, Blocks: 1000}
}

func nextResize(t *testing.T, l *client.Launch, d time.Duration) client.Resize {
	t.Helper()
	select {
	case r := <-l.Resizes():
		return r
	case <-time.After(d):
		t.Fatalf("launch %d: no resize within %v", l.ID(), d)
	}
	return client.Resize{}
}

// autoAck acknowledges every resize of l until it is lost or stop closes.
func autoAck(l *client.Launch, stop <-chan struct{}) {
	go func() {
		for {
			select {
			case r := <-l.Resizes():
				if r.Lost {
					return
				}
				l.Ack(r, false)
			case <-stop:
				return
			}
		}
	}()
}

func full() serve.Range { return serve.Range{Lo: 0, Hi: testSMs - 1} }

func TestCoRunShrinkGrow(t *testing.T) {
	h := newHarness(t, serve.Config{})
	a, b := h.connect("a"), h.connect("b")
	la, err := a.Launch(ctxT(t, 2*time.Second), spec("k_a", "L_C"))
	if err != nil {
		t.Fatal(err)
	}
	if la.Range() != full() {
		t.Fatalf("solo launch got %v, want the whole GPU", la.Range())
	}
	done := make(chan *client.Launch, 1)
	go func() {
		lb, err := b.Launch(ctxT(t, 2*time.Second), spec("k_b", "L_C"))
		if err != nil {
			t.Error(err)
		}
		done <- lb
	}()
	r := nextResize(t, la, 2*time.Second)
	if r.Range != (serve.Range{Lo: 0, Hi: 49}) {
		t.Fatalf("a shrunk to %v, want 0:49", r.Range)
	}
	if err := la.Ack(r, false); err != nil {
		t.Fatal(err)
	}
	var lb *client.Launch
	select {
	case lb = <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("b did not start")
	}
	if lb == nil || lb.Range() != (serve.Range{Lo: 50, Hi: 99}) {
		t.Fatalf("b started on %v, want 50:99", lb.Range())
	}
	st := h.d.Status()
	if st.Running != 2 || len(st.Clients) != 2 || st.Clients[0].SMs != 50 || st.Clients[1].SMs != 50 {
		t.Fatalf("status: %+v", st)
	}
	if err := lb.Finish(); err != nil {
		t.Fatal(err)
	}
	r = nextResize(t, la, 2*time.Second)
	if r.Range != full() {
		t.Fatalf("a grew to %v, want the whole GPU", r.Range)
	}
	la.Ack(r, false)
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(time.Millisecond) {
		st = h.d.Status()
		var oks int
		for _, rr := range st.Resizes {
			if rr.Outcome == "ok" {
				oks++
			}
		}
		if oks == 2 && st.Clients[0].SMs == testSMs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("want 2 acknowledged resizes and a on all SMs, status has %+v", st)
		}
	}
}

func TestSlateTableAcrossProcesses(t *testing.T) {
	for _, tc := range []struct {
		run, cand string
		corun     bool
	}{
		{"L_C", "L_C", true},
		{"H_C", "H_C", false},
		{"H_C", "H_M", true},
		{"H_M", "H_C", false}, // the table is not symmetric: row = running
		{"M_M", "H_C", true},
		{"", "H_C", true}, // unknown classes co-run by default
	} {
		t.Run(tc.run+"_"+tc.cand, func(t *testing.T) {
			h := newHarness(t, serve.Config{})
			a, b := h.connect("a"), h.connect("b")
			la, err := a.Launch(ctxT(t, 2*time.Second), spec("ka", tc.run))
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			defer close(stop)
			autoAck(la, stop)
			lb, err := b.Announce(ctxT(t, 2*time.Second), spec("kb", tc.cand))
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-lb.Started():
				if !tc.corun {
					t.Fatal("b co-runs, the table says solo")
				}
			case <-time.After(200 * time.Millisecond):
				if tc.corun {
					t.Fatal("b did not start beside a")
				}
				if q := h.d.Status().Queued; q != 1 {
					t.Fatalf("queued = %d, want 1", q)
				}
				la.Finish()
				select {
				case <-lb.Started():
					if lb.Range() != full() {
						t.Fatalf("b after a got %v", lb.Range())
					}
				case <-time.After(2 * time.Second):
					t.Fatal("b did not start after a finished")
				}
			}
		})
	}
}

func TestConnectNoDaemonFailsFast(t *testing.T) {
	dir := t.TempDir()
	// A missing socket and a stale one (a file nobody listens on).
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	for _, sock := range []string{filepath.Join(dir, "missing.sock"), stale} {
		var ds []time.Duration
		for range 21 {
			t0 := time.Now()
			_, err := client.Connect(client.Options{Socket: sock, SMs: testSMs})
			ds = append(ds, time.Since(t0))
			if err == nil {
				t.Fatalf("%s: connected to nothing", sock)
			}
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		t.Logf("%s: Connect fails in median %v, max %v", filepath.Base(sock), ds[10], ds[20])
		// The target (< 1 ms) is read from the logged figures; the test
		// guards only against a retry or a timeout creeping in (a shared CI
		// machine can stall a process for milliseconds).
		if ds[10] > 50*time.Millisecond {
			t.Errorf("%s: Connect took %v (median) to fail, want well under 50ms (target < 1ms)", sock, ds[10])
		}
	}
}

func TestDaemonKilledClientsFallBack(t *testing.T) {
	h := newHarness(t, serve.Config{})
	a := h.connect("a")
	la, err := a.Launch(ctxT(t, 2*time.Second), spec("k", ""))
	if err != nil {
		t.Fatal(err)
	}
	h.d.Kill()
	r := nextResize(t, la, 2*time.Second)
	if !r.Lost || r.Range != full() {
		t.Fatalf("after the daemon died: %+v, want a Lost resize to the whole GPU", r)
	}
	select {
	case <-a.Lost():
	case <-time.After(time.Second):
		t.Fatal("Lost not closed")
	}
	if _, err := a.Launch(ctxT(t, time.Second), spec("k", "")); !errors.Is(err, client.ErrLost) {
		t.Fatalf("launch after loss: %v, want ErrLost", err)
	}
	if _, err := os.Stat(h.sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

func TestGracefulShutdown(t *testing.T) {
	h := newHarness(t, serve.Config{})
	a := h.connect("a")
	if err := h.d.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Lost():
	case <-time.After(2 * time.Second):
		t.Fatal("client not told")
	}
	if err := a.LostErr(); err == nil || !errors.Is(err, client.ErrLost) {
		t.Fatalf("lost error %v", err)
	}
	if _, err := os.Stat(h.sock); !os.IsNotExist(err) {
		t.Errorf("socket not removed: %v", err)
	}
}

func TestClientKilledSMsReturn(t *testing.T) {
	h := newHarness(t, serve.Config{})
	a, b := h.connect("a"), h.connect("b")
	la, err := a.Launch(ctxT(t, 2*time.Second), spec("ka", ""))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // ack a's shrink only
		r := nextResize(t, la, 2*time.Second)
		la.Ack(r, false)
	}()
	if _, err := b.Launch(ctxT(t, 2*time.Second), spec("kb", "")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	t0 := time.Now()
	b.Abort() // as if killed: no bye, no done
	r := nextResize(t, la, 2*time.Second)
	lat := time.Since(t0)
	if r.Range != full() {
		t.Fatalf("a got %v after b died, want the whole GPU", r.Range)
	}
	t.Logf("grow command %v after the other client's connection closed", lat)
	la.Ack(r, false)
}

func TestStuckClient(t *testing.T) {
	h := newHarness(t, serve.Config{ResizeTimeout: 50 * time.Millisecond})
	a, b := h.connect("stuck"), h.connect("b")
	la, err := a.Launch(ctxT(t, 2*time.Second), spec("ka", ""))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	lb, err := b.Launch(ctxT(t, 2*time.Second), spec("kb", "")) // a never acks
	if err != nil {
		t.Fatal(err)
	}
	waited := time.Since(t0)
	if waited < 45*time.Millisecond || waited > time.Second {
		t.Fatalf("b started after %v, want about the 50ms timeout", waited)
	}
	if lb.Range() != (serve.Range{Lo: 50, Hi: 99}) {
		t.Fatalf("b got %v", lb.Range())
	}
	h.waitEvent("stuck", a.ID(), time.Second)
	st := h.d.Status()
	if !st.Clients[0].Stuck || st.Clients[1].Stuck {
		t.Fatalf("stuck flags: %+v", st.Clients)
	}
	if n := len(st.Resizes); n != 1 || st.Resizes[0].Outcome != "timeout" {
		t.Fatalf("resizes: %+v", st.Resizes)
	}
	// A late acknowledgement clears the mark.
	r := nextResize(t, la, time.Second)
	la.Ack(r, false)
	deadline := time.Now().Add(2 * time.Second)
	for h.d.Status().Clients[0].Stuck {
		if time.Now().After(deadline) {
			t.Fatal("late ack did not clear stuck")
		}
		time.Sleep(time.Millisecond)
	}
	st = h.d.Status()
	if st.Resizes[len(st.Resizes)-1].Outcome != "late" {
		t.Fatalf("resizes: %+v", st.Resizes)
	}
}

// TestJoinLeaveLatency measures, over the real socket, how long
// registration takes (Connect: hello until welcome, so the daemon has the
// client) and how long after a client's connection closes the daemon has
// handled its departure.
func TestJoinLeaveLatency(t *testing.T) {
	h := newHarness(t, serve.Config{})
	const n = 51
	var join, leave []time.Duration
	for range n {
		t0 := time.Now()
		c, err := client.Connect(client.Options{Socket: h.sock, SMs: testSMs, HandshakeTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ev := h.waitEvent("join", c.ID(), 2*time.Second)
		join = append(join, max(time.Since(t0), ev.At.Sub(t0)))
		t1 := time.Now()
		c.Abort()
		ev = h.waitEvent("leave", c.ID(), 2*time.Second)
		leave = append(leave, ev.At.Sub(t1))
	}
	for _, s := range []struct {
		what string
		ds   []time.Duration
	}{{"join", join}, {"leave", leave}} {
		sort.Slice(s.ds, func(i, j int) bool { return s.ds[i] < s.ds[j] })
		p50, p90, mx := s.ds[n/2], s.ds[n*9/10], s.ds[n-1]
		t.Logf("%s latency over %d: p50 %v, p90 %v, max %v", s.what, n, p50, p90, mx)
		// As above: the 1 ms target is read from the logged figures.
		if p50 > 50*time.Millisecond {
			t.Errorf("%s: median %v, want well under 50ms (target < 1ms)", s.what, p50)
		}
	}
}

func TestRefuseSecondDaemonAndStaleSocket(t *testing.T) {
	h := newHarness(t, serve.Config{SMs: testSMs})
	if _, err := serve.New(serve.Config{Socket: h.sock, SMs: testSMs, MPS: &serve.MPSState{}}); !errors.Is(err, serve.ErrDaemonRunning) {
		t.Fatalf("second daemon: %v, want ErrDaemonRunning", err)
	}
	fi, err := os.Stat(h.sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(filepath.Dir(h.sock))
	if di.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", di.Mode().Perm())
	}

	// A stale socket file is removed and replaced.
	dir := t.TempDir()
	sock := filepath.Join(dir, "x.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	d, err := serve.New(serve.Config{Socket: sock, SMs: testSMs, MPS: &serve.MPSState{}})
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	go d.Serve()
	c, err := client.Connect(client.Options{Socket: sock, SMs: testSMs, HandshakeTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	d.Close()

	// A regular file is never removed.
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("x"), 0o600)
	if _, err := serve.New(serve.Config{Socket: plain, SMs: testSMs, MPS: &serve.MPSState{}}); err == nil {
		t.Fatal("listened over a regular file")
	}
	if _, err := os.Stat(plain); err != nil {
		t.Fatal("regular file removed")
	}
}

func TestWrongDevice(t *testing.T) {
	h := newHarness(t, serve.Config{SMs: testSMs})
	_, err := client.Connect(client.Options{Socket: h.sock, SMs: 132, HandshakeTimeout: 2 * time.Second})
	var se *client.ServerError
	if !errors.As(err, &se) || se.Code != serve.ErrWrongDevice {
		t.Fatalf("connect with 132 SMs to a 100-SM daemon: %v", err)
	}
}

func TestNoSMsKnown(t *testing.T) {
	h := newHarness(t, serve.Config{})
	_, err := client.Connect(client.Options{Socket: h.sock, HandshakeTimeout: 2 * time.Second})
	var se *client.ServerError
	if !errors.As(err, &se) || se.Code != serve.ErrBadField {
		t.Fatalf("hello without sms to a daemon that needs them: %v", err)
	}
	// The daemon goes on serving.
	h.connect("ok")
}

func TestConcurrentClients(t *testing.T) {
	h := newHarness(t, serve.Config{ResizeTimeout: time.Second})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.Connect(client.Options{Socket: h.sock, SMs: testSMs, HandshakeTimeout: 5 * time.Second})
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			for range 5 {
				l, err := c.Announce(ctxT(t, 5*time.Second), spec("k", "L_C"))
				if err != nil {
					t.Error(err)
					return
				}
				stop := make(chan struct{})
				autoAck(l, stop)
				select {
				case <-l.Started():
				case <-time.After(10 * time.Second):
					t.Errorf("client %d: launch never started", i)
					close(stop)
					return
				}
				time.Sleep(time.Millisecond)
				l.Finish()
				close(stop)
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(2 * time.Second)
	for {
		st := h.d.Status()
		if st.Running == 0 && st.Queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("left over: %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
}

// fakeClock is a settable clock for latency records.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestResizeLatencyWithFakeClock(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h := newHarness(t, serve.Config{Clock: clk.Now})
	a, b := h.connect("a"), h.connect("b")
	la, err := a.Launch(ctxT(t, 2*time.Second), spec("ka", ""))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		r := nextResize(t, la, 2*time.Second)
		clk.Advance(3 * time.Millisecond) // the drain and relaunch take 3ms
		la.Ack(r, false)
	}()
	if _, err := b.Launch(ctxT(t, 2*time.Second), spec("kb", "")); err != nil {
		t.Fatal(err)
	}
	st := h.d.Status()
	if len(st.Resizes) != 1 || st.Resizes[0].LatencyUs != 3000 || st.Resizes[0].Outcome != "ok" {
		t.Fatalf("resize records %+v, want one ok at 3000us", st.Resizes)
	}
	if st.Resizes[0].From != full() || st.Resizes[0].To != (serve.Range{Lo: 0, Hi: 49}) {
		t.Fatalf("record %+v", st.Resizes[0])
	}
	if st.UptimeS != 0.003 {
		t.Fatalf("uptime %v on the fake clock", st.UptimeS)
	}
}
