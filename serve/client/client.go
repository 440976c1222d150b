// Package client is the Go side of the slatec serve protocol
// (docs/SERVE.md): a process registers with the daemon, announces its
// launches, receives SM ranges and resize commands, and acknowledges them.
// Every failure to reach the daemon is fast and final: the caller runs
// natively on the whole GPU.
package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slatec/slatec/serve"
)

// ErrLost is returned once the daemon is gone (EOF, shutdown, a protocol
// error): the caller runs on the full GPU.
var ErrLost = errors.New("serve/client: connection to the daemon lost")

// Options configure Connect. Zero values take defaults.
type Options struct {
	Socket string // default serve.DefaultSocket()
	PID    int    // default os.Getpid()
	Name   string // default the executable's base name
	Device int
	UUID   string
	SMs    int // the device's SMs (required when the daemon does not know them)
	// HandshakeTimeout bounds hello/welcome (default 100 ms); with no
	// daemon listening, Connect fails at the dial, in microseconds.
	HandshakeTimeout time.Duration
}

// ServerError is an "error" reply.
type ServerError struct{ Code, Msg string }

func (e *ServerError) Error() string { return "slatec serve: " + e.Code + ": " + e.Msg }

// Resize is a resize command of one launch, or (Lost) the signal that the
// daemon is gone and the launch may use the whole GPU.
type Resize struct {
	Cmd    uint64
	Launch uint64
	Range  serve.Range
	Lost   bool
}

// Client is one connection to the daemon.
type Client struct {
	nc     net.Conn
	wmu    sync.Mutex
	nextID atomic.Uint64
	id     uint64
	sms    int
	policy string
	mps    bool

	mu       sync.Mutex
	pending  map[uint64]chan *serve.Msg
	launches map[uint64]*Launch
	lost     chan struct{}
	lostOnce sync.Once
	lostErr  error
}

// Launch is one announced launch.
type Launch struct {
	c       *Client
	id      uint64
	started chan struct{}
	resizes chan Resize
	mu      sync.Mutex
	rng     serve.Range
	class   string
	hasRng  bool
}

// Dial connects without registering (for status queries, `slatec top`).
func Dial(socket string) (*Client, error) {
	if socket == "" {
		socket = serve.DefaultSocket()
	}
	// A Unix socket dial fails at once (ENOENT, ECONNREFUSED) when no
	// daemon listens; the timeout only bounds a daemon whose backlog is full.
	nc, err := net.DialTimeout("unix", socket, 10*time.Millisecond)
	if err != nil {
		return nil, err
	}
	c := &Client{nc: nc, pending: map[uint64]chan *serve.Msg{}, launches: map[uint64]*Launch{}, lost: make(chan struct{})}
	go c.reader()
	return c, nil
}

// Connect dials the daemon and registers this process. Any error means:
// run natively.
func Connect(opt Options) (*Client, error) {
	if opt.PID == 0 {
		opt.PID = os.Getpid()
	}
	if opt.Name == "" {
		opt.Name = filepath.Base(os.Args[0])
	}
	if opt.HandshakeTimeout <= 0 {
		opt.HandshakeTimeout = 100 * time.Millisecond
	}
	c, err := Dial(opt.Socket)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opt.HandshakeTimeout)
	defer cancel()
	r, err := c.Request(ctx, &serve.Msg{Type: serve.THello, PID: opt.PID, Name: opt.Name, Device: opt.Device, UUID: opt.UUID, SMs: opt.SMs})
	if err != nil {
		c.nc.Close()
		return nil, err
	}
	c.id, c.sms, c.policy, c.mps = r.Client, r.SMs, r.Policy, r.MPS
	return c, nil
}

// ID is the client id the daemon gave.
func (c *Client) ID() uint64 { return c.id }

// SMs is the GPU's SM count as the daemon knows it.
func (c *Client) SMs() int { return c.sms }

// Policy is the daemon's policy description.
func (c *Client) Policy() string { return c.policy }

// MPS reports whether the daemon found MPS active.
func (c *Client) MPS() bool { return c.mps }

// Lost is closed when the connection ends.
func (c *Client) Lost() <-chan struct{} { return c.lost }

func (c *Client) write(m *serve.Msg) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	if err := serve.WriteMsg(c.nc, m); err != nil {
		c.setLost(err)
		return ErrLost
	}
	return nil
}

// Request sends m with a fresh id and waits for its reply (an error reply
// is returned as *ServerError).
func (c *Client) Request(ctx context.Context, m *serve.Msg) (*serve.Msg, error) {
	m.ID = c.nextID.Add(1)
	ch := make(chan *serve.Msg, 1)
	c.mu.Lock()
	select {
	case <-c.lost:
		c.mu.Unlock()
		return nil, ErrLost
	default:
	}
	c.pending[m.ID] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, m.ID)
		c.mu.Unlock()
	}()
	if err := c.write(m); err != nil {
		return nil, err
	}
	reply := func(r *serve.Msg) (*serve.Msg, error) {
		if r.Type == serve.TError {
			return r, &ServerError{r.Code, r.Err}
		}
		return r, nil
	}
	select {
	case r := <-ch:
		return reply(r)
	case <-c.lost:
		select { // a reply read before the EOF wins
		case r := <-ch:
			return reply(r)
		default:
		}
		return nil, ErrLost
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Client) setLost(err error) {
	c.lostOnce.Do(func() {
		c.mu.Lock()
		c.lostErr = err
		ls := make([]*Launch, 0, len(c.launches))
		for _, l := range c.launches {
			ls = append(ls, l)
		}
		close(c.lost)
		c.mu.Unlock()
		c.nc.Close()
		for _, l := range ls {
			select {
			case l.resizes <- Resize{Launch: l.id, Range: serve.Range{Lo: 0, Hi: max(c.sms-1, 0)}, Lost: true}:
			default:
			}
		}
	})
}

