/* Checkpoint files (see checkpoint.h). Fields are serialised one by one, so
 * struct padding never reaches the file. */
#include "checkpoint.h"
#include "hash.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "memory.h"

static const char MAGIC[8] = {'C', 'R', 'S', 'C', 'K', 'P', 'T', '\0'};

/* Versions 2 and earlier were summed from 1469598103934665603, a digit short
 * of FNV-1a's offset basis: a hash all the same, but not FNV-1a as the format
 * says, so version 3 uses the real one and a version-2 file is checked with
 * the basis it was written with. */
#define FNV_OFFSET_V2 1469598103934665603ull

/* A growing byte buffer for the header. */
typedef struct { uint8_t buf[1024]; size_t n; } hdr_t;
static void put(hdr_t *h, const void *p, size_t n) { memcpy(h->buf + h->n, p, n); h->n += n; }
static void put_i32(hdr_t *h, int32_t x) { put(h, &x, 4); }
static void put_u64(hdr_t *h, uint64_t x) { put(h, &x, 8); }
static void put_f64(hdr_t *h, double x) { put(h, &x, 8); }

typedef struct { const uint8_t *p; size_t n, at; } rd_t;
static void get(rd_t *r, void *dst, size_t n) { memcpy(dst, r->p + r->at, n); r->at += n; }
static int32_t get_i32(rd_t *r) { int32_t x; get(r, &x, 4); return x; }
static uint64_t get_u64(rd_t *r) { uint64_t x; get(r, &x, 8); return x; }
static double get_f64(rd_t *r) { double x; get(r, &x, 8); return x; }

/* The metadata as format `version` lays it out: version 3 appends the library to version 2's fields. */
static void encode_meta(hdr_t *h, const ckpt_meta_t *m, uint32_t version) {
    put_i32(h, m->cfg.vocab);
    put_i32(h, m->cfg.d_model);
    put_i32(h, m->cfg.n_layers);
    put_i32(h, m->cfg.n_heads);
    put_i32(h, m->cfg.d_ff);
    put_i32(h, m->cfg.max_seq);
    put_f64(h, m->cfg.rope_theta);
    put_f64(h, m->cfg.norm_eps);
    put_u64(h, m->n_params);
    put_u64(h, m->step);
    put_u64(h, m->seed);
    put(h, m->data_desc, sizeof m->data_desc);
    put_i32(h, m->batch);
    put_i32(h, m->seq_len);
    put_i32(h, m->accum);
    put_i32(h, m->total_steps);
    put_i32(h, m->warmup);
    put_f64(h, m->lr);
    put_f64(h, m->min_lr);
    put_f64(h, m->weight_decay);
    put_f64(h, m->beta1);
    put_f64(h, m->beta2);
    put_f64(h, m->adam_eps);
    put_f64(h, m->clip);
    put(h, m->backend, sizeof m->backend);
    put(h, m->precision, sizeof m->precision);
    put(h, m->attention, sizeof m->attention);
    put(h, m->matmul, sizeof m->matmul);
    put(h, m->device, sizeof m->device);
    if (version >= 3) put(h, m->library, sizeof m->library);
}

/* The inverse of encode_meta(); a version-2 file leaves library empty ("not recorded"). */
static void decode_meta(rd_t *r, ckpt_meta_t *m, uint32_t version) {
    memset(m, 0, sizeof *m);
    m->cfg.vocab = get_i32(r);
    m->cfg.d_model = get_i32(r);
    m->cfg.n_layers = get_i32(r);
    m->cfg.n_heads = get_i32(r);
    m->cfg.d_ff = get_i32(r);
    m->cfg.max_seq = get_i32(r);
    m->cfg.rope_theta = (float)get_f64(r);
    m->cfg.norm_eps = (float)get_f64(r);
    m->n_params = get_u64(r);
    m->step = get_u64(r);
    m->seed = get_u64(r);
    get(r, m->data_desc, sizeof m->data_desc);
    m->data_desc[sizeof m->data_desc - 1] = '\0';
    m->batch = get_i32(r);
    m->seq_len = get_i32(r);
    m->accum = get_i32(r);
    m->total_steps = get_i32(r);
    m->warmup = get_i32(r);
    m->lr = get_f64(r);
    m->min_lr = get_f64(r);
    m->weight_decay = get_f64(r);
    m->beta1 = get_f64(r);
    m->beta2 = get_f64(r);
    m->adam_eps = get_f64(r);
    m->clip = get_f64(r);
    get(r, m->backend, sizeof m->backend);
    get(r, m->precision, sizeof m->precision);
    get(r, m->attention, sizeof m->attention);
    get(r, m->matmul, sizeof m->matmul);
    get(r, m->device, sizeof m->device);
    if (version >= 3) get(r, m->library, sizeof m->library);
    /* A corrupt file must not leave a name without its end (the checksum is checked after). */
    m->backend[sizeof m->backend - 1] = m->precision[sizeof m->precision - 1] = '\0';
    m->attention[sizeof m->attention - 1] = m->matmul[sizeof m->matmul - 1] = '\0';
    m->device[sizeof m->device - 1] = m->library[sizeof m->library - 1] = '\0';
}

