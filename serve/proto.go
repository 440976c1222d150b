// Package serve is the daemon side of cross-process SM sharing: `slatec
// serve` listens on a Unix socket, drop-in transformed programs register
// their process and announce their launches, and the daemon applies Slate's
// policy table (a plan of the processes' kernels) across all processes, handing out SM ranges
// and resizing running launches. docs/SERVE.md is the protocol
// specification; this file implements its framing and validation.
package serve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/slatec/slatec/plan"
)

// ProtocolVersion is the "v" of every message. Version 2 replaced v1's
// per-launch requests (launch, accepted, start, resize, resized, done) by a
// standing grant per client (docs/SERVE.md); a v1 message is refused with
// bad_version and a message saying so.
const ProtocolVersion = 2

// MaxFrame bounds a message body (bytes after the 4-byte length).
const MaxFrame = 64 << 10

// Bounds of variable fields.
const (
	MaxName   = 256  // hello.name, hello.uuid
	MaxKernel = 1024 // launch.kernel
	MaxMsg    = 1024 // error.msg
)

// Message types. Client requests (an id, exactly one reply): hello,
// status, bye. Client notes (no id, never answered): load, ack. Daemon
// replies: welcome, ok, status, error. Daemon pushes (no "re"): grant,
// shutdown.
const (
	THello    = "hello"
	TBye      = "bye"
	TStatus   = "status"
	TLoad     = "load"
	TAck      = "ack"
	TWelcome  = "welcome"
	TOK       = "ok"
	TError    = "error"
	TGrant    = "grant"
	TShutdown = "shutdown"
)

// Error codes of "error" replies. Codes marked fatal close the connection
// after the reply.
const (
	ErrBadFrame      = "bad_frame"      // fatal: length 0 or over MaxFrame
	ErrBadJSON       = "bad_json"       // fatal: not one JSON object
	ErrBadVersion    = "bad_version"    // fatal: "v" is not ProtocolVersion
	ErrUnknownType   = "unknown_type"   // fatal
	ErrBadField      = "bad_field"      // fatal: a field missing or out of range
	ErrNotRegistered = "not_registered" // fatal: load/ack/bye before hello
	ErrRegistered    = "already_registered"
	ErrWrongDevice   = "wrong_device"  // fatal: the daemon serves another GPU
	ErrTooMany       = "too_many"      // fatal: connection limit reached
	ErrShuttingDown  = "shutting_down" // fatal
)

// FatalCode reports whether the daemon closes the connection after an
// error reply with this code.
func FatalCode(code string) bool {
	switch code {
	case ErrRegistered:
		return false
	}
	return true
}

// Range is an inclusive SM range.
type Range struct {
	Lo int `json:"lo"`
	Hi int `json:"hi"`
}

// Count is the number of SMs in r.
func (r Range) Count() int { return r.Hi - r.Lo + 1 }

func (r Range) String() string { return fmt.Sprintf("%d:%d", r.Lo, r.Hi) }

// Grant is a client's standing SM range (docs/SERVE.md, "Grants"): its
// launches run on Range, natively when Alone.
type Grant struct {
	Epoch   uint64 `json:"epoch"`
	Range   Range  `json:"range"`
	Alone   bool   `json:"alone"`
	Clients int    `json:"clients"`
}

