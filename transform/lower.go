package transform

// Return-before-sync lowering (DESIGN.md, persistent transform, rule 4).
//
// Natively, a thread that returns has exited, and barriers and warp
// collectives stop waiting for it. In a persistent worker the kernel body is
// a function called once per logical block, so a returned thread is alive:
// it would skip the barriers the others wait at, or meet them at the next
// logical block's barriers. Such returns are lowered to an "inactive"
// predicate:
//
//   - `return;` becomes `slate_active = false;` (plus a jump past the rest of
//     the enclosing sync-free statement when the return is not its last act);
//   - a statement without sync points after a possible return runs only for
//     active threads: `if (slate_active) { ... }`;
//   - statements with sync points, and the control flow around them (which
//     CUDA already requires to be uniform), run for all threads; block and
//     warp votes count inactive threads as exited ones would be counted:
//     __syncthreads_count(p) -> __syncthreads_count(slate_active && (p));
//     what such a statement reads through a pointer is read by active
//     threads only: `__shfl_sync(m, p[i], 0)` -> `__shfl_sync(m,
//     (slate_active ? (p[i]) : T()), 0)`; a store it makes must be to the
//     thread's own variables (`out[i] = __shfl_sync(...)` is refused); and
//     a helper it calls that synchronises must be a pure collective, such
//     as a warp reduction (inactive.go);
//   - declarations keep their scope: a declaration whose initialiser is safe
//     for inactive threads stays; any other is split into `T x{};` and a
//     guarded assignment.
//
// A lowering is refused, with the line, when inactive threads would have to
// evaluate something unsafe: a loop or branch condition around a sync point
// that reads memory, calls a function, or reads a variable computed by
// guarded code; a break or continue in a loop with sync points; a helper
// that synchronises called after a return; and the like.

import (
	"fmt"
	"strings"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/parser"
)

type lowerer struct {
	a     *Analysis
	k     *KernelInfo
	f     *parser.File
	sites []parser.Span // sync points in the body
	rets  map[int]bool  // start offsets of returns that precede a sync point
	edits []emit.Edit
	errs  []diag.Diagnostic
	label int
	// Names the lowering must reason about.
	shared map[string]bool // __shared__ variables: not tainted by guarded writes
	// Facts computed once per body (each walk of the tree is costly).
	locals    map[string]bool // names declared in the body, and parameters
	arrays    map[string]int  // local arrays declared in the body: their dimensions
	refs      map[string]bool // references declared in the body
	retsCache map[parser.Node][]*parser.ReturnStmt
	// Taint: a variable whose value may differ for inactive threads.
	assigned map[string]bool  // assigned by guarded code
	escaped  map[string]bool  // locals written through what aliases them (escapedLocals)
	defs     []varDef         // unguarded definitions: var <- idents
	checks   []conditionCheck // conditions inactive threads evaluate
}

type varDef struct {
	name string
	uses []string
}

type conditionCheck struct {
	x    parser.Node
	what string // "loop condition", "branch condition", ...
}

// LowerOptions adapt the lowering to the merged (Liang) kernel, whose
// idle threads (beyond a kernel's block size) are inactive from the start.
type LowerOptions struct {
	// Active is the initial value of slate_active ("true" for the
	// persistent transform; e.g. "slate_tid < 256" in a merged body).
	Active string
	// StartInactive says threads may be inactive on entry: every statement
	// without a sync point is guarded, and conditions are checked from the top.
	StartInactive bool
	// AllReturns lowers every return, not only those before a sync point.
	AllReturns bool
}

// lowerKernel computes the edits that lower the kernel body's returns, or
// the reasons it cannot. The edits are absolute offsets in the main file.
func (a *Analysis) lowerKernel(k *KernelInfo) ([]emit.Edit, []diag.Diagnostic) {
	return a.Lower(k, LowerOptions{Active: "true"})
}

// Lower computes the predication edits of a kernel body under opts.
func (a *Analysis) Lower(k *KernelInfo, opts LowerOptions) ([]emit.Edit, []diag.Diagnostic) {
	if k.Func.Def.Body == nil {
		return nil, []diag.Diagnostic{a.at(k.Func.BodySpan.Start, diag.Error, "kernel %s: its body did not parse", k.Func.Name)}
	}
	body := k.Func.Def.Body
	l := &lowerer{a: a, k: k, f: a.File, rets: map[int]bool{}, shared: map[string]bool{},
		assigned: map[string]bool{}}
	l.sites = append(a.syncSites(k.Func), k.OpaqueSync...)
	for _, r := range k.Returns {
		if r.BeforeSync && !r.Uniform || opts.AllReturns {
			l.rets[r.Span.Start] = true
		}
	}
	for _, s := range k.Shared {
		l.shared[s.Name] = true
	}
	l.indexBody(body)
	l.escapedLocals(body)
	for _, s := range a.FileShared {
		l.shared[s.Name] = true
	}
	active := opts.Active
	if active == "" {
		active = "true"
	}
	// A lambda that synchronises does so where it is called, which this
	// analysis does not follow: refuse rather than guess.
	parser.Walk(body, func(n parser.Node) bool {
		if lam, ok := n.(*parser.Lambda); ok {
			if l.hasSync(lam) {
				l.errorf(lam, "cannot lower an early return: this lambda synchronises, and slatec does not follow where it is called")
			}
			return false
		}
		return true
	})
	l.edits = append(l.edits, emit.Insert(body.Span().Start+1, " bool slate_active = "+active+";", "lower"))
	l.list(body.Stmts, opts.StartInactive, false)
	l.checkConditions()
	if len(l.errs) > 0 {
		return nil, l.errs
	}
	return l.edits, nil
}

func (l *lowerer) errorf(n parser.Node, format string, args ...any) {
	d := l.a.at(n.Span().Start, diag.Error, format, args...)
	// Point at the first lowered return as well.
	for _, r := range l.k.Returns {
		if r.BeforeSync && !r.Uniform {
			d.Notes = append(d.Notes, l.a.at(r.Span.Start, diag.Note, "this return precedes a barrier or warp-synchronous operation, so it must be lowered"))
			break
		}
	}
	l.errs = append(l.errs, d)
}

func (l *lowerer) text(n parser.Node) string { return l.f.Text(n.Span()) }

func (l *lowerer) hasSync(n parser.Node) bool {
	s := n.Span()
	for _, x := range l.sites {
		if s.Contains(x) {
			return true
		}
	}
	return false
}

