package transform

import (
	"strings"

	"github.com/slatec/slatec/parser"
)

// Helpers that threads that returned may run (return lowering, lower.go).
//
// A kernel whose early return precedes a call to a helper that
// synchronises, such as the warp reduction of a warp-per-row kernel
//
//	int row = blockIdx.x * warpsPerBlock + warpId;
//	if (row >= N) return;
//	... sum = warpReduceSum(sum);
//
// needs the threads that returned to run the helper with the others (its
// shuffles name them), and must not let them do anything else. That is
// safe when the helper is a pure collective: it touches no memory, writes
// only its own variables, calls only shuffles, barriers, pure functions
// and helpers of the same kind, returns only at its end, and decides its
// control flow only from values that do not come from its arguments (which
// are garbage for the threads that returned, and would otherwise send them
// down another path than their warp's). Its result is then as good as a
// shuffle's: a value the guarded code of the returned threads never uses.

// inactiveCalls are the calls a pure collective may make besides pure
// functions and other helpers: shuffles and barriers, which every thread
// runs. Votes, ballots, matches and reductions count the lanes present,
// which the threads that returned would change.
var inactiveCalls = map[string]bool{
	"__shfl_sync": true, "__shfl_up_sync": true, "__shfl_down_sync": true, "__shfl_xor_sync": true,
	"__syncwarp": true, "__syncthreads": true,
}

// helperFacts are what a device function's own body says about running it
// for threads that returned; the helpers it calls are judged when it is
// used (Analysis.inactiveSafe).
type helperFacts struct {
	pure  bool     // its own body is a pure collective's
	calls []string // the other functions it calls, to be pure collectives too
}

// inactiveFacts judges a device function's own body (see the top of this file).
func inactiveFacts(fn *parser.Func, body *parser.Block, f *parser.File) helperFacts {
	c := &collectiveCheck{f: f, locals: map[string]bool{}, arrays: map[string]int{}, refs: map[string]bool{},
		tainted: map[string]bool{}, ok: true}
	for _, p := range fn.Params {
		if p.Name == "" {
			continue
		}
		// A reference parameter writes the caller's variable or memory.
		if strings.Contains(p.Type, "&") {
			c.refs[p.Name] = true
		}
		c.locals[p.Name] = true
		c.tainted[p.Name] = true
	}
	parser.Walk(body, func(n parser.Node) bool {
		// __shared__ and static variables are not the thread's own: a store
		// to them is seen by the others.
		if d, ok := n.(*parser.DeclStmt); ok && d.Specs != nil && (hasWord(d.Specs, "__shared__") || hasWord(d.Specs, "static")) {
			for _, id := range d.Decls {
				if name := declName(id.Decl); name != "" {
					c.locals[name] = true
					c.refs[name] = true
				}
			}
			return false
		}
		if d, ok := n.(*parser.Declarator); ok {
			if name := declName(d); name != "" {
				c.locals[name] = true
				if d.Name == name && len(d.Arrays) > 0 {
					c.arrays[name] = len(d.Arrays)
				}
				if hasRef(d) {
					c.refs[name] = true
				}
			}
		}
		return true
	})
	for i, s := range body.Stmts {
		c.stmt(s, i == len(body.Stmts)-1)
	}
	c.taint()
	for _, x := range c.conds {
		for _, id := range identNames(x) {
			if c.tainted[id] {
				c.ok = false
			}
		}
	}
	return helperFacts{pure: c.ok, calls: c.calls}
}

type collectiveCheck struct {
	f       *parser.File
	locals  map[string]bool // parameters and the names declared in the body
	arrays  map[string]int  // local arrays: their dimensions
	refs    map[string]bool // references (parameters and locals)
	defs    []varDef        // x <- the names its value is computed from
	tainted map[string]bool // names whose value may come from the arguments
	conds   []parser.Node   // conditions that decide the control flow
	calls   []string
	ok      bool
}

