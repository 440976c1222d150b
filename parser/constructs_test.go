package parser

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Device new/delete in all their forms parse as expressions.
func TestNewDelete(t *testing.T) {
	tests := []struct {
		src  string
		want string // the statement's Go type
		news int    // NewExpr nodes
		dels int    // DeleteExpr nodes
	}{
		{"int* p = new int[n];", "*parser.DeclStmt", 1, 0},
		{"Node* q = new Node(i);", "*parser.DeclStmt", 1, 0},
		{"Node* r = ::new Node(3);", "*parser.DeclStmt", 1, 0},
		{"Node* s = new (buf) Node(i);", "*parser.DeclStmt", 1, 0},
		{"Node* s = ::new (static_cast<void*>(buf)) Node{i};", "*parser.DeclStmt", 1, 0},
		{"float** m = new float*[n];", "*parser.DeclStmt", 1, 0},
		{"auto v = new (T)(x);", "*parser.DeclStmt", 1, 0},
		{"p = new unsigned long long[n * blockIdx.x]();", "*parser.ExprStmt", 1, 0},
		{"p = new ns::Pair<int, float>(1, 2.f);", "*parser.ExprStmt", 1, 0},
		{"int* t = new int;", "*parser.DeclStmt", 1, 0},
		{"delete q;", "*parser.ExprStmt", 0, 1},
		{"delete[] p;", "*parser.ExprStmt", 0, 1},
		{"::delete r;", "*parser.ExprStmt", 0, 1},
		{"::delete[] a[blockIdx.x];", "*parser.ExprStmt", 0, 1},
		{"if (p) delete (Node*)p;", "*parser.IfStmt", 0, 1},
		{"s->~Node();", "*parser.ExprStmt", 0, 0},
		{"void* raw = ::operator new(16);", "*parser.DeclStmt", 0, 0},
		{"void* arr = operator new[](n * sizeof(float));", "*parser.DeclStmt", 0, 0},
		{"::operator delete(raw);", "*parser.ExprStmt", 0, 0},
		{"operator delete[](arr);", "*parser.ExprStmt", 0, 0},
		{"x = A::operator+(a, b) + operator()(c);", "*parser.ExprStmt", 0, 0},
		{"alignas(Node) unsigned char buf[sizeof(Node)];", "*parser.DeclStmt", 0, 0},
		{"__align__(16) float v[4];", "*parser.DeclStmt", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			stmts, f := kernelBody(t, tt.src)
			require.Len(t, stmts, 1)
			assert.Equal(t, tt.want, typeName(stmts[0]))
			assert.Equal(t, tt.src, f.Text(stmts[0].Span()), "statement span")
			news, dels := 0, 0
			Walk(stmts[0], func(n Node) bool {
				switch n.(type) {
				case *NewExpr:
					news++
				case *DeleteExpr:
					dels++
				}
				return true
			})
			assert.Equal(t, tt.news, news, "new expressions")
			assert.Equal(t, tt.dels, dels, "delete expressions")
		})
	}
}

// Expression statements that start with a keyword: C++ casts (the
// vectorised stores of optimised GEMMs, `reinterpret_cast<float4 *>(&Bs[i])[0]
// = ...;`), this and sizeof. They went to the grammar of keyword statements,
// which has none of them: "cannot parse: unexpected reinterpret_cast".
func TestKeywordExprStmts(t *testing.T) {
	for _, src := range []string{
		"reinterpret_cast<float4 *>(&Bs[innerRowB * BN + innerColB * 4])[0] = reinterpret_cast<float4 *>(&B[i])[0];",
		"reinterpret_cast<float4 *>(\n    &C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN])[0] =\n    tmp;",
		"static_cast<void>(unused);",
		"const_cast<float*>(cp)[0] = 1.0f;",
		"this->count += 1;",
		"sizeof(float4);",
	} {
		t.Run(src, func(t *testing.T) {
			stmts, f := kernelBody(t, src)
			require.Len(t, stmts, 1)
			assert.Equal(t, "*parser.ExprStmt", typeName(stmts[0]))
			assert.Equal(t, src, f.Text(stmts[0].Span()), "statement span")
		})
	}
}

// Types slatec cannot see (typedefs and #defines from headers it does not
// open): declarations and casts.
func TestUnknownTypeNames(t *testing.T) {
	tests := []struct {
		src   string
		want  string
		casts int // C casts in the statement
	}{
		{"__shared__ T buf[100];", "*parser.DeclStmt", 0},
		{"static __shared__ real_t partial[2][32];", "*parser.DeclStmt", 0},
		{"T x = a[0];", "*parser.DeclStmt", 0},
		{"const T y = x;", "*parser.DeclStmt", 0},
		{"T const* p = a;", "*parser.DeclStmt", 0},
		{"volatile T* s = buf;", "*parser.DeclStmt", 0},
		{"for (T i = 0; i < n; ++i) a[i] = i;", "*parser.ForStmt", 0},
		{"y = (T)x;", "*parser.ExprStmt", 1},
		{"y = (T)(a - b);", "*parser.ExprStmt", 0}, // (T)(...) reads as a call: same tokens
		{"y = (T)x + (U)1 + (V)'c' + (W)!z + (X)~z;", "*parser.ExprStmt", 5},
		{"y = (ns::T)x;", "*parser.ExprStmt", 1},
		{"y = (T*)p;", "*parser.ExprStmt", 1},
		{"y = (a) - b;", "*parser.ExprStmt", 0},
		{"y = (a) * b + (c) & d;", "*parser.ExprStmt", 0},
		{"y = (f)(x);", "*parser.ExprStmt", 0},
		{"y = (a)[i];", "*parser.ExprStmt", 0},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			stmts, f := kernelBody(t, tt.src)
			require.Len(t, stmts, 1)
			assert.Equal(t, tt.want, typeName(stmts[0]))
			assert.Equal(t, tt.src, f.Text(stmts[0].Span()), "statement span")
			casts := 0
			Walk(stmts[0], func(n Node) bool {
				if c, ok := n.(*CastExpr); ok && c.Type != nil {
					casts++
				}
				return true
			})
			assert.Equal(t, tt.casts, casts, "casts")
		})
	}
}

