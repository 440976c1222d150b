package parser

import (
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/slatec/slatec/diag"
)

// Node is implemented by every syntax node.
type Node interface {
	Span() Span
}

// node is embedded in every syntax struct parsed by hand (Parseable types
// and the statement and expression parsers): its span is set from the first
// token and the token after the node; our lexer bridge stores, in Column,
// the end offset of the previous significant token, so the exact span needs
// no post-pass.
type node struct {
	start, end int32
}

func (n *node) Span() Span {
	s := Span{Start: int(n.start), End: int(n.end)}
	if s.End < s.Start {
		s.End = s.Start
	}
	return s
}

// setSpanOf sets a hand-parsed node's span from its first token and the
// token after it. Nodes keep two offsets rather than participle's two
// lexer.Positions (80 bytes with a filename pointer): a big file has
// millions of nodes, and their size and pointers are what its parse costs.
func (n *node) setSpanOf(first, after *lexer.Token) {
	n.start = int32(first.Pos.Offset)
	n.end = int32(after.Pos.Column)
}

// gnode is embedded in the structs the participle grammars fill (those
// with parser tags): participle sets Pos to the first token's position
// and EndPos to the position of the token after the node.
type gnode struct {
	Pos    lexer.Position
	EndPos lexer.Position
}

func (n *gnode) Span() Span {
	s := Span{Start: n.Pos.Offset, End: n.EndPos.Column}
	if s.End < s.Start {
		s.End = s.Start
	}
	return s
}

// ---------------------------------------------------------------------------
// Top level

// File is a parsed source file. Items cover its significant tokens in order;
// the bytes between items are trivia (whitespace, comments, directives).
type File struct {
	Name  string
	Src   []byte
	Toks  []Token // every token, trivia included
	Items []TopItem
	// Funcs lists every function definition found, in source order,
	// including those inside namespaces and extern "C" blocks.
	Funcs []*Func
	// Members are the member functions defined inside class bodies (which
	// the top level keeps opaque), in source order; see collectMembers.
	Members []*Func
	Macros  []*Macro
	// TypeNames are identifiers taken as type names when parsing bodies.
	TypeNames map[string]bool
	// Includes are the file's #include directives in order.
	Includes []*Include
	lines    []int  // byte offset of each line start, for positions
	text     string // Src as a string, sliced by Text and TokenText
	// bodyToks is the buffer function bodies are bridged into while the
	// file is parsed.
	bodyToks []lexer.Token
	// lineTable indexes the lines of Src (Lines).
	lineTable *diag.Lines
}

// topFile is the participle grammar of a file.
type topFile struct {
	gnode
	Items []FileItem `parser:"@@*"`
}

// FileItem is a TopItem or, at file level only, a stray `}`.
type FileItem interface {
	Node
	fileItem()
}

// TopItem is a top-level item: *Namespace, *LinkageBlock, *FuncDef or *Opaque.
type TopItem interface {
	Node
	topItem()
}

// Namespace is `namespace a::b { ... }` (also `inline namespace`, anonymous).
type Namespace struct {
	gnode
	Gate   *blockGate `parser:"@@"`
	Inline bool       `parser:"@'inline'?"`
	Name   []string   `parser:"'namespace' ( @Ident ( '::' @Ident )* )?"`
	Items  []TopItem  `parser:"'{' @@* '}'"`
}

// LinkageBlock is `extern "C" { ... }`.
type LinkageBlock struct {
	gnode
	Gate  *blockGate `parser:"@@"`
	Lang  string     `parser:"'extern' @String"`
	Items []TopItem  `parser:"'{' @@* '}'"`
}

