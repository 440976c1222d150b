package transform

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const cgHead = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"

// A grid group used only for its queries is virtualised; grid sync,
// multi-grid groups and a grid group passed on are refused, naming the call.
func TestGridGroup(t *testing.T) {
	tests := []struct {
		name    string
		src     string // after cgHead
		refused string // substring of a refusal, "" for none
		body    []string
	}{
		{"queries on a variable", `__global__ void k(unsigned long long* o) {
  cg::grid_group g = cg::this_grid();
  o[g.thread_rank()] = g.size() + g.num_blocks() + g.block_rank() + g.num_threads();
}`, "", []string{"o[(((((unsigned long long)blockIdx.z", "cg::grid_group g = cg::this_grid();"}},
		{"auto and direct calls", `__global__ void k(unsigned* o) {
  auto grid = cg::this_grid();
  dim3 b = grid.block_index(), d = grid.dim_blocks();
  o[cg::this_grid().thread_index().x] = b.x + d.y + cg::this_grid().dim_threads().z + grid.is_valid();
}`, "", []string{"dim3 b = dim3(blockIdx.x, blockIdx.y, blockIdx.z), d = (dim3(gridDim.x, gridDim.y, gridDim.z));",
			"o[(dim3(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y, blockIdx.z * blockDim.z + threadIdx.z)).x]",
			"grid.is_valid()"}},
		{"thread_group holding the grid", `__global__ void k(unsigned* o) {
  cg::thread_group g = cg::this_grid();
  o[g.thread_rank()] = 1;
}`, "", []string{"o[(((((unsigned long long)blockIdx.z"}},
		{"static form", `__global__ void k(unsigned long long* o) { o[0] = cg::grid_group::num_blocks(); }`, "",
			[]string{"o[0] = (((unsigned long long)gridDim.x * (gridDim.y * gridDim.z)));"}},
		{"helper is cloned", `__device__ unsigned long long rank() { return cg::this_grid().thread_rank(); }
__global__ void k(unsigned long long* o) { o[rank()] = 1; }`, "", []string{"o[rank__slate(blockIdx, gridDim)] = 1;"}},
		{"passed to a helper", `__device__ unsigned long long r(const cg::grid_group& g) { return g.thread_rank(); }
__global__ void k(unsigned long long* o) { cg::grid_group g = cg::this_grid(); o[r(g)] = 1; }`, "",
			[]string{"o[r__slate(blockIdx, gridDim, g)] = 1;"}},
		{"this_grid() passed to a helper", `__device__ unsigned long long r(int x, cg::grid_group g) { return g.block_rank() + x; }
__global__ void k(unsigned long long* o) { o[r(1, cg::this_grid())] = 1; }`, "",
			[]string{"o[r__slate(blockIdx, gridDim, 1, cg::this_grid())] = 1;"}},
		{"member value of the group is not the group", `__global__ void k(unsigned* o) {
  unsigned w = cg::this_grid().dim_threads().x;
  o[w] = w;
}`, "", []string{"unsigned w = (dim3(gridDim.x * blockDim.x"}},

		{"grid.sync", `__global__ void k(int* o) { auto g = cg::this_grid(); o[0] = 1; g.sync(); }`, "synchronises the whole grid (g.sync())", nil},
		{"cg::sync(grid)", `__global__ void k(int* o) { cg::grid_group g = cg::this_grid(); o[0] = 1; cg::sync(g); }`, "synchronises the whole grid (cg::sync)", nil},
		{"this_grid().sync", `__global__ void k(int* o) { o[0] = 1; cg::this_grid().sync(); }`, "synchronises the whole grid (this_grid().sync())", nil},
		{"barrier_arrive", `__global__ void k(int* o) { auto g = cg::this_grid(); auto t = g.barrier_arrive(); g.barrier_wait(std::move(t)); }`, "synchronises the whole grid (g.barrier_arrive())", nil},
		{"multi-grid", `__global__ void k(int* o) { auto m = cg::this_multi_grid(); o[m.thread_rank()] = 1; }`, "multi-device grid group (this_multi_grid)", nil},
		{"passed to an unknown function", `__global__ void k(unsigned long long* o) { cg::grid_group g = cg::this_grid(); o[rank_of(g)] = 1; }`, "passes or copies the grid group g", nil},
		{"this_grid() passed to an unknown function", `__global__ void k(unsigned long long* o) { o[rank_of(cg::this_grid())] = 1; }`, "passes this_grid() on", nil},
		{"helper syncing its grid parameter", `__device__ void bar(const cg::grid_group& g) { g.sync(); }
__global__ void k(int* o) { o[0] = 1; bar(cg::this_grid()); }`, "synchronises the whole grid (g.sync())", nil},
		{"stored in a struct member", `struct H { cg::grid_group g; __device__ unsigned long long r() const { return g.thread_rank(); } };
__global__ void k(unsigned long long* o) { H h{cg::this_grid()}; h.g = cg::this_grid(); o[h.r()] = 1; }`, "passes this_grid() on", nil},
		{"passed to a template helper", `template <class G> __device__ unsigned long long r(G g) { return g.thread_rank(); }
__global__ void k(unsigned long long* o) { auto g = cg::this_grid(); o[r(g)] = 1; }`, "passes or copies the grid group g", nil},
		{"copied", `__global__ void k(unsigned long long* o) { auto g = cg::this_grid(); auto h = g; o[h.thread_rank()] = 1; }`, "passes or copies the grid group g", nil},
		{"cluster query on the grid", `__global__ void k(unsigned long long* o) { auto g = cg::this_grid(); o[0] = g.cluster_rank(); }`, "calls g.cluster_rank() on the grid group", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := load(t, "t.cu", cgHead+tt.src+"\n")
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
			out := string(res.Output)
			body := out[strings.Index(out, "k__slate_body("):]
			for _, want := range tt.body {
				has(t, body, want)
			}
		})
	}
}

// The merged scheduler's bodies get the same rewrite over their own
// blockIdx and gridDim.
func TestMergeGridGroupQueries(t *testing.T) {
	a := load(t, "g.cu", cgHead+`__global__ void k(unsigned long long* o) {
  auto g = cg::this_grid();
  o[g.thread_rank()] = g.num_blocks();
}`)
	body := between(t, mustMerge(t, MergeOptions{}, MergeInput{Analysis: a, Kernel: "k"}), "k__merged_body(const", "\n}\n")
	has(t, body, "o[(((((unsigned long long)blockIdx.z * gridDim.y * gridDim.x)")
	has(t, body, "= (((unsigned long long)gridDim.x * (gridDim.y * gridDim.z)));")
}
