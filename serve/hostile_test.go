package serve_test

import (
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
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

const helloBody = `{"v":2,"type":"hello","id":1,"pid":7,"name":"raw","sms":100}`

func TestHostileMessages(t *testing.T) {
	h := newHarness(t, serve.Config{})
	good := h.connect("good")
	stop := make(chan struct{})
	defer close(stop)
	autoAck(good, stop)
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
		{"version 1 client", false, rawFrame(`{"v":1,"type":"hello","id":1,"pid":7,"name":"old","sms":100}`), serve.ErrBadVersion, true},
		{"unknown type", false, rawFrame(`{"v":2,"type":"exec","id":1}`), serve.ErrUnknownType, true},
		{"v1 launch", true, rawFrame(`{"v":2,"type":"launch","id":2,"launch":1,"kernel":"k","grid":[1,1,1],"block":[1,1,1]}`), serve.ErrUnknownType, true},
		{"load before hello", false, rawFrame(`{"v":2,"type":"load","launches":1}`), serve.ErrNotRegistered, true},
		{"ack before hello", false, rawFrame(`{"v":2,"type":"ack","epoch":1,"range":{"lo":0,"hi":1}}`), serve.ErrNotRegistered, true},
		{"ack without range", true, rawFrame(`{"v":2,"type":"ack","epoch":1}`), serve.ErrBadField, true},
		{"ack of epoch 0", true, rawFrame(`{"v":2,"type":"ack","epoch":0,"range":{"lo":0,"hi":1}}`), serve.ErrBadField, true},
		{"load with a bad class", true, rawFrame(`{"v":2,"type":"load","class":"X"}`), serve.ErrBadField, true},
		{"load with negative inflight", true, rawFrame(`{"v":2,"type":"load","inflight":-1}`), serve.ErrBadField, true},
		{"ack of an epoch never sent", true, rawFrame(`{"v":2,"type":"ack","epoch":999999,"range":{"lo":0,"hi":1}}`), "", false},
		{"second hello", true, rawFrame(helloBody), serve.ErrRegistered, false},
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
			if !tc.closes {
				nc.Write(rawFrame(`{"v":2,"type":"status","id":77}`))
			}
			ms, eof := readAll(t, nc, 300*time.Millisecond)
			var code string
			var status bool
			for _, m := range ms {
				if m.Type == serve.TError && code == "" {
					code = m.Code
					if tc.name == "version 1 client" && !strings.Contains(m.Err, "rebuild") {
						t.Errorf("a v1 client is told %q, want a message that says to rebuild", m.Err)
					}
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
	for deadline := time.Now().Add(2 * time.Second); good.Grant().Range != full() || !good.Grant().Alone; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("good left on %+v", good.Grant())
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
	if g := c.Grant(); !g.Alone || g.Range != full() {
		t.Fatalf("other got %+v beside a half-open connection that never said hello", g)
	}
}

func TestHostileClientWithSMsIsDropped(t *testing.T) {
	h := newHarness(t, serve.Config{})
	a := h.connect("a")
	nc, err := net.Dial("unix", h.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write(rawFrame(helloBody))
	g := nextGrant(t, a, 2*time.Second)
	a.Ack(g, g.Range, 0, 0)
	if g.Range.Count() != 50 {
		t.Fatalf("a shrunk to %v", g.Range)
	}
	nc.Write(rawFrame(`{"v":2,"type":"load",`)) // garbage: rejected, closed
	g = nextGrant(t, a, 2*time.Second)
	if g.Range != full() || !g.Alone {
		t.Fatalf("a got %+v after the hostile client was dropped", g)
	}
}

// TestSteadySplitFromProfiles: with profiles, two clients whose latest
// kernels the steady split divides get its shares; an unprofiled kernel
// brings back equal shares (the test's --unplanned).
func TestSteadySplitFromProfiles(t *testing.T) {
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
	if got := b.Grant().Range.Count(); got != sms/2 {
		t.Fatalf("b before any load: %v, want half", b.Grant())
	}
	nextGrant(t, a, time.Second) // the halves
	st, err := plan.SteadySplitFor(ps, []string{"fma_loop", "triad_f4"}, plan.SteadyOptions{})
	if err != nil || st == nil || st.STP < serve.MinSTP || st.SMs[1] >= st.SMs[0] {
		t.Fatalf("the test needs a pair the policy splits, triad_f4 the smaller share: %+v, %v", st, err)
	}
	launching(t, a, "fma_loop")
	lb := launching(t, b, "triad_f4")
	// The steady split of fma_loop and triad_f4: triad_f4's share, the
	// smaller one, first (lowest SM ids), though b registered second.
	deadline := time.After(2 * time.Second)
	for {
		select {
		case g := <-b.Grants():
			if got := g.Range.Count(); got == st.SMs[1] {
				if g.Range.Lo != 0 {
					t.Errorf("triad_f4's smaller share %v, want it first (from SM 0)", g.Range)
				}
				ga := a.Grant() // pushed with b's: wait for it
				for until := time.Now().Add(time.Second); ga.Range.Lo != st.SMs[1] && time.Now().Before(until); ga = a.Grant() {
					time.Sleep(time.Millisecond)
				}
				if ga.Range.Lo != st.SMs[1] || ga.Range.Hi != sms-1 {
					t.Errorf("fma_loop's share %v, want %d:%d", ga.Range, st.SMs[1], sms-1)
				}
				lb.set("unprofiled") // no plan: equal shares again
				for {
					select {
					case g := <-b.Grants():
						if g.Range.Count() == sms/2 {
							return
						}
					case <-deadline:
						t.Fatal("an unprofiled kernel did not bring back equal shares")
					}
				}
			}
		case <-deadline:
			t.Fatalf("triad_f4 never got the split's %d of %d SMs; b holds %v", st.SMs[1], sms, b.Grant())
		}
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
		`{"v":2,"type":"load","launches":3,"inflight":1,"kernel":"k","class":"M_M"}`,
		`{"v":2,"type":"ack","epoch":1,"range":{"lo":0,"hi":1},"drain_us":5,"moved":1}`,
		`{"v":2,"type":"bye","id":4}`,
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
	if err := good.Load(1, 0, "k", ""); err != nil {
		t.Fatal(err)
	}
}
