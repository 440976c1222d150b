package profile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/runtime"
)

func prepare(t *testing.T, kernel string) *Prepared {
	t.Helper()
	src, err := os.ReadFile("testdata/triad.cu")
	require.NoError(t, err)
	p, _, err := Prepare("testdata/triad.cu", src, kernel, nil)
	require.NoError(t, err)
	return p
}

func TestPrepare(t *testing.T) {
	for _, tc := range []struct {
		kernel, qualified, worker string
		ctypes                    []string
	}{
		{"triad", "triad", "triad__slate", []string{"const float* __restrict__", "const float* __restrict__", "float* __restrict__", "int", "float"}},
		{"block_sum", "block_sum", "block_sum__slate", []string{"const float*", "float*", "int"}},
		{"scale", "ns::scale", "ns::scale__slate", []string{"double*", "double", "unsigned long long"}},
		{"ns::scale", "ns::scale", "ns::scale__slate", []string{"double*", "double", "unsigned long long"}},
	} {
		p := prepare(t, tc.kernel)
		assert.Equal(t, tc.qualified, p.QualifiedName)
		assert.Equal(t, tc.worker, p.Worker)
		assert.Equal(t, tc.qualified, p.Native, "the kernel's own name expression")
		assert.Equal(t, "triad.cu", p.File)
		var got []string
		for _, pr := range p.Layout.Params {
			got = append(got, pr.CType)
			assert.Positive(t, pr.Size)
		}
		assert.Equal(t, tc.ctypes, got)
		assert.Contains(t, p.Source, "__global__ void")
		assert.Contains(t, p.Source, strings.TrimPrefix(tc.worker, "ns::"))
		assert.Contains(t, p.Source, "#ifndef __CUDACC_RTC__", "host code is fenced off for NVRTC")
	}
	// The source does not depend on the slatec build (CUBIN cache key).
	a, b := prepare(t, "triad"), prepare(t, "triad")
	assert.Equal(t, a.Source, b.Source)
}

func TestPrepareErrors(t *testing.T) {
	src, err := os.ReadFile("testdata/triad.cu")
	require.NoError(t, err)
	for _, tc := range []struct {
		kernel, want string
		usage        bool
	}{
		{"nope", "has no kernel of that name (kernels: triad, block_sum, ns::scale, fill)", true},
		{"fill", "fill is a template (T); name an instance, such as fill<T>", true},
		{"fill<float, int>", "fill has 1 template parameters (T), not 2", true},
		{"triad<float>", "triad is not a template", true},
		{"fill<", "want KERNEL<ARGS>", true},
	} {
		_, _, err := Prepare("triad.cu", src, tc.kernel, nil)
		var ke *KernelError
		require.True(t, errors.As(err, &ke), "%v", err)
		assert.Contains(t, err.Error(), tc.want)
		assert.Equal(t, tc.usage, ke.Usage)
	}
	// An instance: the worker's name expression and the parameter types
	// are the instance's.
	p, _, err := Prepare("triad.cu", src, "fill<double>", nil)
	require.NoError(t, err)
	assert.Equal(t, "fill__slate<double>", p.Worker)
	assert.Equal(t, "fill<double>", p.Native)
	assert.Equal(t, "fill<double>", p.Name)
	require.NotEmpty(t, p.Layout.Params)
	assert.Equal(t, "double*", p.Layout.Params[0].CType)
	assert.Equal(t, 8, p.Layout.Params[0].Size)

	amb := []byte("namespace a { __global__ void k(int* x) { x[0] = 1; } }\nnamespace b { __global__ void k(int* x) { x[0] = 2; } }\n")
	_, _, err = Prepare("amb.cu", amb, "k", nil)
	assert.ErrorContains(t, err, "ambiguous in amb.cu (a::k, b::k)")
	p, _, err = Prepare("amb.cu", amb, "b::k", nil)
	require.NoError(t, err)
	assert.Equal(t, "b::k__slate", p.Worker)
	assert.Equal(t, "b::k", p.Native)

	refused := []byte(`#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void gridwide(int* a) { cg::this_grid().sync(); a[0] = 1; }
__global__ void fine(int* a) { a[threadIdx.x] = 0; }
`)
	_, ds, err := Prepare("r.cu", refused, "gridwide", nil)
	assert.ErrorIs(t, err, ErrRefused)
	assert.True(t, ds.HasErrors())
	// Another kernel of the same file is not affected by the refusal.
	_, _, err = Prepare("r.cu", refused, "fine", nil)
	assert.NoError(t, err)

	// A body slatec cannot parse refuses that kernel, with a diagnostic.
	_, ds, err = Prepare("bad.cu", []byte("__global__ void k(int* a) { a[0] = ; }\n"), "k", nil)
	assert.ErrorIs(t, err, ErrRefused)
	require.True(t, ds.HasErrors())
	assert.Equal(t, "bad.cu", ds[0].File)
}