// indexBody records, in one walk, the body's local names and arrays and
// which statements contain lowered returns.
func (l *lowerer) indexBody(body *parser.Block) {
	l.locals, l.arrays, l.refs = map[string]bool{}, map[string]int{}, map[string]bool{}
	l.retsCache = map[parser.Node][]*parser.ReturnStmt{}
	for _, p := range l.k.Func.Params {
		if p.Name != "" {
			l.locals[p.Name] = true
		}
	}
	var visit func(n parser.Node) []*parser.ReturnStmt
	visit = func(n parser.Node) []*parser.ReturnStmt {
		var rets []*parser.ReturnStmt
		switch c := n.(type) {
		case *parser.Lambda:
			return nil
		case *parser.Declarator:
			if name := declName(c); name != "" {
				l.locals[name] = true
				if c.Name == name && len(c.Arrays) > 0 {
					l.arrays[name] = len(c.Arrays)
				}
				if hasRef(c) {
					l.refs[name] = true
				}
			}
		case *parser.ReturnStmt:
			if l.rets[c.Span().Start] {
				rets = append(rets, c)
			}
		}
		for _, ch := range parser.Children(n) {
			rets = append(rets, visit(ch)...)
		}
		if _, ok := n.(parser.Stmt); ok {
			l.retsCache[n] = rets
		}
		return rets
	}
	visit(body)
}

// returnsIn lists the lowered returns inside statement n (not inside lambdas).
func (l *lowerer) returnsIn(n parser.Node) []*parser.ReturnStmt {
	if r, ok := l.retsCache[n]; ok {
		return r
	}
	var out []*parser.ReturnStmt
	parser.Walk(n, func(c parser.Node) bool {
		switch c := c.(type) {
		case *parser.Lambda:
			return false
		case *parser.ReturnStmt:
			if l.rets[c.Span().Start] {
				out = append(out, c)
			}
		}
		return true
	})
	return out
}

// list lowers a statement list. inactive says whether a thread may already
// be inactive on entry; single marks the one statement of an unbraced
// branch or loop body. It returns whether a thread may be inactive after.
func (l *lowerer) list(stmts []parser.Stmt, inactive, single bool) bool {
	var run []parser.Stmt // consecutive statements to guard together
	flush := func() {
		if len(run) == 0 {
			return
		}
		start, lead := l.openAt(run[0])
		end := run[len(run)-1].Span().End
		open, close := "if (slate_active) { ", " }"
		if single {
			open, close = "{ if (slate_active) { ", " } }"
		}
		if lead != "" {
			open = lead + strings.TrimRight(open, " ")
		}
		l.edits = append(l.edits, emit.Insert(start, open, "guard"), emit.Insert(end, close, "guard"))
		for _, s := range run {
			l.noteAssigned(s)
		}
		run = nil
	}
	for _, s := range stmts {
		sync := l.hasSync(s)
		rets := l.returnsIn(s)
		switch {
		case !sync && len(rets) == 0:
			if !inactive {
				l.noteUnguarded(s)
				continue
			}
			switch s := s.(type) {
			case *parser.DeclStmt:
				flush()
				l.decl(s)
			case *parser.LabelStmt, *parser.CaseStmt, *parser.DefaultStmt:
				flush()
				l.errorf(s, "cannot lower an early return: a label follows it here")
			case *parser.OpaqueStmt:
				flush()
				if strings.Contains(l.text(s), "=") && s.Keyword != "using" && s.Keyword != "typedef" && s.Keyword != "static_assert" {
					l.errorf(s, "cannot lower an early return: this declaration after it is not understood by slatec")
				}
			case *parser.EmptyStmt:
			case *parser.ReturnStmt:
				// A return the whole block takes together (not lowered):
				// threads inactive since an earlier return leave too.
				flush()
			case *parser.ExprStmt:
				// Pure local bookkeeping (++it, cur = 1 - cur) runs for all
				// threads: loop counters stay valid for inactive ones.
				if l.safeStmt(s) {
					flush()
					l.noteUnguarded(s)
					continue
				}
				run = append(run, s)
			default:
				run = append(run, s)
			}
		case !sync:
			flush()
			l.returnStmt(s, rets, inactive, single)
			inactive = true
		default:
			flush()
			inactive = l.syncStmt(s, inactive)
		}
	}
	flush()
	return inactive
}

// returnStmt rewrites the returns inside a statement with no sync point.
func (l *lowerer) returnStmt(s parser.Stmt, rets []*parser.ReturnStmt, inactive, single bool) {
	needLabel := ""
	for _, r := range rets {
		if r.Value != nil || r.Brace != nil {
			l.errorf(r, "cannot lower a return with a value")
			continue
		}
		if l.isTail(s, r) {
			l.edits = append(l.edits, emit.Replace(r.Span().Start, r.Span().End, "{ slate_active = false; }", "return"))
			continue
		}
		if needLabel == "" {
			l.label++
			needLabel = fmt.Sprintf("slate_done_%d", l.label)
		}
		l.edits = append(l.edits, emit.Replace(r.Span().Start, r.Span().End,
			"{ slate_active = false; goto "+needLabel+"; }", "return"))
	}
	sp := s.Span()
	if inactive {
		open, close := "if (slate_active) { ", " }"
		if single {
			open, close = "{ if (slate_active) { ", " } }"
		}
		at, lead := l.openAt(s)
		if lead != "" {
			open = lead + strings.TrimRight(open, " ")
		}
		l.edits = append(l.edits, emit.Insert(at, open, "guard"))
		if needLabel != "" {
			l.edits = append(l.edits, emit.Insert(sp.End, " "+needLabel+":;", "label"))
		}
		l.edits = append(l.edits, emit.Insert(sp.End, close, "guard"))
	} else if needLabel != "" {
		if single {
			l.edits = append(l.edits, emit.Insert(sp.Start, "{ ", "label"), emit.Insert(sp.End, " "+needLabel+":; }", "label"))
		} else {
			l.edits = append(l.edits, emit.Insert(sp.End, " "+needLabel+":;", "label"))
		}
	}
	l.noteAssigned(s)
}

// openAt is where a guard opening before statement s goes: before s, or,
// when #pragma lines (#pragma unroll) precede s, right after the last code
// before them, so the pragmas still apply to s. A directive must start its
// line and no line is added, so #line stays exact. lead is the space to
// put before the guard in that case.
func (l *lowerer) openAt(s parser.Node) (at int, lead string) {
	at = s.Span().Start
	toks := l.f.Toks
	sawPragma := false
	j := sortSearchTok(toks, at) - 1
	for ; j >= 0; j-- {
		t := toks[j]
		if t.Kind == parser.Space || t.Kind == parser.Comment {
			continue
		}
		if t.Kind == parser.Directive && isPragma(l.f.TokenText(t)) {
			sawPragma = true
			continue
		}
		break
	}
	if sawPragma && j >= 0 {
		return int(toks[j].End), " "
	}
	return at, ""
}

func isPragma(directive string) bool {
	s := strings.TrimLeft(directive, " \t")
	s = strings.TrimPrefix(s, "#")
	return strings.HasPrefix(strings.TrimLeft(s, " \t"), "pragma")
}

