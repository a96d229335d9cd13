/*
 * The model's CPU ops and the whole model: every backward checked against
 * central finite differences of its own forward, the objective summed in
 * double; a few forwards against double-precision references; AdamW against
 * its formula; and bit-for-bit determinism.
 *
 * Finite differences of fp32 forwards: with step h the truncation error is
 * O(h^2 f''') and the rounding error about eps_fp32 * |f| / h, so h ~ 1e-3
 * to 1e-2 balances them and a normwise relative error of a few 1e-3 is what
 * a correct gradient shows; a wrong one (a missing term, a transposed
 * matrix) is off by O(1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/model_cpu.h"
#include "cpu/model_ops.h"
#include "memory.h"
#include "model.h"
#include "rng.h"

/* Normwise relative error allowed for a finite-difference gradient (see the
 * top of the file): one op measures 1e-6..1e-4; the whole model, whose loss
 * is a mean of fp32 terms around log(256), about 1e-3. */
#define FD_TOL 1e-3
#define FD_TOL_MODEL 1e-2

static float *randn(size_t n, uint64_t seed, float std) {
    float *x = host_malloc(n * sizeof(float));
    rng_t r;
    rng_init(&r, seed);
    rng_fill_normal(&r, x, n, 0.0f, std);
    return x;
}

static float *zeros(size_t n) { return host_calloc(n, sizeof(float)); }

/* Gradient buffers start at GRAD_BASE, not 0: a backward that accumulates
 * (+=, model_ops.h) must add to what is there, and one marked "written" must
 * overwrite it, so "=" for "+=" (or the reverse) fails the gradient check.
 * For an accumulated gradient, drop_base() leaves the part the call added. */
#define GRAD_BASE 0.75f
static float *grad_buf(size_t n) {
    float *g = host_malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) g[i] = GRAD_BASE;
    return g;
}
static void drop_base(float *g, size_t n) {
    for (size_t i = 0; i < n; i++) g[i] -= GRAD_BASE;
}

/* An op under test: run its forward from the current inputs. */
typedef struct {
    void (*forward)(void *ctx);
    void *ctx;
    const float *out; /* forward output */
    size_t n_out;
    const float *w;   /* objective weights: L = sum w . out */
} fd_op_t;

static double objective(const fd_op_t *op) {
    op->forward(op->ctx);
    double s = 0.0;
    for (size_t i = 0; i < op->n_out; i++) s += (double)op->w[i] * op->out[i];
    return s;
}

/* Normwise relative error ||fd - g|| / ||g|| of gradient g of the objective w.r.t. x. */
static double fd_error(const fd_op_t *op, float *x, size_t n, const float *g, float h,
                       const char *what) {
    double num = 0.0, den = 0.0;
    for (size_t j = 0; j < n; j++) {
        float x0 = x[j];
        x[j] = x0 + h;
        double lp = objective(op);
        x[j] = x0 - h;
        double lm = objective(op);
        x[j] = x0;
        double fd = (lp - lm) / (2.0 * (double)h);
        num += (fd - g[j]) * (fd - g[j]);
        den += (double)g[j] * g[j];
    }
    objective(op); /* leave the forward state as it was */
    double err = sqrt(num / (den > 0 ? den : 1e-300));
    print_message("  %-28s normwise rel. error %.2e over %zu elements\n", what, err, n);
    return err;
}

/* ---- rmsnorm ---- */
typedef struct { float *out, *rstd, *x, *w; int N, D; } rms_ctx;
static void rms_fwd(void *c) {
    rms_ctx *r = c;
    rmsnorm_forward(r->out, r->rstd, r->x, r->w, r->N, r->D, 1e-5f);
}
static void test_rmsnorm(void **state) {
    (void)state;
    const int N = 7, D = 13;
    rms_ctx c = {zeros(N * D), zeros(N), randn(N * D, 1, 1.0f), randn(D, 2, 1.0f), N, D};
    float *w = randn(N * D, 3, 1.0f), *dx = grad_buf(N * D), *dw = grad_buf(D);
    fd_op_t op = {rms_fwd, &c, c.out, (size_t)N * D, w};
    objective(&op);
    /* forward against double */
    for (int n = 0; n < N; n++) {
        double ss = 0;
        for (int d = 0; d < D; d++) ss += (double)c.x[n * D + d] * c.x[n * D + d];
        double r = 1.0 / sqrt(ss / D + 1e-5);
        for (int d = 0; d < D; d++)
            assert_true(fabs(c.out[n * D + d] - c.x[n * D + d] * r * c.w[d]) <= 1e-5 * (1 + fabs(c.out[n * D + d])));
    }
    rmsnorm_backward(dx, dw, w, c.x, c.w, c.rstd, N, D);
    drop_base(dx, N * D);
    drop_base(dw, D);
    assert_true(fd_error(&op, c.x, N * D, dx, 1e-3f, "rmsnorm dx") < FD_TOL);
    assert_true(fd_error(&op, c.w, D, dw, 1e-3f, "rmsnorm dweight") < FD_TOL);
    /* A row of small values: mean(x^2) ~ 1e-6, so eps = 1e-5 dominates rstd. */
    float small[13], out[13], rstd;
    for (int d = 0; d < D; d++) small[d] = 1e-3f * c.x[d];
    rmsnorm_forward(out, &rstd, small, c.w, 1, D, 1e-5f);
    double ss = 0;
    for (int d = 0; d < D; d++) ss += (double)small[d] * small[d];
    assert_true(fabs(rstd - 1.0 / sqrt(ss / D + 1e-5)) <= 1e-5 * rstd);
    host_free(c.out); host_free(c.rstd); host_free(c.x); host_free(c.w);
    host_free(w); host_free(dx); host_free(dw);
}

/* ---- matmul ---- */
typedef struct { float *out, *x, *wt; int N, C, OC; } mm_ctx;
static void mm_fwd(void *c) {
    mm_ctx *m = c;
    matmul_forward(m->out, m->x, m->wt, m->N, m->C, m->OC);
}
static void test_matmul(void **state) {
    (void)state;
    const int N = 5, C = 7, OC = 3;
    mm_ctx c = {zeros(N * OC), randn(N * C, 4, 1.0f), randn(C * OC, 5, 1.0f), N, C, OC};
    float *w = randn(N * OC, 6, 1.0f), *dx = grad_buf(N * C), *dwt = grad_buf(C * OC);
    fd_op_t op = {mm_fwd, &c, c.out, (size_t)N * OC, w};
    objective(&op);
    matmul_backward(dx, dwt, w, c.x, c.wt, N, C, OC);
    drop_base(dx, N * C);
    drop_base(dwt, C * OC);
    assert_true(fd_error(&op, c.x, N * C, dx, 1e-2f, "matmul dinp") < FD_TOL);
    assert_true(fd_error(&op, c.wt, C * OC, dwt, 1e-2f, "matmul dweight") < FD_TOL);
    host_free(c.out); host_free(c.x); host_free(c.wt); host_free(w); host_free(dx); host_free(dwt);
}

