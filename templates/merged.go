package templates

import (
	"embed"
	"strings"
	"text/template"
)

// The merged (Liang) scheduler's injected code. It has its own embed list so
// that the persistent transform's files and this one change independently.
//
//go:embed bucket.h merged_prelude.cu merged_body.cu.tmpl merged.cu.tmpl
var mergedFiles embed.FS

// BucketHeader is the host C++ leaky bucket (bucket.h), the same algorithm
// as plan.LeakyBucket; the merged launcher builds its maps with it.
func BucketHeader() string { return mustReadFS(mergedFiles, "bucket.h") }

// MergedPrelude is the support code injected once per merged file, after
// Prelude(): the merged control block and configuration, the worker loops of
// the three modes, and (outside NVRTC) the leaky bucket and the host launch
// machinery.
func MergedPrelude() string {
	p := mustReadFS(mergedFiles, "merged_prelude.cu")
	const marker = "// @@SLATE_BUCKET_H@@\n"
	if !strings.Contains(p, marker) {
		panic("templates: merged_prelude.cu lost its bucket marker")
	}
	return strings.Replace(p, marker, BucketHeader(), 1)
}

// MergedBody renders one kernel's body function (and its shared-memory
// struct and parameter aliases) for the merged scheduler.
var MergedBody = template.Must(template.New("merged_body.cu.tmpl").ParseFS(mergedFiles, "merged_body.cu.tmpl"))

// Merged renders the merged kernel, its shared-memory union and its launcher.
var Merged = template.Must(template.New("merged.cu.tmpl").ParseFS(mergedFiles, "merged.cu.tmpl"))

func mustReadFS(fs embed.FS, name string) string {
	b, err := fs.ReadFile(name)
	if err != nil {
		panic("templates: " + err.Error()) // embedded at build time; cannot fail
	}
	return string(b)
}
