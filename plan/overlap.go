package plan

// Overlap phases: two kernels launched as written, on all SMs, the one of a
// small grid first.
//
// A latency-bound kernel of fewer blocks than SMs (a pointer chase of 64
// long blocks) leaves most of every SM's resources idle wherever it runs.
// Split spatially, it either takes SMs that a compute-bound partner would
// have filled, or crowds its blocks onto a few SMs. Launched first on all
// SMs, its blocks land one per SM (the block scheduler spreads them), and a
// partner launched next fills what each SM has left: on the H200 a tiled
// GEMM beside the chase that way ran in 1.04x its solo time (2.198 ms,
// against 2.381 for the best spatial split with grow-on-completion and
// 2.962 one after another).

// overlapMargin: an overlap phase is chosen over a spatial one only when the
// model predicts it this much faster (as tableCorunGain holds a table's
// co-run to a 3% gain over one after another).
const overlapMargin = 0.97

// overlapShareSlowdown slows the first kernel's blocks while the second's
// run beside them on their SMs: they share the SM's issue slots, which the
// model does not otherwise see. A dependent FMA chain of 96 one-warp-pair
// blocks beside the tiled GEMM ran 4.5% slower than alone (H200, 3.387 vs
// 3.239 ms; DRAM's loaded latency accounts for 0.7% of it).
const overlapShareSlowdown = 1.05

// sharedReservedPerBlock is the shared memory the runtime reserves per
// block (1 KiB on sm_80 and later), counted when shared memory per SM is
// known.
const sharedReservedPerBlock = 1 << 10

// besideOne returns how many blocks of kernel c fit on an SM that holds one
// block of kernel a: c's occupancy, lowered by what a's block takes of each
// per-SM limit the profile's device gives (blocks, threads, registers,
// shared memory). A limit the device does not give is taken not to bind.
func (ps *ProfileSet) besideOne(c, a *Kernel) int {
	occ := ps.Occupancy(c)
	d := &ps.Device
	limit := func(capacity, useA, useC int) {
		if capacity > 0 && useC > 0 {
			occ = min(occ, max(0, (capacity-useA)/useC))
		}
	}
	limit(d.MaxBlocksPerSM, 1, 1)
	limit(d.MaxThreadsPerSM, a.ThreadsPerBlock, c.ThreadsPerBlock)
	limit(d.RegistersPerSM, a.Registers*a.ThreadsPerBlock, c.Registers*c.ThreadsPerBlock)
	if d.SharedBytesPerSM > 0 {
		limit(d.SharedBytesPerSM, a.SharedBytes+sharedReservedPerBlock, c.SharedBytes+sharedReservedPerBlock)
	}
	return occ
}

// overlapPair models kernels a and c launched as written on all M SMs, a
// first; ok is false when a's grid has more blocks than SMs (then its
// blocks share SMs with each other and the model does not hold) or the
// profile lacks the block shapes.
//
// a's blocks run one per SM on a.Blocks SMs, all of them at once. c gets,
// on those SMs, the blocks that fit beside one of a's (besideOne), and its
// full occupancy on the others: while a runs, c progresses at the fraction
// of its slots it keeps (1 when its grid fits in what is left). Both are
// slowed by the bandwidth penalty of their summed bandwidth and each by
// DRAM's loaded latency under the other's traffic (loaded), as in
// simulateSlate, and a by sharing its SMs' issue slots
// (overlapShareSlowdown). When c ends first, a's blocks (all in flight) finish at
// their unloaded pace; when a ends first, c finishes at full width.
func (mdl *Model) overlapPair(a, c int) (lat, finA, finC float64, ok bool) {
	M := mdl.M
	ka, kc := &mdl.PS.Kernels[a], &mdl.PS.Kernels[c]
	if ka.Blocks < 1 || ka.Blocks > int64(M) || ka.ThreadsPerBlock <= 0 || kc.ThreadsPerBlock <= 0 || kc.Blocks < 1 {
		return 0, 0, 0, false
	}
	occ := int64(max(1, mdl.PS.Occupancy(kc)))
	nA := ka.Blocks
	slots := nA*int64(mdl.PS.besideOne(kc, ka)) + (int64(M)-nA)*occ
	frac := min(1, float64(slots)/float64(min(kc.Blocks, int64(M)*occ)))
	if frac <= 0 {
		return 0, 0, 0, false
	}
	ra, rc := mdl.r[a][M], mdl.r[c][M]
	ba, bc := mdl.b[a][M], mdl.b[c][M]*frac
	pen := mdl.penaltyOf(ba + bc)
	ta := ra * max(pen, mdl.loaded(a, bc)) * overlapShareSlowdown // a's time if c ran throughout
	tc := rc * max(pen, mdl.loaded(c, ba)) / frac
	if ta <= tc {
		finA = ta
		finC = ta + (1-ta/tc)*rc
	} else {
		finC = tc
		finA = tc + (1-tc/ta)*ra
	}
	return max(finA, finC), finA, finC, true
}

// overlapBest is the better of the two launch orders that overlapPair
// models (the first kernel's grid must fit one block per SM); first is the
// kernel launched first, fin each kernel's finish in launch order.
func (mdl *Model) overlapBest(a, c int) (lat float64, first, second int, finFirst, finSecond float64, ok bool) {
	lat = -1
	for _, o := range [][2]int{{a, c}, {c, a}} {
		l, f1, f2, okk := mdl.overlapPair(o[0], o[1])
		if okk && (lat < 0 || l < lat) {
			lat, first, second, finFirst, finSecond, ok = l, o[0], o[1], f1, f2, true
		}
	}
	return
}
