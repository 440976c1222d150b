// Package transform holds slatec's passes over parsed CUDA: the analysis
// that finds what the rewrites need (builtin uses, barriers, returns, the
// call graph, launch sites), the persistent (Slate) transform and the
// launch-site rewrite. The passes produce span edits; package emit applies
// them.
package transform

import (
	"iter"
	"path/filepath"
	"sort"
	"strings"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/parser"
)

// Builtin names slatec tracks.
const (
	BlockIdx  = "blockIdx"
	GridDim   = "gridDim"
	BlockDim  = "blockDim"
	ThreadIdx = "threadIdx"
)

var builtinNames = []string{BlockIdx, GridDim, BlockDim, ThreadIdx}

// BuiltinUse is one read of a builtin index variable.
type BuiltinUse struct {
	Name string      `json:"name"`
	Span parser.Span `json:"-"`
	Line int         `json:"line"`
	Col  int         `json:"col"`
	// Via says how the use is reached from the function being analysed:
	// "" (in its own body), "macro NAME" or "helper NAME".
	Via string `json:"via,omitempty"`
}

// SyncKind classifies synchronisation points.
type SyncKind string

const (
	SyncBlock       SyncKind = "block"        // __syncthreads, cta.sync(), bar.sync
	SyncBlockReduce SyncKind = "block-reduce" // __syncthreads_count/and/or
	SyncWarp        SyncKind = "warp"         // __shfl*_sync, __ballot_sync, __syncwarp, tile.sync()...
	SyncGrid        SyncKind = "grid"         // grid_group sync: refused
	SyncCluster     SyncKind = "cluster"      // cluster sync: refused
)

// SyncPoint is a barrier or a warp-synchronous operation.
type SyncPoint struct {
	Kind SyncKind    `json:"kind"`
	Form string      `json:"form"` // as written: "__syncthreads", "cg::sync", "asm bar.sync", ...
	Span parser.Span `json:"-"`
	Line int         `json:"line"`
	Col  int         `json:"col"`
	// Via is "" for the function's own body, else "helper NAME".
	Via string `json:"via,omitempty"`
}

// IsBlockLevel reports whether the point synchronises the whole block.
func (s SyncPoint) IsBlockLevel() bool { return s.Kind == SyncBlock || s.Kind == SyncBlockReduce }

// ReturnInfo describes a return statement of a kernel body.
type ReturnInfo struct {
	Span parser.Span `json:"-"`
	Line int         `json:"line"`
	Col  int         `json:"col"`
	// BeforeSync is true when a barrier or warp-synchronous operation can
	// run after this return has ended some threads: those threads would no
	// longer take part. Natively exited threads are excused; in a persistent
	// worker they are alive, so the return must be lowered.
	BeforeSync bool `json:"before_sync"`
	// SyncLine is the line of one such following sync point.
	SyncLine int `json:"sync_line,omitempty"`
	// Uniform is true when the whole block takes this return together (its
	// condition is a block-wide vote): no thread is left to meet a barrier,
	// so it need not be lowered.
	Uniform bool `json:"uniform,omitempty"`
}

// SharedDecl is a __shared__ variable.
type SharedDecl struct {
	Name    string      `json:"name"`
	Type    string      `json:"type"`
	Extern  bool        `json:"extern"` // extern __shared__: dynamic shared memory
	Span    parser.Span `json:"-"`
	Line    int         `json:"line"`
	FileVar bool        `json:"file_scope,omitempty"`
}

// FuncInfo is the analysis of one device or global function.
type FuncInfo struct {
	Func *parser.Func
	// File is where the function is defined: the main file or an include.
	File *parser.File
	// Own facts, from the function's own body (macros expanded by name).
	Uses  []BuiltinUse
	Syncs []SyncPoint
	Calls []Call
	// MemberCalls are calls obj.f(...) / p->f(...), by method name.
	MemberCalls []Call
	// FuncRefs are functions named but not called (taken by address,
	// passed as callbacks).
	FuncRefs []Call
	Shared   []SharedDecl
	Refusal  []diag.Diagnostic
	// Misc features, for the report.
	Printf, Atomics, WarpIntrinsics bool
	// IndexUser is true when this function or anything it calls reads
	// blockIdx or gridDim: its persistent form must see virtual values.
	IndexUser bool
	// hasBody is true when the body parsed (also when its tree was not
	// kept: LoadOptions.DropBodies); rets are a kernel's return statements.
	hasBody bool
	rets    []retSite
	// collective: whether threads that returned may run this device
	// function with the others (inactive.go).
	collective helperFacts
}

// Call is a call from a function body to a named function.
type Call struct {
	Name string
	Span parser.Span
	// Qual is the outermost namespace or class the name is qualified with
	// (cg in cg::sync(g)), "" for an unqualified call.
	Qual string
	// Macro names the macro whose expansion makes this call (Span is then
	// the macro's use): such a call cannot be redirected by an edit.
	Macro string
	// Targets are the definitions in the file with that name (overloads).
	Targets []*parser.Func
}

// KernelInfo is the analysis of a __global__ function, with the facts of
// every helper it can reach folded in.
type KernelInfo struct {
	*FuncInfo
	AllUses  []BuiltinUse
	AllSyncs []SyncPoint
	Returns  []ReturnInfo
	// Helpers are the device functions reachable from the kernel, in
	// source order; IndexHelpers are those that read blockIdx/gridDim
	// directly or through their callees.
	Helpers      []*FuncInfo
	IndexHelpers []*FuncInfo
	// Unresolved are calls to functions slatec cannot see (not defined in
	// the file); system functions are assumed not to read blockIdx.
	Unresolved []string
	// Refusals are the reasons the persistent transform must refuse.
	Refusals []diag.Diagnostic
	// CutLaunches are launches of the kernel that a conditional directive
	// cuts through: refusals unless launches are left as written.
	CutLaunches []diag.Diagnostic
	// NeedsLowering is true when some return precedes a sync point.
	NeedsLowering bool
	// HasBlockSync is true when the kernel (or a helper) synchronises the block.
	HasBlockSync bool
	// UsesShared is true when the kernel or a helper uses shared memory.
	UsesShared bool
	// WarpIntrinsicsAll is true when the kernel or a helper uses warp-level
	// operations: then logical blocks are separated by a barrier, so that
	// lanes of different logical blocks never meet in one warp operation.
	WarpIntrinsicsAll bool
	// OpaqueSync are uses of names whose opaque definitions synchronise
	// (class member functions): treated as sync points.
	OpaqueSync []parser.Span
	// SharedVia names the classes through which the kernel uses shared
	// memory (like CUDA samples' SharedMemory<T>).
	SharedVia []string
}

