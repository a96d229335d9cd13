/*
 * Lab 04 checks: the three tensor-core steps against a double-precision
 * reference, in one cmocka group ("wmma: ...", "mma: ...", "wgmma: ...").
 *
 * Inputs are bf16: the harness (kernels/gemm_harness.h) rounds A and B to
 * bf16 before both the kernel and the reference see them, so only the
 * kernel's own arithmetic is measured. A product of two bf16 values (8-bit
 * significands) is exact in fp32 (24 bits), so the error is that of a
 * length-K fp32 sum, K u with u = 2^-24 (Higham, Accuracy and Stability of
 * Numerical Algorithms, section 3.1), doubled because tensor cores may
 * truncate instead of round while adding (Fasi et al., PeerJ CS 2021), plus
 * the alpha scaling and the beta update: the harness's bound
 * 6 K u (|alpha||A||B| + |beta||C|) per element.
 *
 * Shapes come from the tile sizes each file was compiled with (they are
 * asked for at run time): one element past a tile, one short of two tiles,
 * exact multiples, smaller than a tile, K alone off a multiple; 1x1x1,
 * K = 1, primes, tall and wide; K and N multiples of 8 (16-byte copies with
 * zero-filled edge tiles) and not (the element-by-element fallback), and
 * matrices that start off a 16-byte boundary; alpha
 * and beta variants; C full of NaN with beta = 0; NaN inputs. Before each
 * case the kernel runs once on all-NaN inputs so that leftover shared memory
 * is NaN, which turns a forgotten zero-fill into a visible failure. Under
 * the emulator M and N stay <= 256 and K <= 1024, except in the many-tiles
 * case (33 x 4 tiles, K = 40), which tests the block-to-tile map of a
 * rasterised grid. The wgmma tests need a
 * Hopper GPU and an sm_90a build, or the emulator (which runs TMA, mbarriers
 * and wgmma); anywhere else (an sm_80 GPU, say) they are skipped, visibly.
 */
#include "labcheck.h"
#include "gemm_harness.h"
#include "matmul_ladder.h"

/* One step of the lab: its function, its tile sizes, and (Hopper only) a probe. */
typedef struct {
    const char *name;
    gemm_bf16_fn fn;
    void (*tile)(int *bm, int *bn, int *bk);
    int (*supported)(void);
} step_t;

static const step_t step_wmma = {"matmul_wmma", matmul_wmma, matmul_wmma_tiles, NULL};
static const step_t step_mma = {"matmul_mma", matmul_mma, matmul_mma_tiles, NULL};
static const step_t step_wgmma = {"matmul_wgmma", matmul_wgmma, matmul_wgmma_tiles,
                                  matmul_wgmma_supported};

/* Under the emulator M and N stay <= 256 (the whole check stays fast), and
 * K <= 1024: long enough that every step's pipeline reuses each of its
 * stages (wgmma: 4 stages of 64). On a GPU nothing is capped. */
static int cap(int n, int limit) {
#ifdef COURSE_SIMT
    return n < limit ? n : limit;
#else
    (void)limit;
    return n;
#endif
}

/* Leave NaN behind in shared memory: run the kernel once on inputs that are
 * all NaN (bf16 0xffff). A GPU does not clear shared memory between
 * launches, so a later launch that forgets to zero-fill an edge tile
 * multiplies the other side's zero padding by a leftover NaN and fails,
 * instead of passing by luck on leftover finite numbers (0 * x = 0). (The
 * emulator starts every block from a NaN fill anyway.) */
static void poison_shared_memory(const step_t *s) {
    const int n = 256;
    char err[160];
    if (strcmp(gpu_sticky_error(err, sizeof err), "no error") != 0)
        fail_msg("%s: not run, because the device has reported %s since an earlier test; a "
                 "fault in a kernel is sticky, so fix the first failure", s->name, err);
    uint16_t *A = gpu_malloc((size_t)n * n * sizeof(uint16_t));
    uint16_t *B = gpu_malloc((size_t)n * n * sizeof(uint16_t));
    float *C = gpu_malloc((size_t)n * n * sizeof(float));
    gpu_memset(A, 0xff, (size_t)n * n * sizeof(uint16_t));
    gpu_memset(B, 0xff, (size_t)n * n * sizeof(uint16_t));
    int st = s->fn(n, n, n, 1.0f, A, B, 0.0f, C);
    int run = st == LAB_OK ? gpu_sync_status(err, sizeof err) : GPU_DONE;
    gpu_free(A); /* quiet after a fault */
    gpu_free(B);
    gpu_free(C);
    if (run != GPU_DONE)
        fail_msg("%s, M=N=K=%d on all-NaN inputs: %s %s", s->name, n,
                 run == GPU_FAULTED ? "faulted while running: the device reports"
                                    : "returned LAB_OK, but its launch was refused:", err);
    if (st != LAB_OK && st != LAB_NOT_IMPLEMENTED) /* say which run: not the case this test names */
        fail_msg("%s, M=N=K=%d on all-NaN inputs (the run before each case that leaves NaN in shared "
                 "memory) returned '%s'; the device reports %s (the emulator's line above, if any, says why)",
                 s->name, n, lab_status_name(st), gpu_sticky_error(err, sizeof err));
    LAB_REQUIRE_OK(st, s->name);
}

