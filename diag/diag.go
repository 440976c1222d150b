// Package diag formats slatec's diagnostics the way compilers do:
//
//	kernel.cu:12:5: error: return before a barrier cannot be lowered here
//	    if (i >= n) return;
//	                ^
//
// and as JSON for tools. Positions are 1-based; the column in the message
// and in JSON counts bytes (as clang's does), while the caret is placed by
// display width: a tab stays a tab, a multi-byte UTF-8 character counts as
// the cells it takes on a terminal (0 for combining marks, 2 for wide East
// Asian characters and emoji), so the caret lines up under the column.
package diag

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
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

// caretPad returns the whitespace that puts a caret under byte column col
// of src: tabs are kept, every other character becomes as many spaces as
// the terminal cells it takes.
func caretPad(src string, col int) string {
	var b strings.Builder
	end := min(max(col-1, 0), len(src))
	for i := 0; i < end; {
		r, size := utf8.DecodeRuneInString(src[i:])
		i += size
		if r == '\t' {
			b.WriteByte('\t')
			continue
		}
		for range runeWidth(r) {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// runeWidth is the number of terminal cells r takes: 0 for combining marks
// and format characters, 2 for wide East Asian characters and emoji, else 1
// (also for a byte of invalid UTF-8).
func runeWidth(r rune) int {
	switch {
	case r == utf8.RuneError:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) || r == 0x200B:
		return 0
	}
	for _, w := range wideRanges {
		if r >= w[0] && r <= w[1] {
			return 2
		}
	}
	return 1
}

// wideRanges are the East Asian Wide and Fullwidth blocks (UAX #11) and the
// emoji blocks that terminals draw two cells wide.
var wideRanges = [][2]rune{
	{0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC}, {0x23F0, 0x23F0},
	{0x23F3, 0x23F3}, {0x25FD, 0x25FE}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267F, 0x267F},
	{0x2693, 0x2693}, {0x26A1, 0x26A1}, {0x26AA, 0x26AB}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5},
	{0x26CE, 0x26CE}, {0x26D4, 0x26D4}, {0x26EA, 0x26EA}, {0x26F2, 0x26F3}, {0x26F5, 0x26F5},
	{0x26FA, 0x26FA}, {0x26FD, 0x26FD}, {0x2705, 0x2705}, {0x270A, 0x270B}, {0x2728, 0x2728},
	{0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27B0, 0x27B0}, {0x27BF, 0x27BF}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55},
	{0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA000, 0xA4CF},
	{0xA960, 0xA97F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19}, {0xFE30, 0xFE6F},
	{0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x16FE0, 0x16FE4}, {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF},
	{0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F251},
	{0x1F300, 0x1F320}, {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C}, {0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA},
	{0x1F3CF, 0x1F3D3}, {0x1F3E0, 0x1F3F0}, {0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E}, {0x1F440, 0x1F440},
	{0x1F442, 0x1F4FC}, {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E}, {0x1F550, 0x1F567}, {0x1F57A, 0x1F57A},
	{0x1F595, 0x1F596}, {0x1F5A4, 0x1F5A4}, {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5}, {0x1F6CC, 0x1F6CC},
	{0x1F6D0, 0x1F6D2}, {0x1F6D5, 0x1F6D7}, {0x1F6EB, 0x1F6EC}, {0x1F6F4, 0x1F6FC}, {0x1F7E0, 0x1F7EB},
	{0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945}, {0x1F947, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD},
	{0x30000, 0x3FFFD},
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
