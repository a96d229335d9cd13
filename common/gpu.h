/** @file
 * The device side of the plumbing: is there a GPU, device memory, and timing
 * with CUDA events.
 *
 * This file is plain C against the CUDA runtime API, so it builds twice: once
 * against the real runtime (TARGET=cuda) and once against the CPU SIMT
 * emulator's runtime (TARGET=emu), and the labs' checks use the same calls in
 * both. Every call is checked; failures name the call and the caller.
 */
#ifndef COURSE_GPU_H
#define COURSE_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief True when a usable CUDA device is present.
 *
 * False when there is no GPU, no driver, or a driver too old for this
 * runtime: cudaGetDeviceCount fails in those cases, and the error it leaves
 * pending is cleared so the next checked CUDA call does not trip over it.
 * (Without a driver at all the runtime's initialisation error is permanent:
 * every later CUDA call fails again, so make none when this returns 0.)
 * Under the emulator this is true (the emulated device).
 * @return 1 or 0
 */
int gpu_available(void);

/**
 * @brief Name of device 0 ("NVIDIA H200", "SIMT emulator (CPU)"), or "none".
 * @param buf destination
 * @param len size of buf
 * @return buf
 */
char *gpu_device_name(char *buf, size_t len);

/**
 * @brief The rate, in FLOP/s, at which the SIMT emulator is assumed to run
 * kernel arithmetic when a program estimates how long a run will take.
 *
 * Measured on one core of a 2020s x86 CPU: 0.3 to 1 GFLOP/s for the matmul
 * ladder of labs 01-03 at 256^3 and for lab 05's training step at its
 * default shape. A rough figure, for warnings, never for results.
 */
#define GPU_EMU_FLOPS 0.5e9

/**
 * @brief Whether some arithmetic would take the emulator longer than a limit.
 *
 * For refusing, or warning about, a shape meant for a GPU before the
 * emulator spends hours on it with nothing printed.
 * @param flops floating-point operations the run will do
 * @param limit_s seconds that are still fine
 * @param buf receives the estimate at GPU_EMU_FLOPS, as "about 21 hours" or
 *        "about 40 minutes", when the limit is passed
 * @param len size of buf
 * @return 1 when flops / GPU_EMU_FLOPS exceeds limit_s, else 0 (buf untouched)
 */
int gpu_emu_too_slow(double flops, double limit_s, char *buf, size_t len);

/**
 * @brief cudaMalloc that names the caller and the size when it fails.
 * @param bytes size in bytes
 * @param file caller's file
 * @param line caller's line
 * @return device pointer, never NULL (bytes == 0 gives a valid 1-byte allocation)
 */
void *gpu_malloc_at(size_t bytes, const char *file, int line);

/** @brief Checked device allocation that names the caller on failure. */
#define gpu_malloc(bytes) gpu_malloc_at((bytes), __FILE__, __LINE__)

/**
 * @brief Free device memory from gpu_malloc (NULL is fine).
 *
 * After a kernel has faulted the device refuses every call, cudaFree too;
 * then this returns quietly, so that the caller can go on to report the
 * fault itself (gpu_sticky_error()) instead of dying on a free. The memory
 * is released when the process ends.
 * @param p device pointer
 * @param file caller's file, named if the call fails
 * @param line caller's line
 */
void gpu_free_at(void *p, const char *file, int line);

/** @brief gpu_free_at() naming the caller's file and line. */
#define gpu_free(p) gpu_free_at((p), __FILE__, __LINE__)

/**
 * @brief Copy host to device (synchronous, checked).
 * @param dst device pointer
 * @param src host pointer
 * @param bytes size
 * @param file caller's file, named if the call fails
 * @param line caller's line
 */
void gpu_upload_at(void *dst, const void *src, size_t bytes, const char *file, int line);

/** @brief gpu_upload_at() naming the caller's file and line. */
#define gpu_upload(dst, src, bytes) gpu_upload_at((dst), (src), (bytes), __FILE__, __LINE__)

/**
 * @brief Round n host floats to bf16 in place and copy the bf16 bits to new device memory.
 *
 * In place, so that a CPU reference computed from h afterwards works on
 * exactly the values the device holds (nearest-even rounding, half.h).
 * @param h n floats; on return each holds its bf16 value
 * @param n count
 * @return device memory with the n bf16 bit patterns; release it with gpu_free()
 */
uint16_t *gpu_upload_bf16_rounded(float *h, size_t n);

/**
 * @brief Copy device to host (synchronous, checked).
 * @param dst host pointer
 * @param src device pointer
 * @param bytes size
 * @param file caller's file, named if the call fails
 * @param line caller's line
 */
void gpu_download_at(void *dst, const void *src, size_t bytes, const char *file, int line);

/** @brief gpu_download_at() naming the caller's file and line. */
#define gpu_download(dst, src, bytes) gpu_download_at((dst), (src), (bytes), __FILE__, __LINE__)

