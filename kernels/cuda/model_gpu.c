/*
 * The model on the device (see model_gpu.h): model_cpu.c's structure with the
 * ops of model_ops_gpu.h and the student's lab-05 functions. Plain C: every
 * device call goes through a launch wrapper or common/gpu.h, so the one
 * object serves both the GPU build and the emulator build.
 */
#include "cuda/model_gpu.h"

#include <math.h>
#include <string.h>

#include "cpu/model_ops.h"
#include "cuda/flash_attention.h"
#include "cuda/model_ops_gpu.h"
#include "error.h"
#include "gpu.h"
#include "half.h"
#include "lab.h"
#include "memory.h"
#include "numerics.h"

/* The student's functions must be done before the backend can train. */
#define STUDENT(call, name)                                                                        \
    do {                                                                                           \
        int st_ = (call);                                                                          \
        CHECK(st_ == LAB_OK, "%s: %s (lab 05, labs/05-single-gpu-training/train_ops.cu)", name,  \
              lab_status_name(st_));                                                               \
    } while (0)

/* Every tensor starts on a 256-byte boundary: what cuBLAS's fastest kernels and
 * 16-byte vector loads want, whatever the odd sizes (N rows of rstd) before it. */
#define CARVE_BYTES 256

/* ---- the audit of the student's functions (model_gpu_audit) ----------------------- */

struct model_gpu_audit {
    int on;
    char failure[400]; /* the first mismatch; empty while none */
};

void model_gpu_audit(model_gpu_t *m, int on) {
    if (!m->audit) {
        m->audit = host_malloc(sizeof *m->audit);
        memset(m->audit, 0, sizeof *m->audit);
    }
    if (on) m->audit->failure[0] = '\0';
    m->audit->on = on;
}

const char *model_gpu_audit_failure(const model_gpu_t *m) {
    return m->audit && m->audit->failure[0] ? m->audit->failure : NULL;
}

static int auditing(const model_gpu_t *m) { return m->audit && m->audit->on && !m->audit->failure[0]; }

/* A host copy of n device floats. */
static float *audit_fetch(const float *d, size_t n) {
    float *h = host_malloc(n * sizeof(float) + 1);
    gpu_download(h, d, n * sizeof(float));
    return h;
}

/* A host copy of n device bf16 values, widened to fp32 (exactly). */
static float *audit_fetch_bf16(const uint16_t *d, size_t n) {
    uint16_t *bits = host_malloc(n * sizeof(uint16_t) + 2);
    float *h = host_malloc(n * sizeof(float) + 1);
    gpu_download(bits, d, n * sizeof(uint16_t));
    float_from_bf16_array(h, bits, n);
    host_free(bits);
    return h;
}

/* got against want within rtol relative plus 1e-3 of want's largest magnitude. */
static int screen_close_host(const float *got, const float *want, size_t n, double rtol, const char *what,
                             char *msg, size_t len) {
    double scale = 0.0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs((double)want[i]));
    cmp_report_t rep;
    int bad = !compare_close_f(got, want, n, rtol, 1e-3 * scale, &rep);
    if (bad) cmp_report_format(msg, len, what, &rep);
    return bad ? -1 : 0;
}

int model_gpu_screen_close(const float *d_got, const float *want, size_t n, const char *what, char *msg,
                           size_t len) {
    float *got = audit_fetch(d_got, n);
    int bad = screen_close_host(got, want, n, 1e-3, what, msg, len);
    host_free(got);
    return bad;
}

int model_gpu_screen_close_bf16(const uint16_t *d_got, const float *want, size_t n, const char *what, char *msg,
                                size_t len) {
    float *got = audit_fetch_bf16(d_got, n);
    /* bf16 keeps 8 significant bits: rounding moves a value by at most 2^-8 of it (half a unit), and a
     * reference a hair from a tie may round the other way (a whole unit, at most 2^-7). */
    int bad = screen_close_host(got, want, n, 1.0 / 128, what, msg, len);
    host_free(got);
    return bad;
}

int model_gpu_screen_bf16_copy(const uint16_t *d_bits, const float *d_master, size_t n, const char *what,
                               char *msg, size_t len) {
    uint16_t *bits = host_malloc(n * sizeof(uint16_t) + 2);
    float *master = audit_fetch(d_master, n);
    gpu_download(bits, d_bits, n * sizeof(uint16_t));
    /* Exact, no tolerance: converting one fp32 value to bf16 is correctly rounded on both sides
     * (__float2bfloat16 is round to nearest even on a GPU, and bit for bit so on the emulator;
     * bf16_from_float in common/half.c rounds the same way), so the same master gives the same
     * bits. The device's own master, not the CPU reference's: that one may differ by a few ulps
     * (the master's own 1e-3 screen allows it) and round to the neighbouring bf16 near a tie. */
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (bits[i] != bf16_from_float(master[i]) && bad++ == 0) first = i;
    if (bad)
        snprintf(msg, len, "%s: %zu of %zu not the nearest-even bf16 of the master weight; first at [%zu]: "
                 "got 0x%04x want 0x%04x (bf16 of master %.9g)", what, bad, n, first, bits[first],
                 bf16_from_float(master[first]), (double)master[first]);
    host_free(bits);
    host_free(master);
    return bad ? -1 : 0;
}

/* Compare n device floats with the reference; the first mismatch is kept. */
static void audit_compare(const model_gpu_t *m, const float *d_got, const float *want, size_t n, const char *what) {
    if (!m->audit->failure[0])
        model_gpu_screen_close(d_got, want, n, what, m->audit->failure, sizeof m->audit->failure);
}

/* The same for n device bf16 values against the fp32 reference they round. */
static void audit_compare_bf16(const model_gpu_t *m, const uint16_t *d_got, const float *want, size_t n,
                               const char *what) {
    if (!m->audit->failure[0])
        model_gpu_screen_close_bf16(d_got, want, n, what, m->audit->failure, sizeof m->audit->failure);
}

