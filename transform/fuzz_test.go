package transform

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/slatec/slatec/diag"
)

// FuzzTransform runs the persistent transform end to end on any input: it
// never panics, and either produces output or refuses with an error
// diagnostic (a file it cannot read is a diagnostic too).
func FuzzTransform(f *testing.F) {
	for _, pattern := range []string{"../testdata/kernels/*.cu", "../testdata/lower/*.cu", "../examples/*.cu"} {
		m, _ := filepath.Glob(pattern)
		for _, p := range m {
			if src, err := os.ReadFile(p); err == nil {
				f.Add(src)
			}
		}
	}
	f.Add([]byte("__global__ void k(int* a) { if (a) return; __syncthreads(); }\nint main() { k<<<1, 1>>>(0); }"))
	f.Add([]byte("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void k(unsigned long long* o) { auto g = cg::this_grid(); o[g.thread_rank()] = g.size(); }"))
	f.Fuzz(func(t *testing.T, src []byte) {
		// A directory that does not exist: quoted includes are missing.
		a, err := Load("/nonexistent-slatec-fuzz/fuzz.cu", src, nil)
		if err != nil {
			if _, ok := err.(diag.Diagnostic); !ok {
				t.Fatalf("load failed without a diagnostic: %T %v", err, err)
			}
			return
		}
		res, err := Persistent(a, Options{Version: "fuzz"})
		if err != nil {
			t.Fatalf("transform failed without a diagnostic: %v", err)
		}
		if !res.Diags.HasErrors() && res.Output == nil {
			t.Fatalf("no output and no error diagnostic")
		}
		for _, d := range res.Diags {
			if d.Severity == diag.Error && (d.Line == 0 || d.Message == "") {
				t.Fatalf("error diagnostic without a position or message: %+v", d)
			}
		}
	})
}