// The prepared source compiles with NVRTC and the worker is found by its
// name expression (no GPU needed; skipped where NVRTC is not installed).
func TestPreparedSourceCompilesWithNVRTC(t *testing.T) {
	if _, _, err := runtime.NVRTCVersion(); err != nil {
		t.Skipf("NVRTC not available: %v", err)
	}
	for _, k := range []string{"triad", "block_sum", "ns::scale"} {
		p := prepare(t, k)
		c := &runtime.Compiler{NoCache: true}
		comp, err := c.Compile(runtime.CompileRequest{Name: p.File, Source: p.Source, Arch: "sm_90", NameExpressions: []string{p.Worker}})
		require.NoError(t, err, k)
		assert.NotEmpty(t, comp.CUBIN)
		assert.NotEmpty(t, comp.Lowered[p.Worker], k)
	}
}

func triadRequest(t *testing.T, spec string) Request {
	t.Helper()
	p := prepare(t, "triad")
	args, err := ParseArgs(spec)
	require.NoError(t, err)
	bound, err := CheckArgs(args, p.Layout)
	require.NoError(t, err)
	sw, err := ParseSweep("1,2,4,...,132")
	require.NoError(t, err)
	return Request{Kernel: p, Launch: Launch{Grid: runtime.D1(65536), Block: runtime.D1(256)}, Args: bound, SMs: sw, BytesPerBlock: 3072}
}

const triadSpec = "buf:f32:16M,buf:f32:16M,out:f32:16M,i32:16M,f32:2.5"

func TestProfileMemoryBound(t *testing.T) {
	// 65536 blocks × 3 KiB = 201 MB; 110 GB/s per SM up to 4400 GB/s.
	dev := newFake(memBound(65536*3072, 110, 4400))
	dev.attrs = KernelAttrs{Registers: 16, StaticShared: 0, BlocksPerSM: 8}
	req := triadRequest(t, triadSpec)
	var events int
	req.Progress = func(Event) { events++ }
	res, err := Profile(context.Background(), dev, req)
	require.NoError(t, err)

	sms := []int{1, 2, 4, 8, 16, 32, 64, 128, 132}
	assert.Equal(t, len(sms)*(DefaultReps+1), events, "warm-up once, then 5 runs per m")
	for _, m := range sms {
		assert.Equal(t, DefaultReps+1, dev.runs[m], "m = %d", m)
	}
	assert.Equal(t, 1, dev.tgtClose, "the target is released")
	assert.Equal(t, req.Launch, dev.launch)

	k := res.Kernel()
	assert.Equal(t, "triad", k.Name)
	assert.Equal(t, int64(65536), k.Blocks)
	assert.Equal(t, 256, k.ThreadsPerBlock)
	assert.Equal(t, 16, k.Registers)
	assert.Equal(t, 0, k.SharedBytes)
	assert.Equal(t, 8, k.BlocksPerSM)
	assert.Equal(t, uint64(3*64<<20), k.GlobalBytes)
	require.Len(t, k.RMs, len(sms))
	for i, s := range k.RMs {
		assert.Equal(t, sms[i], s.M)
		want := float64(memBound(65536*3072, 110, 4400)(s.M, 0)) / 1e6
		assert.InDelta(t, want, s.V, 1e-6)
		assert.InDelta(t, min(float64(s.M)*110, 4400), k.BWGBs[i].V, 0.01, "B[%d]", s.M)
	}
	assert.Equal(t, plan.HM, k.Class, "4400 of 4800 GB/s is memory intensive")
	assert.Contains(t, res.ClassReason, "bw 92% of peak")
	assert.Empty(t, res.Notes)
	// The device sustains what the memory-bound kernel reached (4400 of 4800).
	got := res.Set.Device
	assert.InDelta(t, 4400, got.SustainedBWGBs, 0.01)
	got.SustainedBWGBs = 0
	assert.Equal(t, h200(), got)
	require.NoError(t, res.Set.Validate())
}

