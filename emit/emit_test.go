package emit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApply(t *testing.T) {
	src := []byte("abcdefgh")
	tests := []struct {
		name  string
		edits []Edit
		want  string
	}{
		{"none", nil, "abcdefgh"},
		{"insert", []Edit{Insert(3, "X", "")}, "abcXdefgh"},
		{"inserts at one offset keep their order", []Edit{Insert(3, "1", ""), Insert(3, "2", "")}, "abc12defgh"},
		{"replace", []Edit{Replace(2, 4, "XY", "")}, "abXYefgh"},
		{"delete", []Edit{Delete(0, 8, "")}, ""},
		{"insert before a replacement at its start", []Edit{Replace(2, 4, "R", ""), Insert(2, "I", "")}, "abIRefgh"},
		{"insert at a replacement's end goes after it", []Edit{Replace(2, 4, "R", ""), Insert(4, "I", "")}, "abRIefgh"},
		{"unsorted input", []Edit{Insert(7, "Z", ""), Insert(1, "A", "")}, "aAbcdefgZh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(src, tt.edits)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestApplyRejectsOverlaps(t *testing.T) {
	_, err := Apply([]byte("abcdefgh"), []Edit{Replace(1, 5, "x", "a"), Replace(4, 6, "y", "b")})
	var oe *OverlapError
	require.True(t, errors.As(err, &oe), "%v", err)
	assert.Contains(t, err.Error(), "overlapping edits")
	_, err = Apply([]byte("abc"), []Edit{Insert(9, "x", "")})
	assert.Error(t, err, "an edit outside the source")
}

func TestApplyRange(t *testing.T) {
	src := []byte("0123456789")
	edits := []Edit{Insert(1, "a", ""), Replace(4, 6, "b", ""), Insert(8, "c", "")}
	got, err := ApplyRange(src, 3, 7, edits)
	require.NoError(t, err)
	assert.Equal(t, "3b6", got, "only the edits inside [3,7) apply, to that slice")
	_, err = ApplyRange(src, 5, 9, edits)
	assert.Error(t, err, "an edit straddling the range")
}

func TestUnifiedDiff(t *testing.T) {
	assert.Empty(t, UnifiedDiff("a", "b", "same\n", "same\n"))
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	b := strings.Replace(a, "5\n", "five\n", 1)
	d := UnifiedDiff("old", "new", a, b)
	assert.Equal(t, "--- old\n+++ new\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n", d)
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.cu")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
	require.NoError(t, WriteFileAtomic(p, []byte("new"), nil))
	got, _ := os.ReadFile(p)
	assert.Equal(t, "new", string(got))
	st, _ := os.Stat(p)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the old file's mode is kept")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file left behind")
	// A directory that does not exist: an error, and nothing written.
	assert.Error(t, WriteFileAtomic(filepath.Join(dir, "missing", "x.cu"), []byte("x"), nil))
	var buf bytes.Buffer
	require.NoError(t, WriteFileAtomic("-", []byte("stdout"), &buf))
	assert.Equal(t, "stdout", buf.String())
}
