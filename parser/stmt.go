package parser

// The frequent statements, parsed by hand:
//
//	Block        = "{" Stmt* "}"
//	DeclStmt     = DeclSpecs ( InitDeclarator ( "," InitDeclarator )* )? ";"
//	ExprStmt     = Expr ";"
//	IfStmt       = "if" "constexpr"? CondHead Stmt ( "else" Stmt )?
//	SwitchStmt   = "switch" CondHead Stmt
//	CondHead     = "(" ( DeclStmt | ExprStmt )? ( Expr | DeclSpecs InitDeclarator ) ")"
//	ForStmt      = "for" "(" ( DeclStmt | ExprStmt | ";" ) Expr? ";" Expr? ")" Stmt
//	             | "for" "(" DeclSpecs InitDeclarator ":" Expr ")" Stmt
//	MacroStmt    = Ident ParenTokens Stmt        (a statement-like macro)
//	WhileStmt    = "while" "(" Expr ")" Stmt
//	DoStmt       = "do" Stmt "while" "(" Expr ")" ";"
//	ReturnStmt   = "return" Expr? ";"
//	BreakStmt    = "break" ";"
//	ContinueStmt = "continue" ";"
//	LabelStmt    = Ident ":"
//	EmptyStmt    = ";"

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

var keywordStmts map[string]func(*lexer.PeekingLexer) (Stmt, error)

func init() {
	keywordStmts = map[string]func(*lexer.PeekingLexer) (Stmt, error){
		"if": parseIf, "for": parseFor, "while": parseWhile, "do": parseDo,
		"return": parseReturn, "break": parseBreak, "continue": parseContinue, "switch": parseSwitch,
	}
}

// parseExprIn parses an expression that must be present.
func parseExprIn(lex *lexer.PeekingLexer, what string) (*Expr, error) {
	e := &Expr{}
	if err := e.Parse(lex); err != nil {
		if err == participle.NextMatch {
			return nil, unexpected(lex.Peek(), what)
		}
		return nil, err
	}
	return e, nil
}

// parseParenCond parses `( expr )`.
func parseParenCond(lex *lexer.PeekingLexer) (*Expr, error) {
	if _, err := expect(lex, "("); err != nil {
		return nil, err
	}
	e, err := parseExprIn(lex, "a condition")
	if err != nil {
		return nil, err
	}
	if _, err := expect(lex, ")"); err != nil {
		return nil, err
	}
	return e, nil
}

func parseSubStmt(lex *lexer.PeekingLexer) (Stmt, error) {
	s, err := parseStmt(lex)
	if err == participle.NextMatch {
		return nil, unexpected(lex.Peek(), "a statement")
	}
	return s, err
}

func parseDeclStmt(lex *lexer.PeekingLexer) (*DeclStmt, error) {
	first := lex.Peek()
	d := &DeclStmt{Specs: &DeclSpecs{}}
	if err := d.Specs.Parse(lex); err != nil {
		if err == participle.NextMatch {
			return nil, unexpected(first, "a declaration")
		}
		return nil, err
	}
	if !is(lex.Peek(), ";") {
		for {
			id := &InitDeclarator{}
			if err := id.Parse(lex); err != nil {
				if err == participle.NextMatch {
					return nil, unexpected(lex.Peek(), "a declarator")
				}
				return nil, err
			}
			d.Decls = append(d.Decls, id)
			if !is(lex.Peek(), ",") {
				break
			}
			lex.Next()
		}
	}
	if _, err := expect(lex, ";"); err != nil {
		return nil, err
	}
	finish(&d.node, first, lex)
	return d, nil
}

func parseExprStmt(lex *lexer.PeekingLexer) (*ExprStmt, error) {
	first := lex.Peek()
	x := &Expr{}
	if err := x.Parse(lex); err != nil {
		if err == participle.NextMatch {
			return nil, unexpected(first, "a statement")
		}
		return nil, err
	}
	if _, err := expect(lex, ";"); err != nil {
		return nil, err
	}
	e := &ExprStmt{X: x}
	finish(&e.node, first, lex)
	return e, nil
}