/* Start of every test: somewhere to run, and Hopper for step C. */
static const step_t *begin(void **state) {
    const step_t *s = (const step_t *)*state;
    LAB_REQUIRE_DEVICE();
    if (s->supported) LAB_REQUIRE_HOPPER(s->supported(), s->name);
    return s;
}

/* Every case starts from NaN in shared memory (see poison_shared_memory). */
static void shape(const step_t *s, int M, int N, int K, float alpha, float beta, uint64_t salt) {
    poison_shared_memory(s);
    gemm_check_shape_bf16(s->fn, s->name, cap(M, 256), cap(N, 256), cap(K, 1024), alpha, beta, lab_seed + salt);
}

static void run_case(const step_t *s, int M, int N, int K, float alpha, gemm_fill_t fill,
                     uint64_t salt) {
    const gemm_kernel_t k = {s->name, NULL, s->fn};
    poison_shared_memory(s);
    gemm_check_case(&k, M, N, K, alpha, 0.0f, lab_seed + salt, GEMM_INPUT_BF16, fill);
}

static void test_tiny(void **state) {
    const step_t *s = begin(state);
    shape(s, 1, 1, 1, 1.0f, 0.0f, 1);
    shape(s, 37, 45, 1, 1.0f, 0.0f, 2); /* K = 1: one partial K tile, mostly zero padding */
    shape(s, 1, 1, 257, 1.0f, 0.0f, 3); /* one output, many K tiles */
}

static void test_primes(void **state) {
    const step_t *s = begin(state);
    shape(s, 17, 31, 13, 1.0f, 0.0f, 4);
    shape(s, 127, 61, 97, 1.0f, 0.0f, 5);
}

static void test_tile_edges(void **state) {
    const step_t *s = begin(state);
    int bm, bn, bk;
    s->tile(&bm, &bn, &bk);
    print_message("%s tiles: BM = %d, BN = %d, BK = %d\n", s->name, bm, bn, bk);
    shape(s, bm + 1, bn + 1, bk + 1, 1.0f, 0.0f, 6);             /* one element into a second tile */
    shape(s, 2 * bm - 1, bn + 1, 2 * bk - 1, 1.0f, 0.0f, 7);     /* one short of two tiles */
    shape(s, 2 * bm, 2 * bn, bk + 1, 1.0f, 0.0f, 8);             /* only K off a multiple */
    shape(s, bm + 1, 2 * bn - 1, 2 * bk, 1.0f, 0.0f, 9);         /* only M and N off */
    shape(s, bm, bn, 3 * bk, 1.0f, 0.0f, 10);                    /* exact multiples: no padding */
    shape(s, bm - 1, bn - 1, bk - 1, 1.0f, 0.0f, 11);            /* smaller than one tile */
}

static void test_alignment(void **state) {
    const step_t *s = begin(state);
    int bm, bn, bk;
    s->tile(&bm, &bn, &bk);
    /* K and N multiples of 8 bf16 (16 bytes): 16-byte copies, whole chunks
     * past the edges zero-filled; K spans more k-tiles than any pipeline has
     * stages, so every stage is reused. */
    shape(s, bm + 8, bn + 8, 5 * bk + 8, 1.0f, 0.0f, 12);
    /* The same with the K edge in the first round of stages, where shared
     * memory still holds the NaN poison_shared_memory() left. */
    shape(s, bm + 8, bn + 8, bk + 8, 1.0f, 0.0f, 31);
    shape(s, 2 * bm - 8, 24, 2 * bk + 8, 1.0f, 0.0f, 32);
    /* K and N not multiples of 8: rows of A and B start off 16-byte
     * boundaries, so the kernel must not use 16-byte copies (or must repack). */
    shape(s, bm + 3, bn + 5, 5 * bk + 3, 1.0f, 0.0f, 13);
    shape(s, 40, 24, 5 * bk + 1, 1.0f, 0.0f, 14); /* N a multiple of 8, K not */
    shape(s, 40, 21, 5 * bk, 1.0f, 0.0f, 15);     /* K a multiple of 8, N not */
    /* K and N multiples of 8, but A, B and C each start one element past a
     * 16-byte boundary, as a view into a larger buffer does: every row is
     * then misaligned, so the kernel must look at the base pointers as well
     * as K and N before it uses 16-byte copies (or TMA). */
    const gemm_kernel_t k = {s->name, NULL, s->fn};
    poison_shared_memory(s);
    gemm_check_case(&k, cap(bm + 8, 256), cap(bn + 8, 256), cap(2 * bk + 8, 1024), 1.0f, 0.5f,
                    lab_seed + 33, GEMM_INPUT_BF16, GEMM_FILL_MISALIGNED);
}