// stmt checks one statement; last says it ends the body (where a return may be).
func (c *collectiveCheck) stmt(s parser.Stmt, last bool) {
	if !c.ok || s == nil {
		return
	}
	switch s := s.(type) {
	case *parser.Block:
		for _, x := range s.Stmts {
			c.stmt(x, false)
		}
	case *parser.DeclStmt:
		for _, id := range s.Decls {
			if id.Init != nil {
				x := initExpr(id)
				c.expr(x)
				c.defs = append(c.defs, varDef{name: declName(id.Decl), uses: c.uses(x)})
			}
		}
	case *parser.ExprStmt:
		c.expr(s.X)
	case *parser.IfStmt:
		if s.Init != nil || s.CondDecl != nil || s.Cond == nil {
			c.ok = false
			return
		}
		c.cond(s.Cond)
		c.stmt(s.Then, false)
		c.stmt(s.Else, false)
	case *parser.ForStmt:
		if s.Range != nil {
			c.ok = false
			return
		}
		if init, ok := s.Init.(parser.Stmt); ok && s.Init != nil {
			c.stmt(init, false)
		}
		if s.Cond != nil {
			c.cond(s.Cond)
		}
		if s.Post != nil {
			c.expr(s.Post)
		}
		c.stmt(s.Body, false)
	case *parser.WhileStmt:
		c.cond(s.Cond)
		c.stmt(s.Body, false)
	case *parser.DoStmt:
		c.stmt(s.Body, false)
		c.cond(s.Cond)
	case *parser.ReturnStmt:
		if !last {
			c.ok = false // threads that return early would miss the others' shuffles
			return
		}
		if s.Value != nil {
			c.expr(s.Value)
		}
	case *parser.EmptyStmt, *parser.BreakStmt, *parser.ContinueStmt:
	default:
		c.ok = false // asm, goto, switch, labels, macros, local types
	}
}

func (c *collectiveCheck) cond(x *parser.Expr) {
	if x == nil {
		c.ok = false
		return
	}
	c.expr(x)
	c.conds = append(c.conds, x)
	// A condition may call pure functions only: a shuffle in it would be
	// run by some threads and not others.
	parser.Walk(x, func(n parser.Node) bool {
		if p, ok := n.(*parser.PostfixExpr); ok && calleeName(p) != "" && !pureFuncs[calleeName(p)] && !c.isCast(p) {
			c.ok = false
		}
		return c.ok
	})
}

// expr checks an expression: no memory touched, only own variables written,
// only the calls a pure collective may make.
func (c *collectiveCheck) expr(x parser.Node) {
	parser.Walk(x, func(n parser.Node) bool {
		if !c.ok {
			return false
		}
		switch n := n.(type) {
		case *parser.Lambda, *parser.NewExpr, *parser.DeleteExpr:
			c.ok = false
		case *parser.SizeofExpr:
			return false
		case *parser.CondExpr:
			// A shuffle in a branch of ?: would be run by some threads only.
			if n.Then != nil && (c.hasCall(n.Then) || c.hasCall(n.Else)) {
				c.ok = false
			}
		case *parser.BinaryExpr:
			for _, r := range n.Rest {
				if (r.Op == "&&" || r.Op == "||") && c.hasCall(r) {
					c.ok = false
				}
			}
		case *parser.AssignExpr:
			if n.Op != "" {
				c.store(n.Left)
				c.defs = append(c.defs, varDef{name: lvalueRoot(n.Left), uses: c.uses(n)})
			}
		case *parser.UnaryExpr:
			switch n.Op {
			case "*":
				c.ok = false
			case "++", "--":
				if n.Operand == nil || n.Operand.Unary == nil || n.Operand.Unary.Postfix == nil {
					c.ok = false
				} else {
					c.store(&parser.CondExpr{Bin: &parser.BinaryExpr{First: n.Operand}})
				}
			}
		case *parser.PostfixExpr:
			for i, op := range n.Ops {
				switch {
				case op.Member != nil && op.Member.Arrow:
					c.ok = false
				case op.Index != nil:
					prefix := true
					for _, p := range n.Ops[:i] {
						prefix = prefix && p.Index != nil
					}
					if !prefix || n.X.Name == nil || len(n.X.Name.Segs) != 1 || i >= c.arrays[n.X.Name.Segs[0].Name] {
						c.ok = false
					}
				case op.Incr != "":
					c.store(&parser.CondExpr{Bin: &parser.BinaryExpr{First: &parser.CastExpr{Unary: &parser.UnaryExpr{Postfix: &parser.PostfixExpr{X: n.X, Ops: n.Ops[:i]}}}}})
				case op.Call != nil:
					if i > 0 {
						c.ok = false // a method: not followed
						break
					}
					name := calleeName(n)
					switch {
					case name == "" || pureFuncs[name] || inactiveCalls[name] || c.isCast(n):
					case strings.HasPrefix(name, "__"):
						c.ok = false // another intrinsic: a load, a vote, an atomic
					default:
						c.calls = append(c.calls, name)
					}
				}
			}
		}
		return c.ok
	})
}

