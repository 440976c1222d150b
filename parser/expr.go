package parser

// Expressions are parsed by hand, by precedence climbing inside participle
// Parseable implementations (the technique of participle's own
// precedenceclimbing example). A grammar with one struct per precedence
// level costs participle about ten branch allocations per operand; this is
// some forty times faster and builds the same node types.
//
// The grammar, in participle's notation:
//
//	Expr        = AssignExpr ( "," AssignExpr )*
//	AssignExpr  = CondExpr ( AssignOp InitValue )?
//	CondExpr    = BinaryExpr ( "?" Expr ":" AssignExpr )?
//	BinaryExpr  = CastExpr ( BinOp CastExpr )*            (flat; see Tree)
//	CastExpr    = CastType CastExpr | UnaryExpr
//	UnaryExpr   = PrefixOp CastExpr | SizeofExpr | NewExpr | DeleteExpr | PostfixExpr
//	DeleteExpr  = "::"? "delete" ( "[" "]" )? CastExpr
//	SizeofExpr  = ( "sizeof" | "alignof" ) "..."? ( ParenTokens | UnaryExpr )
//	PostfixExpr = Primary ( "[" Expr "]" | CallArgs | MemberAccess | "++" | "--" )*
//	CallArgs    = "(" ( InitValue ( "," InitValue )* )? ")"
//	Primary     = Number | String+ | Char | "true" | "false" | "nullptr" | "this"
//	            | "(" Expr ")" | CppCast | Lambda | BraceInit | QualName BraceInit?
//	            | BasicType BraceInit?
//	InitValue   = BraceInit | AssignExpr
//	BraceInit   = "{" ( InitItem ( "," InitItem )* ","? )? "}"
//	InitItem    = ( "." Ident "=" )? InitValue

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// exprError is a parse error at a token.
func exprError(t *lexer.Token, format string, a ...any) error {
	return participle.Errorf(t.Pos, format, a...)
}

func unexpected(t *lexer.Token, what string) error {
	if t.Type == ttEOF {
		return exprError(t, "unexpected end of input, expected %s", what)
	}
	return exprError(t, "unexpected %q, expected %s", t.Value, what)
}

func expect(lex *lexer.PeekingLexer, v string) (*lexer.Token, error) {
	t := lex.Peek()
	if t.Type != ttPunct || t.Value != v {
		return nil, unexpected(t, `"`+v+`"`)
	}
	return lex.Next(), nil
}

// finish sets n's span to run from first to the current position.
func finish(n *node, first *lexer.Token, lex *lexer.PeekingLexer) {
	n.setSpanOf(first, lex.Peek())
}

// finishG is finish for a grammar struct built by hand.
func finishG(n *gnode, first *lexer.Token, lex *lexer.PeekingLexer) {
	n.Pos = first.Pos
	n.EndPos = lex.Peek().Pos
}

// canStartExpr reports whether t can begin an expression; a Parseable must
// return NextMatch (consuming nothing) where it cannot.
func canStartExpr(t *lexer.Token) bool {
	switch t.Type {
	case ttIdent, ttTypeName, ttNumber, ttString, ttChar:
		return true
	case ttKeyword:
		switch t.Value {
		case "true", "false", "nullptr", "this", "sizeof", "alignof", "_Alignof", "new", "delete", "operator",
			"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast",
			"int", "float", "double", "unsigned", "char", "bool", "short", "long", "signed", "void":
			return true
		}
	case ttPunct:
		switch t.Value {
		case "(", "[", "{", "::", "++", "--", "+", "-", "!", "~", "*", "&", "...":
			return true
		}
	}
	return false
}

// Parse parses a comma expression.
func (e *Expr) Parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	if !canStartExpr(first) || is(first, "{") {
		return participle.NextMatch
	}
	for {
		a := &AssignExpr{}
		if err := a.parse(lex); err != nil {
			return err
		}
		e.List = append(e.List, a)
		if !is(lex.Peek(), ",") {
			break
		}
		lex.Next()
	}
	finish(&e.node, first, lex)
	return nil
}

var assignOps = map[string]bool{"=": true, "+=": true, "-=": true, "*=": true, "/=": true,
	"%=": true, "<<=": true, ">>=": true, "&=": true, "^=": true, "|=": true}

