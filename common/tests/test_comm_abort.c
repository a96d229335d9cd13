/*
 * A rank that fails must end the whole MPI job within seconds, naming itself,
 * never leave the others hanging, and a wrong argument must be refused with a
 * message that names the call. With COMM_CHECK_ARGS=1, ranks that pass
 * different arguments to one collective must end the job the same way, the
 * message naming the call, the argument and which ranks passed which value.
 * Run this test directly, not under mpirun:
 * it launches its own jobs of the comm_fail_rank program and watches them.
 *
 *   test_comm_abort [PATH_TO_comm_fail_rank]
 *
 * The program is the first argument, else $COMM_FAIL_RANK, else the file
 * comm_fail_rank next to this test's own binary. Jobs are started as
 * `$MPIRUN -np N program ARGS` through sh, with MPIRUN defaulting to
 * "mpirun --oversubscribe" (running as root also needs Open MPI's
 * OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).
 *
 * Each job gets a hard limit; a job still running then is killed with its
 * whole process group and the test fails, so this test cannot hang either.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "mpi_job.h"

enum { KILL_AFTER_S = 60 };         /* hard limit on one job */
static const double MAX_END_S = 20; /* a failed job must be over within this */

static char prog[PATH_MAX];

/* A job of comm_fail_rank on np ranks. */
static void run_job_np(int np, const char *args, job_t *job) { run_job(prog, np, args, KILL_AFTER_S, job); }

static void show_output_if(int failed, const job_t *job) {
    if (failed) fprintf(stderr, "---- job output ----\n%s---- end ----\n", job->out);
}

/* The job failed as it should: ended by itself, quickly, non-zero, with these words. */
static void assert_failed_job(const job_t *job, const char *must1, const char *must2) {
    int ok = job->exited && job->status != 0 && job->seconds < MAX_END_S &&
             strstr(job->out, must1) && (!must2 || strstr(job->out, must2));
    show_output_if(!ok, job);
    assert_true(job->exited);
    assert_int_not_equal(job->status, 0);
    assert_true(job->seconds < MAX_END_S);
    assert_non_null(strstr(job->out, must1));
    if (must2) assert_non_null(strstr(job->out, must2));
}

/* Control: the same launcher and program, nobody fails, exit 0. Without this a broken
 * MPIRUN would make every failure case below pass. */
static void test_control_job_succeeds(void **state) {
    (void)state;
    static job_t job;
    run_job_np(4, "ok", &job);
    int ok = job.exited && job.status == 0 && strstr(job.out, "all 4 ranks finished");
    show_output_if(!ok, &job);
    assert_true(ok);
}

/* The line the communicator's abort hook prints just before it calls MPI_Abort. Without
 * the hook a FATAL only exits, and Open MPI's mpirun still ends the job because a rank
 * exited non-zero, so the message and the exit status alone would pass; a launcher that
 * does not end the job on one rank's exit (srun without --kill-on-bad-exit) would then
 * leave the others waiting forever. (Open MPI's own "MPI_ABORT was invoked on rank N" is
 * not checked: it is lost now and then.) */
#define ABORTED_BY_HOOK "comm: ending the whole job with MPI_Abort"

static void test_fatal_while_others_in_barrier(void **state) {
    (void)state;
    static job_t job;
    run_job_np(4, "2", &job);
    assert_failed_job(&job, "[rank 2/4]", "rank 2 fails on purpose while the others wait in barrier");
    assert_failed_job(&job, "[rank 2/4] " ABORTED_BY_HOOK, NULL);
}

static void test_fatal_while_others_in_allreduce(void **state) {
    (void)state;
    static job_t job;
    run_job_np(4, "2 allreduce", &job);
    assert_failed_job(&job, "[rank 2/4]", "rank 2 fails on purpose while the others wait in allreduce");
    assert_failed_job(&job, "[rank 2/4] " ABORTED_BY_HOOK, NULL);
}

/* A rank that just exits (no FATAL, no MPI_Finalize): mpirun itself must end the job. */
static void test_exit_without_finalize(void **state) {
    (void)state;
    static job_t job;
    run_job_np(4, "2 exit", &job);
    assert_failed_job(&job, "[rank 2/4]", "without MPI_Finalize");
    assert_null(strstr(job.out, "left the collective"));
}

/* The NCCL world communicator: a clear refusal without a GPU, with fewer GPUs than ranks
 * (or without NCCL in the build), success with one GPU per rank. */
static void test_nccl_world_needs_gpu(void **state) {
    (void)state;
    static job_t job;
    run_job_np(2, "nccl", &job);
    if (job.exited && job.status == 0) {
        assert_non_null(strstr(job.out, "NCCL world communicator ready"));
        return;
    }
    const char *why = strstr(job.out, "has no NCCL") ? "this build has no NCCL"
                                                     : "the NCCL backend needs one GPU per rank";
    /* Without a GPU: none visible; with one GPU for two ranks: they would share it. */
    if (strstr(why, "GPU"))
        assert_true(strstr(job.out, "no CUDA device visible to rank") || strstr(job.out, "share GPU"));
    assert_failed_job(&job, why, ABORTED_BY_HOOK);
}

