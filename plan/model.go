package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/slatec/slatec/internal/shares"
	"github.com/slatec/slatec/occupancy"
)

// Model is a ProfileSet prepared for planning: R and B tabulated for every
// m in 1..M (interpolated as documented in FORMAT.md), so that the planners'
// inner loops do array lookups only.
type Model struct {
	PS *ProfileSet
	M  int
	Pb float64 // bandwidth shared in the penalty, GB/s (Device.SharedBW)
	Gb uint64  // device memory, bytes
	r  [][]float64
	b  [][]float64
	g  []uint64
	tb []int64
	// lat[i][m] is blockLatency(i, m) and work[i][m] = lat·TB, tabulated
	// because dp_select reads them for every candidate.
	lat  [][]float64
	work [][]float64
	// best[i] is kernel i's best solo time: the smallest R_i[m] over
	// m in 1..M (interpolation never goes below the smallest measurement,
	// so it is the smallest measured latency), and bestM[i] its smallest m.
	best  []float64
	bestM []int
	// loadedPts[i] is kernel i's DRAMLoaded sorted by load, once: loaded
	// runs for every candidate split (sorting there made a set of three
	// take 12 ms to plan).
	loadedPts [][]LoadedPoint
	// besideK[i][j] scales kernel i's loaded-latency factor beside kernel
	// j (1 unless i's profile measured it beside j: Kernel.Beside).
	besideK [][]float64

	memo map[string]drrResult
	// Sims counts exact DRR simulations (not memo hits), for benchmarks.
	Sims int
}

// NewModel validates ps and tabulates its profiles.
func NewModel(ps *ProfileSet) (*Model, error) {
	if err := ps.Validate(); err != nil {
		return nil, err
	}
	M := ps.Device.SMs
	mdl := &Model{PS: ps, M: M, Pb: ps.Device.SharedBW(), Gb: ps.Device.MemBytes, memo: map[string]drrResult{}}
	for i := range ps.Kernels {
		k := &ps.Kernels[i]
		r := make([]float64, M+1)
		b := make([]float64, M+1)
		for m := 1; m <= M; m++ {
			r[m], b[m] = k.R(m), k.B(m)
		}
		mdl.r = append(mdl.r, r)
		mdl.b = append(mdl.b, b)
		mdl.g = append(mdl.g, k.GlobalBytes)
		mdl.tb = append(mdl.tb, k.Blocks)
		lat := make([]float64, M+1)
		work := make([]float64, M+1)
		for m := 1; m <= M; m++ {
			waves := (k.Blocks + int64(m) - 1) / int64(m)
			lat[m] = r[m] / float64(waves)
			work[m] = lat[m] * float64(k.Blocks)
		}
		mdl.lat = append(mdl.lat, lat)
		mdl.work = append(mdl.work, work)
		bm := 1
		for m := 2; m <= M; m++ {
			if r[m] < r[bm] {
				bm = m
			}
		}
		mdl.best = append(mdl.best, r[bm])
		mdl.bestM = append(mdl.bestM, bm)
		pts := slices.Clone(k.DRAMLoaded)
		sortLoaded(pts)
		mdl.loadedPts = append(mdl.loadedPts, pts)
	}
	mdl.besideK = besideScales(mdl)
	return mdl, nil
}

// besideScales is each kernel's measured slowdown beside each partner as
// a scale of its loaded-latency factor: k with 1 + k (f(b) - 1) equal to
// the measured slowdown, f the factor of the kernel's stream curve and b
// the partner's bandwidth on its SMs in the measurement. Where the curve
// hardly rises at b (f < 1.02: no factor to scale) or nothing was
// measured, 1. Several measurements of one pair: the last.
func besideScales(mdl *Model) [][]float64 {
	n := len(mdl.PS.Kernels)
	k := make([][]float64, n)
	for i := range k {
		k[i] = make([]float64, n)
		for j := range k[i] {
			k[i][j] = 1
		}
		for _, bs := range mdl.PS.Kernels[i].Beside {
			j := mdl.PS.KernelIndex(bs.Partner)
			if j < 0 || j == i || bs.PartnerSMs < 1 || bs.PartnerSMs > mdl.M {
				continue
			}
			k[i][j] = 1
			if f := mdl.loaded(i, mdl.b[j][bs.PartnerSMs]); f >= 1+besideMinFactor {
				k[i][j] = min(max(0, (bs.Slowdown-1)/(f-1)), besideMaxScale)
			}
		}
	}
	return k
}

