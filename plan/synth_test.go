package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// synthProfiles generates n kernels on an M-SM device from a roofline-style
// model: each SM runs its blocks one after another (compute time c per
// block, so ceil(TB/m)·c on m SMs) and the kernel also needs TB·β bytes at
// a bandwidth that grows by perSM GB/s per SM up to the device peak. The
// latency is the larger of the two plus a small launch cost; B[m] follows
// from the bytes moved. Kernels are compute bound, memory bound or balanced
// with equal probability, so sets are mixed as in Liang et al.'s
// experiments.
func synthProfiles(rng *rand.Rand, n, M int, maxBlocksPerSM int) *ProfileSet {
	peak := 177.4 * float64(M) / 15 // GTX480-like bandwidth per SM
	ps := &ProfileSet{
		Format: FormatVersion,
		Device: Device{Name: fmt.Sprintf("synthetic-%d", M), SMs: M, PeakBWGBs: peak, MemBytes: 1 << 32},
	}
	for i := range n {
		tb := int64(math.Round(float64(M) * math.Pow(2, rng.Float64()*math.Log2(float64(maxBlocksPerSM)))))
		tb = max(tb, 1)
		var c, beta float64 // ms per block, bytes per block
		sat := float64(M) * (0.15 + 0.6*rng.Float64())
		switch rng.IntN(3) {
		case 0: // compute bound
			c = 0.01 + 0.05*rng.Float64()
			beta = 1e3 + 1e4*rng.Float64()
		case 1: // memory bound: saturates at sat SMs
			c = 0.002 + 0.005*rng.Float64()
			beta = peak * 1e6 * 0.001 * (0.5 + rng.Float64()) * 0.02 * float64(M) / sat
		default:
			c = 0.005 + 0.02*rng.Float64()
			beta = peak * 1e6 * 0.001 * 0.01 * (0.5 + rng.Float64())
		}
		perSM := peak / sat
		k := Kernel{
			Name: fmt.Sprintf("k%02d", i), Blocks: tb, ThreadsPerBlock: 256, Registers: 32,
			GlobalBytes: uint64(1+rng.IntN(64)) << 20,
		}
		for m := 1; m <= M; m++ {
			waves := float64((tb + int64(m) - 1) / int64(m))
			bw := min(peak, perSM*float64(m))       // GB/s
			rmem := float64(tb) * beta / (bw * 1e6) // ms
			r := max(waves*c, rmem) + 0.003
			k.RMs = append(k.RMs, Sample{m, r})
			k.BWGBs = append(k.BWGBs, Sample{m, float64(tb) * beta / (r * 1e6)})
		}
		ps.Kernels = append(ps.Kernels, k)
	}
	return ps
}
