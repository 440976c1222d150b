package transform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/diag"
)

// refusalText joins a kernel's refusal messages.
func refusalText(k *KernelInfo) string {
	var b strings.Builder
	diag.Write(&b, k.Refusals)
	return b.String()
}

// Declarations with constructor arguments are not calls, and calls into
// CUDA's and the C++ library's namespaces are known not to read the block
// index; only unknown functions that could come from a missing project
// header make the transform refuse.
func TestUnresolvedCalls(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		unresolved []string
		refused    string // substring of a refusal, "" for none
	}{
		{"ctor-style declarations", "half2 value(0.f, 0.f); float3 v(a[0], b, c); MyType t(b); a[blockIdx.x] = v.x;", nil, ""},
		{"ctor-style declaration with index args", "float3 v(blockIdx.x, b, c); a[0] = v.x;", nil, ""},
		{"comma declarators", "int2 p(1, 2), q(3, 4); a[0] = p.x + q.y;", nil, ""},
		{"vector type casts and half math", "a[0] = float2(b, c).x + __half2float(hsqrt(__float2half(b)));", nil, ""},
		{"system namespaces", "a[0] = std::min(b, c) + cuda::std::max(b, c); auto s = cub::ThreadLoad<cub::LOAD_LDG>(a);", nil, ""},
		{"cooperative groups", "auto cta = cg::this_thread_block(); auto w = cg::tiled_partition<32>(cta); a[0] = cg::reduce(w, b, cg::plus<float>());", nil, ""},
		{"wmma after using namespace", "using namespace nvcuda; wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc; wmma::fill_fragment(acc, 0.0f); fill_fragment(acc, 1.0f); a[0] = b;", nil, ""},
		{"unknown project function", "a[0] = project_scale(b);", []string{"project_scale"}, "calls project_scale, which is not defined in this file"},
		{"unknown qualified project function", "a[0] = mylib::scale(b);", []string{"scale"}, "calls scale"},
		{"a call that is a call", "float3 v = make_float3(b, c, b); a[0] = lerp3(v);", []string{"lerp3"}, "calls lerp3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "#include <cuda_fp16.h>\n#include \"missing_project.h\"\n" +
				"__global__ void k(float* a, float b, float c) {\n" + tt.body + "\n}\n"
			a := load(t, "t.cu", src)
			require.Len(t, a.Kernels, 1)
			k := a.Kernels[0]
			require.Nil(t, k.Func.Def.BodyErr)
			assert.Equal(t, tt.unresolved, k.Unresolved)
			got := refusalText(k)
			if tt.refused == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, tt.refused)
			}
		})
	}
}

// A header slatec cannot read as a whole is an error at its position, not
// a silently skipped include.
func TestUnreadableHeaderIsAnError(t *testing.T) {
	dir := t.TempDir()
	hdr := filepath.Join(dir, "broken.cuh")
	require.NoError(t, os.WriteFile(hdr, []byte("__device__ int idx() {\n  return blockIdx.x;\n"), 0o644))
	main := filepath.Join(dir, "main.cu")
	src := "#include \"broken.cuh\"\n__global__ void k(int* a) { a[idx()] = 1; }\n"
	_, err := Load(main, []byte(src), nil)
	require.Error(t, err)
	d, ok := err.(diag.Diagnostic)
	require.True(t, ok, "%T", err)
	assert.Equal(t, hdr, d.File)
	assert.Equal(t, 1, d.Line)
	assert.Contains(t, d.Message, `unbalanced "{"`)
}

// Function-like macros defined in the analysed files are macros: their
// expansions count for index reads and sync points, they are never
// unknown functions, and a helper they call is reached.
func TestFunctionLikeMacros(t *testing.T) {
	tests := []struct {
		name       string
		defs, body string
		indexRead  bool   // the kernel reads blockIdx/gridDim
		syncs      bool   // the kernel has a block-level sync point
		refused    string // substring of a refusal, "" for none
	}{
		{"range check", "#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) < (hi))\n",
			"int i = threadIdx.x; if (IN_RANGE(i, 0, n)) a[i] = 1;", false, false, ""},
		{"index macro with args", "#define GID(b) ((b) * blockDim.x + threadIdx.x + blockIdx.x * 0)\n",
			"a[GID(1)] = 1;", true, false, ""},
		{"nested macros", "#define ROW() (blockIdx.y)\n#define AT(p, w) (p)[ROW() * (w)]\n",
			"AT(a, n) = 1;", true, false, ""},
		{"macro calling a plain helper", "__device__ int twice(int x) { return 2 * x; }\n#define TWICE(x) twice(x)\n",
			"a[threadIdx.x] = TWICE(n);", false, false, ""},
		{"macro calling a syncing helper", "__device__ void bar() { __syncthreads(); }\n#define BAR() bar()\n",
			"a[threadIdx.x] = 1; BAR(); a[0] = 2;", false, true, ""},
		{"macro calling an index helper", "__device__ int bid() { return blockIdx.x; }\n#define BID() bid()\n",
			"a[BID()] = 1;", true, false, "macro BID expands to a call of bid"},
		{"macro parameter named like a helper", "__device__ int bid() { return blockIdx.x; }\n#define APPLY(bid, x) ((x) + 1)\n",
			"a[0] = APPLY(0, n);", false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "#include \"missing_project.h\"\n" + tt.defs +
				"__global__ void k(int* a, int n) {\n" + tt.body + "\n}\n"
			a := load(t, "t.cu", src)
			var k *KernelInfo
			for _, x := range a.Kernels {
				if x.Func.Name == "k" {
					k = x
				}
			}
			require.NotNil(t, k)
			require.Nil(t, k.Func.Def.BodyErr)
			assert.Empty(t, k.Unresolved, "macros are not unknown functions")
			reads := false
			for _, u := range k.AllUses {
				reads = reads || u.Name == BlockIdx || u.Name == GridDim
			}
			assert.Equal(t, tt.indexRead, reads, "index read")
			assert.Equal(t, tt.syncs, k.HasBlockSync, "block sync")
			got := refusalText(k)
			if tt.refused == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, tt.refused)
			}
		})
	}
}

