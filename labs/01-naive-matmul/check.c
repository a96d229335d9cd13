/*
 * Lab 01 checks: both naive matmuls against a double-precision reference.
 *
 * Every test runs twice, once per kernel (matmul_naive_uncoalesced, then
 * matmul_naive), on the shapes that catch indexing mistakes: 1x1x1, K = 1,
 * a single output with a long K, primes, non-multiples of the 32 x 32 block,
 * tall and wide matrices, alpha and beta variants, C full of NaN with
 * beta = 0 (BLAS does not read C then, so the NaN must not appear), and NaN
 * inputs (which must appear). The harness (kernels/gemm_harness.h) adds guard
 * zones around every matrix and compares under Higham's error bound for fp32
 * dot products: c * K * 2^-24 * (|alpha||A||B| + |beta||C|)_ij, c = 3 (the K
 * roundings of the dot product plus the alpha scaling and the beta update).
 * Shapes stay within 256 per dimension so the emulator runs them in seconds.
 */
#include "labcheck.h"
#include "gemm_harness.h"
#include "gpu.h"
#include "matmul_ladder.h"

static const gemm_kernel_t UNCOALESCED = {"matmul_naive_uncoalesced", matmul_naive_uncoalesced, NULL};
static const gemm_kernel_t COALESCED = {"matmul_naive", matmul_naive, NULL};

/* Each test gets its kernel as cmocka's state. */
static void shape(void **state, int M, int N, int K, float alpha, float beta, uint64_t salt) {
    const gemm_kernel_t *k = *state;
    gemm_check_case(k, M, N, K, alpha, beta, lab_seed + salt, GEMM_INPUT_FP32, GEMM_FILL_RANDOM);
}

static void test_one_by_one(void **state) {
    LAB_REQUIRE_DEVICE();
    shape(state, 1, 1, 1, 1.0f, 0.0f, 1);
}

static void test_k_is_one(void **state) {
    LAB_REQUIRE_DEVICE();
    shape(state, 37, 45, 1, 1.0f, 0.0f, 2); /* an outer product: the loop runs once */
    shape(state, 1, 1, 257, 1.0f, 0.0f, 3); /* one output, a long dot product */
}

static void test_primes(void **state) {
    LAB_REQUIRE_DEVICE();
    shape(state, 17, 31, 13, 1.0f, 0.0f, 4);
    shape(state, 127, 61, 97, 1.0f, 0.0f, 5);
}

static void test_partial_blocks(void **state) {
    LAB_REQUIRE_DEVICE();
    /* 32 x 32 thread blocks: one past and one short of a multiple in every
     * dimension, so the last blocks are partly outside C. */
    shape(state, 33, 31, 65, 1.0f, 0.0f, 6);
    shape(state, 63, 65, 31, 1.0f, 0.0f, 7);
    shape(state, 64, 96, 32, 1.0f, 0.0f, 8); /* exact multiples: no edge at all */
}

static void test_rectangular(void **state) {
    LAB_REQUIRE_DEVICE();
    shape(state, 256, 7, 40, 1.0f, 0.0f, 9);  /* tall: one partial block column */
    shape(state, 5, 256, 64, 1.0f, 0.0f, 10); /* wide: one partial block row */
    shape(state, 3, 2, 256, 1.0f, 0.0f, 11);  /* tiny output, long K */
}

static void test_alpha_beta(void **state) {
    LAB_REQUIRE_DEVICE();
    /* C starts with random values, so beta != 0 tests that C is read and
     * scaled. Powers of two scale exactly, keeping the bound tight. */
    shape(state, 70, 50, 45, -0.5f, 2.0f, 12);
    shape(state, 70, 50, 45, 2.0f, -1.0f, 13);
    shape(state, 70, 50, 45, 0.0f, 1.0f, 14); /* alpha = 0: C must come back unchanged */
    shape(state, 70, 50, 45, 0.25f, 0.0f, 15);
}

static void test_beta_zero_ignores_c(void **state) {
    LAB_REQUIRE_DEVICE();
    /* BLAS: when beta == 0, C is output only. It starts as NaN here; a kernel
     * that computes beta * C anyway gets 0 * NaN = NaN and fails. */
    const gemm_kernel_t *k = *state;
    gemm_check_case(k, 41, 39, 20, 1.0f, 0.0f, lab_seed + 16, GEMM_INPUT_FP32, GEMM_FILL_NAN_C);
    gemm_check_case(k, 41, 39, 20, -0.5f, 0.0f, lab_seed + 17, GEMM_INPUT_FP32, GEMM_FILL_NAN_C);
}

