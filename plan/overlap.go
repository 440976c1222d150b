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

// overlapMargin: an overlap phase is chosen over a spatial one when the
// model predicts it this much faster. Both predictions err on the fast
// side by about as much, so they are compared as they are: on an H100
// (corun.json at 3cd5c21, 18 pairs the scheduler split) the spatial
// splits ran a median 2.4% slower than predicted, the overlap phases
// measured 0.5-4.2% (median ~1.5%). A margin of 0.97 (before 2026-11-28)
// kept chase+gemm_tiled split at 2.317 ms where its overlap ran 2.221
// and concurrent streams 2.204; at 1.0 gemm_tc+chase, predicted 4.525
// overlapped against 4.615 split, overlaps too and runs 1% slower than
// split (4.713 against 4.666; raw/overlap-margin-ab-h100.txt).
const overlapMargin = 1.0

// overlapShareK sets how much the first kernel's blocks slow while the
// second's run beside them on their SMs, sharing the SMs' issue slots,
// load units and L1, which the bandwidth and latency terms do not see:
// by 1 + overlapShareK / (s - 1), s the partner's DRAM sensitivity. A
// partner that waits on DRAM much (s large) leaves its SMs idle much of
// the time; one that never waits (s near 1) keeps them busy and starves
// the blocks beside it. Fitted to a pointer chase's 64 blocks on the H200
// (bench/results/raw/corun-overlap-bf7b2a7.json): 2.43x slower than alone
// beside a tiled GEMM (s 1.765; the formula gives 2.40), 1.78x beside a
// histogram (s 2.336, DRAM's loaded latency included; 1.80), and 13x while
// an FMA chain ran (s 1.001), which overlapMinPartnerSensitivity rules
// out. It is a model of one kernel's blocks beside others, not a
// measurement of each: `slatec profile` does not yet measure how a
// kernel's blocks fare beside another's (a dependent FMA chain's were
// slowed only 1.045x by the tiled GEMM's, where the formula says 2.40).
const overlapShareK = 1.07

// overlapMinPartnerSensitivity: the partner must be measured to wait on
// DRAM (its DRAM sensitivity at least this), so that it leaves its SMs'
// issue slots idle while it waits. A partner that never waits keeps them
// busy and starves a latency-bound block beside it: the chase beside an
// FMA chain (sensitivity 1.001) ran 3.6x slower than alone over the whole
// overlap, 13x while the FMA chain ran, and the pair took 3.08 ms where
// the spatial split had taken 2.60 (H200, bf7b2a7).
const overlapMinPartnerSensitivity = 1.1

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
// blocks share SMs with each other and the model does not hold), the
// profile lacks the block shapes, or c is not measured to wait on DRAM.
//
// a's blocks run one per SM on a.Blocks SMs, all of them at once. c gets,
// on those SMs, the blocks that fit beside one of a's (besideOne), and its
// full occupancy on the others: while a runs, c progresses at the fraction
// of its slots it keeps (1 when its grid fits in what is left). Both are
// slowed by the bandwidth penalty of their summed bandwidth and each by
// DRAM's loaded latency under the other's traffic (loaded), as in
// simulateSlate, and a at least by sharing its SMs with c's blocks
// (overlapShareK). c must be measured to wait on DRAM
// (overlapMinPartnerSensitivity). When c ends first, a's blocks (all in flight) finish at
// their unloaded pace; when a ends first, c finishes at full width.
func (mdl *Model) overlapPair(a, c int) (lat, finA, finC float64, ok bool) {
	M := mdl.M
	ka, kc := &mdl.PS.Kernels[a], &mdl.PS.Kernels[c]
	if ka.Blocks < 1 || ka.Blocks > int64(M) || ka.ThreadsPerBlock <= 0 || kc.ThreadsPerBlock <= 0 || kc.Blocks < 1 ||
		kc.DRAMSensitivity < overlapMinPartnerSensitivity {
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
	share := 1 + overlapShareK/(kc.DRAMSensitivity-1)
	// The loaded factors here are the stream curves' alone: Kernel.Beside
	// is measured on disjoint SMs, and an overlap shares them (on the H200
	// a pointer chase slowed 1.88x beside a histogram on other SMs; with
	// that scale the overlap was predicted at 1.148 ms and ran 1.28-1.31).
	ta := ra * max(pen, mdl.loaded(a, bc), share) // a's time if c ran throughout
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

// overlap is a pair's overlap phase as overlapBest models it.
type overlap struct {
	lat                 float64
	first, second       int
	finFirst, finSecond float64
}

// overlapWins returns the pair's overlap phase when it is chosen over the
// pair's best spatial split (predicted at spatial): overlapMargin faster than
// it and tableCorunGain faster than one after another (seq: the planner's
// solo times, native ones with SlateOptions.NativeSolo).
func (mdl *Model) overlapWins(a, c int, spatial, seq float64) (overlap, bool) {
	var ov overlap
	var ok bool
	ov.lat, ov.first, ov.second, ov.finFirst, ov.finSecond, ok = mdl.overlapBest(a, c)
	return ov, ok && ov.lat < overlapMargin*spatial && ov.lat < tableCorunGain*seq
}
