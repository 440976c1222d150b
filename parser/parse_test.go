package parser

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/diag"
)

func parse(t *testing.T, src string) *File {
	t.Helper()
	f, err := ParseFile("t.cu", []byte(src))
	require.NoError(t, err)
	return f
}

// kernelBody parses src as the body of a kernel and returns its statements.
func kernelBody(t *testing.T, body string) ([]Stmt, *File) {
	t.Helper()
	f := parse(t, "__global__ void k(float* a, int n) {\n"+body+"\n}\n")
	require.Len(t, f.Funcs, 1)
	if f.Funcs[0].Def.BodyErr != nil {
		t.Fatalf("body did not parse: %v", f.Funcs[0].Def.BodyErr)
	}
	return f.Funcs[0].Def.Body.Stmts, f
}

func TestStatements(t *testing.T) {
	tests := []struct {
		src  string
		want string // the statement's Go type
	}{
		{"int i = blockIdx.x * blockDim.x + threadIdx.x;", "*parser.DeclStmt"},
		{"__shared__ float tile[32][33];", "*parser.DeclStmt"},
		{"extern __shared__ float dyn[];", "*parser.DeclStmt"},
		{"const float* __restrict__ p = a + 1, *q = p;", "*parser.DeclStmt"},
		{"cg::thread_block cta = cg::this_thread_block();", "*parser.DeclStmt"},
		{"curandState s;", "*parser.DeclStmt"},
		{"MyType* p = nullptr;", "*parser.DeclStmt"},
		{"typename Traits<T>::value_type v{};", "*parser.DeclStmt"},
		{"auto f = [&](int k) { return a[k]; };", "*parser.DeclStmt"},
		{"int x(5), y{6};", "*parser.DeclStmt"},
		{"a[i] = b * c;", "*parser.ExprStmt"},
		{"x * y;", "*parser.DeclStmt"}, // C++ reads `T * y;` as a declaration
		{"(void)n;", "*parser.ExprStmt"},
		{"f<float>(a);", "*parser.ExprStmt"},
		{"i < n && j > (k);", "*parser.ExprStmt"},
		{"cg::sync(cta);", "*parser.ExprStmt"},
		{"this_thread_block().sync();", "*parser.ExprStmt"},
		{"v = __shfl_down_sync(0xffffffff, v, 16);", "*parser.ExprStmt"},
		{"if (i >= n) return;", "*parser.IfStmt"},
		{"if (a) { } else if (b) { } else { }", "*parser.IfStmt"},
		{"for (int s = 1; s < n; s <<= 1) __syncthreads();", "*parser.ForStmt"},
		{"for (;;) break;", "*parser.ForStmt"},
		{"while (n--) { continue; }", "*parser.WhileStmt"},
		{"do { n >>= 1; } while (n > 1);", "*parser.DoStmt"},
		{"switch (n) { case 1: case A::B: break; default: return; }", "*parser.SwitchStmt"},
		{"goto out;", "*parser.GotoStmt"},
		{"out:", "*parser.LabelStmt"},
		{`asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));`, "*parser.AsmStmt"},
		{`asm("bar.sync 0;");`, "*parser.AsmStmt"},
		{`__asm__ __volatile__("" ::: "memory");`, "*parser.AsmStmt"},
		{"using namespace cooperative_groups;", "*parser.OpaqueStmt"},
		{"static_assert(sizeof(float) == 4, \"x\");", "*parser.OpaqueStmt"},
		{"typedef float real;", "*parser.OpaqueStmt"},
		{"{ }", "*parser.Block"},
		{";", "*parser.EmptyStmt"},
		{"return;", "*parser.ReturnStmt"},
		{"x = static_cast<int>(y) + reinterpret_cast<const int*>(p)[0];", "*parser.ExprStmt"},
		{"x = (float)i + (T)(j) - (int*)p - (a) * b;", "*parser.ExprStmt"},
		{"x = sizeof(float4) + sizeof x + alignof(double);", "*parser.ExprStmt"},
		{"p->field.arr[3]++;", "*parser.ExprStmt"},
		{"x = c ? y : z = w;", "*parser.ExprStmt"},
		{"float4 v = make_float4(1.f, 2.f, 3.f, 4.f), w = {1, 2, 3, 4};", "*parser.DeclStmt"},
		{"atomicAdd(&hist[(x >> 2) & 63], 1u);", "*parser.ExprStmt"},
		{"tile.shfl_down(v, 1);", "*parser.ExprStmt"},
		{"s = cg::reduce(tile, v, cg::plus<float>());", "*parser.ExprStmt"},
		{"dim3 g{1, 2, 3};", "*parser.DeclStmt"},
		{"__align__(16) __half h[8];", "*parser.DeclStmt"},
		{"alignas(16) float v[4];", "*parser.DeclStmt"},
		{"__half __align__(16) h[8];", "*parser.DeclStmt"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			stmts, f := kernelBody(t, tt.src)
			require.Len(t, stmts, 1)
			assert.Equal(t, tt.want, typeName(stmts[0]))
			assert.Equal(t, tt.src, f.Text(stmts[0].Span()), "statement span")
		})
	}
}

