/** @file
 * FNV-1a, 64-bit: the one hash of the course's files and messages.
 *
 * Checkpoints end with it, a text corpus is named by it in a checkpoint's
 * data description, the training summary fingerprints the final parameters
 * with it, the communicator's argument check compares "v" counts with it and
 * the grader names a tree's state with it. It is a checksum, not a defence:
 * anyone can make a file with a chosen hash. Fowler, Noll and Vo's
 * parameters (offset basis 0xcbf29ce484222325, prime 0x100000001b3), so that
 * another program can check a checkpoint; a hash of "a" is
 * 0xaf63dc4c8601ec8c. Header-only, so the grader can use it without the
 * course library.
 */
#ifndef COURSE_HASH_H
#define COURSE_HASH_H

#include <stddef.h>
#include <stdint.h>

/** FNV-1a's 64-bit offset basis: the hash of no bytes, where a hash starts. */
#define COURSE_FNV1A_OFFSET 14695981039346656037ull

/**
 * @brief Continue an FNV-1a hash over n more bytes.
 *
 * Start from COURSE_FNV1A_OFFSET; feed a result back in to hash pieces as
 * one run of bytes.
 * @param h the hash so far
 * @param p the bytes
 * @param n how many
 * @return the hash of everything so far and these bytes
 */
static inline uint64_t course_fnv1a(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = (const uint8_t *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

#endif
