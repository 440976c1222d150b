package transform

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKernelCallRewrites(t *testing.T) {
	const kernels = `__global__ void k(float* a) { a[blockIdx.x] = 1; }
template <int N> __global__ void tk(float* a) { a[blockIdx.x * N] = 1; }
namespace ns { __global__ void nk(float* a) { a[blockIdx.x] = 2; } }
`
	tests := []struct {
		name, host string
		want       []string // in the output
		notWant    []string
		note       string
	}{
		{"setter", "void h() { cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536); }",
			[]string{"slate::func_set_attribute(k, k__slate, k__slate_static, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536)"}, nil, ""},
		{"template instance and cast", "void h() { cudaFuncSetAttribute((const void*)tk<4>, cudaFuncAttributePreferredSharedMemoryCarveout, 100); }",
			[]string{"slate::func_set_attribute((const void*)tk<4>, (const void*)tk__slate<4>, (const void*)tk__slate_static<4>, cudaFuncAttributePreferredSharedMemoryCarveout, 100)"}, nil, ""},
		{"qualified, query in the second argument", "void h(cudaFuncAttributes* at) { cudaFuncGetAttributes(at, ns::nk); }",
			[]string{"slate::func_get_attributes(at, ns::nk, ns::nk__slate, ns::nk__slate_static)"}, nil, ""},
		{"occupancy query", "void h(int* n) { ::cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, k, 256, 0); }",
			[]string{"slate::occupancy_max_active_blocks_per_multiprocessor(n, k, k__slate, k__slate_static, 256, 0)"}, []string{"::slate::"}, ""},
		{"block-size search, kernel third", "void h(int* g, int* b) { cudaOccupancyMaxPotentialBlockSize(g, b, k, 0, 0); }",
			[]string{"slate::occupancy_max_potential_block_size(g, b, k, k__slate, k__slate_static, 0, 0)"}, nil, ""},
		{"a handle variable is not a kernel", "void h(const void* f) { cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, 1); }",
			[]string{"cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, 1)"}, []string{"slate::func_set_attribute(f"}, ""},
		{"a method of that name is not the runtime's", "struct S { int cudaFuncSetAttribute(const void*, int, int); }; void h(S s) { s.cudaFuncSetAttribute((const void*)k, 0, 1); }",
			[]string{"s.cudaFuncSetAttribute((const void*)k, 0, 1)"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := load(t, "t.cu", kernels+tt.host+"\n")
			res, err := Persistent(a, Options{Version: "test"})
			require.NoError(t, err)
			require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
			assertHas(t, string(res.Output), tt.want, tt.notWant)
		})
	}
}

func TestKernelCallBeforeDefinitionStays(t *testing.T) {
	src := `__global__ void k(float* a);
void h() { cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536); }
__global__ void k(float* a) { a[blockIdx.x] = 1; }
__device__ void d() { }
`
	res, err := Persistent(load(t, "t.cu", src), Options{Version: "test"})
	require.NoError(t, err)
	out := string(res.Output)
	assert.Contains(t, out, "void h() { cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536); }")
	var notes []string
	for _, d := range res.Diags {
		notes = append(notes, d.Message)
	}
	assert.Contains(t, strings.Join(notes, "\n"), "cudaFuncSetAttribute on k before its definition stays as written")
}

