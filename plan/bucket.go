package plan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
)

// Leaky-bucket thread-block interleaving (Liang et al., section 4.1).
//
// Kernel i has a bucket that gains one token per step and releases one of
// its blocks each time it holds C_i tokens, C_i = W/w_i, where w_i is the
// kernel's weight (its SM allocation a_i, or a_i divided by its relative
// block latency under latency compensation) and W = Σ w_j over the kernels
// still holding blocks. Kernel i therefore earns w_i/W of the dispatch
// slots, which is a_i/M when the phase allocation covers the M SMs.
//
// The literal rule "release when full, ties by kernel order" puts every
// kernel whose bucket fills on the same step into one burst (with equal
// allocations all buckets fill together), so a window that catches a burst
// can miss a kernel's share by almost n-1 blocks. slatec therefore hands the
// link out the way a packet scheduler does (WF2Q, Bennett and Zhang 1996):
// one block per step; a kernel is eligible once its bucket has started
// filling the token count of its next block (virtual start (k-1)·C_i <= now)
// and among eligible kernels the one whose bucket fills first (smallest
// k·C_i) goes; exact ties go to the lower kernel index. This is still one
// token per step and capacity C_i; it only spreads simultaneous releases.
//
// Everything is integer arithmetic: with t the step and k_i the blocks of
// kernel i already released, "eligible" is k_i·W <= t·w_i and "fills first"
// compares (k_a+1)·w_b with (k_b+1)·w_a, in 128-bit products. No float is
// ever compared, so ties are exact and the order is deterministic.
//
// Guarantees (checked exhaustively for small cases and on random cases in
// bucket_test.go), for p_i = w_i/W while the set of kernels is constant:
//   - every W consecutive dispatches (one allocation period) contain exactly
//     w_i blocks of kernel i: the SM allocation is met exactly, and the
//     sequence is periodic with period W;
//   - in any window of L consecutive dispatches kernel i gets strictly
//     between L·p_i - 2 and L·p_i + 2 blocks (WF2Q keeps the count within
//     [-1, 1-p_i] of the fluid share at every step), that is, never more
//     than one block away from the ideal count rounded down or up;
//   - with two kernels, every window is within one block (|dev| < 1).
// The stronger "|dev| <= 1 for every window and every kernel" that the paper
// states is impossible in general for three or more kernels: for
// allocations (1, 2, 8) no period-11 sequence at all achieves it (see
// TestBucketNoSequenceIsWithinOneBlock).
//
// Exhausted kernels drop out: when a kernel releases its last block the
// remaining kernels start a new period with W the sum of their weights, so
// the freed share is redistributed in proportion to their weights, and the
// bounds above hold again within the new period structure.

// MaxBucketBlocks bounds the total number of blocks in one interleaving: the
// maps are materialised with one int32 per block.
const MaxBucketBlocks = math.MaxInt32

// BucketInput is the input of LeakyBucket.
type BucketInput struct {
	// Alloc is a_i, the SMs given to kernel i (each >= 1).
	Alloc []int
	// Blocks is TB_i, the number of thread blocks of kernel i (each >= 1).
	Blocks []int64
	// Latency optionally gives each kernel's per-block latency (any unit,
	// all positive). When set, kernel i's weight becomes a_i / Latency[i]:
	// a kernel whose blocks run twice as long needs half as many dispatch
	// slots to keep its a_i SMs busy (capacity C_i is scaled by its relative
	// block latency). Weights are quantised to 20 bits; nil or all-equal
	// latencies give exactly the uncompensated sequence.
	Latency []float64
}

// Interleave is the output: MapKernel[bid] is the kernel of merged block
// bid, MapBlk[bid] the index of that block within its kernel (the number of
// blocks of that kernel dispatched before it).
type Interleave struct {
	MapKernel []int32
	MapBlk    []int32
	// Weights are the integer bucket weights used (a_i, or the quantised
	// compensated weights).
	Weights []uint64
}

