// shim.c: dlopen/dlsym loading of libcuda and libnvrtc, and thin wrappers
// that call through the resolved pointers. See shim.h for why.
#include "shim.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUDA_ERROR_NOT_SUPPORTED 801
#define CUDA_ERROR_NOT_INITIALIZED 3

typedef struct {
  void *handle;
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuCtxGetStreamPriorityRange)(int *, int *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemAllocHost)(void **, size_t);
  CUresult (*cuMemFreeHost)(void *);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned int, size_t);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned int, size_t, CUstream);
  CUresult (*cuStreamCreateWithPriority)(CUstream *, unsigned int, int);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamQuery)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned int);
  CUresult (*cuEventCreate)(CUevent *, unsigned int);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventQuery)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                             unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  // Optional: green contexts and context-independent libraries (CUDA >= 12.4).
  CUresult (*cuDeviceGetDevResource)(CUdevice, slate_devres *, int);
  CUresult (*cuDevSmResourceSplitByCount)(slate_devres *, unsigned int *, const slate_devres *, slate_devres *,
                                          unsigned int, unsigned int);
  CUresult (*cuDevResourceGenerateDesc)(CUdevResourceDesc *, slate_devres *, unsigned int);
  CUresult (*cuGreenCtxCreate)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned int);
  CUresult (*cuGreenCtxDestroy)(CUgreenCtx);
  CUresult (*cuGreenCtxGetDevResource)(CUgreenCtx, slate_devres *, int);
  CUresult (*cuGreenCtxStreamCreate)(CUstream *, CUgreenCtx, unsigned int, int);
  CUresult (*cuCtxFromGreenCtx)(CUcontext *, CUgreenCtx);
  CUresult (*cuLibraryLoadData)(CUlibrary *, const void *, void *, void **, unsigned int, void *, void **, unsigned int);
  CUresult (*cuLibraryUnload)(CUlibrary);
  CUresult (*cuLibraryGetKernel)(CUkernel *, CUlibrary, const char *);
  // Optional: cluster launches (CUDA >= 12.0).
  CUresult (*cuLaunchKernelEx)(const slate_launch_config *, CUfunction, void **, void **);
} cuda_api;

typedef struct {
  void *handle;
  nvrtcResult (*nvrtcVersion)(int *, int *);
  nvrtcResult (*nvrtcGetNumSupportedArchs)(int *);
  nvrtcResult (*nvrtcGetSupportedArchs)(int *);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                                    const char *const *);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
  nvrtcResult (*nvrtcAddNameExpression)(nvrtcProgram, const char *);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*nvrtcGetLoweredName)(nvrtcProgram, const char *, const char **);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
  const char *(*nvrtcGetErrorString)(nvrtcResult);
} nvrtc_api;

static cuda_api cu;
static nvrtc_api nv;

typedef struct {
  const char *name;     // preferred (versioned) symbol
  const char *fallback; // older name, or NULL
  void **slot;
  int required;
} sym;

static int resolve(void *h, const sym *syms, size_t n, char *err, size_t errlen) {
  for (size_t i = 0; i < n; i++) {
    void *p = dlsym(h, syms[i].name);
    if (!p && syms[i].fallback) p = dlsym(h, syms[i].fallback);
    if (!p && syms[i].required) {
      snprintf(err, errlen, "missing symbol %s (library too old?)", syms[i].name);
      return 1;
    }
    *syms[i].slot = p;
  }
  return 0;
}

int slate_try_dlopen(const char *path, char *err, size_t errlen) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(err, errlen, "%s", e ? e : "dlopen failed");
    return 1;
  }
  dlclose(h);
  return 0;
}

int slate_preload(const char *path, char *err, size_t errlen) {
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(err, errlen, "%s", e ? e : "dlopen failed");
    return 1;
  }
  return 0; // intentionally never closed
}

#define S(field, name) {name, NULL, (void **)&api.field, 1}
#define SF(field, name, fb) {name, fb, (void **)&api.field, 1}
#define SOPT(field, name) {name, NULL, (void **)&api.field, 0}

