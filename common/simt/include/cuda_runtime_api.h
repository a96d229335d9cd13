/*
 * SIMT emulator: the CUDA runtime API as plain C declarations.
 * The same names, types and error-code values as the CUDA toolkit's
 * cuda_runtime_api.h and driver_types.h, so host files written in C11 build
 * unchanged against the emulator (TARGET=emu) or the toolkit (TARGET=cuda).
 * Only what the course uses is here: memory, copies, streams and events (all
 * synchronous), errors, device properties and function attributes. Nothing
 * of the real toolkit is included; the toolkit need not be installed.
 * Device-side features (threadIdx, __syncthreads, <<<...>>>) are in
 * cuda_runtime.h, which is C++.
 */
#ifndef SIMT_CUDA_RUNTIME_API_H
#define SIMT_CUDA_RUNTIME_API_H

#include <stddef.h>
#include "vector_types.h"

/** Marks every translation unit that is built for the emulator. */
#ifndef __SIMT_EMULATOR__
#define __SIMT_EMULATOR__ 1
#endif

/* Version numbers the emulator claims: CUDA 12.8 API level (it has
 * cudaGetDriverEntryPointByVersion, new in 12.5). */
#define CUDART_VERSION 12080
#define CUDA_VERSION 12080

#ifdef __cplusplus
extern "C" {
#endif

/** Error codes, with the toolkit's numeric values (driver_types.h). */
typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorCudartUnloading = 4,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidPitchValue = 12,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidHostPointer = 16,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInsufficientDriver = 35,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorNoKernelImageForDevice = 209,
    cudaErrorUnsupportedLimit = 215,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchTimeout = 702,
    cudaErrorAssert = 710,
    cudaErrorHostMemoryAlreadyRegistered = 712,
    cudaErrorHostMemoryNotRegistered = 713,
    cudaErrorIllegalInstruction = 715,
    cudaErrorMisalignedAddress = 716,
    cudaErrorLaunchFailure = 719,
    cudaErrorNotPermitted = 800,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999
} cudaError_t;

typedef enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
} cudaMemcpyKind;

typedef enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9
} cudaFuncAttribute;

typedef enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrTotalConstantMemory = 9,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
} cudaDeviceAttr;

/** Device description; a subset of the toolkit's fields, same names. */
typedef struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    /* No clockRate or memoryClockRate: CUDA 13 dropped both (code that
     * names them does not build with its nvcc); cudaDeviceGetAttribute
     * (cudaDevAttrClockRate, cudaDevAttrMemoryClockRate) still gives them. */
    size_t totalConstMem;
    int major;
    int minor;
    int multiProcessorCount;
    int integrated;
    int concurrentKernels;
    int memoryBusWidth;
    int l2CacheSize;
    int maxThreadsPerMultiProcessor;
    int unifiedAddressing;
    int managedMemory;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    size_t sharedMemPerBlockOptin;
    int maxBlocksPerMultiProcessor;
    int cooperativeLaunch;
} cudaDeviceProp;

typedef struct cudaFuncAttributes {
    size_t sharedSizeBytes;
    size_t constSizeBytes;
    size_t localSizeBytes;
    int maxThreadsPerBlock;
    int numRegs;
    int ptxVersion;
    int binaryVersion;
    int maxDynamicSharedSizeBytes;
} cudaFuncAttributes;

/** Where a pointer points (cudaPointerGetAttributes). */
typedef enum cudaMemoryType {
    cudaMemoryTypeUnregistered = 0,
    cudaMemoryTypeHost = 1,
    cudaMemoryTypeDevice = 2,
    cudaMemoryTypeManaged = 3
} cudaMemoryType;

/** What cudaPointerGetAttributes says of a pointer. */
typedef struct cudaPointerAttributes {
    enum cudaMemoryType type;
    int device;
    void *devicePointer;
    void *hostPointer;
} cudaPointerAttributes;

/** A kernel's preferred split of L1 and shared memory (a hint; ignored here). */
typedef enum cudaFuncCache {
    cudaFuncCachePreferNone = 0,
    cudaFuncCachePreferShared = 1,
    cudaFuncCachePreferL1 = 2,
    cudaFuncCachePreferEqual = 3
} cudaFuncCache;

