package cli

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fsTree describes a directory: file → content, "@target" for a symbolic
// link, "<fifo>" for a named pipe, "<dir>" for a directory.
type fsTree map[string]string

func makeTree(t *testing.T, dir string, tree fsTree) {
	t.Helper()
	names := make([]string, 0, len(tree))
	for n := range tree {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, n)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		switch c := tree[n]; {
		case c == "<dir>":
			require.NoError(t, os.MkdirAll(p, 0o755))
		case c == "<fifo>":
			require.NoError(t, syscall.Mkfifo(p, 0o600))
		case strings.HasPrefix(c, "@"):
			require.NoError(t, os.Symlink(c[1:], p))
		default:
			require.NoError(t, os.WriteFile(p, []byte(c), 0o644))
		}
	}
}

// readTree lists dir; a file's content is abbreviated to "<slatec output>"
// when slatec wrote it.
func readTree(t *testing.T, dir string) fsTree {
	t.Helper()
	tree := fsTree{}
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		switch m := info.Mode(); {
		case m&os.ModeSymlink != 0:
			dest, _ := os.Readlink(p)
			tree[rel] = "@" + dest
		case m&os.ModeNamedPipe != 0:
			tree[rel] = "<fifo>"
		case m.IsDir():
			tree[rel] = "<dir>"
		default:
			b, _ := os.ReadFile(p)
			if strings.HasPrefix(string(b), generatedHeader) {
				tree[rel] = "<slatec output>"
			} else {
				tree[rel] = string(b)
			}
		}
		return nil
	}))
	return tree
}

const utilKernel = "__global__ void u(int* a) { a[threadIdx.x] = 1; }\n"
const otherKernel = "__global__ void v(int* a) { a[threadIdx.x] = 2; }\n"

