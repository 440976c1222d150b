// Package templates holds the CUDA code that slatec injects, as readable
// .cu files and text/template files embedded into the binary. Reviewers
// read these, not Go string concatenation.
package templates

import (
	"embed"
	"strings"
	"text/template"
)

//go:embed *.cu *.tmpl
var files embed.FS

// Prelude is the support code injected once per transformed file: the
// control-block types, the worker loop and the host launch machinery.
func Prelude() string { return mustRead("prelude.cu") }

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
