package emit

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteFileAtomicSpecialFiles covers what -o does to each kind of
// existing path: what comes back, and the file system afterwards.
func TestWriteFileAtomicSpecialFiles(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string) string // returns the -o path
		wantErr string                                // "" for success
		check   func(t *testing.T, dir, out string)
	}{
		{
			name:  "new file",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "out.cu") },
			check: func(t *testing.T, dir, out string) { assertFile(t, out, "new") },
		},
		{
			name: "symlink: the target is replaced, the link kept",
			setup: func(t *testing.T, dir string) string {
				require.NoError(t, os.Mkdir(filepath.Join(dir, "real"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "real", "t.cu"), []byte("old"), 0o640))
				require.NoError(t, os.Symlink("real/t.cu", filepath.Join(dir, "link.cu")))
				return filepath.Join(dir, "link.cu")
			},
			check: func(t *testing.T, dir, out string) {
				st, err := os.Lstat(out)
				require.NoError(t, err)
				assert.NotZero(t, st.Mode()&os.ModeSymlink, "still a link")
				dest, _ := os.Readlink(out)
				assert.Equal(t, "real/t.cu", dest)
				assertFile(t, filepath.Join(dir, "real", "t.cu"), "new")
				st, _ = os.Stat(filepath.Join(dir, "real", "t.cu"))
				assert.Equal(t, os.FileMode(0o640), st.Mode().Perm())
			},
		},
		{
			name: "dangling symlink: the target is created",
			setup: func(t *testing.T, dir string) string {
				require.NoError(t, os.Symlink("made.cu", filepath.Join(dir, "link.cu")))
				return filepath.Join(dir, "link.cu")
			},
			check: func(t *testing.T, dir, out string) { assertFile(t, filepath.Join(dir, "made.cu"), "new") },
		},
		{
			name:  "character device is written through",
			setup: func(t *testing.T, dir string) string { return os.DevNull },
		},
		{
			name: "FIFO is written through",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "fifo")
				require.NoError(t, syscall.Mkfifo(p, 0o600))
				got := make(chan string, 1)
				go func() {
					b, _ := os.ReadFile(p)
					got <- string(b)
				}()
				t.Cleanup(func() { assert.Equal(t, "new", <-got) })
				return p
			},
			check: func(t *testing.T, dir, out string) {
				st, err := os.Lstat(out)
				require.NoError(t, err)
				assert.NotZero(t, st.Mode()&os.ModeNamedPipe, "the FIFO is not replaced")
			},
		},
		{
			name: "directory is refused",
			setup: func(t *testing.T, dir string) string {
				require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
				return filepath.Join(dir, "d")
			},
			wantErr: "d: is a directory",
		},
		{
			name: "socket is refused",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "s")
				l, err := net.Listen("unix", p)
				require.NoError(t, err)
				t.Cleanup(func() { l.Close() })
				return p
			},
			wantErr: "s: is a socket; refusing to write output to it",
		},
		{
			name:    "missing directory names the path, not a temporary file",
			setup:   func(t *testing.T, dir string) string { return filepath.Join(dir, "missing", "x.cu") },
			wantErr: "x.cu: directory",
		},
		{
			name: "symlink loop",
			setup: func(t *testing.T, dir string) string {
				require.NoError(t, os.Symlink("b", filepath.Join(dir, "a")))
				require.NoError(t, os.Symlink("a", filepath.Join(dir, "b")))
				return filepath.Join(dir, "a")
			},
			wantErr: "too many levels of symbolic links",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := tt.setup(t, dir)
			before := listDir(t, dir)
			err := WriteFileAtomic(out, []byte("new"), nil)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.NotContains(t, err.Error(), ".slatec-", "errors never name the temporary file")
				assert.Equal(t, before, listDir(t, dir), "nothing written")
				return
			}
			require.NoError(t, err)
			if tt.check != nil {
				tt.check(t, dir, out)
			}
			for _, e := range listDir(t, dir) {
				assert.NotContains(t, e, ".slatec-", "no temporary file left behind")
			}
		})
	}
}

func TestWriteFileAtomicUnwritableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere")
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(ro, 0o555))
	err := WriteFileAtomic(filepath.Join(ro, "x.cu"), []byte("x"), nil)
	require.Error(t, err)
	assert.Equal(t, filepath.Join(ro, "x.cu")+": permission denied", err.Error())
}

func assertFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, string(b))
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		names = append(names, strings.TrimPrefix(p, dir))
		return nil
	}))
	return names
}

// /dev/stdout, /dev/fd/N and /proc/self/fd/N write to the open descriptor
// (a pipe, a file opened for appending), never replace what it points at.
func TestWriteFileAtomicOpenDescriptors(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteFileAtomic("/dev/stdout", []byte("to stdout"), &buf))
	assert.Equal(t, "to stdout", buf.String())

	dir := t.TempDir()
	link := filepath.Join(dir, "out")
	require.NoError(t, os.Symlink("/dev/stdout", link))
	buf.Reset()
	require.NoError(t, WriteFileAtomic(link, []byte("through a link"), &buf))
	assert.Equal(t, "through a link", buf.String())

	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	for _, p := range []string{fmt.Sprintf("/dev/fd/%d", w.Fd()), fmt.Sprintf("/proc/self/fd/%d", w.Fd())} {
		require.NoError(t, WriteFileAtomic(p, []byte("x"), nil), p)
	}
	w.Close()
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, "xx", string(got))
}
