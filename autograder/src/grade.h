/*
 * The grader's shared types: a rubric (what a lab's tests are worth), the
 * result of one graded test, and the four parts of the program that use them:
 * rubric.c (reading autograder/rubrics/NN.json), speed.c (a benchmark's JSON
 * into a speed test's points), sandbox.c (running one untrusted child with
 * limits), tree.c (the private copy of the course), report.c (table,
 * results.json, CSV) and grade.c (the order of things).
 *
 * Nothing here knows about a particular lab: a new lab needs a rubric file
 * and its wrong submissions, not a change to this code.
 */
#ifndef GRADE_H
#define GRADE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GRADE_MAX_TESTS 64
#define GRADE_MAX_LABS 32
#define GRADE_MAX_REQUIRES 32
#define GRADE_MAX_RANKS 64    /* MPI ranks of one test (a rubric's "ranks") */

/* ---- rubrics ---------------------------------------------------------------- */

/* A ratio speed test's default "implausible_above": no kernel of the course's
 * labs runs 25% faster than cuBLAS at the same precision and the graded size,
 * while a kernel that reuses an earlier run's result instead of computing it
 * (a copy of C) is many times faster. See autograder/README.md. */
#define GRADE_IMPLAUSIBLE_RATIO 1.25

typedef enum { KIND_NUMERICS, KIND_SPEED } test_kind_t;

/* One line of a rubric. Numerics tests name a cmocka test of check.c. Speed
 * tests come in two kinds: a ratio test names a kernel row of the bench's
 * --json output and is scored on its ratio to the baseline timed in the same
 * run; an absolute test names a metric, a top-level number of that JSON (lab
 * 05's "mfu"), and is scored on its value. full_at and zero_at are in the
 * unit of whichever the test reads. */
typedef struct {
    char name[96];        /* what the student sees */
    char check[96];       /* cmocka test name (numerics) */
    test_kind_t kind;
    double points;
    int timeout_s;        /* wall-clock limit; 0: the run's default */
    int may_skip;         /* numerics: a check that skips itself here (e.g. needs
                           * Hopper) is left out of the total, not failed */
    int bonus;            /* extra credit: its points add to the score, not to the maximum */
    int ranks;            /* MPI ranks: 1 runs the program itself, more run it under mpirun */
    /* speed only */
    char kernel[96];      /* ratio kind: "kernel" field of the bench JSON row */
    char over[96];        /* ratio kind, optional: another kernel row of the same run; the ratio is then
                           * that kernel's time over this one's (a speed-up), not the row's "ratio" */
    char metric[32];      /* absolute kind: a speed_metric_t name ("mfu"); "" for ratio */
    double full_at;       /* ratio or metric value that earns full points */
    double zero_at;       /* ratio or metric value at and below which it earns nothing */
    char baseline[96];    /* ratio kind: what the ratio is against, for messages ("cuBLAS"); "over"
                           * when it names none, so as large as that */
    double implausible_above; /* ratio kind: a ratio above this is no honest measurement (a failed test) */
    char bench_args[256]; /* extra bench flags, space-separated */
    /* checks (cmocka names) that must pass for this test to count */
    char requires[GRADE_MAX_REQUIRES][96];
    int nrequires;
} rubric_test_t;

typedef struct {
    char lab[96];   /* folder name, e.g. 02-shared-memory-tiling */
    char nn[8];     /* "02" */
    char title[160];
    rubric_test_t tests[GRADE_MAX_TESTS];
    int ntests;
    char files[16][128]; /* "student_files": when set, only these come from the submission */
    int nfiles;
} rubric_t;

/* Read autograder/rubrics/NN.json under root. Returns 0, or -1 with a
 * message in err (and errno ENAMETOOLONG when the path is 4096 bytes or
 * more: refused, not cut). */
int rubric_load(const char *root, const char *nn, rubric_t *r, char *err, size_t errlen);

/* ---- results ---------------------------------------------------------------- */

typedef enum {
    ST_PASS,
    ST_PARTIAL,       /* speed: between zero_at and full_at */
    ST_FAIL,
    ST_NOT_STARTED,   /* "not implemented" from the starter's TODO */
    ST_TIMEOUT,
    ST_CRASH,
    ST_BUILD_ERROR,
    ST_SKIPPED,       /* the check skipped itself (no device) */
    ST_NEEDS_GPU,     /* speed without a real GPU: not in the total */
    ST_NOT_GRADED,    /* a required check failed */
    ST_ERROR,         /* the grader could not run it */
} status_t;

typedef struct {
    const rubric_test_t *t;
    char lab[96];
    char nn[8];
    int number;       /* 1-based within the lab */
    status_t status;
    double score, max_score;
    int counted;      /* 0: left out of the total (needs GPU) */
    char figure[64];  /* key figure: time, or % of baseline */
    char message[512];
    char *output;     /* what the student sees in results.json (malloc'd) */
    double measured;  /* speed: the measured ratio or metric value, or -1 */
} result_t;

const char *status_name(status_t s);