/* Rows that are not a multiple of the 32-row sgemm blocks (70 rows of out
 * and dinp, 40 of dweight): the last, partial block is computed too. Each
 * element against the sum in double, within Higham's bound for its length. */
static void test_matmul_row_blocks(void **state) {
    (void)state;
    const int N = 70, C = 40, OC = 3;
    float *x = randn(N * C, 30, 1.0f), *wt = randn(C * OC, 31, 1.0f), *dout = randn(N * OC, 32, 1.0f);
    float *out = zeros(N * OC), *dx = zeros(N * C), *dwt = zeros(C * OC);
    matmul_forward(out, x, wt, N, C, OC);
    matmul_backward(dx, dwt, dout, x, wt, N, C, OC);
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OC; o++) {
            double want = 0, mag = 0;
            for (int k = 0; k < C; k++) want += (double)x[n * C + k] * wt[k * OC + o], mag += fabs(x[n * C + k] * wt[k * OC + o]);
            assert_true(fabs(out[n * OC + o] - want) <= 2 * C * 0x1p-24 * mag);
        }
    for (int n = 0; n < N; n++)
        for (int k = 0; k < C; k++) {
            double want = 0, mag = 0;
            for (int o = 0; o < OC; o++) want += (double)dout[n * OC + o] * wt[k * OC + o], mag += fabs(dout[n * OC + o] * wt[k * OC + o]);
            assert_true(fabs(dx[n * C + k] - want) <= 2 * OC * 0x1p-24 * mag);
        }
    for (int k = 0; k < C; k++)
        for (int o = 0; o < OC; o++) {
            double want = 0, mag = 0;
            for (int n = 0; n < N; n++) want += (double)x[n * C + k] * dout[n * OC + o], mag += fabs(x[n * C + k] * dout[n * OC + o]);
            assert_true(fabs(dwt[k * OC + o] - want) <= 2 * N * 0x1p-24 * mag);
        }
    host_free(x); host_free(wt); host_free(dout); host_free(out); host_free(dx); host_free(dwt);
}

/* What a checkpoint records as the cpu backend's library: OpenBLAS, its version and the
 * core it picked on this CPU (its kernels), NUL-ended however small the buffer, and no
 * build option that leaves the arithmetic alone (a rebuild with another MAX_THREADS
 * would make every resume warn). */
static void test_matmul_library(void **state) {
    (void)state;
    char lib[128], small[12];
    matmul_library(lib, sizeof lib);
    print_message("  %s\n", lib);
    assert_true(strncmp(lib, "OpenBLAS ", 9) == 0);
    assert_non_null(strstr(lib, openblas_get_corename()));
    assert_null(strstr(lib, "MAX_THREADS"));
    assert_null(strstr(lib, "version unknown"));
    matmul_library(small, sizeof small);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_true(strncmp(small, lib, sizeof small - 1) == 0);
}

/* ---- embedding ---- */
typedef struct { float *out, *wte; int *tok; int N, D; } enc_ctx;
static void enc_fwd(void *c) {
    enc_ctx *e = c;
    encoder_forward(e->out, e->tok, e->wte, e->N, e->D);
}
static void test_encoder(void **state) {
    (void)state;
    const int N = 9, D = 6, V = 5;
    int tok[9] = {0, 3, 3, 1, 4, 0, 3, 2, 2};
    enc_ctx c = {zeros(N * D), randn(V * D, 7, 1.0f), tok, N, D};
    float *w = randn(N * D, 8, 1.0f), *dwte = grad_buf(V * D);
    fd_op_t op = {enc_fwd, &c, c.out, (size_t)N * D, w};
    objective(&op);
    encoder_backward(dwte, w, tok, N, D);
    drop_base(dwte, V * D);
    assert_true(fd_error(&op, c.wte, V * D, dwte, 1e-2f, "embedding dwte") < FD_TOL);
    host_free(c.out); host_free(c.wte); host_free(w); host_free(dwte);
}

/* ---- RoPE ---- */
typedef struct { float *out, *x, *cs, *sn; int N, T, D, H; } rope_ctx;
static void rope_fwd(void *c) {
    rope_ctx *r = c;
    rope_forward(r->out, r->x, r->cs, r->sn, r->N, r->T, r->D, r->H);
}
static void test_rope(void **state) {
    (void)state;
    const int B = 2, T = 5, H = 2, D = 8, N = B * T, hd = D / H;
    rope_ctx c = {zeros(N * D), randn(N * D, 9, 1.0f), zeros(T * hd / 2), zeros(T * hd / 2), N, T, D, H};
    rope_tables(c.cs, c.sn, T, hd, 10000.0f);
    float *w = randn(N * D, 10, 1.0f), *dx = grad_buf(N * D); /* written: the base must go */
    fd_op_t op = {rope_fwd, &c, c.out, (size_t)N * D, w};
    objective(&op);
    /* The formula itself: pair (2i, 2i+1) of each head at position t turns by
     * t * theta^(-2i/hd). Length and position 0 alone would pass other
     * frequencies or another pairing of the dimensions. */
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < hd / 2; i++) {
                double a = (n % T) * pow(10000.0, -2.0 * i / hd), x0 = c.x[n * D + h * hd + 2 * i],
                       x1 = c.x[n * D + h * hd + 2 * i + 1];
                assert_true(fabs(c.out[n * D + h * hd + 2 * i] - (x0 * cos(a) - x1 * sin(a))) <= 1e-6 * (1 + fabs(x0) + fabs(x1)));
                assert_true(fabs(c.out[n * D + h * hd + 2 * i + 1] - (x0 * sin(a) + x1 * cos(a))) <= 1e-6 * (1 + fabs(x0) + fabs(x1)));
            }
    /* In place (out == inp) is allowed and gives the same result. */
    float *inplace = host_malloc((size_t)N * D * sizeof(float));
    memcpy(inplace, c.x, (size_t)N * D * sizeof(float));
    rope_forward(inplace, inplace, c.cs, c.sn, N, T, D, H);
    assert_memory_equal(inplace, c.out, (size_t)N * D * sizeof(float));
    host_free(inplace);
    /* A rotation keeps each pair's length; position 0 is not rotated. */
    for (int n = 0; n < N; n++)
        for (int i = 0; i < D / 2; i++) {
            double a = hypot(c.x[n * D + 2 * i], c.x[n * D + 2 * i + 1]);
            double b = hypot(c.out[n * D + 2 * i], c.out[n * D + 2 * i + 1]);
            assert_true(fabs(a - b) <= 1e-5 * (1 + a));
            if (n % T == 0) assert_true(c.out[n * D + 2 * i] == c.x[n * D + 2 * i]);
        }
    rope_backward(dx, w, c.cs, c.sn, N, T, D, H);
    assert_true(fd_error(&op, c.x, N * D, dx, 1e-2f, "rope dinp") < FD_TOL);
    host_free(c.out); host_free(c.x); host_free(c.cs); host_free(c.sn); host_free(w); host_free(dx);
}

