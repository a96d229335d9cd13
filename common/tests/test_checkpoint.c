/* Checkpoint files: a round trip is exact (the device and the math library
 * too); a version-2 file, which does not record the library, still loads;
 * corruption, truncation, a foreign file, a version-1 file and every kind of
 * mismatch (the way of computing too) are refused with a message that names
 * it, and a refused load leaves the caller's arrays untouched; a save that
 * fails, or whose path has no room for ".tmp", leaves the checkpoint it would
 * replace as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "child.h"
#include "ckpt_v2.h"
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
    snprintf(m.backend, sizeof m.backend, "cpu");
    snprintf(m.precision, sizeof m.precision, "fp32");
    snprintf(m.attention, sizeof m.attention, "naive");
    snprintf(m.matmul, sizeof m.matmul, "openblas");
    snprintf(m.device, sizeof m.device, "CPU");
    snprintf(m.library, sizeof m.library, "OpenBLAS 0.3.21 core Haswell");
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
    assert_string_equal(got.backend, "cpu");
    assert_string_equal(got.precision, "fp32");
    assert_string_equal(got.attention, "naive");
    assert_string_equal(got.matmul, "openblas");
    assert_string_equal(got.device, "CPU");
    assert_string_equal(got.library, want.library);
    /* Written as the newest format: version 3, whose header ends with library[128]. */
    FILE *f = fopen(path, "rb");
    uint32_t head[2];
    assert_non_null(f);
    assert_int_equal(fseek(f, 8, SEEK_SET), 0);
    assert_int_equal(fread(head, 4, 2, f), 2);
    fclose(f);
    assert_int_equal(head[0], 3);
    assert_int_equal(head[1], CKPT_V2_HEADER_BYTES + CKPT_LIBRARY_LEN);
    /* The last 8 bytes are FNV-1a 64 of the rest, as the reference algorithm
     * has it (offset basis 0xcbf29ce484222325), so other programs can check
     * a file; the basis is pinned by its known value for "a". */
    assert_true(ckpt_v2_fnv1a(0xcbf29ce484222325ull, "a", 1) == 0xaf63dc4c8601ec8cull);
    f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t file[1 << 16];
    size_t n = fread(file, 1, sizeof file, f);
    fclose(f);
    assert_true(n > 8 && n < sizeof file);
    uint64_t stored;
    memcpy(&stored, file + n - 8, 8);
    assert_true(stored == ckpt_v2_fnv1a(0xcbf29ce484222325ull, file, n - 8));
}

/* The device and the library are recorded, not compared: the same kernels on
 * another GPU, or another cuBLAS or OpenBLAS version, are the same run to
 * within rounding (the training program warns). */
static void test_library_is_recorded_not_compared(void **state) {
    (void)state;
    ckpt_meta_t want = meta(), got;
    want.step = 0;
    snprintf(want.device, sizeof want.device, "another CPU");
    snprintf(want.library, sizeof want.library, "OpenBLAS 0.3.26 core SkylakeX");
    char err[1024];
    assert_int_equal(checkpoint_load(path, &want, &got, x, y, z, err, sizeof err), 0);
    assert_memory_equal(a, x, sizeof a);
    assert_string_equal(got.library, meta().library); /* the file's, not this run's */
}

/* Every name that fills its field (no terminating 0 in the file: a made or edited one)
 * comes back NUL-ended, one byte shorter, and never runs into the next field. */
static void test_full_names_come_back_ended(void **state) {
    (void)state;
    ckpt_meta_t full = meta(), got;
    memset(full.data_desc, 'd', sizeof full.data_desc);
    memset(full.backend, 'b', sizeof full.backend);
    memset(full.precision, 'p', sizeof full.precision);
    memset(full.attention, 'a', sizeof full.attention);
    memset(full.matmul, 'm', sizeof full.matmul);
    memset(full.device, 'v', sizeof full.device);
    memset(full.library, 'l', sizeof full.library);
    char fpath[300], err[1024];
    snprintf(fpath, sizeof fpath, "%s.full", path);
    assert_int_equal(checkpoint_save(fpath, &full, a, b, c, err, sizeof err), 0);
    memset(&got, 'z', sizeof got);
    int rc = checkpoint_read_meta(fpath, &got, err, sizeof err);
    remove(fpath);
    assert_int_equal(rc, 0);
    assert_int_equal(strlen(got.data_desc), sizeof got.data_desc - 1);
    assert_int_equal(strlen(got.backend), CKPT_NAME_LEN - 1);
    assert_int_equal(strlen(got.precision), CKPT_NAME_LEN - 1);
    assert_int_equal(strlen(got.attention), CKPT_NAME_LEN - 1);
    assert_int_equal(strlen(got.matmul), CKPT_NAME_LEN - 1);
    assert_int_equal(strlen(got.device), CKPT_DEVICE_LEN - 1);
    assert_int_equal(strlen(got.library), CKPT_LIBRARY_LEN - 1);
    assert_true(got.data_desc[0] == 'd' && got.matmul[0] == 'm' && got.device[0] == 'v');
}

