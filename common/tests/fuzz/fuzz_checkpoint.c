/*
 * libFuzzer harness: checkpoint files (common/checkpoint.c).
 *
 * Feeds: the input's bytes as a checkpoint file. When the first byte is odd,
 * the rest is the file with its last 8 bytes replaced by the right FNV-1a
 * checksum, so the fuzzer also reaches what is checked after the checksum
 * (the sizes, the metadata, the copy into the arrays) instead of stopping
 * at the checksum every time.
 * Asserts: checkpoint_read_meta() and checkpoint_load() never crash, hang or
 * allocate more than the file holds; a refusal always comes with a message;
 * an accepted file's names are NUL-ended (a version-2 file's library empty)
 * and its arrays are exactly the three the file holds (the load writes no
 * further: ASan watches). The seed corpus has files of both versions read
 * (valid: version 2, valid-v3: version 3).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "checkpoint.h"
#include "hash.h"

static int fd = -1;
static char path[64];

/* Version 3 sums with FNV-1a's offset basis, version 2 with the one it was written with. */
static uint64_t fnv1a(const uint8_t *b, size_t n) {
    uint32_t version = 0;
    if (n >= 12) memcpy(&version, b + 8, 4);
    return course_fnv1a(version == 2 ? 1469598103934665603ull : COURSE_FNV1A_OFFSET, b, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    if (fd < 0) {
        /* An in-memory regular file: no disk traffic, and its /proc name stats as a file. */
        fd = memfd_create("ckpt", 0);
        if (fd < 0) abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    const int fix_sum = data[0] & 1;
    data++, size--;
    uint8_t *file = malloc(size ? size : 1);
    memcpy(file, data, size);
    if (fix_sum && size >= 8) {
        uint64_t h = fnv1a(file, size - 8);
        memcpy(file + size - 8, &h, 8);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, file, size, 0) != (ssize_t)size) abort();
    free(file);

    ckpt_meta_t meta, got;
    char err[512] = "";
    if (checkpoint_read_meta(path, &meta, err, sizeof err) != 0) {
        if (!err[0]) abort(); /* a refusal must say why */
        return 0;
    }
    if (memchr(meta.backend, 0, sizeof meta.backend) == NULL || memchr(meta.device, 0, sizeof meta.device) == NULL ||
        memchr(meta.data_desc, 0, sizeof meta.data_desc) == NULL || memchr(meta.library, 0, sizeof meta.library) == NULL)
        abort();
    /* Version 2 does not record the library: it must come back empty, not as stray bytes. */
    uint32_t version;
    memcpy(&version, data + 8, 4);
    if (version == 2 && meta.library[0]) abort();
    /* The file holds 3 * n_params floats, so they fit in what the fuzzer gave. */
    if (meta.n_params * 12 > size) abort();
    size_t n = (size_t)meta.n_params;
    float *p = malloc(n * sizeof(float) + 1), *m = malloc(n * sizeof(float) + 1), *v = malloc(n * sizeof(float) + 1);
    err[0] = '\0';
    if (checkpoint_load(path, &meta, &got, p, m, v, err, sizeof err) != 0) { /* it matches itself */
        fprintf(stderr, "refused against its own metadata: %s\n", err);
        abort();
    }
    /* Against another run's metadata it must be refused, with the differing field named. */
    ckpt_meta_t other = meta;
    other.cfg.d_model ^= 1;
    err[0] = '\0';
    if (checkpoint_load(path, &other, &got, p, m, v, err, sizeof err) == 0 || !strstr(err, "--d-model")) abort();
    free(p), free(m), free(v);
    return 0;
}