// Analysis is the result for a whole file.
type Analysis struct {
	File  *parser.File
	Lines *diag.Lines
	// Deps are the files reached through #include "..." that were found,
	// and Missing the quoted includes that were not.
	Deps    []*parser.File
	Missing []*parser.Include
	// Via maps each dep to the main file's #include that brings it in.
	Via map[*parser.File]*parser.Include
	// RunDeps are the deps transformed in the same run (LoadOptions
	// Inputs): their classes' member functions are followed, and copies of
	// their helpers are emitted in their own outputs, not in this file's.
	RunDeps map[*parser.File]bool
	// IncludeFiles maps each #include "..." that Load resolved, in any of
	// the files, to the header it names (also when that header was already
	// read through another include). The DeviceOnly output inlines them.
	IncludeFiles map[*parser.Include]*parser.File
	lines        map[*parser.File]*diag.Lines
	// condDirs are the main file's conditional directives (branches.go).
	condDirs []parser.CondDirective
	// splitDefs are kernel definitions #if branches split (branches.go).
	splitDefs []splitDef
	Funcs     map[*parser.Func]*FuncInfo
	Kernels   []*KernelInfo
	Launches  []*LaunchSite
	// DeviceLaunches are launches inside __global__ or __device__ code
	// (dynamic parallelism): never rewritten into host launcher calls; the
	// kernel that makes one is refused.
	DeviceLaunches []*LaunchSite
	// FileShared are __shared__ variables declared at namespace scope.
	FileShared []SharedDecl
	// IndexMacros maps macro names to the builtins their expansion reads.
	IndexMacros map[string][]string
	// macroCalls maps each macro to the functions defined in the analysed
	// files that its expansion (transitively) names.
	macroCalls map[string][]string
	macros     map[string]*parser.Macro
	// SyncMacros are macros whose expansion (transitively) synchronises:
	// a use is a sync point like the barrier it hides.
	SyncMacros map[string]bool
	// Diags are warnings about the file as a whole (launches in macros,
	// index reads in code slatec does not parse).
	Diags  []diag.Diagnostic
	byName map[string][]*parser.Func
	// funcOrder is each function's position in definition order (reachable).
	funcOrder map[*parser.Func]int
	// members are the member functions of the main file and the run's
	// headers (implicitIndexMember).
	members []*parser.Func
	// tokBuf is bodyTokens's buffer; usesBuf and callsBuf analyzeFunc's.
	tokBuf   []tok
	usesBuf  []BuiltinUse
	callsBuf []Call
}

// Analyze runs the analysis over a parsed file and the files it includes
// (deps, already parsed; see Load).
func Analyze(f *parser.File, deps ...*parser.File) *Analysis { return analyze(f, deps, nil) }

func analyze(f *parser.File, deps []*parser.File, runDeps map[*parser.File]bool) *Analysis {
	a := &Analysis{File: f, Lines: f.Lines(), Deps: deps, RunDeps: runDeps, Funcs: map[*parser.Func]*FuncInfo{},
		byName: map[string][]*parser.Func{}, lines: map[*parser.File]*diag.Lines{}}
	a.lines[f] = a.Lines
	for _, d := range deps {
		a.lines[d] = d.Lines()
	}
	all := append([]*parser.File{f}, deps...)
	a.indexMacros(all)
	for _, file := range all {
		for _, fn := range a.funcsOf(file) {
			a.byName[fn.Name] = append(a.byName[fn.Name], fn)
		}
	}
	a.macroCallTargets()
	a.fileShared()
	for _, file := range all {
		for _, fn := range a.funcsOf(file) {
			if fn.Global || fn.Device {
				a.Funcs[fn] = a.analyzeFunc(fn, file)
			}
		}
	}
	a.propagateIndexUse()
	for _, fn := range f.Funcs {
		if fn.Global {
			a.Kernels = append(a.Kernels, a.analyzeKernel(fn))
		}
	}
	a.applyOpaqueFacts(a.collectOpaqueFacts())
	for _, k := range a.Kernels {
		if !k.hasBody {
			continue
		}
		k.Returns = a.returns(k.Func, k)
		for _, r := range k.Returns {
			if r.BeforeSync && !r.Uniform {
				k.NeedsLowering = true
			}
		}
	}
	a.Launches, a.DeviceLaunches = splitDeviceLaunches(f, findLaunches(f, a.Lines))
	a.macroLaunches()
	a.branchRefusals()
	a.splitDefinitions()
	return a
}

// funcsOf returns the functions of a file that the analysis follows: its
// function definitions and, in the main file and the headers transformed
// in the same run (RunDeps), the __device__ member functions of its classes
// (their persistent copies go into the class, next to them), in source
// order. Members of classes in other included headers stay opaque: a copy
// could not be placed inside them.
func (a *Analysis) funcsOf(file *parser.File) []*parser.Func {
	if (file != a.File && !a.RunDeps[file]) || len(file.Members) == 0 {
		return file.Funcs
	}
	out := append([]*parser.Func(nil), file.Funcs...)
	for _, m := range file.Members {
		if m.Device && !m.Global && m.Def.Body != nil {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].NameSpan.Start < out[j].NameSpan.Start })
	return out
}

func (a *Analysis) at(off int, sev diag.Severity, format string, args ...any) diag.Diagnostic {
	return a.Lines.At(a.File.Name, off, sev, format, args...)
}

// atIn builds a diagnostic in any analysed file.
func (a *Analysis) atIn(f *parser.File, off int, sev diag.Severity, format string, args ...any) diag.Diagnostic {
	return a.lines[f].At(f.Name, off, sev, format, args...)
}

func (a *Analysis) pos(s parser.Span) (int, int) { return a.Lines.Position(s.Start) }

func (a *Analysis) posIn(f *parser.File, s parser.Span) (int, int) {
	return a.lines[f].Position(s.Start)
}

// indexMacros finds the macros whose expansion (transitively) reads builtins.
func (a *Analysis) indexMacros(files []*parser.File) {
	byName := map[string]*parser.Macro{}
	var macros []*parser.Macro
	for _, f := range files {
		for _, m := range f.Macros {
			byName[m.Name] = m
			macros = append(macros, m)
		}
	}
	memo := map[string][]string{}
	var visit func(name string, seen map[string]bool) []string
	visit = func(name string, seen map[string]bool) []string {
		if r, ok := memo[name]; ok {
			return r
		}
		m := byName[name]
		if m == nil || seen[name] {
			return nil
		}
		seen[name] = true
		set := map[string]bool{}
		// Token pasting can spell a builtin (CAT(grid, Dim)): when pieces
		// of one are pasted, assume the macro reads both index builtins.
		pieces, pastes := false, m.Pastes
		for _, id := range m.BodyIdents {
			switch id {
			case "grid", "block", "Dim", "Idx", "gridD", "blockI":
				pieces = true
			}
			if pm := byName[id]; pm != nil && pm.Pastes {
				pastes = true
			}
		}
		if pieces && pastes {
			set[BlockIdx], set[GridDim] = true, true
		}
		for _, id := range m.BodyIdents {
			if isBuiltin(id) {
				set[id] = true
			}
			for _, b := range visit(id, seen) {
				set[b] = true
			}
		}
		r := sortedKeys(set)
		memo[name] = r
		return r
	}
	a.macros = byName
	a.IndexMacros = map[string][]string{}
	for _, m := range macros {
		if r := visit(m.Name, map[string]bool{}); len(r) > 0 {
			a.IndexMacros[m.Name] = r
		}
	}
	// Sync macros: a body naming a barrier, a warp collective, or another
	// sync macro.
	a.SyncMacros = map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, m := range macros {
			if a.SyncMacros[m.Name] {
				continue
			}
			for i, id := range m.BodyIdents {
				sync := blockBarrierFuncs[id] || blockReduceFuncs[id] || warpSyncFuncs[id] || a.SyncMacros[id]
				// .sync() on a group: the member name follows an identifier.
				if id == "sync" && i > 0 {
					sync = true
				}
				if sync {
					a.SyncMacros[m.Name] = true
					changed = true
					break
				}
			}
		}
	}
	// Kernels that exist only after macro expansion are not seen: say so.
	for _, f := range files {
		for _, m := range f.Macros {
			if strings.Contains(f.Text(m.Body), "__global__") && f == a.File {
				a.Diags = append(a.Diags, a.at(m.Span.Start, diag.Warning,
					"macro %s defines a kernel; slatec does not expand macros, so kernels it defines are neither inspected nor transformed (their launches run natively)", m.Name))
			}
		}
	}
}

// macroCallTargets finds, for each macro, the functions defined in the
// analysed files whose names its expansion contains (through other macros
// too), so that a helper called only from a macro is still reached.
func (a *Analysis) macroCallTargets() {
	a.macroCalls = map[string][]string{}
	for name := range a.macros {
		set := map[string]bool{}
		seen := map[string]bool{}
		var visit func(n string)
		visit = func(n string) {
			m := a.macros[n]
			if m == nil || seen[n] {
				return
			}
			seen[n] = true
			for _, id := range m.BodyIdents {
				if a.byName[id] != nil && !contains(m.Params, id) {
					set[id] = true
				}
				visit(id)
			}
		}
		visit(name)
		if len(set) > 0 {
			a.macroCalls[name] = sortedKeys(set)
		}
	}
}

