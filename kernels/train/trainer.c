/* The training loop (see trainer.h). */
#include "trainer.h"

#include <cblas.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "checkpoint.h"
#include "error.h"
#include "data.h"
#include "hash.h"
#include "json.h"
#include "memory.h"
#include "cpu/model_cpu.h"
#include "cpu/model_ops.h"
#include "timer.h"

train_opts_t train_opts_default(void) {
    train_opts_t o;
    memset(&o, 0, sizeof o);
    o.cfg = model_config_default();
    o.batch = 16;
    o.seq = 64;
    o.accum = 1;
    o.steps = 150;
    o.warmup = 20;
    o.lr = 1e-2;
    o.min_lr = 1e-3;
    o.weight_decay = 0.0;
    o.beta1 = 0.9;
    o.beta2 = 0.95;
    o.adam_eps = 1e-8;
    o.clip = 1.0;
    o.seed = 1;
    o.markov_seed = 1;
    o.markov_states = 256;
    o.markov_branch = 2;
    o.eval_every = 50;
    o.eval_batches = 8;
    o.print_every = 50;
    return o;
}

int train_opts_validate(const train_opts_t *o, char *err, size_t errlen) {
    if (model_config_validate(&o->cfg, err, errlen)) return -1;
    if (o->seq < 1)
        return course_error(err, errlen, "--seq %d must be at least 1", o->seq);
    if (o->seq > o->cfg.max_seq)
        return course_error(err, errlen, "--seq %d is longer than the maximum sequence length --max-seq %d; "
                    "shorten --seq or raise --max-seq", o->seq, o->cfg.max_seq);
    if (o->batch < 1 || o->accum < 1)
        return course_error(err, errlen, "--batch %d and --accum %d must be at least 1", o->batch, o->accum);
    if (o->batch % o->accum)
        return course_error(err, errlen, "--batch %d is not divisible by --accum %d; each micro-batch gets "
                    "batch/accum sequences, so pick --batch a multiple of --accum", o->batch, o->accum);
    if (o->steps < 1) return course_error(err, errlen, "--steps %d must be at least 1", o->steps);
    if (o->warmup < 0) return course_error(err, errlen, "--warmup %d must be at least 0", o->warmup);
    if (!(o->lr > 0.0) || !(o->min_lr >= 0.0) || o->min_lr > o->lr)
        return course_error(err, errlen, "--lr %g and --min-lr %g: need 0 <= min-lr <= lr and lr > 0",
                    o->lr, o->min_lr);
    if (!(o->beta1 >= 0.0 && o->beta1 < 1.0) || !(o->beta2 >= 0.0 && o->beta2 < 1.0))
        return course_error(err, errlen, "--beta1 %g and --beta2 %g must be in [0, 1)", o->beta1, o->beta2);
    /* AdamW divides by sqrt(v) + eps, and v is 0 for a parameter whose gradients have all been 0
     * (an embedding row of a byte not yet seen): eps 0 makes that 0 / 0 = NaN on the first step. */
    if (!(o->adam_eps > 0.0))
        return course_error(err, errlen, "--adam-eps %g must be greater than 0 (AdamW divides by sqrt(v) + eps, "
                    "and v is 0 for a parameter that has had no gradient yet); the usual value is 1e-8",
                    o->adam_eps);
    if (o->stop_at < 0 || o->stop_at > o->steps)
        return course_error(err, errlen, "--stop-at %d must be in [0, --steps %d]", o->stop_at, o->steps);
    if (o->eval_batches < 1) return course_error(err, errlen, "--eval-batches %d must be at least 1", o->eval_batches);
    if (o->log_format && strcmp(o->log_format, "csv") && strcmp(o->log_format, "json"))
        return course_error(err, errlen, "--log-format '%s' is not known; pick csv or json", o->log_format);
    return 0;
}

double train_lr_at(const train_opts_t *o, int step) {
    if (step < o->warmup) return o->lr * (double)(step + 1) / (double)o->warmup;
    int span = o->steps - o->warmup;
    if (span <= 1) return o->lr;
    double frac = (double)(step - o->warmup) / (double)(span - 1);
    return o->min_lr + 0.5 * (o->lr - o->min_lr) * (1.0 + cos(M_PI * frac));
}

