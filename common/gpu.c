/*
 * Device detection, memory and event timing (see gpu.h). Built against the
 * real CUDA runtime or the emulator's, whichever include path comes first.
 */
#include "gpu.h"
#include "error.h"
#include "half.h"
#include "memory.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

int gpu_available(void) {
    static int cached = -1;
    if (cached >= 0) return cached;
    int count = 0; /* cudaGetDeviceCount may leave it untouched on failure */
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        count = 0;
        (void)cudaGetLastError(); /* clear the sticky error for later checked calls */
        /* No driver at all is the plain "no GPU" case (a CPU machine). With
         * a driver loaded, a failure means a GPU that this build cannot use,
         * most often a driver older than the toolkit: say so once, as every
         * check would otherwise be skipped without a word. */
        FILE *drv = fopen("/proc/driver/nvidia/version", "r");
        if (drv) {
            fclose(drv);
            fprintf(stderr, "gpu: an NVIDIA driver is loaded but cudaGetDeviceCount failed: %s (%s)%s; "
                    "kernels will not run on the GPU\n", cudaGetErrorName(err), cudaGetErrorString(err),
                    err == cudaErrorInsufficientDriver
                        ? ". The driver is older than the CUDA runtime this was built with (compare "
                          "nvidia-smi's \"CUDA Version\" with nvcc --version): build with an older toolkit "
                          "(make CUDA_HOME=...) or update the driver"
                        : "");
        }
    }
    cached = count > 0;
    return cached;
}

char *gpu_device_name(char *buf, size_t len) {
    struct cudaDeviceProp prop;
    if (!gpu_available() || cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(buf, len, "none");
    } else {
        snprintf(buf, len, "%s", prop.name);
    }
    return buf;
}

int gpu_emu_too_slow(double flops, double limit_s, char *buf, size_t len) {
    const double s = flops / GPU_EMU_FLOPS;
    if (!(s > limit_s)) return 0;
    if (s < 90.0) snprintf(buf, len, "about a minute");
    else if (s < 2 * 3600.0) snprintf(buf, len, "about %.0f minutes", s / 60);
    else if (s < 2 * 86400.0) snprintf(buf, len, "about %.0f hours", s / 3600);
    else snprintf(buf, len, "about %.0f days", s / 86400);
    return 1;
}

/* A sticky fault from an earlier kernel, or 0. Clears an error that is not
 * sticky, as gpu_sticky_error() does. */
static cudaError_t device_fault(void) {
    (void)cudaGetLastError();
    return cudaPeekAtLastError();
}

/* Ends the process for a failed memory call. After a kernel's fault every
 * such call fails with that fault, so say so: the call itself is not what
 * went wrong, the kernel before it is. */
static void memory_call_failed(cudaError_t err, const char *call, const char *file, int line) {
    if (device_fault() != cudaSuccess)
        course_fatal(file, line, "%s failed: the device has reported %s (%s) since a kernel "
                     "faulted before this call; a fault is sticky and fails every later call, "
                     "so fix that kernel (its message, if any, is above)", call,
                     cudaGetErrorName(err), cudaGetErrorString(err));
    course_fatal(file, line, "%s failed: %s (%s)", call, cudaGetErrorName(err), cudaGetErrorString(err));
}

void *gpu_malloc_at(size_t bytes, const char *file, int line) {
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes ? bytes : 1);
    if (err != cudaSuccess) {
        if (device_fault() != cudaSuccess) memory_call_failed(err, "cudaMalloc", file, line);
        char human[32];
        course_fatal(file, line, "cudaMalloc of %s failed: %s; use a smaller size or free device "
                     "memory first", format_bytes((double)bytes, human, sizeof human),
                     cudaGetErrorString(err));
    }
    return p;
}

void gpu_free_at(void *p, const char *file, int line) {
    if (!p) return;
    cudaError_t err = cudaFree(p);
    /* After a fault the memory cannot be freed, nor used: the caller is on
     * its way to reporting that fault, so this is not a second error. */
    if (err != cudaSuccess && device_fault() == cudaSuccess)
        memory_call_failed(err, "cudaFree", file, line);
}

void gpu_upload_at(void *dst, const void *src, size_t bytes, const char *file, int line) {
    cudaError_t err = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
    if (err != cudaSuccess) memory_call_failed(err, "gpu_upload (cudaMemcpy to the device)", file, line);
}