func isBuiltin(s string) bool {
	return s == BlockIdx || s == GridDim || s == BlockDim || s == ThreadIdx
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tokens returns the significant tokens of a span with their texts.
type tok struct {
	parser.Token
	text string
}

func (a *Analysis) tokens(s parser.Span) []tok { return tokensOf(a.File, s) }

func tokensOf(f *parser.File, s parser.Span) []tok {
	in := f.TokensIn(s)
	n := parser.CountSignificant(in)
	if n == 0 {
		return []tok{}
	}
	return appendTokens(make([]tok, 0, n), f, in)
}

func appendTokens(out []tok, f *parser.File, in []parser.Token) []tok {
	for _, t := range in {
		if !t.Kind.IsTrivia() {
			out = append(out, tok{t, f.TokenText(t)})
		}
	}
	return out
}

// bodyTokens is tokensOf into a buffer that the next call reuses: for the
// tokens of one function body at a time (analyzeFunc), which a big file
// would otherwise allocate anew for each function.
func (a *Analysis) bodyTokens(f *parser.File, s parser.Span) []tok {
	a.tokBuf = appendTokens(a.tokBuf[:0], f, f.TokensIn(s))
	return a.tokBuf
}

// sigTokens yields the significant tokens of a span with their texts,
// copying nothing: for a walk that needs no index.
func sigTokens(f *parser.File, s parser.Span) iter.Seq[tok] {
	return func(yield func(tok) bool) {
		for _, t := range f.TokensIn(s) {
			if !t.Kind.IsTrivia() && !yield(tok{t, f.TokenText(t)}) {
				return
			}
		}
	}
}

func span(t tok) parser.Span { return parser.Span{Start: int(t.Off), End: int(t.End)} }

// Barrier and warp-synchronous intrinsic names.
var (
	blockBarrierFuncs  = map[string]bool{"__syncthreads": true, "__barrier_sync": true}
	blockReduceFuncs   = map[string]bool{"__syncthreads_count": true, "__syncthreads_and": true, "__syncthreads_or": true}
	warpSyncFuncs      = map[string]bool{"__syncwarp": true, "__shfl_sync": true, "__shfl_up_sync": true, "__shfl_down_sync": true, "__shfl_xor_sync": true, "__ballot_sync": true, "__all_sync": true, "__any_sync": true, "__uni_sync": true, "__match_any_sync": true, "__match_all_sync": true, "__reduce_add_sync": true, "__reduce_min_sync": true, "__reduce_max_sync": true, "__reduce_and_sync": true, "__reduce_or_sync": true, "__reduce_xor_sync": true}
	warpTileMethods    = map[string]bool{"shfl": true, "shfl_up": true, "shfl_down": true, "shfl_xor": true, "ballot": true, "any": true, "all": true, "match_any": true, "match_all": true}
	cgCollectives      = map[string]bool{"reduce": true, "inclusive_scan": true, "exclusive_scan": true, "reduce_store_async": true, "reduce_update_async": true}
	warpIntrinsicNames = map[string]bool{"__activemask": true, "__lanemask_lt": true, "__lanemask_le": true, "__lanemask_eq": true, "__lanemask_gt": true, "__lanemask_ge": true}
)

// analyzeFunc collects a function's own facts by scanning its body tokens.
func (a *Analysis) analyzeFunc(fn *parser.Func, file *parser.File) *FuncInfo {
	fi := &FuncInfo{Func: fn, File: file}
	// The body's tree: parsed here when its parsing was deferred, and then
	// dropped on return (only the facts below are kept).
	var body *parser.Block
	if fn.Def != nil {
		body = fn.Def.Body
		if body == nil && fn.Def.Deferred {
			body, fn.Def.BodyErr = file.ParseBody(fn)
		}
	}
	fi.hasBody = body != nil
	if body != nil && fn.Global {
		fi.rets = returnSites(fn, body)
	}
	if body != nil && !fn.Global && fn.Device {
		fi.collective = inactiveFacts(fn, body, file)
	}
	toks := a.bodyTokens(file, fn.BodySpan)
	// Uses and calls are collected in reused buffers and kept in slices of
	// their exact length (see the end).
	fi.Uses, fi.Calls = a.usesBuf[:0], a.callsBuf[:0]
	// Receivers of `.sync()` and friends: what kind of group each name is.
	groupKinds := a.groupVarKinds(toks)
	paramGroupKinds(fn, groupKinds)
	// Masks that name the lanes present (from __activemask, a ballot, a
	// match): collectives over them adapt to whichever lanes arrive, so they
	// are not sync points that returned threads must reach.
	dynMask := dynamicMaskVars(toks)
	// `half2 v(0.f, 0.f);` declares v: its parentheses are a constructor
	// call's arguments, not a call of a function v.
	locals, ctorParens := localNames(fn, body, file)
	for i, t := range toks {
		next := func(k int) string {
			if i+k < len(toks) {
				return toks[i+k].text
			}
			return ""
		}
		prev := func(k int) string {
			if i-k >= 0 {
				return toks[i-k].text
			}
			return ""
		}
		switch t.Kind {
		case parser.Ident:
			name := t.text
			if isBuiltin(name) && prev(1) != "." && prev(1) != "->" && prev(1) != "::" {
				l, c := a.posIn(file, span(t))
				fi.Uses = append(fi.Uses, BuiltinUse{Name: name, Span: span(t), Line: l, Col: c})
			}
			if a.SyncMacros[name] && prev(1) != "." && prev(1) != "->" && prev(1) != "::" {
				fi.addSync(a, SyncBlock, "macro "+name, span(t))
			}
			if bs, ok := a.IndexMacros[name]; ok && prev(1) != "." && prev(1) != "->" {
				l, c := a.posIn(file, span(t))
				for _, b := range bs {
					fi.Uses = append(fi.Uses, BuiltinUse{Name: b, Span: span(t), Line: l, Col: c, Via: "macro " + name})
				}
			}
			member := prev(1) == "." || prev(1) == "->"
			qual := ""
			if prev(1) == "::" {
				qual = prev(2)
			}
			isCall := (next(1) == "(" && !ctorParens[int(toks[i+1].Off)]) || (next(1) == "<" && a.callAfterAngles(toks, i+1))
			switch {
			case blockBarrierFuncs[name] && isCall && !member:
				fi.addSync(a, SyncBlock, name, span(t))
			case blockReduceFuncs[name] && isCall && !member:
				fi.addSync(a, SyncBlockReduce, name, span(t))
			case warpSyncFuncs[name] && isCall && !member:
				fi.WarpIntrinsics = true
				if !maskIsDynamic(toks, i+1, dynMask) {
					fi.addSync(a, SyncWarp, name, span(t))
				}
			case member && isCall && (name == "sync" || name == "barrier_wait" || name == "barrier_arrive"):
				recv := receiverName(toks, i-1)
				switch groupKinds[recv] {
				case "tile":
					fi.addSync(a, SyncWarp, recv+"."+name+"()", span(t))
				case "coalesced":
					fi.WarpIntrinsics = true // over the lanes present: not a sync point
				case "grid":
					fi.addSync(a, SyncGrid, recv+"."+name+"()", span(t))
				case "cluster":
					fi.addSync(a, SyncCluster, recv+"."+name+"()", span(t))
				default: // a thread_block, or unknown: treat as a block barrier
					fi.addSync(a, SyncBlock, recv+"."+name+"()", span(t))
				}
			case member && isCall && warpTileMethods[name]:
				recv := receiverName(toks, i-1)
				switch groupKinds[recv] {
				case "tile", "":
					// A group of a kind the declarations do not say (a
					// template's `Group g`, a thread_group) counts as a
					// tile: its shuffles and votes may name lanes that
					// returned (as an unknown group's sync() is a block
					// barrier).
					fi.addSync(a, SyncWarp, recv+"."+name+"()", span(t))
					fi.WarpIntrinsics = true
				case "coalesced":
					fi.WarpIntrinsics = true
				}
			case name == "sync" && isCall && !member:
				// cg::sync(g): the kind follows its argument.
				arg := ""
				if i+2 < len(toks) {
					arg = toks[i+2].text
				}
				switch groupKinds[arg] {
				case "coalesced":
					fi.WarpIntrinsics = true
				case "tile":
					fi.addSync(a, SyncWarp, "cg::sync", span(t))
				case "grid":
					fi.addSync(a, SyncGrid, "cg::sync", span(t))
				case "cluster":
					fi.addSync(a, SyncCluster, "cg::sync", span(t))
				default:
					fi.addSync(a, SyncBlock, "cg::sync", span(t))
				}
			case cgCollectives[name] && isCall && !member && (qual == "cg" || qual == "cooperative_groups"):
				fi.addSync(a, SyncWarp, qual+"::"+name, span(t))
			case (name == "this_cluster" || name == "cluster_group" || strings.HasPrefix(name, "__cluster_") || name == "cluster_sync") && !member:
				fi.refuse(a, span(t), "uses thread block clusters (%s), which the persistent form does not support", name)
			case member && isCall && (name == "group_index" || name == "block_index" || name == "block_rank" || name == "num_blocks" || name == "dim_blocks"):
				// On the grid group: virtualised (scanGridGroup).
				recv := receiverName(toks, i-1)
				if groupKinds[recv] != "grid" && (name == "block_rank" || name == "num_blocks" || name == "dim_blocks") {
					fi.refuse(a, span(t), "calls %s.%s(), which reads the physical block index", recv, name)
				}
			case (name == "cudaLaunchKernel" || name == "cudaLaunchDevice" || name == "cudaGetParameterBuffer" || name == "cudaLaunchCooperativeKernel") && isCall:
				fi.refuse(a, span(t), "launches a kernel from the device (%s), which slatec does not support", name)
			case name == "printf" && isCall:
				fi.Printf = true
			case strings.HasPrefix(name, "atomic") && isCall:
				fi.Atomics = true
			case warpIntrinsicNames[name]:
				fi.WarpIntrinsics = true
			}
			if a.macros[name] != nil && !member && prev(1) != "::" {
				// A macro, not a function: what its expansion calls.
				for _, callee := range a.macroCalls[name] {
					fi.Calls = append(fi.Calls, Call{Name: callee, Span: span(t), Targets: a.byName[callee], Macro: name})
				}
			} else if isCall && !member && !isBuiltin(name) {
				fi.Calls = append(fi.Calls, Call{Name: name, Span: span(t), Targets: a.byName[name], Qual: qualRoot(toks, i)})
			}
			// A function named without being called (&leaf, a callback):
			// calls through the pointer cannot be redirected to a copy.
			if !isCall && !member && prev(1) != "::" && a.byName[name] != nil && a.macros[name] == nil && next(1) != "::" && next(1) != "<<<" && !locals[name] {
				fi.FuncRefs = append(fi.FuncRefs, Call{Name: name, Span: span(t), Targets: a.byName[name]})
			}
			if isCall && member {
				fi.MemberCalls = append(fi.MemberCalls, Call{Name: name, Span: span(t)})
				// obj.f(...) of a member function slatec parsed: a call of it.
				if ms := membersNamed(a.byName[name]); len(ms) > 0 {
					fi.Calls = append(fi.Calls, Call{Name: name, Span: span(t), Targets: ms})
				}
			}
		case parser.Punct:
			if t.text == "<<<" {
				fi.refuse(a, span(t), "launches a kernel from the device (dynamic parallelism), which slatec does not support")
			}
		case parser.Keyword:
			if t.text == "asm" || t.text == "__asm__" || t.text == "__asm" {
				a.scanAsm(fi, toks, i)
			}
		}
	}
	a.scanGridGroup(fi, toks, groupKinds)
	fi.Shared = a.sharedDeclsOf(file, toks, false)
	a.usesBuf, a.callsBuf = fi.Uses[:0], fi.Calls[:0]
	fi.Uses, fi.Calls = exactCopy(fi.Uses), exactCopy(fi.Calls)
	return fi
}

// exactCopy returns a copy of s with no spare capacity, nil if s is empty.
func exactCopy[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// implicitIndexMember returns a member function of the class named cls
// (its last name segment) that is called implicitly (an operator, a
// constructor or a destructor) and reads the block index, or nil.
func (a *Analysis) implicitIndexMember(cls string) *parser.Func {
	if a.members == nil {
		// Member functions, once: a file of many kernels and few classes
		// must not pay for every function at every type name.
		a.members = membersNamed(a.funcsOf(a.File))
		for _, d := range a.Deps {
			if a.RunDeps[d] {
				a.members = append(a.members, membersNamed(a.funcsOf(d))...)
			}
		}
		if a.members == nil {
			a.members = []*parser.Func{}
		}
	}
	for _, fn := range a.members {
		owner := fn.Class
		if owner == "" {
			owner = fn.Scope // defined outside its class: A::operator[]
		}
		if fi := a.Funcs[fn]; owner == "" || fi == nil || !fi.IndexUser {
			continue
		}
		simple := owner
		if i := strings.LastIndex(simple, "::"); i >= 0 {
			simple = simple[i+2:]
		}
		if simple != cls {
			continue
		}
		if strings.HasPrefix(fn.Name, "operator") || fn.Name == simple || strings.HasPrefix(fn.Name, "~") {
			return fn
		}
	}
	return nil
}

// membersNamed returns the member functions among fns.
func membersNamed(fns []*parser.Func) []*parser.Func {
	var out []*parser.Func
	for _, fn := range fns {
		if fn.Class != "" || fn.Scope != "" {
			out = append(out, fn)
		}
	}
	return out
}

// localNames returns the names a function declares: its parameters, the
// variables its body declares and the parameters of its lambdas (a use of
// one is not a reference to a function of that name). It also returns the
// offsets of the "(" of constructor-style initialisers in the body
// (`float3 v(a, b, c);`): one walk of the body finds both.
func localNames(fn *parser.Func, body *parser.Block, file *parser.File) (names map[string]bool, ctorParens map[int]bool) {
	out := map[string]bool{}
	ctorParens = map[int]bool{}
	for _, p := range fn.Params {
		if p.Name != "" {
			out[p.Name] = true
		}
	}
	if body == nil {
		return out, ctorParens
	}
	parser.Walk(body, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.InitDeclarator:
			if n.Init != nil && n.Init.Assign == nil && n.Init.Brace == nil {
				ctorParens[n.Init.Span().Start] = true
			}
		case *parser.Declarator:
			if n.Name != "" {
				out[n.Name] = true
			}
			for _, b := range n.Bindings {
				out[b] = true
			}
		case *parser.Lambda:
			if n.Params != nil {
				toks := tokensOf(file, n.Params.Span())
				for i := 1; i < len(toks); i++ {
					if (toks[i].text == "," || toks[i].text == ")") && toks[i-1].Kind == parser.Ident {
						out[toks[i-1].text] = true
					}
				}
			}
		}
		return true
	})
	return out, ctorParens
}

