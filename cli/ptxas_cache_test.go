package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeNVCC writes a stand-in for nvcc that counts its runs in DIR/runs,
// writes a dependency file (-MF) naming the source and DIR/inc/h.h, and
// prints a ptxas report whose register count is h.h's contents.
func fakeNVCC(t *testing.T, dir string) string {
	t.Helper()
	nvcc := filepath.Join(dir, "nvcc")
	script := `#!/bin/sh
echo run >> "` + dir + `/runs"
mf=""; src=""
while [ $# -gt 0 ]; do
  case "$1" in
    -MF) mf="$2"; shift ;;
    *) src="$1" ;;
  esac
  shift
done
[ -n "$mf" ] && printf 'out.o : %s \\\n  ` + dir + `/inc/h.h\n' "$src" > "$mf"
echo "ptxas info    : Compiling entry function 'k' for 'sm_90'"
echo "ptxas info    : Used $(cat ` + dir + `/inc/h.h) registers, used 0 barriers"
`
	require.NoError(t, os.WriteFile(nvcc, []byte(script), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "inc"), 0o755))
	return nvcc
}

func runs(t *testing.T, dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "runs"))
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "run")
}

// A compile runs once; the same compile again is answered from the cache
// until a file it read changes, or the source does; SLATEC_PTXAS_CACHE=0
// runs every compile.
func TestPtxasCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SLATEC_CACHE_DIR", filepath.Join(dir, "cache"))
	t.Setenv(envPtxasCache, "")
	nvcc := fakeNVCC(t, dir)
	header := filepath.Join(dir, "inc", "h.h")
	src := filepath.Join(dir, "k.cu")
	require.NoError(t, os.WriteFile(header, []byte("40"), 0o644))
	require.NoError(t, os.WriteFile(src, []byte("__global__ void k() {}\n"), 0o644))
	compile := func() string {
		out, err := runPtxas(nvcc, "sm_90", src, "", t.TempDir(), []string{filepath.Join(dir, "inc")}, nil)
		require.NoError(t, err)
		return out
	}
	for _, step := range []struct {
		name    string
		edit    func()
		runs    int
		regs    string
		nocache bool
	}{
		{name: "first compile", runs: 1, regs: "Used 40 registers"},
		{name: "unchanged: from the cache", runs: 1, regs: "Used 40 registers"},
		{name: "a header it read changed", edit: func() { require.NoError(t, os.WriteFile(header, []byte("48"), 0o644)) }, runs: 2, regs: "Used 48 registers"},
		{name: "unchanged again", runs: 2, regs: "Used 48 registers"},
		{name: "the source changed", edit: func() { require.NoError(t, os.WriteFile(src, []byte("__global__ void k() { }\n"), 0o644)) }, runs: 3, regs: "Used 48 registers"},
		{name: "cache off", nocache: true, runs: 4, regs: "Used 48 registers"},
	} {
		if step.edit != nil {
			step.edit()
		}
		if step.nocache {
			t.Setenv(envPtxasCache, "0")
		}
		out := compile()
		assert.Equal(t, step.runs, runs(t, dir), step.name)
		assert.Contains(t, out, step.regs, step.name)
	}
}

// A temporary file transformed from an input is cached under the input's
// path (keyPath): the same bytes in another temporary directory hit, and
// the temporary file itself is not among the entry's files (it is gone by
// the next run).
func TestPtxasCacheTemporarySource(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SLATEC_CACHE_DIR", filepath.Join(dir, "cache"))
	t.Setenv(envPtxasCache, "")
	nvcc := fakeNVCC(t, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "inc", "h.h"), []byte("32"), 0o644))
	input := filepath.Join(dir, "k.cu")
	for i := 0; i < 2; i++ {
		tmp := t.TempDir()
		src := filepath.Join(tmp, "k.cu")
		require.NoError(t, os.WriteFile(src, []byte("// transformed\n"), 0o644))
		_, err := runPtxas(nvcc, "sm_90", src, input, tmp, []string{filepath.Join(dir, "inc")}, nil)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, runs(t, dir))
}

func TestParseDepFile(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"/t/out.o : /a/k.cu \\\n    /a/b.h \\\n    /c/d.h\n", []string{"/a/k.cu", "/a/b.h", "/c/d.h"}},
		{"out.o : /a/with\\ space.h /b.h\n", []string{"/a/with space.h", "/b.h"}},
		{"out.o : /a/k.cu \\\r\n /b.h\r\n", []string{"/a/k.cu", "/b.h"}},
		{"no rule here", nil},
	} {
		assert.Equal(t, tc.want, parseDepFile(tc.in), tc.in)
	}
}