/* The tables at long positions: each entry against cos and sin of the angle
 * in double, within one fp32 rounding of a value in [-1, 1] (2^-24). An
 * angle t * freq formed in fp32 is off by up to half an ulp of t * freq
 * (about 1e-4 near t = 4000), which this sees. Then the rotation itself with
 * three heads (two heads would not tell head h from head h % 2) at positions
 * up to 2047, against the formula in double. */
static void test_rope_long_positions(void **state) {
    (void)state;
    const int T = 4096, hd = 64, half = hd / 2;
    float *cs = zeros((size_t)T * half), *sn = zeros((size_t)T * half);
    const float thetas[2] = {10000.0f, 500000.0f};
    for (int k = 0; k < 2; k++) {
        rope_tables(cs, sn, T, hd, thetas[k]);
        double worst = 0;
        for (int t = 0; t < T; t++)
            for (int i = 0; i < half; i++) {
                double a = t * pow((double)thetas[k], -2.0 * i / hd);
                worst = fmax(worst, fabs(cs[t * half + i] - cos(a)));
                worst = fmax(worst, fabs(sn[t * half + i] - sin(a)));
            }
        print_message("  rope tables, theta %g: worst error %.2e\n", (double)thetas[k], worst);
        assert_true(worst <= 0x1p-24);
    }
    const int H = 3, hd2 = 8, D = H * hd2, TT = 2048, N = TT;
    float *c2 = zeros((size_t)TT * hd2 / 2), *s2 = zeros((size_t)TT * hd2 / 2);
    rope_tables(c2, s2, TT, hd2, 10000.0f);
    float *x = randn((size_t)N * D, 40, 1.0f), *out = zeros((size_t)N * D);
    rope_forward(out, x, c2, s2, N, TT, D, H);
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < hd2 / 2; i++) {
                const int j = n * D + h * hd2 + 2 * i;
                double a = (n % TT) * pow(10000.0, -2.0 * i / hd2), x0 = x[j], x1 = x[j + 1];
                /* two products and a sum in fp32, and the tables' own rounding */
                const double tol = 1e-6 * (1 + fabs(x0) + fabs(x1));
                assert_true(fabs(out[j] - (x0 * cos(a) - x1 * sin(a))) <= tol);
                assert_true(fabs(out[j + 1] - (x0 * sin(a) + x1 * cos(a))) <= tol);
            }
    host_free(cs); host_free(sn); host_free(c2); host_free(s2); host_free(x); host_free(out);
}

/* ---- attention ---- */
typedef struct { float *out, *att, *q, *k, *v; int B, T, D, H; } att_ctx;
static void att_fwd(void *c) {
    att_ctx *a = c;
    attention_forward(a->out, a->att, a->q, a->k, a->v, a->B, a->T, a->D, a->H);
}
static void test_attention(void **state) {
    (void)state;
    const int B = 2, T = 6, H = 3, D = 12, N = B * T;
    att_ctx c = {zeros(N * D), zeros(B * H * T * T), randn(N * D, 11, 1.0f), randn(N * D, 12, 1.0f),
                 randn(N * D, 13, 1.0f), B, T, D, H};
    float *w = randn(N * D, 14, 1.0f), *dq = grad_buf(N * D), *dk = grad_buf(N * D), *dv = grad_buf(N * D);
    fd_op_t op = {att_fwd, &c, c.out, (size_t)N * D, w};
    objective(&op);
    /* Against the plain loops in double: softmax over u <= t of q_t . k_u / sqrt(hd), times v. */
    const int hd = D / H;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                double s[6], mx = -1e300, sum = 0;
                for (int u = 0; u <= t; u++) {
                    s[u] = 0;
                    for (int i = 0; i < hd; i++)
                        s[u] += (double)c.q[(b * T + t) * D + h * hd + i] * c.k[(b * T + u) * D + h * hd + i];
                    s[u] /= sqrt((double)hd);
                    mx = fmax(mx, s[u]);
                }
                for (int u = 0; u <= t; u++) sum += (s[u] = exp(s[u] - mx));
                for (int i = 0; i < hd; i++) {
                    double o = 0;
                    for (int u = 0; u <= t; u++) o += s[u] / sum * c.v[(b * T + u) * D + h * hd + i];
                    /* a handful of fp32 roundings on O(1) values */
                    assert_true(fabs(c.out[(b * T + t) * D + h * hd + i] - o) <= 1e-5);
                }
            }
    /* Causal: the first position attends only to itself, so its output is its value. */
    for (int b = 0; b < B; b++)
        for (int d = 0; d < D; d++) assert_true(fabsf(c.out[b * T * D + d] - c.v[b * T * D + d]) <= 1e-6f);
    /* Changing the last key of sequence 0 leaves earlier outputs untouched. */
    float *before = host_malloc((size_t)N * D * sizeof(float));
    memcpy(before, c.out, (size_t)N * D * sizeof(float));
    c.k[(T - 1) * D] += 1.0f;
    objective(&op);
    for (int i = 0; i < (T - 1) * D; i++) assert_true(c.out[i] == before[i]);
    c.k[(T - 1) * D] -= 1.0f;
    objective(&op);
    host_free(before);
    attention_backward(dq, dk, dv, w, c.att, c.q, c.k, c.v, B, T, D, H);
    drop_base(dq, N * D);
    drop_base(dk, N * D);
    drop_base(dv, N * D);
    assert_true(fd_error(&op, c.q, N * D, dq, 1e-2f, "attention dq") < FD_TOL);
    assert_true(fd_error(&op, c.k, N * D, dk, 1e-2f, "attention dk") < FD_TOL);
    assert_true(fd_error(&op, c.v, N * D, dv, 1e-2f, "attention dv") < FD_TOL);
    host_free(c.out); host_free(c.att); host_free(c.q); host_free(c.k); host_free(c.v);
    host_free(w); host_free(dq); host_free(dk); host_free(dv);
}

