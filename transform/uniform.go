package transform

import (
	"github.com/slatec/slatec/parser"
)

// Block-uniform returns by value (returns.go has those by vote).
//
// `int t = T - 1 - 4 * blockIdx.x - to; if (t < 0) return;` is taken by the
// whole block together: t is computed from blockIdx, the parameters,
// constants and a loop counter with uniform bounds, under control flow
// every thread of the block follows. Such a return needs no lowering (all
// the block's threads leave the body together), and lowering it would make
// the finished block's threads walk the rest of the body's barriers, and
// refuse kernels whose later code calls a helper that synchronises and
// touches memory (llm.c's softmax_autoregressive_backward_inplace_kernel).
//
// uniformLocals finds the names whose value every thread of the block holds
// alike; valueUniform decides a return with them. Conservative everywhere:
// a name is uniform only if each of its definitions computes it from
// uniform names, literals and pure functions, never from memory, under
// uniform control flow, and its address is never taken.

// blockUniformBuiltins are the built-ins every thread of a block reads alike.
var blockUniformBuiltins = map[string]bool{"blockIdx": true, "gridDim": true, "blockDim": true, "warpSize": true}

// uniformLocals returns the parameters and locals of a kernel body that
// every thread of a block holds alike wherever they are read.
func uniformLocals(fn *parser.Func, body *parser.Block) map[string]bool {
	u := map[string]bool{}
	for _, p := range fn.Params {
		if p.Name != "" {
			u[p.Name] = true
		}
	}
	declared := map[string]bool{}
	// Names never uniform: arrays, references, shared variables, names
	// whose address is taken or that a lambda may write.
	bad := map[string]bool{}
	parser.Walk(body, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.Declarator:
			if name := declName(n); name != "" {
				declared[name] = true
				if len(n.Arrays) > 0 || hasRef(n) {
					bad[name] = true
				}
			}
		case *parser.DeclStmt:
			if n.Specs != nil && hasWord(n.Specs, "__shared__") {
				for _, id := range n.Decls {
					bad[declName(id.Decl)] = true
				}
			}
		case *parser.UnaryExpr:
			if n.Op == "&" {
				for _, id := range identNames(n.Operand) {
					bad[id] = true
				}
			}
		case *parser.PostfixExpr:
			// A function may take a variable by reference (helper(r)), a
			// method may change its object (v.f()): such names are not
			// followed.
			for i, op := range n.Ops {
				if op.Call == nil {
					continue
				}
				if i > 0 && n.Ops[i-1].Member != nil && n.X.Name != nil && len(n.X.Name.Segs) == 1 {
					bad[n.X.Name.Segs[0].Name] = true
				}
				name := calleeName(n)
				if pureFuncs[name] {
					continue
				}
				for _, a := range op.Call.Args {
					for _, id := range identNames(a) {
						bad[id] = true
					}
				}
			}
		case *parser.AsmStmt:
			parser.Walk(n, func(m parser.Node) bool {
				if p, ok := m.(*parser.Primary); ok && p.Name != nil && len(p.Name.Segs) == 1 {
					bad[p.Name.Segs[0].Name] = true
				}
				return true
			})
		case *parser.Lambda:
			parser.Walk(n, func(m parser.Node) bool {
				if a, ok := m.(*parser.AssignExpr); ok && a.Op != "" {
					bad[lvalueRoot(a.Left)] = true
				}
				if x, ok := m.(*parser.UnaryExpr); ok && (x.Op == "++" || x.Op == "--") {
					for _, id := range identNames(x.Operand) {
						bad[id] = true
					}
				}
				if p, ok := m.(*parser.PostfixExpr); ok && p.X.Name != nil && len(p.X.Name.Segs) == 1 {
					for _, op := range p.Ops {
						if op.Incr != "" {
							bad[p.X.Name.Segs[0].Name] = true
						}
					}
				}
				return true
			})
			return false
		}
		return true
	})
	for name := range declared {
		u[name] = true
	}
	for name := range bad {
		delete(u, name)
	}
	// Drop names defined non-uniformly until nothing changes.
	for changed := true; changed; {
		changed = false
		drop := func(name string) {
			if u[name] {
				delete(u, name)
				changed = true
			}
		}
		var walk func(s parser.Node, ctx bool)
		def := func(name string, x parser.Node, ctx bool) {
			if name != "" && (!ctx || x != nil && !uniformExpr(x, u)) {
				drop(name)
			}
		}
		exprDefs := func(x parser.Node, ctx bool) {
			parser.Walk(x, func(n parser.Node) bool {
				switch n := n.(type) {
				case *parser.Lambda:
					return false
				case *parser.AssignExpr:
					if n.Op != "" {
						root := lvalueRoot(n.Left)
						def(root, n.Right, ctx)
						if n.Op != "=" {
							def(root, n.Left, ctx)
						}
					}
				case *parser.UnaryExpr:
					if n.Op == "++" || n.Op == "--" {
						for _, id := range identNames(n.Operand) {
							def(id, nil, ctx)
						}
					}
				case *parser.PostfixExpr:
					for _, op := range n.Ops {
						if op.Incr != "" && n.X.Name != nil && len(n.X.Name.Segs) == 1 {
							def(n.X.Name.Segs[0].Name, nil, ctx)
						}
					}
				}
				return true
			})
		}
		walk = func(s parser.Node, ctx bool) {
			switch s := s.(type) {
			case nil:
			case *parser.Block:
				for _, x := range s.Stmts {
					walk(x, ctx)
				}
			case *parser.DeclStmt:
				for _, id := range s.Decls {
					if id.Init != nil {
						def(declName(id.Decl), initExpr(id), ctx)
						exprDefs(initExpr(id), ctx)
					}
				}
			case *parser.ExprStmt:
				exprDefs(s.X, ctx)
			case *parser.IfStmt:
				c := ctx && s.Init == nil && s.CondDecl == nil && s.Cond != nil && uniformExpr(s.Cond, u)
				if s.Init != nil {
					walk(s.Init, ctx)
				}
				if s.CondDecl != nil {
					walk(s.CondDecl, ctx)
				}
				if s.Cond != nil {
					exprDefs(s.Cond, ctx)
				}
				walk(s.Then, c)
				walk(s.Else, c)
			case *parser.ForStmt:
				c := ctx && s.Range == nil && (s.Cond == nil || uniformExpr(s.Cond, u)) && !exitsLoop(s.Body)
				if init, ok := s.Init.(parser.Stmt); ok && s.Init != nil {
					walk(init, ctx)
				}
				if s.Cond != nil {
					exprDefs(s.Cond, c)
				}
				if s.Post != nil {
					exprDefs(s.Post, c)
				}
				if s.RangeDecl != nil {
					for _, id := range s.RangeDecl.Decls {
						drop(declName(id.Decl))
					}
				}
				walk(s.Body, c)
			case *parser.WhileStmt:
				c := ctx && uniformExpr(s.Cond, u) && !exitsLoop(s.Body)
				exprDefs(s.Cond, c)
				walk(s.Body, c)
			case *parser.DoStmt:
				c := ctx && uniformExpr(s.Cond, u) && !exitsLoop(s.Body)
				walk(s.Body, c)
				exprDefs(s.Cond, c)
			default:
				// switch, labels, macros, asm: whatever they define is not uniform.
				parser.Walk(s, func(n parser.Node) bool {
					if _, ok := n.(*parser.Lambda); ok {
						return false
					}
					if d, ok := n.(*parser.Declarator); ok {
						drop(declName(d))
					}
					if a, ok := n.(*parser.AssignExpr); ok && a.Op != "" {
						drop(lvalueRoot(a.Left))
					}
					return true
				})
				exprDefs(s, false)
			}
		}
		walk(body, true)
	}
	return u
}

