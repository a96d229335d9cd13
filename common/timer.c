/* Host timing and benchmark statistics (see timer.h). */
#include "timer.h"

#include <stdlib.h>
#include <time.h>

double wall_time(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(double *x, size_t n) {
    qsort(x, n, sizeof *x, cmp_double);
    return (n % 2) ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

double tflops(double flops, double seconds) { return flops / seconds * 1e-12; }

double gbps(double bytes, double seconds) { return bytes / seconds * 1e-9; }