// sortSearchTok returns the index of the first token starting at or after off.
func sortSearchTok(toks []parser.Token, off int) int {
	lo, hi := 0, len(toks)
	for lo < hi {
		m := (lo + hi) / 2
		if int(toks[m].Off) < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// isTail reports whether nothing in s runs after r: r ends its block and
// every enclosing statement up to s, with no loop or switch in between.
func (l *lowerer) isTail(s parser.Stmt, r *parser.ReturnStmt) bool {
	var path []parser.Node
	var find func(n parser.Node) bool
	find = func(n parser.Node) bool {
		path = append(path, n)
		if n == parser.Node(r) {
			return true
		}
		for _, c := range parser.Children(n) {
			if c.Span().Contains(r.Span()) && find(c) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if !find(s) {
		return false
	}
	for i := 0; i+1 < len(path); i++ {
		parent, child := path[i], path[i+1]
		switch p := parent.(type) {
		case *parser.Block:
			if len(p.Stmts) == 0 || p.Stmts[len(p.Stmts)-1] != child {
				return false
			}
		case *parser.IfStmt:
			if child != parser.Node(p.Then) && child != parser.Node(p.Else) {
				return false
			}
		case *parser.ReturnStmt:
		default:
			return false
		}
	}
	return true
}

// decl handles a declaration that inactive threads may reach. An
// initialiser that is not safe for inactive threads is hoisted: the
// declarator is value-initialised and assigned under the guard after the
// declaration. A safe initialiser that reads a hoisted declarator of the
// same declaration (`float a = in[i], b = 0.5f * a;`) is moved after that
// guard too, unguarded, so that it still sees the value: the assignments
// after the declaration keep the declarators' order.
func (l *lowerer) decl(d *parser.DeclStmt) {
	for _, q := range d.Specs.Pre {
		switch q.Word {
		case "static", "extern", "__shared__", "__constant__", "constexpr":
			return // no per-thread initialisation to guard
		}
	}
	type step struct {
		assign  string
		guarded bool
	}
	var steps []step
	moved := map[string]bool{} // declarators assigned after the declaration
	topConst := hasWord(d.Specs, "const")
	for _, id := range d.Decls {
		if id.Init == nil {
			continue
		}
		var init parser.Node
		switch {
		case id.Init.Assign != nil:
			init = id.Init.Assign
		case id.Init.Brace != nil:
			init = id.Init.Brace
		default:
			if len(id.Init.Ctor) == 1 {
				init = id.Init.Ctor[0]
			}
		}
		name := declName(id.Decl)
		guarded := true
		if init != nil && l.safe(init) {
			l.defs = append(l.defs, varDef{name: name, uses: l.idents(init)})
			if !readsAny(l.idents(init), moved) {
				continue
			}
			guarded = false // safe, but must follow the guarded assignment it reads
		}
		what := "initialised after it"
		if !guarded {
			what = "initialised from " + strings.Join(sortedKeys(moved), ", ") + ", which is assigned after the declaration; declare it separately"
		}
		switch {
		case name == "":
			l.errorf(id, "cannot lower an early return: declarator too complex to split")
			continue
		case len(id.Decl.Arrays) > 0:
			if guarded {
				l.errorf(id, "cannot lower an early return: the array %s is initialised after it; declare it before the return or initialise it element by element", name)
			} else {
				l.errorf(id, "cannot lower an early return: the array %s is %s", name, what)
			}
			continue
		case hasRef(id.Decl):
			if guarded {
				l.errorf(id, "cannot lower an early return: the reference %s is bound after it; bind it before the return or use a pointer", name)
			} else {
				l.errorf(id, "cannot lower an early return: the reference %s is %s", name, what)
			}
			continue
		}
		// Hoist: keep the declaration, value-initialised; assign after it.
		var assign string
		switch {
		case id.Init.Assign != nil:
			assign = name + " = " + l.text(id.Init.Assign) + ";"
		case id.Init.Brace != nil:
			assign = name + " = decltype(" + name + ")" + l.text(id.Init.Brace) + ";"
		default:
			assign = name + " = decltype(" + name + ")" + l.f.Text(parser.Span{Start: id.Init.Span().Start, End: id.Init.Span().End}) + ";"
		}
		l.edits = append(l.edits, emit.Replace(id.Init.Span().Start, id.Init.Span().End, "{}", "hoist"))
		// Drop constness the assignment needs: `const T x` and `T* const p`.
		if topConst && len(id.Decl.Ptrs) == 0 {
			l.dropConst(d)
			topConst = false
		}
		for _, p := range id.Decl.Ptrs {
			for range p.Quals {
				if strings.Contains(l.text(p), "const") {
					l.errorf(p, "cannot lower an early return: the const pointer %s is %s", name, what)
				}
			}
		}
		if d.Specs.Named == nil && len(d.Specs.Basic) == 1 && d.Specs.Basic[0] == "auto" {
			if len(d.Decls) > 1 {
				l.errorf(d, "cannot lower an early return: split this auto declaration into one per line")
				continue
			}
			// auto x{} would deduce nothing: spell the type.
			l.edits = append(l.edits, emit.Replace(autoSpan(l.f, d), autoSpan(l.f, d)+len("auto"),
				"typename slate_plain<decltype("+l.text(initExpr(id))+")>::type", "hoist"))
		}
		steps = append(steps, step{assign, guarded})
		moved[name] = true
		if guarded {
			l.assigned[name] = true
		}
	}
	var b strings.Builder
	for i := 0; i < len(steps); {
		if !steps[i].guarded {
			b.WriteString(" " + steps[i].assign)
			i++
			continue
		}
		b.WriteString(" if (slate_active) {")
		for ; i < len(steps) && steps[i].guarded; i++ {
			b.WriteString(" " + steps[i].assign)
		}
		b.WriteString(" }")
	}
	if b.Len() > 0 {
		l.edits = append(l.edits, emit.Insert(d.Span().End, b.String(), "hoist"))
	}
}

func readsAny(uses []string, names map[string]bool) bool {
	for _, u := range uses {
		if names[u] {
			return true
		}
	}
	return false
}

func initExpr(id *parser.InitDeclarator) parser.Node {
	if id.Init.Assign != nil {
		return id.Init.Assign
	}
	if id.Init.Brace != nil {
		return id.Init.Brace
	}
	return id.Init
}

func autoSpan(f *parser.File, d *parser.DeclStmt) int {
	for _, t := range f.SignificantTokens(d.Specs.Span()) {
		if f.TokenText(t) == "auto" {
			return int(t.Off)
		}
	}
	return d.Specs.Span().Start
}

func hasWord(ds *parser.DeclSpecs, w string) bool {
	for _, q := range ds.Pre {
		if q.Word == w {
			return true
		}
	}
	for _, q := range ds.Post {
		if q.Word == w {
			return true
		}
	}
	return false
}

func (l *lowerer) dropConst(d *parser.DeclStmt) {
	for _, q := range d.Specs.Pre {
		if q.Word == "const" {
			l.edits = append(l.edits, emit.Replace(q.Span().Start, q.Span().End, "/*const*/", "hoist"))
		}
	}
	for _, q := range d.Specs.Post {
		if q.Word == "const" {
			l.edits = append(l.edits, emit.Replace(q.Span().Start, q.Span().End, "/*const*/", "hoist"))
		}
	}
}

func hasRef(d *parser.Declarator) bool {
	for _, p := range d.Ptrs {
		if p.Op == "&" || p.Op == "&&" {
			return true
		}
	}
	return d.Nested != nil
}

func declName(d *parser.Declarator) string {
	if d.Name != "" {
		return d.Name
	}
	if d.Nested != nil {
		return declName(d.Nested)
	}
	return ""
}

// syncStmt handles a statement with sync points. It runs for all threads.
func (l *lowerer) syncStmt(s parser.Stmt, inactive bool) bool {
	switch s := s.(type) {
	case *parser.Block:
		return l.list(s.Stmts, inactive, false)
	case *parser.IfStmt:
		l.condHead(s.Init, s.CondDecl)
		l.cond(s.Cond, "branch condition")
		a := l.branch(s.Then, inactive)
		b := inactive
		if s.Else != nil {
			b = l.branch(s.Else, inactive)
		}
		return a || b
	case *parser.ForStmt:
		in := inactive || len(l.returnsIn(s.Body)) > 0
		if s.Range != nil {
			if in {
				l.errorf(s, "cannot lower an early return: threads that returned would have to iterate this range-for, which reads memory")
			}
			return in
		}
		if in {
			if s.Cond == nil {
				l.errorf(s, "cannot lower an early return inside this loop: it has no condition, so threads that returned could never leave it")
			}
			l.loopExits(s, s.Body)
		}
		if s.Init != nil {
			switch init := s.Init.(type) {
			case *parser.DeclStmt:
				for _, id := range init.Decls {
					if id.Init != nil {
						l.cond(initExpr(id), "loop initialisation")
						l.defs = append(l.defs, varDef{name: declName(id.Decl), uses: l.idents(initExpr(id))})
					}
				}
			case *parser.ExprStmt:
				l.cond(init.X, "loop initialisation")
				l.noteHeaderAssign(init.X)
			}
		}
		if s.Cond != nil {
			l.cond(s.Cond, "loop condition")
		}
		if s.Post != nil {
			l.cond(s.Post, "loop increment")
			l.noteHeaderAssign(s.Post)
		}
		l.branch(s.Body, in)
		return in
	case *parser.WhileStmt:
		return l.condLoop(s, s.Cond, s.Body, inactive)
	case *parser.DoStmt:
		return l.condLoop(s, s.Cond, s.Body, inactive)
	case *parser.ExprStmt:
		if inactive {
			l.syncExpr(s, s.X)
		}
		return inactive
	case *parser.MacroStmt:
		if inactive || len(l.returnsIn(s.Body)) > 0 {
			l.errorf(s, "cannot lower an early return: the statement macro %s hides control flow around a barrier", s.Name)
		}
		return inactive
	case *parser.DeclStmt:
		if inactive {
			for _, id := range s.Decls {
				if id.Init != nil {
					l.syncExpr(s, initExpr(id))
					l.defs = append(l.defs, varDef{name: declName(id.Decl), uses: l.idents(initExpr(id))})
				}
			}
		}
		return inactive
	case *parser.AsmStmt:
		return inactive // bar.sync and friends: all threads take part
	case *parser.ReturnStmt:
		return inactive
	default:
		if inactive {
			l.errorf(s, "cannot lower an early return: a barrier or warp-synchronous operation sits in this %s", stmtKind(s))
		}
		return inactive
	}
}

// condLoop handles a while or do loop with sync points: threads that
// returned keep iterating with the others, so the condition must let them
// leave.
func (l *lowerer) condLoop(loop parser.Stmt, cond *parser.Expr, body parser.Stmt, inactive bool) bool {
	in := inactive || len(l.returnsIn(body)) > 0
	if in {
		if isConstTrue(l.text(cond)) {
			l.errorf(loop, "cannot lower an early return inside this loop: its condition is always true, so threads that returned could never leave it")
		}
		l.loopExits(loop, body)
	}
	l.cond(cond, "loop condition")
	l.branch(body, in)
	return in
}

// condHead records an if/switch init-statement and condition declaration,
// which inactive threads evaluate too.
func (l *lowerer) condHead(init parser.Stmt, condDecl *parser.DeclStmt) {
	for _, d := range []parser.Stmt{init, condDecl} {
		switch d := d.(type) {
		case *parser.DeclStmt:
			if d == nil {
				continue
			}
			for _, id := range d.Decls {
				if id.Init != nil {
					l.cond(initExpr(id), "condition initialisation")
					l.defs = append(l.defs, varDef{name: declName(id.Decl), uses: l.idents(initExpr(id))})
				}
			}
		case *parser.ExprStmt:
			if d == nil {
				continue
			}
			l.cond(d.X, "condition initialisation")
			l.noteHeaderAssign(d.X)
		}
	}
}

// branch lowers a branch or loop body, braced or not.
func (l *lowerer) branch(s parser.Stmt, inactive bool) bool {
	if b, ok := s.(*parser.Block); ok {
		return l.list(b.Stmts, inactive, false)
	}
	return l.list([]parser.Stmt{s}, inactive, true)
}

// loopExits refuses break and continue that leave or skip part of a loop
// with sync points: threads that returned would not take them.
func (l *lowerer) loopExits(loop parser.Stmt, body parser.Stmt) {
	var visit func(n parser.Node, depth int)
	visit = func(n parser.Node, depth int) {
		switch n := n.(type) {
		case *parser.Lambda:
			return
		case *parser.ForStmt, *parser.WhileStmt, *parser.DoStmt, *parser.MacroStmt:
			for _, c := range parser.Children(n) {
				visit(c, depth+1)
			}
			return
		case *parser.SwitchStmt:
			// break inside a switch leaves the switch; continue still counts.
			parser.Walk(n.Body, func(c parser.Node) bool {
				if _, ok := c.(*parser.ContinueStmt); ok && depth == 0 {
					l.errorf(c, "cannot lower an early return: this continue skips barriers that threads which returned still reach")
				}
				switch c.(type) {
				case *parser.ForStmt, *parser.WhileStmt, *parser.DoStmt, *parser.Lambda:
					return false
				}
				return true
			})
			return
		case *parser.BreakStmt:
			if depth == 0 {
				l.errorf(n, "cannot lower an early return: this break leaves a loop with barriers that threads which returned still run")
			}
		case *parser.ContinueStmt:
			if depth == 0 {
				l.errorf(n, "cannot lower an early return: this continue skips barriers that threads which returned still reach")
			}
		case *parser.GotoStmt:
			l.errorf(n, "cannot lower an early return: goto in a loop with barriers")
		}
		for _, c := range parser.Children(n) {
			visit(c, depth)
		}
	}
	visit(body, 0)
}

func isConstTrue(s string) bool {
	s = strings.TrimSpace(s)
	return s == "true" || s == "1" || s == "(true)" || s == "(1)"
}

func stmtKind(s parser.Stmt) string {
	switch s.(type) {
	case *parser.SwitchStmt:
		return "switch"
	case *parser.LabelStmt:
		return "labelled statement"
	case *parser.GotoStmt:
		return "goto"
	}
	return "statement"
}

// Votes whose predicate must count inactive threads as absent, and the
// form that does it.
var votePredicate = map[string]string{
	"__syncthreads_count": "slate_active && (%s)",
	"__syncthreads_or":    "slate_active && (%s)",
	"__syncthreads_and":   "!slate_active || (%s)",
	"__ballot_sync":       "slate_active && (%s)",
	"__any_sync":          "slate_active && (%s)",
	"__all_sync":          "!slate_active || (%s)",
}

// uniformResults are sync operations whose result is the same for all
// participating threads, so it is valid for inactive threads too.
var uniformResults = map[string]bool{
	"__syncthreads_count": true, "__syncthreads_or": true, "__syncthreads_and": true,
	"__ballot_sync": true, "__any_sync": true, "__all_sync": true, "__uni_sync": true,
}

// syncExpr checks an expression statement or initialiser with sync points
// that inactive threads will run: it may only assign local variables, and
// it may call only sync operations and pure functions.
func (l *lowerer) syncExpr(stmt parser.Stmt, x parser.Node) {
	uniform := true
	ok := true
	// Vote predicates, rewritten whole to slate_active && (p): what they
	// read, threads that returned do not evaluate.
	votes := map[parser.Node]bool{}
	parser.Walk(x, func(n parser.Node) bool {
		if votes[n] {
			return false
		}
		switch n := n.(type) {
		case *parser.Lambda:
			ok = false
			return false
		case *parser.SizeofExpr:
			return false // reads nothing
		case *parser.PostfixExpr:
			if l.readsMemory(n) {
				l.guardRead(n)
				return false
			}
			name := calleeName(n)
			// A warp collective's mask must be the same for the threads
			// that returned: a mask loaded from memory would be theirs to
			// load (guarded, it would be 0, and they would not be in it).
			if args := callArgs(n); strings.HasSuffix(name, "_sync") && warpSyncFuncs[name] && args != nil && len(args.Args) > 0 &&
				l.readsAnyMemory(args.Args[0]) {
				l.errorf(args.Args[0], "cannot lower an early return: threads that returned must run this %s with the others, but its mask is read from memory; compute the mask before the return", name)
				return false
			}
			if name == "" {
				return true
			}
			args := callArgs(n)
			switch {
			case votePredicate[name] != "" && args != nil:
				pred := args.Args[len(args.Args)-1]
				if name == "__syncthreads_count" || name == "__syncthreads_or" || name == "__syncthreads_and" {
					pred = args.Args[0]
				}
				if l.hasSync(pred) {
					l.errorf(pred, "cannot lower an early return: threads that returned must synchronise inside this %s's predicate, which they do not evaluate", name)
				}
				l.edits = append(l.edits, emit.Replace(pred.Span().Start, pred.Span().End,
					fmt.Sprintf(votePredicate[name], l.text(pred)), "vote"))
				votes[pred] = true
			case strings.HasPrefix(name, "__match_") || strings.HasPrefix(name, "__reduce_"):
				l.errorf(n, "cannot lower an early return: %s would count threads that returned", name)
			case blockBarrierFuncs[name] || warpSyncFuncs[name] || pureFuncs[name] || isMemberSync(n) ||
				name == "sync" || cgCollectives[name] || cgFunctors[name]:
			default:
				if l.isSyncHelperCall(n) {
					// A pure collective (a warp reduction) runs for every
					// thread, as a shuffle does; its arguments' reads are
					// guarded below.
					condParams, safe := l.a.inactiveSafe(name)
					if !safe {
						l.errorf(n, "cannot lower an early return: %s synchronises, and slatec cannot run it for threads that returned (it touches memory, writes more than its own variables, or decides its control flow from its arguments)", name)
					}
					// The tiles its loops run on: the returned threads
					// must pass their warp's, as for a condition.
					if args := callArgs(n); args != nil {
						for _, i := range condParams {
							if i < len(args.Args) {
								l.cond(args.Args[i], "argument of "+name)
							}
						}
					}
				} else {
					ok = false
				}
			}
			if !uniformResults[name] {
				uniform = false
			}
		case *parser.AssignExpr:
			if n.Op != "" {
				if !l.storesLocally(n.Left) {
					l.errorf(stmt, "cannot lower an early return: threads that returned must run this statement (it synchronises), but it stores to %s, which they must not; assign the result to a local variable here and store it in a statement of its own", l.text(n.Left))
					return false
				} else if !uniform || !isVoteAssign(n) {
					l.assigned[lvalueRoot(n.Left)] = true
				}
			}
		case *parser.UnaryExpr:
			switch n.Op {
			case "++", "--":
				ok = false
			case "&":
				return false // taking an address reads nothing
			case "*":
				l.guardRead(n)
				return false
			}
		}
		return true
	})
	if !ok {
		l.errorf(stmt, "cannot lower an early return: threads that returned must run this statement (it synchronises), but it also does work they must not do")
	}
}

// storesLocally reports whether an assignment target is this thread's own:
// a local variable, an element of a local array (no more indices than the
// array has dimensions), or a member of either, never memory reached
// through a pointer or a reference. Threads that returned run a statement
// that synchronises, and `out[i] = __shfl_sync(...)` would have them store
// to out[i], which, returned, they never did.
func (l *lowerer) storesLocally(c *parser.CondExpr) bool {
	root := lvalueRoot(c)
	if root == "" || !l.isLocal(root) || l.refs[root] {
		return false
	}
	indices := 0
	for _, op := range c.Bin.First.Unary.Postfix.Ops {
		if op.Index != nil {
			indices++
		}
	}
	return indices <= l.arrays[root]
}

// readsMemory reports whether a postfix expression reads memory that a
// thread that returned might not be allowed to read: through a pointer
// (p[i], p->f); an element of a shared or local array (a[i][j], every op so
// far an index) is not such a read. safeOps and the guarded reads of
// statements that synchronise both judge by it.
func (l *lowerer) readsMemory(n *parser.PostfixExpr) bool {
	for i, op := range n.Ops {
		switch {
		case op.Member != nil && op.Member.Arrow:
			return true
		case op.Index != nil:
			prefix := true
			for _, p := range n.Ops[:i] {
				prefix = prefix && p.Index != nil
			}
			if !prefix || n.X.Name == nil || !l.isArrayVar(n.X.Name.Segs[len(n.X.Name.Segs)-1].Name) {
				return true
			}
		}
	}
	return false
}

// readsAnyMemory reports whether an expression reads memory through a
// pointer anywhere (readsMemory, or a dereference).
func (l *lowerer) readsAnyMemory(x parser.Node) bool {
	found := false
	parser.Walk(x, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.SizeofExpr:
			return false
		case *parser.UnaryExpr:
			if n.Op == "&" {
				return false
			}
			found = found || n.Op == "*"
		case *parser.PostfixExpr:
			found = found || l.readsMemory(n)
		}
		return !found
	})
	return found
}

// guardRead makes a memory read in a statement that threads that returned
// run (it synchronises) a read of active threads only: E becomes
// (slate_active ? (E) : slate_zero<decltype(E)>()), a value of the type E
// reads (a function, so that slatec's own parser reads the output back). Natively a returned
// thread has exited and reads nothing; in the worker it would read with
// indices past the rows it returned for (a warp-per-row kernel's
// `__shfl_sync(m, p[row * 32 + lane], 0)` after `if (row >= n) return;`), and
// could fault. Its value is never used: what it computes is guarded.
func (l *lowerer) guardRead(n parser.Node) {
	if l.hasSync(n) {
		l.errorf(n, "cannot lower an early return: threads that returned must synchronise here, inside a read of memory they must not make")
		return
	}
	sp := n.Span()
	l.edits = append(l.edits, emit.Insert(sp.Start, "(slate_active ? (", "read"),
		emit.Insert(sp.End, ") : slate_zero<decltype("+l.text(n)+")>())", "read"))
}

func isVoteAssign(a *parser.AssignExpr) bool {
	if a.Right == nil || a.Right.X == nil {
		return false
	}
	found := false
	parser.Walk(a.Right, func(n parser.Node) bool {
		if p, ok := n.(*parser.PostfixExpr); ok && uniformResults[calleeName(p)] {
			found = true
		}
		return true
	})
	return found
}

func isMemberSync(p *parser.PostfixExpr) bool {
	for _, op := range p.Ops {
		if op.Member != nil && (op.Member.Name == "sync" || warpTileMethods[op.Member.Name]) {
			return true
		}
	}
	return false
}

// cgFunctors are cooperative-groups operator objects, cg::plus<T>() and friends.
var cgFunctors = map[string]bool{"plus": true, "less": true, "greater": true, "bit_and": true, "bit_or": true, "bit_xor": true}

// isSyncHelperCall reports whether a call goes to a helper that synchronises.
func (l *lowerer) isSyncHelperCall(p *parser.PostfixExpr) bool {
	for _, s := range l.sites {
		if p.Span().Contains(s) && !blockBarrierFuncs[calleeName(p)] && !warpSyncFuncs[calleeName(p)] {
			name := calleeName(p)
			for _, t := range l.a.byName[name] {
				if l.a.syncsTransitively(t, map[*parser.Func]bool{}) {
					return true
				}
			}
		}
	}
	return false
}

// calleeName is the called name of a postfix call expression, or "".
func calleeName(p *parser.PostfixExpr) string {
	if len(p.Ops) == 0 || p.Ops[0].Call == nil && !(len(p.Ops) > 1 && p.Ops[0].Member != nil) {
		if len(p.Ops) == 0 || p.Ops[len(p.Ops)-1].Call == nil {
			return ""
		}
	}
	if p.X.Name != nil && len(p.Ops) > 0 && p.Ops[0].Call != nil {
		return p.X.Name.Segs[len(p.X.Name.Segs)-1].Name
	}
	for i := len(p.Ops) - 1; i > 0; i-- {
		if p.Ops[i].Call != nil && p.Ops[i-1].Member != nil {
			return p.Ops[i-1].Member.Name
		}
	}
	return ""
}

func callArgs(p *parser.PostfixExpr) *parser.CallArgs {
	for _, op := range p.Ops {
		if op.Call != nil {
			if len(op.Call.Args) == 0 {
				return nil
			}
			return op.Call
		}
	}
	return nil
}

// lvalueRoot returns the variable an assignment target is rooted at:
// x, x.f, x[i] -> "x"; *p, p->f -> "" (memory).
func lvalueRoot(c *parser.CondExpr) string {
	if c.Then != nil || len(c.Bin.Rest) > 0 || c.Bin.First.Unary == nil {
		return ""
	}
	u := c.Bin.First.Unary
	if u.Postfix == nil || u.Postfix.X.Name == nil || len(u.Postfix.X.Name.Segs) != 1 {
		return ""
	}
	for _, op := range u.Postfix.Ops {
		if op.Call != nil || (op.Member != nil && op.Member.Arrow) {
			return ""
		}
	}
	return u.Postfix.X.Name.Segs[0].Name
}

// isLocal reports whether name is a non-shared variable declared in the
// kernel body or a parameter (so writing it affects only this thread).
func (l *lowerer) isLocal(name string) bool { return !l.shared[name] && l.locals[name] }

// escapedLocals finds the locals that code may write without naming them,
// which the taint of guarded writes (by name) cannot see: a local whose
// address is taken (`int* p = &n; ... *p = v;`), a local array that decays
// to a pointer (`fill(lim, ...)` writes lim[0]), a local a reference is
// bound to, and a local a lambda assigns. After a lowered return such a
// local may hold another value for the threads that returned (they skip
// the write), so a condition around a barrier must not depend on it.
func (l *lowerer) escapedLocals(body *parser.Block) {
	l.escaped = map[string]bool{}
	mark := func(ids []string) {
		for _, id := range ids {
			if l.isLocal(id) {
				l.escaped[id] = true
			}
		}
	}
	var visit func(n parser.Node, inLambda bool)
	visit = func(n parser.Node, inLambda bool) {
		switch c := n.(type) {
		case *parser.Lambda:
			inLambda = true
		case *parser.UnaryExpr:
			switch {
			case c.Op == "&":
				mark(l.addressed(c.Operand))
			case inLambda && (c.Op == "++" || c.Op == "--"):
				mark(l.writtenBy(c.Operand))
			}
		case *parser.AssignExpr:
			if inLambda && c.Op != "" {
				if r := lvalueRoot(c.Left); r != "" {
					mark([]string{r})
				}
			}
		case *parser.PostfixExpr:
			if c.X.Name != nil && len(c.X.Name.Segs) == 1 && !c.X.Name.Global {
				name := c.X.Name.Segs[0].Name
				if l.arrays[name] > 0 && (len(c.Ops) == 0 || c.Ops[0].Index == nil) {
					mark([]string{name}) // the array as a pointer
				}
				if inLambda && len(c.Ops) > 0 && c.Ops[len(c.Ops)-1].Incr != "" {
					mark([]string{name})
				}
			}
		case *parser.InitDeclarator:
			if hasRef(c.Decl) && c.Init != nil {
				mark(l.idents(c.Init))
			}
		}
		for _, ch := range parser.Children(n) {
			visit(ch, inLambda)
		}
	}
	visit(body, false)
}

// addressed names the local whose own storage &operand points into: x in
// &x, &x.f and &arr[i] of a local array; none for &p[i] or &p->f, which
// point into memory a pointer reaches (the pointer itself is not written),
// so `&A[row * K]` on a pointer parameter escapes nothing.
func (l *lowerer) addressed(c *parser.CastExpr) []string {
	if c == nil || c.Unary == nil || c.Unary.Op != "" || c.Unary.Postfix == nil {
		return l.idents(c)
	}
	p := c.Unary.Postfix
	if p.X.Name == nil || len(p.X.Name.Segs) != 1 || p.X.Name.Global {
		return l.idents(c)
	}
	name := p.X.Name.Segs[0].Name
	for _, op := range p.Ops {
		switch {
		case op.Call != nil:
			return l.idents(c)
		case op.Member != nil && op.Member.Arrow, op.Index != nil && l.arrays[name] == 0:
			return nil // through a pointer: into memory, not into name
		}
	}
	return []string{name}
}

// writtenBy names the variables an operand of ++, -- or & may change: the
// variable it is rooted at (x in x, x[i], x.f, p in p->f), not the names
// its indices read (&A[row * K] changes neither row nor K); every name it
// reads when its shape is another (a cast, a call), to be safe.
func (l *lowerer) writtenBy(c *parser.CastExpr) []string {
	if c != nil && c.Unary != nil && c.Unary.Op == "" && c.Unary.Postfix != nil {
		p := c.Unary.Postfix
		plain := p.X.Name != nil && len(p.X.Name.Segs) == 1 && !p.X.Name.Global
		for _, op := range p.Ops {
			plain = plain && op.Call == nil
		}
		if plain {
			return []string{p.X.Name.Segs[0].Name}
		}
	}
	return l.idents(c)
}

// noteAssigned records the variables a guarded statement writes. Names
// declared inside it (in a block, a for, an if of its own) are its own:
// writing them changes no variable the conditions outside it read, even
// one of the same name (two loops that each declare k_step, the first
// around barriers). A declaration that is the statement itself (a guarded
// `T x = f();` beside the conditions) declares x in the enclosing scope:
// noted as assigned, as decl hoists it.
func (l *lowerer) noteAssigned(s parser.Node) {
	var scopes []map[string]bool
	write := func(name string) {
		for _, sc := range scopes {
			if sc[name] {
				return // the statement's own variable
			}
		}
		if name != "" {
			l.assigned[name] = true
		}
	}
	var visit func(n parser.Node)
	visit = func(n parser.Node) {
		scoped := false
		switch n := n.(type) {
		case *parser.Block, *parser.ForStmt, *parser.IfStmt, *parser.WhileStmt, *parser.SwitchStmt, *parser.Lambda:
			scopes = append(scopes, map[string]bool{})
			scoped = true
		case *parser.AssignExpr:
			if r := lvalueRoot(n.Left); n.Op != "" && r != "" && !l.shared[r] {
				write(r)
			}
		case *parser.UnaryExpr:
			// ++x[i] writes x, not i. Taking an address (&A[row * K])
			// writes nothing: what is written through it later is
			// escapedLocals' to find (a local whose address is taken
			// taints the conditions that read it).
			if n.Op == "++" || n.Op == "--" {
				for _, id := range l.writtenBy(n.Operand) {
					write(id)
				}
			}
		case *parser.PostfixExpr:
			for _, op := range n.Ops {
				if op.Incr != "" && n.X.Name != nil {
					write(n.X.Name.Segs[0].Name)
				}
			}
		case *parser.Declarator:
			if name := declName(n); name != "" {
				if len(scopes) > 0 {
					scopes[len(scopes)-1][name] = true
				} else {
					l.assigned[name] = true
				}
			}
		}
		for _, ch := range parser.Children(n) {
			visit(ch)
		}
		if scoped {
			scopes = scopes[:len(scopes)-1]
		}
	}
	visit(s)
}

// safeStmt reports whether an expression statement touches no memory and
// assigns only plain local variables, so that inactive threads may run it.
func (l *lowerer) safeStmt(s *parser.ExprStmt) bool {
	if !l.safeOps(s.X, true) {
		return false
	}
	ok := true
	parser.Walk(s.X, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.AssignExpr:
			if n.Op != "" && !l.plainLocal(n.Left) {
				ok = false
			}
		case *parser.UnaryExpr:
			if (n.Op == "++" || n.Op == "--") && !l.plainLocalCast(n.Operand) {
				ok = false
			}
		case *parser.PostfixExpr:
			for _, op := range n.Ops {
				if op.Incr != "" && (len(n.Ops) != 1 || n.X.Name == nil || len(n.X.Name.Segs) != 1 || !l.isLocal(n.X.Name.Segs[0].Name)) {
					ok = false
				}
			}
		}
		return ok
	})
	return ok
}

