package transform

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/emit"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// goldenVersion stands in for the tool version in golden headers, so that
// a version bump does not churn every golden file.
const goldenVersion = "v0.0.0-golden"

// goldenInputs are the transform's test inputs, relative to the repo root.
func goldenInputs(t *testing.T) []string {
	var files []string
	for _, pattern := range []string{"testdata/kernels/*.cu", "testdata/kernels/*.cuh", "testdata/lower/*.cu", "examples/*.cu"} {
		m, err := filepath.Glob(filepath.Join("..", pattern))
		require.NoError(t, err)
		files = append(files, m...)
	}
	sort.Strings(files)
	return files
}

// goldenPath maps ../testdata/kernels/x.cu to ../golden/x.cu (and
// testdata/lower/x.cu to golden/lower/x.cu). A refused file's golden is
// its diagnostics, in x.cu.err.
func goldenPath(in string) string {
	rel, _ := filepath.Rel("..", in)
	rel = strings.TrimPrefix(filepath.ToSlash(rel), "testdata/kernels/")
	rel = strings.TrimPrefix(rel, "testdata/")
	rel = strings.TrimPrefix(rel, "examples/")
	return filepath.Join("..", "golden", filepath.FromSlash(rel))
}

// runGolden transforms one input as `slatec transform` would, from the
// repository root, and returns the output or the diagnostics.
func runGolden(t *testing.T, in string) (out []byte, diags string, failed bool) {
	rel, _ := filepath.Rel("..", in)
	rel = filepath.ToSlash(rel)
	src, err := os.ReadFile(in)
	require.NoError(t, err)
	cwd, _ := os.Getwd()
	require.NoError(t, os.Chdir(".."))
	defer os.Chdir(cwd)
	a, err := Load(rel, src, []string{"testdata/include"})
	require.NoError(t, err)
	res, err := Persistent(a, Options{Version: goldenVersion, Command: "transform --iters auto " + rel})
	require.NoError(t, err)
	var b bytes.Buffer
	diag.Write(&b, res.Diags)
	return res.Output, b.String(), res.Diags.HasErrors()
}

func TestGolden(t *testing.T) {
	inputs := goldenInputs(t)
	require.NotEmpty(t, inputs)
	for _, in := range inputs {
		t.Run(strings.TrimPrefix(filepath.ToSlash(in), "../"), func(t *testing.T) {
			out, diags, failed := runGolden(t, in)
			path := goldenPath(in)
			errPath := path + ".err"
			if failed {
				out, path = []byte(diags), errPath
			}
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				// A file that changes between transformed and refused leaves no stale golden.
				if failed {
					os.Remove(goldenPath(in))
				} else {
					os.Remove(errPath)
				}
				require.NoError(t, emit.WriteFileAtomic(path, out, nil))
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("missing golden %s (run go test ./transform -update and read the new file): %v\n%s", path, err, diags)
			}
			if d := emit.UnifiedDiff(path, "current output", string(want), string(out)); d != "" {
				t.Errorf("output differs from %s (go test ./transform -update regenerates it):\n%s", path, d)
			}
		})
	}
}

// The transform is deterministic: two runs give the same bytes.
func TestDeterministic(t *testing.T) {
	for _, in := range goldenInputs(t) {
		a, _, _ := runGolden(t, in)
		b, _, _ := runGolden(t, in)
		require.Equal(t, string(a), string(b), in)
	}
}
