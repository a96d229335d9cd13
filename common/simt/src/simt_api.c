/*
 * SIMT emulator: the CUDA runtime API on the CPU.
 * "Device" memory is host memory: pages of its own that the host cannot
 * touch between kernels (the fence below), or, under AddressSanitizer, the
 * C heap's, so that it sees every global-memory access. Copies are memcpy;
 * streams and events are synchronous (work is finished when it is issued)
 * and events record the host's monotonic clock, so cudaEventElapsedTime
 * measures the wall-clock time the emulated kernel took on the CPU. Launch
 * checks follow the limits of an sm_90 part (the device it reports).
 * Not here: multiple devices, the driver API, graphs, textures.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "cuda.h"
#include "cuda_runtime_api.h"
#include "simt_internal.h"
#include "simt_memtrace.h"

/* An sm_90 (H100/H200) part, the course's target: the emulator runs its
 * wgmma, TMA and mbarrier instructions, so it reports compute capability
 * 9.0 and Hopper's shared-memory limits (an A100 allows 163 KB per block;
 * SIMT_SHARED_OPTIN_KB lowers the opt-in limit to act as such a GPU). */
enum {
    DEFAULT_DYN_SHARED = SIMT_SHARED_DEFAULT,
    SHARED_PER_SM = 233472, /* 228 KB */
    MAX_THREADS_PER_BLOCK = 1024
};

static atomic_int sticky_fault;
static __thread cudaError_t last_error;

void simt_set_fault(cudaError_t e)
{
    int expected = 0;
    atomic_compare_exchange_strong(&sticky_fault, &expected, (int)e);
}

cudaError_t simt_get_fault(void)
{
    return (cudaError_t)atomic_load(&sticky_fault);
}

static cudaError_t ret(cudaError_t e)
{
    if (e != cudaSuccess) last_error = e;
    return e;
}

cudaError_t simt_runtime_error(cudaError_t e) { return ret(e); }

/* After a fault in a kernel a GPU's context is unusable: allocations,
 * copies, memsets and events all return the fault until cudaDeviceReset.
 * The emulator does the same, so code that carries on past a fault fails
 * here as it would on the GPU. (A reset here clears the fault but keeps
 * the memory; a GPU's reset frees it.) */
#define RETURN_IF_FAULTED()                                                   \
    do {                                                                      \
        cudaError_t f_ = simt_get_fault();                                    \
        if (f_ != cudaSuccess) return ret(f_);                                \
    } while (0)

/* --- errors -------------------------------------------------------------- */

cudaError_t cudaGetLastError(void)
{
    cudaError_t f = simt_get_fault();
    if (f != cudaSuccess) return f;
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    cudaError_t f = simt_get_fault();
    return f != cudaSuccess ? f : last_error;
}

static const struct {
    cudaError_t code;
    const char *name, *text;
} error_table[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorCudartUnloading, "cudaErrorCudartUnloading", "driver shutting down"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidPitchValue, "cudaErrorInvalidPitchValue", "invalid pitch argument"},
    {cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {cudaErrorInvalidHostPointer, "cudaErrorInvalidHostPointer", "invalid host pointer"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorNoKernelImageForDevice, "cudaErrorNoKernelImageForDevice",
     "no kernel image is available for execution on the device"},
    {cudaErrorUnsupportedLimit, "cudaErrorUnsupportedLimit", "limit is not supported on this architecture"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"},
    {cudaErrorAssert, "cudaErrorAssert", "device-side assert triggered"},
    {cudaErrorHostMemoryAlreadyRegistered, "cudaErrorHostMemoryAlreadyRegistered",
     "part or all of the requested memory range is already mapped"},
    {cudaErrorHostMemoryNotRegistered, "cudaErrorHostMemoryNotRegistered",
     "pointer does not correspond to a registered memory region"},
    {cudaErrorIllegalInstruction, "cudaErrorIllegalInstruction", "an illegal instruction was encountered"},
    {cudaErrorMisalignedAddress, "cudaErrorMisalignedAddress", "misaligned address"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorNotPermitted, "cudaErrorNotPermitted", "operation not permitted"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const char *cudaGetErrorString(cudaError_t e)
{
    for (size_t i = 0; i < sizeof(error_table) / sizeof(error_table[0]); i++)
        if (error_table[i].code == e) return error_table[i].text;
    return "unrecognized error code";
}

const char *cudaGetErrorName(cudaError_t e)
{
    for (size_t i = 0; i < sizeof(error_table) / sizeof(error_table[0]); i++)
        if (error_table[i].code == e) return error_table[i].name;
    /* As the toolkit's does (CUDA Runtime API, cudaGetErrorName), not the
     * name of cudaErrorUnknown, a code the program never got. */
    return "unrecognized error code";
}

/* --- devices ------------------------------------------------------------- */

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count) return ret(cudaErrorInvalidValue);
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    return device == 0 ? cudaSuccess : ret(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device) return ret(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

static int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static size_t host_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return (pages > 0 && page > 0) ? (size_t)pages * (size_t)page : (size_t)8 << 30;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device)
{
    if (!p) return ret(cudaErrorInvalidValue);
    if (device != 0) return ret(cudaErrorInvalidDevice);
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "SIMT emulator (CPU)");
    p->totalGlobalMem = host_memory();
    p->sharedMemPerBlock = DEFAULT_DYN_SHARED;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->memPitch = (size_t)1 << 31;
    p->maxThreadsPerBlock = MAX_THREADS_PER_BLOCK;
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->totalConstMem = 65536;
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = cpu_count();
    p->concurrentKernels = 0;
    p->memoryBusWidth = 5120;
    p->l2CacheSize = 50 * 1024 * 1024;
    p->maxThreadsPerMultiProcessor = 2048;
    p->unifiedAddressing = 1;
    p->managedMemory = 1;
    p->sharedMemPerMultiprocessor = SHARED_PER_SM;
    p->regsPerMultiprocessor = 65536;
    p->sharedMemPerBlockOptin = simt_shared_optin();
    p->maxBlocksPerMultiProcessor = 32;
    p->cooperativeLaunch = 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device)
{
    cudaDeviceProp p;
    if (!value) return ret(cudaErrorInvalidValue);
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess) return e;
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrTotalConstantMemory: *value = (int)p.totalConstMem; break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    /* An H100 SXM's: 1980 MHz boost; HBM3 at 2619 MHz on 5120 bits, double
     * data rate, is its 3.35 TB/s. */
    case cudaDevAttrClockRate: *value = 1980000; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrMemoryClockRate: *value = 2619000; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = (int)p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)p.sharedMemPerBlockOptin; break;
    default: return ret(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    return ret(simt_get_fault());
}

cudaError_t cudaDeviceReset(void)
{
    atomic_store(&sticky_fault, 0);
    last_error = cudaSuccess;
    return cudaSuccess;
}

