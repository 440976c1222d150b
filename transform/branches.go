package transform

import (
	"strconv"
	"strings"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/parser"
)

// Kernels and launches under #if/#else (issue 14, item 8).
//
// slatec reads every branch of an #if group as one. A kernel defined whole
// inside a branch gets its body function, worker and launcher right after
// it, inside the same branch, so each build keeps exactly the set of the
// definition it compiles; a launch written whole inside a branch is
// rewritten there. What cannot be kept consistent is refused, naming the
// lines: a conditional directive inside a kernel's head (template header,
// qualifiers, parameter list), a body whose #if groups are not complete
// inside its braces (braces split across branches), and a launch with a
// conditional directive between its name and its closing parenthesis.

// conds returns the file's conditional directives (cached).
func (a *Analysis) conds() []parser.CondDirective {
	if a.condDirs == nil {
		a.condDirs = a.File.CondDirectives()
		if a.condDirs == nil {
			a.condDirs = []parser.CondDirective{}
		}
	}
	return a.condDirs
}

// exclusive reports whether no build compiles both offsets x and y.
func (a *Analysis) exclusive(x, y int) bool { return parser.Exclusive(a.conds(), x, y) }

// condsIn returns the conditional directives inside s.
func condsIn(ds []parser.CondDirective, s parser.Span) []parser.CondDirective {
	var out []parser.CondDirective
	for _, d := range ds {
		if d.Span.Start >= s.Start && d.Span.End <= s.End {
			out = append(out, d)
		}
	}
	return out
}

// unbalancedIn returns the first conditional directive inside s whose group
// does not both open and close inside s, or nil.
func unbalancedIn(ds []parser.CondDirective, s parser.Span) *parser.CondDirective {
	in := condsIn(ds, s)
	opened, closed := map[int]bool{}, map[int]bool{}
	for _, d := range in {
		if d.Branch == 0 {
			opened[d.Group] = true
		}
		if d.Branch < 0 {
			closed[d.Group] = true
		}
	}
	for i, d := range in {
		if d.Group < 0 || !opened[d.Group] || !closed[d.Group] {
			return &in[i]
		}
	}
	return nil
}

// headSpan is a function's definition up to its body's opening brace,
// template headers included.
func headSpan(fn *parser.Func) parser.Span {
	s := parser.Span{Start: fn.Def.Span().Start, End: fn.BodySpan.Start}
	if fn.TemplateSpan.End > fn.TemplateSpan.Start && fn.TemplateSpan.Start < s.Start {
		s.Start = fn.TemplateSpan.Start
	}
	return s
}

// branchRefusals refuses kernels whose definitions, helpers or launches a
// conditional directive cuts through.
func (a *Analysis) branchRefusals() {
	ds := a.conds()
	if len(ds) == 0 {
		return
	}
	line := func(f *parser.File, off int) int {
		l, _ := a.posIn(f, parser.Span{Start: off, End: off})
		return l
	}
	checkFunc := func(k *KernelInfo, fi *FuncInfo) {
		fn, f := fi.Func, fi.File
		fds := ds
		if f != a.File {
			fds = f.CondDirectives()
		}
		what := "kernel " + k.Func.Name
		if fn != k.Func {
			what = "helper " + fn.Name + " (called by kernel " + k.Func.Name + ")"
		}
		head := headSpan(fn)
		if in := condsIn(fds, head); len(in) > 0 {
			k.Refusals = append(k.Refusals, a.atIn(f, in[0].Span.Start, diag.Error,
				"the #%s at line %d is inside the head of %s (lines %d-%d): slatec transforms a definition only when its whole head is in one #if branch; write the declaration out in each branch",
				in[0].Name, line(f, in[0].Span.Start), what, line(f, head.Start), line(f, head.End)))
			return
		}
		if fn.BodySpan.End > fn.BodySpan.Start {
			if d := unbalancedIn(fds, fn.BodySpan); d != nil {
				k.Refusals = append(k.Refusals, a.atIn(f, d.Span.Start, diag.Error,
					"the #%s at line %d belongs to an #if group that does not open and close inside the body of %s (lines %d-%d): its braces are split across #if branches; write the whole definition in each branch",
					d.Name, line(f, d.Span.Start), what, line(f, fn.BodySpan.Start), line(f, fn.BodySpan.End)))
			}
		}
	}
	for _, k := range a.Kernels {
		if k.FuncInfo == nil || k.Func.Def == nil {
			continue
		}
		checkFunc(k, k.FuncInfo)
		for _, h := range k.Helpers {
			if h != nil && h.Func != nil && h.Func.Def != nil {
				checkFunc(k, h)
			}
		}
	}
	for _, ls := range a.Launches {
		in := condsIn(ds, ls.Span)
		if len(in) == 0 {
			continue
		}
		name := strings.TrimPrefix(ls.Kernel, "::")
		if i := strings.LastIndex(name, "::"); i >= 0 {
			name = name[i+2:]
		}
		for _, k := range a.Kernels {
			if k.Func.Name != name {
				continue
			}
			// Refused where launches are rewritten (transformer.check).
			k.CutLaunches = append(k.CutLaunches, a.at(in[0].Span.Start, diag.Error,
				"the #%s at line %d is inside the launch of %s at line %d: slatec rewrites a launch only when it is whole in one #if branch; write the launch out in each branch",
				in[0].Name, line(a.File, in[0].Span.Start), ls.Kernel, ls.Line))
		}
	}
}

