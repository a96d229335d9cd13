/*
 * The variants of the lab-05 GPU backend, on the emulator or a GPU (each test
 * skips, visibly, without a device):
 *
 * - the --matmul switch (kernels/train/matmul_switch.h), the lab-04 solution
 *   kernels behind gpu_gemm_bf16(): called with every operand form the model
 *   uses and some it does not (transposed A or B, padded rows, odd offsets,
 *   batches, beta 0 and 1) against a double-precision product of the same
 *   bf16 values, and with a bf16 C (gpu_gemm_bf16_out()) against the fp32
 *   result rounded, then a whole forward and backward pass against the
 *   course's own tiled kernel;
 * - --attention flash (kernels/cuda/flash_attention.h) against the naive
 *   attention: the loss, every gradient and a short training run;
 * - with either attention, what the trainer relies on between passes:
 *   gradients that add up over micro-batches, the gradient norm over all
 *   chunks, and AdamW's weight decay on exactly the slices marked for it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu/model_ops.h"
#include "cuda/model_gpu.h"
#include "cuda/model_ops_gpu.h"
#include "gpu.h"
#include "half.h"
#include "labcheck.h"
#include "lab.h"
#include "memory.h"
#include "model.h"
#include "numerics.h"
#include "rng.h"
#include "train/matmul_switch.h"

int matmul_wgmma_supported(void);

/* The lab-04 kernels this process can run: wgmma only on a Hopper GPU or the emulator. */
static int n_kernels(const char **names) {
    int n = 0;
    names[n++] = "wmma";
    names[n++] = "mma";
    if (matmul_wgmma_supported() == LAB_OK)
        names[n++] = "wgmma";
    else
        print_message("wgmma left out: it needs a Hopper GPU and an sm_90a build\n");
    return n;
}

static void select_or_fail(const char *name) {
    char err[256];
    if (train_select_matmul(name, err, sizeof err)) fail_msg("--matmul %s: %s", name, err);
}

/* Random bf16 values in [-1, 1), stored as bit patterns. */
static void fill_bf16(uint16_t *x, size_t n, rng_t *r) {
    for (size_t i = 0; i < n; i++) x[i] = bf16_from_float(2.0f * rng_uniform(r) - 1.0f);
}

/* op(X)[i, k] of a stored matrix with row length ld. */
static double at(const uint16_t *X, int trans, int ld, int i, int k) {
    return float_from_bf16(trans ? X[(size_t)k * ld + i] : X[(size_t)i * ld + k]);
}

