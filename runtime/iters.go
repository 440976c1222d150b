package runtime

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