/* An H100's defaults (cudaDeviceGetLimit before any set), by cudaLimit. */
static size_t limits[] = {1024, 1u << 20, 8u << 20, 2, 2048, 64, 0};

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value)
{
    RETURN_IF_FAULTED();
    if ((unsigned)limit >= sizeof limits / sizeof *limits) return ret(cudaErrorUnsupportedLimit);
    limits[limit] = value;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetLimit(size_t *value, cudaLimit limit)
{
    RETURN_IF_FAULTED();
    if ((unsigned)limit >= sizeof limits / sizeof *limits) return ret(cudaErrorUnsupportedLimit);
    if (!value) return ret(cudaErrorInvalidValue);
    *value = limits[limit];
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v) return ret(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (!v) return ret(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

/* --- memory -------------------------------------------------------------- */

/* Every live cudaMalloc allocation, sorted by address. Device memory is
 * host memory here, so without this a copy that runs past the end of an
 * allocation (a size without its sizeof) would overwrite the heap, and a
 * cudaFree of a pointer cudaMalloc never returned would crash in free();
 * a GPU refuses both with cudaErrorInvalidValue. */
static struct alloc_rec {
    uintptr_t base;
    size_t size;
    cudaMemoryType type; /* which call made it, for cudaPointerGetAttributes */
    int registered;      /* host memory of the program's, mapped by cudaHostRegister */
} *allocs;
static size_t nallocs, allocs_cap;
/* A reader-writer lock: kernels look addresses up (simt_in_allocation) on
 * every cp.async and ldmatrix, from every block's OS thread. Readers do not
 * order each other, so ThreadSanitizer still sees the kernel's own races; a
 * mutex would chain every lookup to the one before and hide them. */
static pthread_rwlock_t allocs_lock = PTHREAD_RWLOCK_INITIALIZER;

/* Index of the first allocation whose base is above p (allocs_lock held). */
static size_t allocs_upper(uintptr_t p)
{
    size_t lo = 0, hi = nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (allocs[mid].base <= p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int allocs_add(void *p, size_t size, cudaMemoryType type, int registered)
{
    pthread_rwlock_wrlock(&allocs_lock);
    if (nallocs == allocs_cap) {
        size_t cap = allocs_cap ? allocs_cap * 2 : 256;
        struct alloc_rec *a = realloc(allocs, cap * sizeof(*a));
        if (!a) {
            pthread_rwlock_unlock(&allocs_lock);
            return -1;
        }
        allocs = a;
        allocs_cap = cap;
    }
    size_t i = allocs_upper((uintptr_t)p);
    memmove(allocs + i + 1, allocs + i, (nallocs - i) * sizeof(*allocs));
    allocs[i] = (struct alloc_rec){(uintptr_t)p, size, type, registered};
    nallocs++;
    pthread_rwlock_unlock(&allocs_lock);
    return 0;
}

/* Forget the allocation that starts at p, its record into *rec; 0, or -1
 * when none does. */
static int allocs_remove(void *p, struct alloc_rec *rec)
{
    pthread_rwlock_wrlock(&allocs_lock);
    size_t i = allocs_upper((uintptr_t)p);
    int found = i > 0 && allocs[i - 1].base == (uintptr_t)p;
    if (found) {
        *rec = allocs[i - 1];
        memmove(allocs + i - 1, allocs + i, (nallocs - i) * sizeof(*allocs));
        nallocs--;
    }
    pthread_rwlock_unlock(&allocs_lock);
    return found ? 0 : -1;
}

/* The last allocation that starts at or below a, the only one that can
 * hold it; NULL when none does (allocs_lock held). */
static const struct alloc_rec *allocation_below(uintptr_t a)
{
    size_t i = allocs_upper(a);
    return i > 0 ? &allocs[i - 1] : NULL;
}

/* The live allocation that holds p, or that p lies at most past bytes
 * beyond the end of; a record of size 0 when there is none. */
static struct alloc_rec allocation_of(const void *p, size_t past)
{
    uintptr_t a = (uintptr_t)p;
    struct alloc_rec r = {0, 0, cudaMemoryTypeUnregistered, 0};
    pthread_rwlock_rdlock(&allocs_lock);
    const struct alloc_rec *q = allocation_below(a);
    if (q && a - q->base < q->size + past) r = *q;
    pthread_rwlock_unlock(&allocs_lock);
    return r;
}

int simt_in_allocation(const void *p) { return allocation_of(p, 0).size != 0; }

/* Do count bytes from p stay inside the allocation p points into, and is
 * it not freed device memory? Memory that is no allocation's (the host's)
 * is not checked. what names the call for the message; *device says
 * whether p is cudaMalloc memory, which the copy must open. */
static int range_ok(const void *p, size_t count, const char *what, int *device)
{
    uintptr_t a = (uintptr_t)p;
    struct alloc_rec r = allocation_of(p, 0);
    *device = r.type == cudaMemoryTypeDevice;
    if (!r.size && simt_in_freed(p, 0)) {
        fprintf(stderr,
                "simt: %s at %p is device memory that cudaFree has freed (a pointer used after its cudaFree); a "
                "GPU refuses the call (cudaErrorInvalidValue, \"invalid argument\"): copy before the cudaFree\n",
                what, p);
        return 0;
    }
    if (!r.size || r.registered || count <= r.base + r.size - a) return 1;
    fprintf(stderr,
            "simt: %s of %zu bytes at %p runs %zu bytes past the end of its %zu-byte cudaMalloc allocation "
            "(at %p); a GPU refuses it (cudaErrorInvalidValue, \"invalid argument\"): check the byte count "
            "(a count of elements without its sizeof?)\n",
            what, count, p, count - (size_t)(r.base + r.size - a), r.size, (void *)r.base);
    return 0;
}

/* Bytes of slack after each allocation, filled with SLACK_BYTE: a kernel
 * that writes a little past the end of an array (a wrong edge test) then
 * overwrites the slack, not the heap's own records, so the program (a
 * check with more tests to run) does not crash later in malloc or free,
 * and cudaFree says what happened. Under AddressSanitizer, none: ASan
 * reports the first byte past the end itself. */
#ifdef __SANITIZE_ADDRESS__
#define ALLOC_SLACK 0
#else
#define ALLOC_SLACK 16384
#endif
#define SLACK_BYTE 0xa5
/* What fresh device memory holds: cudaMalloc sets nothing, and on a GPU
 * memory freed and allocated again in one process keeps what it held, so a
 * kernel that accumulates into a buffer nobody zeroed (atomicAdd into a
 * fresh sum, += into an output) is wrong there, often only on a later call.
 * The bytes of 0xff are NaN as fp32, bf16 and fp16, and -1 as an integer: such a
 * kernel's result is NaN here every time, not right by the luck of a page
 * the system zeroed. */
#define UNSET_BYTE 0xff

#ifdef __SANITIZE_THREAD__
/* ThreadSanitizer asks for this at start-up: common/simt/tsan.supp, built
 * in (simt.mk), so that every program of the TSan flavour (make check
 * SANITIZE=thread, the course's *_tsan tests, a check run by hand from any
 * folder) leaves out the false reports from OpenBLAS's and OpenMP's
 * threads, which are not instrumented. TSAN_OPTIONS=suppressions=FILE adds
 * to these. */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
    return
#include "tsan_supp.inc"
        "";
}
#endif

/* --- device memory the host cannot touch --------------------------------
 * On a GPU cudaMalloc memory is the GPU's: host code that reads or writes
 * through a device pointer (d[i] = x where a cudaMemcpy belongs, a printf
 * of d[0] after a kernel, a "kernel" written as a host loop) dies of a
 * segmentation fault. Here device memory is host memory, so such code ran
 * and gave the right answer. So in the plain build each cudaMalloc
 * allocation has pages of its own (mmap), kept PROT_NONE while no kernel
 * runs and no copy uses them: the host's access faults as on a GPU, and
 * on_host_fault says what it was before the process dies. A launch and a
 * copy that touches device memory open every allocation for their length
 * (device_open, device_close). The sanitizer builds leave this out:
 * AddressSanitizer needs heap allocations (it flags the first byte past
 * the end), and ThreadSanitizer keeps its own SIGSEGV handler.
 * cudaMallocManaged and cudaMallocHost memory is the host's on a GPU too. */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define DEVICE_FENCE 1
#else
#define DEVICE_FENCE 0
#endif

#if DEVICE_FENCE
#define HUGE_BYTES ((size_t)2 << 20) /* a huge page of x86-64 and arm64 (4 KB granule) */
static pthread_mutex_t fence_lock = PTHREAD_MUTEX_INITIALIZER;
static int fence_open;                /* launches and copies using device memory now (fence_lock) */
static struct sigaction fence_prev;   /* the SIGSEGV handler ours was put in front of */

/* The bytes an allocation of size maps: whole pages, slack included. */
static size_t fence_bytes(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (size + ALLOC_SLACK + page - 1) / page * page;
}

/* Give every cudaMalloc allocation the protection prot (fence_lock held).
 * It runs twice a launch, so allocations that lie end to end (the system
 * maps them so, one below the other) take one mprotect between them: with
 * one each, a program of 2000 small buffers spent 6 ms a launch here. */
static void fence_set(int prot)
{
    uintptr_t run = 0, end = 0; /* the allocations end to end so far */
    pthread_rwlock_rdlock(&allocs_lock);
    for (size_t i = 0; i < nallocs; i++) {
        if (allocs[i].type != cudaMemoryTypeDevice) continue;
        const uintptr_t b = allocs[i].base, e = b + fence_bytes(allocs[i].size);
        if (run && b == end) {
            end = e;
            continue;
        }
        if (run) mprotect((void *)run, end - run, prot);
        run = b;
        end = e;
    }
    if (run) mprotect((void *)run, end - run, prot);
    pthread_rwlock_unlock(&allocs_lock);
}

/* The source line of code address a, into out, if it is the program's
 * own: a "file:N" (not an address such as "prog+0x51f8", so the program
 * has -g), not in one of the emulator's files, and not in a library of the
 * system (memcpy in the C library has lines too). */
static int program_line(uintptr_t a, char *out, size_t n)
{
    static const char *const system[] = {"/libc.so", "/libm.so", "/libstdc++", "/libgcc_s", "/ld-linux"};
    Dl_info info;
    if (dladdr((void *)a, &info) && info.dli_fname)
        for (size_t i = 0; i < sizeof system / sizeof *system; i++)
            if (strstr(info.dli_fname, system[i])) return 0;
    simt_source_line(a, out, n);
    const char *c = strrchr(out, ':');
    return c && c > out && c[-1] != '/' && c[1] >= '0' && c[1] <= '9' && strncmp(out, "simt_", 5) != 0;
}

/* Where the host's access was: the faulting instruction's line, or, when
 * that has none (memcpy in the C library), the first caller's that has
 * one, found by unwinding from this handler's frames. */
static void host_fault_line(uintptr_t pc, char *out, size_t n)
{
    if (program_line(pc + 1, out, n)) return; /* it looks up the byte before a return address */
    char at[160];
    Dl_info info;
    if (dladdr((void *)pc, &info) && info.dli_sname && info.dli_fname) {
        const char *lib = strrchr(info.dli_fname, '/');
        snprintf(at, sizeof at, "%.100s (%.50s)", info.dli_sname, lib ? lib + 1 : info.dli_fname);
    } else {
        simt_source_line(pc + 1, at, sizeof at);
    }
    void *frames[24];
    int k = backtrace(frames, 24);
    for (int i = 0; i < k; i++) {
        char l[160];
        if (!program_line((uintptr_t)frames[i], l, sizeof l)) continue;
        snprintf(out, n, "%.160s, in %.150s", l, at);
        return;
    }
    snprintf(out, n, "%.150s (build with -g for its line)", at);
}

/* A SIGSEGV outside kernels: if the address is in a fenced allocation,
 * say so; then the handler that was there before runs (a test runner's,
 * which fails the test, or the default, which ends the process as the
 * GPU's segmentation fault would). Like the kernels' handler
 * (simt_runtime.c), it formats and runs addr2line, which a handler may not
 * in general; the fault is at a load or store of the program's own, which
 * holds no lock of malloc's. */
static void on_host_fault(int sig, siginfo_t *si, void *ucv)
{
    const uintptr_t a = (uintptr_t)si->si_addr;
    struct alloc_rec r = {0, 0, cudaMemoryTypeUnregistered, 0};
    if (pthread_rwlock_tryrdlock(&allocs_lock) == 0) { /* a handler must not wait */
        const struct alloc_rec *q = allocation_below(a);
        if (q && q->type == cudaMemoryTypeDevice && a - q->base < fence_bytes(q->size)) r = *q;
        pthread_rwlock_unlock(&allocs_lock);
    }
    const int freed = !r.size && simt_in_freed(si->si_addr, 1);
    if ((r.size || freed) && __atomic_load_n(&fence_open, __ATOMIC_RELAXED) == 0 && !simt_in_kernel()) {
        const char *did = "touched";
        uintptr_t pc = 0;
#if defined(__x86_64__)
        const ucontext_t *uc = ucv;
        pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
        did = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? "wrote" : "read";
#elif defined(__aarch64__)
        pc = (uintptr_t)((const ucontext_t *)ucv)->uc_mcontext.pc;
#endif
        char line[400], where[160];
        host_fault_line(pc, line, sizeof line);
        size_t off = (size_t)(a - r.base);
        if (freed) {
            fprintf(stderr,
                    "simt: host code %s device memory at %p after its cudaFree, at %s. On a GPU that is a "
                    "segmentation fault: device memory is the GPU's, freed or not. Copy what the host needs with "
                    "cudaMemcpy before the cudaFree\n",
                    did, si->si_addr, line);
        } else {
            if (off < r.size)
                snprintf(where, sizeof where, "byte %zu of a %zu-byte cudaMalloc allocation at %p", off, r.size,
                         (void *)r.base);
            else
                snprintf(where, sizeof where, "%zu bytes past the end of a %zu-byte cudaMalloc allocation at %p",
                         off - r.size, r.size, (void *)r.base);
            fprintf(stderr,
                    "simt: host code %s device memory at %p (%s), at %s. On a GPU that is a segmentation fault: "
                    "cudaMalloc memory is the GPU's, and the host reaches it only through the runtime. Copy it "
                    "with cudaMemcpy (cudaMemcpyHostToDevice before a kernel, cudaMemcpyDeviceToHost after) and "
                    "use the host copy, do the work in a kernel, or allocate with cudaMallocManaged to use it on "
                    "both sides\n",
                    did, si->si_addr, where, line);
        }
        fflush(stderr);
    }
    const struct sigaction *p = &fence_prev;
    if ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction) {
        p->sa_sigaction(sig, si, ucv);
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
    } else {
        sigaction(sig, p, NULL); /* returning repeats the access, which now ends the process */
    }
}

/* Put on_host_fault in front of whatever handles SIGSEGV now, unless it is
 * there already: a test runner installs its own for each test, so this
 * runs each time the fence closes (fence_lock held). */
static void fence_handler_ensure(void)
{
    struct sigaction cur;
    if (sigaction(SIGSEGV, NULL, &cur) != 0) return;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_host_fault) return;
    static int warm;
    if (!warm) { /* backtrace loads its unwinder on first use: here, not in the handler */
        void *frame[1];
        backtrace(frame, 1);
        warm = 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_host_fault;
    sigemptyset(&sa.sa_mask);
    /* SA_NODEFER: a test runner's handler, called from this one, may leave
     * by longjmp, which would keep SIGSEGV blocked. */
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    fence_prev = cur;
    sigaction(SIGSEGV, &sa, NULL);
}

/* A new allocation: fenced, unless a launch or a copy has the rest open. */
static void fence_new(void *p, size_t size)
{
    pthread_mutex_lock(&fence_lock);
    if (!fence_open) {
        mprotect(p, fence_bytes(size), PROT_NONE);
        fence_handler_ensure();
    }
    pthread_mutex_unlock(&fence_lock);
}
#endif

/** Let the runtime and kernels use device memory, until device_close. */
static void device_open(void)
{
#if DEVICE_FENCE
    pthread_mutex_lock(&fence_lock);
    if (fence_open++ == 0) fence_set(PROT_READ | PROT_WRITE);
    pthread_mutex_unlock(&fence_lock);
#endif
}

/** Fence device memory from the host again, once nothing has it open. */
static void device_close(void)
{
#if DEVICE_FENCE
    pthread_mutex_lock(&fence_lock);
    if (--fence_open == 0) {
        fence_set(PROT_NONE);
        fence_handler_ensure();
    }
    pthread_mutex_unlock(&fence_lock);
#endif
}

void simt_host_access(int on)
{
    static int allowed; /* the open this holds, so that two calls of 1 need one of 0 */
    if (on && !allowed) device_open();
    if (!on && allowed) device_close();
    allowed = on != 0;
}

/* Fresh memory of size bytes plus the slack: pages of its own for device
 * memory in the fenced build, else the heap's. */
static void *memory_get(size_t size, cudaMemoryType type)
{
#if DEVICE_FENCE
    if (type == cudaMemoryTypeDevice) {
        if (size > SIZE_MAX / 2) return NULL;
        const size_t len = fence_bytes(size);
        if (len < HUGE_BYTES) {
            void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            return p == MAP_FAILED ? NULL : p;
        }
        /* 2 MB aligned, in huge pages where the system gives them: the fence
         * changes the protection of every page twice a launch, and 2 MB
         * pages make that 512 times fewer entries to change (192 MB of
         * 4 KB pages took 6 ms a launch). */
        char *q = mmap(NULL, len + HUGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (q == MAP_FAILED) return NULL;
        char *p = (char *)(((uintptr_t)q + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
        if (p > q) munmap(q, (size_t)(p - q)); /* the head below the 2 MB boundary */
        munmap(p + len, (size_t)(q + HUGE_BYTES - p)); /* the tail: never empty, as p < q + 2 MB */
        madvise(p, len, MADV_HUGEPAGE);
        return p;
    }
#endif
    (void)type;
    void *p = NULL;
    /* 256-byte alignment, as cudaMalloc guarantees (vector loads rely on
     * it), and exactly size bytes, so AddressSanitizer flags the first byte
     * past the end. */
    if (size > SIZE_MAX - ALLOC_SLACK || posix_memalign(&p, 256, size + ALLOC_SLACK) != 0) return NULL;
    return p;
}

/* Make an allocation's memory readable again for the slack check that
 * cudaFree runs before memory_put (device memory is fenced then). */
static void memory_open(void *p, size_t size, cudaMemoryType type)
{
#if DEVICE_FENCE
    if (type == cudaMemoryTypeDevice) mprotect(p, fence_bytes(size), PROT_READ | PROT_WRITE);
#endif
    (void)p, (void)size, (void)type;
}

#if DEVICE_FENCE
/* Freed device memory is not handed out again at once. Its pages go back
 * to the system, but its addresses stay reserved, and unreadable, for the
 * next QUARANTINE_MAX frees (QUARANTINE_BYTES at most): a pointer used
 * after its cudaFree (given to a kernel, read by the host) then faults and
 * is named as freed, instead of reaching whatever the next cudaMalloc put
 * there. A GPU's allocator often hands the same address out again at once,
 * and such a pointer then aliases the new buffer without a word. */
enum { QUARANTINE_MAX = 1024 };
#define QUARANTINE_BYTES ((size_t)1 << 32)
static struct span {
    uintptr_t base;
    size_t len;
} quarantine[QUARANTINE_MAX];
static size_t q_first, q_count, q_bytes; /* a ring, oldest first (allocs_lock) */

static void quarantine_add(void *p, size_t len)
{
    madvise(p, len, MADV_DONTNEED); /* the pages go back; the addresses stay */
    mprotect(p, len, PROT_NONE);
    pthread_rwlock_wrlock(&allocs_lock);
    while (q_count && (q_count == QUARANTINE_MAX || q_bytes + len > QUARANTINE_BYTES)) {
        munmap((void *)quarantine[q_first].base, quarantine[q_first].len);
        q_bytes -= quarantine[q_first].len;
        q_first = (q_first + 1) % QUARANTINE_MAX;
        q_count--;
    }
    if (len <= QUARANTINE_BYTES) {
        quarantine[(q_first + q_count) % QUARANTINE_MAX] = (struct span){(uintptr_t)p, len};
        q_count++;
        q_bytes += len;
    } else {
        munmap(p, len);
    }
    pthread_rwlock_unlock(&allocs_lock);
}
#endif

int simt_in_freed(const void *p, int in_handler)
{
    int found = 0;
#if DEVICE_FENCE
    const uintptr_t a = (uintptr_t)p;
    if (!in_handler) pthread_rwlock_rdlock(&allocs_lock);
    else if (pthread_rwlock_tryrdlock(&allocs_lock) != 0) return 0; /* a handler must not wait */
    for (size_t k = 0; k < q_count && !found; k++) {
        const struct span *q = &quarantine[(q_first + k) % QUARANTINE_MAX];
        found = a - q->base < q->len;
    }
    pthread_rwlock_unlock(&allocs_lock);
#else
    (void)p, (void)in_handler;
#endif
    return found;
}

/* Give back what memory_get returned. */
static void memory_put(void *p, size_t size, cudaMemoryType type)
{
#if DEVICE_FENCE
    if (type == cudaMemoryTypeDevice) {
        quarantine_add(p, fence_bytes(size));
        return;
    }
#endif
    (void)size, (void)type;
    free(p);
}

static cudaError_t alloc_memory(void **ptr, size_t size, cudaMemoryType type)
{
    RETURN_IF_FAULTED();
    if (!ptr) return ret(cudaErrorInvalidValue);
    *ptr = NULL;
    if (size == 0) return cudaSuccess;
    void *p = memory_get(size, type);
    if (!p) return ret(cudaErrorMemoryAllocation);
#if ALLOC_SLACK > 0
    memset((char *)p + size, SLACK_BYTE, ALLOC_SLACK);
#endif
    memset(p, UNSET_BYTE, size);
    if (allocs_add(p, size, type, 0) != 0) {
        memory_put(p, size, type);
        return ret(cudaErrorMemoryAllocation);
    }
#if DEVICE_FENCE
    if (type == cudaMemoryTypeDevice) fence_new(p, size);
#endif
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **ptr, size_t size) { return alloc_memory(ptr, size, cudaMemoryTypeDevice); }

/* ptr must be what cudaMalloc (or cudaMallocHost) returned and not yet
 * freed; else a GPU says "invalid argument", and free() here would crash. */
static cudaError_t free_allocation(void *ptr, const char *what)
{
    if (!ptr) return cudaSuccess;
    struct alloc_rec rec = allocation_of(ptr, 0);
    if (rec.registered) {
        fprintf(stderr,
                "simt: %s(%p): memory that cudaHostRegister registered, not one of the runtime's allocations; a "
                "GPU refuses it (cudaErrorInvalidValue): cudaHostUnregister it, then free it as it was allocated\n",
                what, ptr);
        return ret(cudaErrorInvalidValue);
    }
    if (allocs_remove(ptr, &rec) != 0) {
        fprintf(stderr,
                "simt: %s(%p): not the start of a live allocation (freed twice, or not from cudaMalloc); a GPU "
                "refuses it (cudaErrorInvalidValue)\n",
                what, ptr);
        return ret(cudaErrorInvalidValue);
    }
    const size_t size = rec.size;
    memory_open(ptr, size, rec.type);
#if ALLOC_SLACK > 0
    const unsigned char *end = (const unsigned char *)ptr + size;
    size_t last = 0;
    for (size_t k = 0; k < ALLOC_SLACK; k++)
        if (end[k] != SLACK_BYTE) last = k + 1;
    if (last)
        fprintf(stderr,
                "simt: %s(%p): something wrote past the end of this %zu-byte allocation, up to %zu bytes "
                "beyond it (a kernel's store outside its array?); on a GPU that memory is another "
                "allocation's, or a fault\n",
                what, ptr, size, last);
#endif
    /* Guard zones inside it go with it: the memory's next owner is not guarded. */
    simt_memtrace_unguard(ptr, size);
    memory_put(ptr, size, rec.type);
    return cudaSuccess;
}

cudaError_t cudaFree(void *ptr)
{
    RETURN_IF_FAULTED();
    return free_allocation(ptr, "cudaFree");
}

cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags)
{
    (void)flags;
    return alloc_memory(ptr, size, cudaMemoryTypeManaged);
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return alloc_memory(ptr, size, cudaMemoryTypeHost);
}

cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    (void)flags;
    return alloc_memory(ptr, size, cudaMemoryTypeHost);
}

cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream)
{
    (void)stream;
    return cudaMalloc(ptr, size);
}

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
    (void)stream;
    return cudaFree(ptr);
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attr, const void *p)
{
    RETURN_IF_FAULTED();
    if (!attr) return ret(cudaErrorInvalidValue);
    cudaMemoryType type = allocation_of(p, 0).type;
    /* As CUDA: device memory has no host address, unregistered memory no device one. */
    attr->type = type;
    attr->device = type == cudaMemoryTypeUnregistered ? -2 : 0;
    attr->devicePointer = type == cudaMemoryTypeUnregistered ? NULL : (void *)p;
    attr->hostPointer = type == cudaMemoryTypeDevice ? NULL : (void *)p;
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *ptr)
{
    RETURN_IF_FAULTED();
    return free_allocation(ptr, "cudaFreeHost");
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind)
{
    RETURN_IF_FAULTED();
    if ((int)kind < 0 || kind > cudaMemcpyDefault) return ret(cudaErrorInvalidMemcpyDirection);
    if (count == 0) return cudaSuccess;
    if (!dst || !src) return ret(cudaErrorInvalidValue);
    int dd, sd;
    if (!range_ok(dst, count, "cudaMemcpy's destination", &dd) || !range_ok(src, count, "cudaMemcpy's source", &sd))
        return ret(cudaErrorInvalidValue);
    const int dev = dd || sd;
    if (dev) device_open();
    memcpy(dst, src, count);
    if (dev) device_close();
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind)
{
    RETURN_IF_FAULTED();
    if (width > dpitch || width > spitch) return ret(cudaErrorInvalidPitchValue);
    if ((int)kind < 0 || kind > cudaMemcpyDefault) return ret(cudaErrorInvalidMemcpyDirection);
    int dd = 0, sd = 0;
    if (height > 0 && width > 0 &&
        (!range_ok(dst, (height - 1) * dpitch + width, "cudaMemcpy2D's destination", &dd) ||
         !range_ok(src, (height - 1) * spitch + width, "cudaMemcpy2D's source", &sd)))
        return ret(cudaErrorInvalidValue);
    const int dev = dd || sd;
    if (dev) device_open();
    for (size_t r = 0; r < height; r++) memcpy((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
    if (dev) device_close();
    return cudaSuccess;
}

cudaError_t cudaMemset(void *ptr, int value, size_t count)
{
    RETURN_IF_FAULTED();
    if (count == 0) return cudaSuccess;
    if (!ptr) return ret(cudaErrorInvalidValue);
    int dev;
    if (!range_ok(ptr, count, "cudaMemset", &dev)) return ret(cudaErrorInvalidValue);
    if (dev) device_open();
    memset(ptr, value, count);
    if (dev) device_close();
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
    (void)stream;
    return cudaMemset(ptr, value, count);
}

cudaError_t cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
    RETURN_IF_FAULTED();
    if (!ptr || !pitch) return ret(cudaErrorInvalidValue);
    *ptr = NULL;
    if (width > SIZE_MAX - 511) return ret(cudaErrorMemoryAllocation);
    size_t p = (width + 511) / 512 * 512; /* rows start 512-byte aligned, as on an H100 */
    if (height && p > SIZE_MAX / height) return ret(cudaErrorMemoryAllocation);
    *pitch = p;
    return alloc_memory(ptr, p * height, cudaMemoryTypeDevice);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}

cudaError_t cudaMemset2D(void *ptr, size_t pitch, int value, size_t width, size_t height)
{
    RETURN_IF_FAULTED();
    if (width > pitch) return ret(cudaErrorInvalidPitchValue);
    if (width == 0 || height == 0) return cudaSuccess;
    if (!ptr) return ret(cudaErrorInvalidValue);
    int dev;
    if (!range_ok(ptr, (height - 1) * pitch + width, "cudaMemset2D", &dev)) return ret(cudaErrorInvalidValue);
    if (dev) device_open();
    for (size_t r = 0; r < height; r++) memset((char *)ptr + r * pitch, value, width);
    if (dev) device_close();
    return cudaSuccess;
}

cudaError_t cudaMemset2DAsync(void *ptr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream)
{
    (void)stream;
    return cudaMemset2D(ptr, pitch, value, width, height);
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    (void)flags;
    RETURN_IF_FAULTED();
    if (!ptr || size == 0 || (uintptr_t)ptr > UINTPTR_MAX - size) return ret(cudaErrorInvalidValue);
    /* No byte of it may be registered or allocated already: the last
     * record that starts before its end must end before its start. */
    pthread_rwlock_rdlock(&allocs_lock);
    const struct alloc_rec *q = allocation_below((uintptr_t)ptr + size - 1);
    int overlaps = q && q->base + q->size > (uintptr_t)ptr;
    pthread_rwlock_unlock(&allocs_lock);
    if (overlaps) return ret(cudaErrorHostMemoryAlreadyRegistered);
    if (allocs_add(ptr, size, cudaMemoryTypeHost, 1) != 0) return ret(cudaErrorMemoryAllocation);
    return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *ptr)
{
    RETURN_IF_FAULTED();
    struct alloc_rec r = allocation_of(ptr, 0);
    if (!r.registered || r.base != (uintptr_t)ptr) return ret(cudaErrorHostMemoryNotRegistered);
    allocs_remove(ptr, &r);
    return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void **dev, void *host, unsigned int flags)
{
    RETURN_IF_FAULTED();
    if (!dev || flags != 0) return ret(cudaErrorInvalidValue);
    *dev = NULL;
    if (allocation_of(host, 0).type != cudaMemoryTypeHost) {
        fprintf(stderr,
                "simt: cudaHostGetDevicePointer(%p): not mapped host memory (cudaHostAlloc, cudaMallocHost or "
                "cudaHostRegister); a GPU refuses it (cudaErrorInvalidValue)\n",
                host);
        return ret(cudaErrorInvalidValue);
    }
    *dev = host; /* unified addressing: the same address on both sides */
    return cudaSuccess;
}

static int data_segment(struct dl_phdr_info *info, size_t size, void *p);

/* What cudaMemPrefetchAsync and cudaMemAdvise check: managed memory (an
 * allocation of cudaMallocManaged, or a __managed__ variable in static
 * data), count bytes of it, and a location that exists. */
static cudaError_t managed_range(const char *what, const void *ptr, size_t count, struct cudaMemLocation loc)
{
    struct alloc_rec r = allocation_of(ptr, 0);
    int managed = r.type == cudaMemoryTypeManaged ? count <= r.base + r.size - (uintptr_t)ptr
                                                  : !r.size && dl_iterate_phdr(data_segment, (void *)ptr);
    if (!ptr || !managed) {
        fprintf(stderr,
                "simt: %s(%p, %zu bytes): not managed memory (cudaMallocManaged or __managed__), or past its end; a "
                "GPU refuses it (cudaErrorInvalidValue)\n",
                what, ptr, count);
        return ret(cudaErrorInvalidValue);
    }
    if (loc.type == cudaMemLocationTypeDevice && loc.id != 0) return ret(cudaErrorInvalidDevice);
    if (loc.type != cudaMemLocationTypeDevice && loc.type != cudaMemLocationTypeHost &&
        loc.type != cudaMemLocationTypeHostNuma && loc.type != cudaMemLocationTypeHostNumaCurrent)
        return ret(cudaErrorInvalidValue);
    return cudaSuccess;
}

cudaError_t cudaMemPrefetchAsync(const void *ptr, size_t count, struct cudaMemLocation location, unsigned int flags,
                                 cudaStream_t stream)
{
    (void)stream;
    RETURN_IF_FAULTED();
    if (flags != 0) return ret(cudaErrorInvalidValue);
    return managed_range("cudaMemPrefetchAsync", ptr, count, location);
}

cudaError_t cudaMemAdvise(const void *ptr, size_t count, cudaMemoryAdvise advice, struct cudaMemLocation location)
{
    RETURN_IF_FAULTED();
    if ((int)advice < cudaMemAdviseSetReadMostly || (int)advice > cudaMemAdviseUnsetAccessedBy)
        return ret(cudaErrorInvalidValue);
    /* Read-mostly advice names no location. */
    if (advice == cudaMemAdviseSetReadMostly || advice == cudaMemAdviseUnsetReadMostly)
        location = (struct cudaMemLocation){cudaMemLocationTypeDevice, 0};
    return managed_range("cudaMemAdvise", ptr, count, location);
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    RETURN_IF_FAULTED();
    long avail = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (free_bytes) *free_bytes = (avail > 0 && page > 0) ? (size_t)avail * (size_t)page : host_memory() / 2;
    if (total_bytes) *total_bytes = host_memory();
    return cudaSuccess;
}

/* --- streams and events -------------------------------------------------- */

struct CUstream_st {
    unsigned int flags;
};

struct CUevent_st {
    unsigned int flags;
    int recorded;
    double ms;
};

cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *data)
{
    (void)s;
    RETURN_IF_FAULTED();
    if (!fn) return ret(cudaErrorInvalidValue);
    fn(data);
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    return cudaStreamCreateWithFlags(s, 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    RETURN_IF_FAULTED();
    if (!s) return ret(cudaErrorInvalidValue);
    *s = calloc(1, sizeof(**s));
    if (!*s) return ret(cudaErrorMemoryAllocation);
    (*s)->flags = flags;
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int priority)
{
    (void)priority;
    return cudaStreamCreateWithFlags(s, flags);
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    RETURN_IF_FAULTED();
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    free(s);
    return ret(simt_get_fault());
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    return ret(simt_get_fault());
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
    (void)s;
    return ret(simt_get_fault());
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    (void)s;
    (void)e;
    (void)flags;
    return ret(simt_get_fault());
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    return cudaEventCreateWithFlags(e, 0);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    RETURN_IF_FAULTED();
    if (!e) return ret(cudaErrorInvalidValue);
    *e = calloc(1, sizeof(**e));
    if (!*e) return ret(cudaErrorMemoryAllocation);
    (*e)->flags = flags;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    RETURN_IF_FAULTED();
    (void)s;
    if (!e) return ret(cudaErrorInvalidResourceHandle);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    e->ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
    e->recorded = 1;
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (!e) return ret(cudaErrorInvalidResourceHandle);
    return ret(simt_get_fault());
}

/* Work is done when it is launched here, so a recorded event has
 * completed; one never recorded counts as complete too, as CUDA documents. */
cudaError_t cudaEventQuery(cudaEvent_t e)
{
    RETURN_IF_FAULTED();
    if (!e) return ret(cudaErrorInvalidResourceHandle);
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    RETURN_IF_FAULTED();
    if (!ms) return ret(cudaErrorInvalidValue);
    if (!start || !end) return ret(cudaErrorInvalidResourceHandle);
    if ((start->flags | end->flags) & cudaEventDisableTiming) return ret(cudaErrorInvalidResourceHandle);
    /* CUDA: "If cudaEventRecord() has not been called on either event, then
     * cudaErrorInvalidResourceHandle is returned." */
    if (!start->recorded || !end->recorded) return ret(cudaErrorInvalidResourceHandle);
    *ms = (float)(end->ms - start->ms);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return ret(simt_get_fault());
}

/* --- driver entry points ------------------------------------------------- */

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult *driverStatus)
{
    (void)flags;
    if (!symbol || !funcPtr) return ret(cudaErrorInvalidValue);
    *funcPtr = strcmp(symbol, "cuTensorMapEncodeTiled") == 0 ? (void *)cuTensorMapEncodeTiled : NULL;
    if (driverStatus) *driverStatus = *funcPtr ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags, cudaDriverEntryPointQueryResult *driverStatus)
{
    (void)cudaVersion;
    return cudaGetDriverEntryPoint(symbol, funcPtr, flags, driverStatus);
}

/* --- kernels ------------------------------------------------------------- */

/* Per-kernel dynamic shared-memory limits set with cudaFuncSetAttribute. */
static struct {
    const void *func;
    int max_dyn_shared;
} func_attrs[256];
static int n_func_attrs;
static pthread_mutex_t attr_lock = PTHREAD_MUTEX_INITIALIZER;

/* The kernel's cudaFuncAttributeMaxDynamicSharedMemorySize, or -1 when
 * it was never set. */
static int func_dyn_attr(const void *func)
{
    int limit = -1;
    pthread_mutex_lock(&attr_lock);
    for (int i = 0; i < n_func_attrs; i++)
        if (func_attrs[i].func == func) limit = func_attrs[i].max_dyn_shared;
    pthread_mutex_unlock(&attr_lock);
    return limit;
}

static int func_dyn_limit(const void *func)
{
    int limit = func_dyn_attr(func);
    return limit < 0 ? DEFAULT_DYN_SHARED : limit;
}

cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value)
{
    RETURN_IF_FAULTED();
    if (!func) return ret(cudaErrorInvalidDeviceFunction);
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout)
        return (value >= -1 && value <= 100) ? cudaSuccess : ret(cudaErrorInvalidValue);
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return ret(cudaErrorInvalidValue);
    if (value < 0 || (size_t)value > simt_shared_optin()) return ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&attr_lock);
    int i = 0;
    while (i < n_func_attrs && func_attrs[i].func != func) i++;
    if (i == n_func_attrs && n_func_attrs < 256) n_func_attrs++;
    if (i < 256) {
        func_attrs[i].func = func;
        func_attrs[i].max_dyn_shared = value;
    }
    pthread_mutex_unlock(&attr_lock);
    return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, const void *func)
{
    RETURN_IF_FAULTED();
    if (!attr) return ret(cudaErrorInvalidValue);
    if (!func) return ret(cudaErrorInvalidDeviceFunction);
    memset(attr, 0, sizeof(*attr));
    attr->maxThreadsPerBlock = MAX_THREADS_PER_BLOCK;
    attr->numRegs = 32;
    attr->ptxVersion = 90;
    attr->binaryVersion = 90;
    attr->maxDynamicSharedSizeBytes = func_dyn_limit(func);
    return cudaSuccess;
}

