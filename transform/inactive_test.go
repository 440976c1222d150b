package transform

import (
	"strings"
	"testing"

	"github.com/slatec/slatec/diag"
	"github.com/stretchr/testify/require"
)

// A warp-per-row kernel returns for the rows past the end, then reduces
// with its warp: the threads that returned run the shuffles with the others
// (lowered to inactive), so everything else they would run must be
// guarded, refused, or be a pure collective.
func TestLowerSyncStatementsAndCollectives(t *testing.T) {
	const head = `#define FULL 0xffffffffu
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(FULL, v, o);
    return v;
}
__device__ float warp_max(float v) {
    float m = v;
    for (int o = warpSize / 2; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(FULL, m, o));
    return m;
}
__device__ float warp_sum_then_max(float v) { return warp_max(warp_sum(v)); }
__device__ float sum_n(float v, int n) {
    for (int o = n; o > 0; o /= 2) v += __shfl_xor_sync(FULL, v, o);
    return v;
}
__device__ float sum_loaded(const float* p) {
    float v = p[threadIdx.x % 32];
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(FULL, v, o);
    return v;
}
__device__ float sum_early(float v) {
    if (v == 0.0f) return 0.0f;
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(FULL, v, o);
    return v;
}
__device__ void sum_into(float& v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(FULL, v, o);
}
__device__ float block_sum(float v) {
    __shared__ float part[32];
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(FULL, v, o);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(FULL, v, o);
    return v;
}
__device__ float count_lanes(float v) { return v + __popc(__ballot_sync(FULL, v > 0.0f)); }
`
	const rows = `    int lane = threadIdx.x % 32;
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= n) return;
`
	for _, tt := range []struct {
		name, pre, body string // pre goes before the return
		want            string // a diagnostic, or "" to transform
		out             []string
	}{
		{"pure helper", "", `    float s = warp_sum(p[row * 32 + lane]);
    if (lane == 0) out[row] = s;
`, "", []string{"float s = warp_sum((slate_active ? (p[row * 32 + lane]) : slate_zero<decltype(p[row * 32 + lane])>()));",
			"if (slate_active) { if (lane == 0) out[row] = s; }"}},
		{"pure helper of pure helpers", "", "    float s = warp_sum_then_max(1.0f);\n    if (lane == 0) out[row] = s;\n", "", nil},
		{"helper whose loop bound is its argument", "", "    float s = sum_n(1.0f, n);\n    out[row] = s;\n",
			"sum_n synchronises, and slatec cannot run it for threads that returned", nil},
		{"helper that loads", "", "    float s = sum_loaded(p);\n    out[row] = s;\n",
			"sum_loaded synchronises, and slatec cannot run it", nil},
		{"helper that returns early", "", "    float s = sum_early(p[row]);\n    out[row] = s;\n",
			"sum_early synchronises, and slatec cannot run it", nil},
		{"helper that writes its reference argument", "", "    float s = 1.0f;\n    sum_into(s);\n    out[row] = s;\n",
			"sum_into synchronises, and slatec cannot run it", nil},
		{"helper that stores to shared memory", "", "    float s = block_sum(1.0f);\n    out[row] = s;\n",
			"block_sum synchronises, and slatec cannot run it", nil},
		{"helper that counts lanes", "", "    float s = count_lanes(1.0f);\n    out[row] = s;\n",
			"count_lanes synchronises, and slatec cannot run it", nil},
		{"shuffle of a load", "", "    float v = __shfl_sync(FULL, p[row * 32 + lane], 0);\n    out[row * 32 + lane] = v;\n", "",
			[]string{"float v = __shfl_sync(FULL, (slate_active ? (p[row * 32 + lane]) : slate_zero<decltype(p[row * 32 + lane])>()), 0);"}},
		{"shuffle of a dereference and a member", "", "    float v = __shfl_sync(FULL, *p + q->x, 0);\n    out[row] = v;\n", "",
			[]string{"(slate_active ? (*p) : slate_zero<decltype(*p)>())",
				"(slate_active ? (q->x) : slate_zero<decltype(q->x)>())"}},
		{"shuffle of an address", "", "    const float* a = (const float*)__shfl_sync(FULL, (unsigned long long)&p[row], 0);\n    out[row] = *a;\n", "",
			[]string{"(unsigned long long)&p[row], 0)"}},
		{"shuffle with a mask from memory", "", "    float v = __shfl_sync(masks[row], 1.0f, 0);\n    out[row] = v;\n",
			"but its mask is read from memory", nil},
		{"vote reading memory", "", "    unsigned b = __ballot_sync(FULL, p[row] > 0.0f);\n    out[row] = (float)b;\n", "",
			[]string{"__ballot_sync(FULL, slate_active && (p[row] > 0.0f))"}},
		{"shuffle inside a vote", "", "    unsigned b = __ballot_sync(FULL, __shfl_sync(FULL, 1.0f, 0) > 0.0f);\n    out[row] = (float)b;\n",
			"inside this __ballot_sync's predicate", nil},
		{"shuffle stored through a pointer", "", "    out[row * 32 + lane] = __shfl_sync(FULL, 1.0f, 0);\n",
			"but it stores to out[row * 32 + lane], which they must not", nil},
		{"shuffle added to memory", "", "    out[row] += __shfl_down_sync(FULL, 1.0f, 1);\n",
			"but it stores to out[row], which they must not", nil},
		{"shuffle into a local array", "", "    float a[2];\n    a[0] = __shfl_sync(FULL, 1.0f, 0);\n    a[1] = a[0];\n    out[row] = a[1];\n", "", nil},
		{"shuffle through a local array of pointers", "", "    float* ptrs[2] = {out, out};\n    ptrs[0][row] = __shfl_sync(FULL, 1.0f, 0);\n",
			"but it stores to ptrs[0][row], which they must not", nil},
		{"shuffle through a reference bound before the return", "    float& r = out[blockIdx.x];\n", "    r = __shfl_sync(FULL, 1.0f, 0);\n",
			"but it stores to r, which they must not", nil},
		{"shuffle through a reference", "", "    float& r = out[row];\n    r = __shfl_sync(FULL, 1.0f, 0);\n",
			"but it stores to r, which they must not", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := head + "struct Q { float x; };\n__global__ void k(const float* p, const Q* q, float* out, int n, const unsigned* masks) {\n" + tt.pre + rows + tt.body + "}\n"
			requireLowering(t, src, tt.want, tt.out)
		})
	}
}