/* Scores of a few hundred: q = k drawn with std 12, so each position's
 * score with itself, |q_t|^2 / sqrt(hd), tops its row by well over 88, where
 * expf overflows unless the row's maximum (over u <= t, the diagonal
 * included) is taken out first. And att itself, laid out [B, H, T, T] as
 * model_ops.h says, against the probabilities in double, with std 1 too:
 * rows that are nearly one-hot on the diagonal look alike in every head, and
 * a layout read back the same wrong way by the backward pass passes every
 * gradient check. */
static void test_attention_large_scores_and_layout(void **state) {
    (void)state;
    const int B = 2, T = 5, H = 3, D = 12, N = B * T, hd = D / H; /* B != H: [H, B] is not [B, H] */
    const float stds[2] = {12.0f, 1.0f};
    for (int k = 0; k < 2; k++) {
        float *q = randn((size_t)N * D, 41 + k, stds[k]), *v = randn((size_t)N * D, 43, 1.0f);
        float *out = zeros((size_t)N * D), *att = zeros((size_t)B * H * T * T);
        attention_forward(out, att, q, q, v, B, T, D, H);
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++)
                for (int t = 0; t < T; t++) {
                    double s[5], mx = -1e300, sum = 0, mag = 0;
                    for (int u = 0; u <= t; u++) {
                        s[u] = 0;
                        for (int i = 0; i < hd; i++) {
                            double qk = (double)q[(b * T + t) * D + h * hd + i] * q[(b * T + u) * D + h * hd + i];
                            s[u] += qk;
                            mag = fmax(mag, fabs(qk));
                        }
                        s[u] /= sqrt((double)hd);
                        mx = fmax(mx, s[u]);
                    }
                    for (int u = 0; u <= t; u++) sum += (s[u] = exp(s[u] - mx));
                    /* A score is a dot product of length hd in fp32: off by about
                     * hd * 2^-24 * hd * max|q_i k_i| / sqrt(hd) (a few 1e-4 for std
                     * 12), and a probability by that much relative. */
                    const double tol = 4.0 * hd * hd * 0x1p-24 * mag / sqrt((double)hd) + 1e-6;
                    const float *p = att + (((size_t)b * H + h) * T + t) * T;
                    for (int u = 0; u < T; u++) assert_true(fabs(p[u] - (u <= t ? s[u] / sum : 0.0)) <= tol);
                    for (int i = 0; i < hd; i++) {
                        double o = 0;
                        for (int u = 0; u <= t; u++) o += s[u] / sum * v[(b * T + u) * D + h * hd + i];
                        assert_true(fabs(out[(b * T + t) * D + h * hd + i] - o) <= 4 * tol); /* |v| < 4 */
                    }
                }
        host_free(q); host_free(v); host_free(out); host_free(att);
    }
}

/* ---- SwiGLU and residual ---- */
typedef struct { float *out, *a, *b; size_t n; int kind; } ew_ctx;
static void ew_fwd(void *c) {
    ew_ctx *e = c;
    if (e->kind == 0) swiglu_forward(e->out, e->a, e->b, e->n);
    else residual_forward(e->out, e->a, e->b, e->n);
}
static void test_swiglu_residual(void **state) {
    (void)state;
    const size_t n = 40;
    ew_ctx c = {zeros(n), randn(n, 15, 2.0f), randn(n, 16, 1.0f), n, 0};
    float *w = randn(n, 17, 1.0f), *da = grad_buf(n), *db = grad_buf(n); /* swiglu's are written */
    fd_op_t op = {ew_fwd, &c, c.out, n, w};
    objective(&op);
    for (size_t i = 0; i < n; i++) {
        double g = c.a[i], want = g / (1 + exp(-g)) * c.b[i];
        assert_true(fabs(c.out[i] - want) <= 1e-6 * (1 + fabs(want)));
    }
    swiglu_backward(da, db, w, c.a, c.b, n);
    assert_true(fd_error(&op, c.a, n, da, 1e-3f, "swiglu dgate") < FD_TOL);
    assert_true(fd_error(&op, c.b, n, db, 1e-3f, "swiglu dup") < FD_TOL);
    c.kind = 1;
    for (size_t i = 0; i < n; i++) da[i] = db[i] = GRAD_BASE;
    objective(&op);
    residual_backward(da, db, w, n); /* accumulated */
    drop_base(da, n);
    drop_base(db, n);
    assert_true(fd_error(&op, c.a, n, da, 1e-2f, "residual da") < FD_TOL);
    assert_true(fd_error(&op, c.b, n, db, 1e-2f, "residual db") < FD_TOL);
    host_free(c.out); host_free(c.a); host_free(c.b); host_free(w); host_free(da); host_free(db);
}

/* Gates far from 0, where exp of the wrong sign overflows: silu(g) and its
 * derivative, from 1 / (1 + exp(-g)), stay finite and right; the same
 * formula through exp(g) / (1 + exp(g)) gives inf / inf at g >= 89. The
 * references in double take the exponential of -|g| only. */
static void test_swiglu_large_gates(void **state) {
    (void)state;
    const float gate[8] = {-1000.0f, -100.0f, -20.0f, -0.5f, 0.5f, 20.0f, 100.0f, 1000.0f};
    const float up[8] = {1.5f, -2.0f, 0.5f, 3.0f, -1.0f, 2.0f, -0.75f, 1.25f};
    const float dout[8] = {0.5f, 1.0f, -2.0f, 1.0f, 0.25f, -1.0f, 2.0f, 1.0f};
    float out[8], dg[8], du[8];
    swiglu_forward(out, gate, up, 8);
    swiglu_backward(dg, du, dout, gate, up, 8);
    for (int i = 0; i < 8; i++) {
        const double g = gate[i], e = exp(-fabs(g)), sg = g >= 0 ? 1 / (1 + e) : e / (1 + e);
        const double silu = g * sg, want_dg = dout[i] * up[i] * sg * (1 + g * (1 - sg));
        /* a few fp32 roundings, relative; the absolute part covers results
         * below fp32's normal range (silu(-100) ~ -4e-42, which fp32 gives as 0) */
        assert_true(fabs(out[i] - silu * up[i]) <= 1e-6 * fabs(silu * up[i]) + 1e-37);
        assert_true(fabs(du[i] - dout[i] * silu) <= 1e-6 * fabs(dout[i] * silu) + 1e-37);
        assert_true(fabs(dg[i] - want_dg) <= 1e-6 * fabs(want_dg) + 1e-37);
    }
}

