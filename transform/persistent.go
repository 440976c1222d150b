package transform

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/parser"
	"github.com/slatec/slatec/templates"
)

// Options configure the persistent transform.
type Options struct {
	// Kernels selects kernels by name; empty means every kernel in the file.
	Kernels []string
	// Iters fixes the logical blocks per task; 0 chooses per launch (auto).
	Iters int
	// NoLaunchRewrite leaves host launch sites as they are.
	NoLaunchRewrite bool
	// Version and Command go into the output's header.
	Version string
	Command string
	// LineFile is the file name written in #line directives (default: the
	// input's name).
	LineFile string
	// OtherKernels are the qualified names of kernels defined in other files
	// transformed in the same run (headers this file includes): their launch
	// sites here are rewritten too, to the launchers those files define.
	OtherKernels []string
	// NoKernels transforms no kernel of this file (only launch sites of
	// OtherKernels), whatever Kernels says.
	NoKernels bool
	// OtherLaunchers maps kernels of other .cu files of the run whose
	// launchers have external linkage to the launcher's declaration: a
	// prototype of such a kernel here gets the declaration after it.
	OtherLaunchers map[string]string
	// HiddenKernels are kernels of other files whose launchers this file
	// cannot see: their launches stay native, with a note.
	HiddenKernels []string
	// RegCaps caps each worker's registers at its kernel's allocation:
	// architecture ("sm_90") -> qualified kernel name -> registers the
	// kernel uses there (ptxas -v; the largest over template instances).
	// The worker then keeps the kernel's blocks per SM (regcaps.go).
	RegCaps map[string]map[string]int
	// RegCapInstances refines RegCaps for template kernels: architecture ->
	// qualified name -> template arguments as C++ spells them ("64, 2") ->
	// registers of that instance.
	RegCapInstances map[string]map[string]map[string]int
	// ExportClones names helpers of this file (functions and class
	// members) that kernels of other files of the run call: their
	// persistent copies go here, where the classes are, even if no kernel
	// of this file calls them (a header transformed with the files that
	// include it; see LoadOptions.Inputs).
	ExportClones []string
	// DeviceOnly makes the output compile with NVRTC as well: host-only
	// function definitions and includes of host-only system headers are
	// fenced with #ifndef __CUDACC_RTC__ (slatec gen embeds such output).
	DeviceOnly bool
	// FirstUse wraps the setup calls (cudaMalloc, cudaMemcpy, ...) of a
	// file with no kernel and no launch of its own in slate_first_use(),
	// with the first-use header: the run transforms kernels of other files,
	// whose workers then load at this file's first setup call on a device
	// (templates/first_use.h). A file with kernels or launches always wraps
	// its setup calls.
	FirstUse bool
}

// Result is the output of the persistent transform.
type Result struct {
	Output  []byte
	Changed bool
	Kernels []*KernelLayout
	// Diags holds errors (when the transform refused) and warnings.
	Diags diag.List
}

// KernelLayout describes a transformed kernel for launchers and the Go
// runtime: names and the parameter layout (docs/ABI.md).
type KernelLayout struct {
	Name          string        `json:"name"`
	QualifiedName string        `json:"qualified_name"`
	Worker        string        `json:"worker"`
	Launcher      string        `json:"launcher"`
	ExternC       bool          `json:"extern_c"`
	Template      []string      `json:"template_params,omitempty"`
	Params        []ParamLayout `json:"params"`
	BlockSync     bool          `json:"block_sync"`
	Lowered       bool          `json:"lowered"`
}

// WorkerExpr is the worker's name as code at global scope spells it (an
// NVRTC name expression): its name qualified by the kernel's namespaces,
// anonymous ones left out (their members are visible unqualified).
func (kl *KernelLayout) WorkerExpr() string {
	q := kl.QualifiedName
	i := strings.LastIndex(q, "::")
	if i < 0 {
		return kl.Worker
	}
	var segs []string
	for _, ns := range strings.Split(q[:i], "::") {
		if ns != "(anonymous)" {
			segs = append(segs, ns)
		}
	}
	return strings.Join(append(segs, kl.Worker), "::")
}

// ParamLayout is one kernel parameter. Size and Align are 0 when slatec
// does not know the type (user structs, template parameters); the runtime
// then asks the driver (cuFuncGetParamInfo).
type ParamLayout struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Size  int    `json:"size"`
	Align int    `json:"align"`
}

// Persistent transforms the selected kernels of an analysed file into
// persistent workers and rewrites their launch sites. When a selected
// kernel must be refused, Result.Diags holds the errors and Output is nil.
func Persistent(a *Analysis, opts Options) (*Result, error) {
	res := &Result{}
	kernels, err := selectKernels(a, opts.Kernels)
	if err != nil {
		return nil, err
	}
	if opts.NoKernels {
		kernels = nil
	}
	res.Diags = append(res.Diags, a.Diags...)
	res.Diags = append(res.Diags, a.splitRefusals(opts.Kernels, opts.NoKernels)...)
	lineFile := opts.LineFile
	if lineFile == "" {
		lineFile = a.File.Name
	}
	t := &transformer{a: a, opts: opts, lineFile: filepath.ToSlash(lineFile), selected: map[*parser.Func]bool{}}
	for _, k := range kernels {
		t.selected[k.Func] = true
	}
	// Refusals first: a file with a refused kernel produces no output.
	for _, k := range kernels {
		ds := t.check(k)
		res.Diags = append(res.Diags, ds...)
	}
	if res.Diags.HasErrors() {
		res.Diags.Sort()
		return res, nil
	}
	launches := t.launchesOf(kernels)
	if len(kernels) == 0 && len(launches) == 0 && !t.declaresLaunchers() && len(opts.ExportClones) == 0 {
		t.noteHiddenLaunches()
		res.Diags = append(res.Diags, t.diags...)
		res.Diags.Sort()
		res.Output = a.File.Src
		if calls := t.setupCalls(); opts.FirstUse && len(calls) > 0 {
			header := fmt.Sprintf("// Code generated by slatec %s; DO NOT EDIT.\n// slatec %s\n", opts.Version, opts.Command)
			t.edits = append(t.edits, emit.Insert(0, header+templates.FirstUseHeader()+fmt.Sprintf("#line 1 \"%s\"\n", t.lineFile), "first use"))
			t.wrapSetupCalls(calls)
			out, err := emit.Apply(a.File.Src, t.edits)
			if err != nil {
				return nil, err
			}
			res.Output = []byte(out)
			res.Changed = true
		}
		return res, nil
	}
	if err := t.build(kernels, launches); err != nil {
		return nil, err
	}
	res.Diags = append(res.Diags, t.diags...)
	if res.Diags.HasErrors() {
		res.Diags.Sort()
		return res, nil
	}
	out, err := emit.Apply(a.File.Src, t.edits)
	if err != nil {
		return nil, err
	}
	res.Output = []byte(out)
	res.Changed = true
	res.Kernels = t.layouts
	res.Diags.Sort()
	return res, nil
}

