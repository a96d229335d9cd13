/** @file
 * Fatal errors, the way every program in the course reports them.
 *
 * A failed call prints one line naming the call, the file and line, and the
 * rank (in an MPI job), then ends the whole job: under MPI the communicator
 * installs an abort hook that calls MPI_Abort, so the other ranks never wait
 * forever for a peer that has already died. Without MPI it simply exits.
 *
 * The CUDA_CHECK / CUBLAS_CHECK / NCCL_CHECK / MPI_CHECK macros expand only at
 * the point of use, so this header itself needs none of those libraries.
 */
#ifndef COURSE_ERROR_H
#define COURSE_ERROR_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Print "[rank r/n] error: file:line: message" to stderr and end the job.
 *
 * The "[rank r/n] " prefix is there once log_set_rank() has been called (as
 * comm_init() does). Calls the abort hook if one is installed (MPI_Abort under MPI), then
 * exit(1). Never returns.
 * @param file source file of the failing call (use __FILE__)
 * @param line source line of the failing call (use __LINE__)
 * @param fmt printf-style message
 */
void course_fatal(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));

/**
 * @brief Install the function course_fatal() calls to end the job.
 *
 * The communicator installs one that calls MPI_Abort so that a failed rank
 * brings down the whole job. Pass NULL to go back to plain exit().
 * @param hook called with the exit code; it should not return
 */
void course_set_abort_hook(void (*hook)(int code));

/**
 * @brief Report an error to the caller instead of ending the job: write a
 * one-line message into err (when err and errlen are given) and return -1.
 *
 * The convention of every function here that takes (char *err, size_t errlen):
 * `if (bad) return course_error(err, errlen, "--heads %d ...", h);`
 * @param err destination of the message (may be NULL)
 * @param errlen size of err
 * @param fmt printf-style message
 * @return -1
 */
int course_error(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/**
 * @brief Open a regular file for reading, refusing anything else without
 * blocking: a directory, FIFO, device or socket gets a message instead.
 *
 * fopen() on a FIFO waits until something writes to it, and a directory opens
 * but reports a nonsense size. So the path is stat()ed first, opened with
 * O_NONBLOCK, and checked again with fstat() (it could have changed between).
 * Messages read "WHAT is a directory; HINT", "WHAT: cannot open (reason); HINT".
 * @param path the file
 * @param what how messages name it, e.g. "--data corpus.txt"
 * @param hint what to give instead, e.g. "give a regular text file"
 * @param size_out receives the file's size in bytes (from fstat); may be NULL
 * @param err destination of the message (may be NULL)
 * @param errlen size of err
 * @return the stream, open for reading ("rb"), or NULL with err set
 */
FILE *course_open_regular(const char *path, const char *what, const char *hint, size_t *size_out, char *err,
                          size_t errlen);

/**
 * @brief Create (or empty) an output file that a flag names, such as
 * `--json out.json` or `--log loss.csv`, with a message that says what to do
 * when it cannot be.
 *
 * Programs call it before their work starts, so that a mistyped folder costs
 * nothing: a benchmark that found out only when writing its results would
 * have thrown the run away. The message reads "FLAG PATH: cannot create the
 * file (reason); give a path in a folder you can write to".
 * @param path the file
 * @param flag the flag that named it, e.g. "--json"
 * @param err destination of the message (may be NULL)
 * @param errlen size of err
 * @return the stream, open for writing ("w"), or NULL with err set
 */
FILE *course_create_output(const char *path, const char *flag, char *err, size_t errlen);

/**
 * @brief Whether two paths name the same file, so that a program can refuse
 * to write over a file it reads (`--log` naming the `--data` file, say).
 *
 * Where both exist, by device and inode (so "x", "./x", a hard link and a
 * symbolic link to it all match); where neither does yet, by name once the
 * folder part is resolved with realpath() (or as given, if the folder does
 * not exist either), a symbolic link to a missing file standing for the
 * file it would create; one that exists and one that does not are different.
 * @param a a path
 * @param b another path
 * @return 1 if they name the same file, else 0
 */
int course_same_file(const char *a, const char *b);

/** @brief End the job with a formatted message and the caller's location. */
#define FATAL(...) course_fatal(__FILE__, __LINE__, __VA_ARGS__)

/** @brief Fail with a message if a condition does not hold (always on, unlike assert). */
#define CHECK(cond, ...) \
    do { if (!(cond)) course_fatal(__FILE__, __LINE__, __VA_ARGS__); } while (0)

/** @brief Check a CUDA runtime call (needs cuda_runtime_api.h at the point of use). */
#define CUDA_CHECK(call) \
    do { \
        cudaError_t err_ = (call); \
        if (err_ != cudaSuccess) \
            course_fatal(__FILE__, __LINE__, "%s failed: %s (%s)", #call, \
                         cudaGetErrorName(err_), cudaGetErrorString(err_)); \
    } while (0)

/** @brief Check the last kernel launch: launch errors surface only through cudaGetLastError. */
#define CUDA_CHECK_LAST() CUDA_CHECK(cudaGetLastError())

/** @brief Check a cuBLAS call (needs cublas_v2.h at the point of use). */
#define CUBLAS_CHECK(call) \
    do { \
        cublasStatus_t st_ = (call); \
        if (st_ != CUBLAS_STATUS_SUCCESS) \
            course_fatal(__FILE__, __LINE__, "%s failed: %s", #call, \
                         cublasGetStatusString(st_)); \
    } while (0)

/**
 * @brief Check an NCCL call (needs nccl.h included before this header).
 *
 * ncclGetErrorString() only names the kind of failure ("unhandled system
 * error"); where NCCL has it (2.13+), ncclGetLastError() says what failed
 * ("socket connect to 10.0.0.2 failed"), so the message carries both.
 */
#define NCCL_CHECK(call) \
    do { \
        ncclResult_t nr_ = (call); \
        if (nr_ != ncclSuccess) { \
            const char *nlast_ = COURSE_NCCL_LAST_ERROR(); \
            course_fatal(__FILE__, __LINE__, "%s failed: %s%s%s", #call, ncclGetErrorString(nr_), \
                         nlast_ && *nlast_ ? ": " : "", nlast_ ? nlast_ : ""); \
        } \
    } while (0)

/** @brief Check an MPI call (needs mpi.h; MPI's default handler aborts, this names the call). */
#define MPI_CHECK(call) \
    do { \
        int mr_ = (call); \
        if (mr_ != MPI_SUCCESS) { \
            char mmsg_[MPI_MAX_ERROR_STRING]; int mlen_ = 0; \
            MPI_Error_string(mr_, mmsg_, &mlen_); \
            course_fatal(__FILE__, __LINE__, "%s failed: %s", #call, mmsg_); \
        } \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif /* COURSE_ERROR_H */

/* NCCL_CHECK's detail string, by the version of the nccl.h already included (the macro
 * cannot test it where it is used). Outside the include guard so that including this
 * header again after nccl.h still defines it; where NCCL_CHECK is used without it, the
 * build stops at COURSE_NCCL_LAST_ERROR rather than losing the detail quietly. */
#if defined(NCCL_VERSION_CODE) && !defined(COURSE_NCCL_LAST_ERROR)
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
#define COURSE_NCCL_LAST_ERROR() ncclGetLastError(NULL)
#else
#define COURSE_NCCL_LAST_ERROR() ""
#endif
#endif
