package transform

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/emit"
)

// load analyses a source held in the test.
func load(t *testing.T, name, src string) *Analysis {
	t.Helper()
	a, err := Load(name, []byte(src), nil)
	require.NoError(t, err)
	return a
}

func merge(t *testing.T, opts MergeOptions, inputs ...MergeInput) *MergeResult {
	t.Helper()
	if opts.Version == "" {
		opts.Version = "test"
	}
	res, err := Merge(inputs, opts)
	require.NoError(t, err)
	return res
}

func mustMerge(t *testing.T, opts MergeOptions, inputs ...MergeInput) string {
	t.Helper()
	res := merge(t, opts, inputs...)
	var b strings.Builder
	diag.Write(&b, res.Diags)
	require.False(t, res.Diags.HasErrors(), b.String())
	require.NotNil(t, res.Output)
	return string(res.Output)
}

// has and hasNot report a missing or unwanted snippet without printing
// the whole (long) output.
func has(t *testing.T, s, sub string, msg ...any) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("output lacks %q %v", sub, msg)
	}
}

func hasNot(t *testing.T, s, sub string, msg ...any) {
	t.Helper()
	if strings.Contains(s, sub) {
		t.Errorf("output has %q %v", sub, msg)
	}
}

// between returns the text from the first occurrence of start up to the
// next occurrence of end after it.
func between(t *testing.T, s, start, end string) string {
	t.Helper()
	i := strings.Index(s, start)
	require.GreaterOrEqual(t, i, 0, "no %q", start)
	j := strings.Index(s[i:], end)
	require.GreaterOrEqual(t, j, 0, "no %q after %q", end, start)
	return s[i : i+j+len(end)]
}

const scaleSrc = `#include <cstdio>
__global__ void scale(float* a, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= s;
}
void host(float* a, int n) { scale<<<(n + 255) / 256, 256>>>(a, 2.0f, n); }
int main() { return 0; }
`

const fill2dSrc = `__global__ void fill2d(int* out, int w, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y * w + x < n) out[y * w + x] = x + 1000 * y;
}
int main() { return 1; }
`

