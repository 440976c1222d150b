package runtime

// The parts of the runtime's API that do not need cgo: error and option
// types, device information, environment settings. They build with
// CGO_ENABLED=0 too, where nocgo.go stands in for what calls the driver.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// From cuerr.go.

const (
	cudaSuccess            = 0
	cudaErrInvalidValue    = 1
	cudaErrNotReady        = 600
	cudaErrNotSupported    = 801
	CodeIllegalAddress     = 700 // CUDA_ERROR_ILLEGAL_ADDRESS
	CodeLaunchTimeout      = 702 // CUDA_ERROR_LAUNCH_TIMEOUT
	CodeAssert             = 710 // CUDA_ERROR_ASSERT
	CodeHardwareStackError = 714 // CUDA_ERROR_HARDWARE_STACK_ERROR
	CodeIllegalInstruction = 715 // CUDA_ERROR_ILLEGAL_INSTRUCTION
	CodeMisalignedAddress  = 716 // CUDA_ERROR_MISALIGNED_ADDRESS
	CodeInvalidAddrSpace   = 717 // CUDA_ERROR_INVALID_ADDRESS_SPACE
	CodeInvalidPC          = 718 // CUDA_ERROR_INVALID_PC
	CodeLaunchFailed       = 719 // CUDA_ERROR_LAUNCH_FAILED
	CodeECCUncorrectable   = 214 // CUDA_ERROR_ECC_UNCORRECTABLE
)

type CUDAError struct {
	Op   string // driver function, e.g. "cuMemAlloc_v2"
	Code int
	Name string
	Desc string
}

func (e *CUDAError) Error() string {
	return fmt.Sprintf("%s: %s (%d): %s", e.Op, e.Name, e.Code, e.Desc)
}

func (e *CUDAError) Sticky() bool {
	switch e.Code {
	case CodeIllegalAddress, CodeLaunchTimeout, CodeAssert, CodeHardwareStackError,
		CodeIllegalInstruction, CodeMisalignedAddress, CodeInvalidAddrSpace, CodeInvalidPC,
		CodeLaunchFailed, CodeECCUncorrectable:
		return true
	}
	return false
}

func IsCUDAError(err error, code int) bool {
	var ce *CUDAError
	return errors.As(err, &ce) && ce.Code == code
}

// From device.go.

type DeviceInfo struct {
	Ordinal            int
	Name               string
	SMs                int
	Major, Minor       int    // compute capability
	TotalMem           uint64 // bytes
	MemClockKHz        int    // peak memory clock; 0 if the driver does not report it
	BusWidthBits       int
	ClockKHz           int
	MaxThreadsPerBlock int
	MaxThreadsPerSM    int
	MaxSharedOptin     int // bytes of shared memory per block with opt-in
	MaxSharedPerSM     int // bytes of shared memory per SM; 0 if not reported
	MaxRegistersPerSM  int // 32-bit registers per SM; 0 if not reported
	MaxBlocksPerSM     int // resident blocks per SM; 0 if not reported
	L2Bytes            int
	DriverVersion      int // e.g. 13000
}

func (i DeviceInfo) Arch() string { return fmt.Sprintf("sm_%d%d", i.Major, i.Minor) }

func (i DeviceInfo) PeakBandwidth() float64 {
	return 2 * float64(i.MemClockKHz) * 1e3 * float64(i.BusWidthBits) / 8
}

func (i DeviceInfo) String() string {
	return fmt.Sprintf("%s (device %d, %s, %d SMs, %.1f GiB, %.2f TB/s peak, driver %d.%d)",
		i.Name, i.Ordinal, i.Arch(), i.SMs, float64(i.TotalMem)/(1<<30), i.PeakBandwidth()/1e12,
		i.DriverVersion/1000, i.DriverVersion%1000/10)
}

var ErrClosed = errors.New("runtime: device is closed")

type Plain interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

