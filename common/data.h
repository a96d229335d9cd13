/** @file
 * Training data for the course model: bytes in, bytes out.
 *
 * Two sources:
 *  - a synthetic Markov source: a seeded, sparse transition table over the
 *    byte alphabet. Its stationary distribution and entropy rate (in nats)
 *    are computed exactly (power iteration), and sequences start in the
 *    stationary distribution, so the best achievable cross-entropy of a model
 *    that sees the previous byte is exactly the entropy rate: a training run
 *    can be checked against a known optimum;
 *  - any text file (--data FILE): the first 90% is for training, the last 10%
 *    for evaluation; sequences start at random offsets.
 *
 * Batches are pure functions of (seed, step, rank, world): sequence g of the
 * whole run is generated from its own random stream, the global batch of step
 * s is sequences [s*B, (s+1)*B), and rank r of `world` gets the contiguous
 * shard [r*B/world, (r+1)*B/world) of it. So data-parallel ranks see disjoint
 * parts of the same global batch without communicating, and a resumed run
 * sees exactly the batches an uninterrupted one would have seen.
 */
#ifndef COURSE_DATA_H
#define COURSE_DATA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest alphabet of the Markov source (the byte values). */
#define DATA_ALPHABET 256

/** Which data a source produces. */
typedef enum { DATA_MARKOV = 0, DATA_TEXT = 1 } data_kind_t;

/** Which part of the data a batch is drawn from. */
typedef enum { SPLIT_TRAIN = 0, SPLIT_EVAL = 1 } data_split_t;

/** A seeded sparse Markov chain over the first n_states byte values. */
typedef struct {
    uint64_t seed;       /**< the seed the table was built from */
    int n_states;        /**< alphabet size, 2..256 (bytes 0..n_states-1) */
    int branch;          /**< successors per state (nonzero entries per row) */
    int *next;           /**< [n_states, branch] successor byte of each entry */
    double *prob;        /**< [n_states, branch] transition probabilities (rows sum to 1) */
    double *stationary;  /**< [n_states] stationary distribution pi */
    double entropy_rate; /**< -sum_s pi_s sum_j P_sj log P_sj, in nats per byte */
} markov_t;

/** A source of training and evaluation sequences. */
typedef struct {
    data_kind_t kind;    /**< Markov or text */
    markov_t markov;     /**< the chain (DATA_MARKOV) */
    uint8_t *text;       /**< the file's bytes (DATA_TEXT) */
    size_t text_len;     /**< bytes in the file */
    size_t train_len;    /**< bytes [0, train_len) train; [train_len, text_len) evaluate */
    uint64_t text_hash;  /**< FNV-1a of the file, identifies it in checkpoints */
    char desc[160];      /**< one line describing the source, stored in checkpoints */
} data_source_t;

/**
 * @brief Build a Markov source: each state gets `branch` successors and Dirichlet(1) probabilities.
 *
 * State s always has s+1 (mod n_states) among its successors, so the chain is
 * irreducible and its stationary distribution unique. The distribution is
 * found by lazy power iteration (pi <- (pi + pi P) / 2, which converges even
 * for a periodic chain) to a change below 1e-15.
 * @param m filled in; release with markov_free()
 * @param seed the seed of the table
 * @param n_states alphabet size in [2, 256]
 * @param branch successors per state in [1, n_states]
 * @param err message on failure (may be NULL)
 * @param errlen size of err
 * @return 0, or -1 with a message for out-of-range arguments
 */
int markov_init(markov_t *m, uint64_t seed, int n_states, int branch, char *err, size_t errlen);

/**
 * @brief Release a Markov source.
 * @param m the source
 */
void markov_free(markov_t *m);

/**
 * @brief Sample a sequence: x[0] from the stationary distribution, then transitions.
 * @param m the source
 * @param seed sampling seed
 * @param stream random stream of this sequence (one per sequence)
 * @param out len bytes
 * @param len sequence length
 */
void markov_sample(const markov_t *m, uint64_t seed, uint64_t stream, uint8_t *out, size_t len);

/**
 * @brief A source from the Markov chain (see markov_init()).
 * @param d filled in; release with data_free()
 * @param seed seed of the transition table
 * @param n_states alphabet size
 * @param branch successors per state
 * @param err message on failure (may be NULL)
 * @param errlen size of err
 * @return 0 or -1
 */
int data_open_markov(data_source_t *d, uint64_t seed, int n_states, int branch, char *err,
                     size_t errlen);

/**
 * @brief A source from a text file, checked to be long enough for seq_len.
 *
 * The path must name a regular file: a directory, FIFO or device is refused
 * from stat() without being opened (a FIFO would block the open). Both the
 * training part (90%) and the evaluation part (10%) must hold at least
 * seq_len + 1 bytes; the message says how long the file must be.
 * @param d filled in; release with data_free()
 * @param path the file
 * @param seq_len the training sequence length, at least 1 (else refused)
 * @param err message on failure, e.g. "--data notes.txt: file is empty" or
 *            "--data books is a directory; give a regular text file" (may be NULL)
 * @param errlen size of err
 * @return 0 or -1
 */
int data_open_text(data_source_t *d, const char *path, int seq_len, char *err, size_t errlen);

/**
 * @brief Release a source.
 * @param d the source
 */
void data_free(data_source_t *d);

/**
 * @brief The best achievable loss in nats per byte: the Markov source's entropy rate.
 * @param d the source
 * @return the entropy rate, or NaN for a text file (unknown)
 */
double data_entropy_rate(const data_source_t *d);

/**
 * @brief The contiguous shard of a global batch that one rank gets.
 * @param global_batch sequences per step, all ranks together
 * @param rank this rank in [0, world)
 * @param world number of ranks; must divide global_batch
 * @param first set to the first sequence of the shard within the global batch
 * @return the shard size, global_batch / world
 */
int data_shard(int global_batch, int rank, int world, int *first);

/**
 * @brief Rank `rank`'s shard of the global batch of `step`: a pure function of its arguments.
 *
 * Fills inputs and targets for sequences [first, first + n) of the global
 * batch, where (first, n) come from data_shard(); targets are the inputs
 * shifted by one byte. Each sequence comes from its own random stream
 * (seed, split, global sequence index), so the result does not depend on
 * how many ranks share the batch or on what was drawn before.
 * @param d the source
 * @param split SPLIT_TRAIN or SPLIT_EVAL (eval batches are indexed by `step` too)
 * @param seed the run's data seed
 * @param step optimizer step (or eval batch index)
 * @param rank this rank
 * @param world number of ranks; must divide global_batch
 * @param global_batch sequences per step over all ranks
 * @param seq_len tokens per sequence
 * @param inputs [global_batch / world, seq_len] bytes as int
 * @param targets [global_batch / world, seq_len] bytes as int
 */
void data_batch(const data_source_t *d, data_split_t split, uint64_t seed, uint64_t step, int rank,
                int world, int global_batch, int seq_len, int *inputs, int *targets);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_DATA_H */