// Parse parses an assignment expression.
func (a *AssignExpr) Parse(lex *lexer.PeekingLexer) error {
	if t := lex.Peek(); !canStartExpr(t) || is(t, "{") {
		return participle.NextMatch
	}
	return a.parse(lex)
}

func (a *AssignExpr) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	a.Left = &CondExpr{}
	if err := a.Left.parse(lex); err != nil {
		return err
	}
	if t := lex.Peek(); t.Type == ttPunct && assignOps[t.Value] {
		a.Op = lex.Next().Value
		a.Right = &InitValue{}
		if err := a.Right.parse(lex); err != nil {
			return err
		}
	}
	finish(&a.node, first, lex)
	return nil
}

// Parse parses a conditional expression.
func (c *CondExpr) Parse(lex *lexer.PeekingLexer) error {
	if t := lex.Peek(); !canStartExpr(t) || is(t, "{") {
		return participle.NextMatch
	}
	return c.parse(lex)
}

func (c *CondExpr) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	c.Bin = &BinaryExpr{}
	if err := c.Bin.parse(lex); err != nil {
		return err
	}
	if is(lex.Peek(), "?") {
		lex.Next()
		c.Then = &Expr{}
		if err := c.Then.Parse(lex); err != nil {
			if err == participle.NextMatch {
				return unexpected(lex.Peek(), "an expression")
			}
			return err
		}
		if _, err := expect(lex, ":"); err != nil {
			return err
		}
		c.Else = &AssignExpr{}
		if err := c.Else.parse(lex); err != nil {
			return err
		}
	}
	finish(&c.node, first, lex)
	return nil
}

// binaryPrec gives the precedence of each binary operator (higher binds
// tighter), for Tree.
var binaryPrec = map[string]int{
	".*": 13, "->*": 13,
	"*": 12, "/": 12, "%": 12,
	"+": 11, "-": 11,
	"<<": 10, ">>": 10,
	"<=>": 9,
	"<":   8, ">": 8, "<=": 8, ">=": 8,
	"==": 7, "!=": 7,
	"&": 6, "^": 5, "|": 4, "&&": 3, "||": 2,
}

func (b *BinaryExpr) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	b.First = &CastExpr{}
	if err := b.First.parse(lex); err != nil {
		return err
	}
	for {
		t := lex.Peek()
		if t.Type != ttPunct || binaryPrec[t.Value] == 0 {
			break
		}
		opTok := lex.Next()
		rhs := &BinRHS{Op: opTok.Value, X: &CastExpr{}}
		if err := rhs.X.parse(lex); err != nil {
			return err
		}
		finish(&rhs.node, opTok, lex)
		b.Rest = append(b.Rest, rhs)
	}
	finish(&b.node, first, lex)
	return nil
}

func (c *CastExpr) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	if is(first, "(") {
		ct := &CastType{}
		if err := ct.Parse(lex); err == nil {
			c.Type = ct
			c.Cast = &CastExpr{}
			if err := c.Cast.parse(lex); err != nil {
				return err
			}
			finish(&c.node, first, lex)
			return nil
		}
	}
	c.Unary = &UnaryExpr{}
	if err := c.Unary.parse(lex); err != nil {
		return err
	}
	finish(&c.node, first, lex)
	return nil
}

func (u *UnaryExpr) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	switch {
	case first.Type == ttPunct && (first.Value == "++" || first.Value == "--" || first.Value == "+" ||
		first.Value == "-" || first.Value == "!" || first.Value == "~" || first.Value == "*" || first.Value == "&"):
		u.Op = lex.Next().Value
		u.Operand = &CastExpr{}
		if err := u.Operand.parse(lex); err != nil {
			return err
		}
	case first.Type == ttKeyword && (first.Value == "sizeof" || first.Value == "alignof" || first.Value == "_Alignof"):
		u.Sizeof = &SizeofExpr{}
		if err := u.Sizeof.parse(lex); err != nil {
			return err
		}
	case isKw(first, "new") || (is(first, "::") && isKw(peekAt(lex, 1), "new")):
		u.New = &NewExpr{}
		if err := u.New.parse(lex); err != nil {
			return err
		}
	case isKw(first, "delete") || (is(first, "::") && isKw(peekAt(lex, 1), "delete")):
		u.Delete = &DeleteExpr{}
		if err := u.Delete.parse(lex); err != nil {
			return err
		}
	default:
		u.Postfix = &PostfixExpr{}
		if err := u.Postfix.parse(lex); err != nil {
			return err
		}
	}
	finish(&u.node, first, lex)
	return nil
}

