/*
 * The communicator (see comm.h): argument checks and the MPI backend for
 * host buffers, and, when built with COURSE_HAVE_NCCL, the NCCL backend for
 * device buffers.
 *
 * Each operation is written once with a `nonblocking` flag: the blocking call
 * uses the blocking MPI collective (the baseline the labs measure against)
 * and the comm_i* call uses MPI_I*. What MPI cannot do by itself is kept in a
 * small "finish" record that runs after the data has arrived: averaging
 * (MPI has no MPI_AVG, so sum and divide) and moving the result of an
 * in-place reduce-scatter to where NCCL's convention puts it.
 *
 * bf16 and fp16 travel as MPI_UINT16_T and are reduced by user-defined MPI
 * operations that convert to float, combine, and round back to nearest even
 * (the conversions of half.h, bit-exact with CUDA's). max and min of every
 * floating-point type are user-defined too, so that NaN and signed zeros give
 * the same result whichever rank holds them.
 */
/* nccl.h before error.h: NCCL_CHECK's message takes ncclGetLastError() where the header has it. */
#ifdef COURSE_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

#include "comm.h"
#include "error.h"
#include "half.h"
#include "hash.h"
#include "log.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef COURSE_HAVE_NCCL
_Static_assert(sizeof(ncclUniqueId) == COMM_NCCL_ID_BYTES, "COMM_NCCL_ID_BYTES != sizeof(ncclUniqueId)");
#if !defined(NCCL_VERSION_CODE) || NCCL_VERSION_CODE < NCCL_VERSION(2, 10, 0)
#error "the NCCL backend needs NCCL 2.10 or newer (ncclAvg and bfloat16)"
#endif
/* ncclBfloat16 is 9 in every NCCL since 2.10, but before 2.19 nccl.h declares it only where
 * __CUDA_BF16_TYPES_EXIST__ is defined, which cuda_bf16.h does for C++ only: this file is C. */
#define COMM_NCCL_BFLOAT16 ((ncclDataType_t)9)
#endif

/** @brief A communicator (comm_t): its MPI group and, for NCCL, the NCCL side. */
struct comm {
    comm_backend_t backend; /**< which library moves the data */
    MPI_Comm mpi;           /**< both backends: NCCL uses it to bootstrap and to split */
    int rank;               /**< this process's rank in mpi */
    int size;               /**< number of ranks in mpi */
    int is_world;           /**< owned by comm_finalize(), not by comm_free() */
    int check_args;         /**< COMM_CHECK_ARGS: collectives first agree on their arguments */
    long collectives;       /**< collectives started on this rank so far, for COMM_TIMEOUT's message */
#ifdef COURSE_HAVE_NCCL
    ncclComm_t nccl;        /**< the NCCL communicator over the same ranks */
    cudaStream_t stream;    /**< where NCCL work is enqueued */
    int owns_stream;        /**< the stream was made here (not by comm_set_stream) */
    int device;             /**< the GPU this rank uses */
#endif
};

/** @brief Work left for after MPI has delivered the data (MPI backend). */
typedef struct {
    void *move_dst;         /**< first memmove(move_dst, move_src, move_bytes) ... */
    const void *move_src;   /**< source of the move */
    size_t move_bytes;      /**< bytes to move; 0: no move */
    void *avg_buf;          /**< ... then divide avg_count elements here by avg_size; NULL: none */
    size_t avg_count;       /**< elements to divide */
    comm_dtype_t avg_dtype; /**< their type */
    int avg_size;           /**< the divisor (number of ranks) */
} finish_t;

/** @brief A pending non-blocking operation (comm_request_t). */
struct comm_request {
    comm_backend_t backend; /**< which kind of wait it needs */
    MPI_Request mpi;        /**< MPI: the request of the MPI_I* call */
    finish_t finish;        /**< MPI: what to do once it has completed */
    const char *fn;         /**< the comm_i* call that started it, for the messages */
    size_t recv_count;      /**< MPI, comm_irecv: the elements it asked for, checked by the wait */
    comm_dtype_t recv_dtype; /**< MPI, comm_irecv: their type */
    int recv_peer;          /**< MPI, comm_irecv: the source rank; -1 for every other request */
#ifdef COURSE_HAVE_NCCL
    cudaEvent_t event;      /**< NCCL: recorded on the stream after the operation */
    comm_t *comm;           /**< NCCL: whose error state the wait polls, and which to abort */
#endif
};

static const char *DTYPE_NAMES[COMM_DTYPE_COUNT] = {"COMM_FLOAT32", "COMM_FLOAT64", "COMM_INT32",
                                                    "COMM_INT64",   "COMM_BF16",    "COMM_FP16"};
static int comm_started_mpi = 0; /* comm_init() called MPI_Init, so comm_finalize() ends it */
static int comm_initialized = 0;
static int check_args_env = 0;   /* COMM_CHECK_ARGS=1 on this rank, read once by comm_init() */
static comm_t *world_comms[2] = {NULL, NULL};

/* max and min as NCCL's kernels compute them (fmaxf/fminf, __hmax/__hmin): a NaN loses to a
 * number, and is the result only where every rank has NaN. MPI's built-in MPI_MAX and MPI_MIN
 * (x > y ? x : y) keep a NaN from one operand and drop it from the other, so the result
 * depended on which rank held the NaN. -0 counts as below +0, so the order of a +0 and a -0
 * does not decide the result's sign either. */
static double max_of(double x, double y) {
    if (x != x && y != y) return (double)NAN;
    if (x == y) return signbit(x) ? y : x;
    return fmax(x, y);
}
static double min_of(double x, double y) {
    if (x != x && y != y) return (double)NAN;
    if (x == y) return signbit(x) ? x : y;
    return fmin(x, y);
}

/* MPI_User_function for each (16-bit type, op): MPI passes no op, so one function each.
 * Each partial result is rounded to the 16-bit type, as a GPU kernel would. */
#define HALF_REDUCE_FN(name, to_f, from_f, combine)                                   \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt) {            \
        (void)dt;                                                                    \
        const uint16_t *a = (const uint16_t *)in;                                    \
        uint16_t *b = (uint16_t *)inout;                                             \
        for (int i = 0; i < *len; i++) {                                             \
            float x = to_f(a[i]), y = to_f(b[i]);                                    \
            b[i] = from_f(combine);                                                  \
        }                                                                            \
    }
HALF_REDUCE_FN(bf16_sum, float_from_bf16, bf16_from_float, x + y)
HALF_REDUCE_FN(bf16_prod, float_from_bf16, bf16_from_float, x * y)
HALF_REDUCE_FN(bf16_max, float_from_bf16, bf16_from_float, (float)max_of(x, y))
HALF_REDUCE_FN(bf16_min, float_from_bf16, bf16_from_float, (float)min_of(x, y))
HALF_REDUCE_FN(fp16_sum, float_from_fp16, fp16_from_float, x + y)
HALF_REDUCE_FN(fp16_prod, float_from_fp16, fp16_from_float, x * y)
HALF_REDUCE_FN(fp16_max, float_from_fp16, fp16_from_float, (float)max_of(x, y))
HALF_REDUCE_FN(fp16_min, float_from_fp16, fp16_from_float, (float)min_of(x, y))

/* The same max and min for float and double (their sums and products are MPI's own). */
#define FLOAT_REDUCE_FN(name, type, combine)                                          \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt) {            \
        (void)dt;                                                                    \
        const type *a = (const type *)in;                                            \
        type *b = (type *)inout;                                                     \
        for (int i = 0; i < *len; i++) b[i] = (type)combine(a[i], b[i]);              \
    }
FLOAT_REDUCE_FN(f32_max, float, max_of)
FLOAT_REDUCE_FN(f32_min, float, min_of)
FLOAT_REDUCE_FN(f64_max, double, max_of)
FLOAT_REDUCE_FN(f64_min, double, min_of)

/* The user-defined operations, by dtype and op (SUM, PROD, MAX, MIN; AVG reduces with SUM);
 * MPI_OP_NULL where MPI's built-in operation is right. */
static MPI_Op user_ops[COMM_DTYPE_COUNT][4];

/* ---------------------------------------------------------------- helpers */

size_t comm_dtype_size(comm_dtype_t dtype) {
    static const size_t sizes[] = {4, 8, 4, 8, 2, 2};
    CHECK((unsigned)dtype < COMM_DTYPE_COUNT, "invalid comm_dtype_t %d", (int)dtype);
    return sizes[dtype];
}

static MPI_Datatype mpi_dtype(comm_dtype_t dtype) {
    switch (dtype) {
    case COMM_FLOAT32: return MPI_FLOAT;
    case COMM_FLOAT64: return MPI_DOUBLE;
    case COMM_INT32: return MPI_INT32_T;
    case COMM_INT64: return MPI_INT64_T;
    case COMM_BF16:
    case COMM_FP16: return MPI_UINT16_T;
    default: FATAL("invalid comm_dtype_t %d", (int)dtype);
    }
}

static MPI_Op mpi_op(comm_dtype_t dtype, comm_op_t op) {
    int k = op == COMM_AVG ? COMM_SUM : (int)op;
    if ((unsigned)dtype < COMM_DTYPE_COUNT && (unsigned)k < 4 && user_ops[dtype][k] != MPI_OP_NULL)
        return user_ops[dtype][k];
    switch ((comm_op_t)k) {
    case COMM_SUM: return MPI_SUM;
    case COMM_PROD: return MPI_PROD;
    case COMM_MAX: return MPI_MAX;
    case COMM_MIN: return MPI_MIN;
    default: FATAL("invalid comm_op_t %d", (int)op);
    }
}

/* The largest element count either backend is given: its bytes must fit a ptrdiff_t. A
 * negative int passed as a count arrives as a size_t near SIZE_MAX, far above this. */
#define COMM_COUNT_MAX ((size_t)PTRDIFF_MAX / 8)

