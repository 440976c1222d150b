package runtime

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// testCacheDir is a per-process CUBIN cache, so tests neither depend on nor
// pollute the user's cache.
var testCacheDir string

func TestMain(m *testing.M) {
	// The Makefile exports SLATEC_CUDA_PREFIX; under a bare `go test` find
	// the module root and use its .cuda prefix (scripts/cuda-tools.sh).
	if os.Getenv(EnvCUDAPrefix) == "" {
		if root, ok := moduleRoot(); ok {
			if st, err := os.Stat(filepath.Join(root, ".cuda")); err == nil && st.IsDir() {
				os.Setenv(EnvCUDAPrefix, filepath.Join(root, ".cuda"))
			}
		}
	}
	dir, err := os.MkdirTemp("", "slatec-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testCacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func moduleRoot() (string, bool) {
	d, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, true
		}
		p := filepath.Dir(d)
		if p == d {
			return "", false
		}
		d = p
	}
}

// needNVRTC skips a test when NVRTC cannot be loaded.
func needNVRTC(t testing.TB) {
	t.Helper()
	if _, _, err := NVRTCVersion(); err != nil {
		t.Skipf("no NVRTC: run ./scripts/cuda-tools.sh (or set %s): %v", EnvCUDAPrefix, err)
	}
}

// workerSource is testdata/worker.cu, embedded so the test binary runs
// from any directory (it is carried to the GPU machine on its own).
//
//go:embed testdata/worker.cu
var workerSource string

func readWorker(testing.TB) string { return workerSource }

// workerExprs are the kernels of testdata/worker.cu, by source name.
var workerExprs = []string{"vadd__slate<float>", "count__slate", "affine__slate", "oob__slate", "spin__slate", "where__slate"}
