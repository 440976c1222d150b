//go:build !cgo

package runtime

import (
	"errors"
	"testing"
)

// Without cgo the runtime builds and says at use that it needs cgo.
func TestNoCgoSaysSoAtUse(t *testing.T) {
	if _, err := Open(0); !errors.Is(err, ErrNoCgo) {
		t.Fatalf("Open: %v, want ErrNoCgo", err)
	}
	if _, _, err := NVRTCVersion(); !errors.Is(err, ErrNoCgo) {
		t.Fatalf("NVRTCVersion: %v, want ErrNoCgo", err)
	}
	if err := checkArch("sm_90"); !errors.Is(err, ErrNoCgo) {
		t.Fatalf("checkArch: %v, want ErrNoCgo", err)
	}
}
