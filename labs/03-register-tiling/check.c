/*
 * Lab 03 checks: the four register-tiled matmuls against a double-precision
 * reference.
 *
 * Every test runs once per kernel (1d, 2d, vectorized, warptile; each test's
 * name starts with its kernel). The shapes aim at the edges of each kernel's
 * tiles, whatever sizes its file was compiled with (the *_tiles() functions
 * report BM, BN, BK): one past and one short of a tile in every dimension,
 * K alone off a multiple of BK, exact multiples, smaller than one tile; plus
 * 1x1x1, K = 1, primes, tall and wide matrices, alpha and beta variants, C
 * full of NaN with beta = 0 (BLAS does not read C then), NaN inputs (which
 * must reach the output), and K or N not a multiple of 4 or the matrices
 * starting off a 16-byte boundary (rows of A or B are then not 16-byte
 * aligned, so float4 loads must fall back to scalars). The
 * harness (kernels/gemm_harness.h) puts NaN guard zones around A and B and a
 * sentinel around C, so reading or writing past an edge fails, and compares
 * under Higham's bound for fp32 dot products:
 * c * K * 2^-24 * (|alpha||A||B| + |beta||C|)_ij with c = 3 (K roundings in
 * the dot product, whatever the order, plus the alpha scaling and the beta
 * update). A missing __syncthreads shows up as wrong elements: the emulator
 * runs the threads of a block concurrently.
 * Every dimension stays within 256 with the default tiles, so the emulator
 * runs all 44 tests in seconds.
 */
#include "labcheck.h"
#include "gemm_harness.h"
#include "matmul_ladder.h"

/* A kernel under test and the tile sizes its file was compiled with. */
typedef struct {
    gemm_kernel_t k;
    void (*tiles)(int *bm, int *bn, int *bk);
} lab03_kernel_t;

static const lab03_kernel_t K1D = {{"matmul_blocktile_1d", matmul_blocktile_1d, NULL},
                                   matmul_blocktile_1d_tiles};
static const lab03_kernel_t K2D = {{"matmul_blocktile_2d", matmul_blocktile_2d, NULL},
                                   matmul_blocktile_2d_tiles};
static const lab03_kernel_t KVEC = {{"matmul_vectorized", matmul_vectorized, NULL},
                                    matmul_vectorized_tiles};
static const lab03_kernel_t KWARP = {{"matmul_warptile", matmul_warptile, NULL},
                                     matmul_warptile_tiles};

/* Each test gets its kernel as cmocka's state. */
static void shape(void **state, int M, int N, int K, float alpha, float beta, uint64_t salt) {
    const lab03_kernel_t *t = *state;
    gemm_check_case(&t->k, M, N, K, alpha, beta, lab_seed + salt, GEMM_INPUT_FP32,
                    GEMM_FILL_RANDOM);
}

static void fill(void **state, int M, int N, int K, float alpha, uint64_t salt, gemm_fill_t f) {
    const lab03_kernel_t *t = *state;
    gemm_check_case(&t->k, M, N, K, alpha, 0.0f, lab_seed + salt, GEMM_INPUT_FP32, f);
}

static void test_one_by_one(void **state) {
    LAB_REQUIRE_DEVICE();
    shape(state, 1, 1, 1, 1.0f, 0.0f, 1);
}

static void test_k_is_one(void **state) {
    LAB_REQUIRE_DEVICE();
    shape(state, 37, 45, 1, 1.0f, 0.0f, 2); /* one partial K tile, mostly zero padding */
    shape(state, 1, 1, 257, 1.0f, 0.0f, 3); /* one output, many K tiles */
}

static void test_primes(void **state) {
    LAB_REQUIRE_DEVICE();
    shape(state, 17, 31, 13, 1.0f, 0.0f, 4);
    shape(state, 127, 61, 97, 1.0f, 0.0f, 5);
    shape(state, 251, 241, 7, 1.0f, 0.0f, 6); /* several block tiles, one short K tile */
}

