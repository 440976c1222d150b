package parser

// Lex splits src into tokens covering every byte exactly once, in order.
// It never fails: bytes that start no token become Invalid tokens, and an
// unterminated comment or literal runs to the end of its line or file. The
// parser reports those; the printer still round-trips them.
func Lex(src []byte) []Token { return lex(src, false) }

// lex is Lex; with noSpace it leaves out the Space tokens (the gaps
// between the tokens are then whitespace): ParseOptions.DropSpace.
func lex(src []byte, noSpace bool) []Token {
	lx := scanner{src: src, lineStart: true, noSpace: noSpace}
	lx.toks = make([]Token, 0, tokenEstimate(src, noSpace))
	for lx.pos < len(src) {
		lx.next()
	}
	return mergeChevrons(src, lx.toks)
}

// tokenEstimate is how many tokens src likely has. A typical CUDA file has
// about one token per 4 bytes, trivia included; a big file's own density is
// taken from its first 64 KiB (lexed twice), so that its tokens are not
// copied over and over as the slice grows, nor held with much spare room.
func tokenEstimate(src []byte, noSpace bool) int {
	n := len(src)/4 + 16
	const sample = 64 << 10
	if len(src) < 4*sample {
		return n
	}
	if noSpace {
		n = len(src)/6 + 16
	}
	lx := scanner{src: src[:sample], lineStart: true, noSpace: noSpace, toks: make([]Token, 0, sample/2)}
	for lx.pos < sample {
		lx.next()
	}
	if est := int(float64(len(lx.toks)) * float64(len(src)) / sample * 1.03); est > n {
		n = est + 16
	}
	return n
}

type scanner struct {
	src       []byte
	pos       int
	toks      []Token
	lineStart bool // only whitespace since the last newline: a '#' starts a directive
	noSpace   bool // Space tokens are not kept
}

func (lx *scanner) emit(k Kind, start int) {
	if k == Space && lx.noSpace {
		return
	}
	lx.toks = append(lx.toks, Token{Kind: k, Off: int32(start), End: int32(lx.pos)})
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (lx *scanner) peek(i int) byte {
	if lx.pos+i < len(lx.src) {
		return lx.src[lx.pos+i]
	}
	return 0
}

func (lx *scanner) next() {
	start := lx.pos
	c := lx.src[lx.pos]
	switch {
	case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		for lx.pos < len(lx.src) {
			c := lx.src[lx.pos]
			if c == '\n' {
				lx.lineStart = true
			} else if c != ' ' && c != '\t' && c != '\r' && c != '\f' && c != '\v' {
				break
			}
			lx.pos++
		}
		lx.emit(Space, start)
		return
	case c == '\\' && (lx.peek(1) == '\n' || (lx.peek(1) == '\r' && lx.peek(2) == '\n')):
		// A line splice between tokens: keep it as whitespace.
		lx.pos += 2
		if lx.src[lx.pos-1] == '\r' {
			lx.pos++
		}
		lx.emit(Space, start)
		return
	case c == '/' && lx.peek(1) == '/':
		lx.lineComment()
		lx.emit(Comment, start)
		return
	case c == '/' && lx.peek(1) == '*':
		lx.blockComment()
		lx.emit(Comment, start)
		return
	case c == '#' && lx.lineStart:
		lx.directive()
		lx.emit(Directive, start)
		lx.lineStart = true
		return
	}
	lx.lineStart = false
	switch {
	case isIdentStart(c):
		lx.pos++
		for lx.pos < len(lx.src) && isIdentChar(lx.src[lx.pos]) {
			lx.pos++
		}
		// String and char prefixes: u8"..", L'x', R"(...)", u8R"d(...)d".
		if lx.pos < len(lx.src) {
			word := string(lx.src[start:lx.pos])
			q := lx.src[lx.pos]
			switch {
			case q == '"' && (word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR"):
				lx.rawString()
				lx.emit(String, start)
				return
			case (q == '"' || q == '\'') && (word == "u8" || word == "u" || word == "U" || word == "L"):
				lx.quoted(q)
				if q == '"' {
					lx.emit(String, start)
				} else {
					lx.emit(Char, start)
				}
				return
			}
			if keywords[word] {
				lx.emit(Keyword, start)
				return
			}
		} else if keywords[string(lx.src[start:lx.pos])] {
			lx.emit(Keyword, start)
			return
		}
		lx.emit(Ident, start)
	case isDigit(c) || (c == '.' && isDigit(lx.peek(1))):
		lx.number()
		lx.emit(Number, start)
	case c == '"':
		lx.quoted('"')
		lx.emit(String, start)
	case c == '\'':
		lx.quoted('\'')
		lx.emit(Char, start)
	default:
		if n := punctLen(lx.src[lx.pos:]); n > 0 {
			lx.pos += n
			lx.emit(Punct, start)
			return
		}
		lx.pos++
		lx.emit(Invalid, start)
	}
}

func (lx *scanner) lineComment() {
	// A backslash at the end of a // comment continues it on the next line.
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		if c == '\n' {
			if lx.pos > 0 && lx.src[lx.pos-1] == '\\' || (lx.pos > 1 && lx.src[lx.pos-1] == '\r' && lx.src[lx.pos-2] == '\\') {
				lx.pos++
				continue
			}
			return
		}
		lx.pos++
	}
}

func (lx *scanner) blockComment() {
	lx.pos += 2
	for lx.pos < len(lx.src) {
		if lx.src[lx.pos] == '*' && lx.peek(1) == '/' {
			lx.pos += 2
			return
		}
		lx.pos++
	}
}

// directive consumes a preprocessor line: up to a newline that is not
// spliced by a backslash and not inside a block comment.
func (lx *scanner) directive() {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == '\n':
			return
		case c == '\\' && lx.peek(1) == '\n':
			lx.pos += 2
		case c == '\\' && lx.peek(1) == '\r' && lx.peek(2) == '\n':
			lx.pos += 3
		case c == '/' && lx.peek(1) == '*':
			lx.blockComment()
		case c == '/' && lx.peek(1) == '/':
			lx.lineComment()
			return
		case c == '"' || c == '\'':
			lx.quoted(c)
		default:
			lx.pos++
		}
	}
}