// plainLocal reports whether an assignment target is a local variable
// itself (not an element or a member through a pointer).
func (l *lowerer) plainLocal(c *parser.CondExpr) bool {
	if c.Then != nil || len(c.Bin.Rest) > 0 || c.Bin.First.Unary == nil {
		return false
	}
	return l.plainLocalCast(c.Bin.First)
}

func (l *lowerer) plainLocalCast(c *parser.CastExpr) bool {
	if c == nil || c.Unary == nil || c.Unary.Postfix == nil {
		return false
	}
	p := c.Unary.Postfix
	return len(p.Ops) == 0 && p.X.Name != nil && len(p.X.Name.Segs) == 1 && l.isLocal(p.X.Name.Segs[0].Name)
}

// noteUnguarded records definitions made before any thread can be inactive.
func (l *lowerer) noteUnguarded(s parser.Node) {
	parser.Walk(s, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.InitDeclarator:
			if n.Init != nil {
				l.defs = append(l.defs, varDef{name: declName(n.Decl), uses: l.idents(initExpr(n))})
			}
		case *parser.AssignExpr:
			if n.Op != "" && n.Right != nil {
				if r := lvalueRoot(n.Left); r != "" {
					uses := l.idents(n.Right)
					if n.Op != "=" {
						uses = append(uses, r)
					}
					l.defs = append(l.defs, varDef{name: r, uses: uses})
				}
			}
		}
		return true
	})
}