/* A wrong argument is refused on every rank with a message that names the call and says what
 * was wrong, and the job ends through the abort hook. */
static void assert_refused(const char *bad, const char *message) {
    static job_t job;
    char args[64];
    snprintf(args, sizeof args, "badarg %s", bad);
    run_job_np(2, args, &job);
    assert_failed_job(&job, message, ABORTED_BY_HOOK);
    assert_null(strstr(job.out, "was not refused"));
}

static void test_refuses_null_buffer(void **state) {
    (void)state;
    assert_refused("null", "comm_allreduce: NULL buffer for 5 elements");
}

static void test_refuses_root_out_of_range(void **state) {
    (void)state;
    assert_refused("root", "comm_broadcast: root 2 is not a rank of this communicator (size 2)");
}

/* Before, -1 was "larger than MPI's int limit; split the buffer", which sends the reader the
 * wrong way (and the NCCL backend, which has no int limit, passed it on). */
static void test_refuses_negative_count(void **state) {
    (void)state;
    assert_refused("negative", "comm_allreduce: count 18446744073709551615 is not a number of elements "
                               "(as a signed number it is -1: a negative count");
}

static void test_refuses_count_over_int_max(void **state) {
    (void)state;
    assert_refused("intmax", "comm_allreduce: count 2147483648 is more than MPI takes in one call "
                             "(INT_MAX = 2147483647 elements); split the buffer");
}

/* sendbuf == recvbuf is MPI's habit, not NCCL's in-place layout (except on rank 0). Open MPI
 * happened to return the right data for both calls, so the mistake passed every check on the
 * MPI backend and would read overwritten data under NCCL; now rank 1 refuses it. */
static void test_refuses_allgather_overlap_not_in_place(void **state) {
    (void)state;
    assert_refused("allgather-overlap", "comm_allgather: sendbuf overlaps recvbuf but is not recvbuf + "
                                        "rank * sendcount (recvbuf + 4 elements on rank 1)");
}

static void test_refuses_reduce_scatter_overlap_not_in_place(void **state) {
    (void)state;
    assert_refused("reduce-scatter-overlap", "comm_reduce_scatter: recvbuf overlaps sendbuf but is not "
                                             "sendbuf + rank * recvcount (sendbuf + 4 elements on rank 1)");
}

/* The whole buffer of a reduce-scatter or an all-gather is the block count times the ranks. Over
 * MPI's int limit it was checked only after the overlap check (the reduce-scatter's, not at all),
 * and a buffer said to hold 2^31 elements reaches over the separate array beside it, so the
 * message blamed the in-place layout; now the length itself is named. */
static void test_refuses_reduce_scatter_total_over_int_max(void **state) {
    (void)state;
    assert_refused("reduce-scatter-intmax", "comm_reduce_scatter: recvcount 1073741824 times 2 ranks is "
                                            "2147483648 elements in sendbuf, more than MPI takes in one call");
}

static void test_refuses_allgather_total_over_int_max(void **state) {
    (void)state;
    assert_refused("allgather-intmax", "comm_allgather: sendcount 1073741824 times 2 ranks is 2147483648 "
                                       "elements in recvbuf, more than MPI takes in one call");
}

static void test_refuses_allgatherv_total_over_int_max(void **state) {
    (void)state;
    assert_refused("allgatherv-intmax", "comm_allgatherv: the sum of counts 2147483648 is more than MPI takes "
                                        "in one call");
}

/* A total no buffer can hold: a count of the whole buffer passed as the count of one block.
 * It was called "not a number of elements ... a negative count converted to size_t?". */
static void test_refuses_reduce_scatter_total_too_long(void **state) {
    (void)state;
    assert_refused("reduce-scatter-too-long", "comm_reduce_scatter: recvcount 576460752303423488 times 2 ranks "
                                              "is more elements than any sendbuf can hold");
}

static void test_refuses_allgather_total_too_long(void **state) {
    (void)state;
    assert_refused("allgather-too-long", "comm_allgather: sendcount 576460752303423488 times 2 ranks is more "
                                         "elements than any recvbuf can hold");
}

/* The advice names the largest block that fits MPI's int limit for this number of ranks. A
 * buffer of exactly the largest count any buffer may hold (3 ranks) passes as such and is then
 * refused by that limit; a product with 17 ranks that wraps past SIZE_MAX is still too long. */
static void test_reduce_scatter_total_limits(void **state) {
    (void)state;
    static job_t job;
    assert_refused("reduce-scatter-intmax", "make several calls, each with recvcount at most INT_MAX / ranks = "
                                            "1073741823");
    run_job_np(3, "badarg reduce-scatter-max", &job);
    assert_failed_job(&job, "comm_reduce_scatter: recvcount 384307168202282325 times 3 ranks is 1152921504606846975 "
                            "elements in sendbuf, more than MPI takes in one call", ABORTED_BY_HOOK);
    run_job_np(17, "badarg reduce-scatter-wraps", &job);
    assert_failed_job(&job, "comm_reduce_scatter: recvcount 1152921504606846975 times 17 ranks is more elements "
                            "than any sendbuf can hold", ABORTED_BY_HOOK);
}

