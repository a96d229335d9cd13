/*
 * Tests of the communicator's MPI backend, run as `mpirun -np N test_comm`
 * (N = 1, 2, 3, 4 all pass; the suite uses 2 and 4).
 *
 * Every rank runs every test in the same order. Each check is collective: a
 * rank works out whether its own result is right, the flags are combined
 * with MPI_Allreduce(MIN), and every rank asserts on the combined flag, so a
 * wrong value on any rank fails the test on all of them (and the ranks stay
 * in step). The rank that saw the wrong value prints it on stderr. Only rank
 * 0 writes cmocka's report: the other ranks' stdout is discarded, and so is
 * their stderr while cmocka prints its summary (cmocka writes the
 * "[  PASSED  ]" and "[  FAILED  ]" totals to stderr), so each total appears
 * once.
 *
 * Expected values come from closed forms (for example the sum over ranks of
 * (r + 1) * (i % 5 + 1) is (i % 5 + 1) * P (P + 1) / 2), never from the
 * function under test. Values are small integers, so every dtype, bf16
 * included, holds them exactly and results compare with ==.
 *
 * The NCCL data path needs GPUs and is not run here; the NCCL bootstrap (id
 * made by ncclGetUniqueId on rank 0 and broadcast over MPI) needs none and
 * is. That comm_world(COMM_BACKEND_NCCL) fails cleanly without a GPU is
 * checked by test_comm_abort, since it ends the job.
 *
 * The suite runs it once more with COMM_CHECK_ARGS=1: every collective here
 * passes the same arguments on every rank, so each must pass the argument
 * check too, and the results must not change. (Mismatched arguments end the
 * job, so test_comm_abort tests those.)
 */
#include "comm.h"
#include "half.h"

#include <fcntl.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

static comm_t *W; /* the MPI world communicator */
static int R, P;  /* this rank, number of ranks */

static const size_t SIZES[] = {1, 7, 1000, 1001, 4096 + 3};
#define NSIZES (sizeof SIZES / sizeof SIZES[0])
static const comm_dtype_t DTYPES[] = {COMM_FLOAT32, COMM_FLOAT64, COMM_INT32,
                                      COMM_INT64,   COMM_BF16,    COMM_FP16};
static const char *DTYPE_NAMES[] = {"float32", "float64", "int32", "int64", "bf16", "fp16"};
static const char *OP_NAMES[] = {"sum", "prod", "max", "min", "avg"};

/* ----------------------------------------------------------------- helpers */

/* 1 on every rank if ok is 1 on every rank. */
static int all_ok(int ok) {
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

#define ASSERT_ALL(ok) assert_true(all_ok(ok))

static void put(void *buf, comm_dtype_t t, size_t i, double v) {
    switch (t) {
    case COMM_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case COMM_FLOAT64: ((double *)buf)[i] = v; break;
    case COMM_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case COMM_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case COMM_BF16: ((uint16_t *)buf)[i] = bf16_from_float((float)v); break;
    case COMM_FP16: ((uint16_t *)buf)[i] = fp16_from_float((float)v); break;
    default: abort();
    }
}

static double get(const void *buf, comm_dtype_t t, size_t i) {
    switch (t) {
    case COMM_FLOAT32: return ((const float *)buf)[i];
    case COMM_FLOAT64: return ((const double *)buf)[i];
    case COMM_INT32: return ((const int32_t *)buf)[i];
    case COMM_INT64: return (double)((const int64_t *)buf)[i];
    case COMM_BF16: return float_from_bf16(((const uint16_t *)buf)[i]);
    case COMM_FP16: return float_from_fp16(((const uint16_t *)buf)[i]);
    default: abort();
    }
}

/* The value a dtype holds for v (rounded for the 16-bit types, truncated for integers). */
static double as_dtype(comm_dtype_t t, double v) {
    uint64_t scratch;
    put(&scratch, t, 0, v);
    return get(&scratch, t, 0);
}

/* Fill with a value no correct result in these tests has. */
static void poison(void *buf, comm_dtype_t t, size_t n) {
    for (size_t i = 0; i < n; i++) put(buf, t, i, -12345);
}

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) abort();
    return p;
}

/* Compare buf[i] with want(i) for i < n; report the first mismatch of this rank. */
typedef double (*expect_fn)(size_t i, const void *ctx);

static int check_buf(const char *what, const void *buf, comm_dtype_t t, size_t n, expect_fn want,
                     const void *ctx) {
    for (size_t i = 0; i < n; i++) {
        double got = get(buf, t, i), exp = want(i, ctx);
        if (!(got == exp)) {
            fprintf(stderr, "rank %d/%d: %s: element %zu of %zu is %.9g, expected %.9g\n", R, P, what,
                    i, n, got, exp);
            return 0;
        }
    }
    return 1;
}

static void label(char *out, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, len, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------- world, shard */

static void test_world(void **state) {
    (void)state;
    int mr = -1, ms = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &mr);
    MPI_Comm_size(MPI_COMM_WORLD, &ms);
    ASSERT_ALL(comm_rank(W) == mr && comm_size(W) == ms && comm_backend(W) == COMM_BACKEND_MPI);
    ASSERT_ALL(comm_world(COMM_BACKEND_MPI) == W); /* made once, then the same */
    comm_free(W);                                  /* ignored for the world communicator */
    ASSERT_ALL(comm_size(W) == ms);
    int sizes_ok = comm_dtype_size(COMM_FLOAT32) == 4 && comm_dtype_size(COMM_FLOAT64) == 8 &&
                   comm_dtype_size(COMM_INT32) == 4 && comm_dtype_size(COMM_INT64) == 8 &&
                   comm_dtype_size(COMM_BF16) == 2 && comm_dtype_size(COMM_FP16) == 2;
    ASSERT_ALL(sizes_ok);
    ASSERT_ALL(comm_stream(W) == NULL);
}

static void test_shard_range(void **state) {
    (void)state;
    static const size_t totals[] = {0, 1, 2, 7, 1000, 1001, 4099};
    int ok = 1;
    for (size_t k = 0; k < sizeof totals / sizeof totals[0]; k++) {
        size_t n = totals[k];
        for (int p = 1; p <= 9; p++) {
            size_t next = 0;
            for (int r = 0; r < p; r++) {
                size_t off = 99999, cnt = 99999;
                comm_shard_range(n, r, p, &off, &cnt);
                size_t want = n / (size_t)p + ((size_t)r < n % (size_t)p ? 1 : 0);
                if (off != next || cnt != want) {
                    fprintf(stderr, "shard_range(%zu, %d, %d) = [%zu, +%zu), expected [%zu, +%zu)\n",
                            n, r, p, off, cnt, next, want);
                    ok = 0;
                }
                next = off + cnt;
            }
            if (next != n) ok = 0;
        }
    }
    ASSERT_ALL(ok);
}

/* -------------------------------------------------------------- allreduce */

typedef struct {
    comm_op_t op;
    comm_dtype_t t;
} ar_ctx;

/* Input of rank r at index i. Sums, maxima and minima stay below 256 for P <= 9,
 * so bf16 (8 significant bits) holds every partial result exactly. */
static double ar_input(comm_op_t op, int r, size_t i) {
    if (op == COMM_PROD) return 1 + (double)((i + (size_t)r) % 2); /* 1s and 2s */
    return (double)(((size_t)r + i) % (size_t)P + 1) * (double)(i % 5 + 1);
}

