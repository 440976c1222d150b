//go:build cgo

package runtime

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestLibraryCandidates(t *testing.T) {
	t.Setenv(EnvLibCUDA, "")
	t.Setenv(EnvLibNVRTC, "")
	t.Setenv(EnvCUDAPrefix, "/opt/x")
	if c := libcudaCandidates(); c[0] != "libcuda.so.1" {
		t.Errorf("libcuda candidates %v", c)
	}
	want := "[/opt/x/nvidia/cu13/lib/libnvrtc.so.13 libnvrtc.so.13 libnvrtc.so.12 libnvrtc.so]"
	if c := fmt.Sprint(libnvrtcCandidates()); c != want {
		t.Errorf("nvrtc candidates %v, want %v", c, want)
	}
	// An explicit path is the only candidate.
	t.Setenv(EnvLibCUDA, "/drv/libcuda.so.1")
	t.Setenv(EnvLibNVRTC, "/tk/libnvrtc.so.13")
	if c := fmt.Sprint(libcudaCandidates()); c != "[/drv/libcuda.so.1]" {
		t.Errorf("override: %v", c)
	}
	if c := fmt.Sprint(libnvrtcCandidates()); c != "[/tk/libnvrtc.so.13]" {
		t.Errorf("override: %v", c)
	}
}

func TestMissingLibraryMessages(t *testing.T) {
	t.Setenv(EnvLibCUDA, "/nonexistent/libcuda.so.1")
	_, err := loadFirst("CUDA driver (libcuda.so.1)", EnvLibCUDA, libcudaCandidates(), probeLoad)
	var le *LibraryError
	if !errors.As(err, &le) {
		t.Fatalf("want *LibraryError, got %v", err)
	}
	for _, want := range []string{"CUDA driver", "/nonexistent/libcuda.so.1", "cannot open", "set SLATEC_LIBCUDA"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q:\n%v", want, err)
		}
	}

	t.Setenv(EnvLibNVRTC, "")
	t.Setenv(EnvCUDAPrefix, "/nonexistent-prefix")
	// Probe only the prefix candidate and a soname that cannot exist, so
	// the test does not depend on what this machine has installed.
	cands := append(libnvrtcCandidates()[:1], "libnvrtc-slatec-test.so.99")
	_, err = loadFirst("NVRTC (libnvrtc.so)", EnvLibNVRTC, cands, probeLoad)
	for _, want := range []string{"NVRTC", "/nonexistent-prefix/nvidia/cu13/lib/libnvrtc.so.13",
		"libnvrtc-slatec-test.so.99", "set SLATEC_LIBNVRTC", "SLATEC_CUDA_PREFIX"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q:\n%v", want, err)
		}
	}
	t.Log(err)
}

// TestOpenWithoutDriver checks the error a machine without a GPU gets.
func TestOpenWithoutDriver(t *testing.T) {
	t.Setenv(EnvLibCUDA, "/nonexistent/libcuda.so.1")
	d, err := Open(0)
	if err == nil {
		// The driver was already loaded by an earlier test in this
		// process (on a GPU machine): loading is not repeated.
		d.Close()
		t.Skip("CUDA driver already loaded in this process")
	}
	var le *LibraryError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "SLATEC_LIBCUDA") {
		t.Fatalf("Open without a driver: %v", err)
	}
}

func TestMissingSymbol(t *testing.T) {
	// libc loads but has no cuInit: the loader must say which symbol.
	err := cLoaderForTest("libc.so.6")
	if err == nil || !strings.Contains(err.Error(), "missing symbol cuInit") {
		t.Fatalf("got %v", err)
	}
}
