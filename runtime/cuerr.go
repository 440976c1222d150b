package runtime

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// Driver result codes the runtime treats specially. The values are CUDA's
// (cuda.h, enum cudaError_enum) and are stable across releases.
const (
	cudaSuccess            = 0
	cudaErrInvalidValue    = 1
	cudaErrNotReady        = 600
	cudaErrNotSupported    = 801
	CodeIllegalAddress     = 700 // CUDA_ERROR_ILLEGAL_ADDRESS
	CodeLaunchTimeout      = 702 // CUDA_ERROR_LAUNCH_TIMEOUT
	CodeAssert             = 710 // CUDA_ERROR_ASSERT
	CodeHardwareStackError = 714 // CUDA_ERROR_HARDWARE_STACK_ERROR
	CodeIllegalInstruction = 715 // CUDA_ERROR_ILLEGAL_INSTRUCTION
	CodeMisalignedAddress  = 716 // CUDA_ERROR_MISALIGNED_ADDRESS
	CodeInvalidAddrSpace   = 717 // CUDA_ERROR_INVALID_ADDRESS_SPACE
	CodeInvalidPC          = 718 // CUDA_ERROR_INVALID_PC
	CodeLaunchFailed       = 719 // CUDA_ERROR_LAUNCH_FAILED
	CodeECCUncorrectable   = 214 // CUDA_ERROR_ECC_UNCORRECTABLE
)

// CUDAError is a failed driver call. Name is CUDA's own error name (for
// example CUDA_ERROR_ILLEGAL_ADDRESS) so messages can be searched for.
type CUDAError struct {
	Op   string // driver function, e.g. "cuMemAlloc_v2"
	Code int
	Name string
	Desc string
}

func (e *CUDAError) Error() string {
	return fmt.Sprintf("%s: %s (%d): %s", e.Op, e.Name, e.Code, e.Desc)
}

// Sticky reports whether the error leaves the CUDA context unusable: after a
// kernel fault every later call in the context returns the same error, and
// only destroying (resetting) the context recovers.
func (e *CUDAError) Sticky() bool {
	switch e.Code {
	case CodeIllegalAddress, CodeLaunchTimeout, CodeAssert, CodeHardwareStackError,
		CodeIllegalInstruction, CodeMisalignedAddress, CodeInvalidAddrSpace, CodeInvalidPC,
		CodeLaunchFailed, CodeECCUncorrectable:
		return true
	}
	return false
}

// IsCUDAError reports whether err wraps a driver error with the given code.
func IsCUDAError(err error, code int) bool {
	var ce *CUDAError
	return errors.As(err, &ce) && ce.Code == code
}

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