func selectKernels(a *Analysis, names []string) ([]*KernelInfo, error) {
	if len(names) == 0 {
		return a.Kernels, nil
	}
	var out []*KernelInfo
	for _, n := range names {
		found := false
		for _, k := range a.Kernels {
			if k.Func.Name == n || k.Func.QualifiedName() == n {
				out = append(out, k)
				found = true
			}
		}
		if !found {
			var have []string
			for _, k := range a.Kernels {
				have = append(have, k.Func.QualifiedName())
			}
			return nil, fmt.Errorf("%s: no kernel named %q (kernels: %s)", a.File.Name, n, orNoneList(have))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Func.HeadSpan.Start < out[j].Func.HeadSpan.Start })
	return out, nil
}

func orNoneList(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

type transformer struct {
	a        *Analysis
	opts     Options
	lineFile string
	selected map[*parser.Func]bool
	edits    []emit.Edit
	diags    []diag.Diagnostic
	layouts  []*KernelLayout
	// lowered holds each kernel's lowering edits.
	lowered map[*KernelInfo][]emit.Edit
	// clones are the helper names whose persistent copies take the virtual
	// block index as leading parameters.
	clones map[string]bool
	// forwarded are the launcher declarations placed after prototypes
	// (and the launches noted), so that the definitions of a kernel in
	// several #if branches declare each launcher once per place.
	forwarded map[string]bool
}

// check returns the reasons a kernel cannot be transformed.
func (t *transformer) check(k *KernelInfo) []diag.Diagnostic {
	a := t.a
	var ds []diag.Diagnostic
	prefix := func(d diag.Diagnostic) diag.Diagnostic {
		if !strings.HasPrefix(d.Message, "kernel ") {
			d.Message = "kernel " + k.Func.Name + ": " + d.Message
		}
		return d
	}
	for _, r := range k.Refusals {
		ds = append(ds, prefix(r))
	}
	if !t.opts.NoLaunchRewrite {
		for _, r := range k.CutLaunches {
			ds = append(ds, prefix(r))
		}
	}
	// Reserved names.
	for _, fi := range append([]*FuncInfo{k.FuncInfo}, k.Helpers...) {
		for _, tk := range tokensOf(fi.File, fi.Func.Def.Span()) {
			if tk.Kind == parser.Ident && (strings.HasPrefix(tk.text, "slate_") || strings.Contains(tk.text, "__slate")) {
				ds = append(ds, prefix(a.atIn(fi.File, int(tk.Off), diag.Error,
					"the identifier %s uses a prefix slatec reserves (slate_, __slate)", tk.text)))
				break
			}
		}
	}
	for i, p := range k.Func.Params {
		if p.Variadic {
			ds = append(ds, prefix(a.at(p.Span.Start, diag.Error, "C variadic parameters are not supported")))
		}
		if p.Name == "" && strings.Contains(p.Type, "(") {
			ds = append(ds, prefix(a.at(p.Span.Start, diag.Error, "unnamed function-pointer parameter %d: name it", i+1)))
		}
	}
	for _, tp := range k.Func.Template {
		if tp.Name == "" {
			ds = append(ds, prefix(a.at(k.Func.TemplateSpan.Start, diag.Error, "unnamed template parameter %q: name it", tp.Text)))
		}
	}
	// Helpers whose index reads must be virtualised: only calls can be rewritten.
	for _, fi := range append([]*FuncInfo{k.FuncInfo}, k.Helpers...) {
		for _, tk := range tokensOf(fi.File, fi.Func.BodySpan) {
			_ = tk
		}
	}
	if len(ds) == 0 && k.NeedsLowering {
		if t.lowered == nil {
			t.lowered = map[*KernelInfo][]emit.Edit{}
		}
		edits, errs := a.lowerKernel(k)
		for _, e := range errs {
			ds = append(ds, prefix(e))
		}
		t.lowered[k] = edits
	}
	return ds
}

// launchesOf returns the launch sites of the selected kernels.
func (t *transformer) launchesOf(kernels []*KernelInfo) []*LaunchSite {
	if t.opts.NoLaunchRewrite {
		return nil
	}
	var out []*LaunchSite
	for _, ls := range t.a.Launches {
		if t.kernelFor(ls, kernels) != nil || t.otherKernel(ls) {
			out = append(out, ls)
		}
	}
	return out
}

// otherKernel reports whether a launch site names a kernel transformed in
// another file of this run.
func (t *transformer) otherKernel(ls *LaunchSite) bool {
	name := strings.TrimPrefix(ls.Kernel, "::")
	for _, q := range t.opts.OtherKernels {
		if name == q || strings.HasSuffix(q, "::"+name) || strings.HasSuffix(name, "::"+q) {
			return true
		}
		if i := strings.LastIndex(q, "::"); i >= 0 && name == q[i+2:] {
			return true // unqualified use inside the namespace, or after using
		}
	}
	return false
}

// kernelFor resolves a launch site's name to a selected kernel: the
// written name must equal the kernel's name or end with ::name and be a
// suffix of its qualified name.
func (t *transformer) kernelFor(ls *LaunchSite, kernels []*KernelInfo) *KernelInfo {
	name := strings.TrimPrefix(ls.Kernel, "::")
	var match *KernelInfo
	for _, k := range kernels {
		q := k.Func.QualifiedName()
		if name == q || strings.HasSuffix(q, "::"+name) || (name == k.Func.Name && len(k.Func.Namespace) == 0) {
			match = k
		} else if name == k.Func.Name && match == nil {
			match = k // unqualified use from inside the namespace
		}
	}
	return match
}

// build assembles every edit of the output.
func (t *transformer) build(kernels []*KernelInfo, launches []*LaunchSite) error {
	a := t.a
	v, cmd := t.opts.Version, t.opts.Command
	header := fmt.Sprintf("// Code generated by slatec %s; DO NOT EDIT.\n// slatec %s\n", v, cmd)
	t.edits = append(t.edits, emit.Insert(0, header+templates.Prelude()+fmt.Sprintf("#line 1 \"%s\"\n", t.lineFile), "prelude"))
	t.cloneHelpers(kernels)
	t.cloneProtos()
	if t.opts.DeviceOnly {
		t.fenceHostCode()
	}
	for _, k := range kernels {
		if err := t.kernel(k, launches); err != nil {
			return err
		}
	}
	for _, ls := range launches {
		t.rewriteLaunch(ls)
	}
	t.rewriteKernelCalls(kernels)
	t.wrapSetupCalls(t.setupCalls())
	t.declareLaunchers()
	t.noteHiddenLaunches()
	_ = a
	return nil
}

// nvrtcHeaders are system headers NVRTC can compile (with the CUDA
// include directory on its path); other system includes are host-only.
var nvrtcHeaders = map[string]bool{
	"cuda_fp16.h": true, "cuda_bf16.h": true, "cuda_fp8.h": true, "cooperative_groups.h": true,
	"curand_kernel.h": true, "mma.h": true, "cuda_pipeline.h": true, "cuda_awbarrier.h": true,
	"vector_types.h": true, "vector_functions.h": true, "cuda_texture_types.h": true,
	"sm_20_atomic_functions.h": true, "sm_60_atomic_functions.h": true,
}

// fenceHostCode wraps host-only definitions and includes in
// #ifndef __CUDACC_RTC__ so that NVRTC sees device code only.
func (t *transformer) fenceHostCode() {
	// Each fence restores the line numbering of what follows it.
	fence := func(sp parser.Span, alt string) {
		l0, _ := t.a.Lines.Position(sp.Start)
		l1, _ := t.a.Lines.Position(sp.End)
		t.edits = append(t.edits,
			emit.Insert(sp.Start, fmt.Sprintf("\n#ifndef __CUDACC_RTC__\n#line %d \"%s\"\n", l0, t.lineFile), "fence"),
			emit.Insert(sp.End, fmt.Sprintf("\n%s#endif\n#line %d \"%s\"\n", alt, l1, t.lineFile), "fence"))
	}
	inlined := map[*parser.File]bool{}
	for _, inc := range t.a.File.Includes {
		if hostOnlyInclude(inc) {
			fence(inc.Span, fenceElse(inc))
		}
		// A project header goes in device-only as well: NVRTC gets a copy
		// with its host-only parts fenced, nvcc the #include as written.
		if h := t.a.IncludeFiles[inc]; h != nil && !inc.System {
			l, _ := t.a.Lines.Position(inc.Span.Start)
			text := t.a.File.Text(inc.Span)
			t.edits = append(t.edits, emit.Replace(inc.Span.Start, inc.Span.End,
				fmt.Sprintf("#ifdef __CUDACC_RTC__\n%s#else\n#line %d \"%s\"\n%s\n#endif\n#line %d \"%s\"\n",
					t.deviceOnlyHeader(h, inlined), l, t.lineFile, text, l, t.lineFile), "inline header"))
		}
	}
	var hostFns []parser.Span
	for _, fn := range t.a.File.Funcs {
		if !fn.Global && !fn.Device {
			fence(fn.Def.Span(), "")
			hostFns = append(hostFns, fn.Def.Span())
		}
	}
	for _, sp := range t.unusedTypeDefs(hostFns) {
		fence(sp, "")
	}
}

// containsWord reports whether word occurs in s as a whole identifier.
func containsWord(s, word string) bool {
	isID := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(s[i:], word)
		if j < 0 {
			return false
		}
		j += i
		if (j == 0 || !isID(s[j-1])) && (j+len(word) == len(s) || !isID(s[j+len(word)])) {
			return true
		}
		i = j + 1
	}
}

