package transform

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/parser"
	"github.com/slatec/slatec/templates"
)

// mergedLead are the parameters that give a body or a helper clone its
// virtual builtins: named like the builtins, they shadow them, so the code
// and the macros it uses read the virtual values unchanged.
const mergedLead = "const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim"

// mergedLeadArgs passes a body's virtual builtins on to a helper clone.
const mergedLeadArgs = "blockIdx, gridDim, threadIdx, blockDim"

// ---------------------------------------------------------------------------
// Helper clones

// builtinUsers returns the device functions of a that read any builtin
// index variable (directly, through a macro, or through a callee). In a
// merged block all four are virtual, so all of these need clones.
func builtinUsers(a *Analysis) map[*parser.Func]bool {
	users := map[*parser.Func]bool{}
	for fn, fi := range a.Funcs {
		if len(fi.Uses) > 0 {
			users[fn] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for fn, fi := range a.Funcs {
			if users[fn] {
				continue
			}
			for _, c := range fi.Calls {
				for _, t := range c.Targets {
					if users[t] && !users[fn] {
						users[fn] = true
						changed = true
					}
				}
			}
		}
	}
	return users
}

// planClones records, per file, the helpers its merged kernels reach that
// read builtins. Every overload of such a name is cloned, so overload
// resolution among the clones is the original's.
func (m *merger) planClones() {
	for _, f := range m.files {
		users := builtinUsers(f.a)
		for _, k := range f.kernels {
			for _, h := range k.helpers() {
				if users[h.Func] {
					f.clones[h.Func.Name] = true
				}
			}
		}
	}
}

// cloneTargets lists the functions to clone for a file, headers first in
// include order, each file's in source order (callees before callers, as
// C++ declares them).
func (m *merger) cloneTargets(f *mergeFile) []*FuncInfo {
	a := f.a
	order := map[*parser.File]int{a.File: len(a.Deps)}
	for i, d := range a.Deps {
		order[d] = i
	}
	var out []*FuncInfo
	for _, name := range sortedNames(f.clones) {
		for _, fn := range a.byName[name] {
			if fi := a.Funcs[fn]; fi != nil && !fn.Global {
				out = append(out, fi)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		oi, oj := order[out[i].File], order[out[j].File]
		if oi != oj {
			return oi < oj
		}
		return out[i].Func.Def.Span().Start < out[j].Func.Def.Span().Start
	})
	return out
}

// cloneText renders the merged copy of a helper: name__merged, taking the
// virtual builtins as leading parameters.
func (m *merger) cloneText(a *Analysis, fi *FuncInfo, clones map[string]bool) (string, error) {
	fn := fi.Func
	f := fi.File
	def := fn.Def.Span()
	var edits []emit.Edit
	edits = append(edits, emit.Replace(fn.NameSpan.Start, fn.NameSpan.End, cloneName(f, fn, "__merged"), "clone name"))
	ps := fn.ParamsSpan
	if len(fn.Params) == 0 {
		edits = append(edits, emit.Replace(ps.Start, ps.End, "("+mergedLead+")", "clone params"))
	} else {
		edits = append(edits, emit.Insert(ps.Start+1, mergedLead+", ", "clone params"))
	}
	edits = append(edits, builtinEdits(a, fi, clones)...)
	text, err := emit.ApplyRange(f.Src, def.Start, def.End, edits)
	if err != nil {
		return "", err
	}
	line, _ := a.posIn(f, def)
	text = fmt.Sprintf("\n#line %d \"%s\"\n%s\n", line, lineFile(f), text)
	if f != a.File {
		// A header's helper is emitted at global scope in the main file:
		// reopen its namespaces.
		for i := len(fn.Namespace) - 1; i >= 0; i-- {
			ns := fn.Namespace[i]
			if ns == "(anonymous)" {
				ns = ""
			}
			text = "\nnamespace " + ns + " {" + text + "}\n"
		}
	}
	return text, nil
}

// builtinEdits are the rewrites a body or clone needs so that everything it
// runs sees the virtual builtins: calls to cloned helpers, the block
// group's cooperative-groups queries, and lambda captures.
func builtinEdits(a *Analysis, fi *FuncInfo, clones map[string]bool) []emit.Edit {
	var edits []emit.Edit
	edits = append(edits, mergedCallEdits(fi, clones)...)
	edits = append(edits, (&transformer{a: a}).groupIndexEdits(fi)...)
	edits = append(edits, blockGroupEdits(a, fi)...)
	edits = append(edits, lambdaCaptureEdits(a, fi, clones, []string{BlockIdx, GridDim, ThreadIdx, BlockDim})...)
	return edits
}

// mergedCallEdits rewrites calls to cloned helpers:
// h(args) -> h__merged(blockIdx, gridDim, threadIdx, blockDim, args).
func mergedCallEdits(fi *FuncInfo, clones map[string]bool) []emit.Edit {
	return cloneCallEdits(fi, clones, "__merged", mergedLeadArgs)
}

// blockGroupQueries are the thread_block members that read the physical
// thread index or block shape, and what they become in a merged body. The
// cast keeps the member's own result type.
var blockGroupQueries = map[string]string{
	"thread_rank":  "static_cast<decltype(%s)>((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x)",
	"size":         "static_cast<decltype(%s)>(blockDim.x * blockDim.y * blockDim.z)",
	"num_threads":  "static_cast<decltype(%s)>(blockDim.x * blockDim.y * blockDim.z)",
	"thread_index": "dim3(threadIdx.x, threadIdx.y, threadIdx.z)",
	"group_dim":    "dim3(blockDim.x, blockDim.y, blockDim.z)",
	"dim_threads":  "dim3(blockDim.x, blockDim.y, blockDim.z)",
}

// blockGroupEdits rewrites cta.thread_rank(), cta.size() and friends on a
// cooperative-groups thread_block (a variable of that kind, or
// this_thread_block() itself): they read the merged block's physical
// values. Tile and warp queries are unchanged (warps are kept whole).
func blockGroupEdits(a *Analysis, fi *FuncInfo) []emit.Edit {
	if fi.Func.Def.Body == nil {
		return nil
	}
	f := fi.File
	kinds := a.groupVarKinds(tokensOf(f, fi.Func.BodySpan))
	var edits []emit.Edit
	parser.Walk(fi.Func.Def.Body, func(n parser.Node) bool {
		p, ok := n.(*parser.PostfixExpr)
		if !ok || p.X.Name == nil {
			return true
		}
		recv := p.X.Name.Segs[len(p.X.Name.Segs)-1].Name
		for i := 0; i+1 < len(p.Ops); i++ {
			mem, call := p.Ops[i].Member, p.Ops[i+1].Call
			if mem == nil || mem.Arrow || call == nil || len(call.Args) != 0 {
				continue
			}
			form, ok := blockGroupQueries[mem.Name]
			if !ok {
				continue
			}
			block := (i == 0 && kinds[recv] == "block") ||
				(i == 1 && p.Ops[0].Call != nil && len(p.Ops[0].Call.Args) == 0 && recv == "this_thread_block")
			if !block {
				continue
			}
			sp := parser.Span{Start: p.Span().Start, End: p.Ops[i+1].Span().End}
			text := form
			if strings.Contains(form, "%s") {
				text = fmt.Sprintf(form, f.Text(sp))
			}
			edits = append(edits, emit.Replace(sp.Start, sp.End, text, "block group"))
			break
		}
		return true
	})
	return edits
}

// ---------------------------------------------------------------------------
// Combining the lowering with the other rewrites

// composeEdits merges the lowering's edits with other edits of the same
// body. The lowering replaces some spans (a hoisted initialiser becomes {},
// a vote predicate is wrapped) and may copy their original text elsewhere
// (the hoisted assignment). An edit inside such a span is applied to the
// copy instead: to the replacement's own text if it holds the original, or
// to the nearest later insertion that does.
func composeEdits(src []byte, lower, other []emit.Edit) ([]emit.Edit, error) {
	out := append([]emit.Edit(nil), lower...)
	inner := map[int][]emit.Edit{}
	for _, e := range other {
		host := -1
		for i, l := range lower {
			if l.End == l.Start || l.Start > e.Start || e.End > l.End {
				continue
			}
			if e.Start == e.End && (e.Start == l.Start || e.Start == l.End) {
				continue // an insertion at the boundary goes before or after it
			}
			host = i
			break
		}
		if host < 0 {
			out = append(out, e)
			continue
		}
		inner[host] = append(inner[host], e)
	}
	hosts := make([]int, 0, len(inner))
	for h := range inner {
		hosts = append(hosts, h)
	}
	sort.Ints(hosts)
	for _, h := range hosts {
		l := lower[h]
		orig := string(src[l.Start:l.End])
		rewritten, err := emit.ApplyRange(src, l.Start, l.End, inner[h])
		if err != nil {
			return nil, err
		}
		if strings.Contains(l.Text, orig) {
			out[h].Text = strings.Replace(l.Text, orig, rewritten, 1)
			continue
		}
		best := -1
		for i, o := range out[:len(lower)] {
			if o.Start == o.End && o.Start >= l.End && strings.Contains(o.Text, orig) && (best < 0 || o.Start < out[best].Start) {
				best = i
			}
		}
		if best >= 0 {
			out[best].Text = strings.Replace(out[best].Text, orig, rewritten, 1)
		}
		// Otherwise the original text is gone from the output, and with it
		// the need to rewrite it.
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// Static shared memory in a union

// sharedPlan says how a kernel's static __shared__ variables are laid out.
type sharedPlan struct {
	members []sharedMember
	edits   []emit.Edit // declarations rewritten to references
	kept    []string    // variables left in place
	notes   []diag.Diagnostic
}

type sharedMember struct {
	Line int
	Decl string
}

// planShared moves a kernel body's static __shared__ declarations into a
// struct: `__shared__ float t[32][33];` becomes the member `float t[32][33];`
// and, in the body, `float (&t)[32][33] = slate_sm.t;`. The merged kernel
// overlays the structs of all bodies in one __shared__ union: only one body
// runs in a merged block at a time, so they can share storage. A
// declaration that names something declared inside the body (a local
// constexpr size, a local type) cannot move out of it and stays.
func (m *merger) planShared(k *mergeKernel) *sharedPlan {
	if k.bodyOwner != k {
		return k.bodyOwner.shared
	}
	sp := &sharedPlan{}
	body := k.k.Func.Def.Body
	if body == nil {
		return sp
	}
	f := k.a.File
	var decls []*parser.DeclStmt
	parser.Walk(body, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.Lambda:
			return false
		case *parser.DeclStmt:
			if isStaticShared(n) {
				decls = append(decls, n)
			}
		}
		return true
	})
	if len(decls) == 0 {
		return sp
	}
	if m.opts.NoShareShared {
		for _, d := range decls {
			for _, id := range d.Decls {
				sp.kept = append(sp.kept, declName(id.Decl))
			}
		}
		return sp
	}
	locals := bodyLocalNames(f, body)
	used := map[string]bool{}
	for _, d := range decls {
		names := map[string]bool{}
		ok := true
		for _, id := range d.Decls {
			name := declName(id.Decl)
			names[name] = true
			if name == "" || id.Init != nil || id.Decl.Nested != nil || id.Decl.Fn != nil || len(id.Decl.Bindings) > 0 {
				ok = false
			}
		}
		var local string
		for _, t := range tokensOf(f, d.Span()) {
			if t.Kind == parser.Ident && !names[t.text] && locals[t.text] && local == "" {
				local = t.text
			}
		}
		if !ok || local != "" {
			for _, id := range d.Decls {
				sp.kept = append(sp.kept, declName(id.Decl))
			}
			if local != "" {
				sp.notes = append(sp.notes, k.a.at(d.Span().Start, diag.Warning,
					"kernel %s: this __shared__ declaration uses %s, declared inside the kernel, so it stays out of the merged kernel's shared-memory union",
					k.k.Func.Name, local))
			}
			continue
		}
		member := specsText(f, d.Specs, true)
		ref := specsText(f, d.Specs, false)
		line, _ := k.a.pos(d.Span())
		var refs []string
		for _, id := range d.Decls {
			name := declName(id.Decl)
			mname := name
			for n := 2; used[mname]; n++ {
				mname = name + "_" + strconv.Itoa(n)
			}
			used[mname] = true
			sp.members = append(sp.members, sharedMember{Line: line,
				Decl: member + " " + declaratorWithName(f, id.Decl, name, mname) + ";"})
			refs = append(refs, ref+" "+declaratorWithName(f, id.Decl, name, "(&"+name+")")+" = slate_sm."+mname+";")
		}
		sp.edits = append(sp.edits, emit.Replace(d.Span().Start, d.Span().End, strings.Join(refs, " "), "shared union"))
	}
	return sp
}

// isStaticShared reports whether a declaration is a static (not extern)
// __shared__ variable.
func isStaticShared(d *parser.DeclStmt) bool {
	shared, ext := false, false
	for _, q := range d.Specs.Pre {
		shared = shared || q.Word == "__shared__"
		ext = ext || q.Word == "extern"
	}
	for _, q := range d.Specs.Post {
		shared = shared || q.Word == "__shared__"
		ext = ext || q.Word == "extern"
	}
	return shared && !ext
}

// specsText renders declaration specifiers without __shared__ and static;
// withAlign keeps __align__/alignas (a struct member keeps its alignment, a
// reference to it needs none).
func specsText(f *parser.File, ds *parser.DeclSpecs, withAlign bool) string {
	var skip []parser.Span
	for _, q := range ds.Pre {
		if q.Word == "__shared__" || q.Word == "static" || (!withAlign && q.Align != nil) {
			skip = append(skip, q.Span())
		}
	}
	for _, q := range ds.Post {
		if q.Word == "__shared__" || q.Word == "static" || (!withAlign && q.Align != nil) {
			skip = append(skip, q.Span())
		}
	}
	var b strings.Builder
	prev := ""
	for _, t := range f.SignificantTokens(ds.Span()) {
		in := false
		for _, s := range skip {
			if int(t.Off) >= s.Start && int(t.End) <= s.End {
				in = true
			}
		}
		if in {
			continue
		}
		v := f.TokenText(t)
		if b.Len() > 0 && needSpace(prev, v) {
			b.WriteByte(' ')
		}
		b.WriteString(v)
		prev = v
	}
	return b.String()
}

// declaratorWithName returns a declarator's source text with its name
// replaced.
func declaratorWithName(f *parser.File, d *parser.Declarator, name, repl string) string {
	s := d.Span()
	for _, t := range f.SignificantTokens(s) {
		if t.Kind == parser.Ident && f.TokenText(t) == name {
			return strings.Join(strings.Fields(f.Text(parser.Span{Start: s.Start, End: int(t.Off)})+repl+
				f.Text(parser.Span{Start: int(t.End), End: s.End})), " ")
		}
	}
	return f.Text(s)
}

// bodyLocalNames returns the names a body declares: variables, local
// types, aliases and enumerators.
func bodyLocalNames(f *parser.File, body *parser.Block) map[string]bool {
	names := map[string]bool{}
	parser.Walk(body, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.Declarator:
			if name := declName(n); name != "" {
				names[name] = true
			}
			for _, b := range n.Bindings {
				names[b] = true
			}
		case *parser.OpaqueStmt:
			toks := tokensOf(f, n.Span())
			switch n.Keyword {
			case "using":
				if len(toks) > 1 && toks[1].Kind == parser.Ident {
					names[toks[1].text] = true
				}
			case "typedef":
				for i := len(toks) - 1; i >= 0; i-- {
					if toks[i].Kind == parser.Ident {
						names[toks[i].text] = true
						break
					}
				}
			case "struct", "class", "union", "enum":
				for _, t := range toks[1:] {
					if t.Kind == parser.Ident {
						names[t.text] = true
						if n.Keyword != "enum" {
							break
						}
					}
				}
			}
		}
		return true
	})
	return names
}