/* The student's call returned st: anything but LAB_OK ends the run (as
 * STUDENT does); while auditing, a fault is the audit's failure. */
static void audit_call(const model_gpu_t *m, int st, const char *name) {
    STUDENT(st, name);
    char fault[256];
    if (auditing(m) && gpu_sync_status(fault, sizeof fault) != GPU_DONE)
        snprintf(m->audit->failure, sizeof m->audit->failure, "%s: %s", name, fault);
}

static void student_rmsnorm_backward(const model_gpu_t *m, float *dinp, float *dweight, const float *dout,
                                     const float *inp, const float *weight, const float *rstd, int N, int D) {
    if (!auditing(m)) {
        STUDENT(rmsnorm_backward_gpu(dinp, dweight, dout, inp, weight, rstd, N, D), "rmsnorm_backward_gpu");
        return;
    }
    const size_t ND = (size_t)N * D;
    float *h_dinp = audit_fetch(dinp, ND), *h_dw = audit_fetch(dweight, (size_t)D), *h_dout = audit_fetch(dout, ND);
    float *h_inp = audit_fetch(inp, ND), *h_w = audit_fetch(weight, (size_t)D), *h_rstd = audit_fetch(rstd, (size_t)N);
    audit_call(m, rmsnorm_backward_gpu(dinp, dweight, dout, inp, weight, rstd, N, D), "rmsnorm_backward_gpu");
    if (!m->audit->failure[0]) {
        rmsnorm_backward(h_dinp, h_dw, h_dout, h_inp, h_w, h_rstd, N, D);
        audit_compare(m, dinp, h_dinp, ND, "rmsnorm_backward_gpu dinp, in an audited training step");
        audit_compare(m, dweight, h_dw, (size_t)D, "rmsnorm_backward_gpu dweight, in an audited training step");
    }
    host_free(h_dinp); host_free(h_dw); host_free(h_dout); host_free(h_inp); host_free(h_w); host_free(h_rstd);
}

static void student_swiglu_backward(const model_gpu_t *m, uint16_t *dgate, uint16_t *dup, const uint16_t *dout,
                                    const uint16_t *gate, const uint16_t *up, size_t n) {
    if (!auditing(m)) {
        STUDENT(swiglu_backward_gpu(dgate, dup, dout, gate, up, n), "swiglu_backward_gpu");
        return;
    }
    float *h_dout = audit_fetch_bf16(dout, n), *h_gate = audit_fetch_bf16(gate, n), *h_up = audit_fetch_bf16(up, n);
    float *h_dg = host_malloc(n * sizeof(float) + 1), *h_du = host_malloc(n * sizeof(float) + 1);
    audit_call(m, swiglu_backward_gpu(dgate, dup, dout, gate, up, n), "swiglu_backward_gpu");
    if (!m->audit->failure[0]) {
        swiglu_backward(h_dg, h_du, h_dout, h_gate, h_up, n);
        audit_compare_bf16(m, dgate, h_dg, n, "swiglu_backward_gpu dgate, in an audited training step");
        audit_compare_bf16(m, dup, h_du, n, "swiglu_backward_gpu dup, in an audited training step");
    }
    host_free(h_dout); host_free(h_gate); host_free(h_up); host_free(h_dg); host_free(h_du);
}

/* dS = scale * P * (dP - rowsum(P * dP)) on and below the diagonal, 0 above
 * it, row by row: the causal softmax's backward. */
static void student_softmax_backward(const model_gpu_t *m, float *dS, const float *P, const float *dP, int BH, int T,
                                     float scale) {
    if (!auditing(m)) {
        STUDENT(attention_softmax_backward_gpu(dS, P, dP, BH, T, scale), "attention_softmax_backward_gpu");
        return;
    }
    const size_t n = (size_t)BH * T * T;
    float *h_P = audit_fetch(P, n), *h_dP = audit_fetch(dP, n), *want = host_malloc(n * sizeof(float) + 1);
    audit_call(m, attention_softmax_backward_gpu(dS, P, dP, BH, T, scale), "attention_softmax_backward_gpu");
    if (!m->audit->failure[0]) {
        for (size_t r = 0; r < (size_t)BH * T; r++) {
            const int t = (int)(r % T);
            const float *p = h_P + r * T, *dp = h_dP + r * T;
            double dot = 0.0;
            for (int u = 0; u <= t; u++) dot += (double)p[u] * dp[u];
            for (int u = 0; u < T; u++) want[r * T + u] = u <= t ? (float)(scale * (double)p[u] * (dp[u] - dot)) : 0.0f;
        }
        audit_compare(m, dS, want, n, "attention_softmax_backward_gpu dS, in an audited training step");
    }
    host_free(h_P); host_free(h_dP); host_free(want);
}

static void student_adamw(const model_gpu_t *m, float *p, uint16_t *p_bf16, const float *g, float *mom, float *v,
                          size_t n, float lr, float b1, float b2, float eps, float wd, long t, float gs) {
    if (!auditing(m)) {
        STUDENT(adamw_step_gpu(p, p_bf16, g, mom, v, n, lr, b1, b2, eps, wd, t, gs), "adamw_step_gpu");
        return;
    }
    float *h_p = audit_fetch(p, n), *h_g = audit_fetch(g, n), *h_m = audit_fetch(mom, n), *h_v = audit_fetch(v, n);
    audit_call(m, adamw_step_gpu(p, p_bf16, g, mom, v, n, lr, b1, b2, eps, wd, t, gs), "adamw_step_gpu");
    if (!m->audit->failure[0]) {
        for (size_t i = 0; i < n; i++) h_g[i] *= gs; /* the clip factor, applied first */
        adamw_update(h_p, h_g, h_m, h_v, n, lr, b1, b2, eps, wd, t);
        audit_compare(m, p, h_p, n, "adamw_step_gpu master weights, in an audited training step");
        audit_compare(m, mom, h_m, n, "adamw_step_gpu first moment, in an audited training step");
        audit_compare(m, v, h_v, n, "adamw_step_gpu second moment, in an audited training step");
        /* The copy the next step's matmuls read; one that stops short keeps them on stale weights. */
        if (!m->audit->failure[0])
            model_gpu_screen_bf16_copy(p_bf16, p, n, "adamw_step_gpu bf16 copy, in an audited training step",
                                       m->audit->failure, sizeof m->audit->failure);
    }
    host_free(h_p); host_free(h_g); host_free(h_m); host_free(h_v);
}