// unusedTypeDefs returns the top-level struct, class and union definitions
// of the main file whose name nothing that NVRTC sees mentions (only host
// functions, which are fenced, or nothing): a host program's bookkeeping
// (`struct Job { std::vector<float> x; cudaStream_t s; };`) would stop
// NVRTC, and device code cannot need what it never names.
func (t *transformer) unusedTypeDefs(hostFns []parser.Span) []parser.Span {
	f := t.a.File
	type def struct {
		name string
		span parser.Span
	}
	var defs []def
	for _, it := range f.Items {
		o, ok := it.(*parser.Opaque)
		if !ok {
			continue
		}
		toks := f.SignificantTokens(o.Span())
		if len(toks) < 4 || f.TokenText(toks[len(toks)-1]) != ";" {
			continue
		}
		switch f.TokenText(toks[0]) {
		case "struct", "class", "union":
		default:
			continue
		}
		if toks[1].Kind != parser.Ident || f.TokenText(toks[2]) != "{" || f.TokenText(toks[len(toks)-2]) != "}" {
			continue // a declaration, a variable of the type, or a base list: leave it
		}
		defs = append(defs, def{f.TokenText(toks[1]), o.Span()})
	}
	if len(defs) == 0 {
		return nil
	}
	inHost := func(off int) bool {
		for _, h := range hostFns {
			if off >= h.Start && off < h.End {
				return true
			}
		}
		return false
	}
	used := map[string]bool{}
	for _, d := range defs {
		used[d.name] = false
	}
	for _, tk := range f.Toks {
		if tk.Kind == parser.Directive {
			// A macro that names the type counts as a use.
			for _, d := range defs {
				if !used[d.name] && containsWord(f.TokenText(tk), d.name) {
					used[d.name] = true
				}
			}
			continue
		}
		if tk.Kind != parser.Ident {
			continue
		}
		name := f.TokenText(tk)
		seen, isDef := used[name]
		if !isDef || seen || inHost(int(tk.Off)) {
			continue
		}
		for _, d := range defs {
			if d.name == name && (int(tk.Off) < d.span.Start || int(tk.Off) >= d.span.End) {
				used[name] = true
			}
		}
	}
	var out []parser.Span
	for _, d := range defs {
		if !used[d.name] {
			out = append(out, d.span)
		}
	}
	return out
}

