/*
 * Lab 02 checks: matmul_smem against a double-precision reference.
 *
 * The shapes aim at the edges of the tiles: TILE + 1 and 2 * TILE - 1 in
 * every dimension (the last tile of A, B or C is partial and must be padded
 * with zeros), K alone off a multiple of TILE, exact multiples, 1x1x1, K = 1,
 * primes, tall and wide matrices, alpha and beta variants, C full of NaN with
 * beta = 0 (BLAS does not read C then), and NaN inputs (which must reach the
 * output). TILE is whatever matmul_smem.cu was compiled with. The harness
 * (kernels/gemm_harness.h) adds guard zones around every matrix and compares
 * under Higham's bound for fp32 dot products:
 * c * K * 2^-24 * (|alpha||A||B| + |beta||C|)_ij with c = 3 (K roundings in
 * the dot product, whatever the order, plus the alpha scaling and the beta
 * update). A missing __syncthreads shows up here as wrong elements.
 */
#include "labcheck.h"
#include "gemm_harness.h"
#include "matmul_ladder.h"

static void shape(int M, int N, int K, float alpha, float beta, uint64_t salt) {
    gemm_check_shape(matmul_smem, "matmul_smem", M, N, K, alpha, beta, lab_seed + salt,
                     GEMM_INPUT_FP32);
}

static void test_one_by_one(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    shape(1, 1, 1, 1.0f, 0.0f, 1);
}

static void test_k_is_one(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    shape(37, 45, 1, 1.0f, 0.0f, 2); /* one partial K tile, mostly zero padding */
    shape(1, 1, 257, 1.0f, 0.0f, 3); /* one output, many K tiles */
}

static void test_primes(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    shape(17, 31, 13, 1.0f, 0.0f, 4);
    shape(127, 61, 97, 1.0f, 0.0f, 5);
}

static void test_tile_edges(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    int T = matmul_smem_tile();
    print_message("TILE = %d\n", T);
    shape(T + 1, T + 1, T + 1, 1.0f, 0.0f, 6);         /* one element into a second tile, everywhere */
    shape(2 * T - 1, T + 1, 2 * T - 1, 1.0f, 0.0f, 7); /* one short of two tiles */
    shape(2 * T, 2 * T, T + 1, 1.0f, 0.0f, 8);         /* only K is off a multiple */
    shape(T + 1, 2 * T - 1, 2 * T, 1.0f, 0.0f, 9);     /* only M and N are off */
    shape(T, 2 * T, 3 * T, 1.0f, 0.0f, 10);            /* exact multiples: no padding */
    shape(T - 1, T - 1, T - 1, 1.0f, 0.0f, 11);        /* smaller than one tile */
}

static void test_rectangular(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    shape(256, 7, 40, 1.0f, 0.0f, 12);  /* tall */
    shape(5, 256, 64, 1.0f, 0.0f, 13);  /* wide */
    shape(3, 2, 256, 1.0f, 0.0f, 14);   /* tiny output, long K */
}

static void test_alpha_beta(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    /* C starts random, so beta != 0 tests the update. Powers of two scale exactly. */
    shape(70, 50, 45, -0.5f, 2.0f, 15);
    shape(70, 50, 45, 2.0f, -1.0f, 16);
    shape(70, 50, 45, 0.0f, 1.0f, 17); /* alpha = 0: C comes back unchanged */
    shape(70, 50, 45, 0.25f, 0.0f, 18);
}

static void test_beta_zero_ignores_c(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    /* BLAS: with beta == 0, C is output only. It starts as NaN here; a kernel
     * that computes beta * C anyway gets 0 * NaN = NaN and fails. */
    const gemm_kernel_t k = {"matmul_smem", matmul_smem, NULL};
    gemm_check_case(&k, 41, 39, 20, 1.0f, 0.0f, lab_seed + 19, GEMM_INPUT_FP32, GEMM_FILL_NAN_C);
    gemm_check_case(&k, 41, 39, 20, -0.5f, 0.0f, lab_seed + 20, GEMM_INPUT_FP32, GEMM_FILL_NAN_C);
}

static void test_nan_propagates(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    /* One NaN in A and one in B: exactly their row and column of C are NaN.
     * Zero padding must not touch them: 0 * NaN only ever meets padding, and
     * padding is 0 * 0. */
    const gemm_kernel_t k = {"matmul_smem", matmul_smem, NULL};
    gemm_check_case(&k, 35, 37, 33, 1.0f, 0.0f, lab_seed + 21, GEMM_INPUT_FP32, GEMM_FILL_NAN_ROW_COL);
    gemm_check_case(&k, 16, 16, 16, 1.0f, 0.0f, lab_seed + 22, GEMM_INPUT_FP32, GEMM_FILL_NAN_ALL);
}

static void test_large(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
#ifdef COURSE_SIMT
    shape(256, 256, 256, 1.0f, 0.0f, 23);
#else
    shape(1024, 1024, 1024, 1.0f, 0.0f, 23); /* the smallest size the benchmark times */
#endif
}

int main(int argc, char **argv) {
    lab_check_init(argc, argv, "lab 02: matmul_smem against a double-precision reference");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_by_one),
        cmocka_unit_test(test_k_is_one),
        cmocka_unit_test(test_primes),
        cmocka_unit_test(test_tile_edges),
        cmocka_unit_test(test_rectangular),
        cmocka_unit_test(test_alpha_beta),
        cmocka_unit_test(test_beta_zero_ignores_c),
        cmocka_unit_test(test_nan_propagates),
        cmocka_unit_test(test_large),
    };
    return LAB_RUN_TESTS("lab02_matmul_smem", tests);
}
