package transform

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/emit"
)

// mergeGoldenCase is one merge of testdata kernels; its output in every
// mode is kept under golden/merge/NAME.MODE.cu (go test ./transform -update
// rewrites them). scripts/nvcc-check.sh compiles them, and the GPU drivers
// under bench/merge include them.
type mergeGoldenCase struct {
	name  string
	refs  []string
	alloc []int
	apart bool // --no-share-shared
	modes []MergeMode
	// maxnreg is --maxnreg (0: none); popMaxnreg its per-population form in mode split.
	maxnreg    int
	popMaxnreg []int
}

var mergeGoldenCases = []mergeGoldenCase{
	// A 2-D 16x16 tiled SGEMM with a 1-D byte histogram (grid-stride, shared atomics).
	{name: "sgemm_hist", refs: []string{"testdata/kernels/sgemm_tiled.cu:sgemm_tiled", "testdata/kernels/histogram256.cu:histogram256"}},
	// The same without the shared-memory union.
	{name: "sgemm_hist_apart", apart: true, modes: []MergeMode{MergeInterleaved},
		refs: []string{"testdata/kernels/sgemm_tiled.cu:sgemm_tiled", "testdata/kernels/histogram256.cu:histogram256"}},
	// Liang et al.'s Fig. 2 pair: compute-bound Black-Scholes (__launch_bounds__(128, 4)) and memory-bound vector add.
	{name: "bs_vecadd", alloc: []int{9, 6}, refs: []string{"testdata/kernels/black_scholes.cu:black_scholes", "testdata/kernels/vector_add.cu:vector_add"}},
	// The same with the merged kernel's registers capped at black_scholes' own 32 (the
	// worker modes may need 34 uncapped: 6 instead of 8 blocks/SM of 256 threads); in
	// mode split black_scholes' population (38 registers uncapped: 12 instead of 16
	// blocks/SM of 128 threads).
	{name: "bs_vecadd_cap", alloc: []int{9, 6}, maxnreg: 32, popMaxnreg: []int{32, 0}, modes: []MergeMode{MergePersistent, MergeSMRange, MergeSplit},
		refs: []string{"testdata/kernels/black_scholes.cu:black_scholes", "testdata/kernels/vector_add.cu:vector_add"}},
	// Complementary pairs (bench/merge/kernels/complementary.cu): a float4 STREAM triad that
	// saturates bandwidth on a fraction of the SMs beside an FMA chain and a tiled SGEMM,
	// which scale with SMs; same block size, so the merged kernel costs neither occupancy.
	{name: "triad_fma", refs: []string{"bench/merge/kernels/complementary.cu:triad4", "bench/merge/kernels/complementary.cu:fma_chain"}},
	{name: "triad_sgemm", refs: []string{"bench/merge/kernels/complementary.cu:triad4", "testdata/kernels/sgemm_tiled.cu:sgemm_tiled"}},
	// Compute-bound SGEMM with a bandwidth-bound vector add.
	{name: "sgemm_vecadd", refs: []string{"testdata/kernels/sgemm_tiled.cu:sgemm_tiled", "testdata/kernels/vector_add.cu:vector_add"}},
	// Three kernels: a 32x8 tiled transpose, a cooperative-groups reduction template, a histogram in dynamic shared memory.
	{name: "transpose_reduce_hist", refs: []string{"testdata/kernels/transpose_tiled.cu:transpose_tiled",
		"testdata/kernels/reduce_cg_shfl.cu:reduce_sum<256>", "testdata/kernels/histogram256.cu:histogram256_warp"}},
	// Early returns before barriers (two kernels of one file) next to a larger block: idle threads.
	{name: "early_transpose", refs: []string{"testdata/kernels/early_return_straight.cu:pair_then_quad",
		"testdata/kernels/early_return_straight.cu:neighbor_mix", "testdata/kernels/transpose_tiled.cu:transpose_tiled"}},
	// One template kernel with two argument lists (one body), functor parameters, a template-sized shared array.
	{name: "templates", refs: []string{"testdata/kernels/template_kernels.cu:map<float, Affine>",
		"testdata/kernels/template_kernels.cu:map<int, AddOne>", "testdata/kernels/template_kernels.cu:reverse_blocks<128, float>"}},
}

