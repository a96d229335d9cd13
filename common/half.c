/*
 * bf16/fp16 conversions (see half.h). Written on raw bits so that rounding is
 * explicit: add half an ulp of the target, plus one more bit when the kept
 * part is odd, and truncate. That is round-to-nearest-even without branches.
 */
#include "half.h"

#include <string.h>

static uint32_t bits_of(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }
static float float_of(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }

uint16_t bf16_from_float(float f) {
    uint32_t x = bits_of(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu; /* NaN: canonical, as CUDA's host code */
    /* Keep the top 16 bits. Rounding bias 0x7fff, plus 1 if the kept lsb is odd;
     * a carry out of the mantissa correctly bumps the exponent (up to inf). */
    uint32_t lsb = (x >> 16) & 1u;
    return (uint16_t)((x + 0x7fffu + lsb) >> 16);
}

float float_from_bf16(uint16_t h) { return float_of((uint32_t)h << 16); }

/* Round m right by `shift` bits (1..31), to nearest even. */
static uint32_t shift_round_even(uint32_t m, unsigned shift) {
    uint32_t kept = m >> shift;
    uint32_t rest = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1u))) kept++;
    return kept;
}

uint16_t fp16_from_float(float f) {
    uint32_t x = bits_of(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t u = x & 0x7fffffffu;
    if (u > 0x7f800000u) return 0x7fffu;              /* NaN */
    if (u >= 0x477ff000u) return sign | 0x7c00u;      /* >= 65520 (tie above 65504) rounds to inf */
    if (u >= 0x38800000u) {                           /* normal fp16: exponent -14..15 */
        /* Rebias the exponent (127 -> 15) in place, then drop 13 mantissa bits;
         * a rounding carry may move into the exponent, which is still right. */
        return sign | (uint16_t)shift_round_even(u - 0x38000000u, 13);
    }
    if (u <= 0x33000000u) return sign;                /* <= 2^-25: ties to even give zero */
    /* Subnormal fp16: value = m * 2^(e-150) in units of 2^-24 is m >> (126 - e). */
    uint32_t e = u >> 23;
    uint32_t m = (u & 0x7fffffu) | 0x800000u;
    return sign | (uint16_t)shift_round_even(m, 126u - e);
}

float float_from_fp16(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1fu) {
        if (mant) return float_of(0x7fffffffu);       /* NaN: CUDA drops sign and payload */
        return float_of(sign | 0x7f800000u);
    }
    if (exp == 0) {                                   /* zero or subnormal: mant * 2^-24, exact */
        float v = (float)mant * 0x1p-24f;
        return sign ? -v : v;
    }
    return float_of(sign | ((exp + 112u) << 23) | (mant << 13));
}

float round_to_bf16(float f) { return float_from_bf16(bf16_from_float(f)); }

float round_to_fp16(float f) { return float_from_fp16(fp16_from_float(f)); }

float round_to_tf32(float f) {
    uint32_t x = bits_of(f);
    if ((x & 0x7f800000u) == 0x7f800000u) return f;   /* inf and NaN pass through */
    /* Ties away from zero, as CUDA's conversion (cvt.rna.tf32.f32,
     * wmma::__float_to_tf32) and the emulator's round; a carry out of the
     * mantissa steps the exponent, up to Inf. */
    x = (x + 0x1000u) & ~0x1fffu;
    return float_of(x);
}

void bf16_from_float_array(uint16_t *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = bf16_from_float(src[i]);
}

void float_from_bf16_array(float *dst, const uint16_t *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = float_from_bf16(src[i]);
}
