package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The project layout of testdata/project: kernels defined in a .cu,
// declared in a header, launched from another .cu.
func copyProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"main.cu", "kernels/scale.cu", "include/scale.cuh", "include/tile.cuh"} {
		src, err := os.ReadFile(filepath.Join("..", "testdata", "project", f))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), src, 0o644))
	}
	return dir
}

func TestCrossFileLaunchers(t *testing.T) {
	tests := []struct {
		name         string
		inputs       []string
		mainLaunches []string // in main.cu's output
		mainNative   []string // launches left as written
		headerDecls  []string // in include/scale.cuh's output
		defLinkage   []string // in kernels/scale.cu's output
		notes        []string
	}{
		{
			name:         "the whole project: launches rewritten, launchers declared in the header",
			inputs:       []string{"main.cu", "kernels/scale.cu", "include/scale.cuh", "include/tile.cuh"},
			mainLaunches: []string{"fill_strided__slate_launch<1>(", "scale__slate_launch(", "ops::shift__slate_launch("},
			headerDecls: []string{
				"__global__ void scale(float* a, float s, int n);\n#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)\nvoid scale__slate_launch(dim3 slate_grid, dim3 slate_block, size_t slate_shmem, cudaStream_t slate_stream, float* a, float s, int n);\n#endif\n#line 5 ",
				"void shift__slate_launch(dim3 slate_grid",
				"static void fill_strided__slate_launch(",
			},
			defLinkage: []string{"\nvoid scale__slate_launch(dim3", "\nvoid shift__slate_launch(dim3"},
		},
		{
			name:       "the header left out: the launches of the .cu kernels stay native, with a note",
			inputs:     []string{"main.cu", "kernels/scale.cu", "include/tile.cuh"},
			mainNative: []string{"scale<<<", "ops::shift<<<", "fill_strided<1><<<"},
			defLinkage: []string{"\nvoid scale__slate_launch(dim3"},
			notes:      []string{"launch of scale stays native: its launcher is not visible here", "launch of ops::shift stays native"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyProject(t)
			cwd, _ := os.Getwd()
			require.NoError(t, os.Chdir(dir))
			defer os.Chdir(cwd)
			code, _, errs := slatec(t, "", append([]string{"transform", "-o", "out/"}, tt.inputs...)...)
			require.Equal(t, 0, code, errs)
			read := func(f string) string {
				b, err := os.ReadFile(filepath.Join("out", f))
				require.NoError(t, err)
				return string(b)
			}
			mainOut := read("main.cu")
			for _, s := range tt.mainLaunches {
				assert.Contains(t, mainOut, s)
			}
			for _, s := range tt.mainNative {
				assert.Contains(t, mainOut, s)
			}
			if len(tt.headerDecls) > 0 {
				h := read("include/scale.cuh")
				for _, s := range tt.headerDecls {
					assert.Contains(t, h, s)
				}
			}
			def := read("kernels/scale.cu")
			for _, s := range tt.defLinkage {
				assert.Contains(t, def, s)
			}
			assert.NotContains(t, def, "static void scale__slate_launch(")
			for _, s := range tt.notes {
				assert.Contains(t, errs, s)
			}
			if len(tt.notes) == 0 {
				assert.False(t, strings.Contains(errs, "stays native"), errs)
			}
		})
	}
}

func TestPrototypeOnlyHeaderDeclaresLaunchers(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "k.cuh", "#pragma once\n__global__ void twice(float* a, int n);\n")
	write(t, dir, "k.cu", "#include \"k.cuh\"\n__global__ void twice(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2; }\n")
	write(t, dir, "main.cu", "#include \"k.cuh\"\nvoid run(float* a, int n) { twice<<<(n + 127) / 128, 128>>>(a, n); }\n")
	cwd, _ := os.Getwd()
	require.NoError(t, os.Chdir(dir))
	defer os.Chdir(cwd)
	code, _, errs := slatec(t, "", "transform", "-o", "out/", "main.cu", "k.cu", "k.cuh")
	require.Equal(t, 0, code, errs)
	h, err := os.ReadFile(filepath.Join("out", "k.cuh"))
	require.NoError(t, err)
	assert.Contains(t, string(h), "__global__ void twice(float* a, int n);\n#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)\nvoid twice__slate_launch(")
	m, err := os.ReadFile(filepath.Join("out", "main.cu"))
	require.NoError(t, err)
	assert.Contains(t, string(m), "twice__slate_launch((n + 127) / 128, 128, 0, 0, a, n)")
}

func TestTransformReport(t *testing.T) {
	if p, _ := findNVCC(); p == "" {
		t.Skip("no nvcc (make cuda-tools installs one; make test sets SLATEC_CUDA_PREFIX)")
	}
	dir := t.TempDir()
	in := write(t, dir, "k.cu", goodKernel)
	code, _, errs := slatec(t, "", "transform", "--report", "-o", filepath.Join(dir, "out.cu"), in)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "worker resources (sm_90, ptxas")
	assert.Regexp(t, `scale\s+\d+ -> \d+`, errs)
	assert.Contains(t, errs, "blocks per SM")
}