// BesideNotes says, for each Kernel.Beside measurement of ps, what the
// slate model makes of it: the measured slowdown, the stream curve's
// factor at the partner's bandwidth there, and the scale (or why none).
// For a reader of a plan (slatec plan); the planners do not spend the
// formatting on every plan (slatec serve plans at each arrival).
func BesideNotes(ps *ProfileSet) ([]string, error) {
	mdl, err := NewModel(ps)
	if err != nil {
		return nil, err
	}
	return mdl.besideNotes(), nil
}

func (mdl *Model) besideNotes() []string {
	var out []string
	for i := range mdl.PS.Kernels {
		k := &mdl.PS.Kernels[i]
		for _, bs := range k.Beside {
			j := mdl.PS.KernelIndex(bs.Partner)
			if j < 0 || j == i || bs.PartnerSMs > mdl.M {
				continue
			}
			f := mdl.loaded(i, mdl.b[j][bs.PartnerSMs])
			what := fmt.Sprintf("its loaded factor beside %s is scaled by %.2f on split SMs", bs.Partner, mdl.besideK[i][j])
			if f < 1+besideMinFactor {
				what = "its stream curve is flat there: not scaled"
			}
			out = append(out, fmt.Sprintf("%s beside %s: measured %.3fx on %d SMs beside %d, its stream curve says %.3fx at %.0f GB/s; %s",
				k.Name, bs.Partner, bs.Slowdown, bs.SMs, bs.PartnerSMs, f, mdl.b[j][bs.PartnerSMs], what))
		}
	}
	return out
}

// A measured slowdown scales the stream curve's factor only where that
// factor is at least 1 + besideMinFactor, and by at most besideMaxScale.
const (
	besideMinFactor = 0.02
	besideMaxScale  = 4
)

// loadedBeside is kernel c[self].Kernel's loaded-latency factor beside the
// other kernels of c: its stream curve at their bandwidths together,
// scaled by their measured scales (besideScales) weighted by bandwidth.
func (mdl *Model) loadedBeside(c []Alloc, self int) float64 {
	i := c[self].Kernel
	bw, kw := 0.0, 0.0
	for j, a := range c {
		if j != self {
			b := mdl.b[a.Kernel][a.SMs]
			bw += b
			kw += mdl.besideK[i][a.Kernel] * b
		}
	}
	f := mdl.loaded(i, bw)
	if bw <= 0 {
		return f
	}
	return max(1, 1+kw/bw*(f-1))
}

// Best returns kernel i's best solo time, the smallest R_i[m] over all m,
// and the smallest m that achieves it.
func (mdl *Model) Best(i int) (float64, int) { return mdl.best[i], mdl.bestM[i] }

// R returns kernel i's tabulated latency on m SMs.
func (mdl *Model) R(i, m int) float64 { return mdl.r[i][m] }

// B returns kernel i's tabulated bandwidth on m SMs.
func (mdl *Model) B(i, m int) float64 { return mdl.b[i][m] }

// Alloc is one entry of a configuration: kernel index and its SMs.
type Alloc struct {
	Kernel int
	SMs    int
}

// blockLatency is the per-block latency of kernel i on m SMs. Liang et al.
// use R[m]·m/TB; we use R[m]/ceil(TB/m), which is the same when m divides
// TB, equals R[m] when the kernel has fewer blocks than SMs (the paper's
// formula would make one block of a 4-block kernel on 64 SMs take 16 times
// the kernel's whole latency), and makes the DRR of a kernel alone on its m
// SMs exactly R[m].
func (mdl *Model) blockLatency(i, m int) float64 { return mdl.lat[i][m] }

// penalty is Liang's equation (3).
func (mdl *Model) penalty(c []Alloc) float64 { return mdl.penaltyOf(mdl.bandwidth(c)) }

