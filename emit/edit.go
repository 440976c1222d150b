// Package emit applies span edits to source text and writes output files
// atomically. Transforms never print code from a tree: they describe
// insertions, replacements and deletions against the original bytes, so
// everything they do not touch comes out byte for byte.
package emit

import (
	"fmt"
	"sort"
	"strings"
)

// Edit replaces the bytes [Start, End) with Text. Start == End inserts.
type Edit struct {
	Start, End int
	Text       string
	// Why names the pass that made the edit, for overlap errors.
	Why string
}

// Insert returns an edit that inserts text at off.
func Insert(off int, text, why string) Edit { return Edit{Start: off, End: off, Text: text, Why: why} }

// Replace returns an edit that replaces [start, end).
func Replace(start, end int, text, why string) Edit {
	return Edit{Start: start, End: end, Text: text, Why: why}
}

// Delete returns an edit that removes [start, end).
func Delete(start, end int, why string) Edit { return Edit{Start: start, End: end, Why: why} }

// OverlapError reports two edits that touch the same bytes.
type OverlapError struct{ A, B Edit }

func (e *OverlapError) Error() string {
	return fmt.Sprintf("internal error: overlapping edits [%d,%d) (%s) and [%d,%d) (%s)",
		e.A.Start, e.A.End, e.A.Why, e.B.Start, e.B.End, e.B.Why)
}

// Apply applies edits to src. Insertions at the same offset keep their
// order; an insertion at the boundary of a replacement goes before it (at
// its start) or after it (at its end). Overlapping replacements are an error.
func Apply(src []byte, edits []Edit) (string, error) {
	return ApplyRange(src, 0, len(src), edits)
}

// ApplyRange applies the edits that lie inside [from, to) to that slice of
// src and returns the edited slice. Edits outside the range are ignored;
// an edit straddling its boundary is an error.
func ApplyRange(src []byte, from, to int, edits []Edit) (string, error) {
	var in []Edit
	for i, e := range edits {
		if e.Start < 0 || e.End < e.Start || e.End > len(src) {
			return "", fmt.Errorf("internal error: edit [%d,%d) (%s) is outside the source", e.Start, e.End, e.Why)
		}
		if e.End <= from && !(e.Start == from && e.End == from) || e.Start >= to && !(e.Start == to && e.End == to) {
			continue
		}
		if e.Start < from || e.End > to {
			return "", fmt.Errorf("internal error: edit [%d,%d) (%s) straddles the range [%d,%d)", e.Start, e.End, e.Why, from, to)
		}
		e.Why = fmt.Sprintf("%s#%d", e.Why, i)
		in = append(in, e)
	}
	// Stable order: by start; at equal starts, insertions (empty spans) first
	// in their given order, then the replacement.
	idx := make([]int, len(in))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ea, eb := in[idx[a]], in[idx[b]]
		if ea.Start != eb.Start {
			return ea.Start < eb.Start
		}
		return (ea.End == ea.Start) && (eb.End != eb.Start)
	})
	var b strings.Builder
	b.Grow(to - from + 256)
	at := from
	var prev *Edit
	for _, i := range idx {
		e := in[i]
		if e.Start < at {
			return "", &OverlapError{A: *prev, B: e}
		}
		b.Write(src[at:e.Start])
		b.WriteString(e.Text)
		at = e.End
		ec := e
		prev = &ec
	}
	b.Write(src[at:to])
	return b.String(), nil
}