/* Bytes from the magic to the end of the metadata in format `version`. */
static size_t header_bytes(uint32_t version) {
    static hdr_t h;
    ckpt_meta_t z;
    memset(&z, 0, sizeof z);
    h.n = 0;
    encode_meta(&h, &z, version);
    return 16 + h.n;
}

/* path.tmp, the file a save writes before renaming it over path, into tmp[n]. A path
 * too long to take the suffix is refused rather than cut to fit: at 4095 characters the
 * cut name is path itself, which a save would overwrite in place and
 * checkpoint_check_writable() would delete. */
static int tmp_name(const char *path, char *tmp, size_t n, char *err, size_t errlen) {
    if ((size_t)snprintf(tmp, n, "%s.tmp", path) < n) return 0;
    return course_error(err, errlen, "the checkpoint path is too long (%zu characters): with \".tmp\" added "
                        "for the file a save writes first, it is longer than the %zu a path may have; give a "
                        "shorter path", strlen(path), n - 1);
}

int checkpoint_save(const char *path, const ckpt_meta_t *meta, const float *params, const float *m,
                    const float *v, char *err, size_t errlen) {
    char tmp[4096];
    if (tmp_name(path, tmp, sizeof tmp, err, errlen)) return -1;
    hdr_t *h = host_calloc(1, sizeof *h);
    uint32_t version = CKPT_VERSION, hbytes = (uint32_t)header_bytes(version);
    put(h, MAGIC, 8);
    put(h, &version, 4);
    put(h, &hbytes, 4);
    encode_meta(h, meta, version);
    size_t n = (size_t)meta->n_params;
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        host_free(h);
        return course_error(err, errlen, "%s: cannot create checkpoint (%s)", tmp, strerror(errno));
    }
    /* e keeps the errno of the first call that failed: fclose, free and
     * remove below may each set it again. */
    uint64_t sum = course_fnv1a(COURSE_FNV1A_OFFSET, h->buf, h->n);
    int ok = fwrite(h->buf, 1, h->n, f) == h->n, e = ok ? 0 : errno;
    const float *arrays[3] = {params, m, v};
    for (int a = 0; a < 3 && ok; a++) {
        ok = fwrite(arrays[a], sizeof(float), n, f) == n;
        if (!ok) e = errno;
        sum = course_fnv1a(sum, arrays[a], n * sizeof(float));
    }
    if (ok && fwrite(&sum, 8, 1, f) != 1) ok = 0, e = errno;
    if (fclose(f) != 0 && ok) ok = 0, e = errno;
    host_free(h);
    if (!ok) {
        remove(tmp);
        return course_error(err, errlen, "%s: writing the checkpoint failed (%s); is the disk full?", path,
                    strerror(e ? e : EIO));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp); /* a full-size stray file would only fill the disk */
        if (e == EISDIR)
            return course_error(err, errlen, "%s is a directory; give a file name for the checkpoint", path);
        return course_error(err, errlen, "%s: cannot rename %s over it (%s)", path, tmp, strerror(e));
    }
    return 0;
}

int checkpoint_check_writable(const char *path, char *err, size_t errlen) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return course_error(err, errlen, "%s is a directory; give a file name for the checkpoint", path);
    /* Create and remove the same path.tmp that checkpoint_save() writes: the
     * rename then only needs the folder we just wrote into. */
    char tmp[4096];
    if (tmp_name(path, tmp, sizeof tmp, err, errlen)) return -1;
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return course_error(err, errlen, "%s: cannot create %s (%s); check that the folder exists and is "
                    "writable", path, tmp, strerror(errno));
    fclose(f);
    if (remove(tmp) != 0)
        return course_error(err, errlen, "%s: cannot remove the test file %s (%s)", path, tmp, strerror(errno));
    return 0;
}