// bandwidth is what the kernels of c move together on their SMs, GB/s.
func (mdl *Model) bandwidth(c []Alloc) float64 {
	bw := 0.0
	for _, a := range c {
		bw += mdl.b[a.Kernel][a.SMs]
	}
	return bw
}

// penaltyOf is equation (3) for kernels moving bw GB/s together.
func (mdl *Model) penaltyOf(bw float64) float64 {
	if bw > mdl.Pb {
		return bw / mdl.Pb
	}
	return 1
}

// fits reports whether the kernels' global memory fits on the device.
func (mdl *Model) fits(c []Alloc) bool {
	var g uint64
	for _, a := range c {
		if g+mdl.g[a.Kernel] < g { // overflow
			return false
		}
		g += mdl.g[a.Kernel]
	}
	return g <= mdl.Gb
}

// SeqLat is Liang's equation (2): the kernels one after another, each on
// all SM_C SMs of the configuration.
func (mdl *Model) SeqLat(c []Alloc) float64 {
	smc := 0
	for _, a := range c {
		smc += a.SMs
	}
	s := 0.0
	for _, a := range c {
		s += mdl.r[a.Kernel][smc]
	}
	return s
}

// drrResult is the exact DRR of a configuration: the finish time of the
// last block, and of each kernel's last block.
type drrResult struct {
	total  float64
	finish []float64
}

func configKey(c []Alloc) string {
	var sb strings.Builder
	for _, a := range c {
		sb.WriteString(strconv.Itoa(a.Kernel))
		sb.WriteByte(':')
		sb.WriteString(strconv.Itoa(a.SMs))
		sb.WriteByte(',')
	}
	return sb.String()
}

// DRR is the dynamic round-robin estimate of Liang et al.: the blocks of the
// kernels are interleaved in leaky-bucket order with weights sm_i; the first
// SM_C blocks start at time 0, one per SM, and every later block goes to the
// SM that frees first. Block latencies are blockLatency(i, sm_i). The result
// is the finish time of the last block (without the bandwidth penalty),
// plus each kernel's finish time in the order of c.
//
// Each kernel's finish is at least R_i[sm_i], what the profile measured for
// it on the SMs it is given (issue 11). The simulation alone can go below:
// a block goes to whichever SM frees first, so once the other kernels run
// out of blocks a kernel given 1 SM spreads over all SM_C SMs while each of
// its blocks still takes its 1-SM latency R_i[1]/TB_i. That latency holds
// only while the kernel has one SM's share of DRAM bandwidth and of the
// memory system; spread over SM_C SMs a bandwidth-bound kernel (triad_f4:
// saturated from 48 SMs) would run SM_C times faster than its measured
// curve allows, below its best solo time. The profile gives no latency for
// a kernel whose SM count changes during its run, so the model keeps the
// allocation's measured latency as the floor (exact for SM-range workers,
// which hold the allocation; conservative for the interleaved merge). The
// total is at least the largest floor.
//
// It is a discrete-event simulation over a binary heap of SM free times
// (only the multiset of free times matters, so one heap of floats and a
// replace-top per block), O(N log SM_C) for N blocks, memoised per
// configuration. A configuration of one kernel returns R[m] directly: it is
// what the profile measured.
func (mdl *Model) DRR(c []Alloc) (float64, []float64) {
	if len(c) == 1 {
		r := mdl.r[c[0].Kernel][c[0].SMs]
		return r, []float64{r}
	}
	key := configKey(c)
	if res, ok := mdl.memo[key]; ok {
		return res.total, res.finish
	}
	mdl.Sims++
	n := len(c)
	w := make([]uint64, n)
	blocks := make([]int64, n)
	lat := make([]float64, n)
	smc := 0
	for j, a := range c {
		w[j] = uint64(a.SMs)
		blocks[j] = mdl.tb[a.Kernel]
		lat[j] = mdl.blockLatency(a.Kernel, a.SMs)
		smc += a.SMs
	}
	heap := make([]float64, smc) // all SMs free at 0: a valid min-heap
	finish := make([]float64, n)
	seq := newBucketSeq(w, blocks)
	total := 0.0
	for j := seq.next(); j >= 0; j = seq.next() {
		end := heap[0] + lat[j]
		finish[j] = max(finish[j], end)
		total = max(total, end)
		// replace the root and sift down
		i := 0
		for {
			l := 2*i + 1
			if l >= smc {
				break
			}
			if r := l + 1; r < smc && heap[r] < heap[l] {
				l = r
			}
			if heap[l] >= end {
				break
			}
			heap[i] = heap[l]
			i = l
		}
		heap[i] = end
	}
	for j, a := range c {
		finish[j] = max(finish[j], mdl.r[a.Kernel][a.SMs])
		total = max(total, finish[j])
	}
	mdl.memo[key] = drrResult{total, finish}
	return total, finish
}