// noteHeaderAssign records loop-header assignments (run by all threads).
func (l *lowerer) noteHeaderAssign(x parser.Node) {
	parser.Walk(x, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.AssignExpr:
			if n.Op != "" {
				if r := lvalueRoot(n.Left); r != "" {
					uses := l.idents(n.Left)
					if n.Right != nil {
						uses = append(uses, l.idents(n.Right)...)
					}
					l.defs = append(l.defs, varDef{name: r, uses: uses})
				}
			}
		}
		return true
	})
}

func (l *lowerer) cond(x parser.Node, what string) {
	if x == nil {
		return
	}
	l.checks = append(l.checks, conditionCheck{x: x, what: what})
	// Votes in a condition (if (!__syncthreads_or(done))) run for all
	// threads: inactive ones must vote as if they had exited.
	parser.Walk(x, func(n parser.Node) bool {
		if p, ok := n.(*parser.PostfixExpr); ok {
			name := calleeName(p)
			if votePredicate[name] != "" {
				if args := callArgs(p); args != nil {
					pred := args.Args[len(args.Args)-1]
					if strings.HasPrefix(name, "__syncthreads") {
						pred = args.Args[0]
					}
					l.edits = append(l.edits, emit.Replace(pred.Span().Start, pred.Span().End,
						fmt.Sprintf(votePredicate[name], l.text(pred)), "vote"))
				}
			}
		}
		return true
	})
}

