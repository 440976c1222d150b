package parser

import (
	"strings"

	"github.com/slatec/slatec/diag"
)

// Func summarises a function definition for the later stages.
type Func struct {
	Def       *FuncDef
	Name      string
	Namespace []string // enclosing namespaces, outermost first
	Class     string   // the enclosing class of a member function ("A::B" when nested), "" otherwise
	// Scope is the qualifier written before the name of a definition made
	// outside its class or namespace (A in `int A::f() {...}`), "" otherwise.
	Scope    string
	ExternC  bool // extern "C" on the definition or an enclosing block
	Global   bool // __global__
	Device   bool // __device__
	Host     bool // __host__
	Static   bool
	Inline   bool // inline, __inline__, __forceinline__
	Template []*TemplateParam
	// TemplateSpan is the span of all template headers, empty if none.
	TemplateSpan Span
	Params       []*ParamInfo
	LaunchBounds *LaunchBounds
	MaxNReg      *MaxNReg
	ClusterDims  *ClusterDims
	HeadSpan     Span
	ParamsSpan   Span // the parenthesised parameter list
	NameSpan     Span
	BodySpan     Span // the braces and what is between them
}

// ParamInfo is one parameter split into its type and name.
type ParamInfo struct {
	Span     Span
	Name     string // "" for unnamed parameters
	NameSpan Span
	// Type is the parameter's declaration with the name (and any default
	// argument) removed, e.g. "const float* __restrict__".
	Type     string
	Default  string // default argument text, without "="
	Variadic bool   // "..."
}

// QualifiedName is the function name with its namespaces, as C++ spells it.
func (fn *Func) QualifiedName() string {
	if len(fn.Namespace) == 0 {
		return fn.Name
	}
	return strings.Join(fn.Namespace, "::") + "::" + fn.Name
}

// IsTemplate reports whether the function is a template.
func (fn *Func) IsTemplate() bool { return len(fn.Template) > 0 }

// collectFuncs walks the items, summarises each function definition and
// parses the bodies of device code.
func (f *File) collectFuncs(text string, lines *diag.Lines, deferBodies bool) {
	var walk func(items []TopItem, ns []string, externC bool)
	walk = func(items []TopItem, ns []string, externC bool) {
		for _, it := range items {
			switch it := it.(type) {
			case *Namespace:
				name := strings.Join(it.Name, "::")
				if name == "" {
					name = "(anonymous)"
				}
				walk(it.Items, append(append([]string(nil), ns...), name), externC)
			case *LinkageBlock:
				walk(it.Items, ns, externC || it.Lang == `"C"`)
			case *FuncDef:
				fn := f.summarise(it, ns, externC)
				f.Funcs = append(f.Funcs, fn)
				switch {
				case (fn.Global || fn.Device) && deferBodies:
					it.Deferred = true
				case fn.Global || fn.Device:
					it.Body, it.BodyErr = f.parseBody(text, lines, fn.BodySpan)
				}
			}
		}
	}
	walk(f.Items, nil, false)
}

func (f *File) summarise(def *FuncDef, ns []string, externC bool) *Func {
	h := def.Head
	fn := &Func{Def: def, Namespace: ns, ExternC: externC, HeadSpan: h.Span(),
		ParamsSpan: h.Params.Span(), NameSpan: h.Name.Span(), BodySpan: def.BodyRaw.Span()}
	if h.Name.Operator != nil {
		fn.Name = strings.Join(h.Name.Operator.Text, "")
		fn.Name = "operator" + fn.Name
	} else {
		fn.Name = h.Name.Name
	}
	fn.Scope = strings.Join(h.Name.Scope, "::")
	if fn.Scope == "" {
		fn.Scope = f.scopeBefore(fn.NameSpan.Start) // A::operator[]: the head's words took A::
	}
	for _, sp := range h.Specs {
		switch sp := sp.(type) {
		case *Word:
			switch sp.Text {
			case "__global__":
				fn.Global = true
			case "__device__":
				fn.Device = true
			case "__host__":
				fn.Host = true
			case "static":
				fn.Static = true
			case "inline", "__inline__", "__forceinline__", "__forceinline":
				fn.Inline = true
			}
		case *ExternLinkage:
			if sp.Lang == `"C"` {
				fn.ExternC = true
			}
		case *LaunchBounds:
			fn.LaunchBounds = sp
		case *MaxNReg:
			fn.MaxNReg = sp
		case *ClusterDims:
			fn.ClusterDims = sp
		}
	}
	if len(h.Templates) > 0 {
		fn.TemplateSpan = Span{h.Templates[0].Span().Start, h.Templates[len(h.Templates)-1].Span().End}
		// The innermost header (the last) declares the function's own parameters.
		fn.Template = f.templateParams(h.Templates[len(h.Templates)-1].Args.Span())
	}
	for _, p := range h.Params.Params {
		pi := f.paramInfo(p.Span())
		if pi.Type == "void" && pi.Name == "" && len(h.Params.Params) == 1 {
			break // f(void)
		}
		fn.Params = append(fn.Params, pi)
	}
	return fn
}