// fluidBounds returns Graham's bounds on the DRR of c without simulating:
// any list schedule of jobs with total work W on S identical SMs, longest
// job p, finishes in [max(W/S, p), W/S + (1-1/S)·p]; DRR's floor, the
// largest R_i[sm_i], raises both.
func (mdl *Model) fluidBounds(c []Alloc) (lo, hi float64) {
	work, pmax, floor := 0.0, 0.0, 0.0
	S := 0
	for _, a := range c {
		l := mdl.blockLatency(a.Kernel, a.SMs)
		work += l * float64(mdl.tb[a.Kernel])
		pmax = max(pmax, l)
		floor = max(floor, mdl.r[a.Kernel][a.SMs])
		S += a.SMs
	}
	fs := float64(S)
	return max(work/fs, pmax, floor), max(work/fs+(1-1/fs)*pmax, floor)
}

// ConLat is Liang's equation (4): infinite when the kernels' global memory
// does not fit, else DRR × penalty. One kernel alone is its R[m].
func (mdl *Model) ConLat(c []Alloc) float64 {
	if !mdl.fits(c) {
		return math.Inf(1)
	}
	if len(c) == 1 {
		return mdl.r[c[0].Kernel][c[0].SMs]
	}
	d, _ := mdl.DRR(c)
	return d * mdl.penalty(c)
}

// Imp is Liang's equation (1): seq_lat - con_lat.
func (mdl *Model) Imp(c []Alloc) float64 {
	if len(c) == 1 {
		return 0
	}
	return mdl.SeqLat(c) - mdl.ConLat(c)
}

// Plan output -----------------------------------------------------------

// PlanFormat is the "format" field of a serialised Plan.
const PlanFormat = "slatec-plan/1"

// Plan is the result of a planner: phases run one after another (for li the
// groups; for cumas the re-ordering windows, which overlap in time).
type Plan struct {
	Format       string  `json:"format"`
	Algorithm    string  `json:"algorithm"`
	Device       string  `json:"device"`
	SMs          int     `json:"sms"`
	Phases       []Phase `json:"phases"`
	PredictedMs  float64 `json:"predicted_ms"`
	SequentialMs float64 `json:"sequential_ms"`
	Gain         float64 `json:"gain"`
	Metrics      Metrics `json:"metrics"`
	// Sequential is the metrics of the sequential plan from the same
	// profiles: every kernel alone on all SMs (li, cumas: with its copies),
	// one after another in profile order. Its makespan is SequentialMs.
	Sequential Metrics `json:"sequential_metrics"`
	// Fallback is set when the planner's own plan was predicted slower
	// than sequential and the plan is the sequential one (see Notes).
	Fallback bool `json:"fallback,omitempty"`
	// Kernels gives, per kernel in profile order, its predicted end and the
	// solo time the metrics normalise by.
	Kernels []KernelTime  `json:"kernels"`
	Classes []KernelClass `json:"classes,omitempty"`
	Notes   []string      `json:"notes,omitempty"`
}

// KernelTime is one kernel's predicted completion in a plan against its
// best solo time: the smallest R[m] over m in 1..M (li, cumas: plus its
// copies), measured on BestSMs SMs. NTT = EndMs / SoloMs >= 1.
type KernelTime struct {
	Name    string  `json:"name"`
	EndMs   float64 `json:"end_ms"`
	SoloMs  float64 `json:"solo_ms"`
	BestSMs int     `json:"best_sms"`
	NTT     float64 `json:"ntt"`
}

