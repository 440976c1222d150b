package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/profile"
	"github.com/slatec/slatec/runtime"
)

// cliFakeDevice is a GPU stand-in for the command's tests: a streaming
// kernel at 100 GB/s per SM up to 3000 GB/s.
type cliFakeDevice struct {
	info   plan.Device
	bytes  float64
	loaded *profile.Prepared
	launch profile.Launch
	runs   int
	closed bool
}

func (d *cliFakeDevice) Info() plan.Device { return d.info }
func (d *cliFakeDevice) Close() error      { d.closed = true; return nil }
func (d *cliFakeDevice) Load(_ context.Context, k *profile.Prepared, l profile.Launch, _ []profile.Bound) (profile.Target, error) {
	d.loaded, d.launch = k, l
	d.bytes = float64(l.Grid.Count()) * 3072
	return cliFakeTarget{d}, nil
}

type cliFakeTarget struct{ d *cliFakeDevice }

func (t cliFakeTarget) Run(_ context.Context, m int) (time.Duration, error) {
	t.d.runs++
	bw := min(float64(m)*100, 3000) * 1e9
	return time.Duration(t.d.bytes / bw * float64(time.Second)), nil
}
func (t cliFakeTarget) Attrs() profile.KernelAttrs {
	return profile.KernelAttrs{Registers: 18, StaticShared: 0, BlocksPerSM: 8}
}
func (t cliFakeTarget) Close() error { return nil }

func fakeH100() plan.Device {
	return plan.Device{Name: "NVIDIA H100 80GB HBM3", SMs: 132, PeakBWGBs: 3352.3, MemBytes: 85029158912, MaxThreadsPerSM: 2048}
}

// withFakeGPU makes the profile command use a fake device.
func withFakeGPU(t *testing.T, info plan.Device) *cliFakeDevice {
	t.Helper()
	dev := &cliFakeDevice{info: info}
	old := openProfileDevice
	openProfileDevice = func(int, *runtime.Compiler) (profile.Device, error) { return dev, nil }
	t.Cleanup(func() { openProfileDevice = old })
	return dev
}

func triadFile(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../profile/testdata/triad.cu")
	require.NoError(t, err)
	return write(t, t.TempDir(), "triad.cu", string(src))
}

const triadArgs = "buf:f32:16M,buf:f32:16M,out:f32:16M,i32:16M,f32:2.5"

func TestProfileUsageErrorsExit2(t *testing.T) {
	withFakeGPU(t, fakeH100())
	f := triadFile(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"profile"}, "accepts 1 arg"},
		{[]string{"profile", f, "--args", triadArgs}, "--kernel is required"},
		{[]string{"profile", f, "--kernel", "triad"}, "--args is required"},
		{[]string{"profile", f, "--kernel", "triad", "--args", "buf:f33:1"}, `unknown element type "f33"`},
		{[]string{"profile", f, "--kernel", "triad", "--args", "buf:f32:4,buf:f32:4,out:f32:4,i32:4"}, "4 items for 5 parameters"},
		{[]string{"profile", f, "--kernel", "triad", "--args", "buf:f32:4,buf:f32:4,out:f32:4,i64:4,f32:1"}, "i64 is 8 bytes, the parameter 4; use i32:<value>"},
		{[]string{"profile", f, "--kernel", "triad", "--args", "buf:f32:4,i32:4,out:f32:4,i32:4,f32:1"}, "a pointer takes a buffer"},
		{[]string{"profile", f, "--kernel", "nope", "--args", triadArgs}, "has no kernel of that name"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--sms", "1,x"}, `"x" is not a positive SM count`},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--sms", "1,2,200"}, "200 SMs asked for, the device has 132"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--block", "2048"}, "at most 1024"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--block", "0"}, "--block"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--grid", "abc"}, "--grid"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--shmem", "lots"}, "--shmem"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--bytes-per-block", "-3"}, "--bytes-per-block"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--reps", "0"}, "--reps must be at least 1"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--iters", "-1"}, "--iters"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--peak-bw", "-1"}, "--peak-bw"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--append"}, "--append adds to a profile file: give -o FILE"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--plot", "-"}, "both go to stdout"},
		{[]string{"profile", f, "--kernel", "triad", "--args", "i32:1,i32:1,i32:1,i32:1,f32:1", "--grid", "0"}, "--grid"},
		{[]string{"profile", f, "--kernel", "ns::scale", "--args", "f64:1,f64:1,u64:1"}, "a pointer takes a buffer"},
		{[]string{"profile", f, "--kernel", "block_sum", "--args", "buf:f32:4,out:f32:1,i32:4", "--reps", "x"}, "invalid argument"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--bogus"}, "unknown flag"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--name", " "}, "--name must not be blank"},
		{[]string{"profile", f, "--kernel", "triad", "--args", triadArgs, "--timeout", "-1s"}, "--timeout"},
	} {
		code, out, errs := slatec(t, "", tc.args...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, errs)
		assert.Contains(t, errs, tc.want, "%v", tc.args)
		assert.Empty(t, out, "%v", tc.args)
	}
}