/* The first floating-point field that is NaN or infinite, by its flag, or
 * NULL. No run writes one (the flags refuse them), and a NaN never compares
 * equal, so without this check such a file would be refused as a mismatch
 * that reads "--lr: checkpoint nan, this run nan". */
static const char *non_finite_field(const ckpt_meta_t *m) {
    const struct { const char *name; double v; } f[] = {
        {"rope theta", m->cfg.rope_theta}, {"norm eps", m->cfg.norm_eps}, {"--lr", m->lr},
        {"--min-lr", m->min_lr}, {"--weight-decay", m->weight_decay}, {"--beta1", m->beta1},
        {"--beta2", m->beta2}, {"--adam-eps", m->adam_eps}, {"--clip", m->clip},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!isfinite(f[i].v)) return f[i].name;
    return NULL;
}

/* What to do about a checkpoint that is damaged: checkpoint_save() writes
 * atomically, so a cut or grown file was damaged after it was written. */
#define DAMAGED_HINT "if it was copied, copy it again; else resume from an earlier checkpoint or start again"

/* Read the whole file and check magic, version, size, checksum and that its
 * numbers are finite. The header is read and checked first: the file's size
 * must be the one its header implies before the rest is read, so a file that
 * is cut short, has bytes appended or is sparse and of any size never becomes
 * an allocation of its size. *header_out is the header's size in the file's
 * version: where the arrays start. */
static uint8_t *read_checked(const char *path, size_t *len_out, size_t *header_out, ckpt_meta_t *meta,
                             char *err, size_t errlen) {
    /* Only a regular file will do: a FIFO would block, a directory has no size. */
    size_t size = 0;
    FILE *f = course_open_regular(path, path, "give a checkpoint file (one that --save wrote)", &size, err, errlen);
    if (!f) return NULL;
    const long len = (long)size;
    if (len < 16) {
        fclose(f);
        course_error(err, errlen, "%s: %ld bytes is too short to be a checkpoint (the header alone is %zu or "
             "more); " DAMAGED_HINT, path, len, header_bytes(CKPT_VERSION_OLDEST));
        return NULL;
    }
    /* The magic bytes first: any other file is refused from them (a --resume
     * pointed at a large data file, say). As much as the newest header holds is
     * read: an older, shorter header is then followed by some of the parameters,
     * which the whole read below must find unchanged too. */
    uint8_t head[sizeof ((hdr_t *)0)->buf];
    const size_t hn = size < header_bytes(CKPT_VERSION) ? size : header_bytes(CKPT_VERSION);
    if (fread(head, 1, hn, f) != hn || memcmp(head, MAGIC, 8) != 0) {
        fclose(f);
        course_error(err, errlen, "%s: not a checkpoint of this course (bad magic bytes); give the file that "
             "--save wrote", path);
        return NULL;
    }
    rd_t r = {head, hn, 8};
    uint32_t version, hbytes;
    get(&r, &version, 4);
    get(&r, &hbytes, 4);
    /* Version 1 did not record how the run computed: taking it for cpu fp32 would resume a
     * bf16 run in fp32 without a word, so it is refused with what to do instead. Version 2
     * lacks only the library, which is not compared anyway: it loads, as "not recorded". */
    if (version >= 1 && version < CKPT_VERSION_OLDEST) {
        fclose(f);
        course_error(err, errlen, "%s: checkpoint format version %u was written by an older build of the "
             "course's programs and does not record the backend, precision, attention and matmul it was "
             "computed with (this build reads versions %d to %d); resume it with the build that wrote it, or "
             "train again from the start", path, version, CKPT_VERSION_OLDEST, CKPT_VERSION);
        return NULL;
    }
    const int known = version >= CKPT_VERSION_OLDEST && version <= CKPT_VERSION;
    const size_t hb = header_bytes(known ? version : CKPT_VERSION);
    if (!known || hbytes != hb) {
        fclose(f);
        course_error(err, errlen, "%s: checkpoint format version %u (header %u bytes); this program reads "
             "version %d (header %zu bytes) and version %d (header %zu bytes)", path, version, hbytes,
             CKPT_VERSION, header_bytes(CKPT_VERSION), CKPT_VERSION_OLDEST, header_bytes(CKPT_VERSION_OLDEST));
        return NULL;
    }
    if ((size_t)len < hb + 8) {
        fclose(f);
        course_error(err, errlen, "%s: truncated: %ld bytes, less than the %zu-byte header and checksum; "
             DAMAGED_HINT, path, len, hb);
        return NULL;
    }
    decode_meta(&r, meta, version);
    /* Bounded before the size is computed from it: 12 bytes a parameter of a larger count
     * can wrap around 2^64 to any size, the file's own included, and the size message
     * would then read "12644 bytes, but a checkpoint of ... parameters has 12644 bytes". */
    if (meta->n_params > ((size_t)1 << 40)) {
        fclose(f);
        course_error(err, errlen, "%s: its header gives %llu parameters, more than a checkpoint may hold "
             "(2^40): the file is corrupt; " DAMAGED_HINT, path, (unsigned long long)meta->n_params);
        return NULL;
    }
    size_t want_len = hb + 3 * (size_t)meta->n_params * sizeof(float) + 8;
    if ((size_t)len != want_len) {
        fclose(f);
        course_error(err, errlen, "%s: %ld bytes, but a checkpoint of %llu parameters has %zu bytes "
             "(truncated or corrupt); " DAMAGED_HINT, path, len, (unsigned long long)meta->n_params, want_len);
        return NULL;
    }
    uint8_t *buf = host_malloc((size_t)len);
    size_t got = fseek(f, 0, SEEK_SET) == 0 ? fread(buf, 1, (size_t)len, f) : 0;
    fclose(f);
    /* The header read twice must be the same bytes: the file may change in between. */
    if (got != (size_t)len || memcmp(buf, head, hn) != 0) {
        host_free(buf);
        course_error(err, errlen, "%s: read %zu of %ld bytes, or the file changed while being read; is another "
             "run writing it?", path, got, len);
        return NULL;
    }
    uint64_t stored;
    memcpy(&stored, buf + len - 8, 8);
    if (course_fnv1a(version < 3 ? FNV_OFFSET_V2 : COURSE_FNV1A_OFFSET, buf, (size_t)len - 8) != stored) {
        host_free(buf);
        course_error(err, errlen, "%s: checksum mismatch: the file is corrupt; resume from an earlier "
             "checkpoint or start again", path);
        return NULL;
    }
    const char *odd = non_finite_field(meta);
    if (odd) {
        host_free(buf);
        course_error(err, errlen, "%s: the checkpoint's %s is not a finite number, which no run writes (the "
             "file was made or edited by something other than checkpoint_save); resume from another checkpoint "
             "or start again", path, odd);
        return NULL;
    }
    /* A run saves at most at its last step. A step past it (a made or edited file) would also
     * not fit the trainer's int step counter: resuming from 2^32 + 5 would start at step 5. */
    if (meta->total_steps < 0 || meta->step > (uint64_t)meta->total_steps) {
        host_free(buf);
        course_error(err, errlen, "%s: the checkpoint is at step %llu of --steps %d, past the end of its run, "
             "which no run writes (the file was made or edited by something other than checkpoint_save); "
             "resume from another checkpoint or start again", path, (unsigned long long)meta->step,
             meta->total_steps);
        return NULL;
    }
    *len_out = (size_t)len;
    *header_out = hb;
    return buf;
}

