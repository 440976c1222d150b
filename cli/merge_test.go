package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mergeA = `__global__ void scale(float* a, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= s;
}
int main() { return 0; }
`

const mergeB = `#define T 16
__global__ void tile(float* out, int w) {
    __shared__ float t[T][T + 1];
    t[threadIdx.y][threadIdx.x] = out[(blockIdx.y * T + threadIdx.y) * w + blockIdx.x * T + threadIdx.x];
    __syncthreads();
    out[(blockIdx.y * T + threadIdx.y) * w + blockIdx.x * T + threadIdx.x] = t[threadIdx.x][threadIdx.y];
}
template <int N> __global__ void fillN(int* o) { o[blockIdx.x * N + threadIdx.x] = N; }
int main() { return 1; }
`

func mergeFiles(t *testing.T) (dir, a, b string) {
	t.Helper()
	dir = t.TempDir()
	return dir, write(t, dir, "a.cu", mergeA), write(t, dir, "b.cu", mergeB)
}

func TestMergeUsageErrors(t *testing.T) {
	_, a, b := mergeFiles(t)
	for _, args := range [][]string{
		{"merge"},
		{"merge", "--mode", "fast", a + ":scale"},
		{"merge", "--alloc", "1,2", "--plan", "p.json", a + ":scale", b + ":tile"},
		{"merge", a},
		{"merge", "-", "x"},
		{"merge", "--alloc", "1", a + ":scale", b + ":tile"},
		{"merge", "--alloc", "scale=0,tile=1", a + ":scale", b + ":tile"},
		{"merge", "--alloc", "scale=1,nope=1", a + ":scale", b + ":tile"},
		{"merge", "--alloc", "scale=1", a + ":scale", b + ":tile"},
		{"merge", a + ":nope"},
		{"merge", b + ":fillN"},
		{"merge", "--bogus", a + ":scale"},
	} {
		code, _, errs := slatec(t, "", args...)
		assert.Equal(t, 2, code, "%v: %s", args, errs)
		assert.Contains(t, errs, "error", "%v", args)
	}
}

func TestMergeWritesOutput(t *testing.T) {
	dir, a, b := mergeFiles(t)
	out := filepath.Join(dir, "m.cu")
	code, stdout, errs := slatec(t, "", "merge", "-o", out, "--mode", "smrange", "--alloc", "tile=6,scale=9,fillN<32>=1", a+":scale", b+":tile", b+":fillN<32>")
	require.Equal(t, 0, code, errs)
	assert.Empty(t, stdout)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	s := string(data)
	assert.Contains(t, s, "// slatec merge --mode smrange --alloc 9,6,1 ")
	assert.Contains(t, s, "slate_merged_smrange<true>(")
	assert.Contains(t, s, "static const unsigned int slate_default_alloc[3] = { 9u, 6u, 1u };")
	assert.Contains(t, s, "inline cudaError_t slate_merged_scale_tile_fillN_32_launch(")
	assert.Contains(t, s, "fillN__merged_body<32>(")
	assert.Equal(t, 2, strings.Count(s, "#if 0 // slatec merge"), "both main()s are fenced")

	// Positional --alloc, stdout, a name.
	code, stdout, errs = slatec(t, "", "merge", "--alloc", "3,4", "--name", "pair", a+":scale", b+":tile")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "__global__ void slate_merged_pair(")
	assert.Contains(t, stdout, "{ 3u, 4u }")
}

func TestMergeRefusalExit1(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "r.cu", `__global__ void r(const int* m, int* o) {
    if (threadIdx.x > 100) return;
    int k = m[threadIdx.x];
    for (int j = 0; j < k; ++j) __syncthreads();
    o[threadIdx.x] = k;
}
`)
	out := filepath.Join(dir, "m.cu")
	code, _, errs := slatec(t, "", "merge", "-o", out, a+":r")
	assert.Equal(t, 1, code)
	assert.Regexp(t, `r\.cu:\d+:\d+: error: kernel r: cannot lower an early return`, errs)
	assert.Regexp(t, `\n\s+\^\n`, errs)
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "no output on refusal")

	// Duplicate kernels are refused, with the place.
	_, a2, _ := mergeFiles(t)
	code, _, errs = slatec(t, "", "merge", a2+":scale", a2+":scale")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "kernel scale is merged twice")

	// A missing file is an input error.
	code, _, errs = slatec(t, "", "merge", filepath.Join(dir, "none.cu")+":k")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "none.cu")
}

