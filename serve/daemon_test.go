package serve_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slatec/slatec/plan"
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
	if cfg.IdleAfter == 0 {
		// The test clients send load notes only when a test says so:
		// TestIdleClientShareGoesToTheOthers tests idleness.
		cfg.IdleAfter = -1
	}
	if cfg.Unplanned == "" {
		// Most tests here check the split and the moves between ranges;
		// TestUnplannedOverlap checks the default.
		cfg.Unplanned = serve.EqualShares
	}
	cfg.OnEvent = func(ev serve.Event) {
		select {
		case h.events <- ev:
		default:
		}
	}
	// (Nothing logs after Close returns: it waits for the ack timers.)
	cfg.Logf = func(f string, a ...any) {
		t.Logf("daemon: "+f, a...)
		select {
		case h.logs <- fmt.Sprintf(f, a...):
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

func (h *harness) connect(name string) *client.Client { return h.connectSMs(name, testSMs) }

// connectSMs registers a client of a GPU of sms SMs (the profiles' device,
// in the tests that plan).
func (h *harness) connectSMs(name string, sms int) *client.Client {
	h.t.Helper()
	c, err := client.Connect(client.Options{Socket: h.sock, Name: name, SMs: sms, HandshakeTimeout: 2 * time.Second})
	if err != nil {
		h.t.Fatalf("connect %s: %v", name, err)
	}
	h.t.Cleanup(func() { c.Abort() })
	return c
}

// waitShare waits up to 2 s for c to hold a share of a split (a range of
// fewer than sms SMs, not native).
func waitShare(t *testing.T, c *client.Client, sms int) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(time.Millisecond) {
		if g := c.Grant(); !g.Alone && g.Range.Count() < sms {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("client %d holds %+v: want its share of a split", c.ID(), c.Grant())
		}
	}
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

// nextGrant waits for c's next grant push.
func nextGrant(t *testing.T, c *client.Client, d time.Duration) serve.Grant {
	t.Helper()
	select {
	case g := <-c.Grants():
		return g
	case <-time.After(d):
		t.Fatalf("client %d: no grant within %v", c.ID(), d)
	}
	return serve.Grant{}
}

// autoAck acknowledges every grant of c until it is lost or stop closes.
func autoAck(c *client.Client, stop <-chan struct{}) {
	go func() {
		for {
			select {
			case g := <-c.Grants():
				c.Ack(g, g.Range, 0, 0)
			case <-c.Lost():
				return
			case <-stop:
				return
			}
		}
	}()
}

func full() serve.Range { return serve.Range{Lo: 0, Hi: testSMs - 1} }

// TestGrantsSplitAndEpochs: alone -> the whole GPU, alone; a second
// client -> halves (the first is pushed a new epoch before the newcomer's
// welcome); a third -> thirds; leaves give the SMs back; epochs only grow.
func TestGrantsSplitAndEpochs(t *testing.T) {
	h := newHarness(t, serve.Config{SMs: testSMs})
	a := h.connect("a")
	ga := a.Grant()
	if !ga.Alone || ga.Range != full() || ga.Clients != 1 || ga.Epoch == 0 {
		t.Fatalf("first client's grant %+v, want the whole GPU alone", ga)
	}
	b := h.connect("b")
	g := nextGrant(t, a, time.Second)
	if g.Alone || g.Range != (serve.Range{Lo: 0, Hi: 49}) || g.Clients != 2 || g.Epoch <= ga.Epoch {
		t.Fatalf("a after b joined: %+v", g)
	}
	if gb := b.Grant(); gb.Alone || gb.Range != (serve.Range{Lo: 50, Hi: 99}) || gb.Epoch <= g.Epoch {
		t.Fatalf("b's welcome grant %+v", gb)
	}
	a.Ack(g, g.Range, 120*time.Microsecond, 1)
	h.waitEvent("ack", a.ID(), time.Second)
	c := h.connect("c")
	ga3, gb3 := nextGrant(t, a, time.Second), nextGrant(t, b, time.Second)
	gc3 := c.Grant()
	if ga3.Range != (serve.Range{Lo: 0, Hi: 33}) || gb3.Range != (serve.Range{Lo: 34, Hi: 66}) || gc3.Range != (serve.Range{Lo: 67, Hi: 99}) {
		t.Fatalf("thirds: %v %v %v", ga3.Range, gb3.Range, gc3.Range)
	}
	st := h.d.Status()
	if len(st.Clients) != 3 || st.Clients[0].Acked || st.Clients[0].Epoch != ga3.Epoch {
		t.Fatalf("status %+v", st.Clients)
	}
	b.Close()
	ga4, gc4 := nextGrant(t, a, time.Second), nextGrant(t, c, time.Second)
	if ga4.Range != (serve.Range{Lo: 0, Hi: 49}) || gc4.Range != (serve.Range{Lo: 50, Hi: 99}) || ga4.Alone {
		t.Fatalf("after b left: %v %v", ga4, gc4)
	}
	c.Abort()
	ga5 := nextGrant(t, a, time.Second)
	if !ga5.Alone || ga5.Range != full() || ga5.Epoch <= ga4.Epoch {
		t.Fatalf("alone again: %+v", ga5)
	}
	a.Ack(ga5, ga5.Range, 0, 0)
	h.waitEvent("ack", a.ID(), time.Second)
	st = h.d.Status()
	var ok int
	for _, r := range st.Resizes {
		if r.Outcome == "ok" {
			ok++
		}
	}
	if ok != 2 || st.Resizes[0].DrainUs != 120 || st.Resizes[0].Moved != 1 || st.Resizes[0].From != full() {
		t.Fatalf("resize records %+v", st.Resizes)
	}
}

// TestSplit: contiguous, covering, proportional, at least one SM each.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		sms int
		w   []float64
		out []serve.Range
	}{
		{132, []float64{1}, []serve.Range{{0, 131}}},
		{132, []float64{1, 1}, []serve.Range{{0, 65}, {66, 131}}},
		{100, []float64{1, 1, 1}, []serve.Range{{0, 33}, {34, 66}, {67, 99}}},
		{132, []float64{100, 32}, []serve.Range{{0, 99}, {100, 131}}},
		{10, []float64{1000, 1}, []serve.Range{{0, 8}, {9, 9}}},
		{2, []float64{1, 1, 1}, []serve.Range{{0, 0}, {1, 1}, {0, 0}}},
	} {
		got := serve.Split(tc.sms, tc.w)
		if len(got) != len(tc.out) {
			t.Fatalf("Split(%d, %v) = %v", tc.sms, tc.w, got)
		}
		for i := range got {
			if got[i] != tc.out[i] {
				t.Errorf("Split(%d, %v) = %v, want %v", tc.sms, tc.w, got, tc.out)
				break
			}
		}
	}
	// Any weights: ranges cover 0..sms-1 in order.
	for n := 1; n <= 40; n++ {
		w := make([]float64, n)
		for i := range w {
			w[i] = float64(1 + (i*7)%5)
		}
		rs := serve.Split(100, w)
		next := 0
		for _, r := range rs {
			if r.Lo != next || r.Hi < r.Lo {
				t.Fatalf("n=%d: %v", n, rs)
			}
			next = r.Hi + 1
		}
		if next != 100 {
			t.Fatalf("n=%d: %v does not cover 100 SMs", n, rs)
		}
	}
}