int checkpoint_read_meta(const char *path, ckpt_meta_t *meta, char *err, size_t errlen) {
    size_t len, off;
    uint8_t *buf = read_checked(path, &len, &off, meta, err, errlen);
    if (!buf) return -1;
    host_free(buf);
    return 0;
}

/* Append one "; "-separated item to a message; a full buffer truncates it
 * rather than running past the end. */
typedef struct { char buf[4096]; size_t used; int n; } diff_t;
static void diff_add(diff_t *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void diff_add(diff_t *d, const char *fmt, ...) {
    if (d->used + 1 >= sizeof d->buf) return;
    if (d->n++) d->used += (size_t)snprintf(d->buf + d->used, sizeof d->buf - d->used, "; ");
    if (d->used + 1 >= sizeof d->buf) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(d->buf + d->used, sizeof d->buf - d->used, fmt, ap);
    va_end(ap);
    if (k > 0) d->used += (size_t)k;
    if (d->used >= sizeof d->buf) d->used = sizeof d->buf - 1;
}

/* A floating-point field that differs, with as many digits as tell the two values
 * apart: %g's six would print "--lr: checkpoint 0.001, this run 0.001" for 0.001 and
 * 0.0010000001, naming the field but not the difference. 17 always tell doubles apart. */
static void diff_f(diff_t *d, const char *flag, double got, double want) {
    char g[32], w[32];
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(g, sizeof g, "%.*g", digits, got);
        snprintf(w, sizeof w, "%.*g", digits, want);
        if (strcmp(g, w) != 0) break;
    }
    diff_add(d, "%s: checkpoint %s, this run %s", flag, g, w);
}