static double ar_expect(size_t i, const void *vctx) {
    const ar_ctx *c = (const ar_ctx *)vctx;
    double scale = (double)(i % 5 + 1);
    double sum = scale * P * (P + 1) / 2.0; /* over r of ((r + i) % P + 1): 1 + 2 + ... + P */
    switch (c->op) {
    case COMM_SUM: return sum;
    case COMM_MAX: return scale * P;
    case COMM_MIN: return scale;
    case COMM_PROD: { /* 2 to the number of ranks r with (i + r) odd */
        int twos = (i % 2 == 0) ? P / 2 : (P + 1) / 2;
        return (double)(1u << twos);
    }
    case COMM_AVG:
        if (c->t == COMM_INT32 || c->t == COMM_INT64) return (double)((int64_t)sum / P);
        return as_dtype(c->t, sum / P);
    default: abort();
    }
}

static void test_allreduce_all_dtypes_ops_sizes(void **state) {
    (void)state;
    int ok = 1;
    char what[128];
    for (size_t ti = 0; ti < COMM_DTYPE_COUNT; ti++) {
        comm_dtype_t t = DTYPES[ti];
        size_t es = comm_dtype_size(t);
        for (int op = 0; op < COMM_OP_COUNT; op++) {
            for (size_t si = 0; si < NSIZES; si++) {
                size_t n = SIZES[si];
                void *send = xmalloc(n * es), *recv = xmalloc(n * es);
                for (size_t i = 0; i < n; i++) put(send, t, i, ar_input((comm_op_t)op, R, i));
                poison(recv, t, n);
                comm_allreduce(W, send, recv, n, t, (comm_op_t)op);
                ar_ctx c = {(comm_op_t)op, t};
                label(what, sizeof what, "allreduce %s %s n=%zu", DTYPE_NAMES[ti], OP_NAMES[op], n);
                ok &= check_buf(what, recv, t, n, ar_expect, &c);
                /* The input must be left alone. */
                for (size_t i = 0; i < n && ok; i++)
                    if (get(send, t, i) != as_dtype(t, ar_input((comm_op_t)op, R, i))) {
                        fprintf(stderr, "rank %d: %s changed its send buffer\n", R, what);
                        ok = 0;
                    }
                free(send);
                free(recv);
            }
        }
    }
    ASSERT_ALL(ok);
}

static void test_allreduce_in_place(void **state) {
    (void)state;
    int ok = 1;
    char what[128];
    for (size_t ti = 0; ti < COMM_DTYPE_COUNT; ti++) {
        comm_dtype_t t = DTYPES[ti];
        for (int op = 0; op < COMM_OP_COUNT; op++) {
            size_t n = 1001;
            void *buf = xmalloc(n * comm_dtype_size(t));
            for (size_t i = 0; i < n; i++) put(buf, t, i, ar_input((comm_op_t)op, R, i));
            comm_allreduce(W, buf, buf, n, t, (comm_op_t)op);
            ar_ctx c = {(comm_op_t)op, t};
            label(what, sizeof what, "in-place allreduce %s %s", DTYPE_NAMES[ti], OP_NAMES[op]);
            ok &= check_buf(what, buf, t, n, ar_expect, &c);
            free(buf);
        }
    }
    ASSERT_ALL(ok);
}

/* bf16 and fp16 sums round to nearest even, as a GPU would, not by truncation. */
static void test_allreduce_half_rounding(void **state) {
    (void)state;
    if (P < 2) skip(); /* needs two contributions */
    /* Rank 0 adds a big value, rank 1 a small odd one, others 0. Between 256 and 512 bf16
     * steps by 2 and between 2048 and 4096 fp16 does too, so each sum is a tie:
     * 259 -> 260, 261 -> 260, 263 -> 264 (truncation would give 258, 260, 262). */
    static const double small[3] = {3, 5, 7};
    static const double bf16_want[3] = {260, 260, 264};
    static const double fp16_want[3] = {2052, 2052, 2056}; /* 2051, 2053, 2055 */
    uint16_t bf[3], fp[3];
    for (int i = 0; i < 3; i++) {
        put(bf, COMM_BF16, (size_t)i, R == 0 ? 256 : R == 1 ? small[i] : 0);
        put(fp, COMM_FP16, (size_t)i, R == 0 ? 2048 : R == 1 ? small[i] : 0);
    }
    comm_allreduce(W, bf, bf, 3, COMM_BF16, COMM_SUM);
    comm_allreduce(W, fp, fp, 3, COMM_FP16, COMM_SUM);
    int ok = 1;
    for (int i = 0; i < 3; i++) {
        if (get(bf, COMM_BF16, (size_t)i) != bf16_want[i] || get(fp, COMM_FP16, (size_t)i) != fp16_want[i]) {
            fprintf(stderr, "rank %d: half rounding element %d: bf16 %g (want %g), fp16 %g (want %g)\n",
                    R, i, get(bf, COMM_BF16, (size_t)i), bf16_want[i], get(fp, COMM_FP16, (size_t)i),
                    fp16_want[i]);
            ok = 0;
        }
    }
    ASSERT_ALL(ok);
}

/* Products and averages of bf16 and fp16 round to nearest even too, not only sums. Products:
 * rank 0 holds 1.5, rank 1 holds 1 + one step of the type (2^-7 for bf16, 2^-10 for fp16),
 * the others 1. 1.5 * (1 + 2^-7) is 65.5 bf16 steps above 1, a tie that rounds to 66
 * (1.515625); truncation gives 65. For fp16, 513.5 steps round to 514 (1.501953125).
 * Averages: 1 + one step on every rank averages to itself, which needs the type's last bit;
 * and k times the smallest subnormal on rank 0 (0 elsewhere) averages to k / P of it, which
 * for even P and odd k is a tie between two subnormals (3 / 2 -> 2, 5 / 2 -> 2, 7 / 2 -> 4). */
static void test_half_prod_and_avg_rounding(void **state) {
    (void)state;
    static const comm_dtype_t types[2] = {COMM_BF16, COMM_FP16};
    static const double prod_want[2] = {1.515625, 1.501953125};
    enum { K = 9 }; /* element 0: 1 + one step; elements 1..K: k subnormal steps on rank 0 */
    int ok = 1;
    for (int ti = 0; ti < 2; ti++) {
        comm_dtype_t t = types[ti];
        double step = ti ? ldexp(1, -10) : ldexp(1, -7);
        double tiny = ti ? ldexp(1, -24) : ldexp(1, -133); /* the smallest subnormal */
        if (P >= 2) {
            uint16_t x;
            put(&x, t, 0, R == 0 ? 1.5 : R == 1 ? 1 + step : 1);
            comm_allreduce(W, &x, &x, 1, t, COMM_PROD);
            if (get(&x, t, 0) != prod_want[ti]) {
                fprintf(stderr, "rank %d: %s product 1.5 * (1 + %g) is %.9g, expected %.9g\n", R,
                        DTYPE_NAMES[t], step, get(&x, t, 0), prod_want[ti]);
                ok = 0;
            }
        }
        uint16_t avg[K + 1];
        put(avg, t, 0, 1 + step);
        for (int k = 1; k <= K; k++) put(avg, t, (size_t)k, R == 0 ? k * tiny : 0);
        comm_allreduce(W, avg, avg, K + 1, t, COMM_AVG);
        for (int k = 0; k <= K; k++) {
            double want = k ? as_dtype(t, k * tiny / P) : 1 + step;
            if (get(avg, t, (size_t)k) != want) {
                fprintf(stderr, "rank %d: %s average %d is %.9g (%d subnormal steps), expected %.9g\n", R,
                        DTYPE_NAMES[t], k, get(avg, t, (size_t)k), (int)(get(avg, t, (size_t)k) / tiny), want);
                ok = 0;
            }
        }
        if (P == 2 && as_dtype(t, 3 * tiny / 2) != 2 * tiny) ok = 0; /* the reference itself ties to even */
    }
    ASSERT_ALL(ok);
}

