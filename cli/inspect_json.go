package cli

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/transform"
)

// kernelJSON appends kr as json.MarshalIndent(kr, prefix, "  ") writes it.
// A file of thousands of kernels spends much of its JSON report in
// encoding/json's reflection and second (indenting) pass; the kernel
// reports are written here directly instead (TestKernelJSONMatchesEncoder
// compares the two).
func kernelJSON(b []byte, kr *kernelReport, prefix string) []byte {
	o := jsonObj{b: b, ind: prefix}
	o.open()
	o.key("name").str(kr.Name)
	o.key("qualified_name").str(kr.QualifiedName)
	o.key("line").int(kr.Line)
	o.key("col").int(kr.Col)
	o.key("span").span(kr.Span)
	o.key("extern_c").bool(kr.ExternC)
	o.key("static").bool(kr.Static)
	o.key("template_params")
	if o.list(kr.TemplateParams == nil, len(kr.TemplateParams)) {
		for i, tp := range kr.TemplateParams {
			o.item(i).open()
			o.key("name").str(tp.Name)
			o.key("kind").str(tp.Kind)
			if tp.Pack {
				o.key("pack").bool(true)
			}
			o.key("text").str(tp.Text)
			o.close()
		}
		o.endList()
	}
	o.key("params")
	if o.list(kr.Params == nil, len(kr.Params)) {
		for i, p := range kr.Params {
			o.item(i).open()
			o.key("name").str(p.Name)
			o.key("type").str(p.Type)
			o.close()
		}
		o.endList()
	}
	o.key("launch_bounds").strs(kr.LaunchBounds)
	o.key("builtins")
	if kr.Builtins == nil {
		o.raw("null")
	} else if len(kr.Builtins) == 0 {
		o.raw("{}")
	} else {
		names := make([]string, 0, len(kr.Builtins))
		for n := range kr.Builtins {
			names = append(names, n)
		}
		sort.Strings(names)
		o.open()
		for _, n := range names {
			us := kr.Builtins[n]
			o.key(n)
			if o.list(us == nil, len(us)) {
				for i, u := range us {
					o.item(i).use(u)
				}
				o.endList()
			}
		}
		o.close()
	}
	o.key("syncs")
	if o.list(kr.Syncs == nil, len(kr.Syncs)) {
		for i, s := range kr.Syncs {
			o.item(i).open()
			o.key("kind").str(string(s.Kind))
			o.key("form").str(s.Form)
			o.key("line").int(s.Line)
			o.key("col").int(s.Col)
			if s.Via != "" {
				o.key("via").str(s.Via)
			}
			o.close()
		}
		o.endList()
	}
	o.key("returns")
	if o.list(kr.Returns == nil, len(kr.Returns)) {
		for i, r := range kr.Returns {
			o.item(i).open()
			o.key("line").int(r.Line)
			o.key("col").int(r.Col)
			o.key("before_sync").bool(r.BeforeSync)
			if r.SyncLine != 0 {
				o.key("sync_line").int(r.SyncLine)
			}
			if r.Uniform {
				o.key("uniform").bool(true)
			}
			o.close()
		}
		o.endList()
	}
	o.key("shared_static").shared(kr.SharedStatic)
	o.key("shared_dynamic").shared(kr.SharedDynamic)
	o.key("shared_via").strs(kr.SharedVia)
	o.key("helpers").strs(kr.Helpers)
	o.key("index_helpers").strs(kr.IndexHelpers)
	o.key("unresolved_calls").strs(kr.Unresolved)
	o.key("features").open()
	o.key("printf").bool(kr.Features.Printf)
	o.key("atomics").bool(kr.Features.Atomics)
	o.key("warp_intrinsics").bool(kr.Features.WarpIntrinsics)
	o.close()
	o.key("persistent").open()
	o.key("ok").bool(kr.Persistent.OK)
	o.key("needs_lowering").bool(kr.Persistent.NeedsLowering)
	o.key("refusals").diags(kr.Persistent.Refusals)
	o.close()
	o.close()
	return o.b
}

// jsonObj appends indented JSON: ind is the indentation of the value
// being written; n counts the members written into each open object or
// array.
type jsonObj struct {
	b   []byte
	ind string
	n   []int
}