/* ---- cross-entropy ---- */
typedef struct { float *losses, *probs, *logits; int *tg; int N, V; } ce_ctx;
static void ce_fwd(void *c) {
    ce_ctx *e = c;
    crossentropy_forward(e->losses, e->probs, e->logits, e->tg, e->N, e->V);
}
static void test_crossentropy(void **state) {
    (void)state;
    const int N = 4, V = 11;
    int tg[4] = {0, 10, 3, 3};
    ce_ctx c = {zeros(N), zeros(N * V), randn(N * V, 18, 2.0f), tg, N, V};
    float w[4] = {0.25f, 0.25f, 0.25f, 0.25f};
    float *dl = grad_buf(N * V); /* written */
    fd_op_t op = {ce_fwd, &c, c.losses, (size_t)N, w};
    objective(&op);
    for (int n = 0; n < N; n++) {
        double mx = -1e30, s = 0;
        for (int j = 0; j < V; j++) mx = fmax(mx, c.logits[n * V + j]);
        for (int j = 0; j < V; j++) s += exp(c.logits[n * V + j] - mx);
        double want = log(s) - (c.logits[n * V + tg[n]] - mx);
        assert_true(fabs(c.losses[n] - want) <= 1e-5 * (1 + want));
    }
    crossentropy_backward(dl, c.probs, tg, 0.25f, N, V);
    assert_true(fd_error(&op, c.logits, N * V, dl, 1e-2f, "cross-entropy dlogits") < FD_TOL);
    host_free(c.losses); host_free(c.probs); host_free(c.logits); host_free(dl);
}

/* Logits far from 0, and probs written over the logits as the model does.
 * Row 0: a logit of 1000 in the last column (expf(1000) is inf unless the
 * row's maximum, the last column included, is taken out). Row 1: the target
 * 200 below the rest, whose probability underflows fp32 (e^-200 < 1e-87),
 * so its loss, about 200, must come from the logits, not from -log(prob).
 * In place, the target's logit is read before its probability overwrites it:
 * losses and probabilities bit for bit those of separate buffers. */
static void test_crossentropy_extremes_in_place(void **state) {
    (void)state;
    const int N = 3, V = 6;
    const int tg[3] = {2, 4, 0};
    const float logits[18] = {1.0f, -2.0f, 3.0f, 0.5f, 2.0f, 1000.0f,
                              0.0f, 1.0f, -1.0f, 0.5f, -200.0f, 2.0f,
                              -1.5f, 0.25f, 4.0f, -3.0f, 0.0f, 1.0f};
    float losses[3], probs[18], inplace[18], losses2[3];
    crossentropy_forward(losses, probs, logits, tg, N, V);
    for (int n = 0; n < N; n++) {
        double mx = -1e300, s = 0;
        for (int j = 0; j < V; j++) mx = fmax(mx, logits[n * V + j]);
        for (int j = 0; j < V; j++) s += exp(logits[n * V + j] - mx);
        double want = log(s) - (logits[n * V + tg[n]] - mx);
        print_message("  cross-entropy row %d: loss %.6g (want %.6g)\n", n, (double)losses[n], want);
        /* a sum of V exponentials and a log in fp32, relative to the loss */
        assert_true(fabs(losses[n] - want) <= 1e-6 * (1 + want));
        for (int j = 0; j < V; j++) assert_true(fabs(probs[n * V + j] - exp(logits[n * V + j] - mx) / s) <= 1e-6);
    }
    memcpy(inplace, logits, sizeof logits);
    crossentropy_forward(losses2, inplace, inplace, tg, N, V);
    assert_memory_equal(losses2, losses, sizeof losses);
    assert_memory_equal(inplace, probs, sizeof probs);
}

/* The losses are summed in double: 2^24 + 1 + 1 is 2^24 in fp32 (each + 1
 * rounds back to even) and 2^24 + 2 in double. */
static void test_loss_sum_in_double(void **state) {
    (void)state;
    const float l[3] = {0x1p24f, 1.0f, 1.0f};
    assert_true(loss_sum(l, 3) == 0x1p24 + 2.0);
    assert_true(loss_sum(l, 1) == 0x1p24);
}

/* ---- AdamW, gradient norm, clipping ---- */
static void test_adamw_and_norm(void **state) {
    (void)state;
    const size_t n = 10000;
    float *p = randn(n, 19, 1.0f), *g = randn(n, 20, 1.0f), *m = randn(n, 21, 0.1f), *v = zeros(n);
    for (size_t i = 0; i < n; i++) v[i] = 0.01f * (float)(i % 7);
    float *p0 = host_malloc(n * 4), *m0 = host_malloc(n * 4), *v0 = host_malloc(n * 4);
    memcpy(p0, p, n * 4); memcpy(m0, m, n * 4); memcpy(v0, v, n * 4);
    const double lr = 1e-2, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
    const long t = 3;
    adamw_update(p, g, m, v, n, (float)lr, (float)b1, (float)b2, (float)eps, (float)wd, t);
    for (size_t i = 0; i < n; i++) {
        double mi = b1 * m0[i] + (1 - b1) * g[i], vi = b2 * v0[i] + (1 - b2) * (double)g[i] * g[i];
        double want = p0[i] - lr * ((mi / (1 - pow(b1, t))) / (sqrt(vi / (1 - pow(b2, t))) + eps) + wd * p0[i]);
        assert_true(fabs(p[i] - want) <= 1e-5 * (1 + fabs(want)));
        assert_true(fabs(m[i] - mi) <= 1e-6 * (1 + fabs(mi)));
        assert_true(fabs(v[i] - vi) <= 1e-6 * (1 + vi)); /* the second moment is kept for the next step */
    }
    /* Norm: against double, and bit-identical for 1 and 2 threads. */
    double want = 0;
    for (size_t i = 0; i < n; i++) want += (double)g[i] * g[i];
    int nt = omp_get_max_threads();
    omp_set_num_threads(1);
    double s1 = grad_norm_squared(g, n);
    omp_set_num_threads(2);
    double s2 = grad_norm_squared(g, n);
    omp_set_num_threads(nt);
    assert_true(s1 == s2);
    assert_true(fabs(s1 - want) <= 1e-12 * want);
    float s = clip_grad_norm(g, n, sqrt(s1), 1.0);
    assert_true(fabs(sqrt(grad_norm_squared(g, n)) - 1.0) < 1e-5);
    assert_true(s < 1.0f);
    assert_true(clip_grad_norm(g, n, 0.5, 1.0) == 1.0f); /* below the threshold: untouched */
    /* max_norm <= 0 turns clipping off (model_ops.h), however large the norm. */
    memcpy(p0, g, n * 4);
    assert_true(clip_grad_norm(g, n, 5.0, 0.0) == 1.0f);
    assert_memory_equal(g, p0, n * 4);
    /* A NaN norm is not clipped (model_ops.h): g is left as it is. */
    assert_true(clip_grad_norm(g, n, NAN, 1.0) == 1.0f);
    assert_memory_equal(g, p0, n * 4);
    host_free(p); host_free(g); host_free(m); host_free(v); host_free(p0); host_free(m0); host_free(v0);
}

