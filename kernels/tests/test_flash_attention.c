/*
 * The fused causal attention (kernels/cuda/flash_attention.h) against the CPU
 * reference attention (kernels/cpu/model_ops.h), on the emulator or a GPU;
 * each device test skips, visibly, where there is no device.
 *
 * Sequence lengths are awkward on purpose: 1, 7, 33, 65, 130 are not
 * multiples of the 64-row tile, so every edge tile is partly masked; 64 and
 * 128 fill their tiles exactly. Every supported head size is covered, with
 * several (sequence, head) pairs so that a mixed-up head or sequence offset
 * shows. Inputs are rounded to bf16 first, so kernel and reference see the
 * same numbers; the tolerances then come only from the kernel's own bf16
 * roundings (of P, of dout, of dS), with the bound worked out per element.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cpu/model_ops.h"
#include "cuda/flash_attention.h"
#include "cuda/model_ops_gpu.h"
#include "error.h"
#include "gpu.h"
#include "half.h"
#include "labcheck.h"
#include "memory.h"
#include "numerics.h"
#include "rng.h"
#include "tests/child.h"

/* ---- device buffers with guard zones -------------------------------------------- */

/* A device buffer of n 32-bit words with GUARD words on each side. The whole
 * allocation starts as a NaN pattern: an element the kernel forgets to write
 * stays NaN (which every comparison fails), and a write past either end
 * changes a guard word. GUARD covers a whole 64-row tile of the widest test
 * (D = 128), so a tile that wrote its rows past T would land in it. */
#define GUARD (64 * 128)
#define POISON 0x7fc0dead

typedef struct {
    uint32_t *base; /* device, n + 2 * GUARD words */
    size_t n;
} guarded_t;

static guarded_t guarded_alloc(size_t words) {
    guarded_t g = {gpu_malloc((words + 2 * GUARD) * 4), words};
    uint32_t *h = host_malloc((words + 2 * GUARD) * 4);
    for (size_t i = 0; i < words + 2 * GUARD; i++) h[i] = POISON;
    gpu_upload(g.base, h, (words + 2 * GUARD) * 4);
    host_free(h);
    return g;
}

static void *inner(guarded_t g) { return g.base + GUARD; }

/* Downloads the interior (n words) and fails if a guard word changed. */
static void *guarded_down(guarded_t g, const char *what) {
    uint32_t *h = host_malloc((g.n + 2 * GUARD) * 4);
    gpu_download(h, g.base, (g.n + 2 * GUARD) * 4);
    for (size_t i = 0; i < GUARD; i++) {
        if (h[i] != POISON) fail_msg("%s: guard word %zu before the buffer was overwritten", what, GUARD - i);
        if (h[GUARD + g.n + i] != POISON) fail_msg("%s: guard word %zu past the end was overwritten", what, i);
    }
    void *out = host_malloc(g.n * 4 + 4);
    memcpy(out, h + GUARD, g.n * 4);
    host_free(h);
    return out;
}

/* ---- inputs and the reference ---------------------------------------------------- */

static float *rnd(size_t n, float lo, float hi, uint64_t seed) {
    float *x = host_malloc(n * sizeof(float) + 4);
    rng_t r;
    rng_init(&r, seed);
    rng_fill_uniform(&r, x, n, lo, hi);
    return x;
}

/* [B*T, D] fp32 -> [B, H, T, hd] bf16 bits: what gpu_heads_split_bf16() does. */
static uint16_t *split_bf16(const float *x, int B, int T, int D, int H) {
    const int hd = D / H;
    uint16_t *h = host_malloc((size_t)B * T * D * 2 + 4);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < D; c++)
                h[(((size_t)b * H + c / hd) * T + t) * hd + c % hd] = bf16_from_float(x[((size_t)b * T + t) * D + c]);
    return h;
}

/* The problem, the reference results and the per-element error magnitudes. */
typedef struct {
    int B, T, D, H, hd;
    size_t ND, BHT;
    float *q, *k, *v, *dout;            /* [N, D]; all already bf16 values */
    uint16_t *qh, *kh, *vh;             /* [B, H, T, hd] bf16 bits */
    float *out, *dq, *dk, *dv;          /* CPU reference (fp32) */
    double *out_d, *dq_d, *dk_d, *dv_d; /* the same, widened for check_gemm_bound */
    double *lse;                        /* [B, H, T] double reference */
    double *mag_out, *mag_dq, *mag_dk, *mag_dv, *mag_lse;
} problem_t;

static double *widen(const float *x, size_t n) {
    double *d = host_malloc(n * sizeof(double) + 8);
    for (size_t i = 0; i < n; i++) d[i] = x[i];
    return d;
}