/** Shared-memory bank width: a setting of GPUs before Volta; later ones,
 *  and the emulator, accept it and keep 4-byte banks. */
typedef enum cudaSharedMemConfig {
    cudaSharedMemBankSizeDefault = 0,
    cudaSharedMemBankSizeFourByte = 1,
    cudaSharedMemBankSizeEightByte = 2
} cudaSharedMemConfig;

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostRegisterDefault 0x00
#define cudaHostRegisterPortable 0x01
#define cudaHostRegisterMapped 0x02
#define cudaHostRegisterIoMemory 0x04
#define cudaHostRegisterReadOnly 0x08
#define cudaMemAttachGlobal 0x01

/* --- devices ------------------------------------------------------------ */

/** @brief Number of devices: always 1, the emulated one.
 *  @param count receives the count. @return cudaSuccess or cudaErrorInvalidValue. */
cudaError_t cudaGetDeviceCount(int *count);
/** @brief Select a device; only device 0 exists. @param device index.
 *  @return cudaSuccess or cudaErrorInvalidDevice. */
cudaError_t cudaSetDevice(int device);
/** @brief Current device (always 0). @param device receives it. @return cudaSuccess. */
cudaError_t cudaGetDevice(int *device);
/** @brief Describe the emulated device (an sm_90-like part, SMs = CPU cores).
 *  @param prop receives the description. @param device must be 0.
 *  @return cudaSuccess, cudaErrorInvalidValue or cudaErrorInvalidDevice. */
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
/** @brief One device attribute, consistent with cudaGetDeviceProperties.
 *  @param value receives it. @param attr which. @param device must be 0.
 *  @return cudaSuccess or an error. */
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device);
/** @brief Wait for all work; returns a pending kernel fault (sticky, as on a GPU).
 *  @return cudaSuccess or the fault. */
cudaError_t cudaDeviceSynchronize(void);
/** @brief Clear the sticky fault and the last error. @return cudaSuccess. */
cudaError_t cudaDeviceReset(void);
/** Device limits (cudaDeviceSetLimit), with the toolkit's values. */
typedef enum cudaLimit {
    cudaLimitStackSize = 0x00,
    cudaLimitPrintfFifoSize = 0x01,
    cudaLimitMallocHeapSize = 0x02,
    cudaLimitDevRuntimeSyncDepth = 0x03,
    cudaLimitDevRuntimePendingLaunchCount = 0x04,
    cudaLimitMaxL2FetchGranularity = 0x05,
    cudaLimitPersistingL2CacheSize = 0x06
} cudaLimit;
/** @brief Set a device limit. Kept for cudaDeviceGetLimit and otherwise
 *  without effect: the emulator's printf is the C library's, device malloc
 *  the host's, and a thread's stack is SIMT_STACK_KB (64 KB) whatever the
 *  stack limit says. @param limit which. @param value its value.
 *  @return cudaSuccess, or cudaErrorUnsupportedLimit for a limit not listed. */
cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value);
/** @brief A device limit: the value set, else an H100's default (stack
 *  1 KB, printf FIFO 1 MB, malloc heap 8 MB, sync depth 2, 2048 pending
 *  launches, L2 fetch 64 bytes, no persisting L2). @param value receives it.
 *  @param limit which. @return cudaSuccess or cudaErrorUnsupportedLimit. */
cudaError_t cudaDeviceGetLimit(size_t *value, cudaLimit limit);
/** @brief Driver version claimed by the emulator. @param v receives it. @return cudaSuccess. */
cudaError_t cudaDriverGetVersion(int *v);
/** @brief Runtime version claimed by the emulator. @param v receives it. @return cudaSuccess. */
cudaError_t cudaRuntimeGetVersion(int *v);

/* --- errors ------------------------------------------------------------- */

/** @brief Return and clear the last error (a fault stays sticky). @return the error. */
cudaError_t cudaGetLastError(void);
/** @brief Return the last error without clearing it. @return the error. */
cudaError_t cudaPeekAtLastError(void);
/** @brief CUDA's description of an error code. @param e the code. @return a static string. */
const char *cudaGetErrorString(cudaError_t e);
/** @brief CUDA's name of an error code ("cudaErrorInvalidValue"). @param e the code. @return a static string. */
const char *cudaGetErrorName(cudaError_t e);

