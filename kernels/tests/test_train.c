/*
 * The training program's loop, run in-process: a CI-sized run on the Markov
 * source reaches its entropy rate; save at step k plus resume equals an
 * uninterrupted run bit for bit; the same seed gives the same run; bad
 * configurations, mismatched checkpoints (the way of computing too) and
 * output paths that name an input are refused; a resume on another device or
 * math library, or from a checkpoint that does not record its library, goes
 * on with a warning; the held-out set does not depend on --accum. The train
 * program itself (train.c, built in below) is run with every flag.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "cpu/model_cpu.h"
#include "cpu/model_ops.h"
#include "tests/child.h"
#include "tests/ckpt_v2.h"
#include "memory.h"
#include "train/trainer.h"

/* The train program's main (kernels/train/train.c, only the flags), built in
 * under another name so that a test can run it with a command line. */
#define main train_program_main
#include "train/train.c"
#undef main

static char tmpdir[256];

static int setup(void **state) {
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/test_train_XXXXXX", base && *base ? base : P_tmpdir);
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    const char *names[] = {"a.ckpt", "b.ckpt", "c.ckpt", "d.ckpt", "dir.csv", "loss.csv", "loss.json", "nan.ckpt",
                           "nan.json", "text.txt", "v2.ckpt", "x.ckpt"};
    char p[512];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
        remove(p);
    }
    return rmdir(tmpdir);
}

static char *path(const char *name) {
    static char bufs[4][512];
    static int next = 0;
    char *b = bufs[next++ % 4];
    snprintf(b, 512, "%s/%s", tmpdir, name);
    return b;
}

static long file_lines(const char *p) {
    FILE *f = fopen(p, "r");
    if (!f) return -1;
    long n = 0;
    for (int c; (c = fgetc(f)) != EOF;) n += c == '\n';
    fclose(f);
    return n;
}