cudaError_t cudaFuncSetCacheConfig(const void *func, cudaFuncCache config)
{
    RETURN_IF_FAULTED();
    if (!func) return ret(cudaErrorInvalidDeviceFunction);
    return cudaDeviceSetCacheConfig(config);
}

cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config)
{
    RETURN_IF_FAULTED();
    if ((int)config < 0 || config > cudaFuncCachePreferEqual) return ret(cudaErrorInvalidValue);
    return cudaSuccess;
}

/* simt_refuse_next_launch: the next launch is refused, once. */
static int refuse_next;

void simt_refuse_next_launch(int on) { refuse_next = on != 0; }

/* The launch's line, for messages (file NULL: unknown). */
static __thread const char *launch_file;
static __thread int launch_line;

/* " at file.cu:12", or "" when the line is unknown. */
static const char *launch_place(char *out, size_t n)
{
    out[0] = '\0';
    if (launch_file) {
        const char *slash = strrchr(launch_file, '/');
        snprintf(out, n, " at %s:%d", slash ? slash + 1 : launch_file, launch_line);
    }
    return out;
}

/* A refused launch says why on stderr (a GPU only returns the code, which a
 * kernel's caller may not print), then returns the code. */
static cudaError_t refused(cudaError_t code, const char *why, dim3 grid, dim3 block)
{
    char at[192];
    fprintf(stderr, "simt: launch%s refused (%s): %s; grid (%u,%u,%u), block (%u,%u,%u)\n",
            launch_place(at, sizeof at), cudaGetErrorName(code), why, grid.x, grid.y, grid.z, block.x, block.y,
            block.z);
    return ret(code);
}