// FuncDef is a function definition at namespace scope. Its body is captured
// as a balanced token run; Body is filled later by ParseBodies for the
// functions that need it (kernels and device functions).
//
// FuncDef is parsed by FuncDef.Parse (funchead.go): the frequent simple
// heads by hand, the others with funcDefGrammar.
type FuncDef struct {
	gnode
	Head    *FuncHead
	BodyRaw *rawBraces
	Body    *Block           // parsed body, nil until parsed or if parsing failed
	BodyErr *diag.Diagnostic // why the body did not parse, if it did not
	// Deferred is set when the body of a kernel or device function was
	// left unparsed (ParseOptions.DeferBodies): File.ParseBody parses it.
	Deferred bool
}

// Opaque is any other top-level construct, kept as a balanced token run:
// declarations, class definitions, using-declarations, macro invocations.
type Opaque struct {
	gnode
	Raw *rawItem `parser:"@@"`
}

func (*Namespace) topItem()    {}
func (*LinkageBlock) topItem() {}
func (*FuncDef) topItem()      {}
func (*Opaque) topItem()       {}
func (*StrayBrace) topItem()   {}

func (*Namespace) fileItem()    {}
func (*LinkageBlock) fileItem() {}
func (*FuncDef) fileItem()      {}
func (*Opaque) fileItem()       {}

// FuncHead is everything of a definition before its body.
type FuncHead struct {
	gnode
	Gate      *funcGate         `parser:"@@"`
	Templates []*TemplateHeader `parser:"@@*"`
	Specs     []HeadSpec        `parser:"@@*"`
	Name      *FuncName         `parser:"@@"`
	Params    *ParamList        `parser:"@@"`
	Trailing  []*Trailing       `parser:"@@*"`
}

// TemplateHeader is `template < ... >`; its contents stay a token run and
// are split into TemplateParams by the parser.
type TemplateHeader struct {
	gnode
	Args *AngleArgs `parser:"'template' @@"`
}

// HeadSpec is one item before the function name: a specifier, an
// attribute, __launch_bounds__ and friends, or a token of the return type.
type HeadSpec interface {
	Node
	headSpec()
}

// LaunchBounds is __launch_bounds__(maxThreads[, minBlocks[, maxBlocksPerCluster]]).
type LaunchBounds struct {
	gnode
	Args []*AssignExpr `parser:"'__launch_bounds__' '(' @@ ( ',' @@ )* ')'"`
}

// ClusterDims is __cluster_dims__(x, y, z).
type ClusterDims struct {
	gnode
	Args []*AssignExpr `parser:"'__cluster_dims__' '(' @@ ( ',' @@ )* ')'"`
}

// MaxNReg is __maxnreg__(n).
type MaxNReg struct {
	gnode
	Args []*AssignExpr `parser:"'__maxnreg__' '(' @@ ')'"`
}

// Attribute is __attribute__((...)), [[...]], __align__(n), alignas(n) or __declspec(...).
type Attribute struct {
	gnode
	Kind string       `parser:"( @'__attribute__' | @'__align__' | @'alignas' | @'__declspec' )"`
	Args *ParenTokens `parser:"@@"`
}

// StdAttribute is a C++11 attribute [[...]].
type StdAttribute struct {
	gnode
	Tokens *BracketTokens `parser:"@@"`
}

// ExternLinkage is `extern "C"` on a single definition.
type ExternLinkage struct {
	gnode
	Lang string `parser:"'extern' @String"`
}

// Word is a specifier keyword or a return-type token.
type Word struct {
	gnode
	Text string `parser:"(?! 'operator' | ( Ident | TypeName ) ( '::' ( Ident | TypeName ) )* '(' ) @( Keyword | Ident | TypeName | '::' | '*' | '&' | '&&' )"`
}

func (*LaunchBounds) headSpec()    {}
func (*ClusterDims) headSpec()     {}
func (*MaxNReg) headSpec()         {}
func (*Attribute) headSpec()       {}
func (*StdAttribute) headSpec()    {}
func (*ExternLinkage) headSpec()   {}
func (*Word) headSpec()            {}
func (*TemplateArgList) headSpec() {}