// TestLoadNotes: load notes are not answered and show in status.
func TestLoadNotes(t *testing.T) {
	h := newHarness(t, serve.Config{SMs: testSMs})
	a := h.connect("a")
	if err := a.Load(42, 2, "saxpy", "M_M"); err != nil {
		t.Fatal(err)
	}
	h.waitEvent("load", a.ID(), time.Second)
	st := h.d.Status()
	if c := st.Clients[0]; c.Launches != 42 || c.InFlight != 2 || c.Kernel != "saxpy" || c.Class != "M_M" || st.Running != 2 {
		t.Fatalf("status after load: %+v", st)
	}
	// The connection still answers requests in order (no stray reply).
	if _, err := a.Status(ctxT(t, time.Second)); err != nil {
		t.Fatal(err)
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
	a, b := h.connect("a"), h.connect("b")
	if g := b.Grant(); g.Alone {
		t.Fatalf("b alone with a registered: %+v", g)
	}
	h.d.Kill()
	select {
	case <-a.Lost():
	case <-time.After(time.Second):
		t.Fatal("Lost not closed")
	}
	<-b.Lost()
	if g := b.Grant(); !g.Alone || g.Range != full() {
		t.Fatalf("after the daemon died: %+v, want the whole GPU, alone", g)
	}
	if err := a.Load(1, 0, "k", ""); !errors.Is(err, client.ErrLost) {
		t.Fatalf("load after loss: %v, want ErrLost", err)
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
	a := h.connect("a")
	b := h.connect("b")
	g := nextGrant(t, a, time.Second)
	a.Ack(g, g.Range, 0, 0)
	time.Sleep(10 * time.Millisecond)
	t0 := time.Now()
	b.Abort() // as if killed: no bye
	g = nextGrant(t, a, 2*time.Second)
	lat := time.Since(t0)
	if g.Range != full() || !g.Alone {
		t.Fatalf("a got %+v after b died, want the whole GPU alone", g)
	}
	t.Logf("grow grant %v after the other client's connection closed", lat)
}

// TestStuckClient: a client that does not ack its grant within the resize
// timeout is marked stuck (the others never waited for it); a late ack
// clears the mark, and so does an ack of a newer grant.
func TestStuckClient(t *testing.T) {
	h := newHarness(t, serve.Config{ResizeTimeout: 50 * time.Millisecond})
	a := h.connect("stuck")
	t0 := time.Now()
	b := h.connect("b")
	if waited := time.Since(t0); waited > 40*time.Millisecond {
		t.Errorf("b's registration took %v: it must not wait for a's ack", waited)
	}
	if b.Grant().Range != (serve.Range{Lo: 50, Hi: 99}) {
		t.Fatalf("b got %v", b.Grant())
	}
	g := nextGrant(t, a, time.Second) // a never acks in time
	h.waitEvent("stuck", a.ID(), time.Second)
	st := h.d.Status()
	if !st.Clients[0].Stuck || st.Clients[1].Stuck {
		t.Fatalf("stuck flags: %+v", st.Clients)
	}
	if n := len(st.Resizes); n != 1 || st.Resizes[0].Outcome != "timeout" {
		t.Fatalf("resizes: %+v", st.Resizes)
	}
	a.Ack(g, g.Range, 0, 0)
	h.waitEvent("late", a.ID(), time.Second)
	st = h.d.Status()
	if st.Clients[0].Stuck || st.Resizes[len(st.Resizes)-1].Outcome != "late" {
		t.Fatalf("after the late ack: %+v %+v", st.Clients, st.Resizes)
	}
}

// TestNoStuckMarkAfterClose: a grant's ack timer still pending when the
// daemon stops does nothing, and nothing is logged or emitted after Close
// returns (a program's log, or a test's, may be gone by then).
func TestNoStuckMarkAfterClose(t *testing.T) {
	h := newHarness(t, serve.Config{ResizeTimeout: 60 * time.Millisecond})
	a := h.connect("never acks")
	h.connect("b")
	nextGrant(t, a, time.Second) // a's share: its ack timer runs from here
	if err := h.d.Close(); err != nil {
		t.Fatal(err)
	}
	closed := true
	for deadline := time.After(150 * time.Millisecond); closed; {
		select {
		case l := <-h.logs:
			if strings.Contains(l, "did not acknowledge") {
				t.Errorf("logged after Close: %s", l)
			}
		case ev := <-h.events:
			if ev.Kind == "stuck" {
				t.Errorf("event after Close: %+v", ev)
			}
		case <-deadline:
			closed = false
		}
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
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.Connect(client.Options{Socket: h.sock, SMs: testSMs, HandshakeTimeout: 5 * time.Second})
			if err != nil {
				t.Error(err)
				return
			}
			stop := make(chan struct{})
			autoAck(c, stop)
			for i := range 5 {
				c.Load(uint64(i+1), 1, "k", "L_C")
				time.Sleep(time.Millisecond)
			}
			close(stop)
			c.Close()
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(2 * time.Second)
	for {
		st := h.d.Status()
		if len(st.Clients) == 0 {
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
	h := newHarness(t, serve.Config{Clock: clk.Now, ResizeTimeout: time.Hour})
	a := h.connect("a")
	h.connect("b")
	g := nextGrant(t, a, 2*time.Second)
	clk.Advance(3 * time.Millisecond) // the drain and relaunch take 3ms
	a.Ack(g, g.Range, 2900*time.Microsecond, 1)
	h.waitEvent("ack", a.ID(), time.Second)
	st := h.d.Status()
	if len(st.Resizes) != 1 || st.Resizes[0].LatencyUs != 3000 || st.Resizes[0].DrainUs != 2900 || st.Resizes[0].Outcome != "ok" {
		t.Fatalf("resize records %+v, want one ok at 3000us", st.Resizes)
	}
	if st.Resizes[0].From != full() || st.Resizes[0].To != (serve.Range{Lo: 0, Hi: 49}) {
		t.Fatalf("record %+v", st.Resizes[0])
	}
	if st.UptimeS != 0.003 {
		t.Fatalf("uptime %v on the fake clock", st.UptimeS)
	}
}

// TestUnplannedOverlap: by default, processes that no plan co-runs each get
// the whole GPU with native launches (as under MPS alone); once the STM
// plan puts their kernels in one phase they get its split, and a kernel of
// another phase brings the overlap back.
func TestUnplannedOverlap(t *testing.T) {
	ps, err := plan.ReadProfileFile("../plan/testdata/example-profiles.json")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, serve.Config{Profiles: ps, Unplanned: serve.Overlap})
	sms := ps.Device.SMs
	whole := serve.Range{Lo: 0, Hi: sms - 1}
	a, err := client.Connect(client.Options{Socket: h.sock, SMs: sms, HandshakeTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Abort()
	b, err := client.Connect(client.Options{Socket: h.sock, HandshakeTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	if g := b.Grant(); !g.Alone || g.Range != whole || g.Clients != 2 {
		t.Fatalf("b's welcome grant %+v, want the whole GPU, native", g)
	}
	if g := nextGrant(t, a, time.Second); !g.Alone || g.Range != whole || g.Clients != 2 {
		t.Fatalf("a after b joined: %+v, want the whole GPU, native", g)
	}
	launching(t, a, "triad_f4")
	lb := launching(t, b, "fma_loop") // the plan splits them, both busy
	deadline := time.After(2 * time.Second)
	for split := false; !split; {
		select {
		case g := <-b.Grants():
			split = !g.Alone && g.Range.Count() < sms
		case <-deadline:
			t.Fatalf("b never got the plan's split; holds %v", b.Grant())
		}
	}
	// The daemon's log says which kernels the split was planned for.
	for logged := false; !logged; {
		select {
		case l := <-h.logs:
			logged = strings.HasPrefix(l, "grants (planned split, predicted STP ") && strings.Contains(l, "triad_f4") && strings.Contains(l, "fma_loop")
		case <-deadline:
			t.Fatal("no log line of the planned split")
		}
	}
	lb.set("unprofiled") // no plan: overlap again
	for {
		select {
		case g := <-b.Grants():
			if g.Alone && g.Range == whole {
				if st := h.d.Status(); !strings.Contains(st.Policy, "overlap") {
					t.Errorf("status policy %q", st.Policy)
				}
				return
			}
		case <-deadline:
			t.Fatalf("an unprofiled kernel did not bring back the overlap; b holds %v", b.Grant())
		}
	}
}

// TestIdleClientShareGoesToTheOthers: a process on a split range that
// stops launching (no load note with new launches, none running, its grant
// acknowledged) is idle after IdleAfter: its
// share goes to the others (one left active: alone, native) and it gets
// the whole GPU natively for when it starts again; its next load note with
// new launches splits the GPU again. A process with a launch running on
// its range is never idle, notes or not.
func TestIdleClientShareGoesToTheOthers(t *testing.T) {
	h := newHarness(t, serve.Config{SMs: testSMs, IdleAfter: 20 * time.Millisecond})
	a := h.connect("a")
	b := h.connect("b")
	half := func(c *client.Client) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Second); ; {
			if g := c.Grant(); !g.Alone && g.Range.Count() == testSMs/2 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("client %d holds %v, want half the GPU", c.ID(), c.Grant())
			}
			time.Sleep(time.Millisecond)
		}
	}
	whole := func(c *client.Client, within time.Duration) time.Duration {
		t.Helper()
		t0 := time.Now()
		for deadline := t0.Add(within); ; {
			if g := c.Grant(); g.Alone && g.Range.Count() == testSMs {
				return time.Since(t0)
			}
			if time.Now().After(deadline) {
				t.Fatalf("client %d holds %v after %v, want the whole GPU", c.ID(), c.Grant(), within)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// a launches all along (a note every 2 ms, as the C++ client does).
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for n := uint64(1); ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
				a.Load(n, 0, "ka", "")
			}
		}
	}()
	b.Load(1, 0, "kb", "")
	half(a)
	half(b)
	// b stops launching: a gets the whole GPU within IdleAfter and a tick.
	took := whole(a, time.Second)
	whole(b, time.Second)
	t.Logf("b idle: a alone %v after b's last note (IdleAfter 20 ms)", took)
	if st := h.d.Status(); len(st.Clients) != 2 || st.Clients[0].Idle || !st.Clients[1].Idle {
		t.Errorf("status clients %+v, want b idle, a not", st.Clients)
	}
	// b launches again: split again.
	b.Load(2, 0, "kb", "")
	half(a)
	half(b)
	// b with a launch running on its range stays active without notes.
	b.Load(3, 1, "kb", "")
	time.Sleep(100 * time.Millisecond)
	half(b)
}

// TestNativeClientsAreNeverIdle: a process launching natively (alone, or
// overlapping unplanned ones) may have launches queued ahead that run long
// after its last note; it is never taken for idle.
func TestNativeClientsAreNeverIdle(t *testing.T) {
	h := newHarness(t, serve.Config{SMs: testSMs, IdleAfter: 5 * time.Millisecond, Unplanned: serve.Overlap})
	h.connect("a").Load(1, 0, "ka", "")
	h.connect("b").Load(1, 0, "kb", "")
	time.Sleep(60 * time.Millisecond)
	for _, c := range h.d.Status().Clients {
		if c.Idle || !c.Alone {
			t.Errorf("client %+v: want native on the whole GPU, not idle", c)
		}
	}
}

// launcher stands for a process that keeps the GPU busy: a load note every
// millisecond, each with 1000 more launches, naming its latest kernel.
type launcher struct {
	kernel atomic.Pointer[string]
}

func launching(t *testing.T, c *client.Client, kernel string) *launcher {
	l := &launcher{}
	l.set(kernel)
	t.Cleanup(noting(time.Millisecond, func(n uint64) error { return c.Load(1000*n, 0, *l.kernel.Load(), "") }))
	return l
}

func (l *launcher) set(kernel string) { l.kernel.Store(&kernel) }

// noting sends note(n) for n = 1, 2, ... every period until the returned
// stop is called (stop waits for the last note to be sent).
func noting(every time.Duration, note func(n uint64) error) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := uint64(1); ; n++ {
			select {
			case <-quit:
				return
			case <-time.After(every):
				if note(n) != nil {
					return
				}
			}
		}
	}()
	return func() { close(quit); <-done }
}

// besideTriad starts a daemon planning with the example profiles (unplanned
// sets overlap) and two processes: a, launching triad_f4 back to back, and
// b, which the test drives. The policy splits triad_f4 and fma_loop.
func besideTriad(t *testing.T) (h *harness, b *client.Client, ps *plan.ProfileSet) {
	t.Helper()
	return besideTriadWith(t, serve.Config{})
}

// besideTriadWith is besideTriad with more of the daemon's configuration.
func besideTriadWith(t *testing.T, cfg serve.Config) (h *harness, b *client.Client, ps *plan.ProfileSet) {
	t.Helper()
	ps, err := plan.ReadProfileFile("../plan/testdata/example-profiles.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Profiles, cfg.Unplanned = ps, serve.Overlap
	h = newHarness(t, cfg)
	sms := ps.Device.SMs
	a := h.connectSMs("a", sms)
	b = h.connectSMs("b", sms)
	launching(t, a, "triad_f4")
	return h, b, ps
}

// TestSplitOnlyBusyProcesses: a set the policy would split is split only
// while every process keeps the GPU busy on its grant (its launches at the
// profile's time a launch fill MinBusy of the time): a process that launches now and then
// would hold a share idle most of the time, which MPS's overlap does not.
func TestSplitOnlyBusyProcesses(t *testing.T) {
	h, b, ps := besideTriad(t)
	sms := ps.Device.SMs
	// b: one fma_loop launch every 5 R ms, busy 0.2.
	r := ps.Kernels[ps.KernelIndex("fma_loop")].R(sms)
	every := time.Duration(5 * r * float64(time.Millisecond))
	stop := noting(every, func(n uint64) error { return b.Load(n, 0, "fma_loop", "") })
	time.Sleep(max(100*time.Millisecond, 6*every))
	if g := b.Grant(); !g.Alone || g.Range.Count() != sms {
		t.Errorf("b, busy 0.2, holds %+v: want no split (the whole GPU, native)", g)
	}
	stop()
	st := h.d.Status()
	if len(st.Clients) != 2 || st.Clients[1].Busy == nil || *st.Clients[1].Busy > serve.MinBusy {
		t.Errorf("status clients %+v: want b's busy known and below %v", st.Clients, serve.MinBusy)
	}
	launching(t, b, "fma_loop") // busy now: split
	waitShare(t, b, sms)
}

// triadAndFMA starts a daemon planning with the example profiles (unplanned
// sets overlap) and registers two processes, a and b, that have sent no
// note yet (a to launch triad_f4, b fma_loop).
func triadAndFMA(t *testing.T) (ps *plan.ProfileSet, a, b *client.Client) {
	t.Helper()
	ps, err := plan.ReadProfileFile("../plan/testdata/example-profiles.json")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, serve.Config{Profiles: ps, Unplanned: serve.Overlap})
	return ps, h.connectSMs("a", ps.Device.SMs), h.connectSMs("b", ps.Device.SMs)
}

// TestSplitWithoutFurtherNotes: two programs that enqueue their launches
// ahead each send one note (hundreds of milliseconds of launches, by the
// profiles) and then nothing while the GPU works through them; the daemon
// splits them once their busy readings are known (busyMinSpan after they
// registered), without waiting for another note. (On an H100 the split came
// at the next note, 83 ms in, after the first round had run overlapped.)
func TestSplitWithoutFurtherNotes(t *testing.T) {
	ps, a, b := triadAndFMA(t)
	sms := ps.Device.SMs
	for _, p := range []struct {
		c      *client.Client
		kernel string
	}{{a, "triad_f4"}, {b, "fma_loop"}} {
		r := ps.Kernels[ps.KernelIndex(p.kernel)].R(sms)
		if err := p.c.Load(uint64(400/r)+1, 0, p.kernel, ""); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	waitShare(t, b, sms)
	if took := time.Since(start); took > 150*time.Millisecond {
		t.Errorf("split %v after the notes: want within busyMinSpan and a check or two", took)
	}
	if g := a.Grant(); g.Alone || g.Range.Count() == sms {
		t.Errorf("a holds %+v: want its share", g)
	}
}

// TestHeldProcessesAreBusy: processes whose native launches are held to
// their budget of GPU work ahead announce them only as fast as the GPU runs
// them, which, overlapping another process, reads about half busy by the
// profile; a held note says the launching thread waited for the GPU, and the
// set is split. The same notes without held are not.
func TestHeldProcessesAreBusy(t *testing.T) {
	for _, held := range []bool{true, false} {
		t.Run(fmt.Sprintf("held=%v", held), func(t *testing.T) {
			ps, a, b := triadAndFMA(t)
			sms := ps.Device.SMs
			var stops []func()
			for _, p := range []struct {
				c      *client.Client
				kernel string
			}{{a, "triad_f4"}, {b, "fma_loop"}} {
				// A note every 2 ms of launches worth 0.6 ms by the profile: busy 0.3.
				per := 0.6 / ps.Kernels[ps.KernelIndex(p.kernel)].R(sms)
				c, kernel := p.c, p.kernel
				stops = append(stops, noting(2*time.Millisecond, func(n uint64) error {
					launches := uint64(math.Ceil(per * float64(n)))
					if held {
						return c.LoadHeld(launches, kernel)
					}
					return c.LoadNative(launches, kernel, true)
				}))
			}
			time.Sleep(150 * time.Millisecond)
			for _, stop := range stops {
				stop()
			}
			for i, c := range []*client.Client{a, b} {
				if g := c.Grant(); (!g.Alone && g.Range.Count() < sms) != held {
					t.Errorf("process %d holds %+v 150 ms in: want a share %v", i, g, held)
				}
			}
		})
	}
}

// busyNotes is a note every 2 ms of b's launches of kernel that keep the
// GPU about busy (2 ms of them by the profile), for noting.
func busyNotes(b *client.Client, ps *plan.ProfileSet, kernel string) func(n uint64) error {
	per := uint64(math.Ceil(2 / ps.Kernels[ps.KernelIndex(kernel)].R(ps.Device.SMs)))
	return func(n uint64) error { return b.Load(per*n, 0, kernel, "") }
}

// TestSplitHold: a split stays made for SplitHold, whatever the busy
// readings, while the same processes stay active: b, busy until the split,
// then quiet (its launches queued natively before the split would be
// waiting behind the other's on the GPU) keeps its share through the hold
// and loses it after; with no hold it loses it within ~100 ms (its busy
// reading decays below MinBusy/2). A process going idle ends the hold at
// once.
func TestSplitHold(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold time.Duration
	}{{"held", 400 * time.Millisecond}, {"no hold", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			_, b, ps := besideTriadWith(t, serve.Config{SplitHold: tc.hold})
			sms := ps.Device.SMs
			stop := noting(2*time.Millisecond, busyNotes(b, ps, "fma_loop"))
			waitShare(t, b, sms)
			split := time.Now()
			stop()
			time.Sleep(250*time.Millisecond - time.Since(split))
			held := !b.Grant().Alone
			if held != (tc.hold > 0) {
				t.Fatalf("250 ms after the split, b quiet since, holds %+v: want its share %v", b.Grant(), tc.hold > 0)
			}
			for deadline := split.Add(2 * time.Second); !b.Grant().Alone; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("b, quiet, still holds %+v 2 s after the split", b.Grant())
				}
			}
			// (split is when b saw its grant, a little after the daemon made it.)
			if tc.hold > 0 && time.Since(split) < tc.hold-20*time.Millisecond {
				t.Errorf("the split was undone %v after it was made, within the %v hold", time.Since(split), tc.hold)
			}
		})
	}
	t.Run("idle ends it", func(t *testing.T) {
		_, b, ps := besideTriadWith(t, serve.Config{SplitHold: 10 * time.Second, IdleAfter: 10 * time.Millisecond})
		sms := ps.Device.SMs
		// b acknowledges its grants (a process owing an ack is never idle).
		go func() {
			for {
				select {
				case g := <-b.Grants():
					b.Ack(g, g.Range, 0, 0)
				case <-b.Lost():
					return
				}
			}
		}()
		stop := noting(2*time.Millisecond, busyNotes(b, ps, "fma_loop"))
		waitShare(t, b, sms)
		split := time.Now()
		stop()
		for deadline := split.Add(time.Second); !b.Grant().Alone; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("b, idle, still holds %+v 1 s after the split (hold 10 s)", b.Grant())
			}
		}
	})
}

