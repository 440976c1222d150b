package parser

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// funcDefGrammar is the grammar of a function definition: the head, then
// the body as a balanced token run.
type funcDefGrammar struct {
	gnode
	Head    *FuncHead  `parser:"@@"`
	BodyRaw *rawBraces `parser:"@@"`
}

// handHeads lets tests compare the hand-parsed heads with the grammar's.
var handHeads = true

// Parse parses a function definition where the top level expects an item.
// participle parses a head by trying, for every token, each alternative of
// HeadSpec in turn, and every try allocates; a file of thousands of
// kernels spends much of its top-level parse there. So the heads made only
// of words (specifiers, type names, `*`, `&`, `::`), template headers and
// __launch_bounds__, then the name, the parameters and the body's `{`, are
// parsed here by hand into the tree the grammar builds for them; any other
// head is handed to the grammar (funcDefParser), from the start.
func (d *FuncDef) Parse(lex *lexer.PeekingLexer) error {
	c := newCursor(lex)
	ok := looksLikeFuncDef(&c) // FuncHead's gate
	c.rewind()
	if !ok {
		return participle.NextMatch
	}
	if handHeads && d.parseSimple(lex) {
		return nil
	}
	c.rewind()
	g, err := funcDefParser.ParseFromLexer(lex, participle.AllowTrailing(true))
	if err != nil {
		// Not a definition after all: the top level takes it as an
		// opaque item, as it would after the grammar failed in place.
		c.rewind()
		return participle.NextMatch
	}
	d.gnode, d.Head, d.BodyRaw = g.gnode, g.Head, g.BodyRaw
	return nil
}

// excludedHeadWords start HeadSpec alternatives other than Word (or, for
// operator, stop Word): heads with them go to the grammar.
var excludedHeadWords = map[string]bool{
	"__cluster_dims__": true, "__maxnreg__": true, "__attribute__": true, "__align__": true,
	"alignas": true, "__declspec": true, "extern": true, "operator": true, "template": true,
}

// parseSimple parses a simple definition (see Parse) and reports whether
// it did; when it did not, the lexer is left anywhere (Parse rewinds it).
// Each step builds what the grammar would: the same nodes, positions
// (Pos: the first token's, EndPos: the position of the token after) and
// nil where the grammar matched nothing.
func (d *FuncDef) parseSimple(lex *lexer.PeekingLexer) bool {
	first := lex.Peek()
	h := &FuncHead{Gate: &funcGate{}}
	// template <...> headers.
	for t := lex.Peek(); t.Value == "template"; t = lex.Peek() {
		lex.Next()
		args := &AngleArgs{}
		if args.Parse(lex) != nil {
			return false
		}
		h.Templates = append(h.Templates, &TemplateHeader{gnode: gnode{Pos: t.Pos, EndPos: lex.Peek().Pos}, Args: args})
	}
	// Specifiers and return type, up to the name: `NAME (`.
	for {
		t := lex.Peek()
		if excludedHeadWords[t.Value] {
			return false
		}
		if t.Value == "__launch_bounds__" {
			lb := d.launchBounds(lex)
			if lb == nil {
				return false
			}
			h.Specs = append(h.Specs, lb)
			continue
		}
		switch {
		case t.Type == ttKeyword, is(t, "*"), is(t, "&"), is(t, "&&"), is(t, "::"):
		case isName(t):
			c := cursor{lex: lex}
			switch n := c.peekN(1); {
			case is(n, "("):
				// The name, unless it is a macro attribute NAME(...)
				// followed by more of the head (MacroAttr).
				goto name
			case is(n, "::"), is(n, "<"):
				return false
			}
		default:
			return false
		}
		lex.Next()
		h.Specs = append(h.Specs, &Word{gnode: gnode{Pos: t.Pos, EndPos: lex.Peek().Pos}, Text: t.Value})
	}
name:
	nameTok := lex.Next()
	h.Name = &FuncName{gnode: gnode{Pos: nameTok.Pos, EndPos: lex.Peek().Pos}, Name: nameTok.Value}
	// The parameter list.
	open := lex.Next() // "("
	pl := &ParamList{}
	if p := (&Param{}); p.Parse(lex) == nil {
		pl.Params = append(pl.Params, p)
		for is(lex.Peek(), ",") {
			lex.Next()
			p := &Param{}
			if p.Parse(lex) != nil {
				return false
			}
			pl.Params = append(pl.Params, p)
		}
	}
	if !is(lex.Peek(), ")") {
		return false
	}
	lex.Next()
	// No trailing qualifiers: the body follows.
	body := lex.Peek()
	if !is(body, "{") {
		return false
	}
	pl.gnode = gnode{Pos: open.Pos, EndPos: body.Pos}
	h.Params = pl
	h.gnode = gnode{Pos: first.Pos, EndPos: body.Pos}
	raw := &rawBraces{}
	if raw.Parse(lex) != nil {
		return false
	}
	d.gnode = gnode{Pos: first.Pos, EndPos: lex.Peek().Pos}
	d.Head, d.BodyRaw = h, raw
	return true
}

// launchBounds parses `__launch_bounds__ ( e, ... )` like LaunchBounds's
// grammar, or returns nil.
func (d *FuncDef) launchBounds(lex *lexer.PeekingLexer) *LaunchBounds {
	kw := lex.Next()
	if !is(lex.Peek(), "(") {
		return nil
	}
	lex.Next()
	lb := &LaunchBounds{}
	for {
		e := &AssignExpr{}
		if e.Parse(lex) != nil {
			return nil
		}
		lb.Args = append(lb.Args, e)
		if !is(lex.Peek(), ",") {
			break
		}
		lex.Next()
	}
	if !is(lex.Peek(), ")") {
		return nil
	}
	lex.Next()
	lb.gnode = gnode{Pos: kw.Pos, EndPos: lex.Peek().Pos}
	return lb
}
