package parser

import (
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"unsafe"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/slatec/slatec/diag"
)

// ---------------------------------------------------------------------------
// The bridge between our lexer and participle

// tokenDef is the participle lexer definition: our token kinds as symbols.
// The parsers are fed pre-lexed tokens through ParseFromLexer; Lex exists so
// that the grammar can also be exercised directly on strings in tests.
type tokenDef struct{}

var symbols = map[string]lexer.TokenType{
	"EOF": ttEOF, "Ident": ttIdent, "TypeName": ttTypeName, "Keyword": ttKeyword,
	"Number": ttNumber, "String": ttString, "Char": ttChar, "Punct": ttPunct, "Invalid": ttInvalid,
}

func (tokenDef) Symbols() map[string]lexer.TokenType { return symbols }

func (tokenDef) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	toks := Lex(src)
	return &sliceLexer{toks: bridge(filename, string(src), toks, 0, len(toks), nil)}, nil
}

var kindToType = [numKinds]lexer.TokenType{
	EOF: ttEOF, Ident: ttIdent, Keyword: ttKeyword, Number: ttNumber, String: ttString,
	Char: ttChar, Punct: ttPunct, Invalid: ttInvalid,
}

// bridge converts the significant tokens of toks[from:to] to participle
// tokens, ending with EOF. Identifiers in typeNames become TypeName.
func bridge(filename, text string, toks []Token, from, to int, typeNames map[string]bool) []lexer.Token {
	return bridgeInto(nil, filename, text, toks, from, to, typeNames, nil)
}

// bodyInners finds the brace groups of toks whose insides the top-level
// grammar never reads: a group that follows `)` (a function body after
// its parameter list, or after a trailing attribute) and whose brackets
// balance, so that every skipGroup from its `{` ends at its `}`. Nothing
// at the top level looks inside such a group: function bodies are taken
// whole (rawBraces), opaque items and parameters skip groups whole, and
// only namespace and linkage blocks, which never follow `)`, are parsed
// item by item. It returns, for the index of each such `{`, the index of
// the last significant token inside the group (groups with nothing inside
// are left out).
func bodyInners(text string, toks []Token) map[int]int {
	out := map[int]int{}
	var stack []int // indices of open brackets
	prevSig := -1
	for i, t := range toks {
		if t.Kind.IsTrivia() {
			continue
		}
		if t.Kind == Punct && t.End-t.Off == 1 {
			switch c := text[t.Off]; c {
			case '(', '[', '{':
				stack = append(stack, i)
			case ')', ']', '}':
				open := byte(0)
				if len(stack) > 0 {
					open = text[toks[stack[len(stack)-1]].Off]
				}
				if open == 0 || closerOf[string(open)] != string(c) {
					// A skipGroup from any open bracket fails here.
					stack = stack[:0]
					break
				}
				o := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if c == '}' && prevSig != o {
					if before := prevSignificant(toks, o); before >= 0 && toks[before].Kind == Punct && text[toks[before].Off:toks[before].End] == ")" {
						out[o] = prevSig
					}
				}
			}
		}
		prevSig = i
	}
	return out
}

func prevSignificant(toks []Token, i int) int {
	for i--; i >= 0 && toks[i].Kind.IsTrivia(); i-- {
	}
	return i
}

