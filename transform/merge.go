package transform

// The merged (Liang) scheduler (DESIGN.md, "The merged (Liang) scheduler";
// docs/MERGE.md for the generated ABI).
//
// Merge takes kernels from one or more analysed files and writes ONE
// translation unit: every input file's text (its host-only functions fenced
// off with #if 0, so that two main()s do not clash), each selected kernel
// followed by a body function that sees its own virtual blockIdx, gridDim,
// threadIdx and blockDim, and at the end a merged kernel that runs, in each
// merged block, one logical block of one of the kernels, plus a host launcher.
//
// Which kernel a merged block runs comes from mapKernel/mapBlk, the
// leaky-bucket interleaving of plan.LeakyBucket, which the launcher builds
// with the identical C++ port in templates/bucket.h (mode interleaved: one
// merged block per logical block; persistent: workers take merged block ids
// from a queue). Mode smrange needs no maps: each worker runs only the kernel
// whose SM range holds its SM, taking that kernel's logical blocks from the
// kernel's own queue.
//
// A merged block has as many threads as the largest block of the kernels.
// The threads beyond a kernel's own block size are idle: the body starts
// with them inactive (transform.Lower with StartInactive), so they reach
// every barrier but do no work, and they see threadIdx (0,0,0), so the
// unguarded index arithmetic they still run stays in bounds.

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

// MergeMode selects how the merged kernel's blocks are scheduled.
type MergeMode string

const (
	// MergeInterleaved launches one merged block per logical block, in
	// leaky-bucket order (Liang et al.'s scheduler kernel).
	MergeInterleaved MergeMode = "interleaved"
	// MergePersistent launches occupancy × SMs workers that take merged
	// block ids, in leaky-bucket order, from one queue.
	MergePersistent MergeMode = "persistent"
	// MergeSMRange launches workers that each run the kernel whose SM range
	// holds their SM, from that kernel's own queue.
	MergeSMRange MergeMode = "smrange"
	// MergeSplit launches one worker population per kernel, each its own
	// __global__ function (its own registers, block size and shared
	// memory) running the smrange loop on the kernel's SM range, all
	// concurrently on streams forked from the caller's.
	MergeSplit MergeMode = "split"
)

// MergeModes lists the modes in the order the CLI documents them.
var MergeModes = []MergeMode{MergeInterleaved, MergePersistent, MergeSMRange, MergeSplit}

// ParseMergeMode parses a mode name.
func ParseMergeMode(s string) (MergeMode, error) {
	for _, m := range MergeModes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown merge mode %q (modes: interleaved, persistent, smrange, split)", s)
}

// modeConst is the mode's SLATE_MERGED_* constant in templates/merged_prelude.cu.
func (m MergeMode) modeConst() string {
	switch m {
	case MergePersistent:
		return "SLATE_MERGED_PERSISTENT"
	case MergeSMRange, MergeSplit:
		return "SLATE_MERGED_SMRANGE"
	}
	return "SLATE_MERGED_INTERLEAVED"
}

// MaxMergeKernels is the most kernels one merged kernel holds; it is
// SLATE_MERGED_MAX_KERNELS of the control block (templates/merged_prelude.cu).
const MaxMergeKernels = 16

// MergeInput is one kernel to merge.
type MergeInput struct {
	// Analysis is the kernel's file, from Load. Kernels of the same file
	// must share one Analysis (the file's text goes into the output once).
	Analysis *Analysis
	// Kernel is the kernel's name or namespace-qualified name.
	Kernel string
	// TemplateArgs are the explicit template arguments of a template
	// kernel, without the angle brackets ("float", "256"); "" otherwise.
	TemplateArgs string
}

// KernelRef is a parsed command-line kernel reference FILE:KERNEL[<ARGS>].
type KernelRef struct {
	File, Kernel, TemplateArgs string
}

// String renders the reference as written on the command line.
func (r KernelRef) String() string {
	if r.TemplateArgs != "" {
		return r.File + ":" + r.Kernel + "<" + r.TemplateArgs + ">"
	}
	return r.File + ":" + r.Kernel
}