func TestProfileInputErrorsExit1(t *testing.T) {
	withFakeGPU(t, fakeH100())
	f := triadFile(t)
	dir := t.TempDir()
	refused := write(t, dir, "refused.cu", refusedKernel)

	code, _, errs := slatec(t, "", "profile", filepath.Join(dir, "missing.cu"), "--kernel", "k", "--args", "i32:1")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "missing.cu")

	code, _, errs = slatec(t, "", "profile", refused, "--kernel", "gridwide", "--args", "buf:i32:4")
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "refused.cu:")
	assert.Contains(t, errs, "error")

	// A template needs an instance (a usage error, like an unknown kernel).
	code, _, errs = slatec(t, "", "profile", f, "--kernel", "fill", "--args", "buf:f32:4,f32:1,i32:4")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "fill is a template (T); name an instance")

	broken := write(t, dir, "broken.json", `{"format": "slatec-profile/1", "device": {"name": "x", "sms": 0}}`)
	code, _, errs = slatec(t, "", "profile", f, "--kernel", "triad", "--args", triadArgs, "-o", broken, "--append")
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "broken.json: error: kernels: missing")

	other := write(t, dir, "other.json", `{"format": "slatec-profile/1",
  "device": {"name": "NVIDIA H200", "sms": 132, "peak_bw_gbs": 4800, "mem_bytes": 150754820096},
  "kernels": [{"name": "a", "blocks": 1, "threads_per_block": 32, "registers": 8, "shared_bytes": 0, "global_bytes": 0,
    "r_ms": {"1": 1}, "bw_gbs": {"1": 0}}]}`)
	before, err := os.ReadFile(other)
	require.NoError(t, err)
	code, _, errs = slatec(t, "", "profile", f, "--kernel", "triad", "--args", triadArgs, "-o", other, "--append")
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "the profile file is for NVIDIA H200")
	after, err := os.ReadFile(other)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "a refused append leaves the file alone")

	// No GPU: a clear input error, not a crash.
	old := openProfileDevice
	defer func() { openProfileDevice = old }()
	if d, err := runtime.Open(0); err != nil && profile.NoDriver(err) {
		// The real device, on a machine without a driver.
		openProfileDevice = func(o int, c *runtime.Compiler) (profile.Device, error) { return profile.OpenCUDA(o, c) }
		code, _, errs = slatec(t, "", "profile", f, "--kernel", "triad", "--args", triadArgs)
		assert.Equal(t, 1, code, errs)
		assert.Contains(t, errs, "no GPU to profile on")
	} else if err == nil {
		d.Close()
	}
	openProfileDevice = func(int, *runtime.Compiler) (profile.Device, error) {
		return nil, &runtime.LibraryError{Library: "CUDA driver (libcuda.so.1)", Env: "SLATEC_LIBCUDA",
			Tried: []string{"libcuda.so.1"}, Reasons: []string{"cannot open shared object file"}}
	}
	code, _, errs = slatec(t, "", "profile", f, "--kernel", "triad", "--args", triadArgs)
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "no GPU to profile on")
	assert.Contains(t, errs, "libcuda.so.1")

	openProfileDevice = func(int, *runtime.Compiler) (profile.Device, error) { return nil, errors.New("device 3 is busy") }
	code, _, errs = slatec(t, "", "profile", f, "--kernel", "triad", "--args", triadArgs)
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "device 3 is busy")
}

