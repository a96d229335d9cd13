/* Checkpoint files: a round trip is exact; corruption, truncation, a foreign
 * file and every kind of mismatch are refused with a message that names it,
 * and a refused load leaves the caller's arrays untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "memory.h"

#define NP 1000
static char path[256];

static ckpt_meta_t meta(void) {
    ckpt_meta_t m;
    memset(&m, 0, sizeof m);
    m.cfg = model_config_default();
    m.n_params = NP;
    m.step = 123;
    m.seed = 7;
    snprintf(m.data_desc, sizeof m.data_desc, "markov seed=1 states=256 branch=2");
    m.batch = 16;
    m.seq_len = 64;
    m.accum = 1;
    m.total_steps = 500;
    m.warmup = 20;
    m.lr = 1e-2;
    m.min_lr = 1e-3;
    m.beta1 = 0.9;
    m.beta2 = 0.95;
    m.adam_eps = 1e-8;
    m.clip = 1.0;
    return m;
}

static float a[NP], b[NP], c[NP], x[NP], y[NP], z[NP];

static int setup(void **state) {
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/test_ckpt_XXXXXX", base && *base ? base : P_tmpdir);
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    close(fd);
    for (int i = 0; i < NP; i++) {
        a[i] = (float)i * 0.5f;
        b[i] = -(float)i;
        c[i] = 1.0f / (float)(i + 1);
    }
    ckpt_meta_t m = meta();
    return checkpoint_save(path, &m, a, b, c, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    remove(path);
    return 0;
}

static void test_round_trip(void **state) {
    (void)state;
    ckpt_meta_t want = meta(), got;
    want.step = 0; /* the step is what we learn from the file */
    char err[1024];
    assert_int_equal(checkpoint_load(path, &want, &got, x, y, z, err, sizeof err), 0);
    assert_memory_equal(a, x, sizeof a);
    assert_memory_equal(b, y, sizeof b);
    assert_memory_equal(c, z, sizeof c);
    assert_int_equal(got.step, 123);
    assert_string_equal(got.data_desc, want.data_desc);
    assert_true(got.lr == want.lr && got.cfg.d_model == want.cfg.d_model);
}

static void test_mismatch_names_the_field(void **state) {
    (void)state;
    ckpt_meta_t want = meta(), got;
    char err[2048];
    want.cfg.d_model = 128;
    want.lr = 3e-3;
    snprintf(want.data_desc, sizeof want.data_desc, "text bytes=10");
    memset(x, 0, sizeof x);
    assert_int_equal(checkpoint_load(path, &want, &got, x, y, z, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, "--d-model: checkpoint 64, this run 128"));
    assert_non_null(strstr(err, "--lr: checkpoint 0.01, this run 0.003"));
    assert_non_null(strstr(err, "data: checkpoint 'markov seed=1 states=256 branch=2', this run 'text bytes=10'"));
    for (int i = 0; i < NP; i++) assert_true(x[i] == 0.0f); /* untouched */
}

/* Copy the good file, damage it with f, and check the load error contains `want`. */
static void damaged(void (*f)(FILE *), const char *want) {
    char bad[300];
    snprintf(bad, sizeof bad, "%s.bad", path);
    FILE *in = fopen(path, "rb"), *out = fopen(bad, "wb");
    assert_non_null(in);
    assert_non_null(out);
    for (int ch; (ch = fgetc(in)) != EOF;) fputc(ch, out);
    fclose(in);
    fclose(out);
    out = fopen(bad, "r+b");
    f(out);
    fclose(out);
    ckpt_meta_t m = meta(), got;
    char err[1024];
    assert_int_equal(checkpoint_load(bad, &m, &got, x, y, z, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, want));
    remove(bad);
}

static void flip_param_byte(FILE *f) {
    fseek(f, 600, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, 600, SEEK_SET);
    fputc(ch ^ 1, f);
}
static void truncate_file(FILE *f) { assert_int_equal(ftruncate(fileno(f), 5000), 0); }
static void bad_magic(FILE *f) { fputc('X', f); }
static void bad_version(FILE *f) {
    fseek(f, 8, SEEK_SET);
    fputc(99, f);
}

static void test_damage_is_refused(void **state) {
    (void)state;
    damaged(flip_param_byte, "checksum mismatch");
    damaged(truncate_file, "truncated or corrupt");
    damaged(bad_magic, "bad magic");
    damaged(bad_version, "format version 99");
    ckpt_meta_t m = meta(), got;
    char err[512];
    assert_int_equal(checkpoint_load("no/such/dir/x.ckpt", &m, &got, x, y, z, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
    assert_int_equal(checkpoint_read_meta(path, &got, err, sizeof err), 0);
    assert_int_equal(got.n_params, NP);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_mismatch_names_the_field),
        cmocka_unit_test(test_damage_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
