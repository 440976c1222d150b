package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slatec/slatec/plan"
	rt "github.com/slatec/slatec/runtime"
)

// Config configures a Daemon. Zero values take defaults.
type Config struct {
	Socket        string           // default DefaultSocket()
	Profiles      *plan.ProfileSet // optional: classes and an STM plan
	SMs           int              // the GPU's SMs; 0: the profiles', else the first client's hello
	ResizeTimeout time.Duration    // a resize's wait for the client's ack (default 100 ms)
	MaxCoRun      int              // launches sharing the GPU at once (default 2, Slate's pairs)
	UnknownSolo   bool             // kernels of unknown class run solo (default: they co-run)
	MaxClients    int              // connections (default 256)
	MaxLaunches   int              // outstanding launches per client (default 1024)
	Version       string           // reported in welcome and status
	Logf          func(string, ...any)
	Clock         func() time.Time // default time.Now
	MPS           *MPSState        // default CheckMPS()
	OnEvent       func(Event)      // test hook; called without locks held, must not block
}

// Event is a daemon happening, for logs and tests.
type Event struct {
	Kind   string // join, leave, reject, start, resize, stuck, done
	Client uint64
	Launch uint64
	Range  Range
	At     time.Time
	Detail string
}

// Daemon is the cross-process scheduler behind `slatec serve`.
type Daemon struct {
	cfg   Config
	ln    *net.UnixListener
	pol   *Policy
	mps   MPSState
	start time.Time
	cmds  atomic.Uint64

	launches sync.Map // task name -> *launch

	mu         sync.Mutex
	sched      *rt.Scheduler
	sms        int
	uuid       string
	conns      map[*conn]struct{}
	nextClient uint64
	resizes    []ResizeRecord
	closing    bool
	wg         sync.WaitGroup
}

type conn struct {
	d      *Daemon
	nc     *net.UnixConn
	out    chan []byte // nil entry: close after the frames before it
	closed chan struct{}
	once   sync.Once

	// guarded by d.mu
	id       uint64
	pid      int
	name     string
	device   int
	stuck    bool
	launches map[uint64]*launch
}

type launch struct {
	c      *conn
	id     uint64
	task   string
	kernel string
	info   KernelInfo
	blocks uint64
	done   chan struct{}
	once   sync.Once
	acks   chan *Msg

	// guarded by d.mu
	state   string
	rng     Range
	since   time.Time
	stuck   bool
	lastCmd uint64
	lastAt  time.Time
	lastTo  Range
	lastFr  Range
}

const resizeHistory = 64