static void check_count(const char *fn, const char *what, size_t n) {
    CHECK(n <= COMM_COUNT_MAX,
          "%s: %s %zu is not a number of elements (as a signed number it is %lld: a negative count "
          "converted to size_t?); pass the number of elements, >= 0",
          fn, what, n, (long long)n);
}

/* MPI counts are int. The buffers are not cut into pieces here: that would change which MPI
 * collective runs (the baseline the labs measure), so a larger count is refused instead. */
static int mpi_count(const char *fn, const char *what, size_t n) {
    CHECK(n <= (size_t)INT_MAX,
          "%s: %s %zu is more than MPI takes in one call (INT_MAX = %d elements); split the buffer "
          "into pieces of at most INT_MAX elements and make one call per piece",
          fn, what, n, INT_MAX);
    return (int)n;
}

static void check_comm(const comm_t *comm, const char *fn) {
    CHECK(comm != NULL, "%s: communicator is NULL (did this rank get COMM_SPLIT_NONE?)", fn);
}

static void check_args(const comm_t *comm, const char *fn, size_t count, const void *a,
                       const void *b, comm_dtype_t dtype) {
    check_comm(comm, fn);
    CHECK((unsigned)dtype < COMM_DTYPE_COUNT, "%s: invalid comm_dtype_t %d", fn, (int)dtype);
    check_count(fn, "count", count);
    CHECK(count == 0 || (a != NULL && b != NULL), "%s: NULL buffer for %zu elements", fn, count);
}

static void check_op(const char *fn, comm_op_t op) {
    CHECK((unsigned)op < COMM_OP_COUNT, "%s: invalid comm_op_t %d", fn, (int)op);
}

static void check_peer(const comm_t *comm, const char *fn, int peer, const char *what) {
    CHECK(peer >= 0 && peer < comm->size, "%s: %s %d is not a rank of this communicator (size %d)",
          fn, what, peer, comm->size);
}

static char *at(const void *buf, size_t elems, comm_dtype_t dtype) {
    return (char *)buf + elems * comm_dtype_size(dtype);
}

/* n * (number of ranks), or SIZE_MAX where that overflows. */
static size_t times_ranks(const comm_t *comm, size_t n) {
    return n > SIZE_MAX / (size_t)comm->size ? SIZE_MAX : n * (size_t)comm->size;
}

/* The whole buffer of a reduce-scatter (sendbuf) or an all-gather (recvbuf) is n elements per
 * rank times the number of ranks; returns that length. It is checked before anything computes
 * an address from it: a product past size_t would wrap to a small length and pass the later
 * checks, and one past what a buffer can hold is a total passed where the count of one rank's
 * block was meant. The MPI backend also needs the length within int, as the counts themselves:
 * MPI's algorithms index the whole buffer (Open MPI 4's reduce-scatter computes recvcount *
 * ranks as an int), so a longer buffer is refused, not cut into pieces, as in mpi_count(). */
static size_t check_total(const comm_t *comm, const char *fn, const char *per_rank, size_t n,
                          const char *buf) {
    size_t total = times_ranks(comm, n);
    CHECK(total <= COMM_COUNT_MAX,
          "%s: %s %zu times %d ranks is more elements than any %s can hold (at most %zu); %s is the "
          "number of elements in one rank's block, not in the whole buffer",
          fn, per_rank, n, comm->size, buf, (size_t)COMM_COUNT_MAX, per_rank);
    if (comm->backend == COMM_BACKEND_MPI)
        CHECK(total <= (size_t)INT_MAX,
              "%s: %s %zu times %d ranks is %zu elements in %s, more than MPI takes in one call "
              "(INT_MAX = %d elements); make several calls, each with %s at most INT_MAX / ranks = %d",
              fn, per_rank, n, comm->size, total, buf, INT_MAX, per_rank, INT_MAX / comm->size);
    return total;
}

/* Whether [a, a + a_elems) and [b, b + b_elems) share an element. */
static int overlaps(const void *a, size_t a_elems, const void *b, size_t b_elems, comm_dtype_t dtype) {
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b, es = comm_dtype_size(dtype);
    return a_elems && b_elems && x < y + b_elems * es && y < x + a_elems * es;
}

/* In place has one layout, NCCL's: the small buffer is the block of this rank inside the large
 * one. Any other overlap is refused: MPI happens to give the right answer for some of them
 * (sendbuf == recvbuf in an allgather, say), so code that relies on it passes every test on
 * the MPI backend and then reads half-overwritten data under NCCL. */
static void check_layout(const comm_t *comm, const char *fn, const char *small, const void *small_buf,
                         size_t small_count, const char *large, const void *large_buf, size_t large_count,
                         size_t my_offset, const char *offset_expr, comm_dtype_t dtype) {
    if (small_buf == at(large_buf, my_offset, dtype)) return;
    CHECK(!overlaps(small_buf, small_count, large_buf, large_count, dtype),
          "%s: %s overlaps %s but is not %s + %s (%s + %zu elements on rank %d), NCCL's in-place layout; "
          "pass that pointer for in place, or buffers that do not overlap",
          fn, small, large, large, offset_expr, large, my_offset, comm->rank);
}

static void avg_divide(void *buf, size_t count, comm_dtype_t dtype, int size) {
    switch (dtype) {
    case COMM_FLOAT32: for (size_t i = 0; i < count; i++) ((float *)buf)[i] /= (float)size; break;
    case COMM_FLOAT64: for (size_t i = 0; i < count; i++) ((double *)buf)[i] /= size; break;
    case COMM_INT32: for (size_t i = 0; i < count; i++) ((int32_t *)buf)[i] /= size; break;
    case COMM_INT64: for (size_t i = 0; i < count; i++) ((int64_t *)buf)[i] /= size; break;
    case COMM_BF16:
        for (size_t i = 0; i < count; i++) {
            uint16_t *p = (uint16_t *)buf + i;
            *p = bf16_from_float(float_from_bf16(*p) / (float)size);
        }
        break;
    case COMM_FP16:
        for (size_t i = 0; i < count; i++) {
            uint16_t *p = (uint16_t *)buf + i;
            *p = fp16_from_float(float_from_fp16(*p) / (float)size);
        }
        break;
    default: FATAL("invalid comm_dtype_t %d", (int)dtype);
    }
}

static void run_finish(const finish_t *f) {
    if (f->move_bytes && f->move_dst != f->move_src) memmove(f->move_dst, f->move_src, f->move_bytes);
    if (f->avg_buf) avg_divide(f->avg_buf, f->avg_count, f->avg_dtype, f->avg_size);
}

static void set_avg(finish_t *f, const comm_t *comm, comm_op_t op, void *buf, size_t count,
                    comm_dtype_t dtype) {
    if (op != COMM_AVG) return;
    f->avg_buf = buf;
    f->avg_count = count;
    f->avg_dtype = dtype;
    f->avg_size = comm->size;
}

static comm_request_t request_new(comm_backend_t backend) {
    comm_request_t req = (comm_request_t)calloc(1, sizeof *req);
    CHECK(req != NULL, "out of memory allocating a comm request");
    req->backend = backend;
    req->mpi = MPI_REQUEST_NULL;
    return req;
}

/* Blocking: finish now. Non-blocking: hand the started MPI request and the finish record back. */
static comm_request_t mpi_done(int nonblocking, MPI_Request mreq, const finish_t *f, const char *fn) {
    if (!nonblocking) {
        run_finish(f);
        return COMM_REQUEST_NULL;
    }
    comm_request_t req = request_new(COMM_BACKEND_MPI);
    req->mpi = mreq;
    req->finish = *f;
    req->fn = fn;
    req->recv_peer = -1;
    return req;
}

/* A receive's result against what it asked for. comm.h's receives take exactly the
 * sender's count: MPI itself fills a shorter message in silently, leaving the rest of the
 * buffer as it was (last step's data, in a ring), and ends a longer one with a bare
 * "message truncated". rc is the receive's return code, st its status. */
static void check_received(int rc, const MPI_Status *st, size_t count, comm_dtype_t dtype, int peer,
                           const char *fn) {
    const size_t es = comm_dtype_size(dtype), want = count * es;
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_TRUNCATE)
        FATAL("%s from rank %d: rank %d sent more than the %zu elements of %s (%zu bytes) this receive takes; "
              "a send and its receive must pass the same count and dtype", fn, peer, peer, count,
              DTYPE_NAMES[dtype], want);
    if (rc != MPI_SUCCESS) { /* MPI_CHECK would name only "rc": name the receive and its peer */
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        FATAL("%s from rank %d failed: %s", fn, peer, msg);
    }
    int bytes = 0;
    MPI_CHECK(MPI_Get_count(st, MPI_BYTE, &bytes));
    if ((size_t)bytes != want)
        FATAL("%s from rank %d: rank %d sent %d bytes (%.6g elements of %s), but this receive takes %zu "
              "elements (%zu bytes), so the rest of the buffer would be left as it was; a send and its "
              "receive must pass the same count and dtype", fn, peer, peer, bytes, (double)bytes / (double)es,
              DTYPE_NAMES[dtype], count, want);
}

/* ------------------------------------------- argument agreement (COMM_CHECK_ARGS) */

/* Ranks that pass different arguments to one collective get no error from either library:
 * MPI may hang, cut the data short or combine unrelated elements, and NCCL hangs. With
 * COMM_CHECK_ARGS=1 each collective first compares a small signature across the ranks, on the
 * host over the communicator's MPI group (which the NCCL backend keeps too). */

/* The collectives the check knows, by signature id. Blocking and non-blocking calls are
 * different calls: MPI never matches an MPI_Allreduce with an MPI_Iallreduce. NCCL would run
 * the two as one, but the same program would hang on the MPI backend, so both refuse it (as
 * both refuse buffers that only MPI happens to handle). */
