/*
 * A small MPI program that fails on purpose, launched by test_comm_abort to
 * check that a job with one failing rank ends quickly and says which rank
 * failed, instead of leaving the other ranks waiting forever.
 *
 *   comm_fail_rank RANK [barrier|allreduce|exit]
 *       Every other rank waits in a blocking comm_barrier (default) or
 *       comm_allreduce; after a short delay, so that they are really
 *       waiting, rank RANK calls FATAL (barrier, allreduce) or calls exit(3)
 *       without MPI_Finalize (exit).
 *   comm_fail_rank ok
 *       Nobody fails: the control case, exits 0.
 *   comm_fail_rank nccl
 *       Asks for the NCCL world communicator. Without a GPU (or without NCCL
 *       in the build) that must end the job with a clear message; with one
 *       GPU per rank it succeeds and the program says so.
 *   comm_fail_rank badarg CASE
 *       Every rank makes the same wrong call, which must be refused with a
 *       message that says what was wrong: null (a NULL buffer), root (a root
 *       that is not a rank), negative (a count of -1 as size_t), intmax (more
 *       elements than MPI takes in one call; the buffers are never touched),
 *       allgather-overlap and reduce-scatter-overlap (the same buffer as
 *       sendbuf and recvbuf, which is NCCL's in-place layout on rank 0 only;
 *       run with 2 ranks, rank 1 must refuse it), waitall-negative (n = -1)
 *       and waitall-null (a NULL array for 2 requests), null-recv (a NULL
 *       recvbuf), negative-peer (comm_send to rank -1), allreduce-overlap and
 *       sendrecv-overlap (buffers that overlap, in an allreduce not as the same
 *       pointer), allgatherv-overlap (rank 0 in place, rank 1 one element off
 *       its block), counts-null (a NULL counts array), split-color (color -2)
 *       and shard-rank (shard 2 of 2); recv-short, recv-long, recv-dtype,
 *       irecv-short, irecv-long, sendrecv-short and sendrecv-long (2 ranks:
 *       rank 1 sends rank 0 3 or 5 floats, or 4 bf16, where rank 0 receives
 *       4 floats with comm_recv, comm_irecv and comm_wait, or comm_sendrecv;
 *       recv-double: 3 floats where rank 0 receives 4 doubles; with 3 ranks,
 *       sendrecv-three: rank 0's comm_sendrecv sends to rank 1 and receives
 *       from rank 2, which sends 3 floats for 4); allgatherv-max (2 counts
 *       that add up to exactly comm.c's largest count), reduce-scatterv-null-recv
 *       and allgatherv-null-send (a NULL buffer for a rank's block of 2);
 *       with 2 ranks,
 *       reduce-scatter-intmax, allgather-intmax and allgatherv-intmax (a whole
 *       buffer of INT_MAX + 1 elements, over MPI's limit although each block
 *       is under it) and reduce-scatter-too-long and allgather-too-long (a
 *       block count whose total no buffer can hold), and allgatherv-too-long
 *       (two counts that each pass but add up to more); none of their buffers
 *       is ever touched. With 3 ranks, reduce-scatter-max (a whole buffer of
 *       exactly comm.c's largest count); with 17 ranks, reduce-scatter-wraps
 *       (the largest count, whose product with 17 ranks wraps past SIZE_MAX).
 *       dtype and op (one past the last comm_dtype_t or
 *       comm_op_t, to comm_allreduce), dtype-size (the same to
 *       comm_dtype_size), null-comm (comm_allreduce on NULL), recv-peer
 *       (comm_recv from rank 2 of 2), sendrecv-source (source -1),
 *       sendrecv-null-recv (a NULL recvbuf), wait-null (comm_wait(NULL)),
 *       shard-negative, shard-size and shard-null (comm_shard_range of rank
 *       -1, of size 0, with a NULL offset); recv-intmax (2 ranks: rank 0
 *       receives INT_MAX floats, which MPI takes, where rank 1 sends 3).
 *   comm_fail_rank mismatch CASE
 *       Run with COMM_CHECK_ARGS=1 and 4 ranks (it refuses to run without the
 *       check: the calls below would then hang or corrupt memory). One rank
 *       passes something different from the others to a collective, which
 *       the check must refuse before any data moves: allreduce-count (rank 2
 *       passes count 999, the others 1000), allreduce-dtype (rank 1
 *       COMM_INT32), allreduce-op (rank 3 COMM_MAX), broadcast-root (rank 2
 *       root 1), call (rank 0 calls comm_barrier, the others comm_allreduce),
 *       nonblocking (rank 1 calls comm_iallreduce, the others comm_allreduce),
 *       reduce-scatter-count (rank 3 recvcount 3, the others 4),
 *       iallgather-count (rank 0 sendcount 5, the others 4), allgatherv-counts
 *       and reduce-scatterv-counts (rank 1's counts[2] is 4, the others' 3),
 *       reduce-scatter-op (rank 1 COMM_MAX), reduce-scatterv-op (rank 2
 *       COMM_MIN), broadcast-dtype (rank 3 COMM_INT32), allgather-dtype (rank 0
 *       COMM_INT32), allgatherv-dtype (rank 1 COMM_INT32), ireduce-scatter
 *       (rank 2 calls comm_ireduce_scatter, the others comm_reduce_scatter) and
 *       ibroadcast (rank 3 calls comm_ibroadcast, the others comm_broadcast),
 *       split (rank 2 calls comm_split, the others comm_barrier),
 *       broadcast-count (rank 1 count 999), reduce-scatter-dtype (rank 2
 *       COMM_INT32), reduce-scatterv-dtype (rank 0 COMM_INT32),
 *       allgatherv-last-count (rank 3's counts[3] is 4, the others' 3),
 *       reduce-scatterv-two-counts (rank 3's counts[1] and counts[2] are 4);
 *       many (14 ranks: comm_allreduce with count 1001 on rank 1, 1002 on
 *       ranks 2 and 3, 1003 on rank 4, 1004 on rank 5, 1000 on the others).
 *       none: every collective once, the same arguments on every rank; must
 *       pass the check and exit 0.
 *   comm_fail_rank hang CASE
 *       Run with COMM_TIMEOUT set (it refuses to run without it: the calls
 *       below would then hang for ever). The ranks' calls do not match, so
 *       some rank waits until COMM_TIMEOUT ends the job: skip (4 ranks; after
 *       one collective that all make, rank 2 skips the comm_allreduce the
 *       others make and goes on to comm_barrier), recv (rank 0 receives from
 *       rank 1, which never sends and calls comm_barrier), send (rank 0 sends
 *       rank 1 more than an eager message; rank 1 calls comm_barrier) and
 *       send-order (2
 *       ranks, both comm_recv first: the classic deadlock of a ring written
 *       with blocking calls), wait (3 ranks; after a comm_split of the world
 *       and a barrier on the new group, rank 0 calls comm_sendrecv to rank 1
 *       and from rank 2, rank 1 comm_irecv from rank 2 then comm_wait, and
 *       rank 2 comm_barrier on the world). none: every call matched; must exit
 *       0. compute: every call matched, but between them every rank computes
 *       (sleeps) for twice COMM_TIMEOUT, after each kind of call that is
 *       watched; the time outside the calls must not count, so it must exit 0.
 *   comm_fail_rank checks [RANK]
 *       Every rank prints what comm_checks_args() says on the world
 *       communicator. With RANK, COMM_CHECK_ARGS=1 is set on that rank only
 *       (before comm_init, from Open MPI's OMPI_COMM_WORLD_RANK), as a
 *       launcher that passes the environment to some nodes only would.
 */
