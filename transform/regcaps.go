package transform

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/slatec/slatec/parser"
)

// regCap caps the worker's registers at its kernel's register allocation on
// each architecture of Options.RegCaps, so that the worker keeps the
// kernel's blocks per SM: the worker loop keeps a little more live across
// the body than the kernel does (the logical id, values the compiler hoists
// out of the loop), and on a kernel at a register-allocation boundary that
// costs a block per SM. The cap is a macro defined per __CUDA_ARCH__ (other
// architectures, and the host pass, get no cap):
//
//   - a kernel with __launch_bounds__(T[, B]) gets __launch_bounds__(T,
//     max(B, SLATE_MIN_BLOCKS(T, R))), the blocks of T threads that fit an
//     SM at R registers a thread (CUDA allows no __maxnreg__ beside
//     __launch_bounds__);
//   - any other kernel gets __maxnreg__(R);
//
// with R the kernel's registers rounded up to the allocation unit (8), and
// at least 32 (for a template kernel, per instance, through a trait
// specialised for each instance ptxas reported): at 32 a thread, every thread an SM can hold fits, so a lower
// cap would only cause spills. A kernel with its own __maxnreg__ keeps it.
func (t *transformer) regCap(k *KernelInfo, v *kernelView) {
	fn := k.Func
	if len(t.opts.RegCaps) == 0 || fn.MaxNReg != nil {
		return
	}
	archs := make([]string, 0, len(t.opts.RegCaps))
	for a := range t.opts.RegCaps {
		archs = append(archs, a)
	}
	sort.Strings(archs)
	q := fn.QualifiedName()
	macro := "SLATE_REGCAP_" + cIdent(strings.ReplaceAll(q, "::", "_"))
	var lb []string
	if fn.LaunchBounds != nil {
		for _, a := range fn.LaunchBounds.Args {
			lb = append(lb, tokenText(t.a.File, a.Span()))
		}
	}
	var b, traits strings.Builder
	for _, arch := range archs {
		regs, ok := t.opts.RegCaps[arch][q]
		cc, okArch := archValue(arch)
		if !ok || !okArch || regs <= 0 {
			continue
		}
		r := max((regs+7)/8*8, 32)
		cap := fmt.Sprint(r)
		// A template kernel: a trait gives each instance ptxas compiled its
		// own cap (the largest for the others).
		if inst := t.opts.RegCapInstances[arch][q]; fn.IsTemplate() && len(inst) > 0 && plainTemplate(fn) {
			trait := fmt.Sprintf("slate_regcap_%d_%s", cc, cIdent(strings.ReplaceAll(q, "::", "_")))
			fmt.Fprintf(&traits, "%s struct %s { enum { value = %d }; };\n", strings.TrimSpace(v.TemplateHeader), trait, r)
			args := make([]string, 0, len(inst))
			for a := range inst {
				args = append(args, a)
			}
			sort.Strings(args)
			for _, a := range args {
				fmt.Fprintf(&traits, "template <> struct %s<%s> { enum { value = %d }; };\n", trait, a, max((inst[a]+7)/8*8, 32))
			}
			cap = fmt.Sprintf("(%s%s::value)", trait, v.TemplateArgs)
		}
		attr := fmt.Sprintf("__maxnreg__(%s)", cap)
		if len(lb) > 0 {
			minBlocks := fmt.Sprintf("SLATE_MIN_BLOCKS(%s, %s)", lb[0], cap)
			if len(lb) > 1 {
				minBlocks = fmt.Sprintf("SLATE_MAX(%s, %s)", lb[1], minBlocks)
			}
			attr = fmt.Sprintf("__launch_bounds__(%s, %s)", lb[0], minBlocks)
		}
		directive := "#elif"
		if b.Len() == 0 {
			directive = "#if"
		}
		fmt.Fprintf(&b, "%s defined(__CUDA_ARCH__) && __CUDA_ARCH__ == %d // %s: %d registers (ptxas)\n%s#define %s %s\n",
			directive, cc, arch, regs, traits.String(), macro, attr)
		traits.Reset()
	}
	if b.Len() == 0 {
		return
	}
	fallback := strings.TrimSpace(v.LaunchBounds)
	fmt.Fprintf(&b, "#else\n#define %s %s\n#endif", macro, fallback)
	v.RegCap = "#undef " + macro + "\n" + b.String()
	v.LaunchBounds = macro + " "
}

// plainTemplate reports whether a template kernel's parameters can be
// specialised from ptxas's instance names: no packs, no template template
// parameters.
func plainTemplate(fn *parser.Func) bool {
	for _, tp := range fn.Template {
		if tp.Pack || tp.Name == "" || strings.HasPrefix(strings.TrimSpace(tp.Text), "template") {
			return false
		}
	}
	return true
}

// archValue maps "sm_90", "sm_90a", "compute_80" to __CUDA_ARCH__ (900, 800).
func archValue(arch string) (int, bool) {
	s := arch
	if i := strings.LastIndexByte(s, '_'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimRight(s, "abf")
	n, err := strconv.Atoi(s)
	if err != nil || n < 10 {
		return 0, false
	}
	return n * 10, true
}
