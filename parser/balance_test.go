package parser

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/diag"
)

// A file slatec cannot read as a whole is an error at the unclosed opener
// (or the stray closer, or the literal), never a silent pass-through.
func TestUnreadableFiles(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		line, col int
		message   string // "" when the file must parse
	}{
		{"unclosed brace in a kernel", "__global__ void good(int* a) { a[0] = 1; }\n__global__ void bad(int* a) {\n  if (a) {\n    a[0] = 1;\n}\nint main() { int* a; bad<<<1,32>>>(a); }\n",
			2, 29, `unbalanced "{": it is never closed`},
		{"cut off mid-kernel", "__global__ void k(int* a) {\n  for (int i = 0; i < 4; ++i) {\n    a[i] = i;", 2, 31, `unbalanced "{": it is never closed`},
		{"unbalanced parenthesis", "__global__ void k(int* a) {\n  a[0] = (1 + 2;\n}\n", 2, 10, `unbalanced "(": closed by "}"`},
		{"stray parenthesis", "int x = 1);\n", 1, 10, `unbalanced ")": nothing is open here`},
		{"unclosed comment", "__global__ void k(int* a) {\n  /* a[0] = 1;\n}\n", 2, 3, "unterminated comment"},
		{"unterminated string", "__global__ void k(int* a) {\n  printf(\"x\n);\n}\n", 2, 10, "unterminated string literal"},
		{"mismatched in a header-like declaration", "struct S { int a[4}; };\n", 1, 17, `unbalanced "[": closed by "}"`},

		{"balanced", "__global__ void k(int* a) { if (a) { a[0] = (1 + 2); } }\n", 0, 0, ""},
		{"one brace per configuration", "#if USE_A\n__global__ void k(int* a) {\n#else\n__global__ void k(float* a) {\n#endif\n  a[0] = 1;\n}\n", 0, 0, ""},
		{"extern C guard", "#ifdef __cplusplus\nextern \"C\" {\n#endif\n__global__ void k(int* a) { a[0] = 1; }\n#ifdef __cplusplus\n}\n#endif\n", 0, 0, ""},
		{"#if 0 junk", "#if 0\n{ ( [ 'unclosed\n#else\nint x;\n#endif\n__global__ void k(int* a) { a[0] = 1; }\n", 0, 0, ""},
		{"#elif", "#if A\nvoid f() {\n#elif B\nvoid g() {\n#else\nvoid h() {\n#endif\n}\n", 0, 0, ""},
		{"nested #if inside a skipped branch", "#if 0\n#if X\n{\n#endif\n(\n#endif\nint y;\n", 0, 0, ""},
		{"brackets in directives and comments", "#define OPEN {\n// (\n/* [ */\nint z;\n", 0, 0, ""},
		{"raw string and escapes", "const char* s = R\"x(})\")x\"; char c = '\\''; const char* e = \"\\\\\";\n", 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFile("t.cu", []byte(tt.src))
			if tt.message == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			d, ok := err.(diag.Diagnostic)
			require.True(t, ok, "%T", err)
			assert.Equal(t, diag.Error, d.Severity)
			assert.Contains(t, d.Message, tt.message)
			assert.Equal(t, tt.line, d.Line, "line")
			assert.Equal(t, tt.col, d.Col, "col")
			assert.NotEmpty(t, d.Source, "the source line for the caret")
		})
	}
}