/* A version-2 file (written here field by field, as the build before version 3
 * wrote it) loads: the same arrays and metadata, and an empty library, which
 * says that the file does not record one. Its checksum is still checked. */
static void test_version_2_still_loads(void **state) {
    (void)state;
    ckpt_meta_t m = meta(), want = meta(), got;
    want.step = 0;
    char v2[300], err[1024];
    snprintf(v2, sizeof v2, "%s.v2", path);
    assert_int_equal(write_checkpoint_v2(v2, &m, a, b, c), 0);
    memset(x, 0, sizeof x);
    memset(&got, 0x55, sizeof got);
    int rc = checkpoint_load(v2, &want, &got, x, y, z, err, sizeof err);
    if (rc) print_message("  %s\n", err);
    assert_int_equal(rc, 0);
    assert_memory_equal(a, x, sizeof a);
    assert_memory_equal(b, y, sizeof b);
    assert_memory_equal(c, z, sizeof c);
    assert_int_equal(got.step, 123);
    assert_string_equal(got.matmul, "openblas");
    assert_string_equal(got.device, "CPU");
    assert_string_equal(got.library, "");
    assert_int_equal(checkpoint_read_meta(v2, &got, err, sizeof err), 0);
    assert_string_equal(got.library, "");
    /* One flipped bit in its parameters: refused like any damaged file. */
    FILE *f = fopen(v2, "r+b");
    assert_non_null(f);
    fseek(f, CKPT_V2_HEADER_BYTES + 5, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, CKPT_V2_HEADER_BYTES + 5, SEEK_SET);
    fputc(ch ^ 1, f);
    fclose(f);
    rc = checkpoint_load(v2, &want, &got, x, y, z, err, sizeof err);
    remove(v2);
    print_message("  %s\n", err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "checksum mismatch"));
}

/* A checkpoint computed one way does not continue bit-identically another
 * way: each differing setting is named with both values and the flag that
 * matches the checkpoint. The cpu backend has no --attention or --matmul, so
 * from a cpu checkpoint the flag to pass is --backend cpu. */
static void test_compute_mismatch_names_the_setting(void **state) {
    (void)state;
    ckpt_meta_t want = meta(), got;
    char err[4096];
    snprintf(want.backend, sizeof want.backend, "emu");
    snprintf(want.precision, sizeof want.precision, "bf16 mixed");
    snprintf(want.attention, sizeof want.attention, "flash");
    snprintf(want.matmul, sizeof want.matmul, "tiled");
    memset(x, 0, sizeof x);
    assert_int_equal(checkpoint_load(path, &want, &got, x, y, z, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, "--backend: checkpoint cpu, this run emu (pass --backend cpu)"));
    assert_non_null(strstr(err, "precision: checkpoint fp32, this run bf16 mixed (pass --backend cpu)"));
    assert_non_null(strstr(err, "attention: checkpoint naive, this run flash (pass --backend cpu)"));
    assert_non_null(strstr(err, "matmul: checkpoint openblas, this run tiled (pass --backend cpu)"));
    assert_null(strstr(err, "--matmul")); /* not a flag of the cpu backend */
    for (int i = 0; i < NP; i++) assert_true(x[i] == 0.0f); /* untouched */

    /* Saved on the GPU backend: the same backend with another attention and matmul. */
    ckpt_meta_t gpu = meta();
    snprintf(gpu.backend, sizeof gpu.backend, "cuda");
    snprintf(gpu.precision, sizeof gpu.precision, "bf16 mixed");
    snprintf(gpu.attention, sizeof gpu.attention, "naive");
    snprintf(gpu.matmul, sizeof gpu.matmul, "mma");
    char gpath[300];
    snprintf(gpath, sizeof gpath, "%s.gpu", path);
    assert_int_equal(checkpoint_save(gpath, &gpu, a, b, c, err, sizeof err), 0);
    want = gpu;
    snprintf(want.attention, sizeof want.attention, "flash");
    snprintf(want.matmul, sizeof want.matmul, "cublas");
    int rc = checkpoint_load(gpath, &want, &got, x, y, z, err, sizeof err);
    print_message("  %s\n", err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "--attention: checkpoint naive, this run flash (pass --attention naive)"));
    assert_non_null(strstr(err, "--matmul: checkpoint mma, this run cublas (pass --matmul mma)"));
    assert_null(strstr(err, "--backend"));
    assert_null(strstr(err, "precision"));
    /* The same settings: it loads. */
    want.step = 0;
    snprintf(want.attention, sizeof want.attention, "naive");
    snprintf(want.matmul, sizeof want.matmul, "mma");
    rc = checkpoint_load(gpath, &want, &got, x, y, z, err, sizeof err);
    remove(gpath);
    assert_int_equal(rc, 0);
    assert_memory_equal(a, x, sizeof a);
    assert_string_equal(got.matmul, "mma");
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
    /* The whole message: the file, every difference in the order of the format, and what to do. */
    char expect[2048];
    snprintf(expect, sizeof expect, "%s does not match this run: --d-model: checkpoint 64, this run 128; --lr: "
             "checkpoint 0.01, this run 0.003; data: checkpoint 'markov seed=1 states=256 branch=2', this run "
             "'text bytes=10'; resume with the flags it was written with", path);
    assert_string_equal(err, expect);
}

