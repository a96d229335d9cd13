/* The Markov source (exact stationary distribution and entropy rate, samples
 * that follow the table), text files, and batches as pure functions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"
#include "data.h"
#include "memory.h"

static void test_markov_table(void **state) {
    (void)state;
    markov_t m;
    assert_int_equal(markov_init(&m, 5, 256, 3, NULL, 0), 0);
    const int S = 256, K = 3;
    double h = 0;
    for (int s = 0; s < S; s++) {
        double sum = 0;
        for (int j = 0; j < K; j++) {
            sum += m.prob[s * K + j];
            h -= m.stationary[s] * m.prob[s * K + j] * log(m.prob[s * K + j]);
        }
        assert_true(fabs(sum - 1.0) < 1e-12);
        assert_int_equal(m.next[s * K], (s + 1) % S);
    }
    /* pi P = pi to the power iteration's tolerance */
    double *pp = host_calloc(S, sizeof(double)), total = 0;
    for (int s = 0; s < S; s++)
        for (int j = 0; j < K; j++) pp[m.next[s * K + j]] += m.stationary[s] * m.prob[s * K + j];
    for (int s = 0; s < S; s++) {
        assert_true(fabs(pp[s] - m.stationary[s]) < 1e-12);
        total += m.stationary[s];
    }
    assert_true(fabs(total - 1.0) < 1e-12);
    assert_true(fabs(h - m.entropy_rate) < 1e-12);
    /* Rows are Dirichlet(1): a row of K = 3 has mean entropy H_3 - 1 = 5/6 nats
     * (sd 0.2, so 0.012 over 256 rows); normalised uniforms would give 0.94. */
    double row_h = 0;
    for (int s = 0; s < S; s++)
        for (int j = 0; j < K; j++) row_h -= m.prob[s * K + j] * log(m.prob[s * K + j]) / S;
    assert_true(fabs(row_h - 5.0 / 6.0) < 0.05);
    host_free(pp);
    markov_free(&m);
    /* The ends of both ranges are accepted: 2 states, and every state a successor. */
    assert_int_equal(markov_init(&m, 5, 2, 2, NULL, 0), 0);
    markov_free(&m);
    assert_int_equal(markov_init(&m, 5, 8, 8, NULL, 0), 0);
    markov_free(&m);
    /* One successor: a deterministic cycle, uniform stationary, entropy 0. */
    assert_int_equal(markov_init(&m, 5, 16, 1, NULL, 0), 0);
    assert_true(m.entropy_rate == 0.0);
    for (int s = 0; s < 16; s++) assert_true(fabs(m.stationary[s] - 1.0 / 16) < 1e-12);
    markov_free(&m);
}

/* The empirical conditional entropy of a long sample matches the computed rate. */
static void test_markov_samples_follow_the_table(void **state) {
    (void)state;
    markov_t m;
    assert_int_equal(markov_init(&m, 9, 32, 4, NULL, 0), 0);
    const size_t len = 400000;
    uint8_t *x = host_malloc(len);
    markov_sample(&m, 1, 0, x, len);
    double *count = host_calloc(32 * 32, sizeof(double));
    for (size_t i = 1; i < len; i++) {
        int s = x[i - 1], t = x[i], ok = 0;
        assert_true(s < 32 && t < 32);
        for (int j = 0; j < 4; j++) ok |= m.next[s * 4 + j] == t;
        assert_true(ok); /* only listed transitions occur */
        count[s * 32 + t] += 1;
    }
    /* cross-entropy of the samples under the true table: estimates the entropy rate */
    double ce = 0;
    for (int s = 0; s < 32; s++)
        for (int j = 0; j < 4; j++) ce -= count[s * 32 + m.next[s * 4 + j]] * log(m.prob[s * 4 + j]);
    ce /= (double)(len - 1);
    print_message("  sampled %.4f vs exact %.4f nats\n", ce, m.entropy_rate);
    assert_true(fabs(ce - m.entropy_rate) < 0.01); /* std error ~ 0.7 / sqrt(4e5) = 0.001 */
    host_free(count);
    host_free(x);
    markov_free(&m);
}

/* A sequence starts in the stationary distribution, so that even its first
 * prediction has the entropy rate as its best loss. */
