/*
 * Benchmark of the fixture lab 90: ring_sum against the MPI library's own
 * all-reduce (comm_allreduce), timed in the same run on the same ranks.
 *
 * Bandwidth follows nccl-tests' convention: algbw = bytes / time, and
 * busbw = algbw * 2 (p - 1) / p, the bytes each rank must send and receive
 * in any all-reduce, so that figures compare across rank counts. Each
 * repetition starts after a barrier and is timed to the slowest rank (the
 * maximum over ranks); the median over repetitions is reported. Rank 0
 * prints the table and writes the JSON (--json) the grader reads.
 */
#include "args.h"
#include "comm.h"
#include "error.h"
#include "lab.h"
#include "memory.h"
#include "timer.h"

#include <stdio.h>
#include <string.h>

lab_status_t ring_sum(comm_t *comm, float *x, size_t n);

static long long n_arg = 1 << 22;
static int reps = 10;
static const char *json_path = NULL;

static const arg_spec_t specs[] = {
    {"n", ARG_LONG, &n_arg, "floats per rank", 1, 1 << 28},
    {"reps", ARG_INT, &reps, "timed repetitions (median reported)", 1, 1000},
    {"json", ARG_STRING, &json_path, "also write the results as JSON to this file (rank 0)", 0, -1},
};

/* Median over reps of the slowest rank's seconds for one all-reduce of n floats. */
static double time_s(comm_t *w, int use_ring, float *x, size_t n) {
    double *s = host_malloc(sizeof(double) * (size_t)reps);
    for (int r = -1; r < reps; r++) { /* one warm-up */
        for (size_t i = 0; i < n; i++) x[i] = 1.0f;
        comm_barrier(w);
        double t0 = wall_time();
        if (use_ring) {
            if (ring_sum(w, x, n) != LAB_OK) FATAL("ring_sum did not run: finish the lab first");
        } else {
            comm_allreduce(w, x, x, n, COMM_FLOAT32, COMM_SUM);
        }
        double dt = wall_time() - t0;
        comm_allreduce(w, &dt, &dt, 1, COMM_FLOAT64, COMM_MAX);
        if (r >= 0) s[r] = dt;
    }
    double med = median(s, (size_t)reps);
    host_free(s);
    return med;
}

int main(int argc, char **argv) {
    comm_init(&argc, &argv);
    args_t a = {"bench", "lab 90 (grader fixture): ring_sum against MPI's all-reduce", specs, 3};
    args_parse_or_exit(&a, argc, argv);
    comm_t *w = comm_world(COMM_BACKEND_MPI);
    int p = comm_size(w);
    size_t n = (size_t)n_arg;
    float *x = host_malloc(n * sizeof *x);
    double t_mpi = time_s(w, 0, x, n), t_ring = time_s(w, 1, x, n);
    double bytes = 4.0 * (double)n, bus = 2.0 * (p - 1) / p;
    double bw_mpi = gbps(bytes, t_mpi) * bus, bw_ring = gbps(bytes, t_ring) * bus;
    if (comm_rank(w) == 0) {
        printf("# %d ranks, %zu floats each; busbw = bytes / time * 2 (p - 1) / p\n", p, n);
        printf("# %-16s %10s %12s %8s\n", "kernel", "time(ms)", "busbw GB/s", "ratio");
        printf("  %-16s %10.3f %12.2f %8s\n", "MPI allreduce", 1e3 * t_mpi, bw_mpi, "1.00");
        printf("  %-16s %10.3f %12.2f %8.2f\n", "90 ring_sum", 1e3 * t_ring, bw_ring, t_mpi / t_ring);
        if (json_path) {
            FILE *f = fopen(json_path, "w");
            if (!f) FATAL("cannot write %s", json_path);
            fprintf(f, "{\"lab\":\"90\",\"ranks\":%d,\"n\":%zu,\"baseline\":\"MPI allreduce\",\"results\":["
                       "{\"kernel\":\"MPI allreduce\",\"ms\":%.6f,\"busbw_gbps\":%.3f,\"ratio\":1.0},"
                       "{\"kernel\":\"90 ring_sum\",\"ms\":%.6f,\"busbw_gbps\":%.3f,\"ratio\":%.4f,\"status\":\"ok\"}]}\n",
                    p, n, 1e3 * t_mpi, bw_mpi, 1e3 * t_ring, bw_ring, t_mpi / t_ring);
            fclose(f);
        }
    }
    host_free(x);
    comm_finalize();
    return 0;
}
