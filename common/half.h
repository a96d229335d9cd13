/** @file
 * bf16 and fp16 conversions on the host, as plain C on uint16_t bit patterns.
 *
 * They round to nearest, ties to even, and are bit-exact with the CUDA
 * toolkit's own host conversions (__float2bfloat16_rn, __float2half_rn,
 * __bfloat162float, __half2float), NaN handling included: a NaN becomes the
 * canonical 0x7fff (and fp16 NaN widens to float 0x7fffffff). A test compares
 * them with the toolkit's functions over millions of bit patterns, so data
 * prepared here on the CPU is exactly what a GPU kernel would have produced.
 */
#ifndef COURSE_HALF_H
#define COURSE_HALF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Round a float to bf16 (8-bit exponent, 7-bit mantissa), nearest even.
 * @param f value to convert
 * @return the bf16 bit pattern; NaN gives 0x7fff, overflow gives +-inf
 */
uint16_t bf16_from_float(float f);

/**
 * @brief Widen a bf16 bit pattern to float (exact).
 * @param h bf16 bits
 * @return the same value as a float
 */
float float_from_bf16(uint16_t h);

/**
 * @brief Round a float to IEEE fp16 (5-bit exponent, 10-bit mantissa), nearest even.
 * @param f value to convert
 * @return the fp16 bit pattern; |f| >= 65520 gives +-inf, NaN gives 0x7fff
 */
uint16_t fp16_from_float(float f);

/**
 * @brief Widen an fp16 bit pattern to float (exact; NaN becomes 0x7fffffff as in CUDA).
 * @param h fp16 bits
 * @return the same value as a float
 */
float float_from_fp16(uint16_t h);

/**
 * @brief Round a float through bf16 and back: the value a bf16 kernel input holds.
 * @param f value to round
 * @return f rounded to the nearest bf16, as a float
 */
float round_to_bf16(float f);

/**
 * @brief Round a float through fp16 and back: the value an fp16 kernel input holds.
 * @param f value to round
 * @return f rounded to the nearest fp16, as a float
 */
float round_to_fp16(float f);

/**
 * @brief Round a float to tf32 (10-bit mantissa, float's range), to nearest,
 * ties away from zero, bit-exact with CUDA's __float_to_tf32 (cvt.rna).
 *
 * Tensor cores in tf32 mode read only the top 19 bits of each fp32 input
 * (raw fp32 is truncated); a kernel that converts its inputs first gets
 * these values, and references for tf32 kernels round their inputs with
 * this first, so that both see the same numbers.
 * @param f value to round
 * @return f rounded to tf32, as a float
 */
float round_to_tf32(float f);

/**
 * @brief Convert an array of floats to bf16.
 * @param dst n bf16 bit patterns
 * @param src n floats
 * @param n element count
 */
void bf16_from_float_array(uint16_t *dst, const float *src, size_t n);

/**
 * @brief Convert an array of bf16 to floats.
 * @param dst n floats
 * @param src n bf16 bit patterns
 * @param n element count
 */
void float_from_bf16_array(float *dst, const uint16_t *src, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_HALF_H */