/* ---- optional timing by category (model_gpu_profile_start) ---------------------- */

static void prof_begin(const model_gpu_t *m) {
    if (m->prof && m->prof->on && m->prof->depth++ == 0) gpu_timer_start(&m->prof->timer);
}

static void prof_end(const model_gpu_t *m, model_prof_t c) {
    if (!m->prof || !m->prof->on || --m->prof->depth > 0) return;
    m->prof->ms[c] += gpu_timer_stop_ms(&m->prof->timer);
    m->prof->calls[c]++;
}

/* When profiling, add to category c the DRAM bytes an op must move at the
 * least (each input read once, each output written once: what a perfect
 * kernel would move) and the FLOPs it does. */
static void prof_work(const model_gpu_t *m, model_prof_t c, double bytes, double flops) {
    if (!m->prof || !m->prof->on) return;
    m->prof->bytes[c] += bytes;
    m->prof->flops[c] += flops;
}

/* Run one op (or a group of them) that must move `bytes` and, when profiling, add its device time
 * and bytes to category c. */
#define TIMED(c, bytes, ...)              \
    do {                                  \
        prof_work(m, (c), (bytes), 0.0);  \
        prof_begin(m);                    \
        __VA_ARGS__;                      \
        prof_end(m, (c));                 \
    } while (0)

void model_gpu_profile_start(model_gpu_t *m) {
    if (!m->prof) {
        m->prof = host_calloc(1, sizeof *m->prof);
        gpu_timer_init(&m->prof->timer, NULL);
    }
    gpu_timer_t t = m->prof->timer;
    memset(m->prof, 0, sizeof *m->prof);
    m->prof->timer = t;
    m->prof->on = 1;
}

void model_gpu_profile_stop(model_gpu_t *m) {
    if (m->prof) m->prof->on = 0;
}

const char *model_gpu_profile_name(int c) {
    static const char *names[MODEL_PROF_COUNT] = {
        "matmul", "attention forward", "attention backward", "rmsnorm", "rope + heads", "swiglu",
        "residual + embedding", "casts", "cross-entropy", "optimizer"};
    return c >= 0 && c < MODEL_PROF_COUNT ? names[c] : "?";
}

static float *carve(float *base, size_t *used, size_t n) {
    float *p = base ? base + *used : NULL;
    *used += (n + CARVE_BYTES / 4 - 1) / (CARVE_BYTES / 4) * (CARVE_BYTES / 4);
    return p;
}

static uint16_t *carve16(uint16_t *base, size_t *used, size_t n) {
    uint16_t *p = base ? base + *used : NULL;
    *used += (n + CARVE_BYTES / 2 - 1) / (CARVE_BYTES / 2) * (CARVE_BYTES / 2);
    return p;
}

/*
 * What the backward pass needs, in the precision it needs it: fp32 for the
 * residual stream (an RMSNorm backward reads it, and a long sum of small
 * updates must not round away) and where statistics come from it; bf16 for
 * what is only ever a matmul operand (the norm outputs, SwiGLU's output, the
 * heads of q, k, v), stored once in bf16 instead of fp32 plus a cast before
 * every use, and for gate and up, which their matmul writes in bf16: only
 * the element-wise SwiGLU reads them, and at 2 N F each they are the
 * largest activations, so bf16 halves the bytes of the passes over them.
 * The attention output is kept in fp32 only for the naive attention; the
 * fused backward reads the bf16 copy. The values are those of model_cpu.c's
 * tensors of the same names, rounded where the matmuls round.
 * fp32 tensors come from base, bf16 ones from base16; with NULL bases this
 * only counts.
 */
static void layout_acts(model_gpu_t *m, float *base, uint16_t *base16, size_t *n32, size_t *n16) {
    const size_t N = (size_t)m->B * m->T, D = (size_t)m->cfg.d_model, F = (size_t)m->cfg.d_ff;
    const size_t V = (size_t)m->cfg.vocab, H = (size_t)m->cfg.n_heads, T = (size_t)m->T;
    const int flash = m->attn == MODEL_ATTN_FLASH;
    size_t u = 0, u16 = 0;
    m->encoded = carve(base, &u, N * D);
    for (int l = 0; l < m->cfg.n_layers; l++) {
        gpu_layer_acts_t *a = &m->layers[l];
        a->ln1 = carve16(base16, &u16, N * D);
        a->ln1_rstd = carve(base, &u, N);
        a->qh = carve16(base16, &u16, N * D);
        a->kh = carve16(base16, &u16, N * D);
        a->vh = carve16(base16, &u16, N * D);
        /* naive: the probabilities; flash: only each row's log-sum-exp */
        a->att = carve(base, &u, (size_t)m->B * H * T * (flash ? 1 : T));
        a->atty = flash ? NULL : carve(base, &u, N * D); /* flash: only the bf16 copy */
        a->atty_b = carve16(base16, &u16, N * D);
        a->res1 = carve(base, &u, N * D);
        a->ln2 = carve16(base16, &u16, N * D);
        a->ln2_rstd = carve(base, &u, N);
        a->gate = carve16(base16, &u16, 2 * N * F); /* gate and up back to back: one batched matmul writes both */
        a->up = a->gate ? a->gate + N * F : NULL;
        a->swi = carve16(base16, &u16, N * F);
        a->res2 = carve(base, &u, N * D);
    }
    m->scratch = carve16(base16, &u16, N * D);
    m->lnf = carve16(base16, &u16, N * D);
    m->lnf_rstd = carve(base, &u, N);
    m->probs = carve(base, &u, N * V);
    m->losses = carve(base, &u, N);
    *n32 = u;
    *n16 = u16;
}

