package serve

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slatec/slatec/plan"
)

// Config configures a Daemon. Zero values take defaults.
type Config struct {
	Socket        string           // default DefaultSocket()
	Profiles      *plan.ProfileSet // optional: plans of the processes' kernels, whose SM counts weight the grants
	SMs           int              // the GPU's SMs; 0: the profiles', else the first client's hello
	ResizeTimeout time.Duration    // how long a client may take to ack a grant change (default 100 ms)
	MaxClients    int              // connections (default 256)
	Version       string           // reported in welcome and status
	Logf          func(string, ...any)
	Clock         func() time.Time // default time.Now
	MPS           *MPSState        // default CheckMPS()
	OnEvent       func(Event)      // test hook; called without locks held, must not block
	// Unplanned is what processes get when no plan co-runs their kernels
	// (no --profiles, or kernels the plan does not put in one phase):
	// AutoUnplanned (the default), Overlap or EqualShares.
	Unplanned Unplanned
	// IdleAfter is how long a process may go without launching (no load
	// note with new launches, none running on a range) before its share
	// goes to the others (default 10 ms; negative: never). Processes keep
	// their registration between phases of GPU work (input, checks,
	// output on the host); a share kept through them starves the others.
	IdleAfter time.Duration
	// TraceNotes logs every load note with the client's busy reading and
	// whether the set is split (diagnostics; a line a note).
	TraceNotes bool
	// Balanced plans each set of kernels for its slowest kernel's speed
	// instead of the sum of speeds (STP): see plan.SteadyOptions.Balanced.
	Balanced bool
	// SplitHold is how long a split stays made, whatever the busy readings,
	// while the same processes stay active with the same kernels (default
	// 100 ms; negative: no hold). A process that goes idle or leaves, or
	// joins, ends it at once.
	SplitHold time.Duration
	// MinShare is the least share of the SMs a planned split gives each
	// process (0: the plan's counts as they are; at most 0.5; `slatec
	// serve` defaults to 0.1). The plan sizes shares by solo profiles, and
	// a launch on a few SMs beside busy neighbours runs slower than its
	// profile says (under MPS its whole wave's surplus blocks pass through
	// its filled SMs): a latency-bound kernel given 4 of 132 SMs made the
	// three-program set 13% slower than at 13 (bench/RESULTS.md, nineteenth
	// session).
	MinShare float64
}

// DefaultSplitHold is Config.SplitHold's default. Processes split after
// running natively together have launches queued ahead from before the
// split (a triad program's 80, an FMA program's 40 on the H100), which run
// on the whole GPU, in the order MPS dispatches them, for tens of
// milliseconds after it; a busy reading taken then measures that wait,
// not the process's demand. Undone on it (41 ms after the split), the set
// went back to overlap for 2 ms, long enough for the next burst of 80
// launches to go native again, and no launch of the triad program ever
// ran on its share (bench/RESULTS.md, fifteenth session).
const DefaultSplitHold = 100 * time.Millisecond

// DefaultIdleAfter is Config.IdleAfter's default: five of the C++
// client's 2 ms load-note periods while it launches.
const DefaultIdleAfter = 10 * time.Millisecond

// Unplanned is the grant policy for processes whose kernels no plan
// co-runs.
type Unplanned string

const (
	// AutoUnplanned (the default) gives equal shares under MPS unless the
	// profiles know every kernel of the set and predict that no split pays
	// (then, and without MPS, Overlap). Under MPS a grant binds as an SM
	// count (each launch numbers its SMs itself: templates/serve_client.h,
	// serve_ranges), and so bound, equal shares beat overlap on the H100 by
	// 1.23x (triad + FMA), 1.03x (latency-bound + triad) and 1.09x (three
	// programs), and lost 5% on two compute-bound kernels that the profiles
	// say not to split (bench/RESULTS.md, eighteenth session).
	AutoUnplanned Unplanned = "auto"
	// Overlap grants every process the whole GPU with native launches, as
	// if it were alone: under MPS their kernels overlap as the hardware
	// schedules them. (Equal shares lost to it on an H200 on six of eight
	// pairs, 2026-11-26, when grants under MPS still bound as %smid places,
	// which crowd the processes onto the same SMs.)
	Overlap Unplanned = "overlap"
	// EqualShares splits the SMs equally between the processes.
	EqualShares Unplanned = "equal"
)

// Event is a daemon happening, for logs and tests.
type Event struct {
	Kind   string // join, leave, reject, grant, ack, late, stuck, load
	Client uint64
	Epoch  uint64
	Range  Range
	At     time.Time
	Detail string
}

