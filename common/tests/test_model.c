/* The model's configuration checks, parameter table, initialisation, FLOP count and peak table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <malloc.h>
#include <math.h>
#include <string.h>

#include "memory.h"
#include "model.h"
#include "rng.h"

static void test_validate_messages(void **state) {
    (void)state;
    char err[512];
    model_config_t c = model_config_default();
    assert_int_equal(model_config_validate(&c, err, sizeof err), 0);
    c.n_heads = 5;
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    assert_string_equal(err, "--heads 5 does not divide --d-model 64; pick heads in {1,2,4,8,16,32}");
    c.n_heads = 64; /* head size 1: RoPE needs pairs */
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "odd head size 1"));
    c = model_config_default();
    c.d_model = 63;
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "--d-model 63 is odd"));
    c = model_config_default();
    c.d_ff = 0;
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "--ffn 0"));
    c = model_config_default();
    c.n_layers = 0;
    assert_int_equal(model_config_validate(&c, NULL, 0), -1);
    c = model_config_default();
    c.rope_theta = 1.0f; /* theta^(-2i/hd) = 1: every pair rotates at the same speed */
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "RoPE theta 1 must be greater than 1"));
    c = model_config_default();
    c.norm_eps = 0.0f; /* an all-zero row would divide by zero */
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "RMSNorm epsilon 0 must be positive"));
    c.norm_eps = NAN;
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    c = model_config_default();
    c.rope_theta = NAN;
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "RoPE theta nan must be greater than 1"));
    c = model_config_default();
    c.vocab = 255;
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    assert_string_equal(err, "vocabulary size 255 is not 256; the model is byte-level");
    /* No heads, or a negative count: refused with the choices, not a division by zero. */
    c = model_config_default();
    c.n_heads = 0;
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    assert_string_equal(err, "--heads 0 does not divide --d-model 64; pick heads in {1,2,4,8,16,32}");
    c.n_heads = -4;
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "--heads -4 does not divide --d-model 64"));
    c = model_config_default();
    c.max_seq = 0;
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    assert_string_equal(err, "--max-seq 0 is out of range; pick a value in [1, 65536]");
    c = model_config_default();
    c.d_model = 0;
    assert_int_equal(model_config_validate(&c, err, sizeof err), -1);
    assert_string_equal(err, "--d-model 0 is out of range; pick an even value in [2, 16384]");
}

/* The ranges the messages give are inclusive: their ends are accepted, one
 * step past is refused. */
static void test_validate_range_ends(void **state) {
    (void)state;
    char err[512];
    model_config_t c = model_config_default();
    c.d_model = 16384;
    c.n_layers = 256;
    c.d_ff = 65536;
    c.max_seq = 65536;
    assert_int_equal(model_config_validate(&c, err, sizeof err), 0);
    model_config_t past[4] = {c, c, c, c};
    past[0].d_model = 16392; /* the next width that 4 heads still split into even heads */
    past[1].n_layers = 257;
    past[2].d_ff = 65537;
    past[3].max_seq = 65537;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(model_config_validate(&past[i], err, sizeof err), -1);
        assert_non_null(strstr(err, "is out of range"));
    }
    /* The low ends, all at once: the smallest model there is. */
    c = model_config_default();
    c.d_model = 2;
    c.n_heads = 1;
    c.n_layers = 1;
    c.d_ff = 1;
    c.max_seq = 1;
    assert_int_equal(model_config_validate(&c, err, sizeof err), 0);
}

/* The defaults every run starts from (model.h): Llama's RoPE base and RMSNorm epsilon. */
static void test_defaults(void **state) {
    (void)state;
    model_config_t c = model_config_default();
    assert_int_equal(c.vocab, MODEL_VOCAB);
    assert_int_equal(c.d_model, 64);
    assert_int_equal(c.n_layers, 2);
    assert_int_equal(c.n_heads, 4);
    assert_int_equal(c.d_ff, 192);
    assert_int_equal(c.max_seq, 256);
    assert_true(c.rope_theta == 10000.0f);
    assert_true(c.norm_eps == 1e-5f);
}