const planJSON = `{
  "format": "slatec-plan/1",
  "algorithm": "stm",
  "device": "NVIDIA H200",
  "sms": 132,
  "phases": [
    {"index": 0, "start_ms": 0, "latency_ms": 1, "kernels": [{"name": "other", "sms": 132, "start_ms": 0, "end_ms": 1}], "sequential_ms": 1},
    {"index": 1, "start_ms": 1, "latency_ms": 2, "kernels": [{"name": "tile", "sms": 40, "start_ms": 1, "end_ms": 2}, {"name": "scale", "sms": 92, "start_ms": 1, "end_ms": 3}], "sequential_ms": 3}
  ],
  "predicted_ms": 3, "sequential_ms": 4, "gain": 0.25, "metrics": {"makespan_ms": 3, "antt": 1, "stp": 1}
}
`

func TestMergeAllocFromPlan(t *testing.T) {
	dir, a, b := mergeFiles(t)
	p := write(t, dir, "plan.json", planJSON)
	code, out, errs := slatec(t, "", "merge", "--plan", p, a+":scale", b+":tile")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "--alloc 92,40 ")
	assert.Contains(t, out, "{ 92u, 40u }")

	// No phase with exactly these kernels.
	code, _, errs = slatec(t, "", "merge", "--plan", p, a+":scale")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "no phase holds exactly the kernels scale")

	// A plan that does not split SMs.
	li := write(t, dir, "li.json", strings.ReplaceAll(strings.ReplaceAll(planJSON, `"sms": 40, `, ""), `"sms": 92, `, ""))
	code, _, errs = slatec(t, "", "merge", "--plan", li, a+":scale", b+":tile")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "gives tile no SMs")

	code, _, errs = slatec(t, "", "merge", "--plan", filepath.Join(dir, "missing.json"), a+":scale", b+":tile")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "missing.json: error:")

	// A phase whose merge the model predicts to lose: the allocation, with a warning.
	lose := write(t, dir, "lose.json", strings.Replace(planJSON, `"sequential_ms": 3}`,
		`"sequential_ms": 3, "merge": {"recommended": false, "predicted_ms": 4, "reason": "merging is predicted to lose (4 ms merged vs 3 ms sequential)"}}`, 1))
	code, out, errs = slatec(t, "", "merge", "--plan", lose, a+":scale", b+":tile")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "--alloc 92,40 ")
	assert.Contains(t, errs, "warning: phase 2: merging is predicted to lose")

	// Dispatch shares: the interleaving modes take them, the SM-bound ones the SMs.
	sh := write(t, dir, "shares.json", strings.Replace(planJSON, `"sequential_ms": 3}`, `"sequential_ms": 3, "merge_shares": [110, 22]}`, 1))
	for _, c := range []struct{ mode, want string }{
		{"interleaved", "--alloc 22,110 "}, {"persistent", "--alloc 22,110 "}, {"smrange", "--alloc 92,40 "}, {"split", "--alloc 92,40 "},
	} {
		code, out, errs = slatec(t, "", "merge", "--mode", c.mode, "--plan", sh, a+":scale", b+":tile")
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, c.want, c.mode)
	}
}

func TestMergeReportWithoutNVCC(t *testing.T) {
	dir, a, b := mergeFiles(t)
	t.Setenv("SLATEC_NVCC", "")
	t.Setenv("SLATEC_CUDA_PREFIX", filepath.Join(dir, "nowhere"))
	t.Setenv("PATH", dir)
	t.Chdir(dir) // no .cuda here or above (the repository's own is above cli/)
	code, out, errs := slatec(t, "", "merge", "-o", filepath.Join(dir, "m.cu"), "--report", a+":scale", b+":tile")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "merge report skipped: nvcc not found")
	t.Setenv("SLATEC_NVCC", filepath.Join(dir, "no-nvcc"))
	code, out, _ = slatec(t, "", "merge", "-o", filepath.Join(dir, "m.cu"), "--report", a+":scale", b+":tile")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "does not exist")
}

// reportNVCC is the nvcc the report tests use: the project-local one, else
// $SLATEC_NVCC.
func reportNVCC(t *testing.T) string {
	nvcc, err := filepath.Abs("../.cuda/nvidia/cu13/bin/nvcc")
	require.NoError(t, err)
	if _, err := os.Stat(nvcc); err != nil {
		nvcc = os.Getenv("SLATEC_NVCC")
		if _, err := os.Stat(nvcc); nvcc == "" || err != nil {
			t.Skip("no project-local nvcc (./scripts/cuda-tools.sh installs it) and no $SLATEC_NVCC")
		}
	}
	return nvcc
}