static int files_equal(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) same = 0;
        if (ca == EOF || cb == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* The CI-sized run (the train program's defaults): d_model 64, 2 layers,
 * 4 heads, seq 64, batch 16, 150 steps on a 256-state, 2-successor Markov
 * source (entropy rate about 0.52 nats). */
static void test_ci_run_reaches_entropy_rate(void **state) {
    (void)state;
    train_opts_t o = train_opts_default();
    o.threads = 1; /* results do not depend on it (test_model_ops); 1 is fastest on a shared CI box */
    o.peak_tflops = 1.0; /* skip the sgemm measurement: MFU is not under test */
    o.log_path = path("loss.csv");
    train_result_t r;
    assert_int_equal(train_run(&o, &r), 0);
    double gap = r.eval_loss - r.entropy_rate;
    print_message("  eval loss %.4f, entropy rate %.4f, gap %+.4f nats; %.1fk tok/s\n", r.eval_loss,
                  r.entropy_rate, gap, r.tokens_per_s / 1e3);
    /* The target: within 0.05 nats of the optimum. */
    assert_true(gap < 0.05);
    /* And not below it by more than the eval noise (8k tokens, std error ~0.01): a
     * loss under the entropy rate would mean the bound or the loss is wrong. */
    assert_true(gap > -0.03);
    assert_int_equal(file_lines(o.log_path), 1 + o.steps); /* header + one row per step */
}

static train_opts_t small_opts(void) {
    train_opts_t o = train_opts_default();
    o.cfg.d_model = 32;
    o.cfg.n_heads = 2;
    o.cfg.d_ff = 64;
    o.cfg.max_seq = 32;
    o.seq = 32;
    o.batch = 8;
    o.accum = 2;
    o.steps = 20;
    o.warmup = 5;
    o.eval_every = 0;
    o.eval_batches = 2;
    o.print_every = 0;
    o.threads = 1;
    o.peak_tflops = 1.0;
    o.markov_states = 64;
    return o;
}

static void test_resume_is_bit_identical(void **state) {
    (void)state;
    train_opts_t o = small_opts();
    train_result_t full, part, resumed, again;
    o.save_path = path("a.ckpt");
    assert_int_equal(train_run(&o, &full), 0);
    /* Interrupted after step 10 ... */
    o.save_path = path("b.ckpt");
    o.stop_at = 10;
    assert_int_equal(train_run(&o, &part), 0);
    assert_true(part.params_hash != full.params_hash);
    /* ... and resumed to the end. */
    o.stop_at = 0;
    o.resume_path = path("b.ckpt");
    o.save_path = path("c.ckpt");
    assert_int_equal(train_run(&o, &resumed), 0);
    print_message("  params hash: uninterrupted %016llx, resumed %016llx\n",
                  (unsigned long long)full.params_hash, (unsigned long long)resumed.params_hash);
    assert_true(resumed.params_hash == full.params_hash);
    assert_true(resumed.eval_loss == full.eval_loss);
    /* Parameters, both AdamW moments, step and metadata: the same bytes. */
    assert_true(files_equal(path("a.ckpt"), path("c.ckpt")));
    /* Same seed, same run; another seed, another run. */
    o.resume_path = NULL;
    o.save_path = NULL;
    assert_int_equal(train_run(&o, &again), 0);
    assert_true(again.params_hash == full.params_hash);
    o.seed = 2;
    assert_int_equal(train_run(&o, &again), 0);
    assert_true(again.params_hash != full.params_hash);
}

static void test_refuses_mismatched_or_corrupt_checkpoint(void **state) {
    (void)state;
    train_opts_t o = small_opts();
    o.steps = 4;
    o.warmup = 2;
    o.save_path = path("d.ckpt");
    assert_int_equal(train_run(&o, NULL), 0);
    o.save_path = NULL;
    o.resume_path = path("d.ckpt");
    o.cfg.d_model = 64; /* a different model */
    assert_int_equal(train_run(&o, NULL), -1);
    o = small_opts();
    o.steps = 4;
    o.warmup = 2;
    o.resume_path = path("d.ckpt");
    o.lr = 2e-2; /* a different schedule would not continue the same run */
    assert_int_equal(train_run(&o, NULL), -1);
    /* Flip one byte in the middle of the parameters. */
    FILE *f = fopen(path("d.ckpt"), "r+b");
    assert_non_null(f);
    fseek(f, 2000, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 2000, SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
    o.lr = small_opts().lr;
    assert_int_equal(train_run(&o, NULL), -1);
}

static void test_bad_configs(void **state) {
    (void)state;
    char err[1024];
    train_opts_t o = train_opts_default();
    o.cfg.n_heads = 5;
    assert_int_equal(train_opts_validate(&o, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, "--heads 5 does not divide --d-model 64; pick heads in {1,2,4,8,16,32}"));
    o = train_opts_default();
    o.seq = 512;
    assert_int_equal(train_opts_validate(&o, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, "--seq 512 is longer than"));
    o = train_opts_default();
    o.batch = 10;
    o.accum = 3;
    assert_int_equal(train_opts_validate(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "--batch 10 is not divisible by --accum 3"));
    o = train_opts_default();
    assert_int_equal(train_opts_validate(&o, err, sizeof err), 0);
    /* A missing data file fails before training starts. */
    o.data_path = path("no-such-file.txt");
    assert_int_equal(train_run(&o, NULL), -1);
}

/* Each configuration error with its message, and the value just inside each
 * bound accepted: a bound moved by one (a --warmup 0 refused, a --beta1 1
 * accepted) fails one of the pairs. */
static void set_config(train_opts_t *o, int i) {
    switch (i) {
    case 0: o->seq = 0; break;
    case 1: o->batch = 0; break;
    case 2: o->accum = 0; break;
    case 3: o->steps = 0; break;
    case 4: o->warmup = -1; break;
    case 5: o->lr = 0.0; break;
    case 6: o->min_lr = -1e-9; break;
    case 7: o->min_lr = 0.02; break;
    case 8: o->beta1 = 1.0; break;
    case 9: o->beta2 = 1.0; break;
    case 10: o->beta1 = -0.1; break;
    case 11: o->stop_at = -1; break;
    case 12: o->stop_at = o->steps + 1; break;
    case 13: o->eval_batches = 0; break;
    case 14: o->log_format = "xml"; break;
    /* accepted */
    case 15: o->seq = o->cfg.max_seq; break;
    case 16: o->accum = o->batch; break;
    case 17: o->steps = 1; break;
    case 18: o->warmup = 0; break;
    case 19: o->min_lr = o->lr; break;
    case 20: o->min_lr = 0.0; break;
    case 21: o->beta1 = o->beta2 = 0.0; break;
    case 22: o->stop_at = o->steps; break;
    case 23: o->eval_batches = 1; break;
    case 24: o->log_format = "csv"; break;
    case 25: o->log_format = "json"; break;
    }
}

static void test_each_config_error(void **state) {
    (void)state;
    static const char *const want[] = {
        "--seq 0 must be at least 1",
        "--batch 0 and --accum 1 must be at least 1",
        "--batch 16 and --accum 0 must be at least 1",
        "--steps 0 must be at least 1",
        "--warmup -1 must be at least 0",
        "--lr 0 and --min-lr 0.001: need 0 <= min-lr <= lr and lr > 0",
        "--lr 0.01 and --min-lr -1e-09: need 0 <= min-lr <= lr and lr > 0",
        "--lr 0.01 and --min-lr 0.02: need 0 <= min-lr <= lr and lr > 0",
        "--beta1 1 and --beta2 0.95 must be in [0, 1)",
        "--beta1 0.9 and --beta2 1 must be in [0, 1)",
        "--beta1 -0.1 and --beta2 0.95 must be in [0, 1)",
        "--stop-at -1 must be in [0, --steps 150]",
        "--stop-at 151 must be in [0, --steps 150]",
        "--eval-batches 0 must be at least 1",
        "--log-format 'xml' is not known; pick csv or json",
    };
    const int n_refused = (int)(sizeof want / sizeof want[0]);
    for (int i = 0; i <= 25; i++) {
        train_opts_t o = train_opts_default();
        set_config(&o, i);
        char err[1024] = "";
        const int rc = train_opts_validate(&o, err, sizeof err);
        if (i < n_refused && (rc != -1 || strcmp(err, want[i])))
            fail_msg("case %d: rc %d, '%s', expected '%s'", i, rc, err, want[i]);
        if (i >= n_refused && rc != 0) fail_msg("case %d: refused: %s", i, err);
    }
}

/* ---- a backend that goes wrong on purpose ------------------------------------
 * The CPU backend behind train_set_gpu_backend() ("--backend cuda"), with one
 * operation replaced: from call number fail_at on, the forward pass returns
 * NaN (or inf), or the gradient norm inf, or the update leaves a NaN parameter. */
static train_backend_t real; /* the CPU backend's operations */
static int calls, fail_at;
static enum { BREAK_LOSS, BREAK_GRAD_NORM, BREAK_UPDATE, BREAK_LOSS_INF } breaks;
static const char *fake_device; /* NULL: the CPU backend's own name and peak */

static double nan_forward(void *m, const int *in, const int *tg) {
    double loss = real.forward(m, in, tg);
    if (breaks == BREAK_LOSS_INF && ++calls >= fail_at) return INFINITY;
    return (breaks == BREAK_LOSS && ++calls >= fail_at) ? NAN : loss;
}
static double inf_grad_norm(void *m) {
    double g = real.grad_norm(m);
    return (breaks == BREAK_GRAD_NORM && ++calls >= fail_at) ? INFINITY : g;
}
static void nan_step(void *m, double gnorm, double clip, float lr, float b1, float b2, float eps, float wd, long t) {
    real.step(m, gnorm, clip, lr, b1, b2, eps, wd, t);
    if (breaks == BREAK_UPDATE && ++calls >= fail_at) {
        float *p, *am, *av;
        real.state(m, &p, &am, &av);
        p[7] = NAN;
    }
}
/* The CPU backend for cfg, as the stand-ins below start from. */
static int open_cpu(train_backend_t *b, const model_config_t *cfg, int B, int T, uint64_t seed, char *err,
                    size_t errlen) {
    train_opts_t c = train_opts_default();
    c.cfg = *cfg;
    c.seed = seed;
    c.backend = "cpu";
    return train_backend_open(b, &c, B, T, err, errlen);
}
static int open_breaking(train_backend_t *b, const char *name, const model_config_t *cfg, int B, int T,
                         uint64_t seed, char *err, size_t errlen) {
    (void)name;
    if (open_cpu(b, cfg, B, T, seed, err, errlen)) return -1;
    real = *b;
    if (fake_device) { /* as trainer_gpu.c fills these in for a real GPU */
        snprintf(b->device, sizeof b->device, "%s", fake_device);
        b->peak_tflops = model_peak_tflops(fake_device, "bf16");
        b->measure_cpu_peak = 0;
    }
    b->forward = nan_forward;
    b->grad_norm = inf_grad_norm;
    b->step = nan_step;
    return 0;
}

/* ---- a backend that says it computes another way ------------------------------
 * The CPU backend behind "--backend cuda" or "emu", reporting the precision,
 * attention and matmul in `labels` as the GPU backend would: the arithmetic
 * is the CPU's, so a resume whose labels match continues bit-identically, and
 * one whose labels differ shows what a checkpoint refuses. */
static const char *labels[3] = {"bf16 mixed", "naive", "mma"};
static const char *device_label = "NVIDIA H200";
static const char *library_label = NULL; /* NULL: the CPU backend's own (OpenBLAS's) */
static int open_labelled(train_backend_t *b, const char *name, const model_config_t *cfg, int B, int T,
                         uint64_t seed, char *err, size_t errlen) {
    (void)name;
    if (open_cpu(b, cfg, B, T, seed, err, errlen)) return -1;
    b->precision = labels[0];
    b->attention = labels[1];
    b->matmul = labels[2];
    snprintf(b->device, sizeof b->device, "%s", device_label);
    if (library_label) snprintf(b->library, sizeof b->library, "%s", library_label);
    return 0;
}

static char *slurp(const char *p) {
    static char buf[1 << 16];
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Run small_opts() on the breaking backend, saving every step, with the
 * fault from call fail_at on; the run must fail, leave the checkpoint of the
 * last good step, and write a log that is still valid JSON. Runs in a child
 * (to capture the message), so it reports with a return code, not cmocka. */
#define EXPECT(cond)                                                    \
    do {                                                                \
        if (!(cond)) {                                                  \
            printf("expectation failed: %s (line %d)\n", #cond, __LINE__); \
            return 1;                                                   \
        }                                                               \
    } while (0)
static int run_breaking(void *arg) {
    const int *a = arg, kind = a[0], expect_saved = a[2];
    char log_copy[300];
    train_opts_t o = small_opts();
    o.backend = "cuda";
    o.save_path = path("nan.ckpt");
    o.save_every = 1;
    o.log_path = path("nan.json");
    o.eval_every = a[3];
    breaks = kind;
    calls = 0;
    fail_at = a[1];
    remove(o.save_path);
    train_set_gpu_backend(open_breaking);
    train_result_t r;
    int rc = train_run(&o, &r);
    train_set_gpu_backend(NULL);
    EXPECT(rc == -1);
    printf("  stopped after step %d\n", r.steps_done);
    EXPECT(r.steps_done == expect_saved);
    ckpt_meta_t got;
    char err[1024];
    if (expect_saved > 0) {
        EXPECT(checkpoint_read_meta(o.save_path, &got, err, sizeof err) == 0);
        EXPECT((int)got.step == expect_saved); /* not the broken step's */
    } else {
        EXPECT(checkpoint_read_meta(o.save_path, &got, err, sizeof err) == -1);
    }
    char *log = slurp(o.log_path);
    EXPECT(log != NULL);
    /* JSON has no NaN or Infinity: such a value is null, and the array is closed. */
    EXPECT(strstr(log, "nan") == NULL && strstr(log, "inf") == NULL);
    if (kind != BREAK_UPDATE) EXPECT(strstr(log, "null") != NULL);
    size_t n = strlen(log);
    while (n && (log[n - 1] == '\n' || log[n - 1] == ' ')) n--;
    EXPECT(n > 0 && log[n - 1] == ']');
    snprintf(log_copy, sizeof log_copy, "%s", log + (n > 299 ? n - 299 : 0));
    printf("  log ends: ...%s\n", log_copy);
    return 0;
}

static void test_nan_stops_the_run(void **state) {
    (void)state;
    /* {fault, from call, last good step, --eval-every}. Forward passes: accum 2 micro-batches, and
     * 2 eval batches of 2 micro-batches each (eval_every 1), a step, so call 13 is the first
     * micro-batch of step 3; the grad norm and the update are called once a step. A bad update is
     * found by the eval after it, or without an eval by the check of the parameters before a save.
     * An infinite eval loss (call 3 is step 1's eval) stops the run before step 1 is saved. */
    int cases[][4] = {{BREAK_LOSS, 13, 2, 1}, {BREAK_GRAD_NORM, 2, 1, 1}, {BREAK_UPDATE, 3, 2, 1},
                      {BREAK_UPDATE, 3, 2, 0}, {BREAK_LOSS, 1, 0, 1}, {BREAK_LOSS_INF, 3, 0, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        child_result_t c = run_in_child(run_breaking, cases[i]);
        print_message("%s", c.out);
        if (!c.exited || c.exit_code) fail_msg("case %zu failed", i);
        assert_non_null(strstr(c.out, cases[i][0] == BREAK_LOSS_INF ? "eval loss became inf after step 1"
                                                                     : "became"));
        assert_non_null(strstr(c.out, "lower --lr"));
        /* The message says what the checkpoint on disk holds. */
        char kept[600];
        if (cases[i][2] > 0)
            snprintf(kept, sizeof kept, "(%s holds step %d, from before it)\n", path("nan.ckpt"), cases[i][2]);
        else
            snprintf(kept, sizeof kept, "(%s was not written)\n", path("nan.ckpt"));
        assert_non_null(strstr(c.out, kept));
    }
}

static int exists(const char *p) {
    FILE *f = fopen(p, "rb");
    if (f) fclose(f);
    return f != NULL;
}

static train_opts_t resume_opts;
static int run_resume_child(void *arg) {
    (void)arg;
    return train_run(&resume_opts, NULL) == 0 ? 0 : 1;
}

/* Resuming with nothing left to do was a silent no-op that exited 0 and wrote
 * nothing: a finished checkpoint, or --stop-at at or before its step. Both are
 * refused before anything is written, with a message saying why. */
static void test_resume_with_nothing_to_do_is_refused(void **state) {
    (void)state;
    train_opts_t o = small_opts();
    o.steps = 4;
    o.warmup = 2;
    o.save_path = path("a.ckpt");
    o.stop_at = 3;
    assert_int_equal(train_run(&o, NULL), 0); /* a.ckpt at step 3 of 4 */
    o.stop_at = 0;
    o.save_path = path("b.ckpt");
    assert_int_equal(train_run(&o, NULL), 0); /* b.ckpt at step 4 of 4: finished */

    /* path() reuses four buffers: keep the names this test passes around. */
    static char a_ckpt[512], b_ckpt[512], c_ckpt[512], log_csv[512];
    snprintf(a_ckpt, sizeof a_ckpt, "%s", path("a.ckpt"));
    snprintf(b_ckpt, sizeof b_ckpt, "%s", path("b.ckpt"));
    snprintf(c_ckpt, sizeof c_ckpt, "%s", path("c.ckpt"));
    snprintf(log_csv, sizeof log_csv, "%s", path("loss.csv"));
    resume_opts = o;
    resume_opts.resume_path = b_ckpt;
    resume_opts.save_path = c_ckpt;
    resume_opts.log_path = log_csv;
    remove(c_ckpt);
    remove(log_csv);
    child_result_t c = run_in_child(run_resume_child, NULL);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 1);
    assert_non_null(strstr(c.out, "is already at step 4 of --steps 4; nothing to train"));
    assert_false(exists(c_ckpt));
    assert_false(exists(log_csv));

    resume_opts.resume_path = a_ckpt;
    for (int stop_at = 2; stop_at <= 3; stop_at++) { /* before, and at, the checkpoint's step */
        resume_opts.stop_at = stop_at;
        c = run_in_child(run_resume_child, NULL);
        print_message("%s", c.out);
        assert_true(c.exited && c.exit_code == 1);
        assert_non_null(strstr(c.out, "is not after step 3"));
        assert_false(exists(c_ckpt));
    }
    resume_opts.stop_at = 4; /* one step left: fine */
    assert_int_equal(train_run(&resume_opts, NULL), 0);
    assert_true(exists(c_ckpt));
}

/* An unwritable --save path was found only when the first checkpoint was
 * due, after the steps before it were spent; now before the first step. */
static void test_unwritable_save_fails_before_training(void **state) {
    (void)state;
    const char *bad[] = {path("no-such-dir/x.ckpt"), tmpdir}; /* a missing folder; a directory */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        train_opts_t o = small_opts();
        o.backend = "cuda"; /* the counting backend: how many forward passes ran */
        o.save_path = bad[i];
        breaks = BREAK_LOSS;
        calls = 0;
        fail_at = 1 << 30;
        train_set_gpu_backend(open_breaking);
        int rc = train_run(&o, NULL);
        train_set_gpu_backend(NULL);
        assert_int_equal(rc, -1);
        assert_int_equal(calls, 0);
    }
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", tmpdir); /* the check cleans up after itself */
    assert_false(exists(tmp));
}

/* On a GPU that is not in the peak table, MFU is unknown: it used to be taken
 * against this CPU's measured sgemm rate, thousands of percent. The child
 * prints what train_run() printed and its result. */
static int run_on_fake_gpu(void *arg) {
    fake_device = arg;
    train_opts_t o = small_opts();
    o.backend = "cuda";
    o.peak_tflops = 0.0; /* from the device, as the train program's default */
    o.print_every = 10;
    o.log_path = path("nan.json");
    breaks = BREAK_LOSS;
    calls = 0;
    fail_at = 1 << 30;
    train_set_gpu_backend(open_breaking);
    train_result_t r;
    int rc = train_run(&o, &r);
    train_set_gpu_backend(NULL);
    char *log = slurp(o.log_path);
    printf("result: rc %d, peak %g, mfu %g; log has mfu null: %d\n", rc, r.peak_tflops, r.mfu,
           log && strstr(log, "\"mfu\": null") != NULL);
    return rc == 0 ? 0 : 1;
}

static void test_mfu_unknown_on_an_unknown_gpu(void **state) {
    (void)state;
    child_result_t c = run_in_child(run_on_fake_gpu, "NVIDIA RTX A1000");
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 0);
    assert_non_null(strstr(c.out, "result: rc 0, peak nan, mfu nan; log has mfu null: 1"));
    assert_non_null(strstr(c.out, "MFU unknown"));
    assert_non_null(strstr(c.out, "pass --peak-tflops"));
    assert_null(strstr(c.out, "measured sgemm"));
    /* A GPU in the table: its bf16 peak. */
    c = run_in_child(run_on_fake_gpu, "NVIDIA H100 PCIe");
    assert_true(c.exited && c.exit_code == 0);
    assert_non_null(strstr(c.out, "result: rc 0, peak 756,"));
    assert_non_null(strstr(c.out, "bf16 peak of the device"));
    assert_null(strstr(c.out, "MFU unknown"));
}

static train_opts_t print_opts;
static int run_print_child(void *arg) {
    (void)arg;
    return train_run(&print_opts, NULL) == 0 ? 0 : 1;
}

/* A --warmup longer than --steps means the learning rate never reaches --lr:
 * the run goes ahead (the default warmup of 20 is longer than a quick
 * '--steps 5') but says so. */
static void test_warmup_longer_than_steps_warns(void **state) {
    (void)state;
    print_opts = small_opts();
    print_opts.steps = 4;
    print_opts.warmup = 10;
    child_result_t c = run_in_child(run_print_child, NULL);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 0);
    /* The last step's lr, 4/10 of the peak: the schedule's value at step 3 (0-based). */
    assert_non_null(strstr(c.out, "warning: --warmup 10 is longer than --steps 4, so the learning rate only "
                                  "reaches 0.004 (4/10 of --lr 0.01); lower --warmup to at most --steps"));
    print_opts.warmup = 4; /* peaks at the last step: no warning */
    c = run_in_child(run_print_child, NULL);
    assert_true(c.exited && c.exit_code == 0);
    assert_null(strstr(c.out, "warning"));
}

/* A text file has no known entropy rate: the header says so, not "nan". */
static void test_text_data_entropy_rate_unknown(void **state) {
    (void)state;
    static char text_path[512];
    snprintf(text_path, sizeof text_path, "%s", path("text.txt"));
    FILE *f = fopen(text_path, "w");
    assert_non_null(f);
    for (int i = 0; i < 100; i++) fprintf(f, "the quick brown fox %d\n", i);
    fclose(f);
    print_opts = small_opts();
    print_opts.steps = 2;
    print_opts.warmup = 1;
    print_opts.print_every = 1;
    print_opts.data_path = text_path;
    child_result_t c = run_in_child(run_print_child, NULL);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 0);
    assert_non_null(strstr(c.out, "entropy rate unknown"));
    assert_null(strstr(c.out, "nan"));
}

/* --adam-eps 0 divides 0 by 0 for a parameter whose second moment is still 0. */
static void test_adam_eps_must_be_positive(void **state) {
    (void)state;
    char err[1024];
    train_opts_t o = small_opts();
    o.adam_eps = 0.0;
    assert_int_equal(train_opts_validate(&o, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, "--adam-eps 0 must be greater than 0"));
    o.save_path = path("nan.ckpt");
    remove(o.save_path);
    assert_int_equal(train_run(&o, NULL), -1);
    FILE *f = fopen(o.save_path, "rb");
    if (f) fclose(f);
    assert_null(f); /* refused before anything was written */
}

static train_opts_t compute_opts;
static int run_compute_child(void *arg) {
    (void)arg;
    train_set_gpu_backend(open_labelled);
    train_result_t r;
    int rc = train_run(&compute_opts, &r);
    printf("hash %016llx\n", (unsigned long long)r.params_hash);
    return rc == 0 ? 0 : 1;
}

/* A checkpoint records how its run computed (backend, precision, attention,
 * matmul): a cpu fp32 checkpoint used to resume on the emulator in bf16
 * without a word. A resume that computes another way is refused, naming each
 * setting with both values and the flag to pass; one that computes the same
 * way continues bit-identically. */
static void test_resume_refuses_another_way_of_computing(void **state) {
    (void)state;
    static char a_ckpt[512], b_ckpt[512], c_ckpt[512];
    snprintf(a_ckpt, sizeof a_ckpt, "%s", path("a.ckpt"));
    snprintf(b_ckpt, sizeof b_ckpt, "%s", path("b.ckpt"));
    snprintf(c_ckpt, sizeof c_ckpt, "%s", path("c.ckpt"));
    train_opts_t o = small_opts();
    o.steps = 4;
    o.warmup = 2;

    /* A cpu checkpoint, resumed on the (labelled) emulator backend in bf16. */
    o.save_path = a_ckpt;
    o.stop_at = 2;
    assert_int_equal(train_run(&o, NULL), 0);
    compute_opts = o;
    compute_opts.stop_at = 0;
    compute_opts.save_path = NULL;
    compute_opts.resume_path = a_ckpt;
    compute_opts.backend = "emu";
    labels[0] = "bf16 mixed";
    labels[1] = "flash";
    labels[2] = "tiled";
    child_result_t c = run_in_child(run_compute_child, NULL);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 1);
    assert_non_null(strstr(c.out, "does not match this run"));
    assert_non_null(strstr(c.out, "--backend: checkpoint cpu, this run emu (pass --backend cpu)"));
    assert_non_null(strstr(c.out, "precision: checkpoint fp32, this run bf16 mixed (pass --backend cpu)"));

    /* A GPU-backend checkpoint (naive attention, the mma matmul) and its uninterrupted run. */
    o.backend = "cuda";
    labels[1] = "naive";
    labels[2] = "mma";
    train_set_gpu_backend(open_labelled);
    o.save_path = b_ckpt;
    assert_int_equal(train_run(&o, NULL), 0);
    train_result_t full;
    o.stop_at = 0;
    o.save_path = NULL;
    assert_int_equal(train_run(&o, &full), 0);
    train_set_gpu_backend(NULL);

    /* Resumed with another attention and matmul: refused, with the flags that match. */
    compute_opts = o;
    compute_opts.resume_path = b_ckpt;
    compute_opts.save_path = c_ckpt;
    labels[1] = "flash";
    labels[2] = "cublas";
    remove(c_ckpt);
    c = run_in_child(run_compute_child, NULL);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 1);
    assert_non_null(strstr(c.out, "--attention: checkpoint naive, this run flash (pass --attention naive)"));
    assert_non_null(strstr(c.out, "--matmul: checkpoint mma, this run cublas (pass --matmul mma)"));
    assert_null(strstr(c.out, "--backend:"));
    assert_false(exists(c_ckpt));
    /* On the cpu backend: refused, pointing back to --backend cuda. */
    compute_opts.backend = "cpu";
    c = run_in_child(run_compute_child, NULL);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 1);
    assert_non_null(strstr(c.out, "--backend: checkpoint cuda, this run cpu (pass --backend cuda)"));
    assert_non_null(strstr(c.out, "precision: checkpoint bf16 mixed, this run fp32 (pass --backend cuda)"));

    /* The same way of computing: it resumes, and ends where the uninterrupted run did. On
     * another device it warns that the last bits may differ (the stand-in's arithmetic is
     * the CPU's, so here they do not), and the new checkpoint names the new device. */
    compute_opts.backend = "cuda";
    labels[1] = "naive";
    labels[2] = "mma";
    device_label = "NVIDIA H100 80GB HBM3";
    c = run_in_child(run_compute_child, NULL);
    device_label = "NVIDIA H200";
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 0);
    assert_non_null(strstr(c.out, "was written on NVIDIA H200 and resumes on NVIDIA H100 80GB HBM3"));
    char want[64];
    snprintf(want, sizeof want, "hash %016llx", (unsigned long long)full.params_hash);
    assert_non_null(strstr(c.out, want));
    ckpt_meta_t got;
    char err[1024];
    assert_int_equal(checkpoint_read_meta(c_ckpt, &got, err, sizeof err), 0);
    assert_string_equal(got.backend, "cuda");
    assert_string_equal(got.precision, "bf16 mixed");
    assert_string_equal(got.attention, "naive");
    assert_string_equal(got.matmul, "mma");
    assert_string_equal(got.device, "NVIDIA H100 80GB HBM3");
}