// A local that code may write without naming it (through a pointer, a
// decayed array, a reference, a lambda) may hold another value for the
// threads that returned (they skip the write), so no condition around a
// barrier may depend on it: inactive threads would loop on a stale bound.
func TestEscapedLocalsTaintBarrierConditions(t *testing.T) {
	const aliased = "which code after the return may write through a pointer, reference or lambda"
	for _, tt := range []struct{ name, take, bound, want string }{
		{"a pointer to the bound", "int* pn = &n; *pn = A[row] > 0.0f ? K : K / 2;", "n", "depends on n, " + aliased},
		{"a reference to the bound", "int& rn = n; rn = A[row] > 0.0f ? K : K / 2;", "n", "depends on n, " + aliased},
		{"a lambda that sets the bound", "auto set = [&](int v) { n = v; }; set(K / 2);", "n", "depends on n, " + aliased},
		{"an array the bound lives in, passed as a pointer", "fill(lim, A, row);", "lim[0]", "depends on lim, " + aliased},
		{"a bound nothing aliases", "acc = A[row];", "n", ""},
		{"an element of a pointer parameter: the pointer is not written", "const float* a = &A[row]; acc = a[0];", "A != nullptr ? n : 0", ""},
		{"an element of a local array: the array is", "int* p0 = &lim[0]; *p0 = A[row] > 0.0f ? 2 : 3;", "lim[0]", "depends on lim, " + aliased},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := `__device__ void fill(int* a, const float* A, int row) { a[0] = A[row] > 0.0f ? 4 : 8; }
__global__ void k(const float* A, float* C, int K, int rows) {
    __shared__ float s[256];
    int row = blockIdx.x * 4 + threadIdx.x / 64;
    int n = K;
    int lim[1] = {4};
    float acc = 0;
    if (row >= rows) return;
    ` + tt.take + `
    for (int t = 0; t < ` + tt.bound + `; ++t) { s[threadIdx.x] = A[t]; __syncthreads(); acc += s[0]; __syncthreads(); }
    C[row] = acc;
}
`
			a, err := Load("t.cu", []byte(src), nil)
			require.NoError(t, err)
			res, err := Persistent(a, Options{Version: "test", Command: "transform t.cu"})
			require.NoError(t, err)
			var b strings.Builder
			diag.Write(&b, res.Diags)
			if tt.want == "" {
				require.False(t, res.Diags.HasErrors(), b.String())
				return
			}
			require.Contains(t, b.String(), tt.want)
		})
	}
}

