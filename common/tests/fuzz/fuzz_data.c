/*
 * libFuzzer harness: --data text files (common/data.c).
 *
 * Feeds: byte 0 picks --seq (1..64), byte 1 the step and seed; the rest is
 * the file. A file long enough for that --seq is then drawn from: a batch of
 * 4 sequences from each split, on 1 and on 2 ranks.
 * Asserts: data_open_text() never crashes and refuses with a message; every
 * drawn sequence lies inside its split (train: the first 90%, eval: the rest,
 * ASan checks the reads), and targets are the inputs shifted by one byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "data.h"

static int fd = -1;
static char path[64];

/* Does the sequence (x[0..n), then last) occur in text[lo, hi)? */
static int inside(const uint8_t *text, size_t lo, size_t hi, const int *x, int n, int last) {
    for (size_t off = lo; off + (size_t)n + 1 <= hi; off++) {
        int ok = text[off + n] == last;
        for (int t = 0; ok && t < n; t++) ok = text[off + t] == x[t];
        if (ok) return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    if (fd < 0) {
        fd = memfd_create("data", 0);
        if (fd < 0) abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    const int seq = 1 + data[0] % 64;
    const uint64_t step = data[1];
    data += 2, size -= 2;
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();

    data_source_t d;
    char err[512] = "";
    if (data_open_text(&d, path, seq, err, sizeof err) != 0) {
        if (!err[0]) abort();
        return 0;
    }
    if (d.text_len != size || d.train_len > d.text_len) abort();
    int in[4 * 64], tg[4 * 64];
    for (int split = 0; split < 2; split++)
        for (int world = 1; world <= 2; world++)
            for (int rank = 0; rank < world; rank++) {
                data_batch(&d, (data_split_t)split, step * 31 + 7, step, rank, world, 4, seq, in, tg);
                const size_t lo = split ? d.train_len : 0, hi = split ? d.text_len : d.train_len;
                for (int b = 0; b < 4 / world; b++) {
                    const int *x = in + b * seq, *y = tg + b * seq;
                    for (int t = 0; t + 1 < seq; t++)
                        if (y[t] != x[t + 1]) abort();
                    if (!inside(d.text, lo, hi, x, seq, y[seq - 1])) abort();
                }
            }
    data_free(&d);
    return 0;
}