/* Every compared field, changed alone, is named alone, by the flag that sets it, with the
 * checkpoint's value first. The step, the device and the library are not compared. */
static void test_every_field_is_compared(void **state) {
    (void)state;
    enum { I32, U64, F32, F64 };
    static const struct { const char *flag; size_t at; int kind; } fields[] = {
        {"vocab", offsetof(ckpt_meta_t, cfg.vocab), I32},
        {"--d-model", offsetof(ckpt_meta_t, cfg.d_model), I32},
        {"--layers", offsetof(ckpt_meta_t, cfg.n_layers), I32},
        {"--heads", offsetof(ckpt_meta_t, cfg.n_heads), I32},
        {"--ffn", offsetof(ckpt_meta_t, cfg.d_ff), I32},
        {"--max-seq", offsetof(ckpt_meta_t, cfg.max_seq), I32},
        {"rope theta", offsetof(ckpt_meta_t, cfg.rope_theta), F32},
        {"norm eps", offsetof(ckpt_meta_t, cfg.norm_eps), F32},
        {"parameter count", offsetof(ckpt_meta_t, n_params), U64},
        {"--seed", offsetof(ckpt_meta_t, seed), U64},
        {"--batch", offsetof(ckpt_meta_t, batch), I32},
        {"--seq", offsetof(ckpt_meta_t, seq_len), I32},
        {"--accum", offsetof(ckpt_meta_t, accum), I32},
        {"--steps", offsetof(ckpt_meta_t, total_steps), I32},
        {"--warmup", offsetof(ckpt_meta_t, warmup), I32},
        {"--lr", offsetof(ckpt_meta_t, lr), F64},
        {"--min-lr", offsetof(ckpt_meta_t, min_lr), F64},
        {"--weight-decay", offsetof(ckpt_meta_t, weight_decay), F64},
        {"--beta1", offsetof(ckpt_meta_t, beta1), F64},
        {"--beta2", offsetof(ckpt_meta_t, beta2), F64},
        {"--adam-eps", offsetof(ckpt_meta_t, adam_eps), F64},
        {"--clip", offsetof(ckpt_meta_t, clip), F64},
    };
    const ckpt_meta_t got = meta();
    char err[1024], expect[256];
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        ckpt_meta_t want = got;
        void *p = (char *)&want + fields[i].at;
        const void *q = (const char *)&got + fields[i].at;
        switch (fields[i].kind) { /* one more than the checkpoint's */
        case I32:
            *(int *)p += 1;
            snprintf(expect, sizeof expect, "%s: checkpoint %d, this run %d", fields[i].flag, *(const int *)q,
                     *(int *)p);
            break;
        case U64:
            *(uint64_t *)p += 1;
            snprintf(expect, sizeof expect, "%s: checkpoint %llu, this run %llu", fields[i].flag,
                     (unsigned long long)*(const uint64_t *)q, (unsigned long long)*(uint64_t *)p);
            break;
        case F32:
            *(float *)p += 1.0f;
            snprintf(expect, sizeof expect, "%s: checkpoint %g, this run %g", fields[i].flag,
                     (double)*(const float *)q, (double)*(float *)p);
            break;
        default:
            *(double *)p += 1.0;
            snprintf(expect, sizeof expect, "%s: checkpoint %g, this run %g", fields[i].flag, *(const double *)q,
                     *(double *)p);
        }
        err[0] = '\0';
        assert_int_equal(checkpoint_compare_meta(&want, &got, err, sizeof err), -1);
        assert_string_equal(err, expect);
    }
    ckpt_meta_t want = got;
    want.step = 0;
    snprintf(want.device, sizeof want.device, "another device");
    snprintf(want.library, sizeof want.library, "another library");
    assert_int_equal(checkpoint_compare_meta(&want, &got, err, sizeof err), 0);
}

/* Values that differ past %g's six digits are printed with as many as tell them apart:
 * "--lr: checkpoint 0.01, this run 0.01" would name the field but not the difference. */
