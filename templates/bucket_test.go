package templates_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/templates"
)

// bucketDriver reads cases from stdin, one per line:
//
//	n a_1..a_n b_1..b_n L l_1..l_n     (L = 0: no latencies, 1: latencies follow)
//
// and prints, per case, "ERR" or "OK <blocks> <fnv hash>", followed, for
// small cases, by the maps themselves. The hash is plan.BucketSummary's:
// FNV-1a 64 over the little-endian int32 mapKernel, then mapBlk.
const bucketDriver = `#include "bucket.h"
#include <cstdio>
#include <cstdlib>
#include <iostream>

static uint64_t fnv(uint64_t h, uint32_t v) {
    for (int i = 0; i < 4; ++i) {
        h ^= (v >> (8 * i)) & 0xffu;
        h *= 1099511628211ull;
    }
    return h;
}

int main() {
    int n;
    while (std::cin >> n) {
        slate_bucket::input in;
        in.alloc.resize(n);
        in.blocks.resize(n);
        for (int i = 0; i < n; ++i) std::cin >> in.alloc[i];
        for (int i = 0; i < n; ++i) std::cin >> in.blocks[i];
        int lat;
        std::cin >> lat;
        if (lat) {
            in.latency.resize(n);
            for (int i = 0; i < n; ++i) {
                std::string s;
                std::cin >> s;
                in.latency[i] = std::strtod(s.c_str(), nullptr);
            }
        }
        slate_bucket::output out;
        std::string err;
        if (!slate_bucket::leaky_bucket(in, &out, &err)) {
            std::printf("ERR\n");
            continue;
        }
        uint64_t h = 14695981039346656037ull;
        for (int k : out.map_kernel) h = fnv(h, (uint32_t)k);
        for (unsigned b : out.map_blk) h = fnv(h, b);
        std::printf("OK %zu %016llx\n", out.map_kernel.size(), (unsigned long long)h);
        if (out.map_kernel.size() <= 2000) {
            for (size_t i = 0; i < out.map_kernel.size(); ++i) std::printf("%d:%u ", out.map_kernel[i], out.map_blk[i]);
            std::printf("\n");
        }
    }
    return 0;
}
`

type bucketCase struct {
	in plan.BucketInput
}

func (c bucketCase) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", len(c.in.Alloc))
	for _, a := range c.in.Alloc {
		fmt.Fprintf(&b, " %d", a)
	}
	for _, x := range c.in.Blocks {
		fmt.Fprintf(&b, " %d", x)
	}
	if c.in.Latency == nil {
		b.WriteString(" 0")
	} else {
		b.WriteString(" 1")
		for _, l := range c.in.Latency {
			b.WriteString(" " + strconv.FormatFloat(l, 'g', -1, 64))
		}
	}
	return b.String()
}

// TestBucketCppMatchesGo compiles templates/bucket.h with g++ and checks
// that it gives exactly plan.LeakyBucket's maps: the merged launcher builds
// its maps with the C++ code, the planner summarises the Go ones.
func TestBucketCppMatchesGo(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found: cannot check the C++ leaky bucket")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bucket.h"), []byte(templates.BucketHeader()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "driver.cpp"), []byte(bucketDriver), 0o644))
	bin := filepath.Join(dir, "driver")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, gxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror",
		"-o", bin, filepath.Join(dir, "driver.cpp")).CombinedOutput()
	require.NoError(t, err, "g++ failed:\n%s", out)

	rng := rand.New(rand.NewPCG(7, 11))
	var cases []bucketCase
	// The paper's example, equal allocations, a kernel with one block.
	cases = append(cases,
		bucketCase{plan.BucketInput{Alloc: []int{1, 2}, Blocks: []int64{4, 6}}},
		bucketCase{plan.BucketInput{Alloc: []int{9, 6}, Blocks: []int64{100, 100}}},
		bucketCase{plan.BucketInput{Alloc: []int{1, 1, 1}, Blocks: []int64{1, 7, 3}}},
		bucketCase{plan.BucketInput{Alloc: []int{1, 2, 8}, Blocks: []int64{50, 50, 50}}},
		bucketCase{plan.BucketInput{Alloc: []int{66, 66}, Blocks: []int64{1 << 20, 3}}},
		bucketCase{plan.BucketInput{Alloc: []int{3, 1}, Blocks: []int64{10, 10}, Latency: []float64{2, 2}}},
		// Invalid inputs must fail in both.
		bucketCase{plan.BucketInput{Alloc: []int{0, 1}, Blocks: []int64{1, 1}}},
		bucketCase{plan.BucketInput{Alloc: []int{1, 4097}, Blocks: []int64{1, 1}}},
		bucketCase{plan.BucketInput{Alloc: []int{1, 1}, Blocks: []int64{0, 1}}},
		bucketCase{plan.BucketInput{Alloc: []int{1, 1}, Blocks: []int64{1, 1}, Latency: []float64{1, -1}}},
		bucketCase{plan.BucketInput{Alloc: []int{1, 1}, Blocks: []int64{1 << 30, 1 << 30}}},
	)
	for range 600 {
		n := 1 + rng.IntN(5)
		if rng.IntN(10) == 0 {
			n = 6 + rng.IntN(12) // past the Go side's heap threshold
		}
		var in plan.BucketInput
		for range n {
			in.Alloc = append(in.Alloc, 1+rng.IntN(140))
			switch rng.IntN(4) {
			case 0:
				in.Blocks = append(in.Blocks, 1+rng.Int64N(5))
			case 1:
				in.Blocks = append(in.Blocks, 1+rng.Int64N(3000))
			default:
				in.Blocks = append(in.Blocks, 1+rng.Int64N(200000))
			}
		}
		if rng.IntN(4) == 0 {
			for range n {
				in.Latency = append(in.Latency, 0.01+rng.Float64()*10)
			}
		}
		cases = append(cases, bucketCase{in})
	}
	var stdin strings.Builder
	for _, c := range cases {
		stdin.WriteString(c.line() + "\n")
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Stdin = strings.NewReader(stdin.String())
	res, err := cmd.Output()
	require.NoError(t, err)
	sc := bufio.NewScanner(strings.NewReader(string(res)))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for i, c := range cases {
		require.True(t, sc.Scan(), "case %d: no output", i)
		got := sc.Text()
		il, gerr := plan.LeakyBucket(c.in)
		if gerr != nil {
			require.Equal(t, "ERR", got, "case %d (%s): Go refuses (%v), C++ does not", i, c.line(), gerr)
			continue
		}
		s := il.Summarize()
		require.Equal(t, fmt.Sprintf("OK %d %s", s.Blocks, s.Hash), got, "case %d (%s)", i, c.line())
		if s.Blocks <= 2000 {
			require.True(t, sc.Scan())
			var want strings.Builder
			for j := range il.MapKernel {
				fmt.Fprintf(&want, "%d:%d ", il.MapKernel[j], il.MapBlk[j])
			}
			require.Equal(t, want.String(), sc.Text(), "case %d maps", i)
		}
	}
	require.False(t, sc.Scan(), "extra output: %q", sc.Text())
}