static void test_nan_propagates(void **state) {
    LAB_REQUIRE_DEVICE();
    /* One NaN in A and one in B: exactly their row and column of C are NaN. */
    const gemm_kernel_t *k = *state;
    gemm_check_case(k, 35, 37, 33, 1.0f, 0.0f, lab_seed + 18, GEMM_INPUT_FP32, GEMM_FILL_NAN_ROW_COL);
    gemm_check_case(k, 16, 16, 16, 1.0f, 0.0f, lab_seed + 19, GEMM_INPUT_FP32, GEMM_FILL_NAN_ALL);
}

static void test_large(void **state) {
    LAB_REQUIRE_DEVICE();
#ifdef COURSE_SIMT
    shape(state, 256, 256, 256, 1.0f, 0.0f, 20); /* about a second on the emulator */
#else
    shape(state, 1024, 1024, 1024, 1.0f, 0.0f, 20); /* the smallest size the benchmark times */
#endif
}

/* How each kernel's warps meet global memory: the point of the lab. A GPU
 * serves a warp's load in 32-byte sectors, so 32 threads reading 32
 * neighbouring floats need 4 sectors and 32 threads reading down a column
 * need 32. Only the emulator can count this here (simt_memtrace.h, which
 * groups the threads of each warp into requests as the hardware does); on a
 * GPU, make bench LAB=01 times the difference and the grader's speed tests
 * score it, so the test skips there.
 * 64 x 96 x 32: whole 32 x 32 blocks, and every row of A, B and C starts on
 * a 128-byte boundary, so the expected counts are exact: with the column
 * from threadIdx.x, a warp loads one float of A (1 sector, all its threads
 * share it) and 32 of B (4), and stores 32 neighbouring floats of C (4):
 * as few sectors as the bytes need, a ratio of 1. With the row from
 * threadIdx.x, the loads take 32 + 1 sectors where 4 + 1 would do (6.6
 * times) and the stores 32 where 4 would (8 times). */
static void test_memory_pattern(void **state) {
    LAB_REQUIRE_DEVICE();
    const gemm_kernel_t *k = *state;
    gemm_pattern_t p;
    gemm_trace_pattern(k, 64, 96, 32, "01", &p); /* skips on a GPU */
    if (k == &COALESCED) {
        /* Stores: whatever the block's shape, a warp whose threadIdx.x
         * walks along a row of C writes whole sectors (1.0); with the row
         * from x, blockDim.x / 4: at least 2 for a block 8 or more wide.
         * Loads: a narrower block reads A from several rows, 1.33 times for
         * 16 x 16 and 2.5 for 8 x 8; the swapped mapping, 4.5 and more. */
        if (p.global_store > 1.5 || p.global_load > 3.0)
            fail_msg("matmul_naive: a warp's loads touch %.1f times the sectors their bytes need, its stores "
                     "%.1f times (1.0 when coalesced): take the column of C from the x coordinates (blockIdx.x, "
                     "blockDim.x, threadIdx.x) and the row from y, so the 32 threads of a warp read neighbouring "
                     "floats of B and write neighbouring floats of C, and swap the grid to match (grid.x over "
                     "the N columns, grid.y over the M rows). SIMT_MEMTRACE=1 make check LAB=01 TARGET=emu "
                     "prints each launch's counts", p.global_load, p.global_store);
    } else {
        /* Task 1 asks for the row from x, the mapping whose cost task 4
         * measures; a kernel that already coalesces (1.0) leaves the
         * comparison with nothing to show. The row from x gives 8 with the
         * task's 32 x 32 block, 4 with 16 x 16, 2 with 8 x 8. */
        if (p.global_store <= 1.5)
            fail_msg("matmul_naive_uncoalesced: its stores touch %.1f times the sectors their bytes need, so "
                     "they are coalesced; task 1 asks for the row of C from the x coordinates and the "
                     "column from y (8 times on this shape), the slow mapping whose cost the lab measures",
                     p.global_store);
    }
}

/* The same tests for each kernel, named after it so a failure says which. */
#define T(prefix, f, kernel) {prefix #f, f, NULL, NULL, (void *)&kernel}
#define LAB01_TESTS(prefix, kernel)                                                           \
    T(prefix, test_one_by_one, kernel), T(prefix, test_k_is_one, kernel),                     \
    T(prefix, test_primes, kernel), T(prefix, test_partial_blocks, kernel),                   \
    T(prefix, test_rectangular, kernel), T(prefix, test_alpha_beta, kernel),                  \
    T(prefix, test_beta_zero_ignores_c, kernel), T(prefix, test_nan_propagates, kernel),      \
    T(prefix, test_large, kernel), T(prefix, test_memory_pattern, kernel)

int main(int argc, char **argv) {
    lab_check_init(argc, argv, "lab 01: both naive matmuls against a double-precision reference");
    const struct CMUnitTest tests[] = {
        LAB01_TESTS("uncoalesced: ", UNCOALESCED),
        LAB01_TESTS("coalesced: ", COALESCED),
    };
    return LAB_RUN_TESTS("lab01_matmul_naive", tests);
}