static void test_tile_edges(void **state) {
    LAB_REQUIRE_DEVICE();
    const lab03_kernel_t *t = *state;
    int bm, bn, bk;
    t->tiles(&bm, &bn, &bk);
    print_message("%s: BM = %d, BN = %d, BK = %d\n", t->k.name, bm, bn, bk);
    shape(state, bm + 1, bn + 1, bk + 1, 1.0f, 0.0f, 7);             /* one element into a second tile, everywhere */
    shape(state, 2 * bm - 1, bn + 1, 2 * bk - 1, 1.0f, 0.0f, 8);     /* one short of two tiles */
    shape(state, 2 * bm, 2 * bn, bk + 1, 1.0f, 0.0f, 9);             /* only K is off a multiple */
    shape(state, bm + 1, 2 * bn - 1, 2 * bk, 1.0f, 0.0f, 10);        /* only M and N are off */
    shape(state, bm, 2 * bn, 3 * bk, 1.0f, 0.0f, 11);                /* exact multiples: no padding */
    shape(state, bm - 1, bn - 1, bk > 1 ? bk - 1 : 1, 1.0f, 0.0f, 12); /* smaller than one tile */
    /* Partial tiles that keep every row 16-byte aligned (N and K multiples
     * of 4): the float4 paths must stop at the edge tile, not run past it. */
    shape(state, bm + 4, bn + 4, 2 * bk + 4, 1.0f, 0.0f, 13);
    /* The same with whole tiles in M: the last row of A is then loaded by a
     * block whose float4 path runs, so one that ignores the K edge reads past
     * the end of A into its NaN guard (with M = bm + 4 the rows it over-reads
     * only meet B's zero padding). */
    shape(state, 2 * bm, bn + 4, 2 * bk + 4, 1.0f, 0.0f, 14);
    /* And with whole tiles in K: B's last row is then loaded by the float4
     * path, so one that ignores the N edge reads past the end of B. Those
     * columns are never stored, so the result cannot show it: the emulator
     * stops the load in B's guard zone, and SANITIZE=address (which finds
     * the guard zones poisoned) reports it too; a GPU does neither. */
    shape(state, bm + 4, bn + 4, 2 * bk, 1.0f, 0.0f, 15);
}

static void test_unaligned_rows(void **state) {
    LAB_REQUIRE_DEVICE();
    const lab03_kernel_t *t = *state;
    int bm, bn, bk;
    t->tiles(&bm, &bn, &bk);
    /* Rows of A are 16-byte aligned only when K % 4 == 0, rows of B and C
     * only when N % 4 == 0. Each shape breaks one of them (or both) while
     * the first block still has whole tiles of A, B and C, where a float4
     * fast path would run: without its scalar fallback it reads misaligned
     * rows (a fault on a GPU, wrong elements once past a row's end).
     * Tile sizes are multiples of 4, so only the added term sets the residue. */
    shape(state, bm + 3, bn + 4, 4 * bk + 1, 1.0f, 0.0f, 14); /* K % 4 == 1: A unaligned */
    shape(state, bm + 3, bn + 2, 2 * bk, 1.0f, 0.0f, 15);     /* N % 4 == 2: B and C unaligned */
    shape(state, bm + 1, bn + 3, 2 * bk + 2, 1.0f, 0.5f, 16); /* both, with beta */
    shape(state, 70, 61, 13, 1.0f, 0.0f, 17);                 /* both, smaller than one tile */
    /* Row lengths that are multiples of 4, but A, B and C each start one
     * float past a 16-byte boundary, as a view into a larger buffer does:
     * every row is then misaligned, so the kernel must look at the base
     * pointers as well as K and N before it takes the float4 path. */
    gemm_check_case(&t->k, bm + 4, bn + 4, 2 * bk + 4, 1.0f, 0.5f, lab_seed + 31, GEMM_INPUT_FP32,
                    GEMM_FILL_MISALIGNED);
}

static void test_rectangular(void **state) {
    LAB_REQUIRE_DEVICE();
    shape(state, 256, 7, 40, 1.0f, 0.0f, 18); /* tall: one partial block column */
    shape(state, 5, 256, 64, 1.0f, 0.0f, 19); /* wide: one partial block row */
    shape(state, 3, 2, 256, 1.0f, 0.0f, 20);  /* tiny output, long K */
}

static void test_alpha_beta(void **state) {
    LAB_REQUIRE_DEVICE();
    /* C starts random, so beta != 0 tests the update. Powers of two scale
     * exactly. 200 x 136 x 48: full and partial tiles, N and K multiples of
     * 4, so the float4 store path with beta is covered too. */
    shape(state, 200, 136, 48, -0.5f, 2.0f, 21);
    shape(state, 70, 50, 45, 2.0f, -1.0f, 22);
    shape(state, 200, 136, 48, 0.0f, 1.0f, 23); /* alpha = 0: C comes back unchanged */
    shape(state, 70, 50, 45, 0.25f, 0.0f, 24);
}

static void test_beta_zero_ignores_c(void **state) {
    LAB_REQUIRE_DEVICE();
    /* BLAS: with beta == 0, C is output only. It starts as NaN here; a
     * kernel that computes beta * C anyway gets 0 * NaN = NaN and fails.
     * Once with scalar stores (N = 39), once with float4 stores (N = 256). */
    fill(state, 41, 39, 20, 1.0f, 25, GEMM_FILL_NAN_C);
    fill(state, 160, 256, 32, -0.5f, 26, GEMM_FILL_NAN_C);
}

static void test_nan_propagates(void **state) {
    LAB_REQUIRE_DEVICE();
    /* One NaN in A and one in B: exactly their row and column of C are NaN.
     * Zero padding must not spread them: a padded 0 only ever multiplies a
     * NaN in rows or columns that are never stored. */
    fill(state, 35, 37, 33, 1.0f, 27, GEMM_FILL_NAN_ROW_COL);
    fill(state, 136, 132, 36, 1.0f, 28, GEMM_FILL_NAN_ROW_COL); /* float4 paths */
    fill(state, 16, 16, 16, 1.0f, 29, GEMM_FILL_NAN_ALL);
}

