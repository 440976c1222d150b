package templates_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/templates"
)

// TestFirstUseRunsPreloadersOncePerDevice compiles first_use.h, as the
// transform injects it, against a fake runtime: each registered preloader
// runs once per device at the first successful setup call, never after a
// failed call or while the program has an error it has not read (which stays
// pending), and not at all with SLATE_PRELOAD=0; the call's result passes
// through.
func TestFirstUseRunsPreloadersOncePerDevice(t *testing.T) {
	run := fakeCUDADriver(t, "first_use.h", templates.FirstUseHeader(), "first_use_driver.cc")
	assert.Equal(t, `step failed call
step pending error
pending kept 719
step device 0
preload a 0
preload b 0
step device 0 again
step device 1
preload a 1
preload b 1
step device 0 after 1
result 1
`, run())
	assert.NotContains(t, run("SLATE_PRELOAD=0"), "preload")
}

// fakeCUDADriver compiles testdata/driver (C++) with header, as the prelude
// includes it, against the fake runtime in testdata/fake_cuda, and returns
// a function that runs it with more environment and returns its output.
// Without a C++ compiler the test is skipped.
func fakeCUDADriver(t *testing.T, header, text, driver string) func(env ...string) string {
	t.Helper()
	cc := cxx()
	if cc == "" {
		t.Skipf("no C++ compiler ($CXX, g++, clang++, c++): %s is not tested", header)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, header), []byte(text), 0o644))
	src, err := filepath.Abs(filepath.Join("testdata", driver))
	require.NoError(t, err)
	fake, err := filepath.Abs(filepath.Join("testdata", "fake_cuda"))
	require.NoError(t, err)
	bin := filepath.Join(dir, "driver")
	out, err := exec.Command(cc, "-std=c++11", "-O1", "-Wall", "-Wextra", "-Werror", "-pthread", "-I"+dir, "-I"+fake, src, "-o", bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return func(env ...string) string {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), env...)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
		return string(b)
	}
}
