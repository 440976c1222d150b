// Package gen writes Go launchers for transformed CUDA: a Go file that
// embeds the persistent form of a .cu file and has one typed method per
// kernel, for `//go:generate slatec gen`.
package gen

import (
	"fmt"
	"go/format"
	"go/token"
	"strconv"
	"strings"
	"unicode"

	"github.com/slatec/slatec/runtime"
	"github.com/slatec/slatec/templates"
	"github.com/slatec/slatec/transform"
)

// Options name what the generated file declares.
type Options struct {
	Package string // Go package name
	Type    string // the kernels' Go type; default from the file name
	Source  string // the CUDA file's name, for messages and NVRTC
	Version string
	// Instantiate lists template kernels to give launchers, each with its
	// template arguments as C++ writes them: "scale<float>",
	// "ns::reduce<double, 256>". The method is named after the kernel and
	// its arguments (ScaleFloat, ReduceDouble256).
	Instantiate []string
	// Warn, when set, is told of every C identifier that could not keep its
	// name in Go (a Go keyword, a name the launcher uses, a clash), with the
	// name it got.
	Warn func(msg string)
}

type param struct {
	Name, CType, GoName, GoType string
	Size, Align                 int
}

type kernel struct {
	Name, Worker, Field, Method, Signature string
	Line                                   int
	Params                                 []param
}

type view struct {
	Version, Source, Package, Type, Prefix, SourceLiteral string
	Kernels                                               []kernel
}

// Generate renders the Go file for a transform result made with
// DeviceOnly. Template kernels are skipped (they need an instantiation to
// launch) and reported in skipped.
func Generate(res *transform.Result, a *transform.Analysis, opts Options) (code []byte, skipped []string, err error) {
	if !token.IsIdentifier(opts.Package) {
		return nil, nil, fmt.Errorf("package name %q is not a Go identifier", opts.Package)
	}
	warn := opts.Warn
	if warn == nil {
		warn = func(string) {}
	}
	typ := opts.Type
	if typ == "" {
		typ = defaultTypeName(opts.Source)
	}
	if !token.IsIdentifier(typ) {
		return nil, nil, fmt.Errorf("type name %q is not a Go identifier", typ)
	}
	v := view{Version: opts.Version, Source: opts.Source, Package: opts.Package, Type: typ,
		Prefix: unexported(typ), SourceLiteral: goString(string(res.Output))}
	lines := map[string]int{}
	for _, k := range a.Kernels {
		l, _ := a.Lines.Position(k.Func.NameSpan.Start)
		lines[k.Func.QualifiedName()] = l
	}
	insts, err := parseInstantiations(opts.Instantiate)
	if err != nil {
		return nil, nil, err
	}
	instUsed := make([]bool, len(insts))
	used := map[string]bool{}
	addKernel := func(kl *transform.KernelLayout, method, worker string, subst map[string]string) {
		first := method
		for used[method] || method == "Close" {
			method += "_"
		}
		used[method] = true
		if method != first {
			warn(fmt.Sprintf("kernel %s: method %s is taken, named %s", kl.QualifiedName, first, method))
		}
		k := kernel{Name: kl.QualifiedName, Worker: worker, Field: unexported(method), Method: method,
			Line: lines[kl.QualifiedName]}
		var sig []string
		for i, p := range kl.Params {
			gn := goParamName(p.Name, i)
			if p.Name != "" && !strings.HasPrefix(p.Name, "slate_p") && gn != p.Name {
				warn(fmt.Sprintf("kernel %s: parameter %s is renamed %s in Go (%s)", kl.QualifiedName, p.Name, gn, renameReason(p.Name)))
			}
			ctype, size, align := p.Type, p.Size, p.Align
			if subst != nil {
				ctype = substitute(p.Type, subst)
				size, align = 0, 0 // the driver reports them
				if ti, ok := runtime.CTypeInfo(ctype); ok {
					size, align = ti.Size, ti.Align
				}
			}
			k.Params = append(k.Params, param{Name: p.Name, CType: ctype, GoName: gn, GoType: goType(ctype),
				Size: size, Align: align})
			sig = append(sig, strings.TrimSpace(ctype+" "+p.Name))
		}
		name := kl.Name
		if subst != nil {
			name = worker[strings.LastIndex(worker, "__slate")+len("__slate"):]
			name = kl.Name + name
		}
		k.Signature = "__global__ void " + name + "(" + strings.Join(sig, ", ") + ")"
		v.Kernels = append(v.Kernels, k)
	}
	for _, kl := range res.Kernels {
		if len(kl.Template) > 0 {
			found := false
			for i, in := range insts {
				if in.name != kl.Name && in.name != kl.QualifiedName {
					continue
				}
				if len(in.args) != len(kl.Template) {
					return nil, nil, optionErrorf("--instantiate %s: %s has %d template parameters (%s), not %d",
						in.text, kl.QualifiedName, len(kl.Template), strings.Join(kl.Template, ", "), len(in.args))
				}
				instUsed[i], found = true, true
				subst := map[string]string{}
				for j, tp := range kl.Template {
					subst[tp] = in.args[j]
				}
				method := exported(kl.Name)
				for _, a := range in.args {
					method += exported("x_" + identOnly(a))[1:]
				}
				addKernel(kl, method, kl.WorkerExpr()+"<"+strings.Join(in.args, ", ")+">", subst)
			}
			if !found {
				skipped = append(skipped, kl.QualifiedName)
			}
			continue
		}
		addKernel(kl, exported(kl.Name), kl.WorkerExpr(), nil)
	}
	for i, in := range insts {
		if !instUsed[i] {
			return nil, skipped, optionErrorf("--instantiate %s: %s has no template kernel of that name", in.text, opts.Source)
		}
	}
	if len(v.Kernels) == 0 {
		return nil, skipped, fmt.Errorf("%s has no kernel to launch from Go (template kernels need an instantiation)", opts.Source)
	}
	src, err := templates.Render(templates.Gen, v)
	if err != nil {
		return nil, nil, err
	}
	out, err := format.Source([]byte(src))
	if err != nil {
		return nil, nil, fmt.Errorf("internal error: generated Go does not format: %v", err)
	}
	return out, skipped, nil
}

