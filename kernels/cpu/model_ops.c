/*
 * The course model's layers on the CPU (see model_ops.h): fp32, OpenMP over
 * rows or (sequence, head) pairs, OpenBLAS for the matmuls. Reductions across
 * rows (weight gradients of RMSNorm and the embedding, the loss, the gradient
 * norm) have a fixed order so that results are reproducible bit for bit.
 */
#include "model_ops.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "memory.h"

void encoder_forward(float *out, const int *tokens, const float *wte, int N, int D) {
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) memcpy(out + (size_t)n * D, wte + (size_t)tokens[n] * D, (size_t)D * sizeof(float));
}

void encoder_backward(float *dwte, const float *dout, const int *tokens, int N, int D) {
    /* Parallel over columns: rows with the same token add in order n = 0..N-1. */
#pragma omp parallel for schedule(static)
    for (int d = 0; d < D; d++)
        for (int n = 0; n < N; n++) dwte[(size_t)tokens[n] * D + d] += dout[(size_t)n * D + d];
}

void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight, int N, int D,
                     float eps) {
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * D;
        float ss = 0.0f;
        for (int d = 0; d < D; d++) ss += x[d] * x[d];
        float r = 1.0f / sqrtf(ss / (float)D + eps);
        rstd[n] = r;
        float *o = out + (size_t)n * D;
        for (int d = 0; d < D; d++) o[d] = x[d] * r * weight[d];
    }
}

void rmsnorm_backward(float *dinp, float *dweight, const float *dout, const float *inp,
                      const float *weight, const float *rstd, int N, int D) {
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * D, *g = dout + (size_t)n * D;
        float r = rstd[n], dot = 0.0f;
        for (int d = 0; d < D; d++) dot += g[d] * weight[d] * x[d] * r;
        dot /= (float)D;
        float *dx = dinp + (size_t)n * D;
        for (int d = 0; d < D; d++) dx[d] += r * (g[d] * weight[d] - x[d] * r * dot);
    }
    /* The gain's gradient sums over rows: one column per thread, rows in order. */
#pragma omp parallel for schedule(static)
    for (int d = 0; d < D; d++) {
        float acc = 0.0f;
        for (int n = 0; n < N; n++) acc += dout[(size_t)n * D + d] * inp[(size_t)n * D + d] * rstd[n];
        dweight[d] += acc;
    }
}

/*
 * Matmuls run on the OpenMP threads: the output rows are cut into blocks of
 * SGEMM_ROWS and each block is one single-threaded OpenBLAS sgemm. Two
 * reasons. Letting OpenBLAS start its own thread pool as well puts two pools
 * on the same cores, and OpenMP's spinning workers starve OpenBLAS's. And
 * OpenBLAS picks its kernels by the shape of the call, so a row's result may
 * change with the number of rows in the call: blocks of a fixed size make
 * every call, and so every bit of the result, independent of the thread count.
 */
#define SGEMM_ROWS 32

static void blas_single_threaded(void) {
    if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

/* C[M, N] = op(A) * op(B) + beta * C, in fixed blocks of rows of C. */
static void sgemm_rows(int transA, int transB, int M, int N, int K, const float *A, int lda,
                       const float *B, int ldb, float beta, float *C, int ldc) {
    blas_single_threaded();
    const int blocks = (M + SGEMM_ROWS - 1) / SGEMM_ROWS;
#pragma omp parallel for schedule(static)
    for (int blk = 0; blk < blocks; blk++) {
        int lo = blk * SGEMM_ROWS, hi = lo + SGEMM_ROWS < M ? lo + SGEMM_ROWS : M;
        /* Row i of op(A) starts at A + i*lda (no transpose) or A + i (transposed). */
        const float *Ablk = transA ? A + lo : A + (size_t)lo * lda;
        cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                    transB ? CblasTrans : CblasNoTrans, hi - lo, N, K, 1.0f, Ablk, lda, B, ldb,
                    beta, C + (size_t)lo * ldc, ldc);
    }
}

void matmul_forward(float *out, const float *inp, const float *weight, int N, int C, int OC) {
    sgemm_rows(0, 0, N, OC, C, inp, C, weight, OC, 0.0f, out, OC);
}

void matmul_backward(float *dinp, float *dweight, const float *dout, const float *inp,
                     const float *weight, int N, int C, int OC) {
    if (dinp) sgemm_rows(0, 1, N, C, OC, dout, OC, weight, OC, 1.0f, dinp, C);
    sgemm_rows(1, 0, C, OC, N, inp, C, dout, OC, 1.0f, dweight, OC);
}

