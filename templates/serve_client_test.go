package templates_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/serve"
	"github.com/slatec/slatec/serve/client"
	"github.com/slatec/slatec/templates"
)

// The C++ serve client (serve_client.h) is compiled with the host C++
// compiler into testdata/serve_driver.cc, which runs it on a fake device
// (host threads honouring the queue counter and the retreat word, counting
// each logical block's executions), and driven against the real daemon and
// against a scripted fake one.

const driverSMs = 100

var (
	driverOnce sync.Once
	driverPath string
	driverErr  error
)

// cxx finds a host C++ compiler: $CXX, else g++, clang++ or c++.
func cxx() string {
	if c := os.Getenv("CXX"); c != "" {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	for _, c := range []string{"g++", "clang++", "c++"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// buildDriver compiles the driver once per test binary (skips the test
// when there is no C++ compiler).
func buildDriver(t *testing.T) string {
	t.Helper()
	cc := cxx()
	if cc == "" {
		t.Skip("no C++ compiler ($CXX, g++, clang++, c++): the C++ serve client is not tested")
	}
	driverOnce.Do(func() {
		dir, err := os.MkdirTemp("", "slate-serve-driver")
		if err != nil {
			driverErr = err
			return
		}
		// The header as the prelude injects it, so the test covers what
		// transformed programs get.
		if err := os.WriteFile(filepath.Join(dir, "serve_client.h"), []byte(templates.ServeClientHeader()), 0o644); err != nil {
			driverErr = err
			return
		}
		src, err := filepath.Abs(filepath.Join("testdata", "serve_driver.cc"))
		if err != nil {
			driverErr = err
			return
		}
		out := filepath.Join(dir, "serve_driver")
		cmd := exec.Command(cc, "-std=c++11", "-O1", "-Wall", "-Wextra", "-Werror", "-pthread", "-I"+dir, src, "-o", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			driverErr = fmt.Errorf("%s: %v\n%s", cc, err, b)
			return
		}
		driverPath = out
	})
	if driverErr != nil {
		t.Fatal(driverErr)
	}
	return driverPath
}

// driverLaunch is one "launch" line of the driver.
type driverLaunch struct {
	thread, index int
	served, ok    bool
	queued        bool // run by itself on its range, not waited for by the client (begin_queued)
	us            int64
	lateUs        int64 // from the fake kernel's end to run()'s return; -1 when not served
	signals       int64 // moves the listener signalled (launch_ops::signal)
	ranges        []string
}

type driverRun struct {
	connected bool
	connectUs int64
	probeNs   int64 // median of the $SERVE_DRIVER_PROBE connection attempts
	launches  []driverLaunch
	served    int
	frames    int64 // frames the client wrote
	out       string
	stderr    string
}

// runDriver runs the driver with SLATEC_SOCKET=sock (SMS THREADS LAUNCHES
// TOTAL ITERS US_PER_TASK), fails the test if it does not end in time or
// exits non-zero (a logical block ran other than once), and parses its lines.
func runDriver(t *testing.T, sock string, timeout time.Duration, env []string, args ...int) driverRun {
	t.Helper()
	bin := buildDriver(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sargs := []string{strconv.Itoa(driverSMs)}
	for _, a := range args {
		sargs = append(sargs, strconv.Itoa(a))
	}
	cmd := exec.CommandContext(ctx, bin, sargs...)
	// The driver waits for the daemon's welcome before launching unless the
	// test says otherwise (SERVE_DRIVER_WELCOMED=0): tests of the protocol
	// after registration must not race the welcome.
	cmd.Env = append(append(os.Environ(), "SLATEC_SOCKET="+sock, "SLATE_LOG=1", "SERVE_DRIVER_WELCOMED=1"), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	out := string(b)
	if ctx.Err() != nil {
		t.Fatalf("driver did not finish within %v (a hang)\nstdout:\n%s\nstderr:\n%s", timeout, out, stderr.String())
	}
	if err != nil {
		t.Fatalf("driver: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	t.Logf("driver stderr:\n%s", stderr.String())
	r := driverRun{out: out, stderr: stderr.String()}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		kv := map[string]string{}
		for _, x := range f[1:] {
			if k, v, ok := strings.Cut(x, "="); ok {
				kv[k] = v
			}
		}
		num := func(k string) int64 {
			n, err := strconv.ParseInt(kv[k], 10, 64)
			if err != nil {
				t.Fatalf("driver line %q: field %s: %v", sc.Text(), k, err)
			}
			return n
		}
		switch f[0] {
		case "probe":
			r.probeNs = num("p50_ns")
		case "frames":
			r.frames = num("sent")
		case "connect":
			r.connected, r.connectUs = num("served") == 1, num("us")
		case "launch":
			l := driverLaunch{thread: int(num("t")), index: int(num("i")), served: num("served") == 1, queued: num("queued") == 1, ok: num("ok") == 1, us: num("us"), lateUs: num("late_us"), signals: num("signals")}
			if kv["ranges"] != "" {
				l.ranges = strings.Split(kv["ranges"], ",")
			}
			if !l.ok {
				t.Errorf("launch %d/%d: a logical block ran other than once", l.thread, l.index)
			}
			if l.served {
				r.served++
			}
			r.launches = append(r.launches, l)
		}
	}
	if want := args[0] * args[1]; len(r.launches) != want {
		t.Fatalf("driver reported %d launches, want %d:\n%s", len(r.launches), want, out)
	}
	return r
}

func tempSocket(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "slcc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "s", "serve.sock")
}

// startDaemon runs the real daemon (no GPU: the SM count is given).
func startDaemon(t *testing.T, events chan<- serve.Event) *serve.Daemon {
	t.Helper()
	// A resize timeout of 1 s (not 100 ms): a loaded test machine must not
	// turn scheduling delays into "stuck"; acknowledgements take ~1 ms here.
	// Equal shares: these tests check served launches on split ranges
	// (the default, auto, gives unprofiled kernels equal shares under MPS
	// too; said here so that these tests do not depend on it).
	// No idle: the Go client standing for the other process sends no load
	// notes (TestServeClientIdleShareGoesToTheOther tests idleness).
	cfg := serve.Config{Socket: tempSocket(t), SMs: driverSMs, MPS: &serve.MPSState{Active: true}, ResizeTimeout: time.Second,
		Unplanned: serve.EqualShares, IdleAfter: -1, Logf: func(f string, a ...any) { t.Logf("daemon: "+f, a...) }}
	if events != nil {
		cfg.OnEvent = func(ev serve.Event) {
			select {
			case events <- ev:
			default:
			}
		}
	}
	return serveDaemon(t, cfg)
}

// serveDaemon starts a daemon with cfg, stopped when the test ends.
func serveDaemon(t *testing.T, cfg serve.Config) *serve.Daemon {
	t.Helper()
	d, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Serve() }()
	t.Cleanup(func() {
		d.Close()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			t.Error("daemon did not stop")
		}
	})
	return d
}

// goClient registers a second process (the Go client) with the daemon,
// so that the driver is not alone, and acknowledges its grants.
func goClient(t *testing.T, sock string) *client.Client {
	t.Helper()
	c, err := client.Connect(client.Options{Socket: sock, SMs: driverSMs, Name: "other", HandshakeTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Abort)
	go func() {
		for {
			select {
			case g := <-c.Grants():
				c.Ack(g, g.Range, 0, 0)
			case <-c.Lost():
				return
			}
		}
	}()
	return c
}

// waitFor waits for an event of kind from a client other than not.
func waitFor(t *testing.T, events <-chan serve.Event, kind string, not uint64, d time.Duration) serve.Event {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev := <-events:
			if ev.Kind == kind && ev.Client != not {
				return ev
			}
		case <-deadline:
			t.Errorf("no %s event within %v", kind, d)
			return serve.Event{}
		}
	}
}

// TestServeClientAloneIsNative: a process alone under the daemon launches
// natively and sends nothing per launch: the daemon hears hello and a few
// batched load notes (with the launch count), never a message per launch.
func TestServeClientAloneIsNative(t *testing.T) {
	d := startDaemon(t, nil)
	r := runDriver(t, d.Socket(), 20*time.Second, []string{"SERVE_DRIVER_GAP_US=200"}, 1, 200, 64, 4, -1)
	if !r.connected || r.served != 0 {
		t.Fatalf("connected=%v served=%d, want every launch native:\n%s", r.connected, r.served, r.out)
	}
	// hello + load notes, at most one per 2 ms of a ~50 ms run (the gaps).
	if r.frames < 2 || r.frames > 60 {
		t.Errorf("the client wrote %d frames for 200 launches, want hello and a few load notes", r.frames)
	}
	t.Logf("200 native launches: %d frames written", r.frames)
}

// TestServeClientLaunchesNeverWaitForTheDaemon: a fake daemon that answers
// nothing after welcome (or answers 50 ms late): alone, launches run
// natively at once; with a shared grant, they run on its range at once.
func TestServeClientLaunchesNeverWaitForTheDaemon(t *testing.T) {
	for _, alone := range []bool{true, false} {
		t.Run(fmt.Sprintf("alone=%v", alone), func(t *testing.T) {
			var mu sync.Mutex
			var types []string
			sock := fakeDaemon(t, func(t *testing.T, c net.Conn, read func() *serve.Msg) {
				m := read()
				if m == nil {
					return
				}
				if alone {
					welcome(c, m.ID, 0, driverSMs-1, true)
				} else {
					welcome(c, m.ID, 0, 49, false)
				}
				for {
					m := read()
					if m == nil {
						return
					}
					mu.Lock()
					types = append(types, m.Type)
					mu.Unlock()
					time.Sleep(50 * time.Millisecond) // a slow daemon; replies would come late
				}
			})
			r := runDriver(t, sock, 20*time.Second, nil, 1, 20, 64, 4, -1)
			want := 0
			if !alone {
				want = 20
			}
			if !r.connected || r.served != want {
				t.Fatalf("connected=%v served=%d, want %d:\n%s", r.connected, r.served, want, r.out)
			}
			for _, l := range r.launches {
				if l.us > 5000 {
					t.Errorf("launch %d took %d us: it waited for the daemon", l.index, l.us)
				}
				if !alone && strings.Join(l.ranges, ",") != "0:49" {
					t.Errorf("launch %d ran on %v, want the grant 0:49", l.index, l.ranges)
				}
			}
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			for _, ty := range types {
				if ty != serve.TLoad && ty != serve.TBye {
					t.Errorf("the client sent %s; launches send nothing but batched load notes", ty)
				}
			}
		})
	}
}

// TestServeClientGrantsUnderMPSAreCounts: a grant change moves a running
// launch (retreat, drain, relaunch on the new range; acked with the move and
// its task). Under MPS each launch numbers the
// SMs it gets from 0, so the client binds a grant [lo, hi] as [0, hi-lo]
// (range_mode): a new grant of as many SMs moves nothing, a larger one
// grows the launch from 0, and the ack still reports the daemon's range.
// SLATE_RANGES forces places or counts whatever MPS is.
func TestServeClientGrantsUnderMPSAreCounts(t *testing.T) {
	cases := []struct {
		name   string
		mps    bool
		env    []string
		to     serve.Range
		ranges string // where the one served launch ran
		moved  int
	}{
		{"mps same count", true, nil, serve.Range{Lo: 50, Hi: 99}, "0:49", 0},
		{"mps larger", true, nil, serve.Range{Lo: 30, Hi: 99}, "0:49,0:69", 1},
		{"mps smaller", true, nil, serve.Range{Lo: 90, Hi: 99}, "0:49,0:9", 1},
		{"mps forced places", true, []string{"SLATE_RANGES=places"}, serve.Range{Lo: 50, Hi: 99}, "0:49,50:99", 1},
		{"no mps", false, nil, serve.Range{Lo: 50, Hi: 99}, "0:49,50:99", 1},
		{"no mps forced counts", false, []string{"SLATE_RANGES=counts"}, serve.Range{Lo: 50, Hi: 99}, "0:49", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			acked := make(chan *serve.Msg, 1)
			sock := fakeDaemon(t, func(t *testing.T, c net.Conn, read func() *serve.Msg) {
				m := read()
				if m == nil {
					return
				}
				welcomeMPS(c, m.ID, 0, 49, false, tc.mps)
				if m = read(); m == nil || m.Type != serve.TLoad || m.InFlight != 1 {
					t.Errorf("want a load note of the running launch, got %+v", m)
					return
				}
				frame(c, fmt.Sprintf(`{"v":2,"type":"grant","id":7,"range":{"lo":%d,"hi":%d},"clients":2}`, tc.to.Lo, tc.to.Hi))
				for {
					m := read()
					if m == nil {
						return
					}
					if m.Type == serve.TAck {
						acked <- m
						break
					}
				}
				for read() != nil {
				}
			})
			// 4000 blocks, 4 a task, 8 fake workers, 300 us a task: ~40 ms a launch.
			r := runDriver(t, sock, 20*time.Second, tc.env, 1, 1, 4000, 4, 300)
			if r.served != 1 || strings.Join(r.launches[0].ranges, ",") != tc.ranges {
				t.Fatalf("served=%d ranges %v, want %s:\n%s", r.served, r.launches[0].ranges, tc.ranges, r.out)
			}
			select {
			case a := <-acked:
				// A move's ack carries the task it waited for (the fake's 300 us).
				if a.Epoch != 7 || a.Range == nil || *a.Range != tc.to || a.Moved != tc.moved || (tc.moved > 0) != (a.TaskUs == 300) {
					t.Errorf("ack %+v, want epoch 7, range %v, %d moved (with its task of 300 us)", a, tc.to, tc.moved)
				}
				t.Logf("ack: drain %d us, task %d us", a.DrainUs, a.TaskUs)
			case <-time.After(3 * time.Second):
				t.Fatal("no ack")
			}
		})
	}
}

// TestServeClientStarvedLaunchStartsAgain: a served launch whose workers
// all exit outside its range (other work held its SMs) ends with its
// blocks not handed out; the client starts it again on the range, and
// after kMaxStarts (32) starved starts on all SMs. Every block runs once.
func TestServeClientStarvedLaunchStartsAgain(t *testing.T) {
	for _, tc := range []struct {
		starve int
		want   string // the launch's last range
	}{{3, "0:49"}, {40, "0:99"}} {
		sock := fakeDaemon(t, func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			m := read()
			if m == nil {
				return
			}
			welcome(c, m.ID, 0, 49, false)
			for read() != nil {
			}
		})
		r := runDriver(t, sock, 20*time.Second, []string{"SERVE_DRIVER_STARVE=" + strconv.Itoa(tc.starve)}, 1, 1, 400, 4, 0)
		if r.served != 1 || len(r.launches) != 1 || !r.launches[0].ok {
			t.Fatalf("starve %d: served=%d launches %+v, want one served launch with every block once:\n%s", tc.starve, r.served, r.launches, r.out)
		}
		rs := r.launches[0].ranges
		if len(rs) != tc.starve+1 || rs[len(rs)-1] != tc.want {
			t.Errorf("starve %d: %d starts, last on %s; want %d, last on %s", tc.starve, len(rs), rs[len(rs)-1], tc.starve+1, tc.want)
		}
	}
}

// TestServeClientAgainstDaemon: with the real daemon, two threads of the
// driver launch on its half while another process is registered; when that
// process leaves, the running launches grow to the whole GPU (acked ok),
// and the launches after run natively (alone). The daemon reports MPS
// active, so its half 50:99 binds as the count 0:49 (range_mode).
func TestServeClientAgainstDaemon(t *testing.T) {
	events := make(chan serve.Event, 4096)
	d := startDaemon(t, events)
	other := goClient(t, d.Socket())
	go func() {
		waitFor(t, events, "load", other.ID(), 10*time.Second) // the driver's launches run
		time.Sleep(10 * time.Millisecond)
		other.Close()
	}()
	// 8000 blocks, 4 a task, 8 fake workers, 300 us a task: ~75 ms a launch.
	r := runDriver(t, d.Socket(), 30*time.Second, nil, 2, 3, 8000, 4, 300)
	if !r.connected || r.served < 2 {
		t.Fatalf("connected=%v served=%d, want the first launches served:\n%s", r.connected, r.served, r.out)
	}
	// SLATE_SERVE_SPIN unset: the client spins while two processes share
	// the GPU when they leave half of this host's cores free (the log
	// says so when it turns on; off is where it starts).
	spins := 4*2 <= runtime.NumCPU()
	said := strings.Contains(r.out, "spin-wait on (auto: 2 processes, "+strconv.Itoa(runtime.NumCPU())+" cores)")
	if spins != said || strings.Contains(r.out, "spin-wait") != spins {
		t.Errorf("with %d cores the client should spin: %v; its log:\n%s", runtime.NumCPU(), spins, r.out)
	}
	grown := 0
	for _, l := range r.launches {
		if l.served && strings.Join(l.ranges, ",") == "0:49,0:99" {
			grown++
			if l.signals != 0 {
				t.Errorf("launch %+v: %d signals from the listener, want none by default", l, l.signals)
			}
		}
		if l.index == 2 && l.served {
			t.Errorf("launch %+v served after the other process left (alone: native)", l)
		}
	}
	if grown == 0 {
		t.Errorf("no running launch grew from 0:49 (the grant 50:99 as a count) to 0:99:\n%s", r.out)
	}
	st := d.Status()
	for deadline := time.Now().Add(3 * time.Second); len(st.Clients) != 0 && time.Now().Before(deadline); st = d.Status() {
		time.Sleep(10 * time.Millisecond)
	}
	ok, tasked := 0, 0
	for _, rr := range st.Resizes {
		if rr.Outcome != "ok" {
			t.Errorf("grant change %+v: outcome %s, want ok", rr, rr.Outcome)
		}
		// The C++ client's ack says when the grant arrived (CLOCK_MONOTONIC,
		// this host): its delivery is timed, and with the drain it cannot
		// exceed the push-to-ack time. (The Go client "other" says nothing.)
		if rr.Outcome == "ok" && rr.Name != "other" && runtime.GOOS == "linux" && (rr.DeliverUs <= 0 || rr.DeliverUs+float64(rr.DrainUs) > rr.LatencyUs+1) {
			t.Errorf("grant change %+v: delivered in %.0f us + drained in %d us against %.0f us from the push to the ack", rr, rr.DeliverUs, rr.DrainUs, rr.LatencyUs)
		}
		// Its parts are in order: the frame written (unless it was queued),
		// the listener woken with it, the grant taken under the lock.
		if rr.Outcome == "ok" && rr.Name != "other" && runtime.GOOS == "linux" && (rr.WokeUs <= 0 || rr.WokeUs > rr.DeliverUs || rr.WrittenUs > rr.WokeUs) {
			t.Errorf("grant change %+v: written %.1f us, woke %.1f us, taken %.1f us after the push: want 0 <= written <= woke <= taken, woke > 0", rr, rr.WrittenUs, rr.WokeUs, rr.DeliverUs)
		}
		if rr.Outcome == "ok" && rr.Moved > 0 {
			ok++
			if rr.TaskUs == 300 { // the fake's task: the client's ack carried it to the record
				tasked++
			}
			t.Logf("grant %d acked: %s -> %s, %d moved, delivered in %.0f us, drain %d us (task %d us), ack %.0f us after the push", rr.Epoch, rr.From, rr.To, rr.Moved, rr.DeliverUs, rr.DrainUs, rr.TaskUs, rr.LatencyUs)
		}
	}
	if ok == 0 || tasked == 0 {
		t.Errorf("the daemon recorded %d acknowledged moves, %d with the launch's task time (300 us): %+v", ok, tasked, st.Resizes)
	}
	if len(st.Clients) != 0 {
		t.Errorf("clients left after the program exited: %+v", st.Clients)
	}
}

// TestServeClientSignalledLaunchWhoseRangeComesBack: the listener tells a
// launch's workers to retreat as a grant moves it (launch_ops::signal), and
// the next grant gives the range back before the launching thread acts:
// the launch still drains and starts again (its workers left), every block
// runs once, and both grants are acknowledged. (Without the retreat after
// a signal, the workers that left would leave the launch short of blocks
// with the retreat word still set: it would start again and again.)
func TestServeClientSignalledLaunchWhoseRangeComesBack(t *testing.T) {
	acks := make(chan uint64, 4)
	sock := fakeDaemon(t, func(t *testing.T, c net.Conn, read func() *serve.Msg) {
		m := read()
		if m == nil {
			return
		}
		welcome(c, m.ID, 0, 49, false)
		for {
			if m = read(); m == nil {
				return
			}
			if m.Type == serve.TLoad && m.InFlight > 0 {
				break
			}
		}
		// Both at once: the second arrives before the launching thread
		// has woken for the first, most of the time.
		frame(c, `{"v":2,"type":"grant","id":7,"range":{"lo":50,"hi":99},"clients":2}`)
		frame(c, `{"v":2,"type":"grant","id":8,"range":{"lo":0,"hi":49},"clients":2}`)
		for m = read(); m != nil; m = read() {
			if m.Type == serve.TAck {
				acks <- m.Epoch
			}
		}
	})
	// 8000 blocks, 4 a task, 300 us a task: ~75 ms a launch.
	r := runDriver(t, sock, 30*time.Second, []string{"SLATE_SERVE_SIGNAL=1"}, 1, 2, 8000, 4, 300)
	if r.served != 2 {
		t.Fatalf("served=%d, want both launches served:\n%s", r.served, r.out)
	}
	first := r.launches[0]
	if first.signals != 1 {
		t.Errorf("first launch %+v: %d signals, want 1 (grant 7 moved it)", first, first.signals)
	}
	if last := first.ranges[len(first.ranges)-1]; last != "0:49" {
		t.Errorf("first launch ran on %v; want it to end on 0:49 (grant 8)", first.ranges)
	}
	select {
	case e := <-acks:
		if e != 8 {
			// An ack of 7 first is fine too when the thread woke between them.
			if e2 := <-acks; e2 != 8 {
				t.Errorf("acks %d, %d; want grant 8 acknowledged", e, e2)
			}
		}
	case <-time.After(5 * time.Second):
		t.Error("no ack of the grant that gave the range back")
	}
}

// TestServeClientAcksOnceTheWorkersLeft: a move is acknowledged as soon as
// the workers have left the old range (launch_ops::drain), before the
// progress is read back and the launch relaunched (settle, start): with a
// settle of 300 ms the ack still comes within a few ms of the grant, and
// the launch ends on the new range with every block once.
func TestServeClientAcksOnceTheWorkersLeft(t *testing.T) {
	ackAfter := make(chan time.Duration, 1)
	sock := fakeDaemon(t, func(t *testing.T, c net.Conn, read func() *serve.Msg) {
		m := read()
		if m == nil {
			return
		}
		welcome(c, m.ID, 0, 49, false)
		for {
			if m = read(); m == nil {
				return
			}
			if m.Type == serve.TLoad && m.InFlight > 0 {
				break
			}
		}
		pushed := time.Now()
		frame(c, `{"v":2,"type":"grant","id":7,"range":{"lo":50,"hi":99},"clients":2}`)
		for m = read(); m != nil; m = read() {
			if m.Type == serve.TAck && m.Epoch == 7 {
				ackAfter <- time.Since(pushed)
				break
			}
		}
		for read() != nil {
		}
	})
	// 8000 blocks, 4 a task, 300 us a task: ~75 ms a launch.
	r := runDriver(t, sock, 30*time.Second, []string{"SERVE_DRIVER_SETTLE_MS=300"}, 1, 1, 8000, 4, 300)
	if l := r.launches[0]; !l.served || strings.Join(l.ranges, ",") != "0:49,50:99" {
		t.Fatalf("launch %+v: want it served on 0:49, then moved to 50:99:\n%s", l, r.out)
	}
	select {
	case d := <-ackAfter:
		if d > 150*time.Millisecond {
			t.Errorf("the ack came %v after the grant; want it before the 300 ms settle", d)
		}
	case <-time.After(5 * time.Second):
		t.Error("no ack of grant 7")
	}
}

// TestServeClientMoveVariants: the ways a launching thread can learn of a
// move, each off by default ($SLATE_SERVE_SIGNAL=1: the listener sets the
// retreat word as the grant arrives, once per move; $SLATE_SERVE_SPIN=1: the
// launching thread polls instead of sleeping): the move is the same, every
// block runs once (the driver checks).
func TestServeClientMoveVariants(t *testing.T) {
	for _, tc := range []struct {
		env     string
		signals int64
	}{
		{"SLATE_SERVE_SIGNAL=1", 1},
		{"SLATE_SERVE_SPIN=1", 0},
	} {
		t.Run(tc.env, func(t *testing.T) {
			events := make(chan serve.Event, 4096)
			d := startDaemon(t, events)
			other := goClient(t, d.Socket())
			go func() {
				waitFor(t, events, "load", other.ID(), 10*time.Second)
				time.Sleep(10 * time.Millisecond)
				other.Close()
			}()
			r := runDriver(t, d.Socket(), 30*time.Second, []string{tc.env}, 1, 2, 8000, 4, 300)
			grown := 0
			for _, l := range r.launches {
				if l.served && strings.Join(l.ranges, ",") == "0:49,0:99" {
					grown++
					if l.signals != tc.signals {
						t.Errorf("launch %+v grew after %d signals from the listener, want %d", l, l.signals, tc.signals)
					}
				}
			}
			if grown == 0 {
				t.Errorf("no launch grew from 0:49 to 0:99:\n%s", r.out)
			}
		})
	}
}

// TestServeClientNativeLaunchesNameTheirKernel: with profiles and the
// overlap (the default before auto), two processes start on the whole GPU, launching
// natively; the daemon can plan their split only from the kernels their
// load notes name, so native launches must name theirs too. The driver's
// kernel (k0) and the other process's are profiled as a complementary
// pair: the plan splits them, and the driver's later launches run served on
// its share. (Native launches once sent no kernel: under overlap the daemon
// never learned what ran and never split, on the GPU too.)
func TestServeClientNativeLaunchesNameTheirKernel(t *testing.T) {
	ps, err := plan.ReadProfileFile("../plan/testdata/example-profiles.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := range ps.Kernels {
		switch ps.Kernels[i].Name {
		case "triad_f4":
			ps.Kernels[i].Name = "k0"
		case "fma_loop":
			ps.Kernels[i].Name = "other"
		}
	}
	d := serveDaemon(t, serve.Config{Socket: tempSocket(t), SMs: driverSMs, MPS: &serve.MPSState{Active: true}, ResizeTimeout: time.Second,
		IdleAfter: -1, Profiles: ps, Unplanned: serve.Overlap, Logf: func(f string, a ...any) { t.Logf("daemon: "+f, a...) }})
	other := goClient(t, d.Socket())
	// The other process keeps the GPU busy: a note every millisecond with
	// many launches (the daemon splits only busy processes).
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for n := uint64(1000); ; n += 1000 {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				if other.Load(n, 0, "other", "") != nil {
					return
				}
			}
		}
	}()
	// 600 launches 200 us apart (~150 ms): the first run natively on the
	// whole GPU (overlap), the plan's split follows the first load note.
	r := runDriver(t, d.Socket(), 30*time.Second, []string{"SERVE_DRIVER_GAP_US=200"}, 1, 600, 64, 4, -1)
	if !r.connected {
		t.Fatalf("the driver did not connect:\n%s", r.out)
	}
	native, split := 0, 0
	for _, l := range r.launches {
		switch {
		case !l.served:
			native++
		case len(l.ranges) == 1 && l.ranges[0] != fmt.Sprintf("0:%d", driverSMs-1):
			split++
		}
	}
	if native == 0 || split == 0 {
		t.Fatalf("%d native and %d launches on a split range, want the first native (overlap) and later ones on the plan's share:\n%s",
			native, split, r.out)
	}
	t.Logf("%d launches native, then %d on the planned share", native, split)
}