// checkConditions refuses conditions that inactive threads cannot
// evaluate: unsafe operations, or variables computed by guarded code.
func (l *lowerer) checkConditions() {
	tainted := map[string]bool{}
	for n := range l.assigned {
		tainted[n] = true
	}
	for n := range l.escaped {
		tainted[n] = true
	}
	for changed := true; changed; {
		changed = false
		for _, d := range l.defs {
			if tainted[d.name] {
				continue
			}
			for _, u := range d.uses {
				if tainted[u] {
					tainted[d.name] = true
					changed = true
					break
				}
			}
		}
	}
	for _, c := range l.checks {
		masked := l.maskedPredicates(c.x)
		if !l.safeOpsExcept(c.x, true, masked) {
			l.errorf(c.x, "cannot lower an early return: threads that returned must evaluate this %s (it controls a barrier), but it reads memory or calls a function", c.what)
			continue
		}
		for _, id := range l.identsExcept(c.x, masked) {
			if tainted[id] {
				if l.escaped[id] && !l.assigned[id] {
					l.errorf(c.x, "cannot lower an early return: this %s (it controls a barrier) depends on %s, which code after the return may write through a pointer, reference or lambda", c.what, id)
				} else {
					l.errorf(c.x, "cannot lower an early return: this %s (it controls a barrier) depends on %s, which is computed after the return", c.what, id)
				}
				break
			}
		}
	}
}

