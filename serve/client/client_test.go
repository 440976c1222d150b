package client

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slatec/slatec/serve"
)

// fakeDaemon accepts one connection and runs script on it.
func fakeDaemon(t *testing.T, script func(nc net.Conn)) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "slcl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		script(nc)
	}()
	return sock
}

func welcome(nc net.Conn) bool {
	body, err := serve.ReadFrame(nc, nil)
	if err != nil {
		return false
	}
	m, err := serve.Decode(body)
	if err != nil {
		return false
	}
	return serve.WriteMsg(nc, &serve.Msg{Type: serve.TWelcome, Re: m.ID, Client: 1, SMs: 8}) == nil
}

func TestHandshakeTimeoutBounded(t *testing.T) {
	sock := fakeDaemon(t, func(nc net.Conn) { time.Sleep(2 * time.Second) }) // never answers
	t0 := time.Now()
	_, err := Connect(Options{Socket: sock, HandshakeTimeout: 20 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want a deadline", err)
	}
	if d := time.Since(t0); d > 500*time.Millisecond {
		t.Fatalf("Connect took %v with a 20ms handshake timeout", d)
	}
}

func TestGarbageFromDaemonIsLoss(t *testing.T) {
	sock := fakeDaemon(t, func(nc net.Conn) {
		if !welcome(nc) {
			return
		}
		serve.ReadFrame(nc, nil)                 // the launch
		nc.Write([]byte{0xff, 0xff, 0xff, 0xff}) // a 4 GiB frame
		time.Sleep(time.Second)
	})
	c, err := Connect(Options{Socket: sock, HandshakeTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = c.Launch(ctx, LaunchSpec{Kernel: "k", Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{1, 1, 1}})
	if !errors.Is(err, ErrLost) {
		t.Fatalf("launch: %v, want ErrLost", err)
	}
	if pe, ok := serve.AsProtoError(c.LostErr()); !ok || pe.Code != serve.ErrBadFrame {
		t.Fatalf("lost because %v", c.LostErr())
	}
	if _, err := c.Status(ctx); !errors.Is(err, ErrLost) {
		t.Fatalf("request after loss: %v", err)
	}
}

func TestUnreadResizesAreLoss(t *testing.T) {
	sock := fakeDaemon(t, func(nc net.Conn) {
		if !welcome(nc) {
			return
		}
		body, _ := serve.ReadFrame(nc, nil)
		m, _ := serve.Decode(body)
		serve.WriteMsg(nc, &serve.Msg{Type: serve.TAccepted, Re: m.ID, Launch: m.Launch})
		r := serve.Range{Lo: 0, Hi: 7}
		serve.WriteMsg(nc, &serve.Msg{Type: serve.TStart, ID: 1, Launch: m.Launch, Range: &r})
		for i := range 200 {
			serve.WriteMsg(nc, &serve.Msg{Type: serve.TResize, ID: uint64(2 + i), Launch: m.Launch, Range: &r})
		}
		time.Sleep(time.Second)
	})
	c, err := Connect(Options{Socket: sock, HandshakeTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	l, err := c.Launch(ctx, LaunchSpec{Kernel: "k", Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{1, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if l.Range() != (serve.Range{Lo: 0, Hi: 7}) {
		t.Fatalf("range %v", l.Range())
	}
	select {
	case <-c.Lost():
	case <-time.After(2 * time.Second):
		t.Fatal("an application that never reads its resizes should lose the daemon, not block the reader")
	}
}