static void test_markov_first_symbol_is_stationary(void **state) {
    (void)state;
    markov_t m;
    assert_int_equal(markov_init(&m, 4, 8, 3, NULL, 0), 0);
    const int n = 40000;
    int count[8] = {0};
    for (int i = 0; i < n; i++) {
        uint8_t x;
        markov_sample(&m, 2, (uint64_t)i, &x, 1);
        count[x]++;
    }
    for (int s = 0; s < 8; s++) /* standard error <= 0.0025 */
        assert_true(fabs((double)count[s] / n - m.stationary[s]) < 0.015);
    markov_free(&m);
}

/* A sequence of length 0 is nothing: not even its first byte is written. */
static void test_markov_sample_of_length_zero(void **state) {
    (void)state;
    markov_t m;
    assert_int_equal(markov_init(&m, 4, 8, 3, NULL, 0), 0);
    uint8_t out[2] = {0xee, 0xee};
    markov_sample(&m, 2, 0, out, 0);
    assert_int_equal(out[0], 0xee);
    markov_sample(&m, 2, 0, out, 1);
    assert_true(out[0] < 8);
    assert_int_equal(out[1], 0xee);
    markov_free(&m);
}

static void test_markov_bad_args(void **state) {
    (void)state;
    markov_t m;
    char err[256];
    assert_int_equal(markov_init(&m, 1, 1, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "--markov-states 1 is out of range"));
    assert_int_equal(markov_init(&m, 1, 16, 17, err, sizeof err), -1);
    assert_non_null(strstr(err, "--markov-branch 17 is out of range"));
    assert_int_equal(markov_init(&m, 1, 257, 3, err, sizeof err), -1);
    assert_string_equal(err, "--markov-states 257 is out of range; pick a value in [2, 256]");
    assert_int_equal(markov_init(&m, 1, 16, 0, err, sizeof err), -1);
    assert_string_equal(err, "--markov-branch 0 is out of range; pick a value in [1, 16] (--markov-states)");
    assert_int_equal(markov_init(&m, 1, 16, -2, err, sizeof err), -1);
    assert_non_null(strstr(err, "--markov-branch -2 is out of range"));
    /* data_open_markov passes the refusal on. */
    data_source_t d;
    assert_int_equal(data_open_markov(&d, 1, 16, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "--markov-branch 0 is out of range"));
    data_free(&d);
}

/* Each state's row is drawn from its own stream: rows differ in their
 * successors and their probabilities (one shared stream gave every row the
 * same random part). */
static void test_markov_rows_differ(void **state) {
    (void)state;
    markov_t m;
    assert_int_equal(markov_init(&m, 5, 64, 3, NULL, 0), 0);
    int same_prob = 0, same_next = 0;
    for (int s = 1; s < 64; s++) {
        same_prob += m.prob[s * 3 + 1] == m.prob[1] && m.prob[s * 3 + 2] == m.prob[2];
        same_next += m.next[s * 3 + 1] == m.next[1] && m.next[s * 3 + 2] == m.next[2];
    }
    assert_int_equal(same_prob, 0);
    assert_true(same_next < 4);
    markov_free(&m);
}

/* The data of a seed does not change from one build to the next: a run
 * resumed from a checkpoint (which stores the source's description, not its
 * bytes) must see the batches the first part of the run would have seen
 * next. These values are what this source gave when the test was written;
 * if they change on purpose, old checkpoints no longer resume the same run. */
static void test_markov_data_is_stable(void **state) {
    (void)state;
    data_source_t d;
    assert_int_equal(data_open_markov(&d, 3, 256, 4, NULL, 0), 0);
    assert_string_equal(d.desc, "markov seed=3 states=256 branch=4");
    assert_true(fabs(data_entropy_rate(&d) - 1.0614186022303265) < 1e-12);
    int in[2 * 8], tg[2 * 8];
    /* rank 1 of 2, global batch 4: sequences 22 and 23 of the run at step 5 */
    data_batch(&d, SPLIT_TRAIN, 7, 5, 1, 2, 4, 8, in, tg);
    static const int train[16] = {180, 181, 106, 141, 142, 214, 215, 111, 68, 71, 179, 224, 215, 216, 253, 164};
    assert_memory_equal(in, train, sizeof train);
    assert_int_equal(tg[7], 101);
    assert_int_equal(tg[15], 165);
    data_batch(&d, SPLIT_EVAL, 7, 5, 1, 2, 4, 8, in, tg);
    static const int eval[16] = {186, 187, 169, 12, 112, 156, 74, 75, 81, 115, 229, 46, 17, 69, 155, 26};
    assert_memory_equal(in, eval, sizeof eval);
    assert_int_equal(tg[7], 50);
    assert_int_equal(tg[15], 38);
    data_free(&d);
}