// maskedPredicates returns the vote predicates inside x: they are
// rewritten to slate_active && (p), so inactive threads never evaluate them.
func (l *lowerer) maskedPredicates(x parser.Node) map[parser.Node]bool {
	m := map[parser.Node]bool{}
	parser.Walk(x, func(n parser.Node) bool {
		if p, ok := n.(*parser.PostfixExpr); ok && votePredicate[calleeName(p)] != "" {
			if args := callArgs(p); args != nil {
				if strings.HasPrefix(calleeName(p), "__syncthreads") {
					m[args.Args[0]] = true
				} else {
					m[args.Args[len(args.Args)-1]] = true
				}
			}
		}
		return true
	})
	return m
}

// idents returns the variable names an expression reads (not member names).
func (l *lowerer) idents(x parser.Node) []string { return l.identsExcept(x, nil) }

func (l *lowerer) identsExcept(x parser.Node, skip map[parser.Node]bool) []string {
	return identsExcept(x, skip)
}

// identNames are the unqualified names an expression reads (not inside
// lambdas or sizeof).
func identNames(x parser.Node) []string { return identsExcept(x, nil) }

func identsExcept(x parser.Node, skip map[parser.Node]bool) []string {
	var out []string
	parser.Walk(x, func(n parser.Node) bool {
		if skip[n] {
			return false
		}
		switch n := n.(type) {
		case *parser.Lambda, *parser.SizeofExpr:
			return false
		case *parser.QualName:
			if !n.Global && len(n.Segs) == 1 {
				out = append(out, n.Segs[0].Name)
			}
		}
		return true
	})
	return out
}