/* What make_problem_kind() draws besides the default inputs. */
enum {
    PROBLEM_PLAIN,     /* q, k in [-2, 2), v and dout in [-1, 1), all rounded to bf16 */
    PROBLEM_FIRST_KEY, /* key 0 of every head far above the rest: the running maximum never moves after it */
    PROBLEM_FP32_DOUT, /* dout left in fp32: the backward must round it to bf16 itself, Delta included */
};

static problem_t make_problem_kind(int B, int T, int H, int hd, uint64_t seed, int kind) {
    problem_t p;
    memset(&p, 0, sizeof p);
    p.B = B, p.T = T, p.H = H, p.hd = hd, p.D = H * hd;
    const int D = p.D;
    p.ND = (size_t)B * T * D;
    p.BHT = (size_t)B * H * T;
    /* Scores q.k / sqrt(hd) of spread about 1.3: peaked enough that the
     * running maximum moves between tiles, not so peaked that P is one-hot. */
    p.q = rnd(p.ND, -2, 2, seed);
    p.k = rnd(p.ND, -2, 2, seed + 1);
    p.v = rnd(p.ND, -1, 1, seed + 2);
    p.dout = rnd(p.ND, -1, 1, seed + 3);
    if (kind == PROBLEM_FIRST_KEY) {
        /* q in [1, 2), k in [-2, -1) but 30 at position 0: at hd 16 key 0 scores about +180 and
         * every other key about -9, so each row's maximum is set by the first tile, and exp2 of
         * the later tiles' local maxima minus it (2^-270) underflows, as its inverse would overflow. */
        for (size_t i = 0; i < p.ND; i++) {
            p.q[i] = 1.5f + 0.25f * p.q[i];
            p.k[i] = (i / D) % T == 0 ? 30.0f : -1.5f + 0.25f * p.k[i];
        }
    }
    for (size_t i = 0; i < p.ND; i++) { /* dout too: the bf16 backward reads it as bf16 */
        p.q[i] = round_to_bf16(p.q[i]);
        p.k[i] = round_to_bf16(p.k[i]);
        p.v[i] = round_to_bf16(p.v[i]);
        if (kind != PROBLEM_FP32_DOUT) p.dout[i] = round_to_bf16(p.dout[i]);
    }
    p.qh = split_bf16(p.q, B, T, D, H);
    p.kh = split_bf16(p.k, B, T, D, H);
    p.vh = split_bf16(p.v, B, T, D, H);

    float *att = host_malloc((size_t)B * H * T * T * sizeof(float));
    p.out = host_malloc(p.ND * 4);
    p.dq = host_calloc(p.ND, 4);
    p.dk = host_calloc(p.ND, 4);
    p.dv = host_calloc(p.ND, 4);
    attention_forward(p.out, att, p.q, p.k, p.v, B, T, D, H);
    attention_backward(p.dq, p.dk, p.dv, p.dout, att, p.q, p.k, p.v, B, T, D, H);
    p.out_d = widen(p.out, p.ND);
    p.dq_d = widen(p.dq, p.ND);
    p.dk_d = widen(p.dk, p.ND);
    p.dv_d = widen(p.dv, p.ND);

    p.lse = host_malloc(p.BHT * sizeof(double));
    p.mag_lse = host_malloc(p.BHT * sizeof(double));
    p.mag_out = host_calloc(p.ND, sizeof(double));
    p.mag_dq = host_calloc(p.ND, sizeof(double));
    p.mag_dk = host_calloc(p.ND, sizeof(double));
    p.mag_dv = host_calloc(p.ND, sizeof(double));
    const double scale = 1.0 / sqrt((double)hd);
    double *A = host_malloc((size_t)T * sizeof(double)), *E = host_malloc((size_t)T * sizeof(double));
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const float *P = att + ((size_t)b * H + h) * T * T;
#define AT(x, t, c) (x)[((size_t)b * T + (t)) * D + (size_t)h * hd + (c)]
            for (int i = 0; i < T; i++) {
                /* The logsumexp in double, and what bounds its fp32 error: the
                 * length-hd dot products (hd eps |q||k|), the length-T sum of
                 * exponentials (T eps), exp2f and log2f (a few ulps of |L|). */
                double mx = -INFINITY, qk_abs = 0.0, sum = 0.0;
                for (int j = 0; j <= i; j++) {
                    double s = 0.0, sa = 0.0;
                    for (int c = 0; c < hd; c++) {
                        s += (double)AT(p.q, i, c) * AT(p.k, j, c);
                        sa += fabs((double)AT(p.q, i, c) * AT(p.k, j, c));
                    }
                    E[j] = s * scale;
                    mx = fmax(mx, E[j]);
                    qk_abs = fmax(qk_abs, sa * scale);
                }
                for (int j = 0; j <= i; j++) sum += exp(E[j] - mx);
                const size_t r = ((size_t)b * H + h) * T + i;
                p.lse[r] = mx + log(sum);
                p.mag_lse[r] = hd * qk_abs + (T + 8) + 8 * fabs(p.lse[r]);

                /* Backward magnitudes: A_ij = sum_d |dO_id||v_jd| bounds the error
                 * of dP_ij from rounding dout to bf16; Abar_i = sum_j P_ij A_ij that
                 * of Delta_i through out's error; E_ij = scale (P_ij (A_ij + Abar_i)
                 * + |dS_ij|) bounds u times the error of the bf16 dS_ij. */
                const float *Pi = P + (size_t)i * T;
                double abar = 0.0, delta = 0.0;
                for (int j = 0; j <= i; j++) {
                    double a = 0.0, dp = 0.0;
                    for (int c = 0; c < hd; c++) {
                        a += fabs((double)AT(p.dout, i, c) * AT(p.v, j, c));
                        dp += (double)AT(p.dout, i, c) * AT(p.v, j, c);
                    }
                    A[j] = a;
                    E[j] = dp; /* dP for now */
                    abar += Pi[j] * a;
                    delta += Pi[j] * dp;
                }
                for (int j = 0; j <= i; j++) E[j] = scale * (Pi[j] * (A[j] + abar) + fabs(Pi[j] * (E[j] - delta)));
                for (int j = 0; j <= i; j++)
                    for (int c = 0; c < hd; c++) {
                        AT(p.mag_out, i, c) += Pi[j] * fabs(AT(p.v, j, c));
                        AT(p.mag_dv, j, c) += Pi[j] * fabs(AT(p.dout, i, c));
                        AT(p.mag_dq, i, c) += E[j] * fabs(AT(p.k, j, c));
                        AT(p.mag_dk, j, c) += E[j] * fabs(AT(p.q, i, c));
                    }
            }
#undef AT
        }
    host_free(A);
    host_free(E);
    host_free(att);
    return p;
}

