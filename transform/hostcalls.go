package transform

import (
	"strings"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/parser"
)

// KernelCall is a host runtime call that takes a kernel as an argument:
// `cudaFuncSetAttribute(k<T>, attr, v)`, `cudaFuncGetAttributes(&a, k)`,
// `cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, (void*)k, b, s)`.
// The transform rewrites it to a slate:: helper that also reaches the
// kernel's worker (templates/prelude.cu): setters apply to both, queries
// answer for the kernel and load the worker, so that the worker's first-use
// cost lands where the program configures or queries its kernel.
type KernelCall struct {
	API      string      // the runtime function
	NameSpan parser.Span // the function name, with a leading "::" if any
	Arg      parser.Span // the argument that names the kernel
	Line     int
	// Names are the (qualified) identifiers in Arg with their spans; the
	// transformer picks the one that names a transformed kernel.
	Names []kernelName
	Func  *parser.Func // the function the call is in (nil at file scope)
}

type kernelName struct {
	Text string      // as written, qualifiers included
	Span parser.Span // of the whole qualified name
}

// kernelAPIs maps each runtime call to its helper and the index of its
// kernel argument.
var kernelAPIs = map[string]struct {
	helper string
	arg    int
}{
	"cudaFuncSetAttribute":                                   {"func_set_attribute", 0},
	"cudaFuncSetCacheConfig":                                 {"func_set_cache_config", 0},
	"cudaFuncSetSharedMemConfig":                             {"func_set_shared_mem_config", 0},
	"cudaFuncGetAttributes":                                  {"func_get_attributes", 1},
	"cudaOccupancyMaxActiveBlocksPerMultiprocessor":          {"occupancy_max_active_blocks_per_multiprocessor", 1},
	"cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags": {"occupancy_max_active_blocks_per_multiprocessor_with_flags", 1},
	"cudaOccupancyMaxPotentialBlockSize":                     {"occupancy_max_potential_block_size", 2},
	"cudaOccupancyMaxPotentialBlockSizeWithFlags":            {"occupancy_max_potential_block_size_with_flags", 2},
	"cudaOccupancyAvailableDynamicSMemPerBlock":              {"occupancy_available_dynamic_smem_per_block", 1},
}

// findKernelCalls scans the token stream for the calls of kernelAPIs.
func findKernelCalls(f *parser.File, lines *diag.Lines) []*KernelCall {
	sig, text := significant(f)
	var out []*KernelCall
	for i := range sig {
		api, ok := kernelAPIs[text(i)]
		if !ok {
			continue
		}
		start, _, args, ok := runtimeCall(sig, text, i)
		if !ok || api.arg >= len(args) || args[api.arg][0] >= args[api.arg][1] {
			continue
		}
		a := args[api.arg]
		kc := &KernelCall{
			API:      text(i),
			NameSpan: parser.Span{Start: int(sig[start].Off), End: int(sig[i].End)},
			Arg:      parser.Span{Start: int(sig[a[0]].Off), End: int(sig[a[1]-1].End)},
		}
		kc.Line, _ = lines.Position(kc.NameSpan.Start)
		// Qualified names in the argument: ns::k, ::k, k<T> (the template
		// arguments are not part of the name).
		for k := a[0]; k < a[1]; k++ {
			if sig[k].Kind != parser.Ident || text(k-1) == "." || text(k-1) == "->" {
				continue
			}
			if k > a[0] && text(k-1) == "::" && k-2 >= a[0] && sig[k-2].Kind == parser.Ident {
				continue // inside a qualified name already taken
			}
			s := k
			if k > a[0] && text(k-1) == "::" {
				s = k - 1
			}
			e := k
			for e+2 < a[1] && text(e+1) == "::" && sig[e+2].Kind == parser.Ident {
				e += 2
			}
			sp := parser.Span{Start: int(sig[s].Off), End: int(sig[e].End)}
			kc.Names = append(kc.Names, kernelName{Text: f.Text(sp), Span: sp})
			k = e
		}
		for _, fn := range f.Funcs {
			if fn.BodySpan.Contains(kc.NameSpan) {
				kc.Func = fn
			}
		}
		out = append(out, kc)
	}
	return out
}

// rewriteKernelCalls turns the host calls on the selected kernels into
// their slate:: helpers, with the worker as an extra argument:
// cudaFuncSetAttribute(k<T>, a, v) ->
// slate::func_set_attribute(k<T>, k__slate<T>, k__slate_static<T>, a, v).
// A call before the kernel's definition (its worker is not declared yet) or
// in device code stays as written.
func (t *transformer) rewriteKernelCalls(kernels []*KernelInfo) {
	if t.opts.NoLaunchRewrite {
		return
	}
	f := t.a.File
	for _, kc := range findKernelCalls(f, t.a.Lines) {
		if kc.Func != nil && (kc.Func.Global || kc.Func.Device) {
			continue
		}
		for _, n := range kc.Names {
			k := t.kernelFor(&LaunchSite{Kernel: n.Text}, kernels)
			if k == nil {
				continue
			}
			if kc.NameSpan.Start < k.Func.Def.Span().End {
				t.diags = append(t.diags, t.a.at(kc.NameSpan.Start, diag.Note,
					"%s on %s before its definition stays as written: the worker is declared after the kernel", kc.API, k.Func.Name))
				break
			}
			argText := strings.ReplaceAll(f.Text(kc.Arg), "\n", " ")
			at := n.Span.Start - kc.Arg.Start + len(n.Text)
			workers := argText[:at] + "__slate" + argText[at:] + ", " + argText[:at] + "__slate_static" + argText[at:]
			t.edits = append(t.edits,
				emit.Replace(kc.NameSpan.Start, kc.NameSpan.End, "slate::"+kernelAPIs[kc.API].helper, "kernel call"),
				emit.Insert(kc.Arg.End, ", "+workers, "kernel call workers"))
			break
		}
	}
}