/* A checkpoint records the math library as well (cuBLAS or OpenBLAS and its
 * version): a resume after a library upgrade used to go on without a word,
 * though the new version may pick other kernels. Like the device, the library
 * is not compared: the run goes on, with a warning that says why its bits may
 * differ; a version-2 checkpoint, which does not record a library, resumes
 * with a warning that says so. (The stand-in's arithmetic is the CPU's, so
 * here the bits do not differ.) */
static void test_resume_warns_on_another_library(void **state) {
    (void)state;
    static char a_ckpt[512], b_ckpt[512], v2_ckpt[512];
    snprintf(a_ckpt, sizeof a_ckpt, "%s", path("a.ckpt"));
    snprintf(b_ckpt, sizeof b_ckpt, "%s", path("b.ckpt"));
    snprintf(v2_ckpt, sizeof v2_ckpt, "%s", path("v2.ckpt"));
    train_opts_t o = small_opts();
    o.steps = 4;
    o.warmup = 2;
    o.backend = "cuda";
    labels[1] = "naive";
    labels[2] = "cublas";
    library_label = "cuBLAS 12.8.4";
    train_set_gpu_backend(open_labelled);
    train_result_t full;
    assert_int_equal(train_run(&o, &full), 0);
    o.save_path = a_ckpt;
    o.stop_at = 2;
    assert_int_equal(train_run(&o, NULL), 0);
    train_set_gpu_backend(NULL);
    ckpt_meta_t got;
    char err[1024];
    assert_int_equal(checkpoint_read_meta(a_ckpt, &got, err, sizeof err), 0);
    assert_string_equal(got.library, "cuBLAS 12.8.4");

    /* The same library: no warning. */
    compute_opts = o;
    compute_opts.stop_at = 0;
    compute_opts.resume_path = a_ckpt;
    compute_opts.save_path = b_ckpt;
    child_result_t c = run_in_child(run_compute_child, NULL);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 0);
    assert_null(strstr(c.out, "warning"));

    /* Another version: it resumes, warns, and the new checkpoint names the new library. */
    library_label = "cuBLAS 12.9.1";
    c = run_in_child(run_compute_child, NULL);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 0);
    assert_non_null(strstr(c.out, "was computed with cuBLAS 12.8.4 and resumes with cuBLAS 12.9.1: the run "
                                  "goes on, but another library or version may pick other matmul kernels"));
    assert_non_null(strstr(c.out, "may differ from an uninterrupted run in the last bits"));
    assert_null(strstr(c.out, "was written on")); /* the device is the same */
    char want[64];
    snprintf(want, sizeof want, "hash %016llx", (unsigned long long)full.params_hash);
    assert_non_null(strstr(c.out, want));
    assert_int_equal(checkpoint_read_meta(b_ckpt, &got, err, sizeof err), 0);
    assert_string_equal(got.library, "cuBLAS 12.9.1");

    /* The same step-2 state in a version-2 file: it resumes, saying the library is not recorded. */
    ckpt_meta_t m;
    assert_int_equal(checkpoint_read_meta(a_ckpt, &m, err, sizeof err), 0);
    float *p = host_malloc(m.n_params * sizeof(float)), *am = host_malloc(m.n_params * sizeof(float));
    float *av = host_malloc(m.n_params * sizeof(float));
    assert_int_equal(checkpoint_load(a_ckpt, &m, &got, p, am, av, err, sizeof err), 0);
    int rc = write_checkpoint_v2(v2_ckpt, &m, p, am, av);
    host_free(p);
    host_free(am);
    host_free(av);
    assert_int_equal(rc, 0);
    compute_opts.resume_path = v2_ckpt;
    c = run_in_child(run_compute_child, NULL);
    library_label = NULL;
    remove(v2_ckpt);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 0);
    assert_non_null(strstr(c.out, "does not record the math library it was computed with (checkpoints of "
                                  "format version 2 did not); this run uses cuBLAS 12.9.1"));
    assert_non_null(strstr(c.out, want));
    assert_int_equal(checkpoint_read_meta(b_ckpt, &got, err, sizeof err), 0);
    assert_string_equal(got.library, "cuBLAS 12.9.1"); /* what the resumed run saves is version 3 */
}