// quoted consumes a "..." or '...' literal starting at lx.pos (at or after a
// prefix). An unterminated literal stops at the end of the line.
func (lx *scanner) quoted(q byte) {
	for lx.pos < len(lx.src) && lx.src[lx.pos] != q {
		lx.pos++ // skip the prefix, if any
	}
	lx.pos++
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch c {
		case '\\':
			lx.pos += 2
			if lx.pos > len(lx.src) {
				lx.pos = len(lx.src)
			}
			continue
		case q:
			lx.pos++
			return
		case '\n':
			return
		}
		lx.pos++
	}
}

// rawString consumes R"delim( ... )delim"; lx.pos is at the opening quote.
func (lx *scanner) rawString() {
	lx.pos++ // "
	d := lx.pos
	for lx.pos < len(lx.src) && lx.src[lx.pos] != '(' && lx.src[lx.pos] != '\n' && lx.pos-d <= 16 {
		lx.pos++
	}
	if lx.pos >= len(lx.src) || lx.src[lx.pos] != '(' {
		return // malformed: the parser reports it
	}
	term := ")" + string(lx.src[d:lx.pos]) + "\""
	lx.pos++
	for lx.pos < len(lx.src) {
		if lx.src[lx.pos] == ')' && len(lx.src)-lx.pos >= len(term) && string(lx.src[lx.pos:lx.pos+len(term)]) == term {
			lx.pos += len(term)
			return
		}
		lx.pos++
	}
}

// number consumes a pp-number: digits, letters, '.', digit separators, and
// exponent signs after e, E, p or P.
func (lx *scanner) number() {
	lx.pos++
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case (c == '+' || c == '-') && (lx.src[lx.pos-1]|0x20 == 'e' || lx.src[lx.pos-1]|0x20 == 'p'):
			lx.pos++
		case c == '\'' && lx.pos+1 < len(lx.src) && isIdentChar(lx.src[lx.pos+1]):
			lx.pos++
		case isIdentChar(c) || c == '.':
			lx.pos++
		default:
			return
		}
	}
}

// puncts lists operators longest first within each leading byte.
var puncts = [256][]string{}

func init() {
	all := []string{
		"<<<", ">>>", "<<=", ">>=", "->*", "...", "<=>",
		"::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
		"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", ".*",
		"{", "}", "[", "]", "(", ")", ";", ":", ",", ".", "?", "~", "!", "+", "-",
		"*", "/", "%", "^", "&", "|", "=", "<", ">", "#",
	}
	for _, p := range all { // already longest-first per prefix
		puncts[p[0]] = append(puncts[p[0]], p)
	}
}

func punctLen(b []byte) int {
	for _, p := range puncts[b[0]] {
		if len(b) >= len(p) && string(b[:len(p)]) == p {
			return len(p)
		}
	}
	return 0
}