func sliceBytes[T Plain](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

func reflectBytes(w []uint64) []byte { return sliceBytes(w) }

// From dl.go.

const (
	// EnvLibCUDA is the full path of libcuda.so.1. When set, it is the only
	// candidate: an explicit setting that does not work is an error rather
	// than a silent fallback to some other driver.
	EnvLibCUDA = "SLATEC_LIBCUDA"
	// EnvLibNVRTC is the full path of libnvrtc.so.*; exclusive like EnvLibCUDA.
	EnvLibNVRTC = "SLATEC_LIBNVRTC"
	// EnvCUDAPrefix is the project-local CUDA prefix that scripts/cuda-tools.sh
	// installs (the Makefile exports it); NVRTC and its headers are found under
	// $SLATEC_CUDA_PREFIX/nvidia/cu13.
	EnvCUDAPrefix = "SLATEC_CUDA_PREFIX"
	// EnvCUDAInclude lists extra include directories for NVRTC, separated by
	// ':' (for a system CUDA install, e.g. /usr/local/cuda/include).
	EnvCUDAInclude = "SLATEC_CUDA_INCLUDE"
)

type LibraryError struct {
	Library string   // "CUDA driver (libcuda.so.1)" or "NVRTC (libnvrtc.so)"
	Env     string   // variable to set
	Tried   []string // candidates in order
	Reasons []string // dlopen/dlsym message per candidate
}

func (e *LibraryError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "runtime: cannot load the %s; tried:", e.Library)
	for i, t := range e.Tried {
		fmt.Fprintf(&b, "\n  %s: %s", t, e.Reasons[i])
	}
	fmt.Fprintf(&b, "\nset %s to the library's full path", e.Env)
	if e.Env == EnvLibNVRTC {
		fmt.Fprintf(&b, ", or %s to a prefix made by scripts/cuda-tools.sh", EnvCUDAPrefix)
	}
	return b.String()
}

func (e *LibraryError) Summary() string {
	return fmt.Sprintf("cannot load the %s (tried %s; set %s)", e.Library, strings.Join(e.Tried, ", "), e.Env)
}

// From job.go.

var (
	// ErrJobFinished: the job has ended (a Resize or Cancel came too late).
	ErrJobFinished = errors.New("runtime: job already finished")
	// ErrCanceled: Cancel stopped the job before all its logical blocks ran.
	ErrCanceled = errors.New("runtime: job canceled")
	// ErrNoDeferredGrow: a job cannot arm a deferred grow (a native launch,
	// or an executor without them); the scheduler then grows when the host
	// notices the end.
	ErrNoDeferredGrow = errors.New("runtime: no deferred grows for this job")
)

type ResizeStats struct {
	From, To SMRange
	// Drain is retreat-to-drained latency: from the retreat flag landing in
	// device memory (event after its copy on the control stream) to the
	// last worker of the old launch exiting (event on the job stream). It
	// is about one task's duration.
	Drain time.Duration
	// Gap is drained-to-relaunch: from the old launch's end to the new
	// launch being issued on the job stream (after clearing the flag). The
	// relaunch is queued before the drain, so no host round trip is in it;
	// the hardware's launch latency (a few us) comes on top.
	Gap time.Duration
	// Host is how long Resize waited for the drain after queuing it.
	Host time.Duration
	// Grow: To contains From, and the job grew without a drain (one more
	// launch on the added SMs beside the running one); Drain and Gap are
	// zero and Host is the time to queue the launch.
	Grow bool
	// Deferred: a grow the GPU started at another job's end (GrowAtEnd),
	// adopted by this Resize; Host is the time to adopt it.
	Deferred bool
}

type JobStats struct {
	Launches int           // 1 + relaunches (resizes and respawns)
	Resizes  []ResizeStats // in order
	// Respawns counts relaunches on the same range after a launch whose
	// workers all landed outside a busy range (see Job.respawnIfStarved).
	Respawns int
	// GPUTime is first launch to last launch end (valid once the job
	// succeeded or was canceled).
	GPUTime time.Duration
	// Start and End are the job's first launch start and last launch end
	// from GPU stamps, on the host's clock (Device.EnableClock; zero
	// without it). Unlike GPUTime they are comparable across jobs.
	Start, End time.Time
}

type LaunchOption func(*launchOpts)

type launchOpts struct {
	iters int
	name  string
	after Predecessor
	waves int
}

func WithIters(n int) LaunchOption { return func(o *launchOpts) { o.iters = n } }

func WithName(s string) LaunchOption { return func(o *launchOpts) { o.name = s } }

// WithWaves makes each launch of the job on a partial SM range n whole
// waves of workers instead of one (n >= 1; 0 keeps one). The workers that
// land outside the range exit at once; while the range's SMs are still
// busy (a partner's workers leaving them), those exits can use up a
// one-wave launch before every slot of the range got a worker, and the
// later waves, queued in the hardware, fill such slots. The cost is the
// later waves' dispatch and exit at the launch's end. For measuring that
// effect (slatec bench --probe).
func WithWaves(n int) LaunchOption { return func(o *launchOpts) { o.waves = n } }

// WithAfter starts the job on the GPU only when prev's launches queued so
// far have ended (stream order, no host round trip): how a scheduler runs
// one job after another without the GPU idling while the host notices the
// first one's end. prev is a *Job or a *NativeLaunch; LaunchNative takes
// the option too. A later resize of a job prev does not move the start:
// the job then starts when prev's old launch drains. Nil, or a launch whose
// resources are gone (it ended), means no wait.
func WithAfter(prev Predecessor) LaunchOption { return func(o *launchOpts) { o.after = prev } }

