package parser

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIncludeConditions(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		defines map[string]string
		undef   []string
		want    Tri
		unknown []string
	}{
		{"plain", "#include \"a.h\"\n", nil, nil, Yes, nil},
		{"if 0", "#if 0\n#include \"a.h\"\n#endif\n", nil, nil, No, nil},
		{"if 1 else", "#if 1\n#else\n#include \"a.h\"\n#endif\n", nil, nil, No, nil},
		{"ifdef unknown", "#ifdef FAST\n#include \"a.h\"\n#endif\n", nil, nil, Maybe, []string{"FAST"}},
		{"ifdef -D", "#ifdef FAST\n#include \"a.h\"\n#endif\n", map[string]string{"FAST": ""}, nil, Yes, nil},
		{"ifdef -U", "#ifdef FAST\n#include \"a.h\"\n#endif\n", nil, []string{"FAST"}, No, nil},
		{"else of -D", "#ifdef FAST\n#else\n#include \"a.h\"\n#endif\n", map[string]string{"FAST": "1"}, nil, No, nil},
		{"ifndef -U", "#ifndef FAST\n#include \"a.h\"\n#endif\n", nil, []string{"FAST"}, Yes, nil},
		{"define earlier", "#define LEVEL 3\n#if LEVEL >= 3\n#include \"a.h\"\n#endif\n", nil, nil, Yes, nil},
		{"define earlier false", "#define LEVEL 2\n#if LEVEL >= 3 // comment\n#include \"a.h\"\n#endif\n", nil, nil, No, nil},
		{"undef earlier", "#define X 1\n#undef X\n#if defined(X)\n#include \"a.h\"\n#endif\n", nil, nil, No, nil},
		{"-D value", "#if MODE == 2\n#include \"a.h\"\n#endif\n", map[string]string{"MODE": "2"}, nil, Yes, nil},
		{"and short-circuit", "#if defined(A) && B > 1\n#include \"a.h\"\n#endif\n", nil, []string{"A"}, No, nil},
		{"or short-circuit", "#if defined A || B\n#include \"a.h\"\n#endif\n", map[string]string{"A": ""}, nil, Yes, nil},
		{"not", "#if !defined(A)\n#include \"a.h\"\n#endif\n", map[string]string{"A": ""}, nil, No, nil},
		{"elif", "#if defined(A)\n#elif defined(B)\n#include \"a.h\"\n#endif\n", map[string]string{"B": ""}, []string{"A"}, Yes, nil},
		{"elif after maybe", "#if defined(A)\n#elif 1\n#include \"a.h\"\n#endif\n", nil, nil, Maybe, []string{"A"}},
		{"nested not taken", "#ifdef A\n#if 0\n#include \"a.h\"\n#endif\n#endif\n", nil, nil, No, nil},
		{"unsupported", "#if __has_include(\"a.h\")\n#include \"a.h\"\n#endif\n", nil, nil, Maybe, nil},
		{"define in maybe region", "#ifdef A\n#define L 5\n#endif\n#if L > 3\n#include \"a.h\"\n#endif\n", map[string]string{}, nil, Maybe, []string{"L"}},
		{"include guard", "#ifndef MY_H\n#define MY_H\n#include \"a.h\"\n#endif\n", nil, nil, Yes, nil},
		{"macro chain", "#define A B\n#define B 4\n#if A == 4\n#include \"a.h\"\n#endif\n", nil, nil, Yes, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := ParseFile("t.cu", []byte(c.src))
			require.NoError(t, err)
			require.Len(t, f.Includes, 1)
			got := f.IncludeConditions(c.defines, c.undef)[f.Includes[0]]
			require.Equal(t, c.want, got.Taken)
			require.Equal(t, c.unknown, got.Unknown)
		})
	}
}

func TestExclusive(t *testing.T) {
	src := "int a;\n#ifdef A\nint b;\n#if B\nint c;\n#else\nint d;\n#endif\n#elif C\nint e;\n#else\nint f;\n#endif\nint g;\n"
	f, err := ParseFile("t.cu", []byte(src))
	require.NoError(t, err)
	ds := f.CondDirectives()
	require.Len(t, ds, 7)
	off := func(s string) int {
		for i := 0; i+len(s) <= len(src); i++ {
			if src[i:i+len(s)] == s {
				return i
			}
		}
		t.Fatalf("%q not found", s)
		return 0
	}
	cases := []struct {
		x, y string
		want bool
	}{
		{"int a", "int b", false},
		{"int b", "int c", false},
		{"int c", "int d", true},
		{"int b", "int e", true},
		{"int c", "int f", true},
		{"int e", "int f", true},
		{"int d", "int g", false},
	}
	for _, c := range cases {
		require.Equal(t, c.want, Exclusive(ds, off(c.x), off(c.y)), "%s / %s", c.x, c.y)
	}
}