/* One shape and operand form through the selected kernel against double precision. */
static void check_form(const char *kernel, int transA, int transB, int M, int N, int K, int pad, int offset,
                       float beta, int batch) {
    const int lda = (transA ? M : K) + pad, ldb = (transB ? K : N) + pad;
    const int rowsA = transA ? K : M, rowsB = transB ? N : K;
    const long long sA = (long long)rowsA * lda, sB = (long long)rowsB * ldb, sC = (long long)M * N;
    const size_t nA = (size_t)sA * batch + offset, nB = (size_t)sB * batch + offset, nC = (size_t)sC * batch;
    uint16_t *hA = host_malloc(nA * 2), *hB = host_malloc(nB * 2);
    float *hC = host_malloc(nC * 4), *out = host_malloc(nC * 4);
    rng_t r;
    rng_init(&r, (uint64_t)(M * 131 + N * 17 + K + transA * 7 + transB * 3 + pad + offset));
    fill_bf16(hA, nA, &r);
    fill_bf16(hB, nB, &r);
    for (size_t i = 0; i < nC; i++) hC[i] = 2.0f * rng_uniform(&r) - 1.0f;
    uint16_t *dA = gpu_malloc(nA * 2), *dB = gpu_malloc(nB * 2);
    float *dC = gpu_malloc(nC * 4);
    gpu_upload(dA, hA, nA * 2);
    gpu_upload(dB, hB, nB * 2);
    gpu_upload(dC, hC, nC * 4);
    const float alpha = 0.75f;
    gpu_gemm_bf16(transA, transB, M, N, K, alpha, dA + offset, lda, sA, dB + offset, ldb, sB, beta, dC, N, sC,
                  batch);
    gpu_download(out, dC, nC * 4);
    for (int b = 0; b < batch; b++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                const uint16_t *A = hA + offset + sA * b, *B = hB + offset + sB * b;
                double ref = 0.0, mag = 0.0;
                for (int k = 0; k < K; k++) {
                    double p = at(A, transA, lda, i, k) * at(B, transB, ldb, k, j);
                    ref += p;
                    mag += fabs(p);
                }
                const size_t c = (size_t)sC * b + (size_t)i * N + j;
                ref = alpha * ref + beta * hC[c];
                /* bf16 products are exact in fp32; only the fp32 sum rounds: K u of the magnitude for
                 * any summation order (u = 2^-24), doubled where tensor cores truncate while adding,
                 * with the alpha scaling and beta update: lab 04's bound, 6 K u. */
                const double tol = (6 * K + 2) * ldexp(1.0, -24) * (alpha * mag + fabs(beta * hC[c])) + 1e-30;
                if (!(fabs(out[c] - ref) <= tol))
                    fail_msg("--matmul %s, transA %d transB %d, %dx%dx%d pad %d offset %d beta %g batch %d/%d: "
                             "C[%d,%d] = %.9g, expected %.9g (tolerance %.3g)",
                             kernel, transA, transB, M, N, K, pad, offset, beta, b, batch, i, j, out[c], ref, tol);
            }
    if (beta == 0.0f) { /* the bf16-output form: the same kernel's fp32 result, rounded once */
        uint16_t *dH = gpu_malloc(nC * 2), *h = host_malloc(nC * 2);
        gpu_memset(dH, 0xff, nC * 2); /* NaN: every element must be written */
        gpu_gemm_bf16_out(transA, transB, M, N, K, alpha, dA + offset, lda, sA, dB + offset, ldb, sB, dH, N, sC,
                          batch);
        gpu_download(h, dH, nC * 2);
        for (size_t c = 0; c < nC; c++)
            if (h[c] != bf16_from_float(out[c]))
                fail_msg("--matmul %s, bf16 out, transA %d transB %d, %dx%dx%d batch %d: element %zu is 0x%04x, "
                         "the fp32 result %.9g rounds to 0x%04x",
                         kernel, transA, transB, M, N, K, batch, c, h[c], (double)out[c], bf16_from_float(out[c]));
        gpu_free(dH);
        host_free(h);
    }
    gpu_free(dA);
    gpu_free(dB);
    gpu_free(dC);
    host_free(hA);
    host_free(hB);
    host_free(hC);
    host_free(out);
}

static void test_operand_forms(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const char *names[3];
    const int n = n_kernels(names);
    for (int k = 0; k < n; k++) {
        select_or_fail(names[k]);
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                check_form(names[k], ta, tb, 17, 23, 9, 0, 0, 0.0f, 1);
                check_form(names[k], ta, tb, 33, 40, 48, 0, 0, 1.0f, 2); /* aligned, dense: no packing */
            }
        check_form(names[k], 0, 0, 20, 24, 16, 3, 0, 1.0f, 3); /* padded rows */
        check_form(names[k], 0, 1, 16, 16, 32, 0, 5, 0.0f, 2); /* misaligned base */
        check_form(names[k], 1, 0, 1, 1, 1, 0, 1, 1.0f, 1);
    }
    select_or_fail("auto");
}

