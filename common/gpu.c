/*
 * Device detection, memory and event timing (see gpu.h). Built against the
 * real CUDA runtime or the emulator's, whichever include path comes first.
 */
#include "gpu.h"
#include "error.h"
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

void *gpu_malloc_at(size_t bytes, const char *file, int line) {
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes ? bytes : 1);
    if (err != cudaSuccess) {
        char human[32];
        course_fatal(file, line, "cudaMalloc of %s failed: %s; use a smaller size or free device "
                     "memory first", format_bytes((double)bytes, human, sizeof human),
                     cudaGetErrorString(err));
    }
    return p;
}

void gpu_free(void *p) {
    if (p) CUDA_CHECK(cudaFree(p));
}

void gpu_upload(void *dst, const void *src, size_t bytes) {
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

void gpu_download(void *dst, const void *src, size_t bytes) {
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

void gpu_memset(void *p, int value, size_t bytes) { CUDA_CHECK(cudaMemset(p, value, bytes)); }

size_t gpu_memory_used(void) {
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return total_b > free_b ? total_b - free_b : 0;
}

void gpu_sync_check(const char *what) {
    cudaError_t launch = cudaGetLastError();
    if (launch != cudaSuccess)
        FATAL("%s: kernel launch failed: %s (%s)", what, cudaGetErrorName(launch),
              cudaGetErrorString(launch));
    cudaError_t run = cudaDeviceSynchronize();
    if (run != cudaSuccess)
        FATAL("%s: kernel failed while running: %s (%s)", what, cudaGetErrorName(run),
              cudaGetErrorString(run));
}

char *gpu_sticky_error(char *buf, size_t len) {
    (void)cudaGetLastError(); /* clears an error that is not sticky; a sticky one stays */
    cudaError_t e = cudaPeekAtLastError();
    if (e == cudaSuccess) snprintf(buf, len, "no error");
    else snprintf(buf, len, "%s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
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