// bucketSeq generates the interleaving one block at a time, so that the DRR
// simulation can consume it without materialising maps.
type bucketSeq struct {
	w         []uint64 // weights
	remaining []int64  // blocks left
	k         []uint64 // blocks released in the current period structure
	active    []int    // kernels with blocks left, in index order
	W         uint64   // Σ w over active
	t         uint64   // step within the current segment
	left      int64    // blocks left in total

	// With many kernels a linear scan per block is too slow (1e6 blocks of
	// 50 kernels: 150 ms); above heapMin kernels two heaps are kept: kernels
	// not yet eligible by virtual start k/w, eligible ones by finish (k+1)/w.
	useHeap  bool
	small    bool
	waiting  idxHeap
	eligible idxHeap
}

const heapMin = 8

// idxHeap is a binary min-heap of kernel indices keyed by virtual start
// k/w (waiting) or virtual finish (k+1)/w (eligible), ties to the lower
// index.
type idxHeap struct {
	a        []int
	s        *bucketSeq
	byFinish bool
}

func (h *idxHeap) less(x, y int) bool {
	s := h.s
	kx, ky := s.k[x], s.k[y]
	if h.byFinish {
		kx, ky = kx+1, ky+1
	}
	if s.small {
		l, r := kx*s.w[y], ky*s.w[x]
		if l != r {
			return l < r
		}
		return x < y
	}
	if mulLess(kx, s.w[y], ky, s.w[x]) {
		return true
	}
	return !mulLess(ky, s.w[x], kx, s.w[y]) && x < y
}

func (h *idxHeap) push(i int) {
	h.a = append(h.a, i)
	for c := len(h.a) - 1; c > 0; {
		p := (c - 1) / 2
		if !h.less(h.a[c], h.a[p]) {
			break
		}
		h.a[c], h.a[p] = h.a[p], h.a[c]
		c = p
	}
}

func (h *idxHeap) pop() int {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	for p := 0; ; {
		l := 2*p + 1
		if l >= last {
			break
		}
		if r := l + 1; r < last && h.less(h.a[r], h.a[l]) {
			l = r
		}
		if !h.less(h.a[l], h.a[p]) {
			break
		}
		h.a[l], h.a[p] = h.a[p], h.a[l]
		p = l
	}
	return top
}

func newBucketSeq(w []uint64, blocks []int64) *bucketSeq {
	s := &bucketSeq{w: w, remaining: append([]int64(nil), blocks...), k: make([]uint64, len(w))}
	for _, b := range blocks {
		s.left += b
	}
	if len(w) > heapMin {
		s.useHeap = true
		s.waiting.s, s.eligible.s = s, s
		s.eligible.byFinish = true
		// 64-bit products suffice when every k·w and t·w stays below 2^63.
		var maxW, sumW uint64
		for _, x := range w {
			maxW = max(maxW, x)
			sumW += x
		}
		hi, _ := bits.Mul64(uint64(s.left)+1, max(maxW, sumW))
		s.small = hi == 0 && (uint64(s.left)+1)*max(maxW, sumW) < 1<<63
	}
	s.restart()
	return s
}

// restart begins a new segment over the kernels that still have blocks.
func (s *bucketSeq) restart() {
	s.active = s.active[:0]
	s.W, s.t = 0, 0
	for i, r := range s.remaining {
		if r > 0 {
			s.active = append(s.active, i)
			s.W += s.w[i]
			s.k[i] = 0
		}
	}
	if s.useHeap {
		// at t = 0 every kernel is eligible
		s.waiting.a = s.waiting.a[:0]
		s.eligible.a = s.eligible.a[:0]
		for _, i := range s.active {
			s.eligible.push(i)
		}
	}
}

// mulLess reports a*b < c*d without overflow.
func mulLess(a, b, c, d uint64) bool {
	h1, l1 := bits.Mul64(a, b)
	h2, l2 := bits.Mul64(c, d)
	return h1 < h2 || (h1 == h2 && l1 < l2)
}

