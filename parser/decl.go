package parser

// Declaration specifiers and declarators are parsed by hand for the same
// reason as expressions: they are a large share of every body, and
// participle's repetition groups cost a branch allocation per iteration.
//
//	DeclSpecs      = DeclQual* ( TypeRef | BasicType+ ) DeclWord*
//	TypeRef        = ( "struct" | "class" | "union" | "enum" | "typename" )? "::"? NameSeg ( "::" "template"? NameSeg )*
//	NameSeg        = ( Ident | TypeName ) TemplateArgList?
//	InitDeclarator = Declarator Initializer?
//	Declarator     = PtrOp* ( Ident | "(" Declarator ")" ParamList? ) ArraySuffix*
//	PtrOp          = ( "*" | "&" | "&&" ) ( "const" | "volatile" | "__restrict__" )*
//	Initializer    = "=" InitValue | BraceInit | "(" ( AssignExpr ( "," AssignExpr )* )? ")"

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

var qualWords = map[string]bool{
	"const": true, "volatile": true, "static": true, "extern": true, "register": true,
	"constexpr": true, "inline": true, "thread_local": true, "mutable": true,
	"__shared__": true, "__constant__": true, "__device__": true, "__managed__": true,
	"__restrict__": true, "__restrict": true, "__forceinline__": true, "__grid_constant__": true,
}

var basicWords = map[string]bool{
	"void": true, "bool": true, "char": true, "short": true, "int": true, "long": true,
	"float": true, "double": true, "signed": true, "unsigned": true, "auto": true,
	"wchar_t": true, "char8_t": true, "char16_t": true, "char32_t": true, "_Bool": true,
}

// parseAlign parses __align__(n) / alignas(n) into an Attribute.
func parseAlign(lex *lexer.PeekingLexer) (*Attribute, error) {
	first := lex.Next()
	a := &Attribute{Kind: first.Value, Args: &ParenTokens{}}
	if err := a.Args.Parse(lex); err != nil {
		return nil, unexpected(lex.Peek(), `"(" after `+first.Value)
	}
	finishG(&a.gnode, first, lex)
	return a, nil
}

func (d *DeclSpecs) Parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	// Qualifiers before the type.
	for {
		t := lex.Peek()
		if t.Type != ttKeyword {
			break
		}
		q := &DeclQual{}
		switch {
		case qualWords[t.Value]:
			q.Word = lex.Next().Value
		case t.Value == "__align__" || t.Value == "alignas":
			a, err := parseAlign(lex)
			if err != nil {
				return err
			}
			q.Align = a
		default:
			goto typ
		}
		finish(&q.node, t, lex)
		d.Pre = append(d.Pre, q)
	}
typ:
	t := lex.Peek()
	switch {
	case t.Type == ttKeyword && basicWords[t.Value]:
		for t := lex.Peek(); t.Type == ttKeyword && basicWords[t.Value]; t = lex.Peek() {
			d.Basic = append(d.Basic, lex.Next().Value)
		}
	case isName(t) || is(t, "::") || (t.Type == ttKeyword && (t.Value == "struct" || t.Value == "class" ||
		t.Value == "union" || t.Value == "enum" || t.Value == "typename")):
		d.Named = &TypeRef{}
		if err := d.Named.parse(lex); err != nil {
			return err
		}
	default:
		if len(d.Pre) == 0 {
			return participle.NextMatch
		}
		return unexpected(t, "a type")
	}
	// Qualifiers and basic type words after the type: `float const`, `unsigned const int`.
	for {
		t := lex.Peek()
		if t.Type != ttKeyword {
			break
		}
		w := &DeclWord{}
		switch {
		case qualWords[t.Value]:
			w.Word = lex.Next().Value
		case basicWords[t.Value]:
			w.Basic = lex.Next().Value
		case t.Value == "__align__" || t.Value == "alignas":
			a, err := parseAlign(lex)
			if err != nil {
				return err
			}
			w.Align = a
		default:
			finish(&d.node, first, lex)
			return nil
		}
		finish(&w.node, t, lex)
		d.Post = append(d.Post, w)
	}
	finish(&d.node, first, lex)
	return nil
}

func (r *TypeRef) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	if t := lex.Peek(); t.Type == ttKeyword {
		r.Tag = lex.Next().Value
	}
	if is(lex.Peek(), "::") {
		lex.Next()
		r.Global = true
	}
	for {
		t := lex.Peek()
		if !isName(t) {
			return unexpected(t, "a type name")
		}
		seg := &NameSeg{Name: lex.Next().Value}
		if is(lex.Peek(), "<") {
			args := &TemplateArgList{}
			if args.Parse(lex) == nil {
				seg.Args = args
			}
		}
		finish(&seg.node, t, lex)
		r.Segs = append(r.Segs, seg)
		if !is(lex.Peek(), "::") {
			break
		}
		lex.Next()
		if isKw(lex.Peek(), "template") {
			lex.Next()
		}
	}
	finish(&r.node, first, lex)
	return nil
}

