/*
 * The matmul labs' shared check and benchmark (see gemm_harness.h).
 *
 * Host C against gpu.h, compiled once per target. Under the emulator
 * (COURSE_SIMT) there is no cuBLAS, so the benchmark's baseline columns are
 * empty and its correctness screen uses OpenBLAS on the host instead.
 */
#include "gemm_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cpu/gemm_ref.h"
#include "error.h"
#include "gpu.h"
#include "half.h"
#include "json.h"
#include "lab.h"
#include "memory.h"
#include "numerics.h"
#include "rng.h"
#include "timer.h"
#include "cuda/fill.h"
#include "labcheck.h"
#include "labguard.h"

#ifndef COURSE_SIMT
#include "cuda/cublas_gemm.h"
#define HAVE_CUBLAS 1
#else
#include "simt_memtrace.h"
#define HAVE_CUBLAS 0
/* Defined only in a program that runs under ThreadSanitizer (make check
 * SANITIZE=thread): by the TSan flavour of libsimt, and by libtsan. This
 * file is compiled once for every flavour, so it asks at run time. (Not
 * __tsan_init: the plain libsimt's tracer defines the __tsan_* hooks.) */
extern const char *__tsan_default_suppressions(void) __attribute__((weak));
#endif

/* Whether ThreadSanitizer watches this run (it reports races as they happen). */
static int under_tsan(void) {
#ifdef COURSE_SIMT
    return __tsan_default_suppressions != NULL;
#else
    return 0;
#endif
}

/* What a hint's make check command names: the check's lab ("LAB=02") and
 * the running test, each with a placeholder where the check did not say. */
static const char *rerun_lab(void) { return lab_make_args[0] ? lab_make_args : "LAB=NN"; }
static const char *rerun_test(void) { return lab_test_name ? lab_test_name : "<its name, from the [ RUN ] line>"; }

/* Guard zone on each side of a device matrix whose rows are `row` elements
 * long: one whole row plus 64 elements, so even a kernel that runs a full row
 * past the end (row <= M instead of row < M) lands in the guard. A multiple
 * of 64 elements, so the matrix itself stays aligned for vector loads. */
static size_t guard_for(int row) { return 64 * ((size_t)(row + 63) / 64 + 1); }

/* "8-15" or "0-3, 8-11": the residues set in a 16-bit mask. */
static void residues_text(unsigned mask, char *out, size_t n) {
    out[0] = '\0';
    for (int r = 0; r < 16; r++) {
        if (!(mask >> r & 1u) || (r > 0 && (mask >> (r - 1) & 1u))) continue;
        int e = r;
        while (e + 1 < 16 && (mask >> (e + 1) & 1u)) e++;
        size_t l = strlen(out);
        if (e == r) snprintf(out + l, n - l, "%s%d", l ? ", " : "", r);
        else snprintf(out + l, n - l, "%s%d-%d", l ? ", " : "", r, e);
    }
}

/* Where the wrong elements of C fall, by row and column modulo 16, when they
 * fall in some residues only (a fragment's or a tile's layout shows as a
 * stripe: rows 8-15 of every 16, say): appended to msg. Says nothing for too
 * few wrong elements, or a small C, to tell a stripe from chance. */
static void wrong_stripes(char *msg, size_t size, const unsigned char *wrong, int M, int N, size_t nwrong) {
    if (nwrong < 32 || M < 32 || N < 32) return;
    unsigned rows = 0, cols = 0;
    for (size_t i = 0; i < (size_t)M * N; i++)
        if (wrong[i]) rows |= 1u << (i / N % 16), cols |= 1u << (i % N % 16);
    if (rows == 0xffffu && cols == 0xffffu) return;
    char r[96], c[96];
    residues_text(rows, r, sizeof r);
    residues_text(cols, c, sizeof c);
    size_t l = strlen(msg);
    if (l < size)
        snprintf(msg + l, size - l, "; the wrong elements lie only in rows %s and columns %s of every 16 (a "
                 "fragment's or a tile's layout wrong for those?)",
                 rows == 0xffffu ? "0-15" : r, cols == 0xffffu ? "0-15" : c);
}
static const float C_SENTINEL = -12345.0f;
/* What C starts as in the beta == 0 check: a signalling NaN. Arithmetic on
 * it gives a quiet NaN (0x7fc0c0de on a CPU, 0x7fffffff on a GPU), so an
 * element that still holds exactly these bits was never written, and one
 * with other NaN bits read C or took a NaN from elsewhere. */
static const uint32_t C_START_NAN_BITS = 0x7f80c0deu;
static const uint16_t BF16_NAN = 0x7fc0;

static const char *input_name(gemm_input_t in) {
    switch (in) {
    case GEMM_INPUT_FP32: return "fp32";
    case GEMM_INPUT_TF32: return "tf32";
    case GEMM_INPUT_BF16: return "bf16";
    }
    return "?";
}

/* The safety factor c of the bound c * K * EPS_FP32 * (|alpha||A||B| + |beta||C|)_ij.
 * The inputs are rounded before the reference sees them, so only the
 * kernel's own arithmetic counts: a length-K fp32 dot product is within
 * gamma_K ~ K u of the exact one (Higham, Accuracy and Stability of Numerical
 * Algorithms, 2nd ed., section 3.1), whatever the summation order; scaling by
 * alpha and adding beta * C are two more roundings: (K + 2) u <= 3 K u.
 * Tensor cores (tf32, bf16 inputs) form each product exactly but may truncate
 * instead of round while accumulating (Fasi, Higham, Mikaitis and Pranesh,
 * "Numerical behavior of NVIDIA tensor cores", PeerJ CS 2021), which can
 * double the error per addition: 6 K u. */
static double bound_c(gemm_input_t in) { return in == GEMM_INPUT_FP32 ? 3.0 : 6.0; }

static float round_input(gemm_input_t in, float x) {
    switch (in) {
    case GEMM_INPUT_FP32: return x;
    case GEMM_INPUT_TF32: return round_to_tf32(x);
    case GEMM_INPUT_BF16: return round_to_bf16(x);
    }
    return x;
}

/* Upload n floats (as fp32 or as bf16) into a fresh device buffer with a NaN
 * guard zone of g elements at the back and g + off at the front (off = 1
 * moves the data one element past the aligned address the guard ends at);
 * returns the allocation, *data points past the front guard. */
