package serve

import (
	"bytes"
	"os"
	"testing"
)

func writeFile(path string) error { return os.WriteFile(path, []byte("x"), 0o600) }

// FuzzDecode feeds arbitrary bytes to the daemon's reading path: frames
// read one after another, each decoded and validated. It must never panic
// nor allocate beyond MaxFrame per frame, and whatever it accepts must
// re-encode to a message that decodes to the same request.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"v":2,"type":"hello","id":1,"pid":42,"name":"a","device":0,"sms":132}`,
		`{"v":2,"type":"load","launches":12,"inflight":1,"kernel":"saxpy","class":"H_M"}`,
		`{"v":2,"type":"ack","epoch":4,"range":{"lo":0,"hi":3},"drain_us":150,"native_us":20,"moved":2}`,
		`{"v":2,"type":"ack","epoch":4}`,
		`{"v":2,"type":"status","id":2}`,
		`{"v":2,"type":"bye","id":2}`,
		`{"v":1,"type":"bye","id":2}`,
		`{"v":1,"type":"launch","id":3,"launch":7,"kernel":"k","grid":[4294967296,1,1],"block":[1,1,1]}`,
		`{"v":2,"type":"grant","id":5,"range":{"lo":0,"hi":65},"clients":2}`,
		`[{"v":2}]`,
		`{"v":2,"type":"hello","id":1,"pid":1,"name":"\u0000\ud800"}`,
	} {
		f.Add(frame(s))
		f.Add(append(frame(s), frame(s)...))
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, '{'})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{3, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		buf := make([]byte, 0, 64)
		for range 16 {
			body, err := ReadFrame(r, buf)
			if err != nil {
				return
			}
			if len(body) > MaxFrame {
				t.Fatalf("frame of %d bytes", len(body))
			}
			m, err := Decode(body)
			if err != nil {
				if _, ok := AsProtoError(err); !ok {
					t.Fatalf("non-protocol error %T %v", err, err)
				}
				continue
			}
			if ValidateRequest(m) != nil {
				continue
			}
			enc, err := Encode(m)
			if err != nil {
				t.Fatalf("re-encoding an accepted message: %v", err)
			}
			body2, err := ReadFrame(bytes.NewReader(enc), nil)
			if err != nil {
				t.Fatal(err)
			}
			m2, err := Decode(body2)
			if err != nil {
				t.Fatalf("re-decoding: %v", err)
			}
			if err := ValidateRequest(m2); err != nil {
				t.Fatalf("re-validating: %v", err)
			}
			if m2.Type != m.Type || m2.ID != m.ID || m2.Epoch != m.Epoch || m2.Kernel != m.Kernel || m2.Launches != m.Launches ||
				m2.InFlight != m.InFlight || (m.Range != nil) != (m2.Range != nil) || (m.Range != nil && *m.Range != *m2.Range) {
				t.Fatalf("round trip changed %+v into %+v", m, m2)
			}
		}
	})
}