/* Sequences start in the stationary distribution, not in one fixed state:
 * the first bytes of a batch of 64 are many different bytes. */
static void test_batch_first_bytes_vary(void **state) {
    (void)state;
    data_source_t d;
    assert_int_equal(data_open_markov(&d, 3, 256, 4, NULL, 0), 0);
    int in[64 * 4], tg[64 * 4], seen[256] = {0}, distinct = 0;
    data_batch(&d, SPLIT_TRAIN, 1, 0, 0, 1, 64, 4, in, tg);
    for (int b = 0; b < 64; b++) distinct += !seen[in[b * 4]]++;
    assert_true(distinct > 30);
    data_free(&d);
}

static void test_batches_are_pure_and_sharded(void **state) {
    (void)state;
    data_source_t d;
    assert_int_equal(data_open_markov(&d, 3, 256, 4, NULL, 0), 0);
    const int B = 8, T = 16, n = B * T;
    int *in = host_malloc(n * sizeof(int)), *tg = host_malloc(n * sizeof(int));
    int *in2 = host_malloc(n * sizeof(int)), *tg2 = host_malloc(n * sizeof(int));
    data_batch(&d, SPLIT_TRAIN, 7, 5, 0, 1, B, T, in, tg);
    data_batch(&d, SPLIT_TRAIN, 7, 5, 0, 1, B, T, in2, tg2);
    assert_memory_equal(in, in2, n * sizeof(int));
    for (int b = 0; b < B; b++)
        for (int t = 0; t + 1 < T; t++) assert_int_equal(tg[b * T + t], in[b * T + t + 1]);
    /* 4 ranks: their shards, in rank order, are the global batch. */
    for (int r = 0; r < 4; r++) {
        int first;
        assert_int_equal(data_shard(B, r, 4, &first), 2);
        assert_int_equal(first, 2 * r);
        data_batch(&d, SPLIT_TRAIN, 7, 5, r, 4, B, T, in2 + first * T, tg2 + first * T);
    }
    assert_memory_equal(in, in2, n * sizeof(int));
    assert_memory_equal(tg, tg2, n * sizeof(int));
    /* Another step, another seed, the eval split: other data. */
    data_batch(&d, SPLIT_TRAIN, 7, 6, 0, 1, B, T, in2, tg2);
    assert_memory_not_equal(in, in2, n * sizeof(int));
    data_batch(&d, SPLIT_TRAIN, 8, 5, 0, 1, B, T, in2, tg2);
    assert_memory_not_equal(in, in2, n * sizeof(int));
    data_batch(&d, SPLIT_EVAL, 7, 5, 0, 1, B, T, in2, tg2);
    assert_memory_not_equal(in, in2, n * sizeof(int));
    assert_true(fabs(data_entropy_rate(&d) - d.markov.entropy_rate) == 0);
    /* Step s is sequences [s*B, (s+1)*B) of the run: row b of step 5 is the
     * only row of step 5*B + b at batch 1, so no two steps share a sequence. */
    for (int b = 0; b < B; b++) {
        data_batch(&d, SPLIT_TRAIN, 7, 5 * (uint64_t)B + b, 0, 1, 1, T, in2, tg2);
        assert_memory_equal(in + b * T, in2, T * sizeof(int));
    }
    /* No eval sequence is a training sequence (the splits have their own streams). */
    int *ev = host_malloc(4 * n * sizeof(int)), *tr = host_malloc(4 * n * sizeof(int));
    for (int step = 0; step < 4; step++) {
        data_batch(&d, SPLIT_TRAIN, 7, (uint64_t)step, 0, 1, B, T, tr + step * n, tg2);
        data_batch(&d, SPLIT_EVAL, 7, (uint64_t)step, 0, 1, B, T, ev + step * n, tg2);
    }
    for (int i = 0; i < 4 * B; i++)
        for (int j = 0; j < 4 * B; j++) assert_memory_not_equal(ev + i * T, tr + j * T, T * sizeof(int));
    host_free(ev); host_free(tr);
    host_free(in); host_free(tg); host_free(in2); host_free(tg2);
    data_free(&d);
}

