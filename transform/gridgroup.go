package transform

import (
	"strings"
	"unicode"

	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/parser"
)

// Cooperative groups' grid group without grid-wide synchronisation.
//
// A kernel that uses cg::this_grid() only for its queries (thread_rank(),
// size(), block_rank(), block_index(), ...) runs in a persistent worker
// when those queries read the logical block index and grid: each is
// rewritten to the expression CUDA's header computes, over the blockIdx and
// gridDim that the body (or a helper's clone) receives as parameters. The
// grid_group object itself is kept: constructing it reads nothing, and
// is_valid() answers as natively (neither launch is cooperative).
//
// Refused: grid.sync(), cg::sync(grid) and barrier_arrive/wait (the sync
// analysis names the call), multi-grid groups, other members, and a grid
// group passed or copied anywhere slatec cannot follow it.

// gridQueries maps the virtualised grid_group queries to their expansion
// (blockIdx and gridDim are the logical values; blockDim and threadIdx the
// physical ones, which a persistent worker keeps).
var gridQueries = map[string]string{
	"block_rank":   "(((unsigned long long)blockIdx.z * gridDim.y * gridDim.x) + ((unsigned long long)blockIdx.y * gridDim.x) + (unsigned long long)blockIdx.x)",
	"num_blocks":   "((unsigned long long)gridDim.x * (gridDim.y * gridDim.z))",
	"thread_rank":  "((((unsigned long long)blockIdx.z * gridDim.y * gridDim.x) + ((unsigned long long)blockIdx.y * gridDim.x) + (unsigned long long)blockIdx.x) * (blockDim.x * blockDim.y * blockDim.z) + ((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x))",
	"num_threads":  "((unsigned long long)gridDim.x * (gridDim.y * gridDim.z) * (blockDim.x * blockDim.y * blockDim.z))",
	"size":         "((unsigned long long)gridDim.x * (gridDim.y * gridDim.z) * (blockDim.x * blockDim.y * blockDim.z))",
	"dim_blocks":   "dim3(gridDim.x, gridDim.y, gridDim.z)",
	"group_dim":    "dim3(gridDim.x, gridDim.y, gridDim.z)",
	"block_index":  "dim3(blockIdx.x, blockIdx.y, blockIdx.z)",
	"dim_threads":  "dim3(gridDim.x * blockDim.x, gridDim.y * blockDim.y, gridDim.z * blockDim.z)",
	"thread_index": "dim3(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y, blockIdx.z * blockDim.z + threadIdx.z)",
}

// gridOK are grid_group members that need no rewrite, and the sync members
// that the sync analysis refuses with its own message.
var gridOK = map[string]bool{"is_valid": true, "sync": true, "barrier_arrive": true, "barrier_wait": true}