double train_measure_cpu_peak(void) {
    const int n = 768;
    float *a = host_malloc((size_t)n * n * sizeof(float)), *b = host_malloc((size_t)n * n * sizeof(float));
    float *c = host_calloc((size_t)n * n, sizeof(float));
    for (size_t i = 0; i < (size_t)n * n; i++) {
        a[i] = (float)(i % 7) * 0.1f;
        b[i] = (float)(i % 5) * 0.1f;
    }
    /* OpenBLAS's own threads, as many as OpenMP's: the best this machine's cores do.
     * (The model's matmuls run single-threaded sgemms on the OpenMP threads.) */
    int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(omp_get_max_threads());
    /* The best of as many runs as fit in a quarter of a second (at least 4):
     * a short burst of load from another process while a few runs were
     * timed used to lower the peak enough to print MFUs above 100%. */
    double best = 1e30, start = wall_time();
    for (int r = 0; r < 4 || (wall_time() - start < 0.25 && r < 1000); r++) {
        double t0 = wall_time();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double dt = wall_time() - t0;
        if (r > 0 && dt < best) best = dt; /* the first run warms caches and threads */
    }
    openblas_set_num_threads(blas_threads);
    host_free(a);
    host_free(b);
    host_free(c);
    return tflops(2.0 * n * n * n, best);
}

static size_t peak_rss_bytes(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (size_t)ru.ru_maxrss * 1024; /* Linux reports kilobytes */
}

static void fill_meta(const train_opts_t *o, const data_source_t *d, const train_backend_t *b, int step,
                      ckpt_meta_t *m) {
    memset(m, 0, sizeof *m);
    m->cfg = o->cfg;
    m->n_params = b->n_params;
    m->step = (uint64_t)step;
    m->seed = o->seed;
    snprintf(m->data_desc, sizeof m->data_desc, "%s", d->desc);
    m->batch = o->batch;
    m->seq_len = o->seq;
    m->accum = o->accum;
    m->total_steps = o->steps;
    m->warmup = o->warmup;
    m->lr = o->lr;
    m->min_lr = o->min_lr;
    m->weight_decay = o->weight_decay;
    m->beta1 = o->beta1;
    m->beta2 = o->beta2;
    m->adam_eps = o->adam_eps;
    m->clip = o->clip;
    /* How the numbers were computed: the same batches through other arithmetic are another run. */
    snprintf(m->backend, sizeof m->backend, "%s", o->backend ? o->backend : "cpu");
    snprintf(m->precision, sizeof m->precision, "%s", b->precision ? b->precision : "");
    snprintf(m->attention, sizeof m->attention, "%s", b->attention ? b->attention : "");
    snprintf(m->matmul, sizeof m->matmul, "%s", b->matmul ? b->matmul : "");
    snprintf(m->device, sizeof m->device, "%s", b->device);
    snprintf(m->library, sizeof m->library, "%s", b->library);
}

/* ---- backends ---------------------------------------------------------------- */

static double cpu_forward(void *m, const int *in, const int *tg) { return model_cpu_forward(m, in, tg); }
static void cpu_zero_grad(void *m) { model_cpu_zero_grad(m); }
static void cpu_backward(void *m, float scale) { model_cpu_backward(m, scale); }
static double cpu_grad_norm(void *m) { return model_cpu_grad_norm(m); }
static void cpu_step(void *mp, double gnorm, double clip, float lr, float b1, float b2, float eps, float wd,
                     long t) {
    model_cpu_t *m = mp;
    clip_grad_norm(m->grads, m->n_params, gnorm, clip);
    model_cpu_adamw(m, lr, b1, b2, eps, wd, t);
}
static void cpu_state(void *mp, float **p, float **am, float **av) {
    model_cpu_t *m = mp;
    *p = m->params;
    *am = m->adam_m;
    *av = m->adam_v;
}
static void cpu_state_loaded(void *m) { (void)m; }
static size_t cpu_bytes(void *m) { return model_cpu_bytes(m); }
static void cpu_destroy(void *m) {
    model_cpu_free(m);
    host_free(m);
}

static train_backend_open_fn gpu_backend_open = NULL;

void train_set_gpu_backend(train_backend_open_fn open) { gpu_backend_open = open; }