#include "comm.h"
#include "error.h"
#include "log.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(void) {
    fprintf(stderr, "usage: comm_fail_rank RANK [barrier|allreduce|exit] | ok | nccl | badarg CASE | "
                    "mismatch CASE | hang CASE | checks [RANK]\n");
    exit(2);
}

/* A wrong call, made by every rank; returns only if it was not refused. */
static void bad_call(comm_t *world, const char *what) {
    float buf[8] = {0}, other[8] = {0};
    /* With 2 ranks: blocks within INT_MAX whose whole buffer is INT_MAX + 1 elements, and
     * blocks whose whole buffer is longer than comm.c's largest count, (size_t)PTRDIFF_MAX / 8. */
    size_t half_over_int = (size_t)INT_MAX / 2 + 1, half_over_any = (size_t)PTRDIFF_MAX / 8 / 2 + 1;
    if (!strcmp(what, "null")) {
        comm_allreduce(world, NULL, buf, 5, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "root")) {
        comm_broadcast(world, buf, 8, COMM_FLOAT32, comm_size(world));
    } else if (!strcmp(what, "negative")) {
        int n = -1; /* the mistake: a signed count that went negative */
        comm_allreduce(world, buf, buf, (size_t)n, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "intmax")) {
        comm_allreduce(world, buf, buf, (size_t)INT_MAX + 1, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "allgather-overlap")) {
        /* MPI's way of asking for in place; NCCL's is sendbuf = buf + rank * 4 */
        comm_allgather(world, buf, buf, 4, COMM_FLOAT32);
    } else if (!strcmp(what, "reduce-scatter-overlap")) {
        comm_reduce_scatter(world, buf, buf, 4, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "reduce-scatter-intmax")) {
        comm_reduce_scatter(world, buf, other, half_over_int, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "allgather-intmax")) {
        comm_allgather(world, other, buf, half_over_int, COMM_FLOAT32);
    } else if (!strcmp(what, "allgatherv-intmax")) {
        size_t counts[2] = {half_over_int, half_over_int};
        comm_allgatherv(world, other, buf, counts, COMM_FLOAT32);
    } else if (!strcmp(what, "reduce-scatter-too-long")) {
        comm_reduce_scatter(world, buf, other, half_over_any, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "allgather-too-long")) {
        comm_allgather(world, other, buf, half_over_any, COMM_FLOAT32);
    } else if (!strcmp(what, "waitall-negative")) {
        comm_request_t reqs[2] = {COMM_REQUEST_NULL, COMM_REQUEST_NULL};
        comm_waitall(-1, reqs);
    } else if (!strcmp(what, "waitall-null")) {
        comm_waitall(2, NULL);
    } else if (!strcmp(what, "null-recv")) {
        comm_allreduce(world, buf, NULL, 5, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "negative-peer")) {
        comm_send(world, buf, 8, COMM_FLOAT32, -1);
    } else if (!strcmp(what, "recv-short") || !strcmp(what, "recv-long") || !strcmp(what, "recv-dtype") ||
               !strcmp(what, "irecv-short") || !strcmp(what, "irecv-long") || !strcmp(what, "sendrecv-short") ||
               !strcmp(what, "sendrecv-long") || !strcmp(what, "recv-double")) {
        /* Rank 1 sends rank 0 a message of another size than rank 0's receive takes (short: 3
         * floats for 4; long: 5; dtype: 4 bf16, 8 bytes, for 4 floats; double: 3 floats, 12 bytes,
         * for 4 doubles), then waits in a barrier that rank 0 never reaches: rank 0's receive must
         * end the job. */
        const char *kind = strchr(what, '-') + 1;
        size_t sent = !strcmp(kind, "short") || !strcmp(kind, "double") ? 3 : !strcmp(kind, "long") ? 5 : 4;
        comm_dtype_t recv_dtype = !strcmp(kind, "double") ? COMM_FLOAT64 : COMM_FLOAT32;
        comm_dtype_t sent_dtype = !strcmp(kind, "dtype") ? COMM_BF16 : COMM_FLOAT32;
        if (what[0] == 's') { /* a ring of two: rank 0 sends the right size, rank 1 not */
            int peer = 1 - comm_rank(world);
            comm_sendrecv(world, buf, comm_rank(world) == 1 ? sent : 4, peer, other, 4, peer, COMM_FLOAT32);
            if (comm_rank(world) == 1) comm_barrier(world);
        } else if (comm_rank(world) == 1) {
            comm_send(world, buf, sent, sent_dtype, 0);
            comm_barrier(world);
        } else if (comm_rank(world) == 0 && what[0] == 'i') {
            comm_request_t r = comm_irecv(world, other, 4, COMM_FLOAT32, 1);
            comm_wait(&r);
        } else if (comm_rank(world) == 0) {
            comm_recv(world, other, 4, recv_dtype, 1); /* 4 doubles fill other's 8 floats */
        }
    } else if (!strcmp(what, "sendrecv-three")) {
        /* 3 ranks: rank 0 sends to rank 1 and receives from rank 2, which sends 3 floats for 4. */
        int rank = comm_rank(world);
        if (rank == 0) {
            comm_sendrecv(world, buf, 4, 1, other, 4, 2, COMM_FLOAT32);
        } else {
            if (rank == 1) comm_recv(world, other, 4, COMM_FLOAT32, 0);
            if (rank == 2) comm_send(world, buf, 3, COMM_FLOAT32, 0);
            comm_barrier(world);
        }
    } else if (!strcmp(what, "allreduce-overlap")) {
        comm_allreduce(world, buf, buf + 1, 4, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "sendrecv-overlap")) {
        int peer = (comm_rank(world) + 1) % comm_size(world);
        comm_sendrecv(world, buf, 4, peer, buf + 2, 4, peer, COMM_FLOAT32);
    } else if (!strcmp(what, "allgatherv-overlap")) {
        size_t counts[2] = {2, 2}; /* run with 2 ranks: rank 1's block starts at element 2 */
        comm_allgatherv(world, comm_rank(world) == 0 ? buf : buf + 1, buf, counts, COMM_FLOAT32);
    } else if (!strcmp(what, "counts-null")) {
        comm_allgatherv(world, buf, other, NULL, COMM_FLOAT32);
    } else if (!strcmp(what, "allgatherv-too-long")) {
        size_t counts[2] = {(size_t)PTRDIFF_MAX / 8, (size_t)PTRDIFF_MAX / 8};
        comm_allgatherv(world, other, buf, counts, COMM_FLOAT32);
    } else if (!strcmp(what, "reduce-scatter-max")) {
        /* With 3 ranks, a whole buffer of exactly the largest count, (size_t)PTRDIFF_MAX / 8 = 2^60 - 1,
         * which 3 divides: it holds, and is then refused only as more than MPI takes. */
        comm_reduce_scatter(world, buf, other, (size_t)PTRDIFF_MAX / 8 / (size_t)comm_size(world), COMM_FLOAT32,
                            COMM_SUM);
    } else if (!strcmp(what, "reduce-scatter-wraps")) {
        /* With 17 ranks, the largest count times the ranks is past SIZE_MAX: the product wraps
         * around to 2^60 - 17, a length that would pass, unless the overflow is caught. */
        comm_reduce_scatter(world, buf, other, (size_t)PTRDIFF_MAX / 8, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "dtype")) {
        comm_allreduce(world, buf, other, 4, (comm_dtype_t)COMM_DTYPE_COUNT, COMM_SUM);
    } else if (!strcmp(what, "dtype-size")) {
        comm_dtype_size((comm_dtype_t)COMM_DTYPE_COUNT);
    } else if (!strcmp(what, "op")) {
        comm_allreduce(world, buf, other, 4, COMM_FLOAT32, (comm_op_t)COMM_OP_COUNT);
    } else if (!strcmp(what, "null-comm")) {
        comm_allreduce(NULL, buf, other, 4, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "recv-peer")) {
        comm_recv(world, other, 4, COMM_FLOAT32, comm_size(world));
    } else if (!strcmp(what, "sendrecv-source")) {
        comm_sendrecv(world, buf, 4, 0, other, 4, -1, COMM_FLOAT32);
    } else if (!strcmp(what, "sendrecv-null-recv")) {
        comm_sendrecv(world, buf, 4, 0, NULL, 4, 0, COMM_FLOAT32);
    } else if (!strcmp(what, "wait-null")) {
        comm_wait(NULL);
    } else if (!strcmp(what, "recv-intmax")) {
        /* INT_MAX elements is a count MPI takes: the receive goes on to find the message short.
         * Only the 3 floats sent are written, so the buffer of 8 is enough. */
        if (comm_rank(world) == 1) {
            comm_send(world, buf, 3, COMM_FLOAT32, 0);
            comm_barrier(world);
        } else if (comm_rank(world) == 0) {
            comm_recv(world, other, (size_t)INT_MAX, COMM_FLOAT32, 1);
        }
    } else if (!strcmp(what, "allgatherv-max")) {
        /* counts that add up to exactly the largest count: they hold, and are then refused only
         * as more than MPI takes. */
        size_t counts[2] = {(size_t)PTRDIFF_MAX / 8 - 1, 1};
        comm_allgatherv(world, other, buf, counts, COMM_FLOAT32);
    } else if (!strcmp(what, "reduce-scatterv-null-recv")) {
        size_t counts[2] = {2, 2};
        comm_reduce_scatterv(world, buf, NULL, counts, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "allgatherv-null-send")) {
        size_t counts[2] = {2, 2};
        comm_allgatherv(world, NULL, buf, counts, COMM_FLOAT32);
    } else if (!strcmp(what, "split-color")) {
        comm_split(world, -2, 0);
    } else if (!strcmp(what, "shard-rank")) {
        size_t off, cnt;
        comm_shard_range(10, 2, 2, &off, &cnt);
    } else if (!strcmp(what, "shard-negative")) {
        size_t off, cnt;
        comm_shard_range(10, -1, 2, &off, &cnt);
    } else if (!strcmp(what, "shard-size")) {
        size_t off, cnt;
        comm_shard_range(10, 0, 0, &off, &cnt);
    } else if (!strcmp(what, "shard-null")) {
        size_t cnt;
        comm_shard_range(10, 0, 2, NULL, &cnt);
    } else {
        FATAL("unknown bad call '%s' (null, root, negative, intmax, allgather-overlap, "
              "reduce-scatter-overlap, reduce-scatter-intmax, allgather-intmax, allgatherv-intmax, "
              "reduce-scatter-too-long, allgather-too-long, waitall-negative, waitall-null, null-recv, "
              "negative-peer, allreduce-overlap, sendrecv-overlap, allgatherv-overlap, counts-null, "
              "allgatherv-too-long, reduce-scatter-max, reduce-scatter-wraps, dtype, dtype-size, op, null-comm, "
              "recv-peer, sendrecv-source, sendrecv-null-recv, wait-null, recv-intmax, recv-double, sendrecv-three, "
              "allgatherv-max, reduce-scatterv-null-recv, allgatherv-null-send, split-color, "
              "shard-rank, shard-negative, shard-size, shard-null)", what);
    }
}