// FuncName is the (possibly qualified) name of a function, or an operator.
type FuncName struct {
	gnode
	Scope    []string `parser:"( @( Ident | TypeName ) ( '<' ~'>'* '>' )? '::' )*"`
	Operator *OpName  `parser:"( @@"`
	Name     string   `parser:"| '~'? @( Ident | TypeName ) )"`
}

// OpName is the name of an overloaded operator: operator+, operator(), operator float.
type OpName struct {
	gnode
	Text []string `parser:"'operator' ( @( '(' ')' ) | @( '[' ']' ) | @( 'new' | 'delete' ) ( @'[' @']' )? | @Punct | @( Keyword | Ident | TypeName | '*' | '&' )+ )"`
}

// ParamList is a parenthesised parameter list.
type ParamList struct {
	gnode
	Params []*Param `parser:"'(' ( @@ ( ',' @@ )* )? ')'"`
}

// Trailing is what may follow a parameter list: cv-qualifiers, noexcept,
// attributes, a trailing return type.
type Trailing struct {
	gnode
	Text   string        `parser:"( @( 'const' | 'volatile' | 'override' | 'final' | '&' | '&&' | '__restrict__' )"`
	Noexc  *ParenTokens  `parser:"| 'noexcept' @@?"`
	Attr   *Attribute    `parser:"| @@"`
	StdAtr *StdAttribute `parser:"| @@"`
	Arrow  []string      `parser:"| '->' @( ~'{' )+ )"`
}

// ---------------------------------------------------------------------------
// Statements. Blocks, labels, expression statements, declarations and the
// structured statements are parsed by hand (stmt.go); the rest by the
// participle grammars in the struct tags below.

// Stmt is a statement inside a function body.
type Stmt interface {
	Node
	stmt()
}

// Block is `{ ... }`; parsed by parseBlock.
type Block struct {
	node
	Stmts []Stmt
}

// IfStmt is `if (init; cond) then [else else]`. Init is nil, a *DeclStmt
// or an *ExprStmt; CondDecl is set for `if (T x = e)`, Cond otherwise.
type IfStmt struct {
	node
	Constexpr bool
	Init      Stmt
	CondDecl  *DeclStmt
	Cond      *Expr
	Then      Stmt
	Else      Stmt
}

// ForStmt is `for (init; cond; post) body`, or a range-for
// `for (decl : range) body` (RangeDecl and Range set, the others nil).
type ForStmt struct {
	node
	Init      ForInit
	Cond      *Expr
	Post      *Expr
	RangeDecl *DeclStmt
	Range     *Expr
	Body      Stmt
}

// WhileStmt is `while (cond) body`.
type WhileStmt struct {
	node
	Cond *Expr
	Body Stmt
}

// DoStmt is `do body while (cond);`.
type DoStmt struct {
	node
	Body Stmt
	Cond *Expr
}

// SwitchStmt is `switch (init; x) body`; Init and CondDecl as in IfStmt.
type SwitchStmt struct {
	node
	Init     Stmt
	CondDecl *DeclStmt
	Cond     *Expr
	Body     Stmt
}

// CaseStmt is a `case x:` label; the statements after it are siblings.
type CaseStmt struct {
	gnode
	Value *CondExpr `parser:"'case' @@ ':'"`
}

// DefaultStmt is a `default:` label.
type DefaultStmt struct {
	gnode
	Default bool `parser:"@'default' ':'"`
}

// LabelStmt is `name:`; the statement it labels is the next sibling.
// Parsed by parseStmt.
type LabelStmt struct {
	node
	Label string
}

// BreakStmt is `break;`.
type BreakStmt struct {
	node
	Break bool
}

// ContinueStmt is `continue;`.
type ContinueStmt struct {
	node
	Continue bool
}

// ReturnStmt is `return [value];`; a braced value (`return {a, b};`) is
// in Brace.
type ReturnStmt struct {
	node
	Return bool
	Value  *Expr
	Brace  *BraceInit
}

// GotoStmt is `goto label;`.
type GotoStmt struct {
	gnode
	Label string `parser:"'goto' @Ident ';'"`
}