static problem_t make_problem(int B, int T, int H, int hd, uint64_t seed) {
    return make_problem_kind(B, T, H, hd, seed, PROBLEM_PLAIN);
}

static void free_problem(problem_t *p) {
    void *h[] = {p->q, p->k, p->v, p->dout, p->qh, p->kh, p->vh, p->out, p->dq, p->dk, p->dv, p->out_d,
                 p->dq_d, p->dk_d, p->dv_d, p->lse, p->mag_out, p->mag_dq, p->mag_dk, p->mag_dv, p->mag_lse};
    for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) host_free(h[i]);
}

/* ---- running the kernels ------------------------------------------------------------ */

typedef struct {
    uint16_t *q, *k, *v;
    float *dout;
    guarded_t out, lse, dq, dk, dv, dob, delta;
} device_run_t;

static device_run_t upload(const problem_t *p) {
    device_run_t d;
    const size_t nb = p->ND * 2;
    d.q = gpu_malloc(nb);
    d.k = gpu_malloc(nb);
    d.v = gpu_malloc(nb);
    d.dout = gpu_malloc(p->ND * 4);
    gpu_upload(d.q, p->qh, nb);
    gpu_upload(d.k, p->kh, nb);
    gpu_upload(d.v, p->vh, nb);
    gpu_upload(d.dout, p->dout, p->ND * 4);
    d.out = guarded_alloc(p->ND);
    d.lse = guarded_alloc(p->BHT);
    d.dq = guarded_alloc(p->ND);
    d.dk = guarded_alloc(p->ND);
    d.dv = guarded_alloc(p->ND);
    d.dob = guarded_alloc((p->ND + 1) / 2); /* bf16: two per word */
    d.delta = guarded_alloc(p->BHT);
    return d;
}

static void run_forward(const problem_t *p, device_run_t *d) {
    gpu_flash_attention_forward(inner(d->out), inner(d->lse), d->q, d->k, d->v, p->B, p->T, p->D, p->H);
}

static void run_backward(const problem_t *p, device_run_t *d) {
    gpu_flash_attention_backward(inner(d->dq), inner(d->dk), inner(d->dv), inner(d->dob), inner(d->delta), d->dout,
                                 inner(d->out), inner(d->lse), d->q, d->k, d->v, p->B, p->T, p->D, p->H);
}

static void free_run(device_run_t *d) {
    gpu_free(d->q); gpu_free(d->k); gpu_free(d->v); gpu_free(d->dout);
    guarded_t g[] = {d->out, d->lse, d->dq, d->dk, d->dv, d->dob, d->delta};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) gpu_free(g[i].base);
}