// OptionError is a bad option value (such as an --instantiate that names
// no template kernel): a usage error.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

func optionErrorf(format string, a ...any) error { return &OptionError{fmt.Sprintf(format, a...)} }

type instantiation struct {
	text, name string
	args       []string
}

// parseInstantiations reads "name<arg, ...>" items (transform.ParseInstance).
func parseInstantiations(items []string) ([]instantiation, error) {
	var out []instantiation
	for _, it := range items {
		t := strings.TrimSpace(it)
		name, args, err := transform.ParseInstance(t)
		if err != nil {
			return nil, optionErrorf("--instantiate %q: %v", it, err)
		}
		out = append(out, instantiation{text: t, name: name, args: args})
	}
	return out, nil
}

func substitute(ctype string, subst map[string]string) string {
	return transform.SubstituteTemplate(ctype, subst)
}

// identOnly keeps the letters and digits of a template argument, for a
// method name: "unsigned int" gives "unsigned_int", "256" gives "256".
func identOnly(a string) string {
	var b strings.Builder
	for _, r := range a {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}

// goType maps a C parameter type to the Go type the runtime marshals.
func goType(ctype string) string {
	ti, ok := runtime.CTypeInfo(ctype)
	if !ok {
		return "any" // a user struct: [N]byte of the driver-reported size
	}
	switch ti.Kind {
	case runtime.KindPointer:
		return "runtime.DevicePtr"
	case runtime.KindBool:
		return "bool"
	case runtime.KindFloat:
		if ti.Size == 8 {
			return "float64"
		}
		return "float32"
	case runtime.KindHalf:
		return "uint16"
	case runtime.KindChar:
		return "int8"
	case runtime.KindSigned:
		return fmt.Sprintf("int%d", ti.Size*8)
	case runtime.KindUnsigned:
		return fmt.Sprintf("uint%d", ti.Size*8)
	case runtime.KindVector:
		elem := goType(vectorElemC(ti))
		if elem == "any" {
			return fmt.Sprintf("[%d]byte", ti.Size)
		}
		return fmt.Sprintf("[%d]%s", ti.Len, elem)
	}
	return "any"
}

func vectorElemC(ti runtime.TypeInfo) string {
	switch {
	case ti.Elem == runtime.KindFloat && ti.Size/ti.Len == 8:
		return "double"
	case ti.Elem == runtime.KindFloat:
		return "float"
	case ti.Elem == runtime.KindSigned && ti.Size/ti.Len == 8:
		return "long long"
	case ti.Elem == runtime.KindSigned:
		return "int"
	case ti.Elem == runtime.KindUnsigned && ti.Size/ti.Len == 8:
		return "unsigned long long"
	case ti.Elem == runtime.KindUnsigned:
		return "unsigned int"
	}
	return ""
}

// defaultTypeName names the kernels' type after the file, with a Kernels
// suffix unless the name already ends in it: saxpy.cu gives SaxpyKernels,
// kernels.cu gives Kernels (so LoadKernels, not LoadKernelsKernels).
func defaultTypeName(source string) string {
	base := baseName(source)
	for _, ext := range []string{".cu", ".cuh"} {
		base = strings.TrimSuffix(base, ext)
	}
	name := exported(base)
	if strings.HasSuffix(name, "Kernels") {
		return name
	}
	if strings.HasSuffix(name, "Kernel") {
		return name + "s"
	}
	return name + "Kernels"
}

// reservedParams are the launcher's own parameter names.
var reservedParams = map[string]bool{"grid": true, "block": true, "shared": true, "r": true, "opts": true, "k": true}

func renameReason(c string) string {
	if token.Lookup(c).IsKeyword() {
		return "a Go keyword"
	}
	return "the launcher's own parameter"
}

func goParamName(c string, i int) string {
	n := c
	if n == "" || strings.HasPrefix(n, "slate_p") {
		n = fmt.Sprintf("arg%d", i)
	}
	if token.Lookup(n).IsKeyword() || reservedParams[n] {
		n += "_"
	}
	return n
}

func baseName(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

// exported turns snake_case or lowerCamel into an exported Go name.
func exported(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '_' || r == '-' || r == '.' || r == ':' {
			up = true
			continue
		}
		if up {
			b.WriteRune(unicode.ToUpper(r))
			up = false
		} else {
			b.WriteRune(r)
		}
	}
	out := b.String()
	if out == "" || !unicode.IsLetter(rune(out[0])) {
		out = "K" + out
	}
	return out
}

func unexported(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// goString quotes src as raw strings, joined around any backquote, so the
// embedded CUDA stays readable in the generated file; carriage returns
// force an interpreted string.
func goString(src string) string {
	if strings.Contains(src, "\r") {
		return strconv.Quote(src)
	}
	parts := strings.Split(src, "`")
	for i, p := range parts {
		parts[i] = "`" + p + "`"
	}
	return strings.Join(parts, " + \"`\" + ")
}
