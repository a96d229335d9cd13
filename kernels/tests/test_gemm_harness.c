/*
 * The matmul labs' harness (kernels/gemm_harness.h) against kernels that are
 * wrong on purpose. Each way of being wrong that gemm_check_case() promises
 * to catch must fail with its message (and name the element, the guard
 * index or the case), a right kernel must pass on odd shapes, in every input
 * precision and with every fill, and an error just inside the bound must
 * pass while one just outside fails. Then gemm_bench_main(): --sizes, the
 * --json rows, and the screen, which must call wrong a kernel that is
 * wrong, does nothing, or hands back an earlier run's result.
 *
 * Emulator only (TARGET=emu). Most of the kernels here are host functions
 * that read and write the device buffers directly, which a GPU forbids and
 * the emulator allows when asked (simt_host_access): that makes each
 * mistake one plain line. The few
 * that only a launch can show (a fault, a refused launch, a load in a guard
 * zone that reaches no element of C) are in gemm_harness_kernels.cu.
 *
 * gemm_check_case() fails through cmocka's fail_msg, and a fault spoils the
 * device for the rest of a process, so each case runs in a forked child
 * (common/tests/child.h) with a cmocka run of its own; the parent reads the
 * child's verdict and output. The parent makes no device call and runs no
 * OpenMP region: neither the emulator's threads nor OpenMP's survive fork.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gemm_harness.h"
#include "gpu.h"
#include "labcheck.h"
#include "half.h"
#include "lab.h"
#include "numerics.h"
#include "tests/child.h"

/* gemm_harness_kernels.cu */
int hk_naive(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C);
int hk_naive_unchecked(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C);
int hk_float4_a(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C);
int hk_float4_a_unchecked(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C);
int hk_past_a(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C);
int hk_before_b(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C);
int hk_past_c(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C);
int hk_uncoalesced(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C);
int hk_shared(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C);

/* ---- running a case in a child ---------------------------------------------- */

/* What the child runs, one cmocka test each (a second one runs after the
 * first fails): set before the fork, which copies them. */
static void (*child_body[2])(void);

static void child_test(void **state) {
    void (*const *body)(void) = *state;
    (*body)();
}

void simt_host_access(int on); /* the emulator's runtime (simt_abi.h) */

/* The child: a cmocka run of its own around child_body, whose fail_msg
 * ends the test that called it; the exit code is the count of failed
 * tests. */
static int child_run(void *arg) {
    (void)arg;
    const struct CMUnitTest t[] = {
        {"first", child_test, NULL, NULL, &child_body[0]},
        {"second", child_test, NULL, NULL, &child_body[1]},
    };
    /* As a check program runs its tests, so that lab_test_name is set. */
    return lab_run_tests("child", t, child_body[1] ? 2 : 1);
}

static child_result_t run_body(void (*body)(void)) {
    child_body[0] = body;
    child_body[1] = NULL;
    return run_in_child(child_run, NULL);
}

/* One gemm_check_case() call. */
typedef struct {
    gemm_kernel_t k;
    int M, N, K;
    float alpha, beta;
    gemm_input_t input;
    gemm_fill_t fill;
} case_t;

static case_t the_case;

static void check_the_case(void) {
    const case_t *c = &the_case;
    gemm_check_case(&c->k, c->M, c->N, c->K, c->alpha, c->beta, 77, c->input, c->fill);
}

static child_result_t run_case(case_t c) {
    the_case = c;
    return run_body(check_the_case);
}

static const char *child_status(const child_result_t *r, char *buf, size_t n) {
    if (r->exited) snprintf(buf, n, "exited with %d", r->exit_code);
    else snprintf(buf, n, "died on signal %d", r->signal);
    return buf;
}

/* cmocka cuts a message at about a kilobyte: the child's output goes to
 * stdout whole, before the failure that points at it, less the lines of
 * the child's cmocka run that start with '[' (its summary would add to the
 * counts a test runner takes from this program's output). */
static void show_child(const child_result_t *r) {
    char st[48];
    printf("--- the child %s; its output:\n", child_status(r, st, sizeof st));
    for (const char *p = r->out; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
        if (*p != '[') fwrite(p, 1, n, stdout);
        p += n;
    }
    printf("--- end of the child's output\n");
    fflush(stdout);
}

static void require_pass_at(const child_result_t *r, const char *what, int line) {
    if (!r->exited || r->exit_code != 0) {
        show_child(r);
        fail_msg("line %d, %s: should pass, but did not (its output is above)", line, what);
    }
}

/* texts: NULL-terminated; each must be in the child's output. */
static void require_fail_at(const child_result_t *r, const char *what, const char *const *texts, int line) {
    if (!r->exited || r->exit_code != 1) {
        show_child(r);
        fail_msg("line %d, %s: should fail its check, but did not (its output is above)", line, what);
    }
    for (; *texts; texts++)
        if (!strstr(r->out, *texts)) {
            show_child(r);
            fail_msg("line %d, %s: failed, but its output (above) lacks \"%s\"", line, what, *texts);
        }
}

#define REQUIRE_PASS(r, what) require_pass_at(&(r), (what), __LINE__)
#define REQUIRE_FAIL(r, what, ...) require_fail_at(&(r), (what), (const char *const[]){__VA_ARGS__, NULL}, __LINE__)
/* The output must not have this text. */
#define REQUIRE_NOT_IN(r, text)                                                                  \
    do {                                                                                         \
        if (strstr((r).out, (text))) {                                                           \
            show_child(&(r));                                                                    \
            fail_msg("line %d: the output (above) has \"%s\"", __LINE__, (text));                 \
        }                                                                                        \
    } while (0)

static void require_in_at(const child_result_t *r, const char *text, int line) {
    if (!strstr(r->out, text)) {
        show_child(r);
        fail_msg("line %d: the output (above) lacks \"%s\"", line, text);
    }
}
#define REQUIRE_IN(r, text) require_in_at(&(r), (text), __LINE__)

#define F32(fn) {#fn, fn, NULL}
#define BF16(fn) {#fn, NULL, fn}

/* ---- host kernels: right, and wrong in one way each -------------------------- */

/* Knobs of the host kernels, set by a test before its child runs. */
static struct {
    double near;       /* every element is moved this many of its bounds away from the exact value */
    double far;        /* ...except [far_i][far_j], moved this many */
    int far_i, far_j;
    double c;          /* the bound's c: 3 for fp32 inputs, 6 for tf32 and bf16 */
    long long at;      /* an index into C (h_writes_at) or into A or B (h_reads_at), from its start;
                          for b_wrong_on_calls, a bit per call (bit 1: the first) */
    float value;       /* what h_writes_at writes there */
    int operand;       /* 'A' or 'B': which one h_reads_at reads */
    gemm_fill_t fill;  /* what h_fill_probe expects to find */
    int status;        /* what h_status returns */
} knob;

/* alpha * (A B)_ij + beta * C_ij in double, the products summed in the
 * order k = 0, 1, ..., K - 1 as the harness's reference does, and the
 * bound's magnitude |alpha| (|A| |B|)_ij + |beta| |C_ij| in *mag. C is not
 * read when beta == 0. A and B are fp32 here (bf16 kernels widen first). */
static double exact_at(int N, int K, float alpha, const float *A, const float *B, float beta, const float *C,
                       int i, int j, double *mag) {
    double acc = 0.0, m = 0.0;
    for (int k = 0; k < K; k++) {
        double ab = (double)A[(size_t)i * K + k] * (double)B[(size_t)k * N + j];
        acc += ab;
        m += fabs(ab);
    }
    double c = beta != 0.0f ? (double)C[(size_t)i * N + j] : 0.0;
    if (mag) *mag = fabs((double)alpha) * m + fabs((double)beta * c);
    return (double)alpha * acc + (double)beta * c;
}

/* The exact value rounded once, plus the knob's bumps (none by default). */
static void exact_gemm(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    float *out = malloc((size_t)M * N * sizeof(float));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double mag, want = exact_at(N, K, alpha, A, B, beta, C, i, j, &mag);
            double times = i == knob.far_i && j == knob.far_j ? knob.far : knob.near;
            out[(size_t)i * N + j] = (float)(want + times * knob.c * K * EPS_FP32 * mag);
        }
    memcpy(C, out, (size_t)M * N * sizeof(float));
    free(out);
}

static float *widen_bf16(const uint16_t *x, size_t n) {
    float *f = malloc(n * sizeof(float));
    float_from_bf16_array(f, x, n);
    return f;
}

/* Right (with knob.near = knob.far = 0). */
static int h_exact(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    exact_gemm(M, N, K, alpha, A, B, beta, C);
    return LAB_OK;
}

/* The same on bf16 inputs. */
static int h_exact_bf16(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B, float beta,
                        float *C) {
    float *a = widen_bf16(A, (size_t)M * K), *b = widen_bf16(B, (size_t)K * N);
    exact_gemm(M, N, K, alpha, a, b, beta, C);
    free(a);
    free(b);
    return LAB_OK;
}

/* Refuses inputs that are not tf32 values (the low 13 bits of the
 * significand zero), else h_exact: proves the harness rounded them, and
 * to tf32. */
static int h_tf32_only(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    for (size_t i = 0; i < (size_t)M * K + (size_t)K * N; i++) {
        float x = i < (size_t)M * K ? A[i] : B[i - (size_t)M * K];
        uint32_t u;
        memcpy(&u, &x, sizeof u);
        if (u & 0x1fffu) {
            printf("h_tf32_only: input %zu is %.9g, not a tf32 value\n", i, x);
            return LAB_BAD_ARGUMENT;
        }
    }
    /* ...and not to something coarser (bf16 keeps 8 bits, tf32 11): among
     * 16 or more random inputs, some use the 3 bits bf16 has not. */
    int finer = 0;
    for (size_t i = 0; i < (size_t)M * K; i++) {
        uint32_t u;
        memcpy(&u, &A[i], sizeof u);
        finer |= (u & 0xe000u) != 0;
    }
    if (!finer && (size_t)M * K >= 16) {
        printf("h_tf32_only: every value of A is a bf16 value: rounded to bf16, not tf32?\n");
        return LAB_BAD_ARGUMENT;
    }
    return h_exact(M, N, K, alpha, A, B, beta, C);
}