/* The backward's first kernel: dout rounded to bf16 in the heads layout (bit
 * for bit as the host rounds it), and Delta_i = sum_d bf16(dout_id) out_id
 * from the out the forward pass produced. */
static void check_row_pass(const problem_t *p, const device_run_t *d, const float *out) {
    uint16_t *dob = guarded_down(d->dob, "dout_bf16 scratch"), *want_dob = split_bf16(p->dout, p->B, p->T, p->D, p->H);
    for (size_t i = 0; i < p->ND; i++)
        if (dob[i] != want_dob[i]) fail_msg("dout_bf16[%zu] = 0x%04x, want 0x%04x", i, dob[i], want_dob[i]);
    float *delta = guarded_down(d->delta, "delta scratch");
    double *want = host_malloc(p->BHT * sizeof(double)), *mag = host_malloc(p->BHT * sizeof(double));
    const int hd = p->hd;
    for (int b = 0; b < p->B; b++)
        for (int h = 0; h < p->H; h++)
            for (int t = 0; t < p->T; t++) {
                const size_t row = ((size_t)b * p->H + h) * p->T + t, at = ((size_t)b * p->T + t) * p->D + (size_t)h * hd;
                double s = 0.0, a = 0.0;
                for (int c = 0; c < hd; c++) {
                    const double x = float_from_bf16(want_dob[row * hd + c]) * (double)out[at + c];
                    s += x;
                    a += fabs(x);
                }
                want[row] = s;
                mag[row] = a;
            }
    cmp_report_t rep;
    /* A length-hd fp32 dot product: (hd + 1) eps sum |x| (Higham 3.1). */
    LAB_REQUIRE_CLOSE(check_gemm_bound(delta, want, mag, (int)p->BHT, 1, hd + 1, EPS_FP32, 1.0, &rep), "delta", &rep);
    host_free(dob); host_free(want_dob); host_free(delta); host_free(want); host_free(mag);
}

/* hd 128's backward needs 103 KB of shared memory per block: GPUs that allow
 * 99 KB (sm_86/89) refuse it, as gpu_flash_attention_supported() says. Such a
 * shape is skipped there, saying so; every test also has shapes that run. */
static int head_size_fits(int hd) {
    if (gpu_flash_attention_supported(hd)) return 1;
    print_message("skipped: head size %d needs more shared memory per block than this device allows\n", hd);
    return 0;
}

/* Forward and backward on one shape and kind of input against the reference. */
static void check_shape_kind(int B, int T, int H, int hd, uint64_t seed, int kind) {
    if (!head_size_fits(hd)) return;
    problem_t p = make_problem_kind(B, T, H, hd, seed, kind);
    device_run_t d = upload(&p);
    char what[160];
    cmp_report_t rep;
    const int N = B * T, D = p.D;

    run_forward(&p, &d);
    float *out = guarded_down(d.out, "out"), *lse = guarded_down(d.lse, "lse");
    /* P is rounded to bf16 (relative u) before P V; everything else is fp32:
     * |err| <= u sum_j P_ij |v_jd|, times 2 for the fp32 softmax and sums. */
    snprintf(what, sizeof what, "out (B %d T %d H %d hd %d)", B, T, H, hd);
    LAB_REQUIRE_CLOSE(check_gemm_bound(out, p.out_d, p.mag_out, N, D, 1, EPS_BF16, 2.0, &rep), what, &rep);
    /* fp32 throughout (magnitudes in make_problem), with a factor 2 to spare. */
    snprintf(what, sizeof what, "lse (B %d T %d H %d hd %d)", B, T, H, hd);
    LAB_REQUIRE_CLOSE(check_gemm_bound(lse, p.lse, p.mag_lse, (int)p.BHT, 1, 1, EPS_FP32, 2.0, &rep), what, &rep);

    run_backward(&p, &d);
    float *dq = guarded_down(d.dq, "dq"), *dk = guarded_down(d.dk, "dk"), *dv = guarded_down(d.dv, "dv");
    check_row_pass(&p, &d, out);
    /* dV = P^T dO with P and dO rounded to bf16: 2u per product, plus fp32. */
    snprintf(what, sizeof what, "dv (B %d T %d H %d hd %d)", B, T, H, hd);
    LAB_REQUIRE_CLOSE(check_gemm_bound(dv, p.dv_d, p.mag_dv, N, D, 1, EPS_BF16, 3.0, &rep), what, &rep);
    /* dQ = dS K, dK = dS^T Q: each dS_ij is off by at most u E_ij (the bf16
     * rounding of dS, of dout inside dP, and out's error inside Delta; see
     * make_problem); 2 leaves room for the fp32 recomputation of P. */
    snprintf(what, sizeof what, "dq (B %d T %d H %d hd %d)", B, T, H, hd);
    LAB_REQUIRE_CLOSE(check_gemm_bound(dq, p.dq_d, p.mag_dq, N, D, 1, EPS_BF16, 2.0, &rep), what, &rep);
    snprintf(what, sizeof what, "dk (B %d T %d H %d hd %d)", B, T, H, hd);
    LAB_REQUIRE_CLOSE(check_gemm_bound(dk, p.dk_d, p.mag_dk, N, D, 1, EPS_BF16, 2.0, &rep), what, &rep);

    host_free(out); host_free(lse); host_free(dq); host_free(dk); host_free(dv);
    free_run(&d);
    free_problem(&p);
}

