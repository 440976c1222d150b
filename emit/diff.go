package emit

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// UnifiedDiff returns a unified diff (3 lines of context) from a to b, or
// "" when they are equal. go-diff computes the line diff; this formats it.
func UnifiedDiff(aName, bName, a, b string) string {
	if a == b {
		return ""
	}
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	type line struct {
		op   diffmatchpatch.Operation
		text string
	}
	var all []line
	for _, d := range diffs {
		for _, l := range splitLines(d.Text) {
			all = append(all, line{d.Type, l})
		}
	}
	const context = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	// Walk hunks: runs of changes with up to `context` equal lines around.
	aLine, bLine := 1, 1
	for i := 0; i < len(all); {
		if all[i].op == diffmatchpatch.DiffEqual {
			aLine++
			bLine++
			i++
			continue
		}
		start := i - context
		if start < 0 {
			start = 0
		}
		// Extend the hunk while changes are within 2*context of each other.
		end := i
		for end < len(all) {
			if all[end].op != diffmatchpatch.DiffEqual {
				end++
				continue
			}
			run := end
			for run < len(all) && all[run].op == diffmatchpatch.DiffEqual {
				run++
			}
			if run == len(all) || run-end > 2*context {
				end += min(context, run-end)
				break
			}
			end = run
		}
		back := i - start
		as, bs := aLine-back, bLine-back
		var an, bn int
		var body strings.Builder
		for _, l := range all[start:end] {
			switch l.op {
			case diffmatchpatch.DiffEqual:
				body.WriteString(" " + l.text + "\n")
				an++
				bn++
			case diffmatchpatch.DiffDelete:
				body.WriteString("-" + l.text + "\n")
				an++
			case diffmatchpatch.DiffInsert:
				body.WriteString("+" + l.text + "\n")
				bn++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n%s", as, an, bs, bn, body.String())
		for _, l := range all[i:end] {
			if l.op != diffmatchpatch.DiffInsert {
				aLine++
			}
			if l.op != diffmatchpatch.DiffDelete {
				bLine++
			}
		}
		i = end
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}
