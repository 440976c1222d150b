package runtime

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"
)

// Environment variables that steer library discovery. They are read each
// time a library is loaded (until one load succeeds), never cached.

// libcudaCandidates returns, in search order, the files tried for the CUDA
// driver: $SLATEC_LIBCUDA alone when set; otherwise the soname (resolved by
// the dynamic loader: LD_LIBRARY_PATH, ld.so.cache) and then the usual
// driver locations of distributions that keep it off the loader path.
func libcudaCandidates() []string {
	if p := os.Getenv(EnvLibCUDA); p != "" {
		return []string{p}
	}
	return []string{
		"libcuda.so.1",
		"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
		"/usr/lib64/libcuda.so.1",
		"/usr/lib/wsl/lib/libcuda.so.1",
	}
}

// libnvrtcCandidates returns, in search order, the files tried for NVRTC:
// $SLATEC_LIBNVRTC alone when set; otherwise the project-local prefix
// ($SLATEC_CUDA_PREFIX/nvidia/cu13/lib/libnvrtc.so.13), then the sonames
// libnvrtc.so.13, libnvrtc.so.12 and libnvrtc.so through the loader path.
func libnvrtcCandidates() []string {
	if p := os.Getenv(EnvLibNVRTC); p != "" {
		return []string{p}
	}
	var c []string
	if pre := os.Getenv(EnvCUDAPrefix); pre != "" {
		c = append(c, filepath.Join(pre, "nvidia", "cu13", "lib", "libnvrtc.so.13"))
	}
	return append(c, "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so")
}

// LibraryError reports that no candidate of a shared library could be
// loaded. Its message names every file tried, why each failed, and the
// environment variable that points slatec at the library.

// Summary is a one-line form of the error for logs and test skips.

// loadFirst calls load on each candidate until one succeeds.
func loadFirst(lib, env string, cands []string, load func(path string) error) (string, error) {
	le := &LibraryError{Library: lib, Env: env}
	for _, p := range cands {
		err := load(p)
		if err == nil {
			return p, nil
		}
		le.Tried = append(le.Tried, p)
		// dlerror often repeats the file name; say it once.
		le.Reasons = append(le.Reasons, strings.TrimPrefix(err.Error(), p+": "))
	}
	return "", le
}

// cLoader adapts one of the C loaders to loadFirst.
func cLoader(f func(path *C.char, buf *C.char, n C.size_t) C.int) func(string) error {
	return func(path string) error {
		cp := C.CString(path)
		defer C.free(unsafe.Pointer(cp))
		var buf [512]C.char
		if f(cp, &buf[0], C.size_t(len(buf))) != 0 {
			return fmt.Errorf("%s", C.GoString(&buf[0]))
		}
		return nil
	}
}

// probeLoad only checks that path can be dlopen'ed (used in tests).
var probeLoad = cLoader(func(p *C.char, b *C.char, n C.size_t) C.int { return C.slate_try_dlopen(p, b, n) })

var (
	cudaMu   sync.Mutex
	cudaPath string // non-empty once the driver library is installed

	nvrtcMu   sync.Mutex
	nvrtcPath string
)

// loadCUDA installs the driver library process-wide. A failure is not
// remembered, so fixing the environment and retrying works.
func loadCUDA() (string, error) {
	cudaMu.Lock()
	defer cudaMu.Unlock()
	if cudaPath != "" {
		return cudaPath, nil
	}
	p, err := loadFirst("CUDA driver (libcuda.so.1)", EnvLibCUDA, libcudaCandidates(),
		cLoader(func(p *C.char, b *C.char, n C.size_t) C.int { return C.slate_cuda_load(p, b, n) }))
	if err != nil {
		return "", err
	}
	cudaPath = p
	return p, nil
}

// preloadBuiltins loads libnvrtc-builtins from the directory of an NVRTC
// given by path. NVRTC opens its builtins library by soname at compile
// time; when NVRTC itself came from a directory off the loader path (the
// project-local prefix), that lookup fails unless the builtins are already
// loaded, since the loader matches loaded libraries by soname.
func preloadBuiltins(nvrtc string) error {
	if !strings.Contains(nvrtc, "/") {
		return nil
	}
	if _, err := os.Stat(nvrtc); err != nil {
		return err
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(nvrtc), "libnvrtc-builtins.so.*"))
	preload := cLoader(func(p *C.char, b *C.char, n C.size_t) C.int { return C.slate_preload(p, b, n) })
	for _, m := range matches {
		if strings.Contains(filepath.Base(m), ".alt.") {
			continue // the alternative (non-default) builtins build
		}
		if err := preload(m); err != nil {
			return fmt.Errorf("loading %s: %w", m, err)
		}
	}
	return nil
}

// loadNVRTC installs NVRTC process-wide; failures are not remembered.
func loadNVRTC() (string, error) {
	nvrtcMu.Lock()
	defer nvrtcMu.Unlock()
	if nvrtcPath != "" {
		return nvrtcPath, nil
	}
	load := cLoader(func(p *C.char, b *C.char, n C.size_t) C.int { return C.slate_nvrtc_load(p, b, n) })
	p, err := loadFirst("NVRTC (libnvrtc.so)", EnvLibNVRTC, libnvrtcCandidates(), func(path string) error {
		if err := preloadBuiltins(path); err != nil {
			return err
		}
		return load(path)
	})
	if err != nil {
		return "", err
	}
	nvrtcPath = p
	return p, nil
}

// cLoaderForTest loads path as the CUDA driver without installing it when
// it lacks symbols (used to test the missing-symbol message).
func cLoaderForTest(path string) error {
	return cLoader(func(p *C.char, b *C.char, n C.size_t) C.int { return C.slate_cuda_load(p, b, n) })(path)
}
