/*
 * Lab 00 benchmark: vector_add's bandwidth against cudaMemcpy device to
 * device, measured in the same run.
 *
 * A vector add moves 12 bytes per element (two loads, one store) and does one
 * FLOP, so it is memory-bound: the figure that matters is GB/s, and the best
 * it can do is roughly what a device-to-device copy achieves (about 4.3 TB/s
 * on an H200). Times are CUDA-event medians with L2 flushed in between.
 */
#include "args.h"
#include "error.h"
#include "gpu.h"
#include "lab.h"
#include "timer.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vector_add(const float *a, const float *b, float *c, int n);

static int reps = 20;
static int log2n = 28;
static const char *json_path = NULL;

static const arg_spec_t specs[] = {
    {"log2n", ARG_INT, &log2n, "vector length is 2^log2n floats", 10, 30},
    {"reps", ARG_INT, &reps, "timed repetitions (median reported)", 1, 1000},
    {"json", ARG_STRING, &json_path, "also write the results as JSON to this file", 0, -1},
};

/* Median time in ms of `reps` runs of either the lab kernel or the copy. */
static double time_ms(int use_copy, float *a, float *b, float *c, int n) {
    double *ms = malloc(sizeof(double) * (size_t)reps);
    gpu_timer_t t;
    gpu_timer_init(&t, NULL);
    for (int r = -2; r < reps; r++) { /* two warm-up runs */
        gpu_flush_l2();
        gpu_timer_start(&t);
        if (use_copy) CUDA_CHECK(cudaMemcpyAsync(c, a, (size_t)n * 4, cudaMemcpyDeviceToDevice, 0));
        else if (vector_add(a, b, c, n) != LAB_OK) FATAL("vector_add did not run: finish the lab first");
        float m = gpu_timer_stop_ms(&t);
        if (r >= 0) ms[r] = m;
    }
    gpu_timer_free(&t);
    double med = median(ms, (size_t)reps);
    free(ms);
    return med;
}

int main(int argc, char **argv) {
    args_t a = {"bench", "lab 00: vector_add bandwidth against a device-to-device copy", specs, 3};
    args_parse_or_exit(&a, argc, argv);
    if (!gpu_available()) {
        printf("bench: no GPU and not built for the emulator; nothing to time\n");
        return 0;
    }
    char name[128];
    gpu_device_name(name, sizeof name);
    int n = 1 << log2n;
    float *da = gpu_malloc((size_t)n * 4), *db = gpu_malloc((size_t)n * 4), *dc = gpu_malloc((size_t)n * 4);
    gpu_memset(da, 0, (size_t)n * 4);
    gpu_memset(db, 0, (size_t)n * 4);
    double t_add = time_ms(0, da, db, dc, n), t_copy = time_ms(1, da, db, dc, n);
    double gb_add = gbps(12.0 * n, t_add * 1e-3), gb_copy = gbps(8.0 * n, t_copy * 1e-3);
    printf("# device: %s%s\n", name, strstr(name, "emulator") ? " (CPU timings, not GPU speeds)" : "");
    printf("# %-12s %12s %10s %12s %8s\n", "kernel", "n", "time(ms)", "GB/s", "ratio");
    printf("  %-12s %12d %10.3f %12.1f %8s\n", "memcpy d2d", n, t_copy, gb_copy, "1.00");
    printf("  %-12s %12d %10.3f %12.1f %8.2f\n", "vector_add", n, t_add, gb_add, gb_add / gb_copy);
    if (json_path) {
        FILE *f = fopen(json_path, "w");
        if (!f) FATAL("cannot write %s", json_path);
        fprintf(f, "{\"lab\":\"00\",\"device\":\"%s\",\"n\":%d,\"results\":["
                   "{\"kernel\":\"memcpy_d2d\",\"ms\":%.6f,\"gbps\":%.3f},"
                   "{\"kernel\":\"vector_add\",\"ms\":%.6f,\"gbps\":%.3f,\"ratio\":%.4f}]}\n",
                name, n, t_copy, gb_copy, t_add, gb_add, gb_add / gb_copy);
        fclose(f);
    }
    gpu_free(da); gpu_free(db); gpu_free(dc);
    return 0;
}