// Msg is every message: one JSON object whose "type" says which fields
// apply (docs/SERVE.md lists them). Unknown fields are ignored.
type Msg struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	ID   uint64 `json:"id,omitempty"` // client requests; grant pushes (the epoch)
	Re   uint64 `json:"re,omitempty"` // replies: the request's id

	// hello
	PID    int    `json:"pid,omitempty"`
	Name   string `json:"name,omitempty"`
	Device int    `json:"device"`
	UUID   string `json:"uuid,omitempty"`
	SMs    int    `json:"sms,omitempty"` // hello: the device's SMs; welcome: the daemon's

	// welcome
	Client uint64 `json:"client,omitempty"`
	Policy string `json:"policy,omitempty"`
	MPS    bool   `json:"mps,omitempty"`

	// grant (push; welcome carries the first grant the same way), ack
	Range    *Range `json:"range,omitempty"`     // grant: the range; ack: where the client's served launches now run
	Alone    bool   `json:"alone,omitempty"`     // grant: no other client; launches run natively
	Clients  int    `json:"clients,omitempty"`   // grant: registered clients
	Epoch    uint64 `json:"epoch,omitempty"`     // ack: the grant's id
	DrainUs  uint64 `json:"drain_us,omitempty"`  // ack: grant received -> served launches moved
	NativeUs uint64 `json:"native_us,omitempty"` // ack: grant received -> native launches in flight ended
	Moved    int    `json:"moved,omitempty"`     // ack: served launches retreated and relaunched
	TaskUs   uint64 `json:"task_us,omitempty"`   // ack: one task of the launches a retreat moved (the longest), when known
	// RecvNs (ack): when the client received the grant, CLOCK_MONOTONIC in
	// nanoseconds; on the daemon's host it times the grant's delivery.
	RecvNs uint64 `json:"recv_ns,omitempty"`
	// WokeNs (ack): when the client's listener woke with the grant's frame
	// (the same clock), before it read it and took the client's lock:
	// RecvNs - WokeNs is the wait for that lock.
	WokeNs uint64 `json:"woke_ns,omitempty"`

	// load
	Launches uint64 `json:"launches,omitempty"` // launches since hello (served and native)
	InFlight int    `json:"inflight,omitempty"` // served launches running now
	// NativePending: native launches made while other clients are registered
	// have not all ended (the client follows them with an event).
	NativePending bool `json:"native_pending,omitempty"`
	// Held: since its last note, a native launch of it waited for older
	// ones, which were expected to take more than its budget of GPU work
	// queued ahead ($SLATE_SERVE_NATIVE_US): it keeps the GPU busy.
	Held bool `json:"held,omitempty"`
	// Kernel: load, the latest launch's kernel; hello, the first one's (the
	// launch that registers the process), so that the split made at its
	// join already knows what it runs.
	Kernel string `json:"kernel,omitempty"`
	Class  string `json:"class,omitempty"` // its Slate class, if known

	// error
	Code string `json:"code,omitempty"`
	Err  string `json:"msg,omitempty"`

	// shutdown
	Reason string `json:"reason,omitempty"`

	// status reply
	Status *Status `json:"status,omitempty"`
}

// ProtoError is a rejected message: its error code and a description.
type ProtoError struct {
	Code string
	Msg  string
}

func (e *ProtoError) Error() string { return e.Code + ": " + e.Msg }

func protoErr(code, format string, a ...any) *ProtoError {
	return &ProtoError{Code: code, Msg: fmt.Sprintf(format, a...)}
}

