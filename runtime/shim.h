// shim.h: the few CUDA driver and NVRTC declarations slatec's runtime needs.
//
// slatec builds with no CUDA SDK installed, so nothing here includes cuda.h or
// nvrtc.h. The types below are ABI-compatible with the official headers
// (opaque handles are pointers, CUdeviceptr is 64-bit on every 64-bit
// platform CUDA supports, enums are int). Functions are called through
// pointers resolved with dlsym from libcuda.so.1 / libnvrtc.so.*.
#ifndef SLATEC_SHIM_H
#define SLATEC_SHIM_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

typedef struct CUgreenCtx_st *CUgreenCtx;
typedef struct CUdevResourceDesc_st *CUdevResourceDesc;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;

// CUdevResource (cuda.h, RESOURCE_ABI_VERSION 1): a type tag, 92 bytes the
// driver keeps to itself, then a 48-byte union whose SM member starts with
// smCount (CUDA 12.4) followed by minSmPartitionSize and
// smCoscheduledAlignment (CUDA 13; zero from older drivers).
typedef struct {
  int type;
  unsigned char internal_padding[92];
  union {
    struct {
      unsigned int smCount;
      unsigned int minSmPartitionSize;
      unsigned int smCoscheduledAlignment;
    } sm;
    unsigned char oversize[48];
  };
} slate_devres;

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

// Loading. Both return 0 on success; on failure they write a message into
// err (NUL-terminated, truncated to errlen) and return nonzero. A library is
// installed process-wide only when every required symbol resolved.
int slate_cuda_load(const char *path, char *err, size_t errlen);
int slate_nvrtc_load(const char *path, char *err, size_t errlen);
// slate_try_dlopen opens and closes path (to probe candidates); 0 on success.
int slate_try_dlopen(const char *path, char *err, size_t errlen);
int slate_cuda_has_param_info(void);
// slate_preload dlopens path and keeps it loaded (for libnvrtc-builtins).
int slate_preload(const char *path, char *err, size_t errlen);