func TestMergeReport(t *testing.T) {
	nvcc := reportNVCC(t)
	if testing.Short() {
		t.Skip("compiles with nvcc")
	}
	t.Setenv("SLATEC_NVCC", nvcc)
	dir, a, b := mergeFiles(t)
	code, out, errs := slatec(t, "", "merge", "-o", filepath.Join(dir, "m.cu"), "--report", "--block", "tile=16x16,scale=512",
		a+":scale", b+":tile")
	require.Equal(t, 0, code, errs)
	for _, want := range []string{"merge report: sm_90", "scale", "tile", "16x16", "merged, shared union", "merged, shared apart",
		"shared-memory union:", "BLOCKS/SM", "OCCUPANCY"} {
		assert.Contains(t, out, want)
	}
	// The union of one body's struct equals that body's shared memory.
	assert.Regexp(t, `tile\s+16x16\s+256\s+\d+\s+1088\s+0`, out)
	// The merge model: scale's 512-thread blocks make tile's 256-thread ones run
	// in 512-thread merged blocks, half of each idle.
	assert.Contains(t, out, "merge model")
	assert.Contains(t, out, "merging is predicted to lose")
	assert.Contains(t, out, "tile runs 4 blocks/SM inside the merged kernel instead of 8 alone")

	// --json holds the report; mode split reports each population.
	code, out, errs = slatec(t, "", "merge", "--json", "--mode", "split", "-o", filepath.Join(dir, "m.cu"), "--report",
		"--block", "tile=16x16,scale=512", "--grid", "tile=64x64,scale=1000", "--solo-ms", "tile=0.5,scale=0.25",
		a+":scale", b+":tile")
	require.Equal(t, 0, code, errs)
	var doc struct {
		Report struct {
			Rows        []struct{ Kernel string }
			Populations []struct {
				Kernel      string `json:"kernel"`
				BlocksPerSM int    `json:"blocks_per_sm"`
			} `json:"populations"`
			Model *struct{} `json:"model"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	require.Len(t, doc.Report.Populations, 2)
	assert.Equal(t, "population 1 (tile)", doc.Report.Populations[1].Kernel)
	assert.Nil(t, doc.Report.Model)

	// The same kernels in ms, interleaved: the model in ms with dispatch.
	code, out, errs = slatec(t, "", "merge", "--json", "-o", filepath.Join(dir, "m.cu"), "--report",
		"--block", "tile=16x16,scale=512", "--grid", "tile=64x64,scale=1000", "--solo-ms", "tile=0.5,scale=0.25",
		a+":scale", b+":tile")
	require.Equal(t, 0, code, errs)
	var doc2 struct {
		Report struct {
			Model struct {
				Unit     string  `json:"unit"`
				Dispatch float64 `json:"dispatch"`
				Loses    bool    `json:"loses"`
			} `json:"model"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc2), out)
	assert.Equal(t, "ms", doc2.Report.Model.Unit)
	assert.Greater(t, doc2.Report.Model.Dispatch, 0.0)
	assert.True(t, doc2.Report.Model.Loses)
}

