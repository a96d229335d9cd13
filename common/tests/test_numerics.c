/* Comparisons must fail on NaN, Inf and real errors, and say where. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics.h"

static void test_identical_passes(void **state) {
    (void)state;
    float got[4] = {1, -2, 0, 3.5f};
    double want[4] = {1, -2, 0, 3.5};
    cmp_report_t r;
    assert_true(compare_close(got, want, 4, 0, 0, &r));
    assert_int_equal(r.mismatches, 0);
    assert_true(r.max_abs_err == 0.0);
    /* With every error 0, the report still names a real element: the first. */
    assert_int_equal(r.worst_index, 0);
    assert_true(r.worst_got == 1.0 && r.worst_want == 1.0);
}

/* The bound is atol + rtol * |want|: the absolute part carries elements whose
 * reference is 0, and a negative reference gets the same bound as a positive one. */
static void test_tolerances(void **state) {
    (void)state;
    float got[3] = {-2.001f, 1e-7f, 4.0f};
    double want[3] = {-2, 0, 4};
    cmp_report_t r;
    assert_true(compare_close(got, want, 3, 1e-3, 1e-6, &r));
    assert_false(compare_close(got, want, 3, 1e-3, 0, &r)); /* no atol: 1e-7 where 0 is wanted */
    assert_int_equal(r.worst_index, 1);
    assert_false(compare_close(got, want, 3, 1e-4, 1e-6, &r)); /* -2.001 is 5e-4 off in relative terms */
    assert_int_equal(r.worst_index, 0);
}

static void test_nan_and_inf_fail(void **state) {
    (void)state;
    float got[3] = {1, NAN, 2};
    double want[3] = {1, 1, 2};
    cmp_report_t r;
    /* Even a huge tolerance must not let NaN through. */
    assert_false(compare_close(got, want, 3, 1e30, 1e30, &r));
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.nonfinite, 1);
    assert_int_equal(r.worst_index, 1);
    assert_true(isnan(r.max_abs_err));
    assert_true(isnan(r.max_rel_err)); /* not 0 beside a NaN absolute error */
    got[1] = INFINITY;
    assert_false(compare_close(got, want, 3, 1e30, 1e30, &r));
    assert_int_equal(r.worst_index, 1);
    assert_int_equal(r.nonfinite, 1); /* Inf where 1 is wanted is non-finite too, not only NaN */
    assert_int_equal(r.mismatches, 1);
}

/* An infinite reference: only the same infinity meets it. Its bound is
 * infinite too, and Inf <= Inf once let any finite result pass. */
static void test_inf_reference(void **state) {
    (void)state;
    float got[3] = {1, 1.0f, 2};
    double want[3] = {1, INFINITY, 2};
    cmp_report_t r;
    assert_false(compare_close(got, want, 3, 1e-5, 0, &r));
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.worst_index, 1);
    got[1] = -INFINITY;
    assert_false(compare_close(got, want, 3, 1e-5, 0, &r));
    got[1] = INFINITY;
    assert_true(compare_close(got, want, 3, 1e-5, 0, &r));
    assert_int_equal(r.nonfinite, 0); /* Inf where Inf is wanted is not a non-finite result */
    assert_true(r.max_abs_err == 0.0); /* Inf - Inf is NaN; a match has no error */
    const float wantf[3] = {1, -INFINITY, 2};
    got[1] = -3.0f;
    assert_false(compare_close_f(got, wantf, 3, 1e-5, 0, &r));
    got[1] = -INFINITY;
    assert_true(compare_close_f(got, wantf, 3, 1e-5, 0, &r));
    /* A GEMM element whose |A||B| is infinite has an infinite bound. */
    double gw[4] = {1, INFINITY, 3, 4}, absAB[4] = {1, INFINITY, 3, 4};
    float gg[4] = {1, 5.0f, 3, 4};
    assert_false(check_gemm_bound(gg, gw, absAB, 2, 2, 1, EPS_FP32, 1.0, &r));
    gg[1] = INFINITY;
    assert_true(check_gemm_bound(gg, gw, absAB, 2, 2, 1, EPS_FP32, 1.0, &r));
    /* A finite reference with an infinite bound: met only exactly. The miss
     * is the element reported, not element 0, which is within its bound
     * (7 - 2 is no part of an infinite bound, yet it is the only miss). */
    gw[1] = 2.0;
    gg[1] = 7.0f;
    assert_false(check_gemm_bound(gg, gw, absAB, 2, 2, 1, EPS_FP32, 1.0, &r));
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.worst_index, 1);
    assert_true(r.worst_got == 7.0 && r.worst_want == 2.0);
    gg[1] = 2.0f;
    assert_true(check_gemm_bound(gg, gw, absAB, 2, 2, 1, EPS_FP32, 1.0, &r));
}