/* AdamW by hand, with an eps large enough to see where it goes: b1 = 1/2,
 * b2 = 3/4, eps = 1/2, lr = 1/2, wd = 1/4, p = 1, g = 2, m = v = 0. Step 1:
 * m = 1, v = 1, m^ = 1 / (1 - 1/2) = 2, v^ = 1 / (1 - 3/4) = 4, so
 * p = 1 - 1/2 (2 / (sqrt(4) + 1/2) + 1/4) = 0.475 (eps under the square
 * root gives 0.4036, no bias correction 0.5417). Step 2 with g = 0:
 * m = 1/2, v = 3/4, corrections 3/4 and 7/16, written out in double. */
static void test_adamw_by_hand(void **state) {
    (void)state;
    float p = 1.0f, g = 2.0f, m = 0.0f, v = 0.0f;
    adamw_update(&p, &g, &m, &v, 1, 0.5f, 0.5f, 0.75f, 0.5f, 0.25f, 1);
    /* fp32 roundings of values near 1 */
    assert_true(fabs(m - 1.0) <= 1e-7 && fabs(v - 1.0) <= 1e-7);
    assert_true(fabs(p - 0.475) <= 1e-6);
    g = 0.0f;
    adamw_update(&p, &g, &m, &v, 1, 0.5f, 0.5f, 0.75f, 0.5f, 0.25f, 2);
    const double p1 = 0.475, want = p1 - 0.5 * ((0.5 / 0.75) / (sqrt(0.75 / 0.4375) + 0.5) + 0.25 * p1);
    assert_true(fabs(m - 0.5) <= 1e-7 && fabs(v - 0.75) <= 1e-7);
    assert_true(fabs(p - want) <= 1e-6);
}

/* ---- the whole model ---- */
static model_config_t tiny_config(void) {
    model_config_t c = model_config_default();
    c.d_model = 8;
    c.n_layers = 2;
    c.n_heads = 2;
    c.d_ff = 12;
    c.max_seq = 8;
    return c;
}

static void tiny_batch(int B, int T, int *in, int *tg) {
    rng_t r;
    rng_init(&r, 77);
    for (int i = 0; i < B * T; i++) {
        in[i] = (int)rng_below(&r, 256);
        tg[i] = (int)rng_below(&r, 256);
    }
}

typedef struct { model_cpu_t *m; int *in, *tg; double loss; } whole_ctx;
static void whole_fwd(void *c) {
    whole_ctx *w = c;
    w->loss = model_cpu_forward(w->m, w->in, w->tg);
}

static void test_whole_model_gradient(void **state) {
    (void)state;
    const model_config_t cfg = tiny_config();
    const int B = 2, T = 5;
    model_cpu_t m;
    model_cpu_init(&m, &cfg, B, T, 5);
    /* Larger weights than the default init, so every path carries a visible gradient. */
    rng_t r;
    rng_init(&r, 6);
    for (size_t i = 0; i < m.n_params; i++) m.params[i] += 0.3f * rng_normal(&r);
    int in[10], tg[10];
    tiny_batch(B, T, in, tg);
    model_cpu_zero_grad(&m);
    model_cpu_forward(&m, in, tg);
    model_cpu_backward(&m, 1.0f);
    whole_ctx c = {&m, in, tg, 0};
    float one = 1.0f;
    fd_op_t op = {whole_fwd, &c, NULL, 0, &one};
    /* Every slice: all of a small one, a fixed sample of a large one. */
    double worst = 0;
    for (int s = 0; s < m.table.n; s++) {
        const param_slice_t *sl = &m.table.slices[s];
        size_t count = sl->numel < 64 ? sl->numel : 64;
        size_t stride = sl->numel / count;
        double num = 0, den = 0;
        for (size_t j = 0; j < count; j++) {
            size_t idx = sl->offset + j * stride;
            if (!strcmp(sl->name, "tok_emb")) idx = sl->offset + (size_t)in[j % 10] * cfg.d_model + j % cfg.d_model;
            float x0 = m.params[idx], h = 1e-2f;
            m.params[idx] = x0 + h;
            whole_fwd(&c);
            double lp = c.loss;
            m.params[idx] = x0 - h;
            whole_fwd(&c);
            double lm = c.loss;
            m.params[idx] = x0;
            double fd = (lp - lm) / (2.0 * h);
            num += (fd - m.grads[idx]) * (fd - m.grads[idx]);
            den += (double)m.grads[idx] * m.grads[idx];
        }
        double err = sqrt(num / (den > 0 ? den : 1e-300));
        print_message("  model %-20s normwise rel. error %.2e over %zu elements\n", sl->name, err, count);
        if (err > worst) worst = err;
        assert_true(den > 0);
    }
    (void)op;
    print_message("  whole model: worst slice %.2e\n", worst);
    assert_true(worst < FD_TOL_MODEL);
    model_cpu_free(&m);
}

/* The forward pass is model.h's architecture, rebuilt here from the ops
 * with the configuration's RoPE theta and RMSNorm epsilon (100 and 0.5, not
 * the defaults): tokens -> embedding -> L x [x += Attn(RMSNorm(x));
 * x += SwiGLU(RMSNorm(x))] -> RMSNorm -> lm_head -> mean cross-entropy, RoPE
 * on q and k only. Each saved activation, and the loss, bit for bit: the
 * same ops on the same inputs. The gradient checks cannot see a wiring that
 * backward mirrors (RoPE on v and its inverse on dv is another model, with
 * a right gradient), nor a default theta or epsilon used in place of the
 * configuration's. */
