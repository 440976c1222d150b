package transform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/parser"
)

// maxIncludeDepth bounds the #include "..." chain Load follows.
const maxIncludeDepth = 16

// Load parses a file and, transitively, the files it includes with
// #include "...", found next to the including file or in includeDirs, and
// analyses them together: helpers defined in project headers are seen.
// System includes (<...>) are not followed. A parse failure of the main
// file or of a header it includes is returned as a diag.Diagnostic error.
func Load(name string, src []byte, includeDirs []string) (*Analysis, error) {
	return LoadWith(name, src, LoadOptions{IncludeDirs: includeDirs})
}

// LoadOptions are Load's inputs beyond the file.
type LoadOptions struct {
	// IncludeDirs are searched for #include "..." after the including
	// file's directory (-I).
	IncludeDirs []string
	// Defines are the macros the build defines (-D NAME[=VALUE]; an empty
	// value means 1) and Undefines those it undefines (-U NAME). They
	// decide, with the #define lines of each file, which #include lines a
	// build reaches (parser.File.IncludeConditions): an include in a branch
	// known not taken is neither followed nor reported missing; one in a
	// branch that depends on a macro nobody defined is followed if found
	// and, if missing, only noted.
	Defines   map[string]string
	Undefines []string
	// DropBodies is for callers that only report (slatec inspect): the
	// bodies of functions defined at namespace scope are parsed one at a
	// time while they are analysed and not kept (FuncDef.Body stays nil,
	// FuncDef.Deferred is set), so that a file of thousands of kernels
	// never holds all their trees at once. The facts of the Analysis are
	// the same; what needs the trees (the transforms) cannot run on it.
	// The files' texts then share the sources' memory (parser.ParseOptions
	// ShareSource): src must not change while the Analysis is in use; and
	// their Toks have no whitespace tokens (DropSpace) and their FuncDefs
	// no Head (DropHeads).
	DropBodies bool
	// Inputs are the files transformed in the same run (paths as given;
	// compared absolute). An included header among them is rewritten too,
	// so the member functions of its classes are followed like the main
	// file's, and the persistent copies of its helpers go into its own
	// output (Analysis.RunDeps).
	Inputs []string
}

// LoadWith is Load with the build's macros.
func LoadWith(name string, src []byte, opts LoadOptions) (*Analysis, error) {
	includeDirs := opts.IncludeDirs
	popts := parser.ParseOptions{DeferBodies: opts.DropBodies, ShareSource: opts.DropBodies, DropSpace: opts.DropBodies, DropHeads: opts.DropBodies}
	f, err := parser.ParseFileWith(name, src, popts)
	if err != nil {
		return nil, err
	}
	var deps []*parser.File
	var missing []*parser.Include
	var maybeMissing []*parser.Include
	maybeIf := map[*parser.Include]parser.IncludeCond{}
	seen := map[string]bool{}
	if abs, err := filepath.Abs(name); err == nil {
		seen[abs] = true
	}
	via := map[*parser.File]*parser.Include{}
	includeFiles := map[*parser.Include]*parser.File{}
	byAbs := map[string]*parser.File{}
	// A header slatec cannot read as a whole is an error, like the main
	// file: skipping it would hide the helpers and macros it defines.
	var headerErr error
	var follow func(f *parser.File, depth int)
	follow = func(f *parser.File, depth int) {
		if depth > maxIncludeDepth {
			return
		}
		dir := "."
		if f.Name != "<stdin>" {
			dir = filepath.Dir(f.Name)
		}
		conds := f.IncludeConditions(opts.Defines, opts.Undefines)
		for _, inc := range f.Includes {
			if inc.System {
				continue
			}
			c, ok := conds[inc]
			if ok && c.Taken == parser.No {
				continue // the build does not reach it
			}
			path, ok := findInclude(inc.Path, append([]string{dir}, includeDirs...))
			if !ok {
				if f == deps0(f, deps) {
					if c.Taken == parser.Maybe && len(c.Unknown) > 0 {
						maybeMissing = append(maybeMissing, inc)
						maybeIf[inc] = c
					} else {
						missing = append(missing, inc)
					}
				}
				continue
			}
			abs, _ := filepath.Abs(path)
			if seen[abs] {
				if df := byAbs[abs]; df != nil {
					includeFiles[inc] = df
				}
				continue
			}
			seen[abs] = true
			dsrc, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			df, err := parser.ParseFileWith(path, dsrc, popts)
			if err != nil {
				if headerErr == nil {
					headerErr = err
				}
				continue
			}
			deps = append(deps, df)
			byAbs[abs], includeFiles[inc] = df, df
			if root := via[f]; root != nil {
				via[df] = root
			} else {
				via[df] = inc // f is the main file
			}
			follow(df, depth+1)
		}
	}
	follow(f, 0)
	if headerErr != nil {
		return nil, headerErr
	}
	var runDeps map[*parser.File]bool
	if len(opts.Inputs) > 0 {
		in := map[string]bool{}
		for _, p := range opts.Inputs {
			if abs, err := filepath.Abs(p); err == nil {
				in[abs] = true
			}
		}
		for abs, df := range byAbs {
			if in[abs] {
				if runDeps == nil {
					runDeps = map[*parser.File]bool{}
				}
				runDeps[df] = true
			}
		}
	}
	a := analyze(f, deps, runDeps)
	a.Missing = missing
	a.Via = via
	a.IncludeFiles = includeFiles
	for _, inc := range missing {
		a.Diags = append(a.Diags, a.at(inc.Span.Start, diag.Note,
			"#include \"%s\" not found next to the file or in -I directories; kernels calling functions slatec cannot see are refused", inc.Path))
	}
	for _, inc := range maybeMissing {
		c := maybeIf[inc]
		where := ""
		if c.If.End > c.If.Start {
			l, _ := a.Lines.Position(c.If.Start)
			where = fmt.Sprintf(" at line %d", l)
		}
		a.Diags = append(a.Diags, a.at(inc.Span.Start, diag.Note,
			"#include \"%s\" not found; it is in the #if branch%s, which depends on %s (not given with -D or -U): not a reason to refuse kernels (pass -D/-U to settle it)",
			inc.Path, where, strings.Join(c.Unknown, ", ")))
	}
	a.refuseInvisibleCalls()
	return a, nil
}

// deps0 returns f: a hook that keeps missing-include notes to the main
// file's own includes (a missing include deep in a header is that header's
// business, not something slatec can report usefully).
func deps0(f *parser.File, deps []*parser.File) *parser.File {
	for _, d := range deps {
		if d == f {
			return nil
		}
	}
	return f
}

func findInclude(path string, dirs []string) (string, bool) {
	if filepath.IsAbs(path) {
		_, err := os.Stat(path)
		return path, err == nil
	}
	for _, d := range dirs {
		p := filepath.Join(d, path)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, true
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			continue
		}
	}
	return "", false
}

// refuseInvisibleCalls refuses kernels that call functions slatec cannot
// see while some quoted include was not found: such a function could read
// blockIdx or synchronise, and transforming around it could be wrong.
func (a *Analysis) refuseInvisibleCalls() {
	if len(a.Missing) == 0 {
		return
	}
	for _, k := range a.Kernels {
		for _, name := range k.Unresolved {
			k.Refusals = append(k.Refusals, a.at(k.Func.NameSpan.Start, diag.Error,
				"kernel %s calls %s, which is not defined in this file or in the headers slatec found (#include \"%s\" is missing; pass -I)",
				k.Func.Name, name, a.Missing[0].Path))
		}
	}
}