// peekAt returns the token n ahead (0 = next) without consuming.
func peekAt(lex *lexer.PeekingLexer, n int) *lexer.Token {
	c := newCursor(lex)
	return c.peekN(n)
}

// parse parses a new-expression:
//
//	NewExpr = "::"? "new" CallArgs? ( ParenTokens | DeclSpecs PtrOp* ) ( "[" Expr "]" )* ( CallArgs | BraceInit )?
//
// The first parenthesised group after `new` is a placement when a type
// follows it (`new (buf) T`), else the parenthesised type (`new (T)`).
func (n *NewExpr) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	if is(first, "::") {
		lex.Next()
		n.Global = true
	}
	lex.Next() // new
	if is(lex.Peek(), "(") {
		c := newCursor(lex)
		c.skipGroup()
		after := c.peek()
		c.rewind()
		if isName(after) || is(after, "::") || (after.Type == ttKeyword && (basicWords[after.Value] || qualWords[after.Value] || castTypeWords[after.Value])) {
			n.Placement = &CallArgs{}
			if err := n.Placement.parse(lex); err != nil {
				return err
			}
		}
	}
	if is(lex.Peek(), "(") {
		n.TypeParen = &ParenTokens{}
		if err := n.TypeParen.Parse(lex); err != nil {
			return unexpected(lex.Peek(), "a balanced ( ) type")
		}
	} else {
		n.Type = &DeclSpecs{}
		if err := n.Type.Parse(lex); err != nil {
			if err == participle.NextMatch {
				return unexpected(lex.Peek(), "a type after new")
			}
			return err
		}
		for t := lex.Peek(); is(t, "*") || is(t, "&") || is(t, "&&"); t = lex.Peek() {
			p := &PtrOp{Op: lex.Next().Value}
			for q := lex.Peek(); q.Type == ttKeyword && (q.Value == "const" || q.Value == "volatile" || q.Value == "__restrict__" || q.Value == "__restrict"); q = lex.Peek() {
				p.Quals = append(p.Quals, lex.Next().Value)
			}
			finish(&p.node, t, lex)
			n.Ptrs = append(n.Ptrs, p)
		}
		for t := lex.Peek(); is(t, "["); t = lex.Peek() {
			lex.Next()
			a := &ArraySuffix{Size: &Expr{}}
			if err := a.Size.Parse(lex); err != nil {
				if err == participle.NextMatch {
					return unexpected(lex.Peek(), "an array size")
				}
				return err
			}
			if _, err := expect(lex, "]"); err != nil {
				return err
			}
			finish(&a.node, t, lex)
			n.Arrays = append(n.Arrays, a)
		}
	}
	switch {
	case is(lex.Peek(), "("):
		n.Init = &CallArgs{}
		if err := n.Init.parse(lex); err != nil {
			return err
		}
	case is(lex.Peek(), "{"):
		n.Brace = &BraceInit{}
		if err := n.Brace.parse(lex); err != nil {
			return err
		}
	}
	finish(&n.node, first, lex)
	return nil
}

// parse parses `::`? `delete` `[]`? operand.
func (d *DeleteExpr) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	if is(first, "::") {
		lex.Next()
		d.Global = true
	}
	lex.Next() // delete
	if is(lex.Peek(), "[") {
		lex.Next()
		if _, err := expect(lex, "]"); err != nil {
			return err
		}
		d.Array = true
	}
	d.Operand = &CastExpr{}
	if err := d.Operand.parse(lex); err != nil {
		return err
	}
	finish(&d.node, first, lex)
	return nil
}

func (s *SizeofExpr) parse(lex *lexer.PeekingLexer) error {
	first := lex.Next()
	s.Op = first.Value
	if is(lex.Peek(), "...") {
		lex.Next()
		s.Pack = true
	}
	if is(lex.Peek(), "(") {
		s.Paren = &ParenTokens{}
		if err := s.Paren.Parse(lex); err != nil {
			return unexpected(lex.Peek(), "a balanced ( )")
		}
	} else {
		s.Operand = &UnaryExpr{}
		if err := s.Operand.parse(lex); err != nil {
			return err
		}
	}
	finish(&s.node, first, lex)
	return nil
}