static void check_shape(int B, int T, int H, int hd, uint64_t seed) { check_shape_kind(B, T, H, hd, seed, PROBLEM_PLAIN); }

/* ---- tests ----------------------------------------------------------------------------- */

static void test_short_sequences(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    check_shape(1, 1, 1, 16, 100); /* one token: out = v, dq = dk = 0 */
    check_shape(2, 7, 3, 16, 110); /* far less than a tile; 6 (sequence, head) pairs */
    check_shape(3, 33, 2, 32, 120);
}

static void test_tile_edges(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    check_shape(1, 64, 2, 32, 200);  /* exactly one tile */
    check_shape(2, 65, 1, 64, 210);  /* one row into the second tile */
    check_shape(1, 130, 2, 16, 220); /* three tiles, the last with 2 rows */
}

static void test_head_sizes(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    check_shape(1, 128, 1, 64, 300);  /* two full tiles: the pipeline's both buffers */
    check_shape(2, 33, 1, 128, 310);  /* the largest head (above 48 KiB of shared memory) */
    check_shape(1, 130, 1, 128, 320);
}

/* Many K/V tiles per row: the pipeline's buffers alternate several times,
 * and the running maximum has many chances to move. */
static void test_long_sequence(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    check_shape(1, 300, 2, 64, 500); /* the model's head size; 5 tiles, the last with 44 rows */
    check_shape(2, 257, 3, 16, 510); /* 6 (sequence, head) pairs, one row into the fifth tile */
    check_shape(1, 1024, 1, 64, 520); /* the model's sequence length: 16 tiles */
}

/* Inputs far from the default spread, on three K/V tiles and distinct heads:
 * - key 0 dominating every row: the running maximum must only grow (a tile's
 *   own maximum taken instead rescales by 2^270: inf, then NaN);
 * - dout not representable in bf16: the backward's rounding of it, and
 *   Delta from the rounded values (check_row_pass), as the comment of
 *   flash_delta_kernel says; Delta from the fp32 dout is off by about 2^-9
 *   of its terms, far above the fp32 bound. */
static void test_extreme_inputs(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    check_shape_kind(2, 130, 2, 16, 800, PROBLEM_FIRST_KEY);
    check_shape_kind(2, 70, 2, 32, 810, PROBLEM_FP32_DOUT);
}

/* Two backward passes (and forward passes) on the same inputs: bit-identical. */
static void test_deterministic(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    problem_t p = make_problem(2, 130, 1, 32, 400);
    device_run_t a = upload(&p), b = upload(&p);
    run_forward(&p, &a);
    run_forward(&p, &b);
    run_backward(&p, &a);
    run_backward(&p, &b);
    const char *names[] = {"out", "lse", "dq", "dk", "dv"};
    guarded_t ga[] = {a.out, a.lse, a.dq, a.dk, a.dv}, gb[] = {b.out, b.lse, b.dq, b.dk, b.dv};
    for (int i = 0; i < 5; i++) {
        void *x = guarded_down(ga[i], names[i]), *y = guarded_down(gb[i], names[i]);
        if (memcmp(x, y, ga[i].n * 4) != 0) fail_msg("%s differs between two runs on the same inputs", names[i]);
        host_free(x);
        host_free(y);
    }
    free_run(&a);
    free_run(&b);
    free_problem(&p);
}

/* Buffers that start 2 bytes (bf16) or 4 bytes (fp32) past an aligned
 * address, as carving a shared allocation can give: the tiles then take the
 * element-by-element path instead of 16-byte cp.async, with results
 * bit-identical to the aligned run. */