/* A negative n used to return at once, leaving the requests pending and their buffers in use. */
static void test_refuses_waitall_negative_n(void **state) {
    (void)state;
    assert_refused("waitall-negative", "comm_waitall: n is -1; pass the number of requests");
}

static void test_refuses_waitall_null_array(void **state) {
    (void)state;
    assert_refused("waitall-null", "comm_waitall: reqs is NULL but n is 2");
}

/* Both buffers are checked for NULL (the receive buffer too), and a peer below 0 is named as
 * one, not left to MPI's own error about an invalid rank. */
static void test_refuses_null_recvbuf_and_negative_peer(void **state) {
    (void)state;
    assert_refused("null-recv", "comm_allreduce: NULL buffer for 5 elements");
    assert_refused("negative-peer", "comm_send: peer -1 is not a rank of this communicator (size 2)");
}

/* Overlaps other than NCCL's in-place layout: partly overlapping buffers of an allreduce, the
 * two buffers of a sendrecv, and an allgatherv block one element off its offset (rank 0 is in
 * place and goes on into the collective; rank 1 refuses). Open MPI would run each of them. */
static void test_refuses_other_overlaps(void **state) {
    (void)state;
    assert_refused("allreduce-overlap", "comm_allreduce: sendbuf and recvbuf overlap but are not the same pointer");
    assert_refused("sendrecv-overlap", "comm_sendrecv: sendbuf and recvbuf overlap; the data received would "
                                       "overwrite the data being sent");
    assert_refused("allgatherv-overlap", "comm_allgatherv: sendbuf overlaps recvbuf but is not recvbuf + (offset "
                                         "of this rank's block) (recvbuf + 2 elements on rank 1)");
}

/* The "v" collectives' counts: a NULL array, and two counts that each pass but together are
 * more than any buffer holds (before, the sum was only checked against MPI's int limit, so the
 * message blamed that). */
static void test_refuses_v_counts(void **state) {
    (void)state;
    /* exactly the largest count holds, and is then more than MPI takes */
    assert_refused("allgatherv-max", "comm_allgatherv: the sum of counts 1152921504606846975 is more than MPI takes");
    /* a rank's own block is checked for NULL where it has elements */
    assert_refused("reduce-scatterv-null-recv", "comm_reduce_scatterv: NULL buffer for 4 elements");
    assert_refused("allgatherv-null-send", "comm_allgatherv: NULL buffer for 4 elements");
    assert_refused("counts-null", "comm_allgatherv: counts is NULL; pass one block size per rank");
    assert_refused("allgatherv-too-long", "comm_allgatherv: counts add up to more than 1152921504606846975 elements, more than any buffer");
}

/* A color below 0 other than COMM_SPLIT_NONE, and a shard that is not one of size. */
/* A receive given a message of another size than it takes: MPI fills a shorter one in
 * silently (the rest of the buffer keeps its old data) and ends a longer one with a bare
 * "message truncated". Each receiving call names the sender, both sizes and the rule. */
static void test_refuses_receive_of_another_size(void **state) {
    (void)state;
    const char *rule = "; a send and its receive must pass the same count and dtype";
    assert_refused("recv-short", "comm_recv from rank 1: rank 1 sent 12 bytes (3 elements of "
                                 "COMM_FLOAT32), but this receive takes 4 elements (16 bytes), so the rest of "
                                 "the buffer would be left as it was");
    assert_refused("recv-long", "comm_recv from rank 1: rank 1 sent more than the 4 elements of "
                                "COMM_FLOAT32 (16 bytes) this receive takes");
    assert_refused("recv-dtype", "comm_recv from rank 1: rank 1 sent 8 bytes (2 elements of COMM_FLOAT32), but "
                                 "this receive takes 4 elements (16 bytes)");
    assert_refused("recv-double", "comm_recv from rank 1: rank 1 sent 12 bytes (1.5 elements of COMM_FLOAT64), but "
                                  "this receive takes 4 elements (32 bytes)"); /* elements of the receive's dtype */
    assert_refused("irecv-short", "comm_irecv from rank 1: rank 1 sent 12 bytes (3 elements");
    assert_refused("irecv-long", "comm_irecv from rank 1: rank 1 sent more than the 4 elements");
    assert_refused("sendrecv-short", "comm_sendrecv from rank 1: rank 1 sent 12 bytes (3 elements");
    assert_refused("sendrecv-long", "comm_sendrecv from rank 1: rank 1 sent more than the 4 elements");
    static job_t three; /* the source is named, not the destination */
    run_job_np(3, "badarg sendrecv-three", &three);
    assert_failed_job(&three, "[rank 0/3] error: ", "comm_sendrecv from rank 2: rank 2 sent 12 bytes (3 elements");
    static job_t job;
    run_job_np(2, "badarg recv-short", &job);
    assert_failed_job(&job, "[rank 0/2] error: ", rule); /* the receiving rank, and the rule */
}

static void test_refuses_split_color_and_shard_rank(void **state) {
    (void)state;
    assert_refused("split-color", "comm_split: color -2 must be >= 0 or COMM_SPLIT_NONE");
    assert_refused("shard-rank", "comm_shard_range: rank 2 of size 2 is not a rank of the communicator; pass");
}