// Phase is one step of a plan. Index counts from 0; people (the text
// output, messages, and the JSON's "phase") count phases from 1.
type Phase struct {
	Index     int           `json:"index"`
	StartMs   float64       `json:"start_ms"`
	LatencyMs float64       `json:"latency_ms"`
	Kernels   []PhaseKernel `json:"kernels"`
	// Overlap: the phase's kernels run as written, each on all SMs, launched
	// in the order listed (Slate with SlateOptions.Overlap); their SMs are
	// the device's, not a split.
	Overlap bool `json:"overlap,omitempty"`
	// Tail: a solo phase run as written whose kernel is launched without
	// waiting for the previous solo phase's (SlateOptions.SoloTail): its
	// first blocks fill the SMs the previous kernel's last wave leaves
	// idle, as a program's kernels on two streams do. Its latency is still
	// counted in full after the previous phase's (the gain is the tail's).
	Tail bool `json:"tail,omitempty"`
	// Order is the launch order within the phase (li, cumas).
	Order []string `json:"order,omitempty"`
	// Bucket summarises the leaky-bucket maps of a merged phase.
	Bucket *BucketSummary `json:"bucket,omitempty"`
	// SequentialMs is the phase's kernels run one after another on all SMs.
	SequentialMs float64 `json:"sequential_ms"`
	Note         string  `json:"note,omitempty"`
	// Merge is the merge model's advice on running this phase as one
	// merged kernel (slatec merge); absent when the profile lacks the
	// kernels' threads per block and registers.
	Merge *MergeAdvice `json:"merge,omitempty"`
	// MergeShares is the allocation a merged kernel that interleaves the
	// phase's blocks (slatec merge --mode interleaved or persistent) takes,
	// in kernel order, summing to the SMs: there an allocation is the
	// ratio in which blocks are dispatched, not SMs, so each kernel's share
	// is the rate at which its blocks must start to end when the plan says
	// (blocks / finish time), not its SM count. A memory-bound kernel of
	// many short blocks planned on 36 SMs beside a compute-bound one of few
	// long blocks on 96 gets the larger share (H100: 114:18, measured best
	// 113:19; 36:96 ran 1.47x slower).
	MergeShares []int `json:"merge_shares,omitempty"`
}

// MergeAdvice says whether slatec merge should realise a phase. The phase's
// concurrent latency (DRR × penalty) assumes every kernel keeps its own
// occupancy, which SM-range workers (slatec transform) give; a merged kernel
// has one block size, register count and shared-memory footprint, the
// largest of its parts. The merged estimate is
//
//	merged = latency · Σ R_i[M]·s_i / Σ R_i[M] + dispatch
//
// with s_i and dispatch from occupancy.PredictMerge (the DRR latency already
// holds the merged tail) (docs/MERGE.md,
// "The merge model"), the merged kernel taken to need the largest threads,
// registers and shared memory of the phase's kernels. A merge is
// recommended only when merged < the phase's sequential latency; otherwise
// the phase has no leaky-bucket summary (Bucket) and its note says why.
type MergeAdvice struct {
	Recommended bool    `json:"recommended"`
	PredictedMs float64 `json:"predicted_ms"`
	Reason      string  `json:"reason,omitempty"`
}

// MarshalJSON writes the phase with "phase", its number as the text output
// shows it (Index + 1), ahead of its fields.
func (p Phase) MarshalJSON() ([]byte, error) {
	type fields Phase
	return json.Marshal(struct {
		Number int `json:"phase"`
		fields
	}{p.Index + 1, fields(p)})
}

// PhaseKernel is one kernel in a phase. SMs is 0 where the planner does not
// partition SMs (li, cumas). StartMs and EndMs are absolute predicted times
// (for li and cumas they span the H2D copy to the D2H copy).
type PhaseKernel struct {
	Name    string  `json:"name"`
	SMs     int     `json:"sms,omitempty"`
	StartMs float64 `json:"start_ms"`
	EndMs   float64 `json:"end_ms"`
	// FinishMs is the kernel's finish relative to its phase start, used
	// while building; EndMs is what is serialised.
	FinishMs float64 `json:"-"`
}

// KernelClass records a Slate classification.
type KernelClass struct {
	Name   string `json:"name"`
	Class  Class  `json:"class"`
	Reason string `json:"reason"`
}