static void test_misaligned_buffers(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    problem_t p = make_problem(2, 70, 2, 32, 600);
    device_run_t a = upload(&p);
    run_forward(&p, &a);
    run_backward(&p, &a);

    const size_t nb = p.ND * 2 + 16, nf = p.ND * 4 + 16, nr = p.BHT * 4 + 16;
    uint16_t *q = gpu_malloc(nb), *k = gpu_malloc(nb), *v = gpu_malloc(nb), *dob = gpu_malloc(nb);
    float *out = gpu_malloc(nf), *dout = gpu_malloc(nf), *dq = gpu_malloc(nf), *dk = gpu_malloc(nf);
    float *dv = gpu_malloc(nf), *lse = gpu_malloc(nr), *delta = gpu_malloc(nr);
    gpu_upload(q + 1, p.qh, p.ND * 2);
    gpu_upload(k + 1, p.kh, p.ND * 2);
    gpu_upload(v + 1, p.vh, p.ND * 2);
    gpu_upload(dout + 1, p.dout, p.ND * 4);
    gpu_flash_attention_forward(out + 1, lse + 1, q + 1, k + 1, v + 1, p.B, p.T, p.D, p.H);
    gpu_flash_attention_backward(dq + 1, dk + 1, dv + 1, dob + 1, delta + 1, dout + 1, out + 1, lse + 1, q + 1, k + 1,
                                 v + 1, p.B, p.T, p.D, p.H);
    const char *names[] = {"out", "lse", "dq", "dk", "dv"};
    guarded_t want[] = {a.out, a.lse, a.dq, a.dk, a.dv};
    float *got[] = {out, lse, dq, dk, dv};
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) /* q, k, v aligned and only the dout_bf16 scratch off: the tiles of dO must notice */
            gpu_flash_attention_backward(dq + 1, dk + 1, dv + 1, dob + 1, delta + 1, dout + 1, out + 1, lse + 1, a.q,
                                         a.k, a.v, p.B, p.T, p.D, p.H);
        for (int i = pass ? 2 : 0; i < 5; i++) {
            float *x = guarded_down(want[i], names[i]), *y = host_malloc(want[i].n * 4 + 4);
            gpu_download(y, got[i] + 1, want[i].n * 4);
            if (memcmp(x, y, want[i].n * 4) != 0)
                fail_msg("%s from misaligned buffers%s differs from the aligned run", names[i],
                         pass ? " (only dout_bf16 misaligned)" : "");
            host_free(x);
            host_free(y);
        }
    }
    void *dev[] = {q, k, v, dob, out, dout, dq, dk, dv, lse, delta};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) gpu_free(dev[i]);
    free_run(&a);
    free_problem(&p);
}

/* Two bf16 bit patterns at most one unit in the last place apart (same sign, adjacent magnitudes). */
static int within_one_ulp(uint16_t a, uint16_t b) {
    if (a == b) return 1;
    if ((a ^ b) & 0x8000u) return 0;
    return a + 1 == b || b + 1 == a;
}

/*
 * The _bf16 variants against the fp32 ones and the separate passes they
 * replace, on one shape, with the bf16 outputs shift (0 or 1) elements past a
 * 4-byte boundary:
 *  - forward: out and lse bit for bit as the fp32 call writes them, and the
 *    bf16 copy exactly bf16(out) (the same fp32 value, rounded once), with
 *    or without the fp32 out;
 *  - backward, from bf16 dout and out (also shift elements off): dq, dk, dv
 *    with RoPE tables equal to gpu_rope_cast_qkv_bf16() of the fp32
 *    backward's gradients for the same (widened) dout and out within one
 *    bf16 unit (either kernel may contract the rotation into fmas its own
 *    way); without tables, exactly their rounding.
 * A rotation by the wrong sign, of v, of the wrong position or pair, or none
 * at all, moves many elements by far more than one unit.
 */