func TestTransformOutputs(t *testing.T) {
	tests := []struct {
		name     string
		tree     fsTree
		args     []string // run in the test directory; $D is its absolute path
		stdin    string
		wantCode int
		wantErr  string // substring of stderr ("" for none)
		wantOut  string // substring of stdout
		after    fsTree // the directory afterwards (nil: unchanged)
	}{
		{
			name:     "-o DIR keeps relative paths, so two util.cuh do not collide",
			tree:     fsTree{"kernel/k.cu": goodKernel, "a/util.cuh": utilKernel, "b/util.cuh": otherKernel},
			args:     []string{"-o", "out", "kernel/k.cu", "a/util.cuh", "b/util.cuh"},
			wantCode: 0,
			after: fsTree{"kernel": "<dir>", "kernel/k.cu": goodKernel, "a": "<dir>", "a/util.cuh": utilKernel, "b": "<dir>", "b/util.cuh": otherKernel,
				"out": "<dir>", "out/kernel": "<dir>", "out/kernel/k.cu": "<slatec output>", "out/a": "<dir>", "out/a/util.cuh": "<slatec output>",
				"out/b": "<dir>", "out/b/util.cuh": "<slatec output>"},
		},
		{
			name:     "absolute inputs go relative to their common ancestor",
			tree:     fsTree{"src/a/k.cu": goodKernel, "src/b/k.cu": utilKernel},
			args:     []string{"-o", "out", "$D/src/a/k.cu", "$D/src/b/k.cu"},
			wantCode: 0,
			after: fsTree{"src": "<dir>", "src/a": "<dir>", "src/a/k.cu": goodKernel, "src/b": "<dir>", "src/b/k.cu": utilKernel,
				"out": "<dir>", "out/a": "<dir>", "out/a/k.cu": "<slatec output>", "out/b": "<dir>", "out/b/k.cu": "<slatec output>"},
		},
		{
			name:     "stdin with -o DIR/ is written to DIR/stdin.cu",
			tree:     fsTree{},
			stdin:    goodKernel,
			args:     []string{"-o", "out/", "-"},
			wantCode: 0,
			after:    fsTree{"out": "<dir>", "out/stdin.cu": "<slatec output>"},
		},
		{
			name:     "the same input twice collides",
			tree:     fsTree{"k.cu": goodKernel},
			args:     []string{"-o", "out", "k.cu", "./k.cu"},
			wantCode: 2,
			wantErr:  "slatec: error: inputs k.cu and ./k.cu would both be written to out/k.cu\n",
		},
		{
			name:     "-o naming the input is refused",
			tree:     fsTree{"k.cu": goodKernel},
			args:     []string{"-o", "k.cu", "k.cu"},
			wantCode: 2,
			wantErr:  "slatec: error: output k.cu is the input k.cu; write elsewhere, or use --in-place to replace the input\n",
		},
		{
			name:     "-o naming the input through a link is refused",
			tree:     fsTree{"k.cu": goodKernel, "l.cu": "@k.cu"},
			args:     []string{"-o", "l.cu", "k.cu"},
			wantCode: 2,
			wantErr:  "output l.cu is the input k.cu",
		},
		{
			name:     "-o . with a local input would overwrite it",
			tree:     fsTree{"k.cu": goodKernel},
			args:     []string{"-o", ".", "k.cu"},
			wantCode: 2,
			wantErr:  "output k.cu is the input k.cu",
		},
		{
			name:     "-o a symlink writes through to its target and keeps the link",
			tree:     fsTree{"k.cu": goodKernel, "gen/real.cu": "old", "link.cu": "@gen/real.cu"},
			args:     []string{"-o", "link.cu", "k.cu"},
			wantCode: 0,
			after:    fsTree{"k.cu": goodKernel, "gen": "<dir>", "gen/real.cu": "<slatec output>", "link.cu": "@gen/real.cu"},
		},
		{
			name:     "-o a directory-like special file is refused",
			tree:     fsTree{"k.cu": goodKernel},
			args:     []string{"-o", "/dev/null/x", "k.cu"},
			wantCode: 1,
			wantErr:  "/dev/null/x:",
		},
		{
			name:     "-o /dev/null is written through",
			tree:     fsTree{"k.cu": goodKernel},
			args:     []string{"-o", "/dev/null", "k.cu"},
			wantCode: 0,
		},
		{
			name:     "-o /dev/stdout writes to standard output",
			tree:     fsTree{"k.cu": goodKernel},
			args:     []string{"-o", "/dev/stdout", "k.cu"},
			wantCode: 0,
			wantOut:  generatedHeader,
		},
		{
			name:     "slatec's own output is refused in one line",
			tree:     fsTree{"k_slate.cu": generatedHeader + "v0; DO NOT EDIT.\n__global__ void k() {}\n"},
			args:     []string{"-o", "out.cu", "k_slate.cu"},
			wantCode: 1,
			wantErr:  "slatec: error: k_slate.cu was generated by slatec; transform its source instead\n",
		},
		{
			name:     "a binary input is an error at its first NUL byte",
			tree:     fsTree{"k.o": "ELF\x02\x01\x01\x00\x00"},
			args:     []string{"-o", "out.cu", "k.o"},
			wantCode: 1,
			wantErr:  "k.o:1:4: error: binary file (control character 0x02), not CUDA source\n",
		},
		{
			name:     "a NUL byte",
			tree:     fsTree{"k.cu": "int x;\nint \x00y;"},
			args:     []string{"-o", "out.cu", "k.cu"},
			wantCode: 1,
			wantErr:  "k.cu:2:5: error: binary file (a NUL byte), not CUDA source\n",
		},
		{
			name:     "a binary input without NUL bytes (control characters)",
			tree:     fsTree{"k.cu": "int x;\n\x01\x02\x03"},
			args:     []string{"-o", "out.cu", "k.cu"},
			wantCode: 1,
			wantErr:  "k.cu:2:1: error: binary file (control character 0x01), not CUDA source\n",
		},
		{
			name:     "a Latin-1 comment is not binary",
			tree:     fsTree{"k.cu": "// caf\xe9 na\xefve\n" + goodKernel},
			args:     []string{"-o", "out.cu", "k.cu"},
			wantCode: 0,
			after:    fsTree{"k.cu": "// caf\xe9 na\xefve\n" + goodKernel, "out.cu": "<slatec output>"},
		},
		{
			name:     "--in-place replaces each input and leaves unchanged files alone",
			tree:     fsTree{"src/k.cu": goodKernel, "src/host.cpp": "int main() {}\n"},
			args:     []string{"--in-place", "src/k.cu", "src/host.cpp"},
			wantCode: 0,
			after:    fsTree{"src": "<dir>", "src/k.cu": "<slatec output>", "src/host.cpp": "int main() {}\n"},
		},
		{
			name:     "--in-place --kernels names kernels of any file",
			tree:     fsTree{"a.cu": goodKernel, "b.cu": utilKernel},
			args:     []string{"--in-place", "--kernels", "u", "a.cu", "b.cu"},
			wantCode: 0,
			after:    fsTree{"a.cu": goodKernel, "b.cu": "<slatec output>"},
		},
		{
			name:     "--layout naming an input is refused",
			tree:     fsTree{"k.cu": goodKernel},
			args:     []string{"-o", "out.cu", "--layout", "k.cu", "k.cu"},
			wantCode: 2,
			wantErr:  "slatec: error: --layout k.cu is the input k.cu\n",
		},
		{
			name:     "--in-place with -o is refused",
			tree:     fsTree{"k.cu": goodKernel},
			args:     []string{"--in-place", "-o", "out", "k.cu"},
			wantCode: 2,
			wantErr:  "--in-place writes each output over its input; it cannot be combined with -o",
		},
		{
			name:     "--in-place with stdin is refused",
			args:     []string{"--in-place", "-"},
			wantCode: 2,
			wantErr:  "--in-place cannot write over standard input",
		},
		{
			name:     "--in-place is all or nothing: a failing file leaves every file as it was",
			tree:     fsTree{"a.cu": goodKernel, "b.cu": refusedKernel},
			args:     []string{"-i", "a.cu", "b.cu"},
			wantCode: 1,
			wantErr:  "b.cu:6:",
			after:    fsTree{"a.cu": goodKernel, "b.cu": refusedKernel},
		},
		{
			name:     "-o DIR is all or nothing: a failing file means no output at all",
			tree:     fsTree{"a.cu": goodKernel, "b.cu": refusedKernel},
			args:     []string{"-o", "out/", "a.cu", "b.cu"},
			wantCode: 1,
			wantErr:  "no output written",
			after:    fsTree{"a.cu": goodKernel, "b.cu": refusedKernel},
		},
		{
			name:     "a missing input names the user's path",
			tree:     fsTree{},
			args:     []string{"-o", "out.cu", "nope.cu"},
			wantCode: 1,
			wantErr:  "slatec: error: nope.cu: no such file or directory\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			makeTree(t, dir, tt.tree)
			before := readTree(t, dir)
			t.Chdir(dir)
			args := []string{"transform"}
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "$D", dir))
			}
			code, out, errs := slatec(t, tt.stdin, args...)
			assert.Equal(t, tt.wantCode, code, "stderr: %s", errs)
			if tt.wantErr != "" {
				assert.Contains(t, errs, tt.wantErr)
			} else if code == 0 {
				assert.Empty(t, errs)
			}
			assert.NotContains(t, errs, ".slatec-", "errors never name a temporary file")
			if tt.wantOut != "" {
				assert.Contains(t, out, tt.wantOut)
			}
			want := tt.after
			if want == nil {
				want = before
			}
			assert.Equal(t, want, readTree(t, dir), "the directory afterwards")
		})
	}
}