static const struct {
    const char *fn;    /* the public name */
    const char *count; /* what its count argument is called; NULL: it has none */
} CALLS[] = {
    {"comm_allreduce", "count"},          {"comm_iallreduce", "count"},
    {"comm_reduce_scatter", "recvcount"}, {"comm_ireduce_scatter", "recvcount"},
    {"comm_allgather", "sendcount"},      {"comm_iallgather", "sendcount"},
    {"comm_reduce_scatterv", NULL},       {"comm_allgatherv", NULL},
    {"comm_broadcast", "count"},          {"comm_ibroadcast", "count"},
    {"comm_barrier", NULL},
    /* Its color and key differ from rank to rank by design: only the call itself is compared. */
    {"comm_split", NULL},
};
enum { NCALLS = (int)(sizeof CALLS / sizeof CALLS[0]) };

static const char *OP_NAMES[COMM_OP_COUNT] = {"COMM_SUM", "COMM_PROD", "COMM_MAX", "COMM_MIN", "COMM_AVG"};

/* The signature's fields. A field the call does not take is -1 on every rank. Every value is
 * >= -1 and below 2^63, so its negation is an int64 too (see agree_on_args). */
enum { SIG_CALL, SIG_DTYPE, SIG_COUNT, SIG_OP, SIG_ROOT, SIG_COUNTS, SIG_FIELDS };

static int call_id(const char *fn) {
    for (int c = 0; c < NCALLS; c++)
        if (!strcmp(CALLS[c].fn, fn)) return c;
    FATAL("comm: %s is not a collective the argument check knows", fn);
}

/* FNV-1a over the block sizes of a "v" collective, each as 8 little-endian bytes (the same
 * on every host), kept to 63 bits. */
static int64_t counts_hash(const size_t *counts, int size) {
    uint64_t h = COURSE_FNV1A_OFFSET;
    for (int r = 0; r < size; r++) {
        uint8_t le[8];
        for (int b = 0; b < 8; b++) le[b] = (uint8_t)((uint64_t)counts[r] >> (8 * b));
        h = course_fnv1a(h, le, sizeof le);
    }
    return (int64_t)(h >> 1);
}

/* A field's value as the message shows it. */
static void field_text(int field, int64_t v, char *out, size_t len) {
    if (field == SIG_CALL && v >= 0 && v < NCALLS)
        snprintf(out, len, "%s", CALLS[v].fn);
    else if (field == SIG_DTYPE && v >= 0 && v < COMM_DTYPE_COUNT)
        snprintf(out, len, "%s", DTYPE_NAMES[v]);
    else if (field == SIG_OP && v >= 0 && v < COMM_OP_COUNT)
        snprintf(out, len, "%s", OP_NAMES[v]);
    else
        snprintf(out, len, "%lld", (long long)v);
}

/* Appends printf-style text to the string in msg (of size len), cutting it at the end. */
static void append(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *msg, size_t len, const char *fmt, ...) {
    size_t used = strlen(msg);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + used, len - used, fmt, ap);
    va_end(ap);
}

enum { SHOW_VALUES = 4, SHOW_RANKS = 8 }; /* at most this many distinct values, ranks per value */

/* If the ranks' values of one field differ, appends "name is X on this rank (Y on rank 2; X on
 * ranks 0, 1, 3)" to msg: each value with the ranks that passed it, the value fewest ranks
 * passed first, as the odd one out is usually the mistake. vals[r * stride] is rank r's value.
 * Every rank holds the same vals, so the part in parentheses is the same in every rank's
 * message, whichever of them reaches the log before the job ends. */
static void describe_field(char *msg, size_t len, const char *name, int field, const int64_t *vals,
                           size_t stride, int size, int me) {
    int64_t distinct[SHOW_VALUES];
    int holders[SHOW_VALUES], ndistinct = 0, more = 0;
    for (int r = 0; r < size; r++) {
        int64_t v = vals[(size_t)r * stride];
        int k = 0;
        while (k < ndistinct && distinct[k] != v) k++;
        if (k < ndistinct) {
            holders[k]++;
        } else if (ndistinct < SHOW_VALUES) {
            distinct[ndistinct] = v;
            holders[ndistinct++] = 1;
        } else {
            more = 1;
        }
    }
    if (ndistinct < 2) return;
    /* Fewest holders first; insertion sort keeps first appearance among equals. */
    for (int i = 1; i < ndistinct; i++)
        for (int j = i; j > 0 && holders[j] < holders[j - 1]; j--) {
            int64_t tv = distinct[j];
            distinct[j] = distinct[j - 1];
            distinct[j - 1] = tv;
            int th = holders[j];
            holders[j] = holders[j - 1];
            holders[j - 1] = th;
        }
    char text[32];
    field_text(field, vals[(size_t)me * stride], text, sizeof text);
    append(msg, len, "%s%s is %s on this rank (", *msg ? "; " : "", name, text);
    for (int k = 0; k < ndistinct; k++) {
        field_text(field, distinct[k], text, sizeof text);
        append(msg, len, "%s%s on rank%s ", k ? "; " : "", text, holders[k] > 1 ? "s" : "");
        for (int r = 0, shown = 0; r < size; r++) {
            if (vals[(size_t)r * stride] != distinct[k]) continue;
            if (shown == SHOW_RANKS) {
                append(msg, len, " and %d more", holders[k] - shown);
                break;
            }
            append(msg, len, "%s%d", shown++ ? ", " : "", r);
        }
    }
    append(msg, len, "%s)", more ? "; and other values" : "");
}

/* What the student can do about a mismatch, at the end of every such message. */
#define MISMATCH_ADVICE                                                                          \
    "every rank must make the same collective calls in the same order with the same arguments; " \
    "look for an argument computed from the rank (one shard's size where the whole buffer's was " \
    "meant) or a collective that only some ranks reach (inside if (rank == 0), or after an early " \
    "return on some ranks)"

/* The signatures differ somewhere. Every rank saw the same minima and maxima, so every rank is
 * here, and can afford to gather everything and say exactly what differs before the job ends. */
static void explain_mismatch(const comm_t *comm, const char *fn, const int64_t *sig,
                             const size_t *counts) __attribute__((noreturn));
static void explain_mismatch(const comm_t *comm, const char *fn, const int64_t *sig,
                             const size_t *counts) {
    int size = comm->size, me = comm->rank;
    int64_t *all = malloc((size_t)size * SIG_FIELDS * sizeof *all);
    CHECK(all != NULL, "%s: out of memory explaining an argument mismatch", fn);
    MPI_CHECK(MPI_Allgather(sig, SIG_FIELDS, MPI_INT64_T, all, SIG_FIELDS, MPI_INT64_T, comm->mpi));
    char msg[1024] = "";
    describe_field(msg, sizeof msg, "the call", SIG_CALL, all + SIG_CALL, SIG_FIELDS, size, me);
    if (*msg)
        FATAL("%s: COMM_CHECK_ARGS: the ranks are not in the same collective: %s; %s", fn, msg,
              MISMATCH_ADVICE);
    const char *count_name = CALLS[sig[SIG_CALL]].count;
    describe_field(msg, sizeof msg, "dtype", SIG_DTYPE, all + SIG_DTYPE, SIG_FIELDS, size, me);
    describe_field(msg, sizeof msg, count_name ? count_name : "count", SIG_COUNT, all + SIG_COUNT,
                   SIG_FIELDS, size, me);
    describe_field(msg, sizeof msg, "op", SIG_OP, all + SIG_OP, SIG_FIELDS, size, me);
    describe_field(msg, sizeof msg, "root", SIG_ROOT, all + SIG_ROOT, SIG_FIELDS, size, me);
    int counts_differ = 0;
    for (int r = 0; r < size; r++)
        counts_differ |= all[(size_t)r * SIG_FIELDS + SIG_COUNTS] != sig[SIG_COUNTS];
    if (counts_differ && counts) {
        /* Same call on every rank, so every rank has counts: find the first entry that differs. */
        int64_t *table = malloc((size_t)size * (size_t)size * sizeof *table);
        CHECK(table != NULL, "%s: out of memory explaining an argument mismatch", fn);
        for (int r = 0; r < size; r++) table[(size_t)me * (size_t)size + (size_t)r] = (int64_t)counts[r];
        MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, size, MPI_INT64_T, table, size, MPI_INT64_T, comm->mpi));
        for (int i = 0; i < size; i++) {
            char name[32];
            snprintf(name, sizeof name, "counts[%d]", i);
            size_t before = strlen(msg);
            describe_field(msg, sizeof msg, name, SIG_COUNTS, table + i, (size_t)size, size, me);
            if (strlen(msg) != before) break;
        }
        free(table);
    }
    free(all);
    FATAL("%s: COMM_CHECK_ARGS: the ranks passed different arguments to this collective: %s; %s", fn, msg,
          MISMATCH_ADVICE);
}

/* With COMM_CHECK_ARGS on: returns only if every rank of comm passed the same arguments to this
 * call (-1 for a count, dtype, op or root and NULL for counts where the call takes none).
 * One MPI_Allreduce(MIN) of the signature and its negation gives each field's minimum and
 * maximum in a single round trip; they are equal on every field exactly when all ranks agree. */
static void agree_on_args(const comm_t *comm, const char *fn, int64_t count, int dtype, int op, int root,
                          const size_t *counts) {
    if (!comm->check_args || comm->size == 1) return;
    int64_t hash = counts ? counts_hash(counts, comm->size) : -1;
    int64_t sig[SIG_FIELDS] = {call_id(fn), dtype, count, op, root, hash};
    int64_t both[2 * SIG_FIELDS];
    for (int k = 0; k < SIG_FIELDS; k++) {
        both[k] = sig[k];
        both[SIG_FIELDS + k] = -sig[k];
    }
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, both, 2 * SIG_FIELDS, MPI_INT64_T, MPI_MIN, comm->mpi));
    for (int k = 0; k < SIG_FIELDS; k++)
        if (both[k] != -both[SIG_FIELDS + k]) explain_mismatch(comm, fn, sig, counts);
}

/* --------------------------------------------------------------- NCCL glue */

