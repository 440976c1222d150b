package templates_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/templates"
)

// staticWorkersFunc cuts static_workers out of the prelude (plain C++).
var staticWorkersFunc = regexp.MustCompile(`(?s)static unsigned long long static_workers\(.*?\n}\n`)

// A static launch's worker count (the prelude's static_workers): never more
// than fit at once, no more waves than the whole wave takes, and equal
// shares: with k waves, fewer than k workers run k - 1 logical blocks and
// every other one k. With $SLATE_STATIC_WORKERS=wave, the whole wave.
func TestStaticWorkers(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found: cannot build the prelude's static_workers")
	}
	fn := staticWorkersFunc.FindString(templates.Prelude())
	require.NotEmpty(t, fn, "static_workers not found in the prelude")
	driver := "#include <cstdio>\n" + fn + `
int main()
{
    unsigned long long total, all;
    int wave;
    while (std::scanf("%llu %llu %d", &total, &all, &wave) == 3)
        std::printf("%llu\n", static_workers(total, all, wave != 0));
    return 0;
}
`
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "sw.cpp"), filepath.Join(dir, "sw")
	require.NoError(t, os.WriteFile(src, []byte(driver), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, gxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-o", bin, src).CombinedOutput()
	require.NoError(t, err, "g++ failed:\n%s", out)

	type shape struct{ total, all uint64 }
	var cases []shape
	for _, all := range []uint64{1, 132, 528, 1056, 1584, 2112} {
		for _, total := range []uint64{1, 7, 131, 132, 1055, 1056, 1057, 1801, 2112, 2113, 2160, 2352, 4096, 8192, 100000, 1 << 20, 0xfff00000} {
			cases = append(cases, shape{total, all})
		}
	}
	var in strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&in, "%d %d 0\n%d %d 1\n", c.total, c.all, c.total, c.all)
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Stdin = strings.NewReader(in.String())
	got, err := cmd.Output()
	require.NoError(t, err)
	sc := bufio.NewScanner(strings.NewReader(string(got)))
	next := func() uint64 {
		require.True(t, sc.Scan(), "the C++ driver answered too few shapes")
		v, err := strconv.ParseUint(sc.Text(), 10, 64)
		require.NoError(t, err)
		return v
	}
	ceil := func(a, b uint64) uint64 { return (a + b - 1) / b }
	for _, c := range cases {
		even, wave := next(), next()
		require.Equal(t, min(c.total, c.all), wave, "wave: total %d, all %d", c.total, c.all)
		require.GreaterOrEqual(t, even, uint64(1), "total %d, all %d", c.total, c.all)
		require.LessOrEqual(t, even, c.all, "more workers than fit: total %d, all %d", c.total, c.all)
		k := ceil(c.total, c.all)
		require.Equal(t, k, ceil(c.total, even), "more waves than the whole wave: total %d, all %d, %d workers", c.total, c.all, even)
		require.Less(t, k*even-c.total, k, "unequal shares: total %d, all %d, %d workers", c.total, c.all, even)
	}
}
