package transform

import (
	"fmt"
	"strings"

	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/parser"
)

// cloneProtos declares the persistent copy of a helper next to each of the
// helper's prototypes that come before its definition in the main file, so
// a kernel defined between the prototype and the definition can call the
// copy (the copy itself is emitted after the definition). The declaration
// is the prototype with the copy's name and leading parameters; default
// arguments stay with it.
func (t *transformer) cloneProtos() {
	f := t.a.File
	for name := range t.clones {
		first := -1 // the first definition of name in the main file
		for _, fn := range t.a.byName[name] {
			if t.a.Funcs[fn] != nil && t.a.Funcs[fn].File == f && (first < 0 || fn.Def.Span().Start < first) {
				first = fn.Def.Span().Start
			}
		}
		if first < 0 {
			continue
		}
		var visit func(items []parser.TopItem)
		visit = func(items []parser.TopItem) {
			for _, it := range items {
				switch it := it.(type) {
				case *parser.Namespace:
					visit(it.Items)
				case *parser.LinkageBlock:
					visit(it.Items)
				case *parser.Opaque:
					if it.Span().End > first {
						continue
					}
					if text, ok := t.cloneProto(it.Span(), name); ok {
						// The rest of the prototype's line keeps its number.
						line, _ := t.a.Lines.Position(it.Span().End)
						text += fmt.Sprintf("\n#line %d \"%s\"\n", line, t.lineFile)
						t.edits = append(t.edits, emit.Insert(it.Span().End, text, "clone prototype "+name))
					}
				}
			}
		}
		visit(f.Items)
	}
}

// cloneProto returns the copy's declaration for a prototype of a device
// function name in span s: `__device__ T name(params);` with nothing else.
func (t *transformer) cloneProto(s parser.Span, name string) (string, bool) {
	f := t.a.File
	toks := tokensOf(f, s)
	if len(toks) < 4 || toks[len(toks)-1].text != ";" {
		return "", false
	}
	at, device := -1, false
	depth := 0
	for i, tk := range toks {
		switch tk.text {
		case "(", "[", "<":
			depth++
		case ")", "]", ">":
			depth--
		case "{", "=":
			if depth == 0 {
				return "", false // a definition or an initialised variable
			}
		case "__device__":
			device = true
		case name:
			if depth == 0 && tk.Kind == parser.Ident && i+1 < len(toks) && toks[i+1].text == "(" &&
				(i == 0 || (toks[i-1].text != "." && toks[i-1].text != "->" && toks[i-1].text != "::")) && at < 0 {
				at = i
			}
		}
	}
	if at < 0 || !device {
		return "", false
	}
	lead := "const uint3 blockIdx, const dim3 gridDim"
	open := toks[at+1]
	var edits []emit.Edit
	edits = append(edits, emit.Replace(int(toks[at].Off), int(toks[at].End), name+"__slate", "clone name"))
	switch {
	case at+2 < len(toks) && toks[at+2].text == ")":
		edits = append(edits, emit.Insert(int(open.End), lead, "clone params"))
	case at+3 < len(toks) && toks[at+2].text == "void" && toks[at+3].text == ")":
		edits = append(edits, emit.Replace(int(toks[at+2].Off), int(toks[at+2].End), lead, "clone params"))
	default:
		edits = append(edits, emit.Insert(int(open.End), lead+", ", "clone params"))
	}
	text, err := emit.ApplyRange(f.Src, s.Start, s.End, edits)
	if err != nil {
		return "", false
	}
	return "\n" + text, true
}

// wrapExternC puts a kernel's body function and worker in an extern "C"
// block; the host launcher (static, declared early for launches before the
// kernel) and the #line that resumes the original numbering stay outside.
func wrapExternC(text string) string {
	i := strings.Index(text, "#ifndef __CUDACC_RTC__")
	if i < 0 {
		i = strings.LastIndex(text, "#line ")
	}
	if i < 0 {
		return "extern \"C\" {\n" + text + "\n}\n"
	}
	return "extern \"C\" {\n" + text[:i] + "}\n" + text[i:]
}