func TestProfileToStdout(t *testing.T) {
	dev := withFakeGPU(t, fakeH100())
	f := triadFile(t)
	code, out, errs := slatec(t, "", "profile", f, "--kernel", "triad", "--args", triadArgs,
		"--sms", "step:32", "--reps", "3", "--bytes-per-block", "3K")
	require.Equal(t, 0, code, errs)
	ps, err := plan.ParseProfile([]byte(out))
	require.NoError(t, err, out)
	require.Len(t, ps.Kernels, 1)
	k := ps.Kernels[0]
	assert.Equal(t, "triad", k.Name)
	assert.Equal(t, int64(65536), k.Blocks, "default grid: one thread per element")
	assert.Equal(t, 256, k.ThreadsPerBlock)
	assert.Equal(t, 18, k.Registers)
	assert.Equal(t, uint64(3*64<<20), k.GlobalBytes)
	var ms []int
	for _, s := range k.RMs {
		ms = append(ms, s.M)
	}
	assert.Equal(t, []int{1, 32, 64, 96, 128, 132}, ms)
	assert.InDelta(t, 3000, k.B(132), 0.5)
	assert.Equal(t, plan.HM, k.Class)
	assert.Equal(t, 6*4, dev.runs, "one warm-up and 3 runs per m")
	assert.True(t, dev.closed)
	assert.Equal(t, "triad__slate", dev.loaded.Worker)

	// Not a terminal: one line per m, then the summary.
	assert.Contains(t, errs, "no --grid: 65536 blocks of 256 threads")
	assert.Equal(t, 6, strings.Count(errs, "slatec: m="), errs)
	assert.Contains(t, errs, "slatec: m=132 (6/6): R ")
	assert.Contains(t, errs, "B 3000.0 GB/s")
	assert.Contains(t, errs, "class H_M (bw 89% of peak)")
	assert.Contains(t, errs, "B[132] = 3000.0 GB/s (89% of the 3352 GB/s peak)")
}

func TestProfileTemplateInstance(t *testing.T) {
	dev := withFakeGPU(t, fakeH100())
	f := triadFile(t)
	code, out, errs := slatec(t, "", "profile", f, "--kernel", "fill<float>", "--args", "out:f32:64K,f32:1.5,i32:64K",
		"--sms", "step:64", "--reps", "1")
	require.Equal(t, 0, code, errs)
	ps, err := plan.ParseProfile([]byte(out))
	require.NoError(t, err, out)
	require.Len(t, ps.Kernels, 1)
	assert.Equal(t, "fill<float>", ps.Kernels[0].Name, "the profile names the instance, as slatec merge and serve do")
	assert.Equal(t, "fill__slate<float>", dev.loaded.Worker)

	// The instance's parameter types are checked: T = float takes f32.
	code, _, errs = slatec(t, "", "profile", f, "--kernel", "fill<float>", "--args", "out:f64:64K,f32:1.5,i32:64K")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "float")
}