// Helpers that take a cooperative-groups tile and shuffle on it (the CUDA
// samples' and CUB-like `tile_sum(cg::thread_block_tile<32> g, v)`) are
// sync points: threads that returned must run them with their warp. A
// tile-kind parameter is a tile; a parameter of a kind the declarations do
// not say (a template's Group) is a group whose shuffles sync too.
func TestTileParameterCollectives(t *testing.T) {
	const head = `namespace cg = cooperative_groups;
__device__ float tile_sum(cg::thread_block_tile<32> g, float v) {
    for (int o = g.size() / 2; o > 0; o /= 2) v += g.shfl_down(v, o);
    return v;
}
__device__ float tile_sum_ref(const cg::thread_block_tile<32>& g, float v) {
    for (int o = 16; o > 0; o /= 2) v += g.shfl_xor(v, o);
    return v;
}
__device__ float tile_sum_twice(cg::thread_block_tile<32> g, float v) { return tile_sum(g, tile_sum(g, v)); }
__device__ float tile_votes(cg::thread_block_tile<32> g, float v) { return v + g.ballot(v > 0.0f); }
__device__ float tile_sum_n(cg::thread_block_tile<32> g, float v, int n) {
    for (int o = n; o > 0; o /= 2) v += g.shfl_down(v, o);
    return v;
}
template <typename Group>
__device__ float group_sum(Group g, float v) {
    for (int o = 16; o > 0; o /= 2) v += g.shfl_down(v, o);
    return v;
}
`
	for _, tt := range []struct {
		name, pre, body string // pre goes before the return
		want            string // a diagnostic, or "" to transform
		out             []string
	}{
		{"tile declared before the return", "    cg::thread_block_tile<32> w = cg::tiled_partition<32>(cg::this_thread_block());\n",
			"    float s = tile_sum(w, p[i]);\n    if (w.thread_rank() == 0) out[blockIdx.x] = s;\n", "",
			[]string{"float s = tile_sum(w, (slate_active ? (p[i]) : slate_zero<decltype(p[i])>()));"}},
		{"tile declared after the return", "",
			"    cg::thread_block_tile<32> w = cg::tiled_partition<32>(cg::this_thread_block());\n    float s = tile_sum_ref(w, p[i]);\n    if (w.thread_rank() == 0) out[blockIdx.x] = s;\n", "",
			[]string{"float s = tile_sum_ref(w, (slate_active ? (p[i]) : slate_zero<decltype(p[i])>()));"}},
		{"tile read from memory", "", "    float s = tile_sum(*tp, 1.0f);\n    out[i] = s;\n",
			"must evaluate this argument of tile_sum (it controls a barrier), but it reads memory", nil},
		{"tile passed on to another helper", "    cg::thread_block_tile<32> w = cg::tiled_partition<32>(cg::this_thread_block());\n",
			"    float s = tile_sum_twice(w, 1.0f);\n    out[i] = s;\n", "tile_sum_twice synchronises, and slatec cannot run it", nil},
		{"tile vote", "    cg::thread_block_tile<32> w = cg::tiled_partition<32>(cg::this_thread_block());\n",
			"    float s = tile_votes(w, 1.0f);\n    out[i] = s;\n", "tile_votes synchronises, and slatec cannot run it", nil},
		{"tile helper whose loop bound is an argument", "    cg::thread_block_tile<32> w = cg::tiled_partition<32>(cg::this_thread_block());\n",
			"    float s = tile_sum_n(w, 1.0f, n);\n    out[i] = s;\n", "tile_sum_n synchronises, and slatec cannot run it", nil},
		// Before group parameters had kinds, group_sum synchronised nothing
		// that the analysis saw, and the return was not lowered.
		{"shuffles on a template's group", "    cg::thread_block_tile<32> w = cg::tiled_partition<32>(cg::this_thread_block());\n",
			"    float s = group_sum(w, 1.0f);\n    out[i] = s;\n", "group_sum synchronises, and slatec cannot run it", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := head + "__global__ void k(const float* p, float* out, int n, const cg::thread_block_tile<32>* tp) {\n" + tt.pre +
				"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n" + tt.body + "}\n"
			requireLowering(t, src, tt.want, tt.out)
		})
	}
}