/* small_opts() with setting i of the list in the test below changed. */
static void change_setting(train_opts_t *o, int i) {
    switch (i) {
    case 0: o->cfg.d_model = 64; break;
    case 1: o->cfg.n_layers = 1; break;
    case 2: o->cfg.n_heads = 4; break;
    case 3: o->cfg.d_ff = 96; break;
    case 4: o->cfg.max_seq = 64; break;
    case 5: o->seed = 2; break;
    case 6: o->batch = 16; break;
    case 7: o->seq = 16; break;
    case 8: o->accum = 4; break;
    case 9: o->steps = 5; break;
    case 10: o->warmup = 3; break;
    case 11: o->lr = 0.02; break;
    case 12: o->min_lr = 0.002; break;
    case 13: o->weight_decay = 0.2; break;
    case 14: o->beta1 = 0.8; break;
    case 15: o->beta2 = 0.99; break;
    case 16: o->adam_eps = 1e-7; break;
    case 17: o->clip = 0.5; break;
    case 18: o->markov_seed = 2; break;
    case 19: o->markov_states = 32; break;
    case 20: o->markov_branch = 3; break;
    }
}

/* Each setting that shapes the run is written into the checkpoint and compared
 * on resume: a resume with any one of them changed is refused, naming its
 * flag (fill_meta() leaving one out would write 0 into the checkpoint and
 * compare 0 with 0, and the changed run would go on). */
static void test_resume_refuses_each_changed_setting(void **state) {
    (void)state;
    static char a_ckpt[512];
    snprintf(a_ckpt, sizeof a_ckpt, "%s", path("a.ckpt"));
    train_opts_t o = small_opts();
    o.steps = 4;
    o.warmup = 2;
    o.weight_decay = 0.1;
    o.save_path = a_ckpt;
    o.stop_at = 2;
    assert_int_equal(train_run(&o, NULL), 0);
    o.save_path = NULL;
    o.stop_at = 0;
    o.resume_path = a_ckpt;
    static const char *const want[] = {
        "--d-model: checkpoint 32, this run 64",
        "--layers: checkpoint 2, this run 1",
        "--heads: checkpoint 2, this run 4",
        "--ffn: checkpoint 64, this run 96",
        "--max-seq: checkpoint 32, this run 64",
        "--seed: checkpoint 1, this run 2",
        "--batch: checkpoint 8, this run 16",
        "--seq: checkpoint 32, this run 16",
        "--accum: checkpoint 2, this run 4",
        "--steps: checkpoint 4, this run 5",
        "--warmup: checkpoint 2, this run 3",
        "--lr: checkpoint 0.01, this run 0.02",
        "--min-lr: checkpoint 0.001, this run 0.002",
        "--weight-decay: checkpoint 0.1, this run 0.2",
        "--beta1: checkpoint 0.9, this run 0.8",
        "--beta2: checkpoint 0.95, this run 0.99",
        "--adam-eps: checkpoint 1e-08, this run 1e-07",
        "--clip: checkpoint 1, this run 0.5",
        "data: checkpoint 'markov seed=1 states=64 branch=2', this run 'markov seed=2 states=64 branch=2'",
        "data: checkpoint 'markov seed=1 states=64 branch=2', this run 'markov seed=1 states=32 branch=2'",
        "data: checkpoint 'markov seed=1 states=64 branch=2', this run 'markov seed=1 states=64 branch=3'",
    };
    for (int i = 0; i < (int)(sizeof want / sizeof want[0]); i++) {
        resume_opts = o;
        change_setting(&resume_opts, i);
        child_result_t c = run_in_child(run_resume_child, NULL);
        if (!c.exited || c.exit_code != 1 || !strstr(c.out, "does not match this run") || !strstr(c.out, want[i]))
            fail_msg("case %d: exit %d, expected '%s' in:\n%s", i, c.exit_code, want[i], c.out);
    }
    /* Unchanged, it resumes. */
    resume_opts = o;
    child_result_t c = run_in_child(run_resume_child, NULL);
    assert_true(c.exited && c.exit_code == 0);
}

/* ---- a backend that records what it is shown ----------------------------------
 * The CPU backend, with a forward pass that also counts the sequences it is
 * given and adds up a hash of each, so that a test can tell which sequences a
 * run evaluated, whatever order and micro-batches they came in. */
static int seen_B, seen_T;
static long seen_seqs;
static uint64_t seen_sum, seen_hash[64]; /* the hashes of the first 64 sequences, in order */
static double counting_forward(void *m, const int *in, const int *tg) {
    for (int b = 0; b < seen_B; b++) {
        uint64_t h = 14695981039346656037ull;
        for (int t = 0; t < seen_T; t++) h = (h ^ (uint64_t)in[(size_t)b * seen_T + t]) * 1099511628211ull;
        seen_sum += h;
        if (seen_seqs < 64) seen_hash[seen_seqs] = h;
        seen_seqs++;
    }
    return real.forward(m, in, tg);
}
static int open_counting(train_backend_t *b, const char *name, const model_config_t *cfg, int B, int T,
                         uint64_t seed, char *err, size_t errlen) {
    if (open_labelled(b, name, cfg, B, T, seed, err, errlen)) return -1;
    real = *b;
    seen_B = B;
    seen_T = T;
    b->forward = counting_forward;
    return 0;
}

/* The held-out set was --eval-batches micro-batches, so --accum 4 evaluated a
 * quarter of the sequences --accum 1 did. Now it is --eval-batches batches of
 * --batch sequences, run in micro-batches: the same sequences whatever
 * --accum, and (up to rounding) the same eval loss. One step, evaluated at the
 * end: the forward passes see the step's batch and the held-out set. */
static void test_eval_set_does_not_depend_on_accum(void **state) {
    (void)state;
    const int accums[] = {1, 2, 4};
    uint64_t sum1 = 0;
    double ev1 = NAN;
    for (size_t i = 0; i < sizeof accums / sizeof accums[0]; i++) {
        train_opts_t o = small_opts();
        o.backend = "cuda";
        o.batch = 8;
        o.accum = accums[i];
        o.steps = 1;
        o.warmup = 1;
        o.eval_batches = 2;
        seen_seqs = 0;
        seen_sum = 0;
        train_set_gpu_backend(open_counting);
        train_result_t r;
        int rc = train_run(&o, &r);
        train_set_gpu_backend(NULL);
        assert_int_equal(rc, 0);
        print_message("  --accum %d: %ld sequences seen, eval loss %.6f\n", o.accum, seen_seqs, r.eval_loss);
        assert_int_equal(seen_seqs, (long)o.batch * (1 + o.eval_batches));
        if (i == 0) {
            sum1 = seen_sum;
            ev1 = r.eval_loss;
        }
        assert_true(seen_sum == sum1);
        assert_true(fabs(r.eval_loss - ev1) < 1e-4);
    }
}

/* The held-out set is held out: the eval split's sequences, not the training
 * split's. One step of --batch 8 then an eval of 2 x 8 sequences: the first 8
 * sequences the forward pass sees are trained on, and none of the 16 after
 * them may be one of those (the eval taken from the training split would
 * start with exactly the first step's batch). */
static void test_eval_set_is_not_trained_on(void **state) {
    (void)state;
    train_opts_t o = small_opts();
    o.backend = "cuda";
    o.steps = 2;
    o.warmup = 1;
    o.eval_every = 1;
    o.eval_batches = 2;
    seen_seqs = 0;
    train_set_gpu_backend(open_counting);
    int rc = train_run(&o, NULL);
    train_set_gpu_backend(NULL);
    assert_int_equal(rc, 0);
    /* step 1's batch, its eval, step 2's batch, its eval */
    assert_int_equal(seen_seqs, 2 * (o.batch + o.eval_batches * o.batch));
    const int B = o.batch, E = o.eval_batches * o.batch;
    for (int e = 0; e < E; e++) {
        assert_true(seen_hash[B + e] == seen_hash[B + E + B + e]); /* the same held-out set each time */
        for (int t = 0; t < B; t++) {
            assert_true(seen_hash[B + e] != seen_hash[t]);          /* not step 1's batch */
            assert_true(seen_hash[B + e] != seen_hash[B + E + t]);  /* nor step 2's */
        }
    }
}

static train_opts_t paths_opts;
static int run_paths_child(void *arg) {
    (void)arg;
    return train_run(&paths_opts, NULL) == 0 ? 0 : 1;
}