// TestServeClientSaysNativeLaunchesAreRunning: while other processes are
// registered (the grant says how many), the client follows its native
// launches (the prelude records an event after each) and its load notes say
// whether they are still running, so that the daemon sees a process whose
// launches wait behind another's as busy. Alone it follows nothing.
func TestServeClientSaysNativeLaunchesAreRunning(t *testing.T) {
	for _, tc := range []struct {
		name  string
		other bool
		later bool // the other process joins after the driver (its grant changes)
		held  bool // its native launches wait for older ones (the native budget): the notes say held
	}{{"sharing", true, false, false}, {"sharing, the other joins later", true, true, false}, {"alone", false, false, false},
		{"sharing, held to the budget", true, false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			d := serveDaemon(t, serve.Config{Socket: tempSocket(t), SMs: driverSMs, MPS: &serve.MPSState{Active: true}, ResizeTimeout: time.Second,
				IdleAfter: -1, Unplanned: serve.Overlap, Logf: func(f string, a ...any) { t.Logf("daemon: "+f, a...) }}) // overlap: native launches
			if tc.other && !tc.later {
				goClient(t, d.Socket())
			}
			if tc.later {
				go func() {
					time.Sleep(20 * time.Millisecond)
					c, err := client.Connect(client.Options{Socket: d.Socket(), SMs: driverSMs, Name: "other", HandshakeTimeout: 2 * time.Second})
					if err == nil {
						t.Cleanup(c.Abort)
					}
				}()
			}
			seen := make(chan [2]bool, 1)
			stop := make(chan struct{})
			go func() { // the daemon's view of the driver, every 500 us
				var pending, held bool
				defer func() { seen <- [2]bool{pending, held} }()
				for {
					select {
					case <-stop:
						return
					case <-time.After(500 * time.Microsecond):
					}
					for _, c := range d.Status().Clients {
						if c.Name == "serve_driver" {
							pending = pending || c.NativePending
							held = held || c.Held
						}
					}
				}
			}()
			var env []string
			if tc.held {
				env = []string{"SERVE_DRIVER_HELD=1"}
			}
			// 40 native launches of ~2 ms (one 2000 us task each).
			r := runDriver(t, d.Socket(), 30*time.Second, env, 1, 40, 16, 16, 2000)
			close(stop)
			views := <-seen
			pending, held := views[0], views[1]
			if held != tc.held {
				t.Errorf("the daemon saw the driver held: %v, want %v", held, tc.held)
			}
			if !r.connected || r.served != 0 {
				t.Fatalf("connected=%v served=%d, want every launch native:\n%s", r.connected, r.served, r.out)
			}
			if pending != tc.other {
				t.Errorf("the daemon saw native launches running: %v, want %v", pending, tc.other)
			}
		})
	}
}