/**
 * @brief Copy device to device (synchronous, checked).
 * @param dst device pointer
 * @param src device pointer; the two ranges must not overlap
 * @param bytes size
 * @param file caller's file, named if the call fails
 * @param line caller's line
 */
void gpu_copy_at(void *dst, const void *src, size_t bytes, const char *file, int line);

/** @brief gpu_copy_at() naming the caller's file and line. */
#define gpu_copy(dst, src, bytes) gpu_copy_at((dst), (src), (bytes), __FILE__, __LINE__)

/**
 * @brief Set device memory bytewise (checked).
 * @param p device pointer
 * @param value byte value
 * @param bytes size
 * @param file caller's file, named if the call fails
 * @param line caller's line
 */
void gpu_memset_at(void *p, int value, size_t bytes, const char *file, int line);

/** @brief gpu_memset_at() naming the caller's file and line. */
#define gpu_memset(p, value, bytes) gpu_memset_at((p), (value), (bytes), __FILE__, __LINE__)

/**
 * @brief Device memory in use on the current device, by every process: total minus free (cudaMemGetInfo).
 *
 * Includes the CUDA context and libraries' workspaces, so it is what a run
 * really needs of the GPU. Under the emulator the "device" is the host, and
 * the figure is the host's memory in use.
 * @return bytes
 */
size_t gpu_memory_used(void);

/**
 * @brief Wait for all device work, then report any error a kernel raised (launch or execution).
 * @param what names the work for the error message, e.g. "vector_add"
 */
void gpu_sync_check(const char *what);

/** What gpu_sync_status() found. */
enum {
    GPU_DONE = 0,    /**< every kernel launched and finished */
    GPU_REFUSED = 1, /**< a launch was refused (configuration, resources); the device is fine */
    GPU_FAULTED = 2  /**< a kernel faulted while running; the device is unusable (sticky) */
};

/**
 * @brief Wait for all device work and say how it went, without ending the process.
 *
 * For checks that report a kernel's failure as a failed test: a GPU reports
 * a fault in a kernel only here, when the host waits for it (the emulator
 * already at the launch). A refused launch is cleared, as
 * cudaGetLastError() clears it; a fault stays.
 * @param buf gets the error as "cudaErrorIllegalAddress (an illegal memory
 *            access was encountered)", or "" for GPU_DONE
 * @param len size of buf
 * @return GPU_DONE, GPU_REFUSED or GPU_FAULTED
 */
int gpu_sync_status(char *buf, size_t len);

/**
 * @brief The error a fault in a kernel left on the device, as text for a
 * message: "cudaErrorMisalignedAddress (misaligned address)", or "no error".
 * Such an error is sticky: the device reports it until the process ends and
 * every later launch fails, so the first failure is the one to fix. An
 * error that is not sticky (a refused launch configuration) is cleared, as
 * cudaGetLastError() clears it, and does not count.
 * @param buf destination
 * @param len size of buf
 * @return buf
 */
char *gpu_sticky_error(char *buf, size_t len);

/**
 * @brief Make the next kernel launch fail as a GPU refuses one it cannot fit
 * (cudaErrorLaunchOutOfResources, not sticky), so that a check can see
 * whether a student function notices: cudaGetLastError() after the launch,
 * LAB_LAUNCH_FAILED back. Only the emulator can: on a GPU nothing changes.
 * @param on 1 to refuse the next launch, 0 to cancel a refusal not used
 * @return 1 under the emulator, 0 on a GPU
 */
int gpu_refuse_next_launch(int on);

/** A pair of CUDA events for timing device work on a stream. */
typedef struct {
    void *start;  /**< cudaEvent_t */
    void *stop;   /**< cudaEvent_t */
    void *stream; /**< cudaStream_t the events are recorded on (NULL: default stream) */
} gpu_timer_t;

/**
 * @brief Create the events of a timer.
 * @param t the timer
 * @param stream stream to record on (NULL for the default stream)
 */
void gpu_timer_init(gpu_timer_t *t, void *stream);

/** @brief Record the start event. @param t the timer */
void gpu_timer_start(gpu_timer_t *t);

/**
 * @brief Record the stop event, wait for it, and return the elapsed time.
 * @param t the timer
 * @return milliseconds between the two events, measured on the device
 */
float gpu_timer_stop_ms(gpu_timer_t *t);

/** @brief Destroy the events. @param t the timer */
void gpu_timer_free(gpu_timer_t *t);

/**
 * @brief Overwrite the L2 cache so the next timed repetition starts cold.
 *
 * Benchmarks call this between repetitions: otherwise a matrix that fits in
 * L2 (50 MB on H100) is read from cache and the kernel looks faster than it
 * is on real-sized data.
 */
void gpu_flush_l2(void);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_GPU_H */