enum { MISMATCH_N = 1000 };

/* Every collective once with the same arguments on every rank: the check must let them pass. */
static void matched_calls(comm_t *world, float *a, float *b) {
    int size = comm_size(world);
    size_t counts[4] = {3, 3, 3, 3}; /* run with 4 ranks */
    comm_allreduce(world, a, b, MISMATCH_N, COMM_FLOAT32, COMM_SUM);
    comm_reduce_scatter(world, a, b, 4, COMM_FLOAT32, COMM_SUM);
    comm_allgather(world, a, b, 4, COMM_FLOAT32);
    comm_reduce_scatterv(world, a, b, counts, COMM_FLOAT32, COMM_MAX);
    comm_allgatherv(world, a, b, counts, COMM_FLOAT32);
    comm_broadcast(world, a, MISMATCH_N, COMM_FLOAT32, size - 1);
    comm_request_t reqs[4] = {
        comm_iallreduce(world, a, a, 8, COMM_INT32, COMM_MIN),
        comm_ireduce_scatter(world, a + 100, b + 100, 2, COMM_FLOAT64, COMM_AVG),
        comm_iallgather(world, a + 200, b + 200, 4, COMM_BF16),
        comm_ibroadcast(world, a + 300, 16, COMM_FP16, 0),
    };
    comm_waitall(4, reqs);
    /* Colors and keys that differ from rank to rank, as they do in every split; one rank in none. */
    int rank = comm_rank(world);
    comm_t *pair = comm_split(world, rank == 3 ? COMM_SPLIT_NONE : rank % 2, -rank);
    if (pair) {
        comm_allreduce(pair, a, b, 4, COMM_FLOAT32, COMM_SUM);
        comm_free(pair);
    }
    comm_barrier(world);
}