// TestQueuedLaunchesKeepTheSplit: a program that enqueues its launches
// ahead (a loop of asynchronous launches, then a synchronize) announces
// them in one note, then only that a launch is running while the GPU works
// through them. It keeps the GPU busy all that time: the set stays split.
// (A launch rate over a few milliseconds read it as 2.3, then 0.04, and the
// daemon undid the split 30 ms after making it; on an H100 that cost the
// pair its 1.14x over MPS.)
func TestQueuedLaunchesKeepTheSplit(t *testing.T) {
	_, b, ps := besideTriad(t)
	sms := ps.Device.SMs
	// b: 400 ms of fma_loop launches on the whole GPU, in one note.
	r := ps.Kernels[ps.KernelIndex("fma_loop")].R(sms)
	queued := uint64(400/r) + 1
	if err := b.Load(queued, 0, "fma_loop", ""); err != nil {
		t.Fatal(err)
	}
	// Then a note every 2 ms: one launch running, no new ones.
	defer noting(2*time.Millisecond, func(uint64) error { return b.Load(queued, 1, "fma_loop", "") })()
	waitShare(t, b, sms)
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if g := b.Grant(); g.Alone || g.Range.Count() == sms {
			t.Fatalf("b, with %d launches queued (%.0f ms of work), lost its share: holds %+v", queued, float64(queued)*r, g)
		}
	}
}

