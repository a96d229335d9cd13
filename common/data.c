/* The Markov source, text files and batches as pure functions of (seed, step, rank) (see data.h). */
#include "data.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "hash.h"
#include "memory.h"
#include "rng.h"

int markov_init(markov_t *m, uint64_t seed, int n_states, int branch, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    if (n_states < 2 || n_states > DATA_ALPHABET)
        return course_error(err, errlen, "--markov-states %d is out of range; pick a value in [2, %d]",
                    n_states, DATA_ALPHABET);
    if (branch < 1 || branch > n_states)
        return course_error(err, errlen, "--markov-branch %d is out of range; pick a value in [1, %d] (--markov-states)",
                    branch, n_states);
    const int S = n_states, K = branch;
    m->seed = seed;
    m->n_states = S;
    m->branch = K;
    m->next = host_malloc((size_t)S * K * sizeof(int));
    m->prob = host_malloc((size_t)S * K * sizeof(double));
    m->stationary = host_malloc((size_t)S * sizeof(double));
    rng_t root;
    rng_init(&root, seed);
    int *taken = host_calloc((size_t)S, sizeof(int));
    for (int s = 0; s < S; s++) {
        rng_t r = rng_split(&root, (uint64_t)s);
        /* Successors: s+1 first (irreducibility), then distinct random states. */
        int *nx = m->next + (size_t)s * K;
        memset(taken, 0, (size_t)S * sizeof(int));
        nx[0] = (s + 1) % S;
        taken[nx[0]] = 1;
        for (int j = 1; j < K; j++) {
            int c;
            do c = (int)rng_below(&r, (uint32_t)S); while (taken[c]);
            taken[c] = 1;
            nx[j] = c;
        }
        /* Dirichlet(1) weights: normalised exponentials. */
        double *p = m->prob + (size_t)s * K, sum = 0.0;
        for (int j = 0; j < K; j++) {
            p[j] = -log(1.0 - rng_uniform_double(&r));
            sum += p[j];
        }
        for (int j = 0; j < K; j++) p[j] /= sum;
    }
    host_free(taken);
    /* Lazy power iteration for pi = pi P. */
    double *pi = m->stationary, *nxt = host_malloc((size_t)S * sizeof(double));
    for (int s = 0; s < S; s++) pi[s] = 1.0 / S;
    for (int it = 0; it < 1000000; it++) {
        for (int s = 0; s < S; s++) nxt[s] = 0.5 * pi[s];
        for (int s = 0; s < S; s++)
            for (int j = 0; j < K; j++) nxt[m->next[(size_t)s * K + j]] += 0.5 * pi[s] * m->prob[(size_t)s * K + j];
        double diff = 0.0, sum = 0.0;
        for (int s = 0; s < S; s++) sum += nxt[s];
        for (int s = 0; s < S; s++) {
            nxt[s] /= sum;
            diff += fabs(nxt[s] - pi[s]);
            pi[s] = nxt[s];
        }
        if (diff < 1e-15) break;
    }
    host_free(nxt);
    double h = 0.0;
    for (int s = 0; s < S; s++)
        for (int j = 0; j < K; j++) {
            double p = m->prob[(size_t)s * K + j];
            if (p > 0.0) h -= pi[s] * p * log(p);
        }
    m->entropy_rate = h;
    return 0;
}

void markov_free(markov_t *m) {
    host_free(m->next);
    host_free(m->prob);
    host_free(m->stationary);
    memset(m, 0, sizeof *m);
}

/* Inverse-CDF draw from a probability vector; the last entry takes rounding slack. */
static int draw(const double *p, int n, double u) {
    double c = 0.0;
    for (int j = 0; j < n - 1; j++) {
        c += p[j];
        if (u < c) return j;
    }
    return n - 1;
}

void markov_sample(const markov_t *m, uint64_t seed, uint64_t stream, uint8_t *out, size_t len) {
    rng_t r = {seed, stream, 0};
    if (len == 0) return;
    int s = draw(m->stationary, m->n_states, rng_uniform_double(&r));
    out[0] = (uint8_t)s;
    for (size_t i = 1; i < len; i++) {
        int j = draw(m->prob + (size_t)s * m->branch, m->branch, rng_uniform_double(&r));
        s = m->next[(size_t)s * m->branch + j];
        out[i] = (uint8_t)s;
    }
}

int data_open_markov(data_source_t *d, uint64_t seed, int n_states, int branch, char *err,
                     size_t errlen) {
    memset(d, 0, sizeof *d);
    d->kind = DATA_MARKOV;
    if (markov_init(&d->markov, seed, n_states, branch, err, errlen)) return -1;
    snprintf(d->desc, sizeof d->desc, "markov seed=%llu states=%d branch=%d",
             (unsigned long long)seed, n_states, branch);
    return 0;
}

