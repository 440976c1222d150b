package cli

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/slatec/slatec/transform"
)

// macroFlags are -D and -U, as the compiler takes them. slatec does not
// expand macros; it uses them only to decide which #include "..." lines a
// build reaches (transform.LoadOptions).
type macroFlags struct {
	defines   []string
	undefines []string
}

const macroFlagsHelp = `-D NAME[=VALUE] and -U NAME (repeatable) name the macros the build defines
and undefines, as the compiler's flags do. slatec does not expand macros or
choose #if branches for the transform (every branch is read and transformed);
it uses them only to follow #include "..." lines: it evaluates #ifdef,
#ifndef, #if defined(NAME), #if NAME, #if 0/1, !, &&, || and integer
comparisons of macros given with -D or defined earlier in the file (an
include guard counts as taken); anything else is "maybe taken". An include in
a branch known not taken is neither followed nor reported missing; one in a
"maybe" branch is followed if found and, if missing while the branch depends
on a macro not given with -D/-U, only noted (kernels calling functions slatec
cannot see are then not refused for it).`

func (m *macroFlags) register(f *pflag.FlagSet) {
	f.StringArrayVarP(&m.defines, "define", "D", nil, "a macro the build defines: NAME or NAME=VALUE (repeatable; decides which #include lines are followed)")
	f.StringArrayVarP(&m.undefines, "undefine", "U", nil, "a macro the build undefines (repeatable)")
}

// loadOptions checks the names and returns the Load options.
func (m macroFlags) loadOptions(includes []string) (transform.LoadOptions, error) {
	opts := transform.LoadOptions{IncludeDirs: includes}
	for _, d := range m.defines {
		name, value, _ := strings.Cut(d, "=")
		if !isMacroName(name) {
			return opts, usagef("-D %s: %q is not a macro name", d, name)
		}
		if opts.Defines == nil {
			opts.Defines = map[string]string{}
		}
		opts.Defines[name] = value
	}
	for _, u := range m.undefines {
		if !isMacroName(u) {
			return opts, usagef("-U %s: not a macro name", u)
		}
		// The compiler applies -D and -U in order; the last word on a name wins.
		delete(opts.Defines, u)
		opts.Undefines = append(opts.Undefines, u)
	}
	return opts, nil
}

// args renders the flags for the output's header.
func (m macroFlags) args() []string {
	var out []string
	for _, d := range m.defines {
		out = append(out, "-D", d)
	}
	for _, u := range m.undefines {
		out = append(out, "-U", u)
	}
	return out
}

func isMacroName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range s {
		if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}