// TestWaitingProcesses: a process whose launches wait for the GPU makes few
// launches. A served launch running on its share counts as busy (it holds
// the share, however slowly the launch runs there): the set stays split.
// Native launches waiting (native_pending) keep a process from being idle
// but do not make it busy: under MPS a short program's launches wait
// behind a long one's, and splitting for it cost the H100 pair 12% (the
// makespan is the long program's either way).
func TestWaitingProcesses(t *testing.T) {
	ps, err := plan.ReadProfileFile("../plan/testdata/example-profiles.json")
	if err != nil {
		t.Fatal(err)
	}
	sms := ps.Device.SMs
	r := ps.Kernels[ps.KernelIndex("fma_loop")].R(sms)
	every := time.Duration(5 * r * float64(time.Millisecond)) // busy 0.2 by its launches
	for _, tc := range []struct {
		name  string
		note  func(b *client.Client, n uint64) error
		split bool
	}{
		{"native launches waiting", func(b *client.Client, n uint64) error { return b.LoadNative(n, "fma_loop", true) }, false},
		{"served launch waiting", func(b *client.Client, n uint64) error { return b.Load(n, 1, "fma_loop", "") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, b, _ := besideTriad(t)
			defer noting(every, func(n uint64) error { return tc.note(b, n) })()
			if !tc.split {
				time.Sleep(150 * time.Millisecond)
				if g := b.Grant(); !g.Alone || g.Range.Count() != sms {
					t.Errorf("b, its native launches waiting, holds %+v: want no split", g)
				}
				if st := h.d.Status(); !st.Clients[1].NativePending {
					t.Errorf("b's status %+v: want native_pending", st.Clients[1])
				}
				return
			}
			waitShare(t, b, sms)
			for end := time.Now().Add(150 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
				if g := b.Grant(); g.Alone || g.Range.Count() == sms {
					t.Fatalf("b, its served launch running, lost its share: holds %+v", g)
				}
			}
			if st := h.d.Status(); st.Clients[1].Busy == nil || *st.Clients[1].Busy < serve.MinBusy {
				t.Errorf("b's status %+v: want busy", st.Clients[1])
			}
		})
	}
}