// splitDef is a kernel definition #if branches split (splitDefinitions).
type splitDef struct {
	name string
	d    diag.Diagnostic
}

// SplitDefinitions returns the errors for the kernel definitions that #if
// branches split, which no run can transform (inspect reports them).
func (a *Analysis) SplitDefinitions() []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, s := range a.splitDefs {
		out = append(out, s.d)
	}
	return out
}

// splitRefusals returns the errors for the split definitions of the
// kernels a run transforms (all unless names selects some).
func (a *Analysis) splitRefusals(names []string, none bool) []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, s := range a.splitDefs {
		take := !none && len(names) == 0
		for _, n := range names {
			if n == s.name || strings.HasSuffix(n, "::"+s.name) {
				take = true
			}
		}
		if take {
			out = append(out, s.d)
		}
	}
	return out
}

// splitDefinitions finds kernel definitions the parser could not read as
// functions because #if branches split them (each branch opens the body,
// one closing brace after #endif): a run that transforms the kernel is
// refused, naming the lines, rather than left with a kernel that is
// silently not transformed.
func (a *Analysis) splitDefinitions() {
	ds := a.conds()
	if len(ds) == 0 {
		return
	}
	var walk func(items []parser.TopItem)
	walk = func(items []parser.TopItem) {
		for _, it := range items {
			switch it := it.(type) {
			case *parser.Namespace:
				walk(it.Items)
			case *parser.LinkageBlock:
				walk(it.Items)
			case *parser.Opaque:
				in := condsIn(ds, it.Span())
				if len(in) == 0 {
					continue
				}
				toks := a.tokens(it.Span())
				for i, tk := range toks {
					if tk.text != "__global__" {
						continue
					}
					// A definition: a '{' comes before any ';' after the name.
					def := false
					for _, n := range toks[i+1:] {
						if n.text == ";" {
							break
						}
						if n.text == "{" {
							def = true
							break
						}
					}
					if !def || inIfZero(ds, int(tk.Off)) || len(condsIn(ds, parser.Span{Start: int(tk.Off), End: it.Span().End})) == 0 {
						continue
					}
					l, _ := a.Lines.Position(int(tk.Off))
					last, _ := a.Lines.Position(it.Span().End)
					var lines []string
					for _, d := range in {
						dl, _ := a.Lines.Position(d.Span.Start)
						lines = append(lines, "#"+d.Name+" at line "+itoa(dl))
					}
					name := ""
					for j := i + 1; j+1 < len(toks) && name == ""; j++ {
						if toks[j].Kind == parser.Ident && toks[j+1].text == "(" && !strings.HasPrefix(toks[j].text, "__") {
							name = toks[j].text
						}
					}
					a.splitDefs = append(a.splitDefs, splitDef{name, a.at(int(tk.Off), diag.Error,
						"the kernel definition at line %d cannot be read as one function: #if branches split it (%s, lines %d-%d); write the whole definition, braces included, in each branch",
						l, strings.Join(lines, ", "), l, last)})
					break
				}
			}
		}
	}
	walk(a.File.Items)
}

func itoa(n int) string { return strconv.Itoa(n) }

// inIfZero reports whether off lies in the first branch of an `#if 0`
// group (text no build compiles).
func inIfZero(ds []parser.CondDirective, off int) bool {
	zero := map[int]bool{}
	for _, d := range ds {
		if d.Name == "if" && d.Branch == 0 {
			if a := strings.TrimSpace(strings.SplitN(strings.SplitN(d.Arg, "//", 2)[0], "/*", 2)[0]); a == "0" || a == "(0)" || a == "false" {
				zero[d.Group] = true
			}
		}
	}
	for _, gb := range parser.BranchPath(ds, off) {
		if zero[gb[0]] && gb[1] == 0 {
			return true
		}
	}
	return false
}
