package templates_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/templates"
)

// indexDriver checks slate_mblock and slate_mthread, compiled as host C++
// with stand-ins for CUDA's uint3, against the row-major numbering the
// hardware uses: every logical block and every thread of many shapes, idle
// threads clamped to (0,0,0), and 64-bit logical ids.
const indexDriver = `#include <cstdio>
#define __device__
#define __forceinline__ inline
struct uint3 { unsigned int x, y, z; };
static inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }
#include "index.h"

int main() {
    const unsigned shapes[][3] = {{1,1,1},{7,1,1},{16,16,1},{32,8,1},{3,5,7},{1,1,64},{1024,1,1},{10,10,10},{4,1,3}};
    int bad = 0;
    for (auto& s : shapes) {
        const uint3 g = make_uint3(s[0], s[1], s[2]);
        const unsigned n = s[0] * s[1] * s[2];
        unsigned long long id = 0;
        for (unsigned z = 0; z < g.z; ++z)
            for (unsigned y = 0; y < g.y; ++y)
                for (unsigned x = 0; x < g.x; ++x, ++id) {
                    uint3 b = slate_mblock(id, g);
                    if (b.x != x || b.y != y || b.z != z) { std::printf("block %llu of %ux%ux%u: %u %u %u\n", id, g.x, g.y, g.z, b.x, b.y, b.z); ++bad; }
                    uint3 t = slate_mthread((unsigned)id, g, n);
                    if (t.x != x || t.y != y || t.z != z) { std::printf("thread %llu: %u %u %u\n", id, t.x, t.y, t.z); ++bad; }
                }
        for (unsigned tid = n; tid < n + 70; ++tid) {
            uint3 t = slate_mthread(tid, g, n);
            if (t.x || t.y || t.z) { std::printf("idle thread %u of %u: %u %u %u\n", tid, n, t.x, t.y, t.z); ++bad; }
        }
    }
    // A logical id past 2^32 in a grid of 2^31 x 3 x 1.
    const uint3 g = make_uint3(2147483647u, 3u, 1u);
    const unsigned long long id = 2ull * 2147483647ull + 12345ull;
    uint3 b = slate_mblock(id, g);
    if (b.x != 12345u || b.y != 2u || b.z != 0u) { std::printf("64-bit id: %u %u %u\n", b.x, b.y, b.z); ++bad; }
    std::printf(bad ? "FAIL\n" : "OK\n");
    return bad != 0;
}
`

func TestMergedIndexMath(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found")
	}
	p := templates.MergedPrelude()
	start := strings.Index(p, "// Logical block id -> blockIdx")
	end := strings.Index(p, "// a[i] for a runtime i")
	require.True(t, start > 0 && end > start, "the index helpers moved in merged_prelude.cu")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index.h"), []byte(p[start:end]), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.cpp"), []byte(indexDriver), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := filepath.Join(dir, "index")
	out, err := exec.CommandContext(ctx, gxx, "-std=c++17", "-O1", "-Wall", "-Werror", "-o", bin, filepath.Join(dir, "main.cpp")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.CommandContext(ctx, bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "OK\n", string(out))
}
