// Package serve is the daemon side of cross-process SM sharing: `slatec
// serve` listens on a Unix socket, drop-in transformed programs register
// their process and announce their launches, and the daemon applies Slate's
// policy table (or an STM plan) across all processes, handing out SM ranges
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

	"github.com/slatec/slatec/plan"
)

// ProtocolVersion is the "v" of every message.
const ProtocolVersion = 1

// MaxFrame bounds a message body (bytes after the 4-byte length).
const MaxFrame = 64 << 10

// Bounds of variable fields.
const (
	MaxName   = 256  // hello.name, hello.uuid
	MaxKernel = 1024 // launch.kernel
	MaxMsg    = 1024 // error.msg
)

// Message types. Client requests: hello, launch, done, resized, bye,
// status. Daemon replies: welcome, accepted, ok, status, error. Daemon
// pushes (no "re"): start, resize, shutdown.
const (
	THello    = "hello"
	TLaunch   = "launch"
	TDone     = "done"
	TResized  = "resized"
	TBye      = "bye"
	TStatus   = "status"
	TWelcome  = "welcome"
	TAccepted = "accepted"
	TOK       = "ok"
	TError    = "error"
	TStart    = "start"
	TResize   = "resize"
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
	ErrNotRegistered = "not_registered" // fatal: launch/done/resized/bye before hello
	ErrRegistered    = "already_registered"
	ErrWrongDevice   = "wrong_device" // fatal: the daemon serves another GPU
	ErrTooMany       = "too_many"     // fatal: client or launch limit reached
	ErrUnknownLaunch = "unknown_launch"
	ErrDupLaunch     = "duplicate_launch"
	ErrUnknownCmd    = "unknown_command"
	ErrShuttingDown  = "shutting_down" // fatal
)

// FatalCode reports whether the daemon closes the connection after an
// error reply with this code.
func FatalCode(code string) bool {
	switch code {
	case ErrRegistered, ErrUnknownLaunch, ErrDupLaunch, ErrUnknownCmd:
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

// Msg is every message: one JSON object whose "type" says which fields
// apply (docs/SERVE.md lists them). Unknown fields are ignored.
type Msg struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	ID   uint64 `json:"id,omitempty"` // client requests; daemon pushes (cmd)
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

	// launch, accepted, done, start, resize, resized
	Launch uint64    `json:"launch,omitempty"`
	Kernel string    `json:"kernel,omitempty"`
	Grid   [3]uint32 `json:"grid,omitzero"`
	Block  [3]uint32 `json:"block,omitzero"`
	Shmem  uint32    `json:"shmem,omitempty"`
	Class  string    `json:"class,omitempty"`
	Blocks uint64    `json:"blocks,omitempty"`
	Queued int       `json:"queued,omitempty"` // accepted: launches ahead of it (0: deciding now)

	Range    *Range `json:"range,omitempty"`    // start, resize, resized
	Cmd      uint64 `json:"cmd,omitempty"`      // resized: the resize's id
	Finished bool   `json:"finished,omitempty"` // resized: the launch had ended

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
	if m.V != ProtocolVersion {
		return nil, protoErr(ErrBadVersion, "protocol version %d, this daemon speaks %d", m.V, ProtocolVersion)
	}
	switch m.Type {
	case THello, TLaunch, TDone, TResized, TBye, TStatus,
		TWelcome, TAccepted, TOK, TError, TStart, TResize, TShutdown:
	default:
		return nil, protoErr(ErrUnknownType, "unknown message type %q", truncate(m.Type, 64))
	}
	return &m, nil
}

// ValidateRequest checks the fields of a message a client sent to the
// daemon (hello, launch, done, resized, bye, status).
func ValidateRequest(m *Msg) error {
	if m.ID == 0 {
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
		case m.SMs < 0 || m.SMs > 4096:
			return protoErr(ErrBadField, "hello: sms %d out of range 0..4096", m.SMs)
		}
	case TLaunch:
		switch {
		case m.Launch == 0:
			return protoErr(ErrBadField, "launch: launch id must be positive")
		case m.Kernel == "" || len(m.Kernel) > MaxKernel:
			return protoErr(ErrBadField, "launch: kernel must be 1..%d bytes", MaxKernel)
		case m.Grid[0] == 0 || m.Grid[1] == 0 || m.Grid[2] == 0 || m.Grid[0] > 1<<31-1 || m.Grid[1] > 65535 || m.Grid[2] > 65535:
			return protoErr(ErrBadField, "launch: grid %v out of CUDA's limits", m.Grid)
		case m.Block[0] == 0 || m.Block[1] == 0 || m.Block[2] == 0 ||
			uint64(m.Block[0])*uint64(m.Block[1])*uint64(m.Block[2]) > 1024:
			return protoErr(ErrBadField, "launch: block %v out of CUDA's limits", m.Block)
		case m.Class != "" && !plan.Class(m.Class).Valid():
			return protoErr(ErrBadField, "launch: class %q is not one of L_C, M_C, H_C, M_M, H_M", truncate(m.Class, 16))
		}
	case TDone:
		if m.Launch == 0 {
			return protoErr(ErrBadField, "done: launch id must be positive")
		}
	case TResized:
		if m.Launch == 0 || m.Cmd == 0 {
			return protoErr(ErrBadField, "resized: launch and cmd must be positive")
		}
		if !m.Finished && (m.Range == nil || m.Range.Lo < 0 || m.Range.Hi < m.Range.Lo) {
			return protoErr(ErrBadField, "resized: range missing or empty")
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