func TestMergeTwoKernelsStructure(t *testing.T) {
	a, b := load(t, "a.cu", scaleSrc), load(t, "b.cu", fill2dSrc)
	res := merge(t, MergeOptions{Alloc: []int{9, 6}, OutputName: "m.cu"},
		MergeInput{Analysis: a, Kernel: "scale"}, MergeInput{Analysis: b, Kernel: "fill2d"})
	require.False(t, res.Diags.HasErrors())
	out := string(res.Output)
	assert.Equal(t, "slate_merged_scale_fill2d", res.Kernel)
	assert.Equal(t, "slate_merged_scale_fill2d_launch", res.Launcher)
	assert.False(t, res.Sync)

	// The inputs in order, each after a #line, with the original kernels kept.
	ia, ib := strings.Index(out, "#line 1 \"a.cu\"\n"), strings.Index(out, "#line 1 \"b.cu\"\n")
	require.True(t, ia > 0 && ib > ia)
	has(t, out, "__global__ void scale(float* a, float s, int n) {")
	// Host code is fenced off, and line numbers are restored after it.
	has(t, out, "#if 0 // slatec merge: host code of the input, left out\nvoid host(float* a, int n)")
	has(t, out, "int main() { return 1; }\n#endif\n#line 5 \"b.cu\"")
	assert.Equal(t, 3, strings.Count(out, "#if 0 // slatec merge"))

	// Bodies take the four virtual builtins and start with idle threads inactive.
	body := between(t, out, "static __device__ __forceinline__ void fill2d__merged_body(", "\n}\n")
	has(t, body, "(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim,\n"+
		"    const unsigned int slate_tid, const unsigned int slate_nthreads, int* out, int w, int n)")
	has(t, body, "{ bool slate_active = slate_tid < slate_nthreads;")
	has(t, body, "if (slate_active) { if (y * w + x < n) out[y * w + x] = x + 1000 * y; }")

	// The merged kernel, its dispatch and its launcher.
	has(t, out, "__global__ void slate_merged_scale_fill2d(const int* __restrict__ slate_map_kernel, const unsigned int* __restrict__ slate_map_blk,\n"+
		"    slate_mctl* __restrict__ slate_ctl_p, const slate_mcfg<2> slate_cfg_v, float* a, float s, int scale_n, int* out, int w, int fill2d_n)")
	has(t, out, "case 1:\n            fill2d__merged_body(slate_mblock(slate_lb, slate_cfg_v.grid[1]), slate_cfg_v.grid[1],\n"+
		"                slate_mthread(slate_tid, slate_cfg_v.block[1], slate_cfg_v.nthreads[1]), slate_cfg_v.block[1],\n"+
		"                slate_tid, slate_cfg_v.nthreads[1], out, w, fill2d_n);")
	has(t, out, "slate_merged_interleaved(slate_map_kernel, slate_map_blk, slate_run);")
	has(t, out, "static const unsigned int slate_default_alloc[2] = { 9u, 6u };")
	has(t, out, "inline cudaError_t slate_merged_scale_fill2d_launch(\n    dim3 slate_grid0, dim3 slate_block0, size_t slate_shmem0,\n"+
		"    dim3 slate_grid1, dim3 slate_block1, size_t slate_shmem1,\n    cudaStream_t slate_stream, float* a, float s, int scale_n, int* out, int w, int fill2d_n)")
	has(t, out, "#line ", "the tail has a #line")
	assert.Regexp(t, `#line \d+ "m.cu"\n// ---- slatec merged scheduler slate_merged_scale_fill2d \(interleaved mode\)`, out)
	// No shared memory: no union.
	hasNot(t, out, "_smem slate_sm;")

	require.Len(t, res.Kernels, 2)
	assert.Equal(t, "scale__merged_body", res.Kernels[0].Body)
	assert.Equal(t, 9, res.Kernels[0].Alloc)
	assert.Equal(t, []MergedParam{{Name: "out", Original: "out", Type: "int*", Decl: "int* out"},
		{Name: "w", Original: "w", Type: "int", Decl: "int w"}, {Name: "fill2d_n", Original: "n", Type: "int", Decl: "int fill2d_n"}},
		res.Kernels[1].Params)
}

func TestMergeModes(t *testing.T) {
	for mode, call := range map[MergeMode]string{
		MergePersistent: "slate_merged_persistent<true>(slate_ctl_p, slate_cfg_v, slate_map_kernel, slate_map_blk, slate_run);",
		MergeSMRange:    "slate_merged_smrange<true>(slate_ctl_p, slate_cfg_v, slate_run);",
	} {
		a := load(t, "a.cu", scaleSrc)
		b := load(t, "b.cu", `__global__ void r(int* o) { __shared__ int s[64]; s[threadIdx.x] = 1; __syncthreads(); o[threadIdx.x] = s[63 - threadIdx.x]; }`)
		out := mustMerge(t, MergeOptions{Mode: mode}, MergeInput{Analysis: a, Kernel: "scale"}, MergeInput{Analysis: b, Kernel: "r"})
		has(t, out, call, mode)
		has(t, out, mode.modeConst(), mode)
	}
	_, err := ParseMergeMode("fancy")
	assert.Error(t, err)
}

func TestMergeParamRenaming(t *testing.T) {
	a := load(t, "a.cu", `__global__ void k1(float* data, int n, int) { data[threadIdx.x] = n; }`)
	b := load(t, "b.cu", `__global__ void k2(int* data, int n, int k1_n) { data[threadIdx.x] = n + k1_n; }`)
	res := merge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "k1"}, MergeInput{Analysis: b, Kernel: "k2"})
	require.False(t, res.Diags.HasErrors())
	var names []string
	for _, k := range res.Kernels {
		for _, p := range k.Params {
			names = append(names, p.Name)
		}
	}
	// Shared names get the kernel's name as prefix; the unnamed parameter
	// gets a name; k2's own k1_n forces a suffix on k1's renamed n.
	assert.Equal(t, []string{"k1_data", "k1_n", "k1_p2", "k2_data", "k2_n", "k1_n_2"}, names)
	out := string(res.Output)
	has(t, out, "float* k1_data, int k1_n, int k1_p2, int* k2_data, int k2_n, int k1_n_2)")
	// Bodies keep the kernels' own names; the dispatch passes the renamed ones.
	has(t, out, "const unsigned int slate_nthreads, int* data, int n, int k1_n)")
	has(t, out, "slate_tid, slate_cfg_v.nthreads[0], k1_data, k1_n, k1_p2);")
	has(t, out, "slate_tid, slate_cfg_v.nthreads[1], k2_data, k2_n, k1_n_2);")
}