// TestServeClientFollowsLaunchesBeforeTheWelcome: a program's first
// launches run natively before the welcome says whether others are
// registered; they are followed too (a warm-up, then a synchronize, may
// wait behind another program's launches for tens of milliseconds, and
// the daemon must see that). The fake daemon welcomes 30 ms into a 100 ms
// launch, saying two clients are registered.
func TestServeClientFollowsLaunchesBeforeTheWelcome(t *testing.T) {
	buildDriver(t)
	pending := make(chan bool, 1)
	sock := fakeDaemon(t, func(t *testing.T, c net.Conn, read func() *serve.Msg) {
		m := read()
		if m == nil || m.Type != serve.THello {
			return
		}
		time.Sleep(30 * time.Millisecond)
		welcome(c, m.ID, 0, driverSMs-1, true)
		seen := false
		defer func() { pending <- seen }()
		for {
			m := read()
			if m == nil {
				return
			}
			if m.Type == serve.TLoad && m.NativePending {
				seen = true
			}
		}
	})
	r := runDriver(t, sock, 20*time.Second, []string{"SERVE_DRIVER_WELCOMED=0"}, 1, 1, 16, 16, 100000)
	if r.served != 0 || len(r.launches) != 1 {
		t.Fatalf("served=%d launches=%d, want one native launch:\n%s", r.served, len(r.launches), r.out)
	}
	if !<-pending {
		t.Errorf("no load note said the launch made before the welcome was running:\n%s", r.out)
	}
}