static void test_large(void **state) {
    LAB_REQUIRE_DEVICE();
#ifdef COURSE_SIMT
    shape(state, 256, 256, 256, 1.0f, 0.0f, 30);
#else
    shape(state, 1024, 1024, 1024, 1.0f, 0.0f, 30); /* the smallest size the benchmark times */
#endif
}

/* How the kernel's warps meet global and shared memory, counted on the
 * emulator (it skips on a GPU, where make bench LAB=03 times it). The shape
 * is whole block tiles of this kernel's compiled sizes, every row starting
 * on a 128-byte boundary and K and N multiples of 4, so every tile of A, B
 * and C takes the fast path.
 * All four kernels: the tile loads are coalesced, the threads of a warp
 * reading neighbouring floats of a row (the solutions: 1.00 times the
 * fewest sectors; a warp reading down a column of A costs 4 to 8). The
 * stores of C and the bank conflicts are left alone: the 1-D and 2-D
 * kernels' scattered stores and conflicting reads of B are part of what
 * steps 3 and 4 improve on, and a tuned warp tile may trade a 2-way
 * conflict for speed.
 * The vectorized and warp-tiled kernels: their loads of A and B, their
 * stores of C and their reads of As and Bs in the inner loop are float4s,
 * 16 bytes a thread (tasks 10-12 and 15-17). A kernel that never takes its
 * float4 paths passes every other check with 4 bytes a thread; the bound,
 * 12, leaves room for a few scalar accesses. */
static void test_memory_pattern(void **state) {
    LAB_REQUIRE_DEVICE();
    const lab03_kernel_t *t = *state;
    int bm, bn, bk;
    t->tiles(&bm, &bn, &bk);
    const int M = 2 * bm, N = 2 * ((bn + 31) / 32 * 32), K = 2 * ((bk + 31) / 32 * 32);
    gemm_pattern_t p;
    gemm_trace_pattern(&t->k, M, N, K, "03", &p); /* skips on a GPU */
    if (p.global_load > 1.5)
        fail_msg("%s: a warp's loads of A and B touch %.1f times the sectors their bytes need (1.0 when "
                 "coalesced): give consecutive threads consecutive floats (or float4s) of a row of each tile, "
                 "as in the load of step 1, and transpose in shared memory, not in the global read. "
                 "SIMT_MEMTRACE=1 make check LAB=03 TARGET=emu ONLY='%s' names the lines", t->k.name,
                 p.global_load, lab_test_name ? lab_test_name : "*test_memory_pattern");
    if (t == &K1D || t == &K2D) return;
    if (p.global_load_width < 12.0 || p.global_store_width < 12.0)
        fail_msg("%s: on whole, aligned tiles a thread moves %.1f bytes per load of A or B and %.1f per "
                 "store of C; the float4 paths move 16: with K and N multiples of 4 and 16-byte aligned "
                 "bases, vec_a, vec_b and vec_c must be true and the tiles that lie inside the matrices must "
                 "use float4 loads and stores (tasks %s)", t->k.name, p.global_load_width,
                 p.global_store_width, t == &KVEC ? "10, 12 and 13" : "15, 17 and 18");
    if (p.shared_load_width < 12.0)
        fail_msg("%s: its inner loop reads As and Bs %.1f bytes at a time; read the TM values of A (As "
                 "stored transposed) and the TN values of B as float4s, 16 bytes a thread (task %s)",
                 t->k.name, p.shared_load_width, t == &KVEC ? "11" : "16");
}

/* The same tests for each kernel, named after it so a failure says which. */
#define T(prefix, f, kernel) {prefix #f, f, NULL, NULL, (void *)&kernel}
#define LAB03_TESTS(prefix, kernel)                                                           \
    T(prefix, test_one_by_one, kernel), T(prefix, test_k_is_one, kernel),                     \
    T(prefix, test_primes, kernel), T(prefix, test_tile_edges, kernel),                       \
    T(prefix, test_unaligned_rows, kernel), T(prefix, test_rectangular, kernel),              \
    T(prefix, test_alpha_beta, kernel), T(prefix, test_beta_zero_ignores_c, kernel),          \
    T(prefix, test_nan_propagates, kernel), T(prefix, test_large, kernel),                    \
    T(prefix, test_memory_pattern, kernel)

int main(int argc, char **argv) {
    lab_check_init(argc, argv, "lab 03: the register-tiled matmuls against a double-precision reference");
    const struct CMUnitTest tests[] = {
        LAB03_TESTS("1d: ", K1D),
        LAB03_TESTS("2d: ", K2D),
        LAB03_TESTS("vectorized: ", KVEC),
        LAB03_TESTS("warptile: ", KWARP),
    };
    return LAB_RUN_TESTS("lab03_register_tiling", tests);
}
