/*
 * A format-version-2 checkpoint, written the way the build before version 3
 * wrote it, field by field: the tests check that such a file still loads.
 * Kept apart from checkpoint.c on purpose: a change to the reader's idea of
 * version 2 must not change what the test writes too.
 *
 * Version 2 is version 3 without the library: magic, u32 2, u32 508 (the
 * header's bytes), the metadata up to device[128], the three arrays and the
 * FNV-1a of every byte before it.
 */
#ifndef COURSE_TESTS_CKPT_V2_H
#define COURSE_TESTS_CKPT_V2_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "checkpoint.h"

#define CKPT_V2_HEADER_BYTES 508

/* Room to spare: a layout that runs long is found by the size check, not by overwriting the stack. */
typedef struct { uint8_t buf[2 * CKPT_V2_HEADER_BYTES]; size_t n; } ckpt_v2_t;

static inline void ckpt_v2_put(ckpt_v2_t *h, const void *p, size_t n) {
    memcpy(h->buf + h->n, p, n);
    h->n += n;
}
static inline void ckpt_v2_i32(ckpt_v2_t *h, int32_t x) { ckpt_v2_put(h, &x, 4); }
static inline void ckpt_v2_u64(ckpt_v2_t *h, uint64_t x) { ckpt_v2_put(h, &x, 8); }
static inline void ckpt_v2_f64(ckpt_v2_t *h, double x) { ckpt_v2_put(h, &x, 8); }

static inline uint64_t ckpt_v2_fnv1a(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* Write m (its library is not part of version 2) and the three arrays of
 * m->n_params floats to path as version 2; returns 0, or -1 if the file
 * cannot be written. */
static inline int write_checkpoint_v2(const char *path, const ckpt_meta_t *m, const float *params,
                                      const float *adam_m, const float *adam_v) {
    ckpt_v2_t h;
    memset(&h, 0, sizeof h);
    const uint32_t version = 2, hbytes = CKPT_V2_HEADER_BYTES;
    ckpt_v2_put(&h, "CRSCKPT", 8); /* with its terminating 0 */
    ckpt_v2_put(&h, &version, 4);
    ckpt_v2_put(&h, &hbytes, 4);
    ckpt_v2_i32(&h, m->cfg.vocab);
    ckpt_v2_i32(&h, m->cfg.d_model);
    ckpt_v2_i32(&h, m->cfg.n_layers);
    ckpt_v2_i32(&h, m->cfg.n_heads);
    ckpt_v2_i32(&h, m->cfg.d_ff);
    ckpt_v2_i32(&h, m->cfg.max_seq);
    ckpt_v2_f64(&h, m->cfg.rope_theta);
    ckpt_v2_f64(&h, m->cfg.norm_eps);
    ckpt_v2_u64(&h, m->n_params);
    ckpt_v2_u64(&h, m->step);
    ckpt_v2_u64(&h, m->seed);
    ckpt_v2_put(&h, m->data_desc, 160);
    ckpt_v2_i32(&h, m->batch);
    ckpt_v2_i32(&h, m->seq_len);
    ckpt_v2_i32(&h, m->accum);
    ckpt_v2_i32(&h, m->total_steps);
    ckpt_v2_i32(&h, m->warmup);
    ckpt_v2_f64(&h, m->lr);
    ckpt_v2_f64(&h, m->min_lr);
    ckpt_v2_f64(&h, m->weight_decay);
    ckpt_v2_f64(&h, m->beta1);
    ckpt_v2_f64(&h, m->beta2);
    ckpt_v2_f64(&h, m->adam_eps);
    ckpt_v2_f64(&h, m->clip);
    ckpt_v2_put(&h, m->backend, 16);
    ckpt_v2_put(&h, m->precision, 16);
    ckpt_v2_put(&h, m->attention, 16);
    ckpt_v2_put(&h, m->matmul, 16);
    ckpt_v2_put(&h, m->device, 128);
    if (h.n != CKPT_V2_HEADER_BYTES) return -1; /* the layout above is wrong, not the file */
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    const size_t n = (size_t)m->n_params;
    uint64_t sum = ckpt_v2_fnv1a(1469598103934665603ull, h.buf, h.n); /* version 2's basis (checkpoint.h) */
    int ok = fwrite(h.buf, 1, h.n, f) == h.n;
    const float *arrays[3] = {params, adam_m, adam_v};
    for (int a = 0; a < 3; a++) {
        ok = ok && fwrite(arrays[a], sizeof(float), n, f) == n;
        sum = ckpt_v2_fnv1a(sum, arrays[a], n * sizeof(float));
    }
    ok = ok && fwrite(&sum, 8, 1, f) == 1;
    ok = (fclose(f) == 0) && ok;
    return ok ? 0 : -1;
}

#endif /* COURSE_TESTS_CKPT_V2_H */