// TestServeClientSeesTheEndOfALaunchSoon: a served launch returns when its
// kernel has ended, and the program's next launch waits for that, so the
// time between the two is GPU time lost. The client waits for most of the
// kernel's last time on its range, then looks every 5 us: launches after
// the first are seen ended within microseconds (the backoff to
// 320 us polls the client had saw a 600 us kernel's end ~350 us late).
func TestServeClientSeesTheEndOfALaunchSoon(t *testing.T) {
	d := startDaemon(t, nil)
	goClient(t, d.Socket())
	// 64 blocks, 4 a task, 8 fake workers, 300 us a task: ~600 us a launch.
	r := runDriver(t, d.Socket(), 30*time.Second, nil, 1, 41, 64, 4, 300)
	var late []int64
	for _, l := range r.launches {
		if l.served && l.index > 0 && len(l.ranges) == 1 {
			late = append(late, l.lateUs)
		}
	}
	if len(late) < 20 {
		t.Fatalf("%d served launches after the first on one range, want most of 40:\n%s", len(late), r.out)
	}
	slices.Sort(late)
	med := late[len(late)/2]
	t.Logf("a launch's end seen after: median %d us, max %d us (%d launches)", med, late[len(late)-1], len(late))
	// A loaded machine (the whole test suite at once) delays wakeups: the
	// bound is well above the ~10 us of an idle one and below the ~350 of
	// the old backoff.
	if med > 150 {
		t.Errorf("the median launch was seen ended %d us after its kernel ended, want <= 150", med)
	}
}

// TestServeClientRecoversFromALongLaunch: the expected time is the last
// launch's; two launches that ran 60x long (behind another process's
// kernels) must not make the quick ones after them wait for most of that:
// from the tenth launch on they take about their own time again, as in a
// run without the long ones (the same test, so the same machine load).
// What bounds it: the client looks at least every 2 ms while it sleeps,
// and sleeps through only half the expected time.
func TestServeClientRecoversFromALongLaunch(t *testing.T) {
	d := startDaemon(t, nil)
	goClient(t, d.Socket())
	median := func(env []string) int64 {
		t.Helper()
		// 64 blocks, 4 a task, 8 workers: 2 tasks a worker; 300 us a task
		// (~600 us a launch).
		r := runDriver(t, d.Socket(), 30*time.Second, env, 1, 20, 64, 4, 300)
		var us []int64
		for _, l := range r.launches {
			if l.served && l.index >= 9 && len(l.ranges) == 1 {
				us = append(us, l.us)
			}
		}
		if len(us) < 8 {
			t.Fatalf("%d served launches from the tenth on, want most of 11:\n%s", len(us), r.out)
		}
		slices.Sort(us)
		return us[len(us)/2]
	}
	quick := median(nil)
	// The first two: 20000 us a task, ~40 ms a launch.
	after := median([]string{"SERVE_DRIVER_SLOW=2:20000"})
	// The run without them again, after: the slower of the two is the
	// yardstick (on a machine whose load rose between the runs, CI's
	// other packages, the quick launches of the second run took 3.7 ms
	// against 1.4 in the first).
	quick = max(quick, median(nil))
	t.Logf("launches 10-20: median %d us after two 40 ms launches, %d us without them", after, quick)
	if after > 2*quick+500 {
		t.Errorf("launches after two long ones take %d us (median), want about their own %d us", after, quick)
	}
}

// TestServeClientQueuesShortLaunches: once a kernel's synchronous served
// launch measured it, its launches expected to take at most half of
// $SLATE_SERVE_QUEUE_US (default 4000) are queued on the granted range
// (begin_queued), except every 64th, which runs synchronously and measures
// it again. A budget of 0, or one the kernel's time exceeds half of, keeps
// every launch synchronous. Every block runs once throughout. (The queued
// case takes a 100 ms budget: on a loaded machine a 600 us fake launch
// can measure over the default's 2 ms half.)
func TestServeClientQueuesShortLaunches(t *testing.T) {
	d := startDaemon(t, nil)
	goClient(t, d.Socket())
	for _, tc := range []struct {
		name   string
		env    []string
		queued bool
	}{
		{"queued", []string{"SLATE_SERVE_QUEUE_US=100000"}, true},
		{"off", []string{"SLATE_SERVE_QUEUE_US=0"}, false},
		{"over half the budget", []string{"SLATE_SERVE_QUEUE_US=800"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 64 blocks, 4 a task, 8 fake workers, 300 us a task: ~600 us a launch.
			r := runDriver(t, d.Socket(), 30*time.Second, append([]string{"SERVE_DRIVER_QUEUE=1"}, tc.env...), 1, 70, 64, 4, 300)
			var sync []int
			for _, l := range r.launches {
				if !l.served {
					t.Fatalf("launch %d ran natively, want every launch on the granted range:\n%s", l.index, r.out)
				}
				if len(l.ranges) != 1 || l.ranges[0] != r.launches[0].ranges[0] {
					t.Errorf("launch %d ran on %v, want the grant's one range %s", l.index, l.ranges, r.launches[0].ranges[0])
				}
				if !l.queued {
					sync = append(sync, l.index)
				}
			}
			if tc.queued && !slices.Equal(sync, []int{0, 64}) {
				t.Errorf("synchronous launches %v, want the first (measured) and the 64th after it (measured again)", sync)
			}
			if !tc.queued && len(sync) != len(r.launches) {
				t.Errorf("%d of %d launches synchronous, want all", len(sync), len(r.launches))
			}
		})
	}
}

// regrantAfterFive is a fake daemon that welcomes the driver on 0:49, moves
// it to 50:99 (grant 7) once a load note counts five launches, and hands
// the driver's ack to the test.
func regrantAfterFive(t *testing.T) (sock string, acked <-chan *serve.Msg) {
	t.Helper()
	ch := make(chan *serve.Msg, 1)
	sock = fakeDaemon(t, func(t *testing.T, c net.Conn, read func() *serve.Msg) {
		m := read()
		if m == nil {
			return
		}
		welcome(c, m.ID, 0, 49, false)
		for {
			if m = read(); m == nil {
				return
			}
			if m.Type == serve.TLoad && m.Launches >= 5 {
				break
			}
		}
		frame(c, `{"v":2,"type":"grant","id":7,"range":{"lo":50,"hi":99},"clients":2}`)
		for {
			if m = read(); m == nil {
				return
			}
			if m.Type == serve.TAck {
				ch <- m
				break
			}
		}
		for read() != nil {
		}
	})
	return sock, ch
}

// TestServeClientAckIsNotHeldOffByQueuedLaunches: the ack of a grant
// change waits for the queued launches that took the old range, not for
// those begun since: a program that launches back to back, always between
// begin_queued and end_queued (SERVE_DRIVER_QUEUE_HOLD), is acknowledged
// within a launch or so, not when it stops launching (~250 ms here).
// (Counting every launch in the window, as before, passed this too on a
// 2-core machine: the drain thread won the mutex within a launch or two.
// Generations make the bound certain rather than likely.)
func TestServeClientAckIsNotHeldOffByQueuedLaunches(t *testing.T) {
	sock, acked := regrantAfterFive(t)
	r := runDriver(t, sock, 30*time.Second, []string{"SERVE_DRIVER_QUEUE=1", "SERVE_DRIVER_QUEUE_HOLD=1", "SLATE_SERVE_QUEUE_US=100000"}, 1, 400, 64, 4, 300)
	select {
	case a := <-acked:
		if a.Epoch != 7 || a.NativeUs > 100000 {
			t.Errorf("ack %+v: want epoch 7 within a launch or so of the change (native_us), not when the launches stop", a)
		}
		t.Logf("ack: native_us %d, drain_us %d", a.NativeUs, a.DrainUs)
	case <-time.After(3 * time.Second):
		t.Fatal("no ack")
	}
	if last := r.launches[len(r.launches)-1]; len(last.ranges) != 1 || last.ranges[0] != "50:99" {
		t.Errorf("the last launch ran on %v, want 50:99", last.ranges)
	}
}