static void test_reports_worst_element(void **state) {
    (void)state;
    float got[5] = {1.0f, 2.001f, 3.0f, 4.1f, 5.0f};
    double want[5] = {1, 2, 3, 4, 5};
    cmp_report_t r;
    assert_false(compare_close(got, want, 5, 1e-3, 0, &r));
    assert_int_equal(r.mismatches, 1); /* 2.001 is within 1e-3 relative; 4.1 is not */
    assert_int_equal(r.worst_index, 3);
    assert_true(r.worst_got == 4.1f && r.worst_want == 4.0);
    assert_true(fabs(r.max_abs_err - 0.1) < 1e-6);
    assert_true(fabs(r.max_rel_err - 0.025) < 1e-6);
    char line[512];
    cmp_report_format(line, sizeof line, "C", &r);
    assert_non_null(strstr(line, "1 of 5 outside bound"));
    assert_non_null(strstr(line, "worst at [3]"));
    /* As a 2 x ... matrix with 2 columns, element 3 is row 1, column 1. */
    cmp_report_format_rc(line, sizeof line, "C", &r, 2);
    assert_non_null(strstr(line, "worst at [1][1]"));
    assert_non_null(strstr(line, "max rel err 0.025"));
    /* With 3 columns it is row 1, column 0 (2 columns could not tell row from column). */
    cmp_report_format_rc(line, sizeof line, "C", &r, 3);
    assert_non_null(strstr(line, "worst at [1][0]"));
    /* The bound reported is the worst element's own: 1e-3 * |4|. */
    assert_true(fabs(r.worst_bound - 4e-3) < 1e-12);
    assert_non_null(strstr(line, "(bound 0.004)"));
    /* An element that misses a bound of 0 is worse than any that misses a
     * nonzero one by a finite factor: it is the one reported. */
    float gotz[2] = {1.01f, 1e-3f};
    double wantz[2] = {1, 0};
    assert_false(compare_close(gotz, wantz, 2, 1e-3, 0, &r));
    assert_int_equal(r.worst_index, 1);
    /* Every miss where 0 is wanted: no relative error exists, and the report
     * must not claim one of 0 beside a wrong value. */
    float got0[3] = {1.0f, 0.5f, 3.0f};
    double want0[3] = {1, 0, 3};
    assert_false(compare_close(got0, want0, 3, 1e-3, 1e-6, &r));
    cmp_report_format(line, sizeof line, "C", &r);
    assert_non_null(strstr(line, "worst at [1]: got 0.5 want 0"));
    assert_null(strstr(line, "rel err"));
    assert_non_null(strstr(line, "(0 non-finite)"));
}

/* Every miss is counted, and a report's line is exactly the one documented:
 * the counts, the worst element with its own bound, the largest errors. */