static void test_param_table(void **state) {
    (void)state;
    model_config_t c = model_config_default();
    c.d_model = 16;
    c.n_layers = 3;
    c.n_heads = 2;
    c.d_ff = 40;
    param_table_t t;
    param_table_init(&t, &c);
    const size_t D = 16, F = 40, V = 256, L = 3;
    assert_int_equal(t.n, 3 + 9 * 3);
    assert_int_equal(t.total, V * D + L * (2 * D + 4 * D * D + 3 * D * F) + D + D * V);
    size_t off = 0;
    for (int i = 0; i < t.n; i++) { /* contiguous, in order, no gaps */
        assert_int_equal(t.slices[i].offset, off);
        assert_int_equal(t.slices[i].numel, (size_t)t.slices[i].rows * t.slices[i].cols);
        off += t.slices[i].numel;
    }
    const param_slice_t *wq = param_find(&t, "layers.1.wq");
    assert_non_null(wq);
    assert_ptr_equal(wq, &t.slices[param_index(&t, 1, P_WQ)]);
    assert_int_equal(wq->rows, 16);
    assert_int_equal(wq->layer, 1);
    const param_slice_t *down = &t.slices[param_index(&t, 2, P_W_DOWN)];
    assert_string_equal(down->name, "layers.2.w_down");
    assert_int_equal(down->rows, 40);
    assert_int_equal(down->cols, 16);
    assert_string_equal(t.slices[param_index_tok_emb(&t)].name, "tok_emb");
    assert_string_equal(t.slices[param_index_final_norm(&t)].name, "final_norm");
    assert_string_equal(t.slices[param_index_lm_head(&t)].name, "lm_head");
    assert_int_equal(t.slices[param_index(&t, 0, P_ATTN_NORM)].decay, 0);
    assert_int_equal(t.slices[param_index(&t, 0, P_WK)].decay, 1);
    /* Weight decay: every matrix, embedding and output included; no norm gain. */
    for (int i = 0; i < t.n; i++) assert_int_equal(t.slices[i].decay, t.slices[i].cols > 1);
    assert_int_equal(t.slices[param_index_final_norm(&t)].decay, 0);
    assert_int_equal(t.slices[param_index_tok_emb(&t)].decay, 1);
    assert_int_equal(t.slices[param_index_lm_head(&t)].decay, 1);
    assert_null(param_find(&t, "layers.3.wq"));
    /* The embedding is [V, D] (a row per byte), the output projection [D, V];
     * the slices outside the blocks have no layer. */
    const param_slice_t *emb = &t.slices[param_index_tok_emb(&t)], *head = &t.slices[param_index_lm_head(&t)];
    assert_true(emb->rows == 256 && emb->cols == 16);
    assert_true(head->rows == 16 && head->cols == 256);
    assert_true(emb->layer == -1 && head->layer == -1 && t.slices[param_index_final_norm(&t)].layer == -1);
    for (int l = 0; l < 3; l++)
        for (int p = 0; p < P_LAYER_COUNT; p++) assert_int_equal(t.slices[param_index(&t, l, p)].layer, l);
    assert_int_equal(t.cfg.d_model, 16); /* the shape it was built for */
    assert_int_equal(t.cfg.d_ff, 40);
    assert_true(malloc_usable_size(t.slices) >= (size_t)t.n * sizeof *t.slices);
    param_table_free(&t);
    assert_null(t.slices);
    assert_int_equal(t.n, 0);
    assert_int_equal(t.total, 0);
}

static double slice_std(const float *p, size_t n) {
    double s = 0, ss = 0;
    for (size_t i = 0; i < n; i++) {
        s += p[i];
        ss += (double)p[i] * p[i];
    }
    return sqrt(ss / n - (s / n) * (s / n));
}