// TestServeClientRunsSmallGridsNatively: sharing the GPU, a launch whose
// grid has no more blocks than the granted range has SMs runs natively
// (take_small); a larger one runs on the range. With SLATE_SERVE_SMALL=gpu
// the bound is the GPU's SMs; with 0 every grid runs on the range. Under MPS
// (grants are counts) every grid runs on its count unless
// SLATE_SERVE_SMALL says otherwise.
func TestServeClientRunsSmallGridsNatively(t *testing.T) {
	for _, tc := range []struct {
		blocks int
		small  string
		native bool
		mps    bool // grants are counts: small grids are bound too unless SLATE_SERVE_SMALL says
	}{{40, "", true, false}, {50, "", true, false}, {51, "", false, false}, {51, "gpu", true, false}, {driverSMs, "gpu", true, false},
		{driverSMs + 1, "gpu", false, false}, {40, "0", false, false},
		{40, "", false, true}, {40, "1", true, true}, {51, "gpu", true, true}} {
		sock := fakeDaemon(t, func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			m := read()
			if m == nil {
				return
			}
			welcomeMPS(c, m.ID, 0, 49, false, tc.mps)
			for read() != nil {
			}
		})
		r := runDriver(t, sock, 20*time.Second, []string{"SERVE_DRIVER_QUEUE=1", "SLATE_SERVE_SMALL=" + tc.small}, 1, 3, tc.blocks, 1, 0)
		for _, l := range r.launches {
			if l.served == tc.native {
				t.Errorf("%d blocks on a 50-SM range (SLATE_SERVE_SMALL=%q, MPS %v): launch %d served=%v, want native %v:\n%s", tc.blocks, tc.small, tc.mps, l.index, l.served, tc.native, r.out)
			}
		}
	}
}

// TestServeClientAckWaitsForQueuedLaunches: a queued launch cannot move;
// when the grant changes, the ack waits for the native drain (here 30 ms)
// that covers the launches queued so far, says how long it took, and the
// launches after it run on the new range. A queue budget of 20 ms: the fake
// kernel (~600 us) is queued even when a loaded host runs its fake workers
// 10x slower (at the default 4 ms, the first launch timed above 2 ms made
// every launch before the regrant synchronous), and 20 ms ahead is less
// than the 80 launches, so some are queued after the regrant too.
func TestServeClientAckWaitsForQueuedLaunches(t *testing.T) {
	sock, acked := regrantAfterFive(t)
	r := runDriver(t, sock, 30*time.Second, []string{"SERVE_DRIVER_QUEUE=1", "SERVE_DRIVER_NATIVE_MS=30", "SLATE_SERVE_QUEUE_US=20000"}, 1, 80, 64, 4, 300)
	select {
	case a := <-acked:
		if a.Epoch != 7 || a.Range == nil || *a.Range != (serve.Range{Lo: 50, Hi: 99}) || a.NativeUs < 30000 || a.DrainUs < 30000 {
			t.Errorf("ack %+v, want epoch 7, 50:99, after the 30 ms drain of the queued launches (native_us, drain_us)", a)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no ack")
	}
	queuedBefore, queuedAfter := 0, 0
	for _, l := range r.launches {
		switch {
		case l.queued && len(l.ranges) == 1 && l.ranges[0] == "0:49":
			queuedBefore++
		case l.queued && len(l.ranges) == 1 && l.ranges[0] == "50:99":
			queuedAfter++
		case l.queued:
			t.Errorf("queued launch %d on %v", l.index, l.ranges)
		}
	}
	last := r.launches[len(r.launches)-1]
	if queuedBefore == 0 || queuedAfter == 0 || len(last.ranges) != 1 || last.ranges[0] != "50:99" {
		t.Errorf("%d queued launches on 0:49, %d on 50:99, the last on %v; want both, the last on 50:99:\n%s", queuedBefore, queuedAfter, last.ranges, r.out)
	}
}

// TestServeClientNativeDrain: a process alone launches natively; when
// another registers, its ack waits for the native launches in flight (the
// fake drain: 30 ms) and reports it.
func TestServeClientNativeDrain(t *testing.T) {
	events := make(chan serve.Event, 4096)
	d := startDaemon(t, events)
	go func() {
		ev := waitFor(t, events, "load", 0, 10*time.Second)
		goClient(t, d.Socket())
		waitFor(t, events, "ack", 0, 5*time.Second)
		_ = ev
	}()
	r := runDriver(t, d.Socket(), 30*time.Second, []string{"SERVE_DRIVER_NATIVE_MS=30", "SERVE_DRIVER_GAP_US=2000"}, 1, 60, 4000, 4, -1)
	if !r.connected {
		t.Fatal("not connected")
	}
	var rec *serve.ResizeRecord
	for deadline := time.Now().Add(3 * time.Second); rec == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, rr := range d.Status().Resizes {
			if rr.NativeUs > 0 {
				rec = &rr
			}
		}
	}
	if rec == nil {
		t.Fatalf("no ack reported a native drain: %+v", d.Status().Resizes)
	}
	if rec.NativeUs < 30000 || rec.Outcome != "ok" || rec.LatencyUs < 30000 {
		t.Errorf("record %+v: want the ack after the 30 ms native drain", *rec)
	}
}

// TestServeClientStuck: a client whose drain takes longer than the resize
// timeout is marked stuck by the daemon (the others never waited), and its
// late ack clears the mark.
func TestServeClientStuck(t *testing.T) {
	events := make(chan serve.Event, 4096)
	cfg := serve.Config{Socket: tempSocket(t), SMs: driverSMs, MPS: &serve.MPSState{Active: true}, ResizeTimeout: 50 * time.Millisecond, IdleAfter: -1,
		Unplanned: serve.EqualShares, Logf: func(f string, a ...any) { t.Logf("daemon: "+f, a...) },
		OnEvent: func(ev serve.Event) {
			select {
			case events <- ev:
			default:
			}
		}}
	d, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go d.Serve()
	t.Cleanup(func() { d.Close() })
	other := goClient(t, d.Socket())
	go func() {
		waitFor(t, events, "load", other.ID(), 10*time.Second)
		other.Close()
	}()
	r := runDriver(t, d.Socket(), 30*time.Second, []string{"SERVE_DRIVER_RETREAT_MS=250"}, 1, 1, 8000, 4, 300)
	if r.served != 1 {
		t.Fatalf("served=%d:\n%s", r.served, r.out)
	}
	var outcomes []string
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		outcomes = outcomes[:0]
		for _, rr := range d.Status().Resizes {
			if rr.Client != other.ID() {
				outcomes = append(outcomes, rr.Outcome)
			}
		}
		if strings.Join(outcomes, ",") == "timeout,late" {
			return
		}
	}
	t.Fatalf("grant outcomes %v, want timeout then late", outcomes)
}

// TestServeClientDetachesAKernelThatWaitsForTheHost: a served launch
// returns when its kernel is done, but a kernel may wait for the host to act
// after its launch: past $SLATE_SERVE_DETACH_MS the launch is detached (it
// runs on by itself, no longer moved), so the program goes on instead of
// hanging; every block still runs once.
func TestServeClientDetachesAKernelThatWaitsForTheHost(t *testing.T) {
	d := startDaemon(t, nil)
	goClient(t, d.Socket()) // not alone: the launch is served
	r := runDriver(t, d.Socket(), 20*time.Second, []string{"SERVE_DRIVER_HOLD=1", "SLATE_SERVE_DETACH_MS=200"}, 1, 1, 2000, 4, 0)
	if !r.connected || r.served != 1 {
		t.Fatalf("connected=%v served=%d, want the launch served:\n%s", r.connected, r.served, r.out)
	}
	m := regexp.MustCompile(`returned t=0 i=0 detached=(\d) us=(\d+)`).FindStringSubmatch(r.out)
	if m == nil {
		t.Fatalf("no 'returned' line:\n%s", r.out)
	}
	if m[1] != "1" {
		t.Errorf("the launch returned without detaching:\n%s", r.out)
	}
	us, _ := strconv.ParseInt(m[2], 10, 64)
	if us < 200_000 || us > 5_000_000 {
		t.Errorf("the launch returned after %d us, want just past the 200 ms limit", us)
	}
	for _, l := range r.launches {
		if !l.ok {
			t.Errorf("launch %+v: a logical block did not run exactly once", l)
		}
	}
}

// TestServeClientMoveOfAKernelThatWaitsForTheHost: the grant changes while
// a served kernel waits for the host (which acts only after the launch
// returns). The move's drain cannot happen; it must not wait forever: the
// retreat is withdrawn within the detach limit, the launch stays where it
// runs (never moved again) and is detached; every block still runs once.
// (A drain without a limit hung here once the daemon re-split idle
// processes' shares.)
func TestServeClientMoveOfAKernelThatWaitsForTheHost(t *testing.T) {
	events := make(chan serve.Event, 4096)
	d := startDaemon(t, events)
	other := goClient(t, d.Socket()) // not alone: the launch is served
	go func() {
		waitFor(t, events, "load", other.ID(), 10*time.Second) // the driver's launch runs
		time.Sleep(20 * time.Millisecond)
		other.Close() // its share returns: the driver's launch should grow
	}()
	r := runDriver(t, d.Socket(), 20*time.Second, []string{"SERVE_DRIVER_HOLD=1", "SLATE_SERVE_DETACH_MS=300"}, 1, 1, 2000, 4, 0)
	if !r.connected || r.served != 1 {
		t.Fatalf("connected=%v served=%d, want the launch served:\n%s", r.connected, r.served, r.out)
	}
	m := regexp.MustCompile(`returned t=0 i=0 detached=(\d) us=(\d+)`).FindStringSubmatch(r.out)
	if m == nil || m[1] != "1" {
		t.Fatalf("want the launch detached:\n%s", r.out)
	}
	if !strings.Contains(r.stderr, "did not drain for a move") {
		t.Errorf("no move was withdrawn (stderr):\n%s", r.stderr)
	}
	if us, _ := strconv.ParseInt(m[2], 10, 64); us > 5_000_000 {
		t.Errorf("the launch returned after %d us, want about the 300 ms limit", us)
	}
	for _, l := range r.launches {
		if !l.ok {
			t.Errorf("launch %+v: a logical block did not run exactly once", l)
		}
	}
}