static void *upload_with_guard(const float *x, size_t n, size_t g, size_t off, int as_bf16,
                               void **data) {
    size_t esize = as_bf16 ? sizeof(uint16_t) : sizeof(float);
    size_t front = g + off, total = n + front + g;
    void *host = host_malloc(total * esize);
    for (size_t i = 0; i < total; i++) {
        int guard = i < front || i >= n + front;
        if (as_bf16) ((uint16_t *)host)[i] = guard ? BF16_NAN : bf16_from_float(x[i - front]);
        else ((float *)host)[i] = guard ? NAN : x[i - front];
    }
    void *dev = gpu_malloc(total * esize);
    gpu_upload(dev, host, total * esize);
    host_free(host);
    *data = (char *)dev + front * esize;
    return dev;
}

/* The NaN guards show a read past either end of A or B only where it reaches
 * a stored element of C. A float4 path that runs past N in B's last tile, or
 * a tile load without its row < M test, loads elements that are never
 * stored, and leaves no trace. So on the emulator the guards are also
 * watched (lab_guard_watch in labguard.h), which fails the launch at any
 * access to them and names its line. */

void gemm_check_case(const gemm_kernel_t *k, int M, int N, int K, float alpha, float beta,
                     uint64_t seed, gemm_input_t input, gemm_fill_t fill) {
    if (M < 1 || N < 1 || K < 1) fail_msg("gemm_check_case: sizes must be >= 1, got %dx%dx%d", M, N, K);
    int is_bf16 = input == GEMM_INPUT_BF16;
    if (is_bf16 ? !k->bf16 : !k->f32)
        fail_msg("gemm_check_case: %s needs a %s kernel", input_name(input), is_bf16 ? "bf16" : "fp32");
    /* After a fault in a kernel the device refuses every call until the
     * process ends, so a later case cannot even allocate: say why. */
    char err_before[160];
    if (strcmp(gpu_sticky_error(err_before, sizeof err_before), "no error") != 0)
        fail_msg("%s, M=%d N=%d K=%d: not run, because the device has reported %s since an "
                 "earlier case; a fault in a kernel is sticky and fails every later call, so "
                 "fix the first failure", k->name, M, N, K, err_before);
    size_t nA = (size_t)M * K, nB = (size_t)K * N, nC = (size_t)M * N;
    float *A = host_malloc(nA * sizeof(float)), *B = host_malloc(nB * sizeof(float));
    float *C0 = host_malloc(nC * sizeof(float));
    /* The device allocations are 256-byte aligned and the guards multiples
     * of 64 elements, so every matrix starts 16-byte aligned, unless fill
     * asks for one element more in front of each. */
    size_t off = fill == GEMM_FILL_MISALIGNED ? 1 : 0;
    size_t gC = guard_for(N), fC = gC + off; /* around C: fC in front, gC behind */
    size_t totC = fC + nC + gC;
    float *C = host_malloc(totC * sizeof(float));
    double *want = host_malloc(nC * sizeof(double)), *mag = host_malloc(nC * sizeof(double));

    /* Independent streams per matrix, so changing one shape's K does not
     * shift the values of C. */
    rng_t root, r;
    rng_init(&root, seed);
    r = rng_split(&root, 1); rng_fill_uniform(&r, A, nA, -1.0f, 1.0f);
    r = rng_split(&root, 2); rng_fill_uniform(&r, B, nB, -1.0f, 1.0f);
    r = rng_split(&root, 3); rng_fill_uniform(&r, C0, nC, -1.0f, 1.0f);
    for (size_t i = 0; i < nA; i++) A[i] = round_input(input, A[i]);
    for (size_t i = 0; i < nB; i++) B[i] = round_input(input, B[i]);
    int nan_row = M / 2, nan_col = N / 2;
    if (fill == GEMM_FILL_NAN_C) for (size_t i = 0; i < nC; i++) memcpy(&C0[i], &C_START_NAN_BITS, sizeof(float));
    if (fill == GEMM_FILL_NAN_ALL) for (size_t i = 0; i < nA; i++) A[i] = NAN;
    if (fill == GEMM_FILL_NAN_ROW_COL) {
        A[(size_t)nan_row * K + K / 2] = NAN;
        B[(size_t)(K / 3) * N + nan_col] = NAN;
    }
    for (size_t i = 0; i < totC; i++)
        C[i] = (i < fC || i >= nC + fC) ? C_SENTINEL : C0[i - fC];

    void *dA, *dB;
    float *dC;
    size_t esize = is_bf16 ? sizeof(uint16_t) : sizeof(float);
    void *allocA = upload_with_guard(A, nA, guard_for(K), off, is_bf16, &dA);
    void *allocB = upload_with_guard(B, nB, guard_for(N), off, is_bf16, &dB);
    lab_guard_watch(allocA, dA, nA * esize, guard_for(K) * esize, 1, "A (the M x K matrix)");
    lab_guard_watch(allocB, dB, nB * esize, guard_for(N) * esize, 1, "B (the K x N matrix)");
    float *allocC = gpu_malloc(totC * sizeof(float));
    gpu_upload(allocC, C, totC * sizeof(float));
    dC = allocC + fC;
    /* C's sentinels show a store out of bounds on a GPU too; the watch also
     * stops a load of C past its edge (beta != 0) whose value is dropped. */
    lab_guard_watch(allocC, dC, nC * sizeof(float), gC * sizeof(float), 1, "C (the M x N matrix)");

    int st = is_bf16 ? k->bf16(M, N, K, alpha, dA, dB, beta, dC)
                     : k->f32(M, N, K, alpha, dA, dB, beta, dC);
    /* A GPU reports a fault in the kernel only when the host waits for it
     * (the emulator reports it at the launch already, as 'launch failed'). */
    char fault[160] = "", refused[160] = "";
    int run = GPU_DONE;
    if (st == LAB_OK) {
        run = gpu_sync_status(fault, sizeof fault);
        if (run == GPU_REFUSED) snprintf(refused, sizeof refused, "%s", fault);
        if (run != GPU_FAULTED) fault[0] = '\0';
    }
    /* Lifted before the host reads C's zones back (under AddressSanitizer they are poisoned). */
    lab_guard_watch(allocA, dA, nA * esize, guard_for(K) * esize, 0, NULL);
    lab_guard_watch(allocB, dB, nB * esize, guard_for(N) * esize, 0, NULL);
    lab_guard_watch(allocC, dC, nC * sizeof(float), gC * sizeof(float), 0, NULL);
    if (st == LAB_OK && run == GPU_DONE) gpu_download(C, allocC, totC * sizeof(float));
    gpu_free(allocA); gpu_free(allocB); gpu_free(allocC); /* quiet after a fault */

    char msg[1536] = "";
    char what[160];
    const char *fill_note = fill == GEMM_FILL_NAN_C ? ", C starts as NaN" :
                            fill == GEMM_FILL_NAN_ROW_COL ? ", one NaN in A and one in B" :
                            fill == GEMM_FILL_NAN_ALL ? ", A all NaN" :
                            fill == GEMM_FILL_MISALIGNED ? ", A, B and C one element past a 16-byte boundary" : "";
    snprintf(what, sizeof what, "%s: C = %g*A*B + %g*C, M=%d N=%d K=%d (%s inputs%s)", k->name,
             alpha, beta, M, N, K, input_name(input), fill_note);
    /* A fault's message names the case's layout too: "misaligned address" at
     * M=132 N=132 K=36 only makes sense once one knows where A starts. */
    char shape_note[200];
    snprintf(shape_note, sizeof shape_note, "M=%d N=%d K=%d%s%s%s", M, N, K, fill_note[0] ? " (" : "",
             fill_note[0] ? fill_note + 2 : "", fill_note[0] ? ")" : "");
    if (fault[0]) {
        snprintf(msg, sizeof msg, "%s faulted while running for %s: the device "
                 "reports %s", k->name, shape_note, fault);
    } else if (refused[0]) {
        snprintf(msg, sizeof msg, "%s returned LAB_OK for M=%d N=%d K=%d, but its launch was "
                 "refused: %s; check cudaGetLastError() after the launch and return "
                 "LAB_LAUNCH_FAILED", k->name, M, N, K, refused);
    } else if (st == LAB_NOT_IMPLEMENTED) {
        snprintf(msg, sizeof msg, "not implemented: %s still has its TODO (see the lab's README)", k->name);
    } else if (st == LAB_LAUNCH_FAILED) {
        /* Say what the device reports: a fault in this case's kernel (the
         * emulator reports it at the launch), or a refused launch. */
        char err[160];
        gpu_sticky_error(err, sizeof err);
        if (strcmp(err, "no error") != 0)
            snprintf(msg, sizeof msg, "%s returned 'launch failed' for %s: the device "
                     "reports %s", k->name, shape_note, err);
        else
            snprintf(msg, sizeof msg, "%s returned 'launch failed' for %s and the device reports no "
                     "fault: either the launch was refused (a grid of 0 blocks, from a block count rounded "
                     "down? more than 1024 threads per block? too much shared memory?) or a call before it "
                     "failed (cudaMalloc, cudaFuncSetAttribute, cuTensorMapEncodeTiled). The emulator prints "
                     "the reason above; on a GPU, print cudaGetErrorString(cudaGetLastError()) right after "
                     "the launch", k->name, shape_note);
    } else if (st != LAB_OK) {
        snprintf(msg, sizeof msg, "%s returned '%s' (%d) for M=%d N=%d K=%d", k->name,
                 lab_status_name(st), st, M, N, K);
    } else {
        const float *got = C + fC;
        for (size_t i = 0; i < fC && !msg[0]; i++)
            if (C[i] != C_SENTINEL) /* also catches NaN: NaN != x */
                snprintf(msg, sizeof msg, "%s: wrote before the start of C, at C[%lld]", what,
                         (long long)i - (long long)fC);
        for (size_t i = 0; i < gC && !msg[0]; i++)
            if (got[nC + i] != C_SENTINEL)
                snprintf(msg, sizeof msg, "%s: wrote past the end of C, at C[%zu] (C has %zu elements)",
                         what, nC + i, nC);
        if (!msg[0]) {
            gemm_ref_double(M, N, K, alpha, A, B, beta, C0, want, mag);
            /* Where the reference is NaN the result must be NaN; those elements
             * then drop out of the bound (set to 0 on both sides). */
            float *cmp = host_malloc(nC * sizeof(float));
            for (size_t i = 0; i < nC && !msg[0]; i++) {
                cmp[i] = got[i];
                if (isnan(want[i])) {
                    if (!isnan(got[i]))
                        snprintf(msg, sizeof msg, "%s: C[%zu][%zu] = %g but must be NaN (a NaN input "
                                 "reaches it; NaN must propagate, as in IEEE arithmetic; if checks without NaN fail "
                                 "too, this value is simply wrong: fix those first)",
                                 what, i / N, i % N, got[i]);
                    cmp[i] = 0.0f; want[i] = 0.0; mag[i] = 0.0;
                }
            }
            if (!msg[0] && fill == GEMM_FILL_NAN_C && beta == 0.0f) {
                for (size_t i = 0; i < nC && !msg[0]; i++) {
                    if (!isnan(got[i])) continue;
                    uint32_t bits;
                    memcpy(&bits, &got[i], sizeof bits);
                    if (bits == C_START_NAN_BITS)
                        snprintf(msg, sizeof msg, "%s: C[%zu][%zu] was never written: it still holds the NaN "
                                 "C started with (does the grid cover it? does its thread return before the "
                                 "store?)", what, i / N, i % N);
                    else
                        snprintf(msg, sizeof msg, "%s: C[%zu][%zu] is NaN: with beta == 0 the old C (NaN "
                                 "here) must not be read (BLAS rule; 0 * NaN is NaN), or a NaN came from "
                                 "elsewhere: shared memory read before it was written (the emulator starts it "
                                 "as NaN; a missing __syncthreads()?), or padding never zeroed",
                                 what, i / N, i % N);
                }
            }
            if (!msg[0]) {
                cmp_report_t rep;
                /* Bound: c * K * u_fp32 * (|alpha||A||B| + |beta||C|)_ij; bound_c()
                 * says where c comes from. */
                if (!check_gemm_bound(cmp, want, mag, M, N, K, EPS_FP32, bound_c(input), &rep)) {
                    cmp_report_format_rc(msg, sizeof msg, what, &rep, (size_t)N);
                    /* A wrong element that still holds C's first value, bit for
                     * bit, was most likely never written: say so, and where. */
                    size_t unwritten = 0, first = 0, nwrong = 0;
                    unsigned char *wrong = host_malloc(nC + 1);
                    for (size_t i = 0; i < nC; i++) {
                        wrong[i] = !within_bound(cmp[i], want[i], gemm_elem_bound(mag[i], K, EPS_FP32,
                                                                                   bound_c(input)));
                        nwrong += wrong[i];
                        if (wrong[i] && !memcmp(&got[i], &C0[i], sizeof(float)) && unwritten++ == 0) first = i;
                    }
                    wrong_stripes(msg, sizeof msg, wrong, M, N, nwrong);
                    host_free(wrong);
                    size_t l = strlen(msg);
                    if (unwritten && l < sizeof msg)
                        snprintf(msg + l, sizeof msg - l, "; %zu element(s) still hold the value C started with, "
                                 "first C[%zu][%zu]: never written? Does the grid cover all of C (blocks times "
                                 "threads along x at least the extent x indexes, and along y the other), and "
                                 "does the bounds test compare the row with M and the column with N?",
                                 unwritten, first / N, first % N);
                    /* Finite inputs and a finite C, yet results that are not
                     * finite: a NaN came from memory the kernel should not
                     * have read. Say where NaN lives here. */
                    l = strlen(msg);
                    if (rep.nonfinite && (fill == GEMM_FILL_RANDOM || fill == GEMM_FILL_MISALIGNED) &&
                        l < sizeof msg)
                        snprintf(msg + l, sizeof msg - l, "; every input is finite, so a NaN came from "
                                 "shared memory read before it was written (the emulator starts it as NaN: "
                                 "a missing __syncthreads()? a tile element past M, N or K skipped instead of "
                                 "set to 0? a copy loop that does not cover every element of a tile? with "
                                 "tensor cores, a fragment load whose leading dimension or start reaches "
                                 "padding no thread writes? with cp.async, a stage read before its "
                                 "cp_async_wait_group, or refilled before the barrier that ends its reads?) or "
                                 "from a read past the end of A or B (NaN guard zones surround them). make "
                                 "check %s TARGET=emu SANITIZE=thread ONLY='%s' names the two lines of a race",
                                 rerun_lab(), rerun_test());
                    else if (!rep.nonfinite && unwritten)
                        ; /* the hint above is the likeliest */
                    else if (!rep.nonfinite && l < sizeof msg && under_tsan())
                        snprintf(msg + l, sizeof msg - l, "; ThreadSanitizer watched this run: if it reported "
                                 "no race above, the barriers are not the cause. Look at the tile loads (an "
                                 "element past M, N or K that is skipped instead of set to 0 keeps the previous "
                                 "k step's value) and the indexing (tile offsets, leading dimensions; with "
                                 "tensor cores, a fragment's row_major or col_major)");
                    else if (!rep.nonfinite && l < sizeof msg)
                        snprintf(msg + l, sizeof msg - l, "; look at the indexing (tile offsets, leading "
                                 "dimensions; with tensor cores, a fragment's layout) and, if the kernel stages "
                                 "tiles, at their loads (an element past M, N or K that is skipped instead of set "
                                 "to 0 keeps the previous k step's value); if the kernel has __syncthreads() "
                                 "barriers and a missing one could be the cause, rerun this test with make check "
                                 "%s TARGET=emu SANITIZE=thread ONLY='%s': ThreadSanitizer names the two lines "
                                 "that race", rerun_lab(), rerun_test());
                }
            }
            host_free(cmp);
        }
    }
    host_free(A); host_free(B); host_free(C0); host_free(C); host_free(want); host_free(mag);
    if (msg[0]) fail_msg("%s", msg);
}