#ifdef COURSE_HAVE_NCCL
static ncclDataType_t nccl_dtype(comm_dtype_t dtype) {
    switch (dtype) {
    case COMM_FLOAT32: return ncclFloat32;
    case COMM_FLOAT64: return ncclFloat64;
    case COMM_INT32: return ncclInt32;
    case COMM_INT64: return ncclInt64;
    case COMM_BF16: return COMM_NCCL_BFLOAT16;
    case COMM_FP16: return ncclFloat16;
    default: FATAL("invalid comm_dtype_t %d", (int)dtype);
    }
}

static ncclRedOp_t nccl_op(comm_op_t op) {
    switch (op) {
    case COMM_SUM: return ncclSum;
    case COMM_PROD: return ncclProd;
    case COMM_MAX: return ncclMax;
    case COMM_MIN: return ncclMin;
    case COMM_AVG: return ncclAvg;
    default: FATAL("invalid comm_op_t %d", (int)op);
    }
}

/* ncclInProgress (NCCL 2.14+) is the state of work still being set up, not a failure. */
static int nccl_failed(ncclResult_t r) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 14, 0)
    if (r == ncclInProgress) return 0;
#endif
    return r != ncclSuccess;
}

/* What NCCL said about its last failure (NCCL 2.13+), or "". */
static const char *nccl_last_error(void) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
    const char *s = ncclGetLastError(NULL);
    return s ? s : "";
#else
    return "";
#endif
}

/* A peer that fails inside NCCL (a network error, a process that died before any MPI_Abort
 * reached this rank) leaves this rank's kernels waiting for data that will never come:
 * cudaStreamSynchronize would wait forever, so the job would hang. NCCL reports such failures
 * only through ncclCommGetAsyncError, and only ncclCommAbort stops the kernels, so a wait
 * polls the GPU work and NCCL's error state in turn, as NCCL's guide prescribes (error
 * handling and communicator abort). Then the job ends through FATAL, whose abort hook calls
 * MPI_Abort, naming this rank and the error.
 *
 * Between polls: sched_yield for the first NCCL_POLL_YIELDS polls, then NCCL_POLL_SLEEP_NS of
 * sleep. A bare spin would hold a CPU core for the whole wait, and the rank's data loader
 * threads need that core while the GPU communicates. A yield costs under a microsecond and
 * hands the core to any thread that is ready, so the first thousand polls (a millisecond or
 * two, as long as most blocking collectives of a training step take) add about as little
 * latency as cudaStreamSynchronize, which itself spins or yields by default. A wait that lasts
 * longer is a large bucket or a slow peer; sleeping 20 us (70 to 80 us with Linux's default
 * 50 us timer slack) then frees the core and adds at most that to a call that has already
 * taken milliseconds. Longer sleeps would add their length to every such call, and to the
 * time before a failure is noticed. */
enum { NCCL_POLL_YIELDS = 1000 };
static const long NCCL_POLL_SLEEP_NS = 20 * 1000;

/* Wait for the work before event (or, when event is NULL, for all of comm's stream), for fn.
 * On an NCCL error: abort comm's NCCL communicator, then end the job. Never hangs on a
 * failed peer. */
static void nccl_wait(comm_t *comm, cudaEvent_t event, const char *fn) {
    for (long polls = 0;; polls++) {
        cudaError_t st = event ? cudaEventQuery(event) : cudaStreamQuery(comm->stream);
        if (st == cudaSuccess) return;
        if (st != cudaErrorNotReady)
            FATAL("%s: %s failed on rank %d of %d while waiting for NCCL: %s (%s)", fn,
                  event ? "cudaEventQuery" : "cudaStreamQuery", comm->rank, comm->size,
                  cudaGetErrorName(st), cudaGetErrorString(st));
        ncclResult_t async = ncclSuccess;
        ncclResult_t got = ncclCommGetAsyncError(comm->nccl, &async);
        if (got != ncclSuccess) async = got; /* cannot even ask: treat as failed */
        if (nccl_failed(async)) {
            /* The detail first: it describes this failure, and the abort may add to it. */
            char detail[512];
            snprintf(detail, sizeof detail, "%s", nccl_last_error());
            ncclResult_t aborted = ncclCommAbort(comm->nccl);
            FATAL("%s: NCCL failed on rank %d of %d while this rank waited for it: %s (ncclResult_t %d)%s%s; "
                  "the NCCL communicator was aborted (ncclCommAbort: %s), ending the job (where a peer "
                  "failed first, its own error is earlier in the job's output)",
                  fn, comm->rank, comm->size, ncclGetErrorString(async), (int)async, *detail ? ": " : "",
                  detail, aborted == ncclSuccess ? "done" : ncclGetErrorString(aborted));
        }
        if (polls < NCCL_POLL_YIELDS) {
            sched_yield();
        } else {
            struct timespec ts = {0, NCCL_POLL_SLEEP_NS};
            nanosleep(&ts, NULL);
        }
    }
}

/* Blocking calls wait for the stream; non-blocking ones record an event to wait on later. */
static comm_request_t nccl_done(comm_t *comm, int nonblocking, const char *fn) {
    if (!nonblocking) {
        nccl_wait(comm, NULL, fn);
        return COMM_REQUEST_NULL;
    }
    comm_request_t req = request_new(COMM_BACKEND_NCCL);
    CUDA_CHECK(cudaEventCreateWithFlags(&req->event, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventRecord(req->event, comm->stream));
    req->comm = comm;
    req->fn = fn;
    return req;
}

/* NCCL refuses two ranks of one communicator on the same GPU ("duplicate GPU"), deep in
 * ncclCommInitRank and with a terse message. Compare the devices' UUIDs across the ranks
 * of this node first and stop with one that says what to do. */
static void check_one_gpu_per_rank(const comm_t *comm, MPI_Comm node, int device) {
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    int local_rank = 0, local_size = 1;
    MPI_CHECK(MPI_Comm_rank(node, &local_rank));
    MPI_CHECK(MPI_Comm_size(node, &local_size));
    unsigned char *all = malloc((size_t)local_size * 16);
    int *ranks = malloc((size_t)local_size * sizeof(int));
    CHECK(all && ranks, "comm: out of host memory");
    MPI_CHECK(MPI_Allgather(prop.uuid.bytes, 16, MPI_BYTE, all, 16, MPI_BYTE, node));
    MPI_CHECK(MPI_Allgather(&comm->rank, 1, MPI_INT, ranks, 1, MPI_INT, node));
    for (int i = 0; i < local_size; i++)
        if (i != local_rank && !memcmp(all + 16 * i, prop.uuid.bytes, 16))
            FATAL("ranks %d and %d share GPU %d (%s) on this node; the NCCL backend needs one GPU per "
                  "rank: start at most as many ranks per node as it has GPUs, or use COMM_BACKEND_MPI",
                  comm->rank < ranks[i] ? comm->rank : ranks[i], comm->rank < ranks[i] ? ranks[i] : comm->rank,
                  device, prop.name);
    free(all);
    free(ranks);
}

/* Make the NCCL communicator for comm's MPI group; device < 0 means "pick by node-local rank". */
static void nccl_setup(comm_t *comm, int device) {
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_split_type(comm->mpi, MPI_COMM_TYPE_SHARED, comm->rank, MPI_INFO_NULL, &node));
    if (device < 0) {
        int local_rank = 0, local_size = 1, ndev = 0;
        MPI_CHECK(MPI_Comm_rank(node, &local_rank));
        MPI_CHECK(MPI_Comm_size(node, &local_size));
        cudaError_t err = cudaGetDeviceCount(&ndev);
        if (err != cudaSuccess || ndev == 0)
            FATAL("no CUDA device visible to rank %d; the NCCL backend needs one GPU per rank "
                  "(cudaGetDeviceCount: %s); use COMM_BACKEND_MPI on a machine without GPUs",
                  comm->rank, err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        /* Several GPUs per node: rank i on the node takes GPU i. One visible GPU per rank
         * (CUDA_VISIBLE_DEVICES set per rank by the launcher) also works: everyone takes 0.
         * More ranks than GPUs: check_one_gpu_per_rank() below stops the job and says so. */
        device = local_rank % ndev;
    }
    check_one_gpu_per_rank(comm, node, device);
    MPI_CHECK(MPI_Comm_free(&node));
    comm->device = device;
    CUDA_CHECK(cudaSetDevice(device));
    unsigned char id_bytes[COMM_NCCL_ID_BYTES];
    comm_nccl_bootstrap_id(comm, id_bytes);
    ncclUniqueId id;
    memcpy(&id, id_bytes, sizeof id);
    NCCL_CHECK(ncclCommInitRank(&comm->nccl, comm->size, id, comm->rank));
    CUDA_CHECK(cudaStreamCreateWithFlags(&comm->stream, cudaStreamNonBlocking));
    comm->owns_stream = 1;
}

static void nccl_teardown(comm_t *comm, const char *fn) {
    /* ncclCommDestroy waits for the communicator's work too, blind to a failed peer. */
    nccl_wait(comm, NULL, fn);
    NCCL_CHECK(ncclCommDestroy(comm->nccl));
    if (comm->owns_stream) CUDA_CHECK(cudaStreamDestroy(comm->stream));
}
#endif

static void no_nccl(const char *fn) __attribute__((noreturn));
static void no_nccl(const char *fn) {
    FATAL("%s: this build has no NCCL (COURSE_HAVE_NCCL was not defined, so nccl.h or the CUDA "
          "toolkit was not found); rebuild on a machine with both, or use COMM_BACKEND_MPI",
          fn);
}

/* ------------------------------------------------------------ the watchdog */

/* COMM_TIMEOUT=S: a rank that has waited S seconds in one communicator call ends the job, saying
 * which call it was in. Neither MPI nor NCCL can tell a peer that is slow from one that will
 * never come (it skipped the call, called another one, sends with no matching receive), so
 * without a limit that mistake is a job that hangs without a word. The watch is a thread of its
 * own that looks at the clock a few times a second: the waiting thread is inside MPI or NCCL and
 * cannot look itself. The waiting thread only records, under a mutex, which call it entered and
 * when; the watchdog never calls MPI (the ranks run MPI_THREAD_SINGLE), so it ends the process
 * with _exit() and mpirun, seeing a rank exit non-zero, ends the others. */
static struct {
    pthread_mutex_t mu;
    double timeout_s;   /* 0: off */
    int depth;          /* > 0 while inside a watched call (the public calls nest: waitall, wait) */
    double since;       /* when the outermost one started, CLOCK_MONOTONIC seconds */
    char what[320];     /* which call, for the message */
} watch = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, ""};