// planBuilder accumulates phases back to back.
type planBuilder struct {
	mdl  *Model
	plan *Plan
	now  float64
	solo []float64 // per kernel index: solo turnaround, for metrics
	done map[string]float64
	// native: a kernel alone runs as written, in native_ms where the
	// profile has it (SlateOptions.NativeSolo).
	native bool
}

func newPlanBuilder(mdl *Model, algo string) *planBuilder {
	ps := mdl.PS
	b := &planBuilder{mdl: mdl, plan: &Plan{Format: PlanFormat, Algorithm: algo, Device: ps.Device.Name, SMs: mdl.M}, done: map[string]float64{}}
	b.solo = append(b.solo, mdl.best...)
	return b
}

func (b *planBuilder) solo1(i int) float64 {
	if k := &b.mdl.PS.Kernels[i]; b.native && k.NativeMs > 0 {
		return k.NativeMs
	}
	return b.mdl.r[i][b.mdl.M]
}

// solo adds a phase running kernel i alone on all SMs.
func (b *planBuilder) soloPhase(i int) {
	r := b.solo1(i)
	b.phase(Phase{Kernels: []PhaseKernel{{Name: b.mdl.PS.Kernels[i].Name, SMs: b.mdl.M, FinishMs: r}}, LatencyMs: r})
}

// phase appends p starting now; kernels' FinishMs are relative to its start.
func (b *planBuilder) phase(p Phase) {
	p.Index = len(b.plan.Phases)
	p.StartMs = b.now
	for j := range p.Kernels {
		k := &p.Kernels[j]
		k.StartMs = b.now
		k.EndMs = b.now + k.FinishMs
		i := b.mdl.PS.KernelIndex(k.Name)
		p.SequentialMs += b.solo1(i)
		b.done[k.Name] = k.EndMs
	}
	b.now += p.LatencyMs
	b.plan.Phases = append(b.plan.Phases, p)
}

// finish computes totals and metrics. Sequential is every kernel alone on
// all SMs, one after another; it is always a valid plan, so a plan predicted
// slower than it is replaced by it (Fallback, with a note). Per-phase
// fallbacks (configPhase, Slate) make that a safety net.
func (b *planBuilder) finish() *Plan {
	p := b.plan
	mdl := b.mdl
	n := len(mdl.PS.Kernels)
	seqFin := make([]float64, n)
	seq := 0.0
	for i := range n {
		seq += b.solo1(i)
		seqFin[i] = seq
	}
	if b.now > seq*(1+1e-12) {
		// Notes on the discarded phases go with them.
		p.Notes = []string{fmt.Sprintf("the %s plan was predicted at %.4f ms, slower than sequential (%.4f ms): fell back to sequential", p.Algorithm, b.now, seq)}
		p.Fallback = true
		p.Phases = nil
		b.now, b.done = 0, map[string]float64{}
		for i := range n {
			b.soloPhase(i)
		}
	}
	p.PredictedMs = b.now
	p.SequentialMs = seq
	if p.SequentialMs > 0 {
		p.Gain = 1 - p.PredictedMs/p.SequentialMs
	}
	var fin []float64
	for _, k := range mdl.PS.Kernels {
		fin = append(fin, b.done[k.Name])
	}
	p.Metrics = ComputeMetrics(fin, b.solo, p.PredictedMs)
	p.Sequential = ComputeMetrics(seqFin, b.solo, seq)
	p.Kernels = kernelTimes(mdl.PS, fin, b.solo, mdl.bestM)
	return p
}

func kernelTimes(ps *ProfileSet, fin, solo []float64, bestM []int) []KernelTime {
	var kt []KernelTime
	for i, k := range ps.Kernels {
		t := KernelTime{Name: k.Name, EndMs: fin[i], SoloMs: solo[i], BestSMs: bestM[i]}
		if solo[i] > 0 {
			t.NTT = fin[i] / solo[i]
		}
		kt = append(kt, t)
	}
	return kt
}