static void test_report_lines(void **state) {
    (void)state;
    float got[5] = {1.5f, 2.0f, 3.25f, 4.0f, INFINITY};
    double want[5] = {1, 2, 3, 4, 5};
    cmp_report_t r;
    assert_false(compare_close(got, want, 5, 0.01, 0, &r));
    assert_int_equal(r.mismatches, 3);
    assert_int_equal(r.nonfinite, 1);
    char line[512];
    assert_string_equal(cmp_report_format(line, sizeof line, "C", &r),
                        "C: 3 of 5 outside bound (1 non-finite); worst at [4]: got inf want 5 (bound 0.05); "
                        "max abs err inf, max rel err inf");
    assert_string_equal(cmp_report_format_rc(line, sizeof line, "C", &r, 2),
                        "C: 3 of 5 outside bound (1 non-finite); worst at [2][0]: got inf want 5 (bound 0.05); "
                        "max abs err inf, max rel err inf");
    /* 0 columns: the flat index, as cmp_report_format. */
    assert_string_equal(cmp_report_format_rc(line, sizeof line, "C", &r, 0),
                        cmp_report_format(line + 256, 256, "C", &r));
    /* Finite misses: the largest absolute error (0.75, at 4) and relative
     * error (0.5, at 1) are reported apart; the worst element is the one
     * furthest out in units of its own bound (1.5 for 1: 50 bounds). */
    got[4] = 5.0f;
    got[3] = 4.75f;
    assert_false(compare_close(got, want, 5, 0.01, 0, &r));
    assert_int_equal(r.mismatches, 3);
    assert_string_equal(cmp_report_format(line, sizeof line, "out", &r),
                        "out: 3 of 5 outside bound (0 non-finite); worst at [0]: got 1.5 want 1 (bound 0.01); "
                        "max abs err 0.75, max rel err 0.5");
    assert_string_equal(cmp_report_format_rc(line, sizeof line, "out", &r, 5),
                        "out: 3 of 5 outside bound (0 non-finite); worst at [0][0]: got 1.5 want 1 (bound 0.01); "
                        "max abs err 0.75, max rel err 0.5");
    /* With no tolerance every miss is infinitely far out; the first is named,
     * with the digits that tell got from want (1 + 2^-10 is not "1"). */
    const float near[3] = {2.0f, 1.0009765625f, 3.0f};
    assert_false(compare_close(near, want, 3, 0, 0, &r));
    assert_true(fabs(r.worst_bound) == 0.0);
    assert_string_equal(cmp_report_format(line, sizeof line, "out", &r),
                        "out: 2 of 3 outside bound (0 non-finite); worst at [0]: got 2 want 1 (bound 0); "
                        "max abs err 1, max rel err 1");
    assert_false(compare_close(near + 1, want, 1, 0, 0, &r));
    assert_string_equal(cmp_report_format(line, sizeof line, "out", &r),
                        "out: 1 of 1 outside bound (0 non-finite); worst at [0]: got 1.00097656 want 1 (bound 0); "
                        "max abs err 0.000977, max rel err 0.000977");
    assert_string_equal(cmp_report_format_rc(line, sizeof line, "out", &r, 1),
                        "out: 1 of 1 outside bound (0 non-finite); worst at [0][0]: got 1.00097656 want 1 (bound 0); "
                        "max abs err 0.000977, max rel err 0.000977");
    /* A passing comparison still says its largest errors (here 0). */
    assert_true(compare_close(got, want, 1, 0.5, 0, &r));
    assert_string_equal(cmp_report_format(line, sizeof line, "C", &r),
                        "C: 0 of 1 outside bound (0 non-finite); worst at [0]: got 1.5 want 1 (bound 0.5); "
                        "max abs err 0.5, max rel err 0.5");
    const float same[1] = {1.0f};
    assert_true(compare_close(same, want, 1, 0, 0, &r));
    assert_string_equal(cmp_report_format(line, sizeof line, "C", &r),
                        "C: 0 of 1 outside bound (0 non-finite); worst at [0]: got 1 want 1 (bound 0); "
                        "max abs err 0, max rel err 0");
    /* cmp_report_print writes the same line, and a newline. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    cmp_report_print(f, "C", &r);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(buf, "C: 0 of 1 outside bound (0 non-finite); worst at [0]: got 1 want 1 (bound 0); "
                             "max abs err 0, max rel err 0\n");
    free(buf);
    /* A negative reference's relative error is |got - want| / |want|, as a
     * positive one's: -2.5 for -2 is 0.25 out, the largest here. */
    const float neg[2] = {-2.5f, 1.0f};
    const double wneg[2] = {-2, 1};
    assert_false(compare_close(neg, wneg, 2, 0.1, 0, &r));
    assert_true(r.max_rel_err == 0.25);
    assert_string_equal(cmp_report_format(line, sizeof line, "C", &r),
                        "C: 1 of 2 outside bound (0 non-finite); worst at [0]: got -2.5 want -2 (bound 0.2); "
                        "max abs err 0.5, max rel err 0.25");
}

/* An exact match whose bound is 0 (0 / 0) is not worse than a miss: the
 * miss is reported. */
static void test_zero_bound_exact_match(void **state) {
    (void)state;
    float got[3] = {0.0f, 1e-3f, 2.0f};
    double want[3] = {0, 0, 2};
    cmp_report_t r;
    assert_false(compare_close(got, want, 3, 0, 0, &r));
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.worst_index, 1);
    const float wantf[3] = {0.0f, 0.0f, 2.0f};
    assert_false(compare_close_f(got, wantf, 3, 0, 0, &r));
    assert_int_equal(r.worst_index, 1);
}

static void test_float_reference(void **state) {
    (void)state;
    float got[2] = {1.0f, 2.0f}, want[2] = {1.0f, 2.0f + 1e-3f};
    assert_true(compare_close_f(got, want, 2, 1e-3, 0, NULL));
    assert_false(compare_close_f(got, want, 2, 1e-5, 0, NULL));
    /* atol carries a reference of 0, rtol does not: each in its place. */
    const float g0[2] = {1.0f, 1e-4f}, w0[2] = {1.0f, 0.0f};
    assert_true(compare_close_f(g0, w0, 2, 0, 1e-3, NULL));
    assert_false(compare_close_f(g0, w0, 2, 1e-3, 0, NULL));
}