// parseCondHead parses the parenthesised head of if/switch: an optional
// init-statement, then a condition or a condition declaration.
func parseCondHead(lex *lexer.PeekingLexer) (init Stmt, condDecl *DeclStmt, cond *Expr, err error) {
	if _, err = expect(lex, "("); err != nil {
		return
	}
	for round := 0; round < 2; round++ {
		cp := lex.MakeCheckpoint()
		c := cursor{lex: lex, cp: cp}
		decl := looksLikeDecl(&c)
		lex.LoadCheckpoint(cp)
		if decl {
			first := lex.Peek()
			d := &DeclStmt{Specs: &DeclSpecs{}}
			if err = d.Specs.Parse(lex); err != nil {
				return
			}
			id := &InitDeclarator{}
			if err = id.Parse(lex); err != nil {
				if err == participle.NextMatch {
					err = unexpected(lex.Peek(), "a declarator")
				}
				return
			}
			d.Decls = append(d.Decls, id)
			for is(lex.Peek(), ",") && round == 0 {
				lex.Next()
				id := &InitDeclarator{}
				if err = id.Parse(lex); err != nil {
					return
				}
				d.Decls = append(d.Decls, id)
			}
			if is(lex.Peek(), ";") && round == 0 {
				lex.Next()
				finish(&d.node, first, lex)
				init = d
				continue
			}
			finish(&d.node, first, lex)
			condDecl = d
		} else {
			first := lex.Peek()
			var e *Expr
			if e, err = parseExprIn(lex, "a condition"); err != nil {
				return
			}
			if is(lex.Peek(), ";") && round == 0 {
				lex.Next()
				es := &ExprStmt{X: e}
				finish(&es.node, first, lex)
				init = es
				continue
			}
			cond = e
		}
		break
	}
	_, err = expect(lex, ")")
	return
}

func parseIf(lex *lexer.PeekingLexer) (Stmt, error) {
	first := lex.Next()
	s := &IfStmt{}
	if isKw(lex.Peek(), "constexpr") {
		lex.Next()
		s.Constexpr = true
	}
	var err error
	if s.Init, s.CondDecl, s.Cond, err = parseCondHead(lex); err != nil {
		return nil, err
	}
	if s.Then, err = parseSubStmt(lex); err != nil {
		return nil, err
	}
	if isKw(lex.Peek(), "else") {
		lex.Next()
		if s.Else, err = parseSubStmt(lex); err != nil {
			return nil, err
		}
	}
	finish(&s.node, first, lex)
	return s, nil
}

func parseFor(lex *lexer.PeekingLexer) (Stmt, error) {
	first := lex.Next()
	s := &ForStmt{}
	if _, err := expect(lex, "("); err != nil {
		return nil, err
	}
	t := lex.Peek()
	switch {
	case is(t, ";"):
		e := &EmptyStmt{Semi: true}
		lex.Next()
		finish(&e.node, t, lex)
		s.Init = e
	default:
		cp := lex.MakeCheckpoint()
		c := cursor{lex: lex, cp: cp}
		decl := looksLikeDecl(&c)
		lex.LoadCheckpoint(cp)
		if decl {
			// A range-for declares one variable and is followed by ':'.
			d := &DeclStmt{Specs: &DeclSpecs{}}
			if err := d.Specs.Parse(lex); err != nil {
				return nil, err
			}
			id := &InitDeclarator{}
			if err := id.Parse(lex); err != nil {
				if err == participle.NextMatch {
					return nil, unexpected(lex.Peek(), "a declarator")
				}
				return nil, err
			}
			d.Decls = append(d.Decls, id)
			if is(lex.Peek(), ":") {
				finish(&d.node, t, lex)
				lex.Next()
				r, err := parseExprIn(lex, "a range")
				if err != nil {
					return nil, err
				}
				s.RangeDecl, s.Range = d, r
				if _, err := expect(lex, ")"); err != nil {
					return nil, err
				}
				body, err := parseSubStmt(lex)
				if err != nil {
					return nil, err
				}
				s.Body = body
				finish(&s.node, first, lex)
				return s, nil
			}
			for is(lex.Peek(), ",") {
				lex.Next()
				id := &InitDeclarator{}
				if err := id.Parse(lex); err != nil {
					return nil, err
				}
				d.Decls = append(d.Decls, id)
			}
			if _, err := expect(lex, ";"); err != nil {
				return nil, err
			}
			finish(&d.node, t, lex)
			s.Init = d
		} else {
			e, err := parseExprStmt(lex)
			if err != nil {
				return nil, err
			}
			s.Init = e
		}
	}
	if !is(lex.Peek(), ";") {
		e, err := parseExprIn(lex, "a loop condition")
		if err != nil {
			return nil, err
		}
		s.Cond = e
	}
	if _, err := expect(lex, ";"); err != nil {
		return nil, err
	}
	if !is(lex.Peek(), ")") {
		e, err := parseExprIn(lex, "a loop increment")
		if err != nil {
			return nil, err
		}
		s.Post = e
	}
	if _, err := expect(lex, ")"); err != nil {
		return nil, err
	}
	body, err := parseSubStmt(lex)
	if err != nil {
		return nil, err
	}
	s.Body = body
	finish(&s.node, first, lex)
	return s, nil
}

