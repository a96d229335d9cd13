/*
 * libFuzzer harness: how train reads the --log of a resumed run
 * (open_resumed_log in kernels/train/trainer.c). `train --resume CKPT --log
 * FILE` keeps the log's rows up to the checkpoint's step and writes its own
 * after them; the file is whatever the user names, so any bytes may be in it.
 *
 * Feeds: byte 0 picks the format (bit 0: JSON, else CSV) and the checkpoint's
 * step (the other bits: 1, 2, 3, 4, 5, 10, 100 or 1000000000); the rest is the
 * log file's content, written to a file for each input.
 * Asserts: no crash, sanitizer report or hang; a refusal has a one-line message
 * and leaves the file as it was; otherwise the file is now a prefix of what it
 * held: empty when no row is kept (the run then writes the header), else the
 * format's header line and then whole rows, as many as reported, each of a step
 * no later than the checkpoint's, ending where the run's next row joins on (a
 * CSV row's newline, a JSON row's "}"). And the reader refuses exactly the logs
 * this harness's own reading says it must: a header other than the format's,
 * rows to keep whose steps do not go up, or a row up to the checkpoint's step
 * after the line where the rows to keep end (cutting there would lose it).
 * Rows are read independently: a CSV row is seven fields, the step's digits
 * then each field empty or a whole finite number; a JSON row is one object,
 * read by jansson.
 *
 * trainer.c's reader is static, so it is included whole.
 */
#include "train/trainer.c"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[PATH_MAX], file[PATH_MAX + 16];

static void clean_up(void)
{
    unlink(file);
    rmdir(dir);
}

/* A CSV field after the step: empty, or a whole finite number of fewer than 64
 * characters that strtod reads with no blank before it. */
static int csv_number(const char *s, size_t n)
{
    if (n == 0) return 1;
    if (n >= 64 || memchr(s, 0, n)) return 0;
    char buf[64];
    memcpy(buf, s, n);
    buf[n] = 0;
    if (buf[0] == ' ' || (buf[0] >= '\t' && buf[0] <= '\r')) return 0;
    char *end;
    double v = strtod(buf, &end);
    return end == buf + n && v - v == 0; /* finite */
}

/* The step of a complete row, read independently of the reader (see the top);
 * -1 when the line is not one, -2 when jansson and the reader may disagree on
 * it for reasons of their own (nesting past 256 levels, which the reader
 * refuses and jansson reads): the input is then skipped. */
static long row_step(const char *s, size_t n, int json)
{
    static const char lead[] = "  {\"step\": ";
    size_t i = 0;
    if (json) {
        if (n < sizeof lead - 1 || memcmp(s, lead, sizeof lead - 1)) return -1;
        size_t m = n;
        if (s[m - 1] == ',') m--;
        if (s[m - 1] != '}' || memchr(s, 0, m)) return -1;
        size_t opens = 0;
        for (size_t k = 0; k < m; k++) opens += s[k] == '{' || s[k] == '[';
        if (opens > 200) return -2;
        json_error_t e;
        json_t *j = json_loadb(s + 2, m - 2, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &e);
        int object = j && json_is_object(j);
        json_decref(j);
        if (!object) return -1;
        i = sizeof lead - 1;
    } else {
        int fields = 1;
        for (size_t k = 0; k < n; k++) fields += s[k] == ',';
        if (fields != 7) return -1;
    }
    long step = 0;
    size_t d = i;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        if (step >= 1000000000L) return -1;
        step = step * 10 + (s[i] - '0');
    }
    if (!(i > d && i < n && s[i] == ',')) return -1;
    if (!json)
        for (size_t f = i + 1; f <= n;) {
            const char *c = memchr(s + f, ',', n - f);
            size_t e = c ? (size_t)(c - s) : n;
            if (!csv_number(s + f, e - f)) return -1;
            f = e + 1;
        }
    return step;
}

/* This harness's own verdict on a log: 1 when the reader must refuse it, else
 * 0 with the number of rows to keep in *keep; -1 to skip the input. */