func (o *jsonObj) raw(s string) *jsonObj { o.b = append(o.b, s...); return o }

func (o *jsonObj) open() *jsonObj {
	o.b = append(o.b, '{')
	o.n = append(o.n, 0)
	return o
}

// close ends an object ({} when it has no members).
func (o *jsonObj) close() *jsonObj {
	n := o.n[len(o.n)-1]
	o.n = o.n[:len(o.n)-1]
	if n > 0 {
		o.ind = o.ind[:len(o.ind)-2]
		o.b = append(o.b, '\n')
		o.b = append(o.b, o.ind...)
	}
	o.b = append(o.b, '}')
	return o
}

// member starts the next member of the open object or array.
func (o *jsonObj) member() {
	k := len(o.n) - 1
	if o.n[k] == 0 {
		o.ind += "  "
	} else {
		o.b = append(o.b, ',')
	}
	o.n[k]++
	o.b = append(o.b, '\n')
	o.b = append(o.b, o.ind...)
}

func (o *jsonObj) key(k string) *jsonObj {
	o.member()
	o.str(k)
	o.b = append(o.b, ':', ' ')
	return o
}

// list writes null or [] and reports false, or opens an array of n
// items and reports true (endList closes it).
func (o *jsonObj) list(isNil bool, n int) bool {
	switch {
	case isNil:
		o.raw("null")
		return false
	case n == 0:
		o.raw("[]")
		return false
	}
	o.b = append(o.b, '[')
	o.n = append(o.n, 0)
	return true
}

func (o *jsonObj) item(int) *jsonObj { o.member(); return o }

func (o *jsonObj) endList() {
	o.n = o.n[:len(o.n)-1]
	o.ind = o.ind[:len(o.ind)-2]
	o.b = append(o.b, '\n')
	o.b = append(o.b, o.ind...)
	o.b = append(o.b, ']')
}

func (o *jsonObj) int(n int) { o.b = strconv.AppendInt(o.b, int64(n), 10) }

func (o *jsonObj) bool(v bool) { o.b = strconv.AppendBool(o.b, v) }

// str writes a string as encoding/json does: plain printable ASCII as it
// is, anything else (quotes, backslashes, <, >, &, control bytes, non-ASCII)
// through json.Marshal.
func (o *jsonObj) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			o.b = append(o.b, q...)
			return
		}
	}
	o.b = append(o.b, '"')
	o.b = append(o.b, s...)
	o.b = append(o.b, '"')
}

func (o *jsonObj) strs(ss []string) {
	if o.list(ss == nil, len(ss)) {
		for i, s := range ss {
			o.item(i).str(s)
		}
		o.endList()
	}
}

func (o *jsonObj) span(s spanJSON) {
	o.open()
	o.key("start").int(s.Start)
	o.key("end").int(s.End)
	o.close()
}

func (o *jsonObj) use(u transform.BuiltinUse) {
	o.open()
	o.key("name").str(u.Name)
	o.key("line").int(u.Line)
	o.key("col").int(u.Col)
	if u.Via != "" {
		o.key("via").str(u.Via)
	}
	o.close()
}

func (o *jsonObj) shared(ss []transform.SharedDecl) {
	if o.list(ss == nil, len(ss)) {
		for i, s := range ss {
			o.item(i).open()
			o.key("name").str(s.Name)
			o.key("type").str(s.Type)
			o.key("extern").bool(s.Extern)
			o.key("line").int(s.Line)
			if s.FileVar {
				o.key("file_scope").bool(true)
			}
			o.close()
		}
		o.endList()
	}
}

func (o *jsonObj) diags(ds []diag.Diagnostic) {
	if o.list(ds == nil, len(ds)) {
		for i, d := range ds {
			o.item(i).diag(d)
		}
		o.endList()
	}
}

func (o *jsonObj) diag(d diag.Diagnostic) {
	o.open()
	o.key("file").str(d.File)
	o.key("line").int(d.Line)
	o.key("col").int(d.Col)
	o.key("offset").int(d.Offset)
	o.key("severity").str(string(d.Severity))
	o.key("message").str(d.Message)
	if d.Source != "" {
		o.key("source").str(d.Source)
	}
	if len(d.Notes) > 0 {
		o.key("notes").diags(d.Notes)
	}
	o.close()
}
