package corun

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/profile"
	"github.com/slatec/slatec/runtime"
)

// The values the CUDA device passes have the Go types the runtime wants
// for each parameter of the worker (runtime.CTypeInfo: pointers take
// DevicePtr, int int32, float float32, unsigned int uint32).
func TestLaunchArgs(t *testing.T) {
	for _, k := range Catalogue() {
		t.Run(k.Name, func(t *testing.T) {
			bufs := make([]runtime.DevicePtr, len(k.Buffers))
			for i := range bufs {
				bufs[i] = runtime.DevicePtr(0x1000 * (i + 1))
			}
			args, err := LaunchArgs(k, bufs)
			require.NoError(t, err)
			prep, _, err := profile.Prepare("corun.cu", KernelSource, k.Name, nil)
			require.NoError(t, err)
			require.Len(t, args, len(prep.Layout.Params))
			for i, p := range prep.Layout.Params {
				ti, ok := runtime.CTypeInfo(p.CType)
				require.True(t, ok, p.CType)
				want := map[runtime.TypeKind]string{runtime.KindPointer: "runtime.DevicePtr", runtime.KindFloat: "float32"}[ti.Kind]
				if ti.Kind == runtime.KindSigned {
					want = fmt.Sprintf("int%d", 8*ti.Size)
				}
				if ti.Kind == runtime.KindUnsigned {
					want = fmt.Sprintf("uint%d", 8*ti.Size)
				}
				assert.Equal(t, want, fmt.Sprintf("%T", args[i]), "parameter %d (%s %s)", i, p.CType, p.Name)
			}
		})
	}
	_, err := LaunchArgs(&Kernel{Name: "x", Args: []string{"f64:1"}}, nil)
	assert.ErrorContains(t, err, "unsupported type f64")
	_, err = LaunchArgs(&Kernel{Name: "x", Args: []string{"buf:2"}}, nil)
	assert.ErrorContains(t, err, "no such buffer")
	_, err = LaunchArgs(&Kernel{Name: "x", Args: []string{"i32:1e99"}}, nil)
	assert.Error(t, err)
}

// Every catalogue kernel has a loaded worker on the CUDA device.
func TestKernelHandlesCoverCatalogue(t *testing.T) {
	var want, got []string
	for _, k := range Catalogue() {
		want = append(want, k.Name)
	}
	for n := range kernelHandles(&Kernels{}) {
		got = append(got, n)
	}
	sort.Strings(want)
	sort.Strings(got)
	assert.Equal(t, want, got)
}

func TestNoGPU(t *testing.T) {
	assert.True(t, NoGPU(&runtime.LibraryError{Library: "CUDA driver (libcuda.so.1)"}))
	assert.True(t, NoGPU(fmt.Errorf("wrapped: %w", &runtime.CUDAError{Op: "cuInit", Code: 100})))
	assert.False(t, NoGPU(&runtime.CUDAError{Op: "cuLaunchKernel", Code: 700}))
	assert.False(t, NoGPU(errors.New("disk full")))
}

// Without a GPU (this machine), OpenCUDA fails with an error NoGPU
// recognises; with one it opens.
func TestOpenCUDAWithoutGPU(t *testing.T) {
	d, err := OpenCUDA(0, nil, 0)
	if err == nil {
		d.Close()
		t.Skip("a GPU is present")
	}
	assert.True(t, NoGPU(err), "%v", err)
}

// The embedded persistent source compiles with NVRTC for sm_90 with the
// CUDA headers (wmma), and every worker and native kernel is found by its
// name expression: what OpenCUDA and the green and native paths ask for
// (no GPU needed; skipped where NVRTC is not installed).
func TestKernelsCompileWithNVRTC(t *testing.T) {
	if _, _, err := runtime.NVRTCVersion(); err != nil {
		t.Skipf("NVRTC not available: %v", err)
	}
	dirs := runtime.DefaultIncludeDirs()
	if len(dirs) == 0 {
		t.Skip("no CUDA headers for NVRTC (make cuda-tools, or SLATEC_CUDA_INCLUDE)")
	}
	var exprs []string
	for _, k := range Catalogue() {
		exprs = append(exprs, k.Name+"__slate", k.Name)
	}
	c := &runtime.Compiler{NoCache: true, IncludeDirs: dirs}
	comp, err := c.Compile(runtime.CompileRequest{Name: "corun.cu", Source: kernelsSource, Arch: "sm_90", NameExpressions: exprs})
	require.NoError(t, err)
	assert.NotEmpty(t, comp.CUBIN)
	for _, e := range exprs {
		assert.NotEmpty(t, comp.Lowered[e], e)
	}
}
