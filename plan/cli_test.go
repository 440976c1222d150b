package plan_test

// End-to-end test of `slatec plan`. It lives here rather than in cli/
// because this work owns only cli/plan.go there; it builds the real binary
// once and runs it, so exit codes and stderr are checked exactly as a user
// sees them.

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/plan"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func slatecBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "slatec-cli-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "slatec")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/slatec/slatec")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

func runSlatec(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(slatecBinary(t), args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return o.String(), e.String(), code
}

func TestCLIPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	example := filepath.Join("testdata", "example-profiles.json")
	for _, algo := range []string{"stm", "optimal", "slate", "li", "cumas"} {
		t.Run(algo, func(t *testing.T) {
			out, errOut, code := runSlatec(t, "plan", example, "--algo", algo)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, out, "plan: "+algo+" on NVIDIA H200 (132 SMs)")
			assert.Contains(t, out, "predicted ")
			assert.Contains(t, out, "gain ")

			js, errOut, code := runSlatec(t, "plan", example, "--algo", algo, "--json")
			require.Equal(t, 0, code, errOut)
			var p plan.Plan
			require.NoError(t, json.Unmarshal([]byte(js), &p))
			assert.Equal(t, plan.PlanFormat, p.Format)
			assert.Equal(t, algo, p.Algorithm)
			assert.NotEmpty(t, p.Phases)
			js2, _, _ := runSlatec(t, "plan", example, "--algo", algo, "--json")
			assert.Equal(t, js, js2, "deterministic output")

			svg := filepath.Join(t.TempDir(), "g.svg")
			_, errOut, code = runSlatec(t, "plan", example, "--algo", algo, "--gantt", svg)
			require.Equal(t, 0, code, errOut)
			b, err := os.ReadFile(svg)
			require.NoError(t, err)
			assert.Contains(t, string(b), "<svg")
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(svg), ".slatec-gantt-*"))
			assert.Empty(t, left, "no temporary file left behind")
		})
	}
}

func TestCLIPlanErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"format": "slatec-profile/1", "device": {"name": "x", "sms": 0, "peak_bw_gbs": 1, "mem_bytes": 1}, "kernels": []}`), 0o644))
	syntax := filepath.Join(dir, "syntax.json")
	require.NoError(t, os.WriteFile(syntax, []byte("{\n  \"format\": }"), 0o644))
	example := filepath.Join("testdata", "example-profiles.json")
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"invalid profile", []string{"plan", bad}, 1, []string{bad + ": error: device.sms: must be between 1 and 4096, got 0", bad + ": error: kernels: at least one kernel"}},
		{"syntax", []string{"plan", syntax}, 1, []string{syntax + ":2:", "error: malformed JSON"}},
		{"missing file", []string{"plan", filepath.Join(dir, "nope.json")}, 1, []string{"slatec: error: " + filepath.Join(dir, "nope.json") + ": no such file or directory"}},
		{"bad algo", []string{"plan", example, "--algo", "magic"}, 2, []string{"--algo must be one of"}},
		{"bad eval", []string{"plan", example, "--eval", "guess"}, 2, []string{"--eval"}},
		{"no args", []string{"plan"}, 2, []string{"accepts 1 arg"}},
		{"unknown flag", []string{"plan", example, "--frobnicate"}, 2, []string{"unknown flag"}},
		{"bad window", []string{"plan", example, "--algo", "cumas", "--window", "0"}, 2, []string{"--window"}},
		{"bad gantt dir", []string{"plan", example, "--gantt", filepath.Join(dir, "no", "such", "dir", "g.svg")}, 1, []string{"slatec: error: " + filepath.Join(dir, "no", "such", "dir", "g.svg") + ": directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runSlatec(t, tc.args...)
			assert.Equal(t, tc.code, code, errOut)
			for _, w := range tc.want {
				assert.Contains(t, errOut, w)
			}
			assert.NotContains(t, errOut, "panic")
			assert.False(t, strings.Contains(errOut, "goroutine"), errOut)
		})
	}
}