// ---------------------------------------------------------------------------
// Body functions

// mergedBodyView is the data of templates/merged_body.cu.tmpl.
type mergedBodyView struct {
	File, Name                   string
	HeadLine, BodyLine, NextLine int
	TemplateHeader, TemplateArgs string
	InLinkage                    bool
	Aliases                      []aliasView
	Shared                       []sharedMember
	BodyParams                   string
	Body                         string
}

type aliasView struct{ Name, Type string }

// bodyText renders a kernel's body function with its shared-memory struct
// and parameter aliases.
func (m *merger) bodyText(k *mergeKernel, clones map[string]bool) (string, error) {
	a := k.a
	fn := k.k.Func
	f := a.File
	v := mergedBodyView{File: lineFile(f), Name: fn.Name, InLinkage: (&transformer{a: a}).inLinkageBlock(fn)}
	v.HeadLine, _ = a.pos(fn.Def.Span())
	v.BodyLine, _ = a.pos(fn.BodySpan)
	v.NextLine, _ = a.Lines.Position(fn.Def.Span().End)
	if fn.IsTemplate() {
		v.TemplateHeader = tokenText(f, fn.TemplateSpan) + "\n"
		var args []string
		for _, tp := range fn.Template {
			args = append(args, tp.Name)
		}
		v.TemplateArgs = "<" + strings.Join(args, ", ") + ">"
	}
	if k.alias {
		for j, p := range fn.Params {
			v.Aliases = append(v.Aliases, aliasView{Name: aliasName(fn, j), Type: stripGridConstant(p.Type)})
		}
	}
	v.Shared = k.shared.members
	var params []string
	for _, p := range fn.Params {
		params = append(params, stripGridConstant(paramDeclText(f, p)))
	}
	if len(params) > 0 {
		v.BodyParams = ", " + strings.Join(params, ", ")
	}
	other := builtinEdits(a, k.k.FuncInfo, clones)
	other = append(other, k.shared.edits...)
	edits, err := composeEdits(f.Src, k.lower, other)
	if err != nil {
		return "", err
	}
	body, err := emit.ApplyRange(f.Src, fn.BodySpan.Start, fn.BodySpan.End, edits)
	if err != nil {
		return "", err
	}
	v.Body = body
	m.diags = append(m.diags, k.shared.notes...)
	return templates.Render(templates.MergedBody, v)
}

