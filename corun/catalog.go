package corun

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"github.com/slatec/slatec/runtime"
)

//go:generate go run github.com/slatec/slatec gen --package corun --type Kernels --match-regs sm_90 -o kernels_slate.go kernels/corun.cu

// KernelSource is kernels/corun.cu as written, for `slatec profile` (which
// transforms it itself) and for writing next to results.
//
//go:embed kernels/corun.cu
var KernelSource []byte

// KernelFile is KernelSource's path in the repository.
const KernelFile = "corun/kernels/corun.cu"

// Class is what a benchmark kernel is written to stress.
type Class string

// The four classes of issue 11.
const (
	Memory   Class = "memory"  // saturates DRAM bandwidth on a fraction of the SMs
	Compute  Class = "compute" // throughput scales with SMs
	Latency  Class = "latency" // small grid of long blocks: cannot fill the GPU
	SharedMm Class = "shared"  // shared-memory heavy (tiles, shared atomics)
)

// Buffer is a device buffer a kernel takes: its element type and count in
// the spelling of `slatec profile --args` (f32, f16, u32), and whether the
// kernel only writes it.
type Buffer struct {
	Elem  string
	Count int64
	Out   bool
}

// Bytes is the buffer's size.
func (b Buffer) Bytes() int64 {
	switch b.Elem {
	case "f16":
		return 2 * b.Count
	default:
		return 4 * b.Count
	}
}

// Kernel is one benchmark kernel with a fixed launch: the logical grid and
// block, its buffers and scalar arguments, and the work it does, from which
// bandwidth is computed. Scalars are in the spelling of `slatec profile
// --args` (f32:2.5, i32:1024, u32:0xffff).
type Kernel struct {
	Name    string // the CUDA kernel's name in kernels/corun.cu
	Class   Class
	Grid    runtime.Dim3
	Block   runtime.Dim3
	Buffers []Buffer
	// Args lists the kernel's parameters in order: "buf:N" for Buffers[N],
	// else a scalar.
	Args []string
	// Bytes is the DRAM traffic of the whole launch (reads + writes, no
	// reuse counted), for B[m].
	Bytes int64
	// Flops of the whole launch, for the record.
	Flops float64
	// Model is the fake device's idea of the kernel on the reference fake
	// device (tests and --fake runs only; the GPU measures the truth).
	Model FakeModel
}