// TestServeClientNoDaemon: no daemon means the first launch pays one failed
// connect and nothing more: no handshake wait, no retry.
func TestServeClientNoDaemon(t *testing.T) {
	buildDriver(t)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, sock string)
	}{
		{"missing directory", func(t *testing.T, sock string) {}},
		{"stale socket", func(t *testing.T, sock string) {
			if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
				t.Fatal(err)
			}
			ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			ln.SetUnlinkOnClose(false)
			ln.Close()
		}},
		{"regular file", func(t *testing.T, sock string) {
			if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(sock, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := tempSocket(t)
			tc.setup(t, sock)
			r := runDriver(t, sock, 10*time.Second, []string{"SERVE_DRIVER_PROBE=200"}, 1, 3, 1000, 4, 0)
			if r.connected || r.served != 0 {
				t.Fatalf("connected=%v served=%d with no daemon", r.connected, r.served)
			}
			// A silent daemon is given 500 ms: far below it, a failed connect
			// (measured ~10-70 us; the bound leaves room for a loaded CPU).
			if r.connectUs > 20000 {
				t.Errorf("the failed connection attempt took %d us, want well under the 500 ms welcome timeout", r.connectUs)
			}
			// Steady state (symbols bound): measured ~6-7 us.
			if r.probeNs <= 0 || r.probeNs > 1000000 {
				t.Errorf("a failed connection attempt takes %d ns (median), want well under 1 ms", r.probeNs)
			}
			t.Logf("failed connect: first %d us (with lazy binding), then %d ns median", r.connectUs, r.probeNs)
		})
	}
}

// TestServeClientDaemonKilled: the daemon dies while two launches run on
// the driver's half of the GPU; both finish on all SMs with every block run
// once, and later launches run natively.
func TestServeClientDaemonKilled(t *testing.T) {
	buildDriver(t)
	events := make(chan serve.Event, 4096)
	d := startDaemon(t, events)
	other := goClient(t, d.Socket())
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		waitFor(t, events, "load", other.ID(), 20*time.Second)
		time.Sleep(20 * time.Millisecond)
		d.Kill()
	}()
	// 20000 blocks, 4 a task, 8 fake workers, 300 us a task: ~190 ms a launch.
	r := runDriver(t, d.Socket(), 30*time.Second, nil, 2, 2, 20000, 4, 300)
	<-killed
	if !r.connected {
		t.Fatal("driver did not connect")
	}
	grown := 0
	for _, l := range r.launches {
		switch l.index {
		case 0:
			if !l.served {
				t.Errorf("first launch of thread %d not served", l.thread)
				continue
			}
			if last := l.ranges[len(l.ranges)-1]; last == fmt.Sprintf("0:%d", driverSMs-1) && len(l.ranges) > 1 {
				grown++
			}
		case 1:
			if l.served {
				t.Errorf("launch after the daemon died was served")
			}
		}
	}
	if grown == 0 {
		t.Errorf("no running launch was grown to all SMs after the daemon died:\n%s", r.out)
	}
}

// TestServeClientStopsFollowingWhenTheDaemonIsLost: native launches are
// followed (an event record each) only while a daemon reads the notes. The
// fake daemon welcomes the driver as one of two clients, then goes away
// 30 ms into 40 native launches of ~2 ms.
func TestServeClientStopsFollowingWhenTheDaemonIsLost(t *testing.T) {
	buildDriver(t)
	sock := fakeDaemon(t, func(t *testing.T, c net.Conn, read func() *serve.Msg) {
		m := read()
		if m == nil || m.Type != serve.THello {
			return
		}
		welcome(c, m.ID, 0, driverSMs-1, true)
		time.Sleep(30 * time.Millisecond)
	})
	r := runDriver(t, sock, 20*time.Second, nil, 1, 40, 16, 16, 2000)
	if r.served != 0 || len(r.launches) != 40 {
		t.Fatalf("served=%d launches=%d, want 40 native:\n%s", r.served, len(r.launches), r.out)
	}
	var marks int
	if i := strings.Index(r.out, "native marks="); i < 0 {
		t.Fatalf("no mark count:\n%s", r.out)
	} else if _, err := fmt.Sscanf(r.out[i:], "native marks=%d", &marks); err != nil {
		t.Fatal(err)
	}
	if marks == 0 || marks >= 40 {
		t.Errorf("%d of 40 native launches followed, want those before the daemon was lost (some, not all):\n%s", marks, r.out)
	}
	t.Logf("%d of 40 native launches followed before the daemon was lost", marks)
}

// fakeDaemon serves one connection with a script, and checks that every
// frame the client sends is a valid request.
func fakeDaemon(t *testing.T, script func(t *testing.T, c net.Conn, read func() *serve.Msg)) string {
	t.Helper()
	sock := tempSocket(t)
	ln, err := serve.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		ln.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("fake daemon script did not end")
		}
	})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, serve.MaxFrame)
		read := func() *serve.Msg {
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			body, err := serve.ReadFrame(c, buf)
			if err != nil {
				return nil
			}
			m, err := serve.Decode(body)
			if err == nil {
				err = serve.ValidateRequest(m)
			}
			if err != nil {
				t.Errorf("the client sent an invalid frame %q: %v", body, err)
				return nil
			}
			return m
		}
		script(t, c, read)
	}()
	return sock
}

func rawFrame(c net.Conn, n uint32, body string) {
	var h [4]byte
	binary.LittleEndian.PutUint32(h[:], n)
	c.Write(append(h[:], body...))
}

func frame(c net.Conn, body string) { rawFrame(c, uint32(len(body)), body) }

// welcome answers hello with a welcome carrying the grant [lo, hi].
// welcome sends the daemon's welcome with MPS reported inactive, so that
// grants are ranges of places (range_mode' auto); welcomeMPS says either.
func welcome(c net.Conn, re uint64, lo, hi int, alone bool) { welcomeMPS(c, re, lo, hi, alone, false) }

func welcomeMPS(c net.Conn, re uint64, lo, hi int, alone, mps bool) {
	frame(c, fmt.Sprintf(`{"v":2,"type":"welcome","re":%d,"client":1,"sms":%d,"policy":"fake","mps":%v,"name":"fake","device":0,"id":1,"range":{"lo":%d,"hi":%d},"alone":%v,"clients":2}`, re, driverSMs, mps, lo, hi, alone))
}

// TestServeClientRegistersOverTheFirstUseConnection: the prelude connects
// at the program's first setup call (process_dial) and registers at its
// first launch over that connection: nothing is sent until the launch, then
// hello names its kernel, and the launch after the welcome runs on the grant.
func TestServeClientRegistersOverTheFirstUseConnection(t *testing.T) {
	buildDriver(t)
	sock := fakeDaemon(t, func(t *testing.T, c net.Conn, read func() *serve.Msg) {
		// The driver waits 300 ms between connecting and its first launch.
		c.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
		if body, err := serve.ReadFrame(c, make([]byte, serve.MaxFrame)); err == nil {
			t.Errorf("the client sent %q before its first launch; want nothing until hello", body)
		}
		m := read()
		if m == nil || m.Type != serve.THello || m.ID != 1 {
			t.Errorf("want hello (id 1) at the first launch, got %+v", m)
			return
		}
		if m.Kernel != "k0" || m.Name == "" || m.Name == "slate" {
			t.Errorf("hello names kernel %q and process %q; want the first launch's kernel k0 and the driver's name", m.Kernel, m.Name)
		}
		welcome(c, m.ID, 0, 49, false)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 1024)
		for {
			if _, err := c.Read(b); err != nil {
				return
			}
		}
	})
	r := runDriver(t, sock, 20*time.Second, []string{"SERVE_DRIVER_DIAL_MS=300", "SERVE_DRIVER_WELCOMED=1"}, 1, 1, 400, 4, 0)
	if !r.connected || len(r.launches) != 1 || !r.launches[0].served || strings.Join(r.launches[0].ranges, ",") != "0:49" {
		t.Fatalf("connected=%v launches %+v; want a registration and the launch served on 0:49:\n%s", r.connected, r.launches, r.out)
	}
	if !strings.Contains(r.stderr, "connected at first use") {
		t.Errorf("the log does not say the registration used the first use's connection:\n%s", r.stderr)
	}
}

// TestServeClientFirstUseConnectionOfAProgramThatNeverLaunches: a process
// that connects at its first setup call and never launches never registers:
// the daemon sees no client join and rejects nothing, and keeps serving.
func TestServeClientFirstUseConnectionOfAProgramThatNeverLaunches(t *testing.T) {
	events := make(chan serve.Event, 4096)
	d := startDaemon(t, events)
	runDriver(t, d.Socket(), 20*time.Second, []string{"SERVE_DRIVER_DIAL_MS=50", "SERVE_DRIVER_DIAL_ONLY=1"}, 1, 0, 1, 1, 0)
	// A client registering after it is served as usual.
	other := goClient(t, d.Socket())
	deadline := time.After(300 * time.Millisecond)
	for done := false; !done; {
		select {
		case ev := <-events:
			if ev.Client != other.ID() {
				t.Errorf("daemon event %+v from the program that never launched", ev)
			}
		case <-deadline:
			done = true
		}
	}
	if st := d.Status(); len(st.Clients) != 1 {
		t.Errorf("daemon clients %+v; want only the one registered after", st.Clients)
	}
}

// TestServeClientFirstUseConnectionOfAnotherSMCount: a connection made for
// a device of another SM count than the first launch's is dropped and the
// launch registers over a new one (hello carries the launch's SM count).
func TestServeClientFirstUseConnectionOfAnotherSMCount(t *testing.T) {
	d := startDaemon(t, nil)
	// SERVE_DRIVER_DIAL_SMS: the count the driver connects for.
	r := runDriver(t, d.Socket(), 20*time.Second, []string{"SERVE_DRIVER_DIAL_MS=20", "SERVE_DRIVER_DIAL_SMS=" + strconv.Itoa(driverSMs+8)}, 1, 1, 400, 4, 0)
	if !r.connected {
		t.Fatalf("not registered after an unusable first-use connection:\n%s\n%s", r.out, r.stderr)
	}
	if !strings.Contains(r.stderr, "the first use's connection unusable") {
		t.Errorf("the log does not say the first use's connection was dropped:\n%s", r.stderr)
	}
}

