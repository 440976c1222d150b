package runtime

import "fmt"

// Profile is what the co-run policy needs to know about a kernel, measured
// solo on all SMs. It is deliberately small and independent of plan/: the
// planner can fill it from its richer profiles.
type Profile struct {
	// ComputeUtil is achieved compute throughput as a fraction of peak
	// (0..1), e.g. ncu's "Compute (SM) Throughput" percentage / 100.
	ComputeUtil float64
	// MemUtil is achieved DRAM bandwidth as a fraction of the device's
	// peak (0..1), e.g. ncu's "DRAM Throughput" percentage / 100.
	MemUtil float64
}

// Class is one of Slate's five kernel classes (PLANNER.md, "Slate —
// concurrent kernel selection"). Memory intensity takes priority: a
// kernel of medium or high memory intensity is ClassMM or ClassHM whatever
// its compute; a low-memory kernel is split by compute intensity.
type Class int

const (
	ClassLC Class = iota // low memory, low compute
	ClassMC              // low memory, medium compute
	ClassHC              // low memory, high compute
	ClassMM              // medium memory
	ClassHM              // high memory
	numClasses
)

func (c Class) String() string {
	switch c {
	case ClassLC:
		return "L_C"
	case ClassMC:
		return "M_C"
	case ClassHC:
		return "H_C"
	case ClassMM:
		return "M_M"
	case ClassHM:
		return "H_M"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Thresholds split utilisations into low/medium/high: below Low is low,
// at or above High is high.
type Thresholds struct {
	ComputeLow, ComputeHigh float64
	MemLow, MemHigh         float64
}

// DefaultThresholds are placed between the benchmarks Slate classified
// (its Table II, Titan Xp, 548 GB/s peak): QuasiRandom at 13% of peak
// bandwidth is low-memory, Gaussian/BlackScholes/SGEMM at 62-74% medium,
// Transpose at ~100% high; hence MemLow 0.35 and MemHigh 0.85. Slate
// reported compute as GFLOP/s, which does not transfer across devices;
// the compute cut points (0.2, 0.6 of peak SM throughput) are a first guess
// to be tuned on the GPU.
var DefaultThresholds = Thresholds{ComputeLow: 0.2, ComputeHigh: 0.6, MemLow: 0.35, MemHigh: 0.85}

// Classify maps a profile to its Slate class.
func (t Thresholds) Classify(p Profile) Class {
	switch {
	case p.MemUtil >= t.MemHigh:
		return ClassHM
	case p.MemUtil >= t.MemLow:
		return ClassMM
	case p.ComputeUtil >= t.ComputeHigh:
		return ClassHC
	case p.ComputeUtil >= t.ComputeLow:
		return ClassMC
	}
	return ClassLC
}

// Classify maps a profile to its Slate class with DefaultThresholds.
func Classify(p Profile) Class { return DefaultThresholds.Classify(p) }

// slateTable is Slate's Table I: slateTable[running][candidate] is true
// for "corun". The table is not symmetric (M_M running accepts an H_C
// arrival, H_C running does not accept M_M); rows are read as the running
// kernel J_k and columns as the candidate J_{k+1}, following Slate's
// selection rule ("check whether J_{k+1} is complementary to J_k").
var slateTable = [numClasses][numClasses]bool{
	//            L_C    M_C    H_C    M_M    H_M
	ClassLC: {true, true, false, true, true},
	ClassMC: {true, true, false, false, true},
	ClassHC: {false, false, false, false, true},
	ClassMM: {true, false, true, false, false},
	ClassHM: {true, true, false, false, false},
}

// SlateCoRun reports Slate's table entry for a running kernel and a
// candidate.
func SlateCoRun(running, candidate Class) bool {
	if running < 0 || running >= numClasses || candidate < 0 || candidate >= numClasses {
		return false
	}
	return slateTable[running][candidate]
}
