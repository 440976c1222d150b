package transform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/diag"
)

// Kernels cut by #if branches are refused with the lines named; kernels and
// launches whole inside branches are not.
func TestBranchRefusals(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // substring of the diagnostics, "" for none
	}{
		{"definitions per branch", "#ifdef F\n__global__ void k(float* x) { x[blockIdx.x] = 1; }\n#else\n__global__ void k(float* x) { x[blockIdx.x] = 2; }\n#endif\n", ""},
		{"complete group in body", "__global__ void k(float* x) {\n#if F\n x[blockIdx.x] = 1;\n#else\n x[blockIdx.x] = 2;\n#endif\n}\n", ""},
		{"launch per branch", "__global__ void k(float* x) { x[blockIdx.x] = 1; }\nvoid r(float* x, cudaStream_t s) {\n#ifdef F\n k<<<1, 32>>>(x);\n#else\n k<<<1, 32, 0, s>>>(x);\n#endif\n}\n", ""},
		{"if 0 junk", "#if 0\n__global__ void ghost(int* p) { {\n#endif\n__global__ void k(float* x) { x[blockIdx.x] = 1; }\n", ""},
		{"launch bounds in branch", "#ifdef F\n__global__ void __launch_bounds__(256) k(float* x)\n#else\n__global__ void k(float* x)\n#endif\n{ x[blockIdx.x] = 1; }\n",
			"the #else at line 3 is inside the head of kernel k (lines 2-6)"},
		{"parameter in branch", "__global__ void k(float* x\n#ifdef F\n, int n\n#endif\n) { x[blockIdx.x] = 1; }\n",
			"the #ifdef at line 2 is inside the head of kernel k (lines 1-5)"},
		{"body closes in one branch", "__global__ void k(float* x) {\n x[0] = 1;\n#ifdef F\n}\n#else\n x[1] = 2;\n}\n#endif\n",
			"the #ifdef at line 3 belongs to an #if group that does not open and close inside the body of kernel k (lines 1-4)"},
		{"each branch opens the body", "#ifdef F\n__global__ void k(float* x) {\n x[blockIdx.x] = 1;\n#else\n__global__ void k(float* x) {\n x[blockIdx.x] = 2;\n#endif\n}\n",
			"the kernel definition at line 2 cannot be read as one function: #if branches split it (#else at line 4, #endif at line 7, lines 2-8)"},
		{"launch cut by #if", "__global__ void k(float* x) { x[blockIdx.x] = 1; }\nvoid r(float* x, cudaStream_t s) {\n k<<<1, 32\n#ifdef F\n , 0, s\n#endif\n >>>(x);\n}\n",
			"the #ifdef at line 4 is inside the launch of k at line 3"},
		{"helper head cut", "__device__ int h(\n#ifdef F\nint a\n#else\nlong a\n#endif\n) { return blockIdx.x + a; }\n__global__ void k(int* x) { x[0] = h(1); }\n",
			"inside the head of helper h (called by kernel k)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Load("t.cu", []byte(tt.src), nil)
			require.NoError(t, err)
			res, err := Persistent(a, Options{Version: "test", Command: "transform t.cu"})
			require.NoError(t, err)
			var b strings.Builder
			diag.Write(&b, res.Diags)
			if tt.want == "" {
				require.False(t, res.Diags.HasErrors(), b.String())
				return
			}
			require.True(t, res.Diags.HasErrors())
			require.Contains(t, b.String(), tt.want)
		})
	}
}

// A launcher needed before the definitions of a kernel in several branches
// is declared once per prototype, after the prototypes of its own branch.
func TestBranchForwardDecls(t *testing.T) {
	src := "__global__ void f(float* x);\n#ifdef F\n__global__ void g(float* x);\n#else\n__global__ void g(float* x, int n);\n#endif\n" +
		"void r(float* x) {\n f<<<1, 1>>>(x);\n#ifdef F\n g<<<1, 1>>>(x);\n#else\n g<<<1, 1>>>(x, 2);\n#endif\n}\n" +
		"#ifdef F\n__global__ void f(float* x) { x[blockIdx.x] = 1; }\n__global__ void g(float* x) { x[blockIdx.x] = 1; }\n" +
		"#else\n__global__ void f(float* x) { x[blockIdx.x] = 2; }\n__global__ void g(float* x, int n) { x[blockIdx.x] = n; }\n#endif\n"
	a, err := Load("t.cu", []byte(src), nil)
	require.NoError(t, err)
	res, err := Persistent(a, Options{Version: "test", Command: "transform t.cu"})
	require.NoError(t, err)
	require.False(t, res.Diags.HasErrors())
	out := string(res.Output)
	head := out[strings.Index(out, "#line 1 \"t.cu\""):strings.Index(out, "void r(")]
	require.Equal(t, 1, strings.Count(head, "void f__slate_launch("), head)
	// Each prototype of g carries both of g's launcher declarations (one
	// per definition), as overloads: each build compiles one prototype.
	require.Equal(t, 4, strings.Count(head, "void g__slate_launch("), head)
	notes := 0
	for _, d := range res.Diags {
		if strings.Contains(d.Message, "before its definition") {
			notes++
		}
	}
	require.Equal(t, 2, notes) // one per launched kernel, not per definition
}

// Includes in branches a build does not take are not followed or reported;
// a missing one in a branch that depends on an undefined macro is a note.
func TestIncludesUnderIf(t *testing.T) {
	dir := t.TempDir()
	src := "#include \"have.cuh\"\n#if 0\n#include \"never.cuh\"\n#endif\n#ifdef EXTRA\n#include \"extra.cuh\"\n#endif\n" +
		"__device__ int other(int);\n__global__ void k(int* x) { x[blockIdx.x] = have(1) + other(2); }\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "have.cuh"), []byte("#pragma once\n__device__ int have(int v) { return v; }\n"), 0o644))
	main := filepath.Join(dir, "k.cu")
	tests := []struct {
		name    string
		opts    LoadOptions
		refused bool
		note    string
	}{
		{"maybe branch", LoadOptions{}, false, "#include \"extra.cuh\" not found; it is in the #if branch at line 5, which depends on EXTRA"},
		{"not taken", LoadOptions{Undefines: []string{"EXTRA"}}, false, ""},
		{"taken", LoadOptions{Defines: map[string]string{"EXTRA": ""}}, true, "#include \"extra.cuh\" not found next to the file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := LoadWith(main, []byte(src), tt.opts)
			require.NoError(t, err)
			var b strings.Builder
			diag.Write(&b, a.Diags)
			require.NotContains(t, b.String(), "never.cuh")
			if tt.note != "" {
				require.Contains(t, b.String(), tt.note)
			} else {
				require.NotContains(t, b.String(), "extra.cuh")
			}
			require.Equal(t, tt.refused, len(a.Kernels[0].Refusals) > 0)
		})
	}
}