// looksLikeMacroStmt reports whether the next tokens are NAME(...) followed
// by the start of a statement rather than by an operator or ';'.
func looksLikeMacroStmt(lex *lexer.PeekingLexer) bool {
	c := newCursor(lex)
	defer c.rewind()
	if c.next().Type != ttIdent || !is(c.peek(), "(") || !c.skipGroup() {
		return false
	}
	n := c.peek()
	switch {
	case is(n, "{"):
		return true
	case n.Type == ttKeyword:
		switch n.Value {
		case "if", "for", "while", "do", "return", "switch":
			return true
		}
	}
	return false
}

func parseMacroStmt(lex *lexer.PeekingLexer) (Stmt, error) {
	first := lex.Next()
	m := &MacroStmt{Name: first.Value, Args: &ParenTokens{}}
	if err := m.Args.Parse(lex); err != nil {
		return nil, unexpected(lex.Peek(), "macro arguments")
	}
	body, err := parseSubStmt(lex)
	if err != nil {
		return nil, err
	}
	m.Body = body
	finish(&m.node, first, lex)
	return m, nil
}

func parseSwitch(lex *lexer.PeekingLexer) (Stmt, error) {
	first := lex.Next()
	s := &SwitchStmt{}
	var err error
	if s.Init, s.CondDecl, s.Cond, err = parseCondHead(lex); err != nil {
		return nil, err
	}
	if s.Body, err = parseSubStmt(lex); err != nil {
		return nil, err
	}
	finish(&s.node, first, lex)
	return s, nil
}

func parseWhile(lex *lexer.PeekingLexer) (Stmt, error) {
	first := lex.Next()
	s := &WhileStmt{}
	var err error
	if s.Cond, err = parseParenCond(lex); err != nil {
		return nil, err
	}
	if s.Body, err = parseSubStmt(lex); err != nil {
		return nil, err
	}
	finish(&s.node, first, lex)
	return s, nil
}

func parseDo(lex *lexer.PeekingLexer) (Stmt, error) {
	first := lex.Next()
	s := &DoStmt{}
	var err error
	if s.Body, err = parseSubStmt(lex); err != nil {
		return nil, err
	}
	if !isKw(lex.Peek(), "while") {
		return nil, unexpected(lex.Peek(), `"while"`)
	}
	lex.Next()
	if s.Cond, err = parseParenCond(lex); err != nil {
		return nil, err
	}
	if _, err := expect(lex, ";"); err != nil {
		return nil, err
	}
	finish(&s.node, first, lex)
	return s, nil
}

func parseReturn(lex *lexer.PeekingLexer) (Stmt, error) {
	first := lex.Next()
	s := &ReturnStmt{Return: true}
	if is(lex.Peek(), "{") {
		s.Brace = &BraceInit{}
		if err := s.Brace.parse(lex); err != nil {
			return nil, err
		}
	} else if !is(lex.Peek(), ";") {
		e, err := parseExprIn(lex, "a return value")
		if err != nil {
			return nil, err
		}
		s.Value = e
	}
	if _, err := expect(lex, ";"); err != nil {
		return nil, err
	}
	finish(&s.node, first, lex)
	return s, nil
}

func parseBreak(lex *lexer.PeekingLexer) (Stmt, error) {
	first := lex.Next()
	if _, err := expect(lex, ";"); err != nil {
		return nil, err
	}
	s := &BreakStmt{Break: true}
	finish(&s.node, first, lex)
	return s, nil
}

func parseContinue(lex *lexer.PeekingLexer) (Stmt, error) {
	first := lex.Next()
	if _, err := expect(lex, ";"); err != nil {
		return nil, err
	}
	s := &ContinueStmt{Continue: true}
	finish(&s.node, first, lex)
	return s, nil
}
