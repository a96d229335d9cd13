/* bf16/fp16/tf32 rounding on values whose answers are known by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "half.h"

static uint32_t bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static void test_bf16_known_values(void **state) {
    (void)state;
    assert_int_equal(bf16_from_float(1.0f), 0x3f80);
    assert_int_equal(bf16_from_float(-2.0f), 0xc000);
    assert_int_equal(bf16_from_float(0.0f), 0x0000);
    assert_int_equal(bf16_from_float(-0.0f), 0x8000);
    /* 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1). */
    assert_int_equal(bf16_from_float(1.0f + 0x1p-8f), 0x3f80);
    /* 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6: up to even. */
    assert_int_equal(bf16_from_float(1.0f + 3 * 0x1p-8f), 0x3f82);
    assert_int_equal(bf16_from_float(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81); /* above half */
    assert_int_equal(bf16_from_float(INFINITY), 0x7f80);
    assert_int_equal(bf16_from_float(-INFINITY), 0xff80);
    assert_int_equal(bf16_from_float(3.4e38f), 0x7f80); /* rounds past the largest bf16 */
    assert_int_equal(bf16_from_float(NAN), 0x7fff);
    assert_true(float_from_bf16(0x3f80) == 1.0f);
    assert_true(isnan(float_from_bf16(0x7fc0)));
}

static void test_fp16_known_values(void **state) {
    (void)state;
    assert_int_equal(fp16_from_float(1.0f), 0x3c00);
    assert_int_equal(fp16_from_float(-2.0f), 0xc000);
    assert_int_equal(fp16_from_float(65504.0f), 0x7bff);  /* largest fp16 */
    assert_int_equal(fp16_from_float(65519.0f), 0x7bff);  /* below the tie */
    assert_int_equal(fp16_from_float(65520.0f), 0x7c00);  /* tie goes to even: inf */
    assert_int_equal(fp16_from_float(0x1p-14f), 0x0400);  /* smallest normal */
    assert_int_equal(fp16_from_float(0x1p-24f), 0x0001);  /* smallest subnormal */
    assert_int_equal(fp16_from_float(0x1p-25f), 0x0000);  /* tie with zero: even */
    assert_int_equal(fp16_from_float(0x1.8p-25f), 0x0001);
    assert_int_equal(fp16_from_float(3 * 0x1p-25f), 0x0002); /* 1.5 ulp: tie, up to even 2 */
    assert_int_equal(fp16_from_float(-0x1p-30f), 0x8000);
    assert_int_equal(fp16_from_float(1.0f + 0x1p-11f), 0x3c00);     /* tie, even */
    assert_int_equal(fp16_from_float(1.0f + 3 * 0x1p-11f), 0x3c02); /* tie, up to even */
    assert_int_equal(fp16_from_float(NAN), 0x7fff);
    assert_int_equal(fp16_from_float(-INFINITY), 0xfc00);
    assert_true(float_from_fp16(0x0001) == 0x1p-24f);
    assert_true(float_from_fp16(0x8400) == -0x1p-14f);
    assert_int_equal(bits(float_from_fp16(0xfe01)), 0x7fffffffu); /* NaN: canonical */
}

static void test_round_trips_are_exact(void **state) {
    (void)state;
    for (uint32_t h = 0; h < 0x10000; h++) {
        uint16_t x = (uint16_t)h;
        int fp16_nan = (x & 0x7c00) == 0x7c00 && (x & 0x3ff);
        int bf16_nan = (x & 0x7f80) == 0x7f80 && (x & 0x7f);
        if (!fp16_nan) assert_int_equal(fp16_from_float(float_from_fp16(x)), x);
        if (!bf16_nan) assert_int_equal(bf16_from_float(float_from_bf16(x)), x);
    }
}

