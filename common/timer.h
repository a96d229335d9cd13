/** @file
 * Wall-clock timing on the host, and the statistics every benchmark uses.
 *
 * GPU work must be timed with CUDA events instead (gpu.h): the host clock
 * only sees when a launch was queued, not when the kernel ran.
 */
#ifndef COURSE_TIMER_H
#define COURSE_TIMER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Seconds on a monotonic clock (CLOCK_MONOTONIC), for intervals only.
 * @return the time in seconds since an arbitrary start
 */
double wall_time(void);

/**
 * @brief Median of n values (the array is sorted in place).
 *
 * Benchmarks report the median of repetitions: unlike the mean it ignores
 * the odd slow repetition (a context switch, a clock change).
 * @param x values, n >= 1
 * @param n count
 * @return the median
 */
double median(double *x, size_t n);

/**
 * @brief Throughput in TFLOP/s for a given FLOP count and time.
 * @param flops floating-point operations performed (2*M*N*K for a matmul)
 * @param seconds time taken
 * @return flops / seconds / 1e12
 */
double tflops(double flops, double seconds);

/**
 * @brief Bandwidth in GB/s (1e9 bytes per second, as vendors and nccl-tests count).
 * @param bytes bytes moved
 * @param seconds time taken
 * @return bytes / seconds / 1e9
 */
double gbps(double bytes, double seconds);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_TIMER_H */