/* ---- scoring speed (speed.c) --------------------------------------------------- */

/* A number an absolute speed test can be graded on: a top-level field of the
 * bench's --json output. The table in speed.c lists the known ones. */
typedef struct {
    const char *name;    /* the JSON field and the rubric's "metric": "mfu" */
    const char *label;   /* printed before the value: "MFU " */
    double scale;        /* printed value = scale * measured (100: a fraction as %) */
    const char *unit;    /* printed after the value: "%" */
    double max;          /* no honest measurement exceeds this (MFU: 1, the peak) */
    const char *meaning; /* for rubric errors: how full_at and zero_at are written */
    const char *if_null; /* what a null value means and who can fix it */
} speed_metric_t;

/* The metric called name, or NULL when there is none. */
const speed_metric_t *speed_metric_find(const char *name);
/* The known metric names, comma-separated, for error messages. */
void speed_metric_names(char *out, size_t n);
/* points * this is a speed test's score: (value - zero_at) / (full_at -
 * zero_at) clamped to [0, 1]; 0 for NaN. */
double speed_fraction(double value, double zero_at, double full_at);
/* Score res->t from the JSON its bench wrote (NULL or "" when none): sets
 * status, score, measured, figure, message, and counted (0 when the JSON
 * lacks the metric, e.g. no MFU without a known device peak: the grading
 * machine, not the submission, is what fell short). emulated: the grader
 * ran the emulator build (--target emu), whose times are CPU times; the
 * JSON's own "emulator" must agree with it, or the test earns nothing.
 * Never fails. */
void speed_score(result_t *res, const char *bench_json, int emulated);
/* The printed form of a metric's value: "MFU 31.2%". */
void speed_format(const speed_metric_t *m, double value, char *out, size_t n);

/* ---- running untrusted children ---------------------------------------------- */

/* The longest token sandbox_run sends (it goes out as one line of a fixed buffer). */
#define GRADE_TOKEN_MAX 126

typedef struct {
    int timeout_s;         /* wall clock; the process group is killed after it */
    long cpu_s;            /* RLIMIT_CPU */
    long long as_bytes;    /* RLIMIT_AS; 0: unlimited (CUDA reserves huge ranges) */
    long long fsize_bytes; /* RLIMIT_FSIZE */
    long long out_cap;     /* output bytes kept */
    long long out_kill;    /* output bytes after which the child is killed */
    uid_t uid;             /* run as this user when run_as is set */
    gid_t gid;
    int run_as;
    const char *cwd;
    char *const *env;      /* the whole environment (allow-listed by the caller) */
    const char *token;     /* when set: sent on fd 3; fd 4 collects reports. At most
                            * GRADE_TOKEN_MAX characters: a longer one is not started */
    /* A launcher of ranks (mpirun): with ranks > 0 and a token, the verdicts come
     * on a listening socket (abstract name channel, at most 107 bytes) instead of fds 3 and 4, which
     * mpirun does not pass on. Each rank connects once, says "HELLO <rank>" and
     * gets the token; what it sends after that is that rank's report. */
    int ranks;
    const char *channel;
} sandbox_opts_t;

typedef struct {
    int exited, exit_code;  /* normal exit and its code */
    int not_started;        /* the program was never started (its exec or what comes before it
                             * failed): then exit code 127, whatever the program would do */
    int start_errno;        /* why, when the child could say (0 when not) */
    int signaled, sig;      /* killed by a signal */
    int timed_out;
    int output_killed;      /* too much output */
    double wall_s;
    char *out;              /* stdout and stderr, interleaved, capped, NUL-ended */
    size_t out_len;
    long long out_total;
    char *report;           /* what arrived on fd 4 (only with a token) */
    char *rank_report[GRADE_MAX_RANKS]; /* with ranks: what each rank sent on the channel */
    int ranks_heard;        /* ranks that connected and said who they are */
    char channel_problem[192]; /* with ranks: a connection that broke the protocol ("" when none) */
} sandbox_result_t;

/* Run argv[0] (a path) in a new session with limits. Never fails in a way
 * that stops the grader: a child that cannot start shows as exit code 127.
 * Whatever the child started is killed with it: every process of its session,
 * not only of its process group (mpirun puts each rank in a group of its own),
 * every process below the grader, and with run_as every process of that user,
 * wherever it is (so the user must run nothing but the grader's children:
 * sandbox_claim_user); then what that user left at the top of the shared
 * temp folders (/tmp, /var/tmp, /dev/shm, /run/lock, /dev/mqueue) and its
 * System V IPC objects are removed. */
void sandbox_run(char *const argv[], const sandbox_opts_t *o, sandbox_result_t *res);
void sandbox_result_free(sandbox_result_t *res);
/* Kill the running child's session and every process below the grader, as
 * at the end of a test. Async-signal-safe: for the grader's signal handler. */
void sandbox_kill_all(void);
/* The --run-as users this grader (or this --parallel worker) owns:
 * sandbox_kill_all, and the clean-up after every child, kill every process
 * of each of them too. At most 64; the list replaces the last one. */