// qualRoot returns the first segment of the qualified name that ends at
// toks[i] (A in A::B::f), or "".
func qualRoot(toks []tok, i int) string {
	root := ""
	for j := i; j >= 2 && toks[j-1].text == "::" && toks[j-2].Kind == parser.Ident; j -= 2 {
		root = toks[j-2].text
	}
	return root
}

func (fi *FuncInfo) addSync(a *Analysis, k SyncKind, form string, s parser.Span) {
	l, c := a.posIn(fi.File, s)
	fi.Syncs = append(fi.Syncs, SyncPoint{Kind: k, Form: form, Span: s, Line: l, Col: c})
	switch k {
	case SyncGrid:
		fi.refuse(a, s, "synchronises the whole grid (%s): this needs every block resident at once, which a persistent worker pool cannot promise", form)
	case SyncCluster:
		fi.refuse(a, s, "synchronises a thread block cluster (%s), which the persistent form does not support", form)
	}
}

func (fi *FuncInfo) refuse(a *Analysis, s parser.Span, format string, args ...any) {
	fi.Refusal = append(fi.Refusal, a.atIn(fi.File, s.Start, diag.Error, format, args...))
}

// dynamicMaskSources produce masks of the lanes present.
var dynamicMaskSources = map[string]bool{"__activemask": true, "__ballot_sync": true, "__match_any_sync": true,
	"__match_all_sync": true, "coalesced_threads": true}

