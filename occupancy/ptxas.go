package occupancy

import (
	"bufio"
	"regexp"
	"strconv"
	"strings"
)

// Usage is one kernel's resource usage as ptxas reports it.
type Usage struct {
	// Mangled is the entry's symbol; Name its qualified C++ name without
	// template arguments (what Demangle recovers), or the symbol itself for
	// extern "C" kernels.
	Mangled, Name string
	// Template is true when the symbol carries template arguments.
	Template     bool
	Arch         string
	Registers    int
	Barriers     int
	StaticShared int // bytes of static shared memory
	StackFrame   int
	SpillStores  int
	SpillLoads   int
}

var (
	entryRe = regexp.MustCompile(`Compiling entry function '([^']+)' for '([^']+)'`)
	usedRe  = regexp.MustCompile(`Used (\d+) registers`)
	barRe   = regexp.MustCompile(`used (\d+) barriers`)
	smemRe  = regexp.MustCompile(`(\d+) bytes smem`)
	stackRe = regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
)

// ParsePtxas reads the output of `nvcc -Xptxas -v` (or `ptxas -v`) and
// returns the kernels' usage in the order ptxas compiled them.
func ParsePtxas(out string) []Usage {
	var us []Usage
	var cur *Usage
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if m := entryRe.FindStringSubmatch(line); m != nil {
			name, tmpl := Demangle(m[1])
			us = append(us, Usage{Mangled: m[1], Name: name, Template: tmpl, Arch: m[2]})
			cur = &us[len(us)-1]
			continue
		}
		if cur == nil {
			continue
		}
		if m := stackRe.FindStringSubmatch(line); m != nil {
			cur.StackFrame, _ = strconv.Atoi(m[1])
			cur.SpillStores, _ = strconv.Atoi(m[2])
			cur.SpillLoads, _ = strconv.Atoi(m[3])
		}
		if m := usedRe.FindStringSubmatch(line); m != nil {
			cur.Registers, _ = strconv.Atoi(m[1])
			if b := barRe.FindStringSubmatch(line); b != nil {
				cur.Barriers, _ = strconv.Atoi(b[1])
			}
			if s := smemRe.FindStringSubmatch(line); s != nil {
				cur.StaticShared, _ = strconv.Atoi(s[1])
			}
			cur = nil // the usage line ends an entry's report
		}
	}
	return us
}

// Demangle recovers the qualified name of an Itanium-mangled function
// symbol (_Z, optionally a nested N...E name) and whether it has template
// arguments; anonymous namespaces are left out, as code at global scope
// spells the name. A symbol that is not mangled (extern "C") is returned
// as it is.
func Demangle(sym string) (name string, template bool) {
	if !strings.HasPrefix(sym, "_Z") {
		return sym, false
	}
	s := sym[2:]
	nested := strings.HasPrefix(s, "N")
	if nested {
		s = s[1:]
		for len(s) > 0 && (s[0] == 'K' || s[0] == 'V' || s[0] == 'r') {
			s = s[1:] // cv-qualifiers of member functions
		}
	}
	var segs []string
	for len(s) > 0 && s[0] >= '0' && s[0] <= '9' {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		n, err := strconv.Atoi(s[:i])
		if err != nil || i+n > len(s) {
			return sym, false
		}
		seg := s[i : i+n]
		s = s[i+n:]
		if seg != "_GLOBAL__N_1" {
			segs = append(segs, seg)
		}
		if !nested {
			break
		}
	}
	if len(segs) == 0 {
		return sym, false
	}
	return strings.Join(segs, "::"), strings.HasPrefix(s, "I")
}