/* After the first report, ranks that waited as long report in this time too before the job
 * ends: the message of each waiting rank (which call, which collective by number) is how a
 * student sees where the ranks' sequences of calls parted. */
static const double WATCH_GRACE_S = 1.0;

static double monotonic_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *watchdog(void *arg) {
    (void)arg;
    double limit = watch.timeout_s, poll = limit / 10 < 0.1 ? limit / 10 : 0.1;
    if (poll < 0.001) poll = 0.001;
    struct timespec nap = {(time_t)poll, (long)((poll - (double)(time_t)poll) * 1e9)};
    for (;;) {
        nanosleep(&nap, NULL);
        pthread_mutex_lock(&watch.mu);
        double waited = watch.depth > 0 ? monotonic_s() - watch.since : 0;
        char what[sizeof watch.what];
        snprintf(what, sizeof what, "%s", watch.what);
        pthread_mutex_unlock(&watch.mu);
        if (waited < limit) continue;
        char prefix[64];
        log_prefix(prefix, (int)sizeof prefix);
        fflush(stdout);
        fprintf(stderr,
                "%scomm: COMM_TIMEOUT: %s has waited %.1f s for the other ranks (COMM_TIMEOUT=%g). Some rank "
                "has not made the matching call: it skipped it, made another call first, or is still "
                "computing. Every rank still waiting reports its call like this; compare them. If a rank "
                "can rightly take this long, raise COMM_TIMEOUT (0 waits forever)\n",
                prefix, what, waited, limit);
        nap.tv_sec = (time_t)WATCH_GRACE_S;
        nap.tv_nsec = (long)((WATCH_GRACE_S - (double)(time_t)WATCH_GRACE_S) * 1e9);
        nanosleep(&nap, NULL);
        fprintf(stderr, "%scomm: ending the whole job (exit code 1)\n", prefix);
        fflush(stdout);
        fflush(stderr);
        _exit(1);
    }
    return NULL;
}

/* Read COMM_TIMEOUT and start the watchdog if it is set. Once per process. */
static void watch_start(void) {
    static int started = 0;
    const char *v = getenv("COMM_TIMEOUT");
    if (started || !v || !*v) return;
    char *end = NULL;
    double s = strtod(v, &end);
    CHECK(end != v && *end == '\0' && s >= 0 && s <= 1e6,
          "COMM_TIMEOUT is '%s'; set it to the seconds a rank may wait in one communicator call before "
          "the job is ended with a message naming the call (e.g. 60), or to 0 (or leave it unset) to "
          "wait forever", v);
    if (s == 0) return;
    watch.timeout_s = s;
    pthread_t t;
    int rc = pthread_create(&t, NULL, watchdog, NULL);
    CHECK(rc == 0, "COMM_TIMEOUT: could not start the thread that watches the waits (pthread_create: %s); "
          "unset COMM_TIMEOUT to run without it", strerror(rc));
    pthread_detach(t);
    started = 1;
}

/* Enter a watched call. what is printf-formatted; it is formatted only when the watch is on. */
static void watch_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void watch_begin(const char *fmt, ...) {
    if (watch.timeout_s == 0) return;
    pthread_mutex_lock(&watch.mu);
    if (watch.depth++ == 0) {
        watch.since = monotonic_s();
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(watch.what, sizeof watch.what, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&watch.mu);
}

static void watch_end(void) {
    if (watch.timeout_s == 0) return;
    pthread_mutex_lock(&watch.mu);
    watch.depth--;
    pthread_mutex_unlock(&watch.mu);
}

/* A collective on comm: numbered, so that the ranks' reports show where their sequences part. */
static void watch_collective(comm_t *comm, const char *fn) {
    if (!comm) { /* check_comm() refuses it next */
        watch_begin("%s", fn);
        return;
    }
    comm->collectives++;
    watch_begin("%s (collective number %ld on this rank's communicator of %d ranks, where it is rank %d)",
                fn, comm->collectives, comm->size, comm->rank);
}

/* A point-to-point call on comm: dir is "to" or "from". */
static void watch_p2p(const comm_t *comm, const char *fn, const char *dir, int peer) {
    if (!comm) {
        watch_begin("%s", fn);
        return;
    }
    watch_begin("%s %s rank %d (on a communicator of %d ranks, where this rank is %d)", fn, dir, peer,
                comm->size, comm->rank);
}

/* ------------------------------------------------------------------ setup */

static void comm_abort_hook(int code) {
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized) return;
    /* Say so before MPI_Abort: the launcher's own report of the abort is not always printed
     * (Open MPI sometimes loses it while it kills the job), and this line is how a log and
     * test_comm_abort tell that the job was ended on purpose. */
    char prefix[64];
    log_prefix(prefix, (int)sizeof prefix);
    fprintf(stderr, "%scomm: ending the whole job with MPI_Abort (exit code %d)\n", prefix, code);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
}

void comm_init(int *argc, char ***argv) {
    if (comm_initialized) return;
    int inited = 0;
    MPI_CHECK(MPI_Initialized(&inited));
    if (!inited) {
        MPI_CHECK(MPI_Init(argc, argv));
        comm_started_mpi = 1;
    }
    /* Errors come back as codes so MPI_CHECK can name the call; it then aborts the job. */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rank = 0, size = 1;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    log_set_rank(rank, size);
    course_set_abort_hook(comm_abort_hook);

    /* Read once: the communicators take it when they are made (comm_world, comm_split). */
    const char *check = getenv("COMM_CHECK_ARGS");
    CHECK(!check || !*check || !strcmp(check, "0") || !strcmp(check, "1"),
          "COMM_CHECK_ARGS is '%s'; set it to 1 to check that every rank passes the same arguments to "
          "each collective, or to 0 (or leave it unset) for no check", check);
    check_args_env = check && !strcmp(check, "1");
    watch_start();

    /* By op: SUM, PROD, MAX, MIN. All commute: MPI may combine the ranks in any order. */
    MPI_User_function *fns[COMM_DTYPE_COUNT][4] = {
        [COMM_FLOAT32] = {NULL, NULL, f32_max, f32_min},
        [COMM_FLOAT64] = {NULL, NULL, f64_max, f64_min},
        [COMM_BF16] = {bf16_sum, bf16_prod, bf16_max, bf16_min},
        [COMM_FP16] = {fp16_sum, fp16_prod, fp16_max, fp16_min},
    };
    for (int t = 0; t < COMM_DTYPE_COUNT; t++)
        for (int k = 0; k < 4; k++) {
            user_ops[t][k] = MPI_OP_NULL;
            if (fns[t][k]) MPI_CHECK(MPI_Op_create(fns[t][k], /*commute=*/1, &user_ops[t][k]));
        }
    comm_initialized = 1;
}

static void comm_destroy(comm_t *comm, const char *fn) {
#ifdef COURSE_HAVE_NCCL
    if (comm->backend == COMM_BACKEND_NCCL) nccl_teardown(comm, fn);
#else
    (void)fn;
#endif
    MPI_CHECK(MPI_Comm_free(&comm->mpi));
    free(comm);
}

void comm_finalize(void) {
    if (!comm_initialized) return;
    watch_begin("comm_finalize (which every rank must call)");
    for (int b = 0; b < 2; b++) {
        if (world_comms[b]) comm_destroy(world_comms[b], "comm_finalize");
        world_comms[b] = NULL;
    }
    for (int t = 0; t < COMM_DTYPE_COUNT; t++)
        for (int k = 0; k < 4; k++)
            if (user_ops[t][k] != MPI_OP_NULL) MPI_CHECK(MPI_Op_free(&user_ops[t][k]));
    comm_initialized = 0;
    course_set_abort_hook(NULL);
    if (comm_started_mpi) MPI_CHECK(MPI_Finalize());
    comm_started_mpi = 0;
    watch_end();
}

static comm_t *comm_new(comm_backend_t backend, MPI_Comm mpi) {
    comm_t *comm = (comm_t *)calloc(1, sizeof *comm);
    CHECK(comm != NULL, "out of memory allocating a communicator");
    comm->backend = backend;
    comm->mpi = mpi;
    MPI_CHECK(MPI_Comm_rank(mpi, &comm->rank));
    MPI_CHECK(MPI_Comm_size(mpi, &comm->size));
    return comm;
}

/* Whether the new world communicator checks arguments: yes if COMM_CHECK_ARGS=1 on any rank.
 * The ranks must agree on this above all: a rank that checks makes one MPI call more per
 * collective, which a rank that does not would pair with its next collective. A launcher that
 * passes the environment to some ranks only (another node, without mpirun -x) would cause
 * exactly that, so every rank takes the check if one has it, and rank 0 says so. */
static int agree_on_check_flag(const comm_t *comm) {
    static int announced = 0;
    int mine[2] = {check_args_env, -check_args_env};
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, mine, 2, MPI_INT, MPI_MIN, comm->mpi));
    int any = -mine[1], all = mine[0];
    if (any && !announced && comm->rank == 0) {
        if (!all)
            log_warn("comm: COMM_CHECK_ARGS=1 reached only some ranks (with Open MPI's mpirun, pass "
                     "-x COMM_CHECK_ARGS=1 to give it to every node); checking on all of them");
        log_info("comm: COMM_CHECK_ARGS=1: every collective first checks that all ranks passed the same "
                 "arguments (one more MPI_Allreduce per call: unset it to measure speed)");
        announced = 1;
    }
    return any;
}