// dynamicMaskVars finds variables assigned (transitively) from a dynamic
// mask source: `unsigned m = __activemask();`.
func dynamicMaskVars(toks []tok) map[string]bool {
	vars := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for i := 0; i+1 < len(toks); i++ {
			if toks[i].Kind != parser.Ident || (toks[i+1].text != "=" && toks[i+1].text != "&=" && toks[i+1].text != "|=") || vars[toks[i].text] {
				continue
			}
			for j := i + 2; j < len(toks) && toks[j].text != ";" && toks[j].text != ","; j++ {
				if dynamicMaskSources[toks[j].text] || vars[toks[j].text] {
					vars[toks[i].text] = true
					changed = true
					break
				}
			}
		}
	}
	return vars
}

// maskIsDynamic reports whether the first argument of the call whose "("
// is at toks[open] is a dynamic mask.
func maskIsDynamic(toks []tok, open int, dyn map[string]bool) bool {
	if open >= len(toks) || toks[open].text != "(" {
		return false
	}
	depth := 0
	for j := open; j < len(toks); j++ {
		switch toks[j].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return false
			}
		case ",":
			if depth == 1 {
				return false
			}
		}
		if dynamicMaskSources[toks[j].text] || dyn[toks[j].text] {
			return true
		}
	}
	return false
}

// receiverName returns the identifier before the `.` or `->` at index i
// (skipping a call's parentheses: this_thread_block().sync()).
func receiverName(toks []tok, i int) string {
	j := i - 1
	if j >= 0 && toks[j].text == ")" {
		depth := 0
		for ; j >= 0; j-- {
			switch toks[j].text {
			case ")":
				depth++
			case "(":
				depth--
			}
			if depth == 0 {
				break
			}
		}
		j--
		if j >= 0 {
			return toks[j].text + "()"
		}
		return ""
	}
	if j >= 0 {
		return toks[j].text
	}
	return ""
}

// groupTypeKind is the group kind a cooperative-groups type or factory
// names ("block", "tile", "coalesced", "grid", "cluster"), or "" (other
// names, and thread_group, which could be any).
func groupTypeKind(s string) string {
	switch s {
	case "thread_block", "this_thread_block":
		return "block"
	case "thread_block_tile", "tiled_partition":
		return "tile"
	case "coalesced_group", "coalesced_threads":
		return "coalesced"
	case "grid_group", "this_grid", "multi_grid_group", "this_multi_grid":
		return "grid"
	case "cluster_group", "this_cluster":
		return "cluster"
	}
	return ""
}

// groupVarKinds maps cooperative-groups variables to their kind ("block",
// "tile", "coalesced", "grid", "cluster") from their declarations and
// initialisers, and call expressions like this_grid() to theirs.
func (a *Analysis) groupVarKinds(toks []tok) map[string]string {
	kinds := map[string]string{
		"this_thread_block()": "block", "this_grid()": "grid", "this_cluster()": "cluster",
		"coalesced_threads()": "coalesced", "tiled_partition()": "tile",
	}
	for i := 0; i+1 < len(toks); i++ {
		// `T name` and `T<...> name` declarations, and `name = f(...)` initialisers.
		if k := groupTypeKind(toks[i].text); k != "" {
			j := i + 1
			if j < len(toks) && toks[j].text == "<" {
				depth := 0
				for ; j < len(toks); j++ {
					if toks[j].text == "<" {
						depth++
					} else if toks[j].text == ">" {
						depth--
						if depth == 0 {
							j++
							break
						}
					}
				}
			}
			if j < len(toks) && toks[j].Kind == parser.Ident && (j+1 >= len(toks) || toks[j+1].text != "(") {
				kinds[toks[j].text] = k
			}
		}
		if toks[i].Kind == parser.Ident && i+2 < len(toks) && toks[i+1].text == "=" {
			for j := i + 2; j < len(toks) && j < i+8 && toks[j].text != ";"; j++ {
				if k := groupTypeKind(toks[j].text); k != "" && j+1 < len(toks) && (toks[j+1].text == "(" || toks[j+1].text == "<") {
					// Not `x = this_grid().size()`: a member of the group.
					if !memberAfterCall(toks, j+1) {
						kinds[toks[i].text] = k
					}
					break
				}
			}
		}
	}
	return kinds
}

// memberAfterCall reports whether the call whose template arguments or
// parentheses start at toks[i] is followed by a member access.
func memberAfterCall(toks []tok, i int) bool {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].text {
		case "(", "[", "{", "<":
			depth++
		case ")", "]", "}", ">":
			depth--
		case ">>":
			depth -= 2
		case ";":
			return false
		}
		if depth <= 0 && toks[j].text == ")" {
			return j+1 < len(toks) && (toks[j+1].text == "." || toks[j+1].text == "->")
		}
	}
	return false
}

// callAfterAngles reports whether the `<` at index i opens template
// arguments that are followed by a call: f<T>(x).
func (a *Analysis) callAfterAngles(toks []tok, i int) bool {
	depth := 0
	for j := i; j < len(toks) && j < i+64; j++ {
		switch toks[j].text {
		case "<":
			depth++
		case ">":
			depth--
		case ">>":
			depth -= 2
		case ";", "{", "}", "&&", "||":
			return false
		}
		if depth <= 0 {
			return j+1 < len(toks) && toks[j+1].text == "("
		}
	}
	return false
}

// scanAsm inspects an inline asm statement starting at toks[i]: barriers
// and warp synchronisation in its template, and reads of special registers
// that the persistent form would change.
func (a *Analysis) scanAsm(fi *FuncInfo, toks []tok, i int) {
	var tmpl strings.Builder
	for j := i + 1; j < len(toks) && toks[j].text != ";"; j++ {
		if toks[j].Kind == parser.String {
			tmpl.WriteString(toks[j].text)
		}
		if toks[j].text == ":" {
			break
		}
	}
	s := tmpl.String()
	sp := span(toks[i])
	switch {
	case strings.Contains(s, "bar.sync") || strings.Contains(s, "barrier.sync") || strings.Contains(s, "bar.red") ||
		strings.Contains(s, "barrier.red") || strings.Contains(s, "bar.arrive") || strings.Contains(s, "barrier.arrive") ||
		strings.Contains(s, "barrier.cta"):
		if strings.Contains(s, "bar.warp.sync") {
			fi.addSync(a, SyncWarp, "asm bar.warp.sync", sp)
		} else {
			fi.addSync(a, SyncBlock, "asm bar.sync", sp)
		}
	case strings.Contains(s, "bar.warp.sync") || strings.Contains(s, "shfl.sync") || strings.Contains(s, "vote.sync") ||
		strings.Contains(s, "match.sync") || strings.Contains(s, "redux.sync"):
		fi.addSync(a, SyncWarp, "asm warp sync", sp)
	case strings.Contains(s, "barrier.cluster"):
		fi.addSync(a, SyncCluster, "asm barrier.cluster", sp)
	}
	for _, reg := range []string{"%smid", "%ctaid", "%nctaid", "%gridid", "%clusterid", "%cluster_ctaid", "%cluster_nctaid", "%nsmid"} {
		if strings.Contains(s, "%"+reg) {
			fi.refuse(a, sp, "inline asm reads %s, which the persistent form changes", reg)
		}
	}
}