/* max and min of floating-point types, as NCCL's kernels compute them (fmax/fmin): a NaN
 * loses to a number whichever rank holds it, and -0 counts as below +0 in either order.
 * Element i < P is NaN on rank i only; element P is NaN everywhere; element P + 1 is +0 on
 * even ranks and -0 on odd ones, element P + 2 the other way round (MPI hands the operands
 * to the reduction in an order of its own, so only both together show that neither order
 * decides the sign). The rest hold r + 1 on rank r. */
static double mm_input(int r, size_t i) {
    if (i < (size_t)P) return (size_t)r == i ? (double)NAN : r + 1;
    if (i == (size_t)P) return (double)NAN;
    if (i == (size_t)P + 1) return r % 2 ? -0.0 : 0.0;
    if (i == (size_t)P + 2) return r % 2 ? 0.0 : -0.0;
    return r + 1;
}

static double mm_expect(comm_op_t op, size_t i) {
    int is_max = op == COMM_MAX;
    if (i < (size_t)P) {
        if (P == 1) return (double)NAN;
        /* over the ranks other than i of r + 1 */
        if (is_max) return i == (size_t)P - 1 ? P - 1 : P;
        return i == 0 ? 2 : 1;
    }
    if (i == (size_t)P) return (double)NAN;
    if (i == (size_t)P + 1) return is_max || P == 1 ? 0.0 : -0.0;
    if (i == (size_t)P + 2) return is_max && P > 1 ? 0.0 : -0.0; /* one rank: its own -0 */
    return is_max ? P : 1;
}

static void test_max_min_nan_and_signed_zero(void **state) {
    (void)state;
    static const comm_dtype_t types[] = {COMM_FLOAT32, COMM_FLOAT64, COMM_BF16, COMM_FP16};
    int ok = 1;
    for (size_t ti = 0; ti < 4; ti++)
        for (int k = 0; k < 2; k++)
            for (int in_place = 0; in_place < 2; in_place++) {
                comm_dtype_t t = types[ti];
                comm_op_t op = k ? COMM_MIN : COMM_MAX;
                size_t n = (size_t)P + 5, es = comm_dtype_size(t);
                void *send = xmalloc(n * es), *recv = in_place ? send : xmalloc(n * es);
                for (size_t i = 0; i < n; i++) put(send, t, i, mm_input(R, i));
                comm_allreduce(W, send, recv, n, t, op);
                for (size_t i = 0; i < n; i++) {
                    double got = get(recv, t, i), want = mm_expect(op, i);
                    int same = isnan(want) ? isnan(got) : got == want && !signbit(got) == !signbit(want);
                    if (!same) {
                        fprintf(stderr, "rank %d: allreduce %s %s element %zu is %g, expected %g\n", R,
                                DTYPE_NAMES[t], OP_NAMES[op], i, got, want);
                        ok = 0;
                    }
                }
                free(send);
                if (!in_place) free(recv);
            }
    ASSERT_ALL(ok);
}

/* Integer sums wrap around (two's complement), as NCCL's do, and the average of integers is
 * that sum divided by the number of ranks, truncated toward zero, for int32 and int64 alike
 * (rounding down instead differs only for negative sums). */
static void test_integer_wrap_and_avg_truncation(void **state) {
    (void)state;
    int32_t a = INT32_MAX;
    int64_t b = INT64_MAX;
    comm_allreduce(W, &a, &a, 1, COMM_INT32, COMM_SUM);
    comm_allreduce(W, &b, &b, 1, COMM_INT64, COMM_SUM);
    int32_t want_a = (int32_t)(uint32_t)((uint32_t)INT32_MAX * (uint32_t)P);
    int64_t want_b = (int64_t)(uint64_t)((uint64_t)INT64_MAX * (uint64_t)P);
    /* -(r + 1) on rank r: the sum is -P (P + 1) / 2, its average -(P + 1) / 2 toward zero. */
    int32_t c = -(R + 1);
    comm_allreduce(W, &c, &c, 1, COMM_INT32, COMM_AVG);
    int32_t want_c = -((P * (P + 1) / 2) / P);
    int64_t d = -(int64_t)(R + 1);
    comm_allreduce(W, &d, &d, 1, COMM_INT64, COMM_AVG);
    int ok = a == want_a && b == want_b && c == want_c && d == want_c;
    if (!ok)
        fprintf(stderr, "rank %d: int32 sum %d (want %d), int64 sum %lld (want %lld), int32 avg %d, int64 avg "
                "%lld (want %d)\n", R, a, want_a, (long long)b, (long long)want_b, c, (long long)d, want_c);
    ASSERT_ALL(ok);
}

/* Data-parallel training needs the same parameters on every rank, so a bf16 or fp16 sum, whose
 * value depends on the order the ranks are added in, must come out bit for bit the same on all.
 * Each element mixes one large value with ones, so every order rounds differently. */
static void test_half_sum_same_bits_on_every_rank(void **state) {
    (void)state;
    static const size_t sizes[] = {1, 1001, 70000};
    int ok = 1;
    for (int ti = 0; ti < 2; ti++)
        for (size_t k = 0; k < 3; k++) {
            comm_dtype_t t = ti ? COMM_FP16 : COMM_BF16;
            size_t n = sizes[k];
            uint16_t *x = xmalloc(n * sizeof(uint16_t));
            for (size_t i = 0; i < n; i++) put(x, t, i, ((size_t)R + i) % (size_t)P == 0 ? (ti ? 2048 : 256) : 1);
            comm_allreduce(W, x, x, n, t, COMM_SUM);
            uint16_t *all = xmalloc(n * (size_t)P * sizeof(uint16_t));
            MPI_Allgather(x, (int)n, MPI_UINT16_T, all, (int)n, MPI_UINT16_T, MPI_COMM_WORLD);
            for (int r = 1; r < P; r++)
                if (memcmp(all, all + (size_t)r * n, n * sizeof(uint16_t)) != 0) {
                    fprintf(stderr, "rank %d: %s sum of %zu elements differs between ranks 0 and %d\n", R,
                            DTYPE_NAMES[t], n, r);
                    ok = 0;
                }
            free(x);
            free(all);
        }
    ASSERT_ALL(ok);
}

/* ---------------------------------------------------- reduce-scatter, gather */

typedef struct {
    size_t base; /* global index of element 0 of the checked buffer */
    int op_max;
} rs_ctx;

static double rs_input(int r, size_t j, int op_max) {
    if (op_max) return (double)(((size_t)r + j) % (size_t)P + 1) * (double)(j % 13 + 1);
    return (double)(r + 1) * (double)(j % 13 + 1);
}

