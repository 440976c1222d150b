package transform

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/parser"
)

// cloneProtos declares the persistent copy of a helper next to each of the
// helper's prototypes that come before its definition in the main file:
// at namespace scope, so a kernel defined between the prototype and the
// definition can call the copy (emitted after the definition); and inside
// a class or namespace whose member is defined outside it (`int A::f()
// {...}`), where the copy's qualified definition needs a declaration. The
// declaration is the prototype with the copy's name and leading
// parameters; default arguments stay with it.
func (t *transformer) cloneProtos() {
	f := t.a.File
	var sig []tok
	for _, tk := range tokensOf(f, parser.Span{Start: 0, End: len(f.Src)}) {
		sig = append(sig, tk)
	}
	names := make([]string, 0, len(t.clones))
	for n := range t.clones {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		first := -1 // the first definition of name in the main file
		for _, fn := range t.a.byName[name] {
			if fi := t.a.Funcs[fn]; fi != nil && fi.File == f && fn.Class == "" && (first < 0 || fn.Def.Span().Start < first) {
				first = fn.Def.Span().Start
			}
		}
		if first < 0 {
			continue
		}
		declared := false
		for i, tk := range sig {
			if int(tk.Off) >= first {
				break
			}
			if tk.text != name || tk.Kind != parser.Ident || i+1 >= len(sig) || sig[i+1].text != "(" {
				continue
			}
			if i > 0 && (sig[i-1].text == "." || sig[i-1].text == "->" || sig[i-1].text == "::") {
				continue
			}
			s, ok := declSpan(sig, i)
			if !ok {
				continue
			}
			if text, ok := t.cloneProto(s, name); ok {
				// The rest of the prototype's line keeps its number.
				line, _ := t.a.Lines.Position(s.End)
				text += fmt.Sprintf("\n#line %d \"%s\"\n", line, t.lineFile)
				t.edits = append(t.edits, emit.Insert(s.End, text, "clone prototype "+name))
				declared = true
			}
		}
		if !declared {
			t.protoBeforeCallers(name, first)
		}
	}
}

// protoBeforeCallers declares the copy of a helper whose prototype slatec
// did not find in the main file (it is in a header) before the first
// function of the main file that calls the helper ahead of its definition,
// from the definition's head, when both are at the same namespace scope.
func (t *transformer) protoBeforeCallers(name string, first int) {
	f := t.a.File
	var def *parser.Func
	for _, fn := range t.a.byName[name] {
		if fi := t.a.Funcs[fn]; fi != nil && fi.File == f && fn.Def.Span().Start == first {
			def = fn
		}
	}
	if def == nil || def.Class != "" || def.Scope != "" {
		return
	}
	var caller *parser.Func
	for _, fn := range t.a.funcsOf(f) {
		fi := t.a.Funcs[fn]
		if fi == nil || fn.Class != "" || fn.Def.Span().Start >= first || !sameNamespace(fn, def) {
			continue
		}
		for _, c := range fi.Calls {
			if c.Name == name && c.Macro == "" {
				if caller == nil || fn.Def.Span().Start < caller.Def.Span().Start {
					caller = fn
				}
			}
		}
	}
	if caller == nil {
		return
	}
	lead := "const uint3 blockIdx, const dim3 gridDim"
	var edits []emit.Edit
	edits = append(edits, emit.Replace(def.NameSpan.Start, def.NameSpan.End, name+"__slate", "clone name"))
	ps := def.ParamsSpan
	if len(def.Params) == 0 {
		edits = append(edits, emit.Replace(ps.Start, ps.End, "("+lead+")", "clone params"))
	} else {
		edits = append(edits, emit.Insert(ps.Start+1, lead+", ", "clone params"))
	}
	head, err := emit.ApplyRange(f.Src, def.Def.Span().Start, def.BodySpan.Start, edits)
	if err != nil {
		return
	}
	at := caller.Def.Span().Start
	line, _ := t.a.Lines.Position(at)
	text := strings.TrimRight(head, " \t\r\n") + ";\n" + fmt.Sprintf("#line %d \"%s\"\n", line, t.lineFile)
	t.edits = append(t.edits, emit.Insert(at, text, "clone prototype "+name))
}

func sameNamespace(a, b *parser.Func) bool {
	if len(a.Namespace) != len(b.Namespace) {
		return false
	}
	for i := range a.Namespace {
		if a.Namespace[i] != b.Namespace[i] {
			return false
		}
	}
	return true
}

// declSpan returns the span of the declaration around the name at
// sig[i]: from after the previous `;`, `{`, `}` or access specifier's `:`
// to its `;`, when it is a declaration of one function (nothing nested).
func declSpan(sig []tok, i int) (parser.Span, bool) {
	b := i
	for b > 0 {
		p := sig[b-1].text
		if p == ";" || p == "{" || p == "}" || (p == ":" && b >= 2 && (sig[b-2].text == "public" || sig[b-2].text == "private" || sig[b-2].text == "protected")) {
			break
		}
		b--
	}
	// Only declaration words before the name: a macro invocation in front
	// (FOO(x) without a semicolon) would be copied with the prototype.
	for j := b; j < i; j++ {
		if sig[j].text == "(" {
			if j == b || !(sig[j-1].text == "__launch_bounds__" || sig[j-1].text == "__attribute__" ||
				sig[j-1].text == "alignas" || sig[j-1].text == "__align__" || sig[j-1].text == "__declspec") {
				return parser.Span{}, false
			}
		}
	}
	depth := 0
	for e := i + 1; e < len(sig); e++ {
		switch sig[e].text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
			if depth < 0 {
				return parser.Span{}, false
			}
		case "{", "}":
			return parser.Span{}, false
		case ";":
			if depth == 0 {
				return parser.Span{Start: int(sig[b].Off), End: int(sig[e].End)}, true
			}
		}
	}
	return parser.Span{}, false
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

// cloneName is the name of a helper's copy as its definition spells it:
// f -> f__slate, and A::f -> A::f__slate for a member defined outside its
// class.
func cloneName(f *parser.File, fn *parser.Func, suffix string) string {
	if fn.Scope == "" {
		return fn.Name + suffix
	}
	text := f.Text(fn.NameSpan)
	i := strings.LastIndex(text, fn.Name)
	if i < 0 || i+len(fn.Name) != len(text) {
		return fn.Name + suffix
	}
	return text + suffix
}