// sharedDecls finds __shared__ declarations in a span.
func (a *Analysis) sharedDecls(s parser.Span, fileScope bool) []SharedDecl {
	return a.sharedDeclsIn(a.File, s, fileScope)
}

func (a *Analysis) sharedDeclsIn(f *parser.File, s parser.Span, fileScope bool) []SharedDecl {
	return a.sharedDeclsOf(f, tokensOf(f, s), fileScope)
}

// sharedDeclsOf finds __shared__ declarations in the tokens of a span of f.
func (a *Analysis) sharedDeclsOf(f *parser.File, toks []tok, fileScope bool) []SharedDecl {
	var out []SharedDecl
	for i, t := range toks {
		if t.text != "__shared__" {
			continue
		}
		ext := (i > 0 && toks[i-1].text == "extern") || (i+1 < len(toks) && toks[i+1].text == "extern")
		// The declared name: the last identifier before `[`, `;`, `=` or `,` at depth 0.
		name, typ := "", []string{}
		for j := i + 1; j < len(toks); j++ {
			x := toks[j].text
			if x == "[" || x == ";" || x == "=" || x == "," || x == "{" {
				if len(typ) > 0 {
					name = typ[len(typ)-1]
					typ = typ[:len(typ)-1]
				}
				break
			}
			if x != "extern" {
				typ = append(typ, x)
			}
		}
		if name == "" {
			continue
		}
		l, _ := a.posIn(f, span(t))
		out = append(out, SharedDecl{Name: name, Type: strings.Join(typ, " "), Extern: ext, Span: span(t), Line: l, FileVar: fileScope})
	}
	return out
}

// fileShared finds __shared__ variables at namespace scope.
func (a *Analysis) fileShared() {
	for _, it := range a.File.Items {
		a.collectFileShared(it)
	}
}

func (a *Analysis) collectFileShared(it parser.TopItem) {
	switch it := it.(type) {
	case *parser.Opaque:
		a.FileShared = append(a.FileShared, a.sharedDecls(it.Span(), true)...)
	case *parser.Namespace:
		for _, c := range it.Items {
			a.collectFileShared(c)
		}
	case *parser.LinkageBlock:
		for _, c := range it.Items {
			a.collectFileShared(c)
		}
	}
}