// AsmStmt is GNU inline assembly: asm volatile("..." : outs : ins : clobbers).
// The operand lists are colon-separated sections; the lexer reads "::" as
// one token, so a section may start with two colons (an empty section
// before it). Operands, Inputs and Clobbers sort them out.
type AsmStmt struct {
	gnode
	Keyword  string        `parser:"@( 'asm' | '__asm__' | '__asm' )"`
	Quals    []string      `parser:"@( 'volatile' | '__volatile__' | 'inline' | 'goto' )*"`
	Template []string      `parser:"'(' @String+"`
	Sections []*AsmSection `parser:"@@* ')' ';'"`
}

// AsmSection is one colon-introduced section of an asm statement.
type AsmSection struct {
	gnode
	Colons   string        `parser:"@( ':' | '::' )"`
	Operands []*AsmOperand `parser:"( @@ ( ',' @@ )*"`
	Strings  []string      `parser:"| @String ( ',' @String )*"`
	Labels   []string      `parser:"| @Ident ( ',' @Ident )* )?"`
}

// AsmOperand is `[name] "constraint" (expr)`.
type AsmOperand struct {
	gnode
	Name       string `parser:"( '[' @Ident ']' )?"`
	Constraint string `parser:"@String"`
	Value      *Expr  `parser:"'(' @@ ')'"`
}

// sections returns the sections in order, with "::" expanded into an
// empty section and the one after it.
func (a *AsmStmt) sections() []*AsmSection {
	var out []*AsmSection
	for _, s := range a.Sections {
		if s.Colons == "::" {
			out = append(out, &AsmSection{})
		}
		out = append(out, s)
	}
	return out
}

// Outputs are the output operands.
func (a *AsmStmt) Outputs() []*AsmOperand {
	if ss := a.sections(); len(ss) > 0 {
		return ss[0].Operands
	}
	return nil
}

// Inputs are the input operands.
func (a *AsmStmt) Inputs() []*AsmOperand {
	if ss := a.sections(); len(ss) > 1 {
		return ss[1].Operands
	}
	return nil
}

// Clobbers are the clobbered registers and "memory".
func (a *AsmStmt) Clobbers() []string {
	if ss := a.sections(); len(ss) > 2 {
		return ss[2].Strings
	}
	return nil
}

// DeclStmt declares variables: `const float x = 1, *p = &x;`.
type DeclStmt struct {
	node
	Specs *DeclSpecs
	Decls []*InitDeclarator
}

// OpaqueStmt is a statement slatec does not look into: using, typedef,
// static_assert, local class definitions. It is kept as tokens.
type OpaqueStmt struct {
	gnode
	Keyword string   `parser:"@( 'using' | 'typedef' | 'static_assert' | 'namespace' | 'struct' | 'class' | 'union' | 'enum' )"`
	Raw     *rawStmt `parser:"@@"`
}

// ExprStmt is `expr;`.
type ExprStmt struct {
	node
	X *Expr
}

// MacroStmt is a statement-like macro: `NAME(args) statement`, such as
// CUDA_KERNEL_LOOP(i, n) { ... }. slatec does not expand macros, so it
// treats the statement as a loop of unknown shape around Body.
type MacroStmt struct {
	node
	Name string
	Args *ParenTokens
	Body Stmt
}

// EmptyStmt is `;`.
type EmptyStmt struct {
	node
	Semi bool
}

func (*Block) stmt()        {}
func (*IfStmt) stmt()       {}
func (*ForStmt) stmt()      {}
func (*WhileStmt) stmt()    {}
func (*DoStmt) stmt()       {}
func (*SwitchStmt) stmt()   {}
func (*CaseStmt) stmt()     {}
func (*DefaultStmt) stmt()  {}
func (*LabelStmt) stmt()    {}
func (*BreakStmt) stmt()    {}
func (*ContinueStmt) stmt() {}
func (*ReturnStmt) stmt()   {}
func (*GotoStmt) stmt()     {}
func (*AsmStmt) stmt()      {}
func (*DeclStmt) stmt()     {}
func (*OpaqueStmt) stmt()   {}
func (*ExprStmt) stmt()     {}
func (*EmptyStmt) stmt()    {}
func (*MacroStmt) stmt()    {}

