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

	"github.com/slatec/slatec/runtime"
	"github.com/slatec/slatec/templates"
)

// itersFuncs cuts auto_iters and task_iters out of the prelude: plain C++
// that a host compiler builds without CUDA.
var itersFuncs = regexp.MustCompile(`(?s)static unsigned int auto_iters\(.*?\n}\n.*?static unsigned int task_iters\(.*?\n}\n`)

// The drop-in launchers size queue tasks with the prelude's auto_iters and
// task_iters, the Go runtime with AutoIters and TaskIters: one rule, the
// same answers (compiled with g++, compared over a grid of shapes).
func TestTaskItersCppMatchesGo(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found: cannot check the C++ task size")
	}
	fns := itersFuncs.FindString(templates.Prelude())
	require.NotEmpty(t, fns, "auto_iters and task_iters not found in the prelude")
	driver := "#include <cmath>\n#include <cstdio>\n" + fns + `
int main()
{
    unsigned long long total, workers;
    double ns;
    while (std::scanf("%llu %llu %lf", &total, &workers, &ns) == 3)
        std::printf("%u\n", task_iters(total, workers, ns));
    return 0;
}
`
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "iters.cpp"), filepath.Join(dir, "iters")
	require.NoError(t, os.WriteFile(src, []byte(driver), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, gxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-o", bin, src).CombinedOutput()
	require.NoError(t, err, "g++ failed:\n%s", out)

	type shape struct {
		total   int64
		workers int
		ns      float64
	}
	var cases []shape
	for _, total := range []int64{1, 7, 64, 1000, 1056, 1584, 2352, 4096, 8192, 16384, 21120, 100000, 262144, 1 << 20, 1 << 26} {
		for _, w := range []int{1, 132, 1056, 2112} {
			for _, ns := range []float64{0, 50, 300, 1500, 2000, 2800, 4300, 27e3, 135e3, 300e3, 5e6} {
				cases = append(cases, shape{total, w, ns})
			}
		}
	}
	var in strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&in, "%d %d %.17g\n", c.total, c.workers, c.ns)
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Stdin = strings.NewReader(in.String())
	got, err := cmd.Output()
	require.NoError(t, err)
	sc := bufio.NewScanner(strings.NewReader(string(got)))
	for i, c := range cases {
		require.True(t, sc.Scan(), "C++ answered %d of %d shapes", i, len(cases))
		cpp, err := strconv.Atoi(sc.Text())
		require.NoError(t, err)
		if want := runtime.TaskIters(c.total, c.workers, c.ns); cpp != want {
			t.Errorf("total %d, workers %d, block %g ns: C++ %d, Go %d", c.total, c.workers, c.ns, cpp, want)
		}
	}
}
