package runtime

import "math"

// AutoIters returns the number of logical blocks per task for a worker
// launch of totalBlocks logical blocks on workers worker blocks (occupancy x
// SM count). The drop-in launch helpers emitted by the transform use the
// same rule; keep them in step.
//
// The rule balances these measured effects (DESIGN.md, "Measured on an
// H200"):
//
//   - per-task overhead: with 1 logical block per task a light (1 element
//     per thread) triad ran 1.79x slower than native, 1.01x with 4 and 0.96x
//     with 10, so a task should hold at least ~4 blocks when there are enough;
//
//   - balance: the last task of each worker sets the tail, so each worker
//     should get many tasks: with ~8 (tail <= ~1/8 of its work) the H100's
//     triad of 248 blocks per worker ran 1.114 ms at 31 per task, 1.107 at
//     16, 1.091 at 8 and 1.080 at 4 (native 1.061), so iters is bounded
//     above by total/(workers*64) once the grid is large;
//
//   - resize latency: a retreat waits for the running task to finish (workers
//     drained in ~118 us with ~145 us tasks), so iters is capped at 32.
//
//   - drain and balance of small grids of heavy blocks: a worker with only a
//     few blocks must still get several tasks, or a resize waits for most of
//     its work (a 8192-block FMA kernel, 7 blocks per worker on an H100, ran
//     2 tasks of ~1 ms each with a floor of 4, from its ~2.2 ms solo time)
//     and a finished job's SMs idle while one worker runs its last long task.
//
// Hence: per = total/workers logical blocks per worker; iters = per/64,
// raised to min(4, per/4) so that grids of 16 or more blocks per worker
// amortise the queue atomic while smaller ones still give each worker ~4
// tasks, then clamped to [1, 32]. Compute-bound kernels are insensitive to
// iters (1.00x at any size), so one rule serves both.
func AutoIters(totalBlocks int64, workers int) int {
	if totalBlocks <= 0 || workers <= 0 {
		return 1
	}
	per := totalBlocks / int64(workers)
	if per <= 1 {
		return 1
	}
	it := per / 64
	if floor := min(per/4, 4); it < floor {
		it = floor
	}
	return int(max(1, min(it, 32)))
}

// Task sizing from a measured block time. AutoIters guesses from the grid
// alone; once a kernel has run, its time per logical block says which of
// its costs a task size must answer (Kernel.BlockTime):
//
//   - the queue's claim rate: every task is one atomic on one address, which
//     the GPU serves about one per 2 ns (vector_add, H200: ~2 ns a task with
//     1 block per task). Tasks short enough that workers x claims outrun
//     that serialise the launch: a float4 triad (4.3 µs blocks, 1056
//     workers) ran 1.79x native at 1 block per task, 1.01x at 4. So a task
//     lasts at least workers x claimGapNs (one claim per 16 ns across the
//     GPU, 8x under the measured rate), and never less than workers x
//     claimGapHardNs (8 ns). The hard bound has a 4x margin because a
//     measured block time includes the launch's fixed costs: vector_add's
//     ~1 µs blocks measured 4.3 µs on the queue path (3.4x native, 1 block
//     a task), which a 4 ns bound took for a task long enough;
//   - the tail: the last task of each worker ends the job, about half a task
//     after the average, so a task holds at most 1/tailTasks of a worker's
//     blocks (2% at 50), and at most maxTaskNs for resize latency (a retreat
//     waits for the running task). Heavy blocks get 1 per task: a 16x16
//     SGEMM's 135 µs blocks ran in tasks of 3 by AutoIters (15 blocks per
//     worker), 400 µs tails beside a 2.4 ms job;
//   - light grids: where even the hard rate bound leaves a worker two tasks
//     or fewer, each worker takes one task of its whole share (the static
//     schedule; a second round of short tasks only adds a claim).
const (
	claimGapNs     = 16
	claimGapHardNs = 8
	tailTasks      = 50
	maxTaskNs      = 200_000
)

// TaskIters returns the logical blocks per task for totalBlocks blocks on
// workers worker blocks whose logical blocks each take blockNs nanoseconds
// (the residence time of one block on a full SM); blockNs <= 0 falls back
// to AutoIters.
func TaskIters(totalBlocks int64, workers int, blockNs float64) int {
	if blockNs <= 0 || math.IsNaN(blockNs) || math.IsInf(blockNs, 0) {
		return AutoIters(totalBlocks, workers)
	}
	if totalBlocks <= int64(workers) || workers <= 0 {
		return 1
	}
	w := float64(workers)
	per := float64(totalBlocks) / w
	soft := math.Ceil(w * claimGapNs / blockNs)
	hard := math.Ceil(w * claimGapHardNs / blockNs)
	hi := math.Min(math.Floor(per/tailTasks), math.Floor(maxTaskNs/blockNs))
	it := math.Max(math.Max(math.Min(soft, hi), hard), 1)
	if it > 1 && it >= per/2 {
		it = math.Ceil(per)
	}
	return int(math.Min(it, 32))
}

// blockTimeNs is the time one logical block of a finished launch took:
// gpuNs of the launch, total logical blocks run by busy workers (those of
// the range, or fewer when the grid gives fewer tasks) in tasks of iters.
func blockTimeNs(gpuNs float64, total uint64, iters uint32, rangeWorkers int) float64 {
	if total == 0 || iters == 0 || rangeWorkers <= 0 || gpuNs <= 0 {
		return 0
	}
	busy := min(uint64(rangeWorkers), (total+uint64(iters)-1)/uint64(iters))
	return gpuNs * float64(busy) / float64(total)
}

// ProfileBlockTime is the time of one logical block (ns) of a kernel of
// total logical blocks that ran ms milliseconds on workers worker blocks
// (occupancy x SMs) in tasks of one block: what SetBlockTime takes from a
// profile's R[M].
func ProfileBlockTime(ms float64, total uint64, workers int) float64 {
	return blockTimeNs(ms*1e6, total, 1, workers)
}