static double rs_expect(size_t i, const void *vctx) {
    const rs_ctx *c = (const rs_ctx *)vctx;
    size_t j = c->base + i;
    if (c->op_max) return (double)P * (double)(j % 13 + 1);
    return (double)(j % 13 + 1) * P * (P + 1) / 2.0;
}

static void test_reduce_scatter(void **state) {
    (void)state;
    static const size_t counts[] = {1, 7, 1001};
    static const comm_dtype_t types[] = {COMM_FLOAT32, COMM_FLOAT64, COMM_INT32, COMM_BF16};
    int ok = 1;
    char what[128];
    for (size_t k = 0; k < 3; k++)
        for (size_t ti = 0; ti < 4; ti++)
            for (int op_max = 0; op_max < 2; op_max++)
                for (int in_place = 0; in_place < 2; in_place++) {
                    size_t c = counts[k], n = c * (size_t)P;
                    comm_dtype_t t = types[ti];
                    size_t es = comm_dtype_size(t);
                    char *send = xmalloc(n * es), *own = xmalloc(c * es);
                    for (size_t j = 0; j < n; j++) put(send, t, j, rs_input(R, j, op_max));
                    char *recv = in_place ? send + (size_t)R * c * es : own;
                    if (!in_place) poison(recv, t, c);
                    comm_reduce_scatter(W, send, recv, c, t, op_max ? COMM_MAX : COMM_SUM);
                    rs_ctx ctx = {(size_t)R * c, op_max};
                    label(what, sizeof what, "reduce_scatter %s %s recvcount=%zu%s", DTYPE_NAMES[t],
                          op_max ? "max" : "sum", c, in_place ? " in place" : "");
                    ok &= check_buf(what, recv, t, c, rs_expect, &ctx);
                    free(send);
                    free(own);
                }
    ASSERT_ALL(ok);
}

static double ag_value(int r, size_t i) { return (double)r * 10000 + (double)i; }

static double ag_expect(size_t k, const void *vctx) {
    size_t c = *(const size_t *)vctx;
    return ag_value((int)(k / c), k % c);
}

static void test_allgather(void **state) {
    (void)state;
    static const size_t counts[] = {1, 7, 1001};
    static const comm_dtype_t types[] = {COMM_FLOAT64, COMM_INT32, COMM_INT64};
    int ok = 1;
    char what[128];
    for (size_t k = 0; k < 3; k++)
        for (size_t ti = 0; ti < 3; ti++)
            for (int in_place = 0; in_place < 2; in_place++) {
                size_t c = counts[k], n = c * (size_t)P;
                comm_dtype_t t = types[ti];
                size_t es = comm_dtype_size(t);
                char *recv = xmalloc(n * es), *own = xmalloc(c * es);
                poison(recv, t, n);
                char *send = in_place ? recv + (size_t)R * c * es : own;
                for (size_t i = 0; i < c; i++) put(send, t, i, ag_value(R, i));
                comm_allgather(W, send, recv, c, t);
                label(what, sizeof what, "allgather %s sendcount=%zu%s", DTYPE_NAMES[t], c,
                      in_place ? " in place" : "");
                ok &= check_buf(what, recv, t, n, ag_expect, &c);
                free(recv);
                free(own);
            }
    ASSERT_ALL(ok);
}

static double bc_expect(size_t i, const void *vctx) {
    int root = *(const int *)vctx;
    return (double)root * 1000 + (double)(i % 977);
}

static void test_broadcast(void **state) {
    (void)state;
    int ok = 1;
    char what[128];
    const int roots[2] = {0, P - 1};
    for (size_t si = 0; si < NSIZES; si++)
        for (int k = 0; k < 2; k++)
            for (int ti = 0; ti < 2; ti++) {
                comm_dtype_t t = ti ? COMM_INT64 : COMM_FLOAT32;
                size_t n = SIZES[si];
                int root = roots[k];
                void *buf = xmalloc(n * comm_dtype_size(t));
                if (R == root)
                    for (size_t i = 0; i < n; i++) put(buf, t, i, bc_expect(i, &root));
                else
                    poison(buf, t, n);
                comm_broadcast(W, buf, n, t, root);
                label(what, sizeof what, "broadcast %s n=%zu root=%d", DTYPE_NAMES[t], n, root);
                ok &= check_buf(what, buf, t, n, bc_expect, &root);
                free(buf);
            }
    ASSERT_ALL(ok);
}

/* --------------------------------------------------------- uneven shards */

static double v_value(size_t j) { return (double)(j * 3 + 1); }
static double v_expect_full(size_t j, const void *ctx) {
    (void)ctx;
    return v_value(j);
}

/* Block sizes: even shards of total (from comm_shard_range), or r * 3 (rank 0 empty). */
static size_t make_counts(size_t *counts, size_t total, int uneven) {
    size_t sum = 0;
    for (int r = 0; r < P; r++) {
        size_t off;
        if (uneven)
            counts[r] = (size_t)r * 3;
        else
            comm_shard_range(total, r, P, &off, &counts[r]);
        sum += counts[r];
    }
    return sum;
}

static void test_allgatherv(void **state) {
    (void)state;
    static const size_t totals[] = {1, 7, 1000, 1001, 4099, 0};
    size_t *counts = xmalloc((size_t)P * sizeof(size_t));
    int ok = 1;
    char what[128];
    for (size_t k = 0; k < 6; k++)
        for (int in_place = 0; in_place < 2; in_place++) {
            size_t n = make_counts(counts, totals[k], totals[k] == 0);
            size_t off = 0;
            for (int r = 0; r < R; r++) off += counts[r];
            size_t mine = counts[R];
            double *recv = xmalloc(n * sizeof(double)), *own = xmalloc(mine * sizeof(double));
            poison(recv, COMM_FLOAT64, n);
            double *send = in_place ? recv + off : own;
            for (size_t i = 0; i < mine; i++) send[i] = v_value(off + i);
            comm_allgatherv(W, send, recv, counts, COMM_FLOAT64);
            label(what, sizeof what, "allgatherv total=%zu%s", n, in_place ? " in place" : "");
            ok &= check_buf(what, recv, COMM_FLOAT64, n, v_expect_full, NULL);
            free(recv);
            free(own);
        }
    free(counts);
    ASSERT_ALL(ok);
}

static double rsv_expect(size_t i, const void *vctx) {
    size_t j = *(const size_t *)vctx + i;
    return (double)(j % 11 + 1) * P * (P + 1) / 2.0;
}

static void test_reduce_scatterv(void **state) {
    (void)state;
    static const size_t totals[] = {1, 7, 1000, 1001, 4099, 0};
    size_t *counts = xmalloc((size_t)P * sizeof(size_t));
    int ok = 1;
    char what[128];
    for (size_t k = 0; k < 6; k++)
        for (int ti = 0; ti < 2; ti++)
            for (int in_place = 0; in_place < 2; in_place++) {
                comm_dtype_t t = ti ? COMM_BF16 : COMM_INT32;
                size_t es = comm_dtype_size(t);
                size_t n = make_counts(counts, totals[k], totals[k] == 0);
                size_t off = 0;
                for (int r = 0; r < R; r++) off += counts[r];
                size_t mine = counts[R];
                char *send = xmalloc(n * es), *own = xmalloc(mine * es);
                for (size_t j = 0; j < n; j++) put(send, t, j, (double)(R + 1) * (double)(j % 11 + 1));
                char *recv = in_place ? send + off * es : own;
                if (!in_place) poison(recv, t, mine);
                comm_reduce_scatterv(W, send, recv, counts, t, COMM_SUM);
                label(what, sizeof what, "reduce_scatterv %s total=%zu%s", DTYPE_NAMES[t], n,
                      in_place ? " in place" : "");
                ok &= check_buf(what, recv, t, mine, rsv_expect, &off);
                free(send);
                free(own);
            }
    free(counts);
    ASSERT_ALL(ok);
}