/* Memory a GPU's kernel can reach: an allocation of cudaMalloc and its
 * forms, up to its end and the slack after it (a pointer one past the end,
 * which a kernel with nothing to do is given, is fine), and the writable
 * static data of the program and its libraries, where __device__,
 * __constant__ and __managed__ variables lie here (a host global lies there
 * too, and goes unnoticed). What is left is the heap (malloc, new, a
 * std::vector's data) and the stack (a local array). */
static int data_segment(struct dl_phdr_info *info, size_t size, void *p)
{
    (void)size;
    uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && a >= lo && a < lo + ph->p_memsz) return 1;
    }
    return 0;
}

static int device_reachable(const void *p)
{
    return allocation_of(p, ALLOC_SLACK + 1).size != 0 || dl_iterate_phdr(data_segment, (void *)p);
}

/* Where a pointer no kernel can reach points, for the message: the
 * calling thread's stack, or else the heap. */
static const char *host_place(const void *p)
{
    pthread_attr_t at;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &at) == 0) {
        pthread_attr_getstack(&at, &lo, &size);
        pthread_attr_destroy(&at);
    }
    uintptr_t a = (uintptr_t)p;
    if (a >= (uintptr_t)lo && a < (uintptr_t)lo + size) return "the stack: a local array or variable";
    return "the heap: malloc, new, a std::vector's data, or device memory already freed";
}