/* --- memory ------------------------------------------------------------- */

/** @brief Allocate "device" memory: pages of its own that host code may not
 *  touch (a segmentation fault, as on a GPU; see the emulator's README), or
 *  256-byte aligned heap memory under the sanitizers.
 *  @param ptr receives the pointer. @param size bytes. @return cudaSuccess or cudaErrorMemoryAllocation. */
cudaError_t cudaMalloc(void **ptr, size_t size);
/** @brief Free memory from cudaMalloc; NULL is allowed. @param ptr the pointer. @return cudaSuccess. */
cudaError_t cudaFree(void *ptr);
/** @brief Managed memory is ordinary memory here. @param ptr receives it. @param size bytes.
 *  @param flags ignored. @return as cudaMalloc. */
cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags);
/** @brief Pinned host memory is ordinary memory here. @param ptr receives it. @param size bytes.
 *  @return as cudaMalloc. */
cudaError_t cudaMallocHost(void **ptr, size_t size);
/** @brief As cudaMallocHost. @param ptr receives it. @param size bytes. @param flags ignored. @return as cudaMalloc. */
cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags);
/** @brief Free pinned host memory. @param ptr the pointer. @return cudaSuccess. */
cudaError_t cudaFreeHost(void *ptr);
/** @brief cudaMalloc, run at once (stream-ordered allocation).
 *  @param ptr receives the pointer. @param size bytes. @param stream ignored. @return as cudaMalloc. */
cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream);
/** @brief cudaFree, run at once. @param ptr the pointer. @param stream ignored. @return as cudaFree. */
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream);
/** @brief What kind of memory p points into: device (cudaMalloc), managed,
 *  pinned host (cudaMallocHost, cudaHostAlloc) or unregistered (anything
 *  else, such as malloc), with its device and host addresses as CUDA gives
 *  them. @param attr receives them. @param p the pointer.
 *  @return cudaSuccess, or cudaErrorInvalidValue for a NULL attr. */
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attr, const void *p);
/** @brief Copy bytes (memmove semantics are not promised, as in CUDA).
 *  @param dst destination. @param src source. @param count bytes. @param kind checked for range only.
 *  @return cudaSuccess or cudaErrorInvalidMemcpyDirection. */
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind);
/** @brief cudaMemcpy, run at once. @param dst destination. @param src source. @param count bytes.
 *  @param kind direction. @param stream ignored. @return as cudaMemcpy. */
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t stream);
/** @brief 2-D copy of height rows of width bytes. @param dst destination. @param dpitch its row pitch.
 *  @param src source. @param spitch its row pitch. @param width bytes per row. @param height rows.
 *  @param kind direction. @return cudaSuccess or cudaErrorInvalidPitchValue. */
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind);
/** @brief Set bytes. @param ptr destination. @param value byte value. @param count bytes. @return cudaSuccess. */
cudaError_t cudaMemset(void *ptr, int value, size_t count);
/** @brief cudaMemset, run at once. @param ptr destination. @param value byte. @param count bytes.
 *  @param stream ignored. @return cudaSuccess. */
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream);
/** @brief Device memory for height rows of width bytes, each row starting
 *  pitch bytes after the last: width rounded up to 512 bytes, the row
 *  alignment an H100 gives. @param ptr receives the memory. @param pitch
 *  receives the row pitch. @param width bytes per row. @param height rows.
 *  @return as cudaMalloc, or cudaErrorInvalidValue for a NULL ptr or pitch. */
cudaError_t cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height);
/** @brief cudaMemcpy2D, run at once. @param dst destination. @param dpitch its row pitch.
 *  @param src source. @param spitch its row pitch. @param width bytes per row. @param height rows.
 *  @param kind direction. @param stream ignored. @return as cudaMemcpy2D. */
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, cudaMemcpyKind kind, cudaStream_t stream);
/** @brief Set width bytes of each of height rows, pitch bytes apart. @param ptr the first row.
 *  @param pitch row pitch. @param value byte value. @param width bytes per row. @param height rows.
 *  @return cudaSuccess, cudaErrorInvalidPitchValue (width above pitch) or cudaErrorInvalidValue. */