static void test_rectangular(void **state) {
    const step_t *s = begin(state);
    shape(s, 256, 7, 40, 1.0f, 0.0f, 16);  /* tall */
    shape(s, 5, 256, 64, 1.0f, 0.0f, 17);  /* wide */
    shape(s, 3, 2, 256, 1.0f, 0.0f, 18);   /* tiny output, long K */
}

static void test_alpha_beta(void **state) {
    const step_t *s = begin(state);
    /* C starts random, so beta != 0 tests the update. Powers of two scale exactly. */
    shape(s, 70, 50, 45, -0.5f, 2.0f, 19);
    shape(s, 70, 50, 45, 2.0f, -1.0f, 20);
    shape(s, 70, 50, 45, 0.0f, 1.0f, 21); /* alpha = 0: C comes back unchanged */
    shape(s, 72, 56, 48, 0.25f, 0.0f, 22);
    shape(s, 72, 56, 48, -1.0f, 0.5f, 23);
}

static void test_beta_zero_ignores_c(void **state) {
    const step_t *s = begin(state);
    /* BLAS: with beta == 0, C is output only. It starts as NaN here; a kernel
     * that computes beta * C anyway gets 0 * NaN = NaN and fails. */
    run_case(s, 41, 39, 20, 1.0f, GEMM_FILL_NAN_C, 24);
    run_case(s, 64, 64, 64, -0.5f, GEMM_FILL_NAN_C, 25);
}

static void test_nan_propagates(void **state) {
    const step_t *s = begin(state);
    /* One NaN in A and one in B: exactly their row and column of C are NaN.
     * Zero padding meets only padding, so it never turns a NaN into a number
     * or a number into NaN. */
    run_case(s, 35, 37, 33, 1.0f, GEMM_FILL_NAN_ROW_COL, 26);
    run_case(s, 40, 48, 64, 1.0f, GEMM_FILL_NAN_ROW_COL, 27);
    run_case(s, 16, 16, 16, 1.0f, GEMM_FILL_NAN_ALL, 28);
}

static void test_large(void **state) {
    const step_t *s = begin(state);
#ifdef COURSE_SIMT
    shape(s, 256, 256, 256, 1.0f, 0.0f, 29);
    shape(s, 136, 200, 1000, 1.0f, 0.0f, 30); /* long K: every stage refilled several times */
#else
    shape(s, 1024, 1024, 1024, 1.0f, 0.0f, 29);
    shape(s, 2048, 1024, 4096, 1.0f, 0.0f, 30); /* long K: many pipeline rounds */
#endif
}

/* Many tiles both ways: more rows of tiles (33) than any sensible
 * rasterisation group holds, so the last group is partial, and 4 columns of
 * tiles; a block-to-tile map that skips or repeats a tile leaves part of C
 * wrong (beta = -1 on a random C shows an unwritten tile too). Thin in K so
 * that it stays cheap under the emulator, which does not cap it. N = 4 BN - 1
 * is odd, so those rows take the element-by-element path; the second shape
 * has N and K multiples of 8, so the 16-byte copies run in a second and a
 * third column of tiles too (the other cases' N is capped at 256, one column
 * of step B's tiles), where a copy that forgets the tile's column offset
 * reads the first column's B. */
static void test_many_tiles(void **state) {
    const step_t *s = begin(state);
    int bm, bn, bk;
    s->tile(&bm, &bn, &bk);
    poison_shared_memory(s);
    gemm_check_shape_bf16(s->fn, s->name, 33 * bm - 5, 4 * bn - 1, 40, 1.0f, -1.0f, lab_seed + 35); /* salts 1-34 seed the other tests */
    poison_shared_memory(s);
    gemm_check_shape_bf16(s->fn, s->name, 2 * bm + 8, 2 * bn + 8, 40, 1.0f, -1.0f, lab_seed + 34);
}