func typeName(v any) string { return fmtT(v) }

func TestAsmSections(t *testing.T) {
	stmts, _ := kernelBody(t, `asm volatile("add.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b) : "memory");`+"\n"+
		`__asm__ __volatile__("" ::: "memory");`+"\n"+`asm("mov.u32 %0, %%smid;" : "=r"(x));`)
	a := stmts[0].(*AsmStmt)
	assert.Len(t, a.Outputs(), 1)
	assert.Len(t, a.Inputs(), 2)
	assert.Equal(t, []string{`"memory"`}, a.Clobbers())
	b := stmts[1].(*AsmStmt)
	assert.Empty(t, b.Outputs())
	assert.Empty(t, b.Inputs())
	assert.Equal(t, []string{`"memory"`}, b.Clobbers())
	c := stmts[2].(*AsmStmt)
	assert.Len(t, c.Outputs(), 1)
}

func TestSyntaxErrorsAreDiagnosed(t *testing.T) {
	tests := []struct {
		body    string
		line    int
		message string
	}{
		{"int x = ;", 2, "unexpected"},
		{"a[i = 1;", 2, `unbalanced "[": closed by "}"`},
		{"if (x) { y = 1;", 1, `unbalanced "{": it is never closed`},
		{"x = 1 @ 2;", 2, "unexpected"},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			f, err := ParseFile("t.cu", []byte("__global__ void k(int x, int* a) {\n"+tt.body+"\n}\n"))
			if err != nil {
				// Unbalanced brackets: the file as a whole cannot be read.
				d, ok := err.(diag.Diagnostic)
				require.True(t, ok, "%T", err)
				assert.Equal(t, tt.line, d.Line)
				assert.Contains(t, d.Message, tt.message)
				assert.NotEmpty(t, d.Source)
				return
			}
			require.Len(t, f.Funcs, 1)
			d := f.Funcs[0].Def.BodyErr
			require.NotNil(t, d, "expected a body error")
			assert.Equal(t, tt.line, d.Line)
			assert.Contains(t, d.Message, tt.message)
			assert.NotEmpty(t, d.Source)
		})
	}
}

func TestFunctionHeads(t *testing.T) {
	src := `
template <typename T, int BS = 256, typename... Rest>
__global__ void __launch_bounds__(BS, 2) reduce(const T* __restrict__ in, T* out, unsigned n, Rest... rest) { }
extern "C" __global__ void plain(float*, int) { }
namespace outer { namespace inner {
static __device__ __forceinline__ float2 operator+(float2 a, float2 b) { return a; }
__host__ __device__ inline int helper(int (*fn)(int), float arr[4]) { return 0; }
} }
extern "C" {
__global__ void in_block(void) { }
}
HOST_DEVICE_ATTR(x) __device__ int macro_attr(int v) { return v; }
__global__ void __cluster_dims__(2, 1, 1) clustered() { }
`
	f := parse(t, src)
	byName := map[string]*Func{}
	for _, fn := range f.Funcs {
		byName[fn.Name] = fn
	}
	r := byName["reduce"]
	require.NotNil(t, r)
	assert.True(t, r.Global)
	require.Len(t, r.Template, 3)
	assert.Equal(t, []string{"T", "BS", "Rest"}, []string{r.Template[0].Name, r.Template[1].Name, r.Template[2].Name})
	assert.True(t, r.Template[0].IsType)
	assert.False(t, r.Template[1].IsType)
	assert.True(t, r.Template[2].Pack)
	require.Len(t, r.Params, 4)
	assert.Equal(t, "const T* __restrict__", r.Params[0].Type)
	assert.Equal(t, "in", r.Params[0].Name)
	assert.Equal(t, "unsigned", r.Params[2].Type)
	assert.Equal(t, "rest", r.Params[3].Name)
	require.NotNil(t, r.LaunchBounds)
	assert.Len(t, r.LaunchBounds.Args, 2)

	p := byName["plain"]
	require.NotNil(t, p)
	assert.True(t, p.ExternC)
	assert.Equal(t, "", p.Params[0].Name)
	assert.Equal(t, "float*", p.Params[0].Type)

	op := byName["operator+"]
	require.NotNil(t, op)
	assert.Equal(t, []string{"outer", "inner"}, op.Namespace)
	assert.True(t, op.Device && op.Static && op.Inline)

	h := byName["helper"]
	require.NotNil(t, h)
	assert.True(t, h.Host && h.Device)
	assert.Equal(t, "fn", h.Params[0].Name)
	assert.Equal(t, "arr", h.Params[1].Name)

	b := byName["in_block"]
	require.NotNil(t, b)
	assert.True(t, b.ExternC)
	assert.Empty(t, b.Params)

	m := byName["macro_attr"]
	require.NotNil(t, m, "a macro attribute before the head must not hide the function")
	assert.True(t, m.Device)

	c := byName["clustered"]
	require.NotNil(t, c)
	assert.NotNil(t, c.ClusterDims)
}