int checkpoint_compare_meta(const ckpt_meta_t *want, const ckpt_meta_t *got, char *err,
                            size_t errlen) {
    diff_t d = {"", 0, 0};
#define DIFF_I(flag, field)                                                                    \
    if (want->field != got->field)                                                             \
        diff_add(&d, "%s: checkpoint %lld, this run %lld", flag, (long long)got->field, (long long)want->field);
#define DIFF_F(flag, field)                                                                    \
    if (!(want->field == got->field)) diff_f(&d, flag, (double)got->field, (double)want->field);
    DIFF_I("vocab", cfg.vocab)
    DIFF_I("--d-model", cfg.d_model)
    DIFF_I("--layers", cfg.n_layers)
    DIFF_I("--heads", cfg.n_heads)
    DIFF_I("--ffn", cfg.d_ff)
    DIFF_I("--max-seq", cfg.max_seq)
    DIFF_F("rope theta", cfg.rope_theta)
    DIFF_F("norm eps", cfg.norm_eps)
    DIFF_I("parameter count", n_params)
    DIFF_I("--seed", seed)
    DIFF_I("--batch", batch)
    DIFF_I("--seq", seq_len)
    DIFF_I("--accum", accum)
    DIFF_I("--steps", total_steps)
    DIFF_I("--warmup", warmup)
    DIFF_F("--lr", lr)
    DIFF_F("--min-lr", min_lr)
    DIFF_F("--weight-decay", weight_decay)
    DIFF_F("--beta1", beta1)
    DIFF_F("--beta2", beta2)
    DIFF_F("--adam-eps", adam_eps)
    DIFF_F("--clip", clip)
#undef DIFF_I
#undef DIFF_F
    if (strncmp(want->data_desc, got->data_desc, sizeof want->data_desc) != 0) {
        /* A text file of the same length with another hash: an edited file, or a checkpoint
         * older than format version 3, whose data.c hashed with another offset basis. */
        const char *sp = strstr(got->data_desc, " fnv1a=");
        const int same_len = !strncmp(got->data_desc, "text bytes=", 11) && sp &&
                             !strncmp(got->data_desc, want->data_desc, (size_t)(sp - got->data_desc) + 7);
        diff_add(&d, "data: checkpoint '%s', this run '%s'%s", got->data_desc, want->data_desc,
                 same_len ? " (a file of the same length with other bytes; or a checkpoint written before "
                            "format version 3, which hashed text files differently: resume that with the build "
                            "that wrote it)" : "");
    }
    /* How the run computed: each differing setting also says what to pass. The precision
     * follows the backend, and the cpu backend has no --attention or --matmul (its fp32
     * attention and OpenBLAS matmuls come with --backend cpu), so there the backend is the
     * flag to pass. */
    const int saved_cpu = !strcmp(got->backend, "cpu");
#define DIFF_S(name, field, flag, value)                                                       \
    if (strncmp(want->field, got->field, sizeof want->field) != 0)                             \
        diff_add(&d, "%s: checkpoint %s, this run %s (pass %s %s)", name, got->field, want->field, flag, value);
    DIFF_S("--backend", backend, "--backend", got->backend)
    DIFF_S("precision", precision, "--backend", got->backend)
    if (saved_cpu) {
        DIFF_S("attention", attention, "--backend", got->backend)
        DIFF_S("matmul", matmul, "--backend", got->backend)
    } else {
        DIFF_S("--attention", attention, "--attention", got->attention)
        DIFF_S("--matmul", matmul, "--matmul", got->matmul)
    }
#undef DIFF_S
    if (!d.n) return 0;
    return course_error(err, errlen, "%s", d.buf);
}

int checkpoint_load(const char *path, const ckpt_meta_t *want, ckpt_meta_t *got, float *params,
                    float *m, float *v, char *err, size_t errlen) {
    size_t len, off;
    uint8_t *buf = read_checked(path, &len, &off, got, err, errlen);
    if (!buf) return -1;
    char diff[4096];
    if (checkpoint_compare_meta(want, got, diff, sizeof diff)) {
        host_free(buf);
        return course_error(err, errlen, "%s does not match this run: %s; resume with the flags it was "
                    "written with", path, diff);
    }
    size_t n = (size_t)got->n_params;
    memcpy(params, buf + off, n * sizeof(float));
    memcpy(m, buf + off + n * sizeof(float), n * sizeof(float));
    memcpy(v, buf + off + 2 * n * sizeof(float), n * sizeof(float));
    host_free(buf);
    return 0;
}