/* Scratch: activation gradients (fp32 where an RMSNorm backward or a sum reads them, bf16 where only a
 * matmul, SwiGLU or the fused attention does) and attention temporaries. */
typedef struct {
    float *dres, *dln, *dq, *dk, *dv, *datty, *dP, *dS, *oh, *delta;
    uint16_t *dyb, *doh, *attb, *dswi, *datty_b;
} work_t;

static size_t max3(size_t a, size_t b, size_t c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

/* The forward pass borrows dyb for the bf16 q, k, v (before RoPE and the head
 * split). dq, dk, dv (one block of 3 N D) are the naive attention's fp32
 * gradients; the flash kernels write theirs straight into dyb. */
static work_t work_of(const model_gpu_t *m, float *f, uint16_t *h, size_t *n32, size_t *n16) {
    const size_t N = (size_t)m->B * m->T, D = (size_t)m->cfg.d_model, F = (size_t)m->cfg.d_ff;
    const size_t BH = (size_t)m->B * m->cfg.n_heads, T = (size_t)m->T, V = (size_t)m->cfg.vocab;
    const int flash = m->attn == MODEL_ATTN_FLASH;
    work_t w;
    size_t u = 0, u16 = 0;
    w.dres = carve(f, &u, N * D);
    w.dln = carve(f, &u, N * D);
    w.dq = flash ? NULL : carve(f, &u, 3 * N * D);
    w.dk = w.dq ? w.dq + N * D : NULL;
    w.dv = w.dq ? w.dq + 2 * N * D : NULL;
    w.datty = flash ? NULL : carve(f, &u, N * D);       /* the attention output's gradient: naive, fp32 */
    w.oh = flash ? NULL : carve(f, &u, N * D);          /* naive: one head-major product */
    w.dP = flash ? NULL : carve(f, &u, BH * T * T);     /* naive: dP and dS */
    w.dS = flash ? NULL : carve(f, &u, BH * T * T);
    w.delta = flash ? carve(f, &u, BH * T) : NULL;      /* flash: the backward's row terms */
    w.dyb = carve16(h, &u16, N * max3(3 * D, 2 * F, V)); /* gradients of up to 3 outputs, rounded */
    w.doh = carve16(h, &u16, N * D);                    /* dO in heads layout */
    w.dswi = carve16(h, &u16, N * F);                   /* SwiGLU's output gradient, as its matmul rounds it */
    w.datty_b = flash ? carve16(h, &u16, N * D) : NULL; /* flash: the attention output's gradient in bf16 */
    w.attb = flash ? NULL : carve16(h, &u16, BH * T * T); /* naive: P and dS in bf16 */
    *n32 = u;
    *n16 = u16;
    return w;
}

static work_t work(const model_gpu_t *m) {
    size_t a, b;
    return work_of(m, m->work, m->work_bf16, &a, &b);
}

static size_t off(const model_gpu_t *m, int layer, model_layer_param_t which) {
    return m->table.slices[param_index(&m->table, layer, which)].offset;
}

int model_gpu_flash_supported(const model_config_t *cfg, int B) {
    return cfg->n_heads > 0 && cfg->d_model % cfg->n_heads == 0 && (long long)B * cfg->n_heads <= 65535 &&
           gpu_flash_attention_supported(cfg->d_model / cfg->n_heads);
}

void model_gpu_init(model_gpu_t *m, const model_config_t *cfg, int B, int T, uint64_t seed) {
    model_gpu_init_attn(m, cfg, B, T, seed, MODEL_ATTN_NAIVE);
}

void model_gpu_init_attn(model_gpu_t *m, const model_config_t *cfg, int B, int T, uint64_t seed,
                         model_attn_t attn) {
    char err[512];
    memset(m, 0, sizeof *m);
    CHECK(model_config_validate(cfg, err, sizeof err) == 0, "model_gpu_init: %s", err);
    CHECK(B >= 1 && T >= 1 && T <= cfg->max_seq,
          "model_gpu_init: sequence length %d must be in [1, %d] (--max-seq)", T, cfg->max_seq);
    CHECK((long long)B * cfg->n_heads <= 65535,
          "model_gpu_init: a micro-batch of %d sequences x %d heads = %lld (sequence, head) pairs, more than the "
          "65535 that the CUDA attention and RoPE kernels put on one grid dimension; lower --batch, raise --accum "
          "(a micro-batch is batch / accum sequences) or use fewer --heads",
          B, cfg->n_heads, (long long)B * cfg->n_heads);
    CHECK(attn == MODEL_ATTN_NAIVE || model_gpu_flash_supported(cfg, B),
          "model_gpu_init: flash attention needs a head size (--d-model / --heads = %d) of 16, 32, 64 or 128 "
          "that this GPU's shared memory allows, and batch x heads <= 65535; pick --heads accordingly or use "
          "the naive attention", cfg->d_model / cfg->n_heads);
    m->attn = attn;
    m->cfg = *cfg;
    m->B = B;
    m->T = T;
    param_table_init(&m->table, cfg);
    const size_t P = m->n_params = m->table.total;
    m->host_params = host_malloc(P * sizeof(float));
    m->host_m = host_calloc(P, sizeof(float));
    m->host_v = host_calloc(P, sizeof(float));
    model_init_params(&m->table, m->host_params, seed);
    m->params = gpu_malloc(P * sizeof(float));
    m->params_bf16 = gpu_malloc(P * sizeof(uint16_t));
    m->grads = gpu_malloc(P * sizeof(float));
    m->adam_m = gpu_malloc(P * sizeof(float));
    m->adam_v = gpu_malloc(P * sizeof(float));
    model_gpu_upload_state(m);
    gpu_memset(m->grads, 0, P * sizeof(float));
    /* mm_forward() batches the products that share an input: their weights must be consecutive slices. */
    const size_t DD = (size_t)cfg->d_model * cfg->d_model, DF = (size_t)cfg->d_model * cfg->d_ff;
    for (int l = 0; l < cfg->n_layers; l++)
        CHECK(off(m, l, P_WK) == off(m, l, P_WQ) + DD && off(m, l, P_WV) == off(m, l, P_WK) + DD &&
                  off(m, l, P_W_UP) == off(m, l, P_W_GATE) + DF,
              "model_gpu_init: the batched matmuls need wq, wk, wv (and w_gate, w_up) in consecutive slices");

    m->layers = host_calloc((size_t)cfg->n_layers, sizeof(gpu_layer_acts_t));
    layout_acts(m, NULL, NULL, &m->n_acts, &m->n_acts_bf16);
    m->acts = gpu_malloc(m->n_acts * sizeof(float));
    m->acts_bf16 = gpu_malloc(m->n_acts_bf16 * sizeof(uint16_t));
    gpu_memset(m->acts, 0, m->n_acts * sizeof(float));
    gpu_memset(m->acts_bf16, 0, m->n_acts_bf16 * sizeof(uint16_t));
    layout_acts(m, m->acts, m->acts_bf16, &m->n_acts, &m->n_acts_bf16);
    work_of(m, NULL, NULL, &m->n_work, &m->n_work_bf16);
    m->work = gpu_malloc(m->n_work * sizeof(float));
    m->work_bf16 = gpu_malloc(m->n_work_bf16 * sizeof(uint16_t));

    const size_t N = (size_t)B * T;
    const int hd = cfg->d_model / cfg->n_heads;
    const size_t rope = (size_t)T * (hd / 2);
    float *c = host_malloc(rope * sizeof(float)), *s = host_malloc(rope * sizeof(float));
    rope_tables(c, s, T, hd, cfg->rope_theta);
    m->rope_cos = gpu_malloc(rope * sizeof(float));
    m->rope_sin = gpu_malloc(rope * sizeof(float));
    gpu_upload(m->rope_cos, c, rope * sizeof(float));
    gpu_upload(m->rope_sin, s, rope * sizeof(float));
    host_free(c);
    host_free(s);
    m->inputs = gpu_malloc(N * sizeof(int));
    m->targets = gpu_malloc(N * sizeof(int));
    const size_t chunks = (P + GPU_NORM_CHUNK - 1) / GPU_NORM_CHUNK;
    m->norm_partial = gpu_malloc(chunks * sizeof(double));
    m->host_partial = host_malloc(chunks * sizeof(double));
    m->host_losses = host_malloc(N * sizeof(float));
}

void model_gpu_free(model_gpu_t *m) {
    void *dev[] = {m->params, m->params_bf16, m->grads,    m->adam_m,   m->adam_v,   m->acts,   m->acts_bf16,
                   m->work,   m->work_bf16,   m->rope_cos, m->rope_sin, m->inputs,   m->targets, m->norm_partial};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) gpu_free(dev[i]);
    host_free(m->layers);
    host_free(m->host_params);
    host_free(m->host_m);
    host_free(m->host_v);
    host_free(m->host_partial);
    host_free(m->host_losses);
    if (m->prof) {
        gpu_timer_free(&m->prof->timer);
        host_free(m->prof);
    }
    host_free(m->audit);
    param_table_free(&m->table);
    memset(m, 0, sizeof *m);
}