comm_t *comm_world(comm_backend_t backend) {
    CHECK(comm_initialized, "comm_world: call comm_init() first");
    CHECK(backend == COMM_BACKEND_MPI || backend == COMM_BACKEND_NCCL,
          "comm_world: invalid comm_backend_t %d", (int)backend);
    if (backend == COMM_BACKEND_NCCL && !comm_nccl_compiled()) no_nccl("comm_world");
    if (world_comms[backend]) return world_comms[backend];
    watch_begin("comm_world (making the world communicator, which every rank must do)");
    /* A private copy of MPI_COMM_WORLD: the library's messages never match the program's own. */
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    comm_t *comm = comm_new(backend, dup);
    comm->is_world = 1;
    comm->check_args = agree_on_check_flag(comm);
#ifdef COURSE_HAVE_NCCL
    if (backend == COMM_BACKEND_NCCL) nccl_setup(comm, -1);
#endif
    world_comms[backend] = comm;
    watch_end();
    return comm;
}

comm_t *comm_split(comm_t *parent, int color, int key) {
    watch_collective(parent, "comm_split");
    check_comm(parent, "comm_split");
    CHECK(color >= 0 || color == COMM_SPLIT_NONE, "comm_split: color %d must be >= 0 or COMM_SPLIT_NONE",
          color);
    agree_on_args(parent, "comm_split", -1, -1, -1, -1, NULL);
    MPI_Comm sub;
    MPI_CHECK(MPI_Comm_split(parent->mpi, color == COMM_SPLIT_NONE ? MPI_UNDEFINED : color, key, &sub));
    if (sub == MPI_COMM_NULL) {
        watch_end();
        return NULL;
    }
    comm_t *comm = comm_new(parent->backend, sub);
    comm->check_args = parent->check_args; /* the same on every rank of parent, so of comm */
#ifdef COURSE_HAVE_NCCL
    /* A fresh id per group rather than ncclCommSplit: the same bootstrap as the world,
     * and it works on every NCCL version. */
    if (parent->backend == COMM_BACKEND_NCCL) nccl_setup(comm, parent->device);
#endif
    watch_end();
    return comm;
}

void comm_free(comm_t *comm) {
    if (comm == NULL || comm->is_world) return;
    watch_begin("comm_free (of a communicator of %d ranks, which each of them must free)", comm->size);
    comm_destroy(comm, "comm_free");
    watch_end();
}

int comm_rank(const comm_t *comm) {
    check_comm(comm, "comm_rank");
    return comm->rank;
}

int comm_size(const comm_t *comm) {
    check_comm(comm, "comm_size");
    return comm->size;
}

comm_backend_t comm_backend(const comm_t *comm) {
    check_comm(comm, "comm_backend");
    return comm->backend;
}

int comm_checks_args(const comm_t *comm) {
    check_comm(comm, "comm_checks_args");
    return comm->check_args;
}

int comm_nccl_compiled(void) {
#ifdef COURSE_HAVE_NCCL
    return 1;
#else
    return 0;
#endif
}

void comm_set_stream(comm_t *comm, void *stream) {
    check_comm(comm, "comm_set_stream");
#ifdef COURSE_HAVE_NCCL
    if (comm->backend != COMM_BACKEND_NCCL) return;
    if (comm->owns_stream) {
        nccl_wait(comm, NULL, "comm_set_stream");
        CUDA_CHECK(cudaStreamDestroy(comm->stream));
    }
    comm->stream = (cudaStream_t)stream;
    comm->owns_stream = 0;
#else
    (void)stream;
#endif
}

void *comm_stream(const comm_t *comm) {
    check_comm(comm, "comm_stream");
#ifdef COURSE_HAVE_NCCL
    if (comm->backend == COMM_BACKEND_NCCL) return (void *)comm->stream;
#endif
    return NULL;
}

void comm_shard_range(size_t total, int rank, int size, size_t *offset, size_t *count) {
    CHECK(size >= 1 && rank >= 0 && rank < size,
          "comm_shard_range: rank %d of size %d is not a rank of the communicator; pass a size of 1 or more "
          "and a rank in [0, size), as comm_rank() and comm_size() give them", rank, size);
    CHECK(offset != NULL && count != NULL, "comm_shard_range: NULL output pointer");
    size_t base = total / (size_t)size, extra = total % (size_t)size, r = (size_t)rank;
    *count = base + (r < extra ? 1 : 0);
    *offset = r * base + (r < extra ? r : extra);
}

void comm_nccl_bootstrap_id(const comm_t *comm, void *id) {
    if (comm) watch_begin("comm_nccl_bootstrap_id (a broadcast from rank 0 of %d ranks)", comm->size);
    else watch_begin("comm_nccl_bootstrap_id");
    check_comm(comm, "comm_nccl_bootstrap_id");
    CHECK(id != NULL, "comm_nccl_bootstrap_id: NULL id buffer");
#ifdef COURSE_HAVE_NCCL
    if (comm->rank == 0) {
        ncclUniqueId uid;
        NCCL_CHECK(ncclGetUniqueId(&uid));
        memcpy(id, &uid, sizeof uid);
    }
    MPI_CHECK(MPI_Bcast(id, COMM_NCCL_ID_BYTES, MPI_BYTE, 0, comm->mpi));
    watch_end();
#else
    no_nccl("comm_nccl_bootstrap_id");
#endif
}

/* ---------------------------------------------------------- point-to-point */

/* All messages use one tag: MPI keeps messages between a pair in order, as NCCL does. */
enum { COMM_TAG = 0 };

static comm_request_t do_send(comm_t *comm, const void *buf, size_t count, comm_dtype_t dtype,
                              int peer, int nonblocking, const char *fn) {
    check_args(comm, fn, count, buf, buf, dtype);
    check_peer(comm, fn, peer, "peer");
    finish_t f = {0};
    if (comm->backend == COMM_BACKEND_MPI) {
        MPI_Request r = MPI_REQUEST_NULL;
        int n = mpi_count(fn, "count", count);
        if (nonblocking)
            MPI_CHECK(MPI_Isend(buf, n, mpi_dtype(dtype), peer, COMM_TAG, comm->mpi, &r));
        else
            MPI_CHECK(MPI_Send(buf, n, mpi_dtype(dtype), peer, COMM_TAG, comm->mpi));
        return mpi_done(nonblocking, r, &f, fn);
    }
#ifdef COURSE_HAVE_NCCL
    NCCL_CHECK(ncclSend(buf, count, nccl_dtype(dtype), peer, comm->nccl, comm->stream));
    return nccl_done(comm, nonblocking, fn);
#else
    no_nccl(fn);
#endif
}

static comm_request_t do_recv(comm_t *comm, void *buf, size_t count, comm_dtype_t dtype, int peer,
                              int nonblocking, const char *fn) {
    check_args(comm, fn, count, buf, buf, dtype);
    check_peer(comm, fn, peer, "peer");
    finish_t f = {0};
    if (comm->backend == COMM_BACKEND_MPI) {
        MPI_Request r = MPI_REQUEST_NULL;
        int n = mpi_count(fn, "count", count);
        if (nonblocking) {
            MPI_CHECK(MPI_Irecv(buf, n, mpi_dtype(dtype), peer, COMM_TAG, comm->mpi, &r));
            comm_request_t req = mpi_done(1, r, &f, fn);
            req->recv_count = count;
            req->recv_dtype = dtype;
            req->recv_peer = peer;
            return req;
        }
        MPI_Status st;
        check_received(MPI_Recv(buf, n, mpi_dtype(dtype), peer, COMM_TAG, comm->mpi, &st), &st, count, dtype,
                       peer, fn);
        return mpi_done(0, r, &f, fn);
    }
#ifdef COURSE_HAVE_NCCL
    NCCL_CHECK(ncclRecv(buf, count, nccl_dtype(dtype), peer, comm->nccl, comm->stream));
    return nccl_done(comm, nonblocking, fn);
#else
    no_nccl(fn);
#endif
}

/* The non-blocking calls below are not watched: they return without waiting for anyone. */
void comm_send(comm_t *comm, const void *buf, size_t count, comm_dtype_t dtype, int peer) {
    watch_p2p(comm, "comm_send", "to", peer);
    do_send(comm, buf, count, dtype, peer, 0, "comm_send");
    watch_end();
}

void comm_recv(comm_t *comm, void *buf, size_t count, comm_dtype_t dtype, int peer) {
    watch_p2p(comm, "comm_recv", "from", peer);
    do_recv(comm, buf, count, dtype, peer, 0, "comm_recv");
    watch_end();
}

comm_request_t comm_isend(comm_t *comm, const void *buf, size_t count, comm_dtype_t dtype, int peer) {
    return do_send(comm, buf, count, dtype, peer, 1, "comm_isend");
}

comm_request_t comm_irecv(comm_t *comm, void *buf, size_t count, comm_dtype_t dtype, int peer) {
    return do_recv(comm, buf, count, dtype, peer, 1, "comm_irecv");
}

static void do_sendrecv(comm_t *comm, const void *sendbuf, size_t sendcount, int dest, void *recvbuf,
                        size_t recvcount, int source, comm_dtype_t dtype) {
    const char *fn = "comm_sendrecv";
    check_args(comm, fn, sendcount, sendbuf, sendbuf, dtype);
    check_args(comm, fn, recvcount, recvbuf, recvbuf, dtype);
    check_peer(comm, fn, dest, "dest");
    check_peer(comm, fn, source, "source");
    CHECK(!overlaps(sendbuf, sendcount, recvbuf, recvcount, dtype),
          "%s: sendbuf and recvbuf overlap; the data received would overwrite the data being sent, so "
          "pass buffers that do not overlap", fn);
    if (comm->backend == COMM_BACKEND_MPI) {
        int ns = mpi_count(fn, "sendcount", sendcount), nr = mpi_count(fn, "recvcount", recvcount);
        MPI_Status st;
        check_received(MPI_Sendrecv(sendbuf, ns, mpi_dtype(dtype), dest, COMM_TAG, recvbuf, nr, mpi_dtype(dtype),
                                    source, COMM_TAG, comm->mpi, &st),
                       &st, recvcount, dtype, source, fn);
        return;
    }
#ifdef COURSE_HAVE_NCCL
    /* One group, so the send and the receive progress together (no ring deadlock). */
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclSend(sendbuf, sendcount, nccl_dtype(dtype), dest, comm->nccl, comm->stream));
    NCCL_CHECK(ncclRecv(recvbuf, recvcount, nccl_dtype(dtype), source, comm->nccl, comm->stream));
    NCCL_CHECK(ncclGroupEnd());
    nccl_done(comm, 0, fn);