void matmul_library(char *buf, size_t len) {
    /* The version and the core decide which kernels run; the rest of
     * openblas_get_config() (NO_LAPACKE, NO_AFFINITY, MAX_THREADS=64) are
     * build options that do not touch an sgemm's arithmetic, and recording
     * them would make a resume on a rebuilt but identical OpenBLAS warn. */
    const char *config = openblas_get_config(), *core = openblas_get_corename();
    char version[32] = "";
    /* "OpenBLAS 0.3.21 ...": older releases leave the version out. */
    if (sscanf(config, " OpenBLAS %31s", version) != 1) snprintf(version, sizeof version, "(version unknown)");
    snprintf(buf, len, "OpenBLAS %s core %s", version, core && *core ? core : "(unknown)");
}

void rope_tables(float *cos_out, float *sin_out, int T, int hd, float theta) {
    for (int t = 0; t < T; t++)
        for (int i = 0; i < hd / 2; i++) {
            /* In double: the angle t * freq must be accurate for large t. */
            double a = (double)t * pow((double)theta, -2.0 * i / (double)hd);
            cos_out[(size_t)t * (hd / 2) + i] = (float)cos(a);
            sin_out[(size_t)t * (hd / 2) + i] = (float)sin(a);
        }
}

/* Rotate every pair of row n by +angle (sign = 1) or -angle (sign = -1). */
static void rope_rotate(float *out, const float *inp, const float *cosv, const float *sinv, int N,
                        int T, int D, int H, float sign) {
    const int hd = D / H, half = hd / 2;
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *c = cosv + (size_t)(n % T) * half, *s = sinv + (size_t)(n % T) * half;
        for (int h = 0; h < H; h++) {
            const float *x = inp + (size_t)n * D + h * hd;
            float *o = out + (size_t)n * D + h * hd;
            for (int i = 0; i < half; i++) {
                float x0 = x[2 * i], x1 = x[2 * i + 1], sn = sign * s[i];
                o[2 * i] = x0 * c[i] - x1 * sn;
                o[2 * i + 1] = x0 * sn + x1 * c[i];
            }
        }
    }
}

void rope_forward(float *out, const float *inp, const float *cosv, const float *sinv, int N, int T,
                  int D, int H) {
    rope_rotate(out, inp, cosv, sinv, N, T, D, H, 1.0f);
}

void rope_backward(float *dinp, const float *dout, const float *cosv, const float *sinv, int N,
                   int T, int D, int H) {
    rope_rotate(dinp, dout, cosv, sinv, N, T, D, H, -1.0f);
}

/*
 * Attention, one (sequence, head) pair per thread, its matmuls as single-
 * threaded sgemms on the head's strided slice (leading dimension D): the
 * scores S = Q K^T / sqrt(hd) over the full T x T square (the masked half is
 * then overwritten; computing it costs less than leaving the sgemm), the
 * causal softmax row by row, and O = P V. The plain-loop version of the same
 * arithmetic is the double-precision reference in the tests.
 */
void attention_forward(float *out, float *att, const float *q, const float *k, const float *v,
                       int B, int T, int D, int H) {
    const int hd = D / H;
    const float scale = 1.0f / sqrtf((float)hd);
    blas_single_threaded();
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const size_t head = (size_t)b * T * D + (size_t)h * hd;
            float *P = att + ((size_t)b * H + h) * T * T;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hd, scale, q + head, D,
                        k + head, D, 0.0f, P, T);
            for (int t = 0; t < T; t++) {
                float *p = P + (size_t)t * T, maxv = -INFINITY, sum = 0.0f;
                for (int u = 0; u <= t; u++)
                    if (p[u] > maxv) maxv = p[u];
                for (int u = 0; u <= t; u++) {
                    p[u] = expf(p[u] - maxv);
                    sum += p[u];
                }
                float inv = 1.0f / sum;
                for (int u = 0; u <= t; u++) p[u] *= inv;
                for (int u = t + 1; u < T; u++) p[u] = 0.0f; /* causal: no looking ahead */
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hd, T, 1.0f, P, T, v + head,
                        D, 0.0f, out + head, D);
        }
}

void attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *att,
                        const float *q, const float *k, const float *v, int B, int T, int D, int H) {
    const int hd = D / H;
    const float scale = 1.0f / sqrtf((float)hd);
    blas_single_threaded();
    /* One (sequence, head) per thread: it alone writes that head's columns of dq, dk, dv. */
#pragma omp parallel
    {
        float *dS = host_malloc((size_t)T * T * sizeof(float));
#pragma omp for collapse(2) schedule(static)
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++) {
                const size_t head = (size_t)b * T * D + (size_t)h * hd;
                const float *P = att + ((size_t)b * H + h) * T * T;
                /* dP = dO V^T and dV += P^T dO */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hd, 1.0f, dout + head, D,
                            v + head, D, 0.0f, dS, T);
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, 1.0f, P, T,
                            dout + head, D, 1.0f, dv + head, D);
                /* Softmax Jacobian per row: dS = P * (dP - sum(P * dP)), then the 1/sqrt(hd). */
                for (int t = 0; t < T; t++) {
                    const float *p = P + (size_t)t * T;
                    float *ds = dS + (size_t)t * T, pdp = 0.0f;
                    for (int u = 0; u <= t; u++) pdp += p[u] * ds[u];
                    for (int u = 0; u <= t; u++) ds[u] = p[u] * (ds[u] - pdp) * scale;
                    for (int u = t + 1; u < T; u++) ds[u] = 0.0f;
                }
                /* dQ += dS K and dK += dS^T Q */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hd, T, 1.0f, dS, T,
                            k + head, D, 1.0f, dq + head, D);
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, 1.0f, dS, T,
                            q + head, D, 1.0f, dk + head, D);
            }
        host_free(dS);
    }
}

void swiglu_forward(float *out, const float *gate, const float *up, size_t n) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        float g = gate[i];
        out[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

void swiglu_backward(float *dgate, float *dup, const float *dout, const float *gate,
                     const float *up, size_t n) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        float g = gate[i], s = 1.0f / (1.0f + expf(-g));
        float go = dout[i];
        dgate[i] = go * up[i] * s * (1.0f + g * (1.0f - s));
        dup[i] = go * g * s;
    }
}

void residual_forward(float *out, const float *a, const float *b, size_t n) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

void residual_backward(float *da, float *db, const float *dout, size_t n) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        da[i] += dout[i];
        db[i] += dout[i];
    }
}

void crossentropy_forward(float *losses, float *probs, const float *logits, const int *targets,
                          int N, int V) {
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *x = logits + (size_t)n * V;
        float *p = probs + (size_t)n * V;
        const float xt = x[targets[n]]; /* read before probs (which may alias) overwrites it */
        float maxv = -INFINITY;
        for (int j = 0; j < V; j++)
            if (x[j] > maxv) maxv = x[j];
        float sum = 0.0f;
        for (int j = 0; j < V; j++) {
            p[j] = expf(x[j] - maxv);
            sum += p[j];
        }
        float inv = 1.0f / sum;
        for (int j = 0; j < V; j++) p[j] *= inv;
        losses[n] = logf(sum) - (xt - maxv); /* from the logits: no log(0) if a probability underflows */
    }
}

void crossentropy_backward(float *dlogits, const float *probs, const int *targets, float dloss,
                           int N, int V) {
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *p = probs + (size_t)n * V;
        float *g = dlogits + (size_t)n * V;
        for (int j = 0; j < V; j++) g[j] = (p[j] - (j == targets[n] ? 1.0f : 0.0f)) * dloss;
    }
}

double loss_sum(const float *losses, int N) {
    double s = 0.0;
    for (int n = 0; n < N; n++) s += losses[n];
    return s;
}

void adamw_update(float *params, const float *grads, float *m, float *v, size_t n, float lr,
                  float beta1, float beta2, float eps, float weight_decay, long t) {
    const float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        float g = grads[i];
        float mi = beta1 * m[i] + (1.0f - beta1) * g;
        float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        params[i] -= lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + weight_decay * params[i]);
    }
}

#define NORM_CHUNK 4096

double grad_norm_squared(const float *g, size_t n) {
    size_t chunks = (n + NORM_CHUNK - 1) / NORM_CHUNK;
    double *part = host_malloc(chunks * sizeof(double));
#pragma omp parallel for schedule(static)
    for (size_t c = 0; c < chunks; c++) {
        size_t lo = c * NORM_CHUNK, hi = lo + NORM_CHUNK < n ? lo + NORM_CHUNK : n;
        double s = 0.0;
        for (size_t i = lo; i < hi; i++) s += (double)g[i] * g[i];
        part[c] = s;
    }
    double total = 0.0;
    for (size_t c = 0; c < chunks; c++) total += part[c];
    host_free(part);
    return total;
}

float clip_grad_norm(float *g, size_t n, double norm, double max_norm) {
    if (!(max_norm > 0.0) || !(norm > max_norm)) return 1.0f;
    float s = (float)(max_norm / norm);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) g[i] *= s;
    return s;
}