// setupAPIs are the runtime calls with which programs set up the GPU before
// the work they time: allocation, copies, streams and events, the device
// choice. The transform wraps them in slate_first_use() (templates/
// first_use.h), so that the workers load at the first that succeeds on a
// device, not at the first launch.
var setupAPIs = map[string]bool{
	"cudaSetDevice": true, "cudaInitDevice": true, "cudaFree": true /* of 0 only */, "cudaDeviceSynchronize": true,
	"cudaMalloc": true, "cudaMallocManaged": true, "cudaMallocHost": true, "cudaHostAlloc": true,
	"cudaMallocPitch": true, "cudaMalloc3D": true, "cudaMallocArray": true, "cudaMallocAsync": true,
	"cudaHostRegister": true, "cudaMemGetInfo": true,
	"cudaMemcpy": true, "cudaMemcpyAsync": true, "cudaMemcpy2D": true, "cudaMemcpyToSymbol": true,
	"cudaMemset": true, "cudaMemsetAsync": true,
	"cudaEventCreate": true, "cudaEventCreateWithFlags": true,
	"cudaStreamCreate": true, "cudaStreamCreateWithFlags": true, "cudaStreamCreateWithPriority": true,
}

// setupCall is one call of setupAPIs in host code: the span from its name
// (a leading "::" included) to its closing parenthesis.
type setupCall struct {
	API  string
	Span parser.Span
}

// findSetupCalls scans host code for the calls of setupAPIs. Calls in
// device functions (dynamic parallelism), in preprocessor directives, of
// members or of other namespaces' functions of the same name are not theirs.
func findSetupCalls(f *parser.File) []setupCall {
	sig, text := significant(f)
	funcs := append(append([]*parser.Func(nil), f.Funcs...), f.Members...)
	var out []setupCall
	for i := range sig {
		name := text(i)
		if !setupAPIs[name] {
			continue
		}
		start, j, _, ok := runtimeCall(sig, text, i)
		if !ok {
			continue
		}
		if name == "cudaFree" {
			// Frees are cleanup, except cudaFree(0): the idiom that creates
			// the context up front.
			if arg := strings.TrimSpace(f.Text(parser.Span{Start: int(sig[i+1].End), End: int(sig[j].Off)})); arg != "0" && arg != "NULL" && arg != "nullptr" {
				continue
			}
		}
		sp := parser.Span{Start: int(sig[start].Off), End: int(sig[j].End)}
		var in *parser.Func
		for _, fn := range funcs {
			if fn.BodySpan.Contains(sp) && (in == nil || fn.BodySpan.Start > in.BodySpan.Start) {
				in = fn
			}
		}
		if in != nil && (in.Global || in.Device) {
			continue
		}
		out = append(out, setupCall{API: name, Span: sp})
	}
	return out
}

// setupCalls returns the setup calls to wrap: none where host code is left
// alone (NoLaunchRewrite, or output for NVRTC), none inside a launch (whose
// text the launch rewrite replaces).
func (t *transformer) setupCalls() []setupCall {
	if t.opts.NoLaunchRewrite || t.opts.DeviceOnly {
		return nil
	}
	var out []setupCall
next:
	for _, c := range findSetupCalls(t.a.File) {
		for _, ls := range t.a.Launches {
			if ls.Span.Contains(c.Span) {
				continue next
			}
		}
		out = append(out, c)
	}
	return out
}

// wrapSetupCalls wraps the file's setup calls in slate_first_use().
func (t *transformer) wrapSetupCalls(calls []setupCall) {
	for _, c := range calls {
		t.edits = append(t.edits,
			emit.Insert(c.Span.Start, "slate_first_use(", "first use"),
			emit.Insert(c.Span.End, ")", "first use"))
	}
}

// runtimeCall matches a call of a runtime function by its unqualified or
// ::-qualified name at token i: not a member (`.f(`, `->f(`), not another
// namespace's function. It returns the first token (the "::" if any), the
// closing parenthesis and the arguments at depth 1 as token ranges [from, to).
func runtimeCall(sig []parser.Token, text func(int) string, i int) (start, end int, args [][2]int, ok bool) {
	if sig[i].Kind != parser.Ident || text(i+1) != "(" || text(i-1) == "." || text(i-1) == "->" {
		return 0, 0, nil, false
	}
	start = i
	if text(i-1) == "::" {
		if i >= 2 && sig[i-2].Kind == parser.Ident {
			return 0, 0, nil, false // some other namespace's function of that name
		}
		start = i - 1
	}
	depth, from, j := 0, i+2, i+1
	for ; j < len(sig); j++ {
		switch text(j) {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ",":
			if depth == 1 {
				args = append(args, [2]int{from, j})
				from = j + 1
			}
		}
		if depth == 0 {
			break
		}
	}
	if j >= len(sig) || text(j) != ")" {
		return 0, 0, nil, false
	}
	return start, j, append(args, [2]int{from, j}), true
}
