package transform

import (
	"slices"
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
//
// One kind of argument may decide its control flow: a cooperative-groups
// tile passed in (`tile_sum(cg::thread_block_tile<32> warp, float v)`,
// whose loop runs to warp.size()), and what is computed from it and from
// nothing else the caller gave. Such parameters are the helper's
// condParams; the caller's lowering checks each call's argument for them as
// it checks a condition around a barrier (threads that returned must have
// the same value as their warp).

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
	pure       bool     // its own body is a pure collective's
	calls      []string // the other functions it calls, to be pure collectives too
	condParams []int    // the parameters (tiles) its control flow depends on
}

// tileShuffles are the tile methods a pure collective may call on a tile
// parameter: every thread of the tile runs them, as __shfl_sync.
var tileShuffles = map[string]bool{"shfl": true, "shfl_up": true, "shfl_down": true, "shfl_xor": true, "sync": true}

// tileQueries are a tile's own facts: the same for every lane that holds
// the tile, read from no memory.
var tileQueries = map[string]bool{"size": true, "num_threads": true, "thread_rank": true, "meta_group_rank": true, "meta_group_size": true}

// inactiveFacts judges a device function's own body (see the top of this file).
func inactiveFacts(fn *parser.Func, body *parser.Block, f *parser.File) helperFacts {
	c := &collectiveCheck{f: f, locals: map[string]bool{}, arrays: map[string]int{}, refs: map[string]bool{},
		tiles: map[string]bool{}, ok: true}
	for _, p := range fn.Params {
		if p.Name == "" {
			continue
		}
		if paramGroupKind(p.Type) == "tile" {
			c.tiles[p.Name] = true
		}
		// A reference parameter writes the caller's variable or memory.
		if strings.Contains(p.Type, "&") {
			c.refs[p.Name] = true
		}
		c.locals[p.Name] = true
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
	// What each condition depends on: a shuffle's result (from another
	// lane) or an argument other than a tile refuses; a tile is checked
	// at the call.
	var condParams []int
	for i, p := range fn.Params {
		switch {
		case p.Name == "" || !c.decides(p.Name):
		case c.tiles[p.Name]:
			condParams = append(condParams, i)
		default:
			c.ok = false
		}
	}
	if c.decides("\x00call") {
		c.ok = false
	}
	return helperFacts{pure: c.ok, calls: c.calls, condParams: condParams}
}

// decides reports whether a condition depends on src (through reach).
func (c *collectiveCheck) decides(src string) bool {
	from := c.reach(src)
	return slices.ContainsFunc(c.conds, func(x parser.Node) bool {
		return slices.ContainsFunc(identNames(x), func(id string) bool { return from[id] })
	})
}

type collectiveCheck struct {
	f      *parser.File
	locals map[string]bool // parameters and the names declared in the body
	arrays map[string]int  // local arrays: their dimensions
	refs   map[string]bool // references (parameters and locals)
	tiles  map[string]bool // parameters that are cooperative-groups tiles
	defs   []varDef        // x <- the names its value is computed from
	conds  []parser.Node   // conditions that decide the control flow
	calls  []string
	ok     bool
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
		if p, ok := n.(*parser.PostfixExpr); ok && c.impureCall(p) {
			c.ok = false
		}
		return c.ok
	})
}

// impureCall reports whether p calls something other than a pure function,
// a cast or a tile's query: a shuffle, another helper, an intrinsic.
func (c *collectiveCheck) impureCall(p *parser.PostfixExpr) bool {
	return calleeName(p) != "" && !pureFuncs[calleeName(p)] && !c.isCast(p) && c.tileOp(p) != "query"
}

// tileOp classifies tile.m(...) on a tile parameter: "shuffle" for the
// methods every lane runs together, "query" for the tile's own facts, ""
// for anything else (refused as a method call).
func (c *collectiveCheck) tileOp(p *parser.PostfixExpr) string {
	if p.X.Name == nil || len(p.X.Name.Segs) != 1 || !c.tiles[p.X.Name.Segs[0].Name] || len(p.Ops) != 2 ||
		p.Ops[0].Member == nil || p.Ops[0].Member.Arrow || p.Ops[1].Call == nil {
		return ""
	}
	switch name := p.Ops[0].Member.Name; {
	case tileShuffles[name]:
		return "shuffle"
	case tileQueries[name]:
		return "query"
	}
	return ""
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
			if c.tileOp(n) != "" {
				return true // its arguments are checked as the walk goes on
			}
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
		if p, ok := n.(*parser.PostfixExpr); ok && c.impureCall(p) {
			found = true
		}
		return !found
	})
	return found
}

func (c *collectiveCheck) isCast(p *parser.PostfixExpr) bool {
	return p.X.Basic != "" || p.X.Name != nil && c.f.TypeNames[p.X.Name.Segs[0].Name]
}

// reach is the set of names whose value may be computed from src (a
// parameter, or "\x00call" for a shuffle's result), through the
// definitions.
func (c *collectiveCheck) reach(src string) map[string]bool {
	from := map[string]bool{src: true}
	for changed := true; changed; {
		changed = false
		for _, d := range c.defs {
			if d.name == "" || from[d.name] {
				continue
			}
			for _, u := range d.uses {
				if from[u] {
					from[d.name] = true
					changed = true
					break
				}
			}
		}
	}
	return from
}

// inactiveSafe reports whether every definition called name is a pure
// collective that threads that returned may run (their own bodies and
// every helper they call), and which of a call's arguments its control
// flow depends on (tiles, which the caller must check).
func (a *Analysis) inactiveSafe(name string) (condParams []int, ok bool) {
	targets := a.byName[name]
	if len(targets) == 0 {
		return nil, false
	}
	seen := map[*parser.Func]bool{}
	for _, t := range targets {
		if !a.inactiveSafeFunc(t, seen, true) {
			return nil, false
		}
		for _, i := range a.Funcs[t].collective.condParams {
			if !slices.Contains(condParams, i) {
				condParams = append(condParams, i)
			}
		}
	}
	slices.Sort(condParams)
	return condParams, true
}

// inactiveSafeFunc judges fn and the helpers it calls; a helper called by
// another (not top) must take no tile its control flow depends on, since
// nothing checks the argument its caller passes.
func (a *Analysis) inactiveSafeFunc(fn *parser.Func, seen map[*parser.Func]bool, top bool) bool {
	if seen[fn] {
		return true // a cycle: judged where it started
	}
	seen[fn] = true
	fi := a.Funcs[fn]
	if fi == nil || !fi.hasBody || !fi.collective.pure || fn.Global || (!top && len(fi.collective.condParams) > 0) {
		return false
	}
	for _, name := range fi.collective.calls {
		targets := a.byName[name]
		if len(targets) == 0 {
			return false
		}
		for _, t := range targets {
			if !a.inactiveSafeFunc(t, seen, false) {
				return false
			}
		}
	}
	return true
}
