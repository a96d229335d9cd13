/** @file
 * Host memory that is checked and aligned.
 *
 * host_malloc never returns NULL: running out of memory is a fatal error that
 * names the size and the caller, so a check never crashes later on a NULL
 * pointer. Blocks are 64-byte aligned (a cache line, and enough for any SIMD
 * load or cudaMemcpy fast path). Device memory helpers are in gpu.h.
 */
#ifndef COURSE_MEMORY_H
#define COURSE_MEMORY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Allocate bytes of 64-byte aligned host memory, or end the job with a clear message.
 * @param bytes size in bytes (0 is allowed and returns a valid, freeable pointer)
 * @param file caller's file (the macro passes __FILE__)
 * @param line caller's line
 * @return the block; never NULL
 */
void *host_malloc_at(size_t bytes, const char *file, int line);

/**
 * @brief As host_malloc_at(), zero-filled, with an overflow check on n * size.
 * @param n element count
 * @param size element size in bytes
 * @param file caller's file
 * @param line caller's line
 * @return the block; never NULL
 */
void *host_calloc_at(size_t n, size_t size, const char *file, int line);

/**
 * @brief Free a block from host_malloc/host_calloc (NULL is fine).
 * @param p the block
 */
void host_free(void *p);

/** @brief Checked, aligned malloc that names the caller on failure. */
#define host_malloc(bytes) host_malloc_at((bytes), __FILE__, __LINE__)
/** @brief Checked, aligned, zeroed calloc that names the caller on failure. */
#define host_calloc(n, size) host_calloc_at((n), (size), __FILE__, __LINE__)

/**
 * @brief Format a byte count for people: "512 B", "3.00 KiB", "1.50 GiB", "80.0 GiB"
 * (two decimals below 10 of the unit, one from 10).
 * @param bytes the count
 * @param buf destination
 * @param len size of buf
 * @return buf
 */
char *format_bytes(double bytes, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_MEMORY_H */