// next returns the kernel of the next block, or -1 when all are released.
// The scan over active kernels is linear: phases have few kernels, and a
// linear scan over a handful of entries beats a heap.
func (s *bucketSeq) next() int {
	if s.left == 0 {
		return -1
	}
	if s.useHeap {
		return s.nextHeap()
	}
	best := -1
	for _, i := range s.active {
		// eligible: k_i/w_i <= t/W  <=>  k_i*W <= t*w_i
		if mulLess(s.t, s.w[i], s.k[i], s.W) {
			continue
		}
		// finish (k_i+1)/w_i; smaller wins, ties to lower index (scan order)
		if best < 0 || mulLess(s.k[i]+1, s.w[best], s.k[best]+1, s.w[i]) {
			best = i
		}
	}
	// WF2Q always has an eligible kernel: if every k_i*W > t*w_i, summing
	// gives t*W > t*W. best < 0 would be a bug, not an input error.
	s.k[best]++
	s.t++
	s.left--
	s.remaining[best]--
	if s.remaining[best] == 0 {
		s.restart()
	}
	return best
}

// nextHeap is next with the two heaps; it makes the same choice as the
// linear scan (same keys, same tie rule).
func (s *bucketSeq) nextHeap() int {
	for len(s.waiting.a) > 0 {
		i := s.waiting.a[0]
		if s.small && s.t*s.w[i] < s.k[i]*s.W || !s.small && mulLess(s.t, s.w[i], s.k[i], s.W) {
			break // the earliest start is still in the future
		}
		s.waiting.pop()
		s.eligible.push(i)
	}
	best := s.eligible.pop()
	s.k[best]++
	s.t++
	s.left--
	s.remaining[best]--
	if s.remaining[best] == 0 {
		s.restart()
	} else {
		s.waiting.push(best)
	}
	return best
}

// bucketWeights validates the input and returns the integer weights.
func bucketWeights(in BucketInput) ([]uint64, error) {
	n := len(in.Alloc)
	if n == 0 {
		return nil, errors.New("leaky bucket: no kernels")
	}
	if len(in.Blocks) != n {
		return nil, fmt.Errorf("leaky bucket: %d allocations but %d block counts", n, len(in.Blocks))
	}
	if in.Latency != nil && len(in.Latency) != n {
		return nil, fmt.Errorf("leaky bucket: %d allocations but %d latencies", n, len(in.Latency))
	}
	var total int64
	for i := range n {
		if in.Alloc[i] < 1 || in.Alloc[i] > MaxSMs {
			return nil, fmt.Errorf("leaky bucket: kernel %d: allocation %d outside 1..%d", i, in.Alloc[i], MaxSMs)
		}
		if in.Blocks[i] < 1 {
			return nil, fmt.Errorf("leaky bucket: kernel %d: %d blocks", i, in.Blocks[i])
		}
		total += in.Blocks[i]
		if total > MaxBucketBlocks {
			return nil, fmt.Errorf("leaky bucket: more than %d blocks in total", MaxBucketBlocks)
		}
		if in.Latency != nil && !positive(in.Latency[i]) {
			return nil, fmt.Errorf("leaky bucket: kernel %d: latency %v is not a positive number", i, in.Latency[i])
		}
	}
	w := make([]uint64, n)
	equal := true
	for i := range n {
		if in.Latency != nil && in.Latency[i] != in.Latency[0] {
			equal = false
		}
	}
	if in.Latency == nil || equal {
		for i := range n {
			w[i] = uint64(in.Alloc[i])
		}
		return w, nil
	}
	// Compensated weights a_i/l_i, scaled so the largest is 2^20.
	const scale = 1 << 20
	x := make([]float64, n)
	mx := 0.0
	for i := range n {
		x[i] = float64(in.Alloc[i]) / in.Latency[i]
		mx = max(mx, x[i])
	}
	for i := range n {
		w[i] = uint64(max(1, math.Round(x[i]/mx*scale)))
	}
	return w, nil
}