// bridgeInto is bridge writing into dst's array when it is big enough
// (the function bodies of a file are bridged one after the other into one
// buffer: nothing keeps a body's tokens once it is parsed).
//
// skip, when not nil, maps the index of a `{` to the index of the last
// significant token inside its group: the tokens in between are left out
// (see bodyInners), with the positions of the tokens after them as if
// they were there.
func bridgeInto(dst []lexer.Token, filename, text string, toks []Token, from, to int, typeNames map[string]bool, skip map[int]int) []lexer.Token {
	n := 1 // EOF
	for i := from; i < to; i++ {
		if !toks[i].Kind.IsTrivia() {
			n++
			if last, ok := skip[i]; ok {
				i = last
			}
		}
	}
	out := dst[:0]
	if cap(out) < n {
		out = make([]lexer.Token, 0, n)
	}
	prevEnd := 0
	switch {
	case from > 0 && from < len(toks):
		// The end of the token before (tokens cover every byte, unless
		// spaces were dropped: ParseOptions.DropSpace).
		prevEnd = int(toks[from].Off)
	case from > 0:
		prevEnd = int(toks[from-1].End)
	}
	startOfLine := from == 0 || strings.HasSuffix(text[:toks[from].Off], "\n")
	for i := from; i < to; i++ {
		t := toks[i]
		if i > from && toks[i-1].End < t.Off && strings.IndexByte(text[toks[i-1].End:t.Off], '\n') >= 0 {
			startOfLine = true // a dropped space token ended a line
		}
		if t.Kind.IsTrivia() {
			if t.Kind == Directive || strings.IndexByte(text[t.Off:t.End], '\n') >= 0 {
				startOfLine = true
			}
			continue
		}
		value := text[t.Off:t.End]
		if t.Kind == Punct && len(value) > 3 {
			value = chevronText(value) // `<< <` written with spaces
		}
		typ := kindToType[t.Kind]
		if typ == ttIdent && typeNames[value] {
			typ = ttTypeName
		}
		line := midLine
		if startOfLine {
			line = lineStart
		}
		out = append(out, lexer.Token{Type: typ, Value: value,
			Pos: lexer.Position{Filename: filename, Offset: int(t.Off), Line: line, Column: prevEnd}})
		prevEnd = int(t.End)
		startOfLine = false
		if last, ok := skip[i]; ok {
			i, prevEnd = last, int(toks[last].End)
		}
	}
	end := prevEnd
	if to > from && int(toks[to-1].End) > end && !toks[to-1].Kind.IsTrivia() {
		end = int(toks[to-1].End)
	}
	out = append(out, lexer.Token{Type: ttEOF, Pos: lexer.Position{Filename: filename, Offset: end, Line: midLine, Column: prevEnd}})
	return out
}

// peekingLexer has the layout of participle's lexer.PeekingLexer (v2.1.4),
// whose fields are unexported. lexer.Upgrade, the only way participle
// offers to make one, reads the tokens one by one into a slice that grows
// as it goes, which for a big file copies every token several times over;
// newPeekingLexer instead hands the parsers the bridged slice itself.
type peekingLexer struct {
	lexer.Checkpoint
	tokens []lexer.Token
	elide  map[lexer.TokenType]bool
}

// peekingLayoutOK says whether peekingLexer still mirrors
// lexer.PeekingLexer field for field; if a participle upgrade changes it,
// newPeekingLexer falls back to lexer.Upgrade.
var peekingLayoutOK = sameLayout(reflect.TypeOf(lexer.PeekingLexer{}), reflect.TypeOf(peekingLexer{}))

func sameLayout(a, b reflect.Type) bool {
	if a.Size() != b.Size() || a.NumField() != b.NumField() {
		return false
	}
	for i := 0; i < a.NumField(); i++ {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Type != fb.Type || fa.Offset != fb.Offset || fa.Anonymous != fb.Anonymous {
			return false
		}
	}
	return true
}

// newPeekingLexer returns a PeekingLexer over toks, which must end with
// the EOF token, in the state lexer.Upgrade leaves one in (nothing elided:
// the cursors at 0). The lexer reads toks in place.
func newPeekingLexer(toks []lexer.Token) *lexer.PeekingLexer {
	if !peekingLayoutOK {
		p, _ := lexer.Upgrade(&sliceLexer{toks: toks}) // a sliceLexer never fails
		return p
	}
	return (*lexer.PeekingLexer)(unsafe.Pointer(&peekingLexer{tokens: toks}))
}

type sliceLexer struct {
	toks []lexer.Token
	i    int
}

func (l *sliceLexer) Next() (lexer.Token, error) {
	if l.i >= len(l.toks) {
		return l.toks[len(l.toks)-1], nil
	}
	t := l.toks[l.i]
	l.i++
	return t, nil
}

// ---------------------------------------------------------------------------
// The grammars