// propagateIndexUse marks every function that reads blockIdx/gridDim
// directly, through a macro, or through a callee.
func (a *Analysis) propagateIndexUse() {
	for _, fi := range a.Funcs {
		for _, u := range fi.Uses {
			if u.Name == BlockIdx || u.Name == GridDim {
				fi.IndexUser = true
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, fi := range a.Funcs {
			if fi.IndexUser {
				continue
			}
			for _, c := range fi.Calls {
				for _, t := range c.Targets {
					if ti := a.Funcs[t]; ti != nil && ti.IndexUser {
						fi.IndexUser = true
						changed = true
					}
				}
			}
		}
	}
}

// reachable returns the device functions reachable from fn (not fn
// itself), in source order.
func (a *Analysis) reachable(fn *parser.Func) []*FuncInfo {
	seen := map[*parser.Func]bool{fn: true}
	var stack []*parser.Func
	stack = append(stack, fn)
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		fi := a.Funcs[f]
		if fi == nil {
			continue
		}
		for _, c := range fi.Calls {
			for _, t := range c.Targets {
				if !seen[t] {
					seen[t] = true
					stack = append(stack, t)
				}
			}
		}
	}
	// Included files first (in include order), then the main file: the
	// order in which C++ sees the definitions. (Sorting what was reached by
	// a precomputed position, rather than walking every function of the
	// files per kernel, keeps files of many kernels linear.)
	if a.funcOrder == nil {
		a.funcOrder = map[*parser.Func]int{}
		for _, file := range append(append([]*parser.File(nil), a.Deps...), a.File) {
			for _, f := range a.funcsOf(file) {
				if _, dup := a.funcOrder[f]; !dup {
					a.funcOrder[f] = len(a.funcOrder)
				}
			}
		}
	}
	var out []*FuncInfo
	for f := range seen {
		if _, ok := a.funcOrder[f]; ok && f != fn && a.Funcs[f] != nil {
			out = append(out, a.Funcs[f])
		}
	}
	sort.Slice(out, func(i, j int) bool { return a.funcOrder[out[i].Func] < a.funcOrder[out[j].Func] })
	return out
}

// knownExternal are functions from CUDA's headers that kernels commonly
// call; they read no block index. Calls to other functions not defined in
// the file are reported as unresolved.
var knownExternalPrefixes = []string{"__", "atomic", "curand", "make_", "cuda", "cg::", "std::"}

func (a *Analysis) analyzeKernel(fn *parser.Func) *KernelInfo {
	fi := a.Funcs[fn]
	k := &KernelInfo{FuncInfo: fi, WarpIntrinsicsAll: fi.WarpIntrinsics}
	// The kernel's own facts come first; the helpers' are appended to a
	// copy (the full slice expressions), and a kernel without helpers
	// shares its own lists (they are only read).
	k.AllUses = fi.Uses[:len(fi.Uses):len(fi.Uses)]
	k.AllSyncs = fi.Syncs[:len(fi.Syncs):len(fi.Syncs)]
	k.Refusals = append(k.Refusals, fi.Refusal...)
	k.UsesShared = len(fi.Shared) > 0
	k.Helpers = a.reachable(fn)
	unresolved := map[string]bool{}
	for _, c := range fi.Calls {
		if len(c.Targets) == 0 && !systemCall(c) {
			unresolved[c.Name] = true
		}
	}
	for _, h := range k.Helpers {
		via := "helper " + h.Func.Name
		for _, u := range h.Uses {
			u.Via = via
			k.AllUses = append(k.AllUses, u)
		}
		for _, s := range h.Syncs {
			s.Via = via
			k.AllSyncs = append(k.AllSyncs, s)
		}
		for _, r := range h.Refusal {
			r.Notes = append(r.Notes, a.at(fn.NameSpan.Start, diag.Note, "reached from kernel %s through %s", fn.Name, h.Func.Name))
			k.Refusals = append(k.Refusals, r)
		}
		if len(h.Shared) > 0 {
			k.UsesShared = true
		}
		k.WarpIntrinsicsAll = k.WarpIntrinsicsAll || h.WarpIntrinsics
		k.Printf = k.Printf || h.Printf
		k.Atomics = k.Atomics || h.Atomics
		if h.IndexUser {
			k.IndexHelpers = append(k.IndexHelpers, h)
		}
		for _, c := range h.Calls {
			if len(c.Targets) == 0 && !systemCall(c) {
				unresolved[c.Name] = true
			}
		}
	}
	// A helper that reads the block index, named without a call (its
	// address taken): calls through the pointer reach the original.
	for _, f := range append([]*FuncInfo{fi}, k.Helpers...) {
		for _, c := range f.FuncRefs {
			for _, t := range c.Targets {
				if ti := a.Funcs[t]; ti != nil && ti.IndexUser && !t.Global {
					k.Refusals = append(k.Refusals, a.atIn(f.File, c.Span.Start, diag.Error,
						"takes %s without calling it, and %s reads blockIdx or gridDim: a call through a pointer to it cannot be made to use the virtual block index", c.Name, c.Name))
					break
				}
			}
		}
	}
	// A class whose operators, constructors or destructor read the block
	// index: their calls are implicit, so they cannot be redirected to
	// persistent copies.
	for _, f := range append([]*FuncInfo{fi}, k.Helpers...) {
		for t := range sigTokens(f.File, f.Func.BodySpan) {
			if t.Kind != parser.Ident {
				continue
			}
			if m := a.implicitIndexMember(t.text); m != nil {
				d := a.atIn(f.File, int(t.Off), diag.Error,
					"uses %s, whose %s reads blockIdx or gridDim: slatec cannot make implicit calls (operators, constructors, destructors) use the virtual block index", t.text, m.Name)
				owner := m.Class
				if owner == "" {
					owner = m.Scope
				}
				mf := a.File
				if mi := a.Funcs[m]; mi != nil {
					mf = mi.File // a header of the run
				}
				d.Notes = append(d.Notes, a.atIn(mf, m.NameSpan.Start, diag.Note, "%s::%s is here", owner, m.Name))
				k.Refusals = append(k.Refusals, d)
			}
		}
	}
	// A helper that reads the block index, called from inside a macro
	// expansion: the call cannot be redirected to the helper's persistent
	// copy, so the physical index would be read.
	for _, f := range append([]*FuncInfo{fi}, k.Helpers...) {
		for _, c := range f.Calls {
			if c.Macro == "" {
				continue
			}
			for _, t := range c.Targets {
				if ti := a.Funcs[t]; ti != nil && ti.IndexUser {
					k.Refusals = append(k.Refusals, a.atIn(f.File, c.Span.Start, diag.Error,
						"macro %s expands to a call of %s, which reads blockIdx or gridDim: slatec does not expand macros, so it cannot make that call use the virtual block index", c.Macro, c.Name))
					break
				}
			}
		}
	}
	// File-scope __shared__ variables used by name in the kernel or its helpers.
	if len(a.FileShared) > 0 {
		names := map[string]bool{}
		for _, s := range a.FileShared {
			names[s.Name] = true
		}
		for _, f := range append([]*FuncInfo{fi}, k.Helpers...) {
			for t := range sigTokens(f.File, f.Func.BodySpan) {
				if t.Kind == parser.Ident && names[t.text] {
					k.UsesShared = true
				}
			}
		}
	}
	for name := range unresolved {
		if !isKnownExternal(name) {
			k.Unresolved = append(k.Unresolved, name)
		}
	}
	sort.Strings(k.Unresolved)
	for _, s := range k.AllSyncs {
		if s.IsBlockLevel() {
			k.HasBlockSync = true
		}
	}
	if fn.ClusterDims != nil {
		k.Refusals = append(k.Refusals, a.at(fn.ClusterDims.Span().Start, diag.Error,
			"kernel %s declares __cluster_dims__: thread block clusters are not supported by the persistent form", fn.Name))
	}
	if fn.Def.BodyErr != nil {
		k.Refusals = append(k.Refusals, *fn.Def.BodyErr)
	}
	return k
}

// systemNamespaces are the namespaces of CUDA's and the C++ library's
// headers, which slatec does not open: their functions do not read a user
// kernel's block index, except the CUDA APIs in cudaIndexAPIs, which slatec
// recognises by name (and virtualises or refuses).
var systemNamespaces = map[string]bool{
	"cg": true, "cooperative_groups": true, "std": true, "cuda": true, "cub": true,
	"thrust": true, "nvcuda": true, "wmma": true, "__gnu_cxx": true, "cutlass": true, "cute": true,
}

// cudaIndexAPIs are the CUDA APIs that read the physical block index or
// grid (or need every block resident). They are never assumed harmless:
// the analysis rewrites or refuses each of them where it is used.
var cudaIndexAPIs = map[string]bool{
	"this_grid": true, "grid_group": true, "this_multi_grid": true, "multi_grid_group": true,
	"group_index": true, "block_index": true, "block_rank": true, "num_blocks": true,
	"dim_blocks": true, "this_cluster": true, "cluster_group": true, "block_dim": true,
	"grid_dim": true, "dim_clusters": true, "cluster_index": true, "cluster_rank": true,
}

// systemCall reports whether a call that slatec cannot see the definition
// of is to a function of CUDA's or the C++ library's headers, qualified
// with their namespace (cg::, std::, cub::...): it does not read the
// kernel's block index, unless it is one of the APIs that do.
func systemCall(c Call) bool {
	return c.Qual != "" && systemNamespaces[c.Qual] && !cudaIndexAPIs[c.Name]
}

func isKnownExternal(name string) bool {
	for _, p := range knownExternalPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return knownDeviceFuncs[name]
}

// knownDeviceFuncs are CUDA math and utility functions without a prefix.
var knownDeviceFuncs = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`printf assert memcpy memset malloc free min max abs fabs fabsf
		sqrt sqrtf rsqrt rsqrtf cbrt cbrtf exp expf exp2 exp2f exp10 exp10f expm1 expm1f log logf log2 log2f
		log10 log10f log1p log1pf pow powf sin sinf cos cosf tan tanf sincos sincosf sinpi sinpif cospi cospif
		asin asinf acos acosf atan atanf atan2 atan2f sinh sinhf cosh coshf tanh tanhf asinh acosh atanh
		floor floorf ceil ceilf round roundf rint rintf trunc truncf fmod fmodf remainder remainderf
		fmin fminf fmax fmaxf fma fmaf erf erff erfc erfcf erfinv erfinvf erfcinv normcdf normcdff
		normcdfinv normcdfinvf lgamma tgamma isnan isinf isfinite signbit copysign copysignf ldexp ldexpf
		frexp frexpf modf modff hypot hypotf norm3d rnorm3d llrint lrint llround lround nearbyint
		umin umax llmin llmax ullmin ullmax mul24 umul24 mulhi umulhi fdividef saturate sizeof
		static_cast reinterpret_cast const_cast dynamic_cast tex1D tex2D tex3D tex1Dfetch surf2Dread surf2Dwrite
		dim3 float2 float3 float4 int2 int3 int4 uint2 uint3 uint4 double2 double4 this_thread_block
		tiled_partition coalesced_threads labeled_partition binary_partition sync reduce
		inclusive_scan exclusive_scan this_grid this_cluster plus less greater
		memcpy_async wait wait_prior invoke_one invoke_one_broadcast
		load_matrix_sync store_matrix_sync mma_sync bmma_sync fill_fragment
		clock clock64 nan nanf scalbn scalbnf ilogb ilogbf logb logbf fdim fdimf rhypot rhypotf
		norm rnorm norm4d rnorm4d rcbrt rcbrtf sincospi sincospif j0 j0f j1 j1f y0 y0f y1 y1f
		erfcx erfcxf labs llabs rnorm3df norm3df normf rnormf cyl_bessel_i0 cyl_bessel_i0f
		cyl_bessel_i1 cyl_bessel_i1f fmodf remquo remquof nextafter nextafterf
		hsqrt hrsqrt hrcp hlog hlog2 hlog10 hexp hexp2 hexp10 hcos hsin hceil hfloor hrint htrunc htanh
		h2sqrt h2rsqrt h2rcp h2log h2log2 h2log10 h2exp h2exp2 h2exp10 h2cos h2sin h2ceil h2floor
		h2rint h2trunc h2tanh half half2 nv_bfloat16 nv_bfloat162 size_t
		tex1DLod tex2DLod tex3DLod tex1DLayered tex2DLayered texCubemap tex2Dgather tex1DGrad tex2DGrad
		surf1Dread surf1Dwrite surf3Dread surf3Dwrite surf2DLayeredread surf2DLayeredwrite`) {
		m[n] = true
	}
	// CUDA's vector types, used as function-style casts: float2(x, y).
	for _, b := range strings.Fields("char uchar short ushort int uint long ulong longlong ulonglong float double") {
		for _, n := range []string{"1", "2", "3", "4"} {
			m[b+n] = true
		}
	}
	return m
}()

