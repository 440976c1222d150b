package parser

import (
	"bytes"
	"os"
	"reflect"
	"testing"
)

// tricky heads: each must parse to the tree the grammar alone builds.
var headCases = []string{
	"__global__ void k(float* a, int n) { a[0] = n; }",
	"__global__ void __launch_bounds__(256, 2) k(float* a) { }",
	"__global__ void __launch_bounds__(N * 2) k() {}",
	"__global__ void __launch_bounds__() k() {}",
	"__global__ void __launch_bounds__(1,) k() {}",
	"template <typename T, int N> __global__ void k(T* a) { }",
	"template <typename T> template <int N> __device__ T A<T>::f(T x) { return x; }",
	"template <> __global__ void k<float>(float* a) { }",
	"template <class T __device__ T f(T x) { return x; }",
	"static __device__ __forceinline__ const float& f(const float& x) { return x; }",
	"__device__ unsigned long long int * f(int a, int b) { return 0; }",
	"__device__ ::size_t f() { return 0; }",
	"__device__ std::size_t f() { return 0; }",
	"__device__ void ::f() { }",
	"__device__ void A::f() { }",
	"__device__ void A<int>::f() { }",
	"__device__ float3 operator+(float3 a, float3 b) { return a; }",
	"__device__ ~A() { }",
	"HOST_DEVICE_INLINE(x) float f(float y) { return y; }",
	"__host__ __device__ MACRO float f(float y) { return y; }",
	"MACRO(a) MACRO2(b) void f() {}",
	"__device__ float f(float y) const { return y; }",
	"__device__ auto f(float y) -> float { return y; }",
	"__device__ float f(float y) noexcept { return y; }",
	"__device__ float f(float y) __attribute__((noinline)) { return y; }",
	"__device__ __attribute__((always_inline)) float f(float y) { return y; }",
	"extern \"C\" __global__ void k(int* a) { }",
	"[[nodiscard]] __device__ int f() { return 1; }",
	"__device__ vector<int> f() { return {}; }",
	"__device__ int f(int a, ) { return a; }",
	"__device__ int f(int a, int b = g(1, 2), int c = h<1, 2>(3)) { return a; }",
	"__device__ int f(std::array<int, 3> a, T<(1 > 2)> b) { return a; }",
	"__device__ int f(int (*cb)(int, int), int x[4]) { return 0; }",
	"__device__ int f(void) { return 0; }",
	"__device__ int f(...) { return 0; }",
	"__device__ decltype(auto) f() { return 0; }",
	"alignas(16) __device__ int f() { return 0; }",
	"__device__ int f() try { return 0; } catch (...) {}",
	"__device__ int f()",
	"__device__ int f() {",
	"int x = 1; __device__ int f() { return x; }",
	"struct S { __device__ int f() { return 1; } __device__ S() {} __device__ int operator()(int x) const { return x; } };",
	"namespace a { namespace b { __global__ void k() {} } } extern \"C\" { __global__ void k2() {} }",
	"__global__ void k(int n) { auto l = [](int x) { return x; }; }",
	"__device__ int f(int a) { return a; }\n#if X\n}\n#endif\n",
	"__global__ void __launch_bounds__(MAX_THREADS) __maxnreg__(32) k() {}",
	"__global__ void __cluster_dims__(2, 1, 1) k() {}",
	"__device__ int * __restrict__ f() { return 0; }",
	"__device__ int f() && { return 0; }",
	"void f() {} void g() {}",
	"template <typename T> requires C<T> __device__ T f(T x) { return x; }",
	"__device__ int f(int x) { return x; } __device__",
	"__device__ __launch_bounds__ int f() {}",
}

func parseBoth(t *testing.T, name string, src []byte) {
	t.Helper()
	handHeads = false
	want, werr := ParseFile(name, src)
	handHeads = true
	got, gerr := ParseFile(name, src)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("%s: errors differ: grammar %v, hand %v", name, werr, gerr)
	}
	if werr != nil {
		return
	}
	if !reflect.DeepEqual(want.Items, got.Items) {
		t.Fatalf("%s: items differ", name)
	}
	if !reflect.DeepEqual(want.Funcs, got.Funcs) || !reflect.DeepEqual(want.Members, got.Members) {
		t.Fatalf("%s: functions differ", name)
	}
}