int train_backend_open(train_backend_t *b, const train_opts_t *o, int B, int T, char *err, size_t errlen) {
    const char *name = o->backend ? o->backend : "cpu";
    memset(b, 0, sizeof *b);
    if (!strcmp(name, "cpu")) {
        model_cpu_t *m = host_malloc(sizeof *m);
        model_cpu_init(m, &o->cfg, B, T, o->seed);
        b->model = m;
        b->n_params = m->n_params;
        snprintf(b->device, sizeof b->device, "CPU");
        b->precision = "fp32";
        b->attention = "naive"; /* fp32, the T x T probabilities stored (model_cpu.h) */
        b->matmul = "openblas"; /* single-threaded cblas_sgemm calls */
        matmul_library(b->library, sizeof b->library);
        b->measure_cpu_peak = 1;
        b->forward = cpu_forward;
        b->zero_grad = cpu_zero_grad;
        b->backward = cpu_backward;
        b->grad_norm = cpu_grad_norm;
        b->step = cpu_step;
        b->state = cpu_state;
        b->state_loaded = cpu_state_loaded;
        b->bytes = cpu_bytes;
        b->destroy = cpu_destroy;
        return 0;
    }
    if (strcmp(name, "cuda") && strcmp(name, "emu"))
        return course_error(err, errlen, "--backend %s is not known; pick cpu, cuda or emu", name);
    if (!gpu_backend_open)
        return course_error(err, errlen, "--backend %s: this program is built for the CPU only; the GPU backend is in "
                    "the lab-05 programs: make check LAB=05 TARGET=%s builds "
                    "build/%s/labs/05-single-gpu-training/train (your kernels; solutions/ for the reference ones), "
                    "then pass --backend %s", name, name, name, name);
    return gpu_backend_open(b, name, &o->cfg, B, T, o->seed, err, errlen);
}

/* ---- the loop --------------------------------------------------------------------- */

/* The held-out set is eval_batches whole batches of --batch sequences (the first
 * eval_batches x batch sequences of the eval split), so it is the same set whatever --accum:
 * it once held eval_batches micro-batches, and --accum 4 evaluated a quarter as many sequences.
 * The backend is sized for one micro-batch, so each batch runs as accum micro-batches; their
 * mean losses cover equally many tokens, so their mean is the batch's. */
static double eval_loss(train_backend_t *m, const data_source_t *d, const train_opts_t *o, int *in,
                        int *tg) {
    const int micro = o->batch / o->accum;
    double sum = 0.0;
    for (int j = 0; j < o->eval_batches; j++) {
        data_batch(d, SPLIT_EVAL, o->seed, (uint64_t)j, 0, 1, o->batch, o->seq, in, tg);
        for (int a = 0; a < o->accum; a++) {
            size_t off = (size_t)a * micro * o->seq;
            sum += m->forward(m->model, in + off, tg + off);
        }
    }
    return sum / ((double)o->eval_batches * o->accum);
}

static void format_mem(size_t bytes, char *buf, size_t len) {
    if (bytes >= 1000000000ull) snprintf(buf, len, "%.1f GB", bytes / 1e9);
    else snprintf(buf, len, "%.0f MB", bytes / 1e6);
}

/* The memory a run needs: the GPU's in use for a GPU backend, else the process's peak resident set. */
static void memory_line(const train_backend_t *m, int long_form, char *buf, size_t len) {
    char a[24];
    if (m->device_used) {
        format_mem(m->device_used(m->model), a, sizeof a);
        snprintf(buf, len, "%s %s", long_form ? "GPU memory in use" : "GPU", a);
    } else {
        format_mem(peak_rss_bytes(), a, sizeof a);
        snprintf(buf, len, "%s%s", long_form ? "peak memory " : "", a);
    }
}

/* One number of a log row. JSON has no NaN or infinity, so a value that is not
 * finite is null there (and an empty field in the CSV, as "no eval" is). */
static void log_number(FILE *f, int json, const char *fmt, double v) {
    if (isfinite(v)) fprintf(f, fmt, v);
    else if (json) fputs("null", f);
}

static void log_row(FILE *f, int json, int first, int step, double lr, double loss, double ev, double gnorm,
                    double tps, double mfu) {
    static const char *const key[] = {"lr", "train_loss", "eval_loss", "grad_norm", "tokens_per_s", "mfu"};
    static const char *const fmt[] = {"%.6g", "%.6f", "%.6f", "%.6g", "%.1f", "%.5f"};
    const double v[] = {lr, loss, ev, gnorm, tps, mfu};
    if (json) fprintf(f, "%s  {\"step\": %d", first ? "" : ",\n", step);
    else fprintf(f, "%d", step);
    for (int i = 0; i < 6; i++) {
        if (json) fprintf(f, ", \"%s\": ", key[i]);
        else fputc(',', f);
        log_number(f, json, fmt[i], v[i]);
    }
    fputs(json ? "}" : "\n", f);
}

/* One CSV field of a row after the step: empty (a value that was not finite, or no eval), or
 * a whole finite number, as log_number writes it. */
static int log_csv_number(const char *p, const char *end) {
    if (p == end) return 1;
    char buf[64];
    if ((size_t)(end - p) >= sizeof buf) return 0;
    memcpy(buf, p, (size_t)(end - p));
    buf[end - p] = '\0';
    char *stop;
    double v = strtod(buf, &stop);
    /* All of the field (a NUL byte in it would end strtod's string early), and no blank first:
     * strtod would skip it. */
    return stop == buf + (end - p) && isfinite(v) && !isspace((unsigned char)buf[0]);
}