void sandbox_own_users(const uid_t *uids, const gid_t *gids, int n);
/* Claim uid for this grader's --run-as before any test: 0, or -1 with why
 * (a sentence fragment) in why. Refused when another grader holds it (a
 * claim is an abstract socket named grade-run-as-UID, held until this
 * process and its forks are gone; one a grader that has just ended still
 * holds is waited for, 2 s at most) or when a live process runs as it (one
 * a grader that has just ended left dying is waited for, 2 s at most). */
int sandbox_claim_user(uid_t uid, char *why, size_t n);
/* Kill every process of uid at once and remove what it left in the shared
 * temp folders and System V IPC, as after each child that ran as it: for a
 * --parallel worker that died, and for a grader that was killed outright. */
void sandbox_clean_user(uid_t uid, gid_t gid);
/* Leave pid alone when killing what is below the grader: its watchman. */
void sandbox_spare(pid_t pid);

/* ---- the private copy -------------------------------------------------------- */

/* Copy the tree at src into dst (created), skipping top-level names in
 * skip[] (NULL-ended; a name ending in '*' is a prefix: "build*", ".*"). File modes and times are kept so make sees prebuilt
 * outputs as up to date. Returns 0 or -1; a path of 4096 bytes or more is
 * refused, not cut (errno ENAMETOOLONG, and stderr names it). An entry that
 * cannot be read or written fails the copy, and stderr names it; one
 * removed while the copy runs is left out; FIFOs, sockets and devices are
 * left out with a warning on stderr. */
int tree_copy(const char *src, const char *dst, const char *const *skip);
/* A 64-bit hash of the tree at root: every entry's relative path and kind, a
 * file's mode and bytes, a link's target, in name order, skipping top-level
 * names in skip[] (NULL-ended); a file's size comes before its bytes, so
 * no file's bytes can pass for the next entry. The n_names_only relative paths in
 * names_only (e.g. "labs/01-naive-matmul/matmul_naive.cu") count by name
 * only, not by contents. salt mixes in whatever else the result depends on.
 * *err is set when something could not be read, or a file's size changed
 * while it was read, or a path was 4096 bytes or more (then errno is
 * ENAMETOOLONG, and stderr names it). */
uint64_t tree_hash(const char *root, const char *const *skip, const char *const *names_only, int n_names_only,
                   const char *salt, int *err);
/* snprintf for a path that must not be cut: 0 when it fits out's n bytes;
 * else -1 with errno ENAMETOOLONG, and stderr says "grade: cannot <what>
 * <its first 80 bytes>..." and what to do: fix, or (NULL) move the tree to a
 * shorter path or flatten its folders. */
int path_fits(char *out, size_t n, const char *what, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* rm -rf; best effort (an immutable file stays, and so do its folders).
 * Any depth of tree, with at most 64 descriptors open: folders deeper than
 * that are moved up into path's top folder and removed from there. Never
 * follows links. Async-signal-safe: the grader's signal handler removes
 * its temp folder with it. */
void tree_remove(const char *path);
/* make a directory and its parents */
int mkdirs(const char *path, mode_t mode);
/* chown -R without following links (for --run-as): 0, or -1 when an
 * entry's owner could not be changed (the top missing, an lchown or a listing
 * that failed, a path of 4096 bytes or more: refused, not cut, ENAMETOOLONG);
 * stderr names the entry and errno says why. The other entries still
 * change owner; an entry below the top removed meanwhile is no failure. */
int tree_chown(const char *path, uid_t uid, gid_t gid);
/* Copy one regular file (no links followed); returns 0 or -1. */
int file_copy(const char *src, const char *dst);
/* The student files of a lab: every regular file in root/labs/<lab>/ except
 * the harness (check.c, bench.c, README.md, lab.mk), in name order. Past max,
 * the first max by name are taken and stderr says how many were not.
 * Returns how many were stored, or -1 when a path is 4096 bytes or more
 * (errno ENAMETOOLONG, and stderr names it): cut, a file would be left out. */
int lab_student_files(const char *root, const char *lab, char names[][128], int max);

/* ---- output ------------------------------------------------------------------ */

void report_table(const result_t *r, int n, const char *title, double wall_s);
/* After the table: the make check command (ONLY= and SEED=) that reruns each
 * failed numerics check alone on this run's inputs, the first three of them;
 * src is --src (labs, solutions, or a folder make check cannot read). */
void report_rerun_hint(const result_t *r, int n, unsigned long long seed, const char *src);
int report_json(const char *path, const result_t *r, int n, double wall_s, const char *summary);
double results_total(const result_t *r, int n, double *max);
double results_bonus(const result_t *r, int n);
void results_points(char *buf, size_t len, const result_t *r, int n);
/* A CSV cell for v points of max: hundredths, never rounded up onto max
 * (4.996 of 5 is "4.99", as the table says), "0.00" below a hundredth. */
void points_for_csv(char *buf, size_t n, double v, double max);

#endif /* GRADE_H */