/* Each pointer argument must be one a GPU's kernel can reach; a host
 * pointer would fault at the kernel's first access through it, so the
 * launch fails as that fault would fail it. (A kernel that never touches
 * such an argument would run on a GPU; passing it is still a slip.) */
static cudaError_t check_pointers(const void *func, const void *const *ptrs, unsigned int n)
{
    for (unsigned int k = 0; k < n; k++) {
        if (!ptrs[k] || device_reachable(ptrs[k])) continue;
        char name[256], at[192];
        simt_kernel_name(func, name, sizeof name);
        if (simt_in_freed(ptrs[k], 0))
            fprintf(stderr,
                    "simt: %s, launched%s: its argument %u is %p, in device memory that cudaFree has freed (a "
                    "pointer used after its cudaFree). On a GPU the kernel's first access through it faults "
                    "(cudaErrorIllegalAddress, \"an illegal memory access was encountered\"), or reaches whatever "
                    "buffer took its place; free a buffer only after the last kernel that uses it\n",
                    name, launch_place(at, sizeof at), k + 1, ptrs[k]);
        else
            fprintf(stderr,
                    "simt: %s, launched%s: its argument %u is %p, which is in no live allocation of cudaMalloc, "
                    "cudaMallocManaged or cudaMallocHost but in host memory (%s). A kernel on a GPU cannot reach "
                    "it: its first load or store through it faults, and the launch fails with "
                    "cudaErrorIllegalAddress (\"an illegal memory access was encountered\"). Copy the data to "
                    "device memory (cudaMalloc, then cudaMemcpy) and pass the device pointer\n",
                    name, launch_place(at, sizeof at), k + 1, ptrs[k], host_place(ptrs[k]));
        simt_set_fault(cudaErrorIllegalAddress);
        return ret(cudaErrorIllegalAddress);
    }
    return cudaSuccess;
}

