// Package client is the Go side of the slatec serve protocol
// (docs/SERVE.md, protocol v2): a process registers with the daemon,
// receives a standing SM range (a grant, pushed again whenever it changes),
// acknowledges each change once its launches have moved, and reports its
// launch accounting in load notes that nobody answers.
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
	// Kernel and Class: the kernel of the launch that registers the process
	// (optional; the daemon plans its join with it).
	Kernel, Class string
	// HandshakeTimeout bounds the dial and hello/welcome (default 100 ms);
	// with no daemon listening, Connect fails at the dial, in microseconds.
	HandshakeTimeout time.Duration
}

// ServerError is an "error" reply.
type ServerError struct{ Code, Msg string }

func (e *ServerError) Error() string { return "slatec serve: " + e.Code + ": " + e.Msg }

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
	grant    serve.Grant
	grants   chan serve.Grant
	lost     chan struct{}
	lostOnce sync.Once
	lostErr  error
}

// Dial connects without registering (for status queries, `slatec top`).
func Dial(socket string) (*Client, error) {
	return dial(socket, 100*time.Millisecond)
}

// dial connects within timeout. A Unix socket dial fails at once (ENOENT,
// ECONNREFUSED) when no daemon listens; the timeout only bounds a daemon
// whose backlog is full (and a loaded machine's scheduling: 10 ms was cut
// short under a busy test run).
func dial(socket string, timeout time.Duration) (*Client, error) {
	if socket == "" {
		socket = serve.DefaultSocket()
	}
	nc, err := net.DialTimeout("unix", socket, timeout)
	if err != nil {
		return nil, err
	}
	c := &Client{nc: nc, pending: map[uint64]chan *serve.Msg{}, grants: make(chan serve.Grant, 64), lost: make(chan struct{})}
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
	c, err := dial(opt.Socket, opt.HandshakeTimeout)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opt.HandshakeTimeout)
	defer cancel()
	r, err := c.Request(ctx, &serve.Msg{Type: serve.THello, PID: opt.PID, Name: opt.Name, Device: opt.Device, UUID: opt.UUID, SMs: opt.SMs, Kernel: opt.Kernel, Class: opt.Class})
	if err != nil {
		c.nc.Close()
		return nil, err
	}
	if r.Range == nil || r.ID == 0 {
		c.nc.Close()
		return nil, fmt.Errorf("serve/client: welcome without a grant")
	}
	c.id, c.sms, c.policy, c.mps = r.Client, r.SMs, r.Policy, r.MPS
	c.mu.Lock()
	if c.grant.Epoch < r.ID { // a push can not precede the welcome, but be safe
		c.grant = serve.Grant{Epoch: r.ID, Range: *r.Range, Alone: r.Alone, Clients: r.Clients}
	}
	c.mu.Unlock()
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
		// The daemon is gone: the whole GPU, alone (native launches).
		c.grant = serve.Grant{Epoch: c.grant.Epoch, Range: serve.Range{Lo: 0, Hi: max(c.sms-1, 0)}, Alone: true, Clients: 1}
		close(c.lost)
		c.mu.Unlock()
		c.nc.Close()
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
		case m.Type == serve.TGrant:
			if m.Range == nil || m.ID == 0 {
				c.setLost(fmt.Errorf("serve/client: grant without range or epoch"))
				return
			}
			g := serve.Grant{Epoch: m.ID, Range: *m.Range, Alone: m.Alone, Clients: m.Clients}
			c.mu.Lock()
			if g.Epoch > c.grant.Epoch {
				c.grant = g
			}
			c.mu.Unlock()
			select {
			case c.grants <- g:
			default: // the application does not read its grants: stop
				c.setLost(fmt.Errorf("serve/client: grant pushes not consumed"))
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

// Grant is the current grant: the welcome's, then the latest push; after
// a loss, the whole GPU, alone.
func (c *Client) Grant() serve.Grant {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.grant
}

// Grants delivers each grant push (not the welcome's). A client that
// leaves 64 of them unread is disconnected (as the daemon would).
func (c *Client) Grants() <-chan serve.Grant { return c.grants }

// Ack acknowledges grant g: the client's launches run within rg now
// (drain: from receiving the grant until they did; moved: launches
// retreated and relaunched). It does not wait (acks are not answered).
func (c *Client) Ack(g serve.Grant, rg serve.Range, drain time.Duration, moved int) error {
	return c.write(&serve.Msg{Type: serve.TAck, Epoch: g.Epoch, Range: &rg, DrainUs: uint64(drain / time.Microsecond), Moved: moved})
}

// Load reports the client's launch accounting (not answered): launches
// since hello, served launches running now, and the latest kernel.
func (c *Client) Load(launches uint64, inflight int, kernel, class string) error {
	return c.write(&serve.Msg{Type: serve.TLoad, Launches: launches, InFlight: inflight, Kernel: kernel, Class: class})
}

// LoadNative sends a load note of a process that launches natively while
// sharing the GPU: pending says whether its native launches have all ended.
func (c *Client) LoadNative(launches uint64, kernel string, pending bool) error {
	return c.write(&serve.Msg{Type: serve.TLoad, Launches: launches, Kernel: kernel, NativePending: pending})
}

// LoadHeld sends a load note of a process whose native launches, made
// while sharing the GPU, keep their budget of GPU work queued ahead (its
// launching thread waited for older ones): pending, and busy.
func (c *Client) LoadHeld(launches uint64, kernel string) error {
	return c.write(&serve.Msg{Type: serve.TLoad, Launches: launches, Kernel: kernel, NativePending: true, Held: true})
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