// Driver API. Every call that needs a context takes it explicitly and makes
// it current first (goroutines migrate between OS threads between cgo calls,
// so "current context" cannot be left to thread-local state).
CUresult slate_cuInit(void);
CUresult slate_cuDriverGetVersion(int *v);
CUresult slate_cuDeviceGetCount(int *n);
CUresult slate_cuDeviceGet(CUdevice *d, int ordinal);
CUresult slate_cuDeviceGetName(char *name, int len, CUdevice d);
CUresult slate_cuDeviceGetAttribute(int *v, int attr, CUdevice d);
CUresult slate_cuDeviceTotalMem(size_t *bytes, CUdevice d);
CUresult slate_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d);
CUresult slate_cuDevicePrimaryCtxRelease(CUdevice d);
CUresult slate_cuCtxSynchronize(CUcontext c);
CUresult slate_cuCtxGetStreamPriorityRange(CUcontext c, int *least, int *greatest);
CUresult slate_cuModuleLoadData(CUcontext c, CUmodule *m, const void *image);
CUresult slate_cuModuleUnload(CUcontext c, CUmodule m);
CUresult slate_cuModuleGetFunction(CUcontext c, CUfunction *f, CUmodule m, const char *name);
CUresult slate_cuFuncGetAttribute(CUcontext c, int *v, int attr, CUfunction f);
CUresult slate_cuFuncSetAttribute(CUcontext c, CUfunction f, int attr, int v);
// Returns CUDA_ERROR_NOT_SUPPORTED (801) when the driver lacks cuFuncGetParamInfo.
CUresult slate_cuFuncGetParamInfo(CUcontext c, CUfunction f, size_t i, size_t *off, size_t *size);
CUresult slate_cuOccupancy(CUcontext c, int *blocks, CUfunction f, int blockSize, size_t dynSmem);
CUresult slate_cuMemAlloc(CUcontext c, CUdeviceptr *p, size_t bytes);
CUresult slate_cuMemFree(CUcontext c, CUdeviceptr p);
CUresult slate_cuMemAllocHost(CUcontext c, void **p, size_t bytes);
CUresult slate_cuMemFreeHost(CUcontext c, void *p);
CUresult slate_cuMemcpyHtoD(CUcontext c, CUdeviceptr dst, const void *src, size_t n);
CUresult slate_cuMemcpyDtoH(CUcontext c, void *dst, CUdeviceptr src, size_t n);
CUresult slate_cuMemcpyHtoDAsync(CUcontext c, CUdeviceptr dst, const void *src, size_t n, CUstream s);
CUresult slate_cuMemcpyDtoHAsync(CUcontext c, void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult slate_cuMemsetD32(CUcontext c, CUdeviceptr p, unsigned int v, size_t n);
CUresult slate_cuMemsetD32Async(CUcontext c, CUdeviceptr p, unsigned int v, size_t n, CUstream s);
CUresult slate_cuStreamCreateWithPriority(CUcontext c, CUstream *s, unsigned int flags, int prio);
CUresult slate_cuStreamDestroy(CUcontext c, CUstream s);
CUresult slate_cuStreamQuery(CUcontext c, CUstream s);
CUresult slate_cuStreamWaitEvent(CUcontext c, CUstream s, CUevent e);
CUresult slate_cuEventCreate(CUcontext c, CUevent *e, unsigned int flags);
CUresult slate_cuEventDestroy(CUcontext c, CUevent e);
CUresult slate_cuEventRecord(CUcontext c, CUevent e, CUstream s);
CUresult slate_cuEventQuery(CUcontext c, CUevent e);
CUresult slate_cuEventElapsedTime(CUcontext c, float *ms, CUevent a, CUevent b);
// slate_launch builds kernelParams from offsets into one packed argument
// buffer (so Go passes no pointers to Go pointers) and calls cuLaunchKernel.
CUresult slate_launch(CUcontext c, CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                      unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, CUstream s,
                      unsigned char *args, const unsigned long long *offsets, int nargs);
// Green contexts (optional, CUDA >= 12.4). slate_cuda_has_green reports
// whether every entry point resolved; the others return 801 otherwise.
int slate_cuda_has_green(void);
CUresult slate_cuDeviceGetSmResource(CUdevice d, unsigned int *count, unsigned int *minPartition, unsigned int *alignment);
// slate_green_create partitions the device's SMs into n green contexts of
// sizes[0..n-2] SMs and the rest (got[] says what each got), with a stream
// each. tmp[0..n-3] receives the intermediate contexts that splitting
// needs; the caller destroys gs and tmp. step says where a failure was.
CUresult slate_green_create(CUcontext primary, CUdevice d, int n, const unsigned int *sizes, CUgreenCtx *gs,
                            CUgreenCtx *tmp, CUcontext *ctxs, CUstream *streams, unsigned int *got, int *step);
CUresult slate_green_destroy(CUgreenCtx g);
// Context-independent libraries: their kernels launch in any context,
// green ones included (cuLaunchKernel takes a CUkernel as a CUfunction).
CUresult slate_cuLibraryLoadData(CUcontext c, CUlibrary *lib, const void *image);
CUresult slate_cuLibraryUnload(CUcontext c, CUlibrary lib);
CUresult slate_cuLibraryGetKernel(CUcontext c, CUkernel *k, CUlibrary lib, const char *name);

// Thread-block cluster launches (optional, CUDA >= 12.0: cuLaunchKernelEx).
// slate_launch_attr and slate_launch_config have the layout of cuda.h's
// CUlaunchAttribute and CUlaunchConfig (green_cgo_test.go checks it).
typedef struct {
  int id; // CUlaunchAttributeID
  char pad[4];
  union {
    char pad[64];
    struct {
      unsigned int x, y, z;
    } clusterDim;
  } value;
} slate_launch_attr;
typedef struct {
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  slate_launch_attr *attrs;
  unsigned int numAttrs;
} slate_launch_config;
int slate_cuda_has_clusters(void);
// slate_launch_cluster launches f (one pointer parameter, then one 64-bit
// integer) over gx blocks of bx threads in clusters of cluster blocks.
CUresult slate_launch_cluster(CUcontext c, CUfunction f, unsigned int gx, unsigned int bx, unsigned int cluster,
                              CUstream s, unsigned long long p0, long long p1);

// Error text; both return a static string, or NULL for an unknown code.
const char *slate_cuErrorName(CUresult r);
const char *slate_cuErrorString(CUresult r);

// NVRTC.
nvrtcResult slate_nvrtcVersion(int *major, int *minor);
nvrtcResult slate_nvrtcGetNumSupportedArchs(int *n);
nvrtcResult slate_nvrtcGetSupportedArchs(int *archs);
nvrtcResult slate_nvrtcCreateProgram(nvrtcProgram *p, const char *src, const char *name);
nvrtcResult slate_nvrtcDestroyProgram(nvrtcProgram *p);
nvrtcResult slate_nvrtcAddNameExpression(nvrtcProgram p, const char *expr);
nvrtcResult slate_nvrtcCompileProgram(nvrtcProgram p, int nopts, const char *const *opts);
nvrtcResult slate_nvrtcGetLoweredName(nvrtcProgram p, const char *expr, const char **lowered);
nvrtcResult slate_nvrtcGetCUBINSize(nvrtcProgram p, size_t *n);
nvrtcResult slate_nvrtcGetCUBIN(nvrtcProgram p, char *out);
nvrtcResult slate_nvrtcGetProgramLogSize(nvrtcProgram p, size_t *n);
nvrtcResult slate_nvrtcGetProgramLog(nvrtcProgram p, char *out);
const char *slate_nvrtcGetErrorString(nvrtcResult r);

#endif