// Daemon is the cross-process scheduler behind `slatec serve`.
type Daemon struct {
	cfg    Config
	ln     *net.UnixListener
	pol    *Policy
	mps    MPSState
	start  time.Time
	epochs atomic.Uint64

	mu         sync.Mutex
	sms        int
	uuid       string
	conns      map[*conn]struct{}
	nextClient uint64
	resizes    []ResizeRecord
	closing    bool
	stopIdle   chan struct{} // closed by stop: ends watch
	split      bool          // the active clients are split (regrantLocked's last decision)
	splitAt    time.Time     // when the split was made (SplitHold)
	splitSet   string        // the active clients and kernels it was made for
	wg         sync.WaitGroup
	// timers counts ack timers running their callback: stop waits for
	// them, so that nothing is logged or emitted after Close returns.
	timers sync.WaitGroup
}

type conn struct {
	d      *Daemon
	nc     *net.UnixConn
	out    chan []byte // nil entry: close after the frames before it
	closed chan struct{}
	once   sync.Once
	// wmu serialises writes to nc; queued counts the frames in out and the
	// one the writer is writing, so that send may write directly only when
	// nothing is ahead of its frame.
	wmu    sync.Mutex
	queued atomic.Int32

	// guarded by d.mu
	id       uint64
	pid      int
	name     string
	device   int
	stuck    bool
	grant    Grant  // the current grant (zero before welcome)
	owes     owed   // the grant awaiting its ack (epoch 0: none)
	late     owed   // a grant whose ack timed out (a late ack clears stuck)
	launches uint64 // from load notes
	inflight int
	pending  bool // its native launches have not all ended (load notes)
	held     bool // its native launches keep their budget queued ahead (load notes)
	kernel   string
	class    string
	active   time.Time // hello, or the last load note with new launches or one running
	idle     bool      // its share went to the others (regrantLocked)
	// planKernel is the kernel the process is planned with (load);
	// kernelSince when its latest kernel became the latest.
	planKernel  string
	kernelSince time.Time
	// How busy it keeps the GPU (busy.go), from its load notes.
	meter busyMeter
}

// kernelSettle is how long a process's latest kernel must stay its latest
// before the daemon plans with it instead of the one before.
const kernelSettle = 10 * time.Millisecond

// MinBusy is how busy every process of a set must keep the GPU on its
// grant (the share of recent time its announced launches, at the
// profile's time a launch there, kept the GPU working: busy.go) for the daemon
// to split the set; once split, it stays split down to half that. A
// process that launches now and then (its host does most of the work)
// would hold its share idle most of the time: on an H100 a tiled SGEMM
// program busy about a quarter of the time, given 118 SMs beside a triad
// on 14, made the pair 11% slower than MPS, which overlaps the two at no
// cost.
const MinBusy = 0.5

const resizeHistory = 64