/* The shard checks end the run with a message (in a child: they exit). */
static int shard_in_child(void *arg) {
    const int *a = arg; /* global batch, rank, world */
    int first;
    data_shard(a[0], a[1], a[2], &first);
    return 0;
}

static void test_shard_refuses_bad_splits(void **state) {
    (void)state;
    int uneven[3] = {10, 0, 4}, past[3] = {8, 4, 4};
    child_result_t r = run_in_child(shard_in_child, uneven);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "batch 10 is not divisible by 4 ranks"));
    r = run_in_child(shard_in_child, past);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "rank 4 of world 4"));
    int negative[3] = {8, -1, 4};
    r = run_in_child(shard_in_child, negative);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "rank -1 of world 4"));
    /* No ranks at all is refused by the message, not by a division by zero. */
    int none[3] = {8, 0, 0};
    r = run_in_child(shard_in_child, none);
    assert_int_equal(r.signal, 0);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "data_shard: rank 0 of world 0"));
}

static char tmp_path[256];

static void write_file(const char *text, size_t len) {
    FILE *f = fopen(tmp_path, "wb");
    assert_non_null(f);
    if (len) assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

/* A fresh empty file in $TMPDIR for write_file(); its name goes to tmp_path. */
static void new_tmp_path(void) {
    const char *base = getenv("TMPDIR");
    snprintf(tmp_path, sizeof tmp_path, "%s/test_data_XXXXXX", base && *base ? base : P_tmpdir);
    int fd = mkstemp(tmp_path);
    assert_true(fd >= 0);
    close(fd);
}

static void test_text_files(void **state) {
    (void)state;
    new_tmp_path();
    data_source_t d;
    char err[512];
    write_file("", 0);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), -1);
    assert_non_null(strstr(err, "file is empty"));
    write_file("hello world", 11);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, "too short for --seq 8"));
    /* No sequence of 0 or fewer tokens: -1 made the file's needed size 0
     * and the start offsets of a batch wrap around; INT_MAX + 1 overflowed. */
    assert_int_equal(data_open_text(&d, tmp_path, 0, err, sizeof err), -1);
    assert_string_equal(err, "--seq 0: a sequence needs at least 1 token; pick a positive --seq");
    assert_int_equal(data_open_text(&d, tmp_path, -1, err, sizeof err), -1);
    assert_non_null(strstr(err, "--seq -1: "));
    assert_int_equal(data_open_text(&d, tmp_path, INT_MAX, err, sizeof err), -1);
    assert_non_null(strstr(err, "it needs at least 21474836480 bytes"));
    /* 1000 bytes "0123456789..."; the last 100 are for eval. */
    char text[1000];
    for (int i = 0; i < 1000; i++) text[i] = (char)('0' + i % 10);
    text[950] = 'E'; /* a marker only in the eval part */
    write_file(text, 1000);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), 0);
    assert_true(isnan(data_entropy_rate(&d)));
    assert_int_equal(d.train_len, 900); /* the last 10% evaluates */
    /* A resumed run compares this line with the checkpoint's: the hash of a
     * file must not change from one build to the next. The value is FNV-1a
     * 64 of these bytes as the reference algorithm gives it (offset basis
     * 0xcbf29ce484222325, prime 0x100000001b3). */
    assert_string_equal(d.desc, "text bytes=1000 fnv1a=4f5fa917e8477084");
    assert_true(d.text_hash == 0x4f5fa917e8477084ull);
    int in[4 * 8], tg[4 * 8], seen_e = 0;
    for (int step = 0; step < 50; step++) {
        data_batch(&d, SPLIT_TRAIN, 1, (uint64_t)step, 0, 1, 4, 8, in, tg);
        for (int i = 0; i < 32; i++) {
            assert_true(in[i] >= '0' && in[i] <= '9');   /* never from the eval part */
            if (i % 8 < 7) assert_int_equal(tg[i], in[i + 1]);
            else assert_int_equal(tg[i], '0' + (in[i] - '0' + 1) % 10);
        }
        data_batch(&d, SPLIT_EVAL, 1, (uint64_t)step, 0, 1, 4, 8, in, tg);
        for (int i = 0; i < 32; i++) seen_e |= in[i] == 'E' || tg[i] == 'E';
    }
    assert_true(seen_e);
    data_free(&d);
    /* The shortest file for --seq 8 holds 10 sequences plus targets: 90 bytes. */
    write_file(text, 90);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), 0);
    data_free(&d);
    write_file(text, 89);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), -1);
    assert_non_null(strstr(err, "it needs at least 90 bytes"));
    /* The eval part is the last len / 10 bytes, rounded down: 9 of 95. */
    write_file(text, 95);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), 0);
    assert_int_equal(d.train_len, 86);
    data_free(&d);
    remove(tmp_path);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
}