/* The step a log line records, or -1 when it is no complete row of this format: a CSV row is
 * "STEP," then six more fields, each empty or a number; a JSON row is '  {"step": STEP, ...}',
 * one JSON object, with the "," between rows at its end. A crashed run may leave its last row
 * cut short: that is no row. */
static long log_line_step(const char *line, size_t len, int json) {
    const char *p = line, *end = line + len;
    if (json) {
        static const char lead[] = "  {\"step\": ";
        if (len < sizeof lead - 1 || memcmp(p, lead, sizeof lead - 1)) return -1;
        const char *obj_end = (len >= 2 && end[-1] == ',') ? end - 1 : end;
        if (obj_end[-1] != '}' || !course_json_valid(line + 2, (size_t)(obj_end - (line + 2)))) return -1;
        p += sizeof lead - 1;
    } else {
        int commas = 0;
        for (const char *q = p; q < end; q++) commas += *q == ',';
        if (commas != 6) return -1;
    }
    long step = 0;
    const char *digits = p;
    while (p < end && *p >= '0' && *p <= '9' && step < 1000000000L) step = step * 10 + (*p++ - '0');
    if (p == digits || p == end || *p != ',') return -1;
    if (!json)
        for (const char *f = p + 1; f <= end;) { /* the six fields after the step */
            const char *c = memchr(f, ',', (size_t)(end - f));
            if (!c) c = end;
            if (!log_csv_number(f, c)) return -1;
            f = c + 1;
        }
    return step;
}

/* The step of the line at text + at (and its length, in *len), or -1 when it is no complete row:
 * a CSV row needs its newline; a JSON log's last row has none until the next row comes. */
static long log_step_at(const char *text, size_t n, size_t at, int json, size_t *len) {
    const char *nl = memchr(text + at, '\n', n - at);
    *len = nl ? (size_t)(nl - (text + at)) : n - at;
    return (nl || json) ? log_line_step(text + at, *len, json) : -1;
}

/* The --log of a resumed run: the rows the earlier run wrote up to the checkpoint's step (rows
 * after it were trained again from the checkpoint, and are written again), then this run's.
 * Emptying it, as a new run does, would lose the first part of the loss curve. Returns the file,
 * open for writing after the rows kept, and their count in *kept; NULL, with the reason in err,
 * when the file holds something other than a log of this format, or a log whose rows the cut
 * would lose: a row up to the checkpoint's step after a line that is no row or a later step, or
 * rows whose steps do not go up (the file is then left as it is). */
static FILE *open_resumed_log(const char *path, int json, int start, int *kept, char *err, size_t errlen) {
    *kept = 0;
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT) return course_create_output(path, "--log", err, errlen); /* a new log */
    size_t n = 0;
    char what[64 + PATH_MAX];
    snprintf(what, sizeof what, "--log %s", path);
    FILE *f = course_open_regular(path, what, "a resumed run adds its rows to the log of the run; give that log, "
                                  "or a new name", &n, err, errlen);
    if (!f) return NULL;
    char *text = host_malloc(n + 1);
    int bad = fread(text, 1, n, f) != n;
    fclose(f);
    if (bad) {
        host_free(text);
        course_error(err, errlen, "--log %s: cannot read it to resume it; give a new name to start another log",
                     path);
        return NULL;
    }
    text[n] = '\0';
    const char *header = json ? "[" : "step,lr,train_loss,eval_loss,grad_norm,tokens_per_s,mfu";
    if (n == 0) { /* the run stopped before its header: a new log */
        host_free(text);
        return course_create_output(path, "--log", err, errlen);
    }
    const char *nl = memchr(text, '\n', n);
    size_t len = nl ? (size_t)(nl - text) : n;
    if (len != strlen(header) || memcmp(text, header, len)) {
        course_error(err, errlen, "--log %s does not hold a %s training log (its first line is not '%s'), and a "
                     "resumed run adds its rows to the log of the run; give that log, or a new name", path,
                     json ? "JSON" : "CSV", header);
        host_free(text);
        return NULL;
    }
    /* Keep the header line and the rows up to the checkpoint's step; cut the text there. */
    size_t cut = len + 1, at = len + 1;
    int line_no = 1, stop_line = 0;
    long prev = -1, stop_step = -1;
    for (; at < n; at += len + 1) {
        line_no++;
        long step = log_step_at(text, n, at, json, &len);
        if (step < 0 || step > start) { /* trained again, or cut short */
            stop_line = line_no;
            stop_step = step;
            break;
        }
        if (step <= prev) {
            course_error(err, errlen, "--log %s: line %d is step %ld, which does not come after step %ld, so it is "
                         "not one run's log; give the log of the run, or a new name", path, line_no, step, prev);
            host_free(text);
            *kept = 0;
            return NULL;
        }
        prev = step;
        (*kept)++;
        cut = at + len + (json ? 0 : 1); /* JSON: the "," and newline come with the next row */
        if (json && text[cut - 1] == ',') cut--;
    }
    /* After the cut, no row the run should keep: cutting there would lose it. */
    for (at += len + 1; stop_line && at < n; at += len + 1) {
        long step = log_step_at(text, n, at, json, &len);
        int l = ++line_no;
        if (step >= 0 && step <= start) {
            char why[64];
            if (stop_step >= 0) snprintf(why, sizeof why, "step %ld, past the checkpoint's", stop_step);
            else snprintf(why, sizeof why, "no row of a %s training log", json ? "JSON" : "CSV");
            course_error(err, errlen, "--log %s: line %d is step %ld, up to the checkpoint's step %d, but comes "
                         "after line %d (%s), where the rows to keep end; resuming would lose it: mend the log, "
                         "or give a new name", path, l, step, start, stop_line, why);
            host_free(text);
            *kept = 0;
            return NULL;
        }
    }
    if (*kept == 0) cut = 0; /* no rows: the caller writes the header, as for a new log */
    f = course_create_output(path, "--log", err, errlen);
    if (f) fwrite(text, 1, cut, f);
    host_free(text);
    return f;
}