func TestSetupCallsWrapped(t *testing.T) {
	const kernel = "__global__ void k(float* a) { a[blockIdx.x] = 1; }\n"
	tests := []struct {
		name, host string
		want       []string // in the output
		notWant    []string
	}{
		{"allocation and copy", "void h(float** p, float* q) { cudaMalloc(p, 4); cudaMemcpy(*p, q, 4, cudaMemcpyHostToDevice); }",
			[]string{"slate_first_use(cudaMalloc(p, 4))", "slate_first_use(cudaMemcpy(*p, q, 4, cudaMemcpyHostToDevice))"}, nil},
		{"inside a macro argument, global qualifier kept", "#define CHECK(x) (void)(x)\nvoid h() { CHECK(::cudaSetDevice(0)); }",
			[]string{"CHECK(slate_first_use(::cudaSetDevice(0)))", "#define CHECK(x) (void)(x)"}, nil},
		{"nested parentheses", "void h(float** p, int n) { cudaMalloc((void**)p, (n + 1) * sizeof(float)); }",
			[]string{"slate_first_use(cudaMalloc((void**)p, (n + 1) * sizeof(float)))"}, nil},
		{"the cudaFree(0) idiom, not other frees", "void h(float* p) { cudaFree(0); cudaFree(p); }",
			[]string{"slate_first_use(cudaFree(0))", " cudaFree(p);"}, []string{"slate_first_use(cudaFree(p))"}},
		{"class member bodies", "struct B { float* p; B() { cudaMalloc(&p, 4); } };",
			[]string{"slate_first_use(cudaMalloc(&p, 4))"}, nil},
		{"device code is not host setup", "__device__ void d(float** p) { cudaMalloc(p, 4); }",
			[]string{"{ cudaMalloc(p, 4); }"}, []string{"slate_first_use(cudaMalloc(p, 4))"}},
		{"a method or another namespace's function", "struct S { int cudaMalloc(int); }; namespace n { int cudaMemset(int); } void h(S s) { s.cudaMalloc(1); n::cudaMemset(2); }",
			[]string{"s.cudaMalloc(1)", "n::cudaMemset(2)"}, []string{"slate_first_use(s.", "slate_first_use(n::"}},
		{"in a directive", "#define ALLOC(p) cudaMalloc(p, 4)\nvoid h() {}",
			[]string{"#define ALLOC(p) cudaMalloc(p, 4)"}, []string{"slate_first_use(cudaMalloc(p, 4))"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Persistent(load(t, "t.cu", kernel+tt.host+"\n"), Options{Version: "test"})
			require.NoError(t, err)
			require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
			assertHas(t, string(res.Output), tt.want, tt.notWant)
		})
	}
}

// A file with setup calls and no kernel of its own gets the first-use header
// when the run transforms kernels elsewhere (FirstUse), and is left alone
// otherwise; NoLaunchRewrite and NVRTC output leave host calls as written.
func TestSetupCallsInKernelFreeFile(t *testing.T) {
	const src = "#include <cuda_runtime.h>\nint main() { float* p; cudaMalloc(&p, 4); return 0; }\n"
	res, err := Persistent(load(t, "main.cu", src), Options{Version: "test", FirstUse: true})
	require.NoError(t, err)
	assert.True(t, res.Changed)
	out := string(res.Output)
	assert.Contains(t, out, "slate_first_use(cudaMalloc(&p, 4))")
	assert.Contains(t, out, "#define SLATE_FIRST_USE_H")
	assert.NotContains(t, out, "SLATE_PRELUDE_H", "the header alone, not the prelude")
	assert.Contains(t, out, "#line 1 \"main.cu\"\n#include <cuda_runtime.h>")

	for _, opts := range []Options{{Version: "test"}, {Version: "test", FirstUse: true, NoLaunchRewrite: true}} {
		res, err = Persistent(load(t, "main.cu", src), opts)
		require.NoError(t, err)
		assert.False(t, res.Changed)
		assert.Equal(t, src, string(res.Output))
	}
	k := "__global__ void k(float* a) { a[blockIdx.x] = 1; }\n" + src
	res, err = Persistent(load(t, "k.cu", k), Options{Version: "test", DeviceOnly: true, NoLaunchRewrite: true})
	require.NoError(t, err)
	assert.NotContains(t, string(res.Output), "slate_first_use(cudaMalloc")
}

// assertHas checks that out contains every string of want and none of notWant.
func assertHas(t *testing.T, out string, want, notWant []string) {
	t.Helper()
	for _, w := range want {
		assert.Contains(t, out, w)
	}
	for _, w := range notWant {
		assert.NotContains(t, out, w)
	}
}