func TestProfileComputeBoundNoBandwidth(t *testing.T) {
	dev := newFake(computeBound(132 * ms))
	req := triadRequest(t, triadSpec)
	req.BytesPerBlock = 0
	req.Name = "triad_16M"
	req.Reps = 3
	req.Warmup = -1
	req.SMs, _ = ParseSweep("all")
	req.Launch.Shared = 1024
	dev.attrs.StaticShared = 2048
	res, err := Profile(context.Background(), dev, req)
	require.NoError(t, err)
	k := res.Kernel()
	assert.Equal(t, "triad_16M", k.Name)
	assert.Equal(t, 3072, k.SharedBytes, "static + dynamic shared memory")
	assert.Len(t, k.RMs, 132)
	assert.Equal(t, 3, dev.runs[7], "no warm-up")
	for _, s := range k.BWGBs {
		assert.Zero(t, s.V)
	}
	assert.Equal(t, plan.HC, k.Class, "perfect scaling without bandwidth data: compute intensive")
	require.Len(t, res.Notes, 1)
	assert.Contains(t, res.Notes[0], "no --bytes-per-block")
}

func TestProfileErrors(t *testing.T) {
	req := triadRequest(t, triadSpec)
	for _, tc := range []struct {
		name  string
		edit  func(*Request, *fakeDevice)
		flag  string
		wants string
	}{
		{"sms above M", func(r *Request, _ *fakeDevice) { r.SMs, _ = ParseSweep("1,200") }, "--sms", "200 SMs asked for"},
		{"empty grid", func(r *Request, _ *fakeDevice) { r.Launch.Grid = runtime.Dim3{X: 0, Y: 1, Z: 1} }, "--grid", "empty"},
		{"huge grid", func(r *Request, _ *fakeDevice) { r.Launch.Grid = runtime.Dim3{X: 1 << 20, Y: 1 << 12, Z: 1} }, "--grid", "at most"},
		{"big block", func(r *Request, _ *fakeDevice) { r.Launch.Block = runtime.D1(2048) }, "--block", "1..1024"},
		{"reps", func(r *Request, _ *fakeDevice) { r.Reps = -2 }, "--reps", "at least 1"},
		{"bytes", func(r *Request, _ *fakeDevice) { r.BytesPerBlock = -1 }, "--bytes-per-block", "negative"},
		{"iters", func(r *Request, _ *fakeDevice) { r.Launch.Iters = -1 }, "--iters", "negative"},
		{"no peak", func(_ *Request, d *fakeDevice) { d.info.PeakBWGBs = 0 }, "--peak-bw", "peak bandwidth is unknown"},
	} {
		r := req
		dev := newFake(computeBound(ms))
		tc.edit(&r, dev)
		_, err := Profile(context.Background(), dev, r)
		var fe *FlagError
		require.True(t, errors.As(err, &fe), "%s: %v", tc.name, err)
		assert.Equal(t, tc.flag, fe.Flag, tc.name)
		assert.Contains(t, err.Error(), tc.wants, tc.name)
		assert.Empty(t, dev.order, "%s: nothing runs on a bad request", tc.name)
	}

	// --peak-bw fills in a bandwidth the driver does not report.
	dev := newFake(computeBound(ms))
	dev.info.PeakBWGBs = 0
	r := req
	r.PeakBWGBs = 3350
	res, err := Profile(context.Background(), dev, r)
	require.NoError(t, err)
	assert.Equal(t, 3350.0, res.Set.Device.PeakBWGBs)

	// Load and run failures come back as they are; the target is released.
	dev = newFake(computeBound(ms))
	dev.loadErr = errors.New("out of memory")
	_, err = Profile(context.Background(), dev, req)
	assert.EqualError(t, err, "out of memory")
	dev = newFake(computeBound(ms))
	dev.runErr = func(m, run int) error {
		if m == 4 && run == 2 {
			return errors.New("illegal address")
		}
		return nil
	}
	_, err = Profile(context.Background(), dev, req)
	assert.ErrorContains(t, err, "m = 4 SMs, run 2 of 6: illegal address")
	assert.Equal(t, 1, dev.tgtClose)
}