/* A dtype or op past the last one is named with the call that got it (not as the bare "invalid
 * comm_dtype_t" of a helper deeper down), and so is one given to comm_dtype_size itself. */
static void test_refuses_invalid_dtype_and_op(void **state) {
    (void)state;
    assert_refused("dtype", "comm_allreduce: invalid comm_dtype_t 6");
    assert_refused("dtype-size", "invalid comm_dtype_t 6");
    assert_refused("op", "comm_allreduce: invalid comm_op_t 5");
}

/* Each call checks its own arguments: a NULL communicator (what COMM_SPLIT_NONE gives), the peer
 * of a receive, the source and receive buffer of a sendrecv, a NULL request pointer. */
static void test_refuses_null_comm_peers_and_request(void **state) {
    (void)state;
    assert_refused("null-comm", "comm_allreduce: communicator is NULL (did this rank get COMM_SPLIT_NONE?)");
    assert_refused("recv-peer", "comm_recv: peer 2 is not a rank of this communicator (size 2)");
    assert_refused("sendrecv-source", "comm_sendrecv: source -1 is not a rank of this communicator (size 2)");
    assert_refused("sendrecv-null-recv", "comm_sendrecv: NULL buffer for 4 elements");
    assert_refused("wait-null", "comm_wait: NULL pointer to a request");
}

/* INT_MAX elements is the largest count MPI takes in one call, so it is not refused as too many:
 * this receive goes on and finds the message of 3 elements short. */
static void test_count_of_int_max_is_taken(void **state) {
    (void)state;
    assert_refused("recv-intmax", "comm_recv from rank 1: rank 1 sent 12 bytes (3 elements of COMM_FLOAT32), but "
                                  "this receive takes 2147483647 elements (8589934588 bytes)");
}

/* A shard of a negative rank or of size 0 (which would divide by zero), and NULL outputs. */
static void test_refuses_shard_size_rank_and_outputs(void **state) {
    (void)state;
    assert_refused("shard-negative", "comm_shard_range: rank -1 of size 2 is not a rank of the communicator");
    assert_refused("shard-size", "comm_shard_range: rank 0 of size 0 is not a rank of the communicator");
    assert_refused("shard-null", "comm_shard_range: NULL output pointer");
}

/* ---------------------------------------------- COMM_CHECK_ARGS: arguments that differ by rank */

/* A job of comm_fail_rank with COMM_CHECK_ARGS set to value; mpirun passes the launching
 * process's environment on to the ranks. */
static void run_job_with_check(int np, const char *value, const char *args, job_t *job) {
    setenv("COMM_CHECK_ARGS", value, 1);
    run_job_np(np, args, job);
    unsetenv("COMM_CHECK_ARGS");
}

/* Control: with the check on, matched calls of every collective pass and the job exits 0.
 * Without this, a check that refused everything would pass every mismatch test below. */
static void test_check_args_passes_matched_calls(void **state) {
    (void)state;
    static job_t job;
    run_job_with_check(4, "1", "mismatch none", &job);
    int ok = job.exited && job.status == 0 && strstr(job.out, "all ranks agreed on every collective") &&
             strstr(job.out, "COMM_CHECK_ARGS=1: every collective first checks") && !strstr(job.out, "error:");
    show_output_if(!ok, &job);
    assert_true(ok);
}

/* One rank passes something else: the job must end by itself (not hang, as it may without the
 * check), through the abort hook, with a message that names the call and the argument ("count
 * is ...") and lists which ranks passed which value, and names no argument the ranks agree on.
 * Every rank prints the same list, so the test does not depend on which rank's line reaches
 * the output before MPI_Abort ends the others. */
static void assert_mismatch_refused(const char *mismatch, const char *call, const char *field,
                                    const char *values) {
    static job_t job;
    char args[64];
    snprintf(args, sizeof args, "mismatch %s", mismatch);
    run_job_with_check(4, "1", args, &job);
    assert_failed_job(&job, call, ABORTED_BY_HOOK);
    assert_failed_job(&job, field, values);
    assert_null(strstr(job.out, "was not refused"));
    /* Exactly one "X is V on this rank (...)" in the first rank's message: one field differs. */
    const char *line = strstr(job.out, "COMM_CHECK_ARGS: the ranks ");
    assert_non_null(line);
    const char *end = strchr(line, '\n'), *first = strstr(line, " on this rank (");
    assert_true(first && (!end || first < end));
    const char *second = strstr(first + 1, " on this rank (");
    if (second && (!end || second < end)) show_output_if(1, &job);
    assert_true(!second || (end && second > end));
}

#define DIFFERENT_ARGS "COMM_CHECK_ARGS: the ranks passed different arguments to this collective"

/* Each rank that got its error line out before the job ended (at least one does) says want[r],
 * its own part of the message: every rank's line is checked, not only the first. */