func (p *PostfixExpr) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	p.X = &Primary{}
	if err := p.X.parse(lex); err != nil {
		return err
	}
	for {
		t := lex.Peek()
		if t.Type != ttPunct {
			break
		}
		switch t.Value {
		case "[", "(", ".", "->", "++", "--", "<<<":
		default:
			// Not a postfix operator: the expression ends (allocating no
			// PostfixOp for the operators and punctuation that follow
			// most primaries).
			finish(&p.node, first, lex)
			return nil
		}
		op := &PostfixOp{}
		switch t.Value {
		case "[":
			lex.Next()
			op.Index = &Expr{}
			if err := op.Index.Parse(lex); err != nil {
				if err == participle.NextMatch {
					return unexpected(lex.Peek(), "an index expression")
				}
				return err
			}
			if _, err := expect(lex, "]"); err != nil {
				return err
			}
		case "(":
			op.Call = &CallArgs{}
			if err := op.Call.parse(lex); err != nil {
				return err
			}
		case ".", "->":
			op.Member = &MemberAccess{}
			if err := op.Member.parse(lex); err != nil {
				return err
			}
		case "++", "--":
			op.Incr = lex.Next().Value
		case "<<<":
			lex.Next()
			for {
				a := &AssignExpr{}
				if err := a.Parse(lex); err != nil {
					if err == participle.NextMatch {
						return unexpected(lex.Peek(), "a launch configuration")
					}
					return err
				}
				op.Launch = append(op.Launch, a)
				if !is(lex.Peek(), ",") {
					break
				}
				lex.Next()
			}
			if _, err := expect(lex, ">>>"); err != nil {
				return err
			}
		}
		finish(&op.node, t, lex)
		p.Ops = append(p.Ops, op)
	}
	finish(&p.node, first, lex)
	return nil
}

func (c *CallArgs) parse(lex *lexer.PeekingLexer) error {
	first := lex.Next() // (
	if !is(lex.Peek(), ")") {
		for {
			v := &InitValue{}
			if err := v.parse(lex); err != nil {
				return err
			}
			c.Args = append(c.Args, v)
			if !is(lex.Peek(), ",") {
				break
			}
			lex.Next()
		}
	}
	if _, err := expect(lex, ")"); err != nil {
		return err
	}
	finish(&c.node, first, lex)
	return nil
}

func (m *MemberAccess) parse(lex *lexer.PeekingLexer) error {
	first := lex.Next() // . or ->
	m.Arrow = first.Value == "->"
	if isKw(lex.Peek(), "template") {
		lex.Next()
	}
	if is(lex.Peek(), "~") {
		lex.Next()
	}
	t := lex.Peek()
	switch {
	case isName(t):
		m.Name = lex.Next().Value
	case isKw(t, "operator"):
		lex.Next()
		if lex.Peek().Type != ttPunct {
			return unexpected(lex.Peek(), "an operator")
		}
		m.Name = "operator" + lex.Next().Value
	default:
		return unexpected(t, "a member name")
	}
	if is(lex.Peek(), "<") {
		args := &ExprTemplateArgs{}
		if args.Parse(lex) == nil {
			m.Args = args
		}
	}
	finish(&m.node, first, lex)
	return nil
}

var basicTypeWords = map[string]bool{"int": true, "float": true, "double": true, "unsigned": true,
	"char": true, "bool": true, "short": true, "long": true, "signed": true, "void": true}