/* Gradients of one forward/backward pass with the named matmul and attention, in a fresh model. */
static float *model_grads_attn(const char *kernel, model_attn_t attn, const model_config_t *cfg, int B, int T,
                               const int *in, const int *tg, double *loss, size_t *n) {
    select_or_fail(kernel);
    model_gpu_t g;
    model_gpu_init_attn(&g, cfg, B, T, 11, attn);
    *loss = model_gpu_forward(&g, in, tg);
    model_gpu_zero_grad(&g);
    model_gpu_backward(&g, 1.0f);
    float *h = host_malloc(g.n_params * sizeof(float));
    gpu_download(h, g.grads, g.n_params * sizeof(float));
    *n = g.n_params;
    model_gpu_free(&g);
    return h;
}

static float *model_grads(const char *kernel, const model_config_t *cfg, int B, int T, const int *in,
                          const int *tg, double *loss, size_t *n) {
    return model_grads_attn(kernel, MODEL_ATTN_NAIVE, cfg, B, T, in, tg, loss, n);
}

static void test_model_step_matches_tiled(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    model_config_t cfg = model_config_default();
    cfg.d_model = 32;
    cfg.n_layers = 2;
    cfg.n_heads = 2;
    cfg.d_ff = 40;
    cfg.max_seq = 24;
    const int B = 2, T = 24, N = B * T;
    int in[2 * 24], tg[2 * 24];
    rng_t r;
    rng_init(&r, 3);
    for (int i = 0; i < N; i++) {
        in[i] = (int)rng_below(&r, 256);
        tg[i] = (int)rng_below(&r, 256);
    }
    double l0;
    size_t n;
    float *ref = model_grads("tiled", &cfg, B, T, in, tg, &l0, &n);
    const char *names[3];
    const int nk = n_kernels(names);
    for (int k = 0; k < nk; k++) {
        double l;
        float *g = model_grads(names[k], &cfg, B, T, in, tg, &l, &n);
        /* Same bf16 operands, fp32 sums in another order: differences of a few fp32 ulps,
         * amplified a little through the layers; 1e-5 relative is far below a bf16 step (4e-3).
         * The gradients differ more: activations are stored in bf16 (gate, up, q, k, v, the
         * branch outputs), so a one-ulp fp32 difference now and then moves a stored value to the
         * neighbouring bf16 (2^-8 relative), and every gradient downstream of it shifts a little:
         * 2.3e-4 on the emulator. 2e-3 stays below the 6e-3 by which each differs from the fp32
         * CPU model (lab 05's check) and far below what a wrong product gives (order 1). */
        if (!(fabs(l - l0) <= 1e-5 * fabs(l0))) fail_msg("--matmul %s: loss %.9g vs tiled %.9g", names[k], l, l0);
        const double rd = rel_l2_diff(g, ref, n);
        print_message("--matmul %s vs tiled: loss differs by %.3g relative, gradients by %.3g (rel. L2)\n", names[k],
                      fabs(l - l0) / fabs(l0), rd);
        if (!(rd <= 2e-3)) fail_msg("--matmul %s: gradients differ from the tiled kernel's by %.3g (tolerance 2e-3)",
                                    names[k], rd);
        host_free(g);
    }
    host_free(ref);
    select_or_fail("auto");
}

/* A config with T not a multiple of the flash tile and hd 16: masked edge tiles in every kernel. */
static model_config_t flash_config(void) {
    model_config_t cfg = model_config_default();
    cfg.d_model = 32;
    cfg.n_layers = 2;
    cfg.n_heads = 2;
    cfg.d_ff = 40;
    cfg.max_seq = 80;
    return cfg;
}

