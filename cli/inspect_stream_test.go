package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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
		if !reflect.DeepEqual(buildFileReport(want), buildFileReport(got)) {
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
			krs = append(krs, buildFileReport(a).Kernels...)
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
// reference the streamed reports are checked against.
func buildFileReport(a *transform.Analysis) fileReport {
	fr := fileReport{File: a.File.Name, Kernels: []kernelReport{}, Launches: []launchReport{}, Diagnostics: fileDiagnostics(a)}
	for _, k := range a.Kernels {
		fr.Kernels = append(fr.Kernels, kernelReportOf(a, k))
	}
	for _, ls := range a.Launches {
		fr.Launches = append(fr.Launches, launchReportOf(ls))
	}
	return fr
}