int slate_cuda_load(const char *path, char *err, size_t errlen) {
  cuda_api api;
  memset(&api, 0, sizeof api);
  api.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!api.handle) {
    const char *e = dlerror();
    snprintf(err, errlen, "%s", e ? e : "dlopen failed");
    return 1;
  }
  const sym syms[] = {
      S(cuInit, "cuInit"),
      S(cuDriverGetVersion, "cuDriverGetVersion"),
      S(cuDeviceGetCount, "cuDeviceGetCount"),
      S(cuDeviceGet, "cuDeviceGet"),
      S(cuDeviceGetName, "cuDeviceGetName"),
      S(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
      S(cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
      S(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
      S(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
      S(cuCtxGetCurrent, "cuCtxGetCurrent"),
      S(cuCtxSetCurrent, "cuCtxSetCurrent"),
      S(cuCtxSynchronize, "cuCtxSynchronize"),
      S(cuCtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange"),
      S(cuModuleLoadData, "cuModuleLoadData"),
      S(cuModuleUnload, "cuModuleUnload"),
      S(cuModuleGetFunction, "cuModuleGetFunction"),
      S(cuFuncGetAttribute, "cuFuncGetAttribute"),
      S(cuFuncSetAttribute, "cuFuncSetAttribute"),
      SOPT(cuFuncGetParamInfo, "cuFuncGetParamInfo"), // CUDA >= 12.4
      S(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
      S(cuMemAlloc, "cuMemAlloc_v2"),
      S(cuMemFree, "cuMemFree_v2"),
      S(cuMemAllocHost, "cuMemAllocHost_v2"),
      S(cuMemFreeHost, "cuMemFreeHost"),
      S(cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
      S(cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
      S(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
      S(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
      S(cuMemsetD32, "cuMemsetD32_v2"),
      S(cuMemsetD32Async, "cuMemsetD32Async"),
      S(cuStreamCreateWithPriority, "cuStreamCreateWithPriority"),
      S(cuStreamDestroy, "cuStreamDestroy_v2"),
      S(cuStreamQuery, "cuStreamQuery"),
      S(cuStreamWaitEvent, "cuStreamWaitEvent"),
      S(cuEventCreate, "cuEventCreate"),
      S(cuEventDestroy, "cuEventDestroy_v2"),
      S(cuEventRecord, "cuEventRecord"),
      S(cuEventQuery, "cuEventQuery"),
      // _v2 appeared in CUDA 12.8 with the same signature; older drivers
      // export only the unversioned name.
      SF(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
      S(cuLaunchKernel, "cuLaunchKernel"),
      S(cuGetErrorName, "cuGetErrorName"),
      S(cuGetErrorString, "cuGetErrorString"),
      SOPT(cuDeviceGetDevResource, "cuDeviceGetDevResource"), // green contexts: CUDA >= 12.4
      SOPT(cuDevSmResourceSplitByCount, "cuDevSmResourceSplitByCount"),
      SOPT(cuDevResourceGenerateDesc, "cuDevResourceGenerateDesc"),
      SOPT(cuGreenCtxCreate, "cuGreenCtxCreate"),
      SOPT(cuGreenCtxDestroy, "cuGreenCtxDestroy"),
      SOPT(cuGreenCtxGetDevResource, "cuGreenCtxGetDevResource"),
      SOPT(cuGreenCtxStreamCreate, "cuGreenCtxStreamCreate"),
      SOPT(cuCtxFromGreenCtx, "cuCtxFromGreenCtx"),
      SOPT(cuLibraryLoadData, "cuLibraryLoadData"), // CUDA >= 12.0
      SOPT(cuLibraryUnload, "cuLibraryUnload"),
      SOPT(cuLibraryGetKernel, "cuLibraryGetKernel"),
      SOPT(cuLaunchKernelEx, "cuLaunchKernelEx"), // CUDA >= 12.0
  };
  if (resolve(api.handle, syms, sizeof syms / sizeof syms[0], err, errlen)) {
    dlclose(api.handle);
    return 1;
  }
  cu = api;
  return 0;
}

int slate_nvrtc_load(const char *path, char *err, size_t errlen) {
  nvrtc_api api;
  memset(&api, 0, sizeof api);
  api.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!api.handle) {
    const char *e = dlerror();
    snprintf(err, errlen, "%s", e ? e : "dlopen failed");
    return 1;
  }
  const sym syms[] = {
      S(nvrtcVersion, "nvrtcVersion"),
      S(nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs"),
      S(nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs"),
      S(nvrtcCreateProgram, "nvrtcCreateProgram"),
      S(nvrtcDestroyProgram, "nvrtcDestroyProgram"),
      S(nvrtcAddNameExpression, "nvrtcAddNameExpression"),
      S(nvrtcCompileProgram, "nvrtcCompileProgram"),
      S(nvrtcGetLoweredName, "nvrtcGetLoweredName"),
      S(nvrtcGetCUBINSize, "nvrtcGetCUBINSize"),
      S(nvrtcGetCUBIN, "nvrtcGetCUBIN"),
      S(nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize"),
      S(nvrtcGetProgramLog, "nvrtcGetProgramLog"),
      S(nvrtcGetErrorString, "nvrtcGetErrorString"),
  };
  if (resolve(api.handle, syms, sizeof syms / sizeof syms[0], err, errlen)) {
    dlclose(api.handle);
    return 1;
  }
  nv = api;
  return 0;
}

int slate_cuda_has_param_info(void) { return cu.cuFuncGetParamInfo != NULL; }

// setctx makes c current on the calling OS thread unless it already is.
static CUresult setctx(CUcontext c) {
  if (!cu.handle) return CUDA_ERROR_NOT_INITIALIZED;
  CUcontext cur = NULL;
  CUresult r = cu.cuCtxGetCurrent(&cur);
  if (r) return r;
  if (cur == c) return 0;
  return cu.cuCtxSetCurrent(c);
}

#define WITH(c, call)            \
  do {                           \
    CUresult r_ = setctx(c);     \
    if (r_) return r_;           \
    return call;                 \
  } while (0)

#define NOCTX(call)                                         \
  do {                                                      \
    if (!cu.handle) return CUDA_ERROR_NOT_INITIALIZED;      \
    return call;                                            \
  } while (0)

CUresult slate_cuInit(void) { NOCTX(cu.cuInit(0)); }
CUresult slate_cuDriverGetVersion(int *v) { NOCTX(cu.cuDriverGetVersion(v)); }
CUresult slate_cuDeviceGetCount(int *n) { NOCTX(cu.cuDeviceGetCount(n)); }
CUresult slate_cuDeviceGet(CUdevice *d, int o) { NOCTX(cu.cuDeviceGet(d, o)); }
CUresult slate_cuDeviceGetName(char *name, int len, CUdevice d) { NOCTX(cu.cuDeviceGetName(name, len, d)); }
CUresult slate_cuDeviceGetAttribute(int *v, int attr, CUdevice d) { NOCTX(cu.cuDeviceGetAttribute(v, attr, d)); }
CUresult slate_cuDeviceTotalMem(size_t *b, CUdevice d) { NOCTX(cu.cuDeviceTotalMem(b, d)); }
CUresult slate_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { NOCTX(cu.cuDevicePrimaryCtxRetain(c, d)); }
CUresult slate_cuDevicePrimaryCtxRelease(CUdevice d) { NOCTX(cu.cuDevicePrimaryCtxRelease(d)); }
CUresult slate_cuCtxSynchronize(CUcontext c) { WITH(c, cu.cuCtxSynchronize()); }
CUresult slate_cuCtxGetStreamPriorityRange(CUcontext c, int *least, int *greatest) {
  WITH(c, cu.cuCtxGetStreamPriorityRange(least, greatest));
}
CUresult slate_cuModuleLoadData(CUcontext c, CUmodule *m, const void *image) { WITH(c, cu.cuModuleLoadData(m, image)); }
CUresult slate_cuModuleUnload(CUcontext c, CUmodule m) { WITH(c, cu.cuModuleUnload(m)); }
CUresult slate_cuModuleGetFunction(CUcontext c, CUfunction *f, CUmodule m, const char *name) {
  WITH(c, cu.cuModuleGetFunction(f, m, name));
}
CUresult slate_cuFuncGetAttribute(CUcontext c, int *v, int attr, CUfunction f) {
  WITH(c, cu.cuFuncGetAttribute(v, attr, f));
}
CUresult slate_cuFuncSetAttribute(CUcontext c, CUfunction f, int attr, int v) {
  WITH(c, cu.cuFuncSetAttribute(f, attr, v));
}
CUresult slate_cuFuncGetParamInfo(CUcontext c, CUfunction f, size_t i, size_t *off, size_t *size) {
  if (!cu.cuFuncGetParamInfo) return CUDA_ERROR_NOT_SUPPORTED;
  WITH(c, cu.cuFuncGetParamInfo(f, i, off, size));
}
CUresult slate_cuOccupancy(CUcontext c, int *blocks, CUfunction f, int blockSize, size_t dynSmem) {
  WITH(c, cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, f, blockSize, dynSmem));
}
CUresult slate_cuMemAlloc(CUcontext c, CUdeviceptr *p, size_t n) { WITH(c, cu.cuMemAlloc(p, n)); }
CUresult slate_cuMemFree(CUcontext c, CUdeviceptr p) { WITH(c, cu.cuMemFree(p)); }
CUresult slate_cuMemAllocHost(CUcontext c, void **p, size_t n) { WITH(c, cu.cuMemAllocHost(p, n)); }
CUresult slate_cuMemFreeHost(CUcontext c, void *p) { WITH(c, cu.cuMemFreeHost(p)); }
CUresult slate_cuMemcpyHtoD(CUcontext c, CUdeviceptr dst, const void *src, size_t n) {
  WITH(c, cu.cuMemcpyHtoD(dst, src, n));
}
CUresult slate_cuMemcpyDtoH(CUcontext c, void *dst, CUdeviceptr src, size_t n) {
  WITH(c, cu.cuMemcpyDtoH(dst, src, n));
}
CUresult slate_cuMemcpyHtoDAsync(CUcontext c, CUdeviceptr dst, const void *src, size_t n, CUstream s) {
  WITH(c, cu.cuMemcpyHtoDAsync(dst, src, n, s));
}
CUresult slate_cuMemcpyDtoHAsync(CUcontext c, void *dst, CUdeviceptr src, size_t n, CUstream s) {
  WITH(c, cu.cuMemcpyDtoHAsync(dst, src, n, s));
}
CUresult slate_cuMemsetD32(CUcontext c, CUdeviceptr p, unsigned int v, size_t n) { WITH(c, cu.cuMemsetD32(p, v, n)); }
CUresult slate_cuMemsetD32Async(CUcontext c, CUdeviceptr p, unsigned int v, size_t n, CUstream s) {
  WITH(c, cu.cuMemsetD32Async(p, v, n, s));
}
CUresult slate_cuStreamCreateWithPriority(CUcontext c, CUstream *s, unsigned int flags, int prio) {
  WITH(c, cu.cuStreamCreateWithPriority(s, flags, prio));
}
CUresult slate_cuStreamDestroy(CUcontext c, CUstream s) { WITH(c, cu.cuStreamDestroy(s)); }
CUresult slate_cuStreamQuery(CUcontext c, CUstream s) { WITH(c, cu.cuStreamQuery(s)); }
CUresult slate_cuStreamWaitEvent(CUcontext c, CUstream s, CUevent e) { WITH(c, cu.cuStreamWaitEvent(s, e, 0)); }
CUresult slate_cuEventCreate(CUcontext c, CUevent *e, unsigned int flags) { WITH(c, cu.cuEventCreate(e, flags)); }
CUresult slate_cuEventDestroy(CUcontext c, CUevent e) { WITH(c, cu.cuEventDestroy(e)); }
CUresult slate_cuEventRecord(CUcontext c, CUevent e, CUstream s) { WITH(c, cu.cuEventRecord(e, s)); }
CUresult slate_cuEventQuery(CUcontext c, CUevent e) { WITH(c, cu.cuEventQuery(e)); }
CUresult slate_cuEventElapsedTime(CUcontext c, float *ms, CUevent a, CUevent b) {
  WITH(c, cu.cuEventElapsedTime(ms, a, b));
}

CUresult slate_launch(CUcontext c, CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                      unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, CUstream s,
                      unsigned char *args, const unsigned long long *offsets, int nargs) {
  void *stackp[64];
  void **params = stackp;
  if (nargs > 64) {
    params = (void **)malloc(sizeof(void *) * (size_t)nargs);
    if (!params) return 2; // CUDA_ERROR_OUT_OF_MEMORY
  }
  for (int i = 0; i < nargs; i++) params[i] = args + offsets[i];
  CUresult r = setctx(c);
  if (!r) r = cu.cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL);
  if (params != stackp) free(params);
  return r;
}

const char *slate_cuErrorName(CUresult r) {
  const char *s = NULL;
  if (!cu.handle || cu.cuGetErrorName(r, &s) != 0) return NULL;
  return s;
}

const char *slate_cuErrorString(CUresult r) {
  const char *s = NULL;
  if (!cu.handle || cu.cuGetErrorString(r, &s) != 0) return NULL;
  return s;
}

#define NV(call)                   \
  do {                             \
    if (!nv.handle) return 11;     \
    return call;                   \
  } while (0)

nvrtcResult slate_nvrtcVersion(int *major, int *minor) { NV(nv.nvrtcVersion(major, minor)); }
nvrtcResult slate_nvrtcGetNumSupportedArchs(int *n) { NV(nv.nvrtcGetNumSupportedArchs(n)); }
nvrtcResult slate_nvrtcGetSupportedArchs(int *a) { NV(nv.nvrtcGetSupportedArchs(a)); }
nvrtcResult slate_nvrtcCreateProgram(nvrtcProgram *p, const char *src, const char *name) {
  NV(nv.nvrtcCreateProgram(p, src, name, 0, NULL, NULL));
}
nvrtcResult slate_nvrtcDestroyProgram(nvrtcProgram *p) { NV(nv.nvrtcDestroyProgram(p)); }
nvrtcResult slate_nvrtcAddNameExpression(nvrtcProgram p, const char *e) { NV(nv.nvrtcAddNameExpression(p, e)); }
nvrtcResult slate_nvrtcCompileProgram(nvrtcProgram p, int n, const char *const *o) {
  NV(nv.nvrtcCompileProgram(p, n, o));
}
nvrtcResult slate_nvrtcGetLoweredName(nvrtcProgram p, const char *e, const char **l) {
  NV(nv.nvrtcGetLoweredName(p, e, l));
}
nvrtcResult slate_nvrtcGetCUBINSize(nvrtcProgram p, size_t *n) { NV(nv.nvrtcGetCUBINSize(p, n)); }
nvrtcResult slate_nvrtcGetCUBIN(nvrtcProgram p, char *o) { NV(nv.nvrtcGetCUBIN(p, o)); }
nvrtcResult slate_nvrtcGetProgramLogSize(nvrtcProgram p, size_t *n) { NV(nv.nvrtcGetProgramLogSize(p, n)); }
nvrtcResult slate_nvrtcGetProgramLog(nvrtcProgram p, char *o) { NV(nv.nvrtcGetProgramLog(p, o)); }
const char *slate_nvrtcGetErrorString(nvrtcResult r) {
  if (!nv.handle) return NULL;
  return nv.nvrtcGetErrorString(r);
}

// ---- green contexts ---------------------------------------------------------

int slate_cuda_has_clusters(void) { return cu.cuLaunchKernelEx != NULL; }

CUresult slate_launch_cluster(CUcontext c, CUfunction f, unsigned int gx, unsigned int bx, unsigned int cluster,
                              CUstream s, unsigned long long p0, long long p1) {
  if (!cu.cuLaunchKernelEx) return CUDA_ERROR_NOT_SUPPORTED;
  slate_launch_attr a;
  memset(&a, 0, sizeof a);
  a.id = 4; // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
  a.value.clusterDim.x = cluster;
  a.value.clusterDim.y = 1;
  a.value.clusterDim.z = 1;
  slate_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = gx;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = bx;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = s;
  cfg.attrs = &a;
  cfg.numAttrs = 1;
  void *params[2] = {&p0, &p1};
  WITH(c, cu.cuLaunchKernelEx(&cfg, f, params, NULL));
}

int slate_cuda_has_green(void) {
  return cu.cuDeviceGetDevResource && cu.cuDevSmResourceSplitByCount && cu.cuDevResourceGenerateDesc &&
         cu.cuGreenCtxCreate && cu.cuGreenCtxDestroy && cu.cuGreenCtxGetDevResource && cu.cuGreenCtxStreamCreate &&
         cu.cuCtxFromGreenCtx && cu.cuLibraryLoadData && cu.cuLibraryUnload && cu.cuLibraryGetKernel;
}

#define CU_DEV_RESOURCE_TYPE_SM 1
#define CU_GREEN_CTX_DEFAULT_STREAM 1
#define CU_STREAM_NON_BLOCKING 1

CUresult slate_cuDeviceGetSmResource(CUdevice d, unsigned int *count, unsigned int *minPartition,
                                     unsigned int *alignment) {
  if (!cu.cuDeviceGetDevResource) return CUDA_ERROR_NOT_SUPPORTED;
  slate_devres r;
  memset(&r, 0, sizeof r);
  CUresult e = cu.cuDeviceGetDevResource(d, &r, CU_DEV_RESOURCE_TYPE_SM);
  if (e) return e;
  *count = r.sm.smCount;
  *minPartition = r.sm.minSmPartitionSize; // 0 from drivers before CUDA 13
  *alignment = r.sm.smCoscheduledAlignment;
  return 0;
}

// greenFromResource makes a green context of r and its CUcontext.
static CUresult greenFromResource(CUdevice d, slate_devres *r, CUgreenCtx *g, CUcontext *c) {
  CUdevResourceDesc desc = NULL;
  CUresult e = cu.cuDevResourceGenerateDesc(&desc, r, 1);
  if (!e) e = cu.cuGreenCtxCreate(g, desc, d, CU_GREEN_CTX_DEFAULT_STREAM);
  if (!e && c) e = cu.cuCtxFromGreenCtx(c, *g);
  return e;
}

CUresult slate_green_create(CUcontext primary, CUdevice d, int n, const unsigned int *sizes, CUgreenCtx *gs,
                            CUgreenCtx *tmp, CUcontext *ctxs, CUstream *streams, unsigned int *got, int *step) {
  if (!slate_cuda_has_green()) return CUDA_ERROR_NOT_SUPPORTED;
  CUresult e = setctx(primary); // keeps the primary context alive and current, as the driver advises
  if (e) return e;
  slate_devres in, grp, rem;
  memset(&in, 0, sizeof in);
  *step = 0;
  e = cu.cuDeviceGetDevResource(d, &in, CU_DEV_RESOURCE_TYPE_SM);
  for (int i = 0; !e && i < n - 1; i++) {
    unsigned int nb = 1;
    memset(&grp, 0, sizeof grp);
    memset(&rem, 0, sizeof rem);
    *step = 1 + 3 * i;
    e = cu.cuDevSmResourceSplitByCount(&grp, &nb, &in, &rem, 0, sizes[i]);
    if (!e && nb != 1) e = CUDA_ERROR_NOT_SUPPORTED;
    if (e) break;
    got[i] = grp.sm.smCount;
    *step = 2 + 3 * i;
    e = greenFromResource(d, &grp, &gs[i], &ctxs[i]);
    if (e) break;
    *step = 3 + 3 * i;
    if (i == n - 2) {
      got[n - 1] = rem.sm.smCount;
      e = greenFromResource(d, &rem, &gs[n - 1], &ctxs[n - 1]);
    } else {
      // A split's outputs cannot be split again: the remainder becomes a
      // green context whose resource is split next.
      e = greenFromResource(d, &rem, &tmp[i], NULL);
      if (!e) {
        memset(&in, 0, sizeof in);
        e = cu.cuGreenCtxGetDevResource(tmp[i], &in, CU_DEV_RESOURCE_TYPE_SM);
      }
    }
  }
  for (int i = 0; !e && i < n; i++) {
    *step = 100 + i;
    e = cu.cuGreenCtxStreamCreate(&streams[i], gs[i], CU_STREAM_NON_BLOCKING, 0);
  }
  return e;
}

CUresult slate_green_destroy(CUgreenCtx g) {
  if (!g || !cu.cuGreenCtxDestroy) return 0;
  return cu.cuGreenCtxDestroy(g);
}

CUresult slate_cuLibraryLoadData(CUcontext c, CUlibrary *lib, const void *image) {
  if (!cu.cuLibraryLoadData) return CUDA_ERROR_NOT_SUPPORTED;
  WITH(c, cu.cuLibraryLoadData(lib, image, NULL, NULL, 0, NULL, NULL, 0));
}

CUresult slate_cuLibraryUnload(CUcontext c, CUlibrary lib) {
  if (!cu.cuLibraryUnload) return CUDA_ERROR_NOT_SUPPORTED;
  WITH(c, cu.cuLibraryUnload(lib));
}

CUresult slate_cuLibraryGetKernel(CUcontext c, CUkernel *k, CUlibrary lib, const char *name) {
  if (!cu.cuLibraryGetKernel) return CUDA_ERROR_NOT_SUPPORTED;
  WITH(c, cu.cuLibraryGetKernel(k, lib, name));
}