// A tile or thread-block parameter has its kind: a tile's shuffles are warp
// sync points and a block's sync() a barrier, in helpers as in kernels.
func TestParamGroupKinds(t *testing.T) {
	for _, tt := range []struct{ typ, want string }{
		{"cg::thread_block_tile<32>", "tile"},
		{"const cooperative_groups::thread_block_tile<16>&", "tile"},
		{"const cg::thread_block&", "block"},
		{"cg::coalesced_group", "coalesced"},
		{"const cg::grid_group&", "grid"},
		{"cg::multi_grid_group", ""},
		{"cg::cluster_group", "cluster"},
		{"cg::thread_group", ""},
		{"Group", ""},
	} {
		require.Equal(t, tt.want, paramGroupKind(tt.typ), tt.typ)
	}
}

// requireLowering transforms src and requires the diagnostic want, or (want
// "") no error and every string of out in the output.
func requireLowering(t *testing.T, src, want string, out []string) {
	t.Helper()
	a, err := Load("t.cu", []byte(src), nil)
	require.NoError(t, err)
	res, err := Persistent(a, Options{Version: "test", Command: "transform t.cu"})
	require.NoError(t, err)
	var b strings.Builder
	diag.Write(&b, res.Diags)
	if want != "" {
		require.True(t, res.Diags.HasErrors(), "want %q", want)
		require.Contains(t, b.String(), want)
		return
	}
	require.False(t, res.Diags.HasErrors(), b.String())
	for _, s := range out {
		require.Contains(t, string(res.Output), s)
	}
}

// What a guarded statement writes taints the conditions around barriers
// (threads that returned skip it): the variables it writes, never the ones
// it only reads to form an address or an index, nor the ones it declares
// for itself (cuda_hgemm's tiled GEMMs: `&A[row * K + i * 16]` in the
// copy loop, a second loop that declares its own k_step).
func TestGuardedWritesAndScopes(t *testing.T) {
	const computed = "which is computed after the return"
	for _, tt := range []struct{ name, guarded, bound, want string }{
		{"an address formed from the bound", "const float* a = &A[row * K + n]; acc = a[0];", "n", ""},
		{"an address in a loop over the bound", "for (int i = 0; i < n; ++i) { const float* a = &A[row * K + i]; acc += a[0]; }", "n", ""},
		{"an element incremented, indexed by the bound", "cnt[n % 4]++; ++cnt[n % 2]; acc = cnt[0];", "n", ""},
		{"the incremented array itself", "cnt[0]++;", "cnt[0]", "depends on cnt, " + computed},
		{"a loop of its own with the same counter name", "for (int t = 1; t < 3; ++t) acc += A[t];", "n", ""},
		{"a block's own variable shadowing the bound", "{ int n = 2; n++; acc = (float)n; }", "n", ""},
		{"the bound written beside a shadowing block", "{ { int n = 2; n++; acc = (float)n; } n = (int)A[row]; }", "n", "depends on n, " + computed},
		{"the bound written after a shadowing loop", "for (int n = 0; n < 2; ++n) acc += A[n]; n = (int)A[row];", "n", "depends on n, " + computed},
		{"the bound incremented under a load", "if (A[row] > 0.0f) n++;", "n", "depends on n, " + computed},
		{"the bound's address taken and written through", "int* pn = &n; *pn = 3;", "n", "depends on n, which code after the return may write"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := `__global__ void k(const float* A, float* C, int K, int rows) {
    __shared__ float s[256];
    int row = blockIdx.x * 4 + threadIdx.x / 64;
    int n = K;
    int cnt[4] = {1, 2, 3, 4};
    float acc = 0;
    if (row >= rows) return;
    ` + tt.guarded + `
    for (int t = 0; t < ` + tt.bound + `; ++t) { s[threadIdx.x] = A[t]; __syncthreads(); acc += s[0]; __syncthreads(); }
    C[row] = acc;
}
`
			requireLowering(t, src, tt.want, nil)
		})
	}
}
