package parser

import (
	"sort"
	"strconv"
	"strings"
)

// Conditional compilation. slatec reads every branch of an #if group as
// one (README, "Supported CUDA"); CondDirectives lists the group structure
// so that the transform can keep what it emits inside the branch of what it
// transforms, and IncludeConditions evaluates simple conditions to decide
// which #include directives a build can reach.

// CondDirective is one #if, #ifdef, #ifndef, #elif, #elifdef, #elifndef,
// #else or #endif line.
type CondDirective struct {
	Span   Span
	Name   string // "if", "ifdef", ..., "endif"
	Arg    string // the condition or macro name, trimmed
	Group  int    // the #if group, numbered in file order; -1 for a stray #elif/#else/#endif
	Branch int    // 0 for the opening directive, 1, 2, ... for each #elif/#else, -1 for #endif
}

// IsCondDirective reports whether a directive name opens, continues or
// closes an #if group.
func IsCondDirective(name string) bool {
	switch name {
	case "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif":
		return true
	}
	return false
}

// DirectiveName splits `#  if defined(X)` into "if" and "defined(X)".
func DirectiveName(d string) (string, string) { return directiveName(d) }

// CondDirectives returns the file's conditional directives in order.
func (f *File) CondDirectives() []CondDirective {
	var out []CondDirective
	type open struct{ group, branch int }
	var stack []open
	groups := 0
	for _, t := range f.Toks {
		if t.Kind != Directive {
			continue
		}
		name, arg := directiveName(f.text[t.Off:t.End])
		if !IsCondDirective(name) {
			continue
		}
		d := CondDirective{Span: Span{int(t.Off), int(t.End)}, Name: name, Arg: arg, Group: -1}
		switch name {
		case "if", "ifdef", "ifndef":
			stack = append(stack, open{groups, 0})
			d.Group, d.Branch = groups, 0
			groups++
		case "endif":
			d.Branch = -1
			if n := len(stack); n > 0 {
				d.Group = stack[n-1].group
				stack = stack[:n-1]
			}
		default:
			if n := len(stack); n > 0 {
				stack[n-1].branch++
				d.Group, d.Branch = stack[n-1].group, stack[n-1].branch
			}
		}
		out = append(out, d)
	}
	return out
}

// BranchPath returns, for byte offset off, the (group, branch) pairs of the
// branches that enclose it, outermost first.
func BranchPath(ds []CondDirective, off int) [][2]int {
	var path [][2]int
	for _, d := range ds {
		if d.Span.Start >= off {
			break
		}
		switch {
		case d.Group < 0:
		case d.Branch == 0:
			path = append(path, [2]int{d.Group, 0})
		case d.Branch < 0:
			if n := len(path); n > 0 {
				path = path[:n-1]
			}
		default:
			if n := len(path); n > 0 {
				path[n-1][1] = d.Branch
			}
		}
	}
	return path
}

// Exclusive reports whether offsets x and y lie in different branches of
// one #if group, so that no build compiles both.
func Exclusive(ds []CondDirective, x, y int) bool {
	px, py := BranchPath(ds, x), BranchPath(ds, y)
	for i := 0; i < len(px) && i < len(py); i++ {
		if px[i][0] != py[i][0] {
			return false
		}
		if px[i][1] != py[i][1] {
			return true
		}
	}
	return false
}

// Tri is a three-valued truth: whether a branch is taken.
type Tri int8

// Truth values of a condition.
const (
	No Tri = iota
	Yes
	Maybe
)

func (t Tri) String() string { return [...]string{"no", "yes", "maybe"}[t] }

func triAnd(a, b Tri) Tri {
	if a == No || b == No {
		return No
	}
	if a == Yes && b == Yes {
		return Yes
	}
	return Maybe
}

func triNot(a Tri) Tri {
	switch a {
	case Yes:
		return No
	case No:
		return Yes
	}
	return Maybe
}

// IncludeCond says whether a build reaches an #include: Taken is No when
// the include sits in a branch that is known not taken, Maybe when the
// branch depends on something slatec does not know; Unknown names the
// macros that neither -D/-U nor an earlier #define settled, and Line the
// innermost #if directive the include depends on (0 if none).
type IncludeCond struct {
	Taken   Tri
	Unknown []string
	If      Span
}

// macroState is what the evaluator knows of a macro.
type macroState struct {
	known   bool // defined or undefined for sure
	defined bool
	value   string
}

