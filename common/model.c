/* The model's configuration, parameter table, initialisation and FLOP count (see model.h). */
#include "model.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "memory.h"
#include "rng.h"

static const char *const LAYER_NAMES[P_LAYER_COUNT] = {
    "attn_norm", "wq", "wk", "wv", "wo", "mlp_norm", "w_gate", "w_up", "w_down"};

model_config_t model_config_default(void) {
    model_config_t c;
    c.vocab = MODEL_VOCAB;
    c.d_model = 64;
    c.n_layers = 2;
    c.n_heads = 4;
    c.d_ff = 192;
    c.max_seq = 256;
    c.rope_theta = 10000.0f;
    c.norm_eps = 1e-5f;
    return c;
}

/* "{1,2,4,...}": the values that would be accepted, listed in the message. */
static void list_head_choices(const model_config_t *c, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (int h = 1; h <= c->d_model && used + 16 < len; h++) {
        if (c->d_model % h || (c->d_model / h) % 2) continue;
        used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? "," : "", h);
    }
}

int model_config_validate(const model_config_t *c, char *err, size_t errlen) {
    char choices[256];
    if (c->vocab != MODEL_VOCAB)
        return course_error(err, errlen, "vocabulary size %d is not %d; the model is byte-level", c->vocab,
                    MODEL_VOCAB);
    if (c->d_model < 2 || c->d_model > 16384)
        return course_error(err, errlen, "--d-model %d is out of range; pick an even value in [2, 16384]",
                    c->d_model);
    if (c->d_model % 2)
        return course_error(err, errlen, "--d-model %d is odd; RoPE rotates pairs of dimensions, pick an even value",
                    c->d_model);
    if (c->n_layers < 1 || c->n_layers > 256)
        return course_error(err, errlen, "--layers %d is out of range; pick a value in [1, 256]", c->n_layers);
    if (c->n_heads < 1 || c->d_model % c->n_heads) {
        list_head_choices(c, choices, sizeof choices);
        return course_error(err, errlen, "--heads %d does not divide --d-model %d; pick heads in {%s}",
                    c->n_heads, c->d_model, choices);
    }
    if ((c->d_model / c->n_heads) % 2) {
        list_head_choices(c, choices, sizeof choices);
        return course_error(err, errlen,
                    "--heads %d gives an odd head size %d (--d-model %d / --heads %d); RoPE needs "
                    "an even head size; pick heads in {%s}",
                    c->n_heads, c->d_model / c->n_heads, c->d_model, c->n_heads, choices);
    }
    if (c->d_ff < 1 || c->d_ff > 65536)
        return course_error(err, errlen, "--ffn %d is out of range; pick a value in [1, 65536] (Llama uses about 8/3 * d_model)",
                    c->d_ff);
    if (c->max_seq < 1 || c->max_seq > 65536)
        return course_error(err, errlen, "--max-seq %d is out of range; pick a value in [1, 65536]", c->max_seq);
    if (!(c->rope_theta > 1.0f))
        return course_error(err, errlen, "RoPE theta %g must be greater than 1 (Llama uses 10000)",
                    (double)c->rope_theta);
    if (!(c->norm_eps > 0.0f))
        return course_error(err, errlen, "RMSNorm epsilon %g must be positive", (double)c->norm_eps);
    return 0;
}

static void add_slice(param_table_t *t, const char *name, int rows, int cols, int layer, int decay) {
    param_slice_t *s = &t->slices[t->n++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->rows = rows;
    s->cols = cols;
    s->numel = (size_t)rows * (size_t)cols;
    s->offset = t->total;
    s->layer = layer;
    s->decay = decay;
    t->total += s->numel;
}

void param_table_init(param_table_t *t, const model_config_t *c) {
    char err[512];
    CHECK(model_config_validate(c, err, sizeof err) == 0, "param_table_init: %s", err);
    const int D = c->d_model, F = c->d_ff, V = c->vocab;
    t->cfg = *c;
    t->n = 0;
    t->total = 0;
    t->slices = host_calloc((size_t)(3 + P_LAYER_COUNT * c->n_layers), sizeof(param_slice_t));
    add_slice(t, "tok_emb", V, D, -1, 1);
    for (int l = 0; l < c->n_layers; l++) {
        const int rows[P_LAYER_COUNT] = {D, D, D, D, D, D, D, D, F};
        const int cols[P_LAYER_COUNT] = {1, D, D, D, D, 1, F, F, D};
        for (int p = 0; p < P_LAYER_COUNT; p++) {
            char name[32];
            snprintf(name, sizeof name, "layers.%d.%s", l, LAYER_NAMES[p]);
            add_slice(t, name, rows[p], cols[p], l, cols[p] > 1);
        }
    }
    add_slice(t, "final_norm", D, 1, -1, 0);
    add_slice(t, "lm_head", D, V, -1, 1);
}

void param_table_free(param_table_t *t) {
    host_free(t->slices);
    t->slices = NULL;
    t->n = 0;
    t->total = 0;
}

int param_index(const param_table_t *t, int layer, model_layer_param_t which) {
    (void)t;
    return 1 + layer * P_LAYER_COUNT + (int)which;
}

int param_index_tok_emb(const param_table_t *t) {
    (void)t;
    return 0;
}

int param_index_final_norm(const param_table_t *t) { return t->n - 2; }

int param_index_lm_head(const param_table_t *t) { return t->n - 1; }

const param_slice_t *param_find(const param_table_t *t, const char *name) {
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->slices[i].name, name) == 0) return &t->slices[i];
    return NULL;
}