void gemm_check_shape(gemm_f32_fn fn, const char *name, int M, int N, int K, float alpha,
                      float beta, uint64_t seed, gemm_input_t input_rounding) {
    gemm_kernel_t k = {name, fn, NULL};
    if (input_rounding == GEMM_INPUT_BF16) fail_msg("gemm_check_shape: bf16 inputs need gemm_check_shape_bf16");
    gemm_check_case(&k, M, N, K, alpha, beta, seed, input_rounding, GEMM_FILL_RANDOM);
}

void gemm_check_shape_bf16(gemm_bf16_fn fn, const char *name, int M, int N, int K, float alpha,
                           float beta, uint64_t seed) {
    gemm_kernel_t k = {name, NULL, fn};
    gemm_check_case(&k, M, N, K, alpha, beta, seed, GEMM_INPUT_BF16, GEMM_FILL_RANDOM);
}

/* ---- memory access pattern (emulator) --------------------------------------- */

#ifdef COURSE_SIMT
/* cost over best, or 0 for a kind of access the kernel never made */
static double pattern_ratio(const simt_memtrace_counts *c) {
    return c->best ? (double)c->cost / (double)c->best : 0.0;
}

static double pattern_width(const simt_memtrace_counts *c) {
    return c->accesses ? (double)c->bytes / (double)c->accesses : 0.0;
}
#endif

