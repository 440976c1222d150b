package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/transform"
)

// inspect analyses with LoadOptions.DropBodies (one body's tree at a time,
// no whitespace tokens, the source shared): every report is the one the
// analysis of fully parsed files gives.
func TestInspectDropBodiesSameReport(t *testing.T) {
	var files []string
	for _, dir := range []string{"../testdata", "../examples", "../golden"} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".cu") || strings.HasSuffix(p, ".cuh")) {
				files = append(files, p)
			}
			return nil
		})
	}
	require.NotEmpty(t, files)
	inc := []string{"../testdata/include"}
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		want, werr := transform.LoadWith(f, src, transform.LoadOptions{IncludeDirs: inc})
		got, gerr := transform.LoadWith(f, src, transform.LoadOptions{IncludeDirs: inc, DropBodies: true})
		require.Equal(t, werr, gerr, f)
		if werr != nil {
			continue
		}
		if !reflect.DeepEqual(buildFileReport(want), buildFileReport(got)) {
			t.Errorf("%s: the reports differ", f)
		}
	}
}