func options(lookahead int) []participle.Option {
	return []participle.Option{
		participle.Lexer(tokenDef{}),
		participle.Union[FileItem](&Namespace{}, &LinkageBlock{}, &FuncDef{}, &Opaque{}, &StrayBrace{}),
		participle.Union[TopItem](&Namespace{}, &LinkageBlock{}, &FuncDef{}, &Opaque{}),
		participle.Union[HeadSpec](&LaunchBounds{}, &ClusterDims{}, &MaxNReg{}, &Attribute{},
			&StdAttribute{}, &ExternLinkage{}, &MacroAttr{}, &TemplateArgList{}, &Word{}),
		// Statements go through parseStmt, which handles the trivial shapes
		// itself and hands the rest to stmtParser's grammar.
		participle.ParseTypeWith(parseStmt),
		// Alternatives are tried in order and each failed try costs a
		// branch, so the frequent statements come first.
		participle.Union[grammarStmt](&AsmStmt{}, &CaseStmt{}, &DefaultStmt{}, &GotoStmt{}, &OpaqueStmt{}),
		participle.UseLookahead(lookahead),
	}
}

// grammarStmt is a statement parsed by the participle grammar (stmtBox).
type grammarStmt interface {
	Stmt
	grammarStmt()
}

func (*AsmStmt) grammarStmt()     {}
func (*CaseStmt) grammarStmt()    {}
func (*DefaultStmt) grammarStmt() {}
func (*GotoStmt) grammarStmt()    {}
func (*OpaqueStmt) grammarStmt()  {}

// stmtBox is the root production of stmtParser.
type stmtBox struct {
	S grammarStmt `parser:"@@"`
}

var (
	// The top level backtracks freely: anything that is not a namespace,
	// linkage block or function definition is an opaque run, so it never fails.
	topParser *participle.Parser[topFile]
	// stmtParser parses declarations and keyword statements; its lookahead is
	// short so an error is reported where the grammar first got stuck.
	stmtParser *participle.Parser[stmtBox]
	// funcDefParser parses the function definitions FuncDef.Parse does not
	// parse by hand.
	funcDefParser *participle.Parser[funcDefGrammar]
)

// The parsers refer to parseStmt, which refers to them: build them in init.
func init() {
	topParser = participle.MustBuild[topFile](options(participle.MaxLookahead)...)
	stmtParser = participle.MustBuild[stmtBox](options(4)...)
	funcDefParser = participle.MustBuild[funcDefGrammar](options(participle.MaxLookahead)...)
}

// parseStmt parses one statement. The frequent statements are parsed by
// hand (stmt.go); the irregular ones (asm, switch labels, goto, opaque
// declarations) by the stmtParser grammar.
func parseStmt(lex *lexer.PeekingLexer) (Stmt, error) {
	t := lex.Peek()
	switch {
	case t.Type == ttEOF || is(t, "}"):
		return nil, participle.NextMatch
	case is(t, "{"):
		return parseBlock(lex)
	case is(t, ";"):
		e := &EmptyStmt{Semi: true}
		lex.Next()
		finish(&e.node, t, lex)
		return e, nil
	case t.Type == ttIdent && looksLikeMacroStmt(lex):
		return parseMacroStmt(lex)
	case t.Type == ttIdent && isLabel(lex):
		l := &LabelStmt{Label: lex.Next().Value}
		lex.Next()
		finish(&l.node, t, lex)
		return l, nil
	case t.Type == ttKeyword:
		if parse := keywordStmts[t.Value]; parse != nil {
			return parse(lex)
		}
		// An expression statement that starts with a keyword: a C++ cast
		// (reinterpret_cast<float4*>(&a[i])[0] = v;, static_cast<void>(x);),
		// this->, sizeof, new, delete, operator.
		switch t.Value {
		case "new", "delete", "operator", "this", "sizeof", "alignof",
			"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "true", "false", "nullptr":
			return parseExprStmt(lex)
		}
		if !declKeywords[t.Value] {
			box, err := stmtParser.ParseFromLexer(lex, participle.AllowTrailing(true))
			if err != nil {
				return nil, err
			}
			return box.S, nil
		}
	}
	cp := lex.MakeCheckpoint()
	c := cursor{lex: lex, cp: cp}
	decl := looksLikeDecl(&c)
	lex.LoadCheckpoint(cp)
	if decl {
		return parseDeclStmt(lex)
	}
	return parseExprStmt(lex)
}

// isLabel reports whether the next tokens are `name :`.
func isLabel(lex *lexer.PeekingLexer) bool {
	cp := lex.MakeCheckpoint()
	defer lex.LoadCheckpoint(cp)
	lex.Next()
	return is(lex.Peek(), ":")
}

