/* Checked host allocation (see memory.h). */
#include "memory.h"
#include "error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *host_malloc_at(size_t bytes, const char *file, int line) {
    /* aligned_alloc wants a multiple of the alignment; round up (and never 0). */
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (rounded < bytes) course_fatal(file, line, "host_malloc: size %zu overflows", bytes);
    if (rounded == 0) rounded = 64;
    void *p = aligned_alloc(64, rounded);
    if (!p) {
        char human[32];
        course_fatal(file, line, "out of host memory: could not allocate %s (%zu bytes); "
                     "use a smaller size or free memory first",
                     format_bytes((double)bytes, human, sizeof human), bytes);
    }
    return p;
}

void *host_calloc_at(size_t n, size_t size, const char *file, int line) {
    if (size != 0 && n > SIZE_MAX / size)
        course_fatal(file, line, "host_calloc: %zu x %zu bytes overflows size_t", n, size);
    void *p = host_malloc_at(n * size, file, line);
    memset(p, 0, n * size);
    return p;
}

void host_free(void *p) { free(p); }

char *format_bytes(double bytes, char *buf, size_t len) {
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        u++;
    }
    if (u == 0) snprintf(buf, len, "%.0f B", bytes);
    else snprintf(buf, len, "%.*f %s", bytes < 10 ? 2 : 1, bytes, units[u]);
    return buf;
}