#else
    no_nccl(fn);
#endif
}

void comm_sendrecv(comm_t *comm, const void *sendbuf, size_t sendcount, int dest, void *recvbuf,
                   size_t recvcount, int source, comm_dtype_t dtype) {
    if (comm)
        watch_begin("comm_sendrecv to rank %d and from rank %d (on a communicator of %d ranks, where this "
                    "rank is %d)", dest, source, comm->size, comm->rank);
    else
        watch_begin("comm_sendrecv");
    do_sendrecv(comm, sendbuf, sendcount, dest, recvbuf, recvcount, source, dtype);
    watch_end();
}

/* ------------------------------------------------------------ collectives */

static comm_request_t do_allreduce(comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                                   comm_dtype_t dtype, comm_op_t op, int nonblocking,
                                   const char *fn) {
    check_args(comm, fn, count, sendbuf, recvbuf, dtype);
    check_op(fn, op);
    CHECK(sendbuf == recvbuf || !overlaps(sendbuf, count, recvbuf, count, dtype),
          "%s: sendbuf and recvbuf overlap but are not the same pointer; pass one pointer as both for "
          "in place, or buffers that do not overlap", fn);
    agree_on_args(comm, fn, (int64_t)count, dtype, op, -1, NULL);
    if (comm->backend == COMM_BACKEND_MPI) {
        finish_t f = {0};
        set_avg(&f, comm, op, recvbuf, count, dtype);
        const void *src = sendbuf == recvbuf ? MPI_IN_PLACE : sendbuf;
        MPI_Request r = MPI_REQUEST_NULL;
        int n = mpi_count(fn, "count", count);
        if (nonblocking)
            MPI_CHECK(MPI_Iallreduce(src, recvbuf, n, mpi_dtype(dtype), mpi_op(dtype, op), comm->mpi, &r));
        else
            MPI_CHECK(MPI_Allreduce(src, recvbuf, n, mpi_dtype(dtype), mpi_op(dtype, op), comm->mpi));
        return mpi_done(nonblocking, r, &f, fn);
    }
#ifdef COURSE_HAVE_NCCL
    NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, count, nccl_dtype(dtype), nccl_op(op), comm->nccl,
                             comm->stream));
    return nccl_done(comm, nonblocking, fn);
#else
    no_nccl(fn);
#endif
}

void comm_allreduce(comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                    comm_dtype_t dtype, comm_op_t op) {
    watch_collective(comm, "comm_allreduce");
    do_allreduce(comm, sendbuf, recvbuf, count, dtype, op, 0, "comm_allreduce");
    watch_end();
}

comm_request_t comm_iallreduce(comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                               comm_dtype_t dtype, comm_op_t op) {
    watch_collective(comm, "comm_iallreduce");
    comm_request_t req = do_allreduce(comm, sendbuf, recvbuf, count, dtype, op, 1, "comm_iallreduce");
    watch_end();
    return req;
}

static comm_request_t do_reduce_scatter(comm_t *comm, const void *sendbuf, void *recvbuf,
                                        size_t recvcount, comm_dtype_t dtype, comm_op_t op,
                                        int nonblocking, const char *fn) {
    check_args(comm, fn, recvcount, sendbuf, recvbuf, dtype);
    check_op(fn, op);
    size_t total = check_total(comm, fn, "recvcount", recvcount, "sendbuf");
    check_layout(comm, fn, "recvbuf", recvbuf, recvcount, "sendbuf", sendbuf, total,
                 (size_t)comm->rank * recvcount, "rank * recvcount", dtype);
    agree_on_args(comm, fn, (int64_t)recvcount, dtype, op, -1, NULL);
    if (comm->backend == COMM_BACKEND_MPI) {
        finish_t f = {0};
        set_avg(&f, comm, op, recvbuf, recvcount, dtype);
        const void *src = sendbuf;
        void *dst = recvbuf;
        if (recvcount > 0 && recvbuf == at(sendbuf, (size_t)comm->rank * recvcount, dtype)) {
            /* NCCL's in-place layout; MPI's in-place form leaves the block at the start of the
             * buffer, so move it into place afterwards. */
            src = MPI_IN_PLACE;
            dst = (void *)sendbuf;
            f.move_dst = recvbuf;
            f.move_src = sendbuf;
            f.move_bytes = recvcount * comm_dtype_size(dtype);
        }
        MPI_Request r = MPI_REQUEST_NULL;
        int n = mpi_count(fn, "recvcount", recvcount);
        if (nonblocking)
            MPI_CHECK(MPI_Ireduce_scatter_block(src, dst, n, mpi_dtype(dtype), mpi_op(dtype, op), comm->mpi, &r));
        else
            MPI_CHECK(MPI_Reduce_scatter_block(src, dst, n, mpi_dtype(dtype), mpi_op(dtype, op), comm->mpi));
        return mpi_done(nonblocking, r, &f, fn);
    }
#ifdef COURSE_HAVE_NCCL
    NCCL_CHECK(ncclReduceScatter(sendbuf, recvbuf, recvcount, nccl_dtype(dtype), nccl_op(op),
                                 comm->nccl, comm->stream));
    return nccl_done(comm, nonblocking, fn);
#else
    no_nccl(fn);
#endif
}

void comm_reduce_scatter(comm_t *comm, const void *sendbuf, void *recvbuf, size_t recvcount,
                         comm_dtype_t dtype, comm_op_t op) {
    watch_collective(comm, "comm_reduce_scatter");
    do_reduce_scatter(comm, sendbuf, recvbuf, recvcount, dtype, op, 0, "comm_reduce_scatter");
    watch_end();
}

comm_request_t comm_ireduce_scatter(comm_t *comm, const void *sendbuf, void *recvbuf,
                                    size_t recvcount, comm_dtype_t dtype, comm_op_t op) {
    watch_collective(comm, "comm_ireduce_scatter");
    comm_request_t req = do_reduce_scatter(comm, sendbuf, recvbuf, recvcount, dtype, op, 1, "comm_ireduce_scatter");
    watch_end();
    return req;
}

static comm_request_t do_allgather(comm_t *comm, const void *sendbuf, void *recvbuf,
                                   size_t sendcount, comm_dtype_t dtype, int nonblocking,
                                   const char *fn) {
    check_args(comm, fn, sendcount, sendbuf, recvbuf, dtype);
    size_t total = check_total(comm, fn, "sendcount", sendcount, "recvbuf");
    check_layout(comm, fn, "sendbuf", sendbuf, sendcount, "recvbuf", recvbuf, total,
                 (size_t)comm->rank * sendcount, "rank * sendcount", dtype);
    agree_on_args(comm, fn, (int64_t)sendcount, dtype, -1, -1, NULL);
    if (comm->backend == COMM_BACKEND_MPI) {
        finish_t f = {0};
        /* NCCL's in-place layout is also MPI's: this rank's block already sits in recvbuf. */
        const void *src = sendcount > 0 && sendbuf == at(recvbuf, (size_t)comm->rank * sendcount, dtype)
                              ? MPI_IN_PLACE
                              : sendbuf;
        MPI_Request r = MPI_REQUEST_NULL;
        int n = mpi_count(fn, "sendcount", sendcount);
        if (nonblocking)
            MPI_CHECK(MPI_Iallgather(src, n, mpi_dtype(dtype), recvbuf, n, mpi_dtype(dtype), comm->mpi, &r));
        else
            MPI_CHECK(MPI_Allgather(src, n, mpi_dtype(dtype), recvbuf, n, mpi_dtype(dtype), comm->mpi));
        return mpi_done(nonblocking, r, &f, fn);
    }
#ifdef COURSE_HAVE_NCCL
    NCCL_CHECK(ncclAllGather(sendbuf, recvbuf, sendcount, nccl_dtype(dtype), comm->nccl, comm->stream));
    return nccl_done(comm, nonblocking, fn);
#else
    no_nccl(fn);
#endif
}

void comm_allgather(comm_t *comm, const void *sendbuf, void *recvbuf, size_t sendcount,
                    comm_dtype_t dtype) {
    watch_collective(comm, "comm_allgather");
    do_allgather(comm, sendbuf, recvbuf, sendcount, dtype, 0, "comm_allgather");
    watch_end();
}

comm_request_t comm_iallgather(comm_t *comm, const void *sendbuf, void *recvbuf, size_t sendcount,
                               comm_dtype_t dtype) {
    watch_collective(comm, "comm_iallgather");
    comm_request_t req = do_allgather(comm, sendbuf, recvbuf, sendcount, dtype, 1, "comm_iallgather");
    watch_end();
    return req;
}

/* Checks the block sizes of a "v" collective and returns their sum; *my_offset is where this
 * rank's block starts. The MPI backend's int limit on the sum is checked here too, before
 * check_layout() computes addresses from it (see check_total()). */
static size_t v_total(const comm_t *comm, const char *fn, const size_t *counts, size_t *my_offset) {
    CHECK(counts != NULL, "%s: counts is NULL; pass one block size per rank", fn);
    size_t total = 0;
    for (int r = 0; r < comm->size; r++) {
        char what[32];
        snprintf(what, sizeof what, "counts[%d]", r);
        check_count(fn, what, counts[r]);
        CHECK(counts[r] <= COMM_COUNT_MAX - total,
              "%s: counts add up to more than %zu elements, more than any buffer can hold; counts[r] is the "
              "number of elements in rank r's block, and all the blocks together make one buffer", fn,
              (size_t)COMM_COUNT_MAX);
        if (r == comm->rank) *my_offset = total;
        total += counts[r];
    }
    if (comm->backend == COMM_BACKEND_MPI) mpi_count(fn, "the sum of counts", total);
    return total;
}

