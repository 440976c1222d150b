package corun

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/slatec/slatec/runtime"
)

// greenState is the CUDA device's green-context support: the native
// kernels of kernels/corun.cu in a context-independent library, and the
// green contexts of the split being measured (remade when the split
// changes).
type greenState struct {
	mu      sync.Mutex
	dev     *runtime.Device
	comp    *runtime.Compiler
	why     string // why there are no green contexts; "" when there are
	step    int
	lib     *runtime.Library
	kernels map[string]*runtime.NativeKernel
	set     *runtime.GreenSet
	parts   []int
}

func (g *greenState) probe(d *runtime.Device, c *runtime.Compiler) {
	g.dev, g.comp = d, c
	if !runtime.GreenSupported() {
		g.why = runtime.ErrNoGreen.Error()
		return
	}
	gi, err := d.GreenGranularity()
	if err != nil {
		g.why = fmt.Sprintf("querying the SM resource: %v", err)
		return
	}
	g.step = gi.Step()
}

func (g *greenState) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.set != nil {
		g.set.Close()
		g.set = nil
	}
	if g.lib != nil {
		g.lib.Unload()
		g.lib = nil
	}
}

// kernel returns k's native kernel, compiling and loading the library at
// first use. Callers hold g.mu.
func (g *greenState) kernel(k *Kernel, layout runtime.ParamLayout) (*runtime.NativeKernel, error) {
	if g.lib == nil {
		var names []string
		for _, c := range Catalogue() {
			names = append(names, c.Name)
		}
		comp := g.comp
		if comp == nil {
			comp = &runtime.Compiler{}
		}
		c, err := comp.Compile(runtime.CompileRequest{Name: "corun.cu", Source: kernelsSource, Arch: g.dev.Info().Arch(), NameExpressions: names})
		if err != nil {
			return nil, fmt.Errorf("compiling the native kernels: %w", err)
		}
		if g.lib, err = g.dev.LoadLibrary(c); err != nil {
			return nil, err
		}
		g.kernels = map[string]*runtime.NativeKernel{}
	}
	if nk := g.kernels[k.Name]; nk != nil {
		return nk, nil
	}
	nk, err := g.lib.Kernel(k.Name, layout)
	if err != nil {
		return nil, err
	}
	g.kernels[k.Name] = nk
	return nk, nil
}

// GreenGranularity implements GreenDevice.
func (d *CUDADevice) GreenGranularity() int {
	if d.green.why != "" {
		return 0
	}
	return d.green.step
}

// GreenUnavailable implements GreenDevice.
func (d *CUDADevice) GreenUnavailable() string { return d.green.why }

// StartGreen implements GreenDevice: k's native kernel on its whole grid
// in green context part of a split of the SMs into parts (the last part
// being the rest). A split the driver rounds differently makes the mode
// unavailable, saying so.
func (d *CUDADevice) StartGreen(k *Kernel, parts []int, part int) (Job, error) {
	g := &d.green
	if g.why != "" {
		return nil, unavailable("%s", g.why)
	}
	h, args, err := d.prepare(k)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	nk, err := g.kernel(k, h.Layout())
	if err != nil {
		return nil, err
	}
	if !slices.Equal(g.parts, parts) {
		if g.set != nil {
			// The previous split's kernels have all ended (a run waits
			// for every kernel before the next starts).
			g.set.Close()
			g.set, g.parts = nil, nil
		}
		set, err := d.dev.NewGreenSet(parts[:len(parts)-1])
		if err != nil {
			return nil, err
		}
		if got := set.Parts(); !slices.Equal(got, parts) {
			set.Close()
			return nil, unavailable("the driver split the SMs as %v, asked for %v", got, parts)
		}
		g.set, g.parts = set, slices.Clone(parts)
	}
	start := d.Now()
	gl, err := g.set.Launch(part, nk, k.Grid, k.Block, 0, args)
	if err != nil {
		return nil, err
	}
	return &nativeJob{nl: gl, start: start, epoch: d.epoch}, nil
}

// NativeUnavailable implements NativeDevice: native kernels come from a
// context-independent library, which this runtime loads only with the
// green-context entry points (CUDA >= 12.4).
func (d *CUDADevice) NativeUnavailable() string {
	if !runtime.GreenSupported() {
		return runtime.ErrNoGreen.Error()
	}
	return ""
}

// StartNative implements NativeDevice: k as written, over its whole grid
// on all SMs, on a stream of its own in the primary context.
func (d *CUDADevice) StartNative(k *Kernel) (Job, error) { return d.StartNativeAfter(k, nil) }

// StartNativeAfter implements NativeChainDevice: StartNative, on the GPU
// after prev (a job of this device; nil: at once).
func (d *CUDADevice) StartNativeAfter(k *Kernel, prev Job) (Job, error) {
	if why := d.NativeUnavailable(); why != "" {
		return nil, unavailable("%s", why)
	}
	h, args, err := d.prepare(k)
	if err != nil {
		return nil, err
	}
	d.green.mu.Lock()
	nk, err := d.green.kernel(k, h.Layout())
	d.green.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var opts []runtime.LaunchOption
	if pred := predecessor(prev); pred != nil {
		opts = append(opts, runtime.WithAfter(pred))
	}
	start := d.Now()
	nl, err := d.dev.LaunchNative(nk, k.Grid, k.Block, 0, args, opts...)
	if err != nil {
		return nil, err
	}
	return &nativeJob{nl: nl, start: start, after: prev, epoch: d.epoch}, nil
}

// nativeJob is a native kernel (in a green context or the primary one):
// not a persistent worker, so it cannot be resized.
type nativeJob struct {
	nl    *runtime.NativeLaunch
	start time.Duration
	after Job       // started behind it (StartNativeAfter)
	epoch time.Time // the device's (Now's zero)
}

func (j *nativeJob) Resize(ctx context.Context, r runtime.SMRange) (Resize, error) {
	return Resize{}, fmt.Errorf("a native kernel cannot be resized")
}
func (j *nativeJob) Wait(ctx context.Context) error { return j.nl.Wait(ctx) }
func (j *nativeJob) Stamped() bool {
	s, _ := j.nl.Span()
	return !s.IsZero()
}
func (j *nativeJob) Done() <-chan struct{} { return j.nl.Done() }
func (j *nativeJob) Span() (time.Duration, time.Duration) {
	if s, e := j.nl.Span(); !s.IsZero() {
		return s.Sub(j.epoch), e.Sub(j.epoch) // GPU stamps
	}
	start := afterStart(j.start, j.after)
	return start, start + j.nl.GPUTime()
}