// aliasName is the name of the alias for parameter j's type.
func aliasName(fn *parser.Func, j int) string { return fmt.Sprintf("%s__merged_arg%d", fn.Name, j) }

// paramDeclText is a parameter's declaration without its default argument.
func paramDeclText(f *parser.File, p *parser.ParamInfo) string {
	end := p.Span.End
	if p.Default != "" {
		for _, tk := range f.SignificantTokens(p.Span) {
			if f.TokenText(tk) == "=" {
				end = int(tk.Off)
				break
			}
		}
	}
	return tokenText(f, parser.Span{Start: p.Span.Start, End: end})
}

// paramDeclNamed is paramDeclText with the parameter's name replaced (or,
// for an unnamed parameter, a name added).
func paramDeclNamed(f *parser.File, p *parser.ParamInfo, name string) string {
	if p.Name == "" {
		return paramDeclText(f, p) + " " + name
	}
	end := p.Span.End
	if p.Default != "" {
		for _, tk := range f.SignificantTokens(p.Span) {
			if f.TokenText(tk) == "=" {
				end = int(tk.Off)
				break
			}
		}
	}
	return strings.TrimSpace(tokenText(f, parser.Span{Start: p.Span.Start, End: p.NameSpan.Start}) + " " + name +
		tokenText(f, parser.Span{Start: p.NameSpan.End, End: end}))
}