static void assert_each_rank_says(const job_t *job, int np, const char *const *want) {
    int seen = 0;
    for (int r = 0; r < np; r++) {
        char key[32];
        snprintf(key, sizeof key, "[rank %d/%d] error: ", r, np);
        const char *line = strstr(job->out, key);
        if (!line) continue;
        seen++;
        const char *end = strchr(line, '\n'), *hit = strstr(line, want[r]);
        int ok = hit && (!end || hit < end);
        if (!ok) fprintf(stderr, "rank %d's line does not say '%s':\n%s\n", r, want[r], job->out);
        assert_true(ok);
    }
    assert_true(seen > 0);
}

static void test_check_args_count(void **state) {
    (void)state;
    assert_mismatch_refused("allreduce-count", "comm_allreduce: " DIFFERENT_ARGS, "count is ",
                            "on this rank (999 on rank 2; 1000 on ranks 0, 1, 3)");
    assert_mismatch_refused("reduce-scatter-count", "comm_reduce_scatter: " DIFFERENT_ARGS, "recvcount is ",
                            "on this rank (3 on rank 3; 4 on ranks 0, 1, 2)");
    assert_mismatch_refused("iallgather-count", "comm_iallgather: " DIFFERENT_ARGS, "sendcount is ",
                            "on this rank (5 on rank 0; 4 on ranks 1, 2, 3)");
}

static void test_check_args_dtype_op_root(void **state) {
    (void)state;
    assert_mismatch_refused("allreduce-dtype", "comm_allreduce: " DIFFERENT_ARGS, "dtype is ",
                            "on this rank (COMM_INT32 on rank 1; COMM_FLOAT32 on ranks 0, 2, 3)");
    assert_mismatch_refused("allreduce-op", "comm_allreduce: " DIFFERENT_ARGS, "op is ",
                            "on this rank (COMM_MAX on rank 3; COMM_SUM on ranks 0, 1, 2)");
    assert_mismatch_refused("broadcast-root", "comm_broadcast: " DIFFERENT_ARGS, "root is ",
                            "on this rank (1 on rank 2; 0 on ranks 0, 1, 3)");
}

/* Another collective altogether, or the non-blocking form of the same one (MPI never matches
 * a blocking collective with a non-blocking one). */
static void test_check_args_different_calls(void **state) {
    (void)state;
    assert_mismatch_refused("call", "COMM_CHECK_ARGS: the ranks are not in the same collective", "the call is ",
                            "on this rank (comm_barrier on rank 0; comm_allreduce on ranks 1, 2, 3)");
    assert_mismatch_refused("nonblocking", "COMM_CHECK_ARGS: the ranks are not in the same collective",
                            "the call is ",
                            "on this rank (comm_iallreduce on rank 1; comm_allreduce on ranks 0, 2, 3)");
    /* comm_split is a collective too: its color and key differ by design, the call does not. */
    assert_mismatch_refused("split", "COMM_CHECK_ARGS: the ranks are not in the same collective", "the call is ",
                            "on this rank (comm_split on rank 2; comm_barrier on ranks 0, 1, 3)");
}

/* The op of the reduce-scatters and the dtype of the broadcast and the gathers are part of
 * what the ranks compare, as they are for the allreduce. */
static void test_check_args_op_and_dtype_of_every_collective(void **state) {
    (void)state;
    assert_mismatch_refused("reduce-scatter-op", "comm_reduce_scatter: " DIFFERENT_ARGS, "op is ",
                            "on this rank (COMM_MAX on rank 1; COMM_SUM on ranks 0, 2, 3)");
    assert_mismatch_refused("reduce-scatterv-op", "comm_reduce_scatterv: " DIFFERENT_ARGS, "op is ",
                            "on this rank (COMM_MIN on rank 2; COMM_SUM on ranks 0, 1, 3)");
    assert_mismatch_refused("broadcast-dtype", "comm_broadcast: " DIFFERENT_ARGS, "dtype is ",
                            "on this rank (COMM_INT32 on rank 3; COMM_FLOAT32 on ranks 0, 1, 2)");
    assert_mismatch_refused("allgather-dtype", "comm_allgather: " DIFFERENT_ARGS, "dtype is ",
                            "on this rank (COMM_INT32 on rank 0; COMM_FLOAT32 on ranks 1, 2, 3)");
    assert_mismatch_refused("allgatherv-dtype", "comm_allgatherv: " DIFFERENT_ARGS, "dtype is ",
                            "on this rank (COMM_INT32 on rank 1; COMM_FLOAT32 on ranks 0, 2, 3)");
}

/* Every non-blocking collective is a call of its own, not only comm_iallreduce. */
static void test_check_args_nonblocking_is_another_call(void **state) {
    (void)state;
    assert_mismatch_refused("ireduce-scatter", "COMM_CHECK_ARGS: the ranks are not in the same collective",
                            "the call is ",
                            "on this rank (comm_ireduce_scatter on rank 2; comm_reduce_scatter on ranks 0, 1, 3)");
    assert_mismatch_refused("ibroadcast", "COMM_CHECK_ARGS: the ranks are not in the same collective",
                            "the call is ", "on this rank (comm_ibroadcast on rank 3; comm_broadcast on ranks 0, 1, 2)");
}