// nvrtcSubstitutes are system headers whose global names and macros
// libcu++ provides under NVRTC: the fence gives NVRTC the substitute.
var nvrtcSubstitutes = map[string]string{
	"cstdint": "cuda/std/cstdint", "stdint.h": "cuda/std/cstdint",
	"climits": "cuda/std/climits", "limits.h": "cuda/std/climits",
	// The fixed-width types (the PRI* format macros have no libcu++ form).
	"cinttypes": "cuda/std/cstdint", "inttypes.h": "cuda/std/cstdint",
}

// fenceElse is what NVRTC gets instead of a fenced host-only include.
func fenceElse(inc *parser.Include) string {
	sub := nvrtcSubstitutes[inc.Path]
	if sub == "" {
		return ""
	}
	alt := "#else\n#include <" + sub + ">\n"
	if inc.Path == "cinttypes" || inc.Path == "inttypes.h" {
		alt += priMacros
	}
	return alt
}

// priMacros are <cinttypes>' format macros for libcu++'s fixed-width types
// under NVRTC (int64_t is long long there), for device printf.
var priMacros = func() string {
	var b strings.Builder
	b.WriteString("#ifndef PRId64\n")
	for _, bits := range []struct {
		n   string
		len string
	}{{"8", "hh"}, {"16", "h"}, {"32", ""}, {"64", "ll"}} {
		for _, conv := range []string{"d", "i", "u", "o", "x", "X"} {
			fmt.Fprintf(&b, "#define PRI%s%s \"%s%s\"\n", conv, bits.n, bits.len, conv)
		}
	}
	b.WriteString("#endif\n")
	return b.String()
}()

func hostOnlyInclude(inc *parser.Include) bool {
	return inc.System && !nvrtcHeaders[inc.Path] && !strings.HasPrefix(inc.Path, "cooperative_groups/") && !strings.HasPrefix(inc.Path, "cuda/")
}