cudaError_t cudaMemset2D(void *ptr, size_t pitch, int value, size_t width, size_t height);
/** @brief cudaMemset2D, run at once. @param ptr the first row. @param pitch row pitch.
 *  @param value byte value. @param width bytes per row. @param height rows. @param stream ignored.
 *  @return as cudaMemset2D. */
cudaError_t cudaMemset2DAsync(void *ptr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream);
/** @brief Pin and map host memory for kernels (zero-copy): kernels may then
 *  be given it, or the pointer cudaHostGetDevicePointer returns (the same).
 *  @param ptr its start. @param size bytes. @param flags ignored.
 *  @return cudaSuccess, cudaErrorInvalidValue, or
 *  cudaErrorHostMemoryAlreadyRegistered for memory already registered or allocated. */
cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags);
/** @brief Undo cudaHostRegister. @param ptr the start it registered.
 *  @return cudaSuccess or cudaErrorHostMemoryNotRegistered. */
cudaError_t cudaHostUnregister(void *ptr);
/** @brief The device address of mapped host memory (cudaHostAlloc, cudaMallocHost,
 *  cudaHostRegister): the same address, as with unified addressing.
 *  @param dev receives it. @param host the host address. @param flags must be 0.
 *  @return cudaSuccess or cudaErrorInvalidValue (host memory not mapped). */
cudaError_t cudaHostGetDevicePointer(void **dev, void *host, unsigned int flags);

/** Where managed memory should live (CUDA 13's form of the device argument). */
typedef enum cudaMemLocationType {
    cudaMemLocationTypeInvalid = 0,
    cudaMemLocationTypeNone = 0,
    cudaMemLocationTypeDevice = 1,
    cudaMemLocationTypeHost = 2,
    cudaMemLocationTypeHostNuma = 3,
    cudaMemLocationTypeHostNumaCurrent = 4
} cudaMemLocationType;
/** A location: its type, and the device (or NUMA node) for those that have one. */
struct cudaMemLocation {
    cudaMemLocationType type; /**< device, host, ... */
    int id;                   /**< the device's ordinal, for a device */
};
/** Advice on managed memory (cudaMemAdvise). */
typedef enum cudaMemoryAdvise {
    cudaMemAdviseSetReadMostly = 1,
    cudaMemAdviseUnsetReadMostly = 2,
    cudaMemAdviseSetPreferredLocation = 3,
    cudaMemAdviseUnsetPreferredLocation = 4,
    cudaMemAdviseSetAccessedBy = 5,
    cudaMemAdviseUnsetAccessedBy = 6
} cudaMemoryAdvise;
/** @brief Move managed memory towards a location: a no-op here (one memory),
 *  after the checks a GPU makes. @param ptr managed memory. @param count bytes.
 *  @param location where to. @param flags must be 0. @param stream ignored.
 *  @return cudaSuccess, or cudaErrorInvalidValue for memory that is not managed,
 *  a range past its end, or flags. */
cudaError_t cudaMemPrefetchAsync(const void *ptr, size_t count, struct cudaMemLocation location, unsigned int flags,
                                 cudaStream_t stream);
/** @brief Advise on managed memory: a no-op here, after the same checks as
 *  cudaMemPrefetchAsync. @param ptr managed memory. @param count bytes.
 *  @param advice the advice. @param location its location.
 *  @return cudaSuccess or cudaErrorInvalidValue. */
cudaError_t cudaMemAdvise(const void *ptr, size_t count, cudaMemoryAdvise advice, struct cudaMemLocation location);

/** @brief Free and total memory of the host. @param free_bytes receives free. @param total_bytes receives total.
 *  @return cudaSuccess. */
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);

/* --- streams and events (synchronous: work is done when it is issued) ---- */