func (p *Primary) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	switch first.Type {
	case ttNumber:
		p.Number = lex.Next().Value
	case ttString:
		p.parseStrings(lex)
	case ttChar:
		p.Char = lex.Next().Value
	case ttIdent, ttTypeName:
		if namesThenString(lex) {
			// FMT "\n": a macro that expands to a string, concatenated.
			p.parseStrings(lex)
			break
		}
		p.Name = &QualName{}
		if err := p.Name.parse(lex); err != nil {
			return err
		}
	case ttKeyword:
		switch v := first.Value; {
		case v == "true" || v == "false" || v == "nullptr" || v == "this":
			p.Keyword = lex.Next().Value
		case v == "operator":
			p.Name = &QualName{}
			if err := p.Name.parse(lex); err != nil {
				return err
			}
		case v == "static_cast" || v == "reinterpret_cast" || v == "const_cast" || v == "dynamic_cast":
			p.CppCast = &CppCast{}
			if err := p.CppCast.parse(lex); err != nil {
				return err
			}
		case basicTypeWords[v]:
			p.Basic = lex.Next().Value
			if !is(lex.Peek(), "(") && !is(lex.Peek(), "{") {
				return unexpected(lex.Peek(), `"(" or "{" after a type in an expression`)
			}
		default:
			return unexpected(first, "an expression")
		}
	case ttPunct:
		switch first.Value {
		case "...":
			lex.Next()
			p.Ellipsis = true
		case "(":
			lex.Next()
			p.Paren = &Expr{}
			if err := p.Paren.Parse(lex); err != nil {
				if err == participle.NextMatch {
					return unexpected(lex.Peek(), "an expression")
				}
				return err
			}
			if _, err := expect(lex, ")"); err != nil {
				return err
			}
		case "[":
			p.Lambda = &Lambda{}
			if err := p.Lambda.parse(lex); err != nil {
				return err
			}
		case "{":
			p.Brace = &BraceInit{}
			if err := p.Brace.parse(lex); err != nil {
				return err
			}
		case "::":
			p.Name = &QualName{}
			if err := p.Name.parse(lex); err != nil {
				return err
			}
		default:
			return unexpected(first, "an expression")
		}
	default:
		return unexpected(first, "an expression")
	}
	// T{...}: construction of a named or basic type.
	if (p.Name != nil || p.Basic != "") && is(lex.Peek(), "{") {
		p.Constr = &BraceInit{}
		if err := p.Constr.parse(lex); err != nil {
			return err
		}
	}
	finish(&p.node, first, lex)
	return nil
}

// namesThenString reports whether the next tokens are one or more
// identifiers and then a string literal: FMT SEP "x".
func namesThenString(lex *lexer.PeekingLexer) bool {
	c := newCursor(lex)
	defer c.rewind()
	n := 0
	for c.peek().Type == ttIdent {
		c.next()
		n++
	}
	return n > 0 && c.peek().Type == ttString
}

// parseStrings parses adjacent string literals and the macros between
// them: "%d\t" FMT "\t%d", "a"FMT"b", "x" PRId64, FMT "y". A name counts
// as a string macro when a string literal is next to it.
func (p *Primary) parseStrings(lex *lexer.PeekingLexer) {
	prevString := false
	for {
		t := lex.Peek()
		switch {
		case t.Type == ttString:
			p.Strings = append(p.Strings, lex.Next().Value)
			prevString = true
			continue
		case t.Type == ttIdent && (prevString || namesThenString(lex)) && !is(peekAt(lex, 1), "(") && !is(peekAt(lex, 1), "::"):
			p.StringMacros = append(p.StringMacros, lex.Next().Value)
			prevString = false
			continue
		}
		return
	}
}

func (q *QualName) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	if is(first, "::") {
		lex.Next()
		q.Global = true
	}
	for {
		t := lex.Peek()
		if isKw(t, "operator") {
			// ::operator new(n), operator delete[](p), A::operator+(a, b)
			name, err := parseOperatorName(lex)
			if err != nil {
				return err
			}
			seg := &ExprNameSeg{Name: name}
			finish(&seg.node, t, lex)
			q.Segs = append(q.Segs, seg)
			break
		}
		if !isName(t) {
			return unexpected(t, "a name")
		}
		seg := &ExprNameSeg{Name: lex.Next().Value}
		if is(lex.Peek(), "<") {
			args := &ExprTemplateArgs{}
			if args.Parse(lex) == nil {
				seg.Args = args
			}
		}
		finish(&seg.node, t, lex)
		q.Segs = append(q.Segs, seg)
		if !is(lex.Peek(), "::") {
			break
		}
		lex.Next()
		if isKw(lex.Peek(), "template") {
			lex.Next()
		}
	}
	finish(&q.node, first, lex)
	return nil
}