/* Per-rank int counts and offsets for the MPI "v" collectives (v_total() checked the sum). */
static void v_layout(const comm_t *comm, const size_t *counts, int *icounts, int *idispls) {
    size_t off = 0;
    for (int r = 0; r < comm->size; r++) {
        if (icounts) icounts[r] = (int)counts[r]; /* each <= total <= INT_MAX */
        if (idispls) idispls[r] = (int)off;
        off += counts[r];
    }
}

static void do_reduce_scatterv(comm_t *comm, const void *sendbuf, void *recvbuf, const size_t *counts,
                               comm_dtype_t dtype, comm_op_t op) {
    const char *fn = "comm_reduce_scatterv";
    check_comm(comm, fn);
    check_op(fn, op);
    size_t my_off = 0, total = v_total(comm, fn, counts, &my_off), mine = counts[comm->rank];
    check_args(comm, fn, total, sendbuf, mine ? recvbuf : sendbuf, dtype);
    check_layout(comm, fn, "recvbuf", recvbuf, mine, "sendbuf", sendbuf, total, my_off,
                 "(offset of this rank's block)", dtype);
    agree_on_args(comm, fn, -1, dtype, op, -1, counts);
    if (comm->backend == COMM_BACKEND_MPI) {
        int *icounts = (int *)malloc((size_t)comm->size * sizeof(int));
        CHECK(icounts != NULL, "out of memory");
        v_layout(comm, counts, icounts, NULL);
        finish_t f = {0};
        set_avg(&f, comm, op, recvbuf, mine, dtype);
        const void *src = sendbuf;
        void *dst = recvbuf;
        if (mine > 0 && recvbuf == at(sendbuf, my_off, dtype)) {
            src = MPI_IN_PLACE; /* as in comm_reduce_scatter: MPI leaves the block at the start */
            dst = (void *)sendbuf;
            f.move_dst = recvbuf;
            f.move_src = sendbuf;
            f.move_bytes = mine * comm_dtype_size(dtype);
        }
        MPI_CHECK(MPI_Reduce_scatter(src, dst, icounts, mpi_dtype(dtype), mpi_op(dtype, op), comm->mpi));
        free(icounts);
        run_finish(&f);
        return;
    }
#ifdef COURSE_HAVE_NCCL
    /* NCCL has no reduce-scatter with uneven blocks: reduce each block to its owner,
     * all in one group so NCCL schedules them together. */
    size_t off = 0;
    NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < comm->size; r++) {
        if (counts[r] > 0) {
            /* Only the root writes; the others get a valid pointer they will not use. */
            char *block = at(sendbuf, off, dtype);
            NCCL_CHECK(ncclReduce(block, r == comm->rank ? recvbuf : block, counts[r], nccl_dtype(dtype),
                                  nccl_op(op), r, comm->nccl, comm->stream));
        }
        off += counts[r];
    }
    NCCL_CHECK(ncclGroupEnd());
    nccl_done(comm, 0, fn);
#else
    no_nccl(fn);
#endif
}

void comm_reduce_scatterv(comm_t *comm, const void *sendbuf, void *recvbuf, const size_t *counts,
                          comm_dtype_t dtype, comm_op_t op) {
    watch_collective(comm, "comm_reduce_scatterv");
    do_reduce_scatterv(comm, sendbuf, recvbuf, counts, dtype, op);
    watch_end();
}

static void do_allgatherv(comm_t *comm, const void *sendbuf, void *recvbuf, const size_t *counts,
                          comm_dtype_t dtype) {
    const char *fn = "comm_allgatherv";
    check_comm(comm, fn);
    size_t my_off = 0, total = v_total(comm, fn, counts, &my_off), mine = counts[comm->rank];
    check_args(comm, fn, total, recvbuf, mine ? sendbuf : recvbuf, dtype);
    check_layout(comm, fn, "sendbuf", sendbuf, mine, "recvbuf", recvbuf, total, my_off,
                 "(offset of this rank's block)", dtype);
    agree_on_args(comm, fn, -1, dtype, -1, -1, counts);
    if (comm->backend == COMM_BACKEND_MPI) {
        int *icounts = (int *)malloc(2 * (size_t)comm->size * sizeof(int));
        CHECK(icounts != NULL, "out of memory");
        int *idispls = icounts + comm->size;
        v_layout(comm, counts, icounts, idispls);
        const void *src = mine > 0 && sendbuf == at(recvbuf, my_off, dtype) ? MPI_IN_PLACE : sendbuf;
        MPI_CHECK(MPI_Allgatherv(src, icounts[comm->rank], mpi_dtype(dtype), recvbuf, icounts, idispls,
                                 mpi_dtype(dtype), comm->mpi));
        free(icounts);
        return;
    }
#ifdef COURSE_HAVE_NCCL
    /* NCCL has no all-gather with uneven blocks: each owner broadcasts its block into
     * place, all in one group (same bytes on the wire as ncclAllGather, more launches).
     * Padding every block to the largest and calling ncclAllGather would be the other
     * choice; it needs a scratch buffer and a copy. */
    size_t off = 0;
    NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < comm->size; r++) {
        if (counts[r] > 0) {
            const void *src = r == comm->rank ? sendbuf : at(recvbuf, off, dtype);
            NCCL_CHECK(ncclBroadcast(src, at(recvbuf, off, dtype), counts[r], nccl_dtype(dtype), r,
                                     comm->nccl, comm->stream));
        }
        off += counts[r];
    }
    NCCL_CHECK(ncclGroupEnd());
    nccl_done(comm, 0, fn);
#else
    no_nccl(fn);
#endif
}

void comm_allgatherv(comm_t *comm, const void *sendbuf, void *recvbuf, const size_t *counts,
                     comm_dtype_t dtype) {
    watch_collective(comm, "comm_allgatherv");
    do_allgatherv(comm, sendbuf, recvbuf, counts, dtype);
    watch_end();
}

static comm_request_t do_broadcast(comm_t *comm, void *buf, size_t count, comm_dtype_t dtype,
                                   int root, int nonblocking, const char *fn) {
    check_args(comm, fn, count, buf, buf, dtype);
    check_peer(comm, fn, root, "root");
    agree_on_args(comm, fn, (int64_t)count, dtype, -1, root, NULL);
    if (comm->backend == COMM_BACKEND_MPI) {
        finish_t f = {0};
        MPI_Request r = MPI_REQUEST_NULL;
        int n = mpi_count(fn, "count", count);
        if (nonblocking)
            MPI_CHECK(MPI_Ibcast(buf, n, mpi_dtype(dtype), root, comm->mpi, &r));
        else
            MPI_CHECK(MPI_Bcast(buf, n, mpi_dtype(dtype), root, comm->mpi));
        return mpi_done(nonblocking, r, &f, fn);
    }
#ifdef COURSE_HAVE_NCCL
    NCCL_CHECK(ncclBroadcast(buf, buf, count, nccl_dtype(dtype), root, comm->nccl, comm->stream));
    return nccl_done(comm, nonblocking, fn);
#else
    no_nccl(fn);
#endif
}

void comm_broadcast(comm_t *comm, void *buf, size_t count, comm_dtype_t dtype, int root) {
    watch_collective(comm, "comm_broadcast");
    do_broadcast(comm, buf, count, dtype, root, 0, "comm_broadcast");
    watch_end();
}

comm_request_t comm_ibroadcast(comm_t *comm, void *buf, size_t count, comm_dtype_t dtype, int root) {
    watch_collective(comm, "comm_ibroadcast");
    comm_request_t req = do_broadcast(comm, buf, count, dtype, root, 1, "comm_ibroadcast");
    watch_end();
    return req;
}

void comm_barrier(comm_t *comm) {
    watch_collective(comm, "comm_barrier");
    check_comm(comm, "comm_barrier");
    agree_on_args(comm, "comm_barrier", -1, -1, -1, -1, NULL);
#ifdef COURSE_HAVE_NCCL
    if (comm->backend == COMM_BACKEND_NCCL) nccl_wait(comm, NULL, "comm_barrier");
#endif
    MPI_CHECK(MPI_Barrier(comm->mpi));
    watch_end();
}

/* ------------------------------------------------------------------ waiting */

void comm_wait(comm_request_t *req) {
    CHECK(req != NULL, "comm_wait: NULL pointer to a request");
    comm_request_t r = *req;
    if (r == COMM_REQUEST_NULL) return;
    watch_begin("comm_wait for the request of %s", r->fn);
    if (r->backend == COMM_BACKEND_MPI) {
        MPI_Status st;
        int rc = MPI_Wait(&r->mpi, &st);
        if (r->recv_peer >= 0) check_received(rc, &st, r->recv_count, r->recv_dtype, r->recv_peer, r->fn);
        else MPI_CHECK(rc);
        run_finish(&r->finish);
    } else {
#ifdef COURSE_HAVE_NCCL
        char fn[64];
        snprintf(fn, sizeof fn, "comm_wait (%s)", r->fn);
        nccl_wait(r->comm, r->event, fn);
        CUDA_CHECK(cudaEventDestroy(r->event));
#endif
    }
    free(r);
    *req = COMM_REQUEST_NULL;
    watch_end();
}

void comm_waitall(int n, comm_request_t *reqs) {
    /* A negative n used to wait for nothing and return, leaving every request pending: the
     * buffers then look ready while MPI or NCCL may still be writing them. */
    CHECK(n >= 0, "comm_waitall: n is %d; pass the number of requests in reqs (0 or more)", n);
    CHECK(n == 0 || reqs != NULL,
          "comm_waitall: reqs is NULL but n is %d; pass an array of n requests (NULL only with n = 0)", n);
    for (int i = 0; i < n; i++) comm_wait(&reqs[i]);
}