// ProfileArgs is the --args SPEC of `slatec profile` for this kernel.
func (k *Kernel) ProfileArgs() string {
	var parts []string
	for _, a := range k.Args {
		if n, ok := bufIndex(a); ok {
			b := k.Buffers[n]
			kind := "buf"
			if b.Out {
				kind = "out"
			}
			parts = append(parts, fmt.Sprintf("%s:%s:%d", kind, b.Elem, b.Count))
			continue
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, ",")
}

// BytesPerBlock is Bytes over the logical blocks, rounded up, for
// `slatec profile --bytes-per-block`.
func (k *Kernel) BytesPerBlock() int64 {
	n := int64(k.Grid.Count())
	return (k.Bytes + n - 1) / n
}

// ProfileCommand is the `slatec profile` command line that measures this
// kernel into profiles (appending), with SM counts sweep.
func (k *Kernel) ProfileCommand(slatec, profiles, sweep string) string {
	return fmt.Sprintf("%s profile %s --kernel %s --grid %s --block %s --bytes-per-block %d --args '%s' --sms %s -o %s --append",
		slatec, KernelFile, k.Name, dimText(k.Grid), dimText(k.Block), k.BytesPerBlock(), k.ProfileArgs(), sweep, profiles)
}

func dimText(d runtime.Dim3) string {
	switch {
	case d.Z > 1:
		return fmt.Sprintf("%dx%dx%d", d.X, d.Y, d.Z)
	case d.Y > 1:
		return fmt.Sprintf("%dx%d", d.X, d.Y)
	}
	return fmt.Sprint(d.X)
}

func bufIndex(a string) (int, bool) {
	var n int
	if _, err := fmt.Sscanf(a, "buf:%d", &n); err == nil && strings.HasPrefix(a, "buf:") {
		return n, true
	}
	return 0, false
}

// Sizes. Each kernel does a fixed amount of work sized for a few
// milliseconds alone on an H100 (132 SMs, 3.35 TB/s), long against a
// resize (~30-150 us) and short enough for sweeps of dozens of runs.
// The figures in the comments are estimates until the GPU run.
const (
	streamN4  = 1 << 26 // float4 elements per STREAM array (1 GiB): triad moves 3 GiB, ~1 ms at 3.2 TB/s
	fmaBlocks = 8192
	fmaIters  = 4096 // 8192 x 256 threads x 4096 x 8 FMA = 1.4e14 flop: ~2.5 ms at 55 TFLOP/s
	tcN       = 4096 // 2 n^3 = 1.4e11 flop; naive wmma is L2-bound, ~2-4 ms
	chaseMask = 1<<24 - 1
	chaseLen  = 4096 // dependent loads per thread: ~2.5 ms at ~600 ns each
	depIters  = 1 << 17
	sgemmN    = 2048 // 1.7e10 flop at ~8 TFLOP/s of a 16x16-tile SGEMM: ~2 ms
	histN     = 1 << 28
	histPer   = 1 << 16
)

// Catalogue returns the benchmark kernels, in a fixed order.
func Catalogue() []*Kernel {
	f4 := func(out bool) Buffer { return Buffer{Elem: "f32", Count: 4 * streamN4, Out: out} }
	return []*Kernel{
		{Name: "triad_f4", Class: Memory, Grid: runtime.D1(streamN4 / 256), Block: runtime.D1(256),
			Buffers: []Buffer{f4(true), f4(false), f4(false)}, Args: []string{"buf:0", "buf:1", "buf:2", "f32:2.5", fmt.Sprintf("i32:%d", streamN4)},
			Bytes: 3 * 16 * streamN4, Flops: 8 * streamN4,
			Model: FakeModel{SoloMs: 1.0, SatFrac: 0.3, BWFrac: 0.9}},
		{Name: "scale_f4", Class: Memory, Grid: runtime.D1(streamN4 / 256), Block: runtime.D1(256),
			Buffers: []Buffer{f4(true), f4(false)}, Args: []string{"buf:0", "buf:1", "f32:2.5", fmt.Sprintf("i32:%d", streamN4)},
			Bytes: 2 * 16 * streamN4, Flops: 4 * streamN4,
			Model: FakeModel{SoloMs: 0.7, SatFrac: 0.25, BWFrac: 0.9}},
		{Name: "fma_chain", Class: Compute, Grid: runtime.D1(fmaBlocks), Block: runtime.D1(256),
			Buffers: []Buffer{{Elem: "f32", Count: fmaBlocks * 256, Out: true}},
			Args:    []string{"buf:0", fmt.Sprintf("i32:%d", fmaIters), "f32:0.999", "f32:0.001"},
			Bytes:   4 * fmaBlocks * 256, Flops: 2 * 8 * float64(fmaBlocks) * 256 * fmaIters,
			Model: FakeModel{SoloMs: 2.5, SatFrac: 1, BWFrac: 0.001}},
		{Name: "gemm_tc", Class: Compute, Grid: runtime.Dim3{X: tcN / 64, Y: tcN / 16, Z: 1}, Block: runtime.D1(128),
			Buffers: []Buffer{{Elem: "f16", Count: tcN * tcN}, {Elem: "f16", Count: tcN * tcN}, {Elem: "f32", Count: tcN * tcN, Out: true}},
			Args:    []string{"buf:0", "buf:1", "buf:2", fmt.Sprintf("i32:%d", tcN), fmt.Sprintf("i32:%d", tcN)},
			Bytes:   (2 + 2 + 4) * tcN * tcN, Flops: 2 * float64(tcN) * tcN * tcN,
			Model: FakeModel{SoloMs: 3.0, SatFrac: 1, BWFrac: 0.05}},
		{Name: "chase", Class: Latency, Grid: runtime.D1(64), Block: runtime.D1(128),
			Buffers: []Buffer{{Elem: "u32", Count: chaseMask + 1}, {Elem: "u32", Count: 64 * 128, Out: true}},
			Args:    []string{"buf:0", "buf:1", fmt.Sprintf("i32:%d", chaseLen), fmt.Sprintf("u32:%d", chaseMask)},
			Bytes:   4 * 64 * 128 * chaseLen, Flops: 0,
			Model: FakeModel{SoloMs: 2.5, SatFrac: 0.48, BWFrac: 0.01}},
		{Name: "dep_chain", Class: Latency, Grid: runtime.D1(96), Block: runtime.D1(64),
			Buffers: []Buffer{{Elem: "f32", Count: 96 * 64, Out: true}},
			Args:    []string{"buf:0", fmt.Sprintf("i32:%d", depIters)},
			Bytes:   4 * 96 * 64, Flops: 3 * 96 * 64 * float64(depIters),
			Model: FakeModel{SoloMs: 2.0, SatFrac: 0.72, BWFrac: 0}},
		{Name: "gemm_tiled", Class: SharedMm, Grid: runtime.Dim3{X: sgemmN / 16, Y: sgemmN / 16, Z: 1}, Block: runtime.Dim3{X: 16, Y: 16, Z: 1},
			Buffers: []Buffer{{Elem: "f32", Count: sgemmN * sgemmN}, {Elem: "f32", Count: sgemmN * sgemmN}, {Elem: "f32", Count: sgemmN * sgemmN, Out: true}},
			Args:    []string{"buf:0", "buf:1", "buf:2", fmt.Sprintf("i32:%d", sgemmN)},
			Bytes:   3 * 4 * sgemmN * sgemmN, Flops: 2 * float64(sgemmN) * sgemmN * sgemmN,
			Model: FakeModel{SoloMs: 2.0, SatFrac: 1, BWFrac: 0.1}},
		{Name: "histogram", Class: SharedMm, Grid: runtime.D1(histN / histPer), Block: runtime.D1(256),
			Buffers: []Buffer{{Elem: "u32", Count: histN}, {Elem: "u32", Count: 4096, Out: true}},
			Args:    []string{"buf:0", "buf:1", fmt.Sprintf("i32:%d", histPer)},
			Bytes:   4 * histN, Flops: 0,
			Model: FakeModel{SoloMs: 1.5, SatFrac: 0.8, BWFrac: 0.35}},
	}
}

// Workload is two or three kernels run together; the total work is the
// kernels' fixed work.
type Workload struct {
	Name    string // kernel names joined with '+'
	Kernels []*Kernel
	// Complementary: the kernels stress different resources: kernels of
	// different classes, except compute-bound beside shared-memory heavy
	// (both keep the SM pipes busy). Same-class pairs and triples with two
	// of one class are not complementary.
	Complementary bool
}

// complementary says whether classes a and b make a complementary pair.
func complementary(a, b Class) bool {
	if a == b {
		return false
	}
	// Two heavy users of the SM pipes (compute beside shared-memory
	// heavy) fight for the same units.
	if (a == Compute && b == SharedMm) || (a == SharedMm && b == Compute) {
		return false
	}
	return true
}

// Workloads returns the catalogue's workloads: for every pair of classes
// that is complementary, every pair of their kernels; one pair per class of
// same-class kernels and the compute/shared pairs (not complementary); and
// triples of one kernel from each of three classes. The order is fixed.
func Workloads(ks []*Kernel) []Workload {
	byClass := map[Class][]*Kernel{}
	var classes []Class
	for _, k := range ks {
		if _, ok := byClass[k.Class]; !ok {
			classes = append(classes, k.Class)
		}
		byClass[k.Class] = append(byClass[k.Class], k)
	}
	var out []Workload
	add := func(comp bool, kk ...*Kernel) {
		names := make([]string, len(kk))
		for i, k := range kk {
			names[i] = k.Name
		}
		out = append(out, Workload{Name: strings.Join(names, "+"), Kernels: kk, Complementary: comp})
	}
	for i, a := range classes {
		for _, b := range classes[i+1:] {
			for _, ka := range byClass[a] {
				for _, kb := range byClass[b] {
					if complementary(a, b) {
						add(true, ka, kb)
					}
				}
			}
			if !complementary(a, b) {
				add(false, byClass[a][0], byClass[b][0])
			}
		}
	}
	for _, c := range classes {
		if len(byClass[c]) >= 2 {
			add(false, byClass[c][0], byClass[c][1])
		}
	}
	// Triples: memory + latency + one of compute or shared memory is
	// complementary throughout; two memory-bound kernels with a compute
	// one are not.
	if m, l := byClass[Memory], byClass[Latency]; len(m) > 0 && len(l) > 0 {
		for _, c := range []Class{Compute, SharedMm} {
			if x := byClass[c]; len(x) > 0 {
				add(true, m[0], x[0], l[0])
			}
		}
		if len(m) >= 2 && len(byClass[Compute]) > 0 {
			add(false, m[0], m[1], byClass[Compute][0])
		}
	}
	return out
}

// SelectWorkloads picks workloads by name (a '+'-joined list of kernels, in
// any order) or by the words "all", "complementary", "pairs", "triples";
// quick keeps a small representative set when names is empty.
func SelectWorkloads(all []Workload, names []string, quick bool) ([]Workload, error) {
	if len(names) == 0 {
		if !quick {
			return all, nil
		}
		names = QuickWorkloads
	}
	var out []Workload
	seen := map[string]bool{}
	add := func(w Workload) {
		if !seen[w.Name] {
			seen[w.Name] = true
			out = append(out, w)
		}
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		switch n {
		case "all":
			for _, w := range all {
				add(w)
			}
			continue
		case "complementary", "pairs", "triples":
			for _, w := range all {
				if (n == "complementary" && w.Complementary) || (n == "pairs" && len(w.Kernels) == 2) || (n == "triples" && len(w.Kernels) == 3) {
					add(w)
				}
			}
			continue
		}
		key := canonical(n)
		found := false
		for _, w := range all {
			if canonical(w.Name) == key {
				add(w)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("no workload %q (the workloads are kernel names joined with '+', e.g. %s; or all, complementary, pairs, triples)", n, all[0].Name)
		}
	}
	return out, nil
}

// QuickWorkloads is --quick's set: three complementary pairs, one
// non-complementary pair, one triple.
var QuickWorkloads = []string{"triad_f4+fma_chain", "triad_f4+chase", "triad_f4+histogram", "triad_f4+scale_f4", "triad_f4+fma_chain+chase"}

func canonical(name string) string {
	parts := strings.Split(name, "+")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	sort.Strings(parts)
	return strings.Join(parts, "+")
}