// The profile JSON is valid for plan (ParseProfile, the planners) and for
// plan/profile.schema.json, deterministic, and matches the golden file
// (SLATEC_UPDATE=1 go test ./profile regenerates it).
func TestProfileJSON(t *testing.T) {
	res, err := Profile(context.Background(), newFake(memBound(65536*3072, 110, 4400)), triadRequest(t, triadSpec))
	require.NoError(t, err)
	data, err := res.Set.Marshal()
	require.NoError(t, err)
	res2, err := Profile(context.Background(), newFake(memBound(65536*3072, 110, 4400)), triadRequest(t, triadSpec))
	require.NoError(t, err)
	data2, err := res2.Set.Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(data), string(data2), "byte-identical output")

	ps, err := plan.ParseProfile(data)
	require.NoError(t, err)
	assert.Equal(t, res.Set, ps, "the JSON round-trips")
	_, err = plan.PlanSlate(ps)
	assert.NoError(t, err, "the profile plans")

	sch, err := jsonschema.NewCompiler().Compile("../plan/profile.schema.json")
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	assert.NoError(t, sch.Validate(inst))

	golden := "testdata/triad.profile.json"
	if os.Getenv("SLATEC_UPDATE") != "" {
		require.NoError(t, emit.WriteFileAtomic(golden, data, nil))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "regenerate with SLATEC_UPDATE=1 go test ./profile")
	if d := emit.UnifiedDiff(golden, "profiled", string(want), string(data)); d != "" {
		t.Errorf("profile JSON differs from %s:\n%s", golden, d)
	}
}

func kernelNames(ps *plan.ProfileSet) []string {
	var s []string
	for _, k := range ps.Kernels {
		s = append(s, k.Name)
	}
	return s
}

func TestMerge(t *testing.T) {
	res, err := Profile(context.Background(), newFake(memBound(65536*3072, 110, 4400)), triadRequest(t, triadSpec))
	require.NoError(t, err)
	add := res.Set

	old := &plan.ProfileSet{Format: plan.FormatVersion, Device: h200(), Kernels: []plan.Kernel{
		{Name: "sgemm", Blocks: 100, ThreadsPerBlock: 256, RMs: plan.Samples{{M: 1, V: 50}}, BWGBs: plan.Samples{{M: 1, V: 1}}},
		{Name: "triad", Blocks: 1, ThreadsPerBlock: 32, RMs: plan.Samples{{M: 1, V: 1}}, BWGBs: plan.Samples{{M: 1, V: 1}}},
		{Name: "hist", Blocks: 10, ThreadsPerBlock: 64, RMs: plan.Samples{{M: 1, V: 2}}, BWGBs: plan.Samples{{M: 1, V: 0}}},
	}}
	old.Device.PeakGFLOPS = 60000 // a field added by hand survives
	oldCopy := *old
	oldCopy.Kernels = append([]plan.Kernel(nil), old.Kernels...)

	merged, replaced, err := Merge(old, add)
	require.NoError(t, err)
	assert.Equal(t, []string{"triad"}, replaced)
	assert.Equal(t, []string{"sgemm", "triad", "hist"}, kernelNames(merged), "replaced in place")
	assert.Equal(t, add.Kernels[0], merged.Kernels[1])
	assert.Equal(t, 60000.0, merged.Device.PeakGFLOPS)
	assert.Equal(t, oldCopy, *old, "Merge does not modify its input")

	add2 := *add
	add2.Kernels = []plan.Kernel{add.Kernels[0]}
	add2.Kernels[0].Name = "triad_small"
	merged, replaced, err = Merge(merged, &add2)
	require.NoError(t, err)
	assert.Empty(t, replaced)
	assert.Equal(t, []string{"sgemm", "triad", "hist", "triad_small"}, kernelNames(merged), "new kernels go last")

	other := *add
	other.Device.Name = "NVIDIA H100 80GB HBM3"
	other.Device.SMs = 132
	_, _, err = Merge(old, &other)
	var dm *DeviceMismatchError
	require.True(t, errors.As(err, &dm), "%v", err)
	assert.Contains(t, err.Error(), "the profile file is for NVIDIA H200 (132 SMs")
	assert.Contains(t, err.Error(), "this device is NVIDIA H100 80GB HBM3")

	fewer := *add
	fewer.Device.SMs = 114
	_, _, err = Merge(old, &fewer)
	assert.True(t, errors.As(err, &dm))

	// Peak bandwidth given by hand is not a different device.
	bw := *add
	bw.Device.PeakBWGBs = 1234
	_, _, err = Merge(old, &bw)
	assert.NoError(t, err)
}

