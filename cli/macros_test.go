package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -D and -U decide which #include lines are followed, and -D/-U go into
// the output's header line.
func TestDefineUndefineFlags(t *testing.T) {
	dir := t.TempDir()
	src := "#ifdef EXTRA\n#include \"extra.cuh\"\n#endif\n__device__ int other(int);\n" +
		"__global__ void k(int* x) { x[blockIdx.x] = other(1); }\n"
	in := write(t, dir, "k.cu", src)
	out := filepath.Join(dir, "out.cu")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
		header string
	}{
		{"maybe: a note", nil, 0, "depends on EXTRA (not given with -D or -U)", "// slatec transform --iters auto "},
		{"-U: not followed", []string{"-U", "EXTRA"}, 0, "", "--iters auto -U EXTRA "},
		{"-D: missing refuses", []string{"-DEXTRA"}, 1, "#include \"extra.cuh\" is missing", ""},
		{"-D value in header", []string{"-D", "EXTRA=0", "-U", "EXTRA"}, 0, "", "--iters auto -D EXTRA=0 -U EXTRA "},
		{"bad name", []string{"-D", "1X"}, 2, "not a macro name", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"transform", "-o", out}, tt.args...), in)
			code, _, errs := slatec(t, "", args...)
			require.Equal(t, tt.code, code, errs)
			if tt.stderr != "" {
				assert.Contains(t, errs, tt.stderr)
			} else {
				assert.NotContains(t, errs, "extra.cuh")
			}
			if tt.header != "" {
				got := string(mustRead(t, out))
				assert.Contains(t, got[:200], tt.header)
			}
		})
	}
	code, stdout, errs := slatec(t, "", "inspect", "-U", "EXTRA", in)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "kernel k")
	assert.NotContains(t, errs, "extra.cuh")
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

// A kernel defined in two #if branches of k.cu with prototypes per branch
// in k.cuh: each prototype carries both launchers' declarations, so a
// launch from main.cu compiles in either build.
func TestCrossFileBranchLaunchers(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "k.cuh", "#pragma once\n#ifdef F\n__global__ void kk(float* x, int n);\n#else\n__global__ void kk(float* x, int n, int m);\n#endif\n")
	write(t, dir, "k.cu", "#include \"k.cuh\"\n#ifdef F\n__global__ void kk(float* x, int n) { x[blockIdx.x] = n; }\n#else\n__global__ void kk(float* x, int n, int m) { x[blockIdx.x] = n + m; }\n#endif\n")
	write(t, dir, "main.cu", "#include \"k.cuh\"\nvoid go(float* x) {\n#ifdef F\n    kk<<<1, 1>>>(x, 1);\n#else\n    kk<<<1, 1>>>(x, 1, 2);\n#endif\n}\n")
	out := filepath.Join(dir, "out") + "/"
	code, _, errs := slatec(t, "", "transform", "-o", out, filepath.Join(dir, "k.cuh"), filepath.Join(dir, "k.cu"), filepath.Join(dir, "main.cu"))
	require.Equal(t, 0, code, errs)
	h := string(mustRead(t, filepath.Join(out, "k.cuh")))
	assert.Equal(t, 2, strings.Count(h, "cudaStream_t slate_stream, float* x, int n);"), h)
	assert.Equal(t, 2, strings.Count(h, "cudaStream_t slate_stream, float* x, int n, int m);"), h)
	m := string(mustRead(t, filepath.Join(out, "main.cu")))
	assert.Contains(t, m, "kk__slate_launch(1, 1, 0, 0, x, 1);")
	assert.Contains(t, m, "kk__slate_launch(1, 1, 0, 0, x, 1, 2);")
}