// The heads parsed by hand are the trees the grammar builds.
func TestHandHeadsMatchGrammar(t *testing.T) {
	defer func() { handHeads = true }()
	for i, src := range headCases {
		parseBoth(t, "case"+string(rune('A'+i%26)), []byte(src))
	}
	for _, p := range cudaFiles(t) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		parseBoth(t, p, src)
	}
}

func FuzzHandHeads(f *testing.F) {
	for _, src := range headCases {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		defer func() { handHeads = true }()
		parseBoth(t, "fuzz.cu", src)
		compareDeferred(t, "fuzz.cu", src)
	})
}

// A file parsed for reporting (bodies deferred, spaces dropped, source
// shared) gives, body by body, the trees ParseFile gives.
func TestDeferredBodiesMatchEager(t *testing.T) {
	for _, src := range headCases {
		compareDeferred(t, "case.cu", []byte(src))
	}
	for _, p := range cudaFiles(t) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		compareDeferred(t, p, src)
	}
}

func compareDeferred(t *testing.T, p string, src []byte) {
	t.Helper()
	want, werr := ParseFile(p, src)
	got, gerr := ParseFileWith(p, src, ParseOptions{DeferBodies: true, ShareSource: true, DropSpace: true, DropHeads: true})
	got2, gerr2 := ParseFileWith(p, src, ParseOptions{DeferBodies: true, DropSpace: true})
	if (werr == nil) != (gerr == nil) || (werr == nil) != (gerr2 == nil) {
		t.Fatalf("%s: errors differ: %v, %v, %v", p, werr, gerr, gerr2)
	}
	if werr != nil {
		if werr.Error() != gerr.Error() || werr.Error() != gerr2.Error() {
			t.Fatalf("%s: errors differ: %v, %v, %v", p, werr, gerr, gerr2)
		}
		return
	}
	// The tokens are the same but for the spaces.
	var nonSpace []Token
	for _, tk := range want.Toks {
		if tk.Kind != Space {
			nonSpace = append(nonSpace, tk)
		}
	}
	if !reflect.DeepEqual(nonSpace, got.Toks) && !(len(nonSpace) == 0 && len(got.Toks) == 0) {
		t.Fatalf("%s: tokens differ", p)
	}
	if len(want.Funcs) != len(got.Funcs) || len(want.Members) != len(got.Members) {
		t.Fatalf("%s: function counts differ", p)
	}
	wfns := append(append([]*Func(nil), want.Funcs...), want.Members...)
	g2fns := append(append([]*Func(nil), got2.Funcs...), got2.Members...)
	for j, fn := range append(append([]*Func(nil), got.Funcs...), got.Members...) {
		w, g2 := wfns[j], g2fns[j]
		body, berr := fn.Def.Body, fn.Def.BodyErr
		if fn.Def.Deferred {
			if body != nil {
				t.Fatalf("%s: %s: a deferred body was parsed", p, fn.Name)
			}
			body, berr = got.ParseBody(fn)
		}
		if !reflect.DeepEqual(w.Def.Body, body) || !reflect.DeepEqual(w.Def.BodyErr, berr) {
			t.Fatalf("%s: %s: bodies differ", p, fn.Name)
		}
		if j < len(got.Funcs) && fn.Def.Deferred != (w.Def.Body != nil || w.Def.BodyErr != nil) {
			t.Fatalf("%s: %s: deferred %v", p, fn.Name, fn.Def.Deferred)
		}
		if fn.Def.Head != nil {
			t.Fatalf("%s: %s: a head was kept", p, fn.Name)
		}
		// The summaries are the same.
		a, b, c := *w, *fn, *g2
		a.Def, b.Def, c.Def = nil, nil, nil
		if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(a, c) {
			t.Fatalf("%s: %s: summaries differ", p, fn.Name)
		}
		// With the heads kept, the trees are the same but for the bodies.
		if g2.Def.Deferred {
			w.Def.Body, w.Def.BodyErr, g2.Def.Deferred = nil, nil, false
		}
	}
	if !reflect.DeepEqual(want.Items, got2.Items) {
		t.Fatalf("%s: items differ", p)
	}
	if got.Text(Span{0, len(src)}) != string(src) {
		t.Fatalf("%s: text differs", p)
	}
	// Printing follows the source, heads dropped or not.
	var b bytes.Buffer
	if err := Fprint(&b, got); err != nil || !bytes.Equal(b.Bytes(), src) {
		t.Fatalf("%s: printing without heads: %v", p, err)
	}
}