// ForInit is the first clause of a for statement: *DeclStmt, *ExprStmt or *EmptyStmt.
type ForInit interface {
	Stmt
	forInit()
}

func (*DeclStmt) forInit()  {}
func (*ExprStmt) forInit()  {}
func (*EmptyStmt) forInit() {}

// ---------------------------------------------------------------------------
// Declarations (specifiers and declarators are parsed by hand in decl.go)

// DeclSpecs are the specifiers and the type of a declaration.
type DeclSpecs struct {
	node
	Pre   []*DeclQual
	Named *TypeRef
	Basic []string
	Post  []*DeclWord
}

// DeclQual is a qualifier or a storage-class specifier before the type.
type DeclQual struct {
	node
	Word  string
	Align *Attribute
}

// DeclWord is a qualifier, a storage-class specifier, or a basic type
// keyword after the type (`unsigned const int`).
type DeclWord struct {
	node
	Word  string
	Basic string
	Align *Attribute
}

// TypeRef names a type: [struct|class|union|enum|typename] [::] A<..>::B.
type TypeRef struct {
	node
	Tag    string
	Global bool
	Segs   []*NameSeg
}

// NameSeg is one segment of a qualified name, with template arguments.
type NameSeg struct {
	node
	Name string
	Args *TemplateArgList
}

// InitDeclarator is a declarator with an optional initialiser.
type InitDeclarator struct {
	node
	Decl *Declarator
	Init *Initializer
}

// Declarator is `* const p[4]`, `&r`, `(*fp)(int)`.
type Declarator struct {
	node
	Ptrs []*PtrOp
	Name string
	// Bindings are the names of a structured binding: auto [a, b] = p.
	Bindings []string
	Nested   *Declarator
	Fn       *ParamList
	Arrays   []*ArraySuffix
}

// PtrOp is `*`, `&` or `&&` with its qualifiers.
type PtrOp struct {
	node
	Op    string
	Quals []string
}

// ArraySuffix is `[n]` or `[]`.
type ArraySuffix struct {
	node
	Size *Expr
}

// Initializer is `= value`, `{...}` or `(args)`.
type Initializer struct {
	node
	Assign *InitValue
	Brace  *BraceInit
	Ctor   []*AssignExpr
}

// InitValue is a brace initialiser or an expression.
type InitValue struct {
	node
	Brace *BraceInit
	X     *AssignExpr
	// Pack is a trailing `...`: a pack expansion, f(args...).
	Pack bool
}

// BraceInit is `{ a, .b = c, {d} }`.
type BraceInit struct {
	node
	Items []*InitItem
}

// InitItem is one element of a brace initialiser.
type InitItem struct {
	node
	Field string
	Value *InitValue
}

// TemplateParam is one parameter of a template header.
type TemplateParam struct {
	Name   string // "" if unnamed
	IsType bool   // typename/class (or template template parameter)
	Pack   bool   // a parameter pack: typename... Ts
	Text   string // the parameter as written
}

// ---------------------------------------------------------------------------
// Expressions (parsed by hand in expr.go; the grammar is in its header)

// Expr is a comma expression (usually of one item).
type Expr struct {
	node
	List []*AssignExpr
}

// AssignExpr is `lhs op= rhs` or a conditional expression.
type AssignExpr struct {
	node
	Left  *CondExpr
	Op    string
	Right *InitValue
}

// CondExpr is `c ? a : b` or a binary expression.
type CondExpr struct {
	node
	Bin  *BinaryExpr
	Then *Expr
	Else *AssignExpr
}

// BinaryExpr is a flat run `a op b op c`; Tree() rebuilds precedence.
// Keeping it flat makes the grammar one level deep instead of ten.
type BinaryExpr struct {
	node
	First *CastExpr
	Rest  []*BinRHS
}