/* COMM_AVG on the reduce-scatters: MPI has no average, so the MPI backend sums and then
 * divides, and in place it also moves the block from where MPI leaves it (the start of
 * sendbuf) to this rank's block: the move must come first and the division must cover the
 * whole block, for the blocking, non-blocking and "v" calls alike. Inputs (r + 1) * s with
 * s = j % 13 + 1 average to s (P + 1) / 2, truncated toward zero for int32. */
typedef struct {
    size_t base; /* global index of element 0 of the checked block */
    comm_dtype_t t;
} avg_ctx;

static double avg_expect(size_t i, const void *vctx) {
    const avg_ctx *c = (const avg_ctx *)vctx;
    double s = (double)((c->base + i) % 13 + 1);
    if (c->t == COMM_INT32) return (double)((int64_t)(s * P * (P + 1) / 2) / P);
    return as_dtype(c->t, s * (P + 1) / 2.0);
}

static void test_reduce_scatter_avg(void **state) {
    (void)state;
    static const comm_dtype_t types[] = {COMM_INT32, COMM_FLOAT32, COMM_BF16};
    size_t *counts = xmalloc((size_t)P * sizeof(size_t));
    int ok = 1;
    char what[128];
    for (size_t ti = 0; ti < 3; ti++)
        for (int kind = 0; kind < 4; kind++) /* blocking, non-blocking, v even shards, v uneven */
            for (int in_place = 0; in_place < 2; in_place++) {
                comm_dtype_t t = types[ti];
                size_t es = comm_dtype_size(t), c = 7, n = c * (size_t)P, off = (size_t)R * c;
                if (kind >= 2) {
                    n = make_counts(counts, 1001, kind == 3);
                    off = 0;
                    for (int r = 0; r < R; r++) off += counts[r];
                    c = counts[R];
                }
                char *send = xmalloc(n * es), *own = xmalloc(c * es);
                for (size_t j = 0; j < n; j++) put(send, t, j, rs_input(R, j, 0));
                char *recv = in_place ? send + off * es : own;
                if (!in_place) poison(recv, t, c);
                if (kind == 0) {
                    comm_reduce_scatter(W, send, recv, c, t, COMM_AVG);
                } else if (kind == 1) {
                    comm_request_t req = comm_ireduce_scatter(W, send, recv, c, t, COMM_AVG);
                    comm_wait(&req);
                } else {
                    comm_reduce_scatterv(W, send, recv, counts, t, COMM_AVG);
                }
                avg_ctx ctx = {off, t};
                label(what, sizeof what, "%s %s avg%s", kind == 0 ? "reduce_scatter" : kind == 1 ? "ireduce_scatter"
                      : "reduce_scatterv", DTYPE_NAMES[t], in_place ? " in place" : "");
                ok &= check_buf(what, recv, t, c, avg_expect, &ctx);
                free(send);
                free(own);
            }
    free(counts);
    ASSERT_ALL(ok);
}

/* ---------------------------------------------------------------- barrier */

static void test_barrier(void **state) {
    (void)state;
    MPI_Barrier(MPI_COMM_WORLD);
    /* Rank 0 arrives 0.5 s late; nobody may leave the barrier before it arrives. */
    double t0 = MPI_Wtime();
    if (R == 0) {
        struct timespec ts = {0, 500 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    comm_barrier(W);
    double waited = MPI_Wtime() - t0;
    int ok = waited >= 0.3; /* 0.2 s of slack for a rank that left MPI_Barrier late */
    if (!ok) fprintf(stderr, "rank %d left the barrier after %.3f s, before rank 0 arrived\n", R, waited);
    ASSERT_ALL(ok);
}

/* ------------------------------------------------------------ point-to-point */

static double p2p_value(int from, size_t i) { return (double)from * 1000 + (double)i; }
static double p2p_expect(size_t i, const void *vctx) { return p2p_value(*(const int *)vctx, i); }

static void test_send_recv_ring(void **state) {
    (void)state;
    if (P < 2) skip(); /* a blocking send to oneself would wait forever */
    size_t n = 1001;
    int right = (R + 1) % P, left = (R + P - 1) % P;
    double *out = xmalloc(n * sizeof(double)), *in = xmalloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) out[i] = p2p_value(R, i);
    poison(in, COMM_FLOAT64, n);
    /* Even ranks send first, odd ranks receive first, so the ring cannot deadlock. */
    if (R % 2 == 0) {
        comm_send(W, out, n, COMM_FLOAT64, right);
        comm_recv(W, in, n, COMM_FLOAT64, left);
    } else {
        comm_recv(W, in, n, COMM_FLOAT64, left);
        comm_send(W, out, n, COMM_FLOAT64, right);
    }
    ASSERT_ALL(check_buf("send/recv ring", in, COMM_FLOAT64, n, p2p_expect, &left));
    free(out);
    free(in);
}

static void test_sendrecv(void **state) {
    (void)state;
    int ok = 1;
    for (size_t si = 0; si < NSIZES; si++) {
        size_t n = SIZES[si];
        int right = (R + 1) % P, left = (R + P - 1) % P;
        int32_t *out = xmalloc(n * sizeof(int32_t)), *in = xmalloc(n * sizeof(int32_t));
        for (size_t i = 0; i < n; i++) out[i] = (int32_t)p2p_value(R, i);
        poison(in, COMM_INT32, n);
        comm_sendrecv(W, out, n, right, in, n, left, COMM_INT32);
        ok &= check_buf("sendrecv shift", in, COMM_INT32, n, p2p_expect, &left);
        free(out);
        free(in);
    }
    ASSERT_ALL(ok);
}

/* Each side of a sendrecv has its own count: rank r sends 3 + r elements, so a rank receives
 * 3 + (its left neighbour) of them, which is what its receive is checked against. */
static void test_sendrecv_counts_differ(void **state) {
    (void)state;
    int right = (R + 1) % P, left = (R + P - 1) % P;
    size_t ns = 3 + (size_t)R, nr = 3 + (size_t)left;
    int64_t *out = xmalloc(ns * sizeof(int64_t)), *in = xmalloc(nr * sizeof(int64_t));
    for (size_t i = 0; i < ns; i++) out[i] = (int64_t)p2p_value(R, i);
    poison(in, COMM_INT64, nr);
    comm_sendrecv(W, out, ns, right, in, nr, left, COMM_INT64);
    int ok = check_buf("sendrecv of 3 + rank elements", in, COMM_INT64, nr, p2p_expect, &left);
    free(out);
    free(in);
    ASSERT_ALL(ok);
}

static void test_isend_irecv(void **state) {
    (void)state;
    size_t n = 4099;
    int right = (R + 1) % P, left = (R + P - 1) % P;
    float *to_r = xmalloc(n * sizeof(float)), *to_l = xmalloc(n * sizeof(float));
    float *from_l = xmalloc(n * sizeof(float)), *from_r = xmalloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        to_r[i] = (float)p2p_value(R, i);
        to_l[i] = (float)p2p_value(R, i) + 0.5f;
    }
    poison(from_l, COMM_FLOAT32, n);
    poison(from_r, COMM_FLOAT32, n);
    /* Receives posted first in the same order as the sends, so with P <= 2 (left == right)
     * the messages still pair up in order. */
    comm_request_t reqs[4];
    reqs[0] = comm_irecv(W, from_l, n, COMM_FLOAT32, left);
    reqs[1] = comm_irecv(W, from_r, n, COMM_FLOAT32, right);
    reqs[2] = comm_isend(W, to_r, n, COMM_FLOAT32, right);
    reqs[3] = comm_isend(W, to_l, n, COMM_FLOAT32, left);
    comm_waitall(4, reqs);
    int ok = 1;
    for (int k = 0; k < 4; k++) ok &= reqs[k] == COMM_REQUEST_NULL;
    for (size_t i = 0; i < n; i++)
        if (from_l[i] != (float)p2p_value(left, i) || from_r[i] != (float)p2p_value(right, i) + 0.5f) {
            fprintf(stderr, "rank %d: isend/irecv element %zu: from left %g, from right %g\n", R, i,
                    from_l[i], from_r[i]);
            ok = 0;
            break;
        }
    free(to_r);
    free(to_l);
    free(from_l);
    free(from_r);
    ASSERT_ALL(ok);
}

