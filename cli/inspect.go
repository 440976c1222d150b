package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/parser"
	"github.com/slatec/slatec/transform"
)

func init() { register(newInspectCmd) }

func newInspectCmd() *cobra.Command {
	var asJSON bool
	var includes []string
	var macros macroFlags
	cmd := &cobra.Command{
		Use:   "inspect FILE...",
		Short: "Report each kernel's parameters, index reads, barriers, returns and shared memory, and every launch site",
		Long: `inspect parses CUDA files and reports, for each __global__ function, what the
persistent transform needs to know: template and function parameters, launch
bounds, reads of blockIdx/gridDim/blockDim/threadIdx (also through macros and
__device__ helpers), barriers and warp-synchronous operations, return
statements and whether a barrier can follow one, static and dynamic shared
memory, and constructs the transform refuses; and every host launch site.

With --json the report follows docs/inspect.schema.json ("slatec-inspect/1"),
written as each file is analysed. "-" reads standard input. A file that
cannot be read or parsed is reported (in JSON, as a file entry holding the
diagnostic) and the others still are; the exit status is then 1.

` + macroFlagsHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Reports are written as each file is analysed, through one
			// buffer, so that a big file's analysis can be freed before the
			// next is read and output costs few system calls.
			out := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
			var js *inspectJSONWriter
			if asJSON {
				js = newInspectJSONWriter(out, "slatec-inspect/1")
			}
			loadOpts, err := macros.loadOptions(includes)
			if err != nil {
				return err
			}
			// The report needs no function body once it is analysed.
			loadOpts.DropBodies = true
			failed := false
			for _, path := range args {
				name, src, err := readInput(cmd, path)
				var a *transform.Analysis
				restoreGC := func() {}
				if err == nil {
					restoreGC = lowerGCTarget(len(src))
					a, err = transform.LoadWith(name, src, loadOpts)
				}
				if err != nil {
					restoreGC()
					// A file that cannot be read or parsed is reported like
					// the others and the rest still are (exit 1 at the end).
					var d diag.Diagnostic
					if !errors.As(err, &d) {
						if !asJSON {
							out.Flush()
							fmt.Fprintf(cmd.ErrOrStderr(), "slatec: error: %v\n", err)
							failed = true
							continue
						}
						d = diag.Diagnostic{File: name, Severity: diag.Error, Message: strings.TrimPrefix(err.Error(), name+": ")}
					}
					failed = true
					if asJSON {
						js.file(reportStream{File: d.File, Diagnostics: []diag.Diagnostic{d}}) // no kernels, no launches
					} else {
						out.Flush()
						printDiags(cmd, []diag.Diagnostic{d})
					}
					continue
				}
				// Each kernel's report is built as it is written: the
				// reports of a file of thousands of kernels are never
				// all held at once.
				// Kernels whose returns must be lowered get the lowering's
				// verdict, which needs the function bodies: the file is
				// loaded again with them, once, when such a kernel comes.
				fr := analysisStream(a, reloadedLowering(name, src, loadOpts))
				if asJSON {
					js.file(fr)
				} else {
					writeInspectText(out, fr)
					out.Flush() // diagnostics follow their file's report
					printDiags(cmd, fr.Diagnostics)
				}
				restoreGC()
			}
			if asJSON {
				js.close()
				if js.err != nil {
					return js.err
				}
			}
			if err := out.Flush(); err != nil {
				return err
			}
			if failed {
				return silentError{exitInput}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (schema: docs/inspect.schema.json)")
	cmd.Flags().StringSliceVarP(&includes, "include", "I", nil, "directories to search for #include \"...\" files")
	macros.register(cmd.Flags())
	return cmd
}

// An input of bigInput bytes or more is analysed with the garbage
// collector's target lowered to inspectGCPercent: its analysis holds about
// eleven times its size until the report is written, and with Go's default
// target (100) the heap grows to twice what it holds before a collection;
// at 50 it grows to one and a half times, for some more collection work.
// A lower target the user set with GOGC is kept.
const (
	bigInput         = 1 << 20
	inspectGCPercent = 50
)

// lowerGCTarget lowers the GC target for an input of size bytes and
// returns what restores it.
func lowerGCTarget(size int) (restore func()) {
	if size < bigInput {
		return func() {}
	}
	old := debug.SetGCPercent(inspectGCPercent)
	if old < inspectGCPercent { // lower already, or off
		debug.SetGCPercent(old)
		return func() {}
	}
	return func() { debug.SetGCPercent(old) }
}

// inspectJSONWriter streams the slatec-inspect/1 document,
//
//	{"format": ..., "files": [{"file": ..., "kernels": [...], "launches": [...], "diagnostics": [...]}, ...]}
//
// one file, and within a file one kernel, at a time, byte for byte as
// encoding/json with a two-space indent would write the whole document, so
// that the output never has to be held in memory twice.
type inspectJSONWriter struct {
	w     *bufio.Writer
	files int
	err   error
	buf   []byte // a kernel's JSON (kernels)
}

func newInspectJSONWriter(w *bufio.Writer, format string) *inspectJSONWriter {
	j := &inspectJSONWriter{w: w}
	j.raw("{\n  \"format\": ")
	j.value(format, "  ")
	j.raw(",\n  \"files\": [")
	return j
}

func (j *inspectJSONWriter) raw(s string) {
	if j.err == nil {
		_, j.err = j.w.WriteString(s)
	}
}

// value writes v indented as if it sat at nesting prefix.
func (j *inspectJSONWriter) value(v any, prefix string) {
	if j.err != nil {
		return
	}
	b, err := json.MarshalIndent(v, prefix, "  ")
	if err != nil {
		j.err = err
		return
	}
	_, j.err = j.w.Write(b)
}

func streamArray[T any](j *inspectJSONWriter, items []T, prefix string) {
	streamItems(j, len(items), func(i int) T { return items[i] }, prefix)
}

// streamItems writes an array of n items, item(i) built as it is written.
func streamItems[T any](j *inspectJSONWriter, n int, item func(int) T, prefix string) {
	if n == 0 {
		j.raw("[]")
		return
	}
	j.raw("[")
	for i := range n {
		if i > 0 {
			j.raw(",")
		}
		j.raw("\n" + prefix + "  ")
		j.value(item(i), prefix+"  ")
	}
	j.raw("\n" + prefix + "]")
}

func (j *inspectJSONWriter) file(fr reportStream) {
	if j.files > 0 {
		j.raw(",")
	}
	j.files++
	const p = "    "
	j.raw("\n" + p + "{\n" + p + "  \"file\": ")
	j.value(fr.File, p+"  ")
	j.raw(",\n" + p + "  \"kernels\": ")
	j.kernels(fr, p+"  ")
	j.raw(",\n" + p + "  \"launches\": ")
	streamItems(j, fr.NLaunches, fr.Launch, p+"  ")
	j.raw(",\n" + p + "  \"diagnostics\": ")
	streamArray(j, fr.Diagnostics, p+"  ")
	j.raw("\n" + p + "}")
}

// kernels writes the kernels' array like streamItems, each kernel with
// kernelJSON.
func (j *inspectJSONWriter) kernels(fr reportStream, prefix string) {
	if fr.NKernels == 0 {
		j.raw("[]")
		return
	}
	j.raw("[")
	for i := range fr.NKernels {
		if i > 0 {
			j.raw(",")
		}
		j.raw("\n" + prefix + "  ")
		kr := fr.Kernel(i)
		j.buf = kernelJSON(j.buf[:0], &kr, prefix+"  ")
		if j.err == nil {
			_, j.err = j.w.Write(j.buf)
		}
	}
	j.raw("\n" + prefix + "]")
}

func (j *inspectJSONWriter) close() {
	if j.files == 0 {
		j.raw("]\n}\n")
		return
	}
	j.raw("\n  ]\n}\n")
}

// inspectReport is the whole slatec-inspect/1 document (as streamed by
// inspectJSONWriter).
type inspectReport struct {
	Format string       `json:"format"`
	Files  []fileReport `json:"files"`
}

type fileReport struct {
	File        string            `json:"file"`
	Kernels     []kernelReport    `json:"kernels"`
	Launches    []launchReport    `json:"launches"`
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
}

type spanJSON struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

func spanOf(s parser.Span) spanJSON { return spanJSON{s.Start, s.End} }

type paramReport struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type tparamReport struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // "type" or "value"
	Pack bool   `json:"pack,omitempty"`
	Text string `json:"text"`
}

type kernelReport struct {
	Name           string                            `json:"name"`
	QualifiedName  string                            `json:"qualified_name"`
	Line           int                               `json:"line"`
	Col            int                               `json:"col"`
	Span           spanJSON                          `json:"span"`
	ExternC        bool                              `json:"extern_c"`
	Static         bool                              `json:"static"`
	TemplateParams []tparamReport                    `json:"template_params"`
	Params         []paramReport                     `json:"params"`
	LaunchBounds   []string                          `json:"launch_bounds"`
	Builtins       map[string][]transform.BuiltinUse `json:"builtins"`
	Syncs          []transform.SyncPoint             `json:"syncs"`
	Returns        []transform.ReturnInfo            `json:"returns"`
	SharedStatic   []transform.SharedDecl            `json:"shared_static"`
	SharedDynamic  []transform.SharedDecl            `json:"shared_dynamic"`
	SharedVia      []string                          `json:"shared_via"`
	Helpers        []string                          `json:"helpers"`
	IndexHelpers   []string                          `json:"index_helpers"`
	Unresolved     []string                          `json:"unresolved_calls"`
	Features       featureReport                     `json:"features"`
	Persistent     persistentReport                  `json:"persistent"`
}

type featureReport struct {
	Printf         bool `json:"printf"`
	Atomics        bool `json:"atomics"`
	WarpIntrinsics bool `json:"warp_intrinsics"`
}

type persistentReport struct {
	OK            bool              `json:"ok"`
	NeedsLowering bool              `json:"needs_lowering"`
	Refusals      []diag.Diagnostic `json:"refusals"`
}

type launchReport struct {
	Kernel       string     `json:"kernel"`
	Line         int        `json:"line"`
	Col          int        `json:"col"`
	Span         spanJSON   `json:"span"`
	NameSpan     spanJSON   `json:"name_span"`
	TemplateArgs string     `json:"template_args,omitempty"`
	Config       []string   `json:"config"`
	ConfigSpans  []spanJSON `json:"config_spans"`
	Args         []string   `json:"args"`
	ArgSpans     []spanJSON `json:"arg_spans"`
	InFunction   string     `json:"in_function,omitempty"`
}

// reportStream is a file's report whose kernels and launches are built
// one at a time, as they are written (Kernel(i), Launch(i)).
type reportStream struct {
	File                string
	NKernels, NLaunches int
	Kernel              func(int) kernelReport
	Launch              func(int) launchReport
	Diagnostics         []diag.Diagnostic
}

// analysisStream streams the report of an analysis.
// lower gives the return lowering's refusals of kernel i, one that needs
// it (nil: from a's own bodies).
func analysisStream(a *transform.Analysis, lower func(i int) []diag.Diagnostic) reportStream {
	if lower == nil {
		lower = func(i int) []diag.Diagnostic { return lowerVerdict(a, i) }
	}
	return reportStream{File: a.File.Name, NKernels: len(a.Kernels), NLaunches: len(a.Launches),
		Kernel: func(i int) kernelReport {
			return kernelReportOf(a, a.Kernels[i], func() []diag.Diagnostic { return lower(i) })
		},
		Launch:      func(i int) launchReport { return launchReportOf(a.Launches[i]) },
		Diagnostics: fileDiagnostics(a)}
}

// reloadedLowering gives the return lowering's verdict for the kernels of
// an analysis without bodies (inspect's): the file is loaded again with
// them, once, when the first kernel that needs the lowering asks.
// The analyses with and without bodies list the same kernels in the same
// order (TestInspectDropBodiesSameReport), so kernel i is kernel i.
func reloadedLowering(name string, src []byte, opts transform.LoadOptions) func(i int) []diag.Diagnostic {
	var bodies *transform.Analysis
	var loadErr error
	return func(i int) []diag.Diagnostic {
		if bodies == nil && loadErr == nil {
			opts.DropBodies = false
			bodies, loadErr = transform.LoadWith(name, src, opts)
		}
		if loadErr != nil {
			return []diag.Diagnostic{{File: name, Severity: diag.Error, Message: "its bodies could not be analysed for the return lowering: " + loadErr.Error()}}
		}
		return lowerVerdict(bodies, i)
	}
}

// lowerVerdict is the return lowering's refusals of kernel i of a, an
// analysis with bodies.
func lowerVerdict(a *transform.Analysis, i int) []diag.Diagnostic {
	_, errs := a.Lower(a.Kernels[i], transform.LowerOptions{Active: "true"})
	return errs
}

func fileDiagnostics(a *transform.Analysis) []diag.Diagnostic {
	ds := append(append([]diag.Diagnostic(nil), a.Diags...), a.SplitDefinitions()...)
	if ds == nil {
		ds = []diag.Diagnostic{}
	}
	return ds
}

func kernelReportOf(a *transform.Analysis, k *transform.KernelInfo, lower func() []diag.Diagnostic) kernelReport {
	fn := k.Func
	l, c := a.Lines.Position(fn.NameSpan.Start)
	kr := kernelReport{Name: fn.Name, QualifiedName: fn.QualifiedName(), Line: l, Col: c,
		Span: spanOf(fn.Def.Span()), ExternC: fn.ExternC, Static: fn.Static,
		TemplateParams: []tparamReport{}, Params: []paramReport{}, Builtins: map[string][]transform.BuiltinUse{},
		Syncs: nonNil(k.AllSyncs), Returns: nonNil(k.Returns), SharedStatic: []transform.SharedDecl{},
		SharedDynamic: []transform.SharedDecl{}, Helpers: []string{}, IndexHelpers: []string{},
		Unresolved: nonNil(k.Unresolved), SharedVia: nonNil(k.SharedVia),
		Features: featureReport{Printf: k.Printf, Atomics: k.Atomics, WarpIntrinsics: k.WarpIntrinsics}}
	for _, tp := range fn.Template {
		kind := "value"
		if tp.IsType {
			kind = "type"
		}
		kr.TemplateParams = append(kr.TemplateParams, tparamReport{Name: tp.Name, Kind: kind, Pack: tp.Pack, Text: tp.Text})
	}
	for _, p := range fn.Params {
		kr.Params = append(kr.Params, paramReport{Name: p.Name, Type: p.Type})
	}
	if fn.LaunchBounds != nil {
		for _, arg := range fn.LaunchBounds.Args {
			kr.LaunchBounds = append(kr.LaunchBounds, a.File.Text(arg.Span()))
		}
	}
	for _, u := range k.AllUses {
		kr.Builtins[u.Name] = append(kr.Builtins[u.Name], u)
	}
	shared := append([]transform.SharedDecl(nil), k.Shared...)
	for _, h := range k.Helpers {
		kr.Helpers = append(kr.Helpers, h.Func.Name)
		shared = append(shared, h.Shared...)
	}
	for _, s := range shared {
		if s.Extern {
			kr.SharedDynamic = append(kr.SharedDynamic, s)
		} else {
			kr.SharedStatic = append(kr.SharedStatic, s)
		}
	}
	for _, h := range k.IndexHelpers {
		kr.IndexHelpers = append(kr.IndexHelpers, h.Func.Name)
	}
	refusals := append(append([]diag.Diagnostic(nil), k.Refusals...), k.CutLaunches...)
	if len(refusals) == 0 && k.NeedsLowering && lower != nil {
		// The lowering of its returns has the last word, as in transform:
		// "ok" must mean that transform would not refuse it.
		refusals = append(refusals, lower()...)
	}
	kr.Persistent = persistentReport{OK: len(refusals) == 0, NeedsLowering: k.NeedsLowering, Refusals: nonNil(refusals)}
	return kr
}

func launchReportOf(ls *transform.LaunchSite) launchReport {
	lr := launchReport{Kernel: ls.Kernel, Line: ls.Line, Col: ls.Col, Span: spanOf(ls.Span), NameSpan: spanOf(ls.NameSpan),
		TemplateArgs: ls.TemplateText, Config: ls.ConfigText, Args: nonNil(ls.ArgsText), InFunction: ls.Func,
		ConfigSpans: []spanJSON{}, ArgSpans: []spanJSON{}}
	for _, s := range ls.Config {
		lr.ConfigSpans = append(lr.ConfigSpans, spanOf(s))
	}
	for _, s := range ls.Args {
		lr.ArgSpans = append(lr.ArgSpans, spanOf(s))
	}
	return lr
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func writeInspectText(w io.Writer, fr reportStream) {
	fmt.Fprintf(w, "%s: %d kernel%s, %d launch site%s\n", fr.File, fr.NKernels, plural(fr.NKernels),
		fr.NLaunches, plural(fr.NLaunches))
	for i := range fr.NKernels {
		k := fr.Kernel(i)
		name := k.QualifiedName
		if len(k.TemplateParams) > 0 {
			var ns []string
			for _, tp := range k.TemplateParams {
				ns = append(ns, tp.Name)
			}
			name += "<" + strings.Join(ns, ", ") + ">"
		}
		fmt.Fprintf(w, "\nkernel %s  (line %d)\n", name, k.Line)
		var ps []string
		for _, p := range k.Params {
			ps = append(ps, strings.TrimSpace(p.Type+" "+p.Name))
		}
		fmt.Fprintf(w, "  params:        %s\n", strings.Join(ps, ", "))
		if k.ExternC {
			fmt.Fprintf(w, "  linkage:       extern \"C\"\n")
		}
		if len(k.LaunchBounds) > 0 {
			fmt.Fprintf(w, "  launch bounds: %s\n", strings.Join(k.LaunchBounds, ", "))
		}
		var reads []string
		for _, b := range []string{transform.BlockIdx, transform.GridDim, transform.BlockDim, transform.ThreadIdx} {
			us := k.Builtins[b]
			if len(us) == 0 {
				continue
			}
			vias := map[string]bool{}
			for _, u := range us {
				if u.Via != "" {
					vias[u.Via] = true
				}
			}
			s := fmt.Sprintf("%s ×%d", b, len(us))
			if len(vias) > 0 {
				var vs []string
				for v := range vias {
					vs = append(vs, v)
				}
				sortStrings(vs)
				s += " (via " + strings.Join(vs, ", ") + ")"
			}
			reads = append(reads, s)
		}
		fmt.Fprintf(w, "  reads:         %s\n", orNone(strings.Join(reads, "; ")))
		var syncs []string
		for _, s := range k.Syncs {
			t := fmt.Sprintf("%s line %d", s.Form, s.Line)
			if s.Via != "" {
				t += " in " + strings.TrimPrefix(s.Via, "helper ")
			}
			syncs = append(syncs, t)
		}
		fmt.Fprintf(w, "  sync points:   %s\n", orNone(strings.Join(syncs, ", ")))
		var rets []string
		for _, r := range k.Returns {
			t := fmt.Sprintf("line %d", r.Line)
			switch {
			case r.BeforeSync && r.Uniform:
				t += fmt.Sprintf(" (before the sync at line %d; the whole block returns together)", r.SyncLine)
			case r.BeforeSync:
				t += fmt.Sprintf(" (before the sync at line %d)", r.SyncLine)
			}
			rets = append(rets, t)
		}
		fmt.Fprintf(w, "  returns:       %s\n", orNone(strings.Join(rets, ", ")))
		sh := sharedList(k.SharedStatic, k.SharedDynamic)
		if len(k.SharedVia) > 0 {
			if sh != "" {
				sh += ", "
			}
			sh += "through " + strings.Join(k.SharedVia, ", ")
		}
		fmt.Fprintf(w, "  shared:        %s\n", orNone(sh))
		if len(k.Helpers) > 0 {
			fmt.Fprintf(w, "  helpers:       %s", strings.Join(k.Helpers, ", "))
			if len(k.IndexHelpers) > 0 {
				fmt.Fprintf(w, " (reading the block index: %s)", strings.Join(k.IndexHelpers, ", "))
			}
			fmt.Fprintln(w)
		}
		if len(k.Unresolved) > 0 {
			fmt.Fprintf(w, "  calls outside this file: %s\n", strings.Join(k.Unresolved, ", "))
		}
		switch {
		case !k.Persistent.OK:
			fmt.Fprintf(w, "  persistent:    refused (%d reason%s below)\n", len(k.Persistent.Refusals), plural(len(k.Persistent.Refusals)))
		case k.Persistent.NeedsLowering:
			fmt.Fprintf(w, "  persistent:    ok (returns before sync points are lowered to an inactive predicate)\n")
		default:
			fmt.Fprintf(w, "  persistent:    ok\n")
		}
		for _, r := range k.Persistent.Refusals {
			fmt.Fprintf(w, "    - line %d: %s\n", r.Line, r.Message)
		}
	}
	if fr.NLaunches > 0 {
		fmt.Fprintln(w)
	}
	for i := range fr.NLaunches {
		l := fr.Launch(i)
		where := ""
		if l.InFunction != "" {
			where = " in " + l.InFunction
		}
		fmt.Fprintf(w, "launch %s%s<<<%s>>>(%s)  line %d%s\n", l.Kernel, l.TemplateArgs, strings.Join(l.Config, ", "),
			strings.Join(l.Args, ", "), l.Line, where)
	}
}

func sharedList(st, dyn []transform.SharedDecl) string {
	var parts []string
	for _, s := range st {
		parts = append(parts, fmt.Sprintf("%s (%s, line %d)", s.Name, s.Type, s.Line))
	}
	for _, s := range dyn {
		parts = append(parts, fmt.Sprintf("extern %s (%s, dynamic, line %d)", s.Name, s.Type, s.Line))
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