/* Reads C even when beta == 0 (0 * NaN is NaN). */
static int h_reads_c(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = exact_at(N, K, alpha, A, B, 0.0f, C, i, j, NULL);
            C[(size_t)i * N + j] = (float)want + beta * C[(size_t)i * N + j];
        }
    return LAB_OK;
}

/* Right, except that C[1][2] is never written. */
static int h_skips_one(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    float keep = C[(size_t)1 * N + 2];
    exact_gemm(M, N, K, alpha, A, B, beta, C);
    C[(size_t)1 * N + 2] = keep;
    return LAB_OK;
}

/* Right, except that C[1][2] and C[3][4] are never written. */
static int h_skips_two(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    float keep = C[(size_t)3 * N + 4];
    h_skips_one(M, N, K, alpha, A, B, beta, C);
    C[(size_t)3 * N + 4] = keep;
    return LAB_OK;
}

/* Right, except that rows 8-15 of every 16 are off by 1 (a fragment's upper
 * half read from the wrong place shows so). */
static int h_stripe(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    exact_gemm(M, N, K, alpha, A, B, beta, C);
    for (int i = 0; i < M; i++)
        if (i % 16 >= 8)
            for (int j = 0; j < N; j++) C[(size_t)i * N + j] += 1.0f;
    return LAB_OK;
}

/* Takes NaN inputs for 0 (as a max(x, 0) or a zero-skip would). */
static int h_nan_as_zero(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    float *a = malloc((size_t)M * K * sizeof(float)), *b = malloc((size_t)K * N * sizeof(float));
    for (size_t i = 0; i < (size_t)M * K; i++) a[i] = isnan(A[i]) ? 0.0f : A[i];
    for (size_t i = 0; i < (size_t)K * N; i++) b[i] = isnan(B[i]) ? 0.0f : B[i];
    exact_gemm(M, N, K, alpha, a, b, beta, C);
    free(a);
    free(b);
    return LAB_OK;
}

/* Right, plus a NaN in the row below A's NaN row (M / 2 + 1), column 0. */
static int h_nan_too_wide(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    exact_gemm(M, N, K, alpha, A, B, beta, C);
    C[(size_t)(M / 2 + 1) * N] = NAN;
    return LAB_OK;
}

/* Right, then writes knob.value at C[knob.at] (outside C, in the tests). */
static int h_writes_at(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    exact_gemm(M, N, K, alpha, A, B, beta, C);
    C[knob.at] = knob.value;
    return LAB_OK;
}

/* Right, then adds A[knob.at] (or B's) into the last element of C. */
static int h_reads_at(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    exact_gemm(M, N, K, alpha, A, B, beta, C);
    C[(size_t)M * N - 1] += knob.operand == 'A' ? A[knob.at] : B[knob.at];
    return LAB_OK;
}

/* The same for a bf16 kernel. */
static int h_reads_at_bf16(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B, float beta,
                           float *C) {
    h_exact_bf16(M, N, K, alpha, A, B, beta, C);
    C[(size_t)M * N - 1] += float_from_bf16(knob.operand == 'A' ? A[knob.at] : B[knob.at]);
    return LAB_OK;
}

/* Returns knob.status and does nothing. */
static int h_status(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    (void)M; (void)N; (void)K; (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    return knob.status;
}

static int count_nan(const float *x, size_t n) {
    int c = 0;
    for (size_t i = 0; i < n; i++) c += isnan(x[i]) != 0;
    return c;
}

/* Whether A, B and C start where knob.fill promises: 16-byte aligned, or
 * one element past that for GEMM_FILL_MISALIGNED. esize: bytes of an
 * element of A and B. */
static int probe_alignment(const void *A, const void *B, const float *C, size_t esize) {
    const size_t off = knob.fill == GEMM_FILL_MISALIGNED;
    const size_t a = (uintptr_t)A % 16, b = (uintptr_t)B % 16, c = (uintptr_t)C % 16;
    if (a == off * esize && b == off * esize && c == off * sizeof(float)) return 1;
    printf("probe: A, B, C start %zu, %zu, %zu bytes past a 16-byte boundary\n", a, b, c);
    return 0;
}

/* Whether the values not NaN lie in [-1, 1), and, where there are 32 or
 * more of them, spread over it (some below -0.5, some above 0.5). */
static int probe_range(const char *what, const float *x, size_t n) {
    size_t finite = 0;
    float lo = 1.0f, hi = -1.0f;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i])) continue;
        if (!(x[i] >= -1.0f && x[i] < 1.0f)) {
            printf("probe: %s[%zu] = %g, outside [-1, 1)\n", what, i, x[i]);
            return 0;
        }
        finite++;
        lo = fminf(lo, x[i]);
        hi = fmaxf(hi, x[i]);
    }
    if (finite < 32 || (lo < -0.5f && hi > 0.5f)) return 1;
    printf("probe: %s spans only [%g, %g]\n", what, lo, hi);
    return 0;
}

/* Whether the NaNs in A, B and C are exactly where knob.fill puts them,
 * and the other values as random as promised. */
static int probe_values(int M, int N, int K, const float *A, const float *B, const float *C) {
    const size_t nA = (size_t)M * K, nB = (size_t)K * N, nC = (size_t)M * N;
    int nanA = count_nan(A, nA), nanB = count_nan(B, nB), nanC = count_nan(C, nC);
    int ok = 1;
    switch (knob.fill) {
    case GEMM_FILL_RANDOM:
    case GEMM_FILL_MISALIGNED: ok = nanA == 0 && nanB == 0 && nanC == 0; break;
    case GEMM_FILL_NAN_C:
        ok = nanA == 0 && nanB == 0 && nanC == (int)nC;
        for (size_t i = 0; ok && i < nC; i++) {
            uint32_t u;
            memcpy(&u, &C[i], sizeof u);
            ok = u == 0x7f80c0deu; /* a signalling NaN: arithmetic on it changes its bits */
        }
        break;
    case GEMM_FILL_NAN_ROW_COL:
        ok = nanA == 1 && nanB == 1 && nanC == 0 && isnan(A[(size_t)(M / 2) * K + K / 2]) &&
             isnan(B[(size_t)(K / 3) * N + N / 2]);
        break;
    case GEMM_FILL_NAN_ALL: ok = nanA == (int)nA && nanB == 0 && nanC == 0; break;
    }
    if (!ok) printf("probe: fill %d has %d NaN in A, %d in B, %d in C\n", (int)knob.fill, nanA, nanB, nanC);
    return ok && probe_range("A", A, nA) && probe_range("B", B, nB) && probe_range("C", C, nC);
}

/* Checks that A, B and C are what knob.fill promises, saying what is not
 * (LAB_BAD_ARGUMENT), else computes C right. */
static int h_fill_probe(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    if (!probe_alignment(A, B, C, sizeof(float)) || !probe_values(M, N, K, A, B, C)) return LAB_BAD_ARGUMENT;
    return h_exact(M, N, K, alpha, A, B, beta, C);
}

static int h_fill_probe_bf16(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B, float beta,
                             float *C) {
    float *a = widen_bf16(A, (size_t)M * K), *b = widen_bf16(B, (size_t)K * N);
    int ok = probe_alignment(A, B, C, sizeof(uint16_t)) && probe_values(M, N, K, a, b, C);
    free(a);
    free(b);
    return ok ? h_exact_bf16(M, N, K, alpha, A, B, beta, C) : LAB_BAD_ARGUMENT;
}

/* Prints the first element of A, B and C as it found them, then computes C right. */
static int h_print_inputs(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    printf("inputs A %a B %a C %a\n", A[0], B[0], C[0]);
    return h_exact(M, N, K, alpha, A, B, beta, C);
}

static void reset_knobs(void) {
    memset(&knob, 0, sizeof knob);
    knob.far_i = knob.far_j = -1;
    knob.c = 3.0;
}

static int setup_test(void **state) {
    (void)state;
    reset_knobs();
    return 0;
}

/* ---- gemm_check_case: right kernels pass ------------------------------------ */