// BinRHS is one `op operand` of a BinaryExpr.
type BinRHS struct {
	node
	Op string
	X  *CastExpr
}

// CastExpr is a C cast `(T)x` or a unary expression.
type CastExpr struct {
	node
	Type  *CastType
	Cast  *CastExpr
	Unary *UnaryExpr
}

// UnaryExpr is a prefix operator applied to an operand, sizeof/alignof, or
// a postfix expression.
type UnaryExpr struct {
	node
	Op      string
	Operand *CastExpr
	Sizeof  *SizeofExpr
	New     *NewExpr
	Delete  *DeleteExpr
	Postfix *PostfixExpr
}

// NewExpr is `::`? `new` (placement)? type ([n])* (init)?: device-side
// allocation, placement new, `new T[n]`.
type NewExpr struct {
	node
	Global    bool
	Placement *CallArgs    // new (buf) T
	TypeParen *ParenTokens // new (T)
	Type      *DeclSpecs   // new T
	Ptrs      []*PtrOp
	Arrays    []*ArraySuffix
	Init      *CallArgs // T(args)
	Brace     *BraceInit
}

// DeleteExpr is `::`? `delete` `[]`? operand.
type DeleteExpr struct {
	node
	Global  bool
	Array   bool
	Operand *CastExpr
}

// SizeofExpr is sizeof/alignof of a type or an expression; the operand is
// not evaluated, so it stays a token run.
type SizeofExpr struct {
	node
	Op      string
	Pack    bool
	Paren   *ParenTokens
	Operand *UnaryExpr
}

// PostfixExpr is a primary expression followed by calls, indexing,
// member accesses and increments.
type PostfixExpr struct {
	node
	X   *Primary
	Ops []*PostfixOp
}

// PostfixOp is one postfix operation.
type PostfixOp struct {
	node
	Index  *Expr
	Call   *CallArgs
	Member *MemberAccess
	Incr   string
	// Launch is the configuration of a device-side launch k<<<g, b>>>
	// (dynamic parallelism); the call's arguments follow as a Call.
	Launch []*AssignExpr
}

// CallArgs is `(a, b)`.
type CallArgs struct {
	node
	Args []*InitValue
}

// MemberAccess is `.name`, `->name`, `.template name<T>`.
type MemberAccess struct {
	node
	Arrow bool
	Name  string
	Args  *ExprTemplateArgs
}

// Primary is a literal, a name, a parenthesised expression, a C++ cast, a
// lambda, or a functional cast/brace construction `float4{...}`.
type Primary struct {
	node
	Number  string
	Strings []string
	// StringMacros are the macro names between adjacent string literals
	// ("%d" PRId64 "\n", FMT "x"): they expand to strings.
	StringMacros []string
	Char         string
	Keyword      string
	Paren        *Expr
	CppCast      *CppCast
	Lambda       *Lambda
	Brace        *BraceInit
	Name         *QualName
	Basic        string
	Constr       *BraceInit
	// Ellipsis is `...` standing for the pack in a fold expression (a + ... + xs).
	Ellipsis bool
}

// QualName is an identifier, possibly qualified and with template arguments:
// x, cg::this_thread_block, std::min<float>, ::atomicAdd.
type QualName struct {
	node
	Global bool
	Segs   []*ExprNameSeg
}

// ExprNameSeg is a NameSeg in an expression, where `<` starts template
// arguments only when the closing `>` is followed by `(`, `::` or `{`.
type ExprNameSeg struct {
	node
	Name string
	Args *ExprTemplateArgs
}

// CppCast is static_cast<T>(x) and friends.
type CppCast struct {
	node
	Kind string
	Type *AngleArgs
	X    *Expr
}

// Lambda is `[captures](params) mutable -> T { body }`.
type Lambda struct {
	node
	Captures *BracketTokens
	Params   *ParenTokens
	Specs    []string
	Ret      []string
	Body     *Block
}