var kernelNameRe = regexp.MustCompile(`^(::)?[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$`)

// ParseKernelRef parses FILE:KERNEL or FILE:KERNEL<ARGS>, where KERNEL may
// be qualified (a.cu:ns::scale<float>). The file ends at the first colon
// after which a kernel name follows, so a file name may hold colons.
func ParseKernelRef(s string) (KernelRef, error) {
	for i := 1; i < len(s)-1; i++ {
		if s[i] != ':' || s[i-1] == ':' {
			continue
		}
		r := KernelRef{File: s[:i], Kernel: s[i+1:]}
		if j := strings.IndexByte(r.Kernel, '<'); j >= 0 {
			if !strings.HasSuffix(r.Kernel, ">") {
				return KernelRef{}, fmt.Errorf("%q: template arguments must end with '>'", s)
			}
			r.TemplateArgs = strings.TrimSpace(r.Kernel[j+1 : len(r.Kernel)-1])
			r.Kernel = r.Kernel[:j]
			if r.TemplateArgs == "" {
				return KernelRef{}, fmt.Errorf("%q: empty template argument list", s)
			}
		}
		if kernelNameRe.MatchString(r.Kernel) {
			return r, nil
		}
	}
	return KernelRef{}, fmt.Errorf("%q: want FILE:KERNEL or FILE:KERNEL<ARGS>", s)
}

// MergeOptions configure Merge.
type MergeOptions struct {
	Mode MergeMode
	// Name names the merged kernel slate_merged_<Name> (default: the
	// kernels' tags joined by "_").
	Name string
	// Alloc gives the SMs of each input, in input order; nil means an equal
	// share of the device, decided at launch time. The launcher takes these
	// as its default; _launch_alloc takes others at run time.
	Alloc []int
	// NoShareShared keeps each body's static __shared__ variables separate
	// instead of overlaying them in one union (the merged kernel then needs
	// their sum instead of their maximum).
	NoShareShared bool
	// MaxRegs, when > 0, caps the merged kernel's registers per thread
	// with __maxnreg__ (modes interleaved, persistent, smrange): the
	// occupancy model's fix for a merge whose largest part sets a
	// register count that starves the others (docs/MERGE.md).
	MaxRegs int
	// PopulationMaxRegs, in mode split, caps each population's registers
	// per thread with __maxnreg__ (one entry per input; 0: no cap): the
	// worker loop around a body costs registers the kernel alone does not
	// need, which can cost it blocks per SM.
	PopulationMaxRegs []int
	// Version and Command go into the output's header.
	Version, Command string
	// OutputName is the file name that #line directives of the generated
	// tail name (default "slatec-merged.cu").
	OutputName string
}

// MergeResult is the output of Merge.
type MergeResult struct {
	// Output is the merged translation unit; nil when Diags has errors.
	Output []byte
	// Kernel is the merged kernel's name; Launcher and LaunchAlloc its
	// host launchers.
	Kernel, Launcher, LaunchAlloc string
	// Kernels describe the merged kernels, in input order.
	Kernels []*MergedKernel
	// Sync is true when workers need a barrier between logical blocks.
	Sync bool
	// Split is true in mode split: there is no single merged kernel, but
	// one worker kernel per input, Kernel + "_k<i>".
	Split bool
	// Diags holds errors (when Merge refused) and warnings.
	Diags diag.List
}

// MergedKernel describes one kernel inside a merged kernel.
type MergedKernel struct {
	Name          string `json:"name"`
	QualifiedName string `json:"qualified_name"`
	TemplateArgs  string `json:"template_args,omitempty"`
	File          string `json:"file"`
	// Tag is the identifier used for the kernel in generated names.
	Tag string `json:"tag"`
	// Body is the (qualified) name of the body function.
	Body   string        `json:"body"`
	Params []MergedParam `json:"params"`
	// SharedInUnion is true when the kernel's static __shared__ variables
	// live in the merged kernel's shared-memory union.
	SharedInUnion bool `json:"shared_in_union"`
	// SharedKept lists __shared__ variables left as they were (declared
	// with names local to the body, or the union is disabled).
	SharedKept []string `json:"shared_kept,omitempty"`
	// LaunchBounds is the kernel's __launch_bounds__ maximum, 0 if none.
	LaunchBounds int `json:"launch_bounds,omitempty"`
	// Alloc is the default SM allocation (0: equal share at launch).
	Alloc int `json:"alloc"`
}