void gemm_trace_pattern(const gemm_kernel_t *k, int M, int N, int K, const char *lab, gemm_pattern_t *out) {
    memset(out, 0, sizeof *out);
    if (!k->f32 && !k->bf16) fail_msg("gemm_trace_pattern: %s has no function", k->name);
    LAB_REQUIRE_MEMTRACE(lab); /* skips on a GPU and in sanitizer builds */
#ifndef COURSE_SIMT
    (void)M; (void)N; (void)K;
#else
    const size_t nA = (size_t)M * K, nB = (size_t)K * N, nC = (size_t)M * N;
    const size_t esize = k->f32 ? sizeof(float) : sizeof(uint16_t); /* zeros either way */
    void *A = gpu_malloc(nA * esize), *B = gpu_malloc(nB * esize);
    float *C = gpu_malloc(nC * sizeof(float));
    gpu_memset(A, 0, nA * esize);
    gpu_memset(B, 0, nB * esize);
    simt_memtrace_start();
    int st = k->f32 ? k->f32(M, N, K, 1.0f, A, B, 0.0f, C) : k->bf16(M, N, K, 1.0f, A, B, 0.0f, C);
    simt_memtrace_stats s;
    simt_memtrace_stop(&s);
    gpu_free(A);
    gpu_free(B);
    gpu_free(C);
    char what[96];
    snprintf(what, sizeof what, "M=%d N=%d K=%d", M, N, K);
    LAB_REQUIRE_OK_FOR(st, k->name, what);
    LAB_REQUIRE_FINISHED(k->name);
    if (s.global_load.requests == 0 || s.global_store.requests == 0)
        fail_msg("%s: no global loads or stores were recorded; the lab's .cu file must be compiled with "
                 "simtcc --memtrace, as make check LAB=%s TARGET=emu does", k->name, lab);
    out->global_load = pattern_ratio(&s.global_load);
    out->global_store = pattern_ratio(&s.global_store);
    out->shared_load = pattern_ratio(&s.shared_load);
    out->shared_store = pattern_ratio(&s.shared_store);
    out->global_load_width = pattern_width(&s.global_load);
    out->global_store_width = pattern_width(&s.global_store);
    out->shared_load_width = pattern_width(&s.shared_load);
    char shared[160] = "no shared memory";
    if (s.shared_load.requests || s.shared_store.requests)
        snprintf(shared, sizeof shared, "shared loads %.2f (%.1f bytes a thread), stores %.2f", out->shared_load,
                 out->shared_load_width, out->shared_store);
    print_message("%s at %s, cost over the fewest possible (1.00 is the best): global loads %.2f (%.1f bytes "
                  "a thread), stores %.2f (%.1f bytes a thread); %s\n", k->name, what, out->global_load,
                  out->global_load_width, out->global_store, out->global_store_width, shared);
#endif
}