/* The v collectives compare a hash of counts; on a mismatch the message names the entry. */
static void test_check_args_v_counts(void **state) {
    (void)state;
    assert_mismatch_refused("allgatherv-counts", "comm_allgatherv: " DIFFERENT_ARGS, "counts[2] is ",
                            "on this rank (4 on rank 1; 3 on ranks 0, 2, 3)");
    assert_mismatch_refused("reduce-scatterv-counts", "comm_reduce_scatterv: " DIFFERENT_ARGS, "counts[2] is ",
                            "on this rank (4 on rank 1; 3 on ranks 0, 2, 3)");
}

/* The last block size is compared too, and found by every rank, those that agree with each
 * other included: rank 3's counts[3] is 4, the others' 3. Where two entries differ (rank 3's
 * counts[1] and counts[2]), the message names the first. */
static void test_check_args_last_and_first_of_several_counts(void **state) {
    (void)state;
    static job_t job;
    assert_mismatch_refused("allgatherv-last-count", "comm_allgatherv: " DIFFERENT_ARGS, "counts[3] is ",
                            "on this rank (4 on rank 3; 3 on ranks 0, 1, 2)");
    run_job_with_check(4, "1", "mismatch allgatherv-last-count", &job);
    static const char *const want[4] = {"counts[3] is 3 on this rank (4 on rank 3;", "counts[3] is 3 on this rank (",
                                        "counts[3] is 3 on this rank (", "counts[3] is 4 on this rank ("};
    assert_each_rank_says(&job, 4, want);
    assert_mismatch_refused("reduce-scatterv-two-counts", "comm_reduce_scatterv: " DIFFERENT_ARGS, "counts[1] is ",
                            "on this rank (4 on rank 3; 3 on ranks 0, 1, 2)");
}

/* The count of a broadcast and the dtype of both reduce-scatters are compared too. */
static void test_check_args_broadcast_count_and_reduce_scatter_dtypes(void **state) {
    (void)state;
    assert_mismatch_refused("broadcast-count", "comm_broadcast: " DIFFERENT_ARGS, "count is ",
                            "on this rank (999 on rank 1; 1000 on ranks 0, 2, 3)");
    assert_mismatch_refused("reduce-scatter-dtype", "comm_reduce_scatter: " DIFFERENT_ARGS, "dtype is ",
                            "on this rank (COMM_INT32 on rank 2; COMM_FLOAT32 on ranks 0, 1, 3)");
    assert_mismatch_refused("reduce-scatterv-dtype", "comm_reduce_scatterv: " DIFFERENT_ARGS, "dtype is ",
                            "on this rank (COMM_INT32 on rank 0; COMM_FLOAT32 on ranks 1, 2, 3)");
}

/* "X is V on this rank": V is the rank's own value, the odd one's and the others' alike. */
static void test_check_args_names_each_ranks_own_value(void **state) {
    (void)state;
    static job_t job;
    run_job_with_check(4, "1", "mismatch iallgather-count", &job);
    assert_failed_job(&job, "comm_iallgather: " DIFFERENT_ARGS, ABORTED_BY_HOOK);
    static const char *const want[4] = {"sendcount is 5 on this rank (", "sendcount is 4 on this rank (",
                                        "sendcount is 4 on this rank (", "sendcount is 4 on this rank ("};
    assert_each_rank_says(&job, 4, want);
}

/* On 14 ranks, five counts: the message lists four values, fewest ranks first (in order of
 * appearance among equals), each with at most eight ranks, and says that there is more. */
static void test_check_args_many_values_and_ranks(void **state) {
    (void)state;
    static job_t job;
    run_job_with_check(14, "1", "mismatch many", &job);
    assert_failed_job(&job, "comm_allreduce: " DIFFERENT_ARGS,
                      "count is 1000 on this rank (1001 on rank 1; 1003 on rank 4; 1002 on ranks 2, 3; 1000 on ranks "
                      "0, 6, 7, 8, 9, 10, 11, 12 and 1 more; and other values)");
}

/* COMM_CHECK_ARGS=1 on one rank only (a launcher that passed it to some nodes) turns the check
 * on for every rank, since a rank that checks makes one MPI call more per collective, and rank 0
 * warns; COMM_CHECK_ARGS=0 is off. */
static void test_check_args_on_some_ranks_is_on_for_all(void **state) {
    (void)state;
    static job_t job;
    run_job_np(4, "checks 2", &job);
    int ok = job.exited && job.status == 0 &&
             strstr(job.out, "[rank 0/4] warning: comm: COMM_CHECK_ARGS=1 reached only some ranks");
    for (int r = 0; r < 4; r++) {
        char want[64];
        snprintf(want, sizeof want, "rank %d of 4: comm_checks_args 1", r);
        ok &= strstr(job.out, want) != NULL;
    }
    show_output_if(!ok, &job);
    assert_true(ok);
    run_job_with_check(2, "0", "checks", &job);
    ok = job.exited && job.status == 0 && strstr(job.out, "rank 0 of 2: comm_checks_args 0") &&
         strstr(job.out, "rank 1 of 2: comm_checks_args 0") && !strstr(job.out, "COMM_CHECK_ARGS=1");
    show_output_if(!ok, &job);
    assert_true(ok);
}

