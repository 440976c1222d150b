package transform

import (
	"github.com/slatec/slatec/parser"
)

// syncSites returns the spans inside fn's body where synchronisation can
// happen: its own sync points, and calls to helpers that (transitively)
// synchronise.
func (a *Analysis) syncSites(fn *parser.Func) []parser.Span {
	fi := a.Funcs[fn]
	var out []parser.Span
	for _, s := range fi.Syncs {
		out = append(out, s.Span)
	}
	for _, c := range fi.Calls {
		for _, t := range c.Targets {
			if a.syncsTransitively(t, map[*parser.Func]bool{}) {
				out = append(out, c.Span)
				break
			}
		}
	}
	return out
}

func (a *Analysis) syncsTransitively(fn *parser.Func, seen map[*parser.Func]bool) bool {
	if seen[fn] {
		return false
	}
	seen[fn] = true
	fi := a.Funcs[fn]
	if fi == nil {
		return false
	}
	if len(fi.Syncs) > 0 {
		return true
	}
	for _, c := range fi.Calls {
		for _, t := range c.Targets {
			if a.syncsTransitively(t, seen) {
				return true
			}
		}
	}
	return false
}

// retSite is a return statement of a kernel's body (not of a lambda in
// it), with what returns needs of the tree around it: the loops (and
// statement macros) that enclose it and whether the whole block takes it
// together. analyzeFunc finds them while the body's tree is at hand, so
// that the tree need not outlive it.
type retSite struct {
	span    parser.Span
	loops   []parser.Span
	uniform bool
}

// returnSites finds the return statements of a kernel's body.
func returnSites(fn *parser.Func, body *parser.Block) []retSite {
	var out []retSite
	var paths [][]parser.Node
	var loops []parser.Span
	var path []parser.Node // the statements enclosing n
	var visit func(n parser.Node)
	visit = func(n parser.Node) {
		path = append(path, n)
		defer func() { path = path[:len(path)-1] }()
		switch n := n.(type) {
		case *parser.Lambda:
			return // a lambda's return ends the lambda, not the thread
		case *parser.Expr, *parser.AssignExpr, *parser.InitValue:
			// An expression holds statements only inside lambdas.
			return
		case *parser.ForStmt, *parser.WhileStmt, *parser.DoStmt, *parser.MacroStmt:
			// A statement macro may hide a loop: count it as one.
			loops = append(loops, n.Span())
			parser.EachChild(n, visit)
			loops = loops[:len(loops)-1]
			return
		case *parser.ReturnStmt:
			out = append(out, retSite{span: n.Span(), loops: append([]parser.Span(nil), loops...), uniform: uniformReturn(path)})
			paths = append(paths, append([]parser.Node(nil), path...))
			return
		}
		parser.EachChild(n, visit)
	}
	visit(body)
	valueUniformReturns(fn, body, out, paths)
	return out
}

// valueUniformReturns marks the returns that the whole block takes together
// by the values their control flow reads (uniform.go): every condition
// around the return is uniform, no loop around it is left by break or
// continue, and every return that can run before it is uniform too (after
// a lowered return, threads that returned run on inactive and would not
// take a guarded return with the others). A function with goto or labels
// gets none.
func valueUniformReturns(fn *parser.Func, body *parser.Block, sites []retSite, paths [][]parser.Node) {
	if len(sites) == 0 {
		return
	}
	jumps := false
	parser.Walk(body, func(n parser.Node) bool {
		switch n.(type) {
		case *parser.GotoStmt, *parser.LabelStmt:
			jumps = true
		}
		return !jumps
	})
	if jumps {
		return
	}
	u := uniformLocals(fn, body)
	value := make([]bool, len(sites))
	for i, p := range paths {
		value[i] = uniformPath(p, u)
	}
	// precedes: j can run before i (earlier in the text, or in a loop around i).
	precedes := func(j, i int) bool {
		if sites[j].span.Start < sites[i].span.Start {
			return true
		}
		for _, l := range sites[i].loops {
			if l.Contains(sites[j].span) {
				return true
			}
		}
		return false
	}
	ok := append([]bool(nil), value...)
	for changed := true; changed; {
		changed = false
		for i := range sites {
			if !ok[i] {
				continue
			}
			for j := range sites {
				if j != i && precedes(j, i) && !ok[j] && !sites[j].uniform {
					ok[i] = false
					changed = true
					break
				}
			}
		}
	}
	for i := range sites {
		if ok[i] {
			sites[i].uniform = true
		}
	}
}

