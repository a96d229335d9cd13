/** @file
 * SIMT emulator: bit-exact fp16 and bf16 conversions, shared by cuda_fp16.h,
 * cuda_bf16.h and the tensor-core emulation. They follow the host code paths
 * of the toolkit's cuda_fp16.hpp and cuda_bf16.hpp: round to nearest even,
 * overflow to infinity, a NaN becomes the canonical 0x7fff. Plain C.
 */
#ifndef SIMT_HALF_CONV_H
#define SIMT_HALF_CONV_H

#include <stdint.h>
#include <string.h>

static inline uint32_t simt_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float simt_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/** @brief float to IEEE binary16, round to nearest even. @param f value. @return the bits. */
static inline uint16_t simt_float_to_half_bits(float f)
{
    uint32_t x = simt_f2u(f), u = x & 0x7fffffffu, sign = (x >> 16) & 0x8000u, remainder, result;
    if (u >= 0x7f800000u) {
        remainder = 0;
        result = (u == 0x7f800000u) ? (sign | 0x7c00u) : 0x7fffu;
    } else if (u > 0x477fefffu) {
        remainder = 0x80000000u;
        result = sign | 0x7bffu;
    } else if (u >= 0x38800000u) {
        remainder = u << 19;
        u -= 0x38000000u;
        result = sign | (u >> 13);
    } else if (u < 0x33000001u) {
        remainder = u;
        result = sign;
    } else {
        uint32_t exponent = u >> 23, shift = 0x7eu - exponent, mantissa = (u & 0x7fffffu) | 0x800000u;
        remainder = mantissa << (32 - shift);
        result = sign | (mantissa >> shift);
        result &= 0xffffu;
    }
    if (remainder > 0x80000000u || (remainder == 0x80000000u && (result & 1u))) result++;
    return (uint16_t)result;
}

/** @brief IEEE binary16 to float (exact). @param h the bits. @return the value. */
static inline float simt_half_bits_to_float(uint16_t h)
{
    uint32_t sign = (h >> 15) & 1u, exponent = (h >> 10) & 0x1fu, mantissa = (uint32_t)(h & 0x3ffu) << 13;
    if (exponent == 0x1fu) {
        sign = mantissa ? (sign >> 1) : sign; /* a NaN loses its sign, as in CUDA */
        mantissa = mantissa ? 0x7fffffu : 0u;
        exponent = 0xffu;
    } else if (exponent == 0) {
        if (mantissa) {
            uint32_t msb;
            exponent = 0x71u;
            do {
                msb = mantissa & 0x400000u;
                mantissa <<= 1;
                --exponent;
            } while (!msb);
            mantissa &= 0x7fffffu;
        }
    } else {
        exponent += 0x70u;
    }
    return simt_u2f((sign << 31) | (exponent << 23) | mantissa);
}

/** @brief float to bfloat16, round to nearest even. @param f value. @return the bits. */
static inline uint16_t simt_float_to_bf16_bits(float f)
{
    uint32_t x = simt_f2u(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/** @brief bfloat16 to float (exact). @param b the bits. @return the value. */
static inline float simt_bf16_bits_to_float(uint16_t b) { return simt_u2f((uint32_t)b << 16); }

/* double to float rounding to odd: a second rounding from it to a format at
 * least two bits narrower is then exact (no double-rounding error). */
static inline float simt_double_to_float_odd(double d)
{
    float f = (float)d;
    if ((double)f != d && f == f) {
        if ((f > 0) ? ((double)f > d) : ((double)f < d)) {
            uint32_t u = simt_f2u(f) - 1u; /* step toward zero */
            f = simt_u2f(u);
        }
        f = simt_u2f(simt_f2u(f) | 1u);
    }
    return f;
}

/** @brief double to binary16, one rounding. @param d value. @return the bits. */
static inline uint16_t simt_double_to_half_bits(double d) { return simt_float_to_half_bits(simt_double_to_float_odd(d)); }
/** @brief double to bfloat16, one rounding. @param d value. @return the bits. */
static inline uint16_t simt_double_to_bf16_bits(double d) { return simt_float_to_bf16_bits(simt_double_to_float_odd(d)); }

/* A whole number (already rounded) as an int, saturating as PTX's cvt
 * does: past the range its largest or smallest value, NaN 0 (a C cast of
 * such a value is undefined). */
static inline int simt_whole_to_int(float r)
{
    return r != r ? 0 : r >= 2147483648.0f ? 2147483647 : r <= -2147483648.0f ? (-2147483647 - 1) : (int)r;
}

#endif /* SIMT_HALF_CONV_H */