const sharedSrc = `#define TS 32
__global__ void tiles(float* o) {
    __shared__ float tile[TS][TS + 1];
    __shared__ int flag, counts[4];
    __shared__ __align__(16) float4 v[2];
    extern __shared__ char dyn[];
    if (threadIdx.x == 0) flag = 1;
    __syncthreads();
    {
        __shared__ float tile[8];
        tile[threadIdx.x % 8] = 1.0f;
    }
    constexpr int L = 8;
    __shared__ float local_sized[L];
    o[threadIdx.x] = tile[0][threadIdx.x % TS] + flag + counts[0] + v[0].x + dyn[0] + local_sized[0];
}
`

func TestMergeSharedUnion(t *testing.T) {
	a := load(t, "s.cu", sharedSrc)
	b := load(t, "b.cu", `__global__ void other(int* o) { __shared__ double d[16]; d[threadIdx.x % 16] = 1; __syncthreads(); o[0] = d[0]; }`)
	res := merge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "tiles"}, MergeInput{Analysis: b, Kernel: "other"})
	require.False(t, res.Diags.HasErrors())
	out := string(res.Output)
	st := between(t, out, "struct tiles__merged_smem {", "};")
	for _, m := range []string{"    float tile[TS][TS + 1];", "    int flag;", "    int counts[4];", "    __align__(16) float4 v[2];", "    float tile_2[8];"} {
		has(t, st, m)
	}
	hasNot(t, st, "dyn", "dynamic shared memory stays extern")
	hasNot(t, st, "local_sized", "a size declared in the body cannot move out of it")
	body := between(t, out, "tiles__merged_body(const", "\n}\n")
	has(t, body, "float (&tile)[TS][TS + 1] = slate_sm.tile;")
	has(t, body, "int (&flag) = slate_sm.flag; int (&counts)[4] = slate_sm.counts;")
	has(t, body, "float4 (&v)[2] = slate_sm.v;")
	has(t, body, "float (&tile)[8] = slate_sm.tile_2;")
	has(t, body, "extern __shared__ char dyn[];")
	has(t, body, "__shared__ float local_sized[L];")
	// The union overlays both bodies' structs; each body gets its member.
	has(t, out, "union slate_merged_tiles_other_smem {\n    tiles__merged_smem tiles;\n    other__merged_smem other;\n")
	has(t, out, "__shared__ slate_merged_tiles_other_smem slate_sm;")
	has(t, out, "slate_tid, slate_cfg_v.nthreads[0], slate_sm.tiles, tiles_o);")
	assert.True(t, res.Kernels[0].SharedInUnion)
	assert.Equal(t, []string{"local_sized"}, res.Kernels[0].SharedKept)
	var warned bool
	for _, d := range res.Diags {
		warned = warned || (d.Severity == diag.Warning && strings.Contains(d.Message, "uses L, declared inside the kernel"))
	}
	assert.True(t, warned, "a warning names the local size")

	// --no-share-shared keeps every declaration where it was.
	res = merge(t, MergeOptions{NoShareShared: true}, MergeInput{Analysis: a, Kernel: "tiles"}, MergeInput{Analysis: b, Kernel: "other"})
	out = string(res.Output)
	hasNot(t, out, "__merged_smem")
	hasNot(t, out, "union slate_merged")
	assert.Contains(t, between(t, out, "tiles__merged_body(const", "\n}\n"), "__shared__ float tile[TS][TS + 1];")
	assert.False(t, res.Kernels[0].SharedInUnion)
}