// parseBlock parses `{ stmt* }`.
func parseBlock(lex *lexer.PeekingLexer) (*Block, error) {
	first := lex.Peek()
	if !is(first, "{") {
		return nil, unexpected(first, `"{"`)
	}
	lex.Next()
	b := &Block{}
	for {
		t := lex.Peek()
		if is(t, "}") {
			break
		}
		if t.Type == ttEOF {
			return nil, unexpected(t, `"}"`)
		}
		s, err := parseStmt(lex)
		if err != nil {
			return nil, err
		}
		b.Stmts = append(b.Stmts, s)
	}
	lex.Next()
	finish(&b.node, first, lex)
	return b, nil
}

// Parse lets Block appear in grammars (lambda bodies, nested blocks).
func (b *Block) Parse(lex *lexer.PeekingLexer) error {
	if !is(lex.Peek(), "{") {
		return participle.NextMatch
	}
	nb, err := parseBlock(lex)
	if err != nil {
		return err
	}
	*b = *nb
	return nil
}

// Grammar returns the EBNF of the statement grammar, for documentation.
func Grammar() string { return stmtParser.String() }

// ---------------------------------------------------------------------------
// Parsing a file

// ParseFile parses a CUDA source. It never panics and fails only for
// input that cannot be a CUDA file at all; syntax slatec does not
// understand inside function bodies is recorded on the function (BodyErr)
// so that only the kernels that need it are refused.
func ParseFile(name string, src []byte) (f *File, err error) {
	return ParseFileWith(name, src, ParseOptions{})
}

// ParseOptions are ParseFileWith's choices.
type ParseOptions struct {
	// DeferBodies leaves the bodies of the functions defined at namespace
	// scope unparsed: their FuncDef.Deferred is set and File.ParseBody
	// parses one when asked, so that a caller that only reports on a file
	// can parse, use and drop one body at a time instead of holding every
	// body's tree at once. Member functions' bodies are parsed as usual.
	DeferBodies bool
	// ShareSource makes the File's text (Text, TokenText and every string
	// taken from them) share src's memory instead of a copy of it: src
	// must then not be changed while the File or anything taken from it is
	// in use.
	ShareSource bool
	// DropSpace leaves the whitespace tokens out of Toks (the gaps between
	// its tokens are then whitespace), which makes Toks about a third
	// smaller: for callers that look only at significant tokens, comments
	// and directives. Printing is unaffected (it follows the source).
	DropSpace bool
	// DropHeads lets the function heads' trees (FuncDef.Head) go once
	// each function is summarised: Func keeps what the analyses read of a
	// head (name, namespaces, specifiers, template and function parameters,
	// __launch_bounds__ and the like, spans). For callers that read only
	// Func; walking and printing skip the missing heads.
	DropHeads bool
}

// ParseFileWith is ParseFile with options.
func ParseFileWith(name string, src []byte, opts ParseOptions) (f *File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, diag.Diagnostic{File: name, Severity: diag.Error,
				Message: fmt.Sprintf("internal error: parser panic: %v (please report this input)", r)}
		}
	}()
	f = &File{Name: name, Src: src}
	f.Toks = lex(src, opts.DropSpace)
	text := string(src)
	if opts.ShareSource && len(src) > 0 {
		text = unsafe.String(&src[0], len(src))
	}
	f.text = text
	lines := diag.NewLines(src)
	f.lineTable = lines
	f.lines = nil
	f.scanDirectives(text)
	if err := f.checkBalance(text, lines); err != nil {
		return nil, err
	}
	f.TypeNames = collectTypeNames(text, f.Toks)

	// The top level is handed the file without the insides of function
	// bodies, which it skips whole; they are parsed one by one below.
	ptoks := bridgeInto(nil, name, text, f.Toks, 0, len(f.Toks), f.TypeNames, bodyInners(text, f.Toks))
	top, perr := topParser.ParseFromLexer(newPeekingLexer(ptoks))
	if perr != nil {
		return nil, participleDiag(name, lines, perr)
	}
	for _, it := range top.Items {
		f.Items = append(f.Items, it.(TopItem))
	}
	f.collectFuncs(text, lines, opts.DeferBodies)
	f.collectMembers(text, lines)
	if !opts.DeferBodies {
		f.bodyToks = nil
	}
	if opts.DropHeads {
		for _, fn := range f.Funcs {
			fn.Def.Head = nil
		}
		for _, fn := range f.Members {
			fn.Def.Head = nil
		}
	}
	return f, nil
}