/* A value that is neither on nor off is refused rather than read as either. */
static void test_check_args_bad_value_refused(void **state) {
    (void)state;
    static job_t job;
    run_job_with_check(2, "yes", "ok", &job);
    assert_failed_job(&job, "COMM_CHECK_ARGS is 'yes'; set it to 1", ABORTED_BY_HOOK);
}

/* ---- COMM_TIMEOUT: a rank waiting too long in one call ends the job, naming the call ---- */

static void run_job_with_timeout(int np, const char *value, const char *args, job_t *job) {
    setenv("COMM_TIMEOUT", value, 1);
    run_job_np(np, args, job);
    unsetenv("COMM_TIMEOUT");
}

#define TIMED_OUT "comm: COMM_TIMEOUT: "
#define ENDED_BY_WATCHDOG "comm: ending the whole job (exit code 1)"

/* Control: calls that match finish well inside the limit and the job exits 0. */
static void test_timeout_passes_matched_calls(void **state) {
    (void)state;
    static job_t job;
    run_job_with_timeout(4, "20", "hang none", &job);
    int ok = job.exited && job.status == 0 && strstr(job.out, "every call matched") && !strstr(job.out, TIMED_OUT);
    show_output_if(!ok, &job);
    assert_true(ok);
}

/* Rank 2 skips a collective: the three ranks in it and rank 2, waiting in the next one, each
 * report which call they are in and its number, which is where the sequences part. */
static void test_timeout_skipped_collective(void **state) {
    (void)state;
    static job_t job;
    run_job_with_timeout(4, "2", "hang skip", &job);
    assert_failed_job(&job, "[rank 0/4] " TIMED_OUT "comm_allreduce (collective number 2 on this rank's "
                            "communicator of 4 ranks, where it is rank 0) has waited ",
                      "(COMM_TIMEOUT=2)");
    assert_failed_job(&job, "[rank 2/4] " TIMED_OUT "comm_barrier (collective number 2 ", ENDED_BY_WATCHDOG);
    assert_null(strstr(job.out, "the mismatched calls of 'skip' completed"));
    /* Not before the limit: each report gives at least the 2 s asked for. */
    const char *w = strstr(job.out, "has waited ");
    assert_non_null(w);
    assert_true(atof(w + strlen("has waited ")) >= 2.0);
}

/* Point to point: a receive with no send, and both ranks receiving first. */
static void test_timeout_unmatched_receive(void **state) {
    (void)state;
    static job_t job;
    run_job_with_timeout(2, "1.5", "hang recv", &job);
    assert_failed_job(&job, "[rank 0/2] " TIMED_OUT "comm_recv from rank 1 (on a communicator of 2 ranks, "
                            "where this rank is 0) has waited ",
                      "(COMM_TIMEOUT=1.5)");
    run_job_with_timeout(2, "1.5", "hang send-order", &job);
    assert_failed_job(&job, "[rank 1/2] " TIMED_OUT "comm_recv from rank 0 ", ENDED_BY_WATCHDOG);
    run_job_with_timeout(2, "1.5", "hang send", &job);
    assert_failed_job(&job, "[rank 0/2] " TIMED_OUT "comm_send to rank 1 (on a communicator of 2 ranks, "
                            "where this rank is 0) has waited ", ENDED_BY_WATCHDOG);
}

/* The other waits name themselves: a sendrecv both its peers, a comm_wait the call that
 * started its request. Collectives are numbered per communicator, comm_split counting as one
 * on its parent: rank 2's barrier is the world's second (after the split), not the third call. */
static void test_timeout_names_wait_sendrecv_and_numbers_per_communicator(void **state) {
    (void)state;
    static job_t job;
    run_job_with_timeout(3, "1.5", "hang wait", &job);
    assert_failed_job(&job, "[rank 0/3] " TIMED_OUT "comm_sendrecv to rank 1 and from rank 2 (on a communicator "
                            "of 3 ranks, where this rank is 0) has waited ", ENDED_BY_WATCHDOG);
    assert_failed_job(&job, "[rank 1/3] " TIMED_OUT "comm_wait for the request of comm_irecv has waited ", NULL);
    assert_failed_job(&job, "[rank 2/3] " TIMED_OUT "comm_barrier (collective number 2 on this rank's "
                            "communicator of 3 ranks, where it is rank 2) has waited ", NULL);
}

/* Only time inside a call counts: ranks that compute for twice the limit between calls, after
 * every kind of watched call (a split that leaves a rank out included), are not ended. */
static void test_timeout_ignores_time_between_calls(void **state) {
    (void)state;
    static job_t job;
    run_job_with_timeout(4, "1", "hang compute", &job);
    int ok = job.exited && job.status == 0 && strstr(job.out, "the time between the calls did not count") &&
             !strstr(job.out, TIMED_OUT);
    show_output_if(!ok, &job);
    assert_true(ok);
}

