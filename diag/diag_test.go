package diag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPositionAndCaret(t *testing.T) {
	src := []byte("line one\n\tif (x) return;\nlast")
	l := NewLines(src)
	for _, tc := range []struct{ off, line, col int }{{0, 1, 1}, {8, 1, 9}, {9, 2, 1}, {16, 2, 8}, {25, 3, 1}, {100, 3, 5}} {
		line, col := l.Position(tc.off)
		assert.Equal(t, [2]int{tc.line, tc.col}, [2]int{line, col}, "offset %d", tc.off)
	}
	d := l.At("k.cu", 16, Error, "return before %s", "a barrier")
	var b bytes.Buffer
	Write(&b, []Diagnostic{d})
	// The caret keeps the line's tab so it lines up under the column.
	assert.Equal(t, "k.cu:2:8: error: return before a barrier\n\tif (x) return;\n\t      ^\n", b.String())
}

func TestJSONIsNeverNull(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, nil))
	var v []Diagnostic
	require.NoError(t, json.Unmarshal(b.Bytes(), &v))
	assert.NotNil(t, v)
}

func TestListHasErrorsAndSort(t *testing.T) {
	l := List{{File: "b", Offset: 1, Severity: Warning}, {File: "a", Offset: 9, Severity: Note}, {File: "a", Offset: 2, Severity: Error}}
	assert.True(t, l.HasErrors())
	l.Sort()
	assert.Equal(t, []int{2, 9, 1}, []int{l[0].Offset, l[1].Offset, l[2].Offset})
	assert.False(t, List{{Severity: Warning}}.HasErrors())
}

// The caret lines up by display width: tabs kept, a multi-byte character
// one cell (two for wide ones, none for a combining mark), while the column
// in the message counts bytes.
func TestCaretDisplayWidth(t *testing.T) {
	tests := []struct {
		name, line, at, wantPad string
	}{
		{"ascii", "int x = y;", "y", "        "},
		{"tab", "\tint x = y;", "y", "\t        "},
		{"two-byte letters", "/* é */ y;", "y", "        "},
		{"wide CJK", "/* 核 */ y;", "y", "         "},
		{"emoji", "/* 🚀 */ y;", "y", "         "},
		{"combining mark", "/* e\u0301 */ y;", "y", "        "},
		{"invalid UTF-8 byte", "/* \xff */ y;", "y", "        "},
		{"caret at column 1", "y = 1;", "y", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.line + "\n")
			off := bytes.Index(src, []byte(tt.at))
			d := NewLines(src).At("k.cu", off, Error, "here")
			var b bytes.Buffer
			Write(&b, []Diagnostic{d})
			assert.Equal(t, fmt.Sprintf("k.cu:1:%d: error: here\n%s\n%s^\n", off+1, tt.line, tt.wantPad), b.String())
		})
	}
}