/* ---- benchmark ------------------------------------------------------------ */

#define MAX_SIZES 32
/* Under the emulator: the largest M*N*K a size may have (1024^3, a few
 * minutes a kernel at GPU_EMU_FLOPS). */
#define EMU_MAX_WORK (1024.0 * 1024.0 * 1024.0)

typedef struct { int M, N, K; } shape_t;

/* "1024,2048" or "512x256x128,64": square or M x N x K entries. */
static int parse_sizes(const char *s, shape_t *out) {
    int n = 0;
    const char *p = s;
    while (*p) {
        if (n == MAX_SIZES) return -1;
        char *end;
        long v[3];
        int dims = 0;
        for (;;) {
            v[dims] = strtol(p, &end, 10);
            if (end == p || v[dims] < 1 || v[dims] > 65536) return -1;
            dims++;
            p = end;
            if (*p == 'x' && dims < 3) { p++; continue; }
            break;
        }
        if (dims == 2) return -1;
        out[n].M = (int)v[0];
        out[n].N = dims == 3 ? (int)v[1] : (int)v[0];
        out[n].K = dims == 3 ? (int)v[2] : (int)v[0];
        n++;
        if (*p == ',') p++;
        else if (*p) return -1;
    }
    return n;
}

/* One size's buffers. The baselines run on A and B as generated; every
 * screened run of a kernel first refills the A it reads (fp32 or bf16) with
 * fresh random values. */
typedef struct {
    int M, N, K;
    float *A, *B, *C;       /* fp32 device arrays the kernel is given */
    uint16_t *Ah, *Bh;      /* bf16 device arrays (NULL when no bf16 kernel is listed) */
    float *Cref;            /* device, M x N: a run's reference product (GPU only) */
    const float *B32, *B16; /* host: B, and B rounded to bf16 (NULL without bf16 kernels) */
} bench_bufs_t;

/* Run one kernel (or the cuBLAS baseline when k is NULL) on the size's buffers. */
static int run_kernel(const gemm_kernel_t *k, int baseline_bf16, const bench_bufs_t *b) {
    if (k) return k->bf16 ? k->bf16(b->M, b->N, b->K, 1.0f, b->Ah, b->Bh, 0.0f, b->C)
                          : k->f32(b->M, b->N, b->K, 1.0f, b->A, b->B, 0.0f, b->C);
#if HAVE_CUBLAS
    return baseline_bf16 ? cublas_gemm_bf16_rowmajor(b->M, b->N, b->K, 1.0f, b->Ah, b->Bh, 0.0f, b->C)
                         : cublas_sgemm_rowmajor(b->M, b->N, b->K, 1.0f, b->A, b->B, 0.0f, b->C);
#else
    (void)baseline_bf16;
    return LAB_NOT_IMPLEMENTED;
#endif
}

/* The reference product of the inputs a run is about to get: on a GPU
 * cuBLAS's, into b->Cref; under the emulator OpenBLAS's on the host, into
 * ref (M x N), from A as it is on the device (a_host: M x K scratch). */
static void reference_product(const bench_bufs_t *b, int bf16, float *a_host, float *ref) {
#if HAVE_CUBLAS
    (void)a_host; (void)ref;
    if (bf16) cublas_gemm_bf16_rowmajor(b->M, b->N, b->K, 1.0f, b->Ah, b->Bh, 0.0f, b->Cref);
    else cublas_sgemm_rowmajor(b->M, b->N, b->K, 1.0f, b->A, b->B, 0.0f, b->Cref);
#else
    const size_t nA = (size_t)b->M * b->K;
    if (bf16) {
        uint16_t *h = host_malloc(nA * sizeof(uint16_t));
        gpu_download(h, b->Ah, nA * sizeof(uint16_t));
        float_from_bf16_array(a_host, h, nA);
        host_free(h);
    } else {
        gpu_download(a_host, b->A, nA * sizeof(float));
    }
    gemm_cpu_sgemm(b->M, b->N, b->K, 1.0f, a_host, bf16 ? b->B16 : b->B32, 0.0f, ref);
#endif
}

/* The whole of the run's reference in ref: on a GPU downloaded from
 * b->Cref; under the emulator it is there already. */
static void reference_all(const bench_bufs_t *b, float *ref) {
#if HAVE_CUBLAS
    gpu_download(ref, b->Cref, (size_t)b->M * b->N * sizeof(float));
#else
    (void)b; (void)ref;
#endif
}

/* Row i of the run's reference: on a GPU downloaded from b->Cref into buf;
 * under the emulator the row of ref itself. */
static const float *reference_row(const bench_bufs_t *b, const float *ref, float *buf, int i) {
#if HAVE_CUBLAS
    (void)ref;
    gpu_download(buf, b->Cref + (size_t)i * b->N, (size_t)b->N * sizeof(float));
    return buf;
#else
    (void)buf;
    return ref + (size_t)i * b->N;
#endif
}

/* Fold one row of a run's C into the screen: *err keeps the largest
 * |got - want| so far, *scale the largest |want|. NaN anywhere in got makes
 * *err NaN. */
static void screen_row(const float *got, const float *want, int N, double *err, double *scale) {
    for (int j = 0; j < N; j++) {
        double d = fabs((double)got[j] - (double)want[j]);
        *scale = fmax(*scale, fabs((double)want[j]));
        if (isnan(d)) *err = NAN;
        else if (!isnan(*err) && d > *err) *err = d;
    }
}

/* Rows of C a middle run's screen samples (the first and last runs are
 * screened whole). A result that is not this run's own is wrong almost
 * everywhere, so a sample finds it; a full 8192^2 download per run would add
 * seconds per kernel to a GPU's benchmark. */
#define SCREEN_ROWS 64