// Launches inside device code (dynamic parallelism) are never rewritten
// into host launcher calls, also when the launching kernel is left out.
func TestDeviceLaunchesAreNotRewritten(t *testing.T) {
	src := `__global__ void child(int* out, int n) { out[blockIdx.x] = n; }
__device__ void spawn(int* out) { child<<<2, 32>>>(out, 2); }
__global__ void parent(int* out) {
  if (threadIdx.x == 0) child<<<1, 32>>>(out, 1);
  spawn(out);
}
int main() { int* o = 0; child<<<4, 32>>>(o, 4); parent<<<1, 1>>>(o); }
`
	tests := []struct {
		name    string
		kernels []string
	}{
		{"parent left out", []string{"child"}},
		{"child only, parent named too", []string{"child", "parent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := load(t, "t.cu", src)
			assert.Len(t, a.Launches, 2, "host launches")
			assert.Len(t, a.DeviceLaunches, 2, "device launches")
			res, err := Persistent(a, Options{Version: "test", Kernels: tt.kernels})
			require.NoError(t, err)
			if len(tt.kernels) == 2 {
				require.True(t, res.Diags.HasErrors(), "parent launches from the device: refused")
				return
			}
			require.False(t, res.Diags.HasErrors())
			out := string(res.Output)
			has(t, out, "child<<<1, 32>>>(out, 1);")
			has(t, out, "child<<<2, 32>>>(out, 2);")
			has(t, out, "child__slate_launch(4, 32, 0, 0, o, 4)")
			has(t, out, "parent<<<1, 1>>>(o)")
		})
	}
}

// extern "C" kernels: the body function and worker share the kernel's
// linkage (so extern __shared__ arrays link alike), the host launcher does
// not; a helper defined after a kernel that calls it has its copy declared
// after the helper's prototype.
func TestExternCAndLateHelpers(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // in this order in the output
	}{
		{"extern C specifier", `extern "C" __global__ void k(float* a) { extern __shared__ float s[]; s[0] = a[blockIdx.x]; __syncthreads(); a[0] = s[0]; }
int main() { k<<<1, 32, 4>>>(0); }`, []string{"extern \"C\" {\n#line 1", "static __device__ __forceinline__ void k__slate_body(", "\n__global__ void k__slate(", "}\n#ifndef __CUDACC_RTC__\n__global__ void k__slate_static(", "\nvoid k__slate_launch("}},
		{"helper after its kernel", `__device__ int base(int k);
__global__ void k(int* a) { a[base(1)] = 1; }
__device__ int base(int k) { return blockIdx.x * k; }`, []string{"__device__ int base(int k);\n__device__ int base__slate(const uint3 blockIdx, const dim3 gridDim, int k);\n#line 1 \"t.cu\"\n\n",
			"a[base__slate(blockIdx, gridDim, 1)] = 1;", "__device__ int base__slate(const uint3 blockIdx, const dim3 gridDim, int k) { return"}},
		{"prototype without parameters, in a namespace", `namespace ns { __device__ int bid(); }
namespace ns { __global__ void k(int* a) { a[bid()] = 1; } }
namespace ns { __device__ int bid() { return blockIdx.x; } }`, []string{"namespace ns { __device__ int bid();\n__device__ int bid__slate(const uint3 blockIdx, const dim3 gridDim);\n#line 1 \"t.cu\"\n }\n", "a[bid__slate(blockIdx, gridDim)] = 1;"}},
		{"(void) prototype", `__device__ int bid(void);
__global__ void k(int* a) { a[bid()] = 1; }
__device__ int bid(void) { return blockIdx.x; }`, []string{"__device__ int bid__slate(const uint3 blockIdx, const dim3 gridDim);"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := load(t, "t.cu", tt.src+"\n")
			res, err := Persistent(a, Options{Version: "test"})
			require.NoError(t, err)
			var b strings.Builder
			diag.Write(&b, res.Diags)
			require.False(t, res.Diags.HasErrors(), b.String())
			out := string(res.Output)
			at := 0
			for _, w := range tt.want {
				i := strings.Index(out[at:], w)
				require.GreaterOrEqual(t, i, 0, "missing (in order) %q", w)
				at += i + len(w)
			}
		})
	}
}