/* The messages for a file that will not do, whole: each says what the file
 * is, how long it must be for this --seq, and what to give instead. */
#define DATA_HINT "give a regular text file (it is read whole at the start, so a pipe cannot stand in for one)"
static void test_text_messages(void **state) {
    (void)state;
    new_tmp_path();
    data_source_t d;
    char err[512], want[1024];
    write_file("", 0);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), -1);
    snprintf(want, sizeof want, "--data %s: file is empty; give a text file of at least 90 bytes", tmp_path);
    assert_string_equal(err, want);
    write_file("hello world", 11);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), -1);
    snprintf(want, sizeof want, "--data %s: file has 11 bytes, too short for --seq 8; it needs at least 90 bytes "
             "(10 sequences, so the last 10%% can hold one for eval), or use a smaller --seq", tmp_path);
    assert_string_equal(err, want);
    remove(tmp_path);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), -1);
    snprintf(want, sizeof want, "--data %s: cannot open (No such file or directory); " DATA_HINT, tmp_path);
    assert_string_equal(err, want);
    char dir[512];
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_data_dir_XXXXXX", base && *base ? base : P_tmpdir);
    assert_non_null(mkdtemp(dir));
    assert_int_equal(data_open_text(&d, dir, 8, err, sizeof err), -1);
    snprintf(want, sizeof want, "--data %s is a directory; " DATA_HINT, dir);
    assert_string_equal(err, want);
    rmdir(dir);
}

/* The hash in the description is 16 hex digits, leading zeros included: a
 * resumed run compares the line as text. These 100 bytes hash to
 * 0x005ee0940be04965. */
static void test_text_hash_keeps_leading_zeros(void **state) {
    (void)state;
    new_tmp_path();
    char text[100];
    for (int i = 0; i < 100; i++) text[i] = (char)('0' + i % 10);
    text[0] = 'x';
    write_file(text, 100);
    data_source_t d;
    char err[512];
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), 0);
    assert_true(d.text_hash == 0x005ee0940be04965ull);
    assert_string_equal(d.desc, "text bytes=100 fnv1a=005ee0940be04965");
    data_free(&d);
    remove(tmp_path);
}

/* A file that gives fewer bytes than its size said is refused, with both
 * counts. A sysfs file is such a file: its size is a page, its text a line. */
static void test_text_read_short(void **state) {
    (void)state;
    const char *path = "/sys/devices/system/cpu/online";
    struct stat st;
    char text[8192];
    FILE *f = fopen(path, "rb");
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !f) {
        if (f) fclose(f);
        print_message("no %s: skipped\n", path);
        skip();
    }
    const size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    if (n >= (size_t)st.st_size || st.st_size < 90) {
        print_message("%s reads whole: skipped\n", path);
        skip();
    }
    data_source_t d;
    char err[512], want[512];
    assert_int_equal(data_open_text(&d, path, 8, err, sizeof err), -1);
    snprintf(want, sizeof want, "--data %s: read %zu of %zu bytes (did the file change while being read?)", path, n,
             (size_t)st.st_size);
    assert_string_equal(err, want);
    assert_null(d.text);
}

/* data_free gives the file's bytes back: a 4 MiB file, a block that glibc
 * maps on its own (the threshold is fixed, not the one glibc moves as
 * blocks are freed), is unmapped again. */
