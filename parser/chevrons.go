package parser

// Launches may be written with spaces inside the chevrons, which nvcc
// accepts as `<<` `<` and `>>` `>` (not `< <<` or `> > >`):
// `k << < grid, block >> > (args)`, `k<< <g, b>> >(a)`. Such a pair
// separated only by whitespace is merged into one Punct token whose span includes the spaces (the file
// still round-trips byte for byte) and which TokenText and the grammars
// read as `<<<` or `>>>` (see chevronText). An opening run is merged unless
// it follows `operator` (a friend `operator<< <T>`); a closing run only as
// the close of a launch opened before it, at bracket depth 0, followed by
// `(`; so `A<B<C<int>> > x` stays template closers.
//
// The merged stream is written over toks (it is never longer) and the
// token texts are compared as bytes, so that lexing a big file does not
// copy its tokens or allocate a string per token here.
func mergeChevrons(src []byte, toks []Token) []Token {
	text := func(t Token) []byte { return src[t.Off:t.End] }
	// pair returns the end index (exclusive) of `cc` Space* `c` starting
	// at i (the cc already checked), or -1.
	pair := func(i int, c string) int {
		j := i + 1
		if j < len(toks) && toks[j].Kind != Space && toks[j].Off > toks[i].End {
			// Spaces left out (lex's noSpace): the gap is the space.
			if toks[j].Kind == Punct && string(text(toks[j])) == c {
				return j + 1
			}
			return -1
		}
		if j >= len(toks) || toks[j].Kind != Space {
			return -1 // `<<<` and `>>>` are lexed whole already
		}
		for j < len(toks) && toks[j].Kind == Space {
			j++
		}
		if j < len(toks) && toks[j].Kind == Punct && string(text(toks[j])) == c {
			return j + 1
		}
		return -1
	}
	nextSigIs := func(i int, v string) bool {
		for ; i < len(toks); i++ {
			if !toks[i].Kind.IsTrivia() {
				return string(text(toks[i])) == v
			}
		}
		return v == ""
	}
	out := toks[:0] // out[k] is written only after toks[k] was read
	open, depth, afterOperator := false, 0, false
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Kind.IsTrivia() {
			out = append(out, t)
			continue
		}
		x := text(t)
		switch {
		case !open && string(x) == "<<" && t.Kind == Punct && !afterOperator:
			if end := pair(i, "<"); end > 0 {
				out = append(out, Token{Kind: Punct, Off: t.Off, End: toks[end-1].End})
				i, open, depth, afterOperator = end-1, true, 0, false
				continue
			}
		case !open && string(x) == "<<<" && t.Kind == Punct:
			open, depth = true, 0
		case open && t.Kind == Punct:
			switch string(x) {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			case ";":
				open = false
			case ">>>":
				if depth == 0 {
					open = false
				}
			case ">>":
				if depth != 0 {
					break
				}
				if end := pair(i, ">"); end > 0 && nextSigIs(end, "(") {
					out = append(out, Token{Kind: Punct, Off: t.Off, End: toks[end-1].End})
					i, open, afterOperator = end-1, false, false
					continue
				}
			}
			if depth < 0 {
				open = false
			}
		}
		afterOperator = string(x) == "operator"
		out = append(out, t)
	}
	return out
}

// chevronText returns the text a token stands for: `<<<` or `>>>` for a
// merged launch chevron written with spaces, else its source text.
func chevronText(src string) string {
	if len(src) > 3 && (src[0] == '<' || src[0] == '>') {
		return src[:1] + src[:1] + src[:1]
	}
	return src
}
