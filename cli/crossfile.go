package cli

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/slatec/slatec/transform"
)

// runKernel is a kernel selected in one file of a multi-file run.
type runKernel struct {
	name   string // qualified name
	file   int    // the defining input
	header bool   // defined in a header: its launcher is defined there too
	decl   string // its external launcher's declaration, "" if none
}

// runKernels lists the selected kernels of every loaded input.
func runKernels(names []string, as []*transform.Analysis, selected func(k *transform.KernelInfo) bool) []runKernel {
	var out []runKernel
	for i, a := range as {
		if a == nil {
			continue
		}
		header := !strings.HasSuffix(names[i], ".cu")
		for _, k := range a.Kernels {
			if !selected(k) {
				continue
			}
			rk := runKernel{name: k.Func.QualifiedName(), file: i, header: header}
			if transform.ExternalLauncher(a, k) {
				rk.decl = transform.LauncherDecl(a, k)
			}
			out = append(out, rk)
		}
	}
	return out
}

// crossFile works out, for input i, which kernels of the other inputs have
// launchers it can see (its launches of them are rewritten), which it
// cannot (they stay native, with a note), and the launcher declarations it
// carries after its prototypes of those kernels. A launcher is visible where
// the file includes (directly or not) the file that defines the kernel (a
// header, or a .cu included whole), or a file of the run that declares a
// kernel whose launcher has external linkage (that file gets the launcher's
// declaration).
func crossFile(i int, names []string, as []*transform.Analysis, kernels []runKernel) (visible, hidden []string, decls map[string]string) {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	seen := map[string]bool{abs(names[i]): true}
	for _, d := range as[i].Deps {
		seen[abs(d.Name)] = true
	}
	protos := make([]map[string]bool, len(as))
	for p, a := range as {
		protos[p] = map[string]bool{}
		if a != nil {
			for _, q := range transform.KernelPrototypes(a) {
				protos[p][q] = true
			}
		}
	}
	decls = map[string]string{}
	for _, k := range kernels {
		if k.file == i {
			continue
		}
		if k.decl != "" && !strings.Contains(decls[k.name]+"\n", k.decl+"\n") {
			// A kernel defined in several #if branches has a launcher per
			// definition; each is declared (overloads).
			decls[k.name] = strings.TrimPrefix(decls[k.name]+"\n"+k.decl, "\n")
		}
		// The defining file included here (a header, or a .cu included
		// as a unity build) brings its launcher along.
		ok := seen[abs(names[k.file])]
		if !ok && k.decl != "" {
			for p := range as {
				if p != k.file && protos[p][k.name] && seen[abs(names[p])] {
					ok = true
				}
			}
		}
		if ok {
			visible = append(visible, k.name)
		} else {
			hidden = append(hidden, k.name)
		}
	}
	return visible, hidden, decls
}

// exportedClones works out, for each input, the helpers (functions and
// class members) that selected kernels of other inputs call through it
// and that read the block index: their persistent copies go into that
// input's output (transform.Options.ExportClones), where its classes are.
// Only headers of the run are followed into (transform.Analysis.RunDeps).
func exportedClones(names []string, as []*transform.Analysis, selected func(k *transform.KernelInfo) bool) [][]string {
	index := map[string]int{}
	for i, n := range names {
		if abs, err := filepath.Abs(n); err == nil {
			index[abs] = i
		}
	}
	out := make([][]string, len(names))
	seen := make([]map[string]bool, len(names))
	for _, a := range as {
		if a == nil {
			continue
		}
		for _, k := range a.Kernels {
			if !selected(k) {
				continue
			}
			for _, h := range k.IndexHelpers {
				if !a.RunDeps[h.File] {
					continue
				}
				abs, err := filepath.Abs(h.File.Name)
				if err != nil {
					continue
				}
				i, ok := index[abs]
				if !ok {
					continue
				}
				if seen[i] == nil {
					seen[i] = map[string]bool{}
				}
				if n := h.Func.Name; !seen[i][n] {
					seen[i][n] = true
					out[i] = append(out[i], n)
				}
			}
		}
	}
	for i := range out {
		sort.Strings(out[i])
	}
	return out
}