// TestAlternatingKernelsDoNotChurn: a program that alternates kernels
// launch by launch names a different one in note after note; the daemon
// plans with a kernel only once it has stayed the latest for a while, so
// the split is not redone (and running launches moved) at every note.
func TestAlternatingKernelsDoNotChurn(t *testing.T) {
	_, b, ps := besideTriad(t)
	sms := ps.Device.SMs
	// b's notes, every millisecond with many launches: fma_loop until the
	// split, then 100 notes whose kernel alternates note by note between
	// fma_loop and one without a profile (no plan: overlap), then fma_loop.
	alternate := make(chan struct{})
	alternated := make(chan struct{})
	go func() {
		n := uint64(0)
		note := func(k string) {
			n += 1000
			b.Load(n, 0, k, "")
			time.Sleep(time.Millisecond)
		}
		for {
			select {
			case <-alternate:
				for i := range 100 {
					note(map[bool]string{true: "unprofiled", false: "fma_loop"}[i%2 == 0])
				}
				note("fma_loop")
				close(alternated)
				return
			default:
				note("fma_loop")
			}
		}
	}()
	waitShare(t, b, sms)
	split := b.Grant()
	for len(b.Grants()) > 0 {
		<-b.Grants()
	}
	close(alternate)
	<-alternated
	if n := len(b.Grants()); n > 0 || b.Grant().Epoch != split.Epoch {
		t.Errorf("%d grants pushed to b while its kernels alternated (holds %+v, had %+v): want none", n, b.Grant(), split)
	}
}