int data_open_text(data_source_t *d, const char *path, int seq_len, char *err, size_t errlen) {
    memset(d, 0, sizeof *d);
    d->kind = DATA_TEXT;
    /* Refused before the file is read: below 1 there is no sequence to cut
     * (and a negative one made the start offsets wrap), and the sizes below
     * are computed from it. */
    if (seq_len < 1)
        return course_error(err, errlen, "--seq %d: a sequence needs at least 1 token; pick a positive --seq",
                            seq_len);
    /* Read whole at the start, so only a regular file will do (a FIFO would
     * block, a directory has no size). */
    char what[4200];
    snprintf(what, sizeof what, "--data %s", path);
    size_t len = 0;
    FILE *f = course_open_regular(path, what, "give a regular text file (it is read whole at the start, so a "
                                  "pipe cannot stand in for one)", &len, err, errlen);
    if (!f) return -1;
    if (len == 0) {
        fclose(f);
        return course_error(err, errlen, "--data %s: file is empty; give a text file of at least %ld bytes",
                    path, 10L * ((long)seq_len + 1));
    }
    /* The last 10% is the eval part; both parts need one whole sequence plus its target. */
    size_t need = (size_t)10 * ((size_t)seq_len + 1);
    if (len < need) {
        fclose(f);
        return course_error(err, errlen,
                    "--data %s: file has %zu bytes, too short for --seq %d; it needs at least %zu "
                    "bytes (10 sequences, so the last 10%% can hold one for eval), or use a smaller --seq",
                    path, len, seq_len, need);
    }
    d->text = host_malloc(len);
    size_t got = fread(d->text, 1, len, f);
    fclose(f);
    if (got != len) {
        host_free(d->text);
        d->text = NULL;
        return course_error(err, errlen, "--data %s: read %zu of %zu bytes (did the file change while "
                    "being read?)", path, got, len);
    }
    d->text_len = len;
    d->train_len = d->text_len - d->text_len / 10;
    const uint64_t h = course_fnv1a(COURSE_FNV1A_OFFSET, d->text, d->text_len);
    d->text_hash = h;
    snprintf(d->desc, sizeof d->desc, "text bytes=%zu fnv1a=%016llx", d->text_len,
             (unsigned long long)h);
    return 0;
}

void data_free(data_source_t *d) {
    if (d->kind == DATA_MARKOV) markov_free(&d->markov);
    host_free(d->text);
    memset(d, 0, sizeof *d);
}

double data_entropy_rate(const data_source_t *d) {
    return d->kind == DATA_MARKOV ? d->markov.entropy_rate : NAN;
}

int data_shard(int global_batch, int rank, int world, int *first) {
    CHECK(world >= 1 && rank >= 0 && rank < world, "data_shard: rank %d of world %d", rank, world);
    CHECK(global_batch % world == 0,
          "batch %d is not divisible by %d ranks; pick a global batch that is a multiple of the ranks",
          global_batch, world);
    int n = global_batch / world;
    *first = rank * n;
    return n;
}

void data_batch(const data_source_t *d, data_split_t split, uint64_t seed, uint64_t step, int rank,
                int world, int global_batch, int seq_len, int *inputs, int *targets) {
    int first;
    int n = data_shard(global_batch, rank, world, &first);
    uint8_t *buf = host_malloc((size_t)seq_len + 1);
    for (int b = 0; b < n; b++) {
        uint64_t g = step * (uint64_t)global_batch + (uint64_t)(first + b);
        /* One stream per (split, global sequence): bit 63 separates the splits. */
        uint64_t stream = g | ((uint64_t)split << 63);
        if (d->kind == DATA_MARKOV) {
            markov_sample(&d->markov, seed, stream, buf, (size_t)seq_len + 1);
        } else {
            size_t lo = split == SPLIT_TRAIN ? 0 : d->train_len;
            size_t hi = split == SPLIT_TRAIN ? d->train_len : d->text_len;
            size_t span = hi - lo - (size_t)seq_len; /* start offsets in [lo, lo + span) */
            rng_t r = {seed, stream, 0};
            size_t off = lo + (size_t)(rng_uniform_double(&r) * (double)span);
            if (off >= lo + span) off = lo + span - 1;
            memcpy(buf, d->text + off, (size_t)seq_len + 1);
        }
        for (int t = 0; t < seq_len; t++) {
            inputs[(size_t)b * seq_len + t] = buf[t];
            targets[(size_t)b * seq_len + t] = buf[t + 1];
        }
    }
    host_free(buf);
}
