package transform

// peelFirst reports whether a kernel's static worker runs its first logical
// block outside its loop (slate_static_loop's kPeel), at the price of a
// second copy of the body in the worker's code.
//
// Inside the worker loop the compiler does not runtime-unroll the kernel's
// own loops whose trip count depends on blockIdx or gridDim (grid-stride
// loops, rows of a CSR matrix): the count is not invariant in the enclosing
// loop. A kernel with such loops, run with a grid of one wave, then loses
// its memory-level parallelism (a two-pass reduction ran 3.2x slower), and
// the peeled copy gets it back. Every other kernel is better off with one
// copy: a program's first launch fetches each copy's instructions cold, and
// two copies cost a single-launch GEMM 7-15% (the second wave runs the second
// copy).
//
// The test is conservative: a loop whose header names blockIdx, gridDim or
// a local computed from them (transitively), a helper that reads them, or a
// macro that does, peels; macros that read only threadIdx or blockDim do not.
func peelFirst(a *Analysis, k *KernelInfo) bool {
	if len(k.IndexHelpers) > 0 {
		return true
	}
	for _, u := range k.AllUses {
		// A macro's or grid group's read of the block index may hide in a
		// loop header the token scan below cannot see; a macro that reads
		// only threadIdx or blockDim (a lane id, a block size) changes
		// nothing in the worker loop and costs a second copy of the body
		// for nothing (HeCBench's layernorm: 64 registers peeled, 44 not).
		if u.Via != "" && (u.Name == "blockIdx" || u.Name == "gridDim") {
			return true
		}
	}
	if len(k.AllUses) == 0 {
		return false // the body never reads blockIdx or gridDim
	}
	f := k.Func
	file := a.File
	if k.FuncInfo.File != nil {
		file = k.FuncInfo.File
	}
	var toks []string
	for _, t := range file.Toks {
		if t.Kind.IsTrivia() || int(t.Off) < f.BodySpan.Start || int(t.End) > f.BodySpan.End {
			continue
		}
		toks = append(toks, file.TokenText(t))
	}
	return indexDependentLoop(toks)
}

// indexDependentLoop reports whether a body's tokens hold a for or while
// header that names blockIdx, gridDim or a variable assigned from them.
func indexDependentLoop(toks []string) bool {
	tainted := map[string]bool{"blockIdx": true, "gridDim": true}
	// Assignments and initialisations `x = e`, `x += e`: x is tainted when
	// e names a tainted identifier. To a fixed point.
	for changed := true; changed; {
		changed = false
		for i := 0; i+1 < len(toks); i++ {
			if !isIdent(toks[i]) || tainted[toks[i]] || !isAssignOp(toks[i+1]) {
				continue
			}
			depth := 0
			for j := i + 2; j < len(toks); j++ {
				s := toks[j]
				if depth == 0 && (s == ";" || s == "," || s == ")" || s == "}" || s == "{") {
					break
				}
				switch s {
				case "(", "[", "{":
					depth++
				case ")", "]", "}":
					depth--
				}
				if tainted[s] {
					tainted[toks[i]] = true
					changed = true
					break
				}
			}
		}
	}
	for i := 0; i+1 < len(toks); i++ {
		if (toks[i] != "for" && toks[i] != "while") || toks[i+1] != "(" {
			continue
		}
		depth := 0
		for j := i + 1; j < len(toks); j++ {
			switch toks[j] {
			case "(":
				depth++
			case ")":
				depth--
			}
			if depth == 0 {
				break
			}
			if tainted[toks[j]] {
				return true
			}
		}
	}
	return false
}

func isIdent(s string) bool {
	if s == "" || !(s[0] == '_' || s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	switch s {
	case "return", "if", "else", "for", "while", "do", "switch", "case":
		return false
	}
	return true
}

// isAssignOp: =, +=, -=, *=, /=, %=, &=, |=, ^=, <<=, >>= (not ==, <=, >=, !=).
func isAssignOp(s string) bool {
	switch s {
	case "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=":
		return true
	}
	return false
}
