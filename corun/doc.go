// Package corun is the co-running benchmark behind `slatec bench` (issue 11):
// workloads of two or three kernels with fixed total work, run side by side
// in several modes, and the metrics that compare them.
//
// # Pieces
//
//   - The catalogue (catalog.go): eight kernels written for the benchmark
//     (kernels/corun.cu, two per class: memory-bound, compute-bound,
//     latency-bound, shared-memory heavy), their launch shapes and work, and
//     the workloads: every complementary pair, some non-complementary ones,
//     and triples. kernels_slate.go is the file `slatec gen` makes of
//     kernels/corun.cu (go generate; a test checks it is current).
//   - Device (device.go): what a mode needs of the GPU — start a kernel on
//     an SM range, resize it, wait for the first of several to end — with
//     start and end times on one clock. OpenCUDA gives the real one (the
//     runtime package: persistent workers on SM ranges); NewFake a
//     deterministic model of one, so that every mode's logic (split
//     sweeps, grow-on-completion, phases, the runtime's Scheduler) and the
//     metrics are tested on a CPU.
//   - Modes (modes.go): sequential, streams, static (best SM split), green
//     (best split at green-context granularity, optional), scheduler
//     (runtime.Scheduler with Slate's table), stm (Liang's plan) and oracle
//     (every split, survivors grown on completion). MPS (mps.go) runs the
//     kernels in child processes under the MPS daemon. The baselines
//     (sequential, streams, MPS, green) run the kernels as written (native
//     launches from a context-independent library) where the driver
//     allows; the slatec modes run their persistent workers, so the
//     comparison includes the workers' own cost.
//   - Metrics (metrics.go): makespan, STP and ANTT (Luley), per-kernel
//     slowdowns, percentiles of resize latencies.
//   - Results (results.go): the corun.json document
//     (bench/results/corun.schema.json) and plots (plot.go).
//
// # Time
//
// A kernel's start is when its first launch was issued and its end is that
// start plus the job's GPU time (CUDA events around its launches), so a
// makespan is GPU time and host polling does not enter it; the host clock
// only places the jobs of one run relative to each other (microseconds of
// launch skew). The sequential makespan is the sum of the kernels' solo GPU
// times, without host gaps between them.
package corun
