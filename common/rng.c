/* Sequential draws on top of the counter-based generator in rng.h. */
#include "rng.h"

#include <math.h>

void rng_init(rng_t *r, uint64_t seed) {
    r->seed = seed;
    r->stream = 0;
    r->counter = 0;
}

/* SplitMix64 finaliser: a bijection that scatters nearby ids far apart. */
static uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

rng_t rng_split(const rng_t *parent, uint64_t id) {
    rng_t child;
    child.seed = parent->seed;
    child.stream = mix64(parent->stream ^ mix64(id + 1));
    child.counter = 0;
    return child;
}

uint32_t rng_u32(rng_t *r) { return rng_u32_at(r->seed, r->stream, r->counter++); }

uint64_t rng_u64(rng_t *r) {
    uint64_t hi = rng_u32(r);
    return (hi << 32) | rng_u32(r);
}

float rng_uniform(rng_t *r) { return rng_uniform_at(r->seed, r->stream, r->counter++); }

double rng_uniform_double(rng_t *r) { return (double)(rng_u64(r) >> 11) * 0x1p-53; }

float rng_normal(rng_t *r) {
    /* 1 - u keeps the log argument in (0, 1], so no log(0). */
    double u1 = 1.0 - (double)rng_uniform(r);
    double u2 = (double)rng_uniform(r);
    return (float)(sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
}

uint32_t rng_below(rng_t *r, uint32_t n) {
    /* Reject the top partial range of 2^32 so every residue is equally likely. */
    uint32_t limit = (uint32_t)(0x100000000ull - (0x100000000ull % n));
    for (;;) {
        uint32_t x = rng_u32(r);
        if (limit == 0 || x < limit) return x % n;
    }
}

void rng_fill_uniform(rng_t *r, float *x, size_t n, float lo, float hi) {
    uint64_t base = r->counter;
    for (size_t i = 0; i < n; i++)
        x[i] = lo + (hi - lo) * rng_uniform_at(r->seed, r->stream, base + i);
    r->counter = base + n;
}

void rng_fill_normal(rng_t *r, float *x, size_t n, float mean, float std) {
    uint64_t base = r->counter;
    for (size_t i = 0; i < n; i++) {
        double u1 = 1.0 - (double)rng_uniform_at(r->seed, r->stream, base + 2 * i);
        double u2 = (double)rng_uniform_at(r->seed, r->stream, base + 2 * i + 1);
        x[i] = mean + std * (float)(sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
    }
    r->counter = base + 2 * n;
}
