// Package diag formats slatec's diagnostics the way compilers do:
//
//	kernel.cu:12:5: error: return before a barrier cannot be lowered here
//	    if (i >= n) return;
//	                ^
//
// and as JSON for tools. Positions are 1-based; columns count bytes.
package diag

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Severity of a diagnostic.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Note    Severity = "note"
)

// Diagnostic is one message about a place in a source file.
type Diagnostic struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Col      int      `json:"col"`
	Offset   int      `json:"offset"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Source is the text of the line the diagnostic points at.
	Source string `json:"source,omitempty"`
	// Notes are follow-up diagnostics (for example, where a barrier is).
	Notes []Diagnostic `json:"notes,omitempty"`
}

func (d Diagnostic) Error() string {
	if d.Line == 0 {
		return fmt.Sprintf("%s: %s: %s", d.File, d.Severity, d.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", d.File, d.Line, d.Col, d.Severity, d.Message)
}

// Lines maps byte offsets of one source to line and column numbers.
type Lines struct {
	src    []byte
	starts []int
}

// NewLines indexes the line starts of src.
func NewLines(src []byte) *Lines {
	starts := make([]int, 1, len(src)/32+1)
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return &Lines{src: src, starts: starts}
}

// Position returns the 1-based line and column of a byte offset.
func (l *Lines) Position(off int) (line, col int) {
	if off < 0 {
		off = 0
	}
	if off > len(l.src) {
		off = len(l.src)
	}
	i := sort.Search(len(l.starts), func(i int) bool { return l.starts[i] > off }) - 1
	return i + 1, off - l.starts[i] + 1
}

// Line returns the text of 1-based line n without its newline.
func (l *Lines) Line(n int) string {
	if n < 1 || n > len(l.starts) {
		return ""
	}
	start := l.starts[n-1]
	end := len(l.src)
	if n < len(l.starts) {
		end = l.starts[n] - 1
	}
	return strings.TrimRight(string(l.src[start:end]), "\r")
}

// At builds a diagnostic at a byte offset of the file.
func (l *Lines) At(file string, off int, sev Severity, format string, a ...any) Diagnostic {
	line, col := l.Position(off)
	return Diagnostic{File: file, Line: line, Col: col, Offset: off, Severity: sev,
		Message: fmt.Sprintf(format, a...), Source: l.Line(line)}
}

// Write prints diagnostics in the compiler format, each with its source
// line and a caret under the column.
func Write(w io.Writer, ds []Diagnostic) {
	for _, d := range ds {
		writeOne(w, d)
	}
}

func writeOne(w io.Writer, d Diagnostic) {
	fmt.Fprintln(w, d.Error())
	if d.Source != "" && d.Line > 0 {
		fmt.Fprintf(w, "%s\n%s^\n", d.Source, caretPad(d.Source, d.Col))
	}
	for _, n := range d.Notes {
		writeOne(w, n)
	}
}

// caretPad returns the whitespace that puts a caret under byte column col,
// keeping tabs so the caret lines up in a terminal.
func caretPad(src string, col int) string {
	var b strings.Builder
	for i := 0; i < col-1 && i < len(src); i++ {
		if src[i] == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// WriteJSON prints diagnostics as a JSON array (never null).
func WriteJSON(w io.Writer, ds []Diagnostic) error {
	if ds == nil {
		ds = []Diagnostic{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ds)
}

// List collects diagnostics and reports whether any is an error.
type List []Diagnostic

// HasErrors reports whether the list holds an error.
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Sort orders diagnostics by file and offset, keeping insertion order for ties.
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].File != l[j].File {
			return l[i].File < l[j].File
		}
		return l[i].Offset < l[j].Offset
	})
}
