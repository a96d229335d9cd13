/** @file
 * Guard zones around the device buffers a lab's check hands to student code.
 *
 * A kernel that writes before a buffer's start or past its end (a missing
 * `if (i < n)`, a row too many) changes memory that belongs to nobody in the
 * check, and a read there (a float4 load that runs past n at the tail, an
 * input loaded before the bounds test) changes nothing at all. On a GPU
 * either seldom faults: the check passes and the bug waits for a size where
 * the neighbour is something that matters. So a check puts each buffer
 * between two zones of LAB_GUARD_ELEMS elements:
 *
 * - the zones hold LAB_GUARD_BYTE, and lab_check_guard() fails the test if a
 *   byte of them changed: a write out of bounds, seen on a GPU too;
 * - on the emulator the zones are also watched (simt_memtrace_guard): the
 *   tracer's hooks in the lab's kernels stop the launch at the first load or
 *   store in a zone and name the buffer and the kernel's line, so a read out
 *   of bounds fails as well. Under AddressSanitizer, which has no such hooks,
 *   the same call poisons the zones, and the sanitizer names the line.
 *   On a GPU a read out of bounds goes unseen: the zones are part of the
 *   buffer's own allocation, so compute-sanitizer reports only an access
 *   that runs past the zone as well.
 *
 * The emulator watches at most 16 zones at a time (two per buffer); cudaFree
 * lifts those inside what it frees, and a test that failed before freeing
 * its buffers leaves them behind, so each test starts with
 * lab_unwatch_all_guards().
 */
#ifndef COURSE_LABGUARD_H
#define COURSE_LABGUARD_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include "gpu.h"
#include "memory.h"
#ifdef COURSE_SIMT
#include "simt_memtrace.h"
#endif

/** Elements of guard on each side of a buffer from lab_upload_guarded(). */
#define LAB_GUARD_ELEMS 64
/** What every byte of a guard zone holds: 0xa5a5a5a5 is -2.87e-16 as fp32 and
 *  0xa5a5 is -2.9e-16 as bf16, values no lab's kernel writes. */
#define LAB_GUARD_BYTE 0xa5

/**
 * @brief Watch (on = 1) or lift (on = 0) the two zones around a device buffer.
 *
 * On the emulator: see the file comment. On a GPU: nothing (the zones' bytes
 * are all a GPU check has).
 * @param alloc the allocation's first byte, where the front zone starts
 * @param data the buffer, where the front zone ends
 * @param bytes the buffer's length in bytes
 * @param back the length of the zone behind the buffer, in bytes
 * @param on 1 to watch, 0 to lift (before the host reads the zones or frees them)
 * @param what the buffer as the emulator's message names it (kept, not copied:
 *        a string literal), e.g. "up (swiglu_backward_gpu)"; unused when on is 0
 */
static inline void lab_guard_watch(void *alloc, void *data, size_t bytes, size_t back, int on, const char *what) {
#ifdef COURSE_SIMT
    size_t front = (size_t)((char *)data - (char *)alloc);
    if (on) {
        simt_memtrace_guard(alloc, front, what, 1);
        simt_memtrace_guard((char *)data + bytes, back, what, 0);
    } else {
        simt_memtrace_unguard(alloc, front + bytes + back);
    }
#else
    (void)alloc; (void)data; (void)bytes; (void)back; (void)on; (void)what;
#endif
}

/** @brief Lift every zone the emulator watches: the first call of each test
 *  that guards buffers (see the file comment). Nothing on a GPU. */
static inline void lab_unwatch_all_guards(void) {
#ifdef COURSE_SIMT
    simt_memtrace_unguard(NULL, SIZE_MAX);
#endif
}

/**
 * @brief A fresh device buffer of n elements between two watched guard zones.
 * @param h the n elements to copy in, or NULL to fill the buffer with LAB_GUARD_BYTE too
 * @param n how many elements (0 gives an empty buffer that still has its zones)
 * @param esize bytes per element; each zone is LAB_GUARD_ELEMS elements long
 * @param what the buffer as messages name it (kept, not copied: a string literal)
 * @return the buffer's first element; free it with lab_check_guard()
 */
static inline void *lab_upload_guarded(const void *h, size_t n, size_t esize, const char *what) {
    size_t g = LAB_GUARD_ELEMS * esize, bytes = n * esize;
    unsigned char *buf = (unsigned char *)host_malloc(bytes + 2 * g);
    memset(buf, LAB_GUARD_BYTE, bytes + 2 * g);
    if (h && n) memcpy(buf + g, h, bytes);
    unsigned char *d = (unsigned char *)gpu_malloc(bytes + 2 * g);
    gpu_upload(d, buf, bytes + 2 * g);
    host_free(buf);
    lab_guard_watch(d, d + g, bytes, g, 1, what);
    return d + g;
}

/**
 * @brief Fail the current test if a byte of either zone around d changed, then
 * free the buffer. Call it once the student function's work has finished.
 * @param d the buffer, from lab_upload_guarded()
 * @param n its length in elements, as given to lab_upload_guarded()
 * @param esize bytes per element, as given to lab_upload_guarded()
 * @param fn the student function the failure blames, e.g. "vector_add"
 * @param name the buffer as the failure names it, e.g. "c"
 */
static inline void lab_check_guard(void *d, size_t n, size_t esize, const char *fn, const char *name) {
    size_t g = LAB_GUARD_ELEMS * esize, bytes = n * esize;
    unsigned char *base = (unsigned char *)d - g, *buf = (unsigned char *)host_malloc(bytes + 2 * g);
    lab_guard_watch(base, d, bytes, g, 0, NULL);
    gpu_download(buf, base, bytes + 2 * g);
    gpu_free(base);
    size_t before = g, after = g;
    for (size_t i = 0; i < g && before == g; i++)
        if (buf[i] != LAB_GUARD_BYTE) before = i;
    for (size_t i = 0; i < g && after == g; i++)
        if (buf[g + bytes + i] != LAB_GUARD_BYTE) after = i;
    host_free(buf);
    if (before < g)
        fail_msg("%s wrote before the start of %s (element -%zu)", fn, name, LAB_GUARD_ELEMS - before / esize);
    if (after < g) fail_msg("%s wrote past the end of %s (element %zu + %zu)", fn, name, n, after / esize);
}

#endif /* COURSE_LABGUARD_H */
