// Package runtime launches, co-runs and resizes slatec's persistent
// workers (docs/ABI.md) on a GPU.
//
// # Libraries
//
// The package links only libdl: the CUDA driver (libcuda.so.1) and NVRTC
// (libnvrtc.so.*) are opened with dlopen at first use, with the few
// prototypes they need declared in shim.h, so slatec builds and its CPU
// tests run with no CUDA SDK and no GPU. Search order:
//
//   - driver: $SLATEC_LIBCUDA alone when set; else libcuda.so.1 through the
//     dynamic loader, then /usr/lib/x86_64-linux-gnu, /usr/lib64 and
//     /usr/lib/wsl/lib.
//   - NVRTC: $SLATEC_LIBNVRTC alone when set; else
//     $SLATEC_CUDA_PREFIX/nvidia/cu13/lib/libnvrtc.so.13 (the project-local
//     prefix that scripts/cuda-tools.sh installs and the Makefile exports),
//     then libnvrtc.so.13, libnvrtc.so.12 and libnvrtc.so through the loader.
//
// A library that cannot be loaded is a *LibraryError naming every file
// tried, why each failed, and the variable to set. Versioned driver entry
// points are resolved by their real names (cuMemAlloc_v2,
// cuEventElapsedTime_v2 falling back to cuEventElapsedTime, ...);
// cuFuncGetParamInfo (CUDA >= 12.4) is optional.
//
// # Compiling
//
// Compiler compiles CUDA C++ with NVRTC to CUBIN for a real architecture
// (the device's, or one named, e.g. "sm_90", with no GPU present), with
// name expressions so templates and mangled kernels are found by their
// source names. CUBINs are cached on disk ($SLATEC_CACHE_DIR, else
// os.UserCacheDir()/slatec/cubin) keyed by the sha256 of source, options,
// name expressions, NVRTC version and architecture; entries are written
// atomically and verified on read. NVRTC gets the CUDA headers from
// $SLATEC_CUDA_INCLUDE (':'-separated) and
// $SLATEC_CUDA_PREFIX/nvidia/cu13/include (+ cccl).
//
// # Jobs
//
// Device.Launch runs a worker over a logical grid on an SM range as a Job;
// Job.Resize moves it to another range (retreat flag, drain, relaunch; the
// queue counter carries progress so no logical block is lost or repeated);
// a resize to a superset grows without a drain (one more launch on the
// added SMs, taking tasks from the same queue). Job.GrowAtEnd queues such a
// grow on the GPU behind another job's end event, so that SMs freed by one
// job get the other's workers without a host round trip (a later Resize to
// that range adopts it; grow.go says what keeps an armed grow correct
// whichever job ends first). WithAfter starts a job behind another in GPU
// order. Job.Wait and Job.Progress never block
// inside the driver. EnableClock times jobs and native launches with GPU
// stamps (%globaltimer) on one clock for every stream, context and
// process: CUDA events on streams that share a hardware queue are stamped
// late, and make concurrent kernels look faster than they were. Control-block
// writes are host-to-device copies on the copy engine, never memset
// kernels, which could wait forever for an SM held by a worker.
//
// # Co-running
//
// Scheduler decides on every arrival and completion whether a task runs
// solo or beside others (Slate's table over Profile classes by default,
// or any Policy), splits the SMs by weight and resizes running jobs; a
// finishing job's SMs go to the survivors at once. Tasks submitted
// together (SubmitAll) are decided together; those that must wait for a
// task running alone are launched behind it (ChainExecutor), so the GPU
// does not idle while the host notices its end. It drives an Executor, so
// the policy is tested with a fake device.
//
// # Threads and contexts
//
// All work uses the device's primary context, made current inside each
// cgo call (goroutines move between OS threads between calls). Device,
// Job, Compiler and Scheduler are safe for concurrent use. A kernel fault
// (e.g. CUDA_ERROR_ILLEGAL_ADDRESS) destroys the context: the faulting
// job's Wait returns the error, later calls fail fast saying so, and only
// a new process recovers.
package runtime