/** A host function a stream runs in its order (cudaLaunchHostFunc). */
typedef void (*cudaHostFn_t)(void *userData);
/** @brief Run fn(data) in the stream's order: at once here, as all work is.
 *  @param s the stream. @param fn the function. @param data its argument.
 *  @return cudaSuccess, a pending fault, or cudaErrorInvalidValue for a NULL fn. */
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *data);
/** @brief Create a stream. @param s receives it. @return cudaSuccess or cudaErrorMemoryAllocation. */
cudaError_t cudaStreamCreate(cudaStream_t *s);
/** @brief Create a stream. @param s receives it. @param flags ignored. @return as cudaStreamCreate. */
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags);
/** @brief Create a stream. @param s receives it. @param flags ignored. @param priority ignored
 *  (streams run in issue order here). @return as cudaStreamCreate. */
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int priority);
/** @brief The stream priorities an H100 gives: 0 (least) to -5 (greatest).
 *  @param least receives 0 (may be NULL). @param greatest receives -5 (may be NULL). @return cudaSuccess. */
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest);
/** @brief Destroy a stream. @param s the stream. @return cudaSuccess. */
cudaError_t cudaStreamDestroy(cudaStream_t s);
/** @brief Wait for a stream: returns a pending fault. @param s the stream. @return cudaSuccess or the fault. */
cudaError_t cudaStreamSynchronize(cudaStream_t s);
/** @brief Query a stream: always finished. @param s the stream. @return cudaSuccess or the fault. */
cudaError_t cudaStreamQuery(cudaStream_t s);
/** @brief Make a stream wait for an event: a no-op here. @param s stream. @param e event.
 *  @param flags ignored. @return cudaSuccess. */
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags);
/** @brief Create an event. @param e receives it. @return cudaSuccess or cudaErrorMemoryAllocation. */
cudaError_t cudaEventCreate(cudaEvent_t *e);
/** @brief Create an event. @param e receives it. @param flags cudaEventDisableTiming honoured.
 *  @return as cudaEventCreate. */
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags);
/** @brief Record the host's monotonic clock in an event. @param e event. @param s ignored.
 *  @return cudaSuccess or cudaErrorInvalidResourceHandle. */
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
/** @brief Wait for an event: already complete. @param e event. @return cudaSuccess or the fault. */
cudaError_t cudaEventSynchronize(cudaEvent_t e);
/** @brief Query an event: complete once recorded. @param e event. @return cudaSuccess or cudaErrorNotReady. */
cudaError_t cudaEventQuery(cudaEvent_t e);
/** @brief Milliseconds between two recorded events. @param ms receives it. @param start first event.
 *  @param end second event. @return cudaSuccess, cudaErrorInvalidResourceHandle or cudaErrorNotReady. */
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
/** @brief Destroy an event. @param e the event. @return cudaSuccess. */
cudaError_t cudaEventDestroy(cudaEvent_t e);

/* --- kernels ------------------------------------------------------------ */

/** @brief Set a kernel attribute; cudaFuncAttributeMaxDynamicSharedMemorySize raises the
 *  dynamic shared-memory limit of later launches, as on a GPU.
 *  @param func the kernel. @param attr which. @param value new value.
 *  @return cudaSuccess or cudaErrorInvalidValue. */
cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value);
/** @brief Attributes of a kernel (static shared memory is not known: reported as 0).
 *  @param attr receives them. @param func the kernel. @return cudaSuccess or cudaErrorInvalidValue. */
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, const void *func);
/** @brief A kernel's preferred L1/shared split: a hint, which the emulator has no cache to follow.
 *  @param func the kernel. @param config the preference. @return cudaSuccess, or
 *  cudaErrorInvalidValue for an unknown preference. */
cudaError_t cudaFuncSetCacheConfig(const void *func, cudaFuncCache config);
/** @brief The device-wide form of cudaFuncSetCacheConfig. @param config the preference.
 *  @return as cudaFuncSetCacheConfig. */
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config);
/** @brief The bank width, deprecated (as CUDA 13 marks it) since Volta, whose
 *  banks are 4 bytes whatever it says: accepted and not acted on, as a GPU
 *  of today does.
 *  @param config the width. @return cudaSuccess, or cudaErrorInvalidValue
 *  for an unknown width. */
__attribute__((deprecated)) static inline cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig config)
{
    return (int)config < 0 || config > cudaSharedMemBankSizeEightByte ? cudaErrorInvalidValue : cudaSuccess;
}
/** @brief The bank width: 4 bytes. @param config receives it. @return cudaSuccess,
 *  or cudaErrorInvalidValue for NULL. */
