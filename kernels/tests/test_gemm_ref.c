/* The CPU matmuls: the double reference on exact cases, OpenBLAS within the fp32 bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>

#include "cpu/gemm_ref.h"
#include "memory.h"
#include "numerics.h"
#include "rng.h"

static void test_reference_small_exact(void **state) {
    (void)state;
    /* [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = [58 64; 139 154] */
    float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {7, 8, 9, 10, 11, 12}, C0[4] = {1, 1, 1, -1};
    double C[4], mag[4];
    gemm_ref_double(2, 2, 3, 1.0, A, B, 0.0, NULL, C, mag);
    assert_true(C[0] == 58 && C[1] == 64 && C[2] == 139 && C[3] == 154);
    assert_true(mag[0] == 58); /* all terms positive: |A||B| = AB */
    gemm_ref_double(2, 2, 3, -2.0, A, B, 3.0, C0, C, mag);
    assert_true(C[0] == -113 && C[3] == -311);
    assert_true(mag[3] == 2 * 154 + 3);
    /* Products in double: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 is exact there;
     * a product rounded to float first would lose the 2^-24 (a tie, to even). */
    const float a = 1.0f + 0x1p-12f;
    double c;
    gemm_ref_double(1, 1, 1, 1.0, &a, &a, 0.0, NULL, &c, NULL);
    assert_true(c == 1.0 + 0x1p-11 + 0x1p-24);
}

/* Each element is the plain dot-product loop's sum, k = 0 .. K-1 in order,
 * bit for bit (gemm_ref.c walks B by rows for speed, not for other sums).
 * alpha and beta are powers of two and a product of two floats is exact in
 * double, so a compiler's fused multiply-adds cannot change any result. */
static void test_reference_matches_the_plain_loop(void **state) {
    (void)state;
    const int M = 37, N = 19, K = 101;
    float *A = host_malloc(sizeof(float) * M * K), *B = host_malloc(sizeof(float) * K * N);
    float *C0 = host_malloc(sizeof(float) * M * N);
    double *C = host_malloc(sizeof(double) * M * N), *mag = host_malloc(sizeof(double) * M * N);
    rng_t r;
    rng_init(&r, 3);
    rng_fill_uniform(&r, A, (size_t)M * K, -1, 1);
    rng_fill_uniform(&r, B, (size_t)K * N, -1, 1);
    rng_fill_uniform(&r, C0, (size_t)M * N, -1, 1);
    gemm_ref_double(M, N, K, 2.0, A, B, -0.5, C0, C, mag);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0, m = 0;
            for (int k = 0; k < K; k++) {
                double ab = (double)A[i * K + k] * B[k * N + j];
                acc += ab;
                m += fabs(ab);
            }
            assert_true(C[i * N + j] == 2.0 * acc + -0.5 * (double)C0[i * N + j]);
            assert_true(mag[i * N + j] == 2.0 * m + fabs(-0.5 * (double)C0[i * N + j]));
        }
    host_free(A); host_free(B); host_free(C0); host_free(C); host_free(mag);
}

static void test_sgemm_within_bound(void **state) {
    (void)state;
    int shapes[][3] = {{1, 1, 1}, {7, 13, 1}, {37, 19, 101}, {128, 64, 257}};
    for (int s = 0; s < 4; s++) {
        int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *A = host_malloc(sizeof(float) * M * K), *B = host_malloc(sizeof(float) * K * N);
        float *C = host_malloc(sizeof(float) * M * N);
        double *want = host_malloc(sizeof(double) * M * N), *mag = host_malloc(sizeof(double) * M * N);
        rng_t r;
        rng_init(&r, 11 + s);
        rng_fill_uniform(&r, A, (size_t)M * K, -1, 1);
        rng_fill_uniform(&r, B, (size_t)K * N, -1, 1);
        rng_fill_uniform(&r, C, (size_t)M * N, -1, 1);
        gemm_ref_double(M, N, K, 1.5, A, B, 0.5, C, want, mag);
        gemm_cpu_sgemm(M, N, K, 1.5f, A, B, 0.5f, C);
        cmp_report_t rep;
        /* fp32 dot products of length K (+2 for alpha, beta): Higham's bound with c = 2. */
        int ok = check_gemm_bound(C, want, mag, M, N, K + 2, EPS_FP32, 2.0, &rep);
        if (!ok) {
            char line[512];
            fail_msg("%s", cmp_report_format(line, sizeof line, "sgemm", &rep));
        }
        /* And the check really bites: one wrong element fails it. */
        int w = M * N / 2;
        C[w] += (float)(10.0 * (K + 2) * EPS_FP32 * 2.0 * mag[w]) + 1e-6f;
        assert_false(check_gemm_bound(C, want, mag, M, N, K + 2, EPS_FP32, 2.0, NULL));
        host_free(A); host_free(B); host_free(C); host_free(want); host_free(mag);
    }
}

/* beta == 0 means C is not read (gemm_ref.h, and BLAS): with C full of NaN
 * the reference, its magnitudes and sgemm stay finite and equal to A*B. The
 * matmul checks fill C with NaN on purpose to catch a kernel that reads it,
 * so a reference that reads it would fail every right kernel. Then sgemm with
 * another alpha and beta (-0.25 and -1) within the bound: a beta taken
 * as anything else is far outside it. */
static void test_beta_zero_and_other_scales(void **state) {
    (void)state;
    const int M = 5, N = 7, K = 9;
    float A[45], B[63], C[35], C1[35];
    double want[35], mag[35], want0[35];
    rng_t r;
    rng_init(&r, 5);
    rng_fill_uniform(&r, A, 45, -1, 1);
    rng_fill_uniform(&r, B, 63, -1, 1);
    for (int i = 0; i < M * N; i++) C[i] = NAN;
    gemm_ref_double(M, N, K, 1.0, A, B, 0.0, NULL, want0, NULL);
    gemm_ref_double(M, N, K, 1.0, A, B, 0.0, C, want, mag);
    gemm_cpu_sgemm(M, N, K, 1.0f, A, B, 0.0f, C);
    for (int i = 0; i < M * N; i++) {
        assert_true(want[i] == want0[i]);
        assert_true(isfinite(mag[i]));
        assert_true(isfinite(C[i]));
    }
    cmp_report_t rep;
    /* fp32 dot products of length K: Higham's bound with c = 2, as above */
    assert_true(check_gemm_bound(C, want, mag, M, N, K, EPS_FP32, 2.0, &rep));
    rng_fill_uniform(&r, C1, 35, -1, 1);
    gemm_ref_double(M, N, K, -0.25, A, B, -1.0, C1, want, mag);
    gemm_cpu_sgemm(M, N, K, -0.25f, A, B, -1.0f, C1);
    assert_true(check_gemm_bound(C1, want, mag, M, N, K + 2, EPS_FP32, 2.0, &rep));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_small_exact),
        cmocka_unit_test(test_reference_matches_the_plain_loop),
        cmocka_unit_test(test_sgemm_within_bound),
        cmocka_unit_test(test_beta_zero_and_other_scales),
    };
    return cmocka_run_group_tests_name("gemm_ref", tests, NULL, NULL);
}
