package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/transform"
)

// inspect analyses with LoadOptions.DropBodies (one body's tree at a time,
// no whitespace tokens, the source shared): every report is the one the
// analysis of fully parsed files gives.
func TestInspectDropBodiesSameReport(t *testing.T) {
	var files []string
	for _, dir := range []string{"../testdata", "../examples", "../golden"} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".cu") || strings.HasSuffix(p, ".cuh")) {
				files = append(files, p)
			}
			return nil
		})
	}
	require.NotEmpty(t, files)
	inc := []string{"../testdata/include"}
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		want, werr := transform.LoadWith(f, src, transform.LoadOptions{IncludeDirs: inc})
		got, gerr := transform.LoadWith(f, src, transform.LoadOptions{IncludeDirs: inc, DropBodies: true})
		require.Equal(t, werr, gerr, f)
		if werr != nil {
			continue
		}
		if !reflect.DeepEqual(buildFileReport(want, nil), buildFileReport(got, reloadedLowering(f, src, transform.LoadOptions{IncludeDirs: inc, DropBodies: true}))) {
			t.Errorf("%s: the reports differ", f)
		}
	}
}

// kernelJSON writes what encoding/json writes, for every kernel of the
// test files and for strings encoding/json escapes.
func TestKernelJSONMatchesEncoder(t *testing.T) {
	var krs []kernelReport
	filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".cu") || strings.HasSuffix(p, ".cuh")) ||
			!(strings.HasPrefix(p, "../testdata") || strings.HasPrefix(p, "../examples") || strings.HasPrefix(p, "../golden")) {
			return nil
		}
		src, err := os.ReadFile(p)
		require.NoError(t, err)
		if a, err := transform.LoadWith(p, src, transform.LoadOptions{IncludeDirs: []string{"../testdata/include"}}); err == nil {
			krs = append(krs, buildFileReport(a, nil).Kernels...)
		}
		return nil
	})
	require.NotEmpty(t, krs)
	odd := "a<b>&c\"d\\e\n\t\x01 é \u2028 \xff"
	krs = append(krs, kernelReport{Name: odd, TemplateParams: []tparamReport{{Name: odd, Pack: true}},
		Builtins: map[string][]transform.BuiltinUse{"b": nil, odd: {{Name: odd, Via: odd}}}, Syncs: []transform.SyncPoint{{Via: "x"}},
		Returns: []transform.ReturnInfo{{SyncLine: 3, Uniform: true}}, SharedStatic: []transform.SharedDecl{{FileVar: true}},
		Persistent: persistentReport{Refusals: []diag.Diagnostic{{Source: odd, Notes: []diag.Diagnostic{{Message: odd}}}}}}, kernelReport{})
	for _, kr := range krs {
		for _, prefix := range []string{"", "      "} {
			want, err := json.MarshalIndent(kr, prefix, "  ")
			require.NoError(t, err)
			require.Equal(t, string(want), string(kernelJSON(nil, &kr, prefix)), kr.Name)
		}
	}
	t.Logf("%d kernels", len(krs))
}

// buildFileReport is the whole report of an analysis, built at once: the
// reference the streamed reports are checked against. lower is the return
// lowering's verdict (nil: from a's own bodies).
func buildFileReport(a *transform.Analysis, lower func(i int) []diag.Diagnostic) fileReport {
	fr := fileReport{File: a.File.Name, Kernels: []kernelReport{}, Launches: []launchReport{}, Diagnostics: fileDiagnostics(a)}
	if lower == nil {
		lower = func(i int) []diag.Diagnostic { return lowerVerdict(a, i) }
	}
	for i, k := range a.Kernels {
		fr.Kernels = append(fr.Kernels, kernelReportOf(a, k, func() []diag.Diagnostic { return lower(i) }))
	}
	for _, ls := range a.Launches {
		fr.Launches = append(fr.Launches, launchReportOf(ls))
	}
	return fr
}

// A kernel whose early return must be lowered gets the lowering's verdict
// (inspect analyses without bodies, so it loads the file again for it):
// "ok" only where transform would not refuse.
func TestInspectLoweringVerdict(t *testing.T) {
	dir := t.TempDir()
	const head = "__global__ void k(const float* A, float* C, int K, int rows) {\n" +
		"    __shared__ float s[256];\n    int row = blockIdx.x * 4 + threadIdx.x / 64;\n    int n = K;\n" +
		"    if (row >= rows) return;\n"
	const tail = "    for (int t = 0; t < n; ++t) { s[threadIdx.x] = A[t]; __syncthreads(); }\n    C[row] = s[0];\n}\n"
	ok := write(t, dir, "ok.cu", head+"    const float* a = &A[row * K + n];\n    C[row] = a[0];\n"+tail)
	bad := write(t, dir, "bad.cu", head+"    if (A[row] > 0.0f) n = 2;\n"+tail)
	code, out, _ := slatec(t, "", "inspect", ok)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "persistent:    ok (returns before sync points are lowered")
	code, out, _ = slatec(t, "", "inspect", bad)
	assert.Equal(t, 0, code, "a refusal is a finding, not a failure")
	assert.Contains(t, out, "persistent:    refused (1 reason below)")
	assert.Contains(t, out, "depends on n, which is computed after the return")
	code, _, _ = slatec(t, "", "transform", "-o", filepath.Join(dir, "out.cu"), bad)
	assert.Equal(t, 1, code, "transform refuses it too")
}