/* Median time in ms over reps, after warm-up runs, with L2 flushed before
 * each. With screen set, every run, warm-up included, gets inputs of its
 * own: before it, outside the timed region, the A the kernel reads is
 * refilled with fresh random values (a new seed from `inputs`), their
 * reference product is computed (cuBLAS, or OpenBLAS under the emulator)
 * and C is filled with NaN (all-ones bytes); after it, C is compared with
 * that reference (the first and the last run in full, the others on
 * SCREEN_ROWS random rows), and the worst error relative to the largest
 * reference value goes to *err_out. So a kernel must compute all of C from
 * the inputs every time: one that returns at once leaves NaN behind, and
 * one that hands back anything computed before (a saved result, moved or
 * rearranged) is wrong, since dense new inputs share nothing with earlier
 * ones. Without screen (the baseline) the runs use the inputs as they are;
 * the last result stays in b->C. c_host and ref hold M x N floats, a_host
 * M x K. Returns the kernel's status (LAB_OK or why it did not run). */
static int time_kernel(const gemm_kernel_t *k, int baseline_bf16, const bench_bufs_t *b, int warmup,
                       int reps, int screen, rng_t *inputs, float *a_host, float *ref, float *c_host,
                       double *ms_out, double *err_out) {
    double *ms = host_malloc(sizeof(double) * (size_t)reps);
    const int M = b->M, N = b->N;
    const int bf16 = k && k->bf16 != NULL;
    const size_t c_bytes = (size_t)M * N * sizeof(float), nA = (size_t)M * b->K;
    float *want_buf = screen ? host_malloc((size_t)N * sizeof(float)) : NULL;
    gpu_timer_t t;
    gpu_timer_init(&t, NULL);
    int st = LAB_OK;
    double worst = 0.0;
    for (int r = -warmup; r < reps && st == LAB_OK; r++) {
        if (screen) {
            uint64_t seed = rng_u64(inputs);
            if (bf16) gpu_fill_uniform_bf16(b->Ah, nA, seed, 1, -1.0f, 1.0f);
            else gpu_fill_uniform(b->A, nA, seed, 1, -1.0f, 1.0f);
            reference_product(b, bf16, a_host, ref);
        }
        gpu_memset(b->C, 0xff, c_bytes);
        gpu_flush_l2();
        gpu_timer_start(&t);
        st = run_kernel(k, baseline_bf16, b);
        float m = gpu_timer_stop_ms(&t);
        if (st == LAB_OK) gpu_sync_check(k ? k->name : "cuBLAS");
        if (r >= 0) ms[r] = m;
        if (st == LAB_OK && screen) {
            double err = 0.0, scale = 0.0;
            if (r == -warmup || r == reps - 1 || M <= SCREEN_ROWS) {
                gpu_download(c_host, b->C, c_bytes);
                reference_all(b, ref);
                for (int i = 0; i < M; i++)
                    screen_row(c_host + (size_t)i * N, ref + (size_t)i * N, N, &err, &scale);
            } else {
                for (int j = 0; j < SCREEN_ROWS; j++) {
                    int i = (int)rng_below(inputs, (uint32_t)M);
                    gpu_download(c_host, b->C + (size_t)i * N, (size_t)N * sizeof(float));
                    screen_row(c_host, reference_row(b, ref, want_buf, i), N, &err, &scale);
                }
            }
            double e = scale > 0 ? err / scale : err;
            if (!isnan(worst) && !(e <= worst)) worst = e; /* NaN, once seen, stays */
        }
    }
    gpu_timer_free(&t);
    *ms_out = st == LAB_OK ? median(ms, (size_t)reps) : 0.0;
    if (err_out) *err_out = worst;
    host_free(ms);
    host_free(want_buf);
    return st;
}

/* "key":value, for a figure of the JSON rows, with fmt for the value. printf
 * writes an infinite or NaN figure as inf or nan, which no JSON parser
 * reads (the grader would find no JSON at all, for every row): those are
 * null, as for a kernel that did not run. */
static void json_figure(FILE *f, const char *key, const char *fmt, double v) {
    fprintf(f, "\"%s\":", key);
    if (isfinite(v)) fprintf(f, fmt, v);
    else fputs("null", f);
    fputc(',', f);
}

/* Under the emulator the times are CPU times. What it can say about a GPU
 * is how the kernel's warps meet memory, so one more run, traced
 * (simt_memtrace.h), fills three columns. FLOP/B: the FLOPs per byte of the
 * 32-byte sectors the warps' loads of A and B touch (what the SMs' load/store
 * units request, before L1 and L2 catch the repeats), which tiling raises:
 * the point of labs 02 and 03. sect%: the fewest sectors the warps' loads
 * and stores could take for the bytes they ask for, as a share of the
 * sectors they touch (100: coalesced; a broadcast of one float, one sector
 * for 4 of its 32 bytes, is 100 too). bank%:
 * the fewest shared-memory passes as a share of those taken (100: no bank
 * conflicts; "-" without shared memory). All "-" when the build cannot
 * trace (a sanitizer build) or no global load was recorded (TMA loads, which
 * the tracer does not see); "-*" when a thread made more accesses than the
 * tracer keeps (SIMT_MEMTRACE_PER_THREAD), and *truncated is set. */
static void emu_memory_columns(const gemm_kernel_t *k, const bench_bufs_t *b, char *out, size_t n,
                               int *truncated) {
    snprintf(out, n, "%8s %6s %6s", "-", "-", "-");
#ifdef COURSE_SIMT
    if (!simt_memtrace_available()) return;
    gpu_memset(b->C, 0, (size_t)b->M * b->N * sizeof(float));
    simt_memtrace_start();
    int st = run_kernel(k, 0, b);
    simt_memtrace_stats s;
    simt_memtrace_stop(&s);
    if (s.dropped) { /* counts of part of the run only: no figure rather than a wrong one */
        *truncated = 1;
        snprintf(out, n, "%8s %6s %6s", "-*", "-*", "-*");
        return;
    }
    if (st != LAB_OK || s.global_load.cost == 0) return;
    const unsigned long long g = s.global_load.cost + s.global_store.cost;
    const unsigned long long gb = s.global_load.best + s.global_store.best;
    const unsigned long long sh = s.shared_load.cost + s.shared_store.cost;
    const unsigned long long sb = s.shared_load.best + s.shared_store.best;
    char bank[16] = "-";
    if (sh) snprintf(bank, sizeof bank, "%.0f", 100.0 * (double)sb / (double)sh);
    snprintf(out, n, "%8.3g %6.0f %6s", 2.0 * b->M * b->N * b->K / (32.0 * (double)s.global_load.cost),
             100.0 * (double)gb / (double)g, bank);
#else
    (void)k; (void)b; (void)truncated;
#endif
}