static void test_init(void **state) {
    (void)state;
    model_config_t c = model_config_default(); /* 2 layers */
    param_table_t t;
    param_table_init(&t, &c);
    float *a = host_malloc(t.total * sizeof(float)), *b = host_malloc(t.total * sizeof(float));
    model_init_params(&t, a, 42);
    model_init_params(&t, b, 42);
    assert_memory_equal(a, b, t.total * sizeof(float));
    model_init_params(&t, b, 43);
    assert_memory_not_equal(a, b, t.total * sizeof(float));
    const param_slice_t *n = &t.slices[param_index(&t, 1, P_MLP_NORM)];
    for (size_t i = 0; i < n->numel; i++) assert_true(a[n->offset + i] == 1.0f);
    const param_slice_t *q = &t.slices[param_index(&t, 0, P_WQ)], *o = &t.slices[param_index(&t, 0, P_WO)];
    assert_true(fabs(slice_std(a + q->offset, q->numel) - 0.02) < 0.002);
    assert_true(fabs(slice_std(a + o->offset, o->numel) - 0.02 / 2.0) < 0.001); /* 1/sqrt(2L), L = 2 */
    /* w_down writes into the residual stream too: the same scale. */
    const param_slice_t *dn = &t.slices[param_index(&t, 1, P_W_DOWN)];
    assert_true(fabs(slice_std(a + dn->offset, dn->numel) - 0.02 / 2.0) < 0.001);
    /* Each slice has its own stream: wq and wk do not start equal. */
    const param_slice_t *k = &t.slices[param_index(&t, 0, P_WK)];
    assert_memory_not_equal(a + q->offset, a + k->offset, q->numel * sizeof(float));
    /* Exactly as model.h says: slice i is N(0, std^2) from the stream
     * rng_split(rng_split(seed, MODEL_INIT_BRANCH), i), std 0.02, or 0.02 /
     * sqrt(2 L) for wo and w_down; a gain (final_norm too) is all ones. */
    float *want = host_malloc(t.total * sizeof(float));
    rng_t base, root;
    rng_init(&base, 42);
    root = rng_split(&base, MODEL_INIT_BRANCH);
    /* Not the streams the Markov source of seed 42 gives its states
     * (rng_split(seed, state)): the embedding (slice 0) used to start
     * with the very bits that chose state 0's successors. */
    rng_t markov0 = rng_split(&base, 0), init0 = rng_split(&root, 0);
    assert_true(markov0.stream != init0.stream);
    float from_markov0[64];
    rng_fill_normal(&markov0, from_markov0, 64, 0.0f, 0.02f);
    assert_memory_not_equal(a + t.slices[0].offset, from_markov0, sizeof from_markov0);
    for (int i = 0; i < t.n; i++) {
        const param_slice_t *sl = &t.slices[i];
        if (sl->cols == 1) {
            for (size_t j = 0; j < sl->numel; j++) want[sl->offset + j] = 1.0f;
            continue;
        }
        const int resid = strstr(sl->name, ".wo") || strstr(sl->name, ".w_down");
        rng_t r = rng_split(&root, (uint64_t)i);
        rng_fill_normal(&r, want + sl->offset, sl->numel, 0.0f, resid ? 0.02f * (1.0f / sqrtf(4.0f)) : 0.02f);
    }
    for (int i = 0; i < t.n; i++)
        if (memcmp(a + t.slices[i].offset, want + t.slices[i].offset, t.slices[i].numel * sizeof(float)))
            fail_msg("%s is not what its stream gives", t.slices[i].name);
    host_free(want);
    host_free(a);
    host_free(b);
    param_table_free(&t);
}

static void test_flops_and_peak(void **state) {
    (void)state;
    model_config_t c = model_config_default(); /* D 64, L 2, F 192, V 256 */
    size_t mm = 2 * (4 * 64 * 64 + 3 * 64 * 192) + 64 * 256;
    assert_int_equal(model_matmul_params(&c), mm);
    assert_true(model_flops_per_token(&c, 64) == 6.0 * mm + 12.0 * 2 * 64 * 64);
    /* At T = 100 (not d_model) the attention term is 12 L D T: T and D cannot be swapped. */
    assert_true(model_flops_per_token(&c, 100) == 6.0 * mm + 12.0 * 2 * 64 * 100);
    assert_true(model_peak_tflops("NVIDIA H100 80GB HBM3", "bf16") == 989.0);
    assert_true(model_peak_tflops("NVIDIA H200", "fp32") == 67.0);
    assert_true(model_peak_tflops("NVIDIA H100 PCIe", "bf16") == 756.0); /* not the SXM figure */
    assert_true(model_peak_tflops("NVIDIA H100 NVL", "bf16") == 835.0);
    assert_true(model_peak_tflops("NVIDIA A100-SXM4-80GB", "tf32") == 156.0);
    assert_true(model_peak_tflops("AMD EPYC", "fp32") == 0.0);
    assert_true(model_peak_tflops("NVIDIA H100", "int8") == 0.0);
    assert_true(model_peak_tflops("NVIDIA H100 80GB HBM3", "fp16") == 989.0); /* same tensor-core rate as bf16 */
}

/* Names are matched by whole words, as cudaGetDeviceProperties spells them:
 * "A100" is in "NVIDIA A100-SXM4-80GB" but not in "NVIDIA RTX A1000", and
 * "A10" is not in "A100" or "A10G". A device not in the table is 0 (unknown),
 * never a neighbour's figure. */