func TestMergeIdleThreadPredication(t *testing.T) {
	// An early return before a barrier, merged with a kernel of larger
	// blocks: the merged block's extra threads must reach the barrier but
	// neither load nor store.
	early := load(t, "e.cu", `__global__ void early(const int* in, int* out, int n) {
    __shared__ int s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    s[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = s[blockDim.x - 1 - threadIdx.x] + s[0];
}`)
	big := load(t, "big.cu", `__global__ void big(float* x) { x[blockIdx.x * 512 + threadIdx.x] += 1.0f; }`)
	out := mustMerge(t, MergeOptions{}, MergeInput{Analysis: early, Kernel: "early"}, MergeInput{Analysis: big, Kernel: "big"})
	body := between(t, out, "early__merged_body(const", "\n}\n")
	has(t, body, "{ bool slate_active = slate_tid < slate_nthreads;")
	has(t, body, "if (slate_active) { if (i >= n) { slate_active = false; } }")
	has(t, body, "if (slate_active) { s[threadIdx.x] = in[i]; }\n    __syncthreads();\n")
	has(t, body, "if (slate_active) { out[i] = s[blockDim.x - 1 - threadIdx.x] + s[0]; }")
	// The idle threads' virtual thread index is the clamped one.
	has(t, out, "slate_mthread(slate_tid, slate_cfg_v.block[0], slate_cfg_v.nthreads[0])")
	has(t, out, "if (tid < n) {")
}