// parseOperatorName parses `operator` and the operator it names, as a
// name in an expression: "operator new", "operator delete[]", "operator()".
func parseOperatorName(lex *lexer.PeekingLexer) (string, error) {
	lex.Next() // operator
	t := lex.Peek()
	switch {
	case isKw(t, "new") || isKw(t, "delete"):
		name := "operator " + lex.Next().Value
		if is(lex.Peek(), "[") && is(peekAt(lex, 1), "]") {
			lex.Next()
			lex.Next()
			name += "[]"
		}
		return name, nil
	case (is(t, "(") && is(peekAt(lex, 1), ")")) || (is(t, "[") && is(peekAt(lex, 1), "]")):
		a := lex.Next().Value
		return "operator" + a + lex.Next().Value, nil
	case t.Type == ttPunct && !is(t, "(") && !is(t, "["):
		return "operator" + lex.Next().Value, nil
	}
	return "", unexpected(t, "an operator")
}

func (c *CppCast) parse(lex *lexer.PeekingLexer) error {
	first := lex.Next()
	c.Kind = first.Value
	c.Type = &AngleArgs{}
	if err := c.Type.Parse(lex); err != nil {
		return unexpected(lex.Peek(), "<type> after "+c.Kind)
	}
	if _, err := expect(lex, "("); err != nil {
		return err
	}
	c.X = &Expr{}
	if err := c.X.Parse(lex); err != nil {
		if err == participle.NextMatch {
			return unexpected(lex.Peek(), "an expression")
		}
		return err
	}
	if _, err := expect(lex, ")"); err != nil {
		return err
	}
	finish(&c.node, first, lex)
	return nil
}

func (l *Lambda) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	l.Captures = &BracketTokens{}
	if err := l.Captures.Parse(lex); err != nil {
		return unexpected(first, "a lambda capture list")
	}
	if is(lex.Peek(), "(") {
		l.Params = &ParenTokens{}
		if err := l.Params.Parse(lex); err != nil {
			return unexpected(lex.Peek(), "lambda parameters")
		}
	}
	for t := lex.Peek(); t.Type == ttKeyword && (t.Value == "mutable" || t.Value == "constexpr" || t.Value == "__device__" || t.Value == "__host__"); t = lex.Peek() {
		l.Specs = append(l.Specs, lex.Next().Value)
	}
	if is(lex.Peek(), "->") {
		lex.Next()
		for t := lex.Peek(); !is(t, "{") && t.Type != ttEOF; t = lex.Peek() {
			l.Ret = append(l.Ret, lex.Next().Value)
		}
	}
	if !is(lex.Peek(), "{") {
		return unexpected(lex.Peek(), "a lambda body")
	}
	body, err := parseBlock(lex)
	if err != nil {
		return err
	}
	l.Body = body
	finish(&l.node, first, lex)
	return nil
}

// Parse parses an initialiser value.
func (v *InitValue) Parse(lex *lexer.PeekingLexer) error {
	if t := lex.Peek(); !canStartExpr(t) {
		return participle.NextMatch
	}
	return v.parse(lex)
}

func (v *InitValue) parse(lex *lexer.PeekingLexer) error {
	first := lex.Peek()
	if is(first, "{") {
		v.Brace = &BraceInit{}
		if err := v.Brace.parse(lex); err != nil {
			return err
		}
	} else {
		v.X = &AssignExpr{}
		if err := v.X.parse(lex); err != nil {
			return err
		}
	}
	if is(lex.Peek(), "...") {
		lex.Next()
		v.Pack = true
	}
	finish(&v.node, first, lex)
	return nil
}

// Parse parses a brace initialiser.
func (b *BraceInit) Parse(lex *lexer.PeekingLexer) error {
	if !is(lex.Peek(), "{") {
		return participle.NextMatch
	}
	return b.parse(lex)
}

func (b *BraceInit) parse(lex *lexer.PeekingLexer) error {
	first := lex.Next() // {
	for !is(lex.Peek(), "}") {
		item := &InitItem{}
		it := lex.Peek()
		if is(it, ".") {
			lex.Next()
			if lex.Peek().Type != ttIdent {
				return unexpected(lex.Peek(), "a field name")
			}
			item.Field = lex.Next().Value
			if _, err := expect(lex, "="); err != nil {
				return err
			}
		}
		item.Value = &InitValue{}
		if err := item.Value.parse(lex); err != nil {
			return err
		}
		finish(&item.node, it, lex)
		b.Items = append(b.Items, item)
		if !is(lex.Peek(), ",") {
			break
		}
		lex.Next()
	}
	if _, err := expect(lex, "}"); err != nil {
		return err
	}
	finish(&b.node, first, lex)
	return nil
}