/* A value that is not a number of seconds is refused, as is a negative one; 0 is off. */
static void test_timeout_bad_value_refused(void **state) {
    (void)state;
    static job_t job;
    run_job_with_timeout(2, "10s", "ok", &job);
    assert_failed_job(&job, "COMM_TIMEOUT is '10s'; set it to the seconds", ABORTED_BY_HOOK);
    run_job_with_timeout(2, "-1", "ok", &job);
    assert_failed_job(&job, "COMM_TIMEOUT is '-1'; set it to the seconds", ABORTED_BY_HOOK);
    run_job_with_timeout(2, "2e6", "ok", &job); /* past 1e6 s: a typo, not a limit */
    assert_failed_job(&job, "COMM_TIMEOUT is '2e6'; set it to the seconds", ABORTED_BY_HOOK);
    run_job_with_timeout(2, "0", "ok", &job);
    int ok = job.exited && job.status == 0 && strstr(job.out, "all 2 ranks finished");
    show_output_if(!ok, &job);
    assert_true(ok);
}

int main(int argc, char **argv) {
    const char *given = argc > 1 ? argv[1] : getenv("COMM_FAIL_RANK");
    if (given && *given) {
        snprintf(prog, sizeof prog, "%s", given);
    } else {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) {
            fprintf(stderr, "test_comm_abort: cannot find my own path; pass comm_fail_rank's path\n");
            return 1;
        }
        self[n] = '\0';
        snprintf(prog, sizeof prog, "%s/comm_fail_rank", dirname(self));
    }
    if (access(prog, X_OK) != 0) {
        fprintf(stderr, "test_comm_abort: %s is not an executable; build it or pass its path\n", prog);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_job_succeeds),
        cmocka_unit_test(test_fatal_while_others_in_barrier),
        cmocka_unit_test(test_fatal_while_others_in_allreduce),
        cmocka_unit_test(test_exit_without_finalize),
        cmocka_unit_test(test_nccl_world_needs_gpu),
        cmocka_unit_test(test_refuses_null_buffer),
        cmocka_unit_test(test_refuses_root_out_of_range),
        cmocka_unit_test(test_refuses_negative_count),
        cmocka_unit_test(test_refuses_count_over_int_max),
        cmocka_unit_test(test_refuses_allgather_overlap_not_in_place),
        cmocka_unit_test(test_refuses_reduce_scatter_overlap_not_in_place),
        cmocka_unit_test(test_refuses_reduce_scatter_total_over_int_max),
        cmocka_unit_test(test_refuses_allgather_total_over_int_max),
        cmocka_unit_test(test_refuses_allgatherv_total_over_int_max),
        cmocka_unit_test(test_refuses_reduce_scatter_total_too_long),
        cmocka_unit_test(test_refuses_allgather_total_too_long),
        cmocka_unit_test(test_reduce_scatter_total_limits),
        cmocka_unit_test(test_refuses_waitall_negative_n),
        cmocka_unit_test(test_refuses_waitall_null_array),
        cmocka_unit_test(test_refuses_null_recvbuf_and_negative_peer),
        cmocka_unit_test(test_refuses_other_overlaps),
        cmocka_unit_test(test_refuses_v_counts),
        cmocka_unit_test(test_refuses_split_color_and_shard_rank),
        cmocka_unit_test(test_refuses_invalid_dtype_and_op),
        cmocka_unit_test(test_refuses_null_comm_peers_and_request),
        cmocka_unit_test(test_count_of_int_max_is_taken),
        cmocka_unit_test(test_refuses_shard_size_rank_and_outputs),
        cmocka_unit_test(test_check_args_passes_matched_calls),
        cmocka_unit_test(test_check_args_count),
        cmocka_unit_test(test_check_args_dtype_op_root),
        cmocka_unit_test(test_check_args_different_calls),
        cmocka_unit_test(test_check_args_op_and_dtype_of_every_collective),
        cmocka_unit_test(test_check_args_nonblocking_is_another_call),
        cmocka_unit_test(test_check_args_v_counts),
        cmocka_unit_test(test_check_args_last_and_first_of_several_counts),
        cmocka_unit_test(test_check_args_broadcast_count_and_reduce_scatter_dtypes),
        cmocka_unit_test(test_check_args_names_each_ranks_own_value),
        cmocka_unit_test(test_check_args_many_values_and_ranks),
        cmocka_unit_test(test_check_args_on_some_ranks_is_on_for_all),
        cmocka_unit_test(test_check_args_bad_value_refused),
        cmocka_unit_test(test_timeout_passes_matched_calls),
        cmocka_unit_test(test_refuses_receive_of_another_size),
        cmocka_unit_test(test_timeout_skipped_collective),
        cmocka_unit_test(test_timeout_unmatched_receive),
        cmocka_unit_test(test_timeout_names_wait_sendrecv_and_numbers_per_communicator),
        cmocka_unit_test(test_timeout_ignores_time_between_calls),
        cmocka_unit_test(test_timeout_bad_value_refused),
    };
    /* COMM_TEST_FILTER='test_check_args*' runs only the tests whose names match (a cmocka glob). */
    if (getenv("COMM_TEST_FILTER") && getenv("COMM_TEST_FILTER")[0]) cmocka_set_test_filter(getenv("COMM_TEST_FILTER"));
    return cmocka_run_group_tests_name("comm_abort", tests, NULL, NULL) ? 1 : 0;
}