// opaqueFacts is what slatec knows about code it keeps opaque (class and
// struct bodies, initialisers) in the main file and its includes: which
// type and function names defined there touch shared memory, synchronise,
// or read blockIdx/gridDim. Kernels that use those names inherit the facts.
type opaqueFacts struct {
	shared, sync, index map[string]bool
	indexUse            map[string]parser.Span // a read of blockIdx/gridDim, per name
	indexFile           map[string]*parser.File
}

// collectOpaqueFacts scans opaque items for class bodies and function-like
// definitions. A name is marked when its braces contain the construct.
func (a *Analysis) collectOpaqueFacts() *opaqueFacts {
	of := &opaqueFacts{shared: map[string]bool{}, sync: map[string]bool{}, index: map[string]bool{},
		indexUse: map[string]parser.Span{}, indexFile: map[string]*parser.File{}}
	var walk func(f *parser.File, items []parser.TopItem)
	walk = func(f *parser.File, items []parser.TopItem) {
		for _, it := range items {
			switch it := it.(type) {
			case *parser.Opaque:
				a.scanOpaque(f, tokensOf(f, it.Span()), of)
			case *parser.Namespace:
				walk(f, it.Items)
			case *parser.LinkageBlock:
				walk(f, it.Items)
			}
		}
	}
	for _, f := range append([]*parser.File{a.File}, a.Deps...) {
		walk(f, f.Items)
	}
	return of
}

// scanOpaque finds `struct|class NAME ... { body }` and `NAME(...) ... { body }`
// groups in an opaque token run and records what each body contains under
// that name (and under the enclosing class's name).
func (a *Analysis) scanOpaque(f *parser.File, toks []tok, of *opaqueFacts) {
	type open struct {
		names []string
		depth int
	}
	var stack []open
	depth := 0
	pending := []string{}
	mark := func(set map[string]bool, names []open) {
		for _, o := range names {
			for _, n := range o.names {
				set[n] = true
			}
		}
	}
	var parsed []parser.Span // bodies of member functions analysed as functions
	if f == a.File || a.RunDeps[f] {
		for _, m := range a.funcsOf(f) {
			if m.Class != "" {
				parsed = append(parsed, m.BodySpan)
			}
		}
	}
	inParsed := func(t tok) bool {
		for _, s := range parsed {
			if s.Contains(span(t)) {
				return true
			}
		}
		return false
	}
	for i, t := range toks {
		if len(parsed) > 0 && inParsed(t) {
			continue // its own facts apply, through calls of it
		}
		switch {
		case t.text == "struct" || t.text == "class" || t.text == "union":
			// Not a template parameter: template <class T> ...
			if i > 0 && (toks[i-1].text == "<" || toks[i-1].text == ",") {
				continue
			}
			if i+1 < len(toks) && toks[i+1].Kind == parser.Ident {
				pending = append(pending, toks[i+1].text)
			}
		case t.Kind == parser.Ident && i+1 < len(toks) && toks[i+1].text == "(":
			pending = append(pending, t.text)
		case t.text == "operator":
			pending = append(pending, "operator")
		case t.text == ";":
			if len(stack) == 0 || depth == stack[len(stack)-1].depth {
				pending = pending[:0]
			}
		case t.text == "{":
			depth++
			if len(pending) > 0 {
				stack = append(stack, open{names: append([]string(nil), pending...), depth: depth})
				pending = pending[:0]
			}
		case t.text == "}":
			if len(stack) > 0 && stack[len(stack)-1].depth == depth {
				stack = stack[:len(stack)-1]
			}
			depth--
		}
		if len(stack) == 0 {
			continue
		}
		switch {
		case t.text == "__shared__":
			mark(of.shared, stack)
		case blockBarrierFuncs[t.text] || blockReduceFuncs[t.text] || warpSyncFuncs[t.text] ||
			(t.text == "sync" && i > 0 && (toks[i-1].text == "." || toks[i-1].text == "::")):
			mark(of.sync, stack)
		case t.Kind == parser.Ident && (t.text == BlockIdx || t.text == GridDim || containsIndex(a.IndexMacros[t.text])) &&
			!(i > 0 && (toks[i-1].text == "." || toks[i-1].text == "->")):
			for _, o := range stack {
				for _, n := range o.names {
					if !of.index[n] {
						of.index[n] = true
						of.indexUse[n] = span(t)
						of.indexFile[n] = f
					}
				}
			}
		}
	}
}

// applyOpaqueFacts folds the facts about opaque names into the kernels
// that mention them (as a type, a call, or a member call).
func (a *Analysis) applyOpaqueFacts(of *opaqueFacts) {
	for _, k := range a.Kernels {
		for _, fi := range append([]*FuncInfo{k.FuncInfo}, k.Helpers...) {
			for t := range sigTokens(fi.File, fi.Func.BodySpan) {
				if t.Kind != parser.Ident {
					continue
				}
				n := t.text
				if a.byName[n] != nil {
					continue // a function slatec parsed: its own facts apply
				}
				if of.shared[n] {
					k.UsesShared = true
					if !contains(k.SharedVia, n) {
						k.SharedVia = append(k.SharedVia, n)
					}
				}
				if of.sync[n] {
					k.OpaqueSync = append(k.OpaqueSync, span(t))
					k.HasBlockSync = true
				}
				if of.index[n] {
					use := of.indexUse[n]
					d := a.atIn(fi.File, int(t.Off), diag.Error,
						"uses %s, which reads blockIdx or gridDim inside a class or initialiser that slatec cannot rewrite", n)
					if f := of.indexFile[n]; f != nil && f != a.File && !a.RunDeps[f] {
						d.Message += " (it is in an included header: slatec copies member functions only of classes in the files it transforms; transform " + filepath.ToSlash(f.Name) + " with this file)"
					}
					d.Notes = append(d.Notes, a.atIn(of.indexFile[n], use.Start, diag.Note, "the read is here"))
					k.Refusals = append(k.Refusals, d)
				}
			}
		}
		// Type names are constructions, not calls to unseen functions.
		var unresolved []string
		for _, n := range k.Unresolved {
			isType := a.File.TypeNames[n]
			for _, d := range a.Deps {
				isType = isType || d.TypeNames[n]
			}
			if !isType && !of.shared[n] && !of.sync[n] && !of.index[n] {
				unresolved = append(unresolved, n)
			}
		}
		k.Unresolved = unresolved
	}
}

func containsIndex(bs []string) bool {
	for _, b := range bs {
		if b == BlockIdx || b == GridDim {
			return true
		}
	}
	return false
}

// splitDeviceLaunches separates the launches made from device code (in
// the body of a __global__ or __device__ function) from host launches.
func splitDeviceLaunches(f *parser.File, all []*LaunchSite) (host, device []*LaunchSite) {
	for _, ls := range all {
		dev := false
		for _, fn := range f.Funcs {
			if (fn.Global || fn.Device) && fn.BodySpan.Contains(ls.Span) {
				dev = true
			}
		}
		if dev {
			device = append(device, ls)
		} else {
			host = append(host, ls)
		}
	}
	return host, device
}

// macroLaunches warns about launches inside #define bodies: they are not
// rewritten, so those launches keep running the original kernels.
func (a *Analysis) macroLaunches() {
	for _, m := range a.File.Macros {
		body := a.File.Text(m.Body)
		if strings.Contains(body, "<<<") {
			a.Diags = append(a.Diags, a.at(m.Span.Start, diag.Warning,
				"macro %s contains a kernel launch; launches inside macros are not rewritten and run the original kernel", m.Name))
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
