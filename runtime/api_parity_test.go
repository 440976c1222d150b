package runtime

import (
	"context"
	"time"
)

// The API that nocgo.go stubs, with its signatures: this file compiles in
// both builds (make vet runs CGO_ENABLED=0 go vet ./...), so a change to a
// cgo signature that the stub does not follow fails there.
var (
	_ func(int) (*Device, error)                                                                  = Open
	_ func(*Device) DeviceInfo                                                                    = (*Device).Info
	_ func(*Device) SMRange                                                                       = (*Device).FullRange
	_ func(*Device) []int                                                                         = (*Device).SMOrder
	_ func(*Device) string                                                                        = (*Device).SMOrderSource
	_ func(*Device, SMRange) []int                                                                = (*Device).SMsOf
	_ func(*Device) error                                                                         = (*Device).Err
	_ func(*Device) error                                                                         = (*Device).Close
	_ func(*Device) error                                                                         = (*Device).Synchronize
	_ func(*Device, int) (DevicePtr, error)                                                       = (*Device).Alloc
	_ func(*Device, DevicePtr) error                                                              = (*Device).Free
	_ func(*Device, DevicePtr, uint32, int) error                                                 = (*Device).Memset32
	_ func(*Device, DevicePtr, []float32) error                                                   = CopyToDevice[float32]
	_ func(*Device, []float32, DevicePtr) error                                                   = CopyFromDevice[float32]
	_ func(*Device, *Kernel, Dim3, Dim3, uint32, []any, SMRange, ...LaunchOption) (*Job, error)   = (*Device).Launch
	_ func(*Device, *Compiled) (*Module, error)                                                   = (*Device).LoadModule
	_ func(*Module) error                                                                         = (*Module).Unload
	_ func(*Module, string, ParamLayout) (*Kernel, error)                                         = (*Module).Kernel
	_ func(*Kernel) string                                                                        = (*Kernel).Name
	_ func(*Kernel) string                                                                        = (*Kernel).Symbol
	_ func(*Kernel) FuncAttrs                                                                     = (*Kernel).Attrs
	_ func(*Kernel) ParamLayout                                                                   = (*Kernel).Layout
	_ func(*Kernel, int, int) (int, error)                                                        = (*Kernel).Occupancy
	_ func(*Job) string                                                                           = (*Job).Name
	_ func(*Job) uint64                                                                           = (*Job).Total
	_ func(*Job) int                                                                              = (*Job).Iters
	_ func(*Job) int                                                                              = (*Job).Workers
	_ func(*Job) SMRange                                                                          = (*Job).Range
	_ func(*Job) <-chan struct{}                                                                  = (*Job).Done
	_ func(*Job) error                                                                            = (*Job).Err
	_ func(*Job) JobStats                                                                         = (*Job).Stats
	_ func(*Job, context.Context) error                                                           = (*Job).Wait
	_ func(*Job, context.Context) ([]uint32, error)                                               = (*Job).RankedWorkers
	_ func(int) LaunchOption                                                                      = WithWaves
	_ func(*Job, context.Context) (uint64, uint64, error)                                         = (*Job).Progress
	_ func(*Job, context.Context, SMRange) (ResizeStats, error)                                   = (*Job).Resize
	_ func(*Job)                                                                                  = (*Job).Cancel
	_ func() (int, int, error)                                                                    = NVRTCVersion
	_ func() ([]int, error)                                                                       = NVRTCSupportedArchs
	_ func(string, string, string, []string, []string) ([]byte, map[string]string, string, error) = nvrtcCompile

	_ func() bool                                                                                     = GreenSupported
	_ func(*Device) (GreenInfo, error)                                                                = (*Device).GreenGranularity
	_ func(*Device, []int) (*GreenSet, error)                                                         = (*Device).NewGreenSet
	_ func(*GreenSet) []int                                                                           = (*GreenSet).Parts
	_ func(*GreenSet) error                                                                           = (*GreenSet).Close
	_ func(*GreenSet, int, *NativeKernel, Dim3, Dim3, uint32, []any) (*NativeLaunch, error)           = (*GreenSet).Launch
	_ func(*Device, *NativeKernel, Dim3, Dim3, uint32, []any, ...LaunchOption) (*NativeLaunch, error) = (*Device).LaunchNative
	_ func(*Device, *Compiled) (*Library, error)                                                      = (*Device).LoadLibrary
	_ func(*Library) error                                                                            = (*Library).Unload
	_ func(*Library, string, ParamLayout) (*NativeKernel, error)                                      = (*Library).Kernel
	_ func(*NativeLaunch) <-chan struct{}                                                             = (*NativeLaunch).Done
	_ func(*NativeLaunch, context.Context) error                                                      = (*NativeLaunch).Wait
	_ func(*NativeLaunch) time.Duration                                                               = (*NativeLaunch).GPUTime
)
