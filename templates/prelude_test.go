package templates_test

import (
	"strings"
	"testing"

	"github.com/slatec/slatec/templates"
)

// The serve client is injected once, inside the prelude's host section
// (fenced from NVRTC), before the launch helpers that use it.
func TestPreludeCarriesServeClient(t *testing.T) {
	p := templates.Prelude()
	for _, tc := range []struct {
		what string
		ok   bool
	}{
		{"no marker left", !strings.Contains(p, "@@SLATE_SERVE_CLIENT_H@@")},
		{"the client once", strings.Count(p, "namespace slate_serve {") == 1},
		{"the header verbatim", strings.Contains(p, templates.ServeClientHeader())},
		{"after the host fence", strings.Index(p, "#ifndef __CUDACC_RTC__") >= 0 &&
			strings.Index(p, "#ifndef __CUDACC_RTC__") < strings.Index(p, "namespace slate_serve {")},
		{"before the launch helpers", strings.Index(p, "namespace slate_serve {") < strings.Index(p, "namespace slate {")},
		{"the launcher decides once", strings.Contains(p, "static const int p = decide_policy(kernel);")},
	} {
		if !tc.ok {
			t.Errorf("prelude: %s", tc.what)
		}
	}
}
