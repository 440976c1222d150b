package serve_test

import (
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/serve"
	"github.com/slatec/slatec/serve/client"
)

func rawFrame(body string) []byte {
	b := make([]byte, 4+len(body))
	binary.LittleEndian.PutUint32(b, uint32(len(body)))
	copy(b[4:], body)
	return b
}

// readAll reads the daemon's frames on nc until EOF (true) or d passes.
func readAll(t *testing.T, nc net.Conn, d time.Duration) ([]*serve.Msg, bool) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(d))
	var ms []*serve.Msg
	for {
		body, err := serve.ReadFrame(nc, nil)
		if err != nil {
			return ms, errors.Is(err, io.EOF)
		}
		m, err := serve.Decode(body)
		if err != nil {
			t.Fatalf("daemon sent an undecodable frame: %v", err)
		}
		ms = append(ms, m)
	}
}

const helloBody = `{"v":1,"type":"hello","id":1,"pid":7,"name":"raw","sms":100}`

func TestHostileMessages(t *testing.T) {
	h := newHarness(t, serve.Config{})
	good := h.connect("good")
	lg, err := good.Launch(ctxT(t, 2*time.Second), spec("kg", ""))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	autoAck(lg, stop)
	huge := []byte{0xff, 0xff, 0xff, 0xff}
	for _, tc := range []struct {
		name   string
		hello  bool
		send   []byte
		code   string
		closes bool
	}{
		{"4 GiB frame", false, huge, serve.ErrBadFrame, true},
		{"zero frame", false, []byte{0, 0, 0, 0}, serve.ErrBadFrame, true},
		{"not json", false, rawFrame("GET / HTTP/1.1"), serve.ErrBadJSON, true},
		{"version 9", false, rawFrame(`{"v":9,"type":"hello","id":1}`), serve.ErrBadVersion, true},
		{"unknown type", false, rawFrame(`{"v":1,"type":"exec","id":1}`), serve.ErrUnknownType, true},
		{"launch before hello", false, rawFrame(`{"v":1,"type":"launch","id":1,"launch":1,"kernel":"k","grid":[1,1,1],"block":[1,1,1]}`), serve.ErrNotRegistered, true},
		{"bad grid", true, rawFrame(`{"v":1,"type":"launch","id":2,"launch":1,"kernel":"k","grid":[0,1,1],"block":[1,1,1]}`), serve.ErrBadField, true},
		{"done of nothing", true, rawFrame(`{"v":1,"type":"done","id":2,"launch":99}`), serve.ErrUnknownLaunch, false},
		{"second hello", true, rawFrame(helloBody), serve.ErrRegistered, false},
		{"ack of nothing sent", true, rawFrame(`{"v":1,"type":"launch","id":2,"launch":1,"kernel":"k","grid":[1,1,1],"block":[1,1,1]}` + ""), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := net.Dial("unix", h.sock)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			if tc.hello {
				nc.Write(rawFrame(helloBody))
			}
			nc.Write(tc.send)
			if tc.name == "ack of nothing sent" {
				// launch 1 is accepted; then an ack naming a resize never sent.
				nc.Write(rawFrame(`{"v":1,"type":"resized","id":3,"launch":1,"cmd":999999,"range":{"lo":0,"hi":1}}`))
				tc.code = serve.ErrUnknownCmd
			}
			if !tc.closes {
				nc.Write(rawFrame(`{"v":1,"type":"status","id":77}`))
			}
			ms, eof := readAll(t, nc, 300*time.Millisecond)
			var code string
			var status bool
			for _, m := range ms {
				if m.Type == serve.TError && code == "" {
					code = m.Code
				}
				status = status || (m.Type == serve.TStatus && m.Re == 77)
			}
			if code != tc.code {
				t.Fatalf("error code %q, want %q (got %d messages)", code, tc.code, len(ms))
			}
			if tc.closes != eof {
				t.Fatalf("connection closed = %v, want %v", eof, tc.closes)
			}
			if !tc.closes && !status {
				t.Fatal("connection not served after a non-fatal error")
			}
			// The daemon keeps serving the others.
			if _, err := good.Status(ctxT(t, time.Second)); err != nil {
				t.Fatalf("good client after hostile one: %v", err)
			}
		})
	}
	// The hostile connections are gone: good is back on the whole GPU.
	for deadline := time.Now().Add(2 * time.Second); lg.Range() != full(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("good launch left on %v", lg.Range())
		}
	}
}

func TestPartialFrameDoesNotBlockOthers(t *testing.T) {
	h := newHarness(t, serve.Config{})
	nc, err := net.Dial("unix", h.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte{200, 0}) // half a length, then silence
	c := h.connect("other")
	if _, err := c.Launch(ctxT(t, time.Second), spec("k", "")); err != nil {
		t.Fatal(err)
	}
}