func TestMergeHoistKeepsDeclaratorOrder(t *testing.T) {
	// A declarator whose initialiser loads is hoisted (assigned under the
	// guard after the declaration); later declarators that read it follow
	// that assignment in order, not before it (found on the GPU: `float a =
	// in[i], b = 0.5f * a` computed b from a's zero).
	big := load(t, "big.cu", `__global__ void big(float* x) { x[blockIdx.x * 512 + threadIdx.x] += 1.0f; }`)
	for _, tc := range []struct{ name, decl, want, wantErr string }{
		{"derived", "float a = in[i], b = 0.5f * a + 0.25f, c = 2.0f;",
			"float a {}, b {}, c = 2.0f; if (slate_active) { a = in[i]; } b = 0.5f * a + 0.25f;", ""},
		{"chain", "const int j = in[i], k = j + 1, v = in[k], w = v + k;",
			"/*const*/ int j {}, k {}, v {}, w {}; if (slate_active) { j = in[i]; } k = j + 1; if (slate_active) { v = in[k]; } w = v + k;", ""},
		{"independent", "float a = in[i], b = 2.0f * n;",
			"float a {}, b = 2.0f * n; if (slate_active) { a = in[i]; }", ""},
		{"transitive", "float a = in[i], b = a, c = b + 1.0f;",
			"float a {}, b {}, c {}; if (slate_active) { a = in[i]; } b = a; c = b + 1.0f;", ""},
		{"array", "float a = in[i], arr[2] = {a, a};", "", "the array arr is initialised from a"},
		{"reference", "float a = in[i], &r = a;", "", "the reference r is initialised from a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `__global__ void early(const float* in, float* out, int n) {
    __shared__ float s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    ` + tc.decl + `
    s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[i] = s[threadIdx.x];
}`
			a := load(t, "e.cu", src)
			if tc.wantErr != "" {
				res := merge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "early"}, MergeInput{Analysis: big, Kernel: "big"})
				require.True(t, res.Diags.HasErrors())
				var b strings.Builder
				diag.Write(&b, res.Diags)
				assert.Contains(t, b.String(), tc.wantErr)
				return
			}
			out := mustMerge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "early"}, MergeInput{Analysis: big, Kernel: "big"})
			has(t, between(t, out, "early__merged_body(const", "\n}\n"), tc.want)
		})
	}
}

func TestMergeRefusals(t *testing.T) {
	ok := load(t, "ok.cu", scaleSrc)
	for _, tc := range []struct {
		name, src, kernel, want string
	}{
		{"predication", `__global__ void rounds(const int* m, int* o) {
    int i = threadIdx.x;
    if (i > 100) return;
    int r = m[i];
    for (int k = 0; k < r; ++k) { __syncthreads(); o[i] += k; }
}`, "rounds", "cannot lower an early return"},
		{"tid asm", `__global__ void tid(int* o) { unsigned t; asm("mov.u32 %0, %%tid.x;" : "=r"(t)); o[t] = 1; }`, "tid", "%tid"},
		{"reserved", `__global__ void res(int* o) { int slate_x = 1; o[0] = slate_x; }`, "res", "reserves"},
		{"grid sync", `#include <cooperative_groups.h>
__global__ void g(int* o) { cooperative_groups::this_grid().sync(); o[0] = 1; }`, "g", "grid"},
		{"class reads threadIdx", `struct Lane { __device__ int get() const { return threadIdx.x % 32; } };
__global__ void cls(int* o) { Lane l; o[l.get()] = 1; }`, "cls", "reads threadIdx or blockDim inside a class"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := load(t, "x.cu", tc.src)
			res := merge(t, MergeOptions{}, MergeInput{Analysis: ok, Kernel: "scale"}, MergeInput{Analysis: a, Kernel: tc.kernel})
			require.True(t, res.Diags.HasErrors())
			assert.Nil(t, res.Output, "no output when a kernel is refused")
			var b strings.Builder
			diag.Write(&b, res.Diags)
			assert.Contains(t, b.String(), tc.want)
			assert.Regexp(t, `x\.cu:\d+:\d+: error: kernel `+tc.kernel+`: `, b.String())
		})
	}
	// The predication refusal explains the idle threads.
	a := load(t, "x.cu", `__global__ void rounds(const int* m, int* o) {
    if (threadIdx.x > 100) return;
    int r = m[threadIdx.x];
    for (int k = 0; k < r; ++k) __syncthreads();
}`)
	res := merge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "rounds"})
	var b strings.Builder
	diag.Write(&b, res.Diags)
	assert.Contains(t, b.String(), "note: in a merged block the threads beyond rounds's block size stay idle")
}

func TestMergeDuplicateKernels(t *testing.T) {
	a := load(t, "a.cu", scaleSrc)
	res := merge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "scale"}, MergeInput{Analysis: a, Kernel: "scale"})
	require.True(t, res.Diags.HasErrors())
	assert.Contains(t, res.Diags[0].Message, "kernel scale is merged twice")

	b := load(t, "b.cu", strings.Replace(scaleSrc, "*= s", "+= s", 1))
	res = merge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "scale"}, MergeInput{Analysis: b, Kernel: "scale"})
	require.True(t, res.Diags.HasErrors())
	assert.Contains(t, res.Diags[0].Message, "kernel scale is defined in both a.cu and b.cu")
	assert.Equal(t, "b.cu", res.Diags[0].File)

	// The same name in different namespaces is fine; so is one template
	// with two argument lists (one body).
	c := load(t, "c.cu", `namespace one { __global__ void k(int* o) { o[threadIdx.x] = 1; } }
namespace two { __global__ void k(int* o) { o[threadIdx.x] = 2; } }
template <typename T> __global__ void tk(T* o) { __shared__ T s[32]; s[threadIdx.x % 32] = T(1); __syncthreads(); o[threadIdx.x] = s[0]; }`)
	res = merge(t, MergeOptions{}, MergeInput{Analysis: c, Kernel: "one::k"}, MergeInput{Analysis: c, Kernel: "two::k"},
		MergeInput{Analysis: c, Kernel: "tk", TemplateArgs: "float"}, MergeInput{Analysis: c, Kernel: "tk", TemplateArgs: "int"})
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
	out := string(res.Output)
	assert.Equal(t, 1, strings.Count(out, "static __device__ __forceinline__ void tk__merged_body("))
	has(t, out, "one::k__merged_body(")
	has(t, out, "two::k__merged_body(")
	has(t, out, "tk__merged_body<float>(")
	has(t, out, "tk__merged_body<int>(")
	has(t, out, "    tk__merged_smem<float> tk_float;\n    tk__merged_smem<int> tk_int;\n")
	// Namespaced kernels' parameter types are spelled through aliases.
	has(t, out, "one::k__merged_arg0 k_o, two::k__merged_arg0 k_2_o")
	res = merge(t, MergeOptions{}, MergeInput{Analysis: c, Kernel: "tk", TemplateArgs: "float"}, MergeInput{Analysis: c, Kernel: "tk", TemplateArgs: " float "})
	assert.True(t, res.Diags.HasErrors())
}

func TestMergeRequestErrors(t *testing.T) {
	a := load(t, "a.cu", scaleSrc+"template <int B> __global__ void tb(int* o) { o[threadIdx.x] = B; }\n")
	for _, tc := range []struct {
		name   string
		inputs []MergeInput
		opts   MergeOptions
		want   string
	}{
		{"none", nil, MergeOptions{}, "no kernels"},
		{"unknown", []MergeInput{{Analysis: a, Kernel: "nope"}}, MergeOptions{}, `no kernel named "nope" (kernels: scale, tb)`},
		{"template without args", []MergeInput{{Analysis: a, Kernel: "tb"}}, MergeOptions{}, "is a template: give its arguments, e.g. a.cu:tb<256>"},
		{"args for non-template", []MergeInput{{Analysis: a, Kernel: "scale", TemplateArgs: "int"}}, MergeOptions{}, "is not a template"},
		{"ambiguous", []MergeInput{{Analysis: load(t, "n.cu", "namespace p { __global__ void k(int* o) { o[0] = 1; } }\nnamespace q { __global__ void k(int* o) { o[0] = 2; } }\n"), Kernel: "k"}},
			MergeOptions{}, `"k" names 2 kernels (p::k, q::k): qualify it`},
		{"alloc count", []MergeInput{{Analysis: a, Kernel: "scale"}}, MergeOptions{Alloc: []int{1, 2}}, "2 allocations for 1 kernels"},
		{"alloc range", []MergeInput{{Analysis: a, Kernel: "scale"}}, MergeOptions{Alloc: []int{0}}, "outside 1..4096"},
		{"mode", []MergeInput{{Analysis: a, Kernel: "scale"}}, MergeOptions{Mode: "x"}, "unknown merge mode"},
		{"name", []MergeInput{{Analysis: a, Kernel: "scale"}}, MergeOptions{Name: "a-b"}, "not a C identifier"},
		{"too many", func() []MergeInput {
			var in []MergeInput
			for range MaxMergeKernels + 1 {
				in = append(in, MergeInput{Analysis: a, Kernel: "scale"})
			}
			return in
		}(), MergeOptions{}, "at most 16"},
		{"loaded twice", []MergeInput{{Analysis: a, Kernel: "scale"}, {Analysis: load(t, "a.cu", scaleSrc), Kernel: "scale"}}, MergeOptions{}, "loaded twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Merge(tc.inputs, tc.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestParseKernelRef(t *testing.T) {
	for in, want := range map[string]KernelRef{
		"a.cu:k":                     {File: "a.cu", Kernel: "k"},
		"dir/a.cu:ns::k":             {File: "dir/a.cu", Kernel: "ns::k"},
		"a.cu:scale<float>":          {File: "a.cu", Kernel: "scale", TemplateArgs: "float"},
		"a.cu:map<float, Op<int>>":   {File: "a.cu", Kernel: "map", TemplateArgs: "float, Op<int>"},
		"a.cu:ns::inner::k<256, 4>":  {File: "a.cu", Kernel: "ns::inner::k", TemplateArgs: "256, 4"},
		"a.cu:::global_k":            {File: "a.cu", Kernel: "::global_k"},
		"weird:name.cu:k":            {File: "weird:name.cu", Kernel: "k"},
		"a.cu:k<float>":              {File: "a.cu", Kernel: "k", TemplateArgs: "float"},
		"/abs/path/x.cuh:helper_k12": {File: "/abs/path/x.cuh", Kernel: "helper_k12"},
	} {
		got, err := ParseKernelRef(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		assert.Equal(t, strings.ReplaceAll(in, " ", ""), strings.ReplaceAll(got.String(), " ", ""))
	}
	for _, bad := range []string{"a.cu", ":k", "a.cu:", "a.cu:k<", "a.cu:k<>", "a.cu:1k", "a.cu:k-x"} {
		_, err := ParseKernelRef(bad)
		assert.Error(t, err, bad)
	}
}

func TestMergeHelperClonesAndHoisting(t *testing.T) {
	// lane() reads threadIdx: the body must call a copy that sees the
	// virtual one, also where the lowering hoists the call into a guarded
	// assignment.
	a := load(t, "h.cu", `__device__ __forceinline__ int lane() { return threadIdx.x & 31; }
__device__ int plain(int v) { return v * 2; }
__device__ int twice_lane() { return 2 * lane(); }
__global__ void k(int* o, int n) {
    __shared__ int s[64];
    if (threadIdx.x >= n) return;
    s[threadIdx.x] = plain(n);
    __syncthreads();
    int l = lane();
    auto f = [](int v) { return v + lane(); };
    o[threadIdx.x] = s[l] + twice_lane() + f(1);
}`)
	out := mustMerge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "k"})
	has(t, out, "__device__ __forceinline__ int lane__merged(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim) { return threadIdx.x & 31; }")
	has(t, out, "__device__ int twice_lane__merged(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim) { return 2 * lane__merged(blockIdx, gridDim, threadIdx, blockDim); }")
	hasNot(t, out, "plain__merged", "helpers that read no builtin are not cloned")
	body := between(t, out, "k__merged_body(const", "\n}\n")
	has(t, body, "int l {}; if (slate_active) { l = lane__merged(blockIdx, gridDim, threadIdx, blockDim); }")
	has(t, body, "[blockIdx, gridDim, threadIdx, blockDim](int v) { return v + lane__merged(blockIdx, gridDim, threadIdx, blockDim); }")
	has(t, body, "twice_lane__merged(blockIdx, gridDim, threadIdx, blockDim)")
}

func TestMergeHeaderHelperClone(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "util.cuh"), []byte(`#pragma once
namespace util {
__device__ inline unsigned tid2d() { return threadIdx.y * blockDim.x + threadIdx.x; }
}
`), 0o644))
	src := `#include "util.cuh"
namespace app {
__global__ void k(unsigned* o) { o[util::tid2d()] = blockIdx.x; }
}
`
	main := filepath.Join(dir, "main.cu")
	require.NoError(t, os.WriteFile(main, []byte(src), 0o644))
	a, err := Load(main, []byte(src), nil)
	require.NoError(t, err)
	out := mustMerge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "app::k"})
	// The header's helper is cloned at global scope, in its namespace,
	// before the namespace that holds the kernel.
	clone := between(t, out, "\nnamespace util {\n#line 3 ", "}\n")
	has(t, clone, "__device__ inline unsigned tid2d__merged(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim)")
	assert.Less(t, strings.Index(out, "tid2d__merged(const"), strings.Index(out, "namespace app {"))
	has(t, out, "o[util::tid2d__merged(blockIdx, gridDim, threadIdx, blockDim)] = blockIdx.x;")
	has(t, out, "app::k__merged_body(")
}

func TestMergeBlockGroupQueries(t *testing.T) {
	a := load(t, "cg.cu", `#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(float* o) {
    cg::thread_block cta = cg::this_thread_block();
    __shared__ float s[256];
    unsigned r = cta.thread_rank();
    s[r] = o[r];
    cta.sync();
    for (unsigned st = cta.size() / 2; st > 0; st >>= 1) { if (r < st) s[r] += s[r + st]; cta.sync(); }
    dim3 ix = cg::this_thread_block().thread_index();
    if (r == 0) o[ix.y] = s[0] + cta.group_dim().x;
}`)
	body := between(t, mustMerge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "k"}), "k__merged_body(const", "\n}\n")
	has(t, body, "unsigned r = static_cast<decltype(cta.thread_rank())>((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x);")
	has(t, body, "for (unsigned st = static_cast<decltype(cta.size())>(blockDim.x * blockDim.y * blockDim.z) / 2;")
	has(t, body, "dim3 ix = dim3(threadIdx.x, threadIdx.y, threadIdx.z);")
	has(t, body, "dim3(blockDim.x, blockDim.y, blockDim.z).x")
	has(t, body, "cta.sync();", "barriers stay")
}

func TestMergePragmaStaysBeforeItsLoop(t *testing.T) {
	a := load(t, "p.cu", `__global__ void k(float* a, int n) {
    __shared__ float s[64];
    s[threadIdx.x] = a[threadIdx.x];
    __syncthreads(); // tile ready
#pragma unroll 4
    for (int j = 0; j < 64; ++j) a[threadIdx.x] += s[j];
}`)
	body := between(t, mustMerge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "k"}), "k__merged_body(const", "\n}\n")
	has(t, body, "\n    __syncthreads(); if (slate_active) { // tile ready\n#pragma unroll 4\n    for (int j = 0; j < 64; ++j) a[threadIdx.x] += s[j]; }\n}")
}

func TestMergeLaunchBounds(t *testing.T) {
	a := load(t, "lb.cu", `__global__ void __launch_bounds__(128, 4) k1(int* o) { o[threadIdx.x] = 1; }
__global__ void __launch_bounds__(256) k2(int* o) { o[threadIdx.x] = 2; }
__global__ void k3(int* o) { o[threadIdx.x] = 3; }`)
	out := mustMerge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "k1"}, MergeInput{Analysis: a, Kernel: "k2"})
	has(t, out, "__global__ void __launch_bounds__(256) slate_merged_k1_k2(")
	out = mustMerge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "k1"}, MergeInput{Analysis: a, Kernel: "k3"})
	has(t, out, "__global__ void slate_merged_k1_k3(", "no bound when one kernel has none")
}

func TestComposeEdits(t *testing.T) {
	src := []byte("int x = f(a); g(p);")
	lower := []emit.Edit{
		emit.Replace(8, 12, "{}", "hoist"),                 // the hoisted initialiser f(a)
		emit.Insert(13, " if (on) { x = f(a); }", "hoist"), // its guarded copy
		emit.Replace(16, 17, "on && (p)", "vote"),          // a wrapped predicate
	}
	other := []emit.Edit{emit.Insert(9, "__m", "call"), emit.Insert(17, "2", "x"), emit.Insert(0, "/*start*/", "y")}
	got, err := composeEdits(src, lower, other)
	require.NoError(t, err)
	out, err := emit.Apply(src, got)
	require.NoError(t, err)
	assert.Equal(t, "/*start*/int x = {}; if (on) { x = f__m(a); } g(on && (p)2);", out)
	// An edit strictly inside the predicate goes into its wrapped copy.
	got, err = composeEdits([]byte("g(pq);"), []emit.Edit{emit.Replace(2, 4, "on && (pq)", "vote")}, []emit.Edit{emit.Insert(3, "_", "x")})
	require.NoError(t, err)
	out, err = emit.Apply([]byte("g(pq);"), got)
	require.NoError(t, err)
	assert.Equal(t, "g(on && (p_q));", out)
}

// TestMergeOutputKeepsLineNumbers checks the #line directives around
// inserted code: after each insertion the next line of the input is named.
func TestMergeOutputKeepsLineNumbers(t *testing.T) {
	a := load(t, "a.cu", scaleSrc)
	out := mustMerge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "scale"})
	lines := strings.Split(out, "\n")
	re := regexp.MustCompile(`^#line (\d+) "a.cu"$`)
	src := strings.Split(scaleSrc, "\n")
	for i, l := range lines {
		m := re.FindStringSubmatch(l)
		if m == nil || i+1 >= len(lines) {
			continue
		}
		n := 0
		for _, c := range m[1] {
			n = n*10 + int(c-'0')
		}
		next := lines[i+1]
		if strings.HasPrefix(next, "#") || strings.Contains(next, "__merged") || strings.HasPrefix(next, "{ bool slate_active") || next == "" {
			continue
		}
		require.LessOrEqual(t, n, len(src))
		assert.Equal(t, strings.TrimSpace(src[n-1]), strings.TrimSpace(next), "#line %d before %q", n, next)
	}
}