// TestUnplannedAuto: the default for processes no plan splits. Under MPS
// (grants bind as SM counts) they get equal shares, unless the profiles
// know every kernel and predict no split pays (one kernel twice here):
// then, and without MPS, the whole GPU each, native.
func TestUnplannedAuto(t *testing.T) {
	ps, err := plan.ReadProfileFile("../plan/testdata/example-profiles.json")
	if err != nil {
		t.Fatal(err)
	}
	sms := ps.Device.SMs
	cases := []struct {
		name    string
		mps     bool
		kernels [2]string
		equal   bool
	}{
		{"mps, unprofiled", true, [2]string{"mystery", "fma_loop"}, true},
		{"mps, unknown kernels", true, [2]string{"", ""}, true},
		{"mps, profiled, no split pays", true, [2]string{"fma_loop", "fma_loop"}, false},
		{"no mps, unprofiled", false, [2]string{"mystery", "fma_loop"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, serve.Config{Profiles: ps, Unplanned: serve.AutoUnplanned, MPS: &serve.MPSState{Active: tc.mps}})
			a, err := client.Connect(client.Options{Socket: h.sock, SMs: sms, HandshakeTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Abort()
			b, err := client.Connect(client.Options{Socket: h.sock, HandshakeTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Abort()
			if tc.kernels[0] != "" {
				launching(t, a, tc.kernels[0])
				launching(t, b, tc.kernels[1])
			}
			want := func(g serve.Grant) bool {
				if tc.equal {
					return !g.Alone && g.Range.Count() == sms/2
				}
				return g.Alone && g.Range == serve.Range{Lo: 0, Hi: sms - 1}
			}
			// The grant settles once the load notes are in (a few ms); it
			// must then hold.
			deadline := time.Now().Add(2 * time.Second)
			for !(want(a.Grant()) && want(b.Grant())) {
				if time.Now().After(deadline) {
					t.Fatalf("a holds %v, b %v; want equal shares: %v", a.Grant(), b.Grant(), tc.equal)
				}
				time.Sleep(time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond)
			if !want(a.Grant()) || !want(b.Grant()) {
				t.Fatalf("later: a holds %v, b %v; want equal shares: %v", a.Grant(), b.Grant(), tc.equal)
			}
			if st := h.d.Status(); !strings.Contains(st.Policy, "equal shares under MPS") {
				t.Errorf("status policy %q", st.Policy)
			}
		})
	}
}

// TestHelloKernelPlansTheJoin: a hello that names the registering launch's
// kernel is planned at the join. Two processes running a kernel the
// profiles know no split pays for (the same one twice) overlap from the
// second one's welcome on, under MPS with --unplanned auto; named by load
// notes only, the join took equal shares first (a 66-SM window of the FMA
// program beside a 1.5 ms SGEMM one cost the pair 0.8% on the H100).
func TestHelloKernelPlansTheJoin(t *testing.T) {
	ps, err := plan.ReadProfileFile("../plan/testdata/example-profiles.json")
	if err != nil {
		t.Fatal(err)
	}
	sms := ps.Device.SMs
	for _, named := range []bool{true, false} {
		t.Run(fmt.Sprintf("named=%v", named), func(t *testing.T) {
			h := newHarness(t, serve.Config{Profiles: ps, Unplanned: serve.AutoUnplanned, MPS: &serve.MPSState{Active: true}})
			kernel := ""
			if named {
				kernel = "fma_loop"
			}
			a, err := client.Connect(client.Options{Socket: h.sock, SMs: sms, Kernel: kernel, HandshakeTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Abort()
			b, err := client.Connect(client.Options{Socket: h.sock, Kernel: kernel, HandshakeTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Abort()
			whole := serve.Range{Lo: 0, Hi: sms - 1}
			if g := b.Grant(); g.Alone != named || (named && g.Range != whole) {
				t.Errorf("the second process's welcome grant %+v; want the whole GPU, native: %v", g, named)
			}
			// The first process's grant pushes, if any, arrive before b's
			// welcome (the daemon pushes the others' first).
			time.Sleep(20 * time.Millisecond)
			if g := a.Grant(); g.Alone != named {
				t.Errorf("the first process holds %+v after the join; want the whole GPU, native: %v", g, named)
			}
		})
	}
}
