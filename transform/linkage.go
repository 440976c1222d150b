package transform

import (
	"fmt"
	"strings"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/parser"
)

// Kernels launched from other files (the usual layout of a project: the
// kernel defined in k.cu, declared in k.cuh, launched from main.cu).
//
// The launcher of a kernel with external linkage defined in a .cu file has
// external linkage too, and every file of the run that declares the kernel
// (a prototype) declares its launcher right after it. A launch in another
// file is rewritten only where the launcher is visible: the file defines or
// declares the kernel, or includes a file of the run that does (a header
// defining a template kernel defines its launcher). The CLI works this out
// across the files of a run (Options.OtherKernels, OtherLaunchers).

// ExternalLauncher reports whether k's launcher has external linkage: k is
// not a template, not static, not in an anonymous namespace or a class, has
// no default arguments, and is defined in a .cu file (a kernel defined in a
// header is compiled in every file that includes it).
func ExternalLauncher(a *Analysis, k *KernelInfo) bool {
	fn := k.Func
	if fn.IsTemplate() || fn.Static || fn.Class != "" || !strings.HasSuffix(a.File.Name, ".cu") {
		return false
	}
	for _, ns := range fn.Namespace {
		if ns == "(anonymous)" {
			return false
		}
	}
	for _, p := range fn.Params {
		if p.Default != "" {
			return false
		}
	}
	return true
}

// LauncherDecl is the declaration of k's external launcher, to be placed
// where k is declared (in k's namespace).
func LauncherDecl(a *Analysis, k *KernelInfo) string {
	_, _, launcher, _ := kernelParams(a.File, k.Func)
	params := ""
	if len(launcher) > 0 {
		params = ", " + strings.Join(launcher, ", ")
	}
	return fmt.Sprintf("void %s__slate_launch(dim3 slate_grid, dim3 slate_block, size_t slate_shmem, cudaStream_t slate_stream%s);",
		k.Func.Name, params)
}

// kernelPrototype is a declaration `__global__ void k(...);` at namespace
// scope.
type kernelPrototype struct {
	QualifiedName string
	Span          parser.Span
}

// KernelPrototypes returns the qualified names of the kernels this file
// declares without defining them.
func KernelPrototypes(a *Analysis) []string {
	var out []string
	for _, p := range a.kernelPrototypes() {
		out = append(out, p.QualifiedName)
	}
	return out
}

func (a *Analysis) kernelPrototypes() []kernelPrototype {
	f := a.File
	var out []kernelPrototype
	var walk func(items []parser.TopItem, ns []string)
	walk = func(items []parser.TopItem, ns []string) {
		for _, it := range items {
			switch it := it.(type) {
			case *parser.Namespace:
				name := strings.Join(it.Name, "::")
				if name == "" {
					name = "(anonymous)"
				}
				walk(it.Items, append(append([]string(nil), ns...), name))
			case *parser.LinkageBlock:
				walk(it.Items, ns)
			case *parser.Opaque:
				toks := tokensOf(f, it.Span())
				if len(toks) == 0 || toks[len(toks)-1].text != ";" {
					continue
				}
				global := false
				for i, tk := range toks {
					if tk.text == "__global__" {
						global = true
					}
					if tk.text == "{" || tk.text == "=" {
						break // a definition or a variable, not a prototype
					}
					if global && tk.Kind == parser.Ident && i+1 < len(toks) && toks[i+1].text == "(" &&
						(i == 0 || toks[i-1].text != "::") && !strings.HasPrefix(tk.text, "__") {
						q := tk.text
						if len(ns) > 0 {
							q = strings.Join(ns, "::") + "::" + q
						}
						out = append(out, kernelPrototype{QualifiedName: q, Span: it.Span()})
						break
					}
				}
			}
		}
	}
	walk(f.Items, nil)
	return out
}

// declaresLaunchers reports whether this file declares a kernel whose
// launcher declaration it must carry.
func (t *transformer) declaresLaunchers() bool {
	for _, p := range t.a.kernelPrototypes() {
		if _, ok := t.opts.OtherLaunchers[p.QualifiedName]; ok {
			return true
		}
	}
	return false
}

// declareLaunchers puts the declaration of each launcher of
// Options.OtherLaunchers after the kernel's prototype in this file.
func (t *transformer) declareLaunchers() {
	if len(t.opts.OtherLaunchers) == 0 {
		return
	}
	// After the first prototype of each kernel that a build compiles: one
	// per #if branch when the prototypes differ by branch.
	var done []kernelPrototype
	for _, p := range t.a.kernelPrototypes() {
		decl, ok := t.opts.OtherLaunchers[p.QualifiedName]
		if !ok {
			continue
		}
		again := false
		for _, q := range done {
			if q.QualifiedName == p.QualifiedName && !t.a.exclusive(q.Span.Start, p.Span.Start) {
				again = true
			}
		}
		if again {
			continue
		}
		done = append(done, p)
		line, _ := t.a.Lines.Position(p.Span.End)
		text := fmt.Sprintf("\n#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)\n%s\n#endif\n#line %d \"%s\"\n", decl, line, t.lineFile)
		t.edits = append(t.edits, emit.Insert(p.Span.End, text, "launcher declaration"))
	}
}

// noteHiddenLaunches notes the launches left native because the kernel's
// launcher is not visible in this file.
func (t *transformer) noteHiddenLaunches() {
	for _, ls := range t.a.Launches {
		name := strings.TrimPrefix(ls.Kernel, "::")
		for _, q := range t.opts.HiddenKernels {
			if name == q || strings.HasSuffix(q, "::"+name) {
				t.diags = append(t.diags, t.a.at(ls.Span.Start, diag.Note,
					"launch of %s stays native: its launcher is not visible here (transform the header that declares %s in the same run, and include it)", ls.Kernel, q))
				break
			}
		}
	}
}