// New listens on the socket and prepares the daemon; Serve runs it.
func New(cfg Config) (*Daemon, error) {
	if cfg.Socket == "" {
		cfg.Socket = DefaultSocket()
	}
	if cfg.ResizeTimeout <= 0 {
		cfg.ResizeTimeout = 100 * time.Millisecond
	}
	switch cfg.Unplanned {
	case "":
		cfg.Unplanned = AutoUnplanned
	case AutoUnplanned, Overlap, EqualShares:
	default:
		return nil, fmt.Errorf("serve: unplanned processes: %q is none of %q, %q, %q", cfg.Unplanned, AutoUnplanned, Overlap, EqualShares)
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = 256
	}
	if cfg.IdleAfter == 0 {
		cfg.IdleAfter = DefaultIdleAfter
	}
	if cfg.SplitHold == 0 {
		cfg.SplitHold = DefaultSplitHold
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
	pol, err := NewPolicy(cfg.Profiles)
	if err != nil {
		return nil, err
	}
	pol.Balanced = cfg.Balanced
	d := &Daemon{cfg: cfg, pol: pol, conns: map[*conn]struct{}{}, start: cfg.Clock(), stopIdle: make(chan struct{})}
	if cfg.MPS != nil {
		d.mps = *cfg.MPS
	} else {
		d.mps = CheckMPS()
	}
	if cfg.SMs == 0 && cfg.Profiles != nil {
		cfg.SMs = cfg.Profiles.Device.SMs
		d.cfg.SMs = cfg.SMs
	}
	if cfg.SMs > plan.MaxSMs {
		return nil, fmt.Errorf("serve: %d SMs (at most %d)", cfg.SMs, plan.MaxSMs)
	}
	d.sms = max(cfg.SMs, 0)
	ln, err := Listen(cfg.Socket)
	if err != nil {
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
func (d *Daemon) PolicyName() string { return d.pol.Name(d.cfg.Unplanned) }

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
	go d.watch(d.stopIdle)
	go d.pol.Prepare(3, d.stopIdle)
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
		c := &conn{d: d, nc: nc, out: make(chan []byte, 256), closed: make(chan struct{})}
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
	close(d.stopIdle)
	conns := make([]*conn, 0, len(d.conns))
	for c := range d.conns {
		conns = append(conns, c)
	}
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
	d.timers.Wait()
	return err
}

// Status returns a snapshot of the daemon's state.
func (d *Daemon) Status() *Status {
	now := d.cfg.Clock()
	d.mu.Lock()
	defer d.mu.Unlock()
	s := &Status{
		Daemon: d.cfg.Version, PID: os.Getpid(), Socket: d.cfg.Socket, SMs: d.sms,
		Policy: d.PolicyName(), MPS: d.mps, ResizeTimeoutMs: float64(d.cfg.ResizeTimeout) / 1e6,
		UptimeS: now.Sub(d.start).Seconds(), Clients: []ClientStatus{},
		Resizes: append([]ResizeRecord{}, d.resizes...),
	}
	for c := range d.conns {
		if c.id == 0 {
			continue
		}
		g := c.grant
		s.Clients = append(s.Clients, ClientStatus{Client: c.id, PID: c.pid, Name: c.name, Device: c.device, Stuck: c.stuck,
			SMs: g.Range.Count(), Range: g.Range, Epoch: g.Epoch, Alone: g.Alone, Acked: c.owes.epoch == 0 && c.late.epoch == 0,
			Launches: c.launches, InFlight: c.inflight, NativePending: c.pending, Held: c.held, Kernel: c.kernel, Class: c.class, Idle: c.idle})
		if b, ok := d.busyLocked(c); ok {
			s.Clients[len(s.Clients)-1].Busy = &b
		}
		s.Running += c.inflight
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
	c.queued.Add(1) // (no direct write may pass it)
	select {
	case c.out <- nil:
	default:
		c.queued.Add(-1)
		c.close()
	}
}

// send writes m at once when no frame is ahead of it and the socket takes
// it without waiting (a frame handed to the writer goroutine waited for it
// to be scheduled: a grant's delivery to a client took 93-269 us on the
// H100 host), else queues it; a client that does not read (256 frames
// behind) is disconnected. Safe from any goroutine, with or without d.mu.
func (c *conn) send(m *Msg) {
	b, err := Encode(m)
	if err != nil {
		c.d.cfg.Logf("encoding %s: %v", m.Type, err)
		return
	}
	c.sendFrame(b)
}

// sendFrame is send of an encoded frame; it returns when a direct write
// began (CLOCK_MONOTONIC ns: the frame was in the kernel's hands from
// then), 0 when the frame was queued or dropped.
func (c *conn) sendFrame(b []byte) int64 {
	if at, ok := c.writeNow(b); ok {
		return at
	}
	c.queued.Add(1)
	select {
	case <-c.closed:
		c.queued.Add(-1)
	case c.out <- b:
	default:
		c.queued.Add(-1)
		c.d.cfg.Logf("client %d is not reading its messages; disconnecting it", c.id)
		c.close()
	}
	return 0
}

// directWriteWait bounds a direct write: a socket that does not take a
// frame within it gets the frame through the queue (nothing written yet)
// or loses the client (a frame written in part).
const directWriteWait = time.Millisecond

// writeNow writes b directly when the writer has nothing queued or in
// hand, and says when the write began (0: dropped, the connection closed);
// false: queue it.
func (c *conn) writeNow(b []byte) (int64, bool) {
	if !c.wmu.TryLock() {
		return 0, false
	}
	defer c.wmu.Unlock()
	if c.queued.Load() != 0 {
		return 0, false
	}
	select {
	case <-c.closed:
		return 0, true // dropped, as a queued frame would be
	default:
	}
	c.nc.SetWriteDeadline(time.Now().Add(directWriteWait))
	at := monoNanos()
	n, err := c.nc.Write(b)
	switch {
	case err == nil:
		return at, true
	case n == 0 && errors.Is(err, os.ErrDeadlineExceeded):
		return 0, false
	default:
		c.close()
		return 0, true
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
				c.queued.Add(-1)
				c.close()
				return
			}
			c.wmu.Lock()
			c.nc.SetWriteDeadline(time.Now().Add(time.Second))
			_, err := c.nc.Write(b)
			c.queued.Add(-1)
			c.wmu.Unlock()
			if err != nil {
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

// leave runs when the reader ends: the connection is closed, and the
// client's SMs go to the others (new grants).
func (c *conn) leave() {
	c.closeAfterFlush()
	d := c.d
	d.mu.Lock()
	delete(d.conns, c)
	id := c.id
	var gs grants
	if id != 0 {
		gs = d.regrantLocked(nil)
	}
	d.mu.Unlock()
	d.sendGrants(gs)
	if id != 0 {
		d.cfg.Logf("client %d left", id)
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
	case TLoad:
		c.load(m)
	case TAck:
		c.ack(m)
	case TBye:
		c.send(&Msg{Type: TOK, Re: m.ID})
		return false
	}
	return true
}

func (c *conn) hello(m *Msg) bool {
	d := c.d
	d.preplan(c, m.Kernel)
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
	if d.sms == 0 {
		if m.SMs <= 0 {
			d.mu.Unlock()
			c.reject(m.ID, protoErr(ErrBadField, "hello: sms is required (the daemon does not know the GPU's SM count yet)"))
			return false
		}
		d.sms = m.SMs
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
	c.active = d.cfg.Clock() // it registers at its first launch
	c.meter.advance(c.active)
	if m.Kernel != "" {
		// That launch's kernel: the grants made at its join plan with it
		// (a set the profiles know no split pays for overlaps at once,
		// instead of equal shares until the first load note).
		c.kernel, c.class, c.kernelSince, c.planKernel = m.Kernel, m.Class, c.active, m.Kernel
	}
	sms := d.sms
	// The others shrink first (their grants are pushed before the welcome
	// leaves), and the newcomer's first grant rides on its welcome: it needs
	// no ack, it has nothing running.
	gs := d.regrantLocked(c)
	g := c.grant
	// Its idle time counts from its grant (a plan made above took time).
	c.active = d.cfg.Clock()
	d.mu.Unlock()
	d.sendGrants(gs)
	c.send(&Msg{Type: TWelcome, Re: m.ID, Client: c.id, SMs: sms, Policy: d.PolicyName(), MPS: d.mps.Active, Name: d.cfg.Version,
		ID: g.Epoch, Range: &g.Range, Alone: g.Alone, Clients: g.Clients})
	d.cfg.Logf("client %d joined: pid %d %q device %d; grant %s%s", c.id, m.PID, m.Name, m.Device, g.Range, aloneText(g.Alone))
	d.emit(Event{Kind: "join", Client: c.id, Epoch: g.Epoch, Range: g.Range})
	return true
}

// preplan plans, before d.mu is taken, the set of kernels the active
// processes form with client c planned with kernel k (its join, or a new
// kernel of it): a set that Policy.Prepare has not reached yet is planned
// here, not under d.mu, where a set of three held every grant and the
// newcomer's welcome 10 ms (H100 host; the newcomer then looked idle the
// moment it joined, and the others moved twice within 0.2 ms).
func (d *Daemon) preplan(c *conn, k string) {
	if k == "" {
		return
	}
	kernels := []string{k}
	d.mu.Lock()
	for o := range d.conns {
		if o != c && o.id != 0 && !o.idle && o.planKernel != "" {
			kernels = append(kernels, o.planKernel)
		}
	}
	d.mu.Unlock()
	if len(kernels) >= 2 {
		d.pol.Planned(kernels)
	}
}

// deliverUs is a grant's way from its push (pushed, CLOCK_MONOTONIC ns)
// to the client's receipt (recv, the same clock), in microseconds; 0 when
// either is unknown or they disagree (another host's clock).
func deliverUs(pushed int64, recv uint64) float64 {
	if pushed <= 0 || recv == 0 || recv < uint64(pushed) || recv-uint64(pushed) > uint64(time.Minute) {
		return 0
	}
	return float64(recv-uint64(pushed)) / 1e3
}

// owed is a pushed grant a client owes an ack for: its epoch (0: none),
// when it was pushed (the daemon's clock, and CLOCK_MONOTONIC ns: monoNanos,
// 0 unknown), when its frame's write on the socket began (0: queued, or not
// yet), and the range before it.
type owed struct {
	epoch       uint64
	at          time.Time
	mono, wrote int64
	from        Range
}

// times fills the record of the ack m of o, taken at now: the range
// before, the push to the ack, and the delivery's parts.
func (o owed) times(rec *ResizeRecord, now time.Time, m *Msg) {
	rec.From, rec.LatencyUs = o.from, float64(now.Sub(o.at))/1e3
	rec.DeliverUs, rec.WokeUs = deliverUs(o.mono, m.RecvNs), deliverUs(o.mono, m.WokeNs)
	rec.WrittenUs = o.writtenUs()
}

// writtenUs is the daemon's own part of o's delivery: the push to its
// frame's write (0 when it went through the writer's queue: not stamped).
func (o owed) writtenUs() float64 { return deliverUs(o.mono, uint64(max(o.wrote, 0))) }

func aloneText(native bool) string {
	if native {
		return " (native launches on the whole GPU)"
	}
	return ""
}

// load takes a client's batched launch accounting; a new kernel re-plans
// the grants (its weight or its phase may differ: regrantLocked pushes only
// the grants that change).
func (c *conn) load(m *Msg) {
	d := c.d
	if m.Kernel != "" && m.Kernel != c.kernel { // (c.kernel is written only here, on this goroutine)
		d.preplan(c, m.Kernel)
	}
	d.mu.Lock()
	now := d.cfg.Clock()
	woke := false
	if m.Launches != c.launches || m.InFlight > 0 || m.NativePending {
		c.active = now
		woke, c.idle = c.idle, false
	}
	if m.Kernel != "" && (m.Kernel != c.kernel || m.Class != c.class) {
		c.kernel, c.class, c.kernelSince = m.Kernel, m.Class, now
	}
	var launched uint64
	if m.Launches > c.launches {
		launched = m.Launches - c.launches
	}
	if c.inflight > 0 || m.Held {
		c.meter.hold(now) // since its last note, a served launch of it was running, or it was held
	}
	launchMs, _ := d.pol.LaunchMs(c.kernel, d.grantSMsLocked(c))
	c.meter.add(now, launched, launchMs)
	c.launches, c.inflight, c.pending, c.held = m.Launches, m.InFlight, m.NativePending, m.Held
	// The kernel the process is planned with: its first, then one that has
	// been its latest for kernelSettle (a program that alternates kernels
	// launch by launch must not re-split the GPU at every note).
	replan := false
	if c.kernel != c.planKernel && (c.planKernel == "" || now.Sub(c.kernelSince) >= kernelSettle) {
		c.planKernel, replan = c.kernel, true
	}
	var gs grants
	if replan || woke {
		gs = d.regrantLocked(nil)
	} else if d.splitLocked(d.activeLocked()) != d.split {
		gs = d.regrantLocked(nil) // a process became busy enough, or no longer is
	}
	if d.cfg.TraceNotes {
		busy := "?"
		if b, ok := d.busyLocked(c); ok {
			busy = fmt.Sprintf("%.2f", b)
		}
		d.cfg.Logf("note client %d: launches %d (+%d) inflight %d native_pending %v held %v kernel %s busy %s; split %v",
			c.id, m.Launches, launched, m.InFlight, m.NativePending, m.Held, c.kernel, busy, d.split)
	}
	d.mu.Unlock()
	d.sendGrants(gs)
	d.emit(Event{Kind: "load", Client: c.id})
}

// ack takes a client's acknowledgement of a grant: its served launches run
// within the granted range (and, after an "alone" grant ended, its native
// launches have ended). Acks of superseded grants are ignored.
func (c *conn) ack(m *Msg) {
	d := c.d
	now := d.cfg.Clock()
	d.mu.Lock()
	kind := ""
	rec := ResizeRecord{At: now, Client: c.id, Name: c.name, Epoch: m.Epoch, To: *m.Range, DrainUs: m.DrainUs, NativeUs: m.NativeUs, Moved: m.Moved, TaskUs: m.TaskUs, Kernel: c.kernel}
	switch m.Epoch {
	case c.owes.epoch:
		c.owes.times(&rec, now, m)
		c.owes, c.late, c.stuck = owed{}, owed{}, false // caught up with the newest grant
		c.active = now                                  // its launches (native ones included) drained just now
		rec.Outcome, kind = "ok", "ack"
	case c.late.epoch:
		c.late.times(&rec, now, m)
		c.late, c.stuck = owed{}, false
		rec.Outcome, kind = "late", "late"
	}
	if kind != "" {
		d.record(rec)
	}
	d.mu.Unlock()
	if kind != "" {
		d.emit(Event{Kind: kind, Client: c.id, Epoch: m.Epoch, Range: *m.Range})
	}
}

// Grants -----------------------------------------------------------------

type push struct {
	c *conn
	g Grant
}

// grants are the changed grants of a regrant, to push, and what to log of
// the split (nil: nothing), written after the pushes: a grant's delivery
// waited 25-69 us for the log line (H100 host).
type grants struct {
	ps  []push
	log *grantsLog
}

// regrantLocked splits the SMs among the registered clients (d.mu held)
// and returns the grants that changed, each with a new epoch; a client
// other than fresh (the one registering, whose grant rides on welcome)
// owes an ack for it within the resize timeout.
func (d *Daemon) regrantLocked(fresh *conn) (out grants) {
	cs := make([]*conn, 0, len(d.conns))
	for c := range d.conns {
		if c.id != 0 {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 || d.sms <= 0 {
		return grants{}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].id < cs[j].id })
	now, mono := d.cfg.Clock(), monoNanos()
	// The SMs are split among the active processes; an idle one launches
	// natively on the whole GPU when it starts again (overlapping, under
	// MPS, until its load note makes it active and the split is redone).
	var active []*conn
	for _, c := range cs {
		if !c.idle {
			active = append(active, c)
		}
	}
	kernels := make([]string, len(active))
	for i, c := range active {
		kernels[i] = c.planKernel
	}
	planned := d.splitLocked(active)
	if key := splitSetKey(active); planned && (!d.split || key != d.splitSet) {
		d.splitAt, d.splitSet = now, key
	}
	d.split = planned
	// Contiguous ranges, the smallest share first (lowest %smid; ties in
	// registration order): low ids spread a small range over all the big
	// GPCs two SMs at a time, the top ids hold the H100's 2-SM GPCs. A
	// float4 triad on SMs 104-131 of an H100 ran at half its speed on SMs
	// 0-27 (bench/RESULTS.md, 2026-11-26), and a bandwidth-bound kernel is
	// the one a plan gives the small share.
	weights := make([]float64, len(active))
	for i := range weights {
		weights[i] = 1 // equal shares, where they apply
	}
	if planned {
		weights = FloorShares(d.pol.Weights(kernels), d.cfg.MinShare)
	}
	order := make([]int, len(active))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return weights[order[a]] < weights[order[b]] })
	sorted := make([]float64, len(order))
	for j, i := range order {
		sorted[j] = weights[i]
	}
	ranges := make([]Range, len(active))
	for j, r := range Split(d.sms, sorted) {
		ranges[order[j]] = r
	}
	// Alone, or overlapping the others where no plan splits them: the
	// whole GPU, native launches.
	native := len(active) <= 1 || !planned && !d.equalLocked(kernels)
	changed := false
	defer func() { // (out is the result: the log rides on it)
		if changed && len(cs) > 1 {
			out.log = d.grantsLogLocked(cs, len(active), kernels, native, planned)
		}
	}()
	next := 0
	for _, c := range cs {
		g := Grant{Alone: true, Range: Range{0, d.sms - 1}, Clients: len(cs)}
		if !c.idle {
			if !native {
				g.Range, g.Alone = ranges[next], false
			}
			next++
		}
		if c.grant.Epoch != 0 && g.Range == c.grant.Range && g.Alone == c.grant.Alone && g.Clients == c.grant.Clients {
			continue
		}
		changed = true
		g.Epoch = d.epochs.Add(1)
		from := c.grant.Range
		c.grant = g
		if c == fresh {
			continue
		}
		c.owes = owed{epoch: g.Epoch, at: now, mono: mono, from: from}
		out.ps = append(out.ps, push{c, g})
	}
	runningFirst(out.ps)
	return out
}

// runningFirst orders pushes (stably) so that clients with a served launch
// running get their frames first: their workers must leave the old range
// (a shrinking one frees SMs for the others), while an idle client's grant
// changes nothing on the GPU. Every write to a client whose listener sleeps
// costs the daemon that listener's wake-up: on the H100 host a moved
// launch's frame went third, 17 us after the first (bench/RESULTS.md,
// twenty-third session).
func runningFirst(ps []push) {
	for i := 1; i < len(ps); i++ { // insertion: a handful of clients, no allocation
		for j := i; j > 0 && ps[j].c.inflight > 0 && ps[j-1].c.inflight == 0; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// equalLocked says whether active processes whose kernels are not split by
// a plan get equal shares (else the whole GPU each): Config.Unplanned.
func (d *Daemon) equalLocked(kernels []string) bool {
	switch d.cfg.Unplanned {
	case EqualShares:
		return true
	case AutoUnplanned:
		return d.mps.Active && !d.pol.NoSplitPays(kernels)
	}
	return false
}

// grantsLog is what the log says of a changed split of two or more
// clients: the kernels of the active ones, whether they were split, and
// every grant, so a daemon log shows what each set of kernels was given.
// Taken under d.mu, written after the pushes.
type grantsLog struct {
	clients         []grantsLogClient
	active          int
	kernels         []string
	native, planned bool
	at              time.Time
}

type grantsLogClient struct {
	id         uint64
	kernel     string
	rng        Range
	idle, hold bool
	meter      busyMeter // read after the pushes (busyLocked's reading)
}

func (d *Daemon) grantsLogLocked(cs []*conn, active int, kernels []string, native, planned bool) *grantsLog {
	l := &grantsLog{clients: make([]grantsLogClient, len(cs)), active: active, kernels: kernels, native: native, planned: planned, at: d.cfg.Clock()}
	for i, c := range cs {
		l.clients[i] = grantsLogClient{id: c.id, kernel: c.planKernel, rng: c.grant.Range, idle: c.idle, hold: c.inflight > 0 || c.held, meter: c.meter}
	}
	return l
}

// write logs l (without d.mu: the policy has its own lock).
func (l *grantsLog) write(d *Daemon) {
	how := "planned split"
	if st := d.pol.Steady(l.kernels); st != nil {
		how = fmt.Sprintf("planned split, predicted STP %.3f", st.STP)
	}
	switch native, planned := l.native, l.planned; {
	case l.active <= 1:
		how = fmt.Sprintf("%d active: whole GPU each", l.active)
	case native && d.pol.NoSplitPays(l.kernels):
		how = "profiled, no split pays: overlap, whole GPU each"
	case native:
		how = "unplanned: overlap, whole GPU each"
	case !planned && d.pol.Planned(l.kernels):
		how = "not split: a process keeps the GPU busy too little; equal shares"
		if native {
			how = "not split: a process keeps the GPU busy too little; overlap, whole GPU each"
		}
	case !planned:
		how = "unplanned: equal shares"
	}
	var b strings.Builder
	for _, c := range l.clients {
		k := c.kernel
		if k == "" {
			k = "?"
		}
		note := ""
		if c.idle {
			note = " (idle)"
		} else if _, ok := d.pol.LaunchMs(c.kernel, d.sms); ok {
			if busy, ok := busyReading(c.meter, c.hold, l.at); ok {
				note = fmt.Sprintf(" (busy %.2f)", busy)
			}
		}
		fmt.Fprintf(&b, "; client %d %s %s%s", c.id, k, c.rng, note)
	}
	d.cfg.Logf("grants (%s)%s", how, b.String())
}

// activeLocked returns the registered clients that are not idle.
func (d *Daemon) activeLocked() []*conn {
	var out []*conn
	for c := range d.conns {
		if c.id != 0 && !c.idle {
			out = append(out, c)
		}
	}
	return out
}

// busyLocked is how busy client c keeps the GPU on its grant, in [0, 1]
// (busyMeter): about 1 for a process launching back to back or with
// launches queued ahead, or held to its native budget (its launches are
// announced only as fast as the GPU runs them, which, overlapping another
// process under MPS, is about half the profile's rate: the meter read 0.5
// and the pair was split 260 ms late on the H100). False when not known
// (too short a history, no profile of its kernel).
func (d *Daemon) busyLocked(c *conn) (float64, bool) {
	if _, ok := d.pol.LaunchMs(c.planKernel, d.sms); !ok {
		return 0, false
	}
	return busyReading(c.meter, c.inflight > 0 || c.held, d.cfg.Clock())
}

// busyReading is meter m's reading at now, held (a served launch of it was
// running, or it was held) up to now when hold.
func busyReading(m busyMeter, hold bool, now time.Time) (float64, bool) {
	if hold {
		m.hold(now)
	}
	return m.value(now)
}

// waitingGPU: by its last load note, client c has a launch running or
// waiting for the GPU (served ones in flight, or native ones not ended):
// it is not idle. A served launch running also counts as busy (the
// process holds its share, however slowly the launch runs there); native
// launches that wait do not: under MPS a short program's launches wait
// behind a long one's (a grid with a block on every SM keeps the other
// clients' grids out until it ends: the MPS-order probe in
// bench/RESULTS.md), and counted busy it was split for (H100, 0cb67e3: a 1.5 ms SGEMM program
// waiting 32 ms behind FMA chains got 64 SMs, and the pair ran 12% behind
// MPS, whose makespan is the FMA program's anyway).
func (c *conn) waitingGPU() bool { return c.inflight > 0 || c.pending }

// grantSMsLocked is how many SMs client c's launches run on: its range,
// or the whole GPU for native launches.
func (d *Daemon) grantSMsLocked(c *conn) int {
	if !c.grant.Alone && c.grant.Epoch != 0 {
		return c.grant.Range.Count()
	}
	return d.sms
}

// splitLocked decides whether the active clients are split (d.mu held):
// the policy plans their set, and each keeps the GPU busy, at least
// MinBusy (MinBusy/2 while the set is split already: a process on a small
// share launches less often, and a set must not flap).
func (d *Daemon) splitLocked(active []*conn) bool {
	if len(active) < 2 {
		return false
	}
	kernels := make([]string, len(active))
	for i, c := range active {
		kernels[i] = c.planKernel
	}
	if !d.pol.Planned(kernels) {
		return false
	}
	if d.split && d.cfg.SplitHold > 0 && splitSetKey(active) == d.splitSet && d.cfg.Clock().Sub(d.splitAt) < d.cfg.SplitHold {
		return true // made moments ago for these processes (SplitHold)
	}
	floor := MinBusy
	if d.split {
		floor = MinBusy / 2
	}
	for _, c := range active {
		if b, ok := d.busyLocked(c); !ok || b < floor {
			return false
		}
	}
	return true
}

// splitSetKey names a set of active clients with their plan kernels
// (in any order). (Without fmt: it is on the way of every grant.)
func splitSetKey(active []*conn) string {
	cs := active
	if !slices.IsSortedFunc(cs, func(a, b *conn) int { return cmp.Compare(a.id, b.id) }) {
		cs = slices.Clone(active)
		slices.SortFunc(cs, func(a, b *conn) int { return cmp.Compare(a.id, b.id) })
	}
	b := make([]byte, 0, 64)
	for _, c := range cs {
		b = strconv.AppendUint(b, c.id, 10)
		b = append(b, ':')
		b = append(b, c.planKernel...)
		b = append(b, ';')
	}
	return string(b)
}

// goneIdleLocked reports whether client c, not idle yet, has gone
// IdleAfter without launching (d.mu held). Only a process launching on a
// range can be seen idle: its served launches are synchronous, so a
// launching process sends load notes, and one with a launch running says
// so. Native launches are not: a process's launches queued ahead keep
// the GPU busy long after its host thread went quiet waiting for them. A
// process owing an ack is draining (its native launches, after an alone
// grant ended), and the ack itself counts as activity.
func (d *Daemon) goneIdleLocked(c *conn, now time.Time) bool {
	return d.cfg.IdleAfter > 0 && !c.idle && !c.grant.Alone && c.owes.epoch == 0 && c.late.epoch == 0 &&
		!c.waitingGPU() && now.Sub(c.active) > d.cfg.IdleAfter
}

// watch redoes the grants when a process becomes idle (its share goes to
// the others), checking every IdleAfter/2, and when the busy readings
// change whether the active processes are split (every splitCheck without
// IdleAfter). Idle is sticky: a process that launches again is seen in its
// load note (load). A split must not wait for a load note: a program that
// enqueued its launches ahead sends one note and then nothing until they
// have run, and its busy reading becomes known only busyMinSpan after it
// registered (H100: triad + FMA programs sent their notes in the first 12
// ms and were split 83 ms later, at the next note, their first round run
// overlapped as under MPS).
func (d *Daemon) watch(stop <-chan struct{}) {
	period := splitCheck
	if d.cfg.IdleAfter > 0 {
		period = max(d.cfg.IdleAfter/2, time.Millisecond)
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := d.cfg.Clock()
		d.mu.Lock()
		var gs grants
		regrant := false
		for c := range d.conns {
			if c.id != 0 && d.goneIdleLocked(c, now) {
				c.idle, regrant = true, true
			}
		}
		if regrant || d.splitLocked(d.activeLocked()) != d.split {
			gs = d.regrantLocked(nil)
		}
		d.mu.Unlock()
		d.sendGrants(gs)
	}
}

// splitCheck is how often watch re-reads the busy meters when IdleAfter
// does not set its pace.
const splitCheck = 5 * time.Millisecond

// sendGrants pushes grants (without d.mu), then stamps their writes, arms
// each one's ack timer and logs the split: every frame leaves before the
// bookkeeping.
func (d *Daemon) sendGrants(gs grants) {
	wrote := make([]int64, len(gs.ps))
	for i, p := range gs.ps {
		wrote[i] = p.c.sendFrame(appendGrant(nil, p.g))
	}
	if len(gs.ps) > 0 {
		d.mu.Lock()
		for i, p := range gs.ps {
			if wrote[i] != 0 && p.c.owes.epoch == p.g.Epoch {
				p.c.owes.wrote = wrote[i]
			}
		}
		d.mu.Unlock()
	}
	for _, p := range gs.ps {
		c, g := p.c, p.g
		d.emit(Event{Kind: "grant", Client: c.id, Epoch: g.Epoch, Range: g.Range})
		time.AfterFunc(d.cfg.ResizeTimeout, func() { d.ackTimeout(c, g.Epoch) })
	}
	if gs.log != nil {
		gs.log.write(d)
	}
}

// ackTimeout marks a client stuck when the grant epoch is still not
// acknowledged: the others already run on their grants (they never wait),
// and the stuck client's launches overlap them until it catches up. A
// stopping daemon marks nobody.
func (d *Daemon) ackTimeout(c *conn, epoch uint64) {
	d.mu.Lock()
	if d.closing || c.owes.epoch != epoch {
		d.mu.Unlock()
		return
	}
	// Counted under d.mu while not closing: stop, which sets closing under
	// d.mu, then waits for this callback's log and event.
	d.timers.Add(1)
	defer d.timers.Done()
	c.owes, c.late, c.stuck = owed{}, c.owes, true
	d.record(ResizeRecord{At: d.cfg.Clock(), Client: c.id, Name: c.name, Epoch: epoch, From: c.late.from, To: c.grant.Range,
		LatencyUs: float64(d.cfg.Clock().Sub(c.late.at)) / 1e3, Outcome: "timeout", Kernel: c.kernel})
	id, name, to := c.id, c.name, c.grant.Range
	d.mu.Unlock()
	d.cfg.Logf("client %d (%s) did not acknowledge grant %d (%s) in %v: marked stuck", id, name, epoch, to, d.cfg.ResizeTimeout)
	d.emit(Event{Kind: "stuck", Client: id, Epoch: epoch, Range: to})
}
