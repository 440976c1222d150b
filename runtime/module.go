package runtime

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// Function attribute numbers (cuda.h, CUfunction_attribute).
const (
	funcAttrMaxThreadsPerBlock   = 0
	funcAttrSharedSizeBytes      = 1
	funcAttrLocalSizeBytes       = 3
	funcAttrNumRegs              = 4
	funcAttrBinaryVersion        = 6
	funcAttrMaxDynamicSharedSize = 8
)

// Module is a loaded CUBIN.
type Module struct {
	dev     *Device
	mod     C.CUmodule
	lowered map[string]string
}

// LoadModule loads a compiled module into the device's context.
func (d *Device) LoadModule(c *Compiled) (*Module, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	if c == nil || len(c.CUBIN) == 0 {
		return nil, fmt.Errorf("runtime: LoadModule: empty image")
	}
	if c.Arch != "" && c.Arch != d.info.Arch() {
		return nil, fmt.Errorf("runtime: module compiled for %s cannot load on %s (%s)", c.Arch, d.info.Name, d.info.Arch())
	}
	// The driver reads the image during the call only; C memory keeps the
	// cgo rules simple for large images.
	img := C.CBytes(c.CUBIN)
	defer C.free(img)
	m := &Module{dev: d, lowered: c.Lowered}
	if err := d.check("cuModuleLoadData", C.slate_cuModuleLoadData(d.ctx, &m.mod, img)); err != nil {
		return nil, fmt.Errorf("runtime: loading module: %w", err)
	}
	return m, nil
}

// Unload releases the module. Its kernels must not be running.
func (m *Module) Unload() error {
	if m.mod == nil {
		return nil
	}
	err := m.dev.check("cuModuleUnload", C.slate_cuModuleUnload(m.dev.ctx, m.mod))
	m.mod = nil
	return err
}

// FuncAttrs are a kernel's compiled properties.

// Kernel is a worker function ready to launch: the resolved symbol, its
// parameter frame (checked against the driver) and cached occupancies.
type Kernel struct {
	mod    *Module
	fn     C.CUfunction
	name   string // as asked for (a name expression or a symbol)
	symbol string // in the CUBIN
	layout ParamLayout
	frame  frame
	attrs  FuncAttrs

	// ParamInfoChecked is true when the driver's cuFuncGetParamInfo
	// confirmed (or supplied) the parameter layout.
	ParamInfoChecked bool

	mu        sync.Mutex
	occ       map[[2]int]int // (block threads, dynamic shared) -> blocks per SM
	maxDynSet int            // dynamic shared size the attribute allows
	// blockNs is the measured time of one logical block (ns, smoothed) of
	// the kernel's finished jobs, per grid and block shape: what TaskIters
	// sizes the next job's tasks by. The grid is part of the key because a
	// kernel's work per block often follows its arguments, which a grid of
	// another size usually means.
	blockNs map[blockShape]float64
}

// blockShape keys a kernel's measured block times.
type blockShape struct {
	total   uint64
	threads uint64
	shared  uint32
}

// maxBlockShapes bounds the block times a kernel keeps (a program that
// launches a kernel with ever new grids keeps the latest ones).
const maxBlockShapes = 64

// BlockTime returns the measured time in nanoseconds of one logical block
// of the kernel's jobs with this many logical blocks, block threads and
// dynamic shared memory (0 before one has finished).
func (k *Kernel) BlockTime(total, threads uint64, shared uint32) float64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.blockNs[blockShape{total, threads, shared}]
}

// SetBlockTime tells the kernel how long one logical block takes (ns) in
// jobs of this shape, as a profile measured it, so that its first job sizes
// tasks as the measured ones after it will (TaskIters). A job that runs on
// one range from start to end refines it.
func (k *Kernel) SetBlockTime(total, threads uint64, shared uint32, ns float64) {
	if ns <= 0 || math.IsNaN(ns) || math.IsInf(ns, 0) {
		return
	}
	k.storeBlockTime(blockShape{total, threads, shared}, ns, true)
}

// recordBlockTime folds one finished job's block time into the kernel's
// (the mean of the last and the new, so one disturbed run moves it half way).
func (k *Kernel) recordBlockTime(s blockShape, ns float64) { k.storeBlockTime(s, ns, false) }

// storeBlockTime sets (replace) or folds in a block time.
func (k *Kernel) storeBlockTime(s blockShape, ns float64, replace bool) {
	if ns <= 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.blockNs == nil {
		k.blockNs = map[blockShape]float64{}
	}
	old, ok := k.blockNs[s]
	if !ok && len(k.blockNs) >= maxBlockShapes {
		for key := range k.blockNs {
			delete(k.blockNs, key)
			break
		}
	}
	if ok && !replace {
		ns = (old + ns) / 2
	}
	k.blockNs[s] = ns
}

