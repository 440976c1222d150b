package serve

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func frame(body string) []byte {
	b := make([]byte, 4+len(body))
	binary.LittleEndian.PutUint32(b, uint32(len(body)))
	copy(b[4:], body)
	return b
}

func TestReadFrame(t *testing.T) {
	big := make([]byte, 4)
	binary.LittleEndian.PutUint32(big, MaxFrame+1)
	huge := []byte{0xff, 0xff, 0xff, 0xff}
	for _, tc := range []struct {
		name string
		in   []byte
		want string // body, or the error
	}{
		{"ok", frame(`{"v":2}`), `{"v":2}`},
		{"empty stream", nil, "EOF"},
		{"short header", []byte{1, 0}, "unexpected EOF"},
		{"zero length", []byte{0, 0, 0, 0}, ErrBadFrame},
		{"over max", big, ErrBadFrame},
		{"4 GiB", huge, ErrBadFrame},
		{"cut body", frame(`{"v":2}`)[:7], "unexpected EOF"},
		{"max ok", frame(`"` + strings.Repeat("a", MaxFrame-2) + `"`), "len"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadFrame(bytes.NewReader(tc.in), nil)
			switch {
			case tc.want == "len":
				if err != nil || len(got) != MaxFrame {
					t.Fatalf("got %d bytes, %v", len(got), err)
				}
			case err != nil:
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
			case string(got) != tc.want:
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := ReadFrame(bytes.NewReader(nil), nil); !errors.Is(err, io.EOF) {
		t.Fatalf("clean EOF: %v", err)
	}
}

func TestDecodeValidate(t *testing.T) {
	for _, tc := range []struct {
		name, body, code string // code "" = valid request or note
	}{
		{"hello", `{"v":2,"type":"hello","id":1,"pid":42,"name":"a","device":0,"sms":132}`, ""},
		{"hello unknown field ignored", `{"v":2,"type":"hello","id":1,"pid":42,"future":[1,2]}`, ""},
		{"status", `{"v":2,"type":"status","id":9}`, ""},
		{"bye", `{"v":2,"type":"bye","id":9}`, ""},
		{"load", `{"v":2,"type":"load","launches":12,"inflight":1,"kernel":"saxpy","class":"M_M"}`, ""},
		{"load empty", `{"v":2,"type":"load"}`, ""},
		{"load with an id", `{"v":2,"type":"load","id":5,"launches":1}`, ""},
		{"ack", `{"v":2,"type":"ack","epoch":4,"range":{"lo":0,"hi":3},"drain_us":150,"native_us":9,"moved":2}`, ""},

		{"not json", `hello`, ErrBadJSON},
		{"array", `[1,2]`, ErrBadJSON},
		{"trailing", `{"v":2,"type":"bye","id":1} {}`, ErrBadJSON},
		{"wrong type of field", `{"v":2,"type":"hello","id":"x"}`, ErrBadJSON},
		{"negative id", `{"v":2,"type":"bye","id":-1}`, ErrBadJSON},
		{"no version", `{"type":"bye","id":1}`, ErrBadVersion},
		{"version 1", `{"v":1,"type":"bye","id":1}`, ErrBadVersion},
		{"version 3", `{"v":3,"type":"bye","id":1}`, ErrBadVersion},
		{"unknown type", `{"v":2,"type":"rm -rf","id":1}`, ErrUnknownType},
		{"v1 launch", `{"v":2,"type":"launch","id":3,"launch":7,"kernel":"k","grid":[1,1,1],"block":[1,1,1]}`, ErrUnknownType},
		{"daemon type from client", `{"v":2,"type":"welcome","id":1}`, ErrUnknownType},
		{"grant from client", `{"v":2,"type":"grant","id":1,"range":{"lo":0,"hi":1}}`, ErrUnknownType},
		{"no id", `{"v":2,"type":"bye"}`, ErrBadField},
		{"hello no pid", `{"v":2,"type":"hello","id":1}`, ErrBadField},
		{"hello long name", `{"v":2,"type":"hello","id":1,"pid":1,"name":"` + strings.Repeat("n", MaxName+1) + `"}`, ErrBadField},
		{"hello device", `{"v":2,"type":"hello","id":1,"pid":1,"device":-1}`, ErrBadField},
		{"hello long kernel", `{"v":2,"type":"hello","id":1,"pid":1,"kernel":"` + strings.Repeat("k", MaxKernel+1) + `"}`, ErrBadField},
		{"hello bad class", `{"v":2,"type":"hello","id":1,"pid":1,"kernel":"k","class":"XX"}`, ErrBadField},
		{"load long kernel", `{"v":2,"type":"load","kernel":"` + strings.Repeat("k", MaxKernel+1) + `"}`, ErrBadField},
		{"load bad class", `{"v":2,"type":"load","class":"XX"}`, ErrBadField},
		{"load negative inflight", `{"v":2,"type":"load","inflight":-3}`, ErrBadField},
		{"load launches overflow", `{"v":2,"type":"load","launches":18446744073709551616}`, ErrBadJSON},
		{"ack no epoch", `{"v":2,"type":"ack","range":{"lo":0,"hi":3}}`, ErrBadField},
		{"ack empty range", `{"v":2,"type":"ack","epoch":4,"range":{"lo":5,"hi":3}}`, ErrBadField},
		{"ack no range", `{"v":2,"type":"ack","epoch":4}`, ErrBadField},
		{"ack negative moved", `{"v":2,"type":"ack","epoch":4,"range":{"lo":0,"hi":3},"moved":-1}`, ErrBadField},
		{"ack negative drain", `{"v":2,"type":"ack","epoch":4,"range":{"lo":0,"hi":3},"drain_us":-1}`, ErrBadJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.body))
			if err == nil {
				err = ValidateRequest(m)
			}
			if tc.code == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			pe, ok := AsProtoError(err)
			if !ok || pe.Code != tc.code {
				t.Fatalf("got %v, want code %s", err, tc.code)
			}
		})
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	r := Range{Lo: 3, Hi: 9}
	m := &Msg{Type: TAck, Epoch: 5, Range: &r, DrainUs: 120, NativeUs: 7, Moved: 2}
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	body, err := ReadFrame(bytes.NewReader(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(body)
	if err != nil || ValidateRequest(got) != nil {
		t.Fatalf("%v %v", err, ValidateRequest(got))
	}
	if got.Epoch != 5 || *got.Range != r || got.DrainUs != 120 || got.NativeUs != 7 || got.Moved != 2 || got.V != ProtocolVersion {
		t.Fatalf("round trip: %+v", got)
	}
	if _, err := Encode(&Msg{Type: TError, Err: strings.Repeat("x", MaxFrame)}); err == nil {
		t.Fatal("encoded an oversized message")
	}
}

func TestFatalCodes(t *testing.T) {
	for code, fatal := range map[string]bool{
		ErrBadFrame: true, ErrBadJSON: true, ErrBadVersion: true, ErrUnknownType: true, ErrBadField: true,
		ErrNotRegistered: true, ErrWrongDevice: true, ErrTooMany: true, ErrShuttingDown: true,
		ErrRegistered: false,
	} {
		if FatalCode(code) != fatal {
			t.Errorf("FatalCode(%s) = %v", code, !fatal)
		}
	}
}

func TestCheckMPS(t *testing.T) {
	dir := t.TempDir()
	if s := checkMPSDir(dir); s.Active || s.Warning() == "" || !strings.Contains(s.Warning(), "nvidia-cuda-mps-control -d") {
		t.Fatalf("empty dir: %+v %q", s, s.Warning())
	}
	if err := writeFile(dir + "/control"); err != nil {
		t.Fatal(err)
	}
	if s := checkMPSDir(dir); s.Active {
		t.Fatalf("regular file taken for a pipe: %+v", s)
	}
	sockDir := t.TempDir()
	ln, err := Listen(sockDir + "/control")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if s := checkMPSDir(sockDir); !s.Active || s.Warning() != "" {
		t.Fatalf("control socket present: %+v", s)
	}
	t.Setenv("CUDA_MPS_PIPE_DIRECTORY", sockDir)
	if s := CheckMPS(); !s.Active || s.PipeDir != sockDir {
		t.Fatalf("CheckMPS with CUDA_MPS_PIPE_DIRECTORY: %+v", s)
	}
}

func TestDefaultSocket(t *testing.T) {
	t.Setenv("SLATEC_SOCKET", "/x/y.sock")
	if got := DefaultSocket(); got != "/x/y.sock" {
		t.Fatal(got)
	}
	t.Setenv("SLATEC_SOCKET", "")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/7")
	if got := DefaultSocket(); got != "/run/user/7/slatec/serve.sock" {
		t.Fatal(got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	if got := DefaultSocket(); !strings.HasPrefix(got, "/tmp/slatec-") || !strings.HasSuffix(got, "/serve.sock") {
		t.Fatal(got)
	}
}

// The grant frame written without reflection is the frame Encode makes,
// byte for byte, and decodes to the same grant.
func TestAppendGrant(t *testing.T) {
	for _, tc := range []struct {
		epoch uint64
		g     Grant
	}{
		{1, Grant{Range: Range{0, 131}, Alone: true, Clients: 1}},
		{42, Grant{Range: Range{27, 131}, Clients: 2}},
		{1 << 40, Grant{Range: Range{0, 0}, Clients: 3}},
		{7, Grant{Range: Range{5, 9}}},
		{0, Grant{Range: Range{0, 65}, Clients: 2}},
		{^uint64(0), Grant{Range: Range{-1, 1 << 20}, Alone: true, Clients: 1 << 30}},
	} {
		g := tc.g
		g.Epoch = tc.epoch
		want, err := Encode(&Msg{Type: TGrant, ID: tc.epoch, Range: &g.Range, Alone: g.Alone, Clients: g.Clients})
		require.NoError(t, err)
		got := appendGrant([]byte("x"), g)
		assert.Equal(t, "x", string(got[:1]), "appends")
		assert.Equal(t, string(want), string(got[1:]), "epoch %d grant %+v", tc.epoch, g)
		m, err := Decode(got[5:])
		require.NoError(t, err)
		assert.Equal(t, tc.epoch, m.ID)
		assert.Equal(t, g.Range, *m.Range)
		assert.Equal(t, g.Alone, m.Alone)
		assert.Equal(t, g.Clients, m.Clients)
	}
}
