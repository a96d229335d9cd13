/** @file
 * Deterministic, seedable random numbers that are the same on every target.
 *
 * Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
 * SC 2011) is counter-based: the i-th number of a stream is a pure function of
 * (seed, stream, i). So a CPU loop, a CUDA kernel (one thread per element) and
 * the emulator all produce the same values, and a stream can be split per MPI
 * rank without any communication. The functions are static inline and
 * qualified for device code, so kernels can include this header.
 */
#ifndef COURSE_RNG_H
#define COURSE_RNG_H

#include <stddef.h>
#include <stdint.h>

/** Qualifiers of the inline generator: in CUDA code (nvcc, or the emulator's headers) also device functions. */
#if defined(__host__) && defined(__device__)
#define RNG_HD __host__ __device__ static inline
#else
#define RNG_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** A random stream: a key (the seed), a stream id, and the index of the next 32-bit draw. */
typedef struct {
    uint64_t seed;    /**< Philox key */
    uint64_t stream;  /**< upper half of the Philox counter: independent streams */
    uint64_t counter; /**< index of the next 32-bit value in this stream */
} rng_t;

/** Four 32-bit outputs of one Philox block. */
typedef struct {
    uint32_t v[4]; /**< the four words */
} rng_block_t;

/**
 * @brief One Philox round (internal): two 32x32->64 multiplies, whose halves mix the words.
 * @param c the four counter words, updated in place
 * @param k0 low key word of this round
 * @param k1 high key word of this round
 */
RNG_HD void rng_philox_round_(uint32_t c[4], uint32_t k0, uint32_t k1) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c[0];
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c[2];
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
    c[0] = n0;
    c[1] = (uint32_t)p1;
    c[2] = n2;
    c[3] = (uint32_t)p0;
}

/**
 * @brief Philox4x32-10 of a 128-bit counter under a 64-bit key.
 * @param key the seed
 * @param hi upper 64 bits of the counter (the stream)
 * @param lo lower 64 bits of the counter (the block index)
 * @return four pseudo-random 32-bit words
 */
RNG_HD rng_block_t rng_philox4x32(uint64_t key, uint64_t hi, uint64_t lo) {
    uint32_t c[4] = {(uint32_t)lo, (uint32_t)(lo >> 32), (uint32_t)hi, (uint32_t)(hi >> 32)};
    uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    for (int r = 0; r < 10; r++) {
        rng_philox_round_(c, k0, k1);
        k0 += 0x9E3779B9u; /* Weyl sequence key schedule: golden ratio and sqrt(3)-1 */
        k1 += 0xBB67AE85u;
    }
    rng_block_t b = {{c[0], c[1], c[2], c[3]}};
    return b;
}

/**
 * @brief The i-th 32-bit value of stream (seed, stream): what a kernel thread computes.
 * @param seed the seed
 * @param stream the stream id
 * @param i index of the value within the stream
 * @return a uniformly distributed 32-bit value
 */
RNG_HD uint32_t rng_u32_at(uint64_t seed, uint64_t stream, uint64_t i) {
    return rng_philox4x32(seed, stream, i >> 2).v[i & 3];
}

/**
 * @brief The i-th value of the stream as a float uniform in [0, 1).
 * @param seed the seed
 * @param stream the stream id
 * @param i index of the value within the stream
 * @return (top 24 bits) * 2^-24, so every value is exact in float
 */
RNG_HD float rng_uniform_at(uint64_t seed, uint64_t stream, uint64_t i) {
    return (float)(rng_u32_at(seed, stream, i) >> 8) * (1.0f / 16777216.0f);
}

#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Start stream 0 of a seed at index 0.
 * @param r the generator
 * @param seed any 64-bit value
 */
void rng_init(rng_t *r, uint64_t seed);

/**
 * @brief An independent child stream, e.g. one per MPI rank or per tensor.
 *
 * The child depends only on the parent's seed and stream and on id, not on
 * how far the parent has been drawn, so every rank computes the same split.
 * @param parent the stream to split
 * @param id distinguishes children (rank, layer, ...)
 * @return the child generator, at index 0
 */
rng_t rng_split(const rng_t *parent, uint64_t id);

/** @brief Next 32-bit value. @param r the generator @return a uniform 32-bit value */
uint32_t rng_u32(rng_t *r);

/** @brief Next 64-bit value (two 32-bit draws). @param r the generator @return a uniform 64-bit value */
uint64_t rng_u64(rng_t *r);

/** @brief Next float uniform in [0, 1). @param r the generator @return the value */
float rng_uniform(rng_t *r);

/** @brief Next double uniform in [0, 1), 53 random bits. @param r the generator @return the value */
double rng_uniform_double(rng_t *r);

/**
 * @brief Next standard normal value (Box-Muller, using two uniform draws).
 * @param r the generator
 * @return a sample of N(0, 1)
 */
float rng_normal(rng_t *r);

/**
 * @brief Next integer uniform in [0, n) (rejection sampling, no modulo bias).
 * @param r the generator
 * @param n upper bound, > 0
 * @return the value
 */
uint32_t rng_below(rng_t *r, uint32_t n);

/**
 * @brief Fill x[0..n) with uniforms in [lo, hi); x[i] uses the stream's value at index counter + i.
 *
 * x[i] is lo + (hi - lo) u in float, u = rng_uniform_at(): exact for the
 * [-1, 1) the course uses, while for other bounds the rounding can land
 * on hi itself. Element i does not depend on the loop order, so a GPU kernel using
 * rng_uniform_at() fills the same array. Advances the counter by n.
 * @param r the generator
 * @param x output array
 * @param n element count
 * @param lo lower bound
 * @param hi upper bound
 */
void rng_fill_uniform(rng_t *r, float *x, size_t n, float lo, float hi);

/**
 * @brief Fill x[0..n) with normal samples N(mean, std^2). Advances the counter by 2n.
 * @param r the generator
 * @param x output array
 * @param n element count
 * @param mean the mean
 * @param std the standard deviation
 */
void rng_fill_normal(rng_t *r, float *x, size_t n, float mean, float std);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_RNG_H */