// Kernel looks up a worker by name — a name expression given at compile
// time (e.g. "scale__slate<float>") or a symbol (an extern "C" name or a
// mangled one) — and binds its parameter layout. layout lists the original
// parameters only (not slate_ctl*/slate_cfg). When the driver has
// cuFuncGetParamInfo (CUDA >= 12.4) each parameter's offset and size are
// checked against it and unknown sizes are taken from it; any disagreement
// is an error.
func (m *Module) Kernel(name string, layout ParamLayout) (*Kernel, error) {
	if err := m.dev.usable(); err != nil {
		return nil, err
	}
	sym := name
	if l, ok := m.lowered[name]; ok {
		sym = l
	}
	k := &Kernel{mod: m, name: name, symbol: sym, layout: layout, occ: map[[2]int]int{}}
	cs := C.CString(sym)
	defer C.free(unsafe.Pointer(cs))
	if err := m.dev.check("cuModuleGetFunction", C.slate_cuModuleGetFunction(m.dev.ctx, &k.fn, m.mod, cs)); err != nil {
		return nil, fmt.Errorf("runtime: kernel %q (symbol %q): %w (is it a name expression of the compile request?)", name, sym, err)
	}
	for _, a := range []struct {
		dst  *int
		attr int
	}{
		{&k.attrs.MaxThreadsPerBlock, funcAttrMaxThreadsPerBlock},
		{&k.attrs.StaticShared, funcAttrSharedSizeBytes},
		{&k.attrs.LocalBytes, funcAttrLocalSizeBytes},
		{&k.attrs.Registers, funcAttrNumRegs},
		{&k.attrs.BinaryVersion, funcAttrBinaryVersion},
		{&k.maxDynSet, funcAttrMaxDynamicSharedSize},
	} {
		var v C.int
		if err := m.dev.check("cuFuncGetAttribute", C.slate_cuFuncGetAttribute(m.dev.ctx, &v, C.int(a.attr), k.fn)); err != nil {
			return nil, fmt.Errorf("runtime: kernel %q: %w", name, err)
		}
		*a.dst = int(v)
	}
	f, checked, err := m.dev.resolveFrame(k.fn, name, layout)
	if err != nil {
		return nil, err
	}
	k.frame, k.ParamInfoChecked = f, checked
	return k, nil
}

// driverHasParamInfo reports whether the loaded driver has
// cuFuncGetParamInfo (CUDA >= 12.4).
func driverHasParamInfo() bool { return C.slate_cuda_has_param_info() != 0 }

// resolveFrame builds the parameter frame, from the driver when it can
// report one, and checks it against what the layout claims.
func (d *Device) resolveFrame(fn C.CUfunction, name string, l ParamLayout) (frame, bool, error) {
	if !driverHasParamInfo() {
		f, err := computeFrame(l)
		if err != nil {
			return frame{}, false, fmt.Errorf("runtime: kernel %q: %w", name, err)
		}
		return f, false, nil
	}
	n := workerPrefixParams + len(l.Params)
	var f frame
	for i := 0; i < n; i++ {
		var off, size C.size_t
		r := C.slate_cuFuncGetParamInfo(d.ctx, fn, C.size_t(i), &off, &size)
		if r == cudaErrInvalidValue {
			return frame{}, false, fmt.Errorf("runtime: kernel %q has %d parameters, the layout describes %d (+2 for slate_ctl*, slate_cfg)",
				name, i, len(l.Params))
		}
		if err := d.check("cuFuncGetParamInfo", r); err != nil {
			return frame{}, false, fmt.Errorf("runtime: kernel %q parameter %d: %w", name, i, err)
		}
		f.slots = append(f.slots, slot{int(off), int(size)})
	}
	var off, size C.size_t
	if r := C.slate_cuFuncGetParamInfo(d.ctx, fn, C.size_t(n), &off, &size); r == cudaSuccess {
		return frame{}, false, fmt.Errorf("runtime: kernel %q has more than %d parameters, the layout describes %d (+2 for slate_ctl*, slate_cfg)",
			name, n, len(l.Params))
	}
	if err := checkFrame(f.slots, l); err != nil {
		return frame{}, false, fmt.Errorf("runtime: kernel %q: %w", name, err)
	}
	last := f.slots[len(f.slots)-1]
	f.size = alignUp(last.off+last.size, 8)
	return f, true, nil
}

// checkFrame compares the driver's slots with the ABI prefix and with the
// sizes and alignments the layout knows. A parameter of unknown size takes
// the driver's; the ones after it are still checked for size.

// Name returns the name the kernel was looked up by.
func (k *Kernel) Name() string { return k.name }

// Symbol returns the kernel's symbol in the CUBIN.
func (k *Kernel) Symbol() string { return k.symbol }

// Attrs returns the kernel's compiled properties.
func (k *Kernel) Attrs() FuncAttrs { return k.attrs }

// Layout returns the parameter layout the kernel was bound with.
func (k *Kernel) Layout() ParamLayout { return k.layout }

// Occupancy returns how many blocks of the given size and dynamic shared
// memory fit on one SM (cached). It raises the kernel's dynamic shared
// memory limit first when shared exceeds the default 48 KiB.
func (k *Kernel) Occupancy(blockThreads, shared int) (int, error) {
	key := [2]int{blockThreads, shared}
	k.mu.Lock()
	defer k.mu.Unlock()
	if v, ok := k.occ[key]; ok {
		return v, nil
	}
	d := k.mod.dev
	if shared > k.maxDynSet {
		if shared+k.attrs.StaticShared > d.info.MaxSharedOptin {
			return 0, fmt.Errorf("runtime: kernel %q: %d bytes of dynamic shared memory (+%d static) exceed the device's %d",
				k.name, shared, k.attrs.StaticShared, d.info.MaxSharedOptin)
		}
		if err := d.check("cuFuncSetAttribute", C.slate_cuFuncSetAttribute(d.ctx, k.fn, funcAttrMaxDynamicSharedSize, C.int(shared))); err != nil {
			return 0, fmt.Errorf("runtime: kernel %q: allowing %d bytes of dynamic shared memory: %w", k.name, shared, err)
		}
		k.maxDynSet = shared
	}
	var n C.int
	if err := d.check("cuOccupancyMaxActiveBlocksPerMultiprocessor",
		C.slate_cuOccupancy(d.ctx, &n, k.fn, C.int(blockThreads), C.size_t(shared))); err != nil {
		return 0, fmt.Errorf("runtime: kernel %q occupancy: %w", k.name, err)
	}
	k.occ[key] = int(n)
	return int(n), nil
}