// Adjacent string literals with macros between them.
func TestStringMacros(t *testing.T) {
	tests := []struct {
		src    string
		macros []string
	}{
		{`printf("%d\t" FMT "\t%d\n", a, b, c);`, []string{"FMT"}},
		{`printf("a"FMT"b\n", n);`, []string{"FMT"}},
		{`printf("x=%" PRId64 "\n", (long long)n);`, []string{"PRId64"}},
		{`printf("x=%" PRId64, (long long)n);`, []string{"PRId64"}},
		{`printf(FMT "\n", n);`, []string{"FMT"}},
		{`printf(HDR "%d" SEP "%d" "\n", a, b);`, []string{"HDR", "SEP"}},
		{`const char* s = PREFIX "name";`, []string{"PREFIX"}},
		{`printf("plain" "concat\n");`, nil},
		{`printf(FMT SEP FMT "\n", i, n);`, []string{"FMT", "SEP", "FMT"}},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			stmts, f := kernelBody(t, tt.src)
			require.Len(t, stmts, 1)
			assert.Equal(t, tt.src, f.Text(stmts[0].Span()), "statement span")
			var macros []string
			Walk(stmts[0], func(n Node) bool {
				if p, ok := n.(*Primary); ok {
					macros = append(macros, p.StringMacros...)
				}
				return true
			})
			assert.Equal(t, tt.macros, macros)
		})
	}
}

// Member functions defined in class bodies are found and summarised, with
// their class; __device__ bodies are parsed.
func TestClassMembers(t *testing.T) {
	src := `template <typename T>
struct Tile {
  static __device__ void run(T* a, int n) { a[blockIdx.x] = n; }
  __device__ int row() const { return blockIdx.y; }
  __host__ int host_only() { return 1; }
  template <int N> __device__ int unrolled() { return N; }
  __device__ int operator[](int k) const { return k; }
  struct Inner { __device__ static int plane() { return blockIdx.z; } };
 private:
  int w_;
 public:
  __device__ Tile(int w) : w_(w) {}
};
namespace ns { class C { public: __device__ void f() {} }; }
struct Decl;
enum class E { A, B };
`
	f := parse(t, src)
	var got []string
	for _, m := range f.Members {
		got = append(got, m.Class+"::"+m.Name)
		if m.Device {
			assert.Nil(t, m.Def.BodyErr, m.Name)
			assert.NotNil(t, m.Def.Body, m.Name)
		}
	}
	// The constructor with an initialiser list stays opaque.
	assert.Equal(t, []string{"Tile::run", "Tile::row", "Tile::host_only", "Tile::unrolled", "Tile::operator[]",
		"Tile::Inner::plane", "C::f"}, got)
	assert.Equal(t, []string{"ns"}, f.Members[6].Namespace)
	assert.Empty(t, f.Funcs, "members are not top-level functions")
}

// `<` after a name in an expression opens template arguments when an
// argument is a basic type or when what follows the closing `>` cannot be a
// comparison's right operand (std::is_same_v<half, D> in if constexpr, from
// llama.cpp's CUDA kernels); comparisons stay comparisons.
func TestExprTemplateArgsOrComparison(t *testing.T) {
	for _, tt := range []struct {
		src       string
		templates int // ExprTemplateArgs nodes
	}{
		{"if constexpr (std::is_same_v<float, D>) { x = 1; }", 1},
		{"if constexpr (std::is_same_v<half, D>) { x = 1; }", 1},
		{"bool b = std::is_same_v<D, unsigned int*> && n > 0;", 1},
		{"y = cast_to<half>(x) + std::numeric_limits<T>::max();", 2},
		{"bool c = a < b, d = a > b;", 0},
		{"f(a < b, c > d);", 0},
		{"bool e = x < int(y) && n > 2;", 0},
		{"z = a < b ? c : d > e;", 0},
	} {
		t.Run(tt.src, func(t *testing.T) {
			stmts, f := kernelBody(t, tt.src)
			require.Len(t, stmts, 1)
			assert.Equal(t, tt.src, f.Text(stmts[0].Span()), "statement span")
			n := 0
			Walk(stmts[0], func(x Node) bool {
				if _, ok := x.(*ExprTemplateArgs); ok {
					n++
				}
				return true
			})
			assert.Equal(t, tt.templates, n, "template argument lists")
		})
	}
}