// --check exits 0 when up to date, 1 on drift (also a missing output) and 2
// on trouble, as diff does.
func TestCheckExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		tree     fsTree
		args     []string
		wantCode int
		wantErr  string
	}{
		{"up to date", fsTree{"k.cu": goodKernel}, []string{"-o", "k_slate.cu", "k.cu"}, 0, ""},
		{"drift", fsTree{"k.cu": strings.Replace(goodKernel, "*= s", "*= s + 1", 1)}, []string{"-o", "k_slate.cu", "k.cu"}, 1, "out of date"},
		{"missing output is drift", fsTree{"k.cu": goodKernel}, []string{"-o", "none.cu", "k.cu"}, 1, "none.cu is out of date"},
		{"missing input is trouble", fsTree{}, []string{"-o", "k_slate.cu", "gone.cu"}, 2, "slatec: error: gone.cu: no such file or directory"},
		{"an output that is a directory is trouble", fsTree{"k.cu": goodKernel, "d/k.cu": "<dir>"}, []string{"-o", "d/", "k.cu"}, 2, "slatec: error: d/k.cu: is a directory"},
		{"a refused kernel is trouble", fsTree{"k.cu": refusedKernel}, []string{"-o", "k_slate.cu", "k.cu"}, 2, "error: kernel gridwide"},
		{"a binary input is trouble", fsTree{"k.cu": "\x00"}, []string{"-o", "k_slate.cu", "k.cu"}, 2, "binary file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			write(t, dir, "orig.cu", goodKernel)
			code, _, errs := slatec(t, "", "transform", "-o", "k_slate.cu", "orig.cu")
			require.Equal(t, 0, code, errs)
			require.NoError(t, os.Rename("k_slate.cu", "golden"))
			require.NoError(t, os.Remove("orig.cu"))
			makeTree(t, dir, tt.tree)
			// The golden was made from orig.cu; the header names the input.
			g, _ := os.ReadFile("golden")
			require.NoError(t, os.WriteFile("k_slate.cu", []byte(strings.ReplaceAll(string(g), "orig.cu", "k.cu")), 0o644))
			code, _, errs = slatec(t, "", append([]string{"transform", "--check"}, tt.args...)...)
			assert.Equal(t, tt.wantCode, code, errs)
			assert.Contains(t, errs, tt.wantErr)
		})
	}
}

func TestProfileOutputIsInput(t *testing.T) {
	dir := t.TempDir()
	in := write(t, dir, "k.cu", goodKernel)
	for _, flag := range []string{"-o", "--plot"} {
		code, _, errs := slatec(t, "", "profile", in, "--kernel", "scale", "--args", "buf:f32:1K,f32:2,i32:1K", flag, in)
		assert.Equal(t, 2, code, errs)
		assert.Contains(t, errs, "is the input")
		b, _ := os.ReadFile(in)
		assert.Equal(t, goodKernel, string(b))
	}
}