/* One rank passes something the others do not; returns only if the check let it through. */
static void mismatched_call(comm_t *world, const char *what) {
    static float a[2 * MISMATCH_N], b[2 * MISMATCH_N];
    int rank = comm_rank(world);
    /* Without the check these calls hang, or read and write past the buffers. */
    CHECK(comm_checks_args(world), "mismatch: run with COMM_CHECK_ARGS=1");
    if (!strcmp(what, "many")) {
        /* Five counts: 1001 on rank 1, 1002 on ranks 2 and 3, 1003 on rank 4, 1004 on rank 5 and
         * 1000 on the other nine, more values and more ranks per value than the message lists. */
        static const int extra[6] = {0, 1, 2, 2, 3, 4};
        CHECK(comm_size(world) == 14, "mismatch many: run with 14 ranks");
        comm_allreduce(world, a, b, MISMATCH_N + (rank < 6 ? extra[rank] : 0), COMM_FLOAT32, COMM_SUM);
        log_error("the mismatched call '%s' was not refused", what);
        return;
    }
    CHECK(comm_size(world) == 4, "mismatch: run with 4 ranks");
    size_t counts[4] = {3, 3, rank == 1 ? 4 : 3, 3};
    size_t last[4] = {3, 3, 3, rank == 3 ? 4 : 3}, two[4] = {3, rank == 3 ? 4 : 3, rank == 3 ? 4 : 3, 3};
    if (!strcmp(what, "none")) {
        matched_calls(world, a, b);
        if (rank == 0) printf("comm_fail_rank: all ranks agreed on every collective\n");
        return;
    } else if (!strcmp(what, "allreduce-count")) {
        comm_allreduce(world, a, b, rank == 2 ? MISMATCH_N - 1 : MISMATCH_N, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "allreduce-dtype")) {
        comm_allreduce(world, a, b, MISMATCH_N, rank == 1 ? COMM_INT32 : COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "allreduce-op")) {
        comm_allreduce(world, a, b, MISMATCH_N, COMM_FLOAT32, rank == 3 ? COMM_MAX : COMM_SUM);
    } else if (!strcmp(what, "broadcast-root")) {
        comm_broadcast(world, a, MISMATCH_N, COMM_FLOAT32, rank == 2 ? 1 : 0);
    } else if (!strcmp(what, "split")) {
        if (rank == 2)
            comm_split(world, 0, rank);
        else
            comm_barrier(world);
    } else if (!strcmp(what, "call")) {
        if (rank == 0)
            comm_barrier(world);
        else
            comm_allreduce(world, a, b, MISMATCH_N, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "nonblocking")) {
        if (rank == 1) {
            comm_request_t r = comm_iallreduce(world, a, b, MISMATCH_N, COMM_FLOAT32, COMM_SUM);
            comm_wait(&r);
        } else {
            comm_allreduce(world, a, b, MISMATCH_N, COMM_FLOAT32, COMM_SUM);
        }
    } else if (!strcmp(what, "reduce-scatter-count")) {
        comm_reduce_scatter(world, a, b, rank == 3 ? 3 : 4, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "iallgather-count")) {
        comm_request_t r = comm_iallgather(world, a, b, rank == 0 ? 5 : 4, COMM_FLOAT32);
        comm_wait(&r);
    } else if (!strcmp(what, "allgatherv-counts")) {
        comm_allgatherv(world, a, b, counts, COMM_FLOAT32);
    } else if (!strcmp(what, "reduce-scatterv-counts")) {
        comm_reduce_scatterv(world, a, b, counts, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "reduce-scatter-op")) {
        comm_reduce_scatter(world, a, b, 4, COMM_FLOAT32, rank == 1 ? COMM_MAX : COMM_SUM);
    } else if (!strcmp(what, "reduce-scatterv-op")) {
        size_t even[4] = {3, 3, 3, 3};
        comm_reduce_scatterv(world, a, b, even, COMM_FLOAT32, rank == 2 ? COMM_MIN : COMM_SUM);
    } else if (!strcmp(what, "broadcast-dtype")) {
        comm_broadcast(world, a, MISMATCH_N, rank == 3 ? COMM_INT32 : COMM_FLOAT32, 0);
    } else if (!strcmp(what, "allgather-dtype")) {
        comm_allgather(world, a, b, 4, rank == 0 ? COMM_INT32 : COMM_FLOAT32);
    } else if (!strcmp(what, "allgatherv-dtype")) {
        size_t even[4] = {3, 3, 3, 3};
        comm_allgatherv(world, a, b, even, rank == 1 ? COMM_INT32 : COMM_FLOAT32);
    } else if (!strcmp(what, "broadcast-count")) {
        comm_broadcast(world, a, rank == 1 ? MISMATCH_N - 1 : MISMATCH_N, COMM_FLOAT32, 0);
    } else if (!strcmp(what, "reduce-scatter-dtype")) {
        comm_reduce_scatter(world, a, b, 4, rank == 2 ? COMM_INT32 : COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "reduce-scatterv-dtype")) {
        size_t even[4] = {3, 3, 3, 3};
        comm_reduce_scatterv(world, a, b, even, rank == 0 ? COMM_INT32 : COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "allgatherv-last-count")) {
        comm_allgatherv(world, a, b, last, COMM_FLOAT32);
    } else if (!strcmp(what, "reduce-scatterv-two-counts")) {
        comm_reduce_scatterv(world, a, b, two, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(what, "ireduce-scatter")) {
        if (rank == 2) {
            comm_request_t r = comm_ireduce_scatter(world, a, b, 4, COMM_FLOAT32, COMM_SUM);
            comm_wait(&r);
        } else {
            comm_reduce_scatter(world, a, b, 4, COMM_FLOAT32, COMM_SUM);
        }
    } else if (!strcmp(what, "ibroadcast")) {
        if (rank == 3) {
            comm_request_t r = comm_ibroadcast(world, a, MISMATCH_N, COMM_FLOAT32, 0);
            comm_wait(&r);
        } else {
            comm_broadcast(world, a, MISMATCH_N, COMM_FLOAT32, 0);
        }
    } else {
        FATAL("unknown mismatch '%s' (none, allreduce-count, allreduce-dtype, allreduce-op, broadcast-root, "
              "call, nonblocking, reduce-scatter-count, iallgather-count, allgatherv-counts, "
              "reduce-scatterv-counts, reduce-scatter-op, reduce-scatterv-op, broadcast-dtype, allgather-dtype, "
              "allgatherv-dtype, broadcast-count, reduce-scatter-dtype, reduce-scatterv-dtype, allgatherv-last-count, "
              "reduce-scatterv-two-counts, ireduce-scatter, ibroadcast, split, many)", what);
    }
    log_error("the mismatched call '%s' was not refused", what);
}

/* Calls that do not match across the ranks; returns only if the job was not ended. */
static void hanging_calls(comm_t *world, const char *what) {
    CHECK(getenv("COMM_TIMEOUT") && atof(getenv("COMM_TIMEOUT")) > 0,
          "hang: run with COMM_TIMEOUT set to a few seconds");
    int rank = comm_rank(world), size = comm_size(world);
    double x[4] = {1, 2, 3, 4}, y[4] = {0};
    if (!strcmp(what, "none")) {
        comm_allreduce(world, x, y, 4, COMM_FLOAT64, COMM_SUM);
        if (size >= 2 && rank < 2) comm_sendrecv(world, x, 4, 1 - rank, y, 4, 1 - rank, COMM_FLOAT64);
        comm_barrier(world);
        if (rank == 0) printf("comm_fail_rank: every call matched\n");
        return;
    } else if (!strcmp(what, "skip")) {
        CHECK(size == 4, "hang skip: run with 4 ranks");
        comm_allreduce(world, x, y, 4, COMM_FLOAT64, COMM_SUM);
        if (rank != 2) comm_allreduce(world, x, y, 4, COMM_FLOAT64, COMM_SUM);
        comm_barrier(world);
    } else if (!strcmp(what, "recv")) {
        CHECK(size == 2, "hang recv: run with 2 ranks");
        if (rank == 0) comm_recv(world, y, 4, COMM_FLOAT64, 1);
        comm_barrier(world);
    } else if (!strcmp(what, "send")) {
        /* Larger than any eager limit: the send waits for a receive that never comes. */
        static double big[1 << 16];
        CHECK(size == 2, "hang send: run with 2 ranks");
        if (rank == 0) comm_send(world, big, 1 << 16, COMM_FLOAT64, 1);
        comm_barrier(world);
    } else if (!strcmp(what, "send-order")) {
        CHECK(size == 2, "hang send-order: run with 2 ranks");
        comm_recv(world, y, 4, COMM_FLOAT64, 1 - rank);
        comm_send(world, x, 4, COMM_FLOAT64, 1 - rank);
    } else if (!strcmp(what, "wait")) {
        CHECK(size == 3, "hang wait: run with 3 ranks");
        comm_t *group = comm_split(world, 0, -rank); /* collective 1 on the world */
        comm_barrier(group);                         /* collective 1 on the group */
        if (rank == 0) {
            comm_sendrecv(world, x, 4, 1, y, 4, 2, COMM_FLOAT64); /* the send completes, the receive not */
        } else if (rank == 1) {
            comm_request_t r = comm_irecv(world, y, 4, COMM_FLOAT64, 2);
            comm_wait(&r);
        } else {
            comm_barrier(world); /* collective 2 on the world */
        }
    } else if (!strcmp(what, "compute")) {
        /* Twice the limit outside any call, after each kind of watched call: a watch that a
         * call left running would end the job here. */
        double limit = atof(getenv("COMM_TIMEOUT"));
        struct timespec nap = {(time_t)(2 * limit), (long)((2 * limit - (double)(time_t)(2 * limit)) * 1e9)};
        comm_allreduce(world, x, y, 4, COMM_FLOAT64, COMM_SUM);
        comm_t *group = comm_split(world, rank == 0 ? COMM_SPLIT_NONE : 0, rank);
        comm_request_t r = comm_iallreduce(world, x, y, 4, COMM_FLOAT64, COMM_SUM);
        comm_wait(&r);
        if (size >= 2 && rank < 2) comm_sendrecv(world, x, 4, 1 - rank, y, 4, 1 - rank, COMM_FLOAT64);
        if (size >= 2 && rank == 0) comm_send(world, x, 4, COMM_FLOAT64, 1);
        if (size >= 2 && rank == 1) comm_recv(world, y, 4, COMM_FLOAT64, 0);
        comm_free(group);
        comm_barrier(world);
        nanosleep(&nap, NULL);
        comm_barrier(world);
        if (rank == 0) printf("comm_fail_rank: the time between the calls did not count\n");
        return;
    } else {
        FATAL("unknown hang '%s' (none, skip, recv, send, send-order, wait, compute)", what);
    }
    log_error("the mismatched calls of '%s' completed", what);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    /* checks RANK: COMM_CHECK_ARGS=1 reaches that rank only, as from a launcher that passes the
     * environment to some nodes. Open MPI's mpirun tells each process its rank in the environment. */
    const char *world_rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!strcmp(argv[1], "checks") && argc > 2 && world_rank && !strcmp(world_rank, argv[2]))
        setenv("COMM_CHECK_ARGS", "1", 1);
    comm_init(&argc, &argv);

    if (!strcmp(argv[1], "nccl")) {
        comm_t *nccl = comm_world(COMM_BACKEND_NCCL);
        log_info("NCCL world communicator ready: rank %d of %d", comm_rank(nccl), comm_size(nccl));
        comm_finalize();
        return 0;
    }

    comm_t *world = comm_world(COMM_BACKEND_MPI);
    int rank = comm_rank(world), size = comm_size(world);
    if (!strcmp(argv[1], "badarg")) {
        if (argc < 3) usage();
        bad_call(world, argv[2]);
        log_error("the bad call '%s' was not refused", argv[2]);
        comm_finalize();
        return 0;
    }
    if (!strcmp(argv[1], "mismatch")) {
        if (argc < 3) usage();
        mismatched_call(world, argv[2]);
        comm_finalize();
        return 0;
    }
    if (!strcmp(argv[1], "hang")) {
        if (argc < 3) usage();
        hanging_calls(world, argv[2]);
        comm_finalize();
        return 0;
    }
    if (!strcmp(argv[1], "checks")) {
        printf("comm_fail_rank: rank %d of %d: comm_checks_args %d\n", rank, size, comm_checks_args(world));
        fflush(stdout);
        comm_barrier(world);
        comm_finalize();
        return 0;
    }
    if (!strcmp(argv[1], "ok")) {
        comm_barrier(world);
        if (rank == 0) printf("comm_fail_rank: all %d ranks finished\n", size);
        comm_finalize();
        return 0;
    }

    char *end = NULL;
    long victim = strtol(argv[1], &end, 10);
    if (*end != '\0') usage();
    const char *how = argc > 2 ? argv[2] : "barrier";
    CHECK(victim >= 0 && victim < size, "failing rank %ld is not in a job of %d ranks", victim, size);
    CHECK(!strcmp(how, "barrier") || !strcmp(how, "allreduce") || !strcmp(how, "exit"),
          "unknown way to fail '%s' (barrier, allreduce or exit)", how);

    if (rank == victim) {
        /* Give the others time to block in the collective first. */
        struct timespec ts = {0, 500 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (!strcmp(how, "exit")) {
            log_error("exiting with status 3 without MPI_Finalize, on purpose");
            exit(3);
        }
        FATAL("rank %d fails on purpose while the others wait in %s", rank, how);
    }
    if (!strcmp(how, "allreduce")) {
        double x = rank, y = 0;
        comm_allreduce(world, &x, &y, 1, COMM_FLOAT64, COMM_SUM);
    } else {
        comm_barrier(world);
    }
    /* Not reached while the victim is down: the collective cannot complete. */
    log_error("left the collective although rank %ld never joined it", victim);
    comm_finalize();
    return 0;
}
