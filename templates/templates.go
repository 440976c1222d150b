// Package templates holds the CUDA code that slatec injects, as readable
// .cu files and text/template files embedded into the binary. Reviewers
// read these, not Go string concatenation.
package templates

import (
	"embed"
	"strings"
	"text/template"
)

//go:embed *.cu *.tmpl serve_client.h first_use.h sm_order.h native_ahead.h priority_stream.h
var files embed.FS

// Prelude is the support code injected once per transformed file: the
// control-block types, the worker loop and the host launch machinery, with
// the headers of preludeHeaders in place of their markers, in that order.
func Prelude() string {
	p := mustRead("prelude.cu")
	for _, h := range preludeHeaders {
		marker := "// @@" + h.marker + "@@\n"
		if !strings.Contains(p, marker) {
			panic("templates: prelude.cu lost its marker " + h.marker)
		}
		p = strings.Replace(p, marker, mustRead(h.file), 1)
	}
	return p
}

// preludeHeaders are the headers the prelude includes at its markers: the
// slatec serve client, the ring that holds its native launches to a budget,
// the priority streams, the first-use registry and the SM order.
var preludeHeaders = []struct{ marker, file string }{
	{"SLATE_SERVE_CLIENT_H", "serve_client.h"},
	{"SLATE_NATIVE_AHEAD_H", "native_ahead.h"},
	{"SLATE_PRIORITY_STREAM_H", "priority_stream.h"},
	{"SLATE_FIRST_USE_H", "first_use.h"},
	{"SLATE_SM_ORDER_H", "sm_order.h"},
}

// SMOrderHeader is the SM order from thread-block clusters (sm_order.h):
// plain C++ the prelude's SLATE_SM_ORDER=gpc uses, tested against the Go
// runtime's.
func SMOrderHeader() string { return mustRead("sm_order.h") }

// FirstUseHeader is the process-wide first-use registry and the
// slate_first_use() hook (first_use.h): the prelude includes it, and a
// transformed file with setup calls but no kernel of its own gets it alone.
func FirstUseHeader() string { return mustRead("first_use.h") }

// NativeAheadHeader holds a sharing process's native launches to a budget
// of GPU work queued ahead (native_ahead.h); Prelude includes it.
func NativeAheadHeader() string { return mustRead("native_ahead.h") }

// PriorityStreamHeader moves a launch to a shadow of its stream at another
// priority, in order with the stream (priority_stream.h); Prelude includes it.
func PriorityStreamHeader() string { return mustRead("priority_stream.h") }

// ServeClientHeader is the host C++ client of the slatec serve protocol
// (serve_client.h, docs/SERVE.md); Prelude includes it.
func ServeClientHeader() string { return mustRead("serve_client.h") }

// Kernel renders the persistent form of one kernel.
var Kernel = template.Must(template.New("kernel.cu.tmpl").ParseFS(files, "kernel.cu.tmpl"))

func mustRead(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("templates: " + err.Error()) // embedded at build time; cannot fail
	}
	return string(b)
}

// Render executes a template into a string.
func Render(t *template.Template, data any) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Gen renders the Go launcher file of `slatec gen`.
var Gen = template.Must(template.New("gen.go.tmpl").ParseFS(files, "gen.go.tmpl"))