// Metrics summarise a plan (Luley, after Eyerman and Eeckhout). All kernels
// arrive at time 0, so a kernel's turnaround time is its predicted
// completion; its solo turnaround is its best solo time, the smallest R[m]
// over every m (li, cumas: plus its copies), not R[M]: a measured curve need
// not be smallest at M, and a kernel given its best m alone would otherwise
// get an NTT below 1. Since no planner predicts a kernel below its best
// solo time, ANTT >= 1 and STP <= the number of kernels by construction.
type Metrics struct {
	MakespanMs float64 `json:"makespan_ms"`
	// ANTT is the mean of TT_multi/TT_solo: lower is better, 1 is optimal.
	ANTT float64 `json:"antt"`
	// STP is the sum of TT_solo/TT_multi: higher is better, at most the
	// number of kernels.
	STP float64 `json:"stp"`
}

// ComputeMetrics returns makespan, ANTT and STP for completion times fin and
// solo turnaround times solo (same order, all arrivals at 0).
func ComputeMetrics(fin, solo []float64, makespan float64) Metrics {
	m := Metrics{MakespanMs: makespan}
	if len(fin) == 0 {
		return m
	}
	for i := range fin {
		if fin[i] > 0 && solo[i] > 0 {
			m.ANTT += fin[i] / solo[i]
			m.STP += solo[i] / fin[i]
		}
	}
	m.ANTT /= float64(len(fin))
	return m
}

// bucketSummary computes the leaky-bucket summary of a merged phase.
func (mdl *Model) bucketSummary(c []Alloc, shares []int) (*BucketSummary, error) {
	in := BucketInput{}
	for i, a := range c {
		in.Alloc = append(in.Alloc, shares[i])
		in.Blocks = append(in.Blocks, mdl.tb[a.Kernel])
	}
	il, err := LeakyBucket(in)
	if err != nil {
		return nil, err
	}
	s := il.Summarize()
	return &s, nil
}

// mergeAdvice applies the merge model to a phase of latency lat (see
// MergeAdvice); nil when a kernel's threads or registers are unknown.
func (b *planBuilder) mergeAdvice(c []Alloc, lat float64) *MergeAdvice {
	mdl := b.mdl
	// Two memory-intensive kernels share DRAM, which the bandwidth penalty
	// models least well: on an H100, transpose+reduce+histogram (all M_M)
	// merged ran 1.13x slower than on streams where the plan predicted a
	// 30-40% gain. As for co-running (SlateOptions.ModelCorun), such a
	// phase is not merged.
	var memory []string
	for _, a := range c {
		if cl, _ := mdl.PS.Classify(a.Kernel); cl.Memory() {
			memory = append(memory, fmt.Sprintf("%s (%s)", mdl.PS.Kernels[a.Kernel].Name, cl))
		}
	}
	if len(memory) >= 2 {
		return &MergeAdvice{Reason: "not merged: " + strings.Join(memory, ", ") + " are memory intensive and would share DRAM, which the model predicts least well"}
	}
	var parts []occupancy.MergePart
	var merged occupancy.Kernel
	seq := 0.0
	for _, a := range c {
		k := &mdl.PS.Kernels[a.Kernel]
		if k.ThreadsPerBlock <= 0 || k.Registers <= 0 {
			return nil
		}
		alone := occupancy.Kernel{Threads: k.ThreadsPerBlock, Registers: k.Registers, StaticShared: k.SharedBytes}
		parts = append(parts, occupancy.MergePart{Name: k.Name, Alone: alone, Blocks: k.Blocks, Ms: b.solo1(a.Kernel)})
		merged.Threads = max(merged.Threads, alone.Threads)
		merged.Registers = max(merged.Registers, alone.Registers)
		merged.StaticShared = max(merged.StaticShared, alone.StaticShared)
		seq += b.solo1(a.Kernel)
	}
	dev := occupancy.SM90
	dev.Name = mdl.PS.Device.Name
	pred, err := dev.PredictMerge(mdl.M, parts, merged, 0)
	if err != nil {
		return &MergeAdvice{Reason: "merge model: " + err.Error()}
	}
	slow := 0.0
	for _, pp := range pred.Parts {
		slow += pp.AloneTime * pp.Slowdown
	}
	ms := lat*slow/pred.Sequential + pred.Dispatch
	adv := &MergeAdvice{Recommended: ms < seq, PredictedMs: ms}
	if !adv.Recommended {
		adv.Reason = fmt.Sprintf("merging is predicted to lose (%.4f ms merged vs %.4f ms sequential)", ms, seq)
		if len(pred.Reasons) > 0 {
			adv.Reason += " because " + strings.Join(pred.Reasons, "; ")
		}
	}
	return adv
}

