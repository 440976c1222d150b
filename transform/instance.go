package transform

import (
	"errors"
	"strings"
	"unicode"
)

// ParseInstance reads a template kernel instance as users spell it,
// "name<arg, ...>" (reduce_sum<256>, scale<float>, ns::f<T<int>, 4>):
// the arguments are split at top-level commas, since an argument may hold
// <...>, (...) or [...] itself.
func ParseInstance(text string) (name string, args []string, err error) {
	t := strings.TrimSpace(text)
	lt := strings.IndexByte(t, '<')
	if lt <= 0 || !strings.HasSuffix(t, ">") {
		return "", nil, errors.New("want KERNEL<ARGS>, such as scale<float>")
	}
	name = strings.TrimSpace(t[:lt])
	depth, start := 0, lt+1
	body := t[:len(t)-1]
	for i := lt + 1; i < len(body); i++ {
		switch body[i] {
		case '<', '(', '[':
			depth++
		case '>', ')', ']':
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(body[start:i]))
				start = i + 1
			}
		}
	}
	args = append(args, strings.TrimSpace(body[start:]))
	for _, a := range args {
		if a == "" || depth != 0 {
			return "", nil, errors.New("an empty or unbalanced template argument")
		}
	}
	return name, args, nil
}

// SubstituteTemplate replaces whole identifiers of ctype by their template
// arguments: "const T*" with T=float gives "const float*".
func SubstituteTemplate(ctype string, subst map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(ctype); {
		c := rune(ctype[i])
		if unicode.IsLetter(c) || c == '_' {
			j := i
			for j < len(ctype) && (unicode.IsLetter(rune(ctype[j])) || unicode.IsDigit(rune(ctype[j])) || ctype[j] == '_') {
				j++
			}
			id := ctype[i:j]
			if r, ok := subst[id]; ok {
				id = r
			}
			b.WriteString(id)
			i = j
			continue
		}
		b.WriteByte(ctype[i])
		i++
	}
	return b.String()
}
