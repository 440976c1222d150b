package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slatec runs the CLI in-process and returns exit code, stdout, stderr.
func slatec(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetIn(strings.NewReader(stdin))
	code := run(root, args)
	return code, out.String(), errb.String()
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

const goodKernel = `__global__ void scale(float* a, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= s;
}
void host(float* a, int n) { scale<<<(n + 255) / 256, 256>>>(a, 2.0f, n); }
`

const refusedKernel = `#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void gridwide(int* a) {
    cg::grid_group g = cg::this_grid();
    a[g.thread_rank()] = 1;
    g.sync();
}
__global__ void fine(int* a) { a[threadIdx.x] = 0; }
`

func TestVersion(t *testing.T) {
	code, out, _ := slatec(t, "", "version")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `^slatec v\S+ \(commit \S+\)\n$`, out)
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"},
		{"transform"},
		{"transform", "--bogus", "x.cu"},
		{"transform", "--iters", "zero", "x.cu"},
		{"transform", "--check", "x.cu"},
		{"inspect"},
	} {
		code, _, errs := slatec(t, "", args...)
		assert.Equal(t, 2, code, "%v: %s", args, errs)
		assert.Contains(t, errs, "error", "%v", args)
	}
}

func TestMissingFileExit1(t *testing.T) {
	code, _, errs := slatec(t, "", "inspect", "/nonexistent/k.cu")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "/nonexistent/k.cu")
}

func TestTransformStdinStdout(t *testing.T) {
	code, out, errs := slatec(t, goodKernel, "transform", "-")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "scale__slate(slate_ctl* __restrict__ slate_ctl_p, slate_cfg slate_cfg_v, float* a, float s, int n)")
	assert.Contains(t, out, "scale__slate_launch((n + 255) / 256, 256, 0, 0, a, 2.0f, n)")
	assert.Contains(t, out, goodKernel[:40], "the original kernel is kept")
}

func TestNoKernelsIsByteIdentical(t *testing.T) {
	src := "// just host code\n#include <cstdio>\nint main() { printf(\"hi\\n\"); }\n"
	code, out, _ := slatec(t, src, "transform", "-")
	assert.Equal(t, 0, code)
	assert.Equal(t, src, out)
}

func TestRefusalDiagnosticAndNoPartialOutput(t *testing.T) {
	dir := t.TempDir()
	in := write(t, dir, "k.cu", refusedKernel)
	outPath := filepath.Join(dir, "k_slate.cu")
	code, _, errs := slatec(t, "", "transform", "-o", outPath, in)
	assert.Equal(t, 1, code)
	// file:line:col: error: ..., then the source line and a caret.
	// The grid group's queries are virtualised; its sync is what is refused.
	assert.Regexp(t, `k\.cu:6:\d+: error: kernel gridwide: synchronises the whole grid \(g\.sync\(\)\)`, errs)
	assert.Contains(t, errs, "    g.sync();\n")
	assert.Regexp(t, `\n\s+\^\n`, errs)
	_, err := os.Stat(outPath)
	assert.True(t, os.IsNotExist(err), "no output file may be written on failure")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file may be left behind")

	// Leaving the refused kernel out succeeds.
	code, _, errs = slatec(t, "", "transform", "--kernels", "fine", "-o", outPath, in)
	assert.Equal(t, 0, code, errs)
	data, err := os.ReadFile(outPath)
	require.NoError(t, err)
	assert.Contains(t, string(data), "fine__slate(")
	assert.NotContains(t, string(data), "gridwide__slate(")
}