// TestServeClientHostileDaemon: malformed or unhelpful daemons never crash
// or hang the program; every launch runs, each logical block once.
// TestServeClientFirstLaunchDoesNotWaitForWelcome: registration is not on
// the first launch's path. The client sends hello and launches at once,
// natively, as an alone process does, while the daemon takes 300 ms to
// welcome it; the launch after the welcome runs on the granted range.
func TestServeClientFirstLaunchDoesNotWaitForWelcome(t *testing.T) {
	buildDriver(t)
	sock := fakeDaemon(t, func(t *testing.T, c net.Conn, read func() *serve.Msg) {
		m := read()
		if m == nil || m.Type != serve.THello {
			t.Errorf("want hello first, got %+v", m)
			return
		}
		if m.Kernel != "k0" {
			t.Errorf("hello names kernel %q, want the first launch's, k0", m.Kernel)
		}
		time.Sleep(300 * time.Millisecond)
		welcome(c, m.ID, 0, 49, false)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 1024)
		for {
			if _, err := c.Read(b); err != nil {
				return
			}
		}
	})
	// One thread, two launches 600 ms apart, each a few ms.
	r := runDriver(t, sock, 20*time.Second, []string{"SERVE_DRIVER_WELCOMED=0", "SERVE_DRIVER_GAP_US=600000"}, 1, 2, 400, 4, 0)
	if !r.connected || len(r.launches) != 2 {
		t.Fatalf("connected=%v, %d launches, want a connection and 2:\n%s", r.connected, len(r.launches), r.out)
	}
	if r.connectUs > 50000 {
		t.Errorf("registering took %d us: it waited for the welcome (300 ms)", r.connectUs)
	}
	first, second := r.launches[0], r.launches[1]
	if first.index != 0 || first.served || first.us > 200000 {
		t.Errorf("first launch %+v: want it native and done before the welcome", first)
	}
	if second.index != 1 || !second.served || strings.Join(second.ranges, ",") != "0:49" {
		t.Errorf("second launch %+v: want it served on the welcome's 0:49", second)
	}
}

func TestServeClientHostileDaemon(t *testing.T) {
	buildDriver(t)
	// hello answers the hello with a shared welcome (0:49) and returns the
	// first load note (a launch runs on the grant).
	hello := func(c net.Conn, read func() *serve.Msg) *serve.Msg {
		m := read()
		if m == nil || m.Type != serve.THello || m.SMs != driverSMs || m.PID <= 0 {
			return nil
		}
		welcome(c, m.ID, 0, 49, false)
		return read()
	}
	wait := func(c net.Conn) { // until the client closes
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 1024)
		for {
			if _, err := c.Read(b); err != nil {
				return
			}
		}
	}
	first := func(c net.Conn, read func() *serve.Msg) { read() }
	for _, tc := range []struct {
		name       string
		served     int // launches the driver reports served; -1: any
		connected  bool
		slowOK     bool // the welcome may take its 500 ms timeout
		script     func(t *testing.T, c net.Conn, read func() *serve.Msg)
		checkRange string // a served launch's ranges, joined
	}{
		{name: "silence", slowOK: true, script: func(t *testing.T, c net.Conn, read func() *serve.Msg) { first(c, read); wait(c) }},
		{name: "close at once", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {}},
		{name: "zero-length frame", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) { first(c, read); rawFrame(c, 0, ""); wait(c) }},
		{name: "oversized frame", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			first(c, read)
			rawFrame(c, serve.MaxFrame+1, strings.Repeat("x", 100))
			wait(c)
		}},
		{name: "partial frame", slowOK: true, script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			first(c, read)
			rawFrame(c, 100, `{"v":2,`)
			wait(c)
		}},
		{name: "bad json", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			first(c, read)
			frame(c, `{"v":2,"type":"welcome",`+"\x01}")
			wait(c)
		}},
		{name: "trailing data", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			first(c, read)
			frame(c, `{"v":2,"type":"welcome","re":1,"client":1,"sms":100,"id":1,"range":{"lo":0,"hi":99}} {}`)
			wait(c)
		}},
		{name: "version 1 daemon", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			first(c, read)
			frame(c, `{"v":1,"type":"welcome","re":1,"client":1,"sms":100}`)
			wait(c)
		}},
		{name: "wrong sms", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			first(c, read)
			frame(c, `{"v":2,"type":"welcome","re":1,"client":1,"sms":132,"id":1,"range":{"lo":0,"hi":131}}`)
			wait(c)
		}},
		{name: "number types", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			first(c, read)
			frame(c, `{"v":2,"type":"welcome","re":1.0,"client":1,"sms":100,"id":1,"range":{"lo":0,"hi":99}}`)
			wait(c)
		}},
		{name: "deep nesting", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			first(c, read)
			frame(c, `{"v":2,"type":"welcome","re":1,"client":1,"sms":100,"id":1,"range":{"lo":0,"hi":99},"x":`+strings.Repeat("[", 200)+strings.Repeat("]", 200)+`}`)
			wait(c)
		}},
		{name: "error reply", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			first(c, read)
			frame(c, `{"v":2,"type":"error","re":1,"code":"bad_version","msg":"no"}`)
		}},
		{name: "welcome without a grant", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			first(c, read)
			frame(c, `{"v":2,"type":"welcome","re":1,"client":1,"sms":100}`)
			wait(c)
		}},
		{name: "alone on part of the GPU", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			first(c, read)
			frame(c, `{"v":2,"type":"welcome","re":1,"client":1,"sms":100,"id":1,"range":{"lo":0,"hi":49},"alone":true}`)
			wait(c)
		}},
		{name: "grant beyond the GPU", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			first(c, read)
			frame(c, `{"v":2,"type":"welcome","re":1,"client":1,"sms":100,"id":1,"range":{"lo":0,"hi":100}}`)
			wait(c)
		}},
		{name: "welcome with unknown fields", connected: true, served: 2, checkRange: "0:99",
			script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
				m := read()
				frame(c, fmt.Sprintf(`{"v":2,"type":"welcome","re":%d,"client":1,"sms":100,"extra":{"a":[1,-2.5e3,"\u00e9\"",true,null]},"uuid":null,"id":3,"range":{"lo":0,"hi":99,"x":[]},"alone":false,"clients":2}`, m.ID))
				wait(c)
			}},
		{name: "garbage after welcome", connected: true, served: -1, script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			m := read()
			welcome(c, m.ID, 0, 49, false)
			frame(c, "[]")
			wait(c)
		}},
		{name: "bad frame mid-run grows to all SMs", connected: true, served: 1, checkRange: "0:49,0:99",
			script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
				if hello(c, read) != nil {
					time.Sleep(10 * time.Millisecond)
					frame(c, `{"v":2,"type":"grant","id":6,"range":`)
				}
				wait(c)
			}},
		{name: "shutdown mid-run", connected: true, served: 1, checkRange: "0:49,0:99",
			script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
				if hello(c, read) != nil {
					time.Sleep(10 * time.Millisecond)
					frame(c, `{"v":2,"type":"shutdown","reason":"test"}`)
				}
				wait(c)
			}},
		{name: "error push mid-run", connected: true, served: 1, checkRange: "0:49,0:99",
			script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
				if hello(c, read) != nil {
					time.Sleep(10 * time.Millisecond)
					frame(c, `{"v":2,"type":"error","code":"bad_json","msg":"x"}`)
				}
				wait(c)
			}},
		{name: "bad and stale grants ignored, then a grant acknowledged", connected: true, served: 2, checkRange: "0:49,50:99",
			script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
				if hello(c, read) == nil {
					return
				}
				frame(c, `{"v":2,"type":"grant","id":5,"range":{"lo":0,"hi":500}}`)            // beyond the GPU
				frame(c, `{"v":2,"type":"grant","id":6,"range":{"lo":0,"hi":9},"alone":true}`) // alone on a part
				frame(c, `{"v":2,"type":"grant","id":1,"range":{"lo":60,"hi":99}}`)            // stale epoch
				frame(c, `{"v":2,"type":"grant","range":{"lo":60,"hi":99}}`)                   // no epoch
				frame(c, `{"v":2,"type":"grant","id":7,"range":{"lo":50,"hi":99}}`)
				for {
					a := read()
					if a == nil {
						t.Errorf("no ack of grant 7")
						return
					}
					if a.Type == serve.TAck {
						if a.Epoch != 7 || a.Range == nil || *a.Range != (serve.Range{Lo: 50, Hi: 99}) {
							t.Errorf("want the ack of grant 7 on 50:99, got %+v", a)
						}
						break
					}
				}
				wait(c)
			}},
		{name: "welcome and a grant in one write", connected: true, served: -1,
			script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
				// The client reads ahead: the grant behind the welcome in
				// its buffer is taken without another poll of the socket.
				m := read()
				if m == nil || m.Type != serve.THello {
					return
				}
				var b []byte
				for _, body := range []string{
					fmt.Sprintf(`{"v":2,"type":"welcome","re":%d,"client":1,"sms":%d,"policy":"fake","name":"fake","device":0,"id":1,"range":{"lo":0,"hi":49},"clients":2}`, m.ID, driverSMs),
					`{"v":2,"type":"grant","id":2,"range":{"lo":50,"hi":99},"clients":2}`,
				} {
					b = binary.LittleEndian.AppendUint32(b, uint32(len(body)))
					b = append(b, body...)
				}
				c.Write(b)
				for {
					a := read()
					if a == nil {
						t.Errorf("no ack of grant 2")
						return
					}
					if a.Type == serve.TAck {
						if a.Epoch != 2 || a.Range == nil || *a.Range != (serve.Range{Lo: 50, Hi: 99}) {
							t.Errorf("want the ack of grant 2 on 50:99, got %+v", a)
						}
						break
					}
				}
				wait(c)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := fakeDaemon(t, tc.script)
			start := time.Now()
			// 4000 blocks, 4 a task, 8 fake workers, 300 us a task: ~40 ms.
			r := runDriver(t, sock, 10*time.Second, nil, 1, 2, 4000, 4, 300)
			if r.connected != tc.connected || (tc.served >= 0 && r.served != tc.served) {
				t.Fatalf("connected=%v served=%d, want %v and %d:\n%s", r.connected, r.served, tc.connected, tc.served, r.out)
			}
			if !tc.slowOK && !tc.connected && r.connectUs > 90000 { // a reply ended it, not the 500 ms timeout
				t.Errorf("refused connection took %d us", r.connectUs)
			}
			if tc.slowOK && r.connectUs > 1000000 {
				t.Errorf("handshake timeout took %d us, want about 500 ms", r.connectUs)
			}
			if tc.checkRange != "" {
				found := false
				for _, l := range r.launches {
					if l.served && strings.Join(l.ranges, ",") == tc.checkRange {
						found = true
					}
				}
				if !found {
					t.Errorf("no served launch ran on %s:\n%s", tc.checkRange, r.out)
				}
			}
			t.Logf("%s: connect %d us, driver %v", tc.name, r.connectUs, time.Since(start))
		})
	}
}