// MergedParam is one parameter of the merged kernel.
type MergedParam struct {
	// Name is the parameter's name in the merged kernel and the launcher.
	Name string `json:"name"`
	// Original is its name in the kernel ("" if unnamed).
	Original string `json:"original,omitempty"`
	// Type is the parameter's type as code after the merged kernel can
	// spell it (through an alias for template and namespaced kernels).
	Type string `json:"type"`
	// Decl is the declaration in the merged kernel's parameter list.
	Decl string `json:"decl"`
}

// mergeKernel is the working state of one input.
type mergeKernel struct {
	in    MergeInput
	a     *Analysis
	k     *KernelInfo
	tag   string
	lower []emit.Edit
	// alias is true when the merged kernel spells this kernel's parameter
	// types through aliases declared next to the kernel (templates, and
	// kernels in namespaces whose types the global scope may not see).
	alias  bool
	shared *sharedPlan
	out    *MergedKernel
	// bodyOwner is the first input of the same kernel function: a
	// template kernel merged with several argument lists has one body.
	bodyOwner *mergeKernel
}

// mergeFile is one input file of the merge.
type mergeFile struct {
	a       *Analysis
	kernels []*mergeKernel
	// clones are the helper names whose merged copies this file needs.
	clones map[string]bool
}

// Merge builds the merged translation unit. Problems with the request
// (an unknown kernel, a bad allocation) are returned as errors; kernels
// that cannot be merged safely are refused with diagnostics in
// MergeResult.Diags, and Output is then nil.
func Merge(inputs []MergeInput, opts MergeOptions) (*MergeResult, error) {
	m := &merger{opts: opts}
	if err := m.validate(inputs); err != nil {
		return nil, err
	}
	res := &MergeResult{}
	for _, f := range m.files {
		res.Diags = append(res.Diags, f.a.Diags...)
	}
	for _, k := range m.kernels {
		res.Diags = append(res.Diags, m.check(k)...)
	}
	res.Diags = append(res.Diags, m.duplicates()...)
	if res.Diags.HasErrors() {
		res.Diags.Sort()
		return res, nil
	}
	m.planNames()
	out, err := m.build()
	if err != nil {
		return nil, err
	}
	res.Diags = append(res.Diags, m.diags...)
	if res.Diags.HasErrors() {
		res.Diags.Sort()
		return res, nil
	}
	res.Output = out
	res.Kernel = m.name
	res.Launcher = m.name + "_launch"
	res.LaunchAlloc = m.name + "_launch_alloc"
	res.Sync = m.sync
	res.Split = m.opts.Mode == MergeSplit
	for _, k := range m.kernels {
		res.Kernels = append(res.Kernels, k.out)
	}
	res.Diags.Sort()
	return res, nil
}

type merger struct {
	opts    MergeOptions
	kernels []*mergeKernel
	files   []*mergeFile
	name    string
	sync    bool
	diags   []diag.Diagnostic
	// emittedClones records helper clones already written, by file and
	// offset, so that a header included by two inputs gets one copy.
	emittedClones map[string]bool
}