static long file_size(const char *p) {
    FILE *f = fopen(p, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* --log naming the --data or --resume file emptied the file the run had just
 * read; --log naming the --save file lost the log when the checkpoint was
 * renamed over it; --save naming --data replaced the training text. All are
 * refused before anything is written, however the paths are spelled.
 * --resume and --save naming one file is how a run continues, and is fine. */
static void test_colliding_paths_are_refused(void **state) {
    (void)state;
    static char text[512], ckpt[512], other[512], x_ckpt[512], x_again[512];
    snprintf(text, sizeof text, "%s", path("text.txt"));
    snprintf(ckpt, sizeof ckpt, "%s", path("a.ckpt"));
    snprintf(other, sizeof other, "%s/./a.ckpt", tmpdir); /* the same file, spelled another way */
    snprintf(x_ckpt, sizeof x_ckpt, "%s", path("x.ckpt"));
    snprintf(x_again, sizeof x_again, "%s/../%s/x.ckpt", tmpdir, strrchr(tmpdir, '/') + 1);
    FILE *f = fopen(text, "w");
    assert_non_null(f);
    for (int i = 0; i < 100; i++) fprintf(f, "the quick brown fox %d\n", i);
    fclose(f);
    const long text_size = file_size(text);
    train_opts_t o = small_opts();
    o.steps = 4;
    o.warmup = 2;
    o.stop_at = 2;
    o.save_path = ckpt;
    assert_int_equal(train_run(&o, NULL), 0);
    const long ckpt_size = file_size(ckpt);
    o.stop_at = 0;
    o.save_path = NULL;

    struct {
        const char *data, *resume, *save, *log, *want;
    } cases[] = {
        {text, NULL, NULL, text, "--log %s is also the --data file"},
        {NULL, ckpt, NULL, other, "--log %s is also the --resume checkpoint"},
        {NULL, NULL, x_ckpt, x_again, "--log %s is also the --save file"}, /* neither exists yet */
        {text, NULL, text, NULL, "--save %s is also the --data file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        paths_opts = o;
        paths_opts.data_path = cases[i].data;
        paths_opts.resume_path = cases[i].resume;
        paths_opts.save_path = cases[i].save;
        paths_opts.log_path = cases[i].log;
        child_result_t c = run_in_child(run_paths_child, NULL);
        print_message("%s", c.out);
        assert_true(c.exited && c.exit_code == 1);
        char want[1200];
        snprintf(want, sizeof want, cases[i].want, cases[i].log ? cases[i].log : cases[i].save);
        assert_non_null(strstr(c.out, want));
        assert_int_equal(file_size(text), text_size);
        assert_int_equal(file_size(ckpt), ckpt_size);
        assert_false(exists(x_ckpt));
    }
    /* Resume from a checkpoint and save over it: the usual way to continue. */
    o.resume_path = ckpt;
    o.save_path = other;
    o.log_path = path("loss.csv");
    assert_int_equal(train_run(&o, NULL), 0);
    ckpt_meta_t got;
    char err[1024];
    assert_int_equal(checkpoint_read_meta(ckpt, &got, err, sizeof err), 0);
    assert_int_equal((int)got.step, 4);
}

/* train_run() on print_opts, then its result on one line, for the progress
 * lines a child printed to be checked against. */
static int run_result_child(void *arg) {
    (void)arg;
    train_result_t r;
    int rc = train_run(&print_opts, &r);
    printf("result: loss %.17g eval %.17g entropy %.17g tps %.17g mfu %.17g\n", r.last_train_loss, r.eval_loss,
           r.entropy_rate, r.tokens_per_s, r.mfu);
    return rc == 0 ? 0 : 1;
}

/* The progress line and the summary show the run's own numbers: the step's
 * train loss, tokens/s in thousands and MFU in percent (with --print-every
 * the whole run, its window is the run's), the eval loss with the entropy
 * rate and the gap eval - entropy, and at the end the steps this run trained
 * (a resumed run counts from its checkpoint), its tokens/s and its MFU
 * against the peak. */
static void test_progress_lines_show_the_result(void **state) {
    (void)state;
    static char a_ckpt[512];
    snprintf(a_ckpt, sizeof a_ckpt, "%s", path("a.ckpt"));
    print_opts = small_opts();
    print_opts.steps = 4;
    print_opts.warmup = 2;
    print_opts.print_every = 4;
    print_opts.eval_every = 4;
    for (int resumed = 0; resumed < 2; resumed++) {
        if (resumed) {
            print_opts.save_path = a_ckpt;
            print_opts.stop_at = 1;
            print_opts.print_every = 0;
            assert_int_equal(train_run(&print_opts, NULL), 0);
            print_opts.save_path = NULL;
            print_opts.stop_at = 0;
            print_opts.print_every = 4;
            print_opts.resume_path = a_ckpt;
        }
        child_result_t c = run_in_child(run_result_child, NULL);
        print_message("%s", c.out);
        assert_true(c.exited && c.exit_code == 0);
        double loss, ev, H, tps, mfu;
        const char *res = strstr(c.out, "result: ");
        assert_non_null(res);
        assert_int_equal(sscanf(res, "result: loss %lf eval %lf entropy %lf tps %lf mfu %lf", &loss, &ev, &H,
                                &tps, &mfu), 5);
        char want[640];
        snprintf(want, sizeof want, "step 4/4 | loss %.4f | %.1fk tok/s | MFU %.1f%% | ", loss, tps / 1e3,
                 100.0 * mfu);
        assert_non_null(strstr(c.out, want));
        snprintf(want, sizeof want, " | eval %.4f (entropy rate %.4f, gap %+.4f)\n", ev, H, ev - H);
        assert_non_null(strstr(c.out, want));
        snprintf(want, sizeof want, "done: %d steps, %.1fk tok/s, MFU %.2f%% of 1 TFLOP/s, peak memory ",
                 resumed ? 3 : 4, tps / 1e3, 100.0 * mfu);
        assert_non_null(strstr(c.out, want));
        if (resumed) {
            snprintf(want, sizeof want, "resumed from %s at step 1\n", a_ckpt);
            assert_non_null(strstr(c.out, want));
        }
    }
}

/* The train program with the command line in arg (a NULL-ended argv). */
static int run_program_child(void *arg) {
    char **argv = arg;
    int argc = 0;
    while (argv[argc]) argc++;
    return train_program_main(argc, argv);
}

/* Each of the train program's flags reaches its field of train_opts_t: a run
 * with every recorded setting away from its default writes them all into its
 * checkpoint, and the flags that are not recorded show in what the run
 * writes (the log's format and rows, the progress lines, the step it stops
 * at); --save-every and --threads are left out, as nothing shows them here.
 * A configuration error exits with 2, a failed run with 1. */
static void test_train_program_flags(void **state) {
    (void)state;
    static char ckpt[512], log[512];
    snprintf(ckpt, sizeof ckpt, "%s", path("a.ckpt"));
    snprintf(log, sizeof log, "%s", path("loss.csv"));
    char *argv[] = {"train", "--d-model", "32", "--layers", "1", "--heads", "4", "--ffn", "48",
                    "--max-seq", "24", "--seq", "16", "--batch", "6", "--accum", "3", "--steps", "5",
                    "--warmup", "1", "--lr", "0.02", "--min-lr", "0.002", "--weight-decay", "0.05",
                    "--beta1", "0.8", "--beta2", "0.9", "--adam-eps", "1e-7", "--clip", "0.5", "--seed", "5",
                    "--markov-seed", "3", "--markov-states", "32", "--markov-branch", "3", "--eval-every", "2",
                    "--eval-batches", "1", "--print-every", "3", "--log", log, "--log-format", "json",
                    "--save", ckpt, "--save-every", "2", "--stop-at", "4", "--threads", "1",
                    "--peak-tflops", "2", NULL};
    remove(ckpt);
    child_result_t c = run_in_child(run_program_child, argv);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 0);
    ckpt_meta_t got;
    char err[1024];
    assert_int_equal(checkpoint_read_meta(ckpt, &got, err, sizeof err), 0);
    assert_int_equal(got.cfg.d_model, 32);
    assert_int_equal(got.cfg.n_layers, 1);
    assert_int_equal(got.cfg.n_heads, 4);
    assert_int_equal(got.cfg.d_ff, 48);
    assert_int_equal(got.cfg.max_seq, 24);
    assert_int_equal(got.seq_len, 16);
    assert_int_equal(got.batch, 6);
    assert_int_equal(got.accum, 3);
    assert_int_equal(got.total_steps, 5);
    assert_int_equal(got.warmup, 1);
    assert_true(got.lr == 0.02 && got.min_lr == 0.002 && got.weight_decay == 0.05);
    assert_true(got.beta1 == 0.8 && got.beta2 == 0.9 && got.adam_eps == 1e-7 && got.clip == 0.5);
    assert_int_equal(got.seed, 5);
    assert_string_equal(got.data_desc, "markov seed=3 states=32 branch=3");
    assert_string_equal(got.backend, "cpu");
    assert_int_equal(got.step, 4); /* --stop-at */
    /* --print-every 3: after step 3 and the last (--stop-at 4); --eval-every 2: an eval after step 2 and 4. */
    assert_null(strstr(c.out, "step 2/5"));
    assert_non_null(strstr(c.out, "step 3/5 | "));
    assert_non_null(strstr(c.out, "step 4/5 | "));
    assert_non_null(strstr(c.out, "peak 2 TFLOP/s (--peak-tflops)"));
    const char *json = slurp(log);
    assert_memory_equal(json, "[\n  {\"step\": 1, ", 15);
    assert_non_null(strstr(json, "{\"step\": 1, \"lr\": 0.02, ")); /* --warmup 1 */
    assert_non_null(strstr(json, "\"eval_loss\": null, \"grad_norm\""));
    assert_null(strstr(json, "{\"step\": 5,"));
    assert_non_null(strstr(json, "{\"step\": 4,"));
    const char *row2 = strstr(json, "{\"step\": 2,"), *row3 = strstr(json, "{\"step\": 3,");
    assert_true(row2 && row3 && strstr(row2, "\"eval_loss\": null") > row3); /* evaluated after step 2 */
    /* A bad setting: 2, with the message. */
    char *bad[] = {"train", "--heads", "3", "--log", log, NULL};
    c = run_in_child(run_program_child, bad);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 2);
    assert_non_null(strstr(c.out, "train: --heads 3 does not divide --d-model 64"));
    /* A run that fails (a checkpoint that does not match): 1. */
    char *mismatch[] = {"train", "--resume", ckpt, "--threads", "1", "--peak-tflops", "1", NULL};
    c = run_in_child(run_program_child, mismatch);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 1);
    assert_non_null(strstr(c.out, "does not match this run"));
}

/* ---- the step's arithmetic, as the log and the result report it ---------------- */

/* Field `col` (0: step) of the CSV log's row for `step`, as a number; NAN when
 * the field is empty (no eval that step) or the row is missing. */
static double log_field(const char *csv, int step, int col) {
    for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        if (atoi(line + 1) != step) continue;
        const char *f = line + 1;
        for (int c = 0; c < col && f; c++) f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
        return f && *f != ',' && *f != '\n' ? atof(f) : NAN;
    }
    return NAN;
}

/* --accum splits the same batch into micro-batches: each one's loss and
 * gradient are scaled by 1/accum, so the step's train loss and gradient norm
 * (what --clip compares with) are the batch's, whatever --accum. AdamW hides a
 * wrong scale from the parameters, so only the log and the result show it. */
