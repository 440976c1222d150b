package transform

import (
	"errors"
	"os"
	"path/filepath"

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
	f, err := parser.ParseFile(name, src)
	if err != nil {
		return nil, err
	}
	var deps []*parser.File
	var missing []*parser.Include
	seen := map[string]bool{}
	if abs, err := filepath.Abs(name); err == nil {
		seen[abs] = true
	}
	via := map[*parser.File]*parser.Include{}
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
		for _, inc := range f.Includes {
			if inc.System {
				continue
			}
			path, ok := findInclude(inc.Path, append([]string{dir}, includeDirs...))
			if !ok {
				if f == deps0(f, deps) {
					missing = append(missing, inc)
				}
				continue
			}
			abs, _ := filepath.Abs(path)
			if seen[abs] {
				continue
			}
			seen[abs] = true
			dsrc, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			df, err := parser.ParseFile(path, dsrc)
			if err != nil {
				if headerErr == nil {
					headerErr = err
				}
				continue
			}
			deps = append(deps, df)
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
	a := Analyze(f, deps...)
	a.Missing = missing
	a.Via = via
	for _, inc := range missing {
		a.Diags = append(a.Diags, a.at(inc.Span.Start, diag.Note,
			"#include \"%s\" not found next to the file or in -I directories; kernels calling functions slatec cannot see are refused", inc.Path))
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
