package transform

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The device-only output (slatec gen and profile hand it to NVRTC) fences
// the host program's own types when nothing NVRTC sees names them, and
// keeps those that device code, another kept declaration or a macro uses.
func TestDeviceOnlyFencesUnusedHostTypes(t *testing.T) {
	src := `#include <vector>
struct Job { std::vector<float> x; cudaStream_t s; };
struct Pair { float a, b; };
struct Tagged { int tag; };
#define TAGGED_ZERO Tagged{0}
__global__ void k(Pair* p, int* out) { out[0] = (int)p->a + TAGGED_ZERO.tag; }
void host(Job& j) { j.x.push_back(1.0f); }
`
	a := load(t, "h.cu", src)
	res, err := Persistent(a, Options{DeviceOnly: true, NoLaunchRewrite: true, Version: "test"})
	require.NoError(t, err)
	require.False(t, res.Diags.HasErrors())
	out := string(res.Output)
	fenced := func(decl string) bool {
		i := strings.Index(out, decl)
		require.GreaterOrEqual(t, i, 0, decl)
		before := out[:i]
		return strings.LastIndex(before, "#ifndef __CUDACC_RTC__") > strings.LastIndex(before, "#endif")
	}
	assert.True(t, fenced("struct Job {"), "only host code names Job")
	assert.False(t, fenced("struct Pair {"), "the kernel takes a Pair*")
	assert.False(t, fenced("struct Tagged {"), "a macro the kernel uses names Tagged")
}

func TestWorkerExpr(t *testing.T) {
	for _, tc := range []struct{ qualified, worker, want string }{
		{"k", "k__slate", "k__slate"},
		{"ns::k", "k__slate", "ns::k__slate"},
		{"(anonymous)::k", "k__slate", "k__slate"},
		{"a::(anonymous)::b::k", "k__slate", "a::b::k__slate"},
	} {
		kl := &KernelLayout{QualifiedName: tc.qualified, Worker: tc.worker}
		assert.Equal(t, tc.want, kl.WorkerExpr(), tc.qualified)
	}
}