static void test_tf32(void **state) {
    (void)state;
    assert_true(round_to_tf32(1.0f) == 1.0f);
    assert_true(round_to_tf32(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);   /* tie: away from zero (cvt.rna) */
    assert_true(round_to_tf32(-1.0f - 0x1p-11f) == -1.0f - 0x1p-10f); /* away from zero, negative too */
    assert_true(round_to_tf32(1.0f + 3 * 0x1p-11f) == 1.0f + 0x1p-9f); /* tie, up */
    assert_true(round_to_tf32(1.0f + 0x1p-11f - 0x1p-23f) == 1.0f);   /* just below a tie: down */
    assert_true(isinf(round_to_tf32(0x1.fffffep127f)));              /* rounds past the largest tf32 */
    assert_true(round_to_tf32(1.0f + 0x1p-12f) == 1.0f);
    assert_true(isinf(round_to_tf32(INFINITY)));
    assert_true(isnan(round_to_tf32(NAN)));
    /* A NaN whose payload is all ones: rounding its mantissa would carry past
     * the sign bit and turn the NaN into a zero (-0 from 0x7fffffff). */
    float nan_ones, neg_nan_ones;
    const uint32_t ones = 0x7fffffffu, neg_ones = 0xffffffffu;
    memcpy(&nan_ones, &ones, 4);
    memcpy(&neg_nan_ones, &neg_ones, 4);
    assert_true(isnan(round_to_tf32(nan_ones)));
    assert_true(isnan(round_to_tf32(neg_nan_ones)));
    assert_int_equal(bits(round_to_tf32(1.2345678f)) & 0x1fffu, 0);
}

/* The conversions against a reference written another way: in double
 * arithmetic, dividing by the target's quantum (a power of two, so exact)
 * and rounding with rint (ties to even) or round (ties away, tf32). */
static float float_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* The quantum of a |value| a whose top bit is 2^e: 2^(e - mant_bits), or the
 * subnormal quantum below the smallest normal. */
static double quantum(double a, int mant_bits, int min_exp) {
    return a < ldexp(1.0, min_exp) ? ldexp(1.0, min_exp - mant_bits) : ldexp(1.0, ilogb(a) - mant_bits);
}

/* Round |f| to a format (mant_bits stored, exponents down to min_exp, overflow
 * at 2^max_exp), ties to even, and encode it. */
static uint16_t ref_encode(float f, int mant_bits, int min_exp, int max_exp, int bias) {
    const uint16_t sign = signbit(f) ? 0x8000 : 0, inf = (uint16_t)(((2 * bias + 1) << mant_bits));
    if (isnan(f)) return 0x7fff;
    const double a = fabs((double)f);
    if (isinf(f)) return sign | inf;
    const double q = quantum(a, mant_bits, min_exp), m = rint(a / q), v = m * q;
    if (v >= ldexp(1.0, max_exp)) return sign | inf;
    if (v < ldexp(1.0, min_exp)) return sign | (uint16_t)m; /* m = 2^mant_bits is the smallest normal */
    const int e = ilogb(v);
    const double frac = v / ldexp(1.0, e - mant_bits) - ldexp(1.0, mant_bits);
    return sign | (uint16_t)((e + bias) << mant_bits) | (uint16_t)frac;
}

static uint16_t ref_bf16(float f) { return ref_encode(f, 7, -126, 128, 127); }
static uint16_t ref_fp16(float f) { return ref_encode(f, 10, -14, 16, 15); }

static float ref_tf32(float f) {
    if (!isfinite(f)) return f;
    const double a = fabs((double)f), q = quantum(a, 10, -126), v = round(a / q) * q;
    const float r = v >= 0x1p128 ? INFINITY : (float)v;
    return signbit(f) ? -r : r;
}

static void check_one(uint32_t x) {
    const float f = float_bits(x);
    const uint16_t b = bf16_from_float(f), rb = ref_bf16(f);
    const uint16_t h = fp16_from_float(f), rh = ref_fp16(f);
    if (b != rb) fail_msg("bf16_from_float(%a = 0x%08x) = 0x%04x, expected 0x%04x", (double)f, x, b, rb);
    if (h != rh) fail_msg("fp16_from_float(%a = 0x%08x) = 0x%04x, expected 0x%04x", (double)f, x, h, rh);
    const float t = round_to_tf32(f), rt = ref_tf32(f);
    if (!(bits(t) == bits(rt) || (isnan(t) && isnan(rt))))
        fail_msg("round_to_tf32(%a = 0x%08x) = %a, expected %a", (double)f, x, (double)t, (double)rt);
    if (bits(round_to_bf16(f)) != bits(float_from_bf16(rb)) && !isnan(f))
        fail_msg("round_to_bf16(%a) = %a", (double)f, (double)round_to_bf16(f));
    if (bits(round_to_fp16(f)) != bits(float_from_fp16(rh)) && !isnan(f))
        fail_msg("round_to_fp16(%a) = %a", (double)f, (double)round_to_fp16(f));
}

/* Every exponent, both signs, and mantissas that sit on, just below and
 * just above a tie at every bit position, with the kept part odd and even;
 * then a million patterns at random. Covers subnormal inputs and results,
 * the normal/subnormal edge of fp16 (rounding up into 2^-14), overflow to
 * Inf, and NaN of any payload and sign. */
static void test_against_reference(void **state) {
    (void)state;
    for (uint32_t sign = 0; sign < 2; sign++)
        for (uint32_t e = 0; e < 256; e++)
            for (int k = 0; k < 23; k++)
                for (uint32_t odd = 0; odd < 2; odd++)
                    for (int d = -1; d <= 1; d++) {
                        const uint32_t tie = (1u << k) | (odd << (k + 1)), mant = (tie + (uint32_t)d) & 0x7fffffu;
                        check_one(sign << 31 | e << 23 | mant);
                        check_one(sign << 31 | e << 23 | (mant | (0x7fffffu & ~((4u << k) - 1)))); /* high bits set */
                    }
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 1000000; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17; /* xorshift64 */
        check_one((uint32_t)(s >> 32));
    }
    /* The edges by name: the largest fp16 subnormal and the values that
     * round up from it into the smallest normal, 2^-14. */
    assert_int_equal(fp16_from_float(0x1.ff8p-15f), 0x03ff);
    assert_int_equal(fp16_from_float(0x1.ffcp-15f), 0x0400); /* tie between 0x3ff and 0x400: even */
    assert_int_equal(fp16_from_float(0x1.ffep-15f), 0x0400);
    assert_int_equal(fp16_from_float(-0x1.ffep-15f), 0x8400);
    assert_int_equal(bf16_from_float(0x1p-133f), 0x0001); /* smallest bf16 subnormal */
    assert_int_equal(bf16_from_float(0x1p-134f), 0x0000); /* tie with 0: even */
    assert_int_equal(bf16_from_float(0x1.8p-133f), 0x0002);
    assert_int_equal(bf16_from_float(-0x1.fffffep127f), 0xff80); /* overflow keeps its sign */
    assert_int_equal(bf16_from_float(0x1.fep127f), 0x7f7f);      /* the largest bf16 */
    assert_int_equal(bf16_from_float(0x1.ffp127f), 0x7f80);      /* tie above it: even, Inf */
    /* NaN of either sign becomes the positive canonical 0x7fff, as in CUDA. */
    static const uint32_t nans[] = {0x7f800001u, 0x7fc00000u, 0x7fffffffu, 0xff800001u, 0xffc00000u, 0xffffffffu};
    for (size_t i = 0; i < sizeof nans / sizeof *nans; i++) {
        assert_int_equal(bf16_from_float(float_bits(nans[i])), 0x7fff);
        assert_int_equal(fp16_from_float(float_bits(nans[i])), 0x7fff);
    }
}