// validate checks the options and resolves the inputs to kernels.
func (m *merger) validate(inputs []MergeInput) error {
	o := &m.opts
	if o.Mode == "" {
		o.Mode = MergeInterleaved
	}
	if _, err := ParseMergeMode(string(o.Mode)); err != nil {
		return err
	}
	if len(inputs) == 0 {
		return fmt.Errorf("merge: no kernels given")
	}
	if len(inputs) > MaxMergeKernels {
		return fmt.Errorf("merge: %d kernels; a merged kernel holds at most %d", len(inputs), MaxMergeKernels)
	}
	if o.Alloc != nil {
		if len(o.Alloc) != len(inputs) {
			return fmt.Errorf("merge: %d allocations for %d kernels", len(o.Alloc), len(inputs))
		}
		for i, a := range o.Alloc {
			if a < 1 || a > 4096 {
				return fmt.Errorf("merge: kernel %d: allocation %d SMs is outside 1..4096", i+1, a)
			}
		}
	}
	if o.MaxRegs != 0 && (o.MaxRegs < 16 || o.MaxRegs > 255) {
		return fmt.Errorf("merge: a register cap of %d is outside 16..255", o.MaxRegs)
	}
	if o.MaxRegs != 0 && o.Mode == MergeSplit {
		return fmt.Errorf("merge: mode split compiles each kernel with its own registers: give a cap per population")
	}
	if o.PopulationMaxRegs != nil {
		if o.Mode != MergeSplit {
			return fmt.Errorf("merge: register caps per population need mode split")
		}
		if len(o.PopulationMaxRegs) != len(inputs) {
			return fmt.Errorf("merge: %d register caps for %d kernels", len(o.PopulationMaxRegs), len(inputs))
		}
		for i, r := range o.PopulationMaxRegs {
			if r != 0 && (r < 16 || r > 255) {
				return fmt.Errorf("merge: kernel %d: a register cap of %d is outside 16..255", i+1, r)
			}
		}
	}
	if o.Name != "" && !identRe.MatchString(o.Name) {
		return fmt.Errorf("merge: name %q is not a C identifier", o.Name)
	}
	if o.OutputName == "" {
		o.OutputName = "slatec-merged.cu"
	}
	byName := map[string]*Analysis{}
	for i, in := range inputs {
		if in.Analysis == nil {
			return fmt.Errorf("merge: input %d has no analysis", i+1)
		}
		a := in.Analysis
		if prev, ok := byName[a.File.Name]; ok && prev != a {
			return fmt.Errorf("merge: %s was loaded twice: give kernels of one file the same Analysis", a.File.Name)
		}
		byName[a.File.Name] = a
		// A qualified name must match exactly; a plain name may name a
		// kernel in a namespace, when only one kernel has it.
		var k *KernelInfo
		var have, plain []string
		want := strings.TrimPrefix(in.Kernel, "::")
		var byPlain *KernelInfo
		for _, c := range a.Kernels {
			have = append(have, c.Func.QualifiedName())
			if c.Func.QualifiedName() == want || displayName(c.Func) == want {
				k = c
				break
			}
			if c.Func.Name == want {
				plain = append(plain, c.Func.QualifiedName())
				byPlain = c
			}
		}
		if k == nil && len(plain) > 1 {
			return fmt.Errorf("%s: %q names %d kernels (%s): qualify it", a.File.Name, in.Kernel, len(plain), strings.Join(plain, ", "))
		}
		if k == nil {
			k = byPlain
		}
		if k == nil {
			return fmt.Errorf("%s: no kernel named %q (kernels: %s)", a.File.Name, in.Kernel, orNoneList(have))
		}
		if k.Func.IsTemplate() && in.TemplateArgs == "" {
			return fmt.Errorf("%s: kernel %s is a template: give its arguments, e.g. %s:%s<%s>",
				a.File.Name, k.Func.Name, a.File.Name, in.Kernel, templateParamHint(k.Func))
		}
		if !k.Func.IsTemplate() && in.TemplateArgs != "" {
			return fmt.Errorf("%s: kernel %s is not a template, but template arguments <%s> were given", a.File.Name, k.Func.Name, in.TemplateArgs)
		}
		mk := &mergeKernel{in: in, a: a, k: k}
		mk.bodyOwner = mk
		for _, o := range m.kernels {
			if o.k == k {
				mk.bodyOwner = o
				break
			}
		}
		m.kernels = append(m.kernels, mk)
		var f *mergeFile
		for _, g := range m.files {
			if g.a == a {
				f = g
			}
		}
		if f == nil {
			f = &mergeFile{a: a, clones: map[string]bool{}}
			m.files = append(m.files, f)
		}
		f.kernels = append(f.kernels, mk)
	}
	return nil
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// displayName is the qualified name without anonymous namespaces, as C++
// code at global scope spells it.
func displayName(fn *parser.Func) string {
	var segs []string
	for _, ns := range fn.Namespace {
		if ns != "(anonymous)" {
			segs = append(segs, ns)
		}
	}
	return strings.Join(append(segs, fn.Name), "::")
}

// scopePrefix is displayName's namespace part with a trailing "::", or "".
func scopePrefix(fn *parser.Func) string {
	d := displayName(fn)
	return d[:len(d)-len(fn.Name)]
}

func templateParamHint(fn *parser.Func) string {
	var hints []string
	for _, tp := range fn.Template {
		if tp.IsType {
			hints = append(hints, "float")
		} else {
			hints = append(hints, "256")
		}
	}
	return strings.Join(hints, ", ")
}

// errorf builds an error about kernel k at offset off of its file.
func (k *mergeKernel) errorf(off int, format string, args ...any) diag.Diagnostic {
	d := k.a.at(off, diag.Error, format, args...)
	if !strings.HasPrefix(d.Message, "kernel ") {
		d.Message = "kernel " + k.k.Func.Name + ": " + d.Message
	}
	return d
}

// check returns the reasons a kernel cannot be merged, and computes its
// lowering.
func (m *merger) check(mk *mergeKernel) []diag.Diagnostic {
	a, k := mk.a, mk.k
	fn := k.Func
	var ds []diag.Diagnostic
	prefix := func(d diag.Diagnostic) diag.Diagnostic {
		if !strings.HasPrefix(d.Message, "kernel ") {
			d.Message = "kernel " + fn.Name + ": " + d.Message
		}
		return d
	}
	for _, r := range k.Refusals {
		ds = append(ds, prefix(r))
	}
	// The analysis folds in only the file's own helpers' refusals.
	for _, h := range mk.helpers() {
		if h.File != a.File {
			for _, r := range h.Refusal {
				r.Notes = append(r.Notes, a.at(fn.NameSpan.Start, diag.Note, "reached from kernel %s through %s", fn.Name, h.Func.Name))
				ds = append(ds, prefix(r))
			}
		}
	}
	for _, fi := range append([]*FuncInfo{k.FuncInfo}, mk.helpers()...) {
		for _, tk := range tokensOf(fi.File, fi.Func.Def.Span()) {
			if tk.Kind == parser.Ident && (strings.HasPrefix(tk.text, "slate_") || strings.Contains(tk.text, "__slate") ||
				strings.Contains(tk.text, "__merged")) {
				ds = append(ds, prefix(a.atIn(fi.File, int(tk.Off), diag.Error,
					"the identifier %s uses a prefix slatec reserves (slate_, __slate, __merged)", tk.text)))
				break
			}
			// The merged block's thread index is virtual: PTX that reads the
			// physical one would see the merged block's.
			if tk.Kind == parser.String && (strings.Contains(tk.text, "%tid") || strings.Contains(tk.text, "%ntid")) {
				ds = append(ds, prefix(a.atIn(fi.File, int(tk.Off), diag.Error,
					"inline asm reads %%tid or %%ntid, the physical thread index, which a merged block changes")))
			}
		}
	}
	for i, p := range fn.Params {
		if p.Variadic {
			ds = append(ds, prefix(a.at(p.Span.Start, diag.Error, "C variadic parameters are not supported")))
		}
		if p.Name == "" && strings.Contains(p.Type, "(") {
			ds = append(ds, prefix(a.at(p.Span.Start, diag.Error, "unnamed function-pointer parameter %d: name it", i+1)))
		}
		if strings.Contains(p.Type, "...") {
			ds = append(ds, prefix(a.at(p.Span.Start, diag.Error, "parameter packs cannot be merged: the merged kernel needs each parameter's type")))
		}
	}
	for _, tp := range fn.Template {
		if tp.Name == "" {
			ds = append(ds, prefix(a.at(fn.TemplateSpan.Start, diag.Error, "unnamed template parameter %q: name it", tp.Text)))
		}
		if tp.Pack {
			ds = append(ds, prefix(a.at(fn.TemplateSpan.Start, diag.Error, "variadic templates cannot be merged")))
		}
	}
	ds = append(ds, m.opaqueThreadReaders(mk)...)
	if len(ds) > 0 {
		return ds
	}
	// Idle threads (beyond this kernel's block size) run the body inactive
	// from the start; they see threadIdx (0,0,0).
	edits, errs := a.Lower(k, LowerOptions{Active: "slate_tid < slate_nthreads", StartInactive: true})
	for _, e := range errs {
		d := prefix(e)
		d.Notes = append(d.Notes, a.at(fn.NameSpan.Start, diag.Note,
			"in a merged block the threads beyond %s's block size stay idle and must reach its barriers without doing its work", fn.Name))
		ds = append(ds, d)
	}
	mk.lower = edits // Lower keeps #pragma lines with their loops
	return ds
}

// opaqueThreadReaders refuses kernels that use classes (kept opaque by the
// parser) whose code reads threadIdx or blockDim: slatec cannot give them
// the virtual values.
func (m *merger) opaqueThreadReaders(mk *mergeKernel) []diag.Diagnostic {
	a, k := mk.a, mk.k
	readers := map[string]parser.Span{}
	readerFile := map[string]*parser.File{}
	for _, f := range append([]*parser.File{a.File}, a.Deps...) {
		var walk func(items []parser.TopItem)
		walk = func(items []parser.TopItem) {
			for _, it := range items {
				switch it := it.(type) {
				case *parser.Opaque:
					for name, sp := range classThreadReads(a, tokensOf(f, it.Span())) {
						if _, ok := readers[name]; !ok {
							readers[name] = sp
							readerFile[name] = f
						}
					}
				case *parser.Namespace:
					walk(it.Items)
				case *parser.LinkageBlock:
					walk(it.Items)
				}
			}
		}
		walk(f.Items)
	}
	if len(readers) == 0 {
		return nil
	}
	var ds []diag.Diagnostic
	seen := map[string]bool{}
	for _, fi := range append([]*FuncInfo{k.FuncInfo}, mk.helpers()...) {
		for _, t := range tokensOf(fi.File, fi.Func.BodySpan) {
			sp, ok := readers[t.text]
			if t.Kind != parser.Ident || !ok || seen[t.text] || a.byName[t.text] != nil {
				continue
			}
			seen[t.text] = true
			d := a.atIn(fi.File, int(t.Off), diag.Error,
				"kernel %s: uses %s, which reads threadIdx or blockDim inside a class slatec cannot rewrite; in a merged block it would read the merged block's",
				k.Func.Name, t.text)
			d.Notes = append(d.Notes, a.atIn(readerFile[t.text], sp.Start, diag.Note, "the read is here"))
			ds = append(ds, d)
		}
	}
	return ds
}

// classThreadReads finds `struct|class|union NAME ... { ... }` in an opaque
// token run whose braces read threadIdx or blockDim (directly or through a
// macro), with the first such read.
func classThreadReads(a *Analysis, toks []tok) map[string]parser.Span {
	out := map[string]parser.Span{}
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		if (t.text != "struct" && t.text != "class" && t.text != "union") || toks[i+1].Kind != parser.Ident {
			continue
		}
		if i > 0 && (toks[i-1].text == "<" || toks[i-1].text == ",") {
			continue // a template parameter
		}
		name := toks[i+1].text
		j := i + 2
		for j < len(toks) && toks[j].text != "{" && toks[j].text != ";" {
			j++
		}
		if j >= len(toks) || toks[j].text != "{" {
			continue
		}
		depth := 0
		for ; j < len(toks); j++ {
			switch toks[j].text {
			case "{":
				depth++
			case "}":
				depth--
			}
			if depth == 0 {
				break
			}
			x := toks[j]
			if x.Kind != parser.Ident || (j > 0 && (toks[j-1].text == "." || toks[j-1].text == "->")) {
				continue
			}
			reads := x.text == ThreadIdx || x.text == BlockDim
			for _, b := range a.IndexMacros[x.text] {
				reads = reads || b == ThreadIdx || b == BlockDim
			}
			if _, done := out[name]; reads && !done {
				out[name] = span(x)
			}
		}
	}
	return out
}