// decodeCPP runs the C++ reader over bodies (serve_driver decode) and
// returns its line for each: "bad", or "ok" and the fields it read.
func decodeCPP(t *testing.T, bodies [][]byte) []string {
	t.Helper()
	bin := buildDriver(t)
	var in strings.Builder
	for _, b := range bodies {
		fmt.Fprintf(&in, "%x\n", b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "decode")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("serve_driver decode: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(bodies) {
		t.Fatalf("serve_driver decode: %d lines for %d bodies", len(lines), len(bodies))
	}
	return lines
}

// cppFields are the fields the C++ client reads; a type error on any other
// field is one the C++ reader does not see (it skips unknown fields).
var cppFields = map[string]bool{"v": true, "type": true, "re": true, "id": true, "client": true,
	"sms": true, "range": true, "range.lo": true, "range.hi": true, "code": true, "alone": true}

var lowerWord = regexp.MustCompile(`^[a-z_]+$`)

// TestServeClientDecoderAgrees: whatever the C++ reader accepts, the
// protocol's reference decoder (serve.Decode) reads the same way: same
// type, ids, range, finished and code; or rejects only for a reason the
// C++ client handles itself (a type it ignores, a field it skips). Inputs:
// every daemon message shape, hand-written edge cases and deterministic
// byte mutations of the shapes.
func TestServeClientDecoderAgrees(t *testing.T) {
	buildDriver(t)
	shapes := []string{
		`{"v":2,"type":"welcome","re":1,"client":3,"sms":132,"policy":"grants: equal shares","mps":true,"name":"v0.1.0-dev","device":0,"id":4,"range":{"lo":66,"hi":131},"clients":2}`,
		`{"v":2,"type":"welcome","re":1,"client":3,"sms":132,"id":4,"range":{"lo":0,"hi":131},"alone":true,"clients":1}`,
		`{"v":2,"type":"grant","id":17,"range":{"lo":66,"hi":131},"clients":2,"device":0}`,
		`{"v":2,"type":"grant","id":19,"range":{"lo":0,"hi":131},"alone":true,"clients":1,"device":0}`,
		`{"v":2,"type":"ok","re":3,"device":0}`,
		`{"v":2,"type":"error","re":4,"code":"bad_version","msg":"protocol version 1","device":0}`,
		`{"v":2,"type":"error","code":"bad_frame","msg":"length 0"}`,
		`{"v":2,"type":"shutdown","reason":"SIGTERM","device":0}`,
	}
	edge := []string{
		``, ` `, `{}`, `[]`, `null`, `{"v":2}`, `{"type":"ok"}`, `{"v":2,"type":""}`, `{"v":2,"type":"ok"}{}`,
		`{"v":2,"type":"ok",}`, `{"v":2,"type":"ok","re":-1}`, `{"v":2,"type":"ok","re":1.0}`, `{"v":2,"type":"ok","re":1e0}`,
		`{"v":2,"type":"ok","re":01}`, `{"v":2,"type":"ok","re":18446744073709551615}`, `{"v":2,"type":"ok","re":18446744073709551616}`,
		`{"v":2,"type":"ok","re":null}`, `{"v":2,"type":"ok","re":"1"}`, `{"v":2.5,"type":"ok"}`, `{"v":2,"type":"ok"}`,
		`{"v":2,"type":"start","id":1,"launch":1,"range":{"lo":0}}`, `{"v":2,"type":"start","id":1,"launch":1,"range":{"lo":-1,"hi":3}}`,
		`{"v":2,"type":"start","id":1,"launch":1,"range":null}`, `{"v":2,"type":"start","id":1,"launch":1,"range":[0,3]}`,
		`{"v":2,"type":"start","id":1,"launch":1,"range":{"lo":0,"hi":3,"x":{"y":[1,2,{"z":null}]}}}`,
		`{"v":2,"type":"grant","alone":true}`, `{"v":2,"type":"grant","alone":1}`, `{"v":2,"type":"grant","alone":null}`, `{"v":2,"type":"welcome","sms":4294967296}`,
		"{\"v\":1,\"type\":\"ok\"\x00}", "{\"v\":1,\"type\":\"o\nk\"}", `{"v":2,"type":"\u006fk"}`, `{"v":2,"type":"ok","x":"\ud800"}`,
		`{"v":2,"type":"ok","x":"\x"}`, `{"v":2,"type":"ok","x":tru}`, `{"v":2,"type":"ok","x":-}`, `{"v":2,"type":"ok","x":1.}`,
		`{"v":2,"type":"ok","x":.5}`, `{"v":2,"type":"ok","x":1e}`, `{"v":2,"type":"ok","x":-0.0e+5}`, `{"v":2,"type":"ok" "x":1}`,
		`{"v":2,"type":"ok","v":1}`, `{"v":2,"type":"ok","v":1}`, `{"v":2,"type":"grant","type":"ok","id":1}`,
		`{"v":2,"type":"error","code":"bad\u0020frame"}`, `{"v":2,"type":"later_push","id":5}`, `{"v":1,"type":"ok"}`, "\t{\"v\":1,\"type\":\"ok\"}\r\n",
		`{"v":2,"type":"ok","x":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`,
		`{"v":2,"type":"ok","x":` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `}`,
		`{"v":2,"type":"ok","x":` + strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat("}", 70) + `}`,
	}
	var bodies [][]byte
	for _, s := range append(shapes, edge...) {
		bodies = append(bodies, []byte(s))
	}
	// Deterministic mutations: delete, replace and insert one byte.
	alphabet := []byte(`{}[]":,0123456789-.eE+ tfnulr\x`)
	seed := uint64(1)
	rnd := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int((seed >> 33) % uint64(n))
	}
	for _, s := range shapes {
		for i := 0; i < 300; i++ {
			b := []byte(s)
			p := rnd(len(b))
			switch rnd(3) {
			case 0:
				b = append(b[:p:p], b[p+1:]...)
			case 1:
				b[p] = alphabet[rnd(len(alphabet))]
			default:
				b = append(b[:p:p], append([]byte{alphabet[rnd(len(alphabet))]}, b[p:]...)...)
			}
			bodies = append(bodies, b)
		}
	}
	lines := decodeCPP(t, bodies)
	accepted := 0
	for i, b := range bodies {
		line := lines[i]
		if line == "bad" {
			continue
		}
		accepted++
		m, err := serve.Decode(b)
		if err != nil {
			var pe *serve.ProtoError
			if errors.As(err, &pe) && pe.Code == serve.ErrUnknownType {
				continue // the client ignores types it does not know
			}
			var te *json.UnmarshalTypeError
			if uerr := json.Unmarshal(bytes.TrimSpace(b), new(serve.Msg)); errors.As(uerr, &te) && !cppFields[te.Field] {
				continue // a field the client skips
			}
			t.Errorf("C++ accepted %q (%s), serve.Decode rejects it: %v", b, line, err)
			continue
		}
		rng, lo, hi := 0, 0, 0
		if m.Range != nil {
			rng, lo, hi = 1, m.Range.Lo, m.Range.Hi
		}
		code := "-"
		if m.Code != "" {
			code = m.Code
			if !lowerWord.MatchString(code) {
				code = strings.Map(func(r rune) rune {
					if r < 0x80 && (r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
						return r
					}
					return '?'
				}, code)
			}
		}
		typ := m.Type // known types are lower-case words
		alone := 0
		if m.Alone {
			alone = 1
		}
		want := fmt.Sprintf("ok type=%s re=%d id=%d client=%d sms=%d range=%d lo=%d hi=%d alone=%d code=%s",
			typ, m.Re, m.ID, m.Client, m.SMs, rng, lo, hi, alone, code)
		if line != want && bytes.IndexFunc(b, func(r rune) bool { return r >= 'A' && r <= 'Z' }) < 0 {
			// (encoding/json also matches keys case-insensitively; bodies with
			// upper-case letters may differ there, by design.)
			t.Errorf("%q:\n C++ %s\n Go  %s", b, line, want)
		}
	}
	t.Logf("%d bodies, %d accepted by the C++ reader", len(bodies), accepted)
	if accepted < len(shapes) {
		t.Errorf("the C++ reader accepted %d bodies, fewer than the %d well-formed shapes", accepted, len(shapes))
	}
}

// TestStaticRangesCountUnderMPS: a range a process gives itself
// ($SLATE_SM_RANGE) binds as an SM count where the MPS control pipe is
// there (as slatec serve checks it), as places where not, and
// $SLATE_RANGES forces either.
func TestStaticRangesCountUnderMPS(t *testing.T) {
	bin := buildDriver(t)
	withPipe := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(withPipe, "control"), 0o600); err != nil {
		t.Fatal(err)
	}
	withFile := t.TempDir()
	if err := os.WriteFile(filepath.Join(withFile, "control"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  []string
		want string
	}{
		{"mps", []string{"CUDA_MPS_PIPE_DIRECTORY=" + withPipe}, "counts"},
		{"no mps", []string{"CUDA_MPS_PIPE_DIRECTORY=" + t.TempDir()}, "places"},
		{"a plain file is no pipe", []string{"CUDA_MPS_PIPE_DIRECTORY=" + withFile}, "places"},
		{"mps, forced places", []string{"CUDA_MPS_PIPE_DIRECTORY=" + withPipe, "SLATE_RANGES=places"}, "places"},
		{"no mps, forced counts", []string{"CUDA_MPS_PIPE_DIRECTORY=" + t.TempDir(), "SLATE_RANGES=counts"}, "counts"},
	}
	for _, tc := range cases {
		cmd := exec.Command(bin, "ranges")
		cmd.Env = append(os.Environ(), tc.env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
