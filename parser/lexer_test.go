package parser

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func kinds(src string) []string {
	var out []string
	for _, t := range Lex([]byte(src)) {
		if t.Kind == Space {
			continue
		}
		out = append(out, t.Kind.String()+":"+src[t.Off:t.End])
	}
	return out
}

func TestLex(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"launch", "k<<<g, b>>>(x);", []string{"Ident:k", "Punct:<<<", "Ident:g", "Punct:,", "Ident:b", "Punct:>>>", "Punct:(", "Ident:x", "Punct:)", "Punct:;"}},
		{"shift vs launch", "a >> 1 >>> b", []string{"Ident:a", "Punct:>>", "Number:1", "Punct:>>>", "Ident:b"}},
		{"numbers", "0x1p-3f 1'000'000 42ull .5e+3 1.f 0b101u", []string{"Number:0x1p-3f", "Number:1'000'000", "Number:42ull", "Number:.5e+3", "Number:1.f", "Number:0b101u"}},
		{"strings", `u8"a\"b" L'x' R"d(a)"b)d" "x"`, []string{`String:u8"a\"b"`, `Char:L'x'`, `String:R"d(a)"b)d"`, `String:"x"`}},
		{"comments", "a // c\n/* b\n */ b", []string{"Ident:a", "Comment:// c", "Comment:/* b\n */", "Ident:b"}},
		{"directive continuation", "#define X(a) \\\n  (a + blockIdx.x)\nint y;", []string{"Directive:#define X(a) \\\n  (a + blockIdx.x)", "Keyword:int", "Ident:y", "Punct:;"}},
		{"directive with block comment", "#define A /* x\n y */ 1\nA", []string{"Directive:#define A /* x\n y */ 1", "Ident:A"}},
		{"hash mid-line is punct", "a # b", []string{"Ident:a", "Punct:#", "Ident:b"}},
		{"cuda keywords", "__global__ __shared__ __launch_bounds__", []string{"Keyword:__global__", "Keyword:__shared__", "Keyword:__launch_bounds__"}},
		{"invalid byte", "a @ b", []string{"Ident:a", "Invalid:@", "Ident:b"}},
		{"unterminated string", "\"abc\nint", []string{"String:\"abc", "Keyword:int"}},
		{"spaced launch", "k << < g, b >> > (x);", []string{"Ident:k", "Punct:<< <", "Ident:g", "Punct:,", "Ident:b", "Punct:>> >", "Punct:(", "Ident:x", "Punct:)", "Punct:;"}},
		{"spaced launch tight", "k<< <g, f(b)>> >(x);", []string{"Ident:k", "Punct:<< <", "Ident:g", "Punct:,", "Ident:f", "Punct:(", "Ident:b", "Punct:)", "Punct:>> >", "Punct:(", "Ident:x", "Punct:)", "Punct:;"}},
		{"spaced close of a plain launch", "k<<<g, b>> > (x);", []string{"Ident:k", "Punct:<<<", "Ident:g", "Punct:,", "Ident:b", "Punct:>> >", "Punct:(", "Ident:x", "Punct:)", "Punct:;"}},
		{"template closers are not a launch", "A<B<C<int>> > x;", []string{"Ident:A", "Punct:<", "Ident:B", "Punct:<", "Ident:C", "Punct:<", "Keyword:int", "Punct:>>", "Punct:>", "Ident:x", "Punct:;"}},
		{"friend operator<< <T>", "friend S& operator<< <T>(S&);", []string{"Keyword:friend", "Ident:S", "Punct:&", "Keyword:operator", "Punct:<<", "Punct:<", "Ident:T", "Punct:>", "Punct:(", "Ident:S", "Punct:&", "Punct:)", "Punct:;"}},
		{"<< < is only ever a launch opener", "a << <b", []string{"Ident:a", "Punct:<< <", "Ident:b"}},
		{"scope and arrow", "a::b->c.*d", []string{"Ident:a", "Punct:::", "Ident:b", "Punct:->", "Ident:c", "Punct:.*", "Ident:d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, kinds(tt.src))
		})
	}
}

// The lexer covers every byte exactly once, in order.
func TestLexCoversInput(t *testing.T) {
	for _, src := range []string{"", " ", "a", "#", "/*", "\"", "'", "R\"(", "\\\n", "x<<<<y>>>>z", "\xff\xfe", "k << < g >> > (x)", "k<< <"} {
		var b strings.Builder
		at := 0
		for _, tok := range Lex([]byte(src)) {
			require.Equal(t, at, int(tok.Off), "gap or overlap in %q", src)
			require.Greater(t, tok.End, tok.Off, "empty token in %q", src)
			b.WriteString(src[tok.Off:tok.End])
			at = int(tok.End)
		}
		require.Equal(t, src, b.String())
	}
}

// newPeekingLexer hands the parsers the bridged tokens in place only while
// its mirror of participle's PeekingLexer matches; a participle upgrade
// that changes the struct must be noticed (the fallback copies).
func TestPeekingLexerLayout(t *testing.T) {
	if !peekingLayoutOK {
		t.Fatal("peekingLexer no longer mirrors participle's lexer.PeekingLexer: update it")
	}
	toks := bridge("x.cu", "a + b", Lex([]byte("a + b")), 0, 5, nil)
	p := newPeekingLexer(toks)
	var got []string
	for p.Peek().Type != ttEOF {
		got = append(got, p.Next().Value)
	}
	if strings.Join(got, " ") != "a + b" || p.Next().Type != ttEOF {
		t.Fatalf("tokens %q", got)
	}
}
