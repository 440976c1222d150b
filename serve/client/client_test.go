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
	r := serve.Range{Lo: 0, Hi: 7}
	return serve.WriteMsg(nc, &serve.Msg{Type: serve.TWelcome, Re: m.ID, Client: 1, SMs: 8, ID: 1, Range: &r, Alone: true, Clients: 1}) == nil
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
		nc.Write([]byte{0xff, 0xff, 0xff, 0xff}) // a 4 GiB frame
		time.Sleep(time.Second)
	})
	c, err := Connect(Options{Socket: sock, HandshakeTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	select {
	case <-c.Lost():
	case <-ctx.Done():
		t.Fatal("garbage did not lose the daemon")
	}
	if g := c.Grant(); !g.Alone || g.Range != (serve.Range{Lo: 0, Hi: 7}) {
		t.Fatalf("grant after loss %+v, want the whole GPU alone", g)
	}
	if pe, ok := serve.AsProtoError(c.LostErr()); !ok || pe.Code != serve.ErrBadFrame {
		t.Fatalf("lost because %v", c.LostErr())
	}
	if _, err := c.Status(ctx); !errors.Is(err, ErrLost) {
		t.Fatalf("request after loss: %v", err)
	}
}

func TestUnreadGrantsAreLoss(t *testing.T) {
	sock := fakeDaemon(t, func(nc net.Conn) {
		if !welcome(nc) {
			return
		}
		for i := range 200 {
			r := serve.Range{Lo: 0, Hi: i % 8}
			serve.WriteMsg(nc, &serve.Msg{Type: serve.TGrant, ID: uint64(2 + i), Range: &r, Clients: 2})
		}
		time.Sleep(time.Second)
	})
	c, err := Connect(Options{Socket: sock, HandshakeTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Lost():
	case <-time.After(2 * time.Second):
		t.Fatal("an application that never reads its grants should lose the daemon, not block the reader")
	}
}

func TestWelcomeWithoutGrantRefused(t *testing.T) {
	sock := fakeDaemon(t, func(nc net.Conn) {
		body, err := serve.ReadFrame(nc, nil)
		if err != nil {
			return
		}
		m, _ := serve.Decode(body)
		serve.WriteMsg(nc, &serve.Msg{Type: serve.TWelcome, Re: m.ID, Client: 1, SMs: 8})
		time.Sleep(time.Second)
	})
	if _, err := Connect(Options{Socket: sock, HandshakeTimeout: time.Second}); err == nil {
		t.Fatal("a welcome without a grant was accepted")
	}
}
