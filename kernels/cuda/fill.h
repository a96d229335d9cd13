/** @file
 * Random fills made on the device, for inputs that must change from run to
 * run: the matmul benchmark gives every timed run a fresh A this way, so
 * that no run can reuse what an earlier one computed.
 *
 * Element i is common/rng.h's counter-based rng_uniform_at(seed, stream, i),
 * the same function on the host and the device, so a fill can be checked
 * (or repeated) on the host without copying anything back. Built for both
 * targets: nvcc, and simtcc for the emulator.
 */
#ifndef COURSE_FILL_H
#define COURSE_FILL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief x[i] = lo + (hi - lo) * rng_uniform_at(seed, stream, i) for i < n, on the device.
 * @param x [n] device array written
 * @param n elements
 * @param seed the generator's seed
 * @param stream the stream within that seed (one per matrix, say)
 * @param lo smallest value
 * @param hi values stay below it for [-1, 1); for other bounds the rounding of lo + (hi - lo) u
 *        can give hi itself, as with rng_fill_uniform()
 */
void gpu_fill_uniform(float *x, size_t n, uint64_t seed, uint64_t stream, float lo, float hi);

/**
 * @brief gpu_fill_uniform()'s values rounded to bf16 (nearest even), as bit patterns.
 * @param x [n] device array of bf16 bit patterns written
 * @param n elements
 * @param seed the generator's seed
 * @param stream the stream within that seed
 * @param lo smallest value
 * @param hi values stay below it (before rounding to bf16) for [-1, 1); as gpu_fill_uniform() for
 *        other bounds
 */
void gpu_fill_uniform_bf16(uint16_t *x, size_t n, uint64_t seed, uint64_t stream, float lo, float hi);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_FILL_H */