static void test_flash_matches_naive(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const model_config_t cfg = flash_config();
    const int B = 2, T = 70, N = B * T;
    int *in = host_malloc(N * sizeof(int)), *tg = host_malloc(N * sizeof(int));
    rng_t r;
    rng_init(&r, 5);
    for (int i = 0; i < N; i++) {
        in[i] = (int)rng_below(&r, 256);
        tg[i] = (int)rng_below(&r, 256);
    }
    double ln, lf;
    size_t n;
    float *gn = model_grads_attn("auto", MODEL_ATTN_NAIVE, &cfg, B, T, in, tg, &ln, &n);
    float *gf = model_grads_attn("auto", MODEL_ATTN_FLASH, &cfg, B, T, in, tg, &lf, &n);
    /* Both round Q, K, V and P to bf16 but at different points (flash rounds P against a running
     * maximum, per tile): differences of a bf16 step (2^-8) in the probabilities, averaging out in the
     * mean loss (seen: 1e-5). */
    if (!(fabs(lf - ln) <= 1e-4)) fail_msg("loss: flash %.6f vs naive %.6f (tolerance 1e-4)", lf, ln);
    model_gpu_t probe;
    model_gpu_init(&probe, &cfg, B, T, 11);
    for (int i = 0; i < probe.table.n; i++) {
        const param_slice_t *s = &probe.table.slices[i];
        const double rd = rel_l2_diff(gf + s->offset, gn + s->offset, s->numel);
        /* A bf16 rounding (0.4%) apart in P and dS, less after the sums (seen: at most 0.4%); the
         * lab's GPU-vs-CPU check allows 2e-2 for more roundings than that. */
        if (!(rd <= 1e-2)) fail_msg("gradient of %s: flash vs naive differ by %.3g (tolerance 1e-2)", s->name, rd);
    }
    model_gpu_free(&probe);
    host_free(gn);
    host_free(gf);
    host_free(in);
    host_free(tg);
}

/* Flash attention keeps only B*H*T log-sum-exps instead of the B*H*T*T probabilities and their gradients. */
static void test_flash_saves_memory(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const model_config_t cfg = flash_config();
    const int B = 2, T = 80;
    model_gpu_t a, b;
    model_gpu_init_attn(&a, &cfg, B, T, 1, MODEL_ATTN_NAIVE);
    model_gpu_init_attn(&b, &cfg, B, T, 1, MODEL_ATTN_FLASH);
    const size_t BHT = (size_t)B * cfg.n_heads * T, BHTT = BHT * T, ND = (size_t)B * T * cfg.d_model;
    /* Every buffer is rounded up to 256 bytes (64 fp32, 128 bf16). fp32: per layer T x T -> T stored,
     * and the fp32 attention output goes (flash keeps only its bf16 copy); in the work buffer the
     * head-major product oh, dP, dS, the fp32 dq, dk, dv and the fp32 gradient of the attention
     * output go (the flash kernels read and write bf16) and the row terms come; bf16: P goes, the
     * attention output's gradient comes. */
#define R32(n) (((n) + 63) / 64 * 64)
#define R16(n) (((n) + 127) / 128 * 128)
    const size_t saved = 4 * (cfg.n_layers * (R32(BHTT) - R32(BHT) + R32(ND)) + R32(ND) + 2 * R32(BHTT) -
                              R32(BHT) + R32(3 * ND) + R32(ND)) +
                         2 * (R16(BHTT) - R16(ND));
#undef R32
#undef R16
    assert_int_equal(model_gpu_bytes(&a) - model_gpu_bytes(&b), saved);
    model_gpu_free(&a);
    model_gpu_free(&b);
}

static void test_flash_rejects_head_size(void **state) {
    (void)state;
    model_config_t cfg = flash_config();
    cfg.n_heads = 4; /* hd 8 */
    assert_int_equal(model_gpu_flash_supported(&cfg, 1), 0);
    cfg.n_heads = 2; /* hd 16 */
    assert_int_equal(model_gpu_flash_supported(&cfg, 1), 1);
    assert_int_equal(model_gpu_flash_supported(&cfg, 32767), 1); /* B x H = 65534 */
    assert_int_equal(model_gpu_flash_supported(&cfg, 32768), 0); /* 65536: above the grid limit */
}

