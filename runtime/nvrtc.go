package runtime

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"
)

// NVRTCError is a failed NVRTC call. For a compilation failure Log holds
// the compiler's diagnostics, which Error includes in full: they are what
// the user needs to fix the source.

func nvrtcMsg(r C.nvrtcResult) string {
	if s := C.slate_nvrtcGetErrorString(r); s != nil {
		return C.GoString(s)
	}
	return "unknown NVRTC error"
}

// NVRTCVersion returns the loaded NVRTC's version, loading it if needed.
func NVRTCVersion() (major, minor int, err error) {
	if _, err := loadNVRTC(); err != nil {
		return 0, 0, err
	}
	var ma, mi C.int
	if r := C.slate_nvrtcVersion(&ma, &mi); r != 0 {
		return 0, 0, &NVRTCError{Op: "nvrtcVersion", Code: int(r), Msg: nvrtcMsg(r)}
	}
	return int(ma), int(mi), nil
}

// NVRTCSupportedArchs lists the compute capabilities (e.g. 90 for sm_90)
// the loaded NVRTC can generate code for.
func NVRTCSupportedArchs() ([]int, error) {
	if _, err := loadNVRTC(); err != nil {
		return nil, err
	}
	var n C.int
	if r := C.slate_nvrtcGetNumSupportedArchs(&n); r != 0 {
		return nil, &NVRTCError{Op: "nvrtcGetNumSupportedArchs", Code: int(r), Msg: nvrtcMsg(r)}
	}
	if n <= 0 {
		return nil, nil
	}
	a := make([]C.int, int(n))
	if r := C.slate_nvrtcGetSupportedArchs(&a[0]); r != 0 {
		return nil, &NVRTCError{Op: "nvrtcGetSupportedArchs", Code: int(r), Msg: nvrtcMsg(r)}
	}
	out := make([]int, len(a))
	for i, v := range a {
		out[i] = int(v)
	}
	return out, nil
}

// checkArch validates a real architecture name against what NVRTC supports;
// CUBIN output needs a real architecture (sm_XX), not a virtual one.

// nvrtcCompile runs NVRTC once (no cache). It returns the CUBIN, the
// lowered (mangled) symbol of each name expression, and the compiler log.
func nvrtcCompile(name, src, arch string, opts, exprs []string) (cubin []byte, lowered map[string]string, log string, err error) {
	fail := func(op string, r C.nvrtcResult, log string) error {
		return &NVRTCError{Op: op, File: name, Arch: arch, Code: int(r), Msg: nvrtcMsg(r), Log: log}
	}
	csrc := C.CString(src)
	defer C.free(unsafe.Pointer(csrc))
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))

	var prog C.nvrtcProgram
	if r := C.slate_nvrtcCreateProgram(&prog, csrc, cname); r != 0 {
		return nil, nil, "", fail("creating program", r, "")
	}
	defer C.slate_nvrtcDestroyProgram(&prog)

	cexprs := make([]*C.char, len(exprs))
	for i, e := range exprs {
		cexprs[i] = C.CString(e)
		defer C.free(unsafe.Pointer(cexprs[i]))
		if r := C.slate_nvrtcAddNameExpression(prog, cexprs[i]); r != 0 {
			return nil, nil, "", fail("adding name expression "+strconv.Quote(e)+" to", r, "")
		}
	}

	// The option array lives in C memory: a Go slice of C pointers is fine
	// to pass, but keeping the pattern uniform with the strings is simpler.
	copts := (**C.char)(C.malloc(C.size_t(len(opts)+1) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	defer C.free(unsafe.Pointer(copts))
	optv := unsafe.Slice(copts, len(opts)+1)
	for i, o := range opts {
		optv[i] = C.CString(o)
		defer C.free(unsafe.Pointer(optv[i]))
	}
	optv[len(opts)] = nil

	rc := C.slate_nvrtcCompileProgram(prog, C.int(len(opts)), copts)
	log = programLog(prog)
	if rc != 0 {
		return nil, nil, log, fail("compiling", rc, log)
	}

	lowered = make(map[string]string, len(exprs))
	for i, e := range exprs {
		var l *C.char
		if r := C.slate_nvrtcGetLoweredName(prog, cexprs[i], &l); r != 0 || l == nil {
			return nil, nil, log, fail("lowering name "+strconv.Quote(e)+" in", r, log)
		}
		lowered[e] = C.GoString(l)
	}

	var n C.size_t
	if r := C.slate_nvrtcGetCUBINSize(prog, &n); r != 0 {
		return nil, nil, log, fail("getting CUBIN size of", r, log)
	}
	if n == 0 {
		return nil, nil, log, fmt.Errorf("nvrtc: %s for %s produced no CUBIN (is %s a real architecture?)", name, arch, arch)
	}
	cubin = make([]byte, int(n))
	if r := C.slate_nvrtcGetCUBIN(prog, (*C.char)(unsafe.Pointer(&cubin[0]))); r != 0 {
		return nil, nil, log, fail("getting CUBIN of", r, log)
	}
	return cubin, lowered, log, nil
}

func programLog(prog C.nvrtcProgram) string {
	var n C.size_t
	if C.slate_nvrtcGetProgramLogSize(prog, &n) != 0 || n <= 1 {
		return ""
	}
	buf := make([]byte, int(n))
	if C.slate_nvrtcGetProgramLog(prog, (*C.char)(unsafe.Pointer(&buf[0]))) != 0 {
		return ""
	}
	return strings.TrimRight(string(buf), "\x00")
}