static int must_refuse(const char *text, size_t n, int json, long start, int *keep)
{
    const char *header = json ? "[" : "step,lr,train_loss,eval_loss,grad_norm,tokens_per_s,mfu";
    *keep = 0;
    if (n == 0) return 0;
    const char *nl = memchr(text, '\n', n);
    size_t len = nl ? (size_t)(nl - text) : n;
    if (len != strlen(header) || memcmp(text, header, len)) return 1;
    int ended = 0;
    long prev = -1;
    for (size_t at = len + 1; at < n; at += len + 1) {
        nl = memchr(text + at, '\n', n - at);
        len = nl ? (size_t)(nl - (text + at)) : n - at;
        long step = (nl || json) ? row_step(text + at, len, json) : -1;
        if (step == -2) return -1;
        int row = step >= 0 && step <= start;
        if (!ended && row) {
            if (step <= prev) return 1;
            prev = step;
            ++*keep;
        } else if (!ended) {
            ended = 1;
        } else if (row) {
            return 1;
        }
    }
    return 0;
}

static char *slurp(size_t *n)
{
    FILE *f = fopen(file, "rb");
    if (!f) abort();
    char *s = malloc(1 << 16 | 1);
    *n = fread(s, 1, 1 << 16, f);
    if (!feof(f)) abort(); /* inputs are far shorter */
    fclose(f);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int steps[] = {1, 2, 3, 4, 5, 10, 100, 1000000000};
    if (size < 1 || size > 60000) return 0;
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/fuzz_train_log.XXXXXX", t && *t ? t : P_tmpdir);
        if (!mkdtemp(dir)) abort();
        snprintf(file, sizeof file, "%s/loss.log", dir);
        atexit(clean_up);
    }
    const int json = data[0] & 1, start = steps[(data[0] >> 1) & 7];
    const char *text = (const char *)data + 1;
    const size_t n = size - 1;
    FILE *w = fopen(file, "wb");
    if (!w || fwrite(text, 1, n, w) != n || fclose(w)) abort();

    int keep;
    const int refuse = must_refuse(text, n, json, start, &keep);
    if (refuse < 0) return 0;

    char err[256 + PATH_MAX] = "";
    int kept = -1;
    FILE *f = open_resumed_log(file, json, start, &kept, err, sizeof err);
    if (f && fclose(f)) abort();
    size_t got_n;
    char *got = slurp(&got_n);
    if (!f) {
        if (!err[0] || strchr(err, '\n') || kept != 0) abort();
        if (got_n != n || memcmp(got, text, n)) abort(); /* refused: left as it was */
        if (!refuse) {
            fprintf(stderr, "refused a log whose %d rows could be kept: %s\n", keep, err);
            abort();
        }
        free(got);
        return 0;
    }
    if (refuse || kept != keep) {
        fprintf(stderr, "kept %d rows of a log that should be %s\n", kept, refuse ? "refused" : "kept whole");
        abort();
    }
    if (got_n > n || memcmp(got, text, got_n)) abort(); /* a prefix of what it held */
    if (kept == 0) {
        if (got_n != 0) abort();
        free(got);
        return 0;
    }
    const char *header = json ? "[\n" : "step,lr,train_loss,eval_loss,grad_norm,tokens_per_s,mfu\n";
    if (got_n < strlen(header) || memcmp(got, header, strlen(header))) abort();
    if (got[got_n - 1] != (json ? '}' : '\n')) abort();
    /* The rows kept: whole lines, each a row up to the checkpoint's step. */
    size_t at = strlen(header);
    int rows = 0;
    while (at < got_n) {
        const char *nl = memchr(got + at, '\n', got_n - at);
        size_t len = nl ? (size_t)(nl - (got + at)) : got_n - at;
        long step = row_step(got + at, len, json);
        if (step < 0 || step > start) abort();
        rows++;
        at += len + 1;
    }
    if (rows != kept) abort();
    /* The line after them is no complete row the run should have kept (a CSV
     * row needs its newline, a JSON row may be the file's last line). */
    if (got_n < n) {
        size_t next = json ? got_n + (text[got_n] == ',') + 1 : got_n;
        if (next < n) {
            const char *nl = memchr(text + next, '\n', n - next);
            size_t len = nl ? (size_t)(nl - (text + next)) : n - next;
            long step = (nl || json) ? row_step(text + next, len, json) : -1;
            if (step >= 0 && step <= start) abort();
        }
    }
    free(got);
    return 0;
}