static void test_accum_gives_the_same_loss_and_grad_norm(void **state) {
    (void)state;
    static char log[512];
    snprintf(log, sizeof log, "%s", path("loss.csv"));
    const int accums[] = {1, 2, 4};
    double loss1 = NAN, gnorm1 = NAN;
    for (size_t i = 0; i < sizeof accums / sizeof accums[0]; i++) {
        train_opts_t o = small_opts();
        o.accum = accums[i];
        o.steps = 1;
        o.warmup = 1;
        o.log_path = log;
        train_result_t r;
        assert_int_equal(train_run(&o, &r), 0);
        const double gnorm = log_field(slurp(log), 1, 4);
        print_message("  --accum %d: train loss %.6f, grad norm %.6g\n", o.accum, r.last_train_loss, gnorm);
        assert_true(gnorm > 0);
        if (i == 0) {
            loss1 = r.last_train_loss;
            gnorm1 = gnorm;
        }
        assert_true(fabs(r.last_train_loss - loss1) < 1e-5);
        assert_true(fabs(gnorm - gnorm1) < 1e-4 * gnorm1);
    }
}

/* --eval-every N evaluates after steps N, 2N, ... and the last; --print-every
 * N prints after steps N, 2N, ... and the last, with the step as wide as the
 * total ("step  3/10"). */
static void test_eval_and_print_cadence(void **state) {
    (void)state;
    static char log[512];
    snprintf(log, sizeof log, "%s", path("loss.csv"));
    print_opts = small_opts();
    print_opts.steps = 10;
    print_opts.eval_every = 4;
    print_opts.print_every = 3;
    print_opts.log_path = log;
    child_result_t c = run_in_child(run_print_child, NULL);
    print_message("%s", c.out);
    assert_true(c.exited && c.exit_code == 0);
    for (int step = 1; step <= 10; step++) {
        char want[32];
        snprintf(want, sizeof want, "step %2d/10 |", step);
        const int printed = step % 3 == 0 || step == 10, evaluated = step % 4 == 0 || step == 10;
        assert_int_equal(strstr(c.out, want) != NULL, printed);
        assert_int_equal(!isnan(log_field(slurp(log), step, 3)), evaluated);
    }
}

/* --save-every N writes a checkpoint after steps N, 2N, ...: a run that fails
 * at step 7 leaves the one of step 4 (the forward passes are 2 a step, so
 * call 13 is step 7's first). */
static void test_save_every_cadence(void **state) {
    (void)state;
    train_opts_t o = small_opts();
    o.backend = "cuda";
    o.save_path = path("nan.ckpt");
    o.save_every = 4;
    remove(o.save_path);
    breaks = BREAK_LOSS;
    calls = 0;
    fail_at = 13;
    train_set_gpu_backend(open_breaking);
    train_result_t r;
    int rc = train_run(&o, &r);
    train_set_gpu_backend(NULL);
    assert_int_equal(rc, -1);
    assert_int_equal(r.steps_done, 6);
    ckpt_meta_t got;
    char err[1024];
    assert_int_equal(checkpoint_read_meta(o.save_path, &got, err, sizeof err), 0);
    assert_int_equal((int)got.step, 4);
}

/* --clip reaches the update: a norm far below the gradients' changes the run,
 * and one far above them leaves it bit for bit as with clipping off (a clip
 * applied when the norm is already under it would scale every gradient up). */
static void test_clip_reaches_the_update(void **state) {
    (void)state;
    train_opts_t o = small_opts();
    o.steps = 4;
    o.warmup = 2;
    train_result_t off, high, low;
    o.clip = 0.0;
    assert_int_equal(train_run(&o, &off), 0);
    o.clip = 1e9;
    assert_int_equal(train_run(&o, &high), 0);
    o.clip = 1e-3;
    assert_int_equal(train_run(&o, &low), 0);
    assert_true(high.params_hash == off.params_hash);
    assert_true(low.params_hash != off.params_hash);
}

/* The cpu backend's update clips by the global norm it is given: gradients
 * whose norm is above --clip are scaled by clip/norm, and ones below it (or
 * with --clip 0) are left alone. With beta1 = beta2 = 0 and an eps far above
 * every gradient, AdamW's first step moves each parameter by lr * g / (|g| + eps),
 * so the move shows the gradient the update saw: by norm squared, or by its
 * square root, the scale would be another. */
static void test_cpu_update_clips_by_the_norm(void **state) {
    (void)state;
    train_opts_t o = small_opts();
    train_backend_t b;
    char err[1024];
    for (int k = 0; k < 4; k++) { /* --clip off, far above the norm, twice it, half of it */
        assert_int_equal(train_backend_open(&b, &o, o.batch / o.accum, o.seq, err, sizeof err), 0);
        model_cpu_t *m = b.model;
        float *p, *am, *av;
        b.state(b.model, &p, &am, &av);
        float *p0 = host_malloc(m->n_params * sizeof(float));
        memcpy(p0, p, m->n_params * sizeof(float));
        for (size_t i = 0; i < m->n_params; i++) m->grads[i] = 0.25f * (float)((int)(i % 7) - 3);
        const double norm = b.grad_norm(b.model);
        /* Well above 1, so that norm, its square and its root are far apart. */
        assert_true(norm > 10.0);
        const double clip = k == 0 ? 0.0 : k == 1 ? 1e9 : k == 2 ? 2.0 * norm : 0.5 * norm;
        const float scale = k == 3 ? (float)(clip / norm) : 1.0f, lr = 1.0f, eps = 1e3f;
        b.step(b.model, norm, clip, lr, 0.0f, 0.0f, eps, 0.0f, 1);
        double worst = 0.0;
        for (size_t i = 0; i < m->n_params; i++) {
            const float g = 0.25f * (float)((int)(i % 7) - 3) * scale;
            const double want = (double)p0[i] - (double)lr * g / (fabsf(g) + eps);
            worst = fmax(worst, fabs(p[i] - want));
        }
        print_message("  --clip %g (norm %g): largest error %.3g\n", clip, norm, worst);
        /* The moves are up to 7.5e-4; a parameter near 1 rounds to 6e-8. */
        assert_true(worst < 2e-7);
        host_free(p0);
        b.destroy(b.model);
    }
}

/* The cpu backend's update is clip_grad_norm() then model_cpu_adamw() with the
 * arguments in their places: against the two called by hand on a twin model,
 * the same bits, for moments that are not zero and a step count past 1 (at
 * t = 1 the bias correction hides the betas). */
static void test_cpu_update_passes_its_arguments(void **state) {
    (void)state;
    train_opts_t o = small_opts();
    train_backend_t b, twin;
    char err[1024];
    assert_int_equal(train_backend_open(&b, &o, o.batch / o.accum, o.seq, err, sizeof err), 0);
    assert_int_equal(train_backend_open(&twin, &o, o.batch / o.accum, o.seq, err, sizeof err), 0);
    model_cpu_t *m[2] = {b.model, twin.model};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < m[k]->n_params; i++) {
            m[k]->grads[i] = 0.25f * (float)((int)(i % 7) - 3);
            m[k]->adam_m[i] = 0.01f * (float)((int)(i % 5) - 2);
            m[k]->adam_v[i] = 0.001f * (float)(1 + i % 3);
        }
    const double norm = b.grad_norm(b.model), clip = 0.5 * norm;
    b.step(b.model, norm, clip, 1e-2f, 0.8f, 0.9f, 1e-6f, 0.1f, 3);
    clip_grad_norm(m[1]->grads, m[1]->n_params, norm, clip);
    model_cpu_adamw(m[1], 1e-2f, 0.8f, 0.9f, 1e-6f, 0.1f, 3);
    assert_memory_equal(m[0]->params, m[1]->params, m[0]->n_params * sizeof(float));
    assert_memory_equal(m[0]->adam_m, m[1]->adam_m, m[0]->n_params * sizeof(float));
    assert_memory_equal(m[0]->adam_v, m[1]->adam_v, m[0]->n_params * sizeof(float));
    b.destroy(b.model);
    twin.destroy(twin.model);
}

/* ---- a backend that records the updates it is asked for ------------------------
 * The CPU backend, writing down the arguments of each update: the loop passes
 * the step's gradient norm (the one the log shows), --clip, the learning
 * rate of the schedule at that step, both betas, eps and weight decay in
 * their places, and AdamW's step count from 1, across a resume too. */
typedef struct {
    double gnorm, clip;
    float lr, b1, b2, eps, wd;
    long t;
} update_args_t;
static update_args_t updates[16];
static int n_updates;
static void recording_step(void *m, double gnorm, double clip, float lr, float b1, float b2, float eps, float wd,
                           long t) {
    if (n_updates < 16) updates[n_updates++] = (update_args_t){gnorm, clip, lr, b1, b2, eps, wd, t};
    real.step(m, gnorm, clip, lr, b1, b2, eps, wd, t);
}
static int open_recording(train_backend_t *b, const char *name, const model_config_t *cfg, int B, int T,
                          uint64_t seed, char *err, size_t errlen) {
    (void)name;
    if (open_cpu(b, cfg, B, T, seed, err, errlen)) return -1;
    real = *b;
    b->step = recording_step;
    return 0;
}

/* Steps 1-3, and 4-6 resumed from the checkpoint of step 3. */
static void test_update_arguments(void **state) {
    (void)state;
    static char log[512], a_ckpt[512];
    snprintf(log, sizeof log, "%s", path("loss.csv"));
    snprintf(a_ckpt, sizeof a_ckpt, "%s", path("a.ckpt"));
    train_opts_t o = small_opts();
    o.backend = "cuda";
    o.steps = 6;
    o.warmup = 2;
    o.clip = 0.75;
    o.beta1 = 0.8;
    o.beta2 = 0.9;
    o.adam_eps = 1e-6;
    o.weight_decay = 0.1;
    o.log_path = log;
    train_set_gpu_backend(open_recording);
    o.save_path = a_ckpt;
    o.stop_at = 3;
    n_updates = 0;
    assert_int_equal(train_run(&o, NULL), 0);
    o.save_path = NULL;
    o.stop_at = 0;
    o.resume_path = a_ckpt;
    assert_int_equal(train_run(&o, NULL), 0);
    train_set_gpu_backend(NULL);
    assert_int_equal(n_updates, 6);
    const char *csv = slurp(log); /* the resumed run's: steps 4 to 6 */
    for (int i = 0; i < 6; i++) {
        const update_args_t *u = &updates[i];
        assert_int_equal(u->t, i + 1);
        assert_true(u->lr == (float)train_lr_at(&o, i));
        assert_true(u->clip == o.clip);
        assert_true(u->b1 == (float)o.beta1 && u->b2 == (float)o.beta2);
        assert_true(u->eps == (float)o.adam_eps && u->wd == (float)o.weight_decay);
        if (i >= 3) assert_true(fabs(u->gnorm - log_field(csv, i + 1, 4)) <= 5e-6 * u->gnorm); /* %.6g */
    }
}

