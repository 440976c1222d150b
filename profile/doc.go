// Package profile measures the latency R[m] and DRAM bandwidth B[m] of a
// CUDA kernel on m = 1..M SMs and writes them as a slatec profile
// (plan/FORMAT.md, `slatec-profile/1`), the input of slatec's planners.
//
// Liang et al. emulated "m SMs" with a dummy kernel that occupied the
// others; slatec measures exactly: it runs the kernel's persistent form
// (transform.Persistent) as a runtime job bound to the SM range [0, m-1],
// so the logical grid is the one the application launches and only the
// number of SMs changes.
//
// The pipeline is split so that everything but the measurement itself runs
// and is tested without a GPU:
//
//   - Prepare transforms the file and yields the NVRTC source, the worker's
//     name expression and its parameter layout;
//   - ParseArgs and CheckArgs turn an --args SPEC into typed buffers and
//     scalars and check them against that layout;
//   - ParseSweep / Sweep.Expand choose the SM counts;
//   - Measure drives a Runner (one timed run on m SMs) through warm-up and
//     repetitions and takes medians;
//   - Profile ties these together over a Device (OpenCUDA on a real GPU, a
//     fake in tests) and builds the plan.ProfileSet, classified with plan's
//     Slate thresholds; Merge implements --append;
//   - WritePlot draws the speedup and bandwidth curves (Slate's Fig. 1).
package profile