// pragmaOnce matches a #pragma once line (inlined headers drop it: the
// copy is emitted once, and in the main file it would draw a warning).
var pragmaOnce = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*pragma[ \t]+once\b.*$`)

// deviceOnlyHeader is the text of header h as NVRTC gets it: host-only
// system includes and host-only function definitions fenced, its own
// project headers inlined the same way, each header once (as include
// guards and #pragma once would have it), with #line directives naming h.
func (t *transformer) deviceOnlyHeader(h *parser.File, inlined map[*parser.File]bool) string {
	if inlined[h] {
		return ""
	}
	inlined[h] = true
	lines := diag.NewLines(h.Src)
	var edits []emit.Edit
	fence := func(sp parser.Span, alt string) {
		l0, _ := lines.Position(sp.Start)
		l1, _ := lines.Position(sp.End)
		edits = append(edits,
			emit.Insert(sp.Start, fmt.Sprintf("\n#ifndef __CUDACC_RTC__\n#line %d \"%s\"\n", l0, h.Name), "fence"),
			emit.Insert(sp.End, fmt.Sprintf("\n%s#endif\n#line %d \"%s\"\n", alt, l1, h.Name), "fence"))
	}
	for _, inc := range h.Includes {
		switch d := t.a.IncludeFiles[inc]; {
		case hostOnlyInclude(inc):
			fence(inc.Span, fenceElse(inc))
		case d != nil && !inc.System:
			l, _ := lines.Position(inc.Span.Start)
			edits = append(edits, emit.Replace(inc.Span.Start, inc.Span.End,
				fmt.Sprintf("%s#line %d \"%s\"\n", t.deviceOnlyHeader(d, inlined), l, h.Name), "inline header"))
		}
	}
	for _, fn := range h.Funcs {
		if !fn.Global && !fn.Device && fn.Def != nil {
			fence(fn.Def.Span(), "")
		}
	}
	text, err := emit.Apply(h.Src, edits)
	if err != nil {
		t.diags = append(t.diags, t.a.at(0, diag.Error, "%s: %v", h.Name, err))
		return ""
	}
	text = pragmaOnce.ReplaceAllString(text, "")
	return fmt.Sprintf("#line 1 \"%s\"\n%s\n", h.Name, text)
}

// cloneHelpers emits, after each helper that reads blockIdx or gridDim
// (directly or through callees) and is reachable from a selected kernel, a
// copy that takes the virtual index as leading parameters named like the
// builtins, so the copy's reads (and its macros) see the virtual values.
// Every overload of such a name is cloned, so overload resolution is
// unchanged.
func (t *transformer) cloneHelpers(kernels []*KernelInfo) {
	t.clones = map[string]bool{}
	local := map[string]bool{}
	for _, k := range kernels {
		for _, h := range k.IndexHelpers {
			t.clones[h.Func.Name], local[h.Func.Name] = true, true
		}
	}
	for _, n := range t.opts.ExportClones {
		t.clones[n] = true
	}
	if len(t.clones) == 0 {
		return
	}
	var names []string
	for n := range t.clones {
		names = append(names, n)
	}
	sort.Strings(names)
	// Copies that share an insertion point must keep definition order
	// (callees first): order by file, as included, then by position.
	type cloneJob struct {
		fi       *FuncInfo
		overload int
	}
	fileIdx := map[*parser.File]int{t.a.File: len(t.a.Deps)}
	for i, d := range t.a.Deps {
		fileIdx[d] = i
	}
	var jobs []cloneJob
	for _, name := range names {
		for i, fn := range t.a.byName[name] {
			fi := t.a.Funcs[fn]
			switch {
			case fi == nil:
			case t.a.RunDeps[fi.File]:
				// A header of the run: its own output has the copy (its
				// transform gets the name in ExportClones).
			case !local[name] && fi.File != t.a.File:
				// Exported for other files: only this file's functions.
			default:
				jobs = append(jobs, cloneJob{fi, i})
			}
		}
	}
	sort.SliceStable(jobs, func(i, j int) bool {
		a, b := jobs[i].fi, jobs[j].fi
		if fileIdx[a.File] != fileIdx[b.File] {
			return fileIdx[a.File] < fileIdx[b.File]
		}
		return a.Func.NameSpan.Start < b.Func.NameSpan.Start
	})
	for _, job := range jobs {
		{
			fi, i, fn, name := job.fi, job.overload, job.fi.Func, job.fi.Func.Name
			text, err := t.cloneText(fi, i)
			if err != nil {
				t.diags = append(t.diags, t.a.atIn(fi.File, fn.NameSpan.Start, diag.Error, "%v", err))
				continue
			}
			at := fn.Def.Span().End
			if fi.File != t.a.File {
				// A helper from an included header: its copy goes right after
				// the #include that brings the header in.
				inc := t.a.Via[fi.File]
				if inc == nil {
					t.diags = append(t.diags, t.a.at(0, diag.Error,
						"helper %s reads blockIdx or gridDim in %s, which slatec cannot place: transform that file with this one", name, fi.File.Name))
					continue
				}
				at = inc.Span.End
			}
			t.edits = append(t.edits, emit.Insert(at, text, "clone "+name))
		}
	}
}

// cloneText renders the persistent copy of a helper. Copies are guarded
// by a macro named after the helper, so a header transformed in the same
// run and this file do not both define one.
func (t *transformer) cloneText(fi *FuncInfo, overload int) (string, error) {
	fn := fi.Func
	f := fi.File
	def := fn.Def.Span()
	var edits []emit.Edit
	edits = append(edits, emit.Replace(fn.NameSpan.Start, fn.NameSpan.End, cloneName(f, fn, "__slate"), "clone name"))
	lead := "const uint3 blockIdx, const dim3 gridDim"
	ps := fn.ParamsSpan
	if len(fn.Params) == 0 {
		edits = append(edits, emit.Replace(ps.Start, ps.End, "("+lead+")", "clone params"))
	} else {
		edits = append(edits, emit.Insert(ps.Start+1, lead+", ", "clone params"))
	}
	edits = append(edits, t.callEdits(fi)...)
	edits = append(edits, t.groupIndexEdits(fi)...)
	edits = append(edits, lambdaCaptureEdits(t.a, fi, t.clones, []string{BlockIdx, GridDim})...)
	body, err := emit.ApplyRange(f.Src, def.Start, def.End, edits)
	if err != nil {
		return "", err
	}
	line, _ := t.a.posIn(f, def)
	guard := fmt.Sprintf("SLATE_CLONE_%s_%d", cIdent(fn.QualifiedName()), overload)
	// After the copy, the main file's numbering resumes where it was cut.
	var resume string
	if f == t.a.File {
		endLine, _ := t.a.Lines.Position(def.End)
		resume = fmt.Sprintf("#line %d \"%s\"\n", endLine, t.lineFile)
	} else {
		incLine, _ := t.a.Lines.Position(t.a.Via[f].Span.End)
		resume = fmt.Sprintf("#line %d \"%s\"\n", incLine, t.lineFile)
	}
	file := t.lineFile
	if f != t.a.File {
		file = filepath.ToSlash(f.Name)
	}
	return fmt.Sprintf("\n#ifndef %s\n#define %s\n#line %d \"%s\"\n%s\n#endif\n%s", guard, guard, line, file, body, resume), nil
}

// cIdent turns a qualified name into a macro-safe identifier.
func cIdent(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// callEdits rewrites, in a body that sees the virtual index, calls to
// cloned helpers: h(args) -> h__slate(blockIdx, gridDim, args).
func (t *transformer) callEdits(fi *FuncInfo) []emit.Edit {
	return cloneCallEdits(fi, t.clones, "__slate", "blockIdx, gridDim")
}

// cloneCallEdits rewrites the calls in fi's body to helpers named in
// clones: h<T>(args) -> h<suffix><T>(lead, args). The persistent transform
// and the merged scheduler differ only in suffix and leading arguments.
func cloneCallEdits(fi *FuncInfo, clones map[string]bool, suffix, lead string) []emit.Edit {
	var edits []emit.Edit
	toks := tokensOf(fi.File, fi.Func.BodySpan)
	for _, c := range fi.Calls {
		if !clones[c.Name] || c.Macro != "" {
			continue // a call made by a macro's expansion has no text here (refused)
		}
		// The call's "(" after the name, past any template arguments.
		i := sort.Search(len(toks), func(i int) bool { return int(toks[i].Off) >= c.Span.Start })
		j := i + 1
		if j < len(toks) && toks[j].text == "<" {
			depth := 0
			for ; j < len(toks); j++ {
				switch toks[j].text {
				case "<":
					depth++
				case ">":
					depth--
				case ">>":
					depth -= 2
				}
				if depth <= 0 {
					j++
					break
				}
			}
		}
		if j >= len(toks) || toks[j].text != "(" {
			continue
		}
		args := lead
		if j+1 < len(toks) && toks[j+1].text != ")" {
			args += ", "
		}
		edits = append(edits,
			emit.Insert(c.Span.End, suffix, "call"),
			emit.Insert(int(toks[j].End), args, "call"))
	}
	return edits
}

// groupIndexEdits rewrites cta.group_index() / block_index() on a thread
// block to the virtual block index.
func (t *transformer) groupIndexEdits(fi *FuncInfo) []emit.Edit {
	var edits []emit.Edit
	if fi.Func.Def.Body == nil {
		return nil
	}
	parser.Walk(fi.Func.Def.Body, func(n parser.Node) bool {
		p, ok := n.(*parser.PostfixExpr)
		if !ok {
			return true
		}
		for i := 0; i+1 < len(p.Ops); i++ {
			m := p.Ops[i].Member
			if m != nil && (m.Name == "group_index" || m.Name == "block_index") && p.Ops[i+1].Call != nil && len(p.Ops[i+1].Call.Args) == 0 && i+2 == len(p.Ops) {
				edits = append(edits, emit.Replace(p.Span().Start, p.Span().End, "dim3(blockIdx.x, blockIdx.y, blockIdx.z)", "group_index"))
			}
		}
		return true
	})
	return append(edits, gridGroupEdits(t.a, fi)...)
}

// kernelView is the data of templates/kernel.cu.tmpl.
type kernelView struct {
	File, Name                               string
	HeadLine, BodyLine, NextLine             int
	TemplateHeader, TemplateArgs             string
	BodyParams, WorkerParams, LauncherParams string
	ArgNames, ArgList                        string
	WorkerSpecs, LaunchBounds                string
	RegCap                                   string // #defines of the worker's register cap, before it
	LauncherLinkage                          string // "static " unless ExternalLauncher
	StaticSpecs                              string // "static " for a static kernel: its static worker's
	Body                                     string
	Sync                                     string
	Peel                                     string // the static worker runs its first logical block outside its loop (peel.go)
	Iters                                    int
	Launcher                                 bool
}

func (t *transformer) kernel(k *KernelInfo, launches []*LaunchSite) error {
	a := t.a
	fn := k.Func
	f := a.File
	v := kernelView{File: t.lineFile, Name: fn.Name, Iters: t.opts.Iters, Launcher: true}
	v.HeadLine, _ = a.pos(fn.Def.Span())
	v.BodyLine, _ = a.pos(fn.BodySpan)
	v.NextLine, _ = a.Lines.Position(fn.Def.Span().End)
	if fn.IsTemplate() {
		v.TemplateHeader = tokenText(f, fn.TemplateSpan) + "\n"
		var args []string
		for _, tp := range fn.Template {
			if tp.Pack {
				args = append(args, tp.Name+"...")
			} else {
				args = append(args, tp.Name)
			}
		}
		v.TemplateArgs = "<" + strings.Join(args, ", ") + ">"
	}
	body, worker, launcher, names := kernelParams(f, fn)
	join := func(s []string) string {
		if len(s) == 0 {
			return ""
		}
		return ", " + strings.Join(s, ", ")
	}
	v.BodyParams, v.WorkerParams, v.LauncherParams = join(body), join(worker), join(launcher)
	v.ArgNames = join(names)
	v.ArgList = strings.Join(names, ", ")
	// An extern "C" kernel's body function and worker go in an extern "C"
	// block, as the kernel's would: extern __shared__ arrays declared in
	// the body then have the same linkage in the copy as in the kernel.
	wrapC := fn.ExternC && !t.inLinkageBlock(fn)
	if fn.Static {
		v.WorkerSpecs += "static "
		v.StaticSpecs = "static "
	}
	if fn.LaunchBounds != nil {
		v.LaunchBounds = tokenText(f, fn.LaunchBounds.Span()) + " "
	}
	if fn.MaxNReg != nil {
		v.LaunchBounds += tokenText(f, fn.MaxNReg.Span()) + " "
	}
	t.regCap(k, &v)
	v.LauncherLinkage = "static "
	if ExternalLauncher(a, k) {
		v.LauncherLinkage = ""
	}
	// A barrier between logical blocks (rule 5) unless provably unneeded:
	// no shared memory, no barriers, no warp-level operations, no calls
	// slatec cannot see.
	sync := k.UsesShared || k.HasBlockSync || len(k.AllSyncs) > 0 || k.WarpIntrinsicsAll || len(k.Unresolved) > 0
	v.Sync = fmt.Sprint(sync)
	v.Peel = fmt.Sprint(peelFirst(a, k))
	// The body: the original braces with the lowering and call rewrites.
	edits := append([]emit.Edit(nil), t.lowered[k]...)
	edits = append(edits, t.callEdits(k.FuncInfo)...)
	edits = append(edits, t.groupIndexEdits(k.FuncInfo)...)
	edits = append(edits, lambdaCaptureEdits(t.a, k.FuncInfo, t.clones, []string{BlockIdx, GridDim})...)
	bodyText, err := emit.ApplyRange(f.Src, fn.BodySpan.Start, fn.BodySpan.End, edits)
	if err != nil {
		return err
	}
	v.Body = bodyText
	text, err := templates.Render(templates.Kernel, v)
	if err != nil {
		return err
	}
	if wrapC {
		text = wrapExternC(text)
	}
	insertAt := fn.Def.Span().End
	var pre, post string
	if t.inLinkageBlock(fn) {
		// Templates and C++ helpers cannot have C linkage; the worker keeps
		// the kernel's.
		pre, post = "extern \"C++\" {\n", "}\n"
		_ = pre
		_ = post
	}
	t.edits = append(t.edits, emit.Insert(insertAt, "\n"+text, "kernel "+fn.Name))
	t.forwardDecls(k, launches, v)
	layout := &KernelLayout{Name: fn.Name, QualifiedName: fn.QualifiedName(), Worker: fn.Name + "__slate",
		Launcher: fn.Name + "__slate_launch", ExternC: fn.ExternC, BlockSync: sync, Lowered: k.NeedsLowering}
	for _, tp := range fn.Template {
		layout.Template = append(layout.Template, tp.Name)
	}
	for i, p := range fn.Params {
		name := p.Name
		if name == "" {
			name = fmt.Sprintf("slate_p%d", i)
		}
		size, align := ctypeLayout(p.Type)
		layout.Params = append(layout.Params, ParamLayout{Name: name, Type: p.Type, Size: size, Align: align})
	}
	t.layouts = append(t.layouts, layout)
	return nil
}

// kernelParams splits a kernel's parameters for the body (no
// __grid_constant__, no default arguments), the worker (as written, without
// defaults), the launcher (with defaults, since launch sites may omit them)
// and the call (names; unnamed parameters get one).
func kernelParams(f *parser.File, fn *parser.Func) (body, worker, launcher, names []string) {
	for i, p := range fn.Params {
		name := p.Name
		decl := paramDeclText(f, p)
		if name == "" {
			name = fmt.Sprintf("slate_p%d", i)
			decl += " " + name
		}
		pack := strings.Contains(p.Type, "...")
		forward := name
		if pack {
			forward += "..."
		}
		names = append(names, forward)
		worker = append(worker, decl)
		plain := stripGridConstant(decl)
		body = append(body, plain)
		if p.Default != "" {
			launcher = append(launcher, plain+" = "+p.Default)
		} else {
			launcher = append(launcher, plain)
		}
	}
	return body, worker, launcher, names
}

// inLinkageBlock reports whether fn sits in an extern "C" { } block.
func (t *transformer) inLinkageBlock(fn *parser.Func) bool {
	var walk func(items []parser.TopItem, in bool) bool
	walk = func(items []parser.TopItem, in bool) bool {
		for _, it := range items {
			switch it := it.(type) {
			case *parser.LinkageBlock:
				if walk(it.Items, it.Lang == `"C"`) {
					return true
				}
			case *parser.Namespace:
				if walk(it.Items, in) {
					return true
				}
			case *parser.FuncDef:
				if it == fn.Def {
					return in
				}
			}
		}
		return false
	}
	return walk(t.a.File.Items, false)
}

// forwardDecls declares the launcher early when a launch site comes before
// the kernel's definition (after a prototype of the kernel).
func (t *transformer) forwardDecls(k *KernelInfo, launches []*LaunchSite, v kernelView) {
	fn := k.Func
	first := -1
	def := fn.Def.Span().Start
	for _, ls := range launches {
		// A launch in another #if branch than the definition launches
		// another definition of the kernel (branches.go).
		if t.kernelFor(ls, []*KernelInfo{k}) == k && (first < 0 || ls.Span.Start < first) && !t.a.exclusive(ls.Span.Start, def) {
			first = ls.Span.Start
		}
	}
	if first < 0 || first > def {
		return
	}
	// Declare it after each prototype of the kernel before the first launch
	// that a build compiling this definition can see (one per #if branch).
	noted := false
	for _, it := range t.a.File.Items {
		o, ok := it.(*parser.Opaque)
		if !ok || o.Span().Start > first || t.a.exclusive(o.Span().Start, def) {
			continue
		}
		toks := tokensOf(t.a.File, o.Span())
		isProto := false
		for i, tk := range toks {
			if tk.text == fn.Name && i+1 < len(toks) && toks[i+1].text == "(" {
				isProto = true
			}
		}
		if !isProto {
			continue
		}
		line, _ := t.a.Lines.Position(o.Span().End)
		decl := fmt.Sprintf("\n#ifndef __CUDACC_RTC__\n%s%svoid %s__slate_launch(dim3 slate_grid, dim3 slate_block, size_t slate_shmem, cudaStream_t slate_stream%s);\n#endif\n#line %d \"%s\"\n",
			v.TemplateHeader, v.LauncherLinkage, fn.Name, v.LauncherParams, line, t.lineFile)
		key := fmt.Sprint(o.Span().End, decl)
		if t.forwarded[key] {
			noted = true // another definition of the kernel declared it here already
			continue
		}
		if t.forwarded == nil {
			t.forwarded = map[string]bool{}
		}
		t.forwarded[key] = true
		t.edits = append(t.edits, emit.Insert(o.Span().End, decl, "forward "+fn.Name))
		if !noted && !t.forwarded[fmt.Sprint("note ", first)] {
			t.forwarded[fmt.Sprint("note ", first)] = true
			t.diags = append(t.diags, t.a.at(first, diag.Note, "launch of %s before its definition: the launcher is declared after its prototype", fn.Name))
		}
		noted = true
	}
}

// rewriteLaunch turns k<T><<<g, b, s, st>>>(args) into
// k__slate_launch<T>(g, b, s, st, args).
func (t *transformer) rewriteLaunch(ls *LaunchSite) {
	f := t.a.File
	cfg := append([]string(nil), ls.ConfigText...)
	for len(cfg) < 4 {
		cfg = append(cfg, "0")
	}
	var b strings.Builder
	b.WriteString(ls.Kernel + "__slate_launch")
	if ls.TemplateText != "" {
		b.WriteString(ls.TemplateText)
	}
	b.WriteString("(")
	for i, c := range cfg[:4] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c)
	}
	if ls.ArgsSpan.Len() > 2 {
		b.WriteString(", ")
		b.WriteString(f.Text(parser.Span{Start: ls.ArgsSpan.Start + 1, End: ls.ArgsSpan.End - 1}))
	}
	b.WriteString(")")
	// Keep the line count of the launch, so #line stays exact.
	text := b.String()
	if n := strings.Count(f.Text(ls.Span), "\n") - strings.Count(text, "\n"); n > 0 {
		text += strings.Repeat("\n", n)
	}
	t.edits = append(t.edits, emit.Replace(ls.Span.Start, ls.Span.End, text, "launch"))
}

// stripGridConstant removes __grid_constant__ (in either spelling), which is
// valid only on a kernel's own parameters.
func stripGridConstant(decl string) string {
	for _, q := range []string{"__attribute__((grid_constant))", "__grid_constant__"} {
		decl = strings.ReplaceAll(decl, q, "")
	}
	return strings.Join(strings.Fields(decl), " ")
}

// lambdaCaptureEdits makes lambdas with an explicit capture list capture
// the builtins that a rewritten body turned into parameters (params, in the
// order they are added), which a lambda without a default capture cannot
// see. A lambda needs a builtin it names, one an index macro expands to, or
// all of params when it calls a clone (the clone takes them as arguments).
func lambdaCaptureEdits(a *Analysis, fi *FuncInfo, clones map[string]bool, params []string) []emit.Edit {
	if fi.Func.Def.Body == nil {
		return nil
	}
	isParam := map[string]bool{}
	for _, b := range params {
		isParam[b] = true
	}
	f := fi.File
	var edits []emit.Edit
	parser.Walk(fi.Func.Def.Body, func(n parser.Node) bool {
		lam, ok := n.(*parser.Lambda)
		if !ok || lam.Captures == nil || lam.Body == nil {
			return true
		}
		need := map[string]bool{}
		for _, tk := range tokensOf(f, lam.Body.Span()) {
			if tk.Kind != parser.Ident {
				continue
			}
			if isParam[tk.text] {
				need[tk.text] = true
			}
			for _, b := range a.IndexMacros[tk.text] {
				if isParam[b] {
					need[b] = true
				}
			}
			if clones[tk.text] {
				for _, b := range params {
					need[b] = true
				}
			}
		}
		caps := tokensOf(f, lam.Captures.Span())
		if len(caps) < 2 {
			return true
		}
		inner := caps[1 : len(caps)-1]
		if len(need) == 0 || (len(inner) > 0 && (inner[0].text == "=" || inner[0].text == "&")) {
			return true
		}
		for _, tk := range inner {
			delete(need, tk.text)
		}
		var add []string
		for _, b := range params {
			if need[b] {
				add = append(add, b)
			}
		}
		if len(add) == 0 {
			return true
		}
		text := strings.Join(add, ", ")
		if len(inner) > 0 {
			text = ", " + text
		}
		edits = append(edits, emit.Insert(lam.Captures.Span().End-1, text, "capture"))
		return true
	})
	return edits
}

// tokenText renders a span's significant tokens on one line (comments
// and line breaks dropped), spaced the way people write C++.
func tokenText(f *parser.File, s parser.Span) string {
	var b strings.Builder
	var prev string
	for _, tk := range f.SignificantTokens(s) {
		v := f.TokenText(tk)
		if b.Len() > 0 && needSpace(prev, v) {
			b.WriteByte(' ')
		}
		b.WriteString(v)
		prev = v
	}
	return b.String()
}

func isWordish(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '"' || c == '\'' || c >= 0x80
}

func needSpace(prev, next string) bool {
	switch {
	case isWordish(prev) && isWordish(next):
		return true
	case prev == "," || prev == "=" || next == "=":
		return true
	case (prev == "*" || prev == "&" || prev == "&&") && isWordish(next):
		return true
	case prev == ">" && isWordish(next):
		return true
	case prev == ")" && isWordish(next):
		return true
	}
	return false
}

// ctypeLayout gives size and alignment of the C types slatec knows.
func ctypeLayout(typ string) (int, int) {
	t := strings.TrimSpace(typ)
	for _, q := range []string{"const ", "volatile ", "__grid_constant__ ", "struct "} {
		t = strings.ReplaceAll(t, q, "")
	}
	t = strings.TrimSpace(strings.ReplaceAll(t, " const", ""))
	if strings.HasSuffix(t, "*") || strings.Contains(t, "*") {
		return 8, 8
	}
	t = strings.Join(strings.Fields(t), " ")
	if l, ok := knownLayouts[t]; ok {
		return l[0], l[1]
	}
	return 0, 0
}

var knownLayouts = map[string][2]int{
	"char": {1, 1}, "signed char": {1, 1}, "unsigned char": {1, 1}, "bool": {1, 1}, "int8_t": {1, 1}, "uint8_t": {1, 1},
	"short": {2, 2}, "unsigned short": {2, 2}, "int16_t": {2, 2}, "uint16_t": {2, 2}, "half": {2, 2}, "__half": {2, 2}, "__nv_bfloat16": {2, 2},
	"int": {4, 4}, "unsigned": {4, 4}, "unsigned int": {4, 4}, "signed": {4, 4}, "int32_t": {4, 4}, "uint32_t": {4, 4}, "uint": {4, 4},
	"float": {4, 4}, "half2": {4, 4}, "__half2": {4, 4},
	"long": {8, 8}, "unsigned long": {8, 8}, "long long": {8, 8}, "unsigned long long": {8, 8}, "long long int": {8, 8},
	"unsigned long long int": {8, 8}, "int64_t": {8, 8}, "uint64_t": {8, 8}, "size_t": {8, 8}, "ptrdiff_t": {8, 8},
	"double": {8, 8}, "cudaTextureObject_t": {8, 8}, "cudaSurfaceObject_t": {8, 8},
	"float2": {8, 8}, "int2": {8, 8}, "uint2": {8, 8}, "float3": {12, 4}, "int3": {12, 4}, "uint3": {12, 4}, "dim3": {12, 4},
	"float4": {16, 16}, "int4": {16, 16}, "uint4": {16, 16}, "double2": {16, 16}, "longlong2": {16, 16},
}