/* The CPU backend, keeping a copy of the parameters when the run frees it. */
static float *kept_params;
static void keeping_destroy(void *m) {
    float *p, *am, *av;
    real.state(m, &p, &am, &av);
    size_t n = ((model_cpu_t *)m)->n_params;
    kept_params = host_malloc(n * sizeof(float));
    memcpy(kept_params, p, n * sizeof(float));
    real.destroy(m);
}
static int open_keeping(train_backend_t *b, const char *name, const model_config_t *cfg, int B, int T,
                        uint64_t seed, char *err, size_t errlen) {
    (void)name;
    if (open_cpu(b, cfg, B, T, seed, err, errlen)) return -1;
    real = *b;
    b->destroy = keeping_destroy;
    return 0;
}

/* AdamW counts its steps from 1: after the first, m/(1-b1) = g and
 * v/(1-b2) = g^2, so each parameter with a gradient moves by lr * g/(|g|+eps),
 * lr itself for all but the smallest gradients. Counted from 0 it divides by
 * zero; from 2 the first steps are about 0.73 lr. */
static void test_first_adam_step_moves_by_lr(void **state) {
    (void)state;
    train_opts_t o = small_opts();
    o.backend = "cuda";
    o.steps = 1;
    o.warmup = 1; /* the first step at the full lr */
    o.lr = o.min_lr = 1e-3;
    o.clip = 0.0;
    o.weight_decay = 0.0;
    train_backend_t init;
    char err[1024];
    assert_int_equal(open_cpu(&init, &o.cfg, o.batch / o.accum, o.seq, o.seed, err, sizeof err), 0);
    float *p0, *m0, *v0;
    init.state(init.model, &p0, &m0, &v0);
    train_set_gpu_backend(open_keeping);
    int rc = train_run(&o, NULL);
    train_set_gpu_backend(NULL);
    assert_int_equal(rc, 0);
    assert_non_null(kept_params);
    double most = 0.0;
    for (size_t i = 0; i < init.n_params; i++) most = fmax(most, fabs((double)kept_params[i] - p0[i]));
    print_message("  largest move %.6g (lr %g)\n", most, o.lr);
    /* Float parameters near 1 (layer-norm gains) round the move by about 6e-8. */
    assert_true(most > 0.99 * o.lr && most < 1.001 * o.lr);
    host_free(kept_params);
    kept_params = NULL;
    init.destroy(init.model);
}

/* The CPU backend with each forward pass taking at least 10 ms (40 ms from
 * call slow_from on), so that a step's time is known from below: the
 * tokens/s a run reports cannot be above batch x seq over that. The lower
 * bound, 0.3 of it, leaves a busy machine more than twice the slept time for
 * the rest of a step, and still catches tokens counted for one micro-batch of
 * the 4 (0.25). */
static int sleepy_calls, slow_from;
static double sleepy_forward(void *m, const int *in, const int *tg) {
    struct timespec ts = {0, (++sleepy_calls >= slow_from ? 40 : 10) * 1000 * 1000};
    nanosleep(&ts, NULL);
    return real.forward(m, in, tg);
}
static int open_sleepy(train_backend_t *b, const char *name, const model_config_t *cfg, int B, int T,
                       uint64_t seed, char *err, size_t errlen) {
    (void)name;
    if (open_cpu(b, cfg, B, T, seed, err, errlen)) return -1;
    real = *b;
    b->forward = sleepy_forward;
    return 0;
}

/* Tokens/s counts every sequence of the batch (not one micro-batch's), each
 * progress window on its own, and MFU is FLOPs/token x tokens/s over the peak
 * in TFLOP/s. The peak is made small so the log's 5 decimals of MFU are many
 * significant digits. Steps 3 and 4 are four times as slow as 1 and 2: the
 * window after the progress line of step 2 must not count those before it,
 * which would put its rate above what steps 3 and 4 can reach. */
static void test_tokens_per_s_and_mfu(void **state) {
    (void)state;
    static char log[512];
    snprintf(log, sizeof log, "%s", path("loss.csv"));
    train_opts_t o = small_opts();
    o.backend = "cuda";
    o.accum = 4;
    o.steps = 4;
    o.warmup = 1;
    o.print_every = 2;
    o.peak_tflops = 1e-4;
    o.log_path = log;
    sleepy_calls = 0;
    slow_from = 2 * o.accum + 1; /* step 3's first forward pass */
    train_set_gpu_backend(open_sleepy);
    train_result_t r;
    int rc = train_run(&o, &r);
    train_set_gpu_backend(NULL);
    assert_int_equal(rc, 0);
    /* Tokens over the slept time: of a fast step, a slow one, and the run's 2 of each. */
    const double fast = (double)o.batch * o.seq / (o.accum * 0.010), slow = fast / 4;
    const double run = 4 / (2 / fast + 2 / slow);
    const double flops_tok = model_flops_per_token(&o.cfg, o.seq);
    print_message("  %.0f tok/s (at most %.0f), MFU %.4g\n", r.tokens_per_s, run, r.mfu);
    assert_true(r.tokens_per_s <= run && r.tokens_per_s > 0.3 * run);
    assert_true(fabs(r.mfu - flops_tok * r.tokens_per_s / (o.peak_tflops * 1e12)) < 1e-9 * r.mfu);
    const char *csv = slurp(log);
    for (int step = 1; step <= o.steps; step++) {
        const double tps = log_field(csv, step, 5), mfu = log_field(csv, step, 6), most = step <= 2 ? fast : slow;
        print_message("  step %d: %.0f tok/s (at most %.0f)\n", step, tps, most);
        assert_true(tps <= most * 1.0001 && tps > 0.3 * most);
        assert_true(fabs(mfu - flops_tok * tps / (o.peak_tflops * 1e12)) < 1e-3 * mfu);
    }
}

/* The loss log, row by row: the CSV header names the columns in order; each
 * row's lr is the schedule's for that step (the step is 1-based in the log,
 * 0-based in train_lr_at()); the last row's train and eval losses are the
 * run's result. The same run logged as JSON has the same numbers under the
 * same keys, one object a line, separated by commas, in one array. A
 * --log-format names the format whatever the file is called. */
static void test_log_rows(void **state) {
    (void)state;
    static char csv_path[512], json_path[512], csv_text[1 << 16];
    snprintf(csv_path, sizeof csv_path, "%s", path("loss.csv"));
    snprintf(json_path, sizeof json_path, "%s", path("loss.json"));
    train_opts_t o = small_opts();
    o.steps = 6;
    o.warmup = 2;
    o.lr = 0.0123456789; /* rates that need all six digits of %.6g */
    o.min_lr = 0.00123456789;
    o.eval_every = 4;
    o.log_path = csv_path;
    train_result_t r;
    assert_int_equal(train_run(&o, &r), 0);
    snprintf(csv_text, sizeof csv_text, "%s", slurp(csv_path));
    const char *header = "step,lr,train_loss,eval_loss,grad_norm,tokens_per_s,mfu\n";
    assert_memory_equal(csv_text, header, strlen(header));
    for (int step = 1; step <= o.steps; step++) {
        const double lr = train_lr_at(&o, step - 1);
        assert_true(log_field(csv_text, step, 0) == step);
        assert_true(fabs(log_field(csv_text, step, 1) - lr) <= 1e-5 * lr); /* %.6g */
    }
    assert_true(fabs(log_field(csv_text, 6, 2) - r.last_train_loss) <= 5e-7); /* %.6f */
    assert_true(fabs(log_field(csv_text, 6, 3) - r.eval_loss) <= 5e-7);

    o.log_path = json_path;
    assert_int_equal(train_run(&o, &r), 0);
    const char *json = slurp(json_path);
    assert_memory_equal(json, "[\n  {\"step\": 1, ", 15);
    const char *at = json + 2;
    for (int step = 1; step <= o.steps; step++) {
        int got_step = 0, used = 0;
        double lr, loss, gnorm, tps, mfu;
        char ev[32];
        assert_int_equal(sscanf(at, "  {\"step\": %d, \"lr\": %lf, \"train_loss\": %lf, \"eval_loss\": %31[^,], "
                                    "\"grad_norm\": %lf, \"tokens_per_s\": %lf, \"mfu\": %lf}%n",
                                &got_step, &lr, &loss, ev, &gnorm, &tps, &mfu, &used), 7);
        assert_true(used > 0);
        assert_int_equal(got_step, step);
        /* The same run: the same numbers as the CSV's, in the same formats. */
        assert_true(lr == log_field(csv_text, step, 1));
        assert_true(loss == log_field(csv_text, step, 2));
        assert_true(gnorm == log_field(csv_text, step, 4));
        if (step % 4 == 0 || step == o.steps) assert_true(atof(ev) == log_field(csv_text, step, 3));
        else assert_string_equal(ev, "null");
        at += used;
        assert_memory_equal(at, step < o.steps ? ",\n" : "\n]\n", step < o.steps ? 2 : 4);
        at += 2;
    }
    /* --log-format over the file name, both ways. */
    o.steps = 1;
    o.warmup = 1;
    o.log_format = "csv";
    assert_int_equal(train_run(&o, NULL), 0);
    assert_memory_equal(slurp(json_path), header, strlen(header));
    o.log_path = csv_path;
    o.log_format = "json";
    assert_int_equal(train_run(&o, NULL), 0);
    assert_memory_equal(slurp(csv_path), "[\n  {\"step\": 1, ", 15);
}