func TestPlotSVG(t *testing.T) {
	res, err := Profile(context.Background(), newFake(memBound(65536*3072, 110, 4400)), triadRequest(t, triadSpec))
	require.NoError(t, err)
	dir := t.TempDir()
	path := filepath.Join(dir, "triad.svg")
	require.NoError(t, WritePlot(path, res.Set.Device, res.Kernel(), nil))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(b)
	assert.True(t, strings.HasPrefix(s, "<?xml") || strings.HasPrefix(s, "<svg"), "an SVG document: %.60s", s)
	assert.Contains(t, s, "<svg")
	assert.Contains(t, s, "</svg>")
	assert.Contains(t, s, "speedup R[1]/R[m]")
	assert.Contains(t, s, "DRAM bandwidth B[m]")
	assert.Contains(t, s, "peak 4800 GB/s")
	assert.NotContains(t, s, "not measured")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")

	// Without bandwidth data and without m = 1 measured.
	k := *res.Kernel()
	k.RMs = plan.Samples{{M: 4, V: 10}, {M: 132, V: 1}}
	k.BWGBs = plan.Samples{{M: 4, V: 0}, {M: 132, V: 0}}
	svg, err := PlotSVG(res.Set.Device, &k)
	require.NoError(t, err)
	assert.Contains(t, string(svg), "not measured (profile with --bytes-per-block)")

	var out bytes.Buffer
	require.NoError(t, WritePlot("-", res.Set.Device, &k, &out))
	assert.Contains(t, out.String(), "</svg>")

	_, err = PlotSVG(res.Set.Device, &plan.Kernel{Name: "empty"})
	assert.ErrorContains(t, err, "no measurements")
	assert.Error(t, WritePlot(filepath.Join(dir, "missing", "x.svg"), res.Set.Device, res.Kernel(), nil))
}

// The R[1] a plot uses when m = 1 was not measured is plan's perfect-
// scaling extrapolation, so speedups stay comparable across sweeps.
func TestPlotExtrapolatesR1(t *testing.T) {
	k := plan.Kernel{Name: "k", RMs: plan.Samples{{M: 4, V: 10}}, BWGBs: plan.Samples{{M: 4, V: 0}}}
	assert.Equal(t, 40.0, k.R(1))
}

// loadedDevice hands out loadedTargets.
type loadedDevice struct {
	*fakeDevice
	factor float64
	tgt    *loadedTarget
}

func (d *loadedDevice) Load(ctx context.Context, k *Prepared, l Launch, args []Bound) (Target, error) {
	t, err := d.fakeDevice.Load(ctx, k, l, args)
	if err != nil {
		return nil, err
	}
	d.tgt = &loadedTarget{fakeTarget: *t.(*fakeTarget), factor: d.factor}
	return d.tgt, nil
}

