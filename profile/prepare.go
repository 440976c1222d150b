package profile

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/runtime"
	"github.com/slatec/slatec/transform"
)

// Prepared is a kernel ready to be compiled and launched as a persistent
// worker: the NVRTC-compilable persistent form of its file and what the
// runtime needs to find and call its worker.
type Prepared struct {
	// Name and QualifiedName are the kernel's (ns::triad for a kernel in
	// a namespace).
	Name, QualifiedName string
	// File is the base name of the source file, for NVRTC's diagnostics.
	File string
	// Source is the persistent form with host code fenced off
	// (transform.Options.DeviceOnly).
	Source string
	// Worker is the worker's name expression for NVRTC, e.g. triad__slate
	// or ns::triad__slate; Native the kernel's own (triad, ns::triad),
	// which the source keeps.
	Worker, Native string
	// Layout is the kernel's original parameter list, as the runtime binds
	// it (Module.Kernel).
	Layout runtime.ParamLayout
	// Diags are the transform's warnings and notes.
	Diags diag.List
}

// ErrRefused is returned (wrapped) by Prepare when the transform refuses
// the kernel; the diagnostics say why.
var ErrRefused = errors.New("the kernel cannot be made persistent")

// KernelError means --kernel does not name one kernel of the file that
// can be profiled: unknown, ambiguous, or a template.
type KernelError struct {
	Kernel string
	Msg    string
	// Usage is true when the fix is a different --kernel (an unknown or
	// ambiguous name), false when the file itself is the problem.
	Usage bool
}

func (e *KernelError) Error() string { return fmt.Sprintf("--kernel %s: %s", e.Kernel, e.Msg) }

// Prepare parses and analyses the CUDA file (following #include "..."
// through includeDirs, as slatec transform does) and transforms the named
// kernel alone with DeviceOnly and no launch rewriting: exactly what slatec
// gen embeds, so the profile is of the code an application would run. The
// other kernels of the file are left untouched, so a kernel slatec must
// refuse elsewhere in the file does not stop the profile.
//
// On a parse error it returns the diag.Diagnostic as the error; on a
// refusal, diagnostics with errors and an error wrapping ErrRefused.
func Prepare(file string, src []byte, kernel string, includeDirs []string) (*Prepared, diag.List, error) {
	a, err := transform.Load(file, src, includeDirs)
	if err != nil {
		return nil, nil, err
	}
	// A template kernel is profiled as one instance: reduce_sum<256>.
	lookup, instArgs := kernel, []string(nil)
	if strings.Contains(kernel, "<") {
		name, args, err := transform.ParseInstance(kernel)
		if err != nil {
			return nil, a.Diags, &KernelError{Kernel: kernel, Usage: true, Msg: err.Error()}
		}
		lookup, instArgs = name, args
	}
	var matches []string
	var all []string
	for _, k := range a.Kernels {
		q := k.Func.QualifiedName()
		all = append(all, q)
		if k.Func.Name == lookup || q == lookup {
			matches = append(matches, q)
		}
	}
	switch {
	case len(matches) == 0:
		have := "none"
		if len(all) > 0 {
			have = strings.Join(all, ", ")
		}
		return nil, a.Diags, &KernelError{Kernel: kernel, Usage: true, Msg: fmt.Sprintf("%s has no kernel of that name (kernels: %s)", file, have)}
	case len(matches) > 1:
		if !allSame(matches) {
			return nil, a.Diags, &KernelError{Kernel: kernel, Usage: true, Msg: fmt.Sprintf("ambiguous in %s (%s); give the qualified name", file, strings.Join(matches, ", "))}
		}
		return nil, a.Diags, &KernelError{Kernel: kernel, Msg: fmt.Sprintf("%s defines %d overloads of %s; profile one at a time by wrapping it in a kernel of its own", file, len(matches), matches[0])}
	}
	res, err := transform.Persistent(a, transform.Options{
		Kernels: matches, NoLaunchRewrite: true, DeviceOnly: true,
		// A fixed header (no version) keeps the source, and so the CUBIN
		// cache key, the same across slatec builds.
		Command: "profile --kernel " + matches[0], LineFile: filepath.Base(file),
	})
	if err != nil {
		return nil, a.Diags, err
	}
	if res.Diags.HasErrors() {
		return nil, res.Diags, fmt.Errorf("%s: kernel %s: %w", file, matches[0], ErrRefused)
	}
	var kl *transform.KernelLayout
	for _, l := range res.Kernels {
		if l.QualifiedName == matches[0] {
			kl = l
		}
	}
	if kl == nil {
		return nil, res.Diags, fmt.Errorf("internal error: the transform of %s reported no layout for %s", file, matches[0])
	}
	switch {
	case len(kl.Template) > 0 && instArgs == nil:
		return nil, res.Diags, &KernelError{Kernel: kernel, Usage: true, Msg: fmt.Sprintf("%s is a template (%s); name an instance, such as %s<%s>",
			kl.QualifiedName, strings.Join(kl.Template, ", "), kl.QualifiedName, strings.Join(kl.Template, ", "))}
	case len(kl.Template) == 0 && instArgs != nil:
		return nil, res.Diags, &KernelError{Kernel: kernel, Usage: true, Msg: fmt.Sprintf("%s is not a template", kl.QualifiedName)}
	case len(kl.Template) != len(instArgs):
		return nil, res.Diags, &KernelError{Kernel: kernel, Usage: true, Msg: fmt.Sprintf("%s has %d template parameters (%s), not %d",
			kl.QualifiedName, len(kl.Template), strings.Join(kl.Template, ", "), len(instArgs))}
	}
	p := &Prepared{
		Name: kl.Name, QualifiedName: kl.QualifiedName, File: filepath.Base(file),
		Source: string(res.Output), Worker: kl.WorkerExpr(), Diags: res.Diags,
	}
	p.Native = strings.TrimSuffix(p.Worker, strings.TrimPrefix(kl.Worker, kl.Name))
	var subst map[string]string
	if instArgs != nil {
		subst = map[string]string{}
		for i, tp := range kl.Template {
			subst[tp] = instArgs[i]
		}
		inst := "<" + strings.Join(instArgs, ", ") + ">"
		p.Name, p.QualifiedName, p.Worker, p.Native = kl.Name+inst, kl.QualifiedName+inst, p.Worker+inst, p.Native+inst
	}
	for _, pl := range kl.Params {
		prm := runtime.Param{Name: pl.Name, CType: pl.Type, Size: pl.Size, Align: pl.Align}
		if subst != nil {
			// The instance's types; their sizes from the type table, else
			// from the driver once the instance is loaded.
			prm.CType = transform.SubstituteTemplate(pl.Type, subst)
			prm.Size, prm.Align = 0, 0
			if ti, ok := runtime.CTypeInfo(prm.CType); ok {
				prm.Size, prm.Align = ti.Size, ti.Align
			}
		}
		p.Layout.Params = append(p.Layout.Params, prm)
	}
	return p, res.Diags, nil
}

func allSame(s []string) bool {
	for _, x := range s {
		if x != s[0] {
			return false
		}
	}
	return true
}