/*
 * out_i[N, OC] = inp[N, C] * W_i[C, OC], bf16 operands, for n weights that
 * share their input: Q, K, V from ln1 (n = 3), gate and up from ln2 (n = 2),
 * else n = 1. The weights are consecutive slices of the flat buffer and the
 * outputs are N * OC apart, so the n products are one batched matmul. The
 * output is fp32 (out) or bf16 (out_b): exactly one is given.
 */
static void mm_forward(const model_gpu_t *m, float *out, uint16_t *out_b, const uint16_t *inp, size_t woff, int N,
                       int C, int OC, int n) {
    const uint16_t *w = m->params_bf16 + woff;
    const long long sw = (long long)C * OC, so = (long long)N * OC;
    prof_work(m, MODEL_PROF_MATMUL, 0.0, 2.0 * N * C * OC * n);
    if (out_b)
        TIMED(MODEL_PROF_MATMUL, 0.0, gpu_gemm_bf16_out(0, 0, N, OC, C, 1.0f, inp, C, 0, w, OC, sw, out_b, OC, so, n));
    else
        TIMED(MODEL_PROF_MATMUL, 0.0, gpu_gemm_bf16(0, 0, N, OC, C, 1.0f, inp, C, 0, w, OC, sw, 0.0f, out, OC, so, n));
}

/* The backward of mm_forward, from the outputs' gradients already in bf16 (dout_i N * OC apart):
 * dinp = sum_i dout_i W_i^T, in order i = 0..n-1 (the first product overwrites dinp: no memset,
 * and dinp is not read); dW_i += inp^T dout_i, one batched matmul. dinp is fp32, or for n = 1
 * bf16 (dinp_b; exactly one is given). */
static void mm_backward(const model_gpu_t *m, float *dinp, uint16_t *dinp_b, size_t woff, const uint16_t *dout,
                        const uint16_t *inp, int N, int C, int OC, int n) {
    const size_t out_n = (size_t)N * OC, w_n = (size_t)C * OC;
    prof_work(m, MODEL_PROF_MATMUL, 0.0, 4.0 * N * C * OC * n); /* dinp and dW: two products */
    prof_begin(m);
    if (dinp_b) {
        CHECK(n == 1, "mm_backward: a bf16 input gradient is one product, not a sum of %d", n);
        gpu_gemm_bf16_out(0, 1, N, C, OC, 1.0f, dout, OC, 0, m->params_bf16 + woff, OC, 0, dinp_b, C, 0, 1);
    }
    for (int i = 0; !dinp_b && i < n; i++)
        gpu_gemm_bf16(0, 1, N, C, OC, 1.0f, dout + i * out_n, OC, 0, m->params_bf16 + woff + i * w_n, OC, 0,
                      i == 0 ? 0.0f : 1.0f, dinp, C, 0, 1);
    gpu_gemm_bf16(1, 0, C, OC, N, 1.0f, inp, C, 0, dout, OC, (long long)out_n, 1.0f, m->grads + woff, OC,
                  (long long)w_n, n);
    prof_end(m, MODEL_PROF_MATMUL);
}