// splitTopLevel splits significant tokens at top-level commas, tracking
// (), [], {} and the angle brackets of template arguments.
func (f *File) splitTopLevel(toks []Token) [][]Token {
	var out [][]Token
	depth, angle, start := 0, 0, 0
	for i, t := range toks {
		v := f.TokenText(t)
		switch v {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case "<":
			if depth == 0 && i > 0 && (toks[i-1].Kind == Ident || toks[i-1].Kind == Keyword) {
				angle++
			}
		case ">":
			if depth == 0 && angle > 0 {
				angle--
			}
		case ">>":
			if depth == 0 && angle > 0 {
				angle -= 2
			}
		case ",":
			if depth == 0 && angle <= 0 {
				out = append(out, toks[start:i])
				start = i + 1
			}
		}
	}
	return append(out, toks[start:])
}

// templateParams splits a template header's `<...>` into parameters.
func (f *File) templateParams(angles Span) []*TemplateParam {
	toks := f.SignificantTokens(angles)
	if len(toks) < 2 {
		return nil
	}
	toks = toks[1 : len(toks)-1] // strip < >
	if len(toks) == 0 {
		return nil
	}
	var out []*TemplateParam
	for _, part := range f.splitTopLevel(toks) {
		if len(part) == 0 {
			continue
		}
		tp := &TemplateParam{Text: f.Text(Span{int(part[0].Off), int(part[len(part)-1].End)})}
		// Drop a default argument.
		for i, t := range part {
			if f.TokenText(t) == "=" {
				part = part[:i]
				break
			}
		}
		first := f.TokenText(part[0])
		tp.IsType = first == "typename" || first == "class" || first == "template"
		for _, t := range part {
			if f.TokenText(t) == "..." {
				tp.Pack = true
			}
		}
		if last := part[len(part)-1]; last.Kind == Ident && len(part) > 1 {
			tp.Name = f.TokenText(last)
		}
		out = append(out, tp)
	}
	return out
}

// paramInfo splits one parameter into type, name and default argument.
func (f *File) paramInfo(s Span) *ParamInfo {
	pi := &ParamInfo{Span: s}
	toks := f.SignificantTokens(s)
	if len(toks) == 1 && f.TokenText(toks[0]) == "..." {
		pi.Variadic, pi.Type = true, "..."
		return pi
	}
	decl := toks
	depth := 0
	for i, t := range toks {
		switch f.TokenText(t) {
		case "(", "[", "{", "<":
			depth++
		case ")", "]", "}", ">":
			depth--
		case "=":
			if depth == 0 {
				decl = toks[:i]
				pi.Default = strings.TrimSpace(f.Text(Span{int(toks[i].End), s.End}))
			}
		}
		if len(decl) != len(toks) {
			break
		}
	}
	if len(decl) == 0 {
		return pi
	}
	declEnd := int(decl[len(decl)-1].End)
	// The name: the identifier before array brackets, inside `(*name)`, or
	// the last token, when something before it can be a type.
	nameIdx := -1
	for i := 0; i+2 < len(decl); i++ {
		if f.TokenText(decl[i]) == "(" && (f.TokenText(decl[i+1]) == "*" || f.TokenText(decl[i+1]) == "&") && decl[i+2].Kind == Ident {
			nameIdx = i + 2
			break
		}
	}
	if nameIdx < 0 {
		end := len(decl)
		for end > 0 && f.TokenText(decl[end-1]) == "]" {
			// skip back over [ ... ]
			d := 0
			for k := end - 1; k >= 0; k-- {
				switch f.TokenText(decl[k]) {
				case "]":
					d++
				case "[":
					d--
				}
				if d == 0 {
					end = k
					break
				}
			}
		}
		if end >= 2 && decl[end-1].Kind == Ident {
			prev := f.TokenText(decl[end-2])
			if prev != "::" && prev != "." {
				nameIdx = end - 1
			}
		}
	}
	if nameIdx >= 0 {
		nt := decl[nameIdx]
		pi.Name = f.TokenText(nt)
		pi.NameSpan = Span{int(nt.Off), int(nt.End)}
		pi.Type = normalizeSpace(f.Text(Span{s.Start, int(nt.Off)}) + " " + f.Text(Span{int(nt.End), declEnd}))
	} else {
		pi.Type = normalizeSpace(f.Text(Span{s.Start, declEnd}))
	}
	return pi
}

// normalizeSpace collapses runs of whitespace and comments' absence into single
// spaces and tidies spaces before punctuation: "const float *" -> "const float*".
func normalizeSpace(s string) string {
	toks := Lex([]byte(s))
	var b strings.Builder
	prevWord := false
	for _, t := range toks {
		if t.Kind.IsTrivia() {
			continue
		}
		v := s[t.Off:t.End]
		word := t.Kind == Ident || t.Kind == Keyword || t.Kind == Number
		if b.Len() > 0 && word && prevWord {
			b.WriteByte(' ')
		} else if b.Len() > 0 && word && !prevWord {
			last := b.String()[b.Len()-1]
			if last == '*' || last == '&' || last == ',' || last == '>' {
				b.WriteByte(' ')
			}
		}
		b.WriteString(v)
		prevWord = word
	}
	return b.String()
}

// scopeBefore returns the qualifier written right before the name starting
// at off: "A" for `A::operator[]`, "" when none.
func (f *File) scopeBefore(off int) string {
	i := f.tokenIndex(off) - 1
	prev := func() int {
		for i >= 0 && f.Toks[i].Kind.IsTrivia() {
			i--
		}
		return i
	}
	var segs []string
	for {
		if prev() < 0 || f.TokenText(f.Toks[i]) != "::" {
			break
		}
		i--
		if prev() < 0 || f.Toks[i].Kind != Ident {
			break
		}
		segs = append([]string{f.TokenText(f.Toks[i])}, segs...)
		i--
	}
	return strings.Join(segs, "::")
}
