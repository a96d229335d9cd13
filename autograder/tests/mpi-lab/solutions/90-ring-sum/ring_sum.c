/*
 * Ring all-reduce (sum) over the communicator: the fixture lab of the
 * grader's tests of labs that run on several MPI ranks.
 *
 * Two passes around the ring of p ranks, each of p - 1 steps, over the p
 * shards of comm_shard_range(). Reduce-scatter: at step s rank r sends
 * shard (r - s) to its right neighbour and adds shard (r - s - 1) from its
 * left one, so after p - 1 steps it holds the whole sum of shard (r + 1).
 * All-gather: the finished shards travel round the same way, copied instead
 * of added. Each rank sends 2 (p - 1) / p of the buffer in all, whatever p.
 */
#include <stdlib.h>

#include "comm.h"
#include "lab.h"

/* Shard c of n elements over p ranks, c taken modulo p. */
static void shard(size_t n, int c, int p, size_t *off, size_t *cnt) {
    comm_shard_range(n, ((c % p) + p) % p, p, off, cnt);
}

lab_status_t ring_sum(comm_t *comm, float *x, size_t n) {
    if (!comm || (!x && n)) return LAB_BAD_ARGUMENT;
    int r = comm_rank(comm), p = comm_size(comm);
    if (p == 1 || n == 0) return LAB_OK;
    int right = (r + 1) % p, left = (r + p - 1) % p;
    float *in = malloc((n / (size_t)p + 1) * sizeof *in);
    if (!in) return LAB_BAD_ARGUMENT;
    for (int s = 0; s < p - 1; s++) {
        size_t so, sc, ro, rc;
        shard(n, r - s, p, &so, &sc);
        shard(n, r - s - 1, p, &ro, &rc);
        comm_sendrecv(comm, x + so, sc, right, in, rc, left, COMM_FLOAT32);
        for (size_t i = 0; i < rc; i++) x[ro + i] += in[i];
    }
    for (int s = 0; s < p - 1; s++) {
        size_t so, sc, ro, rc;
        shard(n, r + 1 - s, p, &so, &sc);
        shard(n, r - s, p, &ro, &rc);
        comm_sendrecv(comm, x + so, sc, right, in, rc, left, COMM_FLOAT32);
        for (size_t i = 0; i < rc; i++) x[ro + i] = in[i];
    }
    free(in);
    return LAB_OK;
}
