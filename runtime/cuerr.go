package runtime

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
)

// Driver result codes the runtime treats specially. The values are CUDA's
// (cuda.h, enum cudaError_enum) and are stable across releases.

// CUDAError is a failed driver call. Name is CUDA's own error name (for
// example CUDA_ERROR_ILLEGAL_ADDRESS) so messages can be searched for.

// Sticky reports whether the error leaves the CUDA context unusable: after a
// kernel fault every later call in the context returns the same error, and
// only destroying (resetting) the context recovers.

// IsCUDAError reports whether err wraps a driver error with the given code.

// cuErr converts a driver result into an error (nil on success).
func cuErr(op string, r C.CUresult) error {
	if r == cudaSuccess {
		return nil
	}
	e := &CUDAError{Op: op, Code: int(r), Name: fmt.Sprintf("CUresult(%d)", int(r)), Desc: "unknown error"}
	if s := C.slate_cuErrorName(r); s != nil {
		e.Name = C.GoString(s)
	}
	if s := C.slate_cuErrorString(r); s != nil {
		e.Desc = C.GoString(s)
	}
	return e
}