// runMergeGolden merges a case from the repository root as `slatec merge`
// would.
func runMergeGolden(t *testing.T, c mergeGoldenCase, mode MergeMode) (string, []byte, string) {
	t.Helper()
	cwd, _ := os.Getwd()
	require.NoError(t, os.Chdir(".."))
	defer os.Chdir(cwd)
	loaded := map[string]*Analysis{}
	var inputs []MergeInput
	for _, s := range c.refs {
		r, err := ParseKernelRef(s)
		require.NoError(t, err)
		a := loaded[r.File]
		if a == nil {
			src, err := os.ReadFile(r.File)
			require.NoError(t, err)
			a, err = Load(r.File, src, []string{"testdata/include"})
			require.NoError(t, err)
			loaded[r.File] = a
		}
		inputs = append(inputs, MergeInput{Analysis: a, Kernel: r.Kernel, TemplateArgs: r.TemplateArgs})
	}
	out := fmt.Sprintf("golden/merge/%s.%s.cu", c.name, mode)
	cmd := []string{"merge", "--mode", string(mode)}
	if c.alloc != nil {
		cmd = append(cmd, "--alloc", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(c.alloc)), ","), "[]"))
	}
	if c.apart {
		cmd = append(cmd, "--no-share-shared")
	}
	maxRegs, popRegs := c.maxnreg, []int(nil)
	if mode == MergeSplit {
		maxRegs, popRegs = 0, c.popMaxnreg
	}
	if maxRegs > 0 {
		cmd = append(cmd, "--maxnreg", fmt.Sprint(maxRegs))
	}
	if popRegs != nil {
		cmd = append(cmd, "--maxnreg", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(popRegs)), ","), "[]"))
	}
	res, err := Merge(inputs, MergeOptions{Mode: mode, Alloc: c.alloc, NoShareShared: c.apart, MaxRegs: maxRegs,
		PopulationMaxRegs: popRegs, Version: goldenVersion,
		Command: strings.Join(append(cmd, c.refs...), " "), OutputName: out})
	require.NoError(t, err)
	var errs []string
	for _, d := range res.Diags {
		errs = append(errs, d.Error())
	}
	require.False(t, res.Diags.HasErrors(), "%s", strings.Join(errs, "\n"))
	return filepath.Join("..", out), res.Output, strings.Join(errs, "\n")
}

func (c mergeGoldenCase) allModes() []MergeMode {
	if c.modes != nil {
		return c.modes
	}
	return MergeModes
}

func TestMergeGolden(t *testing.T) {
	for _, c := range mergeGoldenCases {
		for _, mode := range c.allModes() {
			t.Run(c.name+"."+string(mode), func(t *testing.T) {
				path, out, _ := runMergeGolden(t, c, mode)
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
					require.NoError(t, emit.WriteFileAtomic(path, out, nil))
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("missing golden %s (run go test ./transform -update and read the new file): %v", path, err)
				}
				if d := emit.UnifiedDiff(path, "current output", string(want), string(out)); d != "" {
					t.Errorf("output differs from %s (go test ./transform -update regenerates it):\n%s", path, d)
				}
			})
		}
	}
}

// The merge is deterministic: two runs give the same bytes.
func TestMergeDeterministic(t *testing.T) {
	for _, c := range mergeGoldenCases {
		_, a, _ := runMergeGolden(t, c, MergePersistent)
		_, b, _ := runMergeGolden(t, c, MergePersistent)
		require.Equal(t, string(a), string(b), c.name)
	}
}

// Every golden file belongs to a case: a renamed case leaves no stale file.
func TestMergeGoldenNoStrays(t *testing.T) {
	want := map[string]bool{}
	for _, c := range mergeGoldenCases {
		for _, mode := range c.allModes() {
			want[fmt.Sprintf("%s.%s.cu", c.name, mode)] = true
		}
	}
	files, err := filepath.Glob("../golden/merge/*.cu")
	require.NoError(t, err)
	for _, f := range files {
		if !want[filepath.Base(f)] {
			if *update {
				require.NoError(t, os.Remove(f))
				continue
			}
			t.Errorf("%s belongs to no merge golden case (go test ./transform -update removes it)", f)
		}
	}
}