// helpers returns the device functions reachable from the kernel in its
// file and in the headers it includes (KernelInfo.Helpers holds only the
// file's own), headers first in include order, each in source order.
func (k *mergeKernel) helpers() []*FuncInfo {
	a := k.a
	seen := map[*parser.Func]bool{k.k.Func: true}
	stack := []*parser.Func{k.k.Func}
	var out []*FuncInfo
	for len(stack) > 0 {
		fn := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		fi := a.Funcs[fn]
		if fi == nil {
			continue
		}
		if fn != k.k.Func {
			out = append(out, fi)
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
	order := map[*parser.File]int{a.File: len(a.Deps)}
	for i, d := range a.Deps {
		order[d] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		if oi, oj := order[out[i].File], order[out[j].File]; oi != oj {
			return oi < oj
		}
		return out[i].Func.Def.Span().Start < out[j].Func.Def.Span().Start
	})
	return out
}

// duplicates refuses kernels that would be defined twice in the output.
func (m *merger) duplicates() []diag.Diagnostic {
	var ds []diag.Diagnostic
	seen := map[string]*mergeKernel{}
	for i, k := range m.kernels {
		q := displayName(k.k.Func)
		// The same name defined in two input files clashes in one
		// translation unit: report it at the later input.
		clash := false
		for _, o := range m.kernels[:i] {
			if o.a == k.a || displayName(o.k.Func) != q {
				continue
			}
			d := k.errorf(k.k.Func.NameSpan.Start, "kernel %s is defined in both %s and %s: one translation unit cannot hold both",
				q, o.a.File.Name, k.a.File.Name)
			d.Notes = append(d.Notes, o.a.at(o.k.Func.NameSpan.Start, diag.Note, "the other definition"))
			ds = append(ds, d)
			clash = true
			break
		}
		if clash {
			continue
		}
		key := q + "<" + normalizeArgs(k.in.TemplateArgs) + ">"
		if f, ok := seen[key]; ok {
			d := k.errorf(k.k.Func.NameSpan.Start, "kernel %s is merged twice", q+argSuffix(k.in.TemplateArgs))
			d.Notes = append(d.Notes, f.a.at(f.k.Func.NameSpan.Start, diag.Note, "first given here"))
			ds = append(ds, d)
			continue
		}
		seen[key] = k
	}
	return ds
}

func normalizeArgs(s string) string { return strings.Join(strings.Fields(s), "") }

func argSuffix(args string) string {
	if args == "" {
		return ""
	}
	return "<" + args + ">"
}

var nonIdent = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// planNames picks each kernel's tag and the merged kernel's name.
func (m *merger) planNames() {
	used := map[string]bool{}
	var tags []string
	for _, k := range m.kernels {
		base := k.k.Func.Name
		if k.in.TemplateArgs != "" {
			base += "_" + k.in.TemplateArgs
		}
		tag := strings.Trim(nonIdent.ReplaceAllString(base, "_"), "_")
		t := tag
		for n := 2; used[t]; n++ {
			t = fmt.Sprintf("%s_%d", tag, n)
		}
		used[t] = true
		k.tag = t
		tags = append(tags, t)
	}
	name := m.opts.Name
	if name == "" {
		name = strings.Join(tags, "_")
	}
	m.name = "slate_merged_" + name
}

// sortedNames returns a set's keys in order.
func sortedNames(s map[string]bool) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// lineFile is the name #line directives give a file.
func lineFile(f *parser.File) string { return filepath.ToSlash(f.Name) }

// build assembles the output.
func (m *merger) build() ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by slatec %s; DO NOT EDIT.\n// slatec %s\n", m.opts.Version, m.opts.Command)
	// The preludes define support for every mode; what this mode does not
	// use would draw nvcc's "declared but never referenced" (177).
	b.WriteString("#pragma nv_diag_suppress 177\n")
	b.WriteString(templates.Prelude())
	b.WriteString(templates.MergedPrelude())
	b.WriteString("#pragma nv_diag_default 177\n")
	m.emittedClones = map[string]bool{}
	m.planClones()
	for _, k := range m.kernels {
		k.shared = m.planShared(k)
		k.alias = k.k.Func.IsTemplate() || scopePrefix(k.k.Func) != ""
		if k.k.UsesShared || k.k.HasBlockSync || len(k.k.AllSyncs) > 0 || len(k.k.Unresolved) > 0 {
			m.sync = true
		}
	}
	m.planParams()
	for _, f := range m.files {
		text, err := m.fileText(f)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "#line 1 \"%s\"\n", lineFile(f.a.File))
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	tail, err := m.tail(strings.Count(b.String(), "\n") + 2)
	if err != nil {
		return nil, err
	}
	b.WriteString(tail)
	return []byte(b.String()), nil
}

