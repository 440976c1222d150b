package parser

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

// kernelHeavy returns a large file made of the test kernels (each copy in
// a namespace of its own), at least n bytes.
func kernelHeavy(b testing.TB, n int) []byte {
	var one bytes.Buffer
	for _, p := range cudaFiles(b) {
		src, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		one.Write(src)
		one.WriteByte('\n')
	}
	var big bytes.Buffer
	for i := 0; big.Len() < n; i++ {
		fmt.Fprintf(&big, "namespace copy%d {\n", i)
		big.Write(one.Bytes())
		big.WriteString("}\n")
	}
	return big.Bytes()
}

// BenchmarkParse measures lexing and parsing (top level, heads, and the
// bodies of every kernel and device function) in MB/s on one core:
// go test ./parser -run '^$' -bench Parse -cpu 1
func BenchmarkParse(b *testing.B) {
	src := kernelHeavy(b, 4<<20)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ParseFile("big.cu", src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLex measures the lexer alone.
func BenchmarkLex(b *testing.B) {
	src := kernelHeavy(b, 4<<20)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Lex(src)
	}
}