static int all_finite(const float *x, size_t n) {
    int ok = 1;
    for (size_t i = 0; i < n; i++) ok &= isfinite(x[i]) != 0; /* no early exit: a plain vectorisable loop */
    return ok;
}

/* A file the run writes must not be one it reads or another it writes: --log is created
 * (emptied) after --data and --resume are read, and a checkpoint is renamed over its --save
 * path, so the log would be lost. --save naming --resume is the usual way to continue a run. */
static int check_path_collisions(const train_opts_t *o, char *err, size_t errlen) {
    if (o->log_path && o->data_path && course_same_file(o->log_path, o->data_path))
        return course_error(err, errlen, "--log %s is also the --data file: creating the log would empty the "
                    "training text; give the log another name", o->log_path);
    if (o->log_path && o->resume_path && course_same_file(o->log_path, o->resume_path))
        return course_error(err, errlen, "--log %s is also the --resume checkpoint: creating the log would empty "
                    "the checkpoint just read; give the log another name", o->log_path);
    if (o->log_path && o->save_path && course_same_file(o->log_path, o->save_path))
        return course_error(err, errlen, "--log %s is also the --save file: each checkpoint is renamed over that "
                    "path, and the log would be lost; give the log and the checkpoint different names",
                    o->log_path);
    if (o->save_path && o->data_path && course_same_file(o->save_path, o->data_path))
        return course_error(err, errlen, "--save %s is also the --data file: the checkpoint would replace the "
                    "training text; give the checkpoint another name", o->save_path);
    return 0;
}

/* A checkpoint resumed on another device or math library goes on, with a warning: no flag
 * chooses either, and the same kernels there are the same run to within rounding, but they
 * may add in another order, so the numbers may leave the uninterrupted run's in the last bits. */
static void warn_if_computed_elsewhere(const char *path, const ckpt_meta_t *got, const ckpt_meta_t *want) {
    if (strcmp(got->device, want->device))
        fprintf(stderr, "train: warning: %s was written on %s and resumes on %s: the run goes on, but "
                "its numbers may differ from an uninterrupted run in the last bits\n", path,
                got->device[0] ? got->device : "an unnamed device",
                want->device[0] ? want->device : "an unnamed device");
    /* Another cuBLAS or OpenBLAS version (or OpenBLAS core) may pick other kernels for the same
     * matmul shapes, which sum in another order. A version-2 file does not say which it used. */
    if (!got->library[0])
        fprintf(stderr, "train: warning: %s does not record the math library it was computed with "
                "(checkpoints of format version 2 did not); this run uses %s: the run goes on, but if the "
                "library or its version differs, its matmuls may sum in another order and its numbers may "
                "differ from an uninterrupted run in the last bits\n", path,
                want->library[0] ? want->library : "an unnamed library");
    else if (strcmp(got->library, want->library))
        fprintf(stderr, "train: warning: %s was computed with %s and resumes with %s: the run goes on, but "
                "another library or version may pick other matmul kernels, which sum in another order, so "
                "its numbers may differ from an uninterrupted run in the last bits\n", path, got->library,
                want->library[0] ? want->library : "an unnamed library");
}