// ReadFrame reads one frame (4-byte little-endian length, then the body)
// into buf's storage when it fits, never allocating more than MaxFrame. A
// clean EOF before the length returns io.EOF; a frame cut short returns
// io.ErrUnexpectedEOF; a bad length returns a *ProtoError (bad_frame)
// without reading the body.
func ReadFrame(r io.Reader, buf []byte) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n == 0 || n > MaxFrame {
		return nil, protoErr(ErrBadFrame, "frame length %d (allowed 1..%d)", n, MaxFrame)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// Encode returns m as one frame. It sets V.
func Encode(m *Msg) ([]byte, error) {
	m.V = ProtocolVersion
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(body) > MaxFrame {
		return nil, fmt.Errorf("serve: message of %d bytes over the %d-byte limit", len(body), MaxFrame)
	}
	out := make([]byte, 4+len(body))
	binary.LittleEndian.PutUint32(out, uint32(len(body)))
	copy(out[4:], body)
	return out, nil
}

// WriteMsg encodes m and writes it in one Write.
func WriteMsg(w io.Writer, m *Msg) error {
	b, err := Encode(m)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Decode parses a frame body: one JSON object, protocol version checked,
// type known. It never panics; errors are *ProtoError. Fields are checked
// by Validate.
func Decode(body []byte) (*Msg, error) {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '{' {
		return nil, protoErr(ErrBadJSON, "body is not a JSON object")
	}
	var m Msg
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, protoErr(ErrBadJSON, "%s", truncate(err.Error(), 200))
	}
	if m.V == 1 {
		return nil, protoErr(ErrBadVersion, "protocol version 1 (a request per launch) is no longer served: this daemon speaks %d (standing grants); rebuild the program with this slatec", ProtocolVersion)
	}
	if m.V != ProtocolVersion {
		return nil, protoErr(ErrBadVersion, "protocol version %d, this daemon speaks %d", m.V, ProtocolVersion)
	}
	switch m.Type {
	case THello, TBye, TStatus, TLoad, TAck,
		TWelcome, TOK, TError, TGrant, TShutdown:
	default:
		return nil, protoErr(ErrUnknownType, "unknown message type %q", truncate(m.Type, 64))
	}
	return &m, nil
}

// IsNote reports whether a client message type is a note: sent without an
// id and never answered (load, ack).
func IsNote(typ string) bool { return typ == TLoad || typ == TAck }

// ValidateRequest checks the fields of a message a client sent to the
// daemon: the requests hello, status, bye (an id each) and the notes load
// and ack (no id needed).
func ValidateRequest(m *Msg) error {
	if m.ID == 0 && !IsNote(m.Type) {
		return protoErr(ErrBadField, "%s: id must be a positive integer", m.Type)
	}
	switch m.Type {
	case THello:
		switch {
		case m.PID <= 0:
			return protoErr(ErrBadField, "hello: pid must be positive")
		case len(m.Name) > MaxName || len(m.UUID) > MaxName:
			return protoErr(ErrBadField, "hello: name and uuid are at most %d bytes", MaxName)
		case m.Device < 0 || m.Device > 1024:
			return protoErr(ErrBadField, "hello: device %d out of range", m.Device)
		case m.SMs < 0 || m.SMs > plan.MaxSMs:
			return protoErr(ErrBadField, "hello: sms %d out of range 0..%d", m.SMs, plan.MaxSMs)
		case len(m.Kernel) > MaxKernel:
			return protoErr(ErrBadField, "hello: kernel is at most %d bytes", MaxKernel)
		case m.Class != "" && !plan.Class(m.Class).Valid():
			return protoErr(ErrBadField, "hello: class %q is not one of L_C, M_C, H_C, M_M, H_M", truncate(m.Class, 16))
		}
	case TLoad:
		switch {
		case len(m.Kernel) > MaxKernel:
			return protoErr(ErrBadField, "load: kernel is at most %d bytes", MaxKernel)
		case m.InFlight < 0 || m.InFlight > 1<<20:
			return protoErr(ErrBadField, "load: inflight %d out of range", m.InFlight)
		case m.Class != "" && !plan.Class(m.Class).Valid():
			return protoErr(ErrBadField, "load: class %q is not one of L_C, M_C, H_C, M_M, H_M", truncate(m.Class, 16))
		}
	case TAck:
		switch {
		case m.Epoch == 0:
			return protoErr(ErrBadField, "ack: epoch must be positive")
		case m.Range == nil || m.Range.Lo < 0 || m.Range.Hi < m.Range.Lo:
			return protoErr(ErrBadField, "ack: range missing or empty")
		case m.Moved < 0:
			return protoErr(ErrBadField, "ack: moved must not be negative")
		}
	case TBye, TStatus:
	default:
		return protoErr(ErrUnknownType, "%q is not a request", m.Type)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// AsProtoError returns err's *ProtoError, if any.
func AsProtoError(err error) (*ProtoError, bool) {
	var pe *ProtoError
	ok := errors.As(err, &pe)
	return pe, ok
}

// appendGrant appends the frame of a grant push, the bytes Encode makes of
// &Msg{Type: TGrant, ID: g.Epoch, Range, Alone, Clients}, without reflection:
// a grant is on its way to a client that is waiting for it, and
// encoding/json took 10-47 us there on the H100 host (TestAppendGrant
// holds the two equal).
func appendGrant(b []byte, g Grant) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, ProtocolVersion, 10)
	b = append(b, `,"type":"`+TGrant+`"`...)
	if g.Epoch != 0 {
		b = append(b, `,"id":`...)
		b = strconv.AppendUint(b, g.Epoch, 10)
	}
	b = append(b, `,"device":0,"range":{"lo":`...)
	b = strconv.AppendInt(b, int64(g.Range.Lo), 10)
	b = append(b, `,"hi":`...)
	b = strconv.AppendInt(b, int64(g.Range.Hi), 10)
	b = append(b, '}')
	if g.Alone {
		b = append(b, `,"alone":true`...)
	}
	if g.Clients != 0 {
		b = append(b, `,"clients":`...)
		b = strconv.AppendInt(b, int64(g.Clients), 10)
	}
	b = append(b, '}')
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}
