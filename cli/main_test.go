package cli

import (
	"os"
	"testing"
)

// TestMain keeps the tests off the user's ptxas cache: compiles through
// nvcc (--match-regs, --report) run every time, as before the cache, and
// write nothing under the home directory. The cache's own tests turn it on
// in a temporary directory.
func TestMain(m *testing.M) {
	os.Setenv(envPtxasCache, "0")
	os.Exit(m.Run())
}
