package profile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/runtime"
)

// GPU tests need libcuda.so.1, a device and NVRTC, and skip (saying why)
// without them. On the GPU machine:
//
//	here:  go test -c -o .gpu/profile.test ./profile
//	there: cd profile && ../.gpu/profile.test -test.run GPU -test.v

func needDevice(t *testing.T) Device {
	t.Helper()
	dev, err := OpenCUDA(0, &runtime.Compiler{CacheDir: t.TempDir()})
	if err != nil {
		var le *runtime.LibraryError
		switch {
		case errors.As(err, &le):
			t.Skip("no CUDA driver: " + le.Summary())
		case NoDriver(err) || strings.Contains(err.Error(), "no CUDA device"):
			t.Skip("no CUDA driver: " + err.Error())
		}
		t.Fatalf("opening the GPU: %v", err)
	}
	if _, _, err := runtime.NVRTCVersion(); err != nil {
		dev.Close()
		t.Skipf("NVRTC not available: %v", err)
	}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Errorf("closing the device: %v", err)
		}
	})
	return dev
}

// Profiles the triad over a few SM counts: every R[m] is positive, the
// curve falls (roughly: a step may be noisy, not a trend), more SMs are
// clearly faster than one, and bandwidth stays physical.
func TestGPUProfileTriad(t *testing.T) {
	dev := needDevice(t)
	info := dev.Info()
	t.Logf("device: %+v", info)
	const n = 1 << 24
	args, err := ParseArgs(fmt.Sprintf("buf:f32:%d,buf:f32:%d,out:f32:%d,i32:%d,f32:2.5", n, n, n, n))
	require.NoError(t, err)
	p := prepare(t, "triad")
	bound, err := CheckArgs(args, p.Layout)
	require.NoError(t, err)
	sw, err := ParseSweep(fmt.Sprintf("1,2,4,...,%d", info.SMs))
	if info.SMs < 4 {
		sw, err = ParseSweep("all")
	}
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := Profile(ctx, dev, Request{
		Kernel: p, Args: bound, SMs: sw, Reps: 3, BytesPerBlock: 3 * 4 * 256, RunTimeout: 30 * time.Second,
		Launch: Launch{Grid: runtime.D1(n / 256), Block: runtime.D1(256)},
	})
	require.NoError(t, err)
	require.NoError(t, res.Set.Validate())
	k := res.Kernel()
	data, err := res.Set.Marshal()
	require.NoError(t, err)
	t.Logf("profile:\n%s", data)
	t.Logf("class %s (%s), attrs %+v", k.Class, res.ClassReason, res.Attrs)

	assert.Positive(t, k.Registers)
	assert.Positive(t, k.BlocksPerSM)
	assert.Equal(t, uint64(3*4*n), k.GlobalBytes)
	require.NotEmpty(t, k.RMs)
	for i, s := range k.RMs {
		assert.Positive(t, s.V, "R[%d]", s.M)
		if i > 0 {
			prev := k.RMs[i-1]
			assert.LessOrEqual(t, s.V, prev.V*1.25, "R[%d] = %v should not be well above R[%d] = %v", s.M, s.V, prev.M, prev.V)
		}
	}
	first, last := k.RMs[0], k.RMs[len(k.RMs)-1]
	if last.M >= 4*first.M {
		assert.Less(t, last.V, first.V/2, "R[%d] = %v should be well below R[%d] = %v", last.M, last.V, first.M, first.V)
	}
	for _, s := range k.BWGBs {
		assert.Positive(t, s.V, "B[%d]", s.M)
		assert.Less(t, s.V, 1.3*info.PeakBWGBs, "B[%d] above the device's peak: the timing is wrong", s.M)
	}
}

// A block larger than the device allows is refused as a flag problem
// before anything runs.
func TestGPUBlockTooLarge(t *testing.T) {
	dev := needDevice(t)
	args, err := ParseArgs("buf:f32:1K,buf:f32:1K,out:f32:1K,i32:1K,f32:1")
	require.NoError(t, err)
	p := prepare(t, "triad")
	bound, err := CheckArgs(args, p.Layout)
	require.NoError(t, err)
	sw, _ := ParseSweep("1")
	_, err = Profile(context.Background(), dev, Request{Kernel: p, Args: bound, SMs: sw, Reps: 1,
		Launch: Launch{Grid: runtime.D1(4), Block: runtime.D1(2048)}})
	var fe *FlagError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "--block", fe.Flag)
}
