/*
 * Lab 00 benchmark: vector_add's bandwidth against cudaMemcpy device to
 * device, measured in the same run.
 *
 * A vector add moves 12 bytes per element (two loads, one store) and does one
 * FLOP, so it is memory-bound: the figure that matters is GB/s, and the best
 * it can do is roughly what a device-to-device copy achieves (about 4.3 TB/s
 * on an H200). Times are CUDA-event medians with L2 flushed in between.
 *
 * Under the emulator (COURSE_SIMT) kernels run on the CPU, so the defaults
 * shrink to 2^20 floats and 3 repetitions, as the matmul benchmarks shrink
 * to 128^3 (2^28 floats would take minutes and about 3 GB), and the ratio
 * column says "-": a CPU timing of an emulated kernel against a host copy
 * says nothing about a GPU.
 */
#include "args.h"
#include "error.h"
#include "gpu.h"
#include "json.h"
#include "lab.h"
#include "timer.h"
#include "vector_add.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef COURSE_SIMT
enum { EMULATED = 1, WARMUP = 1 };
static int reps = 3;
static int log2n = 20;
#else
enum { EMULATED = 0, WARMUP = 2 };
static int reps = 20;
static int log2n = 28;
#endif
static const char *json_path = NULL;

static const arg_spec_t specs[] = {
    {"log2n", ARG_INT, &log2n, "vector length is 2^log2n floats", 10, 30},
    {"reps", ARG_INT, &reps, "timed repetitions (median reported)", 1, 1000},
    {"json", ARG_STRING, &json_path, "also write the results as JSON to this file", 0, -1},
};

/* Median time in ms (*ms_out) of `reps` runs of either the lab kernel or
 * the copy, after WARMUP runs. Returns LAB_OK, or vector_add's status when
 * it did not run. */
static int time_ms(int use_copy, float *a, float *b, float *c, int n, double *ms_out) {
    double *ms = malloc(sizeof(double) * (size_t)reps);
    gpu_timer_t t;
    gpu_timer_init(&t, NULL);
    int st = LAB_OK;
    for (int r = -WARMUP; r < reps && st == LAB_OK; r++) {
        gpu_flush_l2();
        gpu_timer_start(&t);
        if (use_copy) CUDA_CHECK(cudaMemcpyAsync(c, a, (size_t)n * 4, cudaMemcpyDeviceToDevice, 0));
        else st = vector_add(a, b, c, n);
        float m = gpu_timer_stop_ms(&t);
        if (st == LAB_OK && !use_copy) gpu_sync_check("vector_add");
        if (r >= 0) ms[r] = m;
    }
    gpu_timer_free(&t);
    *ms_out = st == LAB_OK ? median(ms, (size_t)reps) : 0.0;
    free(ms);
    return st;
}

int main(int argc, char **argv) {
    args_t a = {"bench", "lab 00: vector_add bandwidth against a device-to-device copy", specs, 3};
    args_parse_or_exit(&a, argc, argv);
    if (!gpu_available()) {
        printf("bench: no GPU and not built for the emulator; nothing to time\n");
        return 0;
    }
    /* Opened before anything runs: a path that cannot be written costs no run. */
    FILE *jf = NULL;
    char jerr[4500];
    if (json_path && !(jf = course_create_output(json_path, "--json", jerr, sizeof jerr))) {
        fprintf(stderr, "bench: %s\n", jerr);
        return 2;
    }
    char name[128];
    gpu_device_name(name, sizeof name);
    int n = 1 << log2n;
    float *da = gpu_malloc((size_t)n * 4), *db = gpu_malloc((size_t)n * 4), *dc = gpu_malloc((size_t)n * 4);
    gpu_memset(da, 0, (size_t)n * 4);
    gpu_memset(db, 0, (size_t)n * 4);
    double t_add, t_copy;
    int st = time_ms(0, da, db, dc, n, &t_add);
    if (st == LAB_NOT_IMPLEMENTED) FATAL("vector_add still has its TODO, so it did not run: finish the lab first");
    if (st != LAB_OK) {
        /* A fault in the kernel is sticky; a refused launch (too many
         * threads per block, too many blocks) leaves no error behind. */
        char err[160];
        if (strcmp(gpu_sticky_error(err, sizeof err), "no error") != 0)
            FATAL("vector_add returned '%s' (%d) for n = %d: the device reports %s",
                  lab_status_name(st), st, n, err);
        FATAL("vector_add returned '%s' (%d) for n = %d: the launch was refused (block or grid "
              "too large?); print cudaGetLastError() after the launch to see why",
              lab_status_name(st), st, n);
    }
    time_ms(1, da, db, dc, n, &t_copy);
    double gb_add = gbps(12.0 * n, t_add * 1e-3), gb_copy = gbps(8.0 * n, t_copy * 1e-3);
    char ratio[32] = "-", ratio_json[32] = "null";
    if (!EMULATED) {
        snprintf(ratio, sizeof ratio, "%.2f", gb_add / gb_copy);
        snprintf(ratio_json, sizeof ratio_json, "%.4f", gb_add / gb_copy);
    }
    printf("# device: %s; median of %d reps%s\n", name, reps, EMULATED ? "" : ", L2 flushed before each");
    if (EMULATED)
        printf("# emulator: CPU timings, not GPU speeds, so no ratio; defaults shrink to 2^20 floats "
               "and 3 reps (2^28 and 20 on a GPU)\n");
    printf("# %-12s %12s %10s %12s %8s\n", "kernel", "n", "time(ms)", "GB/s", "ratio");
    printf("  %-12s %12d %10.3f %12.1f %8s\n", "memcpy d2d", n, t_copy, gb_copy, EMULATED ? "-" : "1.00");
    printf("  %-12s %12d %10.3f %12.1f %8s\n", "vector_add", n, t_add, gb_add, ratio);
    if (jf) {
        fprintf(jf, "{\"lab\":\"00\",\"device\":");
        course_json_string(jf, name);
        fprintf(jf, ",\"emulator\":%s,\"n\":%d,\"reps\":%d,\"results\":["
                    "{\"kernel\":\"memcpy_d2d\",\"ms\":%.6f,\"gbps\":%.3f},"
                    "{\"kernel\":\"vector_add\",\"ms\":%.6f,\"gbps\":%.3f,\"ratio\":%s}]}\n",
                EMULATED ? "true" : "false", n, reps, t_copy, gb_copy, t_add, gb_add, ratio_json);
        fclose(jf);
    }
    gpu_free(da); gpu_free(db); gpu_free(dc);
    return 0;
}