// fileText is one input file with its host code fenced off and the body
// functions and helper clones inserted.
func (m *merger) fileText(f *mergeFile) (string, error) {
	a := f.a
	var edits []emit.Edit
	edits = append(edits, m.fenceHost(a)...)
	// Clones of helpers defined in this file go right after each helper;
	// those of helpers in its headers at global scope, before the first
	// top-level item that receives inserted code.
	lf := lineFile(a.File)
	var headerClones strings.Builder
	first := -1
	for _, fi := range m.cloneTargets(f) {
		key := lineFile(fi.File) + "@" + fmt.Sprint(fi.Func.Def.Span().Start)
		if m.emittedClones[key] {
			continue
		}
		m.emittedClones[key] = true
		text, err := m.cloneText(a, fi, f.clones)
		if err != nil {
			return "", err
		}
		if fi.File != a.File {
			headerClones.WriteString(text)
			continue
		}
		at := fi.Func.Def.Span().End
		if first < 0 || at < first {
			first = at
		}
		line, _ := a.Lines.Position(at)
		edits = append(edits, emit.Insert(at, text+fmt.Sprintf("#line %d \"%s\"\n", line, lf), "clone "+fi.Func.Name))
	}
	for _, k := range f.kernels {
		if k.bodyOwner != k {
			continue // the same template kernel with other arguments: one body
		}
		text, err := m.bodyText(k, f.clones)
		if err != nil {
			return "", err
		}
		at := k.k.Func.Def.Span().End
		if first < 0 || at < first {
			first = at
		}
		edits = append(edits, emit.Insert(at, "\n"+text, "body "+k.k.Func.Name))
	}
	if headerClones.Len() > 0 {
		at := first
		for _, it := range a.File.Items {
			if sp := it.Span(); sp.Start <= first && first <= sp.End {
				at = sp.Start
				break
			}
		}
		line, _ := a.Lines.Position(at)
		// Insertions at one offset keep their order: put these first.
		edits = append([]emit.Edit{emit.Insert(at, headerClones.String()+fmt.Sprintf("#line %d \"%s\"\n", line, lf), "header clones")}, edits...)
	}
	return emit.Apply(a.File.Src, edits)
}

// fenceHost wraps host-only function definitions in #if 0: the merged file
// keeps the inputs' device code, declarations and types, and drops their
// host programs (two inputs' main() would clash). constexpr functions stay,
// since device code may use them.
func (m *merger) fenceHost(a *Analysis) []emit.Edit {
	var edits []emit.Edit
	lf := lineFile(a.File)
	for _, fn := range a.File.Funcs {
		if fn.Global || fn.Device || isConstexpr(fn) {
			continue
		}
		sp := fn.Def.Span()
		l1, _ := a.Lines.Position(sp.End)
		edits = append(edits,
			emit.Insert(sp.Start, "\n#if 0 // slatec merge: host code of the input, left out\n", "fence"),
			emit.Insert(sp.End, fmt.Sprintf("\n#endif\n#line %d \"%s\"\n", l1, lf), "fence"))
	}
	return edits
}

func isConstexpr(fn *parser.Func) bool {
	for _, sp := range fn.Def.Head.Specs {
		if w, ok := sp.(*parser.Word); ok && (w.Text == "constexpr" || w.Text == "consteval") {
			return true
		}
	}
	return false
}
