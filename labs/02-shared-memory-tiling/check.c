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

/* How the kernel's warps meet memory, counted on the emulator (it skips on
 * a GPU, where make bench LAB=02 times it). Two costs the handout
 * explains: global memory is fetched in 32-byte sectors, so a warp's tile
 * load is cheapest when its 32 threads read neighbouring floats of one row
 * (threadIdx.x along the row: 4 sectors for 128 bytes); shared memory is 32
 * banks, so a warp's access is cheapest when its threads hit 32 different
 * banks or one word (1 pass). The solution's loads, stores and shared
 * accesses all cost exactly the fewest (1.00). The shape is whole tiles,
 * with rows that start on 128-byte boundaries, so a well-made kernel
 * scores 1.00 for TILE 8, 16 or 32; the bound 1.5 leaves room for a tile
 * that does not divide 32. What it catches: the row of C taken from
 * threadIdx.x (global loads and stores a sector per thread, 8 times the
 * fewest), or an A tile stored transposed without padding, As[tx][ty]
 * (32 threads 32 words apart: one bank, 32 passes). */
static void test_memory_pattern(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const gemm_kernel_t k = {"matmul_smem", matmul_smem, NULL};
    const int T = matmul_smem_tile(), up = (T + 31) / 32 * 32;
    gemm_pattern_t p;
    gemm_trace_pattern(&k, 2 * T, (3 * T + 31) / 32 * 32, 2 * up, "02", &p); /* skips on a GPU */
    /* Both costs in one message when both are off: one fix often mends both. */
    char msg[1024] = "";
    if (p.global_load > 1.5 || p.global_store > 1.5)
        snprintf(msg, sizeof msg,
                 "matmul_smem: a warp's global loads touch %.1f times the sectors their bytes need, its stores "
                 "%.1f times (1.0 when coalesced): let threadIdx.x run along the rows of A, B and C (column "
                 "k0 + threadIdx.x of A, column col of B and C), so the threads of a warp read and write "
                 "neighbouring floats. ", p.global_load, p.global_store);
    if (p.shared_load > 1.5 || p.shared_store > 1.5)
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg),
                 "%s shared-memory loads take %.1f times the bank passes they need, its stores "
                 "%.1f times (1.0 without bank conflicts): a warp is one row ty of the block, so index the "
                 "tiles as As[ty][k] and Bs[k][tx] (broadcast and consecutive words), store them as "
                 "As[ty][tx] and Bs[ty][tx], or pad a tile you store transposed to TILE + 1 columns (see Bank "
                 "conflicts in the handout). ", msg[0] ? "Its" : "matmul_smem: its", p.shared_load, p.shared_store);
    if (msg[0])
        fail_msg("%sSIMT_MEMTRACE=1 make check LAB=02 TARGET=emu ONLY=test_memory_pattern names the lines", msg);
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
        cmocka_unit_test(test_memory_pattern),
    };
    return LAB_RUN_TESTS("lab02_matmul_smem", tests);
}