// With DRAMSensitivity, the kernel is timed on half the SMs alone and
// loaded, alternately, after the sweep, and the ratio of the medians is
// the profile's dram_sensitivity; without it, or on a device that cannot
// load DRAM, nothing is recorded.
func TestProfileDRAMSensitivity(t *testing.T) {
	for _, c := range []struct {
		name   string
		enable bool
		loaded bool
		want   float64
	}{
		{"measured", true, true, 1.75},
		{"not asked", false, true, 0},
		{"device cannot", true, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := newFake(memBound(65536*3072, 110, 4400))
			var dev Device = fake
			ld := &loadedDevice{fakeDevice: fake, factor: 1.75}
			if c.loaded {
				dev = ld
			}
			req := triadRequest(t, triadSpec)
			req.DRAMSensitivity = c.enable
			res, err := Profile(context.Background(), dev, req)
			require.NoError(t, err)
			assert.InDelta(t, c.want, res.Kernel().DRAMSensitivity, 1e-9)
			require.NoError(t, res.Set.Validate())
			if c.enable && c.loaded {
				assert.Len(t, ld.tgt.loaded, 18, "warm-up and 5 reps on half of 132 SMs, beside the stream on 3 SM counts")
				for _, m := range ld.tgt.loaded {
					assert.Equal(t, 66, m)
				}
				assert.Equal(t, []int{8, 16, 66}, ld.tgt.streams[:3], "the stream on an eighth and a quarter of the other half, then all of it")
				assert.Equal(t, 24, fake.runs[66], "6 idle runs on 66 SMs and the 18 loaded ones (the fake runs the kernel inside RunLoaded)")
				// dram_loaded: each stream's bandwidth with the slowdown
				// beside it (the fake's factor grows with the square of the
				// stream's share of the half).
				want := []plan.LoadedPoint{{StreamGBs: 800, Slowdown: 1 + 0.75*(8.0/66)*(8.0/66)}, {StreamGBs: 1600, Slowdown: 1 + 0.75*(16.0/66)*(16.0/66)}, {StreamGBs: 6600, Slowdown: 1.75}}
				got := res.Kernel().DRAMLoaded
				require.Len(t, got, len(want))
				for i := range want {
					assert.InDelta(t, want[i].StreamGBs, got[i].StreamGBs, 1e-9)
					assert.InDelta(t, want[i].Slowdown, got[i].Slowdown, 1e-3)
				}
			} else {
				assert.Empty(t, res.Kernel().DRAMLoaded)
			}
		})
	}
}

// nativeTarget is a fakeTarget that also runs the kernel as written.
type nativeTarget struct {
	fakeTarget
	native time.Duration // 0: ErrNoNative
	runs   int
}

func (t *nativeTarget) RunNative(ctx context.Context) (time.Duration, error) {
	t.runs++
	if t.native == 0 {
		return 0, ErrNoNative
	}
	return t.native + time.Duration(t.runs)*time.Microsecond, nil
}

type nativeDevice struct {
	*fakeDevice
	native time.Duration
	tgt    *nativeTarget
}

func (d *nativeDevice) Load(ctx context.Context, k *Prepared, l Launch, args []Bound) (Target, error) {
	t, err := d.fakeDevice.Load(ctx, k, l, args)
	if err != nil {
		return nil, err
	}
	d.tgt = &nativeTarget{fakeTarget: *t.(*fakeTarget), native: d.native}
	return d.tgt, nil
}

// A target that runs the kernel as written gives the profile native_ms,
// the median of its timed runs after the warm-up; one that cannot (no
// library support, unknown parameter sizes) gives none, and no error.
func TestProfileNativeTime(t *testing.T) {
	fake := newFake(memBound(65536*3072, 110, 4400))
	dev := &nativeDevice{fakeDevice: fake, native: 900 * time.Microsecond}
	res, err := Profile(context.Background(), dev, triadRequest(t, triadSpec))
	require.NoError(t, err)
	require.NoError(t, res.Set.Validate())
	assert.Equal(t, 6, dev.tgt.runs, "a warm-up and 5 timed runs")
	assert.InDelta(t, 0.904, res.Kernel().NativeMs, 1e-9, "the median of 902..906 us")

	none := &nativeDevice{fakeDevice: newFake(memBound(65536*3072, 110, 4400))}
	res, err = Profile(context.Background(), none, triadRequest(t, triadSpec))
	require.NoError(t, err)
	assert.Zero(t, res.Kernel().NativeMs)
}