// A .cu included whole by another (a unity build, common in samples): its
// kernels' launchers come with it.
func TestIncludedCuFileBringsItsLaunchers(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "kern.cu", "__global__ void inc(int* a) { a[blockIdx.x * blockDim.x + threadIdx.x] += 1; }\n")
	write(t, dir, "main.cu", "#include \"kern.cu\"\nvoid run(int* a) { inc<<<4, 64>>>(a); }\n")
	cwd, _ := os.Getwd()
	require.NoError(t, os.Chdir(dir))
	defer os.Chdir(cwd)
	code, _, errs := slatec(t, "", "transform", "-o", "out/", "main.cu", "kern.cu")
	require.Equal(t, 0, code, errs)
	m, err := os.ReadFile(filepath.Join("out", "main.cu"))
	require.NoError(t, err)
	assert.Contains(t, string(m), "inc__slate_launch(4, 64, 0, 0, a)")
	assert.NotContains(t, errs, "stays native")
}

func TestInstanceArgs(t *testing.T) {
	tests := []struct{ demangled, name, want string }{
		{"void wmma_gemm_f16_tiles<64, 64, 2, 2>(int, int, int, __half const*, __half const*, __half*)", "wmma_gemm_f16_tiles", "64, 64, 2, 2"},
		{"void ns::scale<float, 4u>(float*)", "ns::scale", "float, 4u"},
		{"void conv<Vec<float, 4>, true>(int)", "conv", "Vec<float, 4>, true"},
		{"void k<(anonymous namespace)::Tag>(int)", "k", ""},
		{"void other<1>(int)", "k", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, instanceArgs(tt.demangled, tt.name), tt.demangled)
	}
}

// A class of a header whose static member reads the block index (item 12 of
// issue 14 in a project's layout): transformed with the header, the member's
// copy goes into the class in the header's output and the kernel's copy in
// the other file calls it; without the header, a refusal that says to add it.
// A constructor that reads the index (an implicit call) is refused, with
// the note in the header.
func TestCrossFileHeaderClass(t *testing.T) {
	dir := copyProject(t)
	cwd, _ := os.Getwd()
	require.NoError(t, os.Chdir(dir))
	defer os.Chdir(cwd)

	code, _, errs := slatec(t, "", "transform", "-o", "out/", "main.cu", "kernels/scale.cu", "include/scale.cuh", "include/tile.cuh")
	require.Equal(t, 0, code, errs)
	tile, err := os.ReadFile("out/include/tile.cuh")
	require.NoError(t, err)
	assert.Contains(t, string(tile), "__device__ static int index__slate(const uint3 blockIdx, const dim3 gridDim) { return blockIdx.x * kBlock + threadIdx.x; }\n#endif\n")
	assert.Regexp(t, `(?s)struct Tile \{.*index__slate\(const uint3.*\n\};`, string(tile), "the copy is inside the class")
	def, err := os.ReadFile("out/kernels/scale.cu")
	require.NoError(t, err)
	assert.Contains(t, string(def), "int i = Tile<256>::index__slate(blockIdx, gridDim);")
	assert.NotContains(t, string(def), "index__slate(const uint3", "the copy is the header's, not repeated here")

	// The header left out: refused, naming it.
	code, _, errs = slatec(t, "", "transform", "-o", "out2/", "main.cu", "kernels/scale.cu", "include/scale.cuh")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "uses Tile, which reads blockIdx or gridDim inside a class")
	assert.Contains(t, errs, "transform include/tile.cuh with this file")
	_, err = os.Stat("out2")
	assert.True(t, os.IsNotExist(err), "no output written")

	// A constructor that reads the index, in a header of the run: refused
	// (an implicit call cannot be redirected), not sent to transform it.
	require.NoError(t, os.WriteFile("include/ctor.cuh", []byte("#pragma once\nstruct Here {\n    int b;\n    __device__ Here() : b(blockIdx.x) {}\n};\n"), 0o644))
	require.NoError(t, os.WriteFile("k.cu", []byte("#include \"include/ctor.cuh\"\n__global__ void k(int* o) { Here h; o[h.b] = 1; }\nvoid go(int* o) { k<<<2, 32>>>(o); }\n"), 0o644))
	code, _, errs = slatec(t, "", "transform", "-o", "out3/", "k.cu", "include/ctor.cuh")
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "uses Here, which reads blockIdx or gridDim inside a class or initialiser that slatec cannot rewrite\n")
	assert.Contains(t, errs, "include/ctor.cuh:4:27: note: the read is here")
}