void model_init_params(const param_table_t *t, float *params, uint64_t seed) {
    rng_t base;
    rng_init(&base, seed);
    rng_t root = rng_split(&base, MODEL_INIT_BRANCH);
    const float resid_scale = 1.0f / sqrtf(2.0f * (float)t->cfg.n_layers);
    for (int i = 0; i < t->n; i++) {
        const param_slice_t *s = &t->slices[i];
        float *p = params + s->offset;
        if (s->cols == 1) { /* norm gains start at the identity */
            for (size_t j = 0; j < s->numel; j++) p[j] = 1.0f;
            continue;
        }
        rng_t r = rng_split(&root, (uint64_t)i);
        float std = 0.02f;
        size_t len = strlen(s->name);
        if ((len >= 3 && strcmp(s->name + len - 3, ".wo") == 0) ||
            (len >= 7 && strcmp(s->name + len - 7, ".w_down") == 0))
            std *= resid_scale;
        rng_fill_normal(&r, p, s->numel, 0.0f, std);
    }
}

size_t model_matmul_params(const model_config_t *c) {
    size_t D = (size_t)c->d_model, F = (size_t)c->d_ff, V = (size_t)c->vocab;
    return (size_t)c->n_layers * (4 * D * D + 3 * D * F) + D * V;
}

double model_flops_per_token(const model_config_t *c, int T) {
    return 6.0 * (double)model_matmul_params(c) +
           12.0 * (double)c->n_layers * (double)c->d_model * (double)T;
}

/* A name as its words: lower case, every run of other characters one space, one
 * space at each end, so "NVIDIA A100-SXM4-80GB" becomes " nvidia a100 sxm4 80gb ". */
static void words_of(const char *name, char *out, size_t len) {
    size_t n = 0;
    out[n++] = ' ';
    for (; *name && n + 2 < len; name++) {
        unsigned char c = (unsigned char)*name;
        if (isalnum(c)) out[n++] = (char)tolower(c);
        else if (out[n - 1] != ' ') out[n++] = ' ';
    }
    if (out[n - 1] != ' ') out[n++] = ' ';
    out[n] = '\0';
}

/* Whether the table's name appears in the device's name as whole words: a
 * substring test would give "NVIDIA RTX A1000" the A100's peak. */
static int has_words(const char *device, const char *table_name) {
    char d[320], t[64];
    words_of(device, d, sizeof d);
    words_of(table_name, t, sizeof t);
    return strstr(d, t) != NULL;
}

double model_peak_tflops(const char *device_name, const char *precision) {
    /* Dense (no sparsity) datasheet figures, TFLOP/s: bf16/fp16, tf32, fp32. The first
     * match wins, so the PCIe and NVL parts (lower clocks and power) come before the SXM default.
     * GH200's GPU is an H100/H200-class SXM part with the same dense figures. */
    static const struct { const char *name; double bf16, tf32, fp32; } table[] = {
        {"H100 PCIe", 756.0, 378.0, 51.0}, {"H100 NVL", 835.0, 418.0, 60.0},
        {"H200 NVL", 835.0, 418.0, 60.0},  {"H200", 989.0, 495.0, 67.0},  {"GH200", 989.0, 495.0, 67.0},
        {"H100", 989.0, 495.0, 67.0},
        {"A100", 312.0, 156.0, 19.5},  {"L40S", 362.0, 183.0, 91.6},
        {"4090", 165.2, 82.6, 82.6},   {"A10", 125.0, 62.5, 31.2},
    };
    if (!device_name || !precision) return 0.0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (!has_words(device_name, table[i].name)) continue;
        if (!strcmp(precision, "bf16") || !strcmp(precision, "fp16")) return table[i].bf16;
        if (!strcmp(precision, "tf32")) return table[i].tf32;
        if (!strcmp(precision, "fp32")) return table[i].fp32;
        return 0.0;
    }
    return 0.0;
}
