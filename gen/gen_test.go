package gen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/runtime"
	"github.com/slatec/slatec/transform"
)

func generate(t *testing.T, path string) (*transform.Result, []byte) {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	a, err := transform.Load(filepath.Base(path), src, nil)
	require.NoError(t, err)
	res, err := transform.Persistent(a, transform.Options{NoLaunchRewrite: true, DeviceOnly: true,
		Version: "v0.0.0-golden", Command: "gen " + filepath.Base(path)})
	require.NoError(t, err)
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
	code, _, err := Generate(res, a, Options{Package: "kernels", Source: filepath.Base(path), Version: "v0.0.0-golden"})
	require.NoError(t, err)
	return res, code
}

func TestGolden(t *testing.T) {
	_, code := generate(t, "../examples/saxpy.cu")
	golden := "../golden/gen/saxpy_slate.go.golden"
	if os.Getenv("SLATEC_UPDATE") != "" {
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		require.NoError(t, emit.WriteFileAtomic(golden, code, nil))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "regenerate with SLATEC_UPDATE=1 go test ./gen")
	if d := emit.UnifiedDiff(golden, "generated", string(want), string(code)); d != "" {
		t.Errorf("generated Go differs from %s (SLATEC_UPDATE=1 go test ./gen regenerates):\n%s", golden, d)
	}
	s := string(code)
	assert.Contains(t, s, "func (k *SaxpyKernels) Saxpy(grid, block runtime.Dim3, shared uint32, r runtime.SMRange, n int32, a float32, x runtime.DevicePtr, y runtime.DevicePtr, opts ...runtime.LaunchOption) (*runtime.Job, error)")
	assert.Contains(t, s, "func (k *SaxpyKernels) BlockSum(")
}

// The generated file compiles as part of a package in this module.
func TestGeneratedCodeCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a package")
	}
	_, code := generate(t, "../examples/saxpy.cu")
	dir, err := os.MkdirTemp("..", "gentest-")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kernels_slate.go"), code, 0o644))
	cmd := exec.Command("go", "vet", "./"+filepath.Base(dir))
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go vet of the generated package:\n%s", out)
}

// The embedded CUDA compiles with NVRTC (no GPU needed), and the workers
// it names are found.
func TestEmbeddedSourceCompilesWithNVRTC(t *testing.T) {
	res, _ := generate(t, "../examples/saxpy.cu")
	c := &runtime.Compiler{NoCache: true}
	comp, err := c.Compile(runtime.CompileRequest{Name: "saxpy.cu", Source: string(res.Output), Arch: "sm_90",
		NameExpressions: []string{"saxpy__slate", "block_sum__slate"}})
	if err != nil && strings.Contains(err.Error(), "libnvrtc") {
		t.Skipf("NVRTC not available: %v", err)
	}
	require.NoError(t, err)
	assert.NotEmpty(t, comp)
}

func TestGoType(t *testing.T) {
	for c, g := range map[string]string{
		"float*": "runtime.DevicePtr", "const float* __restrict__": "runtime.DevicePtr", "int": "int32",
		"unsigned int": "uint32", "size_t": "uint64", "float": "float32", "double": "float64",
		"float4": "[4]float32", "int2": "[2]int32", "MyStruct": "any", "bool": "bool",
	} {
		assert.Equal(t, g, goType(c), c)
	}
}

func TestGoStringRoundTrip(t *testing.T) {
	for _, src := range []string{"plain", "with `backquote` twice`", "`", "", "a\r\nb"} {
		lit := goString(src)
		f, err := parser.ParseExpr(lit)
		require.NoError(t, err, lit)
		v, err := constant(f)
		require.NoError(t, err)
		assert.Equal(t, src, v, lit)
	}
}

// constant evaluates a string literal or a + of string literals.
func constant(e ast.Expr) (string, error) {
	switch e := e.(type) {
	case *ast.BasicLit:
		return strconv.Unquote(e.Value)
	case *ast.BinaryExpr:
		a, err := constant(e.X)
		if err != nil {
			return "", err
		}
		b, err := constant(e.Y)
		return a + b, err
	}
	return "", fmt.Errorf("not a string constant: %T", e)
}

func TestInstantiate(t *testing.T) {
	src := []byte("namespace ns {\ntemplate <typename T, int N>\n__global__ void scale(T* a, T s, int n) { int i = blockIdx.x * N + threadIdx.x; if (i < n) a[i] *= s; }\n}\n")
	a, err := transform.Load("tk.cu", src, nil)
	require.NoError(t, err)
	res, err := transform.Persistent(a, transform.Options{NoLaunchRewrite: true, DeviceOnly: true, Version: "test", Command: "gen tk.cu"})
	require.NoError(t, err)
	tests := []struct {
		name    string
		inst    []string
		want    []string
		wantErr string
	}{
		{"one", []string{"scale<float, 4>"}, []string{
			"func (k *TkKernels) ScaleFloat4(grid, block runtime.Dim3, shared uint32, r runtime.SMRange, a runtime.DevicePtr, s float32, n int32,",
			`"ns::scale__slate<float, 4>"`, `{Name: "s", CType: "float", Size: 4, Align: 4}`}, ""},
		{"two, qualified", []string{"ns::scale<double, 8>", "scale<unsigned int, 2>"}, []string{") ScaleDouble8(", ") ScaleUnsignedInt2(", "s uint32"}, ""},
		{"wrong count", []string{"scale<float>"}, nil, "--instantiate scale<float>: ns::scale has 2 template parameters (T, N), not 1"},
		{"unknown kernel", []string{"nope<int, 1>"}, nil, "--instantiate nope<int, 1>: tk.cu has no template kernel of that name"},
		{"malformed", []string{"scale"}, nil, `want KERNEL<ARGS>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, skipped, err := Generate(res, a, Options{Package: "p", Source: "tk.cu", Version: "test", Instantiate: tt.inst})
			if tt.wantErr != "" {
				var oe *OptionError
				require.ErrorAs(t, err, &oe)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Empty(t, skipped)
			for _, w := range tt.want {
				assert.Contains(t, string(code), w)
			}
			_, err = parser.ParseFile(token.NewFileSet(), "x.go", code, 0)
			assert.NoError(t, err)
		})
	}
}