/* "NaN" or "inf", for the message that stops a run. */
static const char *nonfinite_name(double v) { return isnan(v) ? "NaN" : "inf"; }

int train_run(const train_opts_t *o, train_result_t *res) {
    char err[2048];
    if (res) {
        memset(res, 0, sizeof *res);
        res->eval_loss = res->last_train_loss = res->entropy_rate = NAN;
    }
    if (train_opts_validate(o, err, sizeof err)) {
        fprintf(stderr, "train: %s\n", err);
        return -1;
    }
    if (check_path_collisions(o, err, sizeof err)) {
        fprintf(stderr, "train: %s\n", err);
        return -1;
    }
    /* The first checkpoint is written after --save-every steps, or at the very end: a path that
     * cannot be written must be found now, not after the run it was meant to keep. */
    if (o->save_path && checkpoint_check_writable(o->save_path, err, sizeof err)) {
        fprintf(stderr, "train: --save %s\n", err);
        return -1;
    }
    /* Allowed (the default warmup is longer than a quick --steps 5), but rarely meant. */
    if (o->warmup > o->steps)
        fprintf(stderr, "train: warning: --warmup %d is longer than --steps %d, so the learning rate only "
                "reaches %g (%d/%d of --lr %g); lower --warmup to at most --steps for the full schedule\n",
                o->warmup, o->steps, train_lr_at(o, o->steps - 1), o->steps, o->warmup, o->lr);
    if (o->threads > 0) omp_set_num_threads(o->threads);
    data_source_t data;
    int rc = o->data_path ? data_open_text(&data, o->data_path, o->seq, err, sizeof err)
                          : data_open_markov(&data, o->markov_seed, o->markov_states, o->markov_branch,
                                             err, sizeof err);
    if (rc) {
        fprintf(stderr, "train: %s\n", err);
        return -1;
    }
    const int micro = o->batch / o->accum, T = o->seq;
    train_backend_t m;
    if (train_backend_open(&m, o, micro, T, err, sizeof err)) {
        fprintf(stderr, "train: %s\n", err);
        data_free(&data);
        return -1;
    }
    float *st_params, *st_m, *st_v;
    int start = 0;
    if (o->resume_path) {
        ckpt_meta_t want, got;
        fill_meta(o, &data, &m, 0, &want);
        m.state(m.model, &st_params, &st_m, &st_v);
        if (checkpoint_load(o->resume_path, &want, &got, st_params, st_m, st_v, err, sizeof err)) {
            fprintf(stderr, "train: --resume %s\n", err); /* err starts with the path */
            m.destroy(m.model);
            data_free(&data);
            return -1;
        }
        m.state_loaded(m.model);
        start = (int)got.step;
        warn_if_computed_elsewhere(o->resume_path, &got, &want);
        /* Nothing left to do would otherwise be a silent no-op that writes no --save file. The
         * checkpoint only resumes with its own --steps (it sets the schedule), so a finished
         * run cannot be extended: say so rather than suggest a larger --steps. */
        char why[1024] = "";
        if (start >= o->steps) {
            snprintf(why, sizeof why, "%s is already at step %d of --steps %d; nothing to train: the run is "
                     "finished, and a checkpoint resumes only with the --steps it was written with (it sets "
                     "the learning-rate schedule); to train longer, start a new run with a larger --steps",
                     o->resume_path, start, o->steps);
        } else if (o->stop_at > 0 && o->stop_at <= start) {
            snprintf(why, sizeof why, "--stop-at %d is not after step %d of the checkpoint %s; nothing to "
                     "train: pick --stop-at in [%d, %d], or leave it out to train to --steps",
                     o->stop_at, start, o->resume_path, start + 1, o->steps);
        }
        if (why[0]) {
            fprintf(stderr, "train: %s\n", why);
            m.destroy(m.model);
            data_free(&data);
            return -1;
        }
        if (o->print_every) printf("resumed from %s at step %d\n", o->resume_path, start);
    }
    /* The MFU denominator. This CPU's measured sgemm rate stands in only where the model runs on
     * it (the cpu backend, the emulator): against a GPU's work it gave MFUs of thousands of
     * percent. A GPU not in the peak table has no MFU (NaN) unless --peak-tflops gives one. */
    const double peak = o->peak_tflops > 0 ? o->peak_tflops
                        : m.peak_tflops > 0 ? m.peak_tflops
                        : m.measure_cpu_peak ? train_measure_cpu_peak() : NAN;

    const double flops_tok = model_flops_per_token(&o->cfg, T);
    const double H = data_entropy_rate(&data);
    const int last = o->stop_at > 0 ? o->stop_at : o->steps;
    if (o->print_every) {
        char mem[32];
        format_mem(m.bytes(m.model), mem, sizeof mem);
        printf("model: d_model %d, %d layers, %d heads, ffn %d, %zu parameters, %s of buffers\n",
               o->cfg.d_model, o->cfg.n_layers, o->cfg.n_heads, o->cfg.d_ff, m.n_params, mem);
        if (isnan(H)) printf("data: %s; entropy rate unknown (only the Markov source has an exact one)\n", data.desc);
        else printf("data: %s; entropy rate %.4f nats/byte\n", data.desc, H);
        printf("train: batch %d x seq %d (accum %d), %d steps, lr %g -> %g, warmup %d, %.3g MFLOP/token, ",
               o->batch, T, o->accum, o->steps, o->lr, o->min_lr, o->warmup, flops_tok / 1e6);
        if (isnan(peak)) printf("peak unknown: no bf16 peak is known for '%s', so MFU is unknown; pass "
                                "--peak-tflops\n", m.device);
        else printf("peak %.3g TFLOP/s (%s)\n", peak,
                    o->peak_tflops > 0 ? "--peak-tflops" : m.peak_tflops > 0 ? "bf16 peak of the device"
                                                                            : "measured sgemm");
        if (strcmp(m.device, "CPU"))
            printf("backend: %s on %s, %s precision%s, %s attention, %s matmuls\n", o->backend, m.device,
                   m.precision, strcmp(m.precision, "fp32") ? " (fp32 master weights)" : "", m.attention,
                   m.matmul);
    }
    FILE *log = NULL;
    int json = 0, first_log = 1;
    if (o->log_path) {
        const char *fmt = o->log_format;
        size_t len = strlen(o->log_path);
        if (!fmt) fmt = (len >= 5 && !strcmp(o->log_path + len - 5, ".json")) ? "json" : "csv";
        json = !strcmp(fmt, "json");
        char lerr[256 + PATH_MAX];
        int kept = 0;
        log = start > 0 ? open_resumed_log(o->log_path, json, start, &kept, lerr, sizeof lerr)
                        : course_create_output(o->log_path, "--log", lerr, sizeof lerr);
        if (!log) {
            fprintf(stderr, "train: %s\n", lerr);
            m.destroy(m.model);
            data_free(&data);
            return -1;
        }
        if (kept > 0) {
            first_log = 0;
            if (o->print_every) printf("log: %s keeps its %d rows up to step %d\n", o->log_path, kept, start);
        } else {
            if (json) fprintf(log, "[\n");
            else fprintf(log, "step,lr,train_loss,eval_loss,grad_norm,tokens_per_s,mfu\n");
        }
    }
    int *in = host_malloc((size_t)o->batch * T * sizeof(int));
    int *tg = host_malloc((size_t)o->batch * T * sizeof(int));
    double t_run = 0.0, t_window = 0.0, loss = NAN, ev = NAN;
    long tok_run = 0, tok_window = 0;
    int width = 1;
    for (int s = o->steps; s >= 10; s /= 10) width++; /* "step  120/2000": the step as wide as the total */
    int saved = -1;     /* the step of the last checkpoint this run wrote */
    int completed = start;
    char stop[256] = ""; /* why a NaN or inf stopped the run */
    for (int step = start; step < last; step++) {
        double t0 = wall_time();
        data_batch(&data, SPLIT_TRAIN, o->seed, (uint64_t)step, 0, 1, o->batch, T, in, tg);
        m.zero_grad(m.model);
        loss = 0.0;
        for (int a = 0; a < o->accum; a++) {
            size_t off = (size_t)a * micro * T;
            loss += m.forward(m.model, in + off, tg + off) / o->accum;
            m.backward(m.model, 1.0f / (float)o->accum);
        }
        double gnorm = m.grad_norm(m.model);
        double lr = train_lr_at(o, step);
        const int done = step + 1;
        /* A NaN or inf here would be written into every parameter by the update, and from then on
         * into every checkpoint: stop before the update, with the parameters of the step before. */
        if (!isfinite(loss) || !isfinite(gnorm)) {
            if (log) log_row(log, json, first_log, done, lr, loss, NAN, gnorm, NAN, NAN);
            first_log = 0;
            snprintf(stop, sizeof stop, "%s became %s at step %d", !isfinite(loss) ? "loss" : "gradient norm",
                     nonfinite_name(!isfinite(loss) ? loss : gnorm), done);
            break;
        }
        m.step(m.model, gnorm, o->clip, (float)lr, (float)o->beta1, (float)o->beta2, (float)o->adam_eps,
                        (float)o->weight_decay, step + 1);
        double dt = wall_time() - t0;
        t_run += dt;
        t_window += dt;
        tok_run += (long)o->batch * T;
        tok_window += (long)o->batch * T;
        ev = NAN;
        const int eval_now = (o->eval_every > 0 && done % o->eval_every == 0) || done == last;
        if (eval_now) ev = eval_loss(&m, &data, o, in, tg);
        double tps = tok_window / t_window, mfu = flops_tok * tps / (peak * 1e12);
        if (log) log_row(log, json, first_log, done, lr, loss, ev, gnorm, tps, mfu);
        first_log = 0;
        if (o->print_every && (done % o->print_every == 0 || done == last)) {
            char mem[64];
            memory_line(&m, 0, mem, sizeof mem);
            char mfu_s[32];
            if (isnan(mfu)) snprintf(mfu_s, sizeof mfu_s, "unknown");
            else snprintf(mfu_s, sizeof mfu_s, "%.1f%%", 100.0 * mfu);
            printf("step %*d/%d | loss %.4f | %.1fk tok/s | MFU %s | %s", width, done, o->steps, loss,
                   tps / 1e3, mfu_s, mem);
            if (!isnan(ev)) printf(" | eval %.4f", ev);
            if (!isnan(ev) && !isnan(H)) printf(" (entropy rate %.4f, gap %+.4f)", H, ev - H);
            printf("\n");
            fflush(stdout);
            t_window = 0.0;
            tok_window = 0;
        }
        if (res) res->last_train_loss = loss;
        if (!isnan(ev) && res) res->eval_loss = ev;
        /* The update itself can overflow (a huge --lr): the eval loss, or the parameters a
         * checkpoint would hold, say so before anything is saved. */
        if (eval_now && !isfinite(ev)) {
            snprintf(stop, sizeof stop, "eval loss became %s after step %d", nonfinite_name(ev), done);
            break;
        }
        if (o->save_path && ((o->save_every > 0 && done % o->save_every == 0) || done == last)) {
            ckpt_meta_t meta;
            fill_meta(o, &data, &m, done, &meta);
            m.state(m.model, &st_params, &st_m, &st_v);
            if (!all_finite(st_params, m.n_params) || !all_finite(st_m, m.n_params) ||
                !all_finite(st_v, m.n_params)) {
                snprintf(stop, sizeof stop, "the parameters became NaN or inf in the update of step %d", done);
                break;
            }
            if (checkpoint_save(o->save_path, &meta, st_params, st_m, st_v, err, sizeof err)) {
                fprintf(stderr, "train: %s\n", err);
                rc = -1;
                break;
            }
            saved = done;
        }
        completed = done; /* only now: a step whose update went bad does not count */
    }
    if (stop[0]) {
        /* Say what is on disk: only checkpoints from before the fault. */
        char kept[1200] = "";
        if (o->save_path && saved >= 0)
            snprintf(kept, sizeof kept, " (%s holds step %d, from before it)", o->save_path, saved);
        else if (o->save_path)
            snprintf(kept, sizeof kept, " (%s was not written)", o->save_path);
        fprintf(stderr, "train: %s; lower --lr (or set --clip), or check the data%s\n", stop, kept);
        rc = -1;
    }
    if (log) {
        if (json) fprintf(log, "\n]\n");
        fclose(log);
    }
    if (res) {
        res->steps_done = completed;
        res->entropy_rate = H;
        res->tokens_per_s = t_run > 0 ? tok_run / t_run : 0.0;
        res->mfu = flops_tok * res->tokens_per_s / (peak * 1e12);
        res->peak_tflops = peak;
        res->peak_rss = peak_rss_bytes();
        res->n_params = m.n_params;
        m.state(m.model, &st_params, &st_m, &st_v);
        res->params_hash = course_fnv1a(COURSE_FNV1A_OFFSET, st_params, m.n_params * sizeof(float));
    }
    if (o->print_every && t_run > 0 && rc == 0) {
        char mem[64];
        memory_line(&m, 1, mem, sizeof mem);
        char mfu_s[64];
        if (isnan(peak)) snprintf(mfu_s, sizeof mfu_s, "MFU unknown (pass --peak-tflops)");
        else snprintf(mfu_s, sizeof mfu_s, "MFU %.2f%% of %.3g TFLOP/s",
                      100.0 * flops_tok * tok_run / t_run / (peak * 1e12), peak);
        printf("done: %d steps, %.1fk tok/s, %s, %s\n", completed - start, tok_run / t_run / 1e3, mfu_s, mem);
    }
    host_free(in);
    host_free(tg);
    m.destroy(m.model);
    data_free(&data);
    return rc;
}