static void test_peak_matches_whole_names(void **state) {
    (void)state;
    static const struct { const char *name; double bf16; } cases[] = {
        {"NVIDIA H100 80GB HBM3", 989.0},  {"NVIDIA H100 PCIe", 756.0},     {"NVIDIA H100 NVL", 835.0},
        {"NVIDIA H200", 989.0},            {"NVIDIA H200 NVL", 835.0},      {"NVIDIA GH200 480GB", 989.0},
        {"NVIDIA A100-SXM4-80GB", 312.0},  {"NVIDIA A100-PCIE-40GB", 312.0}, {"NVIDIA A100 80GB PCIe", 312.0},
        {"nvidia a100-sxm4-40gb", 312.0},  {"NVIDIA L40S", 362.0},          {"NVIDIA GeForce RTX 4090", 165.2},
        {"NVIDIA A10", 125.0},             {"NVIDIA RTX A1000", 0.0},       {"NVIDIA RTX A1000 6GB Laptop GPU", 0.0},
        {"NVIDIA A10G", 0.0},              {"NVIDIA L40", 0.0},             {"NVIDIA GeForce RTX 40900", 0.0},
        {"NVIDIA H1000", 0.0},             {"", 0.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got = model_peak_tflops(cases[i].name, "bf16");
        if (got != cases[i].bf16) fail_msg("'%s': bf16 peak %g, expected %g", cases[i].name, got, cases[i].bf16);
    }
    assert_true(model_peak_tflops("NVIDIA A100-SXM4-80GB", "fp32") == 19.5);
    assert_true(model_peak_tflops("NVIDIA H100 PCIe", "tf32") == 378.0);
    /* Any run of spaces or punctuation between words; the name as words
     * from its start ("GA100" is not an A100); a long name read whole. */
    assert_true(model_peak_tflops("NVIDIA H100  PCIe", "bf16") == 756.0);
    assert_true(model_peak_tflops("NVIDIA H100 -- PCIe", "bf16") == 756.0);
    assert_true(model_peak_tflops("NVIDIA GA100", "bf16") == 0.0);
    assert_true(model_peak_tflops("NVIDIA Engineering Sample Board Rev 2 (H100 PCIe)", "bf16") == 756.0);
}

/* Every figure of the table, in each precision, as model.h gives them. */
static void test_peak_table(void **state) {
    (void)state;
    static const struct { const char *name; double bf16, tf32, fp32; } rows[] = {
        {"NVIDIA H100 PCIe", 756.0, 378.0, 51.0}, {"NVIDIA H100 NVL", 835.0, 418.0, 60.0},
        {"NVIDIA H200 NVL", 835.0, 418.0, 60.0},  {"NVIDIA H200", 989.0, 495.0, 67.0},
        {"NVIDIA GH200 480GB", 989.0, 495.0, 67.0}, {"NVIDIA H100 80GB HBM3", 989.0, 495.0, 67.0},
        {"NVIDIA A100-SXM4-80GB", 312.0, 156.0, 19.5}, {"NVIDIA L40S", 362.0, 183.0, 91.6},
        {"NVIDIA GeForce RTX 4090", 165.2, 82.6, 82.6}, {"NVIDIA A10", 125.0, 62.5, 31.2},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const double got[4] = {model_peak_tflops(rows[i].name, "bf16"), model_peak_tflops(rows[i].name, "fp16"),
                               model_peak_tflops(rows[i].name, "tf32"), model_peak_tflops(rows[i].name, "fp32")};
        if (got[0] != rows[i].bf16 || got[1] != rows[i].bf16 || got[2] != rows[i].tf32 || got[3] != rows[i].fp32)
            fail_msg("'%s': %g %g %g %g, expected %g %g %g %g", rows[i].name, got[0], got[1], got[2], got[3],
                     rows[i].bf16, rows[i].bf16, rows[i].tf32, rows[i].fp32);
        assert_true(model_peak_tflops(rows[i].name, "fp8") == 0.0); /* not in the table: unknown */
    }
    assert_true(model_peak_tflops(NULL, "bf16") == 0.0);
    assert_true(model_peak_tflops("NVIDIA H100", NULL) == 0.0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_messages),
        cmocka_unit_test(test_validate_range_ends),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_param_table),
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_flops_and_peak),
        cmocka_unit_test(test_peak_matches_whole_names),
        cmocka_unit_test(test_peak_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