/* A profiled step times every category and computes the same gradients as an unprofiled one. */
static void test_profile(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const model_config_t cfg = flash_config();
    const int B = 2, T = 20, N = B * T;
    int in[2 * 20], tg[2 * 20];
    rng_t r;
    rng_init(&r, 9);
    for (int i = 0; i < N; i++) {
        in[i] = (int)rng_below(&r, 256);
        tg[i] = (int)rng_below(&r, 256);
    }
    double l0, l1;
    size_t n;
    float *g0 = model_grads_attn("auto", MODEL_ATTN_FLASH, &cfg, B, T, in, tg, &l0, &n);
    model_gpu_t g;
    model_gpu_init_attn(&g, &cfg, B, T, 11, MODEL_ATTN_FLASH);
    model_gpu_profile_start(&g);
    l1 = model_gpu_forward(&g, in, tg);
    model_gpu_zero_grad(&g);
    model_gpu_backward(&g, 1.0f);
    model_gpu_grad_norm(&g);
    model_gpu_profile_stop(&g);
    float *g1 = host_malloc(n * sizeof(float));
    gpu_download(g1, g.grads, n * sizeof(float));
    assert_true(l0 == l1);
    assert_memory_equal(g0, g1, n * sizeof(float));
    /* Every category has ops in a step. */
    for (int c = 0; c < MODEL_PROF_COUNT; c++) {
        if (!(g.prof->calls[c] > 0 && g.prof->ms[c] >= 0.0))
            fail_msg("category %s: %ld timed ops, %.3f ms", model_gpu_profile_name(c), g.prof->calls[c],
                     g.prof->ms[c]);
    }
    /* Forward 1 + L * 4 matmul groups, backward 1 + L * 4: every mm_forward and mm_backward is one region. */
    assert_int_equal(g.prof->calls[MODEL_PROF_MATMUL], 2 * (1 + 4 * cfg.n_layers));
    assert_int_equal(g.prof->calls[MODEL_PROF_ATTENTION], cfg.n_layers);
    assert_int_equal(g.prof->calls[MODEL_PROF_ATTENTION_BWD], cfg.n_layers);
    /* FLOPs against the model's own formula (common/model.c): the matmuls are its 6 per matmul
     * parameter and token; attention, over the causal triangle, half its 12 L D T per token,
     * times (T + 1) / T for the diagonal. */
    const double per_token = model_flops_per_token(&cfg, T), attn_full = 12.0 * cfg.n_layers * cfg.d_model * T;
    const double want_mm = (per_token - attn_full) * N, want_attn = 0.5 * attn_full * N * (T + 1) / T;
    if (!(fabs(g.prof->flops[MODEL_PROF_MATMUL] - want_mm) <= 1e-9 * want_mm))
        fail_msg("matmul FLOPs %.6g, want 6 x matmul parameters x tokens = %.6g", g.prof->flops[MODEL_PROF_MATMUL],
                 want_mm);
    const double attn = g.prof->flops[MODEL_PROF_ATTENTION] + g.prof->flops[MODEL_PROF_ATTENTION_BWD];
    if (!(fabs(attn - want_attn) <= 1e-9 * want_attn)) fail_msg("attention FLOPs %.6g, want %.6g", attn, want_attn);
    /* the forward pass has 2 of the 6 products */
    assert_true(fabs(3.0 * g.prof->flops[MODEL_PROF_ATTENTION] - want_attn) <= 1e-9 * want_attn);
    /* Bytes: every category but the matmuls moves some; the gradient norm reads each gradient once. */
    for (int c = 0; c < MODEL_PROF_COUNT; c++)
        if ((c == MODEL_PROF_MATMUL) != (g.prof->bytes[c] == 0.0))
            fail_msg("category %s: %.6g bytes", model_gpu_profile_name(c), g.prof->bytes[c]);
    assert_true(g.prof->bytes[MODEL_PROF_OPTIMIZER] == 4.0 * (double)g.n_params);
    /* Stopped: a further step adds nothing. */
    const long before = g.prof->calls[MODEL_PROF_MATMUL];
    model_gpu_forward(&g, in, tg);
    assert_int_equal(g.prof->calls[MODEL_PROF_MATMUL], before);
    model_gpu_free(&g);
    host_free(g0);
    host_free(g1);
}