func TestMacrosAndIncludes(t *testing.T) {
	f := parse(t, "#include <cstdio>\n#include \"helpers.cuh\"\n#define GTID (blockIdx.x * blockDim.x + \\\n threadIdx.x)\n#define SQ(x) ((x) * (x))\n")
	require.Len(t, f.Includes, 2)
	assert.True(t, f.Includes[0].System)
	assert.Equal(t, "helpers.cuh", f.Includes[1].Path)
	require.Len(t, f.Macros, 2)
	assert.Equal(t, []string{"blockIdx", "x", "blockDim", "x", "threadIdx", "x"}, f.Macros[0].BodyIdents)
	assert.Equal(t, []string{"x"}, f.Macros[1].Params)
}

// cudaFiles returns every CUDA file of the repository's test inputs,
// examples and golden outputs.
func cudaFiles(t testing.TB) []string {
	var files []string
	for _, dir := range []string{"../testdata", "../examples", "../golden"} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".cu") || strings.HasSuffix(p, ".cuh")) {
				files = append(files, p)
			}
			return nil
		})
	}
	return files
}

// Printing a parsed file without edits gives the input byte for byte, and
// every node's span nests inside its parent's.
func TestRoundTrip(t *testing.T) {
	files := cudaFiles(t)
	require.NotEmpty(t, files)
	for _, p := range files {
		t.Run(p, func(t *testing.T) {
			src, err := os.ReadFile(p)
			require.NoError(t, err)
			f, err := ParseFile(p, src)
			require.NoError(t, err)
			var b bytes.Buffer
			require.NoError(t, Fprint(&b, f))
			require.Equal(t, string(src), b.String())
			for _, fn := range f.Funcs {
				if fn.Global || fn.Device {
					assert.Nil(t, fn.Def.BodyErr, "device function %s did not parse", fn.Name)
				}
			}
		})
	}
}

// FuzzParse: no panic, and a round trip, on any input.
func FuzzParse(f *testing.F) {
	for _, p := range cudaFiles(f) {
		if src, err := os.ReadFile(p); err == nil {
			f.Add(src)
		}
	}
	f.Add([]byte("__global__ void k(int* a) { if (a) return; __syncthreads(); }"))
	f.Add([]byte("template<class T> __device__ T f(T x) { return x < 1 ? x : f<T>(x - 1); }"))
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := ParseFile("fuzz.cu", src)
		if err != nil {
			return // a diagnostic, not a panic
		}
		var b bytes.Buffer
		if err := Fprint(&b, file); err != nil {
			t.Fatalf("print: %v", err)
		}
		if !bytes.Equal(b.Bytes(), src) {
			t.Fatalf("round trip changed the input")
		}
	})
}

func TestModernExpressions(t *testing.T) {
	for _, src := range []string{
		"return (0.0f + ... + (float)xs);",
		"return (xs + ...);",
		"f(args...);",
		"int a[] = {xs...};",
		"child<<<(n + 127) / 128, 128, 0, 0>>>(out, n);",
	} {
		t.Run(src, func(t *testing.T) {
			stmts, _ := kernelBody(t, src)
			require.Len(t, stmts, 1)
		})
	}
}

// fastChildren agrees with the reflective enumeration on every node of
// every test input.
func TestFastChildrenMatchReflection(t *testing.T) {
	for _, p := range cudaFiles(t) {
		src, _ := os.ReadFile(p)
		f, err := ParseFile(p, src)
		require.NoError(t, err)
		Walk(f, func(n Node) bool {
			fast, ok := fastChildren(n)
			if !ok {
				return true
			}
			slow := reflectChildren(n)
			require.Equal(t, len(slow), len(fast), "%T in %s", n, p)
			for i := range slow {
				require.True(t, slow[i] == fast[i], "%T child %d in %s", n, i, p)
			}
			return true
		})
	}
}

// Leaving the insides of function bodies out of the top level's tokens
// (bodyInners) changes nothing it parses, on every test input and on
// inputs whose brackets do not balance.
func TestTopLevelWithoutBodiesSame(t *testing.T) {
	srcs := map[string][]byte{
		"unbalanced1.cu": []byte("__global__ void k() { if (x) { }\n#if A\n}\n#endif\nvoid h() { (] }\n__device__ int g() { return 1; }\n"),
		"unbalanced2.cu": []byte("struct S { void f() const { int a[2] = {1, 2}; } };\nvoid g() { ( }\nnamespace n { void h() {} }\n"),
	}
	for _, p := range cudaFiles(t) {
		src, err := os.ReadFile(p)
		require.NoError(t, err)
		srcs[p] = src
	}
	for p, src := range srcs {
		text := string(src)
		toks := Lex(src)
		names := collectTypeNames(text, toks)
		full, err1 := topParser.ParseFromLexer(newPeekingLexer(bridge(p, text, toks, 0, len(toks), names)))
		cut, err2 := topParser.ParseFromLexer(newPeekingLexer(bridgeInto(nil, p, text, toks, 0, len(toks), names, bodyInners(text, toks))))
		require.Equal(t, err1 == nil, err2 == nil, p)
		if err1 == nil {
			require.True(t, reflect.DeepEqual(full, cut), "%s: top level differs", p)
		}
	}
}