func (d *InitDeclarator) Parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	if !(isName(first) || is(first, "*") || is(first, "&") || is(first, "&&") || is(first, "(") || is(first, "[")) {
		return participle.NextMatch
	}
	d.Decl = &Declarator{}
	if err := d.Decl.parse(lex); err != nil {
		return err
	}
	t := lex.Peek()
	switch {
	case is(t, "="):
		lex.Next()
		d.Init = &Initializer{Assign: &InitValue{}}
		if err := d.Init.Assign.parse(lex); err != nil {
			return err
		}
	case is(t, "{"):
		d.Init = &Initializer{Brace: &BraceInit{}}
		if err := d.Init.Brace.parse(lex); err != nil {
			return err
		}
	case is(t, "("):
		lex.Next()
		d.Init = &Initializer{}
		for !is(lex.Peek(), ")") {
			a := &AssignExpr{}
			if err := a.Parse(lex); err != nil {
				if err == participle.NextMatch {
					return unexpected(lex.Peek(), "a constructor argument")
				}
				return err
			}
			d.Init.Ctor = append(d.Init.Ctor, a)
			if !is(lex.Peek(), ",") {
				break
			}
			lex.Next()
		}
		if _, err := expect(lex, ")"); err != nil {
			return err
		}
	}
	if d.Init != nil {
		finish(&d.Init.node, t, lex)
	}
	finish(&d.node, first, lex)
	return nil
}

func (d *Declarator) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	for t := lex.Peek(); is(t, "*") || is(t, "&") || is(t, "&&"); t = lex.Peek() {
		p := &PtrOp{Op: lex.Next().Value}
		for q := lex.Peek(); q.Type == ttKeyword && (q.Value == "const" || q.Value == "volatile" || q.Value == "__restrict__" || q.Value == "__restrict"); q = lex.Peek() {
			p.Quals = append(p.Quals, lex.Next().Value)
		}
		finish(&p.node, t, lex)
		d.Ptrs = append(d.Ptrs, p)
	}
	t := lex.Peek()
	switch {
	case isName(t):
		// A variable may reuse a type's name in its scope (sqrt_t, T).
		d.Name = lex.Next().Value
	case is(t, "[") && len(d.Ptrs) == 0:
		// A structured binding: auto [a, b] = pair;
		lex.Next()
		for {
			if !isName(lex.Peek()) {
				return unexpected(lex.Peek(), "a binding name")
			}
			d.Bindings = append(d.Bindings, lex.Next().Value)
			if !is(lex.Peek(), ",") {
				break
			}
			lex.Next()
		}
		if _, err := expect(lex, "]"); err != nil {
			return err
		}
	case is(t, "("):
		lex.Next()
		d.Nested = &Declarator{}
		if err := d.Nested.parse(lex); err != nil {
			return err
		}
		if _, err := expect(lex, ")"); err != nil {
			return err
		}
		if is(lex.Peek(), "(") {
			pl, err := parseParamList(lex)
			if err != nil {
				return err
			}
			d.Fn = pl
		}
	default:
		return unexpected(t, "a declarator name")
	}
	for t := lex.Peek(); is(t, "["); t = lex.Peek() {
		lex.Next()
		a := &ArraySuffix{}
		if !is(lex.Peek(), "]") {
			a.Size = &Expr{}
			if err := a.Size.Parse(lex); err != nil {
				if err == participle.NextMatch {
					return unexpected(lex.Peek(), "an array size")
				}
				return err
			}
		}
		if _, err := expect(lex, "]"); err != nil {
			return err
		}
		finish(&a.node, t, lex)
		d.Arrays = append(d.Arrays, a)
	}
	finish(&d.node, first, lex)
	return nil
}

// parseParamList parses a parenthesised parameter list of a declarator.
func parseParamList(lex *lexer.PeekingLexer) (*ParamList, error) {
	first := lex.Next() // (
	pl := &ParamList{}
	for !is(lex.Peek(), ")") {
		p := &Param{}
		if err := p.Parse(lex); err != nil {
			return nil, unexpected(lex.Peek(), "a parameter")
		}
		pl.Params = append(pl.Params, p)
		if !is(lex.Peek(), ",") {
			break
		}
		lex.Next()
	}
	if _, err := expect(lex, ")"); err != nil {
		return nil, err
	}
	finishG(&pl.gnode, first, lex)
	return pl, nil
}