// LeakyBucket computes the interleaving of the blocks of several kernels.
// Blocks are generated one step at a time only for the first allocation
// period after each change of the kernel set; the periodic rest is copied
// (see replicatePeriods), so 1e6 blocks take a few milliseconds.
func LeakyBucket(in BucketInput) (*Interleave, error) {
	w, err := bucketWeights(in)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, b := range in.Blocks {
		total += b
	}
	out := &Interleave{MapKernel: make([]int32, total), MapBlk: make([]int32, total), Weights: w}
	done := make([]int32, len(w))
	s := newBucketSeq(w, in.Blocks)
	for bid := 0; bid < len(out.MapKernel); {
		if s.t == 0 {
			bid = s.replicatePeriods(out, done, bid)
		}
		i := s.next()
		out.MapKernel[bid] = int32(i)
		out.MapBlk[bid] = done[i]
		done[i]++
		bid++
	}
	return out, nil
}

// replicatePeriods is the fast path of LeakyBucket. While the set of
// kernels is constant the order is periodic: after W = Σ w steps every
// kernel has released exactly w_i blocks (WF2Q keeps each count within
// [-1, 1-p_i] of t·w_i/W; at t = W the counts are integers summing to W, so
// none can be w_i - 1),
// and the comparisons k·W <= t·w and (k_a+1)·w_b < (k_b+1)·w_a are
// unchanged when every k_i grows by w_i and t by W. So the state after a
// period equals the start state: one period is computed and copied as long
// as no kernel can run out inside a copy. At a segment start (t = 0) it
// emits q-1 copies after the first period, q = min (remaining_i-1)/w_i,
// resets the state and returns the next free bid.
func (s *bucketSeq) replicatePeriods(out *Interleave, done []int32, bid int) int {
	q := uint64(math.MaxUint64)
	for _, i := range s.active {
		q = min(q, uint64(s.remaining[i]-1)/s.w[i])
	}
	if q < 2 {
		return bid
	}
	start := bid
	for range s.W {
		i := s.next()
		out.MapKernel[bid] = int32(i)
		out.MapBlk[bid] = done[i]
		done[i]++
		bid++
	}
	period := out.MapKernel[start:bid]
	for c := uint64(1); c < q; c++ {
		for _, k := range period {
			out.MapKernel[bid] = k
			out.MapBlk[bid] = done[k]
			done[k]++
			bid++
		}
	}
	for _, i := range s.active {
		s.remaining[i] -= int64((q - 1) * s.w[i])
		s.k[i] = 0
	}
	s.left -= int64((q - 1) * s.W)
	s.t = 0
	return bid
}

// BucketSummary describes an interleaving in a plan without listing every
// block: the runtime recomputes the maps with LeakyBucket from the
// allocation, and Hash lets it check that it got the same ones.
type BucketSummary struct {
	// Blocks is the total number of blocks in the merged launch.
	Blocks int64 `json:"blocks"`
	// Period is Σ weights: while all kernels have blocks, every Period
	// consecutive dispatches hold exactly weight_i blocks of kernel i.
	Period uint64 `json:"period"`
	// Head is mapKernel for the first dispatches (at most 64), as positions
	// in the phase's kernel list.
	Head []int32 `json:"head"`
	// Hash is the FNV-1a 64-bit hash of the little-endian int32 mapKernel
	// followed by mapBlk, in hex.
	Hash string `json:"hash"`
}

// Summarize returns the summary of an interleaving.
func (il *Interleave) Summarize() BucketSummary {
	var period uint64
	for _, w := range il.Weights {
		period += w
	}
	h := fnv.New64a()
	buf := make([]byte, 0, 1<<16)
	for _, arr := range [][]int32{il.MapKernel, il.MapBlk} {
		for _, v := range arr {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
			if len(buf) == cap(buf) {
				h.Write(buf)
				buf = buf[:0]
			}
		}
	}
	h.Write(buf)
	head := il.MapKernel[:min(64, len(il.MapKernel))]
	return BucketSummary{
		Blocks: int64(len(il.MapKernel)),
		Period: period,
		Head:   append([]int32(nil), head...),
		Hash:   fmt.Sprintf("%016x", h.Sum64()),
	}
}