/* A 2x2x3 matmul whose exact result we know, perturbed by multiples of the bound. */
static void test_gemm_bound(void **state) {
    (void)state;
    const int M = 2, N = 2, K = 3;
    double want[4] = {10, -4, 0, 7}, absAB[4] = {12, 8, 6, 7};
    float got[4];
    for (int i = 0; i < 4; i++) got[i] = (float)want[i];
    cmp_report_t r;
    assert_true(check_gemm_bound(got, want, absAB, M, N, K, EPS_FP32, 1.0, &r));
    /* Within half the bound: passes. */
    got[0] = (float)(10 + 0.5 * K * EPS_FP32 * 12);
    assert_true(check_gemm_bound(got, want, absAB, M, N, K, EPS_FP32, 1.0, &r));
    /* Four times the bound on element 3: fails there. */
    got[3] = (float)(7 + 4.0 * K * EPS_FP32 * 7);
    assert_false(check_gemm_bound(got, want, absAB, M, N, K, EPS_FP32, 1.0, &r));
    assert_int_equal(r.worst_index, 3);
    /* An element whose exact value is 0 with |A||B| > 0 has a nonzero bound. */
    got[3] = 7;
    got[2] = (float)(1e-7);
    assert_true(check_gemm_bound(got, want, absAB, M, N, K, EPS_FP32, 1.0, &r));
    got[2] = NAN;
    assert_false(check_gemm_bound(got, want, absAB, M, N, K, EPS_FP32, 1.0, &r));
    /* The bf16 bound is much looser than fp32's. */
    got[2] = 0;
    got[0] = (float)(10 + 0.01);
    assert_false(check_gemm_bound(got, want, absAB, M, N, K, EPS_FP32, 1.0, &r));
    assert_true(check_gemm_bound(got, want, absAB, M, N, K, EPS_BF16, 1.0, &r));
    /* The FLT_MIN floor: a result flushed to zero (a GPU's flush-to-zero
     * mode) where the exact value is a float subnormal still passes. */
    got[0] = 10;
    got[2] = 0.0f;
    want[2] = 1e-39;
    absAB[2] = 1e-39;
    assert_true(check_gemm_bound(got, want, absAB, M, N, K, EPS_FP32, 1.0, &r));
}

/* The bound is c * K * eps * absAB + FLT_MIN, no looser and no tighter: at
 * K = 1000 a bound of (K + 1), 2 c, 1.5 c or sqrt(K) would let a wrong result
 * through or fail a right one. bf16, c = 2, |A||B| = 3: 23.4375 (+ FLT_MIN). */
static void test_gemm_bound_is_c_K_eps(void **state) {
    (void)state;
    const int K = 1000;
    const double c = 2.0, bound = c * K * EPS_BF16 * 3.0;
    double want[2] = {100, -50}, absAB[2] = {3, 3};
    float got[2] = {100.0f, -50.0f};
    cmp_report_t r;
    assert_true(check_gemm_bound(got, want, absAB, 1, 2, K, EPS_BF16, c, &r));
    assert_true(r.worst_bound == bound + FLT_MIN);
    got[0] = 123.375f; /* 0.99 of the bound off: passes */
    assert_true(check_gemm_bound(got, want, absAB, 1, 2, K, EPS_BF16, c, &r));
    got[0] = 123.5f; /* 1.003 of it: fails, and is named */
    assert_false(check_gemm_bound(got, want, absAB, 1, 2, K, EPS_BF16, c, &r));
    assert_int_equal(r.worst_index, 0);
    assert_true(r.worst_bound == bound + FLT_MIN);
    /* The same error is within the bound of c = 4 (twice as loose), not of c = 1. */
    assert_true(check_gemm_bound(got, want, absAB, 1, 2, K, EPS_BF16, 4.0, &r));
    got[0] = 100.0f;
    got[1] = -50.0f - 11.75f; /* just over c = 1's bound of 11.71875 */
    assert_true(check_gemm_bound(got, want, absAB, 1, 2, K, EPS_BF16, c, &r));
    assert_false(check_gemm_bound(got, want, absAB, 1, 2, K, EPS_BF16, 1.0, &r));
    assert_int_equal(r.worst_index, 1);
    /* K counts: at K = 500 the bound halves. */
    assert_false(check_gemm_bound(got, want, absAB, 1, 2, K / 2, EPS_BF16, c, &r));
    /* The floor is FLT_MIN, no more: where |A||B| is 0 (a zero row of A),
     * 2 * FLT_MIN where 0 belongs fails; half of FLT_MIN (a subnormal) passes. */
    double zw[2] = {0, 0}, zab[2] = {0, 0};
    float zg[2] = {0.0f, 2 * FLT_MIN};
    assert_false(check_gemm_bound(zg, zw, zab, 2, 1, K, EPS_FP32, c, &r));
    assert_int_equal(r.worst_index, 1);
    assert_true(r.worst_bound == FLT_MIN);
    zg[1] = FLT_MIN / 2;
    assert_true(check_gemm_bound(zg, zw, zab, 2, 1, K, EPS_FP32, c, &r));
    zg[1] = 1e-30f;
    assert_false(check_gemm_bound(zg, zw, zab, 2, 1, K, EPS_FP32, c, &r));
}