func TestTransformJSONDiagnostics(t *testing.T) {
	dir := t.TempDir()
	in := write(t, dir, "k.cu", refusedKernel)
	code, out, _ := slatec(t, "", "transform", "--json", "-o", filepath.Join(dir, "o.cu"), in)
	assert.Equal(t, 1, code)
	var doc struct {
		Format string `json:"format"`
		Files  []struct {
			Diagnostics []struct {
				Line     int    `json:"line"`
				Severity string `json:"severity"`
				Message  string `json:"message"`
			} `json:"diagnostics"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	assert.Equal(t, "slatec-transform/1", doc.Format)
	require.NotEmpty(t, doc.Files[0].Diagnostics)
	assert.Equal(t, "error", doc.Files[0].Diagnostics[0].Severity)
}

func TestUnknownKernelIsUsageError(t *testing.T) {
	dir := t.TempDir()
	in := write(t, dir, "k.cu", goodKernel)
	code, _, errs := slatec(t, "", "transform", "--kernels", "nope", in)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `no kernel named "nope"`)
	assert.Contains(t, errs, "scale")
}

func TestCheckDetectsDrift(t *testing.T) {
	dir := t.TempDir()
	in := write(t, dir, "k.cu", goodKernel)
	out := filepath.Join(dir, "k_slate.cu")
	code, _, errs := slatec(t, "", "transform", "-o", out, in)
	require.Equal(t, 0, code, errs)
	code, stdout, _ := slatec(t, "", "transform", "--check", "-o", out, in)
	assert.Equal(t, 0, code)
	assert.Empty(t, stdout)
	// The input changes; the generated file is now stale.
	write(t, dir, "k.cu", strings.Replace(goodKernel, "*= s", "*= s + 1.0f", 1))
	code, stdout, errs = slatec(t, "", "transform", "--check", "-o", out, in)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "@@ ")
	assert.Contains(t, stdout, "+    if (i < n) a[i] *= s + 1.0f;")
	assert.Contains(t, errs, "out of date")
}

func TestMultiFileRewritesLaunchesOfHeaderKernels(t *testing.T) {
	dir := t.TempDir()
	h := write(t, dir, "k.cuh", "#pragma once\n__global__ void fill(int* a, int v) { a[blockIdx.x * blockDim.x + threadIdx.x] = v; }\n")
	c := write(t, dir, "main.cu", "#include \"k.cuh\"\nvoid run(int* a) { fill<<<4, 64>>>(a, 7); }\n")
	outDir := filepath.Join(dir, "out")
	code, _, errs := slatec(t, "", "transform", "-o", outDir, c, h)
	require.Equal(t, 0, code, errs)
	mainOut, err := os.ReadFile(filepath.Join(outDir, "main.cu"))
	require.NoError(t, err)
	assert.Contains(t, string(mainOut), "fill__slate_launch(4, 64, 0, 0, a, 7)")
	hOut, err := os.ReadFile(filepath.Join(outDir, "k.cuh"))
	require.NoError(t, err)
	assert.Contains(t, string(hOut), "static void fill__slate_launch(")
}

func TestInspectJSON(t *testing.T) {
	dir := t.TempDir()
	in := write(t, dir, "k.cu", goodKernel)
	code, out, errs := slatec(t, "", "inspect", "--json", in)
	require.Equal(t, 0, code, errs)
	var doc struct {
		Format string `json:"format"`
		Files  []struct {
			Kernels []struct {
				Name   string `json:"name"`
				Params []struct {
					Name, Type string
				} `json:"params"`
				Builtins map[string][]struct{ Line int } `json:"builtins"`
			} `json:"kernels"`
			Launches []struct {
				Kernel      string `json:"kernel"`
				Config      []string
				ArgSpans    []struct{ Start, End int } `json:"arg_spans"`
				ConfigSpans []struct{ Start, End int } `json:"config_spans"`
			} `json:"launches"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, "slatec-inspect/1", doc.Format)
	k := doc.Files[0].Kernels[0]
	assert.Equal(t, "scale", k.Name)
	assert.Equal(t, "float*", k.Params[0].Type)
	assert.Len(t, k.Builtins["blockIdx"], 1)
	l := doc.Files[0].Launches[0]
	assert.Equal(t, "scale", l.Kernel)
	assert.Equal(t, []string{"(n + 255) / 256", "256"}, l.Config)
	require.Len(t, l.ArgSpans, 3)
	assert.Equal(t, "2.0f", goodKernel[l.ArgSpans[1].Start:l.ArgSpans[1].End])
}

// inspect --json conforms to docs/inspect.schema.json on every test input.
func TestInspectJSONMatchesSchema(t *testing.T) {
	sch, err := jsonschema.NewCompiler().Compile("../docs/inspect.schema.json")
	require.NoError(t, err)
	files, err := filepath.Glob("../testdata/kernels/*.cu")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	code, out, errs := slatec(t, "", append([]string{"inspect", "--json"}, files...)...)
	require.Equal(t, 0, code, errs)
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(inst))
}