/* A fresh model's gradients after backward passes on `passes` micro-batches (seeds 20, 21, ...)
 * with no zeroing in between; the model stays alive in *g for the caller. */
static float *accumulated_grads(model_gpu_t *g, const model_config_t *cfg, model_attn_t attn, int B, int T,
                                int first, int passes) {
    model_gpu_init_attn(g, cfg, B, T, 11, attn);
    model_gpu_zero_grad(g);
    int *in = host_malloc((size_t)B * T * sizeof(int)), *tg = host_malloc((size_t)B * T * sizeof(int));
    for (int k = first; k < first + passes; k++) {
        rng_t r;
        rng_init(&r, 20 + (uint64_t)k);
        for (int i = 0; i < B * T; i++) {
            in[i] = (int)rng_below(&r, (uint64_t)cfg->vocab);
            tg[i] = (int)rng_below(&r, (uint64_t)cfg->vocab);
        }
        model_gpu_forward(g, in, tg);
        model_gpu_backward(g, 1.0f);
    }
    float *h = host_malloc(g->n_params * sizeof(float));
    gpu_download(h, g->grads, g->n_params * sizeof(float));
    host_free(in);
    host_free(tg);
    return h;
}

/* Micro-batches a and b backward one after the other, without zeroing, give the sum of their
 * separate gradients in every slice (a product that overwrote its weight gradient would keep
 * only b's); then the gradient norm covers every chunk of GPU_NORM_CHUNK, the last partial one
 * included; then one AdamW step decays the matrices and the embeddings and not the norm gains,
 * as the CPU update does slice by slice. With the naive and the flash attention. */
