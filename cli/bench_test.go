package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/corun"
	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/profile"
	"github.com/slatec/slatec/runtime"
)

func noGPU(t *testing.T) {
	t.Helper()
	old := openBenchDevice
	openBenchDevice = func(int, float64) (corun.Device, error) {
		return nil, &runtime.LibraryError{Library: "CUDA driver (libcuda.so.1)", Env: "SLATEC_LIBCUDA",
			Tried: []string{"libcuda.so.1"}, Reasons: []string{"not found"}}
	}
	t.Cleanup(func() { openBenchDevice = old })
}

func fixedDate(t *testing.T) {
	old := benchNow
	benchNow = func() time.Time { return time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) }
	t.Cleanup(func() { benchNow = old })
}

func TestBenchNoGPU(t *testing.T) {
	noGPU(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, stdout, errs := slatec(t, "", "bench", "--quick", "--json", "--out", out)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "slatec: error: bench runs kernels on a GPU and there is none here: cannot load the CUDA driver (libcuda.so.1) (tried libcuda.so.1; set SLATEC_LIBCUDA)\n", errs)
	assert.NoDirExists(t, out, "nothing is written")
}

func TestBenchUsageErrors(t *testing.T) {
	noGPU(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--modes", "fast"}, `--modes: unknown mode "fast"`},
		{[]string{"--workloads", "triad_f4+nope"}, `--workloads: no workload "triad_f4+nope"`},
		{[]string{"--reps", "-1"}, "--reps must be at least 1"},
		{[]string{"--fake", "1"}, "--fake needs at least 2 SMs"},
		{[]string{"--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"--json", "--out", " "}, "--out must name a directory"},
		{[]string{"extra"}, "unknown command"},
		{[]string{"--fake", "132", "--probe", "triad_f4+gemm_tiled@40:90"}, "--probe: probe \"triad_f4+gemm_tiled@40:90\": the split covers 130 SMs"},
		{[]string{"--fake", "132", "--probe", "triad_f4@132", "--probe", "nope@132"}, `no kernel "nope"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errs := slatec(t, "", append([]string{"bench"}, tc.args...)...)
			assert.Equal(t, 2, code, errs)
			assert.Contains(t, errs, tc.want)
		})
	}
}

// --trace appends the scheduler mode's decisions of each run, then the
// jobs' spans, a line each: workload, ms, event, kernel, range.
func TestBenchTrace(t *testing.T) {
	tr := filepath.Join(t.TempDir(), "trace.txt")
	code, _, errs := slatec(t, "", "bench", "--fake", "32", "--workloads", "triad_f4+fma_chain", "--modes", "scheduler", "--reps", "1", "--trace", tr)
	require.Equal(t, 0, code, errs)
	data, err := os.ReadFile(tr)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.GreaterOrEqual(t, len(lines), 4)
	assert.Regexp(t, `^triad_f4\+fma_chain\t0\.0000\tqueued\t(triad_f4|fma_chain)\t`, lines[0])
	assert.Contains(t, string(data), "\tstarted\t")
	assert.Contains(t, string(data), "\tfinished\t")
	assert.Regexp(t, `(?m)^triad_f4\+fma_chain\t[0-9.]+\tspan\ttriad_f4\t[0-9.]+ ms$`, string(data))
	code, _, errs = slatec(t, "", "bench", "--fake", "32", "--workloads", "triad_f4+fma_chain", "--modes", "scheduler", "--trace", filepath.Join(t.TempDir(), "no", "such", "dir", "t.txt"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "--trace:")
}

// Probes measure the CUDA device only: on the fake one they say so.
func TestBenchProbeFake(t *testing.T) {
	code, _, errs := slatec(t, "", "bench", "--fake", "132", "--probe", "triad_f4+gemm_tiled@40:92")
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "probes run on the CUDA device")
}

// A quick run on the fake device writes a corun.json that conforms to the
// schema, and the plots, and prints the report; it is deterministic.
func TestBenchFake(t *testing.T) {
	fixedDate(t)
	dir := t.TempDir()
	run := func(out string) (string, string) {
		code, stdout, errs := slatec(t, "", "bench", "--quick", "--fake", "16", "--json", "--plot", "--out", out)
		require.Equal(t, 0, code, errs)
		return stdout, errs
	}
	a := filepath.Join(dir, "a")
	stdout, errs := run(a)
	assert.Contains(t, stdout, "slatec bench on fake GPU (16 SMs)")
	assert.Contains(t, stdout, "triad_f4+fma_chain  sequential")
	assert.Contains(t, stdout, "unavailable: triad_f4+fma_chain mps: no MPS runner for this device")
	assert.Contains(t, stdout, "predicted vs measured: median error")
	assert.Contains(t, errs, "slatec: [1/24] profiling triad_f4 on 1 SMs", "progress lines when stderr is no terminal")
	assert.Contains(t, errs, "slatec: wrote corun.json, gain.svg, gantt.svg, sweep-triad_f4-chase.svg")

	data, err := os.ReadFile(filepath.Join(a, "corun.json"))
	require.NoError(t, err)
	sch, err := jsonschema.NewCompiler().Compile("../bench/results/corun.schema.json")
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(inst))
	var doc corun.Document
	require.NoError(t, json.Unmarshal(data, &doc))
	assert.Equal(t, "2026-11-23", doc.Date)
	assert.True(t, doc.Quick)
	assert.Equal(t, "measured", doc.Profiles)
	assert.Len(t, doc.Rows, 5*7-3, "5 workloads x 7 modes (mps unavailable); the triple cannot be swept in steps of 16 on 16 SMs")

	for _, n := range []string{"gain.svg", "gantt.svg"} {
		svg, err := os.ReadFile(filepath.Join(a, n))
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(svg), "<?xml") || strings.HasPrefix(string(svg), "<svg"), n)
	}
	b := filepath.Join(dir, "b")
	stdout2, _ := run(b)
	assert.Equal(t, stdout, stdout2)
	data2, err := os.ReadFile(filepath.Join(b, "corun.json"))
	require.NoError(t, err)
	assert.Equal(t, string(data), string(data2))
}

func TestBenchProfilesFile(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "bad.json", `{"format": "slatec-profile/1"}`)
	code, _, errs := slatec(t, "", "bench", "--fake", "16", "--profiles", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, bad+": error: ")

	// Profiles of another device are a usage error, found before any run.
	ps := plan.ProfileSet{Format: "slatec-profile/1", Device: plan.Device{Name: "big", SMs: 132, PeakBWGBs: 3350, MemBytes: 1 << 36},
		Kernels: []plan.Kernel{{Name: "triad_f4", Blocks: 1, ThreadsPerBlock: 256, RMs: plan.Samples{{M: 1, V: 1}}, BWGBs: plan.Samples{{M: 1, V: 1}}}}}
	data, err := json.Marshal(ps)
	require.NoError(t, err)
	other := write(t, dir, "other.json", string(data))
	out := filepath.Join(dir, "out")
	code, _, errs = slatec(t, "", "bench", "--fake", "16", "--profiles", other, "--json", "--out", out)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "is for big (132 SMs), this is fake GPU (16 SMs)")
	assert.NoDirExists(t, out)
}

// The printed slatec profile commands are accepted by slatec profile: run
// here, each gets as far as looking for a GPU.
func TestBenchProfileCommands(t *testing.T) {
	code, stdout, errs := slatec(t, "", "bench", "--profile-commands", "--quick", "--profiles", "out/p.json")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, " -o out/p.json --append\n")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, len(corun.Catalogue()))
	old := openProfileDevice
	openProfileDevice = func(int, *runtime.Compiler) (profile.Device, error) {
		return nil, &runtime.LibraryError{Library: "CUDA driver (libcuda.so.1)", Env: "SLATEC_LIBCUDA", Tried: []string{"x"}, Reasons: []string{"y"}}
	}
	t.Cleanup(func() { openProfileDevice = old })
	t.Chdir("..")
	for _, l := range lines {
		args := splitShell(l)
		assert.Contains(t, args, "step:8")
		require.Equal(t, "profile", args[1], l)
		code, _, errs := slatec(t, "", args[1:]...)
		assert.Equal(t, 1, code, "%s: %s", l, errs)
		assert.Contains(t, errs, "no GPU to profile on", l)
	}
}

func TestBenchProfileCommandsPeakBW(t *testing.T) {
	code, stdout, errs := slatec(t, "", "bench", "--profile-commands", "--peak-bw", "3352.3")
	require.Equal(t, 0, code, errs)
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		assert.True(t, strings.HasSuffix(l, " -o profiles.json --append --peak-bw 3352.3"), l)
		assert.Contains(t, l, "--sms step:4", "the full run's sweep")
	}
}

func TestBenchList(t *testing.T) {
	code, stdout, errs := slatec(t, "", "bench", "--list", "--workloads", "triples")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "gemm_tc     compute")
	assert.Regexp(t, `(?m)^triad_f4\+fma_chain\+chase +true$`, stdout)
	assert.Regexp(t, `(?m)^triad_f4\+scale_f4\+fma_chain +false$`, stdout)
	assert.NotContains(t, stdout, "triad_f4+chase ")
}

// corun/kernels_slate.go is what slatec gen makes of kernels/corun.cu now
// (run go generate ./corun after changing either). Its workers' register
// caps come from nvcc (--match-regs), which make test installs.
func TestBenchKernelsGenerated(t *testing.T) {
	if nvcc, why := findNVCC(); nvcc == "" {
		t.Skipf("gen --match-regs needs nvcc: %s", why)
	}
	want, err := os.ReadFile("../corun/kernels_slate.go")
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "k.go")
	t.Chdir("../corun")
	code, _, errs := slatec(t, "", "gen", "--package", "corun", "--type", "Kernels", "--match-regs", "sm_90", "-o", out, "kernels/corun.cu")
	require.Equal(t, 0, code, errs)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.True(t, string(got) == string(want), "corun/kernels_slate.go is stale: go generate ./corun")
	// gemm_tc's worker would take 44 registers uncapped (10 blocks of 128 an
	// SM against the kernel's 16 at 32).
	assert.Contains(t, string(got), "#define SLATE_REGCAP_gemm_tc __launch_bounds__(128, SLATE_MIN_BLOCKS(128, 32))")
	// The others' workers fit the kernels' registers uncapped: no cap (a cap
	// there stopped ptxas unrolling gemm_tiled's tile loop).
	for _, k := range []string{"triad_f4", "scale_f4", "fma_chain", "chase", "dep_chain", "gemm_tiled", "histogram"} {
		assert.NotContains(t, string(got), "#define SLATE_REGCAP_"+k+" ", k)
	}
}

// transform --match-regs caps a worker only where it needs more registers
// than its kernel: black_scholes' worker does (32 for the kernel, more for
// the worker uncapped), saxpy's does not; and not where both capped workers
// would spill (the 64x64 instance of the wmma tile kernel, capped at its
// kernel's 80 registers).
func TestTransformMatchRegsCapsOnlyWhereNeeded(t *testing.T) {
	if nvcc, why := findNVCC(); nvcc == "" {
		t.Skipf("--match-regs needs nvcc: %s", why)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		in, kernel string
		capped     bool
	}{
		{"../testdata/kernels/black_scholes.cu", "black_scholes", true},
		{"../examples/saxpy.cu", "saxpy", false},
		{"../examples/saxpy.cu", "block_sum", false},
		{"../testdata/kernels/wmma_gemm_f16_tiles.cu", "wmma_gemm_f16_tiles", false},
	} {
		out := filepath.Join(dir, filepath.Base(tc.in))
		code, _, errs := slatec(t, "", "transform", "--match-regs", "sm_90", "-I", "../testdata/include", "-o", out, tc.in)
		require.Equal(t, 0, code, errs)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		// A capped worker's macro is defined per architecture (the cap on
		// sm_90, the kernel's own bounds elsewhere); an uncapped one has none.
		capped := strings.Contains(string(got), "#define SLATE_REGCAP_"+tc.kernel+" ")
		assert.Equal(t, tc.capped, capped, "%s: %s capped", tc.in, tc.kernel)
	}
}

func TestBenchMPSChildUnknownKernel(t *testing.T) {
	code, stdout, errs := slatec(t, "", "bench", "--mps-child", "nope")
	assert.Equal(t, 2, code)
	assert.Equal(t, "error no kernel nope\n", stdout, "the parent reads the reason on stdout")
	assert.Contains(t, errs, "--mps-child: no kernel nope")
}

// splitShell splits a command line at spaces outside single quotes (what
// ProfileCommand writes).
func splitShell(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, started := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, started = !quoted, true
		case r == ' ' && !quoted:
			if started {
				out = append(out, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if started {
		out = append(out, cur.String())
	}
	return out
}

// A suite run in parts (--workloads per call) combines into one document:
// the same rows as one run of all of them, the report printed, the files
// written; parts of different devices are refused with exit 1.
func TestBenchCombine(t *testing.T) {
	fixedDate(t)
	dir := t.TempDir()
	run := func(out string, workloads string) {
		code, _, errs := slatec(t, "", "bench", "--quick", "--fake", "16", "--workloads", workloads, "--json", "--out", out)
		require.Equal(t, 0, code, errs)
	}
	a, b, all := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "all")
	run(a, "triad_f4+fma_chain")
	run(b, "triad_f4+chase,triad_f4+histogram")
	run(all, "triad_f4+fma_chain,triad_f4+chase,triad_f4+histogram")
	out := filepath.Join(dir, "combined")
	code, stdout, errs := slatec(t, "", "bench", "--combine", filepath.Join(a, "corun.json")+","+filepath.Join(b, "corun.json"), "--json", "--plot", "--out", out)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "triad_f4+histogram")
	assert.Contains(t, stdout, "predicted vs measured: median error")
	read := func(p string) corun.Document {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		var d corun.Document
		require.NoError(t, json.Unmarshal(data, &d))
		return d
	}
	got, want := read(filepath.Join(out, "corun.json")), read(filepath.Join(all, "corun.json"))
	key := func(d corun.Document) []string {
		var k []string
		for _, r := range d.Rows {
			k = append(k, fmt.Sprintf("%s %s %s", r.Workload, r.Mode, r.Setting))
		}
		sort.Strings(k)
		return k
	}
	assert.Equal(t, key(want), key(got), "the rows of one run of all three")
	_, err := os.Stat(filepath.Join(out, "gain.svg"))
	assert.NoError(t, err)

	// A part of another device.
	other := read(filepath.Join(b, "corun.json"))
	other.Device = "another GPU"
	data, err := json.Marshal(other)
	require.NoError(t, err)
	bad := filepath.Join(dir, "other.json")
	require.NoError(t, os.WriteFile(bad, data, 0o644))
	code, _, errs = slatec(t, "", "bench", "--combine", filepath.Join(a, "corun.json")+","+bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "results of two devices do not combine")
}

// --partners measures each pair of the run's workloads before planning:
// the report says so, and with --json DIR/profiles.json holds the profiles
// with their beside measurements, a valid profile set that --profiles
// reads back.
func TestBenchPartners(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, errs := slatec(t, "", "bench", "--fake", "32", "--workloads", "triad_f4+histogram", "--modes", "scheduler", "--reps", "1", "--partners", "--json", "--out", out)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "profiles measured + partners measured")
	assert.Contains(t, errs, "triad_f4 beside histogram")
	ps, err := plan.ReadProfileFile(filepath.Join(out, "profiles.json"))
	require.NoError(t, err)
	for _, name := range []string{"triad_f4", "histogram"} {
		k := &ps.Kernels[ps.KernelIndex(name)]
		require.Len(t, k.Beside, 1, name)
		assert.Equal(t, 8, k.Beside[0].SMs)
		assert.Equal(t, 24, k.Beside[0].PartnerSMs)
	}
	code, stdout, errs = slatec(t, "", "bench", "--fake", "32", "--workloads", "triad_f4+histogram", "--modes", "scheduler", "--reps", "1", "--profiles", filepath.Join(out, "profiles.json"))
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "profiles profiles.json")
}