static void test_model_forward_composition(void **state) {
    (void)state;
    model_config_t cfg = tiny_config();
    cfg.rope_theta = 100.0f;
    cfg.norm_eps = 0.5f;
    const int B = 2, T = 5, N = B * T, D = cfg.d_model, F = cfg.d_ff, H = cfg.n_heads, V = cfg.vocab;
    const int hd = D / H;
    model_cpu_t m;
    model_cpu_init(&m, &cfg, B, T, 8);
    /* Norm gains start at 1, all alike: moved apart so that one gain read for another shows. */
    rng_t r;
    rng_init(&r, 9);
    for (size_t i = 0; i < m.n_params; i++) m.params[i] += 0.3f * rng_normal(&r);
    int in[10], tg[10];
    tiny_batch(B, T, in, tg);
    const double loss = model_cpu_forward(&m, in, tg);
    const size_t ND = (size_t)N * D * sizeof(float), NF = (size_t)N * F * sizeof(float);
    float *cs = zeros((size_t)T * hd / 2), *sn = zeros((size_t)T * hd / 2);
    rope_tables(cs, sn, T, hd, cfg.rope_theta);
    float *x = zeros((size_t)N * D), *ln = zeros((size_t)N * D), *rstd = zeros(N);
    float *q = zeros((size_t)N * D), *k = zeros((size_t)N * D), *v = zeros((size_t)N * D);
    float *att = zeros((size_t)B * H * T * T), *y = zeros((size_t)N * D), *o = zeros((size_t)N * D);
    float *gate = zeros((size_t)N * F), *up = zeros((size_t)N * F), *swi = zeros((size_t)N * F);
    float *logits = zeros((size_t)N * V), *losses = zeros(N);
    const float *P = m.params;
#define W(l, which) (P + m.table.slices[param_index(&m.table, l, which)].offset)
    encoder_forward(x, in, P + m.table.slices[param_index_tok_emb(&m.table)].offset, N, D);
    assert_memory_equal(m.encoded, x, ND);
    for (int l = 0; l < cfg.n_layers; l++) {
        const layer_acts_t *a = &m.layers[l];
        rmsnorm_forward(ln, rstd, x, W(l, P_ATTN_NORM), N, D, cfg.norm_eps);
        assert_memory_equal(a->ln1, ln, ND);
        assert_memory_equal(a->ln1_rstd, rstd, N * sizeof(float));
        matmul_forward(q, ln, W(l, P_WQ), N, D, D);
        matmul_forward(k, ln, W(l, P_WK), N, D, D);
        matmul_forward(v, ln, W(l, P_WV), N, D, D);
        rope_forward(q, q, cs, sn, N, T, D, H);
        rope_forward(k, k, cs, sn, N, T, D, H);
        assert_memory_equal(a->q, q, ND);
        assert_memory_equal(a->k, k, ND);
        assert_memory_equal(a->v, v, ND);
        attention_forward(y, att, q, k, v, B, T, D, H);
        assert_memory_equal(a->att, att, (size_t)B * H * T * T * sizeof(float));
        assert_memory_equal(a->atty, y, ND);
        matmul_forward(o, y, W(l, P_WO), N, D, D);
        residual_forward(x, x, o, (size_t)N * D);
        assert_memory_equal(a->res1, x, ND);
        rmsnorm_forward(ln, rstd, x, W(l, P_MLP_NORM), N, D, cfg.norm_eps);
        assert_memory_equal(a->ln2, ln, ND);
        assert_memory_equal(a->ln2_rstd, rstd, N * sizeof(float));
        matmul_forward(gate, ln, W(l, P_W_GATE), N, D, F);
        matmul_forward(up, ln, W(l, P_W_UP), N, D, F);
        swiglu_forward(swi, gate, up, (size_t)N * F);
        assert_memory_equal(a->gate, gate, NF);
        assert_memory_equal(a->up, up, NF);
        assert_memory_equal(a->swi, swi, NF);
        matmul_forward(o, swi, W(l, P_W_DOWN), N, F, D);
        residual_forward(x, x, o, (size_t)N * D);
        assert_memory_equal(a->res2, x, ND);
    }
#undef W
    rmsnorm_forward(ln, rstd, x, P + m.table.slices[param_index_final_norm(&m.table)].offset, N, D, cfg.norm_eps);
    assert_memory_equal(m.lnf, ln, ND);
    matmul_forward(logits, ln, P + m.table.slices[param_index_lm_head(&m.table)].offset, N, D, V);
    crossentropy_forward(losses, logits, logits, tg, N, V);
    assert_memory_equal(m.losses, losses, N * sizeof(float));
    assert_memory_equal(m.probs, logits, (size_t)N * V * sizeof(float));
    assert_true(loss == loss_sum(losses, N) / N);
    host_free(cs); host_free(sn); host_free(x); host_free(ln); host_free(rstd); host_free(q); host_free(k);
    host_free(v); host_free(att); host_free(y); host_free(o); host_free(gate); host_free(up); host_free(swi);
    host_free(logits); host_free(losses);
    model_cpu_free(&m);
}

/* The model's step around the ops: zero_grad clears every gradient, the
 * global norm is the square root over all of them, and AdamW updates every
 * slice, the last one too, as adamw_update() at the same step t, decaying
 * the matrices (the embedding and lm_head included) and not the norm gains
 * (the vectors). With zero gradients and moments the step is decay alone:
 * p - lr * wd * p for a matrix, p untouched for a gain. Also the bytes held:
 * the four parameter-sized buffers and every activation of model_cpu.h. */