// ---------------------------------------------------------------------------
// Parameters of the merged kernel

// planParams names the merged kernel's parameters: a kernel's own names,
// prefixed with its tag where two kernels use the same name.
func (m *merger) planParams() {
	count := map[string]int{}
	for _, k := range m.kernels {
		seen := map[string]bool{}
		for _, p := range k.k.Func.Params {
			if p.Name != "" && !seen[p.Name] {
				seen[p.Name] = true
				count[p.Name]++
			}
		}
	}
	taken := map[string]bool{}
	for i, k := range m.kernels {
		fn := k.k.Func
		f := k.a.File
		out := &MergedKernel{Name: fn.Name, QualifiedName: fn.QualifiedName(), TemplateArgs: k.in.TemplateArgs,
			File: lineFile(f), Tag: k.tag, Body: scopePrefix(fn) + fn.Name + "__merged_body" + argSuffix(k.in.TemplateArgs),
			SharedInUnion: len(k.shared.members) > 0, SharedKept: k.shared.kept}
		if m.opts.Alloc != nil {
			out.Alloc = m.opts.Alloc[i]
		}
		if fn.LaunchBounds != nil && len(fn.LaunchBounds.Args) > 0 {
			if n, err := strconv.ParseInt(strings.TrimRight(f.Text(fn.LaunchBounds.Args[0].Span()), "uUlL"), 0, 32); err == nil {
				out.LaunchBounds = int(n)
			}
		}
		for j, p := range fn.Params {
			name := p.Name
			switch {
			case name == "":
				name = fmt.Sprintf("%s_p%d", k.tag, j)
			case count[name] > 1:
				name = k.tag + "_" + name
			}
			base := name
			for n := 2; taken[name]; n++ {
				name = fmt.Sprintf("%s_%d", base, n)
			}
			taken[name] = true
			decl := paramDeclNamed(f, p, name)
			typ := stripGridConstant(p.Type)
			if k.alias {
				gc := ""
				if typ != strings.Join(strings.Fields(p.Type), " ") {
					gc = "__grid_constant__ "
				}
				typ = scopePrefix(fn) + aliasName(fn, j) + argSuffix(k.in.TemplateArgs)
				decl = gc + typ + " " + name
			}
			out.Params = append(out.Params, MergedParam{Name: name, Original: p.Name, Type: typ, Decl: decl})
		}
		k.out = out
	}
}

