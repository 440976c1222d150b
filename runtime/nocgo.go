//go:build !cgo

package runtime

// The runtime reaches the CUDA driver and NVRTC through cgo (dlopen); it
// cannot be built with CGO_ENABLED=0. This undefined name makes the build
// say so instead of failing on whatever cgo-only name comes first.
var _ = slatec_runtime_needs_cgo__build_with_CGO_ENABLED_1