// safe reports whether inactive threads may evaluate x: no memory access
// but shared and local arrays, no side effects, only pure calls.
func (l *lowerer) safe(x parser.Node) bool { return l.safeOps(x, false) }

func (l *lowerer) safeOps(x parser.Node, header bool) bool { return l.safeOpsExcept(x, header, nil) }

func (l *lowerer) safeOpsExcept(x parser.Node, header bool, skip map[parser.Node]bool) bool {
	ok := true
	parser.Walk(x, func(n parser.Node) bool {
		if !ok || skip[n] {
			return false
		}
		switch n := n.(type) {
		case *parser.Lambda:
			return false // creating a lambda touches no memory
		case *parser.SizeofExpr:
			return false
		case *parser.NewExpr, *parser.DeleteExpr:
			ok = false // allocates, constructs or frees: never for inactive threads
		case *parser.AssignExpr:
			if n.Op != "" && !header {
				ok = false
			}
		case *parser.UnaryExpr:
			switch n.Op {
			case "*":
				ok = false
			case "++", "--":
				ok = ok && header
			case "&":
				return false // taking an address reads nothing
			}
		case *parser.PostfixExpr:
			if l.readsMemory(n) {
				ok = false
			}
			for i, op := range n.Ops {
				switch {
				case op.Incr != "":
					ok = ok && header
				case op.Call != nil:
					name := ""
					if i == 0 && n.X.Name != nil {
						name = n.X.Name.Segs[len(n.X.Name.Segs)-1].Name
					} else if i > 0 && n.Ops[i-1].Member != nil {
						name = n.Ops[i-1].Member.Name
					} else if n.X.Basic != "" || n.X.Name != nil && l.f.TypeNames[n.X.Name.Segs[0].Name] {
						name = "(cast)"
					}
					if !pureFuncs[name] && name != "(cast)" && !l.f.TypeNames[name] && !(header && votePredicate[name] != "") {
						ok = false
					}
				}
			}
		}
		return ok
	})
	return ok
}

// isArrayVar reports whether name is a shared or local array (reading it
// with an index computed from safe values does not fault).
func (l *lowerer) isArrayVar(name string) bool { return l.shared[name] || l.arrays[name] > 0 }

// pureFuncs may be called by inactive threads: no memory access, no side
// effects.
var pureFuncs = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`min max umin umax llmin llmax ullmin ullmax abs labs llabs fabs fabsf
		fminf fmaxf fmin fmax sqrt sqrtf rsqrtf cbrtf floorf ceilf roundf truncf floor ceil round trunc
		__popc __popcll __clz __clzll __ffs __ffsll __brev __brevll __mul24 __umul24 __mulhi __umulhi
		__float2int_rn __float2int_rz __int2float_rn __fdividef __expf __logf __powf __sinf __cosf
		make_int2 make_int3 make_int4 make_uint2 make_uint3 make_uint4 make_float2 make_float3 make_float4
		make_double2 make_double3 make_double4 dim3 uint3 int2 float2 float4
		size thread_rank num_threads meta_group_rank meta_group_size group_dim dim_threads thread_index
		this_thread_block tiled_partition __lanemask_lt __lanemask_le
		__lanemask_eq __lanemask_gt __lanemask_ge static_cast`) {
		m[n] = true
	}
	return m
}()
