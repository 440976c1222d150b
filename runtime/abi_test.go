package runtime

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The flags this runtime sets must mean to the transform's workers
// (templates/prelude.cu) what they mean here, and the hand-written test
// workers (testdata/worker.cu) must read them as the transform's do: the
// runtime once ran transformed workers without SLATE_FLAG_PROGRESS, which
// its own tests, on workers that counted progress unconditionally, did not
// see.
func TestFlagsAgreeWithTheTransformsWorkers(t *testing.T) {
	want := map[string]uint32{
		"RESET": FlagReset, "PROGRESS": FlagProgress, "ALL_SMS": FlagAllSMs, "STATIC": FlagStatic, "1D": FlagOneD, "FILL": FlagFill,
	}
	defines := regexp.MustCompile(`(?m)^#define SLATE_FLAG_(\w+) (\d+)u`)
	read := func(path string) map[string]uint32 {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		got := map[string]uint32{}
		for _, m := range defines.FindAllStringSubmatch(string(src), -1) {
			v, err := strconv.ParseUint(m[2], 10, 32)
			require.NoError(t, err)
			got[m[1]] = uint32(v)
		}
		return got
	}
	prelude := read("../templates/prelude.cu")
	assert.Equal(t, want, prelude, "runtime/abi.go and templates/prelude.cu")
	for name, v := range read("testdata/worker.cu") {
		assert.Equal(t, prelude[name], v, "testdata/worker.cu SLATE_FLAG_%s", name)
	}
	c := jobCfg(Dim3{X: 4, Y: 1, Z: 1}, 2, 3)
	assert.Equal(t, uint32(FlagProgress|FlagOneD), c.Flags, "every job counts its progress")
	assert.Equal(t, uint32(2), c.Iters)
	assert.Equal(t, uint32(3), c.Workers)
}

// The control block the runtime allocates and zeroes must be the workers'
// slate_ctl: a partial-range worker counts itself in sm_rank[], past the
// 32-byte head the runtime reads back.
func TestCtlSizeAgreesWithTheTransformsWorkers(t *testing.T) {
	src, err := os.ReadFile("../templates/prelude.cu")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^#define SLATE_RANK_SMS (\d+)`).FindStringSubmatch(string(src))
	require.NotNil(t, m, "SLATE_RANK_SMS in templates/prelude.cu")
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	assert.Equal(t, RankSMs, n)
	assert.Equal(t, 32+4*n+n, CtlSize, "sizeof(slate_ctl): 8+8+4+4+8 bytes, then the ranks, then the places")
	assert.Regexp(t, `unsigned int sm_rank\[SLATE_RANK_SMS\];[^\n]*\n\s*unsigned char sm_place\[SLATE_RANK_SMS\];`, string(src))
}