func TestProfileAppendAndPlot(t *testing.T) {
	dev := withFakeGPU(t, fakeH100())
	f := triadFile(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "profiles.json")
	svg := filepath.Join(dir, "triad.svg")

	// --append to a file that does not exist yet starts it.
	code, stdout, errs := slatec(t, "", "profile", f, "--kernel", "triad", "--args", triadArgs, "--grid", "64K", "--block", "256",
		"--sms", "1,2,4,...,132", "--reps", "1", "-o", out, "--append", "--plot", svg, "--bytes-per-block", "3072")
	require.Equal(t, 0, code, errs)
	assert.Empty(t, stdout)
	assert.Contains(t, errs, "does not exist yet")
	assert.Contains(t, errs, "wrote triad in "+out)
	b, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<svg")
	assert.Contains(t, string(b), "speedup R[1]/R[m]")

	// Another kernel is added after it, under its own name.
	code, _, errs = slatec(t, "", "profile", f, "--kernel", "block_sum", "--args", "buf:f32:1M,out:f32:4K,i32:1M",
		"--grid", "4096", "--sms", "1,132", "--reps", "1", "-o", out, "--append")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "added block_sum in "+out+" (2 kernel(s))")
	assert.Contains(t, errs, "no --bytes-per-block")

	// Profiling triad again replaces it in place, and a --name adds a copy.
	code, _, errs = slatec(t, "", "profile", f, "--kernel", "triad", "--args", triadArgs, "--sms", "step:66", "--reps", "1", "-o", out, "--append")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "replaced triad in "+out)
	code, _, errs = slatec(t, "", "profile", f, "--kernel", "ns::scale", "--args", "buf:f64:1M,f64:2,u64:1M", "--name", "scale_1M",
		"--sms", "all", "--reps", "1", "-o", out, "--append")
	require.Equal(t, 0, code, errs)

	ps, err := plan.ReadProfileFile(out)
	require.NoError(t, err)
	var names []string
	for _, k := range ps.Kernels {
		names = append(names, k.Name)
	}
	assert.Equal(t, []string{"triad", "block_sum", "scale_1M"}, names)
	assert.Len(t, ps.Kernels[0].RMs, 3, "step:66 on 132 SMs: 1, 66, 132")
	assert.Len(t, ps.Kernels[2].RMs, 132)
	// Sustained bandwidth: the triad's 3000 GB/s (above 87% of 3352.3), kept
	// across the appends of kernels that move less.
	got := ps.Device
	assert.InDelta(t, 3000, got.SustainedBWGBs, 0.1)
	got.SustainedBWGBs = 0
	assert.Equal(t, dev.info, got)

	// The file is what slatec plan reads.
	code, planOut, errs := slatec(t, "", "plan", "--algo", "slate", out)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, planOut, "triad")

	// Without --append, -o overwrites.
	code, _, errs = slatec(t, "", "profile", f, "--kernel", "block_sum", "--args", "buf:f32:1M,out:f32:4K,i32:1M", "--sms", "1,132", "--reps", "1", "-o", out)
	require.Equal(t, 0, code, errs)
	ps, err = plan.ReadProfileFile(out)
	require.NoError(t, err)
	assert.Len(t, ps.Kernels, 1)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary files left: %v", entries)
}

func TestProfileProgressBar(t *testing.T) {
	withFakeGPU(t, fakeH100())
	old := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = old }()
	f := triadFile(t)
	code, _, errs := slatec(t, "", "profile", f, "--kernel", "triad", "--args", triadArgs, "--sms", "1,2", "--reps", "2")
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, errs, "slatec: m=", "a terminal gets the bar, not lines")
	assert.Contains(t, errs, "6/6", "the bar counts runs (warm-up included): %q", errs)
	assert.Contains(t, errs, "class ")
}

func TestProfileHelp(t *testing.T) {
	code, out, _ := slatec(t, "", "profile", "--help")
	assert.Equal(t, 0, code)
	for _, w := range []string{"--kernel", "--args", "--sms", "--bytes-per-block", "--append", "--plot", "buf:<elem>:<count>"} {
		assert.Contains(t, out, w)
	}
}