static void test_text_free_returns_memory(void **state) {
    (void)state;
    new_tmp_path();
    const size_t len = 4u << 20;
    static char chunk[1u << 16];
    memset(chunk, 'a', sizeof chunk);
    FILE *f = fopen(tmp_path, "wb");
    assert_non_null(f);
    for (size_t done = 0; done < len; done += sizeof chunk)
        assert_int_equal(fwrite(chunk, 1, sizeof chunk, f), sizeof chunk);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(mallopt(M_MMAP_THRESHOLD, 1 << 20), 1);
    const size_t before = mallinfo2().hblkhd;
    data_source_t d;
    char err[512];
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), 0);
    assert_true(mallinfo2().hblkhd >= before + len);
    data_free(&d);
    assert_true(mallinfo2().hblkhd <= before);
    assert_null(d.text);
    remove(tmp_path);
}

/* Every sequence, inputs and last target, is a window of its own part of
 * the file: a train window never takes the first eval byte, an eval window
 * never reads past the end. The text has no repeats, so a window shows where
 * it came from. */
static void test_text_windows_stay_in_their_part(void **state) {
    (void)state;
    new_tmp_path();
    char text[1000];
    uint32_t x = 1;
    for (int i = 0; i < 1000; i++) { /* an LCG's top bits: no 9-byte window repeats */
        x = x * 1664525u + 1013904223u;
        text[i] = (char)('a' + (x >> 24) % 26);
    }
    write_file(text, 1000);
    data_source_t d;
    char err[512];
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), 0);
    const int T = 8;
    int in[4 * 8], tg[4 * 8];
    for (int step = 0; step < 200; step++)
        for (int split = 0; split < 2; split++) {
            size_t lo = split ? 900 : 0, hi = split ? 1000 : 900;
            data_batch(&d, (data_split_t)split, 3, (uint64_t)step, 0, 1, 4, T, in, tg);
            for (int b = 0; b < 4; b++) {
                char win[9];
                for (int t = 0; t < T; t++) win[t] = (char)in[b * T + t];
                win[T] = (char)tg[b * T + T - 1];
                int found = 0;
                for (size_t o = lo; o + T + 1 <= hi && !found; o++) found = !memcmp(text + o, win, T + 1);
                if (!found) fail_msg("step %d %s row %d: not a window of its part", step, split ? "eval" : "train", b);
            }
        }
    data_free(&d);
    remove(tmp_path);
}

/* In the shortest file that --seq 8 accepts (90 bytes: 81 train, 9 eval),
 * every train window [o, o + 9) with o in [0, 72] is drawn, the last one
 * included (it ends at the last train byte), and eval has exactly one
 * window, the whole eval part. Then: where the windows of a 1000-byte file
 * start, for steps far apart (as drawn when the test was written; see
 * test_markov_data_is_stable). */
/* Where the T bytes in[0..T) first occur in text[0..n), or -1. */
static int find_window(const char *text, int n, const int *in, int T) {
    for (int o = 0; o + T <= n; o++) {
        int t = 0;
        while (t < T && (unsigned char)text[o + t] == in[t]) t++;
        if (t == T) return o;
    }
    return -1;
}

