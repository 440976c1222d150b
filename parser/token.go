// Package parser reads CUDA C/C++ sources losslessly: a hand-written lexer
// that keeps every byte (comments, whitespace, preprocessor lines) and
// participle grammars for the top level and for function bodies. Every node
// carries its byte span, so later stages edit the original text by spans and
// a file that needs no edit is printed back byte for byte.
package parser

import "fmt"

// Kind classifies a token.
type Kind uint8

// Token kinds. Trivia (Space, Comment, Directive) is kept in the token stream
// and skipped by the grammars.
const (
	EOF       Kind = iota
	Space          // spaces, tabs, newlines, and backslash-newline splices outside directives
	Comment        // // line and /* block */ comments
	Directive      // a whole preprocessor line, continuations included
	Ident          // identifiers that are not keywords
	Keyword        // C, C++ and CUDA keywords (see keywords)
	Number         // pp-numbers: 0x1p-3f, 1'000, 42ull, .5e+3
	String         // "..." with prefixes u8 u U L, and raw strings R"d(...)d"
	Char           // 'a' with prefixes
	Punct          // operators and punctuation, longest match (<<< and >>> included)
	Invalid        // a byte that starts no token (reported by the parser, kept for round trip)
	numKinds
)

var kindNames = [...]string{
	EOF: "EOF", Space: "Space", Comment: "Comment", Directive: "Directive",
	Ident: "Ident", Keyword: "Keyword", Number: "Number", String: "String",
	Char: "Char", Punct: "Punct", Invalid: "Invalid",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// IsTrivia reports whether tokens of kind k are skipped by the grammars.
func (k Kind) IsTrivia() bool { return k == Space || k == Comment || k == Directive }

// Token is one lexeme: its kind and its byte span [Off, End) in the source.
type Token struct {
	Kind Kind
	Off  int32
	End  int32
}

// Span is a half-open byte range [Start, End) in a source file.
type Span struct {
	Start int
	End   int
}

// Len is the span's length in bytes.
func (s Span) Len() int { return s.End - s.Start }

// Contains reports whether o lies within s.
func (s Span) Contains(o Span) bool { return s.Start <= o.Start && o.End <= s.End }

// keywords are lexed as Keyword so that grammars can match identifiers
// without accidentally capturing a keyword. CUDA qualifiers are keywords too.
var keywords = map[string]bool{
	// C and C++
	"alignas": true, "alignof": true, "asm": true, "auto": true, "bool": true, "break": true,
	"case": true, "catch": true, "char": true, "char16_t": true, "char32_t": true, "char8_t": true,
	"class": true, "const": true, "const_cast": true, "constexpr": true, "consteval": true,
	"constinit": true, "continue": true, "decltype": true, "default": true, "delete": true,
	"do": true, "double": true, "dynamic_cast": true, "else": true, "enum": true,
	"explicit": true, "export": true, "extern": true, "false": true, "float": true, "for": true,
	"friend": true, "goto": true, "if": true, "inline": true, "int": true, "long": true,
	"mutable": true, "namespace": true, "new": true, "noexcept": true, "nullptr": true,
	"operator": true, "private": true, "protected": true, "public": true, "register": true,
	"reinterpret_cast": true, "return": true, "short": true, "signed": true, "sizeof": true,
	"static": true, "static_assert": true, "static_cast": true, "struct": true, "switch": true,
	"template": true, "this": true, "thread_local": true, "throw": true, "true": true,
	"try": true, "typedef": true, "typeid": true, "typename": true, "union": true,
	"unsigned": true, "using": true, "virtual": true, "void": true, "volatile": true,
	"wchar_t": true, "while": true, "_Alignof": true, "_Bool": true,
	// GNU spellings
	"__asm__": true, "__asm": true, "__volatile__": true, "__attribute__": true,
	"__restrict__": true, "__restrict": true, "__inline__": true, "__forceinline": true,
	// CUDA
	"__global__": true, "__device__": true, "__host__": true, "__shared__": true,
	"__constant__": true, "__managed__": true, "__forceinline__": true, "__noinline__": true,
	"__launch_bounds__": true, "__cluster_dims__": true, "__maxnreg__": true,
	"__grid_constant__": true, "__align__": true,
}

// IsKeyword reports whether s is lexed as a keyword.
func IsKeyword(s string) bool { return keywords[s] }
