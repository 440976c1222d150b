package profile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/runtime"
)

// What slatec profile (and slatec gen) hands to NVRTC compiles, also for
// kernels whose project headers include host-only system headers (the
// harness's <vector>, <algorithm>, ...) and use <cstdint> types in code
// NVRTC sees: those headers are inlined with their host parts fenced, and
// <cstdint> becomes libcu++'s. Before, NVRTC stopped at "cannot open
// source file "algorithm"" for every testdata kernel (found profiling the
// merge benchmark's kernels on the H100).
func TestPreparedProjectSourcesCompileWithNVRTC(t *testing.T) {
	if _, _, err := runtime.NVRTCVersion(); err != nil {
		t.Skipf("no NVRTC: run ./scripts/cuda-tools.sh (or set %s): %v", runtime.EnvCUDAPrefix, err)
	}
	inc := filepath.Join("..", "testdata", "include")
	for _, tc := range []struct{ file, kernel string }{
		{"../testdata/kernels/black_scholes.cu", "black_scholes"},
		{"../testdata/kernels/sgemm_tiled.cu", "sgemm_tiled"},
		{"../testdata/kernels/histogram256.cu", "histogram256_warp"},
		{"../testdata/kernels/reduce_cg_shfl.cu", "reduce_sum<256>"},
		{"../testdata/kernels/include_headers.cu", "sum_and_sumsq"},
		{"../testdata/kernels/include_headers.cu", "project"},
		{"../bench/merge/kernels/complementary.cu", "fma_chain"},
		// A host struct of std::vector and cudaStream_t beside the kernels
		// (fenced: nothing NVRTC sees names it).
		{"../testdata/kernels/triad_two_streams.cu", "scale_add"},
		// Device printf with "%" PRId64 after #include <cinttypes>.
		{"../testdata/kernels/parse_string_macros.cu", "report"},
		// A kernel in an anonymous namespace: its name expression is unqualified.
		{"../testdata/kernels/namespace_kernels.cu", "count_bright"},
	} {
		t.Run(tc.kernel, func(t *testing.T) {
			src, err := os.ReadFile(tc.file)
			require.NoError(t, err)
			p, _, err := Prepare(tc.file, src, tc.kernel, []string{inc})
			require.NoError(t, err)
			c := &runtime.Compiler{NoCache: true,
				IncludeDirs: append(runtime.DefaultIncludeDirs(), filepath.Dir(tc.file), inc)}
			res, err := c.Compile(runtime.CompileRequest{Name: filepath.Base(tc.file), Source: p.Source, Arch: "sm_90",
				NameExpressions: []string{p.Worker}})
			require.NoError(t, err)
			require.NotEmpty(t, res.Lowered[p.Worker])
		})
	}
}
