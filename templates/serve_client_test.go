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
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slatec/slatec/serve"
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
	us            int64
	ranges        []string
}

type driverRun struct {
	connected bool
	connectUs int64
	probeNs   int64 // median of the $SERVE_DRIVER_PROBE connection attempts
	launches  []driverLaunch
	served    int
	out       string
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
	cmd.Env = append(append(os.Environ(), "SLATEC_SOCKET="+sock, "SLATE_LOG=1"), env...)
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
	r := driverRun{out: out}
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
		case "connect":
			r.connected, r.connectUs = num("served") == 1, num("us")
		case "launch":
			l := driverLaunch{thread: int(num("t")), index: int(num("i")), served: num("served") == 1, ok: num("ok") == 1, us: num("us")}
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
	cfg := serve.Config{Socket: tempSocket(t), SMs: driverSMs, MPS: &serve.MPSState{Active: true}, ResizeTimeout: time.Second,
		Logf: func(f string, a ...any) { t.Logf("daemon: "+f, a...) }}
	if events != nil {
		cfg.OnEvent = func(ev serve.Event) {
			select {
			case events <- ev:
			default:
			}
		}
	}
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

// TestServeClientAgainstDaemon: registration, launch -> start -> done, and
// resize commands acknowledged in time with every logical block run once:
// two threads of one process launch concurrently, so the daemon shrinks the
// first launch for the second and grows it back when the second is done.
func TestServeClientAgainstDaemon(t *testing.T) {
	events := make(chan serve.Event, 4096)
	d := startDaemon(t, events)
	r := runDriver(t, d.Socket(), 30*time.Second, nil, 2, 3, 4000, 4, 300)
	if !r.connected || r.served != 6 {
		t.Fatalf("connected=%v served=%d, want every launch served:\n%s", r.connected, r.served, r.out)
	}
	resized := 0
	for _, l := range r.launches {
		if len(l.ranges) > 1 {
			resized++
		}
	}
	if resized == 0 {
		t.Errorf("no launch was resized; the test does not exercise resize:\n%s", r.out)
	}
	// The driver says bye at exit without waiting: give the daemon a moment.
	st := d.Status()
	for deadline := time.Now().Add(3 * time.Second); len(st.Clients) != 0 && time.Now().Before(deadline); st = d.Status() {
		time.Sleep(10 * time.Millisecond)
	}
	ok := 0
	for _, rr := range st.Resizes {
		switch rr.Outcome {
		case "ok", "finished":
			ok++
		case "ended": // the launch completed before the command reached it
		default:
			t.Errorf("resize %+v: outcome %s, want ok (acknowledged within the timeout)", rr, rr.Outcome)
		}
	}
	if ok == 0 {
		t.Errorf("the daemon recorded no acknowledged resize")
	}
	var lat []float64
	for _, rr := range st.Resizes {
		if rr.Outcome == "ok" {
			lat = append(lat, rr.LatencyUs)
		}
	}
	sort.Float64s(lat)
	if len(lat) > 0 {
		t.Logf("%d resizes acknowledged; latency (command to ack, fake drain of 8 threads) p50 %.0f us, max %.0f us", len(lat), lat[len(lat)/2], lat[len(lat)-1])
	}
	if st.Running != 0 || st.Queued != 0 || len(st.Clients) != 0 {
		t.Errorf("after the program exited: running %d queued %d clients %d, want none", st.Running, st.Queued, len(st.Clients))
	}
	counts := map[string]int{}
	for len(events) > 0 {
		ev := <-events
		counts[ev.Kind]++
	}
	if counts["join"] != 1 || counts["start"] != 6 || counts["done"] != 6 {
		t.Errorf("daemon events %v: want 1 join, 6 start, 6 done", counts)
	}
}

// TestServeClientDetachesAKernelThatWaitsForTheHost: a served launch
// returns when its kernel is done, but a kernel may wait for the host to act
// after its launch: past $SLATE_SERVE_DETACH_MS the launch is detached (it
// runs on by itself, no longer resized, and the daemon is told it is done),
// so the program goes on instead of hanging; every block still runs once.
func TestServeClientDetachesAKernelThatWaitsForTheHost(t *testing.T) {
	events := make(chan serve.Event, 64)
	d := startDaemon(t, events)
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
	done := false
	for deadline := time.After(3 * time.Second); !done; {
		select {
		case ev := <-events:
			done = ev.Kind == "done"
		case <-deadline:
			t.Fatal("the daemon never heard that the detached launch is done")
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
			// The handshake would wait 100 ms: far below it, a failed connect
			// (measured ~10-70 us; the bound leaves room for a loaded CPU).
			if r.connectUs > 20000 {
				t.Errorf("the failed connection attempt took %d us, want well under the 100 ms handshake", r.connectUs)
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
// halves of the GPU; both finish on all SMs with every block run once, and
// later launches run natively.
func TestServeClientDaemonKilled(t *testing.T) {
	buildDriver(t)
	events := make(chan serve.Event, 4096)
	d := startDaemon(t, events)
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		starts := 0
		deadline := time.After(20 * time.Second)
		for starts < 2 {
			select {
			case ev := <-events:
				if ev.Kind == "start" {
					starts++
				}
			case <-deadline:
				return
			}
		}
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

func welcome(c net.Conn, re uint64) {
	frame(c, fmt.Sprintf(`{"v":1,"type":"welcome","re":%d,"client":1,"sms":%d,"policy":"fake","mps":true,"name":"fake","device":0}`, re, driverSMs))
}

// TestServeClientHostileDaemon: malformed or unhelpful daemons never crash
// or hang the program; every launch runs, each logical block once.
func TestServeClientHostileDaemon(t *testing.T) {
	buildDriver(t)
	// hello answers the hello with a welcome and returns the next message.
	hello := func(c net.Conn, read func() *serve.Msg) *serve.Msg {
		m := read()
		if m == nil || m.Type != serve.THello || m.SMs != driverSMs || m.PID <= 0 {
			return nil
		}
		welcome(c, m.ID)
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
	for _, tc := range []struct {
		name       string
		served     int // launches the driver reports served
		connected  bool
		slowOK     bool // the handshake may take its 100 ms timeout
		script     func(t *testing.T, c net.Conn, read func() *serve.Msg)
		checkRange string // a served launch's ranges, joined
	}{
		{name: "silence", slowOK: true, script: func(t *testing.T, c net.Conn, read func() *serve.Msg) { read(); wait(c) }},
		{name: "close at once", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {}},
		{name: "zero-length frame", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) { read(); rawFrame(c, 0, ""); wait(c) }},
		{name: "oversized frame", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			read()
			rawFrame(c, serve.MaxFrame+1, strings.Repeat("x", 100))
			wait(c)
		}},
		{name: "partial frame", slowOK: true, script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			read()
			rawFrame(c, 100, `{"v":1,`)
			wait(c)
		}},
		{name: "bad json", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			read()
			frame(c, `{"v":1,"type":"welcome",`+"\x01}")
			wait(c)
		}},
		{name: "trailing data", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			read()
			frame(c, `{"v":1,"type":"welcome","re":1,"client":1,"sms":100} {}`)
			wait(c)
		}},
		{name: "wrong version", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			read()
			frame(c, `{"v":2,"type":"welcome","re":1,"client":1,"sms":100}`)
			wait(c)
		}},
		{name: "wrong sms", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			read()
			frame(c, `{"v":1,"type":"welcome","re":1,"client":1,"sms":132}`)
			wait(c)
		}},
		{name: "number types", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			read()
			frame(c, `{"v":1,"type":"welcome","re":1.0,"client":1,"sms":100}`)
			wait(c)
		}},
		{name: "deep nesting", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			read()
			frame(c, `{"v":1,"type":"welcome","re":1,"client":1,"sms":100,"x":`+strings.Repeat("[", 200)+strings.Repeat("]", 200)+`}`)
			wait(c)
		}},
		{name: "error reply", script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			read()
			frame(c, `{"v":1,"type":"error","re":1,"code":"wrong_device","msg":"no"}`)
		}},
		{name: "welcome with unknown fields", connected: true, served: 2, checkRange: "0:99",
			script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
				m := read()
				frame(c, fmt.Sprintf(`{"v":1,"type":"welcome","re":%d,"client":1,"sms":100,"extra":{"a":[1,-2.5e3,"\u00e9\"",true,null]},"uuid":null}`, m.ID))
				for i := 0; i < 2; i++ {
					l := read()
					if l == nil || l.Type != serve.TLaunch {
						t.Errorf("want a launch, got %+v", l)
						return
					}
					frame(c, fmt.Sprintf(`{"v":1,"type":"accepted","re":%d,"launch":%d}`, l.ID, l.Launch))
					frame(c, fmt.Sprintf(`{"v":1,"type":"start","id":%d,"launch":%d,"range":{"lo":0,"hi":99}}`, 10+i, l.Launch))
					if d := read(); d == nil || d.Type != serve.TDone || d.Launch != l.Launch {
						t.Errorf("want done of launch %d, got %+v", l.Launch, d)
						return
					}
					frame(c, fmt.Sprintf(`{"v":1,"type":"ok","re":%d}`, l.ID+1))
				}
				wait(c)
			}},
		{name: "garbage after welcome", connected: true, script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			if hello(c, read) != nil {
				frame(c, "[]")
			}
			wait(c)
		}},
		{name: "launch refused", connected: true, script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			for l := hello(c, read); l != nil; l = read() {
				frame(c, fmt.Sprintf(`{"v":1,"type":"error","re":%d,"code":"duplicate_launch","msg":"x"}`, l.ID))
			}
		}},
		{name: "launch never answered", connected: true, script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			hello(c, read)
			wait(c)
		}},
		{name: "accepted, never started, then EOF", connected: true, script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
			if l := hello(c, read); l != nil {
				frame(c, fmt.Sprintf(`{"v":1,"type":"accepted","re":%d,"launch":%d}`, l.ID, l.Launch))
				time.Sleep(200 * time.Millisecond)
			}
		}},
		{name: "bad frame mid-run grows to all SMs", connected: true, served: 1, checkRange: "0:49,0:99",
			script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
				if l := hello(c, read); l != nil {
					frame(c, fmt.Sprintf(`{"v":1,"type":"accepted","re":%d,"launch":%d}`, l.ID, l.Launch))
					frame(c, fmt.Sprintf(`{"v":1,"type":"start","id":5,"launch":%d,"range":{"lo":0,"hi":49}}`, l.Launch))
					time.Sleep(30 * time.Millisecond)
					frame(c, `{"v":1,"type":"resize","id":6,"launch":`)
				}
				wait(c)
			}},
		{name: "resize out of range ignored, then resize acknowledged", connected: true, served: 2, checkRange: "0:49,50:99",
			script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
				l := hello(c, read)
				if l == nil {
					return
				}
				frame(c, fmt.Sprintf(`{"v":1,"type":"accepted","re":%d,"launch":%d}`, l.ID, l.Launch))
				frame(c, fmt.Sprintf(`{"v":1,"type":"start","id":5,"launch":%d,"range":{"lo":0,"hi":49}}`, l.Launch))
				time.Sleep(20 * time.Millisecond)
				frame(c, fmt.Sprintf(`{"v":1,"type":"resize","id":6,"launch":%d,"range":{"lo":0,"hi":500}}`, l.Launch))
				frame(c, fmt.Sprintf(`{"v":1,"type":"resize","id":7,"launch":%d,"range":{"lo":50,"hi":99}}`, l.Launch))
				a := read()
				if a == nil || a.Type != serve.TResized || a.Cmd != 7 || a.Range == nil || *a.Range != (serve.Range{Lo: 50, Hi: 99}) {
					t.Errorf("want resized cmd 7 to 50:99, got %+v", a)
					return
				}
				if d := read(); d == nil || d.Type != serve.TDone {
					t.Errorf("want done, got %+v", d)
					return
				}
				// The second launch runs to its end on its first range.
				l = read()
				if l == nil || l.Type != serve.TLaunch {
					t.Errorf("want the second launch, got %+v", l)
					return
				}
				frame(c, fmt.Sprintf(`{"v":1,"type":"accepted","re":%d,"launch":%d}`, l.ID, l.Launch))
				frame(c, fmt.Sprintf(`{"v":1,"type":"start","id":8,"launch":%d,"range":{"lo":0,"hi":49}}`, l.Launch))
				for {
					m := read()
					if m == nil {
						t.Errorf("no done for the second launch")
						return
					}
					if m.Type == serve.TDone {
						break
					}
				}
				wait(c)
			}},
		{name: "shutdown mid-run", connected: true, served: 1, checkRange: "0:49,0:99",
			script: func(t *testing.T, c net.Conn, read func() *serve.Msg) {
				if l := hello(c, read); l != nil {
					frame(c, fmt.Sprintf(`{"v":1,"type":"accepted","re":%d,"launch":%d}`, l.ID, l.Launch))
					frame(c, fmt.Sprintf(`{"v":1,"type":"start","id":5,"launch":%d,"range":{"lo":0,"hi":49}}`, l.Launch))
					time.Sleep(30 * time.Millisecond)
					frame(c, `{"v":1,"type":"shutdown","reason":"test"}`)
				}
				wait(c)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := fakeDaemon(t, tc.script)
			start := time.Now()
			// 4000 blocks, 4 a task, 8 fake workers, 300 us a task: ~40 ms.
			r := runDriver(t, sock, 10*time.Second, nil, 1, 2, 4000, 4, 300)
			if r.connected != tc.connected || r.served != tc.served {
				t.Fatalf("connected=%v served=%d, want %v and %d:\n%s", r.connected, r.served, tc.connected, tc.served, r.out)
			}
			if !tc.slowOK && !tc.connected && r.connectUs > 90000 { // a reply ended it, not the 100 ms timeout
				t.Errorf("refused connection took %d us", r.connectUs)
			}
			if tc.slowOK && r.connectUs > 1000000 {
				t.Errorf("handshake timeout took %d us, want about 100 ms", r.connectUs)
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
var cppFields = map[string]bool{"v": true, "type": true, "re": true, "id": true, "launch": true, "client": true,
	"cmd": true, "sms": true, "range": true, "range.lo": true, "range.hi": true, "code": true, "finished": true}

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
		`{"v":1,"type":"welcome","re":1,"client":3,"sms":132,"policy":"slate-table (unknown classes co-run)","mps":true,"name":"v0.1.0-dev","device":0}`,
		`{"v":1,"type":"accepted","re":2,"launch":1,"class":"H_M","queued":0,"device":0}`,
		`{"v":1,"type":"start","id":17,"launch":1,"range":{"lo":66,"hi":131},"device":0}`,
		`{"v":1,"type":"resize","id":19,"launch":1,"range":{"lo":0,"hi":131},"device":0}`,
		`{"v":1,"type":"ok","re":3,"device":0}`,
		`{"v":1,"type":"error","re":4,"code":"unknown_launch","msg":"launch 9 is not outstanding","device":0}`,
		`{"v":1,"type":"error","code":"bad_frame","msg":"length 0"}`,
		`{"v":1,"type":"shutdown","reason":"SIGTERM","device":0}`,
	}
	edge := []string{
		``, ` `, `{}`, `[]`, `null`, `{"v":1}`, `{"type":"ok"}`, `{"v":1,"type":""}`, `{"v":1,"type":"ok"}{}`,
		`{"v":1,"type":"ok",}`, `{"v":1,"type":"ok","re":-1}`, `{"v":1,"type":"ok","re":1.0}`, `{"v":1,"type":"ok","re":1e0}`,
		`{"v":1,"type":"ok","re":01}`, `{"v":1,"type":"ok","re":18446744073709551615}`, `{"v":1,"type":"ok","re":18446744073709551616}`,
		`{"v":1,"type":"ok","re":null}`, `{"v":1,"type":"ok","re":"1"}`, `{"v":1.5,"type":"ok"}`, `{"v":2,"type":"ok"}`,
		`{"v":1,"type":"start","id":1,"launch":1,"range":{"lo":0}}`, `{"v":1,"type":"start","id":1,"launch":1,"range":{"lo":-1,"hi":3}}`,
		`{"v":1,"type":"start","id":1,"launch":1,"range":null}`, `{"v":1,"type":"start","id":1,"launch":1,"range":[0,3]}`,
		`{"v":1,"type":"start","id":1,"launch":1,"range":{"lo":0,"hi":3,"x":{"y":[1,2,{"z":null}]}}}`,
		`{"v":1,"type":"resized","finished":true}`, `{"v":1,"type":"resized","finished":1}`, `{"v":1,"type":"welcome","sms":4294967296}`,
		"{\"v\":1,\"type\":\"ok\"\x00}", "{\"v\":1,\"type\":\"o\nk\"}", `{"v":1,"type":"\u006fk"}`, `{"v":1,"type":"ok","x":"\ud800"}`,
		`{"v":1,"type":"ok","x":"\x"}`, `{"v":1,"type":"ok","x":tru}`, `{"v":1,"type":"ok","x":-}`, `{"v":1,"type":"ok","x":1.}`,
		`{"v":1,"type":"ok","x":.5}`, `{"v":1,"type":"ok","x":1e}`, `{"v":1,"type":"ok","x":-0.0e+5}`, `{"v":1,"type":"ok" "x":1}`,
		`{"v":1,"type":"ok","v":2}`, `{"v":2,"type":"ok","v":1}`, `{"v":1,"type":"start","type":"resize","id":1}`,
		`{"v":1,"type":"error","code":"bad\u0020frame"}`, `{"v":1,"type":"later_push","id":5}`, "\t{\"v\":1,\"type\":\"ok\"}\r\n",
		`{"v":1,"type":"ok","x":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`,
		`{"v":1,"type":"ok","x":` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `}`,
		`{"v":1,"type":"ok","x":` + strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat("}", 70) + `}`,
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
		fin := 0
		if m.Finished {
			fin = 1
		}
		want := fmt.Sprintf("ok type=%s re=%d id=%d launch=%d client=%d cmd=%d sms=%d range=%d lo=%d hi=%d finished=%d code=%s",
			typ, m.Re, m.ID, m.Launch, m.Client, m.Cmd, m.SMs, rng, lo, hi, fin, code)
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