static void test_text_windows_cover_their_part(void **state) {
    (void)state;
    new_tmp_path();
    char text[1000];
    uint32_t x = 1;
    for (int i = 0; i < 1000; i++) { /* as in test_text_windows_stay_in_their_part */
        x = x * 1664525u + 1013904223u;
        text[i] = (char)('a' + (x >> 24) % 26);
    }
    write_file(text, 90);
    data_source_t d;
    char err[512];
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), 0);
    assert_int_equal(d.train_len, 81);
    int in[16 * 8], tg[16 * 8], drawn[81] = {0};
    for (int step = 0; step < 100; step++) {
        data_batch(&d, SPLIT_TRAIN, 1, (uint64_t)step, 0, 1, 16, 8, in, tg);
        for (int b = 0; b < 16; b++) {
            const int o = find_window(text, 81, in + b * 8, 8);
            assert_true(o >= 0 && o <= 72);
            assert_int_equal(tg[b * 8 + 7], (unsigned char)text[o + 8]);
            drawn[o]++;
        }
        data_batch(&d, SPLIT_EVAL, 1, (uint64_t)step, 0, 1, 16, 8, in, tg);
        for (int b = 0; b < 16; b++)
            for (int t = 0; t < 8; t++) {
                assert_int_equal(in[b * 8 + t], (unsigned char)text[81 + t]);
                assert_int_equal(tg[b * 8 + t], (unsigned char)text[82 + t]);
            }
    }
    for (int o = 0; o <= 72; o++)
        if (!drawn[o]) fail_msg("no train window starts at %d of [0, 72] in 1600 draws", o);
    data_free(&d);

    write_file(text, 1000);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), 0);
    static const uint64_t steps[3] = {0, 1, 1ull << 32};
    static const int starts[2][3][4] = {
        {{728, 182, 137, 73}, {414, 427, 888, 156}, {433, 444, 886, 765}},
        {{954, 962, 906, 944}, {974, 966, 922, 975}, {962, 991, 927, 967}},
    };
    for (int split = 0; split < 2; split++)
        for (int k = 0; k < 3; k++) {
            data_batch(&d, (data_split_t)split, 3, steps[k], 0, 1, 4, 8, in, tg);
            for (int b = 0; b < 4; b++)
                if (find_window(text, 1000, in + b * 8, 8) != starts[split][k][b])
                    fail_msg("%s step %llu row %d: not the window at %d", split ? "eval" : "train",
                             (unsigned long long)steps[k], b, starts[split][k][b]);
        }
    data_free(&d);
    remove(tmp_path);
}

/* Open a path as --data in a child that the alarm ends if opening blocks;
 * exit 0 if it was refused, 1 if accepted; the message goes to stdout. */
static const char *child_path;
static int open_in_child(void *arg) {
    (void)arg;
    alarm(10);
    data_source_t d;
    char err[512];
    int rc = data_open_text(&d, child_path, 8, err, sizeof err);
    if (rc == 0) {
        data_free(&d);
        return 1;
    }
    printf("%s\n", err);
    return 0;
}

/* A directory, a FIFO and a device are refused before any read: a FIFO with
 * no writer would block fopen forever, and ftell on a directory gives
 * LONG_MAX, which became an 8-million-TiB allocation. */
static void test_text_path_must_be_a_regular_file(void **state) {
    (void)state;
    char dir[512], fifo[600];
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_data_dir_XXXXXX", base && *base ? base : P_tmpdir);
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);

    child_path = dir;
    child_result_t r = run_in_child(open_in_child, NULL);
    print_message("  %s", r.out);
    assert_int_equal(r.signal, 0);
    assert_true(r.exited && r.exit_code == 0);
    assert_non_null(strstr(r.out, "is a directory; give a regular text file"));

    child_path = fifo;
    r = run_in_child(open_in_child, NULL);
    print_message("  %s", r.out);
    if (r.signal == SIGALRM) fail_msg("data_open_text blocked on a FIFO");
    assert_true(r.exited && r.exit_code == 0);
    assert_non_null(strstr(r.out, "is a FIFO (named pipe), not a regular file"));

    child_path = "/dev/null";
    r = run_in_child(open_in_child, NULL);
    assert_true(r.exited && r.exit_code == 0);
    assert_non_null(strstr(r.out, ", not a regular file; give a regular text file"));

    remove(fifo);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_markov_table),
        cmocka_unit_test(test_markov_samples_follow_the_table),
        cmocka_unit_test(test_markov_first_symbol_is_stationary),
        cmocka_unit_test(test_markov_sample_of_length_zero),
        cmocka_unit_test(test_markov_bad_args),
        cmocka_unit_test(test_markov_rows_differ),
        cmocka_unit_test(test_markov_data_is_stable),
        cmocka_unit_test(test_batch_first_bytes_vary),
        cmocka_unit_test(test_batches_are_pure_and_sharded),
        cmocka_unit_test(test_shard_refuses_bad_splits),
        cmocka_unit_test(test_text_files),
        cmocka_unit_test(test_text_messages),
        cmocka_unit_test(test_text_hash_keeps_leading_zeros),
        cmocka_unit_test(test_text_read_short),
        cmocka_unit_test(test_text_free_returns_memory),
        cmocka_unit_test(test_text_windows_stay_in_their_part),
        cmocka_unit_test(test_text_windows_cover_their_part),
        cmocka_unit_test(test_text_path_must_be_a_regular_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