static void test_model_cpu_step(void **state) {
    (void)state;
    const model_config_t cfg = tiny_config();
    const int B = 2, T = 5;
    model_cpu_t m;
    model_cpu_init(&m, &cfg, B, T, 21);
    const size_t n = m.n_params;
    for (size_t i = 0; i < n; i++) m.grads[i] = 1.0f;
    model_cpu_zero_grad(&m);
    for (size_t i = 0; i < n; i++) assert_true(m.grads[i] == 0.0f);
    float *p0 = host_malloc(n * sizeof(float));
    memcpy(p0, m.params, n * sizeof(float));
    const float lr = 0.1f, wd = 0.5f;
    model_cpu_adamw(&m, lr, 0.9f, 0.95f, 1e-8f, wd, 1);
    for (int s = 0; s < m.table.n; s++) {
        const param_slice_t *sl = &m.table.slices[s];
        for (size_t i = sl->offset; i < sl->offset + sl->numel; i++) {
            if (sl->cols == 1) assert_true(m.params[i] == p0[i]);
            /* one product and one difference in fp32 */
            else assert_true(fabsf(m.params[i] - (p0[i] - lr * wd * p0[i])) <= 2 * 0x1p-24f * fabsf(p0[i]));
        }
    }
    /* Random gradients and moments at step 3, against adamw_update on copies, bit for bit. */
    rng_t r;
    rng_init(&r, 22);
    rng_fill_normal(&r, m.grads, n, 0.0f, 1.0f);
    rng_fill_normal(&r, m.adam_m, n, 0.0f, 0.1f);
    rng_fill_uniform(&r, m.adam_v, n, 0.0f, 0.1f);
    float *p = host_malloc(n * sizeof(float)), *mm = host_malloc(n * sizeof(float)), *vv = host_malloc(n * sizeof(float));
    memcpy(p, m.params, n * sizeof(float));
    memcpy(mm, m.adam_m, n * sizeof(float));
    memcpy(vv, m.adam_v, n * sizeof(float));
    for (int s = 0; s < m.table.n; s++) {
        const param_slice_t *sl = &m.table.slices[s];
        adamw_update(p + sl->offset, m.grads + sl->offset, mm + sl->offset, vv + sl->offset, sl->numel,
                     1e-2f, 0.8f, 0.9f, 1e-6f, sl->cols == 1 ? 0.0f : 0.1f, 3);
    }
    model_cpu_adamw(&m, 1e-2f, 0.8f, 0.9f, 1e-6f, 0.1f, 3);
    assert_memory_equal(m.params, p, n * sizeof(float));
    assert_memory_equal(m.adam_m, mm, n * sizeof(float));
    assert_memory_equal(m.adam_v, vv, n * sizeof(float));
    /* The norm over every gradient: the last one alone, then all. */
    memset(m.grads, 0, n * sizeof(float));
    m.grads[n - 1] = 3.0f;
    assert_true(model_cpu_grad_norm(&m) == 3.0);
    double want = 0;
    for (size_t i = 0; i < n; i++) want += (double)p[i] * p[i];
    memcpy(m.grads, p, n * sizeof(float));
    assert_true(fabs(model_cpu_grad_norm(&m) - sqrt(want)) <= 1e-12 * sqrt(want));
    /* Activations, layer by layer as model_cpu.h lists them, and backward's scratch. */
    const size_t N = (size_t)B * T, D = (size_t)cfg.d_model, F = (size_t)cfg.d_ff, V = (size_t)cfg.vocab;
    const size_t per_layer = 8 * N * D + 2 * N + (size_t)B * cfg.n_heads * T * T + 3 * N * F;
    const size_t acts = N * D + cfg.n_layers * per_layer + 2 * N * D + 2 * N + N * V;
    assert_int_equal(model_cpu_bytes(&m), (4 * n + acts + 6 * N * D + 3 * N * F) * sizeof(float));
    host_free(p0); host_free(p); host_free(mm); host_free(vv);
    model_cpu_free(&m);
}

/* Two micro-batches at loss scale 1/2 give the gradient of the whole batch. */
static void test_accumulation_matches_full_batch(void **state) {
    (void)state;
    const model_config_t cfg = tiny_config();
    const int T = 6;
    int in[24], tg[24];
    tiny_batch(4, T, in, tg);
    model_cpu_t full, half;
    model_cpu_init(&full, &cfg, 4, T, 9);
    model_cpu_init(&half, &cfg, 2, T, 9);
    model_cpu_zero_grad(&full);
    model_cpu_forward(&full, in, tg);
    model_cpu_backward(&full, 1.0f);
    model_cpu_zero_grad(&half);
    for (int a = 0; a < 2; a++) {
        model_cpu_forward(&half, in + a * 2 * T, tg + a * 2 * T);
        model_cpu_backward(&half, 0.5f);
    }
    double num = 0, den = 0;
    for (size_t i = 0; i < full.n_params; i++) {
        num += pow(full.grads[i] - half.grads[i], 2);
        den += pow(full.grads[i], 2);
    }
    print_message("  accumulation vs full batch: rel. difference %.2e\n", sqrt(num / den));
    assert_true(sqrt(num / den) < 1e-5); /* same sums in a different order: fp32 rounding only */
    model_cpu_free(&full);
    model_cpu_free(&half);
}

/* The same inputs give bit-identical losses and gradients, with 1 or 2 threads. */
static void test_model_deterministic(void **state) {
    (void)state;
    model_config_t cfg = model_config_default();
    cfg.d_model = 32;
    cfg.d_ff = 64;
    const int B = 4, T = 16;
    int in[64], tg[64];
    tiny_batch(B, T, in, tg);
    float *g[3];
    double loss[3];
    int nt = omp_get_max_threads();
    for (int run = 0; run < 3; run++) {
        omp_set_num_threads(run == 2 ? 1 : 2);
        model_cpu_t m;
        model_cpu_init(&m, &cfg, B, T, 3);
        model_cpu_zero_grad(&m);
        loss[run] = model_cpu_forward(&m, in, tg);
        model_cpu_backward(&m, 1.0f);
        g[run] = host_malloc(m.n_params * sizeof(float));
        memcpy(g[run], m.grads, m.n_params * sizeof(float));
        if (run == 2) {
            assert_true(loss[0] == loss[1]);
            assert_memory_equal(g[0], g[1], m.n_params * sizeof(float));
            /* Fixed reduction orders and fixed sgemm blocks: the thread count changes nothing. */
            assert_true(loss[0] == loss[2]);
            assert_memory_equal(g[0], g[2], m.n_params * sizeof(float));
        }
        model_cpu_free(&m);
    }
    omp_set_num_threads(nt);
    for (int run = 0; run < 3; run++) host_free(g[run]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rmsnorm),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_matmul_row_blocks),
        cmocka_unit_test(test_matmul_library),
        cmocka_unit_test(test_encoder),
        cmocka_unit_test(test_rope),
        cmocka_unit_test(test_rope_long_positions),
        cmocka_unit_test(test_attention),
        cmocka_unit_test(test_attention_large_scores_and_layout),
        cmocka_unit_test(test_swiglu_residual),
        cmocka_unit_test(test_swiglu_large_gates),
        cmocka_unit_test(test_crossentropy),
        cmocka_unit_test(test_crossentropy_extremes_in_place),
        cmocka_unit_test(test_loss_sum_in_double),
        cmocka_unit_test(test_adamw_and_norm),
        cmocka_unit_test(test_adamw_by_hand),
        cmocka_unit_test(test_whole_model_gradient),
        cmocka_unit_test(test_model_forward_composition),
        cmocka_unit_test(test_model_cpu_step),
        cmocka_unit_test(test_accumulation_matches_full_batch),
        cmocka_unit_test(test_model_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
