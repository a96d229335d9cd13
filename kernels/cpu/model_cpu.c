/*
 * The whole model on the CPU (see model_cpu.h): the blocks of model.h run
 * layer by layer with the ops of model_ops.h, activations kept for backward.
 */
#include "model_cpu.h"

#include <math.h>
#include <string.h>

#include "error.h"
#include "memory.h"
#include "model_ops.h"

/* Hand out consecutive pieces of one buffer; with base == NULL only count. */
static float *carve(float *base, size_t *used, size_t n) {
    float *p = base ? base + *used : NULL;
    *used += n;
    return p;
}

static size_t layout_acts(model_cpu_t *m, float *base) {
    const size_t N = (size_t)m->B * m->T, D = (size_t)m->cfg.d_model, F = (size_t)m->cfg.d_ff;
    const size_t V = (size_t)m->cfg.vocab, H = (size_t)m->cfg.n_heads, T = (size_t)m->T;
    size_t used = 0;
    m->encoded = carve(base, &used, N * D);
    for (int l = 0; l < m->cfg.n_layers; l++) {
        layer_acts_t *a = &m->layers[l];
        a->ln1 = carve(base, &used, N * D);
        a->ln1_rstd = carve(base, &used, N);
        a->q = carve(base, &used, N * D);
        a->k = carve(base, &used, N * D);
        a->v = carve(base, &used, N * D);
        a->att = carve(base, &used, (size_t)m->B * H * T * T);
        a->atty = carve(base, &used, N * D);
        a->res1 = carve(base, &used, N * D);
        a->ln2 = carve(base, &used, N * D);
        a->ln2_rstd = carve(base, &used, N);
        a->gate = carve(base, &used, N * F);
        a->up = carve(base, &used, N * F);
        a->swi = carve(base, &used, N * F);
        a->res2 = carve(base, &used, N * D);
    }
    m->scratch = carve(base, &used, N * D);
    m->lnf = carve(base, &used, N * D);
    m->lnf_rstd = carve(base, &used, N);
    m->probs = carve(base, &used, N * V);
    m->losses = carve(base, &used, N);
    return used;
}

void model_cpu_init(model_cpu_t *m, const model_config_t *cfg, int B, int T, uint64_t seed) {
    char err[512];
    memset(m, 0, sizeof *m);
    CHECK(model_config_validate(cfg, err, sizeof err) == 0, "model_cpu_init: %s", err);
    CHECK(B >= 1 && T >= 1 && T <= cfg->max_seq,
          "model_cpu_init: sequence length %d must be in [1, %d] (--max-seq)", T, cfg->max_seq);
    m->cfg = *cfg;
    m->B = B;
    m->T = T;
    param_table_init(&m->table, cfg);
    m->n_params = m->table.total;
    m->params = host_malloc(m->n_params * sizeof(float));
    m->grads = host_calloc(m->n_params, sizeof(float));
    m->adam_m = host_calloc(m->n_params, sizeof(float));
    m->adam_v = host_calloc(m->n_params, sizeof(float));
    model_init_params(&m->table, m->params, seed);
    m->layers = host_calloc((size_t)cfg->n_layers, sizeof(layer_acts_t));
    m->n_acts = layout_acts(m, NULL);
    m->acts = host_calloc(m->n_acts, sizeof(float));
    layout_acts(m, m->acts);
    const size_t N = (size_t)B * T, D = (size_t)cfg->d_model, F = (size_t)cfg->d_ff;
    m->n_grad_acts = 6 * N * D + 3 * N * F; /* dres, dln, dq, dk, dv, datty; dgate, dup, dswi */
    m->grad_acts = host_calloc(m->n_grad_acts, sizeof(float));
    const int hd = cfg->d_model / cfg->n_heads;
    m->rope_cos = host_malloc((size_t)T * (hd / 2) * sizeof(float));
    m->rope_sin = host_malloc((size_t)T * (hd / 2) * sizeof(float));
    rope_tables(m->rope_cos, m->rope_sin, T, hd, cfg->rope_theta);
    m->inputs = host_calloc(N, sizeof(int));
    m->targets = host_calloc(N, sizeof(int));
}