// Predecessor is a launch that another can follow in GPU order
// (WithAfter): a *Job or a *NativeLaunch.
type Predecessor interface{ predecessor() }

func (*Job) predecessor()          {}
func (*NativeLaunch) predecessor() {}

// From module.go.

type FuncAttrs struct {
	MaxThreadsPerBlock int
	StaticShared       int // bytes
	LocalBytes         int // per thread (spills)
	Registers          int
	BinaryVersion      int // e.g. 90
}

// From nvrtc.go.

type NVRTCError struct {
	Op   string // NVRTC function or step
	File string // the program name given to NVRTC
	Arch string
	Code int
	Msg  string // NVRTC's text for Code
	Log  string
}

func (e *NVRTCError) Error() string {
	s := fmt.Sprintf("nvrtc: %s %s for %s: %s (%d)", e.Op, e.File, e.Arch, e.Msg, e.Code)
	if l := strings.TrimSpace(e.Log); l != "" {
		s += "\n" + l
	}
	return s
}

var archRE = regexp.MustCompile(`^sm_([0-9]{2,3})[af]?$`)

func checkArch(arch string) error {
	m := archRE.FindStringSubmatch(arch)
	if m == nil {
		return fmt.Errorf("runtime: bad architecture %q: want a real one like sm_90", arch)
	}
	cc, _ := strconv.Atoi(m[1])
	sup, err := NVRTCSupportedArchs()
	if err != nil {
		return err
	}
	if !slices.Contains(sup, cc) {
		return fmt.Errorf("runtime: this NVRTC cannot compile for %s (it supports %v)", arch, sup)
	}
	return nil
}

// DefaultIncludeDirs returns the include directories NVRTC gets when a
// Compiler names none: each directory of $SLATEC_CUDA_INCLUDE, then
// $SLATEC_CUDA_PREFIX/nvidia/cu13/include, then the system toolkit's
// include directory ($CUDA_PATH, else $CUDA_HOME, else /usr/local/cuda),
// each followed by its cccl subdirectory (the CUDA headers, e.g.
// cooperative_groups.h, and CCCL's cub/thrust/libcu++, which CUDA 13
// installs under include/cccl). Directories that do not exist are left
// out, so they do not perturb the cache key.
func DefaultIncludeDirs() []string {
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv(EnvCUDAInclude)) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	if pre := os.Getenv(EnvCUDAPrefix); pre != "" {
		inc := filepath.Join(pre, "nvidia", "cu13", "include")
		dirs = append(dirs, inc, filepath.Join(inc, "cccl"))
	}
	// One system toolkit: headers of two CUDA versions must not mix.
	for _, root := range []string{os.Getenv("CUDA_PATH"), os.Getenv("CUDA_HOME"), "/usr/local/cuda"} {
		if root == "" {
			continue
		}
		inc := filepath.Join(root, "include")
		if st, err := os.Stat(inc); err == nil && st.IsDir() {
			dirs = append(dirs, inc, filepath.Join(inc, "cccl"))
			break
		}
	}
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if slices.Contains(out, d) {
			continue
		}
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// From module.go.

func checkFrame(slots []slot, l ParamLayout) error {
	if slots[0] != (slot{0, 8}) || slots[1] != (slot{cfgParamOffset, CfgSize}) {
		return fmt.Errorf("the first two parameters are at %v and %v, want slate_ctl* at {0 8} and slate_cfg at {%d %d}: "+
			"not a worker of this ABI (docs/ABI.md)", slots[0], slots[1], cfgParamOffset, CfgSize)
	}
	prevEnd := userParamBase
	for i, p := range l.Params {
		s := slots[workerPrefixParams+i]
		if p.Size > 0 && s.size != p.Size {
			return fmt.Errorf("parameter %d (%s %s): the driver says %d bytes, the layout says %d", i, p.CType, p.Name, s.size, p.Size)
		}
		if p.Align > 0 && s.off != alignUp(prevEnd, p.Align) {
			return fmt.Errorf("parameter %d (%s %s): the driver puts it at offset %d, the layout implies %d (align %d)",
				i, p.CType, p.Name, s.off, alignUp(prevEnd, p.Align), p.Align)
		}
		if s.off < prevEnd {
			return fmt.Errorf("parameter %d (%s %s): offset %d overlaps the previous parameter", i, p.CType, p.Name, s.off)
		}
		prevEnd = s.off + s.size
	}
	return nil
}