/* Widening: every fp16 and bf16 pattern is the value its fields say. */
static void test_widening_every_pattern(void **state) {
    (void)state;
    for (uint32_t h = 0; h < 0x10000; h++) {
        const double sign = h & 0x8000 ? -1.0 : 1.0;
        const uint32_t e5 = (h >> 10) & 0x1f, m10 = h & 0x3ff, e8 = (h >> 7) & 0xff, m7 = h & 0x7f;
        const float f = float_from_fp16((uint16_t)h), b = float_from_bf16((uint16_t)h);
        if (e5 == 31 && m10) {
            assert_int_equal(bits(f), 0x7fffffffu);
        } else {
            const double want = e5 == 31 ? sign * INFINITY
                              : e5 == 0  ? sign * ldexp((double)m10, -24)
                                         : sign * ldexp(1024.0 + m10, (int)e5 - 25);
            if (bits(f) != bits((float)want)) fail_msg("float_from_fp16(0x%04x) = %a, expected %a", h, (double)f, want);
        }
        if (e8 == 255 && m7) {
            assert_true(isnan(b));
        } else {
            const double want = e8 == 255 ? sign * INFINITY
                              : e8 == 0   ? sign * ldexp((double)m7, -133)
                                          : sign * ldexp(128.0 + m7, (int)e8 - 134);
            if (bits(b) != bits((float)want)) fail_msg("float_from_bf16(0x%04x) = %a, expected %a", h, (double)b, want);
        }
    }
}

static void test_arrays(void **state) {
    (void)state;
    float src[3] = {1.0f, 0.5f, -3.0f}, back[3];
    uint16_t h[3];
    bf16_from_float_array(h, src, 3);
    float_from_bf16_array(back, h, 3);
    assert_memory_equal(src, back, sizeof src);
    /* Each element is rounded, not cut: 1 + 2^-8 + 2^-20 is above the tie. */
    const float odd[2] = {1.0f + 0x1p-8f + 0x1p-20f, -3.0f};
    bf16_from_float_array(h, odd, 2);
    assert_int_equal(h[0], 0x3f81);
    assert_int_equal(h[1], 0xc040);
    float_from_bf16_array(back, h, 2);
    assert_true(back[0] == 1.0f + 0x1p-7f && back[1] == -3.0f);
    assert_true(round_to_bf16(1.0f + 0x1p-9f) == 1.0f);
    assert_true(round_to_fp16(1.0f + 0x1p-12f) == 1.0f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_known_values),
        cmocka_unit_test(test_fp16_known_values),
        cmocka_unit_test(test_round_trips_are_exact),
        cmocka_unit_test(test_tf32),
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_widening_every_pattern),
        cmocka_unit_test(test_arrays),
    };
    return cmocka_run_group_tests_name("half", tests, NULL, NULL);
}