// scanGridGroup checks the grid-group uses in a function body (toks) and
// records the virtualised queries as reads of blockIdx and gridDim, so a
// helper that makes them is cloned.
func (a *Analysis) scanGridGroup(fi *FuncInfo, toks []tok, kinds map[string]string) {
	text := func(i int) string {
		if i >= 0 && i < len(toks) {
			return toks[i].text
		}
		return ""
	}
	use := func(i int, form string) {
		l, c := a.posIn(fi.File, span(toks[i]))
		for _, b := range []string{BlockIdx, GridDim} {
			fi.Uses = append(fi.Uses, BuiltinUse{Name: b, Span: span(toks[i]), Line: l, Col: c, Via: "grid group " + form})
		}
	}
	// member checks the member access at toks[j] ("."), on a grid group
	// written recv; it reports whether the access is fine.
	member := func(j int, recv string) bool {
		if text(j) != "." || j+2 >= len(toks) || text(j+2) != "(" {
			return false
		}
		m := text(j + 1)
		switch {
		case gridQueries[m] != "":
			use(j+1, recv+"."+m+"()")
			return true
		case gridOK[m]:
			return true
		}
		fi.refuse(a, span(toks[j+1]), "calls %s.%s() on the grid group: slatec virtualises only its queries (thread_rank(), size(), num_threads(), block_rank(), num_blocks(), dim_blocks(), block_index(), thread_index(), dim_threads(), is_valid())", recv, m)
		return true
	}
	for i, t := range toks {
		if t.Kind != parser.Ident || text(i-1) == "." || text(i-1) == "->" {
			continue
		}
		name := t.text
		switch {
		case name == "this_multi_grid" || name == "multi_grid_group":
			fi.refuse(a, span(t), "uses a multi-device grid group (%s), which the persistent form does not support", name)
		case name == "this_grid":
			if text(i+1) != "(" || text(i+2) != ")" {
				fi.refuse(a, span(t), "uses this_grid in a way slatec cannot virtualise")
				continue
			}
			switch {
			case text(i+3) == ".":
				member(i+3, "this_grid()")
			case plainInit(toks, i-qualLen(toks, i)):
				// The initialiser of a grid variable: checked at its uses.
			case isSyncArg(toks, i):
				// cg::sync(this_grid()): refused by the sync analysis.
			case a.isParsedCallArg(toks, i-qualLen(toks, i), i+3):
				// Passed to a function slatec analyses.
			default:
				fi.refuse(a, span(t), "passes this_grid() on: slatec virtualises the grid group only where its queries are called directly")
			}
		case name == "grid_group" && text(i+1) == "::" && text(i+3) == "(":
			// The static form cg::grid_group::thread_rank().
			m := text(i + 2)
			if gridQueries[m] != "" {
				use(i+2, "grid_group::"+m+"()")
			} else if !gridOK[m] {
				fi.refuse(a, span(toks[i+2]), "calls grid_group::%s(), which slatec cannot virtualise", m)
			}
		case kinds[name] == "grid" && text(i-1) != "::":
			switch {
			case text(i+1) == ".":
				member(i+1, name)
			case isGroupDecl(toks, i):
				// Its declaration (or assignment from this_grid()).
			case isSyncArg(toks, i):
			case a.isParsedCallArg(toks, i, i+1):
				// Passed to a function slatec analyses: its parameter is a
				// grid group there, checked and virtualised in its copy.
			default:
				fi.refuse(a, span(t), "passes or copies the grid group %s: slatec virtualises the grid group only where its queries are called directly or in functions it can see", name)
			}
		}
	}
}

// isGroupDecl reports whether toks[i] is the name in a declaration
// (`grid_group g = ...`, `auto& g(...)`) or the target of an assignment
// at the start of a statement (`g = cg::this_grid();`).
func isGroupDecl(toks []tok, i int) bool {
	text := func(j int) string {
		if j >= 0 && j < len(toks) {
			return toks[j].text
		}
		return ""
	}
	typeEnd := func(j int) bool {
		if j < 0 {
			return false
		}
		t := toks[j]
		return (t.Kind == parser.Ident && t.text != "return") || t.text == "auto" || t.text == "const" || t.text == "volatile" || t.text == ">"
	}
	switch text(i + 1) {
	case "=", "(", "{", ";", ",":
	default:
		return false
	}
	if typeEnd(i-1) || (text(i-1) == "&" || text(i-1) == "&&") && typeEnd(i-2) {
		return true
	}
	p := text(i - 1)
	return text(i+1) == "=" && (p == ";" || p == "{" || p == "}" || p == "")
}

// plainInit reports whether toks[i] starts the initialiser of a plain
// variable: `g = ...` or `T g = ...`, not `obj.g = ...` or `a[0] = ...`.
func plainInit(toks []tok, i int) bool {
	if i < 2 || toks[i-1].text != "=" || toks[i-2].Kind != parser.Ident {
		return false
	}
	return i < 3 || (toks[i-3].text != "." && toks[i-3].text != "->")
}

// qualLen is the number of tokens of the qualifier before toks[i]
// (2 for cg::this_grid).
func qualLen(toks []tok, i int) int {
	n := 0
	for i-n >= 2 && toks[i-n-1].text == "::" && toks[i-n-2].Kind == parser.Ident {
		n += 2
	}
	return n
}

// isParsedCallArg reports whether toks[from:to] is a whole argument of a
// call to a function slatec analyses (defined in the file or a header)
// whose parameter in that position is declared a grid_group: there the
// helper's own analysis follows the group. A template or `auto` parameter
// would not be known as a grid group, so it does not count.
func (a *Analysis) isParsedCallArg(toks []tok, from, to int) bool {
	if from < 1 || to >= len(toks) || (toks[from-1].text != "(" && toks[from-1].text != ",") || (toks[to].text != "," && toks[to].text != ")") {
		return false
	}
	depth, arg := 0, 0
	for j := from - 1; j >= 0; j-- {
		switch toks[j].text {
		case ")", "]", "}":
			depth++
		case "[", "{":
			depth--
		case ",":
			if depth == 0 {
				arg++
			}
		case "(":
			if depth == 0 {
				if j == 0 || toks[j-1].Kind != parser.Ident {
					return false
				}
				ok := false
				for _, fn := range a.byName[toks[j-1].text] {
					if !(fn.Device || fn.Global) {
						continue
					}
					if arg >= len(fn.Params) || !strings.Contains(fn.Params[arg].Type, "grid_group") || strings.Contains(fn.Params[arg].Type, "multi_grid_group") {
						return false
					}
					ok = true
				}
				return ok
			}
			depth--
		}
		if depth < 0 {
			return false
		}
	}
	return false
}