/* FLOPs of `products` attention products of a layer ([T, T] by [T, hd], or
 * their transposes: 2 in the forward pass, 4 in the backward), each over the
 * causal triangle of T (T + 1) / 2 scores only: the work the result needs,
 * not counting recomputation (the FlashAttention papers' convention; the
 * MFU formula counts the full square, twice this). */
static double attention_flops(const model_gpu_t *m, int products) {
    const double T = m->T, hd = m->cfg.d_model / m->cfg.n_heads;
    return products * (double)m->B * m->cfg.n_heads * T * (T + 1) * hd;
}

/* Bytes the fused attention must move (0 for the naive one, not modelled):
 * forward, q, k, v read and the output written, all bf16, and the
 * log-sum-exps; backward, dout and the output (bf16) for Delta, dout in the
 * heads layout written and read with q, k, v, L and Delta, and dq, dk, dv
 * written, all bf16. */
static double attention_bytes(const model_gpu_t *m, int backward) {
    if (m->attn != MODEL_ATTN_FLASH) return 0.0;
    const double ND = (double)m->B * m->T * m->cfg.d_model, BHT = (double)m->B * m->cfg.n_heads * m->T;
    return backward ? 20.0 * ND + 12.0 * BHT : 8.0 * ND + 4.0 * BHT;
}

/* From ln1: q, k, v (bf16, in w.dyb), then RoPE, the head split and the rounding in one pass into the
 * layer's heads. */
static void qkv_forward(const model_gpu_t *m, const work_t *w, gpu_layer_acts_t *a, int l) {
    const int B = m->B, T = m->T, N = B * T, D = m->cfg.d_model, H = m->cfg.n_heads;
    mm_forward(m, NULL, w->dyb, a->ln1, off(m, l, P_WQ), N, D, D, 3);
    TIMED(MODEL_PROF_ROPE, 12.0 * N * D,
          gpu_rope_heads_qkv_bf16(a->qh, a->kh, a->vh, w->dyb, m->rope_cos, m->rope_sin, B, T, D, H));
}

static void attention_forward_gpu(const model_gpu_t *m, const work_t *w, gpu_layer_acts_t *a) {
    const int B = m->B, T = m->T, D = m->cfg.d_model, H = m->cfg.n_heads, hd = D / H, BH = B * H;
    const long long sT = (long long)T * hd, sTT = (long long)T * T;
    if (m->attn == MODEL_ATTN_FLASH) { /* a->att receives the rows' log-sum-exps; atty_b the bf16 copy */
        gpu_flash_attention_forward_bf16(NULL, a->atty_b, a->att, a->qh, a->kh, a->vh, B, T, D, H);
        return;
    }
    /* S = Q K^T / sqrt(hd) over the full square (the causal softmax ignores the upper half). */
    gpu_gemm_bf16(0, 1, T, T, hd, 1.0f / sqrtf((float)hd), a->qh, hd, sT, a->kh, hd, sT, 0.0f, a->att, T, sTT,
                  BH);
    gpu_causal_softmax(a->att, a->att, BH, T);
    gpu_cast_to_bf16(w->attb, a->att, (size_t)BH * T * T);
    gpu_gemm_bf16(0, 0, T, hd, T, 1.0f, w->attb, T, sTT, a->vh, hd, sT, 0.0f, w->oh, hd, sT, BH);
    gpu_heads_merge(a->atty, w->oh, B, T, D, H);
}

/* Flash: writes the gradients of q, k, v before RoPE, rounded to bf16, into w->dyb, what the
 * backward of the q, k, v projections reads (the kernels undo RoPE and round in their last step).
 * Naive: writes fp32 dq, dk, dv (after RoPE), which the caller rotates back and rounds into w->dyb.
 * (The CPU version accumulates into zeroed buffers: the same.) */
static void attention_backward_gpu(const model_gpu_t *m, const work_t *w, const gpu_layer_acts_t *a) {
    const int B = m->B, T = m->T, D = m->cfg.d_model, H = m->cfg.n_heads, hd = D / H, BH = B * H;
    const long long sT = (long long)T * hd, sTT = (long long)T * T;
    if (m->attn == MODEL_ATTN_FLASH) { /* recomputes P from the log-sum-exps; rounds dO into doh */
        gpu_flash_attention_backward_bf16(w->dyb, w->doh, w->delta, w->datty_b, a->atty_b, a->att, a->qh, a->kh,
                                          a->vh, m->rope_cos, m->rope_sin, B, T, D, H);
        return;
    }
    gpu_heads_split_bf16(w->doh, w->datty, B, T, D, H);
    /* dP = dO V^T; dV = P^T dO */
    gpu_gemm_bf16(0, 1, T, T, hd, 1.0f, w->doh, hd, sT, a->vh, hd, sT, 0.0f, w->dP, T, sTT, BH);
    gpu_cast_to_bf16(w->attb, a->att, (size_t)BH * T * T);
    gpu_gemm_bf16(1, 0, T, hd, T, 1.0f, w->attb, T, sTT, w->doh, hd, sT, 0.0f, w->oh, hd, sT, BH);
    gpu_heads_merge(w->dv, w->oh, B, T, D, H);
    student_softmax_backward(m, w->dS, a->att, w->dP, BH, T, 1.0f / sqrtf((float)hd));
    /* dQ = dS K; dK = dS^T Q */
    gpu_cast_to_bf16(w->attb, w->dS, (size_t)BH * T * T);
    gpu_gemm_bf16(0, 0, T, hd, T, 1.0f, w->attb, T, sTT, a->kh, hd, sT, 0.0f, w->oh, hd, sT, BH);
    gpu_heads_merge(w->dq, w->oh, B, T, D, H);
    gpu_gemm_bf16(1, 0, T, hd, T, 1.0f, w->attb, T, sTT, a->qh, hd, sT, 0.0f, w->oh, hd, sT, BH);
    gpu_heads_merge(w->dk, w->oh, B, T, D, H);
}

