package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Argument errors print the error, the command's usage line and a pointer
// to --help, and exit 2.
func TestUsageLineOnArgumentErrors(t *testing.T) {
	tests := []struct {
		args      []string
		wantUsage string
	}{
		{[]string{"transform"}, "usage: slatec transform [flags] FILE..."},
		{[]string{"transform", "--bogus", "x.cu"}, "usage: slatec transform [flags] FILE..."},
		{[]string{"plan"}, "usage: slatec plan PROFILES.json|- [flags]"},
		{[]string{"frobnicate"}, "usage: slatec COMMAND [flags]"},
		{[]string{"inspect"}, "usage: slatec inspect FILE... [flags]"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errs := slatec(t, "", tt.args...)
			assert.Equal(t, 2, code, errs)
			assert.Empty(t, out)
			assert.True(t, strings.HasPrefix(errs, "slatec: error: "), errs)
			assert.Contains(t, errs, tt.wantUsage+"\n")
			assert.Contains(t, errs, "--help' for more.\n")
		})
	}
}

// Shell completion offers the values of enumerated flags.
func TestCompletionOffersEnumValues(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"transform", "--iters", ""}, []string{"auto"}},
		{[]string{"merge", "--mode", ""}, []string{"interleaved", "persistent", "smrange", "split"}},
		{[]string{"serve", "--objective", ""}, []string{"stp", "balanced"}},
		{[]string{"serve", "--unplanned", ""}, []string{"overlap", "equal"}},
		{[]string{"plan", "--algo", ""}, []string{"stm", "optimal", "slate", "li", "cumas"}},
		{[]string{"plan", "--eval", ""}, []string{"fluid", "exact"}},
		{[]string{"bench", "--modes", ""}, []string{"all", "sequential", "streams", "mps", "green", "static", "scheduler", "stm", "oracle"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, _ := slatec(t, "", append([]string{"__complete"}, tt.args...)...)
			assert.Equal(t, 0, code)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			assert.Equal(t, tt.want, lines[:len(lines)-1])
			assert.Equal(t, ":4", lines[len(lines)-1], "no file completion")
		})
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, out, _ := slatec(t, "", "completion", shell)
		assert.Equal(t, 0, code, shell)
		assert.Contains(t, out, "slatec", shell)
	}
}