// mergeShares returns the dispatch shares of a merged phase (see
// Phase.MergeShares): M split in proportion to blocks / finish time, each
// at least 1 (largest remainder). Kernels without a positive finish time
// get their SM counts instead.
func mergeShares(M int, c []Alloc, ks []PhaseKernel, tb []int64) []int {
	rate := make([]float64, len(c))
	for i, a := range c {
		if f := ks[i].FinishMs; f > 0 && tb[a.Kernel] > 0 {
			rate[i] = float64(tb[a.Kernel]) / f
		} else {
			out := make([]int, len(c))
			for j, a := range c {
				out[j] = a.SMs
			}
			return out
		}
	}
	return shares.LargestRemainder(M, rate)
}

// MaxSummaryBlocks bounds the merged phases whose leaky-bucket maps a plan
// summarises (the summary materialises both maps: 8 bytes per block).
const MaxSummaryBlocks = 1 << 26

// configPhase turns a configuration into a phase with exact DRR latency.
func (b *planBuilder) configPhase(c []Alloc, note string) error {
	mdl := b.mdl
	if len(c) == 1 {
		b.soloPhase(c[0].Kernel)
		return nil
	}
	sort.Slice(c, func(x, y int) bool { return c[x].Kernel < c[y].Kernel })
	if !mdl.fits(c) {
		return fmt.Errorf("internal error: phase exceeds device memory")
	}
	d, fin := mdl.DRR(c)
	pen := mdl.penalty(c)
	seq := 0.0
	for _, a := range c {
		seq += b.solo1(a.Kernel)
	}
	if d*pen > seq {
		// Running the phase's kernels one after another on all SMs is
		// always possible: never predict worse (fluid search can pick a
		// phase whose exact latency loses).
		b.plan.Notes = append(b.plan.Notes, fmt.Sprintf("phases %d-%d: the co-run was predicted at %.4f ms, slower than its kernels one after another (%.4f ms): run sequentially", len(b.plan.Phases)+1, len(b.plan.Phases)+len(c), d*pen, seq))
		for _, a := range c {
			b.soloPhase(a.Kernel)
		}
		return nil
	}
	p := Phase{LatencyMs: d * pen, Note: note}
	if pen > 1 {
		p.Note = strings.TrimSpace(fmt.Sprintf("%s bandwidth penalty %.3f", note, pen))
	}
	for j, a := range c {
		p.Kernels = append(p.Kernels, PhaseKernel{Name: mdl.PS.Kernels[a.Kernel].Name, SMs: a.SMs, FinishMs: fin[j] * pen})
	}
	var blocks int64
	for _, a := range c {
		blocks += mdl.tb[a.Kernel]
	}
	p.MergeShares = mergeShares(mdl.M, c, p.Kernels, mdl.tb)
	p.Merge = b.mergeAdvice(c, p.LatencyMs)
	if p.Merge != nil && !p.Merge.Recommended {
		if p.Merge.PredictedMs > 0 {
			p.Note = strings.TrimSpace(p.Note + fmt.Sprintf(" merge predicted to lose (%.4f ms): run as SM-range workers (slatec transform)", p.Merge.PredictedMs))
		} else {
			p.Note = strings.TrimSpace(p.Note + " not merged (memory-intensive kernels): run as SM-range workers (slatec transform)")
		}
		b.plan.Notes = append(b.plan.Notes, fmt.Sprintf("phase %d: %s", len(b.plan.Phases)+1, p.Merge.Reason))
		b.phase(p)
		return nil
	}
	if blocks <= MaxSummaryBlocks {
		bs, err := mdl.bucketSummary(c, p.MergeShares)
		if err != nil {
			return err
		}
		p.Bucket = bs
	} else {
		p.Note = strings.TrimSpace(p.Note + fmt.Sprintf(" (%d blocks: bucket maps not summarised)", blocks))
	}
	b.phase(p)
	return nil
}
