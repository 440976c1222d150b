package parser

import (
	"strings"
)

// Macro is a #define.
type Macro struct {
	Name   string
	Params []string // nil for object-like macros
	IsFunc bool
	Span   Span // the whole directive
	Body   Span // the replacement list
	// BodyIdents are the identifiers in the replacement list, in order.
	BodyIdents []string
	// Pastes is true when the replacement list uses ## (token pasting).
	Pastes bool
}

// Include is an #include directive.
type Include struct {
	Path   string
	System bool // <...> rather than "..."
	Span   Span
}

// scanDirectives records the file's macros and includes.
func (f *File) scanDirectives(text string) {
	for _, t := range f.Toks {
		if t.Kind != Directive {
			continue
		}
		d := text[t.Off:t.End]
		// Skip '#' and blanks; a directive name follows.
		i := 1
		for i < len(d) && (d[i] == ' ' || d[i] == '\t') {
			i++
		}
		j := i
		for j < len(d) && isIdentChar(d[j]) {
			j++
		}
		switch d[i:j] {
		case "define":
			if m := parseDefine(d, j, int(t.Off)); m != nil {
				m.Span = Span{int(t.Off), int(t.End)}
				f.Macros = append(f.Macros, m)
			}
		case "include", "include_next":
			rest := strings.TrimSpace(d[j:])
			if len(rest) >= 2 && (rest[0] == '"' || rest[0] == '<') {
				closer := byte('"')
				if rest[0] == '<' {
					closer = '>'
				}
				if k := strings.IndexByte(rest[1:], closer); k >= 0 {
					f.Includes = append(f.Includes, &Include{Path: rest[1 : k+1], System: rest[0] == '<',
						Span: Span{int(t.Off), int(t.End)}})
				}
			}
		}
	}
}

// parseDefine reads `NAME`, `NAME(params)` and the replacement list of a
// #define whose keyword ends at byte i of directive d starting at base.
func parseDefine(d string, i, base int) *Macro {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t') {
		i++
	}
	j := i
	for j < len(d) && isIdentChar(d[j]) {
		j++
	}
	if j == i {
		return nil
	}
	m := &Macro{Name: d[i:j]}
	if j < len(d) && d[j] == '(' {
		m.IsFunc = true
		k := strings.IndexByte(d[j:], ')')
		if k < 0 {
			return nil
		}
		for _, p := range strings.Split(d[j+1:j+k], ",") {
			p = strings.TrimSpace(strings.ReplaceAll(p, "\\\n", ""))
			if p != "" {
				m.Params = append(m.Params, p)
			}
		}
		j += k + 1
	}
	m.Body = Span{base + j, base + len(d)}
	m.Pastes = strings.Contains(d[j:], "##")
	for _, t := range Lex([]byte(d[j:])) {
		if t.Kind == Ident {
			m.BodyIdents = append(m.BodyIdents, d[j+int(t.Off):j+int(t.End)])
		}
	}
	return m
}

// builtinTypeNames are type names from CUDA and C/C++ headers that bodies
// commonly use unqualified.
var builtinTypeNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`
		size_t ssize_t ptrdiff_t intptr_t uintptr_t int8_t int16_t int32_t int64_t
		uint8_t uint16_t uint32_t uint64_t uint ushort ulong uchar
		dim3 half half2 __half __half2 __nv_bfloat16 __nv_bfloat162 nv_bfloat16 nv_bfloat162
		__nv_fp8_e4m3 __nv_fp8_e5m2 cuComplex cuFloatComplex cuDoubleComplex
		cudaStream_t cudaEvent_t cudaError_t cudaTextureObject_t cudaSurfaceObject_t
		curandState curandStateXORWOW curandStatePhilox4_32_10 curandStateMRG32k3a
		curandStateSobol32 curandStateScrambledSobol32`) {
		m[n] = true
	}
	for _, base := range []string{"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
		"longlong", "ulonglong", "float", "double"} {
		for _, n := range []string{"1", "2", "3", "4"} {
			m[base+n] = true
		}
	}
	return m
}()

// collectTypeNames finds identifiers that name types: builtin CUDA types,
// names ending in _t, and the file's typedefs, using-aliases, tags and
// template type parameters. Type-ness is file-global, which is wrong only
// for files that reuse a type's name as a variable.
func collectTypeNames(text string, toks []Token) map[string]bool {
	names := map[string]bool{}
	for n := range builtinTypeNames {
		names[n] = true
	}
	sig := make([]Token, 0, CountSignificant(toks))
	for _, t := range toks {
		if !t.Kind.IsTrivia() {
			sig = append(sig, t)
		}
	}
	val := func(i int) string {
		if i < 0 || i >= len(sig) {
			return ""
		}
		return text[sig[i].Off:sig[i].End]
	}
	for i, t := range sig {
		v := val(i)
		switch t.Kind {
		case Ident:
			if strings.HasSuffix(v, "_t") && len(v) > 2 {
				names[v] = true
			}
		case Keyword:
			switch v {
			case "struct", "class", "union", "enum", "typename":
				k := i + 1
				if v == "enum" && (val(k) == "class" || val(k) == "struct") {
					k++
				}
				if val(k) == "..." {
					k++
				}
				if k < len(sig) && sig[k].Kind == Ident && val(k+1) != "::" {
					names[val(k)] = true
				}
			case "using":
				if i+2 < len(sig) && sig[i+1].Kind == Ident && val(i+2) == "=" {
					names[val(i+1)] = true
				}
			case "typedef":
				// The typedef name is the last identifier before the ';' at
				// depth 0, or the one in `(*name)` for function pointers.
				depth, last := 0, ""
				for k := i + 1; k < len(sig); k++ {
					s := val(k)
					switch s {
					case "(", "[", "{":
						if s == "(" && val(k+1) == "*" && k+2 < len(sig) && sig[k+2].Kind == Ident {
							last = val(k + 2)
						}
						depth++
					case ")", "]", "}":
						depth--
					}
					if depth == 0 && sig[k].Kind == Ident {
						last = s
					}
					if depth <= 0 && s == ";" {
						break
					}
				}
				if last != "" {
					names[last] = true
				}
			}
		}
	}
	return names
}