static void check_bf16_outputs(int B, int T, int H, int hd, int shift, uint64_t seed) {
    if (!head_size_fits(hd)) return;
    problem_t p = make_problem(B, T, H, hd, seed);
    device_run_t d = upload(&p);
    const int N = B * T, D = p.D;
    const size_t ND = p.ND;
    run_forward(&p, &d);
    float *out = guarded_down(d.out, "out"), *lse = guarded_down(d.lse, "lse");

    /* Forward: the fp32 results again, plus their bf16 copy; then the bf16 copy alone. */
    guarded_t out2 = guarded_alloc(ND), lse2 = guarded_alloc(p.BHT), ob = guarded_alloc((ND + shift + 1) / 2);
    gpu_flash_attention_forward_bf16(inner(out2), (uint16_t *)inner(ob) + shift, inner(lse2), d.q, d.k, d.v, B, T, D,
                                     H);
    float *o2 = guarded_down(out2, "out (bf16 variant)"), *l2 = guarded_down(lse2, "lse (bf16 variant)");
    uint16_t *obh = guarded_down(ob, "out_bf16");
    if (memcmp(o2, out, ND * 4) != 0) fail_msg("forward_bf16: out differs from gpu_flash_attention_forward's");
    if (memcmp(l2, lse, p.BHT * 4) != 0) fail_msg("forward_bf16: lse differs from gpu_flash_attention_forward's");
    if (shift && obh[0] != (uint16_t)POISON) fail_msg("forward_bf16 wrote the element before out_bf16");
    for (size_t i = 0; i < ND; i++)
        if (obh[shift + i] != bf16_from_float(out[i]))
            fail_msg("forward_bf16 (B %d T %d H %d hd %d): out_bf16[%zu] = 0x%04x, want bf16(%.9g) = 0x%04x", B, T, H,
                     hd, i, obh[shift + i], (double)out[i], bf16_from_float(out[i]));
    guarded_t ob2 = guarded_alloc((ND + 1) / 2);
    gpu_flash_attention_forward_bf16(NULL, inner(ob2), inner(lse2), d.q, d.k, d.v, B, T, D, H);
    uint16_t *obh2 = guarded_down(ob2, "out_bf16 without out");
    if (memcmp(obh2, obh + shift, ND * 2) != 0) fail_msg("forward_bf16 with out NULL: out_bf16 differs");

    /* The fp32 backward from the values the bf16 one reads: out rounded (dout already is). */
    for (size_t i = 0; i < ND; i++) out[i] = round_to_bf16(out[i]);
    gpu_upload(inner(d.out), out, ND * sizeof(float));
    run_backward(&p, &d);
    float *dqkv = host_malloc(3 * ND * sizeof(float) + 4), *part[3];
    guarded_t g32[3] = {d.dq, d.dk, d.dv};
    for (int z = 0; z < 3; z++) {
        part[z] = guarded_down(g32[z], "fp32 gradient");
        memcpy(dqkv + z * ND, part[z], ND * sizeof(float));
        host_free(part[z]);
    }
    uint16_t *d_doutb = (uint16_t *)gpu_malloc((ND + 1) * 2) + shift; /* dout's bits, 2 bytes off with shift */
    gpu_cast_to_bf16(d_doutb, d.dout, ND);

    /* Backward, with and without the RoPE tables. */
    const size_t table = (size_t)T * (hd / 2) * sizeof(float);
    float *c = host_malloc(table + 4), *sn = host_malloc(table + 4);
    rope_tables(c, sn, T, hd, 10000.0f);
    float *d_c = gpu_malloc(table), *d_s = gpu_malloc(table);
    gpu_upload(d_c, c, table);
    gpu_upload(d_s, sn, table);
    float *d_f32 = gpu_malloc(3 * ND * sizeof(float));
    gpu_upload(d_f32, dqkv, 3 * ND * sizeof(float));
    uint16_t *d_want = gpu_malloc(3 * ND * 2);
    const char *names[3] = {"dq", "dk", "dv"};
    for (int rope = 1; rope >= 0; rope--) {
        if (rope)
            gpu_rope_cast_qkv_bf16(d_want, d_f32, d_c, d_s, N, T, D, H, -1.0f);
        else
            gpu_cast_to_bf16(d_want, d_f32, 3 * ND);
        guarded_t gb = guarded_alloc((3 * ND + shift + 1) / 2), dob = guarded_alloc((ND + 1) / 2),
                  delta = guarded_alloc(p.BHT);
        gpu_flash_attention_backward_bf16((uint16_t *)inner(gb) + shift, inner(dob), inner(delta), d_doutb,
                                          (uint16_t *)inner(ob) + shift, inner(d.lse), d.q, d.k, d.v,
                                          rope ? d_c : NULL, rope ? d_s : NULL, B, T, D, H);
        uint16_t *got = guarded_down(gb, "dqkv bf16"), *want = host_malloc(3 * ND * 2 + 4);
        gpu_download(want, d_want, 3 * ND * 2);
        if (shift && got[0] != (uint16_t)POISON) fail_msg("backward_bf16 wrote the element before dqkv");
        size_t off_by_one = 0;
        for (size_t i = 0; i < 3 * ND; i++) {
            const uint16_t x = got[shift + i], y = want[i];
            if (rope ? within_one_ulp(x, y) : x == y) {
                off_by_one += x != y;
                continue;
            }
            const size_t e = i % ND;
            fail_msg("backward_bf16 (B %d T %d H %d hd %d, %s): %s[row %zu][col %zu] = %.6g (0x%04x), want %.6g "
                     "(0x%04x) from %s",
                     B, T, H, hd, rope ? "RoPE undone" : "no tables", names[i / ND], e / D, e % D,
                     (double)float_from_bf16(x), x, (double)float_from_bf16(y), y,
                     rope ? "gpu_rope_cast_qkv_bf16 of the fp32 gradients" : "the fp32 gradients rounded");
        }
        /* One-unit differences come only from fma contraction: rare, never most of the elements. */
        if (off_by_one > 3 * ND / 16)
            fail_msg("backward_bf16: %zu of %zu elements one bf16 unit off the separate passes", off_by_one, 3 * ND);
        host_free(got);
        host_free(want);
        gpu_free(gb.base);
        gpu_free(dob.base);
        gpu_free(delta.base);
    }
    gpu_free(d_c); gpu_free(d_s); gpu_free(d_f32); gpu_free(d_want); gpu_free(d_doutb - shift);
    gpu_free(out2.base); gpu_free(lse2.base); gpu_free(ob.base); gpu_free(ob2.base);
    host_free(c); host_free(sn); host_free(o2); host_free(l2); host_free(obh); host_free(obh2);
    host_free(out); host_free(lse); host_free(dqkv);
    free_run(&d);
    free_problem(&p);
}