func TestMergeCheckAndJSON(t *testing.T) {
	dir, a, b := mergeFiles(t)
	out := filepath.Join(dir, "m.cu")
	code, _, errs := slatec(t, "", "merge", "-o", out, a+":scale", b+":tile")
	require.Equal(t, 0, code, errs)
	code, stdout, errs := slatec(t, "", "merge", "--check", "-o", out, a+":scale", b+":tile")
	assert.Equal(t, 0, code, errs)
	assert.Empty(t, stdout)
	// Drift: a diff on stdout, exit 1, the file left alone.
	require.NoError(t, os.WriteFile(out, []byte("stale\n"), 0o644))
	code, stdout, errs = slatec(t, "", "merge", "--check", "-o", out, a+":scale", b+":tile")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "--- "+out)
	assert.Contains(t, stdout, "-stale")
	assert.Contains(t, errs, "out of date; regenerate it with: slatec merge --mode interleaved")
	data, _ := os.ReadFile(out)
	assert.Equal(t, "stale\n", string(data))
	// --json with --check: the diff goes into the document.
	code, stdout, _ = slatec(t, "", "merge", "--check", "--json", "-o", out, a+":scale", b+":tile")
	assert.Equal(t, 1, code)
	var doc struct {
		Format  string `json:"format"`
		Kernel  string `json:"kernel"`
		Mode    string `json:"mode"`
		Changed bool   `json:"changed"`
		Diff    string `json:"diff"`
		Kernels []struct {
			Name string `json:"name"`
		} `json:"kernels"`
		Diags []struct {
			Severity string `json:"severity"`
			Message  string `json:"message"`
		} `json:"diagnostics"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	assert.Equal(t, "slatec-merge/1", doc.Format)
	assert.Equal(t, "slate_merged_scale_tile", doc.Kernel)
	assert.True(t, doc.Changed)
	assert.Contains(t, doc.Diff, "-stale")
	require.Len(t, doc.Kernels, 2)
	assert.Equal(t, "tile", doc.Kernels[1].Name)
	// --json writes the output and prints only JSON on stdout.
	code, stdout, _ = slatec(t, "", "merge", "--json", "--mode", "split", "-o", out, a+":scale", b+":tile")
	assert.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	assert.Equal(t, "split", doc.Mode)
	assert.NotNil(t, doc.Diags)
	data, _ = os.ReadFile(out)
	assert.Contains(t, string(data), "slate_merged_scale_tile_k1")
	// Refused kernels: exit 1, the diagnostics in the JSON.
	bad := write(t, dir, "bad.cu", "__global__ void slate_x(float* a) { a[threadIdx.x] = 0; }\n")
	code, stdout, _ = slatec(t, "", "merge", "--json", "-o", out, bad+":slate_x", a+":scale")
	assert.Equal(t, 1, code)
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	require.NotEmpty(t, doc.Diags)
	assert.Equal(t, "error", doc.Diags[0].Severity)
	// Trouble: --check and --json need -o FILE (exit 2); an unreadable output is exit 2.
	for _, args := range [][]string{
		{"merge", "--check", a + ":scale"},
		{"merge", "--json", a + ":scale"},
		{"merge", "--maxnreg", "7", "-o", out, a + ":scale"},
		{"merge", "--sms", "0", "-o", out, a + ":scale"},
		{"merge", "--check", "-o", dir, a + ":scale"},
	} {
		code, _, errs := slatec(t, "", args...)
		assert.Equal(t, 2, code, "%v: %s", args, errs)
	}
}

func TestMergeMaxnregInHeader(t *testing.T) {
	dir, a, b := mergeFiles(t)
	out := filepath.Join(dir, "m.cu")
	code, _, errs := slatec(t, "", "merge", "--maxnreg", "32", "-o", out, a+":scale", b+":tile")
	require.Equal(t, 0, code, errs)
	data, _ := os.ReadFile(out)
	assert.Contains(t, string(data), "// slatec merge --mode interleaved --maxnreg 32 ")
	assert.Contains(t, string(data), "__global__ void __maxnreg__(32) slate_merged_scale_tile(")
	// Mode split: a cap per population (one for all, or a list; 0 for none).
	code, _, errs = slatec(t, "", "merge", "--maxnreg", "32", "--mode", "split", "-o", out, a+":scale", b+":tile")
	require.Equal(t, 0, code, errs)
	data, _ = os.ReadFile(out)
	assert.Contains(t, string(data), "--maxnreg 32,32 ")
	assert.Contains(t, string(data), "__global__ void __maxnreg__(32) slate_merged_scale_tile_k0(")
	code, _, errs = slatec(t, "", "merge", "--maxnreg", "0,24", "--mode", "split", "-o", out, a+":scale", b+":tile")
	require.Equal(t, 0, code, errs)
	data, _ = os.ReadFile(out)
	assert.Contains(t, string(data), "__global__ void slate_merged_scale_tile_k0(")
	assert.Contains(t, string(data), "__global__ void __maxnreg__(24) slate_merged_scale_tile_k1(")
	for _, args := range [][]string{
		{"merge", "--maxnreg", "32,16", "-o", out, a + ":scale", b + ":tile"},
		{"merge", "--maxnreg", "32,16,16", "--mode", "split", "-o", out, a + ":scale", b + ":tile"},
		{"merge", "--maxnreg", "0", "-o", out, a + ":scale", b + ":tile"},
	} {
		code, _, errs := slatec(t, "", args...)
		assert.Equal(t, 2, code, "%v: %s", args, errs)
	}
}