/* Non-blocking sends do not wait for their receives: every rank starts a send to each side
 * before it posts any receive. The messages are larger than Open MPI's eager limit, so a send
 * that waited for its receive would deadlock here. */
static void test_isend_before_irecv(void **state) {
    (void)state;
    if (P < 2) skip(); /* a send to oneself needs its receive posted first */
    enum { N = 1 << 16 };
    int right = (R + 1) % P, left = (R + P - 1) % P;
    double *out = xmalloc(N * sizeof(double)), *from_l = xmalloc(N * sizeof(double));
    for (size_t i = 0; i < N; i++) out[i] = p2p_value(R, i);
    poison(from_l, COMM_FLOAT64, N);
    comm_request_t reqs[2];
    reqs[0] = comm_isend(W, out, N, COMM_FLOAT64, right);
    reqs[1] = comm_irecv(W, from_l, N, COMM_FLOAT64, left);
    comm_waitall(2, reqs);
    int ok = check_buf("isend before irecv", from_l, COMM_FLOAT64, N, p2p_expect, &left);
    free(out);
    free(from_l);
    ASSERT_ALL(ok);
}

/* Buffers that touch but do not overlap (one ends where the other begins, in either order)
 * are two buffers, not an overlap: allreduce, sendrecv and reduce-scatter take them. */
static void test_adjacent_buffers_are_not_an_overlap(void **state) {
    (void)state;
    enum { N = 7 };
    int ok = 1;
    int right = (R + 1) % P, left = (R + P - 1) % P;
    for (int first = 0; first < 2; first++) { /* which of the two comes first in memory */
        int32_t *two = xmalloc(2 * N * sizeof(int32_t));
        int32_t *send = first ? two + N : two, *recv = first ? two : two + N;
        for (size_t i = 0; i < N; i++) send[i] = (int32_t)ar_input(COMM_SUM, R, i);
        comm_allreduce(W, send, recv, N, COMM_INT32, COMM_SUM);
        ar_ctx c = {COMM_SUM, COMM_INT32};
        ok &= check_buf("allreduce into the adjacent buffer", recv, COMM_INT32, N, ar_expect, &c);

        for (size_t i = 0; i < N; i++) send[i] = (int32_t)p2p_value(R, i);
        comm_sendrecv(W, send, N, right, recv, N, left, COMM_INT32);
        ok &= check_buf("sendrecv into the adjacent buffer", recv, COMM_INT32, N, p2p_expect, &left);
        free(two);

        /* recvbuf (N elements) just before or just after sendbuf (N * P elements) */
        int32_t *all = xmalloc((size_t)(P + 1) * N * sizeof(int32_t));
        int32_t *rs_send = first ? all : all + N, *rs_recv = first ? all + (size_t)P * N : all;
        for (size_t j = 0; j < (size_t)P * N; j++) rs_send[j] = (int32_t)rs_input(R, j, 0);
        comm_reduce_scatter(W, rs_send, rs_recv, N, COMM_INT32, COMM_SUM);
        rs_ctx rctx = {(size_t)R * N, 0};
        ok &= check_buf("reduce_scatter into the adjacent buffer", rs_recv, COMM_INT32, N, rs_expect, &rctx);
        free(all);
    }
    ASSERT_ALL(ok);
}

/* ---------------------------------------------------------- non-blocking */

static double sum_expect(size_t i, const void *ctx) {
    (void)ctx;
    return (double)(i % 5 + 1) * P * (P + 1) / 2.0;
}

static void test_nonblocking_collectives(void **state) {
    (void)state;
    size_t n = 4099, c = 1001, g = 7, b = 1000;
    float *ar = xmalloc(n * sizeof(float));
    uint16_t *avg = xmalloc(c * sizeof(uint16_t));
    int32_t *rs_send = xmalloc(c * (size_t)P * sizeof(int32_t)), *rs_recv = xmalloc(c * sizeof(int32_t));
    double *ag_send = xmalloc(g * sizeof(double)), *ag_recv = xmalloc(g * (size_t)P * sizeof(double));
    int64_t *bc = xmalloc(b * sizeof(int64_t));
    int root = P - 1;

    for (size_t i = 0; i < n; i++) ar[i] = (float)((R + 1) * (int)(i % 5 + 1));
    for (size_t i = 0; i < c; i++) avg[i] = bf16_from_float((float)((R + 1) * (int)(i % 5 + 1)));
    for (size_t j = 0; j < c * (size_t)P; j++) rs_send[j] = (int32_t)rs_input(R, j, 0);
    poison(rs_recv, COMM_INT32, c);
    for (size_t i = 0; i < g; i++) ag_send[i] = ag_value(R, i);
    poison(ag_recv, COMM_FLOAT64, g * (size_t)P);
    for (size_t i = 0; i < b; i++) bc[i] = R == root ? (int64_t)bc_expect(i, &root) : -1;

    comm_request_t reqs[5];
    reqs[0] = comm_iallreduce(W, ar, ar, n, COMM_FLOAT32, COMM_SUM);
    reqs[1] = comm_iallreduce(W, avg, avg, c, COMM_BF16, COMM_AVG); /* user MPI_Op + divide on wait */
    reqs[2] = comm_ireduce_scatter(W, rs_send, rs_recv, c, COMM_INT32, COMM_SUM);
    reqs[3] = comm_iallgather(W, ag_send, ag_recv, g, COMM_FLOAT64);
    reqs[4] = comm_ibroadcast(W, bc, b, COMM_INT64, root);

    /* Local work while the collectives are in flight. */
    volatile double acc = 0;
    for (int i = 1; i < 200000; i++) acc += 1.0 / i;
    int ok = acc > 1.0;

    comm_waitall(5, reqs);
    for (int k = 0; k < 5; k++) ok &= reqs[k] == COMM_REQUEST_NULL;
    ok &= check_buf("iallreduce float32 sum in place", ar, COMM_FLOAT32, n, sum_expect, NULL);
    ar_ctx avg_ctx = {COMM_AVG, COMM_BF16};
    for (size_t i = 0; i < c && ok; i++) {
        /* Inputs (r + 1) * s, not the permuted ones of ar_input, but the average is the same. */
        double want = ar_expect(i, &avg_ctx);
        if (float_from_bf16(avg[i]) != want) {
            fprintf(stderr, "rank %d: iallreduce bf16 avg element %zu is %g, expected %g\n", R, i,
                    float_from_bf16(avg[i]), want);
            ok = 0;
        }
    }
    rs_ctx rctx = {(size_t)R * c, 0};
    ok &= check_buf("ireduce_scatter int32", rs_recv, COMM_INT32, c, rs_expect, &rctx);
    ok &= check_buf("iallgather float64", ag_recv, COMM_FLOAT64, g * (size_t)P, ag_expect, &g);
    ok &= check_buf("ibroadcast int64", bc, COMM_INT64, b, bc_expect, &root);

    comm_request_t none = COMM_REQUEST_NULL;
    comm_wait(&none); /* returns at once */
    ok &= none == COMM_REQUEST_NULL;

    free(ar);
    free(avg);
    free(rs_send);
    free(rs_recv);
    free(ag_send);
    free(ag_recv);
    free(bc);
    ASSERT_ALL(ok);
}