static void test_accumulate_norm_adamw(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const model_config_t cfg = flash_config();
    const int B = 2, T = 20;
    for (int attn = 0; attn < 2; attn++) {
        const model_attn_t at = attn ? MODEL_ATTN_FLASH : MODEL_ATTN_NAIVE;
        model_gpu_t g;
        float *ga = accumulated_grads(&g, &cfg, at, B, T, 0, 1);
        model_gpu_free(&g);
        float *gb = accumulated_grads(&g, &cfg, at, B, T, 1, 1);
        model_gpu_free(&g);
        float *gab = accumulated_grads(&g, &cfg, at, B, T, 0, 2);
        const size_t n = g.n_params;
        assert_true(n > 2 * GPU_NORM_CHUNK && n % GPU_NORM_CHUNK != 0);
        for (size_t i = 0; i < n; i++) ga[i] += gb[i];
        for (int i = 0; i < g.table.n; i++) {
            const param_slice_t *sl = &g.table.slices[i];
            /* The same sums, a + b added in another order here and there (the embedding's rows
             * join a's one by one; cuBLAS may split K): fp32 roundings (seen: none, bit for bit, on
             * the emulator), 1e-5 far above them and far below the 0.3 or more that a lost
             * micro-batch moves a slice. */
            const double rd = rel_l2_diff(gab + sl->offset, ga + sl->offset, sl->numel);
            if (!(rd <= 1e-5))
                fail_msg("%s attention: gradient of %s after two micro-batches differs from the sum of their "
                         "separate gradients by %.3g (rel. L2; tolerance 1e-5)", attn ? "flash" : "naive", sl->name,
                         rd);
        }
        /* The norm: partial sums in double on the device, in another order here: 1e-12 relative. */
        double want = 0.0;
        for (size_t i = 0; i < n; i++) want += (double)gab[i] * gab[i];
        want = sqrt(want);
        const double norm = model_gpu_grad_norm(&g);
        if (!(fabs(norm - want) <= 1e-12 * want))
            fail_msg("gradient norm %.17g, want %.17g over all %zu gradients", norm, want, n);
        /* AdamW: the host update per slice, decay only where the slice says so. lr 1e-2 and decay 0.5
         * make the decay term (lr wd |p|: 5e-3 on a gain of 1) a large part of the step (1e-2). */
        const float lr = 1e-2f, wd = 0.5f;
        float *p = host_malloc(n * sizeof(float)), *m = host_malloc(n * sizeof(float));
        float *v = host_malloc(n * sizeof(float)), *p0 = host_malloc(n * sizeof(float));
        float *got = host_malloc(n * sizeof(float));
        gpu_download(p, g.params, n * sizeof(float));
        gpu_download(m, g.adam_m, n * sizeof(float));
        gpu_download(v, g.adam_v, n * sizeof(float));
        memcpy(p0, p, n * sizeof(float));
        for (int i = 0; i < g.table.n; i++) {
            const param_slice_t *sl = &g.table.slices[i];
            adamw_update(p + sl->offset, gab + sl->offset, m + sl->offset, v + sl->offset, sl->numel, lr, 0.9f,
                         0.95f, 1e-8f, sl->decay ? wd : 0.0f, 1);
        }
        model_gpu_adamw(&g, lr, 0.9f, 0.95f, 1e-8f, wd, 1, 1.0f);
        gpu_download(got, g.params, n * sizeof(float));
        for (size_t i = 0; i < n; i++) {
            got[i] -= p0[i];
            p[i] -= p0[i];
        }
        for (int i = 0; i < g.table.n; i++) {
            const param_slice_t *sl = &g.table.slices[i];
            /* Steps of about lr, each computed in fp32 from parameters of order 1: a few ulps of
             * 1 (1e-7) in 1e-2, 1e-5 relative (seen: 0 on the emulator); a decay applied where it
             * should not be, or left out, moves the step of a gain by half and of a matrix by 1%
             * or more. */
            const double rd = rel_l2_diff(got + sl->offset, p + sl->offset, sl->numel);
            if (!(rd <= 1e-3))
                fail_msg("%s attention: AdamW step of %s (decay %s) differs from the CPU update by %.3g (rel. L2; "
                         "tolerance 1e-3)", attn ? "flash" : "naive", sl->name, sl->decay ? "on" : "off", rd);
        }
        model_gpu_free(&g);
        host_free(ga); host_free(gb); host_free(gab);
        host_free(p); host_free(m); host_free(v); host_free(p0); host_free(got);
    }
}

static void test_bad_names(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    char err[256];
    assert_int_equal(train_select_matmul("cuBLASS", err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown kernel"));
    assert_non_null(strstr(err, TRAIN_MATMUL_NAMES));
    char dev[128];
    gpu_device_name(dev, sizeof dev);
    if (strstr(dev, "SIMT")) {
        assert_int_equal(train_select_matmul("cublas", err, sizeof err), -1);
        assert_non_null(strstr(err, "no cuBLAS"));
    } else {
        assert_int_equal(train_select_matmul("cublas", err, sizeof err), 0);
    }
    if (matmul_wgmma_supported() != LAB_OK) { /* refused up front, not at the first matmul */
        assert_int_equal(train_select_matmul("wgmma", err, sizeof err), -1);
        assert_non_null(strstr(err, "H100/H200"));
    }
    assert_int_equal(train_select_matmul("auto", err, sizeof err), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_operand_forms),
        cmocka_unit_test(test_model_step_matches_tiled),
        cmocka_unit_test(test_flash_matches_naive),
        cmocka_unit_test(test_flash_saves_memory),
        cmocka_unit_test(test_flash_rejects_head_size),
        cmocka_unit_test(test_profile),
        cmocka_unit_test(test_accumulate_norm_adamw),
        cmocka_unit_test(test_bad_names),
    };
    return cmocka_run_group_tests_name("model_gpu_variants", tests, NULL, NULL);
}
