package transform

import (
	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/parser"
)

// LaunchSite is a host launch `k<<<g, b, shm, stream>>>(args)`, also with
// a qualified name and template arguments: `ns::k<float, 4><<<...>>>(...)`.
type LaunchSite struct {
	Kernel string      `json:"kernel"` // the name as written, qualifiers included
	Span   parser.Span `json:"-"`      // from the name to the closing parenthesis
	Line   int         `json:"line"`
	Col    int         `json:"col"`
	// NameSpan covers the (qualified) name; TemplateArgs the `<...>` after
	// it, empty if none.
	NameSpan     parser.Span   `json:"-"`
	TemplateArgs parser.Span   `json:"-"`
	TemplateText string        `json:"template_args,omitempty"`
	Config       []parser.Span `json:"-"` // grid, block[, shared[, stream]]
	ConfigText   []string      `json:"config"`
	Args         []parser.Span `json:"-"`
	ArgsText     []string      `json:"args"`
	// ArgsSpan is the parenthesised argument list.
	ArgsSpan parser.Span `json:"-"`
	// Func is the function the launch is in ("" at file scope).
	Func string `json:"in_function,omitempty"`
}

// significant returns a file's significant tokens and a function giving
// the text of the i-th ("" out of range): the view the token scans below use.
func significant(f *parser.File) ([]parser.Token, func(i int) string) {
	sig := make([]parser.Token, 0, parser.CountSignificant(f.Toks))
	for _, t := range f.Toks {
		if !t.Kind.IsTrivia() {
			sig = append(sig, t)
		}
	}
	return sig, func(i int) string {
		if i < 0 || i >= len(sig) {
			return ""
		}
		return f.TokenText(sig[i])
	}
}

// hasChevrons reports whether f has a `<<<` token.
func hasChevrons(f *parser.File) bool {
	for _, t := range f.Toks {
		if !t.Kind.IsTrivia() && t.End-t.Off >= 3 && f.TokenText(t) == "<<<" {
			return true
		}
	}
	return false
}

// findLaunches scans the whole token stream for `<<<`.
func findLaunches(f *parser.File, lines *diag.Lines) []*LaunchSite {
	if !hasChevrons(f) {
		return nil // no copy of the tokens of a file without launches
	}
	sig, text := significant(f)
	var out []*LaunchSite
	for i := range sig {
		if text(i) != "<<<" {
			continue
		}
		ls := &LaunchSite{}
		// Back over template arguments, then the qualified name.
		j := i - 1
		if text(j) == ">" || text(j) == ">>" {
			depth := 0
			k := j
			for ; k >= 0; k-- {
				switch text(k) {
				case ">":
					depth++
				case ">>":
					depth += 2
				case "<":
					depth--
				}
				if depth == 0 {
					break
				}
			}
			if k < 0 {
				continue
			}
			ls.TemplateArgs = parser.Span{Start: int(sig[k].Off), End: int(sig[j].End)}
			ls.TemplateText = f.Text(ls.TemplateArgs)
			j = k - 1
		}
		if j < 0 || sig[j].Kind != parser.Ident {
			continue
		}
		nameEnd := int(sig[j].End)
		for j >= 2 && text(j-1) == "::" && sig[j-2].Kind == parser.Ident {
			j -= 2
		}
		if j >= 1 && text(j-1) == "::" { // ::k<<<
			j--
		}
		ls.NameSpan = parser.Span{Start: int(sig[j].Off), End: nameEnd}
		ls.Kernel = f.Text(ls.NameSpan)
		// Forward over the configuration to the matching >>>.
		k := i + 1
		depth, argStart := 0, k
		ok := false
		for ; k < len(sig); k++ {
			switch text(k) {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			case ",":
				if depth == 0 {
					if argStart < k {
						ls.Config = append(ls.Config, parser.Span{Start: int(sig[argStart].Off), End: int(sig[k-1].End)})
					}
					argStart = k + 1
				}
			case ">>>":
				if depth == 0 {
					ok = true
				}
			}
			if ok || depth < 0 {
				break
			}
		}
		if !ok || argStart >= k {
			continue
		}
		ls.Config = append(ls.Config, parser.Span{Start: int(sig[argStart].Off), End: int(sig[k-1].End)})
		// The call arguments.
		k++
		if text(k) != "(" {
			continue
		}
		open := k
		depth, argStart = 0, k+1
		for ; k < len(sig); k++ {
			switch text(k) {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
				if depth == 0 {
					if argStart < k {
						ls.Args = append(ls.Args, parser.Span{Start: int(sig[argStart].Off), End: int(sig[k-1].End)})
					}
					goto done
				}
			case ",":
				if depth == 1 {
					if argStart < k { // an empty argument is not valid C++; never a negative span
						ls.Args = append(ls.Args, parser.Span{Start: int(sig[argStart].Off), End: int(sig[k-1].End)})
					}
					argStart = k + 1
				}
			}
		}
		continue
	done:
		ls.ArgsSpan = parser.Span{Start: int(sig[open].Off), End: int(sig[k].End)}
		ls.Span = parser.Span{Start: ls.NameSpan.Start, End: ls.ArgsSpan.End}
		ls.Line, ls.Col = lines.Position(ls.Span.Start)
		for _, c := range ls.Config {
			ls.ConfigText = append(ls.ConfigText, f.Text(c))
		}
		for _, a := range ls.Args {
			ls.ArgsText = append(ls.ArgsText, f.Text(a))
		}
		for _, fn := range f.Funcs {
			if fn.BodySpan.Contains(ls.Span) {
				ls.Func = fn.Name
			}
		}
		out = append(out, ls)
	}
	return out
}
