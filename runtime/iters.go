package runtime

// AutoIters returns the number of logical blocks per task for a worker
// launch of totalBlocks logical blocks on workers worker blocks (occupancy x
// SM count). The drop-in launch helpers emitted by the transform use the
// same rule; keep them in step.
//
// The rule balances three measured effects (DESIGN.md, "Measured on an
// H200"):
//   - per-task overhead: with 1 logical block per task a light (1 element
//     per thread) triad ran 1.79x slower than native, 1.01x with 4 and 0.96x
//     with 10, so a task should hold at least ~4 blocks when there are enough;
//   - balance: the last task of each worker sets the tail, so each worker
//     should get ~8 tasks (tail <= ~1/8 of its work), which bounds iters
//     above by total/(workers*8) once the grid is large;
//   - resize latency: a retreat waits for the running task to finish (workers
//     drained in ~118 us with ~145 us tasks), so iters is capped at 32.
//
// Hence: per = total/workers logical blocks per worker; iters = per/8,
// raised to min(4, per) so small grids still amortise the queue atomic but
// every worker gets a task, then clamped to [1, 32]. Compute-bound kernels
// are insensitive to iters (1.00x at any size), so one rule serves both.
func AutoIters(totalBlocks int64, workers int) int {
	if totalBlocks <= 0 || workers <= 0 {
		return 1
	}
	per := totalBlocks / int64(workers)
	if per <= 1 {
		return 1
	}
	it := per / 8
	if floor := min(per, 4); it < floor {
		it = floor
	}
	return int(min(it, 32))
}