void model_cpu_free(model_cpu_t *m) {
    host_free(m->params);
    host_free(m->grads);
    host_free(m->adam_m);
    host_free(m->adam_v);
    host_free(m->acts);
    host_free(m->grad_acts);
    host_free(m->layers);
    host_free(m->rope_cos);
    host_free(m->rope_sin);
    host_free(m->inputs);
    host_free(m->targets);
    param_table_free(&m->table);
    memset(m, 0, sizeof *m);
}

static float *P(model_cpu_t *m, float *base, int layer, model_layer_param_t which) {
    return base + m->table.slices[param_index(&m->table, layer, which)].offset;
}

double model_cpu_forward(model_cpu_t *m, const int *inputs, const int *targets) {
    const int B = m->B, T = m->T, N = B * T, D = m->cfg.d_model, F = m->cfg.d_ff;
    const int H = m->cfg.n_heads, V = m->cfg.vocab, L = m->cfg.n_layers;
    const float eps = m->cfg.norm_eps;
    for (int n = 0; n < N; n++) {
        CHECK(inputs[n] >= 0 && inputs[n] < V && targets[n] >= 0 && targets[n] < V,
              "model_cpu_forward: token %d at position %d is outside [0, %d)",
              inputs[n] < 0 || inputs[n] >= V ? inputs[n] : targets[n], n, V);
        m->inputs[n] = inputs[n];
        m->targets[n] = targets[n];
    }
    float *wte = m->params + m->table.slices[param_index_tok_emb(&m->table)].offset;
    encoder_forward(m->encoded, m->inputs, wte, N, D);
    const float *x = m->encoded;
    for (int l = 0; l < L; l++) {
        layer_acts_t *a = &m->layers[l];
        float *p = m->params;
        rmsnorm_forward(a->ln1, a->ln1_rstd, x, P(m, p, l, P_ATTN_NORM), N, D, eps);
        matmul_forward(a->q, a->ln1, P(m, p, l, P_WQ), N, D, D);
        matmul_forward(a->k, a->ln1, P(m, p, l, P_WK), N, D, D);
        matmul_forward(a->v, a->ln1, P(m, p, l, P_WV), N, D, D);
        rope_forward(a->q, a->q, m->rope_cos, m->rope_sin, N, T, D, H);
        rope_forward(a->k, a->k, m->rope_cos, m->rope_sin, N, T, D, H);
        attention_forward(a->atty, a->att, a->q, a->k, a->v, B, T, D, H);
        matmul_forward(m->scratch, a->atty, P(m, p, l, P_WO), N, D, D);
        residual_forward(a->res1, x, m->scratch, (size_t)N * D);
        rmsnorm_forward(a->ln2, a->ln2_rstd, a->res1, P(m, p, l, P_MLP_NORM), N, D, eps);
        matmul_forward(a->gate, a->ln2, P(m, p, l, P_W_GATE), N, D, F);
        matmul_forward(a->up, a->ln2, P(m, p, l, P_W_UP), N, D, F);
        swiglu_forward(a->swi, a->gate, a->up, (size_t)N * F);
        matmul_forward(m->scratch, a->swi, P(m, p, l, P_W_DOWN), N, F, D);
        residual_forward(a->res2, a->res1, m->scratch, (size_t)N * D);
        x = a->res2;
    }
    float *wf = m->params + m->table.slices[param_index_final_norm(&m->table)].offset;
    float *wlm = m->params + m->table.slices[param_index_lm_head(&m->table)].offset;
    rmsnorm_forward(m->lnf, m->lnf_rstd, x, wf, N, D, eps);
    matmul_forward(m->probs, m->lnf, wlm, N, D, V);
    crossentropy_forward(m->losses, m->probs, m->probs, m->targets, N, V);
    return loss_sum(m->losses, N) / N;
}

void model_cpu_zero_grad(model_cpu_t *m) { memset(m->grads, 0, m->n_params * sizeof(float)); }