uint16_t *gpu_upload_bf16_rounded(float *h, size_t n) {
    uint16_t *bits = host_malloc(n * sizeof(uint16_t) + 2), *d = gpu_malloc(n * sizeof(uint16_t) + 2);
    bf16_from_float_array(bits, h, n);
    float_from_bf16_array(h, bits, n);
    gpu_upload(d, bits, n * sizeof(uint16_t));
    host_free(bits);
    return d;
}

void gpu_download_at(void *dst, const void *src, size_t bytes, const char *file, int line) {
    cudaError_t err = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess) memory_call_failed(err, "gpu_download (cudaMemcpy to the host)", file, line);
}

void gpu_copy_at(void *dst, const void *src, size_t bytes, const char *file, int line) {
    cudaError_t err = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice);
    if (err != cudaSuccess) memory_call_failed(err, "gpu_copy (cudaMemcpy on the device)", file, line);
}

void gpu_memset_at(void *p, int value, size_t bytes, const char *file, int line) {
    cudaError_t err = cudaMemset(p, value, bytes);
    if (err != cudaSuccess) memory_call_failed(err, "gpu_memset (cudaMemset)", file, line);
}

size_t gpu_memory_used(void) {
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return total_b > free_b ? total_b - free_b : 0;
}

static void describe(cudaError_t e, char *buf, size_t len) {
    snprintf(buf, len, "%s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
}

int gpu_sync_status(char *buf, size_t len) {
    buf[0] = '\0';
    cudaError_t launch = cudaGetLastError(); /* a fault stays; a refusal is cleared */
    cudaError_t run = cudaDeviceSynchronize();
    if (run != cudaSuccess) {
        describe(run, buf, len);
        return GPU_FAULTED;
    }
    if (launch != cudaSuccess) {
        describe(launch, buf, len);
        return GPU_REFUSED;
    }
    return GPU_DONE;
}

void gpu_sync_check(const char *what) {
    char err[160];
    int st = gpu_sync_status(err, sizeof err);
    if (st == GPU_REFUSED) FATAL("%s: kernel launch failed: %s", what, err);
    if (st == GPU_FAULTED) FATAL("%s: kernel failed while running: %s", what, err);
}

#ifdef COURSE_SIMT
void simt_refuse_next_launch(int on); /* the emulator's runtime (simt_abi.h) */
#endif

int gpu_refuse_next_launch(int on) {
#ifdef COURSE_SIMT
    simt_refuse_next_launch(on);
    return 1;
#else
    (void)on;
    return 0;
#endif
}

char *gpu_sticky_error(char *buf, size_t len) {
    (void)cudaGetLastError(); /* clears an error that is not sticky; a sticky one stays */
    cudaError_t e = cudaPeekAtLastError();
    if (e == cudaSuccess) snprintf(buf, len, "no error");
    else describe(e, buf, len);
    return buf;
}

void gpu_timer_init(gpu_timer_t *t, void *stream) {
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    t->start = (void *)a;
    t->stop = (void *)b;
    t->stream = stream;
}

void gpu_timer_start(gpu_timer_t *t) {
    CUDA_CHECK(cudaEventRecord((cudaEvent_t)t->start, (cudaStream_t)t->stream));
}

float gpu_timer_stop_ms(gpu_timer_t *t) {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventRecord((cudaEvent_t)t->stop, (cudaStream_t)t->stream));
    CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)t->stop));
    CUDA_CHECK(cudaEventElapsedTime(&ms, (cudaEvent_t)t->start, (cudaEvent_t)t->stop));
    return ms;
}

void gpu_timer_free(gpu_timer_t *t) {
    if (t->start) CUDA_CHECK(cudaEventDestroy((cudaEvent_t)t->start));
    if (t->stop) CUDA_CHECK(cudaEventDestroy((cudaEvent_t)t->stop));
    t->start = t->stop = NULL;
}

void gpu_flush_l2(void) {
    static void *scratch = NULL;
    static size_t bytes = 0;
    if (!scratch) {
        int dev = 0, l2 = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
        /* Twice the L2 size, so nothing of the previous repetition survives. */
        bytes = 2 * (size_t)(l2 > 0 ? l2 : (64 << 20));
        scratch = gpu_malloc(bytes);
    }
    CUDA_CHECK(cudaMemset(scratch, 0, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
}