__attribute__((deprecated)) static inline cudaError_t cudaDeviceGetSharedMemConfig(cudaSharedMemConfig *config)
{
    if (!config) return cudaErrorInvalidValue;
    *config = cudaSharedMemBankSizeFourByte;
    return cudaSuccess;
}
/** @brief The per-kernel form of cudaDeviceSetSharedMemConfig. @param func the kernel.
 *  @param config the width. @return as cudaDeviceSetSharedMemConfig, or
 *  cudaErrorInvalidDeviceFunction for NULL. */
__attribute__((deprecated)) static inline cudaError_t cudaFuncSetSharedMemConfig(const void *func, cudaSharedMemConfig config)
{
    if (!func) return cudaErrorInvalidDeviceFunction;
    return (int)config < 0 || config > cudaSharedMemBankSizeEightByte ? cudaErrorInvalidValue : cudaSuccess;
}

/* --- driver entry points ------------------------------------------------ */

/** Flags of cudaGetDriverEntryPoint*. */
#define cudaEnableDefault 0x0
/** What cudaGetDriverEntryPoint* found. */
typedef enum cudaDriverEntryPointQueryResult {
    cudaDriverEntryPointSuccess = 0,
    cudaDriverEntryPointSymbolNotFound = 1,
    cudaDriverEntryPointVersionNotSufficent = 2
} cudaDriverEntryPointQueryResult;

/** @brief A driver-API function by name. The emulator has one:
 *  "cuTensorMapEncodeTiled" (cuda.h); any other name is not found.
 *  @param symbol the name. @param funcPtr receives it (NULL if not found).
 *  @param flags cudaEnableDefault. @param driverStatus receives what was found (may be NULL).
 *  @return cudaSuccess, or cudaErrorInvalidValue for a NULL symbol or funcPtr. */
cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult *driverStatus);
/** @brief cudaGetDriverEntryPoint for the ABI of a given CUDA version (any here).
 *  @param symbol the name. @param funcPtr receives it. @param cudaVersion e.g. 12000.
 *  @param flags cudaEnableDefault. @param driverStatus receives what was found (may be NULL).
 *  @return as cudaGetDriverEntryPoint. */
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags, cudaDriverEntryPointQueryResult *driverStatus);

/* --- emulator internals used by the headers (not CUDA API) -------------- */

/** @brief Run a kernel: validate the configuration as CUDA does, then run every block.
 *  @param func identifies the kernel (for its attributes). @param grid grid size.
 *  @param block block size. @param shmem dynamic shared bytes. @param stream ignored.
 *  @param body called once per thread with ctx. @param ctx the bound arguments.
 *  @return cudaSuccess or the launch error (also recorded for cudaGetLastError). */
cudaError_t simt_launch(const void *func, dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
                        void (*body)(void *), void *ctx);
/** @brief simt_launch from a known launch line, with the kernel's pointer
 *  arguments: after the configuration's checks, a pointer that is neither
 *  NULL, nor in memory from cudaMalloc (or its managed and host forms), nor
 *  in the program's static data (where __device__, __constant__ and
 *  __managed__ variables lie) is host memory, which a GPU's kernel cannot
 *  reach: the launch fails with cudaErrorIllegalAddress, as the kernel's
 *  first access through it would on a GPU, and a line names the argument.
 *  @param func, grid, block, shmem, stream, body, ctx as simt_launch.
 *  @param ptrs the arguments, NULL for those that are not pointers.
 *  @param nptrs how many. @param file, line the launch's place (file NULL:
 *  unknown). @return as simt_launch. */
cudaError_t simt_launch_at(const void *func, dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
                           void (*body)(void *), void *ctx, const void *const *ptrs, unsigned int nptrs,
                           const char *file, int line);

/** @brief Fail a runtime call made in a header (cudaMemcpyToSymbol's C++ form): e is
 *  recorded for cudaGetLastError, as every runtime call's failure is.
 *  @param e the error. @return e. */
cudaError_t simt_runtime_error(cudaError_t e);

#ifdef __cplusplus
}
#endif

#include "vector_functions.h"

#endif /* SIMT_CUDA_RUNTIME_API_H */
