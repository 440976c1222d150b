package parser

import (
	"github.com/slatec/slatec/diag"
)

// collectMembers finds the member function definitions written inside the
// bodies of classes, structs and unions (class templates included) that
// the top level keeps opaque, and summarises them like other functions
// (Func.Class names the class); bodies of __device__ members are parsed.
// A class body slatec cannot read stays opaque: its members are not listed.
func (f *File) collectMembers(text string, lines *diag.Lines) {
	var walk func(items []TopItem, ns []string)
	walk = func(items []TopItem, ns []string) {
		for _, it := range items {
			switch it := it.(type) {
			case *Namespace:
				name := ""
				for i, n := range it.Name {
					if i > 0 {
						name += "::"
					}
					name += n
				}
				if name == "" {
					name = "(anonymous)"
				}
				walk(it.Items, append(append([]string(nil), ns...), name))
			case *LinkageBlock:
				walk(it.Items, ns)
			case *Opaque:
				f.classBodies(text, lines, f.tokenIndex(it.Span().Start), f.tokenIndex(it.Span().End), ns, "")
			}
		}
	}
	walk(f.Items, nil)
}

// classBodies scans the tokens [from, to) for class definitions and
// collects the member functions of each body.
func (f *File) classBodies(text string, lines *diag.Lines, from, to int, ns []string, outer string) {
	var sig []int
	for i := from; i < to && i < len(f.Toks); i++ {
		if !f.Toks[i].Kind.IsTrivia() {
			sig = append(sig, i)
		}
	}
	tx := func(k int) string {
		if k >= 0 && k < len(sig) {
			return f.TokenText(f.Toks[sig[k]])
		}
		return ""
	}
	for k := 0; k < len(sig); k++ {
		switch tx(k) {
		case "struct", "class", "union":
		default:
			continue
		}
		if p := tx(k - 1); p == "<" || p == "," || p == "enum" || p == "friend" || p == "typename" {
			continue
		}
		if k+1 >= len(sig) || f.Toks[sig[k+1]].Kind != Ident {
			continue
		}
		name := tx(k + 1)
		// The body's `{`: after the name, template arguments and bases, with
		// no `;`, `(` or `=` before it (those make a declaration).
		open := -1
		angle := 0
		for j := k + 2; j < len(sig); j++ {
			v := tx(j)
			if v == "<" {
				angle++
			} else if v == ">" {
				angle--
			} else if v == ">>" {
				angle -= 2
			}
			if v == "{" {
				open = j
				break
			}
			if angle <= 0 && (v == ";" || v == "(" || v == "=" || v == ")") {
				break
			}
		}
		if open < 0 {
			continue
		}
		depth, close := 0, -1
		for j := open; j < len(sig); j++ {
			switch tx(j) {
			case "{", "(", "[":
				depth++
			case "}", ")", "]":
				depth--
			}
			if depth == 0 {
				close = j
				break
			}
		}
		if close < 0 {
			return
		}
		cls := name
		if outer != "" {
			cls = outer + "::" + name
		}
		f.parseMembers(text, lines, sig[open]+1, sig[close], ns, cls)
		k = close
	}
}

// accessWords are access specifiers, dropped (with their colon) before a
// class body is parsed with the top-level grammar.
var accessWords = map[string]bool{"public": true, "private": true, "protected": true}

func (f *File) parseMembers(text string, lines *diag.Lines, from, to int, ns []string, cls string) {
	ptoks := bridge(f.Name, text, f.Toks, from, to, f.TypeNames)
	kept := ptoks[:0:0]
	for i := 0; i < len(ptoks); i++ {
		t := ptoks[i]
		if t.Type == ttKeyword && accessWords[t.Value] && i+1 < len(ptoks) && is(&ptoks[i+1], ":") {
			i++
			continue
		}
		kept = append(kept, t)
	}
	top, err := topParser.ParseFromLexer(newPeekingLexer(kept))
	if err != nil {
		return
	}
	for _, it := range top.Items {
		switch it := it.(type) {
		case *FuncDef:
			fn := f.summarise(it, ns, false)
			fn.Class = cls
			if fn.Global || fn.Device {
				it.Body, it.BodyErr = f.parseBody(text, lines, fn.BodySpan)
			}
			f.Members = append(f.Members, fn)
		case *Opaque:
			f.classBodies(text, lines, f.tokenIndex(it.Span().Start), f.tokenIndex(it.Span().End), ns, cls)
		}
	}
}