/* A non-blocking collective returns before the other ranks have joined it: rank 0 starts each
 * one, then sends rank 1 a token that rank 1 waits for before it starts the collective itself.
 * A call that waited for the others would deadlock here (the broadcast's message is larger than
 * Open MPI's eager limit, so even its root would wait). */
static void test_nonblocking_collectives_do_not_wait(void **state) {
    (void)state;
    /* COMM_CHECK_ARGS makes each call agree with the other ranks first (comm.h says so) */
    if (P < 2 || comm_checks_args(W)) skip();
    enum { N = 1 << 16 };
    double *a = xmalloc(N * (size_t)P * sizeof(double)), *b = xmalloc(N * (size_t)P * sizeof(double));
    int ok = 1;
    for (int kind = 0; kind < 4; kind++) {
        for (size_t i = 0; i < N * (size_t)P; i++) a[i] = R + 1;
        int32_t token = 7;
        comm_request_t req = COMM_REQUEST_NULL;
        if (R == 1) comm_recv(W, &token, 1, COMM_INT32, 0);
        if (kind == 0) req = comm_iallreduce(W, a, b, N, COMM_FLOAT64, COMM_SUM);
        if (kind == 1) req = comm_ireduce_scatter(W, a, b, N, COMM_FLOAT64, COMM_SUM);
        if (kind == 2) req = comm_iallgather(W, a, b, N, COMM_FLOAT64);
        if (kind == 3) req = comm_ibroadcast(W, a, N, COMM_FLOAT64, 0);
        if (R == 0) comm_send(W, &token, 1, COMM_INT32, 1);
        comm_wait(&req);
        /* element 0 of each result: the sum over ranks, rank 0's block, rank 0's value */
        double want = kind < 2 ? P * (P + 1) / 2.0 : 1;
        if ((kind == 3 ? a[0] : b[0]) != want || token != 7) {
            fprintf(stderr, "rank %d: non-blocking collective %d gave %g, expected %g\n", R, kind,
                    kind == 3 ? a[0] : b[0], want);
            ok = 0;
        }
    }
    free(a);
    free(b);
    ASSERT_ALL(ok);
}

/* ------------------------------------------------------------------ split */

static void test_split_even_odd(void **state) {
    (void)state;
    int parity = R % 2;
    comm_t *half = comm_split(W, parity, R);
    int ok = half != NULL;
    int want_size = parity ? P / 2 : (P + 1) / 2;
    ok &= comm_size(half) == want_size && comm_rank(half) == R / 2;
    ok &= comm_backend(half) == COMM_BACKEND_MPI;

    /* Sum of (world rank + 1) over the ranks of my parity: k ranks p, p+2, ... */
    double mine = R + 1, total = 0, want = 0;
    for (int r = parity; r < P; r += 2) want += r + 1;
    comm_allreduce(half, &mine, &total, 1, COMM_FLOAT64, COMM_SUM);
    if (total != want) {
        fprintf(stderr, "rank %d: group allreduce gave %g, expected %g\n", R, total, want);
        ok = 0;
    }

    /* The group's rank 0 is world rank `parity`; its broadcast must reach only its group. */
    int32_t token = R == parity ? 100 + parity : -1;
    comm_broadcast(half, &token, 1, COMM_INT32, 0);
    ok &= token == 100 + parity;

    /* The average divides by the group's size, not the world's. */
    double avg = R + 1;
    comm_allreduce(half, &avg, &avg, 1, COMM_FLOAT64, COMM_AVG);
    if (avg != want / want_size) {
        fprintf(stderr, "rank %d: group average gave %g, expected %g\n", R, avg, want / want_size);
        ok = 0;
    }

    int32_t *ranks = xmalloc((size_t)want_size * sizeof(int32_t)), me = R;
    comm_allgather(half, &me, ranks, 1, COMM_INT32);
    for (int k = 0; k < want_size; k++) ok &= ranks[k] == parity + 2 * k;
    free(ranks);

    /* A key that reverses the order, and a group that leaves odd ranks out. */
    comm_t *rev = comm_split(W, 0, -R);
    ok &= comm_rank(rev) == P - 1 - R && comm_size(rev) == P;
    comm_t *evens = comm_split(W, parity ? COMM_SPLIT_NONE : 0, R);
    ok &= parity ? evens == NULL : (evens != NULL && comm_size(evens) == (P + 1) / 2);
    comm_free(evens);
    comm_free(rev);
    comm_free(half);
    ASSERT_ALL(ok);
}

/* Every color makes its own group (not only 0 and 1), ordered by key: color R % 3 with key
 * -R puts the group's highest world rank first. */
static void test_split_three_colors(void **state) {
    (void)state;
    int color = R % 3, want_size = 0, want_rank = 0;
    int64_t want_sum = 0;
    for (int r = color; r < P; r += 3) {
        want_size++;
        want_rank += r > R;
        want_sum += r;
    }
    comm_t *g = comm_split(W, color, -R);
    int ok = g != NULL && comm_size(g) == want_size && comm_rank(g) == want_rank;
    int64_t sum = R;
    comm_allreduce(g, &sum, &sum, 1, COMM_INT64, COMM_SUM);
    if (!ok || sum != want_sum) {
        fprintf(stderr, "rank %d: color %d: group rank %d of %d, sum of world ranks %lld; expected rank %d "
                "of %d, sum %lld\n", R, color, comm_rank(g), comm_size(g), (long long)sum, want_rank, want_size,
                (long long)want_sum);
        ok = 0;
    }
    comm_free(g);
    ASSERT_ALL(ok);
}

/* Nothing to move, nothing to touch: a count of 0 takes NULL buffers, and so does a rank's
 * empty block of a "v" collective (its own receive or send buffer), wherever the other buffer
 * is. A zero-length block overlaps nothing, so it may point anywhere, inside the large buffer
 * too. Counts r * 3 leave rank 0's block empty. */
