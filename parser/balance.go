package parser

import (
	"strings"

	"github.com/slatec/slatec/diag"
)

// checkBalance reports a file slatec cannot read as a whole: an unclosed
// block comment, an unterminated string or character literal, or brackets
// that do not balance (an unclosed `{`, a `)` closing a `[`, a file cut off
// inside a function). The error points at the unclosed opener (or the
// stray closer, or the literal).
//
// Conditional compilation is followed the way one configuration would see
// it: of each #if/#ifdef/#ifndef group, the first branch is counted (the
// #else branch instead of an `#if 0` branch) and the other branches are
// skipped, so code whose braces balance only per configuration
// (`#if A void f() { #else void g() { #endif }`) is read as intended.
func (f *File) checkBalance(text string, lines *diag.Lines) error {
	type cond struct {
		active bool // the enclosing region is counted
		taking bool // the current branch is counted
		taken  bool // a branch was counted already
	}
	var conds []cond
	counted := func() bool { return len(conds) == 0 || (conds[len(conds)-1].active && conds[len(conds)-1].taking) }
	type open struct {
		tok   Token
		delim byte
	}
	var stack []open
	closer := map[byte]byte{'(': ')', '[': ']', '{': '}'}
	for _, t := range f.Toks {
		s := text[t.Off:t.End]
		switch t.Kind {
		case Directive:
			name, arg := directiveName(s)
			switch name {
			case "if", "ifdef", "ifndef":
				zero := name == "if" && isZeroCond(arg)
				conds = append(conds, cond{active: counted(), taking: !zero, taken: !zero})
			case "elif", "elifdef", "elifndef", "else":
				if n := len(conds); n > 0 {
					c := &conds[n-1]
					c.taking = !c.taken && (name == "else" || !(name == "elif" && isZeroCond(arg)))
					c.taken = c.taken || c.taking
				}
			case "endif":
				if n := len(conds); n > 0 {
					conds = conds[:n-1]
				}
			}
			continue
		case Comment:
			if strings.HasPrefix(s, "/*") && (len(s) < 4 || !strings.HasSuffix(s, "*/")) {
				return lines.At(f.Name, int(t.Off), diag.Error, "unterminated comment: this /* is never closed")
			}
			continue
		}
		if !counted() {
			continue
		}
		switch t.Kind {
		case String, Char:
			if !literalClosed(s) {
				what := "string literal"
				if t.Kind == Char {
					what = "character literal"
				}
				return lines.At(f.Name, int(t.Off), diag.Error, "unterminated %s", what)
			}
		case Punct:
			switch s {
			case "(", "[", "{":
				stack = append(stack, open{t, s[0]})
			case ")", "]", "}":
				if len(stack) == 0 {
					// A stray `}` at file level comes from conditional
					// compilation slatec does not follow in the same way
					// (the grammar keeps it as StrayBrace); other strays
					// cannot be read.
					if s == "}" {
						continue
					}
					return lines.At(f.Name, int(t.Off), diag.Error, "unbalanced %q: nothing is open here", s)
				}
				top := stack[len(stack)-1]
				if closer[top.delim] != s[0] {
					d := lines.At(f.Name, int(top.tok.Off), diag.Error, "unbalanced %q: closed by %q", string(top.delim), s)
					d.Notes = append(d.Notes, lines.At(f.Name, int(t.Off), diag.Note, "the mismatched %q is here", s))
					return d
				}
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) > 0 {
		top := stack[len(stack)-1]
		d := lines.At(f.Name, int(top.tok.Off), diag.Error, "unbalanced %q: it is never closed (the file ends first)", string(top.delim))
		if len(stack) > 1 {
			out := stack[0]
			d.Notes = append(d.Notes, lines.At(f.Name, int(out.tok.Off), diag.Note, "inside the %q opened here", string(out.delim)))
		}
		return d
	}
	return nil
}

// directiveName splits `#  if defined(X)` into "if" and "defined(X)".
func directiveName(d string) (string, string) {
	i := 1
	for i < len(d) && (d[i] == ' ' || d[i] == '\t') {
		i++
	}
	j := i
	for j < len(d) && isIdentChar(d[j]) {
		j++
	}
	return d[i:j], strings.TrimSpace(d[j:])
}

// isZeroCond reports whether an #if condition is the literal 0 (comments
// after it allowed).
func isZeroCond(arg string) bool {
	if k := strings.Index(arg, "//"); k >= 0 {
		arg = arg[:k]
	}
	if k := strings.Index(arg, "/*"); k >= 0 {
		arg = arg[:k]
	}
	arg = strings.TrimSpace(arg)
	return arg == "0" || arg == "(0)" || arg == "false"
}

// literalClosed reports whether a lexed string or character literal ends
// with its closing quote (raw strings included).
func literalClosed(s string) bool {
	q := strings.IndexAny(s, "\"'")
	if q < 0 {
		return false
	}
	if q > 0 && s[q-1] == 'R' && s[q] == '"' {
		// R"d( ... )d"
		p := strings.IndexByte(s[q:], '(')
		if p < 0 {
			return false
		}
		delim := s[q+1 : q+p]
		return strings.HasSuffix(s, ")"+delim+"\"") && len(s) >= q+p+len(delim)+3
	}
	body := s[q+1:]
	if len(body) == 0 || body[len(body)-1] != s[q] {
		return false
	}
	// The last quote must not be escaped: count the backslashes before it.
	n := 0
	for k := len(body) - 2; k >= 0 && body[k] == '\\'; k-- {
		n++
	}
	return n%2 == 0
}