static void test_bf16_outputs(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    check_bf16_outputs(2, 7, 3, 16, 1, 700);  /* short, 6 (sequence, head) pairs, outputs 2 bytes off */
    check_bf16_outputs(2, 70, 2, 32, 0, 710); /* two query tiles, the second partial */
    check_bf16_outputs(1, 130, 2, 64, 1, 720); /* the model's head size, three tiles */
    check_bf16_outputs(1, 33, 1, 128, 0, 730);
}

static void exit_from_hook(int code) { _exit(code == 1 ? 3 : 4); }

static int forward_head_size_48(void *arg) {
    (void)arg;
    course_set_abort_hook(exit_from_hook); /* _exit: no atexit handlers in the forked child */
    gpu_flash_attention_forward(NULL, NULL, NULL, NULL, NULL, 1, 4, 96, 2);
    return 0;
}

static int backward_head_size_8(void *arg) {
    (void)arg;
    course_set_abort_hook(exit_from_hook);
    gpu_flash_attention_backward(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 2, 5, 32, 4);
    return 0;
}

static int backward_one_rope_table(void *arg) {
    (void)arg;
    course_set_abort_hook(exit_from_hook);
    float c = 1.0f;
    gpu_flash_attention_backward_bf16(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &c, NULL, 1, 4, 32, 2);
    return 0;
}

/* An unsupported head size (or one RoPE table without the other) stops with a message that names it,
 * before anything touches the (here: NULL) buffers. No device needed. */
static void test_unsupported_head_size(void **state) {
    (void)state;
    assert_true(gpu_flash_attention_supported(16) && gpu_flash_attention_supported(32));
    /* hd 64 and 128 need more than the 48 KB every device has (backward: 55 KB and 103 KB):
     * supported exactly where the device lets a block opt in to that much. */
    int dev = 0, optin = 48 * 1024;
    if (gpu_available() && cudaGetDevice(&dev) == cudaSuccess)
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    (void)cudaGetLastError();
    assert_int_equal(gpu_flash_attention_supported(64), 6 * 64 * 72 * 2 + 1024 <= optin);
    assert_int_equal(gpu_flash_attention_supported(128), 6 * 64 * 136 * 2 + 1024 <= optin);
    assert_false(gpu_flash_attention_supported(8) || gpu_flash_attention_supported(48) ||
                 gpu_flash_attention_supported(0) || gpu_flash_attention_supported(256));
    child_result_t r = run_in_child(forward_head_size_48, NULL);
    assert_int_equal(r.exit_code, 3); /* through course_fatal and its hook */
    assert_non_null(strstr(r.out, "gpu_flash_attention_forward: head size 48"));
    assert_non_null(strstr(r.out, "{16, 32, 64, 128}"));
    r = run_in_child(backward_head_size_8, NULL);
    assert_int_equal(r.exit_code, 3);
    assert_non_null(strstr(r.out, "gpu_flash_attention_backward: head size 8"));
    r = run_in_child(backward_one_rope_table, NULL);
    assert_int_equal(r.exit_code, 3);
    assert_non_null(strstr(r.out, "both RoPE tables"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_sequences), cmocka_unit_test(test_tile_edges),
        cmocka_unit_test(test_head_sizes),      cmocka_unit_test(test_long_sequence),
        cmocka_unit_test(test_extreme_inputs),  cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_misaligned_buffers), cmocka_unit_test(test_bf16_outputs),
        cmocka_unit_test(test_unsupported_head_size),
    };
    return cmocka_run_group_tests_name("flash_attention", tests, NULL, NULL);
}