double model_gpu_forward(model_gpu_t *m, const int *inputs, const int *targets) {
    const int B = m->B, T = m->T, N = B * T, D = m->cfg.d_model, F = m->cfg.d_ff;
    const int V = m->cfg.vocab, L = m->cfg.n_layers;
    const float eps = m->cfg.norm_eps;
    for (int n = 0; n < N; n++)
        CHECK(inputs[n] >= 0 && inputs[n] < V && targets[n] >= 0 && targets[n] < V,
              "model_gpu_forward: token %d at position %d is outside [0, %d)",
              inputs[n] < 0 || inputs[n] >= V ? inputs[n] : targets[n], n, V);
    gpu_upload(m->inputs, inputs, (size_t)N * sizeof(int));
    gpu_upload(m->targets, targets, (size_t)N * sizeof(int));
    const work_t w = work(m);
    const param_table_t *t = &m->table;
    TIMED(MODEL_PROF_RESIDUAL, 8.0 * N * D + 4.0 * N,
          gpu_encoder_forward(m->encoded, m->inputs, m->params + t->slices[param_index_tok_emb(t)].offset, N, D));
    /* Each residual add is fused with the norm that reads its sum (profiled as RMSNorm):
     * res1 with ln2, res2 with the next layer's ln1 or, after the last layer, the final norm. */
    TIMED(MODEL_PROF_RMSNORM, 6.0 * N * D + 4.0 * N,
          gpu_rmsnorm_forward_bf16(m->layers[0].ln1, m->layers[0].ln1_rstd, m->encoded,
                                   m->params + off(m, 0, P_ATTN_NORM), N, D, eps));
    const float *x = m->encoded;
    for (int l = 0; l < L; l++) {
        gpu_layer_acts_t *a = &m->layers[l];
        qkv_forward(m, &w, a, l);
        prof_work(m, MODEL_PROF_ATTENTION, 0.0, attention_flops(m, 2));
        TIMED(MODEL_PROF_ATTENTION, attention_bytes(m, 0), attention_forward_gpu(m, &w, a));
        if (m->attn != MODEL_ATTN_FLASH) /* the fused kernel writes atty_b itself */
            TIMED(MODEL_PROF_CAST, 6.0 * N * D, gpu_cast_to_bf16(a->atty_b, a->atty, (size_t)N * D));
        mm_forward(m, NULL, m->scratch, a->atty_b, off(m, l, P_WO), N, D, D, 1);
        TIMED(MODEL_PROF_RMSNORM, 12.0 * N * D + 4.0 * N,
              gpu_residual_rmsnorm_forward_bf16(a->res1, a->ln2, a->ln2_rstd, x, m->scratch,
                                                m->params + off(m, l, P_MLP_NORM), N, D, eps));
        mm_forward(m, NULL, a->gate, a->ln2, off(m, l, P_W_GATE), N, D, F, 2); /* gate, up, in bf16 */
        TIMED(MODEL_PROF_SWIGLU, 6.0 * N * F, gpu_swiglu_forward_bf16(a->swi, a->gate, a->up, (size_t)N * F));
        mm_forward(m, NULL, m->scratch, a->swi, off(m, l, P_W_DOWN), N, F, D, 1);
        const int last = l == L - 1;
        uint16_t *next = last ? m->lnf : m->layers[l + 1].ln1;
        float *next_rstd = last ? m->lnf_rstd : m->layers[l + 1].ln1_rstd;
        const size_t next_w = last ? t->slices[param_index_final_norm(t)].offset : off(m, l + 1, P_ATTN_NORM);
        TIMED(MODEL_PROF_RMSNORM, 12.0 * N * D + 4.0 * N,
              gpu_residual_rmsnorm_forward_bf16(a->res2, next, next_rstd, a->res1, m->scratch, m->params + next_w,
                                                N, D, eps));
        x = a->res2;
    }
    mm_forward(m, m->probs, NULL, m->lnf, t->slices[param_index_lm_head(t)].offset, N, D, V, 1);
    TIMED(MODEL_PROF_LOSS, 8.0 * N * V + 8.0 * N,
          gpu_crossentropy_forward(m->losses, m->probs, m->probs, m->targets, N, V));
    gpu_download(m->host_losses, m->losses, (size_t)N * sizeof(float));
    return loss_sum(m->host_losses, N) / N;
}

void model_gpu_zero_grad(model_gpu_t *m) { gpu_memset(m->grads, 0, m->n_params * sizeof(float)); }