// Member functions that read the block index are cloned like helpers
// (inside their class); implicit calls (operators, constructors) and
// functions taken by address are refused.
func TestClassMethodsAndReferences(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		refused string   // substring of a refusal, "" for none
		want    []string // in the output when transformed
	}{
		{"static method of a class template", `template <typename T> struct Tile { static __device__ void run(T* a) { a[blockIdx.x] = 1; } };
__global__ void k(float* a) { Tile<float>::run(a); }`, "",
			[]string{"static __device__ void run__slate(const uint3 blockIdx, const dim3 gridDim, T* a) {", "Tile<float>::run__slate(blockIdx, gridDim, a);"}},
		{"member call on an object", `struct G { int w; __device__ int row() const { return blockIdx.y * w; } };
__global__ void k(int* a) { G g{4}; a[g.row()] = 1; }`, "",
			[]string{"__device__ int row__slate(const uint3 blockIdx, const dim3 gridDim) const {", "a[g.row__slate(blockIdx, gridDim)] = 1;"}},
		{"method without index reads is not cloned", `struct G { int w; __device__ int width() const { return w; } };
__global__ void k(int* a) { G g{4}; a[g.width() + blockIdx.x] = 1; }`, "",
			[]string{"a[g.width() + blockIdx.x] = 1;"}},
		{"operator reading the index", `struct G { __device__ int operator()(int k) const { return blockIdx.x + k; } };
__global__ void k(int* a) { G g; a[g(1)] = 1; }`, "whose operator() reads blockIdx or gridDim", nil},
		{"constructor reading the index", `struct G { int b; __device__ G() { b = blockIdx.x; } };
__global__ void k(int* a) { G g; a[g.b] = 1; }`, "uses G, whose G reads blockIdx or gridDim", nil},
		{"function taken by address", `__device__ int leaf() { return blockIdx.z; }
__device__ int apply(int (*f)()) { return f(); }
__global__ void k(int* a) { a[apply(&leaf)] = 1; }`, "takes leaf without calling it", nil},
		{"members defined outside their class", `struct A { int w; __device__ int f() const; static __device__ int g(); };
__device__ int A::f() const { return blockIdx.x * w; }
__device__ int A::g() { return gridDim.x; }
__global__ void k(int* out) { A a{2}; out[a.f() + A::g()] = 1; }`, "",
			[]string{"__device__ int f__slate(const uint3 blockIdx, const dim3 gridDim) const;", "static __device__ int g__slate(const uint3 blockIdx, const dim3 gridDim);",
				"__device__ int A::f__slate(const uint3 blockIdx, const dim3 gridDim) const {", "__device__ int A::g__slate(const uint3 blockIdx, const dim3 gridDim) {",
				"out[a.f__slate(blockIdx, gridDim) + A::g__slate(blockIdx, gridDim)] = 1;"}},
		{"operator defined outside its class", `struct A { __device__ int operator[](int k) const; };
__device__ int A::operator[](int k) const { return blockIdx.x + k; }
__global__ void k(int* out) { A a; out[a[1]] = 1; }`, "uses A, whose operator[] reads blockIdx", nil},
		{"parameter named like a function", `__device__ int n() { return blockIdx.x; }
__global__ void k(int* a, int m) { int n = m; a[n] = 1; }`, "", []string{"int n = m; a[n] = 1;"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := load(t, "t.cu", tt.src+"\n")
			var k *KernelInfo
			for _, x := range a.Kernels {
				if x.Func.Name == "k" {
					k = x
				}
			}
			require.NotNil(t, k)
			got := refusalText(k)
			if tt.refused != "" {
				assert.Contains(t, got, tt.refused)
				return
			}
			require.Empty(t, got)
			res, err := Persistent(a, Options{Version: "test"})
			require.NoError(t, err)
			require.False(t, res.Diags.HasErrors())
			for _, w := range tt.want {
				has(t, string(res.Output), w)
			}
		})
	}
}

// A helper prototyped in a header and defined in the main file after a
// kernel that calls it: its copy is declared before that kernel.
func TestLateHelperWithHeaderPrototype(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "h.cuh"), []byte("#pragma once\n__device__ int base_of(int k);\n"), 0o644))
	main := filepath.Join(dir, "m.cu")
	src := "#include \"h.cuh\"\n__global__ void k(int* a) { a[base_of(1)] = 1; }\n__device__ int base_of(int k) { return blockIdx.x * k; }\n"
	a, err := Load(main, []byte(src), nil)
	require.NoError(t, err)
	res, err := Persistent(a, Options{Version: "test"})
	require.NoError(t, err)
	require.False(t, res.Diags.HasErrors())
	out := string(res.Output)
	proto := strings.Index(out, "__device__ int base_of__slate(const uint3 blockIdx, const dim3 gridDim, int k);\n#line 2 ")
	use := strings.Index(out, "a[base_of__slate(blockIdx, gridDim, 1)]")
	require.GreaterOrEqual(t, proto, 0, "prototype of the copy")
	require.Greater(t, use, proto, "declared before its first use")
}