// uniformPath reports whether every statement around a return (path, from
// the body down) lets all threads of a block through alike.
func uniformPath(path []parser.Node, u map[string]bool) bool {
	for _, n := range path {
		switch n := n.(type) {
		case *parser.Block, *parser.ReturnStmt:
		case *parser.IfStmt:
			if n.Init != nil || n.CondDecl != nil || !uniformExpr(n.Cond, u) {
				return false
			}
		case *parser.ForStmt:
			if n.Range != nil || n.Cond != nil && !uniformExpr(n.Cond, u) || exitsLoop(n.Body) {
				return false
			}
		case *parser.WhileStmt:
			if !uniformExpr(n.Cond, u) || exitsLoop(n.Body) {
				return false
			}
		case *parser.DoStmt:
			if !uniformExpr(n.Cond, u) || exitsLoop(n.Body) {
				return false
			}
		default:
			return false // switch, labels, macros
		}
	}
	return true
}

// returns lists the kernel body's return statements (not those of
// lambdas) and whether a sync point can run after each: textually after
// it, or anywhere in a loop that encloses it.
func (a *Analysis) returns(fn *parser.Func, k *KernelInfo) []ReturnInfo {
	sites := append(a.syncSites(fn), k.OpaqueSync...)
	var out []ReturnInfo
	for _, rs := range k.rets {
		r := ReturnInfo{Span: rs.span}
		r.Line, r.Col = a.pos(r.Span)
		for _, s := range sites {
			after := s.Start >= r.Span.End
			inLoop := false
			for _, l := range rs.loops {
				if l.Contains(s) {
					inLoop = true
				}
			}
			if after || inLoop {
				r.BeforeSync = true
				r.SyncLine, _ = a.pos(s)
				break
			}
		}
		r.Uniform = rs.uniform
		out = append(out, r)
	}
	return out
}

// blockVotes are the barriers whose result every thread of the block gets
// alike.
var blockVotes = map[string]bool{"__syncthreads_or": true, "__syncthreads_and": true, "__syncthreads_count": true}

// uniformReturn reports whether the return at the end of path is taken by
// the whole block together: it is a statement of a branch of an if (the
// branch itself or directly in its braces) whose condition is a block-wide
// vote (__syncthreads_or, _and, _count) combined only with literals. Every
// thread of the block evaluates such a condition (it is a barrier) and gets
// the same value, so no thread stays behind to meet a later barrier alone.
// (Lowering leaves such a return unguarded, so threads inactive since an
// earlier return leave with the others.)
func uniformReturn(path []parser.Node) bool {
	i := len(path) - 2
	if i >= 0 {
		if _, ok := path[i].(*parser.Block); ok {
			i--
		}
	}
	if i < 0 {
		return false
	}
	n, ok := path[i].(*parser.IfStmt)
	return ok && n.Init == nil && n.CondDecl == nil && n.Cond != nil && uniformCond(n.Cond)
}

func uniformCond(x parser.Node) bool {
	votes, ok := 0, true
	parser.Walk(x, func(n parser.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *parser.PostfixExpr:
			if len(n.Ops) == 1 && n.Ops[0].Call != nil && n.X.Name != nil && len(n.X.Name.Segs) == 1 &&
				blockVotes[n.X.Name.Segs[0].Name] {
				votes++
				return false // the predicate may be anything: only the result counts
			}
			if len(n.Ops) > 0 {
				ok = false
			}
		case *parser.Primary:
			if n.Name != nil || n.Lambda != nil || n.Brace != nil || n.Constr != nil || n.CppCast != nil {
				ok = false
			}
		case *parser.AssignExpr:
			if n.Op != "" {
				ok = false
			}
		}
		return ok
	})
	return ok && votes > 0
}