void model_gpu_backward(model_gpu_t *m, float loss_scale) {
    const int B = m->B, T = m->T, N = B * T, D = m->cfg.d_model, F = m->cfg.d_ff;
    const int H = m->cfg.n_heads, V = m->cfg.vocab, L = m->cfg.n_layers;
    const size_t ND = (size_t)N * D, NF = (size_t)N * F;
    const work_t w = work(m);
    const param_table_t *t = &m->table;
    const size_t lm = t->slices[param_index_lm_head(t)].offset, fn = t->slices[param_index_final_norm(t)].offset;
    /* dout and inp read, dinp read and written (it accumulates), rstd read */
    const double rms_bwd_bytes = 16.0 * ND + 4.0 * N;

    TIMED(MODEL_PROF_LOSS, 8.0 * N * V + 4.0 * N,
          gpu_crossentropy_backward(m->probs, m->probs, m->targets, loss_scale / (float)N, N, V));
    TIMED(MODEL_PROF_CAST, 6.0 * N * V, gpu_cast_to_bf16(w.dyb, m->probs, (size_t)N * V));
    mm_backward(m, w.dln, NULL, lm, w.dyb, m->lnf, N, D, V, 1);
    gpu_memset(w.dres, 0, ND * sizeof(float));
    const float *xl = m->layers[L - 1].res2;
    TIMED(MODEL_PROF_RMSNORM, rms_bwd_bytes,
          student_rmsnorm_backward(m, w.dres, m->grads + fn, w.dln, xl, m->params + fn, m->lnf_rstd, N, D));
    for (int l = L - 1; l >= 0; l--) {
        const gpu_layer_acts_t *a = &m->layers[l];
        const float *x = l > 0 ? m->layers[l - 1].res2 : m->encoded;
        TIMED(MODEL_PROF_CAST, 6.0 * ND, gpu_cast_to_bf16(w.dyb, w.dres, ND));
        mm_backward(m, NULL, w.dswi, off(m, l, P_W_DOWN), w.dyb, a->swi, N, F, D, 1);
        TIMED(MODEL_PROF_SWIGLU, 10.0 * NF, /* all in bf16: 3 reads, 2 writes */
              student_swiglu_backward(m, w.dyb, w.dyb + NF, w.dswi, a->gate, a->up, NF));
        mm_backward(m, w.dln, NULL, off(m, l, P_W_GATE), w.dyb, a->ln2, N, D, F, 2);
        TIMED(MODEL_PROF_RMSNORM, rms_bwd_bytes,
              student_rmsnorm_backward(m, w.dres, m->grads + off(m, l, P_MLP_NORM), w.dln, a->res1,
                                       m->params + off(m, l, P_MLP_NORM), a->ln2_rstd, N, D));
        TIMED(MODEL_PROF_CAST, 6.0 * ND, gpu_cast_to_bf16(w.dyb, w.dres, ND));
        mm_backward(m, w.datty, w.datty_b, off(m, l, P_WO), w.dyb, a->atty_b, N, D, D, 1); /* one is NULL */
        prof_work(m, MODEL_PROF_ATTENTION_BWD, 0.0, attention_flops(m, 4));
        TIMED(MODEL_PROF_ATTENTION_BWD, attention_bytes(m, 1), attention_backward_gpu(m, &w, a));
        if (m->attn != MODEL_ATTN_FLASH) /* the RoPE backward of dq, dk with their rounding; dv only rounded */
            TIMED(MODEL_PROF_ROPE, 18.0 * ND,
                  gpu_rope_cast_qkv_bf16(w.dyb, w.dq, m->rope_cos, m->rope_sin, N, T, D, H, -1.0f));
        mm_backward(m, w.dln, NULL, off(m, l, P_WQ), w.dyb, a->ln1, N, D, D, 3);
        TIMED(MODEL_PROF_RMSNORM, rms_bwd_bytes,
              student_rmsnorm_backward(m, w.dres, m->grads + off(m, l, P_ATTN_NORM), w.dln, x,
                                       m->params + off(m, l, P_ATTN_NORM), a->ln1_rstd, N, D));
    }
    TIMED(MODEL_PROF_RESIDUAL, 4.0 * ND + 4.0 * N + 8.0 * V * D,
          gpu_encoder_backward(m->grads + t->slices[param_index_tok_emb(t)].offset, w.dres, m->inputs, N, D, V));
}

double model_gpu_grad_norm(model_gpu_t *m) {
    const size_t chunks = (m->n_params + GPU_NORM_CHUNK - 1) / GPU_NORM_CHUNK;
    TIMED(MODEL_PROF_OPTIMIZER, 4.0 * m->n_params, gpu_sum_squares_chunks(m->norm_partial, m->grads, m->n_params));
    gpu_download(m->host_partial, m->norm_partial, chunks * sizeof(double));
    double s = 0.0;
    for (size_t c = 0; c < chunks; c++) s += m->host_partial[c]; /* in order: deterministic */
    return sqrt(s);
}

void model_gpu_adamw(model_gpu_t *m, float lr, float beta1, float beta2, float eps, float weight_decay,
                     long t, float grad_scale) {
    /* master, gradient, m, v read; master, m, v and the bf16 copy written */
    prof_work(m, MODEL_PROF_OPTIMIZER, 30.0 * m->n_params, 0.0);
    prof_begin(m);
    /* The update is element-wise, so consecutive slices with the same decay are one range,
     * one launch (wq..wo, w_gate..w_down): half the launches of one per slice, same result. */
    for (int i = 0; i < m->table.n;) {
        const param_slice_t *s = &m->table.slices[i];
        size_t numel = s->numel;
        int j = i + 1;
        for (; j < m->table.n && m->table.slices[j].decay == s->decay &&
               m->table.slices[j].offset == s->offset + numel;
             j++)
            numel += m->table.slices[j].numel;
        student_adamw(m, m->params + s->offset, m->params_bf16 + s->offset, m->grads + s->offset,
                      m->adam_m + s->offset, m->adam_v + s->offset, numel, lr, beta1, beta2, eps,
                      s->decay ? weight_decay : 0.0f, t, grad_scale);
        i = j;
    }
    prof_end(m, MODEL_PROF_OPTIMIZER);
}

void model_gpu_download_state(model_gpu_t *m) {
    const size_t bytes = m->n_params * sizeof(float);
    gpu_download(m->host_params, m->params, bytes);
    gpu_download(m->host_m, m->adam_m, bytes);
    gpu_download(m->host_v, m->adam_v, bytes);
}

void model_gpu_upload_state(model_gpu_t *m) {
    const size_t bytes = m->n_params * sizeof(float);
    gpu_upload(m->params, m->host_params, bytes);
    gpu_upload(m->adam_m, m->host_m, bytes);
    gpu_upload(m->adam_v, m->host_v, bytes);
    gpu_cast_to_bf16(m->params_bf16, m->params, m->n_params);
}

size_t model_gpu_bytes(const model_gpu_t *m) {
    return (4 * m->n_params + m->n_acts + m->n_work) * sizeof(float) +
           (m->n_params + m->n_acts_bf16 + m->n_work_bf16) * sizeof(uint16_t) +
           ((m->n_params + GPU_NORM_CHUNK - 1) / GPU_NORM_CHUNK) * sizeof(double);
}
