/* The Markov source (exact stationary distribution and entropy rate, samples
 * that follow the table), text files, and batches as pure functions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
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
    host_free(pp);
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

static void test_markov_bad_args(void **state) {
    (void)state;
    markov_t m;
    char err[256];
    assert_int_equal(markov_init(&m, 1, 1, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "--markov-states 1 is out of range"));
    assert_int_equal(markov_init(&m, 1, 16, 17, err, sizeof err), -1);
    assert_non_null(strstr(err, "--markov-branch 17 is out of range"));
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
    host_free(in); host_free(tg); host_free(in2); host_free(tg2);
    data_free(&d);
}

static char tmp_path[256];

static void write_file(const char *text, size_t len) {
    FILE *f = fopen(tmp_path, "wb");
    assert_non_null(f);
    if (len) assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

static void test_text_files(void **state) {
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmp_path, sizeof tmp_path, "%s/test_data_XXXXXX", base && *base ? base : P_tmpdir);
    int fd = mkstemp(tmp_path);
    assert_true(fd >= 0);
    close(fd);
    data_source_t d;
    char err[512];
    write_file("", 0);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), -1);
    assert_non_null(strstr(err, "file is empty"));
    write_file("hello world", 11);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), -1);
    print_message("  %s\n", err);
    assert_non_null(strstr(err, "too short for --seq 8"));
    /* 1000 bytes "0123456789..."; the last 100 are for eval. */
    char text[1000];
    for (int i = 0; i < 1000; i++) text[i] = (char)('0' + i % 10);
    text[950] = 'E'; /* a marker only in the eval part */
    write_file(text, 1000);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), 0);
    assert_true(isnan(data_entropy_rate(&d)));
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
    remove(tmp_path);
    assert_int_equal(data_open_text(&d, tmp_path, 8, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
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
        cmocka_unit_test(test_markov_bad_args),
        cmocka_unit_test(test_batches_are_pure_and_sharded),
        cmocka_unit_test(test_text_files),
        cmocka_unit_test(test_text_path_must_be_a_regular_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