// LostErr is why the connection ended (nil while it lives).
func (c *Client) LostErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lostErr
}

func (c *Client) reader() {
	buf := make([]byte, 4096)
	for {
		body, err := serve.ReadFrame(c.nc, buf)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = ErrLost
			}
			c.setLost(err)
			return
		}
		m, err := serve.Decode(body)
		if err != nil {
			c.setLost(err)
			return
		}
		switch {
		case m.Re != 0:
			c.mu.Lock()
			ch := c.pending[m.Re]
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case m.Type == serve.TStart, m.Type == serve.TResize:
			c.mu.Lock()
			l := c.launches[m.Launch]
			c.mu.Unlock()
			if l == nil || m.Range == nil {
				continue
			}
			if m.Type == serve.TStart {
				l.mu.Lock()
				first := !l.hasRng
				l.rng, l.hasRng = *m.Range, true
				l.mu.Unlock()
				if first {
					close(l.started)
				}
				continue
			}
			select {
			case l.resizes <- Resize{Cmd: m.ID, Launch: l.id, Range: *m.Range}:
			default: // the application does not drain its resizes: stop
				c.setLost(fmt.Errorf("serve/client: launch %d: resize commands not consumed", l.id))
				return
			}
		case m.Type == serve.TShutdown:
			c.setLost(fmt.Errorf("%w: daemon shut down: %s", ErrLost, m.Reason))
			return
		case m.Type == serve.TError: // unsolicited: the daemon closes next
			c.setLost(&ServerError{m.Code, m.Err})
			return
		}
	}
}

// LaunchSpec describes a launch to announce.
type LaunchSpec struct {
	Kernel string
	Grid   [3]uint32
	Block  [3]uint32
	Shmem  uint32
	Class  string // one of plan's classes, or ""
	Blocks uint64 // estimated logical blocks
}

var launchIDs atomic.Uint64

// Announce announces a launch and returns once the daemon accepted it; the
// range comes later (Started, Range).
func (c *Client) Announce(ctx context.Context, s LaunchSpec) (*Launch, error) {
	l := &Launch{c: c, id: launchIDs.Add(1), started: make(chan struct{}), resizes: make(chan Resize, 64)}
	c.mu.Lock()
	c.launches[l.id] = l
	c.mu.Unlock()
	r, err := c.Request(ctx, &serve.Msg{Type: serve.TLaunch, Launch: l.id, Kernel: s.Kernel, Grid: s.Grid, Block: s.Block,
		Shmem: s.Shmem, Class: s.Class, Blocks: s.Blocks})
	if err != nil {
		c.mu.Lock()
		delete(c.launches, l.id)
		c.mu.Unlock()
		return nil, err
	}
	l.class = r.Class
	return l, nil
}

// Launch announces a launch and waits until the daemon starts it (its range
// is then Range()) or ctx ends.
func (c *Client) Launch(ctx context.Context, s LaunchSpec) (*Launch, error) {
	l, err := c.Announce(ctx, s)
	if err != nil {
		return nil, err
	}
	select {
	case <-l.started:
		return l, nil
	case <-c.lost:
		select {
		case <-l.started:
			return l, nil
		default:
		}
		return l, ErrLost
	case <-ctx.Done():
		return l, ctx.Err()
	}
}

// ID is the launch id.
func (l *Launch) ID() uint64 { return l.id }

// Class is the class the daemon scheduled the launch as ("" if unknown).
func (l *Launch) Class() string { return l.class }

// Started is closed when the daemon gives the launch its first range.
func (l *Launch) Started() <-chan struct{} { return l.started }

// Range is the launch's current range (the last start or acknowledged
// resize).
func (l *Launch) Range() serve.Range {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rng
}

// Resizes delivers the daemon's resize commands for this launch, and a
// final Lost one if the daemon goes away. After draining the workers and
// relaunching on the new range, call Ack.
func (l *Launch) Resizes() <-chan Resize { return l.resizes }

// Ack acknowledges a resize: the launch runs on r.Range now (finished:
// the launch had already ended). It does not wait for the daemon's ok.
func (l *Launch) Ack(r Resize, finished bool) error {
	if r.Lost {
		return nil
	}
	l.mu.Lock()
	if !finished {
		l.rng = r.Range
	}
	l.mu.Unlock()
	m := &serve.Msg{Type: serve.TResized, ID: l.c.nextID.Add(1), Launch: l.id, Cmd: r.Cmd, Finished: finished}
	if !finished {
		rg := r.Range
		m.Range = &rg
	}
	return l.c.write(m)
}

// Finish tells the daemon the launch ended (its SMs go to the others).
func (l *Launch) Finish() error {
	c := l.c
	c.mu.Lock()
	delete(c.launches, l.id)
	c.mu.Unlock()
	return c.write(&serve.Msg{Type: serve.TDone, ID: c.nextID.Add(1), Launch: l.id})
}

// Status asks the daemon for its state.
func (c *Client) Status(ctx context.Context) (*serve.Status, error) {
	r, err := c.Request(ctx, &serve.Msg{Type: serve.TStatus})
	if err != nil {
		return nil, err
	}
	if r.Status == nil {
		return nil, errors.New("serve/client: status reply without status")
	}
	return r.Status, nil
}

// Close says bye (the job is done) and closes the connection.
func (c *Client) Close() error {
	select {
	case <-c.lost:
	default:
		c.write(&serve.Msg{Type: serve.TBye, ID: c.nextID.Add(1)})
	}
	c.setLost(ErrLost)
	return nil
}

// Abort closes the connection without bye, as a killed process would.
func (c *Client) Abort() { c.setLost(ErrLost) }