// IncludeConditions evaluates the conditions around each #include of the
// file, with the macros the user defined (-D NAME=VALUE; the value is "1"
// when empty) and undefined (-U NAME), and the #define/#undef lines of the
// file that a build reaches for sure. Conditions slatec evaluates:
// #ifdef/#ifndef NAME, defined(NAME), defined NAME, a macro's value, integer
// literals, true/false, !, &&, ||, parentheses and the comparisons == != <
// <= > >=. Anything else, and a macro nobody defined or undefined, is
// "maybe". An #ifndef X followed at once by #define X (an include guard)
// is taken.
func (f *File) IncludeConditions(defines map[string]string, undefines []string) map[*Include]IncludeCond {
	env := map[string]macroState{}
	for n, v := range defines {
		if v == "" {
			v = "1"
		}
		env[n] = macroState{known: true, defined: true, value: v}
	}
	for _, n := range undefines {
		env[n] = macroState{known: true}
	}
	type frame struct {
		parent  Tri // the enclosing region
		notPrev Tri // no earlier branch of the group was taken
		cur     Tri // the current branch (with parent)
		unknown []string
		dir     Span
	}
	var stack []frame
	here := func() Tri {
		if len(stack) == 0 {
			return Yes
		}
		return stack[len(stack)-1].cur
	}
	out := map[*Include]IncludeCond{}
	incAt := map[int]*Include{}
	for _, inc := range f.Includes {
		incAt[inc.Span.Start] = inc
	}
	var dirs []Token
	for _, t := range f.Toks {
		if t.Kind == Directive {
			dirs = append(dirs, t)
		}
	}
	for i, t := range dirs {
		name, arg := directiveName(f.text[t.Off:t.End])
		arg = stripDirectiveComments(arg)
		cond := func() (Tri, []string) {
			switch name {
			case "ifdef", "elifdef", "ifndef", "elifndef":
				n := firstIdent(arg)
				v, unk := evalDefined(env, n)
				if strings.HasSuffix(name, "ndef") {
					v = triNot(v)
					// An include guard: #ifndef X then #define X.
					if v == Maybe && i+1 < len(dirs) {
						if dn, da := directiveName(f.text[dirs[i+1].Off:dirs[i+1].End]); dn == "define" && firstIdent(da) == n {
							return Yes, nil
						}
					}
				}
				return v, unk
			}
			return evalCond(env, arg)
		}
		switch name {
		case "if", "ifdef", "ifndef":
			parent := here()
			v, unk := cond()
			stack = append(stack, frame{parent: parent, notPrev: triNot(v), cur: triAnd(parent, v), unknown: unk, dir: Span{int(t.Off), int(t.End)}})
		case "elif", "elifdef", "elifndef", "else":
			if n := len(stack); n > 0 {
				fr := &stack[n-1]
				v, unk := Yes, []string(nil)
				if name != "else" {
					v, unk = cond()
				}
				b := triAnd(fr.notPrev, v)
				fr.notPrev = triAnd(fr.notPrev, triNot(v))
				fr.cur = triAnd(fr.parent, b)
				fr.unknown = append(fr.unknown, unk...)
				fr.dir = Span{int(t.Off), int(t.End)}
			}
		case "endif":
			if n := len(stack); n > 0 {
				stack = stack[:n-1]
			}
		case "define", "undef":
			n := firstIdent(arg)
			if n == "" {
				continue
			}
			switch here() {
			case Yes:
				st := macroState{known: true, defined: name == "define"}
				if st.defined {
					rest := strings.TrimSpace(arg[len(n):])
					if strings.HasPrefix(rest, "(") && strings.HasPrefix(arg[len(n):], "(") {
						rest = "" // a function-like macro: defined, no usable value
					}
					st.value = rest
				}
				env[n] = st
			case Maybe:
				env[n] = macroState{}
			}
		case "include", "include_next":
			inc := incAt[int(t.Off)]
			if inc == nil {
				continue
			}
			c := IncludeCond{Taken: here()}
			if c.Taken == Maybe {
				seen := map[string]bool{}
				for _, fr := range stack {
					for _, u := range fr.unknown {
						if !seen[u] {
							seen[u] = true
							c.Unknown = append(c.Unknown, u)
						}
					}
					if fr.cur == Maybe {
						c.If = fr.dir
					}
				}
				sort.Strings(c.Unknown)
			}
			out[inc] = c
		}
	}
	return out
}

func stripDirectiveComments(s string) string {
	if k := strings.Index(s, "//"); k >= 0 {
		s = s[:k]
	}
	if k := strings.Index(s, "/*"); k >= 0 {
		s = s[:k]
	}
	return strings.TrimSpace(strings.ReplaceAll(s, "\\\n", " "))
}

func firstIdent(s string) string {
	s = strings.TrimSpace(s)
	j := 0
	for j < len(s) && isIdentChar(s[j]) {
		j++
	}
	if j == 0 || isDigit(s[0]) {
		return ""
	}
	return s[:j]
}