// New listens on the socket and prepares the daemon; Serve runs it.
func New(cfg Config) (*Daemon, error) {
	if cfg.Socket == "" {
		cfg.Socket = DefaultSocket()
	}
	if cfg.ResizeTimeout <= 0 {
		cfg.ResizeTimeout = 100 * time.Millisecond
	}
	if cfg.MaxCoRun <= 0 {
		cfg.MaxCoRun = 2
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = 256
	}
	if cfg.MaxLaunches <= 0 {
		cfg.MaxLaunches = 1024
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	pol, err := NewPolicy(cfg.Profiles, !cfg.UnknownSolo)
	if err != nil {
		return nil, err
	}
	if pol.Plan != nil {
		for _, ph := range pol.Plan.Phases {
			cfg.MaxCoRun = max(cfg.MaxCoRun, len(ph.Kernels))
		}
	}
	d := &Daemon{cfg: cfg, pol: pol, conns: map[*conn]struct{}{}, start: cfg.Clock()}
	pol.lookup = d.info
	if cfg.MPS != nil {
		d.mps = *cfg.MPS
	} else {
		d.mps = CheckMPS()
	}
	if cfg.SMs == 0 && cfg.Profiles != nil {
		cfg.SMs = cfg.Profiles.Device.SMs
		d.cfg.SMs = cfg.SMs
	}
	if cfg.SMs > 0 {
		if err := d.bind(cfg.SMs); err != nil {
			return nil, err
		}
	}
	ln, err := Listen(cfg.Socket)
	if err != nil {
		if d.sched != nil {
			d.sched.Close(context.Background())
		}
		return nil, err
	}
	d.ln = ln
	return d, nil
}

// MPS returns what the daemon found of MPS at start.
func (d *Daemon) MPS() MPSState { return d.mps }

// Socket returns the socket path.
func (d *Daemon) Socket() string { return d.cfg.Socket }

// PolicyName describes the policy in use.
func (d *Daemon) PolicyName() string { return d.pol.Name() }

// bind creates the scheduler for a GPU of sms SMs. Callers hold d.mu or
// run before Serve.
func (d *Daemon) bind(sms int) error {
	s, err := rt.NewScheduler(executor{d, sms}, rt.SchedulerOptions{
		Policy:        d.pol,
		MaxCoRun:      d.cfg.MaxCoRun,
		ResizeTimeout: d.cfg.ResizeTimeout,
		OnEvent:       d.schedEvent,
	})
	if err != nil {
		return err
	}
	d.sched, d.sms = s, sms
	return nil
}

// info returns a launch's kernel information and whether it has ended
// (false, false: unknown).
func (d *Daemon) info(task string) (ki KernelInfo, ended, ok bool) {
	v, ok := d.launches.Load(task)
	if !ok {
		return KernelInfo{}, true, false
	}
	l := v.(*launch)
	select {
	case <-l.done:
		ended = true
	default:
	}
	return l.info, ended, true
}

func (d *Daemon) emit(ev Event) {
	if ev.At.IsZero() {
		ev.At = d.cfg.Clock()
	}
	if d.cfg.OnEvent != nil {
		d.cfg.OnEvent(ev)
	}
}

// Serve accepts connections until Close or Kill.
func (d *Daemon) Serve() error {
	for {
		nc, err := d.ln.AcceptUnix()
		if err != nil {
			d.mu.Lock()
			closing := d.closing
			d.mu.Unlock()
			if closing || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if uid, ok := peerUID(nc); ok && uid != os.Getuid() {
			d.cfg.Logf("rejected a connection from uid %d", uid)
			nc.Close()
			continue
		}
		c := &conn{d: d, nc: nc, out: make(chan []byte, 256), closed: make(chan struct{}), launches: map[uint64]*launch{}}
		d.mu.Lock()
		if d.closing {
			d.mu.Unlock()
			nc.Close()
			return nil
		}
		full := len(d.conns) >= d.cfg.MaxClients
		if !full {
			d.conns[c] = struct{}{}
			d.wg.Add(2)
		}
		d.mu.Unlock()
		if full {
			d.cfg.Logf("rejected a connection: %d connections already", d.cfg.MaxClients)
			if b, err := Encode(&Msg{Type: TError, Code: ErrTooMany, Err: "too many connections"}); err == nil {
				nc.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
				nc.Write(b)
			}
			nc.Close()
			continue
		}
		go c.writer()
		go c.reader()
	}
}

// Close shuts down gracefully: no new connections, the socket removed,
// every client told (shutdown) and disconnected, the scheduler stopped.
func (d *Daemon) Close() error { return d.stop(true) }

// Kill stops the daemon as if it had been killed: connections cut without
// a shutdown message. For tests.
func (d *Daemon) Kill() error { return d.stop(false) }

func (d *Daemon) stop(graceful bool) error {
	d.mu.Lock()
	if d.closing {
		d.mu.Unlock()
		return nil
	}
	d.closing = true
	conns := make([]*conn, 0, len(d.conns))
	for c := range d.conns {
		conns = append(conns, c)
	}
	sched := d.sched
	d.mu.Unlock()
	err := d.ln.Close() // unlinks the socket
	for _, c := range conns {
		if graceful {
			c.send(&Msg{Type: TShutdown, Reason: "daemon stopping"})
			c.closeAfterFlush()
		} else {
			c.close()
		}
	}
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		for _, c := range conns {
			c.close()
		}
		<-done
	}
	if sched != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if e := sched.Close(ctx); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// Status returns a snapshot of the daemon's state.
func (d *Daemon) Status() *Status {
	now := d.cfg.Clock()
	d.mu.Lock()
	defer d.mu.Unlock()
	s := &Status{
		Daemon: d.cfg.Version, PID: os.Getpid(), Socket: d.cfg.Socket, SMs: d.sms,
		Policy: d.pol.Name(), MPS: d.mps, ResizeTimeoutMs: float64(d.cfg.ResizeTimeout) / 1e6,
		UptimeS: now.Sub(d.start).Seconds(), Clients: []ClientStatus{},
		Resizes: append([]ResizeRecord{}, d.resizes...),
	}
	for c := range d.conns {
		if c.id == 0 {
			continue
		}
		cs := ClientStatus{Client: c.id, PID: c.pid, Name: c.name, Device: c.device, Stuck: c.stuck, Launches: []LaunchStatus{}}
		for _, l := range c.launches {
			ls := LaunchStatus{Launch: l.id, Kernel: l.kernel, Class: string(l.info.Class), Phase: l.info.Phase,
				State: l.state, Stuck: l.stuck, AgeMs: float64(now.Sub(l.since)) / 1e6, Blocks: l.blocks}
			if l.state == "running" {
				r := l.rng
				ls.Range = &r
				cs.SMs += r.Count()
				s.Running++
			} else {
				cs.Queued++
				s.Queued++
			}
			cs.Launches = append(cs.Launches, ls)
		}
		sort.Slice(cs.Launches, func(i, j int) bool { return cs.Launches[i].Launch < cs.Launches[j].Launch })
		s.Clients = append(s.Clients, cs)
	}
	sort.Slice(s.Clients, func(i, j int) bool { return s.Clients[i].Client < s.Clients[j].Client })
	return s
}

func (d *Daemon) record(r ResizeRecord) {
	d.resizes = append(d.resizes, r)
	if len(d.resizes) > resizeHistory {
		d.resizes = append(d.resizes[:0:0], d.resizes[len(d.resizes)-resizeHistory:]...)
	}
}

// schedEvent runs on the scheduler's goroutine.
func (d *Daemon) schedEvent(ev rt.Event) {
	if ev.Kind == rt.EventFinished {
		d.launches.Delete(ev.Task)
	}
	if ev.Kind == rt.EventResizeFailed {
		d.cfg.Logf("resize of %s to %d:%d failed: %v", ev.Task, ev.Range.Low, ev.Range.High, ev.Err)
	}
}

// Connections ------------------------------------------------------------

func (c *conn) close() {
	c.once.Do(func() {
		c.nc.Close()
		close(c.closed)
	})
}

// closeAfterFlush closes the connection once the frames queued before
// now are written.
func (c *conn) closeAfterFlush() {
	select {
	case c.out <- nil:
	default:
		c.close()
	}
}

// send queues m; a client that does not read (256 frames behind) is
// disconnected. Safe from any goroutine, with or without d.mu.
func (c *conn) send(m *Msg) {
	b, err := Encode(m)
	if err != nil {
		c.d.cfg.Logf("encoding %s: %v", m.Type, err)
		return
	}
	select {
	case <-c.closed:
	case c.out <- b:
	default:
		c.d.cfg.Logf("client %d is not reading its messages; disconnecting it", c.id)
		c.close()
	}
}

func (c *conn) writer() {
	defer c.d.wg.Done()
	for {
		select {
		case <-c.closed:
			return
		case b := <-c.out:
			if b == nil {
				c.close()
				return
			}
			c.nc.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.nc.Write(b); err != nil {
				c.close()
				return
			}
		}
	}
}

func (c *conn) reader() {
	d := c.d
	defer d.wg.Done()
	defer c.leave()
	buf := make([]byte, 4096)
	for {
		body, err := ReadFrame(c.nc, buf)
		if err != nil {
			if pe, ok := AsProtoError(err); ok {
				c.reject(0, pe)
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				select {
				case <-c.closed:
				default:
					d.cfg.Logf("client %d: read: %v", c.id, err)
				}
			}
			return
		}
		if cap(body) <= 4096 {
			buf = body[:0]
		}
		m, err := Decode(body)
		if err == nil {
			err = ValidateRequest(m)
		}
		if err != nil {
			var re uint64
			if m != nil {
				re = m.ID
			}
			pe, _ := AsProtoError(err)
			c.reject(re, pe)
			if FatalCode(pe.Code) {
				return
			}
			continue
		}
		if !c.handle(m) {
			return
		}
	}
}

// reject answers a bad request with an error and logs it; for fatal
// codes the caller then ends the connection (the error is flushed first).
func (c *conn) reject(re uint64, pe *ProtoError) {
	c.d.cfg.Logf("client %d: rejected: %s", c.id, pe)
	c.send(&Msg{Type: TError, Re: re, Code: pe.Code, Err: truncate(pe.Msg, MaxMsg)})
	if FatalCode(pe.Code) {
		c.closeAfterFlush()
		c.d.emit(Event{Kind: "reject", Client: c.id, Detail: pe.Error()})
	}
}

// leave runs when the reader ends: the connection is closed and every
// launch of the client ends, so the scheduler gives its SMs to the others.
func (c *conn) leave() {
	c.closeAfterFlush()
	d := c.d
	d.mu.Lock()
	delete(d.conns, c)
	ls := make([]*launch, 0, len(c.launches))
	for _, l := range c.launches {
		ls = append(ls, l)
	}
	c.launches = map[uint64]*launch{}
	id := c.id
	d.mu.Unlock()
	for _, l := range ls {
		l.finish()
	}
	if id != 0 {
		d.cfg.Logf("client %d left (%d launches ended)", id, len(ls))
		d.emit(Event{Kind: "leave", Client: id})
	}
}

// handle serves one valid request; false ends the connection.
func (c *conn) handle(m *Msg) bool {
	d := c.d
	if m.Type != THello && m.Type != TStatus {
		d.mu.Lock()
		reg := c.id != 0
		d.mu.Unlock()
		if !reg {
			c.reject(m.ID, protoErr(ErrNotRegistered, "%s before hello", m.Type))
			return false
		}
	}
	switch m.Type {
	case TStatus:
		c.send(&Msg{Type: TStatus, Re: m.ID, Status: d.Status()})
	case THello:
		return c.hello(m)
	case TLaunch:
		return c.launch(m)
	case TDone:
		d.mu.Lock()
		l := c.launches[m.Launch]
		delete(c.launches, m.Launch)
		d.mu.Unlock()
		if l == nil {
			c.reject(m.ID, protoErr(ErrUnknownLaunch, "done: no launch %d", m.Launch))
			return true
		}
		l.finish()
		c.send(&Msg{Type: TOK, Re: m.ID})
		d.emit(Event{Kind: "done", Client: c.id, Launch: l.id})
	case TResized:
		d.mu.Lock()
		l := c.launches[m.Launch]
		d.mu.Unlock()
		if l == nil {
			// The launch ended (done crossed the resize): nothing to do.
			c.send(&Msg{Type: TOK, Re: m.ID})
			return true
		}
		if !l.ack(m) {
			c.reject(m.ID, protoErr(ErrUnknownCmd, "resized: no resize %d for launch %d", m.Cmd, m.Launch))
			return true
		}
		c.send(&Msg{Type: TOK, Re: m.ID})
	case TBye:
		c.send(&Msg{Type: TOK, Re: m.ID})
		return false
	}
	return true
}

func (c *conn) hello(m *Msg) bool {
	d := c.d
	d.mu.Lock()
	if c.id != 0 {
		d.mu.Unlock()
		c.reject(m.ID, protoErr(ErrRegistered, "hello: already registered as client %d", c.id))
		return true
	}
	if d.closing {
		d.mu.Unlock()
		c.reject(m.ID, protoErr(ErrShuttingDown, "daemon stopping"))
		return false
	}
	if d.sched == nil {
		if m.SMs <= 0 {
			d.mu.Unlock()
			c.reject(m.ID, protoErr(ErrBadField, "hello: sms is required (the daemon does not know the GPU's SM count yet)"))
			return false
		}
		if err := d.bind(m.SMs); err != nil {
			d.mu.Unlock()
			c.reject(m.ID, protoErr(ErrBadField, "hello: %v", err))
			return false
		}
		d.cfg.Logf("serving a GPU of %d SMs (from client pid %d)", m.SMs, m.PID)
	}
	if (m.SMs != 0 && m.SMs != d.sms) || (m.UUID != "" && d.uuid != "" && m.UUID != d.uuid) {
		d.mu.Unlock()
		c.reject(m.ID, protoErr(ErrWrongDevice, "hello: this daemon serves a GPU of %d SMs (uuid %q); yours has %d (uuid %q)", d.sms, d.uuid, m.SMs, m.UUID))
		return false
	}
	if d.uuid == "" {
		d.uuid = m.UUID
	}
	d.nextClient++
	c.id, c.pid, c.name, c.device = d.nextClient, m.PID, m.Name, m.Device
	sms := d.sms
	d.mu.Unlock()
	c.send(&Msg{Type: TWelcome, Re: m.ID, Client: c.id, SMs: sms, Policy: d.pol.Name(), MPS: d.mps.Active, Name: d.cfg.Version})
	d.cfg.Logf("client %d joined: pid %d %q device %d", c.id, m.PID, m.Name, m.Device)
	d.emit(Event{Kind: "join", Client: c.id})
	return true
}

func (c *conn) launch(m *Msg) bool {
	d := c.d
	l := &launch{c: c, id: m.Launch, kernel: m.Kernel, blocks: m.Blocks,
		info: d.pol.Info(m.Kernel, m.Class), done: make(chan struct{}), acks: make(chan *Msg, 4), state: "queued"}
	d.mu.Lock()
	if d.closing {
		d.mu.Unlock()
		c.reject(m.ID, protoErr(ErrShuttingDown, "daemon stopping"))
		return false
	}
	if _, dup := c.launches[m.Launch]; dup {
		d.mu.Unlock()
		c.reject(m.ID, protoErr(ErrDupLaunch, "launch %d is already announced", m.Launch))
		return true
	}
	if len(c.launches) >= d.cfg.MaxLaunches {
		d.mu.Unlock()
		c.reject(m.ID, protoErr(ErrTooMany, "more than %d outstanding launches", d.cfg.MaxLaunches))
		return false
	}
	l.task = fmt.Sprintf("c%d.l%d", c.id, m.Launch)
	l.since = d.cfg.Clock()
	c.launches[m.Launch] = l
	queued := 0
	for cc := range d.conns {
		for _, x := range cc.launches {
			if x.state == "queued" && x != l {
				queued++
			}
		}
	}
	sched := d.sched
	d.mu.Unlock()
	d.launches.Store(l.task, l)
	c.send(&Msg{Type: TAccepted, Re: m.ID, Launch: m.Launch, Queued: queued, Class: string(l.info.Class)})
	if _, err := sched.Submit(&rt.Task{Name: l.task, Weight: float64(l.info.SMs)}); err != nil {
		c.send(&Msg{Type: TShutdown, Reason: err.Error()})
		return false
	}
	return true
}

// Launches as the scheduler sees them -----------------------------------

type executor struct {
	d   *Daemon
	sms int
}

func (x executor) NumSMs() int { return x.sms }

// Start runs on the scheduler's goroutine: it hands the launch its range.
func (x executor) Start(t *rt.Task, r rt.SMRange) (rt.Running, error) {
	d := x.d
	v, ok := d.launches.Load(t.Name)
	if !ok {
		return nil, fmt.Errorf("serve: launch %s is gone", t.Name)
	}
	l := v.(*launch)
	select {
	case <-l.done:
		return nil, rt.ErrJobFinished
	default:
	}
	rng := Range{r.Low, r.High}
	d.mu.Lock()
	l.state, l.rng = "running", rng
	d.mu.Unlock()
	l.c.send(&Msg{Type: TStart, ID: d.cmds.Add(1), Launch: l.id, Range: &rng})
	d.emit(Event{Kind: "start", Client: l.c.id, Launch: l.id, Range: rng})
	return l, nil
}

func (l *launch) finish() {
	l.once.Do(func() { close(l.done) })
}

// Wait implements runtime.Running.
func (l *launch) Wait(ctx context.Context) error {
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ack delivers a resized message; false when it names no resize sent.
func (l *launch) ack(m *Msg) bool {
	d := l.c.d
	d.mu.Lock()
	if m.Cmd != l.lastCmd || l.lastCmd == 0 {
		d.mu.Unlock()
		return false
	}
	late := l.stuck
	if late {
		l.stuck = false
		if m.Range != nil {
			l.rng = *m.Range
		}
		stuck := false
		for _, x := range l.c.launches {
			stuck = stuck || x.stuck
		}
		l.c.stuck = stuck
		d.record(ResizeRecord{At: d.cfg.Clock(), Client: l.c.id, Name: l.c.name, Launch: l.id, Kernel: l.kernel,
			From: l.lastFr, To: l.lastTo, LatencyUs: float64(d.cfg.Clock().Sub(l.lastAt)) / 1e3, Outcome: "late"})
	}
	d.mu.Unlock()
	if late {
		return true
	}
	select {
	case l.acks <- m:
	default: // a duplicate ack; the first one counts
	}
	return true
}

// Resize implements runtime.Running: it sends the resize command and waits
// for the client's acknowledgement, the launch's end, or the timeout (the
// scheduler's ctx), after which the client is marked stuck and the
// scheduler goes on assigning the others what is free.
func (l *launch) Resize(ctx context.Context, r rt.SMRange) error {
	select {
	case <-l.done:
		return rt.ErrJobFinished
	default:
	}
	d := l.c.d
	to := Range{r.Low, r.High}
	cmd := d.cmds.Add(1)
	d.mu.Lock()
	from := l.rng
	t0 := d.cfg.Clock()
	l.lastCmd, l.lastAt, l.lastFr, l.lastTo = cmd, t0, from, to
	d.mu.Unlock()
	l.c.send(&Msg{Type: TResize, ID: cmd, Launch: l.id, Range: &to})
	rec := func(outcome string) {
		d.mu.Lock()
		d.record(ResizeRecord{At: t0, Client: l.c.id, Name: l.c.name, Launch: l.id, Kernel: l.kernel,
			From: from, To: to, LatencyUs: float64(d.cfg.Clock().Sub(t0)) / 1e3, Outcome: outcome})
		switch outcome {
		case "ok":
			l.rng, l.stuck = to, false
			stuck := false
			for _, x := range l.c.launches {
				stuck = stuck || x.stuck
			}
			l.c.stuck = stuck
		case "timeout":
			l.rng, l.stuck, l.c.stuck = to, true, true
		}
		d.mu.Unlock()
	}
	for {
		select {
		case a := <-l.acks:
			if a.Cmd != cmd {
				continue // an ack of an older command
			}
			if a.Finished {
				rec("finished")
				return rt.ErrJobFinished
			}
			rec("ok")
			d.emit(Event{Kind: "resize", Client: l.c.id, Launch: l.id, Range: to})
			return nil
		case <-l.done:
			rec("ended")
			return rt.ErrJobFinished
		case <-ctx.Done():
			rec("timeout")
			d.cfg.Logf("client %d (%s) did not acknowledge resize %d of launch %d to %s in %v: marked stuck", l.c.id, l.c.name, cmd, l.id, to, d.cfg.ResizeTimeout)
			d.emit(Event{Kind: "stuck", Client: l.c.id, Launch: l.id, Range: to})
			return fmt.Errorf("serve: client %d stuck: %w", l.c.id, ctx.Err())
		}
	}
}