void model_cpu_backward(model_cpu_t *m, float loss_scale) {
    const int B = m->B, T = m->T, N = B * T, D = m->cfg.d_model, F = m->cfg.d_ff;
    const int H = m->cfg.n_heads, V = m->cfg.vocab, L = m->cfg.n_layers;
    const size_t ND = (size_t)N * D, NF = (size_t)N * F;
    float *dres = m->grad_acts, *dln = dres + ND, *dq = dln + ND, *dk = dq + ND, *dv = dk + ND;
    float *datty = dv + ND, *dgate = datty + ND, *dup = dgate + NF, *dswi = dup + NF;
    float *p = m->params, *g = m->grads;
    const param_table_t *t = &m->table;

    /* Loss and output projection; the logits' gradient overwrites the probabilities. */
    crossentropy_backward(m->probs, m->probs, m->targets, loss_scale / (float)N, N, V);
    memset(dln, 0, ND * sizeof(float));
    matmul_backward(dln, g + t->slices[param_index_lm_head(t)].offset, m->probs, m->lnf,
                    p + t->slices[param_index_lm_head(t)].offset, N, D, V);
    memset(dres, 0, ND * sizeof(float));
    const float *xl = L > 0 ? m->layers[L - 1].res2 : m->encoded;
    rmsnorm_backward(dres, g + t->slices[param_index_final_norm(t)].offset, dln, xl,
                     p + t->slices[param_index_final_norm(t)].offset, m->lnf_rstd, N, D);

    /* dres holds the gradient of the residual stream; each block's residual
     * adds pass it through unchanged and its branches add to it. */
    for (int l = L - 1; l >= 0; l--) {
        layer_acts_t *a = &m->layers[l];
        const float *x = l > 0 ? m->layers[l - 1].res2 : m->encoded;
        /* MLP branch: res2 = res1 + swi * Wd */
        memset(dswi, 0, NF * sizeof(float));
        matmul_backward(dswi, P(m, g, l, P_W_DOWN), dres, a->swi, P(m, p, l, P_W_DOWN), N, F, D);
        swiglu_backward(dgate, dup, dswi, a->gate, a->up, NF);
        memset(dln, 0, ND * sizeof(float));
        matmul_backward(dln, P(m, g, l, P_W_GATE), dgate, a->ln2, P(m, p, l, P_W_GATE), N, D, F);
        matmul_backward(dln, P(m, g, l, P_W_UP), dup, a->ln2, P(m, p, l, P_W_UP), N, D, F);
        rmsnorm_backward(dres, P(m, g, l, P_MLP_NORM), dln, a->res1, P(m, p, l, P_MLP_NORM),
                         a->ln2_rstd, N, D);
        /* Attention branch: res1 = x + attention(...) * Wo */
        memset(datty, 0, ND * sizeof(float));
        matmul_backward(datty, P(m, g, l, P_WO), dres, a->atty, P(m, p, l, P_WO), N, D, D);
        memset(dq, 0, 3 * ND * sizeof(float)); /* dq, dk, dv are adjacent */
        attention_backward(dq, dk, dv, datty, a->att, a->q, a->k, a->v, B, T, D, H);
        rope_backward(dq, dq, m->rope_cos, m->rope_sin, N, T, D, H);
        rope_backward(dk, dk, m->rope_cos, m->rope_sin, N, T, D, H);
        memset(dln, 0, ND * sizeof(float));
        matmul_backward(dln, P(m, g, l, P_WQ), dq, a->ln1, P(m, p, l, P_WQ), N, D, D);
        matmul_backward(dln, P(m, g, l, P_WK), dk, a->ln1, P(m, p, l, P_WK), N, D, D);
        matmul_backward(dln, P(m, g, l, P_WV), dv, a->ln1, P(m, p, l, P_WV), N, D, D);
        rmsnorm_backward(dres, P(m, g, l, P_ATTN_NORM), dln, x, P(m, p, l, P_ATTN_NORM),
                         a->ln1_rstd, N, D);
    }
    encoder_backward(g + t->slices[param_index_tok_emb(t)].offset, dres, m->inputs, N, D);
}

double model_cpu_grad_norm(const model_cpu_t *m) {
    return sqrt(grad_norm_squared(m->grads, m->n_params));
}

void model_cpu_adamw(model_cpu_t *m, float lr, float beta1, float beta2, float eps,
                     float weight_decay, long t) {
    for (int i = 0; i < m->table.n; i++) {
        const param_slice_t *s = &m->table.slices[i];
        adamw_update(m->params + s->offset, m->grads + s->offset, m->adam_m + s->offset,
                     m->adam_v + s->offset, s->numel, lr, beta1, beta2, eps,
                     s->decay ? weight_decay : 0.0f, t);
    }
}

size_t model_cpu_bytes(const model_cpu_t *m) {
    return (4 * m->n_params + m->n_acts + m->n_grad_acts) * sizeof(float);
}