static void test_zero_counts_and_empty_blocks(void **state) {
    (void)state;
    comm_allreduce(W, NULL, NULL, 0, COMM_FLOAT32, COMM_SUM);
    comm_reduce_scatter(W, NULL, NULL, 0, COMM_FLOAT32, COMM_SUM);
    comm_allgather(W, NULL, NULL, 0, COMM_FLOAT32);
    comm_broadcast(W, NULL, 0, COMM_FLOAT32, 0);
    comm_request_t req = comm_iallreduce(W, NULL, NULL, 0, COMM_INT32, COMM_AVG);
    comm_wait(&req);

    size_t *counts = xmalloc((size_t)P * sizeof(size_t));
    size_t n = make_counts(counts, 0, 1), off = 0, mine = counts[R];
    for (int r = 0; r < R; r++) off += counts[r];
    int ok = 1;
    for (int where = 0; where < 2; where++) { /* the empty block: NULL, or one element into the buffer */
        int32_t *send = xmalloc((n + 1) * sizeof(int32_t)), *recv = xmalloc((n + 1) * sizeof(int32_t));
        for (size_t j = 0; j < n; j++) send[j] = (int32_t)((R + 1) * (int)(j % 11 + 1));
        int32_t *empty_recv = where ? send + 1 : NULL, *empty_send = where ? recv + 1 : NULL;
        int32_t *rs_recv = mine ? recv : empty_recv;
        comm_reduce_scatterv(W, send, rs_recv, counts, COMM_INT32, COMM_SUM);
        ok &= check_buf("reduce_scatterv with an empty block", rs_recv, COMM_INT32, mine, rsv_expect, &off);
        for (size_t j = 0; j < mine; j++) send[j] = (int32_t)v_value(off + j);
        poison(recv, COMM_INT32, n);
        comm_allgatherv(W, mine ? send : empty_send, recv, counts, COMM_INT32);
        ok &= check_buf("allgatherv with an empty block", recv, COMM_INT32, n, v_expect_full, NULL);
        free(send);
        free(recv);
    }
    free(counts);
    ASSERT_ALL(ok);
}

/* ------------------------------------------------------------- NCCL bootstrap */

/* ncclGetUniqueId needs no GPU (it only opens the bootstrap socket on rank 0), so
 * the real id, not a made-up one, is broadcast and compared here. */
static void test_nccl_bootstrap_id(void **state) {
    (void)state;
    if (!comm_nccl_compiled()) skip();
    enum { B = COMM_NCCL_ID_BYTES };
    unsigned char id[B];
    memset(id, R + 1, sizeof id); /* differs per rank until the broadcast overwrites it */
    comm_nccl_bootstrap_id(W, id);
    unsigned char *all = xmalloc((size_t)P * B);
    MPI_Allgather(id, B, MPI_BYTE, all, B, MPI_BYTE, MPI_COMM_WORLD);
    int ok = 1;
    for (int r = 1; r < P; r++) ok &= memcmp(all, all + (size_t)r * B, B) == 0;
    int nonzero = 0;
    for (int k = 0; k < B; k++) nonzero |= id[k] != 0;
    ok &= nonzero;

    /* Inside split groups: one id per group, the same on its ranks, different across groups. */
    comm_t *half = comm_split(W, R % 2, R);
    unsigned char gid[B];
    memset(gid, 0, sizeof gid);
    comm_nccl_bootstrap_id(half, gid);
    MPI_Allgather(gid, B, MPI_BYTE, all, B, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < P; r++) {
        int same = memcmp(all + (size_t)(r % 2) * B, all + (size_t)r * B, B) == 0;
        ok &= same;
    }
    if (P >= 2) ok &= memcmp(all, all + B, B) != 0;
    comm_free(half);
    free(all);
    ASSERT_ALL(ok);
}

/* ----------------------------------------------------------- argument check */

/* comm_checks_args() follows COMM_CHECK_ARGS, on the world and on a split communicator: so the
 * suite's run with COMM_CHECK_ARGS=1 really checked every collective above (an environment that
 * did not reach the ranks would pass every test without checking anything). */
static void test_check_args_follows_environment(void **state) {
    (void)state;
    const char *v = getenv("COMM_CHECK_ARGS");
    int want = v && !strcmp(v, "1");
    comm_t *half = comm_split(W, R % 2, R);
    int ok = comm_checks_args(W) == want && comm_checks_args(half) == want;
    if (!ok)
        fprintf(stderr, "rank %d: COMM_CHECK_ARGS is '%s' but comm_checks_args gives %d (world), %d (split)\n",
                R, v ? v : "(unset)", comm_checks_args(W), comm_checks_args(half));
    comm_free(half);
    if (R == 0) printf("argument check (COMM_CHECK_ARGS): %s\n", want ? "on" : "off");
    ASSERT_ALL(ok);
}

/* cmocka calls the group teardown just before it prints the totals: silence them on
 * ranks other than 0 from there until cmocka returns. */
static int saved_stderr = -1;

static int silence_totals_on_other_ranks(void **state) {
    (void)state;
    if (R == 0) return 0;
    fflush(stderr);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull < 0) return 0;
    saved_stderr = dup(STDERR_FILENO);
    dup2(devnull, STDERR_FILENO);
    close(devnull);
    return 0;
}

static void restore_stderr(void) {
    if (saved_stderr < 0) return;
    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    saved_stderr = -1;
}

int main(int argc, char **argv) {
    comm_init(&argc, &argv);
    W = comm_world(COMM_BACKEND_MPI);
    R = comm_rank(W);
    P = comm_size(W);
    if (R != 0 && !freopen("/dev/null", "w", stdout)) {
        fprintf(stderr, "rank %d: cannot silence stdout\n", R);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_world),
        cmocka_unit_test(test_shard_range),
        cmocka_unit_test(test_allreduce_all_dtypes_ops_sizes),
        cmocka_unit_test(test_allreduce_in_place),
        cmocka_unit_test(test_allreduce_half_rounding),
        cmocka_unit_test(test_half_prod_and_avg_rounding),
        cmocka_unit_test(test_max_min_nan_and_signed_zero),
        cmocka_unit_test(test_integer_wrap_and_avg_truncation),
        cmocka_unit_test(test_half_sum_same_bits_on_every_rank),
        cmocka_unit_test(test_reduce_scatter),
        cmocka_unit_test(test_allgather),
        cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_allgatherv),
        cmocka_unit_test(test_reduce_scatterv),
        cmocka_unit_test(test_reduce_scatter_avg),
        cmocka_unit_test(test_barrier),
        cmocka_unit_test(test_send_recv_ring),
        cmocka_unit_test(test_sendrecv),
        cmocka_unit_test(test_sendrecv_counts_differ),
        cmocka_unit_test(test_isend_irecv),
        cmocka_unit_test(test_isend_before_irecv),
        cmocka_unit_test(test_adjacent_buffers_are_not_an_overlap),
        cmocka_unit_test(test_nonblocking_collectives),
        cmocka_unit_test(test_nonblocking_collectives_do_not_wait),
        cmocka_unit_test(test_split_even_odd),
        cmocka_unit_test(test_split_three_colors),
        cmocka_unit_test(test_zero_counts_and_empty_blocks),
        cmocka_unit_test(test_nccl_bootstrap_id),
        cmocka_unit_test(test_check_args_follows_environment),
    };
    int failed = cmocka_run_group_tests_name("comm", tests, NULL, silence_totals_on_other_ranks);
    restore_stderr();
    comm_finalize();
    return failed ? 1 : 0;
}
