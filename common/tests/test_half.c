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

static void test_arrays(void **state) {
    (void)state;
    float src[3] = {1.0f, 0.5f, -3.0f}, back[3];
    uint16_t h[3];
    bf16_from_float_array(h, src, 3);
    float_from_bf16_array(back, h, 3);
    assert_memory_equal(src, back, sizeof src);
    assert_true(round_to_bf16(1.0f + 0x1p-9f) == 1.0f);
    assert_true(round_to_fp16(1.0f + 0x1p-12f) == 1.0f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_known_values),
        cmocka_unit_test(test_fp16_known_values),
        cmocka_unit_test(test_round_trips_are_exact),
        cmocka_unit_test(test_tf32),
        cmocka_unit_test(test_arrays),
    };
    return cmocka_run_group_tests_name("half", tests, NULL, NULL);
}