int gemm_bench_main(const char *lab, const char *summary, const gemm_kernel_t *kernels,
                    int nkernels, int argc, char **argv) {
    const int emulated = !HAVE_CUBLAS;
    /* Defaults depend on where kernels run; set before parsing so --help shows
     * them. Locals, not statics: a second call (a test's) starts from the
     * defaults, not from the first call's --json. */
    const char *sizes_arg = emulated ? "128" : "1024,2048,4096";
    const char *json_path = NULL;
    int reps = emulated ? 3 : 10;
    const arg_spec_t specs[] = {
        {"sizes", ARG_STRING, &sizes_arg, "comma-separated sizes, N (square) or MxNxK (emulator: M*N*K up to 1024^3)", 0, -1},
        {"reps", ARG_INT, &reps, "timed repetitions, median reported", 1, 1000},
        {"json", ARG_STRING, &json_path, "also write the rows as JSON to this file", 0, -1},
    };
    args_t a = {"bench", summary, specs, 3};
    args_parse_or_exit(&a, argc, argv);
    shape_t sizes[MAX_SIZES];
    int nsizes = parse_sizes(sizes_arg, sizes);
    if (nsizes < 1) {
        fprintf(stderr, "bench: --sizes '%s' is not a list like 1024,2048 or 512x256x128 "
                        "(each dimension 1..65536, at most %d entries)\n", sizes_arg, MAX_SIZES);
        return 2;
    }
    int warmup = emulated ? 1 : 2;
    /* The emulator runs a kernel at well under 1 GFLOP/s (GPU_EMU_FLOPS), and
     * each size runs every kernel warmup + reps + 1 (traced) times: 4096^3
     * would take most of an hour on two cores with no line printed. Refused up front, with the
     * estimate, rather than left to look like a hang. */
    for (int s = 0; emulated && s < nsizes; s++) {
        const double work = (double)sizes[s].M * sizes[s].N * sizes[s].K;
        char how_long[48];
        if (work <= EMU_MAX_WORK ||
            !gpu_emu_too_slow(2.0 * work * nkernels * (warmup + reps + 1), 0, how_long, sizeof how_long))
            continue;
        fprintf(stderr, "bench: %dx%dx%d is too large for the emulator: M*N*K is %.3g, over its limit of "
                        "1024^3 (%.3g); its %d kernels x %d runs would take %s on this CPU. Use --sizes up "
                        "to 1024 here (the default is 128); the speeds at 4096 and 8192 come from a GPU build "
                        "(TARGET=cuda).\n",
                sizes[s].M, sizes[s].N, sizes[s].K, work, EMU_MAX_WORK, nkernels, warmup + reps + 1, how_long);
        return 2;
    }
    if (!gpu_available()) {
        printf("bench: no GPU and not built for the emulator; nothing to time\n");
        return 0;
    }
    /* Opened before anything runs: a path that cannot be written costs no run. */
    FILE *jf = NULL;
    char jerr[256 + PATH_MAX];
    if (json_path && !(jf = course_create_output(json_path, "--json", jerr, sizeof jerr))) {
        fprintf(stderr, "bench: %s\n", jerr);
        return 2;
    }
    int any_bf16 = 0;
    for (int i = 0; i < nkernels; i++) any_bf16 |= kernels[i].bf16 != NULL;

    char dev[128], blas[64] = "";
    gpu_device_name(dev, sizeof dev);
#if HAVE_CUBLAS
    cublas_version(blas, sizeof blas);
#endif
    printf("# lab %s matmul ladder: C = A*B (alpha 1, beta 0), row-major, fp32 accumulation\n", lab);
    printf("# device: %s; median of %d reps%s\n", dev, reps, emulated ? "" : ", L2 flushed before each");
    if (emulated)
        printf("# no cuBLAS baseline under the emulator: times are CPU timings of the emulated kernels, "
               "not GPU speeds; err is against OpenBLAS\n");
    else
        printf("# baseline: %s sgemm, TF32 off%s; err is against the baseline's result\n", blas,
               any_bf16 ? " (bf16 kernels: cuBLAS bf16 GemmEx)" : "");
    if (emulated) {
        printf("# from one more, traced run: FLOP/B, FLOPs per byte of the 32-byte sectors the warps' loads "
               "of A and B touch (tiling raises it); sect%%, the fewest sectors the loads and stores could "
               "take over those they touch (100: coalesced); bank%%, the fewest shared-memory passes over those taken (100: no bank "
               "conflicts)\n");
        printf("# %5s %6s %6s  %-30s %10s %10s %8s %6s %6s %9s  %s\n", "M", "N", "K", "kernel", "time(ms)",
               "TFLOP/s", "FLOP/B", "sect%", "bank%", "err", "status");
    } else {
        printf("# %5s %6s %6s  %-30s %10s %10s %12s %9s  %s\n", "M", "N", "K", "kernel", "time(ms)",
               "TFLOP/s", "% of cuBLAS", "err", "status");
    }

    if (jf) {
        fprintf(jf, "{\"lab\":\"%s\",\"device\":", lab);
        course_json_string(jf, dev);
        fprintf(jf, ",\"emulator\":%s,\"reps\":%d,\"baseline\":%s,\"baseline_version\":",
                emulated ? "true" : "false", reps, emulated ? "null" : "\"cublas\"");
        if (emulated) fprintf(jf, "null");
        else course_json_string(jf, blas);
        fprintf(jf, ",\"results\":[");
    }
    int first_json = 1, bad = 0, truncated = 0;
    for (int s = 0; s < nsizes; s++) {
        bench_bufs_t b = {sizes[s].M, sizes[s].N, sizes[s].K, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        size_t nA = (size_t)b.M * b.K, nB = (size_t)b.K * b.N, nC = (size_t)b.M * b.N;
        float *A = host_malloc(nA * 4), *B = host_malloc(nB * 4), *C = host_malloc(nC * 4);
        float *ref = host_malloc(nC * 4); /* a run's reference product, on the host */
        rng_t root, r;
        rng_init(&root, 2024);
        r = rng_split(&root, 1); rng_fill_uniform(&r, A, nA, -1.0f, 1.0f);
        r = rng_split(&root, 2); rng_fill_uniform(&r, B, nB, -1.0f, 1.0f);
        rng_t inputs = rng_split(&root, 3); /* the seeds of each run's A, and the rows screened */
        b.A = gpu_malloc(nA * 4); b.B = gpu_malloc(nB * 4); b.C = gpu_malloc(nC * 4);
        if (!emulated) b.Cref = gpu_malloc(nC * 4);
        gpu_upload(b.A, A, nA * 4); /* the baselines run on A as generated */
        gpu_upload(b.B, B, nB * 4);
        b.B32 = B;
        uint16_t *Ah = NULL, *Bh = NULL;
        float *Br = NULL;
        if (any_bf16) {
            Ah = host_malloc(nA * 2); Bh = host_malloc(nB * 2); Br = host_malloc(nB * 4);
            bf16_from_float_array(Ah, A, nA);
            bf16_from_float_array(Bh, B, nB);
            float_from_bf16_array(Br, Bh, nB);
            b.B16 = Br;
            b.Ah = gpu_malloc(nA * 2); b.Bh = gpu_malloc(nB * 2);
            gpu_upload(b.Ah, Ah, nA * 2);
            gpu_upload(b.Bh, Bh, nB * 2);
        }

        /* Baselines (GPU only): timed on the inputs as generated, before any
         * kernel refills A. */
        double base_ms[2] = {0, 0};
        for (int p = 0; p < 1 + any_bf16; p++) {
            if (!emulated) {
                time_kernel(NULL, p, &b, warmup, reps, 0, NULL, NULL, NULL, NULL, &base_ms[p], NULL);
                double tf = tflops(2.0 * b.M * b.N * b.K, base_ms[p] * 1e-3);
                const char *bname = p ? "cuBLAS gemmEx (bf16 in)" : "cuBLAS sgemm (fp32)";
                printf("  %5d %6d %6d  %-30s %10.3f %10.4g %12.1f %9s  %s\n", b.M, b.N, b.K, bname,
                       base_ms[p], tf, 100.0, "-", "baseline");
                if (jf) {
                    fprintf(jf, "%s{\"kernel\":", first_json ? "" : ",");
                    course_json_string(jf, p ? "cublas_gemmex_bf16" : "cublas_sgemm");
                    fprintf(jf, ",\"M\":%d,\"N\":%d,\"K\":%d,", b.M, b.N, b.K);
                    json_figure(jf, "ms", "%.6f", base_ms[p]);
                    json_figure(jf, "tflops", "%.6f", tf);
                    json_figure(jf, "baseline_ms", "%.6f", base_ms[p]);
                    fprintf(jf, "\"ratio\":1.0,\"err\":0,\"status\":\"baseline\"}");
                    first_json = 0;
                }
            }
        }

        for (int i = 0; i < nkernels; i++) {
            const gemm_kernel_t *k = &kernels[i];
            int p = k->bf16 != NULL;
            /* time_kernel() gives every run fresh inputs and a C full of NaN
             * and screens what the run wrote, so a kernel cannot pass off an
             * earlier run's result (or the previous kernel's) as its own. */
            double ms = 0.0, err = 0.0;
            /* (the host A is only scratch from here on) */
            int st = time_kernel(k, p, &b, warmup, reps, 1, &inputs, A, ref, C, &ms, &err);
            const char *status;
            double tf = 0.0, ratio = 0.0;
            if (st == LAB_OK) {
                tf = tflops(2.0 * b.M * b.N * b.K, ms * 1e-3);
                ratio = emulated ? 0.0 : base_ms[p] / ms;
                /* A gross-error screen, not a numerics check: fp32 kernels
                 * agree with cuBLAS to ~1e-6 of the largest element; 1e-2
                 * leaves room for tf32 and still flags a wrong result. */
                status = err <= 1e-2 ? "ok" : "WRONG";
                if (!(err <= 1e-2)) bad = 1;
                char pct[40];
                if (emulated) emu_memory_columns(k, &b, pct, sizeof pct, &truncated);
                else snprintf(pct, sizeof pct, "%12.1f", 100.0 * ratio);
                printf("  %5d %6d %6d  %-30s %10.3f %10.4g %s %9.2e  %s\n", b.M, b.N, b.K, k->name,
                       ms, tf, pct, err, status);
            } else {
                status = st == LAB_NOT_IMPLEMENTED ? "not implemented" : "failed";
                if (st != LAB_NOT_IMPLEMENTED) bad = 1;
                printf("  %5d %6d %6d  %-30s %10s %10s %*s %9s  %s\n", b.M, b.N, b.K, k->name, "-",
                       "-", emulated ? 22 : 12, "-", "-",
                       st == LAB_NOT_IMPLEMENTED ? "not implemented (TODO)" : lab_status_name(st));
            }
            if (jf) {
                fprintf(jf, "%s{\"kernel\":", first_json ? "" : ",");
                course_json_string(jf, k->name);
                fprintf(jf, ",\"M\":%d,\"N\":%d,\"K\":%d,", b.M, b.N, b.K);
                if (st == LAB_OK) {
                    json_figure(jf, "ms", "%.6g", ms);
                    json_figure(jf, "tflops", "%.6g", tf);
                    if (emulated) {
                        fprintf(jf, "\"baseline_ms\":null,\"ratio\":null,");
                    } else {
                        json_figure(jf, "baseline_ms", "%.6f", base_ms[p]);
                        json_figure(jf, "ratio", "%.6f", ratio);
                    }
                    json_figure(jf, "err", "%.3e", err); /* NaN: C left NaN somewhere; inf: an overflow */
                } else {
                    fprintf(jf, "\"ms\":null,\"tflops\":null,\"baseline_ms\":null,\"ratio\":null,\"err\":null,");
                }
                fprintf(jf, "\"status\":");
                course_json_string(jf, st == LAB_OK ? (err <= 1e-2 ? "ok" : "wrong")
                                : st == LAB_NOT_IMPLEMENTED ? "not implemented" : "failed");
                fprintf(jf, "}");
                first_json = 0;
            }
        }
        gpu_free(b.A); gpu_free(b.B); gpu_free(b.C); gpu_free(b.Ah); gpu_free(b.Bh); gpu_free(b.Cref);
        host_free(A); host_free(B); host_free(C); host_free(ref);
        host_free(Ah); host_free(Bh); host_free(Br);
    }
    if (truncated)
        printf("# -*: a thread made more memory accesses than the emulator's tracer keeps; the memory columns "
               "need a smaller size (the default, 128, fits every kernel of labs 01-04)\n");
    if (jf) {
        fprintf(jf, "]}\n");
        fclose(jf);
    }
#if HAVE_CUBLAS
    cublas_gemm_shutdown();
#endif
    return bad;
}