static void test_right_kernel_passes(void **state) {
    (void)state;
    const int shapes[][3] = {{1, 1, 1}, {1, 7, 1}, {13, 1, 3}, {17, 31, 13}, {37, 5, 61}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        child_result_t r = run_case((case_t){F32(h_exact), M, N, K, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
        REQUIRE_PASS(r, "h_exact");
        r = run_case((case_t){F32(h_exact), M, N, K, -0.5f, 2.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
        REQUIRE_PASS(r, "h_exact, alpha -0.5, beta 2");
        r = run_case((case_t){BF16(h_exact_bf16), M, N, K, 1.0f, 0.0f, GEMM_INPUT_BF16, GEMM_FILL_RANDOM});
        REQUIRE_PASS(r, "h_exact_bf16");
        r = run_case((case_t){F32(h_tf32_only), M, N, K, 1.0f, 0.5f, GEMM_INPUT_TF32, GEMM_FILL_RANDOM});
        REQUIRE_PASS(r, "h_tf32_only on tf32 inputs");
    }
    /* The launched kernels too, on the emulator. */
    child_result_t r = run_case((case_t){F32(hk_naive), 33, 9, 20, 1.0f, 1.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_PASS(r, "hk_naive");
    r = run_case((case_t){F32(hk_uncoalesced), 40, 33, 20, 1.0f, 0.5f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_PASS(r, "hk_uncoalesced");
    r = run_case((case_t){F32(hk_shared), 40, 64, 20, 1.0f, 0.5f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_PASS(r, "hk_shared");
}

/* Every fill, as gemm_fill_t describes it, reaches the kernel; a right
 * kernel passes each, with beta 0 and not, fp32 and bf16. */
static void test_fills_are_as_promised(void **state) {
    (void)state;
    const gemm_fill_t fills[] = {GEMM_FILL_RANDOM, GEMM_FILL_NAN_C, GEMM_FILL_NAN_ROW_COL, GEMM_FILL_NAN_ALL,
                                 GEMM_FILL_MISALIGNED};
    for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
        knob.fill = fills[f];
        for (int b = 0; b < 2; b++) {
            float beta = b ? -1.5f : 0.0f;
            /* M and N even: row M / 2 and column N / 2 are not (M - 1) / 2 and (N - 1) / 2. */
            child_result_t r = run_case((case_t){F32(h_fill_probe), 10, 12, 7, 0.5f, beta, GEMM_INPUT_FP32, fills[f]});
            char what[64];
            snprintf(what, sizeof what, "fill %d, beta %g", (int)fills[f], beta);
            REQUIRE_PASS(r, what);
            r = run_case((case_t){BF16(h_fill_probe_bf16), 10, 12, 7, 0.5f, beta, GEMM_INPUT_BF16, fills[f]});
            REQUIRE_PASS(r, what);
        }
    }
    /* The misaligned fill is not the aligned one: the probe refuses it when told to expect alignment. */
    knob.fill = GEMM_FILL_RANDOM;
    child_result_t r = run_case((case_t){F32(h_fill_probe), 9, 11, 7, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_MISALIGNED});
    REQUIRE_FAIL(r, "probe expecting alignment", "4, 4, 4 bytes past a 16-byte boundary", "returned 'bad argument' (2)");
}

/* ---- the bound ------------------------------------------------------------- */

/* Each element 0.99 of its bound off passes; one 1.01 off fails, named.
 * c K u (|alpha||A||B| + |beta||C|)_ij, with c = 3 for fp32 inputs and 6
 * for tf32 and bf16 (check_gemm_bound in common/numerics.h). K = 128: the
 * final rounding to float moves an element by at most 1 / (c K) of its
 * bound (0.26%), well inside the 1% either side. */
static void check_bound(gemm_kernel_t k, gemm_input_t input, double c) {
    const int M = 6, N = 9, K = 128;
    knob.c = c;
    knob.near = 0.99;
    child_result_t r = run_case((case_t){k, M, N, K, -0.5f, 2.0f, input, GEMM_FILL_RANDOM});
    REQUIRE_PASS(r, "every element 0.99 of its bound off");
    knob.near = -0.99;
    r = run_case((case_t){k, M, N, K, 1.0f, 0.0f, input, GEMM_FILL_RANDOM});
    REQUIRE_PASS(r, "every element 0.99 of its bound off, below");
    knob.near = 0.5;
    knob.far = -1.01;
    knob.far_i = 4;
    knob.far_j = 7;
    r = run_case((case_t){k, M, N, K, -0.5f, 2.0f, input, GEMM_FILL_RANDOM});
    char head[160];
    snprintf(head, sizeof head, "%s: C = -0.5*A*B + 2*C, M=6 N=9 K=128 (%s inputs)", k.name,
             input == GEMM_INPUT_FP32 ? "fp32" : input == GEMM_INPUT_TF32 ? "tf32" : "bf16");
    REQUIRE_FAIL(r, "one element 1.01 of its bound off", head, "1 of 54 outside bound (0 non-finite); worst at [4][7]");
    /* Not "never written", not "every input is finite": the element was written, and nothing is NaN. */
    REQUIRE_NOT_IN(r, "never written");
    REQUIRE_NOT_IN(r, "every input is finite");
    REQUIRE_FAIL(r, "one element off", "SANITIZE=thread");
    /* The rerun hint is a whole command: the running test's name, and the lab
     * from the check program's folder (here none, so a placeholder). */
    REQUIRE_FAIL(r, "one element off, rerun", "make check LAB=NN TARGET=emu SANITIZE=thread ONLY='first'");
    lab_note_make_args("build/emu/solutions/02-shared-memory-tiling/check");
    r = run_case((case_t){k, M, N, K, -0.5f, 2.0f, input, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "one element off, rerun in lab 02",
                 "make check LAB=02 SRC=solutions TARGET=emu SANITIZE=thread ONLY='first'");
    lab_make_args[0] = '\0';
    lab_note_make_args("build/emu/labs/2-x/check"); /* not a lab's folder: left empty */
    if (lab_make_args[0]) fail_msg("lab_note_make_args took '%s' from a folder that names no lab", lab_make_args);
    reset_knobs();
}

static void test_bound_fp32(void **state) {
    (void)state;
    check_bound((gemm_kernel_t)F32(h_exact), GEMM_INPUT_FP32, 3.0);
}

static void test_bound_tf32(void **state) {
    (void)state;
    check_bound((gemm_kernel_t)F32(h_tf32_only), GEMM_INPUT_TF32, 6.0);
}

static void test_bound_bf16(void **state) {
    (void)state;
    check_bound((gemm_kernel_t)BF16(h_exact_bf16), GEMM_INPUT_BF16, 6.0);
}

/* ---- guards around C, A and B ---------------------------------------------- */

static void writes_at(int M, int N, long long at, float value, gemm_fill_t fill, const char *want) {
    knob.at = at;
    knob.value = value;
    child_result_t r = run_case((case_t){F32(h_writes_at), M, N, 5, 1.0f, 0.0f, GEMM_INPUT_FP32, fill});
    char what[96];
    snprintf(what, sizeof what, "a write at C[%lld] (fill %d)", at, (int)fill);
    REQUIRE_FAIL(r, what, want);
}

/* A write anywhere in the guard zones, NaN or not, is found and its index
 * named: one past the end, a whole row and 64 past it (a loop that runs to
 * row <= M, with a float4 overshoot), the element just before the start,
 * and a row and 64 before it. M = 3, N = 70: C has 210 elements, and its
 * guards (one row plus 64) are longer than a guard sized by M would be. */
static void test_writes_outside_c(void **state) {
    (void)state;
    const int M = 3, N = 70;
    writes_at(M, N, 210, 0.0f, GEMM_FILL_RANDOM,
              "h_writes_at: C = 1*A*B + 0*C, M=3 N=70 K=5 (fp32 inputs): wrote past the end of C, at C[210] "
              "(C has 210 elements)");
    writes_at(M, N, 210 + N + 63, 1.0f, GEMM_FILL_RANDOM, "wrote past the end of C, at C[343] (C has 210 elements)");
    writes_at(M, N, 210, NAN, GEMM_FILL_RANDOM, "wrote past the end of C, at C[210]");
    writes_at(M, N, -1, 0.0f, GEMM_FILL_RANDOM, "wrote before the start of C, at C[-1]");
    writes_at(M, N, -(N + 64), 2.0f, GEMM_FILL_RANDOM, "wrote before the start of C, at C[-134]");
    writes_at(M, N, -1, NAN, GEMM_FILL_RANDOM, "wrote before the start of C, at C[-1]");
    /* With C one element past the boundary, the element before it is still guarded. */
    writes_at(M, N, -1, 0.0f, GEMM_FILL_MISALIGNED, "wrote before the start of C, at C[-1]");
    writes_at(M, N, -(N + 64), 0.0f, GEMM_FILL_MISALIGNED, "wrote before the start of C, at C[-134]");
    writes_at(M, N, 210 + N + 63, 0.0f, GEMM_FILL_MISALIGNED, "wrote past the end of C, at C[343]");
    /* N = 64: the guards are exactly a row and 64, and these are their outermost elements. */
    writes_at(2, 64, 128 + 127, 0.0f, GEMM_FILL_RANDOM, "wrote past the end of C, at C[255] (C has 128 elements)");
    writes_at(2, 64, -128, 0.0f, GEMM_FILL_RANDOM, "wrote before the start of C, at C[-128]");
}

static void reads_at(gemm_kernel_t k, gemm_input_t input, int N, int K, int operand, long long at, gemm_fill_t fill) {
    const int M = 7;
    knob.operand = operand;
    knob.at = at;
    child_result_t r = run_case((case_t){k, M, N, K, 1.0f, 0.0f, input, fill});
    char what[96], report[96];
    snprintf(what, sizeof what, "%s reads %c[%lld] (N=%d K=%d, fill %d)", k.name, operand, at, N, K, (int)fill);
    snprintf(report, sizeof report, "1 of %d outside bound (1 non-finite); worst at [%d][%d]", M * N, M - 1, N - 1);
    /* The NaN names both places it can come from: a read outside A or B, and
     * shared memory read too early (a race, which the sanitizer names). */
    REQUIRE_FAIL(r, what, report, "every input is finite, so a NaN came from",
                 "or from a read past the end of A or B (NaN guard zones surround them)",
                 "SANITIZE=thread ONLY=");
}

/* A read past either end of A or B, as far as a whole row and 64 more,
 * brings NaN into C. K and N differ, so that a guard sized by the other
 * would be too short. */
static void test_reads_outside_a_b(void **state) {
    (void)state;
    const gemm_kernel_t f = F32(h_reads_at), h = BF16(h_reads_at_bf16);
    const gemm_fill_t fills[] = {GEMM_FILL_RANDOM, GEMM_FILL_MISALIGNED};
    const int shapes[][2] = {{10, 70}, {70, 10}}; /* N, K */
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 2; i++) {
            const int N = shapes[s][0], K = shapes[s][1], nA = 7 * K, nB = K * N;
            reads_at(f, GEMM_INPUT_FP32, N, K, 'A', nA, fills[i]);
            reads_at(f, GEMM_INPUT_FP32, N, K, 'A', nA + K + 63, fills[i]);
            reads_at(f, GEMM_INPUT_FP32, N, K, 'A', -1, fills[i]);
            reads_at(f, GEMM_INPUT_FP32, N, K, 'A', -(K + 64), fills[i]);
            reads_at(f, GEMM_INPUT_FP32, N, K, 'B', nB, fills[i]);
            reads_at(f, GEMM_INPUT_FP32, N, K, 'B', nB + N + 63, fills[i]);
            reads_at(f, GEMM_INPUT_FP32, N, K, 'B', -1, fills[i]);
            reads_at(f, GEMM_INPUT_FP32, N, K, 'B', -(N + 64), fills[i]);
            reads_at(h, GEMM_INPUT_BF16, N, K, 'A', nA + K + 63, fills[i]);
            reads_at(h, GEMM_INPUT_BF16, N, K, 'A', -(K + 64), fills[i]);
            reads_at(h, GEMM_INPUT_BF16, N, K, 'B', nB + N + 63, fills[i]);
            reads_at(h, GEMM_INPUT_BF16, N, K, 'B', -(N + 64), fills[i]);
        }
}

/* A load in a guard zone whose value reaches no element of C is stopped by
 * the emulator's watch on the zones, which names the matrix. */
static void test_guard_watch_names_the_matrix(void **state) {
    (void)state;
    child_result_t r = run_case((case_t){F32(hk_past_a), 16, 40, 8, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "hk_past_a", "hk_past_a returned 'launch failed' for M=16 N=40 K=8: the device reports",
                 "past the end of A (the M x K matrix)");
    r = run_case((case_t){F32(hk_before_b), 16, 40, 8, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_MISALIGNED});
    REQUIRE_FAIL(r, "hk_before_b", "hk_before_b returned 'launch failed' for M=16 N=40 K=8 (A, B and C one element "
                 "past a 16-byte boundary): the device reports", "before the start of B (the K x N matrix)");
    /* C too: with beta != 0 the last row's load a row further is stopped; with beta == 0 it is not made. */
    r = run_case((case_t){F32(hk_past_c), 16, 40, 8, 1.0f, 0.5f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "hk_past_c", "hk_past_c returned 'launch failed' for M=16 N=40 K=8: the device reports",
                 "past the end of C (the M x N matrix)");
    r = run_case((case_t){F32(hk_past_c), 16, 40, 8, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_PASS(r, "hk_past_c, beta 0");
}

/* ---- C with beta == 0, NaN inputs ------------------------------------------- */

static void test_beta_zero_c_not_read(void **state) {
    (void)state;
    child_result_t r = run_case((case_t){F32(h_exact), 5, 6, 7, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_NAN_C});
    REQUIRE_PASS(r, "h_exact, C NaN, beta 0");
    r = run_case((case_t){F32(h_reads_c), 5, 6, 7, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_NAN_C});
    REQUIRE_FAIL(r, "h_reads_c",
                 "h_reads_c: C = 1*A*B + 0*C, M=5 N=6 K=7 (fp32 inputs, C starts as NaN): C[0][0] is NaN: with "
                 "beta == 0 the old C (NaN here) must not be read");
    r = run_case((case_t){F32(h_skips_one), 5, 6, 7, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_NAN_C});
    REQUIRE_FAIL(r, "h_skips_one, C NaN", "C[1][2] was never written: it still holds the NaN C started with");
    /* With beta != 0 the NaN in C is read, and every element must be NaN. */
    r = run_case((case_t){F32(h_reads_c), 5, 6, 7, 1.0f, 1.0f, GEMM_INPUT_FP32, GEMM_FILL_NAN_C});
    REQUIRE_PASS(r, "h_reads_c, C NaN, beta 1");
    r = run_case((case_t){F32(h_skips_one), 5, 6, 7, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "h_skips_one", "1 of 30 outside bound (0 non-finite); worst at [1][2]",
                 "1 element(s) still hold the value C started with, first C[1][2]: never written?",
                 "Does the grid cover all of C");
    REQUIRE_NOT_IN(r, "SANITIZE=thread"); /* unwritten: the grid or the bounds test, not a race */
    r = run_case((case_t){F32(h_skips_two), 5, 6, 7, -1.0f, 0.5f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "h_skips_two", "2 of 30 outside bound (0 non-finite)",
                 "2 element(s) still hold the value C started with, first C[1][2]: never written?");
    /* Wrong in a stripe: the message says which rows of every 16. */
    r = run_case((case_t){F32(h_stripe), 40, 33, 7, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "h_stripe", "the wrong elements lie only in rows 8-15 and columns 0-15 of every 16");
    /* Everywhere wrong: no stripe to tell. */
    r = run_case((case_t){F32(h_skips_one), 5, 6, 7, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_NOT_IN(r, "the wrong elements lie only");
    /* With alpha = 0 every right element holds C's first value: only a wrong one that does is unwritten. */
    knob.far = 2.0;
    knob.far_i = 2;
    knob.far_j = 3;
    r = run_case((case_t){F32(h_exact), 5, 6, 7, 0.0f, 1.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "alpha 0, one element off", "1 of 30 outside bound (0 non-finite); worst at [2][3]");
    REQUIRE_NOT_IN(r, "never written");
    reset_knobs();
    /* Reading C with beta == 0 does no harm when C is finite: that is what the NaN fill is for. */
    r = run_case((case_t){F32(h_reads_c), 5, 6, 7, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_PASS(r, "h_reads_c, C random");
}

static void test_nan_inputs(void **state) {
    (void)state;
    const int M = 9, N = 8, K = 7; /* NaN at A[4][3] and B[2][4] */
    child_result_t r = run_case((case_t){F32(h_exact), M, N, K, 1.0f, 0.5f, GEMM_INPUT_FP32, GEMM_FILL_NAN_ROW_COL});
    REQUIRE_PASS(r, "h_exact, NaN row and column");
    r = run_case((case_t){F32(h_exact), M, N, K, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_NAN_ALL});
    REQUIRE_PASS(r, "h_exact, A all NaN");
    r = run_case((case_t){BF16(h_exact_bf16), M, N, K, 1.0f, 0.0f, GEMM_INPUT_BF16, GEMM_FILL_NAN_ROW_COL});
    REQUIRE_PASS(r, "h_exact_bf16, NaN row and column");
    /* The first element that should be NaN is row 0's in column N / 2. */
    r = run_case((case_t){F32(h_nan_as_zero), M, N, K, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_NAN_ROW_COL});
    REQUIRE_FAIL(r, "h_nan_as_zero, NaN row and column",
                 "h_nan_as_zero: C = 1*A*B + 0*C, M=9 N=8 K=7 (fp32 inputs, one NaN in A and one in B): C[0][4] = ",
                 "but must be NaN (a NaN input reaches it");
    r = run_case((case_t){F32(h_nan_as_zero), M, N, K, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_NAN_ALL});
    REQUIRE_FAIL(r, "h_nan_as_zero, A all NaN", "(fp32 inputs, A all NaN): C[0][0] = 0 but must be NaN");
    r = run_case((case_t){F32(h_nan_too_wide), M, N, K, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_NAN_ROW_COL});
    REQUIRE_FAIL(r, "h_nan_too_wide", "1 of 72 outside bound (1 non-finite); worst at [5][0]");
    /* The inputs hold NaN: the message must not claim they are all finite, and a NaN is not a race. */
    REQUIRE_NOT_IN(r, "every input is finite");
    REQUIRE_NOT_IN(r, "SANITIZE=thread");
}

/* ---- status codes, faults, refused launches ---------------------------------- */

static void test_status_codes(void **state) {
    (void)state;
    knob.status = LAB_NOT_IMPLEMENTED;
    child_result_t r = run_case((case_t){F32(h_status), 3, 4, 5, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "LAB_NOT_IMPLEMENTED", "not implemented: h_status still has its TODO (see the lab's README)");
    knob.status = LAB_BAD_ARGUMENT;
    r = run_case((case_t){F32(h_status), 3, 4, 5, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "LAB_BAD_ARGUMENT", "h_status returned 'bad argument' (2) for M=3 N=4 K=5");
    knob.status = 42;
    r = run_case((case_t){F32(h_status), 3, 4, 5, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "status 42", "h_status returned 'unknown status' (42) for M=3 N=4 K=5");
    knob.status = LAB_LAUNCH_FAILED; /* with nothing launched: the device has no fault to report */
    r = run_case((case_t){F32(h_status), 3, 4, 5, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_NAN_C});
    REQUIRE_FAIL(r, "LAB_LAUNCH_FAILED", "h_status returned 'launch failed' for M=3 N=4 K=5 (C starts as NaN) and the "
                 "device reports no fault: either the launch was refused");
}

/* Refuse the launch of the next kernel, then run it (the emulator's hook). */
static int refused_checked(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    gpu_refuse_next_launch(1);
    return hk_naive(M, N, K, alpha, A, B, beta, C);
}

static int refused_unchecked(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                             float *C) {
    gpu_refuse_next_launch(1);
    return hk_naive_unchecked(M, N, K, alpha, A, B, beta, C);
}

static void test_faults_and_refusals(void **state) {
    (void)state;
    /* float4 loads of an aligned A are fine; of a misaligned one they fault. */
    child_result_t r = run_case((case_t){F32(hk_float4_a), 16, 40, 8, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_PASS(r, "hk_float4_a, aligned");
    r = run_case((case_t){F32(hk_float4_a), 16, 40, 8, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_MISALIGNED});
    REQUIRE_FAIL(r, "hk_float4_a, misaligned",
                 "hk_float4_a returned 'launch failed' for M=16 N=40 K=8 (A, B and C one element past a 16-byte "
                 "boundary): the device reports", "misaligned");
    r = run_case((case_t){F32(hk_float4_a_unchecked), 16, 40, 8, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_MISALIGNED});
    REQUIRE_FAIL(r, "hk_float4_a_unchecked, misaligned",
                 "hk_float4_a_unchecked faulted while running for M=16 N=40 K=8 (A, B and C one element past a "
                 "16-byte boundary): the device reports", "misaligned");
    r = run_case((case_t){F32(refused_unchecked), 6, 5, 4, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "refused_unchecked", "refused_unchecked returned LAB_OK for M=6 N=5 K=4, but its launch was "
                 "refused: ", "return LAB_LAUNCH_FAILED");
    r = run_case((case_t){F32(refused_checked), 6, 5, 4, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "refused_checked", "refused_checked returned 'launch failed' for M=6 N=5 K=4 and the device "
                 "reports no fault");
}

static void misaligned_float4_case(void) {
    const gemm_kernel_t k = F32(hk_float4_a);
    gemm_check_case(&k, 16, 40, 8, 1.0f, 0.0f, 1, GEMM_INPUT_FP32, GEMM_FILL_MISALIGNED);
}

static void right_case(void) {
    const gemm_kernel_t k = F32(h_exact);
    gemm_check_case(&k, 4, 4, 4, 1.0f, 0.0f, 2, GEMM_INPUT_FP32, GEMM_FILL_RANDOM);
}

/* After a fault every device call fails until the process ends: the next
 * case, even of a right kernel, is not run, and says why. */
static void test_case_after_a_fault(void **state) {
    (void)state;
    child_body[0] = misaligned_float4_case;
    child_body[1] = right_case;
    child_result_t r = run_in_child(child_run, NULL);
    if (!r.exited || r.exit_code != 2 ||
        !strstr(r.out, "h_exact, M=4 N=4 K=4: not run, because the device has reported") ||
        !strstr(r.out, "a fault in a kernel is sticky and fails every later call, so fix the first failure")) {
        show_child(&r);
        fail_msg("both cases should fail, the second as not run (the child's output is above)");
    }
}

static void shape_fp32_probe(void) {
    gemm_check_shape(h_fill_probe, "h_fill_probe", 10, 12, 9, 1.0f, 0.5f, 3, GEMM_INPUT_FP32);
}

static void shape_bf16_probe(void) {
    gemm_check_shape_bf16(h_fill_probe_bf16, "h_fill_probe_bf16", 10, 12, 9, 1.0f, 0.5f, 3);
}

static void shape_tf32(void) {
    gemm_check_shape(h_tf32_only, "h_tf32_only", 10, 12, 9, 1.0f, 0.5f, 3, GEMM_INPUT_TF32);
}

static void shape_tf32_kernel_fp32_inputs(void) {
    gemm_check_shape(h_tf32_only, "h_tf32_only", 10, 12, 9, 1.0f, 0.5f, 3, GEMM_INPUT_FP32);
}

/* gemm_check_shape() and gemm_check_shape_bf16(): random inputs (aligned,
 * no NaN), rounded as asked. */
static void test_check_shape(void **state) {
    (void)state;
    knob.fill = GEMM_FILL_RANDOM;
    child_result_t r = run_body(shape_fp32_probe);
    REQUIRE_PASS(r, "gemm_check_shape, fp32");
    r = run_body(shape_bf16_probe);
    REQUIRE_PASS(r, "gemm_check_shape_bf16");
    r = run_body(shape_tf32);
    REQUIRE_PASS(r, "gemm_check_shape, tf32");
    r = run_body(shape_tf32_kernel_fp32_inputs);
    REQUIRE_FAIL(r, "gemm_check_shape, fp32 inputs to a tf32-only kernel", "not a tf32 value",
                 "h_tf32_only returned 'bad argument' (2) for M=10 N=12 K=9");
}

static void seed3_k5(void) { gemm_check_shape(h_print_inputs, "h_print_inputs", 4, 6, 5, 1.0f, 1.0f, 3, GEMM_INPUT_FP32); }
static void seed3_k9(void) { gemm_check_shape(h_print_inputs, "h_print_inputs", 4, 6, 9, 1.0f, 1.0f, 3, GEMM_INPUT_FP32); }
static void seed4_k5(void) { gemm_check_shape(h_print_inputs, "h_print_inputs", 4, 6, 5, 1.0f, 1.0f, 4, GEMM_INPUT_FP32); }

/* The first element of A, B and C from a child of h_print_inputs. */
static void first_inputs(const child_result_t *r, char out[3][40]) {
    const char *p = strstr(r->out, "inputs A ");
    if (!p || sscanf(p, "inputs A %39s B %39s C %39s", out[0], out[1], out[2]) != 3) {
        show_child(r);
        fail_msg("no inputs line in the output above");
    }
}

/* The seed decides the inputs; A, B and C are drawn from streams of their
 * own, so a shape's K does not change its C (and A is not B). */
static void test_seed_and_streams(void **state) {
    (void)state;
    char a[3][40], b[3][40], c[3][40];
    child_result_t r = run_body(seed3_k5);
    REQUIRE_PASS(r, "seed 3, K 5");
    first_inputs(&r, a);
    r = run_body(seed3_k9);
    REQUIRE_PASS(r, "seed 3, K 9");
    first_inputs(&r, b);
    r = run_body(seed4_k5);
    REQUIRE_PASS(r, "seed 4, K 5");
    first_inputs(&r, c);
    assert_string_not_equal(a[0], a[1]);  /* A, B and C differ */
    assert_string_not_equal(a[0], a[2]);
    assert_string_not_equal(a[1], a[2]);
    assert_string_equal(a[2], b[2]);      /* C does not depend on K */
    assert_string_not_equal(a[0], c[0]);  /* another seed, other inputs */
    assert_string_not_equal(a[2], c[2]);
}

/* Argument mistakes of a check.c. */
static void shape_bf16_through_f32(void) {
    gemm_check_shape(h_exact, "h_exact", 2, 2, 2, 1.0f, 0.0f, 1, GEMM_INPUT_BF16);
}

static void test_refused_arguments(void **state) {
    (void)state;
    child_result_t r = run_case((case_t){F32(h_exact), 0, 4, 5, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "M = 0", "gemm_check_case: sizes must be >= 1, got 0x4x5");
    r = run_case((case_t){F32(h_exact), 3, 4, 0, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "K = 0", "gemm_check_case: sizes must be >= 1, got 3x4x0");
    r = run_case((case_t){F32(h_exact), 3, 4, 5, 1.0f, 0.0f, GEMM_INPUT_BF16, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "fp32 kernel, bf16 inputs", "gemm_check_case: bf16 needs a bf16 kernel");
    r = run_case((case_t){BF16(h_exact_bf16), 3, 4, 5, 1.0f, 0.0f, GEMM_INPUT_TF32, GEMM_FILL_RANDOM});
    REQUIRE_FAIL(r, "bf16 kernel, tf32 inputs", "gemm_check_case: tf32 needs a fp32 kernel");
    r = run_body(shape_bf16_through_f32);
    REQUIRE_FAIL(r, "gemm_check_shape with bf16", "gemm_check_shape: bf16 inputs need gemm_check_shape_bf16");
}

/* ---- gemm_bench_main -------------------------------------------------------- */

/* The bench's kernels print a line per call, so the test can count the
 * calls and see each one's shape. */
static void say_call(const char *name, int M, int N, int K) {
    printf("call %s %dx%dx%d\n", name, M, N, K);
}

static int b_exact(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    say_call("b_exact", M, N, K);
    return h_exact(M, N, K, alpha, A, B, beta, C);
}

/* Returns at once: C keeps whatever it held. */
static int b_lazy(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    say_call("b_lazy", M, N, K);
    return LAB_OK;
}

/* Right on its first call; from then on it hands back that first result. */
static int b_memo(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    static float *saved;
    say_call("b_memo", M, N, K);
    if (saved) {
        memcpy(C, saved, (size_t)M * N * sizeof(float));
        return LAB_OK;
    }
    h_exact(M, N, K, alpha, A, B, beta, C);
    saved = malloc((size_t)M * N * sizeof(float));
    memcpy(saved, C, (size_t)M * N * sizeof(float));
    return LAB_OK;
}

/* Right, except on the calls whose bits are set in knob.at (bit 1: the
 * first call, the warm-up), where rows knob.far_i to knob.far_j are off
 * by 1. */
static int b_wrong_on_calls(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    static int calls;
    calls++;
    say_call("b_wrong_on_calls", M, N, K);
    h_exact(M, N, K, alpha, A, B, beta, C);
    if (knob.at >> calls & 1)
        for (int i = knob.far_i; i <= knob.far_j; i++)
            for (int j = 0; j < N; j++) C[(size_t)i * N + j] += 1.0f;
    return LAB_OK;
}

/* Returns at once on its first call (the warm-up), right on the others. */
static int b_lazy_once(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    static int calls;
    say_call("b_lazy_once", M, N, K);
    if (calls++ == 0) return LAB_OK;
    return h_exact(M, N, K, alpha, A, B, beta, C);
}

/* Right, every element off by knob.far of itself. */
static int b_scaled(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    say_call("b_scaled", M, N, K);
    float *out = malloc((size_t)M * N * sizeof(float));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            out[(size_t)i * N + j] = (float)((1.0 + knob.far) * exact_at(N, K, alpha, A, B, beta, C, i, j, NULL));
    memcpy(C, out, (size_t)M * N * sizeof(float));
    free(out);
    return LAB_OK;
}

/* Right, and slow on the timed runs of --reps 3: 1, 20 and 200 ms
 * (calls 2, 3 and 4), so that their median is 20 ms and their mean 74. */
static int b_sleepy(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    static int calls;
    calls++;
    say_call("b_sleepy", M, N, K);
    usleep(calls == 2 ? 1000 : calls == 3 ? 20000 : calls == 4 ? 200000 : 0);
    return h_exact(M, N, K, alpha, A, B, beta, C);
}

/* Right, except for an infinity in C[0][0] (an overflow, a division by 0). */
static int b_inf(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    say_call("b_inf", M, N, K);
    h_exact(M, N, K, alpha, A, B, beta, C);
    C[0] = INFINITY;
    return LAB_OK;
}

static int b_todo(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    say_call("b_todo", M, N, K);
    return LAB_NOT_IMPLEMENTED;
}

static int b_bad(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    say_call("b_bad", M, N, K);
    return LAB_BAD_ARGUMENT;
}

static int b16_exact(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B, float beta, float *C) {
    say_call("b16_exact", M, N, K);
    return h_exact_bf16(M, N, K, alpha, A, B, beta, C);
}

static int b16_memo(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B, float beta, float *C) {
    static float *saved;
    say_call("b16_memo", M, N, K);
    if (saved) {
        memcpy(C, saved, (size_t)M * N * sizeof(float));
        return LAB_OK;
    }
    h_exact_bf16(M, N, K, alpha, A, B, beta, C);
    saved = malloc((size_t)M * N * sizeof(float));
    memcpy(saved, C, (size_t)M * N * sizeof(float));
    return LAB_OK;
}

/* One gemm_bench_main() run: its flags (after the program's name) and its ladder. */
static struct {
    const char *argv[16];
    int argc;
    gemm_kernel_t k[8];
    int n;
} bench;

static int bench_child(void *arg) {
    (void)arg;
    return gemm_bench_main("TT", "the harness's own test", bench.k, bench.n, bench.argc, (char **)bench.argv);
}

/* Runs the bench with the flags (a NULL-terminated list) on the ladder. */
static child_result_t run_bench(const char *const *flags, const gemm_kernel_t *k, int n) {
    bench.argc = 0;
    bench.argv[bench.argc++] = "bench";
    for (; *flags; flags++) bench.argv[bench.argc++] = *flags;
    bench.argv[bench.argc] = NULL;
    memcpy(bench.k, k, (size_t)n * sizeof *k);
    bench.n = n;
    child_result_t r = run_in_child(bench_child, NULL);
    if (strlen(r.out) == sizeof r.out - 1) fail_msg("the bench's output is longer than the %zu bytes kept", sizeof r.out - 1);
    return r;
}

#define RUN_BENCH(k, ...) run_bench((const char *const[]){__VA_ARGS__, NULL}, (k), (int)(sizeof(k) / sizeof((k)[0])))

static int count_text(const char *s, const char *text) {
    int n = 0;
    for (const char *p = strstr(s, text); p; p = strstr(p + 1, text)) n++;
    return n;
}

static void require_exit_at(const child_result_t *r, int code, const char *what, int line) {
    if (!r->exited || r->exit_code != code) {
        show_child(r);
        fail_msg("line %d, %s: the bench should exit with %d (its output is above)", line, what, code);
    }
}
#define REQUIRE_EXIT(r, code, what) require_exit_at(&(r), (code), (what), __LINE__)

/* A file name for --json, in TMPDIR. */
static char json_file[512];

static int setup_json(void **state) {
    setup_test(state);
    const char *base = getenv("TMPDIR");
    snprintf(json_file, sizeof json_file, "%s/test_gemm_harness_XXXXXX", base && *base ? base : P_tmpdir);
    int fd = mkstemp(json_file);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

static int teardown_json(void **state) {
    (void)state;
    remove(json_file);
    return 0;
}

static json_t *load_json(const child_result_t *r) {
    json_error_t e;
    json_t *j = json_load_file(json_file, 0, &e);
    if (!j) {
        show_child(r);
        fail_msg("--json wrote no valid JSON: %s, line %d", e.text, e.line);
    }
    return j;
}

/* The row of kernel name at size M x N x K. */
static json_t *json_row(json_t *j, const char *name, int M, int N, int K) {
    json_t *rows = json_object_get(j, "results"), *row;
    size_t i;
    json_array_foreach(rows, i, row) {
        if (!strcmp(json_string_value(json_object_get(row, "kernel")), name) &&
            json_integer_value(json_object_get(row, "M")) == M && json_integer_value(json_object_get(row, "N")) == N &&
            json_integer_value(json_object_get(row, "K")) == K)
            return row;
    }
    fail_msg("no JSON row for %s at %dx%dx%d", name, M, N, K);
    return NULL;
}

static const char *row_status(json_t *j, const char *name, int M, int N, int K) {
    return json_string_value(json_object_get(json_row(j, name, M, N, K), "status"));
}

static void test_bench_sizes_refused(void **state) {
    (void)state;
    const gemm_kernel_t k[] = {F32(b_exact)};
    const char *bad[] = {"", "0", "65537", "8x8", "8x8x8x8", "8,,8", ",8", "8;8", "abc", "8.5", "-8", "8x0x8",
                         "x8", "8x", "99999999999999999999",
                         "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        child_result_t r = RUN_BENCH(k, "--sizes", bad[i]);
        char want[400];
        snprintf(want, sizeof want, "bench: --sizes '%s' is not a list like 1024,2048 or 512x256x128 (each "
                 "dimension 1..65536, at most 32 entries)", bad[i]);
        REQUIRE_EXIT(r, 2, bad[i]);
        REQUIRE_IN(r, want);
        assert_null(strstr(r.out, "call "));
    }
    /* Past the emulator's limit of M*N*K = 1024^3: refused before anything runs, with the estimate. */
    child_result_t r = RUN_BENCH(k, "--sizes", "16,1025x1024x1024");
    REQUIRE_EXIT(r, 2, "1025x1024x1024");
    REQUIRE_IN(r, "bench: 1025x1024x1024 is too large for the emulator: M*N*K is 1.07e+09, over its limit of 1024^3");
    assert_null(strstr(r.out, "call "));
    /* 1024^3 itself is allowed (a TODO kernel, so nothing is timed). */
    const gemm_kernel_t todo[] = {F32(b_todo)};
    r = RUN_BENCH(todo, "--sizes", "1024", "--reps", "1");
    REQUIRE_EXIT(r, 0, "1024^3");
    REQUIRE_IN(r, "call b_todo 1024x1024x1024\n");
    /* A --json file that cannot be written costs no run either. */
    char path[600];
    snprintf(path, sizeof path, "%s.d/rows.json", json_file);
    r = RUN_BENCH(k, "--sizes", "8", "--json", path);
    REQUIRE_EXIT(r, 2, "--json in a missing folder");
    REQUIRE_IN(r, "bench: ");
    REQUIRE_IN(r, path);
    assert_null(strstr(r.out, "call "));
}

/* Square and M x N x K entries, 32 of them, each size run warm-up + reps +
 * one traced time, in the order given, at the size given. */
static void test_bench_sizes_accepted(void **state) {
    (void)state;
    const gemm_kernel_t k[] = {F32(b_exact)};
    child_result_t r = RUN_BENCH(k, "--sizes", "3x5x7,4", "--reps", "2", "--json", json_file);
    REQUIRE_EXIT(r, 0, "3x5x7,4");
    const char *p = r.out;
    for (int i = 0; i < 8; i++) {
        const char *want = i < 4 ? "call b_exact 3x5x7\n" : "call b_exact 4x4x4\n";
        p = strstr(p, "call ");
        if (!p || strncmp(p, want, strlen(want))) {
            show_child(&r);
            fail_msg("call %d of 8 should be \"%.*s\"", i + 1, (int)strlen(want) - 1, want);
        }
        p++;
    }
    assert_int_equal(count_text(r.out, "call "), 8);
    json_t *j = load_json(&r);
    assert_int_equal(json_array_size(json_object_get(j, "results")), 2);
    assert_string_equal(row_status(j, "b_exact", 3, 5, 7), "ok");
    assert_string_equal(row_status(j, "b_exact", 4, 4, 4), "ok");
    assert_int_equal(json_integer_value(json_object_get(j, "reps")), 2);
    json_decref(j);
    r = RUN_BENCH(k, "--sizes", "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2", "--reps", "1");
    REQUIRE_EXIT(r, 0, "32 sizes");
    assert_int_equal(count_text(r.out, "call b_exact 1x1x1\n"), 31 * 3);
    assert_int_equal(count_text(r.out, "call b_exact 2x2x2\n"), 3);
}

/* Without flags: 128^3 under the emulator, 3 repetitions after 1 warm-up. */
static void test_bench_defaults(void **state) {
    (void)state;
    const gemm_kernel_t k[] = {F32(b_exact)};
    child_result_t r = RUN_BENCH(k, "--json", json_file);
    REQUIRE_EXIT(r, 0, "no flags");
    assert_int_equal(count_text(r.out, "call b_exact 128x128x128\n"), 1 + 3 + 1);
    assert_int_equal(count_text(r.out, "call "), 5);
    json_t *j = load_json(&r);
    assert_int_equal(json_integer_value(json_object_get(j, "reps")), 3);
    assert_string_equal(row_status(j, "b_exact", 128, 128, 128), "ok");
    json_decref(j);
}

/* Two runs in one process: the second starts from the defaults, not from the
 * first run's flags (they were statics once: a second call without --json
 * wrote the first call's file again, with the first call's repetitions). */
static int bench_twice_child(void *arg) {
    (void)arg;
    const gemm_kernel_t k[] = {F32(b_exact)};
    char *first[] = {"bench", "--sizes", "4", "--reps", "7", "--json", json_file, NULL};
    char *second[] = {"bench", "--sizes", "5", NULL};
    int rc = gemm_bench_main("TT", "the harness's own test", k, 1, 7, first);
    if (rc != 0 || remove(json_file) != 0) return 10 + rc;
    rc = gemm_bench_main("TT", "the harness's own test", k, 1, 3, second);
    return access(json_file, F_OK) == 0 ? 20 : rc;
}

static void test_bench_called_twice(void **state) {
    (void)state;
    child_result_t r = run_in_child(bench_twice_child, NULL);
    if (!r.exited || r.exit_code != 0) {
        show_child(&r);
        fail_msg("exit %d: 1x is the first run failing, 20 the second writing the first run's --json file",
                 r.exit_code);
    }
    assert_int_equal(count_text(r.out, "call b_exact 4x4x4\n"), 1 + 7 + 1);
    assert_int_equal(count_text(r.out, "call b_exact 5x5x5\n"), 1 + 3 + 1);
}

/* Every field of --json, for each kind of row, and the table's status column. */
static void test_bench_json_rows(void **state) {
    (void)state;
    const gemm_kernel_t k[] = {F32(b_exact), F32(b_todo), F32(b_bad), F32(b_lazy), F32(b_inf)};
    child_result_t r = RUN_BENCH(k, "--sizes", "9x6x5", "--reps", "2", "--json", json_file);
    REQUIRE_EXIT(r, 1, "a ladder with failed and wrong kernels");
    REQUIRE_IN(r, "not implemented (TODO)");
    REQUIRE_IN(r, "bad argument");
    assert_int_equal(count_text(r.out, "WRONG"), 2);
    json_t *j = load_json(&r);
    assert_string_equal(json_string_value(json_object_get(j, "lab")), "TT");
    assert_true(json_is_string(json_object_get(j, "device")));
    assert_true(json_is_true(json_object_get(j, "emulator")));
    assert_int_equal(json_integer_value(json_object_get(j, "reps")), 2);
    assert_true(json_is_null(json_object_get(j, "baseline")));
    assert_true(json_is_null(json_object_get(j, "baseline_version"))); /* no cuBLAS under the emulator */
    assert_int_equal(json_array_size(json_object_get(j, "results")), 5);
    json_t *ok = json_row(j, "b_exact", 9, 6, 5);
    assert_string_equal(json_string_value(json_object_get(ok, "status")), "ok");
    assert_true(json_number_value(json_object_get(ok, "ms")) > 0);
    assert_true(json_number_value(json_object_get(ok, "tflops")) > 0);
    assert_true(json_is_null(json_object_get(ok, "baseline_ms")));
    assert_true(json_is_null(json_object_get(ok, "ratio")));
    assert_true(json_is_number(json_object_get(ok, "err")));
    assert_true(json_number_value(json_object_get(ok, "err")) < 1e-6);
    /* b_lazy leaves C NaN (err NaN), b_inf writes an infinity (err inf): null, not nan or inf, which no
     * JSON parser reads. */
    const char *names[] = {"b_todo", "b_bad", "b_lazy", "b_inf"};
    const char *status[] = {"not implemented", "failed", "wrong", "wrong"};
    for (int i = 0; i < 4; i++) {
        json_t *row = json_row(j, names[i], 9, 6, 5);
        assert_string_equal(json_string_value(json_object_get(row, "status")), status[i]);
        /* No measure of a kernel that did not run, and no number for an error that is not one. */
        assert_true(json_is_null(json_object_get(row, "err")));
        assert_true(json_is_null(json_object_get(row, "baseline_ms")));
        assert_true(json_is_null(json_object_get(row, "ratio")));
        if (i < 2) assert_true(json_is_null(json_object_get(row, "ms")) && json_is_null(json_object_get(row, "tflops")));
        else assert_true(json_number_value(json_object_get(row, "ms")) > 0);
    }
    json_decref(j);
    /* A kernel that fails alone makes the exit status 1. */
    const gemm_kernel_t bad_alone[] = {F32(b_exact), F32(b_bad)};
    r = RUN_BENCH(bad_alone, "--sizes", "4", "--reps", "1");
    REQUIRE_EXIT(r, 1, "a right kernel and a failing one");
    /* A kernel still marked TODO fails nothing: the rest of the ladder runs, and the exit status is 0. */
    const gemm_kernel_t todo_first[] = {F32(b_todo), F32(b_exact)};
    r = RUN_BENCH(todo_first, "--sizes", "4", "--reps", "1");
    REQUIRE_EXIT(r, 0, "TODO, then a right kernel");
    assert_int_equal(count_text(r.out, "call b_exact 4x4x4\n"), 3);
}

/* The screen: a kernel that hands back an earlier run's result, or is
 * wrong only on some runs, or in one row, is WRONG. */
static void test_bench_screen(void **state) {
    (void)state;
    const gemm_kernel_t memo[] = {F32(b_exact), F32(b_memo), BF16(b16_exact), BF16(b16_memo)};
    child_result_t r = RUN_BENCH(memo, "--sizes", "12x10x8", "--reps", "3", "--json", json_file);
    REQUIRE_EXIT(r, 1, "memoising kernels");
    json_t *j = load_json(&r);
    assert_string_equal(row_status(j, "b_exact", 12, 10, 8), "ok");
    assert_string_equal(row_status(j, "b_memo", 12, 10, 8), "wrong");
    assert_string_equal(row_status(j, "b16_exact", 12, 10, 8), "ok");
    assert_string_equal(row_status(j, "b16_memo", 12, 10, 8), "wrong");
    /* The bf16 kernel against the product of the rounded inputs: fp32 rounding only, not bf16's. */
    assert_true(json_number_value(json_object_get(json_row(j, "b16_exact", 12, 10, 8), "err")) < 1e-5);
    json_decref(j);
    /* Every row but row 0 wrong, on the two middle runs of --reps 3 only:
     * M = 80 > 64, so those are screened on 64 rows drawn at random. */
    const gemm_kernel_t calls[] = {F32(b_wrong_on_calls)};
    knob.at = 1 << 2 | 1 << 3;
    knob.far_i = 1;
    knob.far_j = 79;
    r = RUN_BENCH(calls, "--sizes", "80x8x8", "--reps", "3");
    REQUIRE_EXIT(r, 1, "wrong on the middle runs");
    REQUIRE_IN(r, "WRONG");
    /* One row of 4096 wrong, on the warm-up only, then on the last timed
     * run only (--reps 2: calls 1 and 3): those runs are screened whole (64
     * rows drawn at random would miss it 98 times in 100). */
    knob.far_i = knob.far_j = 2771;
    knob.at = 1 << 1;
    r = RUN_BENCH(calls, "--sizes", "4096x8x8", "--reps", "2");
    REQUIRE_EXIT(r, 1, "one row wrong on the warm-up");
    REQUIRE_IN(r, "WRONG");
    knob.at = 1 << 3;
    r = RUN_BENCH(calls, "--sizes", "4096x8x8", "--reps", "2");
    REQUIRE_EXIT(r, 1, "one row wrong on the last run");
    REQUIRE_IN(r, "WRONG");
    /* C left as NaN on the warm-up, right after: the NaN is not forgotten. */
    const gemm_kernel_t lazy[] = {F32(b_lazy_once)};
    r = RUN_BENCH(lazy, "--sizes", "8", "--reps", "2");
    REQUIRE_EXIT(r, 1, "lazy on the warm-up");
    REQUIRE_IN(r, "nan  WRONG");
}

/* The screen's threshold: errors up to 1e-2 of the largest element are ok
 * (room for tf32), beyond are WRONG; err is that relative error. */
static void test_bench_screen_threshold(void **state) {
    (void)state;
    const gemm_kernel_t k[] = {F32(b_scaled)};
    knob.far = 0.5e-2;
    child_result_t r = RUN_BENCH(k, "--sizes", "16", "--reps", "1", "--json", json_file);
    REQUIRE_EXIT(r, 0, "off by 0.5e-2");
    REQUIRE_IN(r, "5.00e-03  ok\n");
    json_t *j = load_json(&r);
    json_t *row = json_row(j, "b_scaled", 16, 16, 16);
    assert_string_equal(json_string_value(json_object_get(row, "status")), "ok");
    assert_true(fabs(json_number_value(json_object_get(row, "err")) - 0.5e-2) < 1e-5);
    json_decref(j);
    knob.far = 2e-2;
    r = RUN_BENCH(k, "--sizes", "16", "--reps", "1", "--json", json_file);
    REQUIRE_EXIT(r, 1, "off by 2e-2");
    REQUIRE_IN(r, "2.00e-02  WRONG\n");
    j = load_json(&r);
    row = json_row(j, "b_scaled", 16, 16, 16);
    assert_string_equal(json_string_value(json_object_get(row, "status")), "wrong");
    assert_true(fabs(json_number_value(json_object_get(row, "err")) - 2e-2) < 1e-5);
    json_decref(j);
}

/* The time is the median of the timed runs (not the mean, the minimum or
 * the maximum), and TFLOP/s is 2MNK over it. */
static void test_bench_median(void **state) {
    (void)state;
    const gemm_kernel_t k[] = {F32(b_sleepy)};
    child_result_t r = RUN_BENCH(k, "--sizes", "8", "--reps", "3", "--json", json_file);
    REQUIRE_EXIT(r, 0, "b_sleepy");
    json_t *j = load_json(&r);
    json_t *row = json_row(j, "b_sleepy", 8, 8, 8);
    double ms = json_number_value(json_object_get(row, "ms")), tf = json_number_value(json_object_get(row, "tflops"));
    if (!(ms >= 20.0 && ms < 150.0)) fail_msg("median of 1, 20 and 200 ms (and a little): got %g ms", ms);
    assert_true(fabs(tf / (2.0 * 8 * 8 * 8 / (ms * 1e-3) * 1e-12) - 1.0) < 1e-4);
    json_decref(j);
}

/* The fields of the row of kernel name in the bench's table (from time(ms) on). */
static void table_row(const child_result_t *r, const char *name, int M, int N, int K, char f[7][24]) {
    char head[96];
    snprintf(head, sizeof head, "  %5d %6d %6d  %-30s ", M, N, K, name);
    const char *row = strstr(r->out, head);
    if (!row || sscanf(row + strlen(head), "%23s %23s %23s %23s %23s %23s %23s", f[0], f[1], f[2], f[3], f[4], f[5],
                       f[6]) != 7) {
        show_child(r);
        fail_msg("no row \"%s\" with 7 fields in the table above", head);
    }
}

/* The emulator's memory columns (FLOP/B, sect%, bank%), from one more run
 * under the tracer, at 32^3 (32 warps, K = 32 steps each): hk_naive loads
 * 5 sectors a step per warp (one of A, four of B), all bytes used: FLOP/B
 * 2 * 32^3 / (32 B * 32 * 32 * 5) = 0.4, sect% 100, no shared memory.
 * hk_uncoalesced loads 33 sectors a step and stores 32 where 4 would do:
 * FLOP/B 0.0606, sect% (5 * 32 + 4) / (33 * 32 + 32) = 15. hk_shared: 0.4
 * and 100, and 2 passes where 33 were taken: bank% 6. At 1 x 1 x 8192 the
 * one thread makes more accesses than the tracer keeps: "-*", and a note.
 * A host function leaves no trace: dashes. */
static void test_bench_memory_columns(void **state) {
    (void)state;
    const gemm_kernel_t k[] = {F32(hk_naive), F32(hk_uncoalesced), F32(hk_shared), F32(b_exact)};
    child_result_t r = RUN_BENCH(k, "--sizes", "32,1x1x8192", "--reps", "1");
    REQUIRE_EXIT(r, 1, "memory columns (hk_shared refuses 1 x 1)");
    const struct { const char *name; int M, K; const char *flop_b, *sect, *bank, *status; } want[] = {
        {"hk_naive", 32, 32, "0.4", "100", "-", "ok"},
        {"hk_uncoalesced", 32, 32, "0.0606", "15", "-", "ok"},
        {"hk_shared", 32, 32, "0.4", "100", "6", "ok"},
        {"b_exact", 32, 32, "-", "-", "-", "ok"},
        {"hk_naive", 1, 8192, "-*", "-*", "-*", "ok"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char f[7][24];
        table_row(&r, want[i].name, want[i].M, want[i].M, want[i].K, f);
        if (strcmp(f[2], want[i].flop_b) || strcmp(f[3], want[i].sect) || strcmp(f[4], want[i].bank) ||
            strcmp(f[6], want[i].status)) {
            show_child(&r);
            fail_msg("%s at %dx%dx%d: FLOP/B %s sect%% %s bank%% %s status %s, want %s %s %s %s", want[i].name,
                     want[i].M, want[i].M, want[i].K, f[2], f[3], f[4], f[6], want[i].flop_b, want[i].sect,
                     want[i].bank, want[i].status);
        }
    }
    REQUIRE_IN(r, "# -*: a thread made more memory accesses than the emulator's tracer keeps");
    r = RUN_BENCH(k, "--sizes", "32", "--reps", "1");
    REQUIRE_EXIT(r, 0, "memory columns at 32 only");
    if (strstr(r.out, "-*")) {
        show_child(&r);
        fail_msg("no thread at 32^3 makes more accesses than the tracer keeps: no -* (above)");
    }
}

/* ---- gemm_trace_pattern ------------------------------------------------------ */

static gemm_pattern_t traced;

static void trace_case(void) {
    gemm_trace_pattern(&the_case.k, the_case.M, the_case.N, the_case.K, "TT", &traced);
    printf("pattern %.3f %.3f %.3f %.3f %.3f %.3f %.3f\n", traced.global_load, traced.global_store,
           traced.shared_load, traced.shared_store, traced.global_load_width, traced.global_store_width,
           traced.shared_load_width);
}

static child_result_t run_trace(gemm_kernel_t k, int M, int N, int K) {
    the_case = (case_t){k, M, N, K, 1.0f, 0.0f, GEMM_INPUT_FP32, GEMM_FILL_RANDOM};
    return run_body(trace_case);
}

/* Each field of gemm_pattern_t, from kernels whose costs differ field by
 * field. The naive coalesced kernel costs the fewest sectors (a warp reads
 * 32 neighbouring floats of B and one of A, writes 32 neighbouring floats
 * of C), 4 bytes a thread, and no shared memory. With rows along
 * threadIdx.x, a warp's loads of A touch 32 sectors for 4 sectors' worth,
 * of B 1 for 1: 33 over 5, 6.6; its stores 32 over 4, 8. hk_shared stores
 * down a column of a shared tile (32 passes over 1) and loads along a row
 * (1 over 1). */
static void test_trace_pattern(void **state) {
    (void)state;
    child_result_t r = run_trace((gemm_kernel_t)F32(hk_naive), 32, 64, 32);
    REQUIRE_PASS(r, "hk_naive traced");
    REQUIRE_IN(r, "pattern 1.000 1.000 0.000 0.000 4.000 4.000 0.000\n");
    REQUIRE_IN(r, "hk_naive at M=32 N=64 K=32, cost over the fewest possible (1.00 is the best): global loads 1.00 "
                  "(4.0 bytes a thread), stores 1.00 (4.0 bytes a thread); no shared memory");
    r = run_trace((gemm_kernel_t)F32(hk_uncoalesced), 32, 64, 32);
    REQUIRE_PASS(r, "hk_uncoalesced traced");
    REQUIRE_IN(r, "pattern 6.600 8.000 0.000 0.000 4.000 4.000 0.000\n");
    r = run_trace((gemm_kernel_t)F32(hk_shared), 32, 64, 32);
    REQUIRE_PASS(r, "hk_shared traced");
    REQUIRE_IN(r, "pattern 1.000 1.000 1.000 32.000 4.000 4.000 4.000\n");
    REQUIRE_IN(r, "; shared loads 1.00 (4.0 bytes a thread), stores 32.00\n");
    /* float4 loads of A (8 of 16 bytes a thread at K = 32) beside 32 float loads of B: 6.4 bytes a load. */
    r = run_trace((gemm_kernel_t)F32(hk_float4_a), 32, 64, 32);
    REQUIRE_PASS(r, "hk_float4_a traced");
    REQUIRE_IN(r, " 6.400 4.000 0.000\n");

    r = run_trace((gemm_kernel_t)F32(h_exact), 32, 64, 32);
    REQUIRE_FAIL(r, "a host function traced", "h_exact: no global loads or stores were recorded; the lab's .cu file "
                 "must be compiled with simtcc --memtrace, as make check LAB=TT TARGET=emu does");
    knob.status = LAB_NOT_IMPLEMENTED;
    r = run_trace((gemm_kernel_t)F32(h_status), 32, 64, 32);
    REQUIRE_FAIL(r, "TODO traced", "not implemented: h_status still has its TODO");
    r = run_trace((gemm_kernel_t){"nothing", NULL, NULL}, 32, 64, 32);
    REQUIRE_FAIL(r, "no function", "gemm_trace_pattern: nothing has no function");
    r = run_trace((gemm_kernel_t)F32(refused_unchecked), 32, 64, 32);
    REQUIRE_FAIL(r, "refused launch traced", "refused_unchecked returned LAB_OK, but its launch was refused");
}

int main(void) {
    /* For the host kernels, in every child: a flag the forks copy, no
     * device call (no allocation exists yet). */
    simt_host_access(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_right_kernel_passes, setup_test),
        cmocka_unit_test_setup(test_fills_are_as_promised, setup_test),
        cmocka_unit_test_setup(test_bound_fp32, setup_test),
        cmocka_unit_test_setup(test_bound_tf32, setup_test),
        cmocka_unit_test_setup(test_bound_bf16, setup_test),
        cmocka_unit_test_setup(test_writes_outside_c, setup_test),
        cmocka_unit_test_setup(test_reads_outside_a_b, setup_test),
        cmocka_unit_test_setup(test_guard_watch_names_the_matrix, setup_test),
        cmocka_unit_test_setup(test_beta_zero_c_not_read, setup_test),
        cmocka_unit_test_setup(test_nan_inputs, setup_test),
        cmocka_unit_test_setup(test_status_codes, setup_test),
        cmocka_unit_test_setup(test_faults_and_refusals, setup_test),
        cmocka_unit_test_setup(test_case_after_a_fault, setup_test),
        cmocka_unit_test_setup(test_check_shape, setup_test),
        cmocka_unit_test_setup(test_seed_and_streams, setup_test),
        cmocka_unit_test_setup(test_refused_arguments, setup_test),
        cmocka_unit_test_setup(test_trace_pattern, setup_test),
        cmocka_unit_test_setup_teardown(test_bench_sizes_refused, setup_json, teardown_json),
        cmocka_unit_test_setup_teardown(test_bench_sizes_accepted, setup_json, teardown_json),
        cmocka_unit_test_setup_teardown(test_bench_defaults, setup_json, teardown_json),
        cmocka_unit_test_setup_teardown(test_bench_called_twice, setup_json, teardown_json),
        cmocka_unit_test_setup_teardown(test_bench_json_rows, setup_json, teardown_json),
        cmocka_unit_test_setup_teardown(test_bench_screen, setup_json, teardown_json),
        cmocka_unit_test_setup_teardown(test_bench_screen_threshold, setup_json, teardown_json),
        cmocka_unit_test_setup_teardown(test_bench_median, setup_json, teardown_json),
        cmocka_unit_test_setup_teardown(test_bench_memory_columns, setup_json, teardown_json),
    };
    return cmocka_run_group_tests_name("gemm_harness", tests, NULL, NULL);
}
