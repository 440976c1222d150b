package templates_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slatec/slatec/templates"
)

// TestPriorityStreamKeepsStreamOrder compiles priority_stream.h, as the
// prelude includes it, against a fake runtime that tracks what each queued
// operation depends on: a launch moved to a shadow stream comes after the
// launch queued on its stream before it, the stream's next launch comes
// after it, shadows are made once per thread, stream, device and level, and
// a launch stays on its own stream at the default level, while its stream
// is captured, when no stream can be made and past the table.
func TestPriorityStreamKeepsStreamOrder(t *testing.T) {
	out := fakeCUDADriver(t, "priority_stream.h", templates.PriorityStreamHeader(), "priority_stream_driver.cc")()
	var kept []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "fill:") {
			kept = append(kept, l)
		}
	}
	assert.Equal(t, `default level: own stream priority 0, after the launch before it yes, the launch after it after it yes, streams made 0, shadows 0
high: shadow priority -5, after the launch before it yes, the launch after it after it yes, streams made 1, shadows 1
high again: shadow priority -5, after the launch before it yes, the launch after it after it yes, streams made 0, shadows 1
low: shadow priority 0, after the launch before it yes, the launch after it after it yes, streams made 1, shadows 2
another stream: shadow priority -5, after the launch before it yes, the launch after it after it yes, streams made 1, shadows 3
legacy stream: shadow priority -5, after the launch before it yes, the launch after it after it yes, streams made 1, shadows 4
another device: shadow priority -5, after the launch before it yes, the launch after it after it yes, streams made 1, shadows 5
capturing: own stream priority 0, after the launch before it yes, the launch after it after it yes, streams made 0, shadows 5
no stream to be had: own stream priority 0, after the launch before it yes, the launch after it after it yes, streams made 0, shadows 5
past the table: own stream priority 0, after the launch before it yes, the launch after it after it yes, streams made 0, shadows 32
in the table: shadow priority -5, after the launch before it yes, the launch after it after it yes, streams made 0, shadows 32
`, strings.Join(kept, "\n")+"\n")
}