cudaError_t simt_launch(const void *func, dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
                        void (*body)(void *), void *ctx)
{
    return simt_launch_at(func, grid, block, shmem, stream, body, ctx, NULL, 0, NULL, 0);
}

cudaError_t simt_launch_at(const void *func, dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
                           void (*body)(void *), void *ctx, const void *const *ptrs, unsigned int nptrs,
                           const char *file, int line)
{
    (void)stream;
    launch_file = file;
    launch_line = line;
    if (simt_in_kernel()) {
        fprintf(stderr, "simt: kernel launch from device code (dynamic parallelism) is not emulated\n");
        return ret(cudaErrorNotSupported);
    }
    cudaError_t fault = simt_get_fault();
    if (fault != cudaSuccess) return ret(fault);
    if (refuse_next) { /* a check's test of the caller's error path: as a GPU refuses a launch it cannot fit */
        refuse_next = 0;
        return ret(cudaErrorLaunchOutOfResources);
    }
    /* The checks a GPU makes before a launch, with the same error codes. */
    if (grid.x == 0 || grid.y == 0 || grid.z == 0)
        return refused(cudaErrorInvalidConfiguration, "a grid dimension of 0 blocks (a block count rounded down?)",
                       grid, block);
    if (block.x == 0 || block.y == 0 || block.z == 0)
        return refused(cudaErrorInvalidConfiguration, "a block dimension of 0 threads", grid, block);
    if (block.x > 1024 || block.y > 1024 || block.z > 64 ||
        (unsigned long long)block.x * block.y * block.z > MAX_THREADS_PER_BLOCK)
        return refused(cudaErrorInvalidConfiguration,
                       "more than 1024 threads per block (or x, y above 1024, z above 64)", grid, block);
    if (grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535)
        return refused(cudaErrorInvalidConfiguration, "a grid past 2^31 - 1 blocks in x or 65535 in y or z", grid,
                       block);
    if (shmem > (size_t)func_dyn_limit(func)) {
        char why[256];
        if (func_dyn_attr(func) < 0)
            snprintf(why, sizeof why,
                     "%zu bytes of dynamic shared memory, above the %d a kernel gets without "
                     "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)",
                     shmem, DEFAULT_DYN_SHARED);
        else
            snprintf(why, sizeof why,
                     "%zu bytes of dynamic shared memory, above the %d that cudaFuncSetAttribute allowed this "
                     "kernel", shmem, func_dyn_limit(func));
        return refused(cudaErrorInvalidValue, why, grid, block);
    }
    /* Static and dynamic shared memory together: 48 KB for a kernel whose
     * limit was never raised (its dynamic memory may only use what the
     * static leaves), else the opt-in maximum (227 KB); checked as the
     * static variables are declared (simt_shared_first_use). */
    size_t shared_limit = func_dyn_attr(func) < 0 ? SIMT_SHARED_DEFAULT : simt_shared_optin();
    if (check_pointers(func, ptrs, nptrs) != cudaSuccess) return cudaErrorIllegalAddress;
    simt_memtrace_launch_begin(func);
    device_open();
    cudaError_t e = simt_run_grid(grid, block, shmem, shared_limit, body, ctx);
    device_close();
    simt_memtrace_launch_end(grid, block);
    return ret(e);
}