// Lines returns the line index of the file's source.
func (f *File) Lines() *diag.Lines {
	if f.lineTable == nil {
		f.lineTable = diag.NewLines(f.Src)
	}
	return f.lineTable
}

// ParseBody parses the body of fn, a function of f whose body parsing was
// deferred (FuncDef.Deferred, see ParseOptions), and returns it, or why it
// does not parse; fn.Def is left as it is, so that the tree lives only as
// long as the caller keeps it. The result is what ParseFile would have put
// in Body and BodyErr.
func (f *File) ParseBody(fn *Func) (*Block, *diag.Diagnostic) {
	return f.parseBody(f.text, f.Lines(), fn.BodySpan)
}

// participleDiag turns a participle error into a diagnostic at its offset.
func participleDiag(name string, lines *diag.Lines, err error) diag.Diagnostic {
	off := 0
	msg := err.Error()
	if pe, ok := err.(participle.Error); ok {
		off = pe.Position().Offset
		msg = pe.Message()
	}
	return lines.At(name, off, diag.Error, "%s", cleanMessage(msg))
}

// cleanMessage rewrites participle's messages into a compiler's voice.
func cleanMessage(msg string) string {
	msg = strings.ReplaceAll(msg, "unexpected token ", "unexpected ")
	if i := strings.Index(msg, " (expected "); i >= 0 {
		exp := msg[i+len(" (expected ") : len(msg)-1]
		msg = msg[:i]
		if len(exp) < 60 {
			msg += ", expected " + exp
		}
	}
	if msg == "" {
		msg = "syntax error"
	}
	return "cannot parse: " + msg
}

// tokenIndex returns the index of the first token starting at or after off.
func (f *File) tokenIndex(off int) int {
	return sort.Search(len(f.Toks), func(i int) bool { return int(f.Toks[i].Off) >= off })
}

// Text returns the source text of a span.
func (f *File) Text(s Span) string { return f.text[s.Start:s.End] }

// TokensIn returns the tokens, trivia included, that start at or after
// s.Start and end by s.End: a slice of f.Toks, not a copy.
func (f *File) TokensIn(s Span) []Token {
	from := f.tokenIndex(s.Start)
	to := from
	for to < len(f.Toks) && int(f.Toks[to].End) <= s.End {
		to++
	}
	return f.Toks[from:to]
}

// SignificantTokens returns the non-trivia tokens within span s.
func (f *File) SignificantTokens(s Span) []Token {
	in := f.TokensIn(s)
	n := CountSignificant(in)
	if n == 0 {
		return nil
	}
	out := make([]Token, 0, n)
	for _, t := range in {
		if !t.Kind.IsTrivia() {
			out = append(out, t)
		}
	}
	return out
}

// CountSignificant returns how many of toks are not trivia.
func CountSignificant(toks []Token) int {
	n := 0
	for _, t := range toks {
		if !t.Kind.IsTrivia() {
			n++
		}
	}
	return n
}

// TokenText returns a token's text (a slice of one copy of the source:
// no allocation per token).
func (f *File) TokenText(t Token) string {
	if t.Kind == Punct && t.End-t.Off > 3 {
		return chevronText(f.text[t.Off:t.End])
	}
	return f.text[t.Off:t.End]
}

// parseBody parses a function body with the body grammar.
func (f *File) parseBody(text string, lines *diag.Lines, s Span) (b *Block, d *diag.Diagnostic) {
	defer func() {
		if r := recover(); r != nil {
			dd := lines.At(f.Name, s.Start, diag.Error, "internal error: parser panic in this function: %v", r)
			b, d = nil, &dd
		}
	}()
	from := f.tokenIndex(s.Start)
	to := f.tokenIndex(s.End)
	f.bodyToks = bridgeInto(f.bodyToks, f.Name, text, f.Toks, from, to, f.TypeNames, nil)
	peek := newPeekingLexer(f.bodyToks)
	b, err := parseBlock(peek)
	if err == nil && peek.Peek().Type != ttEOF {
		err = participle.Errorf(peek.Peek().Pos, "unexpected %q", peek.Peek().Value)
	}
	if err != nil {
		dd := participleDiag(f.Name, lines, err)
		return nil, &dd
	}
	return b, nil
}

func diagLines(src []byte) *diag.Lines { return diag.NewLines(src) }
