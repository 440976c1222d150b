package transform

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegisterCaps(t *testing.T) {
	src := `__global__ void plain(float* a) { a[blockIdx.x] = 1; }
__global__ void __launch_bounds__(256) bounded(float* a) { a[blockIdx.x] = 2; }
template <int N, typename T> __global__ void tk(T* a) { a[blockIdx.x * N] = 3; }
template __global__ void tk<4, float>(float*);
`
	opts := Options{Version: "test",
		RegCaps:         map[string]map[string]int{"sm_90": {"plain": 37, "bounded": 20, "tk": 90}},
		RegCapInstances: map[string]map[string]map[string]int{"sm_90": {"tk": {"4, float": 50, "8, double": 90}}},
	}
	res, err := Persistent(load(t, "t.cu", src), opts)
	require.NoError(t, err)
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
	out := string(res.Output)
	for _, want := range []string{
		// Rounded up to the allocation unit.
		"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 // sm_90: 37 registers (ptxas)\n#define SLATE_REGCAP_plain __maxnreg__(40)\n#else\n#define SLATE_REGCAP_plain \n#endif",
		"__global__ void SLATE_REGCAP_plain plain__slate(",
		"__global__ void SLATE_REGCAP_plain plain__slate_static(",
		// At least 32; launch bounds keep their form.
		"#define SLATE_REGCAP_bounded __launch_bounds__(256, SLATE_MIN_BLOCKS(256, 32))\n#else\n#define SLATE_REGCAP_bounded __launch_bounds__(256)",
		// Template instances through a trait.
		"template<int N, typename T> struct slate_regcap_900_tk { enum { value = 96 }; };\ntemplate <> struct slate_regcap_900_tk<4, float> { enum { value = 56 }; };\ntemplate <> struct slate_regcap_900_tk<8, double> { enum { value = 96 }; };",
		"#define SLATE_REGCAP_tk __maxnreg__((slate_regcap_900_tk<N, T>::value))",
	} {
		assert.Contains(t, out, want)
	}
}
