// Package occupancy computes a kernel's theoretical occupancy the way CUDA's
// occupancy calculator (cuda_occupancy.h) does, and reads the resource usage
// that `nvcc -Xptxas -v` prints. slatec merge --report uses both to show what
// merging costs: a merged kernel needs the largest register count and (without
// the shared-memory union) the sum of the static shared memory of its parts,
// so fewer of its blocks fit on an SM (Liang et al., section 5).
package occupancy

import (
	"fmt"
)

// Device holds the per-SM limits that decide occupancy.
type Device struct {
	Name string
	// MaxThreadsPerSM / WarpSize warps fit on an SM at most.
	MaxThreadsPerSM int
	MaxBlocksPerSM  int
	// MaxThreadsPerBlock bounds a launch's block.
	MaxThreadsPerBlock int
	WarpSize           int
	// RegsPerSM is the register file; RegsPerBlock the most one block may
	// use. Registers are allocated per warp in units of RegAllocUnit and
	// split evenly over SubPartitions (the SM's schedulers): a warp lives
	// in one sub-partition.
	RegsPerSM, RegsPerBlock int
	RegAllocUnit            int
	SubPartitions           int
	MaxRegsPerThread        int
	// SharedPerSM is the largest shared-memory carveout; each block uses
	// its static and dynamic shared memory plus SharedReservedPerBlock
	// (the runtime's), rounded up to SharedAllocUnit. SharedPerBlockOptin
	// is the most one block may use (static + dynamic, after opting in).
	SharedPerSM            int
	SharedPerBlockOptin    int
	SharedReservedPerBlock int
	SharedAllocUnit        int
}

// SM90 is compute capability 9.0 (H100, H200).
var SM90 = Device{
	Name:                   "sm_90",
	MaxThreadsPerSM:        2048,
	MaxBlocksPerSM:         32,
	MaxThreadsPerBlock:     1024,
	WarpSize:               32,
	RegsPerSM:              65536,
	RegsPerBlock:           65536,
	RegAllocUnit:           256,
	SubPartitions:          4,
	MaxRegsPerThread:       255,
	SharedPerSM:            228 << 10,
	SharedPerBlockOptin:    227 << 10,
	SharedReservedPerBlock: 1 << 10,
	SharedAllocUnit:        128,
}

// Kernel is what occupancy depends on for one launch configuration.
type Kernel struct {
	Threads       int // threads per block
	Registers     int // registers per thread
	StaticShared  int // bytes of static __shared__ memory
	DynamicShared int // bytes of dynamic shared memory
}

// Limiter names the resource that bounds the blocks per SM.
type Limiter string

const (
	LimitWarps     Limiter = "warps"
	LimitRegisters Limiter = "registers"
	LimitShared    Limiter = "shared memory"
	LimitBlocks    Limiter = "blocks"
)

// Result is the occupancy of one kernel configuration.
type Result struct {
	// BlocksPerSM is the number of resident blocks; 0 means the block does
	// not fit an SM at all (the launch fails).
	BlocksPerSM int
	WarpsPerSM  int
	// Occupancy is WarpsPerSM over the SM's maximum warps, in [0, 1].
	Occupancy float64
	Limiter   Limiter
	// The limit each resource imposes on its own.
	ByWarps, ByRegisters, ByShared, ByBlocks int
}

func divUp(a, b int) int   { return (a + b - 1) / b }
func roundUp(a, b int) int { return divUp(a, b) * b }

// Compute returns the theoretical occupancy of k on d. It fails only for
// configurations no launch can have (no threads, more threads or registers
// than the hardware allows).
func (d Device) Compute(k Kernel) (Result, error) {
	switch {
	case k.Threads < 1 || k.Threads > d.MaxThreadsPerBlock:
		return Result{}, fmt.Errorf("occupancy: %d threads per block is outside 1..%d", k.Threads, d.MaxThreadsPerBlock)
	case k.Registers < 0 || k.Registers > d.MaxRegsPerThread:
		return Result{}, fmt.Errorf("occupancy: %d registers per thread is outside 0..%d", k.Registers, d.MaxRegsPerThread)
	case k.StaticShared < 0 || k.DynamicShared < 0:
		return Result{}, fmt.Errorf("occupancy: negative shared memory")
	}
	var r Result
	warps := divUp(k.Threads, d.WarpSize)
	maxWarps := d.MaxThreadsPerSM / d.WarpSize
	r.ByBlocks = d.MaxBlocksPerSM
	r.ByWarps = maxWarps / warps

	// Registers (cudaOccMaxBlocksPerSMRegsLimit).
	if k.Registers == 0 {
		r.ByRegisters = r.ByBlocks
	} else {
		perWarp := roundUp(k.Registers*d.WarpSize, d.RegAllocUnit)
		perBlock := perWarp * warps
		// The hardware's check assumes the block's warps are spread over
		// all sub-partitions at once.
		assumed := perWarp * roundUp(warps, d.SubPartitions)
		if perBlock > d.RegsPerBlock || assumed > d.RegsPerBlock {
			r.ByRegisters = 0
		} else {
			warpsPerSub := (d.RegsPerSM / d.SubPartitions) / perWarp
			r.ByRegisters = warpsPerSub * d.SubPartitions / warps
		}
	}

	// Shared memory (cudaOccMaxBlocksPerSMSmemLimit).
	used := k.StaticShared + k.DynamicShared
	alloc := roundUp(used+d.SharedReservedPerBlock, d.SharedAllocUnit)
	switch {
	case used > d.SharedPerBlockOptin:
		r.ByShared = 0
	case alloc > 0:
		r.ByShared = d.SharedPerSM / alloc
	default:
		r.ByShared = r.ByBlocks
	}

	r.BlocksPerSM, r.Limiter = r.ByWarps, LimitWarps
	for _, l := range []struct {
		n   int
		lim Limiter
	}{{r.ByRegisters, LimitRegisters}, {r.ByShared, LimitShared}, {r.ByBlocks, LimitBlocks}} {
		if l.n < r.BlocksPerSM {
			r.BlocksPerSM, r.Limiter = l.n, l.lim
		}
	}
	r.WarpsPerSM = r.BlocksPerSM * warps
	r.Occupancy = float64(r.WarpsPerSM) / float64(maxWarps)
	return r, nil
}