// ---------------------------------------------------------------------------
// The merged kernel and its launcher

// mergedView is the data of templates/merged.cu.tmpl.
type mergedView struct {
	File           string
	Line           int
	Kernel, Mode   string
	ModeConst      string
	N              int
	Sync           bool
	LaunchBounds   string
	MaxRegs        string
	Union          []unionMember
	Kernels        []mergedKernelView
	Params         string
	LauncherParams string
	ArgNames       string
	DefaultAlloc   string
	Summary        []string
}

type unionMember struct{ Type, Tag string }

type mergedKernelView struct {
	Body, Tag string
	Shared    bool
	Args      string
	// Mode split: the population kernel's own parameters, launch bounds,
	// shared-memory struct and barrier need.
	Params, Bounds, SmemType string
	MaxRegs                  string
	Sync                     bool
}

// tail renders the merged kernel and launcher; line is its first line in
// the output.
func (m *merger) tail(line int) (string, error) {
	v := mergedView{File: m.opts.OutputName, Line: line, Kernel: m.name, Mode: string(m.opts.Mode),
		ModeConst: m.opts.Mode.modeConst(), N: len(m.kernels), Sync: m.sync}
	var params, launcher, names, alloc []string
	bounds := 0
	for _, k := range m.kernels {
		fn := k.k.Func
		kv := mergedKernelView{Body: k.out.Body, Tag: k.tag, Shared: len(k.shared.members) > 0}
		if kv.Shared {
			v.Union = append(v.Union, unionMember{Type: scopePrefix(fn) + fn.Name + "__merged_smem" + argSuffix(k.in.TemplateArgs), Tag: k.tag})
		}
		var args, own []string
		for _, p := range k.out.Params {
			own = append(own, p.Decl)
			params = append(params, p.Decl)
			launcher = append(launcher, stripGridConstant(p.Decl))
			names = append(names, p.Name)
			args = append(args, p.Name)
		}
		if len(args) > 0 {
			kv.Args = ", " + strings.Join(args, ", ")
			kv.Params = ", " + strings.Join(own, ", ")
		}
		if kv.Shared {
			kv.SmemType = v.Union[len(v.Union)-1].Type
		}
		if k.out.LaunchBounds > 0 {
			kv.Bounds = fmt.Sprintf("__launch_bounds__(%d) ", k.out.LaunchBounds)
		}
		if i := len(v.Kernels); m.opts.PopulationMaxRegs != nil && m.opts.PopulationMaxRegs[i] > 0 {
			// nvcc refuses __launch_bounds__ beside __maxnreg__; the cap sets the budget.
			kv.MaxRegs = fmt.Sprintf("__maxnreg__(%d) ", m.opts.PopulationMaxRegs[i])
			kv.Bounds = ""
		}
		kv.Sync = k.k.UsesShared || k.k.HasBlockSync || len(k.k.AllSyncs) > 0 || len(k.k.Unresolved) > 0
		v.Kernels = append(v.Kernels, kv)
		alloc = append(alloc, fmt.Sprintf("%du", k.out.Alloc))
		if bounds >= 0 && k.out.LaunchBounds > 0 {
			bounds = max(bounds, k.out.LaunchBounds)
		} else {
			bounds = -1
		}
		summary := fmt.Sprintf("%d: %s%s from %s", len(v.Summary), displayName(fn), argSuffix(k.in.TemplateArgs), lineFile(k.a.File))
		if k.out.Alloc > 0 {
			summary += fmt.Sprintf(", %d SMs", k.out.Alloc)
		}
		v.Summary = append(v.Summary, summary)
	}
	if bounds > 0 {
		// Every kernel bounds its block size: so does the merged kernel,
		// which lets the compiler budget registers for that many threads.
		v.LaunchBounds = fmt.Sprintf("__launch_bounds__(%d) ", bounds)
	}
	if m.opts.MaxRegs > 0 {
		// nvcc refuses __launch_bounds__ beside __maxnreg__; the cap sets the budget.
		v.MaxRegs = fmt.Sprintf("__maxnreg__(%d) ", m.opts.MaxRegs)
		v.LaunchBounds = ""
	}
	if m.opts.Mode == MergeSplit {
		v.Union = nil // each population declares its own kernel's struct
	}
	join := func(s []string) string {
		if len(s) == 0 {
			return ""
		}
		return ", " + strings.Join(s, ", ")
	}
	v.Params, v.LauncherParams, v.ArgNames = join(params), join(launcher), join(names)
	v.DefaultAlloc = strings.Join(alloc, ", ")
	return templates.Render(templates.Merged, v)
}