/* within_bound and gemm_elem_bound are the rule the checks apply, element by
 * element (the matmul harness marks wrong elements with them): the same
 * verdicts as check_gemm_bound, NaN failing, an infinity met only by itself. */
static void test_within_bound_is_the_checks_rule(void **state) {
    (void)state;
    assert_true(gemm_elem_bound(3.0, 1000, EPS_BF16, 2.0) == 2.0 * 1000 * EPS_BF16 * 3.0 + FLT_MIN);
    assert_true(within_bound(1.5, 1.0, 0.5));
    assert_false(within_bound(1.5, 1.0, 0.4));
    assert_false(within_bound(NAN, 1.0, 1e30));
    assert_false(within_bound(NAN, NAN, 1e30)); /* a NaN reference is handled by the caller */
    assert_true(within_bound(INFINITY, INFINITY, INFINITY));
    assert_false(within_bound(1e30, INFINITY, INFINITY));
    assert_false(within_bound(-INFINITY, INFINITY, INFINITY));
    assert_false(within_bound(2.0, 1.0, INFINITY)); /* an infinite bound: only got == want */
    assert_true(within_bound(1.0, 1.0, INFINITY));
    /* The same verdict as check_gemm_bound, element by element. */
    const double want[5] = {100, -50, INFINITY, 0, 7}, absAB[5] = {3, 3, INFINITY, 0, 1};
    const float got[5] = {123.5f, -50.0f, INFINITY, 2 * FLT_MIN, NAN};
    for (int i = 0; i < 5; i++) {
        int one = check_gemm_bound(&got[i], &want[i], &absAB[i], 1, 1, 1000, EPS_BF16, 2.0, NULL);
        int each = within_bound(got[i], want[i], gemm_elem_bound(absAB[i], 1000, EPS_BF16, 2.0));
        if (one != each) fail_msg("element %d: check_gemm_bound says %d, within_bound %d", i, one, each);
    }
}

/* rel_l2_diff: exact on a hand-made case, zero for equal tensors, NaN-propagating. */
static void test_rel_l2_diff(void **state) {
    (void)state;
    const float ref[3] = {3.0f, 0.0f, 4.0f}, got[3] = {3.0f, 1.0f, 4.0f};
    assert_true(fabs(rel_l2_diff(got, ref, 3) - 0.2) < 1e-15); /* |(0,1,0)| / |(3,0,4)| */
    assert_true(rel_l2_diff(ref, ref, 3) == 0.0);
    const float zero[2] = {0.0f, 0.0f}, two[2] = {0.0f, 2.0f};
    assert_true(rel_l2_diff(two, zero, 2) == 2.0); /* ref all zero: the plain norm */
    const float nan[3] = {3.0f, NAN, 4.0f};
    assert_true(isnan(rel_l2_diff(nan, ref, 3)));
    /* The difference is taken in double: in float, 1 - 2^-30 is 1, and the
     * answer would be 2^30 instead of 2^30 - 1. */
    const float one[1] = {1.0f}, tiny[1] = {0x1p-30f};
    assert_true(fabs(rel_l2_diff(one, tiny, 1) - (0x1p30 - 1.0)) < 0.25);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rel_l2_diff),
        cmocka_unit_test(test_identical_passes),
        cmocka_unit_test(test_tolerances),
        cmocka_unit_test(test_nan_and_inf_fail),
        cmocka_unit_test(test_inf_reference),
        cmocka_unit_test(test_reports_worst_element),
        cmocka_unit_test(test_report_lines),
        cmocka_unit_test(test_zero_bound_exact_match),
        cmocka_unit_test(test_float_reference),
        cmocka_unit_test(test_gemm_bound),
        cmocka_unit_test(test_gemm_bound_is_c_K_eps),
        cmocka_unit_test(test_within_bound_is_the_checks_rule),
    };
    return cmocka_run_group_tests_name("numerics", tests, NULL, NULL);
}