func TestHostileClientWithSMsIsDropped(t *testing.T) {
	h := newHarness(t, serve.Config{})
	a := h.connect("a")
	la, err := a.Launch(ctxT(t, 2*time.Second), spec("ka", ""))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("unix", h.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write(rawFrame(helloBody))
	nc.Write(rawFrame(`{"v":1,"type":"launch","id":2,"launch":1,"kernel":"k","grid":[1,1,1],"block":[1,1,1]}`))
	r := nextResize(t, la, 2*time.Second)
	la.Ack(r, false)
	if r.Range.Count() != 50 {
		t.Fatalf("a shrunk to %v", r.Range)
	}
	nc.Write(rawFrame(`{"v":1,"type":"launch","id":3,`)) // garbage: rejected, closed
	r = nextResize(t, la, 2*time.Second)
	if r.Range != full() {
		t.Fatalf("a got %v after the hostile client was dropped", r.Range)
	}
	la.Ack(r, false)
}

func TestSTMPlanFromProfiles(t *testing.T) {
	ps, err := plan.ReadProfileFile("../plan/testdata/example-profiles.json")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, serve.Config{Profiles: ps})
	sms := ps.Device.SMs
	a, err := client.Connect(client.Options{Socket: h.sock, SMs: sms, HandshakeTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Abort()
	b, err := client.Connect(client.Options{Socket: h.sock, HandshakeTimeout: 2 * time.Second}) // sms from the profiles
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	if a.SMs() != sms || b.SMs() != sms {
		t.Fatalf("sms %d %d, want %d", a.SMs(), b.SMs(), sms)
	}
	la, err := a.Launch(ctxT(t, 2*time.Second), spec("triad_f4", ""))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	autoAck(la, stop)
	// stencil is in another STM phase: it waits.
	ls, err := b.Announce(ctxT(t, 2*time.Second), spec("stencil", ""))
	if err != nil {
		t.Fatal(err)
	}
	// fma_loop shares triad_f4's phase: it co-runs, on the plan's share.
	lf, err := b.Launch(ctxT(t, 2*time.Second), spec("fma_loop", ""))
	if err != nil {
		t.Fatal(err)
	}
	autoAck(lf, stop)
	select {
	case <-ls.Started():
		t.Fatal("stencil co-runs with its STM phase's successors")
	default:
	}
	if got := lf.Range().Count(); got < 26 || got > 30 {
		t.Fatalf("fma_loop got %v (%d SMs), the plan gives it 28 of %d", lf.Range(), got, sms)
	}
	if lf.Class() == "" {
		t.Error("no class from the profiles")
	}
	la.Finish()
	lf.Finish()
	select {
	case <-ls.Started():
		if ls.Range().Count() != sms {
			t.Fatalf("stencil alone got %v", ls.Range())
		}
	case <-time.After(2 * time.Second):
		t.Fatal("stencil never started")
	}
}

// TestDaemonSurvivesRandomBytes sends random frames and bytes on many
// connections; the daemon must keep serving a good client throughout.
func TestDaemonSurvivesRandomBytes(t *testing.T) {
	h := newHarness(t, serve.Config{})
	good := h.connect("good")
	rng := rand.New(rand.NewPCG(1, 2))
	bodies := []string{
		helloBody,
		`{"v":1,"type":"launch","id":2,"launch":1,"kernel":"k","grid":[1,1,1],"block":[1,1,1]}`,
		`{"v":1,"type":"resized","id":3,"launch":1,"cmd":1,"range":{"lo":0,"hi":1}}`,
		`{"v":1,"type":"done","id":4,"launch":1}`,
	}
	for i := range 100 {
		nc, err := net.Dial("unix", h.sock)
		if err != nil {
			t.Fatal(err)
		}
		var msg []byte
		for range 1 + rng.IntN(4) {
			b := []byte(bodies[rng.IntN(len(bodies))])
			for range rng.IntN(4) { // mutate a few bytes
				b[rng.IntN(len(b))] = byte(rng.IntN(256))
			}
			f := rawFrame(string(b))
			if rng.IntN(5) == 0 {
				f = f[:rng.IntN(len(f))]
			}
			msg = append(msg, f...)
		}
		if i%10 == 0 {
			junk := make([]byte, rng.IntN(64))
			for j := range junk {
				junk[j] = byte(rng.IntN(256))
			}
			msg = append(junk, msg...)
		}
		nc.Write(msg)
		if i%2 == 0 {
			nc.Close()
		} else {
			defer nc.Close()
		}
	}
	if _, err := good.Status(ctxT(t, 2*time.Second)); err != nil {
		t.Fatal(err)
	}
	l, err := good.Launch(ctxT(t, 2*time.Second), spec("k", ""))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	autoAck(l, stop)
}