static void test_close_values_are_told_apart(void **state) {
    (void)state;
    ckpt_meta_t want = meta(), got = meta();
    char err[1024];
    want.lr = 0.01 * (1 + 1e-9);
    assert_int_equal(checkpoint_compare_meta(&want, &got, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_string_equal(err, "--lr: checkpoint 0.01, this run 0.01000000001");
    want.lr = nextafter(0.01, 1.0); /* the next double: 17 digits tell them apart */
    assert_int_equal(checkpoint_compare_meta(&want, &got, err, sizeof err), -1);
    assert_string_equal(err, "--lr: checkpoint 0.01, this run 0.010000000000000002");
    want = meta();
    want.cfg.rope_theta = nextafterf(got.cfg.rope_theta, INFINITY);
    assert_int_equal(checkpoint_compare_meta(&want, &got, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_string_equal(err, "rope theta: checkpoint 10000, this run 10000.001");
}

/* A text file's description is "text bytes=N fnv1a=H". The same length with another hash
 * may be an edited file or a checkpoint from before format version 3, and the message says
 * so; another length, or another kind of source, is only a different data source. */
static void test_data_mismatch_hint(void **state) {
    (void)state;
    ckpt_meta_t want = meta(), got = meta();
    char err[1024];
    const char *hint = "a file of the same length with other bytes";
    snprintf(got.data_desc, sizeof got.data_desc, "text bytes=100 fnv1a=0123456789abcdef");
    snprintf(want.data_desc, sizeof want.data_desc, "text bytes=100 fnv1a=f123456789abcdef");
    assert_int_equal(checkpoint_compare_meta(&want, &got, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, "data: checkpoint 'text bytes=100 fnv1a=0123456789abcdef', this run "
                                "'text bytes=100 fnv1a=f123456789abcdef' (a file of the same length"));
    assert_non_null(strstr(err, "format version 3"));
    snprintf(want.data_desc, sizeof want.data_desc, "text bytes=101 fnv1a=0123456789abcdef");
    assert_int_equal(checkpoint_compare_meta(&want, &got, err, sizeof err), -1);
    assert_null(strstr(err, hint));
    snprintf(want.data_desc, sizeof want.data_desc, "text bytes=1000 fnv1a=f123456789abcdef");
    assert_int_equal(checkpoint_compare_meta(&want, &got, err, sizeof err), -1);
    assert_null(strstr(err, hint));
    got = meta();
    snprintf(want.data_desc, sizeof want.data_desc, "markov seed=2 states=256 branch=2");
    assert_int_equal(checkpoint_compare_meta(&want, &got, err, sizeof err), -1);
    assert_null(strstr(err, hint));
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
static void old_version(FILE *f) {
    fseek(f, 8, SEEK_SET);
    fputc(1, f);
}
/* Version 2 with version 3's header size: neither layout. */
static void version_2_long_header(FILE *f) {
    fseek(f, 8, SEEK_SET);
    fputc(2, f);
}
/* The magic's terminating 0 is part of it. */
static void bad_magic_end(FILE *f) {
    fseek(f, 7, SEEK_SET);
    fputc('X', f);
}
/* Version 0 was never written: it is unknown, not old. */
static void version_0(FILE *f) {
    fseek(f, 8, SEEK_SET);
    fputc(0, f);
}
static long cut_at;
static void cut_file(FILE *f) { assert_int_equal(ftruncate(fileno(f), cut_at), 0); }

/* Bytes from the magic to n_params: magic, version, header bytes, six i32, two f64. */
#define N_PARAMS_AT (16 + 6 * 4 + 2 * 8)

/* n_params = 2^62 + 1000: at 12 bytes a parameter, its arrays' size wraps around 2^64
 * to the 12,000 bytes of 1000 parameters, so the file has the size its header implies.
 * The checksum is made again over the edit, as in a made file: only the bound on
 * n_params refuses it, and the message must not compare the file's size with itself. */
static void wrapping_n_params(FILE *f) {
    static uint8_t file[1 << 16];
    size_t n = fread(file, 1, sizeof file, f);
    assert_true(n > N_PARAMS_AT + 8 && n < sizeof file);
    uint64_t np = ((uint64_t)1 << 62) + NP;
    memcpy(file + N_PARAMS_AT, &np, 8);
    uint64_t sum = ckpt_v2_fnv1a(0xcbf29ce484222325ull, file, n - 8);
    memcpy(file + n - 8, &sum, 8);
    rewind(f);
    assert_int_equal(fwrite(file, 1, n, f), n);
}

static void test_damage_is_refused(void **state) {
    (void)state;
    damaged(flip_param_byte, "checksum mismatch");
    damaged(truncate_file, "truncated or corrupt");
    damaged(bad_magic, "bad magic");
    damaged(bad_version, "format version 99");
    /* Version 1 did not record how it was computed: refused, with what to do. */
    damaged(old_version, "format version 1 was written by an older build");
    damaged(old_version, "resume it with the build that wrote it, or train again");
    damaged(old_version, "this build reads versions 2 to 3");
    damaged(version_2_long_header, "format version 2 (header 636 bytes); this program reads version 3 "
            "(header 636 bytes) and version 2 (header 508 bytes)");
    damaged(bad_magic_end, "bad magic");
    damaged(version_0, "format version 0 (header 636 bytes); this program reads version 3");
    /* Cut at each boundary the reader checks: the 16 bytes of magic, version and header
     * size; the header and checksum of the file's version; the size the header implies. */
    cut_at = 0;
    damaged(cut_file, "0 bytes is too short to be a checkpoint (the header alone is 508 or more); "
            "if it was copied, copy it again");
    cut_at = 15;
    damaged(cut_file, "15 bytes is too short to be a checkpoint");
    cut_at = 16;
    damaged(cut_file, "truncated: 16 bytes, less than the 636-byte header and checksum; if it was copied");
    cut_at = 100;
    damaged(cut_file, "truncated: 100 bytes, less than the 636-byte header and checksum");
    cut_at = 636 + 7;
    damaged(cut_file, "truncated: 643 bytes, less than the 636-byte header and checksum");
    cut_at = 636 + 8;
    damaged(cut_file, "644 bytes, but a checkpoint of 1000 parameters has 12644 bytes");
    damaged(wrapping_n_params, "its header gives 4611686018427388904 parameters, more than a checkpoint may "
            "hold (2^40): the file is corrupt; if it was copied");
    ckpt_meta_t m = meta(), got;
    char err[512];
    assert_int_equal(checkpoint_load("no/such/dir/x.ckpt", &m, &got, x, y, z, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
    assert_int_equal(checkpoint_read_meta(path, &got, err, sizeof err), 0);
    assert_int_equal(got.n_params, NP);
}

/* A file that is not a checkpoint is refused from its first bytes, not read
 * whole first: here a sparse 1 TiB file, whose read would have needed 1 TiB
 * of memory (the load ran in a child, so a crash shows as a failure). */
static int load_huge_in_child(void *arg) {
    const char *p = arg;
    ckpt_meta_t m = meta(), got;
    char err[1024];
    if (checkpoint_load(p, &m, &got, x, y, z, err, sizeof err) == 0) return 1;
    printf("%s\n", err);
    return 0;
}

/* A file with a NaN hyperparameter and a valid checksum (no run writes one;
 * only a made or edited file holds it) is refused as such, naming the field,
 * rather than as a mismatch "--lr: checkpoint nan, this run nan" that no flag
 * can fix, and read_meta refuses it too. */
static void test_non_finite_field_is_refused(void **state) {
    (void)state;
    ckpt_meta_t m = meta(), got;
    m.lr = NAN;
    char odd[300], err[1024];
    snprintf(odd, sizeof odd, "%s.nan", path);
    assert_int_equal(checkpoint_save(odd, &m, a, b, c, err, sizeof err), 0);
    int rc_meta = checkpoint_read_meta(odd, &got, err, sizeof err);
    memset(x, 0, sizeof x);
    int rc = checkpoint_load(odd, &m, &got, x, y, z, err, sizeof err);
    remove(odd);
    print_message("  %s\n", err);
    assert_int_equal(rc_meta, -1);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "--lr is not a finite number"));
    assert_null(strstr(err, "this run"));
    for (int i = 0; i < NP; i++) assert_true(x[i] == 0.0f); /* untouched */
}

/* Every floating-point field, NaN or infinite of either sign, is refused by its own name. */
static void test_every_non_finite_field_is_named(void **state) {
    (void)state;
    static const struct { const char *name; size_t at; int is_float; } fields[] = {
        {"rope theta", offsetof(ckpt_meta_t, cfg.rope_theta), 1},
        {"norm eps", offsetof(ckpt_meta_t, cfg.norm_eps), 1},
        {"--lr", offsetof(ckpt_meta_t, lr), 0},
        {"--min-lr", offsetof(ckpt_meta_t, min_lr), 0},
        {"--weight-decay", offsetof(ckpt_meta_t, weight_decay), 0},
        {"--beta1", offsetof(ckpt_meta_t, beta1), 0},
        {"--beta2", offsetof(ckpt_meta_t, beta2), 0},
        {"--adam-eps", offsetof(ckpt_meta_t, adam_eps), 0},
        {"--clip", offsetof(ckpt_meta_t, clip), 0},
    };
    const double odd[] = {NAN, INFINITY, -INFINITY};
    char file[300], err[1024], expect[128];
    snprintf(file, sizeof file, "%s.odd", path);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++) {
            ckpt_meta_t m = meta(), got;
            void *p = (char *)&m + fields[i].at;
            if (fields[i].is_float) *(float *)p = (float)odd[k];
            else *(double *)p = odd[k];
            assert_int_equal(checkpoint_save(file, &m, a, b, c, err, sizeof err), 0);
            int rc = checkpoint_read_meta(file, &got, err, sizeof err);
            remove(file);
            assert_int_equal(rc, -1);
            snprintf(expect, sizeof expect, "the checkpoint's %s is not a finite number", fields[i].name);
            assert_non_null(strstr(err, expect));
        }
    }
}

/* A step past the run's --steps (no run saves one; a made file may hold 2^32 + 5, which the
 * trainer's int counter would read as 5) is refused, by read_meta and load alike; the last
 * step itself loads, as every finished run's final checkpoint does. */
static void test_step_past_the_run_is_refused(void **state) {
    (void)state;
    char file[300], err[1024];
    snprintf(file, sizeof file, "%s.step", path);
    const uint64_t steps[] = {501, (1ull << 32) + 5};
    for (size_t i = 0; i < 2; i++) {
        ckpt_meta_t m = meta(), got; /* total_steps 500 */
        m.step = steps[i];
        assert_int_equal(checkpoint_save(file, &m, a, b, c, err, sizeof err), 0);
        int rc_meta = checkpoint_read_meta(file, &got, err, sizeof err);
        memset(x, 0, sizeof x);
        int rc = checkpoint_load(file, &m, &got, x, y, z, err, sizeof err);
        print_message("  %s\n", err);
        assert_int_equal(rc_meta, -1);
        assert_int_equal(rc, -1);
        assert_non_null(strstr(err, "of --steps 500, past the end of its run"));
        for (int k = 0; k < NP; k++) assert_true(x[k] == 0.0f); /* untouched */
    }
    /* A negative --steps (no run has one) is no end at all: cast to the step's unsigned type it
     * is 2^64 - 1, an end no step passes, so it is refused by its sign, even at step 0. */
    ckpt_meta_t m = meta(), got;
    m.step = 0;
    m.total_steps = -1;
    assert_int_equal(checkpoint_save(file, &m, a, b, c, err, sizeof err), 0);
    assert_int_equal(checkpoint_read_meta(file, &got, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, "at step 0 of --steps -1, past the end of its run"));
    m = meta();
    m.step = 500;
    assert_int_equal(checkpoint_save(file, &m, a, b, c, err, sizeof err), 0);
    int rc = checkpoint_load(file, &m, &got, x, y, z, err, sizeof err);
    remove(file);
    assert_int_equal(rc, 0);
    assert_int_equal(got.step, 500);
}

static void test_large_other_file_is_refused_unread(void **state) {
    (void)state;
    char big[300];
    snprintf(big, sizeof big, "%s.big", path);
    FILE *f = fopen(big, "wb");
    assert_non_null(f);
    fputs("text, not a checkpoint\n", f);
    if (ftruncate(fileno(f), (off_t)1 << 40) != 0) {
        fclose(f);
        remove(big);
        skip(); /* a file system without sparse files */
    }
    fclose(f);
    child_result_t r = run_in_child(load_huge_in_child, big);
    print_message("  %s", r.out);
    remove(big);
    assert_true(r.exited && r.exit_code == 0);
    assert_non_null(strstr(r.out, "bad magic"));
}

/* A checkpoint whose header is right but whose size is not (grown by a copy
 * gone wrong to a sparse 1 TiB) is refused from its header, with what to do,
 * before it is read: reading it whole first needed 1 TiB of memory, and the
 * allocation ended the program. */
static void test_grown_checkpoint_is_refused_unread(void **state) {
    (void)state;
    char big[300];
    snprintf(big, sizeof big, "%s.grown", path);
    ckpt_meta_t m = meta();
    char err[512];
    assert_int_equal(checkpoint_save(big, &m, a, b, c, err, sizeof err), 0);
    if (truncate(big, (off_t)1 << 40) != 0) {
        remove(big);
        skip(); /* a file system without sparse files */
    }
    child_result_t r = run_in_child(load_huge_in_child, big);
    print_message("  %s", r.out);
    remove(big);
    assert_true(r.exited && r.exit_code == 0);
    assert_non_null(strstr(r.out, "but a checkpoint of 1000 parameters has"));
    assert_non_null(strstr(r.out, "if it was copied, copy it again"));
}

/* Load a path in a child that the alarm ends if opening blocks; exit 0 if
 * the load was refused, 1 if it succeeded; the message goes to stdout. */
static const char *child_path;
static int load_in_child(void *arg) {
    (void)arg;
    alarm(10);
    ckpt_meta_t m = meta(), got;
    char err[1024];
    if (checkpoint_load(child_path, &m, &got, x, y, z, err, sizeof err) == 0) return 1;
    printf("%s\n", err);
    return 0;
}

static int exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

/* --resume DIR got LONG_MAX from ftell and died allocating it; --resume FIFO
 * blocked forever in fopen. Both are refused from stat() before opening. */
static void test_load_path_must_be_a_regular_file(void **state) {
    (void)state;
    char dir[300], fifo[320];
    snprintf(dir, sizeof dir, "%s.dir", path);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    child_path = dir;
    child_result_t r = run_in_child(load_in_child, NULL);
    print_message("  %s", r.out);
    assert_true(r.exited && r.exit_code == 0);
    assert_non_null(strstr(r.out, "is a directory; give a checkpoint file"));
    child_path = fifo;
    r = run_in_child(load_in_child, NULL);
    print_message("  %s", r.out);
    if (r.signal == SIGALRM) fail_msg("checkpoint_load blocked on a FIFO");
    assert_true(r.exited && r.exit_code == 0);
    assert_non_null(strstr(r.out, "is a FIFO (named pipe), not a regular file"));
    remove(fifo);
    rmdir(dir);
}

/* A save whose rename fails (here: the path is a directory) reports it and
 * removes its path.tmp instead of leaving a stray full-size file behind. */
static void test_failed_rename_removes_tmp(void **state) {
    (void)state;
    char dir[300], tmp[320];
    snprintf(dir, sizeof dir, "%s.dir", path);
    snprintf(tmp, sizeof tmp, "%s.tmp", dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    ckpt_meta_t m = meta();
    char err[1024];
    assert_int_equal(checkpoint_save(dir, &m, a, b, c, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, "is a directory"));
    int left = exists(tmp);
    remove(tmp);
    rmdir(dir);
    assert_false(left);
}

/* Save path over a good checkpoint in a child whose files may not grow past `limit` bytes
 * (a disk that fills up mid-save); exit 0 if the save was refused, 1 if it succeeded. */
static long fsize_limit;
static int save_over_limit_in_child(void *arg) {
    const char *p = arg;
    signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead of ending the process */
    struct rlimit rl = {(rlim_t)fsize_limit, (rlim_t)fsize_limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 2;
    ckpt_meta_t m = meta();
    m.step = 456;
    char err[1024];
    if (checkpoint_save(p, &m, a, b, c, err, sizeof err) == 0) return 1;
    printf("%s\n", err);
    return 0;
}

/* A save that cannot write the whole file (the disk fills up: here, a file-size limit)
 * says so, naming the file, removes its path.tmp and leaves the checkpoint it was to
 * replace as it was. The limit cuts it early (an fwrite fails) and 4 bytes before the
 * end (only the flush in fclose fails). */
static void test_failed_write_keeps_the_old_checkpoint(void **state) {
    (void)state;
    char file[300], tmp[320], err[1024];
    snprintf(file, sizeof file, "%s.full-disk", path);
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    const long size = 636 + 3 * NP * (long)sizeof(float) + 8; /* header, arrays, checksum */
    const long limits[] = {1000, size - 4};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        ckpt_meta_t m = meta(), got;
        assert_int_equal(checkpoint_save(file, &m, a, b, c, err, sizeof err), 0);
        fsize_limit = limits[i];
        child_result_t r = run_in_child(save_over_limit_in_child, file);
        print_message("  %s", r.out);
        int left = exists(tmp);
        remove(tmp);
        int rc = checkpoint_load(file, &m, &got, x, y, z, err, sizeof err);
        remove(file);
        assert_true(r.exited && r.exit_code == 0);
        assert_non_null(strstr(r.out, file));
        assert_non_null(strstr(r.out, "writing the checkpoint failed (File too large); is the disk full?"));
        assert_false(left);
        assert_int_equal(rc, 0); /* the old one, whole */
        assert_int_equal(got.step, 123);
        assert_memory_equal(a, x, sizeof a);
    }
    /* A folder that does not exist: the message names the file it could not create and why. */
    ckpt_meta_t m = meta();
    assert_int_equal(checkpoint_save("no/such/dir/x.ckpt", &m, a, b, c, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, "no/such/dir/x.ckpt.tmp: cannot create checkpoint (No such file or directory)"));
}

/* What the train program runs before its first step: can path be written? */
static void test_check_writable(void **state) {
    (void)state;
    char err[1024], fresh[300], tmp[320], dir[300];
    /* A new file in a writable folder: yes, and nothing is left behind. */
    snprintf(fresh, sizeof fresh, "%s.new", path);
    snprintf(tmp, sizeof tmp, "%s.tmp", fresh);
    assert_int_equal(checkpoint_check_writable(fresh, err, sizeof err), 0);
    assert_false(exists(fresh));
    assert_false(exists(tmp));
    /* An existing checkpoint (to be replaced at the end): yes, and it is untouched. */
    ckpt_meta_t got;
    assert_int_equal(checkpoint_check_writable(path, err, sizeof err), 0);
    assert_int_equal(checkpoint_read_meta(path, &got, err, sizeof err), 0);
    /* A folder that does not exist, and a directory in place of the file: no. */
    assert_int_equal(checkpoint_check_writable("no/such/dir/x.ckpt", err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, "cannot create"));
    assert_non_null(strstr(err, "No such file or directory"));
    snprintf(dir, sizeof dir, "%s.dir", path);
    assert_int_equal(mkdir(dir, 0700), 0);
    int rc = checkpoint_check_writable(dir, err, sizeof err);
    rmdir(dir);
    print_message("  %s\n", err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "is a directory"));
}

/* A path of exactly len characters naming dir/ckpt: dir, then "./" and "/" to pad it. */
static void long_path(char *out, size_t len, const char *dir) {
    size_t n = (size_t)snprintf(out, len + 1, "%s/", dir);
    while (n + 2 + 4 <= len) n += (size_t)snprintf(out + n, len + 1 - n, "./");
    while (n + 4 < len) n += (size_t)snprintf(out + n, len + 1 - n, "/");
    snprintf(out + n, len + 1 - n, "ckpt");
    assert_int_equal(strlen(out), len);
}

/* path.tmp must fit in the 4095 characters a path may have. A longer path is refused by
 * both functions: its path.tmp was cut to fit, and at 4095 characters the cut name was
 * path itself, so the check before a run deleted the checkpoint there and a save
 * overwrote it in place. 4091 characters, path.tmp 4095, still save and load. */
static void test_path_too_long_for_its_tmp(void **state) {
    (void)state;
    char dir[300], file[320], err[1024];
    static char lp[4096];
    snprintf(dir, sizeof dir, "%s.long", path);
    snprintf(file, sizeof file, "%s/ckpt", dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    ckpt_meta_t m = meta(), got;
    assert_int_equal(checkpoint_save(file, &m, a, b, c, err, sizeof err), 0);
    long_path(lp, 4095, dir);
    int rc_check = checkpoint_check_writable(lp, err, sizeof err);
    print_message("  %s\n", err);
    int refused_check = rc_check == -1 && strstr(err, "too long") != NULL;
    ckpt_meta_t later = meta();
    later.step = 456;
    int rc_save = checkpoint_save(lp, &later, a, b, c, err, sizeof err);
    int refused_save = rc_save == -1 && strstr(err, "too long") != NULL;
    int rc_old = checkpoint_read_meta(file, &got, err, sizeof err);
    long_path(lp, 4092, dir);
    int rc_4092 = checkpoint_check_writable(lp, err, sizeof err);
    long_path(lp, 4091, dir);
    int rc_4091 = checkpoint_save(lp, &later, a, b, c, err, sizeof err);
    int rc_4091_load = checkpoint_read_meta(lp, &m, err, sizeof err);
    remove(file);
    rmdir(dir);
    assert_true(refused_check);
    assert_true(refused_save);
    assert_int_equal(rc_old, 0); /* the checkpoint there is still whole, and the old one */
    assert_int_equal(got.step, 123);
    assert_int_equal(rc_4092, -1);
    assert_int_equal(rc_4091, 0);
    assert_int_equal(rc_4091_load, 0);
    assert_int_equal(m.step, 456);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_library_is_recorded_not_compared),
        cmocka_unit_test(test_full_names_come_back_ended),
        cmocka_unit_test(test_version_2_still_loads),
        cmocka_unit_test(test_mismatch_names_the_field),
        cmocka_unit_test(test_every_field_is_compared),
        cmocka_unit_test(test_close_values_are_told_apart),
        cmocka_unit_test(test_data_mismatch_hint),
        cmocka_unit_test(test_compute_mismatch_names_the_setting),
        cmocka_unit_test(test_damage_is_refused),
        cmocka_unit_test(test_non_finite_field_is_refused),
        cmocka_unit_test(test_every_non_finite_field_is_named),
        cmocka_unit_test(test_step_past_the_run_is_refused),
        cmocka_unit_test(test_load_path_must_be_a_regular_file),
        cmocka_unit_test(test_large_other_file_is_refused_unread),
        cmocka_unit_test(test_grown_checkpoint_is_refused_unread),
        cmocka_unit_test(test_failed_rename_removes_tmp),
        cmocka_unit_test(test_failed_write_keeps_the_old_checkpoint),
        cmocka_unit_test(test_check_writable),
        cmocka_unit_test(test_path_too_long_for_its_tmp),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