// store checks that an assignment target is a variable of the helper's own.
func (c *collectiveCheck) store(x *parser.CondExpr) {
	root := lvalueRoot(x)
	if root == "" || !c.locals[root] || c.refs[root] {
		c.ok = false
		return
	}
	indices := 0
	for _, op := range x.Bin.First.Unary.Postfix.Ops {
		if op.Index != nil {
			indices++
		}
	}
	if indices > c.arrays[root] {
		c.ok = false
	}
}

// uses are the names an expression's value is computed from; a shuffle's
// result comes from another lane, so it counts as coming from the arguments.
func (c *collectiveCheck) uses(x parser.Node) []string {
	ids := identNames(x)
	if c.hasCall(x) {
		ids = append(ids, "\x00call")
	}
	return ids
}

func (c *collectiveCheck) hasCall(x parser.Node) bool {
	found := false
	parser.Walk(x, func(n parser.Node) bool {
		if p, ok := n.(*parser.PostfixExpr); ok && calleeName(p) != "" && !pureFuncs[calleeName(p)] && !c.isCast(p) {
			found = true
		}
		return !found
	})
	return found
}

func (c *collectiveCheck) isCast(p *parser.PostfixExpr) bool {
	return p.X.Basic != "" || p.X.Name != nil && c.f.TypeNames[p.X.Name.Segs[0].Name]
}

// taint spreads "comes from the arguments" through the definitions.
func (c *collectiveCheck) taint() {
	c.tainted["\x00call"] = true
	for changed := true; changed; {
		changed = false
		for _, d := range c.defs {
			if d.name == "" || c.tainted[d.name] {
				continue
			}
			for _, u := range d.uses {
				if c.tainted[u] {
					c.tainted[d.name] = true
					changed = true
					break
				}
			}
		}
	}
}

// inactiveSafe reports whether every definition called name is a pure
// collective that threads that returned may run (their own bodies and
// every helper they call).
func (a *Analysis) inactiveSafe(name string) bool {
	targets := a.byName[name]
	if len(targets) == 0 {
		return false
	}
	seen := map[*parser.Func]bool{}
	for _, t := range targets {
		if !a.inactiveSafeFunc(t, seen) {
			return false
		}
	}
	return true
}

func (a *Analysis) inactiveSafeFunc(fn *parser.Func, seen map[*parser.Func]bool) bool {
	if seen[fn] {
		return true // a cycle: judged where it started
	}
	seen[fn] = true
	fi := a.Funcs[fn]
	if fi == nil || !fi.hasBody || !fi.collective.pure || fn.Global {
		return false
	}
	for _, name := range fi.collective.calls {
		targets := a.byName[name]
		if len(targets) == 0 {
			return false
		}
		for _, t := range targets {
			if !a.inactiveSafeFunc(t, seen) {
				return false
			}
		}
	}
	return true
}