/* Writes text to p (replacing it); 0 on success. */
static int write_text(const char *p, const char *text, size_t n) {
    FILE *f = fopen(p, "wb");
    if (!f) return -1;
    size_t w = fwrite(text, 1, n, f);
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

/* A resumed run adds to the log of the run instead of emptying it: the rows up to the
 * checkpoint's step stay, rows an earlier resume wrote past it (trained again now) go, and the
 * log ends as the uninterrupted run's (but for the timings). A row a crash cut short is dropped,
 * in both formats, and the JSON log is still one array. A file that is not a log of the format
 * is refused and left as it was. */
static void test_resume_keeps_the_log(void **state) {
    (void)state;
    static char full[1 << 16], csv[512], json[512];
    snprintf(csv, sizeof csv, "%s", path("loss.csv"));
    snprintf(json, sizeof json, "%s", path("loss.json"));
    train_opts_t o = small_opts();
    o.steps = 12;
    o.eval_every = 4;
    o.log_path = csv;
    assert_int_equal(train_run(&o, NULL), 0);
    snprintf(full, sizeof full, "%s", slurp(csv));
    /* Stopped after step 4; resumed from there to step 7; resumed again from step 4. */
    o.save_path = path("a.ckpt");
    o.stop_at = 4;
    assert_int_equal(train_run(&o, NULL), 0);
    o.resume_path = path("a.ckpt");
    o.save_path = path("b.ckpt");
    o.stop_at = 7;
    assert_int_equal(train_run(&o, NULL), 0);
    assert_int_equal(file_lines(csv), 1 + 7);
    o.stop_at = 0;
    assert_int_equal(train_run(&o, NULL), 0);
    const char *got = slurp(csv);
    assert_int_equal(file_lines(csv), 1 + 12);
    assert_memory_equal(got, full, strchr(full, '\n') - full + 1); /* one header */
    for (int step = 1; step <= 12; step++)
        for (int col = 0; col <= 4; col++) { /* not tokens/s and MFU: timings */
            double a = log_field(full, step, col), b = log_field(got, step, col);
            if (!(a == b || (isnan(a) && isnan(b))))
                fail_msg("step %d, column %d: %g in the uninterrupted run's log, %g in the resumed one's", step,
                         col, a, b);
        }

    /* A CSV row cut short (the run crashed while writing it) is not kept. */
    const char *row3 = strstr(full, "\n3,") + 1;
    assert_int_equal(write_text(csv, full, (size_t)(row3 - full) + 5), 0);
    assert_int_equal(train_run(&o, NULL), 0);
    got = slurp(csv);
    assert_memory_equal(got, full, (size_t)(row3 - full)); /* header, rows 1 and 2 */
    assert_memory_equal(got + (row3 - full), "5,", 2);
    assert_int_equal(file_lines(csv), 1 + 2 + 8);

    /* JSON: a log whose run crashed in row 3 (no "]"), resumed at step 4. */
    o.log_path = json;
    o.resume_path = NULL;
    o.save_path = NULL;
    assert_int_equal(train_run(&o, NULL), 0);
    snprintf(full, sizeof full, "%s", slurp(json));
    const char *j3 = strstr(full, ",\n  {\"step\": 3,");
    assert_non_null(j3);
    assert_int_equal(write_text(json, full, (size_t)(j3 - full) + 20), 0);
    o.resume_path = path("a.ckpt");
    o.save_path = path("b.ckpt");
    assert_int_equal(train_run(&o, NULL), 0);
    got = slurp(json);
    assert_memory_equal(got, full, (size_t)(j3 - full)); /* "[", rows 1 and 2 */
    assert_memory_equal(got + (j3 - full), ",\n  {\"step\": 5, ", 15);
    assert_null(strstr(got, "\"step\": 3,"));
    size_t n = strlen(got);
    assert_true(n > 4 && !strcmp(got + n - 4, "}\n]\n"));
    /* Resumed with a log that does not exist yet: a new one, from the step after. */
    remove(json);
    assert_int_equal(train_run(&o, NULL), 0);
    assert_memory_equal(slurp(json), "[\n  {\"step\": 5, ", 15);

    /* A log with no row up to the checkpoint (the run logged nothing before it): one header,
     * then the run's rows. */
    const char *bare = "step,lr,train_loss,eval_loss,grad_norm,tokens_per_s,mfu\n";
    o.log_path = csv;
    assert_int_equal(write_text(csv, bare, strlen(bare)), 0);
    assert_int_equal(train_run(&o, NULL), 0);
    got = slurp(csv);
    assert_memory_equal(got, bare, strlen(bare));
    assert_memory_equal(got + strlen(bare), "5,", 2);

    /* Not a log of the format: refused, and the file is as it was. */
    const char *other = "[\n  {\"step\": 1}\n]\n";
    o.log_path = csv;
    assert_int_equal(write_text(csv, other, strlen(other)), 0);
    assert_int_not_equal(train_run(&o, NULL), 0);
    assert_string_equal(slurp(csv), other);
    /* Rows the cut would lose are refused, the file left as it was (the checkpoint is at step 4):
     * a row up to step 4 after a line that is no row (a field that is no number, a JSON object
     * that is not one) or after a later step, and steps that do not go up. */
    static const char *const lose[] = {
        "1,0.1,5,,1,10,0.01\n2,0.1,x,,1,10,0.01\n3,0.1,5,,1,10,0.01\n",
        "1,0.1,5,,1,10,0.01\n2,0.1,5,,1,10,0.01,\n3,0.1,5,,1,10,0.01\n",
        "1,0.1,5,,1,10,0.01\n9,0.1,5,,1,10,0.01\n3,0.1,5,,1,10,0.01\n",
        "1,0.1,5,,1,10,0.01\n2,0.1,5,,1,10,0.01\n2,0.1,5,,1,10,0.01\n",
        "2,0.1,5,,1,10,0.01\n1,0.1,5,,1,10,0.01\n",
        "1,0.1,5,,1,10,0.01\n2,0.1,nan,,1,10,0.01\n3,0.1,5,,1,10,0.01\n",
    };
    static char text[1024];
    for (size_t i = 0; i < sizeof lose / sizeof *lose; i++) {
        snprintf(text, sizeof text, "%s%s", bare, lose[i]);
        assert_int_equal(write_text(csv, text, strlen(text)), 0);
        assert_int_not_equal(train_run(&o, NULL), 0);
        assert_string_equal(slurp(csv), text);
    }
    /* A NUL byte in a field ends strtod's string, not the field: "0.0", NUL, "1" is no number. */
    static const char nul_field[] = "1,0.1,5,,1,10,0.01\n2,0.1,0.0\0001,,1,10,0.01\n3,0.1,5,,1,10,0.01\n";
    memcpy(text, bare, strlen(bare));
    memcpy(text + strlen(bare), nul_field, sizeof nul_field - 1);
    size_t text_n = strlen(bare) + sizeof nul_field - 1;
    assert_int_equal(write_text(csv, text, text_n), 0);
    assert_int_not_equal(train_run(&o, NULL), 0);
    assert_memory_equal(slurp(csv), text, text_n);
    const char *jlose = "[\n  {\"step\": 1, \"lr\": 0.1},\n  {\"step\": 2, junk},\n  {\"step\": 3, \"lr\": 0.1}\n]\n";
    o.log_path = json;
    assert_int_equal(write_text(json, jlose, strlen(jlose)), 0);
    assert_int_not_equal(train_run(&o, NULL), 0);
    assert_string_equal(slurp(json), jlose);
    /* A line that is no row with no row to keep after it is cut off, as a crash's cut row is;
     * and an empty file (a run that stopped before its header) is a new log. */
    snprintf(text, sizeof text, "%s1,0.1,5,,1,10,0.01\n2,0.1,5,,1,10,0.01\nnot a row\n9,0.1,5,,1,10,0.01\n", bare);
    o.log_path = csv;
    assert_int_equal(write_text(csv, text, strlen(text)), 0);
    assert_int_equal(train_run(&o, NULL), 0);
    got = slurp(csv);
    assert_memory_equal(got, text, strlen(bare) + 2 * strlen("1,0.1,5,,1,10,0.01\n"));
    assert_memory_equal(got + strlen(bare) + 2 * strlen("1,0.1,5,,1,10,0.01\n"), "5,", 2);
    assert_int_equal(write_text(csv, "", 0), 0);
    assert_int_equal(train_run(&o, NULL), 0);
    assert_memory_equal(slurp(csv), bare, strlen(bare));
    assert_memory_equal(slurp(csv) + strlen(bare), "5,", 2);

    /* A folder is no log either: refused, and left there. */
    o.log_path = path("dir.csv");
    assert_int_equal(mkdir(o.log_path, 0755), 0);
    assert_int_not_equal(train_run(&o, NULL), 0);
    struct stat st;
    assert_true(stat(o.log_path, &st) == 0 && S_ISDIR(st.st_mode));
}

static void test_lr_schedule(void **state) {
    (void)state;
    train_opts_t o = train_opts_default();
    o.steps = 100;
    o.warmup = 10;
    o.lr = 1.0;
    o.min_lr = 0.1;
    assert_true(fabs(train_lr_at(&o, 0) - 0.1) < 1e-12);  /* 1/10 of the way up */
    assert_true(fabs(train_lr_at(&o, 9) - 1.0) < 1e-12);  /* warmup done */
    assert_true(fabs(train_lr_at(&o, 10) - 1.0) < 1e-12); /* cosine starts at the peak */
    assert_true(fabs(train_lr_at(&o, 99) - 0.1) < 1e-12); /* and ends at min_lr */
    assert_true(train_lr_at(&o, 50) < 1.0 && train_lr_at(&o, 50) > 0.1);
    /* Every step against the formula: (s+1)/10 of the peak while warming up, then
     * half a cosine over the 90 steps 10..99, from the peak to min_lr. */
    for (int s = 0; s < o.steps; s++) {
        const double want = s < 10 ? (s + 1) / 10.0 : 0.1 + 0.45 * (1.0 + cos(M_PI * (s - 10) / 89.0));
        assert_true(fabs(train_lr_at(&o, s) - want) < 1e-12);
    }
    /* No warmup: the first step is at the peak. */
    o.warmup = 0;
    assert_true(fabs(train_lr_at(&o, 0) - 1.0) < 1e-12);
    assert_true(fabs(train_lr_at(&o, 99) - 0.1) < 1e-12);
    /* One step after the warmup: no decay to spread, so it is at the peak (a cosine over
     * a span of 1 would divide 0 by 0). A warmup as long as the run peaks at the last step. */
    o.steps = 11;
    o.warmup = 10;
    assert_true(train_lr_at(&o, 10) == 1.0);
    o.steps = 10;
    assert_true(fabs(train_lr_at(&o, 9) - 1.0) < 1e-12);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lr_schedule),
        cmocka_unit_test(test_bad_configs),
        cmocka_unit_test(test_train_program_flags),
        cmocka_unit_test(test_each_config_error),
        cmocka_unit_test(test_adam_eps_must_be_positive),
        cmocka_unit_test(test_nan_stops_the_run),
        cmocka_unit_test(test_refuses_mismatched_or_corrupt_checkpoint),
        cmocka_unit_test(test_resume_with_nothing_to_do_is_refused),
        cmocka_unit_test(test_resume_refuses_each_changed_setting),
        cmocka_unit_test(test_resume_refuses_another_way_of_computing),
        cmocka_unit_test(test_resume_warns_on_another_library),
        cmocka_unit_test(test_eval_set_does_not_depend_on_accum),
        cmocka_unit_test(test_eval_set_is_not_trained_on),
        cmocka_unit_test(test_colliding_paths_are_refused),
        cmocka_unit_test(test_unwritable_save_fails_before_training),
        cmocka_unit_test(test_mfu_unknown_on_an_unknown_gpu),
        cmocka_unit_test(test_warmup_longer_than_steps_warns),
        cmocka_unit_test(test_text_data_entropy_rate_unknown),
        cmocka_unit_test(test_accum_gives_the_same_loss_and_grad_norm),
        cmocka_unit_test(test_eval_and_print_cadence),
        cmocka_unit_test(test_progress_lines_show_the_result),
        cmocka_unit_test(test_save_every_cadence),
        cmocka_unit_test(test_clip_reaches_the_update),
        cmocka_unit_test(test_cpu_update_clips_by_the_norm),
        cmocka_unit_test(test_cpu_update_passes_its_arguments),
        cmocka_unit_test(test_update_arguments),
        cmocka_unit_test(test_first_adam_step_moves_by_lr),
        cmocka_unit_test(test_tokens_per_s_and_mfu),
        cmocka_unit_test(test_log_rows),
        cmocka_unit_test(test_resume_keeps_the_log),
        cmocka_unit_test(test_resume_is_bit_identical),
        cmocka_unit_test(test_ci_run_reaches_entropy_rate),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