// exitsLoop reports whether a loop body can leave or skip ahead on its own
// (break, continue, goto, a label), outside the loops and switches nested
// in it: threads would then run different iterations.
func exitsLoop(body parser.Stmt) bool {
	found := false
	var visit func(n parser.Node, nested bool)
	visit = func(n parser.Node, nested bool) {
		switch n.(type) {
		case *parser.Lambda:
			return
		case *parser.BreakStmt, *parser.ContinueStmt:
			if !nested {
				found = true
			}
			return
		case *parser.GotoStmt, *parser.LabelStmt, *parser.MacroStmt, *parser.AsmStmt:
			found = true
			return
		case *parser.ForStmt, *parser.WhileStmt, *parser.DoStmt, *parser.SwitchStmt:
			parser.EachChild(n, func(c parser.Node) { visit(c, true) })
			return
		}
		parser.EachChild(n, func(c parser.Node) { visit(c, nested) })
	}
	visit(body, false)
	return found
}

// uniformExpr reports whether every thread of a block computes the same
// value for x: it reads only uniform names and built-ins, literals, and
// pure functions of them, and no memory.
func uniformExpr(x parser.Node, u map[string]bool) bool {
	if x == nil {
		return false
	}
	ok := true
	parser.Walk(x, func(n parser.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *parser.Lambda, *parser.NewExpr, *parser.DeleteExpr:
			ok = false
		case *parser.SizeofExpr:
			return false
		case *parser.AssignExpr:
			if n.Op != "" {
				ok = false
			}
		case *parser.UnaryExpr:
			if n.Op == "*" || n.Op == "&" || n.Op == "++" || n.Op == "--" {
				ok = false
			}
		case *parser.PostfixExpr:
			for i, op := range n.Ops {
				switch {
				case op.Index != nil, op.Incr != "", op.Member != nil && op.Member.Arrow:
					ok = false
				case op.Call != nil:
					if i != 0 || n.X.Name == nil || !pureFuncs[n.X.Name.Segs[len(n.X.Name.Segs)-1].Name] {
						ok = false
					}
				case op.Member != nil:
					// blockIdx.x and the like, or a member of a uniform struct.
				}
			}
			if ok && len(n.Ops) > 0 && n.Ops[0].Call != nil {
				// The callee's name is not a value: check the arguments only.
				for _, op := range n.Ops {
					if op.Call != nil {
						for _, a := range op.Call.Args {
							if !uniformExpr(a, u) {
								ok = false
							}
						}
					}
				}
				return false
			}
		case *parser.Primary:
			switch {
			case n.Name != nil:
				if len(n.Name.Segs) != 1 {
					ok = false // a qualified name: a global, an enumerator, a static member
				} else if name := n.Name.Segs[0].Name; !u[name] && !blockUniformBuiltins[name] && name != "true" && name != "false" && name != "nullptr" {
					ok = false
				}
			case n.Lambda != nil, n.Brace != nil, n.Constr != nil, n.CppCast != nil:
				ok = false
			}
		}
		return ok
	})
	return ok
}