func evalDefined(env map[string]macroState, n string) (Tri, []string) {
	st, ok := env[n]
	if !ok || !st.known {
		return Maybe, []string{n}
	}
	if st.defined {
		return Yes, nil
	}
	return No, nil
}

// condValue is an evaluated #if operand: an integer, or unknown.
type condValue struct {
	v     int64
	known bool
}

// condParser evaluates one #if expression over the lexed tokens.
type condParser struct {
	toks    []string
	i       int
	env     map[string]macroState
	unknown []string
	bad     bool
	depth   int
}

func evalCond(env map[string]macroState, arg string) (Tri, []string) {
	p := &condParser{env: env}
	p.toks = condTokens(arg)
	v := p.or()
	if p.bad || p.i != len(p.toks) {
		return Maybe, p.unknown
	}
	if !v.known {
		return Maybe, p.unknown
	}
	if v.v != 0 {
		return Yes, nil
	}
	return No, nil
}

func condTokens(s string) []string {
	var out []string
	for _, t := range Lex([]byte(s)) {
		if t.Kind.IsTrivia() || t.Kind == EOF {
			continue
		}
		out = append(out, s[t.Off:t.End])
	}
	return out
}

func (p *condParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *condParser) next() string {
	s := p.peek()
	p.i++
	return s
}

func (p *condParser) or() condValue {
	l := p.and()
	for p.peek() == "||" {
		p.next()
		r := p.and()
		switch {
		case l.known && l.v != 0, r.known && r.v != 0:
			l = condValue{1, true}
		case l.known && r.known:
			l = condValue{0, true}
		default:
			l = condValue{}
		}
	}
	return l
}

func (p *condParser) and() condValue {
	l := p.cmp()
	for p.peek() == "&&" {
		p.next()
		r := p.cmp()
		switch {
		case l.known && l.v == 0, r.known && r.v == 0:
			l = condValue{0, true}
		case l.known && r.known:
			l = condValue{1, true}
		default:
			l = condValue{}
		}
	}
	return l
}

func (p *condParser) cmp() condValue {
	l := p.unary()
	for {
		op := p.peek()
		switch op {
		case "==", "!=", "<", "<=", ">", ">=":
		default:
			return l
		}
		p.next()
		r := p.unary()
		if !l.known || !r.known {
			l = condValue{}
			continue
		}
		var b bool
		switch op {
		case "==":
			b = l.v == r.v
		case "!=":
			b = l.v != r.v
		case "<":
			b = l.v < r.v
		case "<=":
			b = l.v <= r.v
		case ">":
			b = l.v > r.v
		case ">=":
			b = l.v >= r.v
		}
		l = condValue{0, true}
		if b {
			l.v = 1
		}
	}
}

func (p *condParser) unary() condValue {
	switch p.peek() {
	case "!":
		p.next()
		v := p.unary()
		if !v.known {
			return v
		}
		if v.v == 0 {
			return condValue{1, true}
		}
		return condValue{0, true}
	case "-":
		p.next()
		v := p.unary()
		v.v = -v.v
		return v
	case "(":
		p.next()
		v := p.or()
		if p.next() != ")" {
			p.bad = true
		}
		return v
	case "defined":
		p.next()
		paren := p.peek() == "("
		if paren {
			p.next()
		}
		n := p.next()
		if paren && p.next() != ")" {
			p.bad = true
		}
		t, unk := evalDefined(p.env, n)
		p.unknown = append(p.unknown, unk...)
		switch t {
		case Yes:
			return condValue{1, true}
		case No:
			return condValue{0, true}
		}
		return condValue{}
	case "true":
		p.next()
		return condValue{1, true}
	case "false":
		p.next()
		return condValue{0, true}
	}
	s := p.next()
	if s == "" {
		p.bad = true
		return condValue{}
	}
	if isDigit(s[0]) {
		n, err := strconv.ParseInt(strings.TrimRight(strings.ReplaceAll(s, "'", ""), "uUlL"), 0, 64)
		if err != nil {
			p.bad = true
			return condValue{}
		}
		return condValue{n, true}
	}
	if !isIdentStart(s[0]) {
		p.bad = true
		return condValue{}
	}
	if p.peek() == "(" {
		p.bad = true // a function-like macro or __has_include: not evaluated
		return condValue{}
	}
	st, ok := p.env[s]
	if !ok || !st.known {
		p.unknown = append(p.unknown, s)
		return condValue{}
	}
	if !st.defined {
		return condValue{0, true} // an undefined name is 0
	}
	if p.depth > 8 {
		p.bad = true
		return condValue{}
	}
	sub := &condParser{env: p.env, toks: condTokens(st.value), depth: p.depth + 1}
	v := sub.or()
	p.unknown = append(p.unknown, sub.unknown...)
	if sub.bad || sub.i != len(sub.toks) {
		return condValue{}
	}
	return v
}