// paramGroupKinds gives a function's cooperative-groups parameters
// (`const cg::grid_group& g`, `cg::thread_block_tile<32> t`) their kinds,
// as a local's declaration gives them: a grid group's queries are
// virtualised and its sync refused, and a tile's shuffles and votes are
// warp sync points. Parameters of other types (a template's `Group g`,
// `cg::thread_group`) stay unknown; the sync analysis reads their
// collectives conservatively (FuncInfo's scan).
func paramGroupKinds(fn *parser.Func, kinds map[string]string) {
	for _, p := range fn.Params {
		if p.Name == "" {
			continue
		}
		if k := paramGroupKind(p.Type); k != "" {
			kinds[p.Name] = k
		}
	}
}

// paramGroupKind is the group kind a parameter type names (its first word
// that groupTypeKind knows), or "". A multi-grid group stays unknown, as
// parameters have always read it.
func paramGroupKind(typ string) string {
	for _, w := range strings.FieldsFunc(typ, func(r rune) bool { return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if w == "multi_grid_group" {
			return ""
		}
		if k := groupTypeKind(w); k != "" {
			return k
		}
	}
	return ""
}

// isSyncArg reports whether toks[i] starts the only argument of a
// (cg::)sync( ... ) call.
func isSyncArg(toks []tok, i int) bool {
	return i >= 2 && toks[i-1].text == "(" && toks[i-2].text == "sync" && (i < 3 || toks[i-3].text != ".")
}

// gridGroupEdits rewrites the grid group's queries in a body that receives
// the logical blockIdx and gridDim as parameters (a kernel's body function,
// a helper's clone, a merged body).
func gridGroupEdits(a *Analysis, fi *FuncInfo) []emit.Edit {
	if fi.Func.Def.Body == nil {
		return nil
	}
	kinds := a.groupVarKinds(tokensOf(fi.File, fi.Func.BodySpan))
	paramGroupKinds(fi.Func, kinds)
	var edits []emit.Edit
	parser.Walk(fi.Func.Def.Body, func(n parser.Node) bool {
		p, ok := n.(*parser.PostfixExpr)
		if !ok || p.X.Name == nil {
			return true
		}
		segs := p.X.Name.Segs
		last := segs[len(segs)-1].Name
		// The member call: recv.m(), this_grid().m(), grid_group::m().
		at := -1 // index of the member's call op
		method := ""
		switch {
		case len(segs) == 1 && kinds[last] == "grid" && len(p.Ops) >= 2 && p.Ops[0].Member != nil && !p.Ops[0].Member.Arrow:
			at, method = 1, p.Ops[0].Member.Name
		case last == "this_grid" && len(p.Ops) >= 3 && p.Ops[0].Call != nil && len(p.Ops[0].Call.Args) == 0 &&
			p.Ops[1].Member != nil && !p.Ops[1].Member.Arrow:
			at, method = 2, p.Ops[1].Member.Name
		case len(segs) >= 2 && segs[len(segs)-2].Name == "grid_group" && len(p.Ops) >= 1:
			at, method = 0, last
		}
		if at < 0 || at >= len(p.Ops) || p.Ops[at].Call == nil || len(p.Ops[at].Call.Args) != 0 {
			return true
		}
		form := gridQueries[method]
		if form == "" {
			return true
		}
		// groupIndexEdits already turns a trailing .block_index() into the
		// same expression.
		if method == "block_index" && at > 0 && at+1 == len(p.Ops) {
			return true
		}
		sp := parser.Span{Start: p.Span().Start, End: p.Ops[at].Span().End}
		edits = append(edits, emit.Replace(sp.Start, sp.End, "("+form+")", "grid group"))
		return true
	})
	return edits
}
