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

// returns lists the kernel body's return statements (not those of
// lambdas) and whether a sync point can run after each: textually after
// it, or anywhere in a loop that encloses it.
func (a *Analysis) returns(fn *parser.Func, k *KernelInfo) []ReturnInfo {
	sites := append(a.syncSites(fn), k.OpaqueSync...)
	var out []ReturnInfo
	var loops []parser.Span
	var visit func(n parser.Node)
	visit = func(n parser.Node) {
		switch n := n.(type) {
		case *parser.Lambda:
			return // a lambda's return ends the lambda, not the thread
		case *parser.ForStmt, *parser.WhileStmt, *parser.DoStmt, *parser.MacroStmt:
			// A statement macro may hide a loop: count it as one.
			loops = append(loops, n.Span())
			for _, c := range parser.Children(n) {
				visit(c)
			}
			loops = loops[:len(loops)-1]
			return
		case *parser.ReturnStmt:
			r := ReturnInfo{Span: n.Span()}
			r.Line, r.Col = a.pos(r.Span)
			for _, s := range sites {
				after := s.Start >= r.Span.End
				inLoop := false
				for _, l := range loops {
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
			out = append(out, r)
			return
		}
		for _, c := range parser.Children(n) {
			visit(c)
		}
	}
	visit(fn.Def.Body)
	return out
}