/* Step B's shared-memory traffic, counted on the emulator (it skips on a
 * GPU, where Nsight Compute shows it and the bench times it). The emulator
 * notes the rows each ldmatrix reads and the chunks each cp.async copies
 * (common/warp_mma.cuh), one request per 8 x 8 matrix or per 128 bytes as
 * the hardware serves them. Held to: every ldmatrix matrix in one bank pass
 * (its 8 rows of 16 bytes in 8 different groups of 4 banks: the swizzle of
 * task 4), the copies' shared-memory writes in one pass per 128 bytes, and
 * the tile loads coalesced 16-byte copies (task 5). The solution: 1.00,
 * 1.00, 1.00 and 16 bytes a thread. The plain layout of the starter's swz
 * gives right numbers and 8 passes per matrix with 128-byte rows (the
 * same chunk of 8 rows in one bank group). Whole tiles of the compiled
 * sizes (capped at 256 x 256 x 1024), K and N multiples of 8. */
/* The figures are one kernel's sums: the tracer's report splits them by
 * line, so that A's ldmatrix and B's ldmatrix.trans show apart. */
#define LINES_HINT                                                                                             \
    "SIMT_MEMTRACE=1 make check LAB=04 TARGET=emu ONLY='mma: memory pattern (emulator)' names the lines that " \
    "cost most, A's reads and B's apart"

static void test_mma_memory_pattern(void **state) {
    const step_t *s = begin(state);
    int bm, bn, bk;
    s->tile(&bm, &bn, &bk);
    const gemm_kernel_t k = {s->name, NULL, s->fn};
    const int M = cap(bm, 256), N = cap(bn, 256), K = cap(4 * bk, 1024);
    gemm_pattern_t p;
    gemm_trace_pattern(&k, M, N, K, "04", &p); /* skips on a GPU */
    if (p.shared_load > 1.25)
        fail_msg("matmul_mma: its ldmatrix reads take %.1f bank passes per 8 x 8 matrix where 1 would do: the 8 "
                 "rows of a matrix fall in the same groups of 4 banks. Swizzle the 16-byte chunks in swz (task "
                 "4; see Bank conflicts and swizzling), and read and write every chunk through swz_a and swz_b. "
                 LINES_HINT, p.shared_load);
    if (p.shared_store > 1.25)
        fail_msg("matmul_mma: its cp.async writes to shared memory take %.1f bank passes per 128 bytes where 1 "
                 "would do: give neighbouring threads neighbouring 16-byte chunks of a row, through swz_a and "
                 "swz_b (task 5). " LINES_HINT, p.shared_store);
    if (p.global_load > 1.5 || p.global_load_width < 12.0)
        fail_msg("matmul_mma: on whole, aligned tiles its loads of A and B touch %.1f times the sectors their "
                 "bytes need (1.0 when coalesced) and move %.1f bytes a thread: with K and N multiples of 8, copy "
                 "each 16-byte chunk with one cp_async_16_zfill, neighbouring threads on neighbouring chunks of "
                 "a row (task 5). " LINES_HINT, p.global_load, p.global_load_width);
}

#define STEP_TESTS(prefix, step)                                                                 \
    {prefix ": 1x1x1, K = 1, 1x1x257", test_tiny, NULL, NULL, (void *)&(step)},                 \
    {prefix ": primes", test_primes, NULL, NULL, (void *)&(step)},                               \
    {prefix ": tile edges", test_tile_edges, NULL, NULL, (void *)&(step)},                       \
    {prefix ": K, N multiples of 8 or not", test_alignment, NULL, NULL, (void *)&(step)},        \
    {prefix ": rectangular", test_rectangular, NULL, NULL, (void *)&(step)},                     \
    {prefix ": alpha and beta", test_alpha_beta, NULL, NULL, (void *)&(step)},                   \
    {prefix ": beta = 0 ignores C", test_beta_zero_ignores_c, NULL, NULL, (void *)&(step)},      \
    {prefix ": NaN propagates", test_nan_propagates, NULL, NULL, (void *)&(step)},               \
    {prefix ": many tiles", test_many_tiles, NULL, NULL, (void *)&(step)},                       \
    {prefix ": large", test_large, NULL, NULL, (void *)&(step)}

int main(int argc, char **argv) {
    lab_check_init(argc, argv, "lab 04: matmul_wmma, matmul_mma, matmul_wgmma (bf16 in, fp32 out)");
    const struct CMUnitTest tests[] = {
        STEP_TESTS("wmma", step_wmma),
        STEP_TESTS("mma", step_mma),
        {"mma: memory pattern (emulator)", test_mma_memory_pattern, NULL, NULL, (void *)&step_mma},
        STEP_TESTS("wgmma", step_wgmma),
    };
    return LAB_RUN_TESTS("lab04_tensor_cores", tests);
}
