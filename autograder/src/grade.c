/*
 * grade: the course's autograder.
 *
 *   grade [--lab NN ... | --all] [--src DIR] [--json FILE] [--gradescope]
 *         [--target cuda|emu] [--timeout S] [--batch DIR --csv FILE] ...
 *
 * For every lab it grades, the grader copies its own tree (the one it was
 * built from, or --root) into a private temp folder, puts only that lab's
 * student files from --src into the copy, builds the lab's checks there and
 * runs each rubric test as its own child process with limits, a wall-clock
 * timeout, a scrubbed environment and a per-run random seed. The verdict of
 * a test travels on a private channel with a per-test secret (see
 * autograder/harness/grade_main.c), never through the student's stdout.
 * Speed tests run only on a real GPU; elsewhere they say "needs GPU" and are
 * left out of the total.
 *
 * The grader itself must not fail because a submission misbehaves: every
 * outcome of a child (crash, hang, garbage, no verdict) becomes a status in
 * the table, and results are always written. Exit status: 0 when grading
 * happened (whatever the score), 1 when the grader could not grade (on
 * --target cuda: also when every check of a lab found no device, which is
 * no grade), 2 for bad usage.
 */
#include "grade.h"
#include "hash.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef GRADE_ROOT
#define GRADE_ROOT "."
#endif

/* One machine, more ranks than cores (CI has 2), no pinning: what a test on
 * several ranks needs here; a cluster passes its own with --mpirun. */
#define DEFAULT_MPIRUN "mpirun --oversubscribe --bind-to none"

/* ---- options ------------------------------------------------------------------ */

typedef struct {
    char root[PATH_MAX];      /* the grader's own tree: checks, harness, rubrics */
    char src[PATH_MAX];       /* where student files come from */
    int src_set;              /* --src given (--batch ignores it, so both together are refused) */
    const char *json_path;
    int gradescope;
    char target[8];           /* cuda or emu */
    int timeout_s;            /* 0 (no --timeout): the rubric's, else 120 (a bench: 300) */
    char labs[GRADE_MAX_LABS][8];
    int nlabs, all;
    const char *batch;        /* folder of submissions */
    const char *csv_path;
    unsigned long long seed;
    int seed_set;
    int keep;                 /* keep the temp folder */
    int jobs;                 /* make -j for builds */
    int parallel;             /* --batch: submissions graded at once, each by a worker process */
    const char *run_as;       /* --run-as: run student code as this user (root only); USER1,USER2,... for --parallel */
    const char *emu_speed;    /* --emu-speed-args: run speed tests on emu with these bench args (tests) */
    const char *mpirun;       /* --mpirun: the launcher of tests on several ranks ({n}: the count) */
    const char *only[GRADE_MAX_TESTS * 4]; /* checks, kernels or test names to grade */
    int nonly;
    long long mem_mb;         /* RLIMIT_AS for tests on emu, MiB */
    int mem_set;              /* --mem-mb given */
    const char *base_cache;   /* --base-cache: keep built course libraries here between runs */
    int prepare;              /* --prepare: only build (or find) them there */
    int gpu_build;            /* --gpu-build: on emu, also compile the student's .cu files with nvcc */
} opts_t;

static opts_t O;
/* --run-as's users, one per --parallel worker (the first with one student
 * at a time), and the one this process runs student code as. */
enum { RUN_AS_MAX = 64 };
static char run_names[RUN_AS_MAX][64];
static uid_t run_uids[RUN_AS_MAX];
static gid_t run_gids[RUN_AS_MAX];
static int n_run;
static uid_t run_uid;
static gid_t run_gid;
static const char *run_name = "";
static char tmp_root[PATH_MAX];   /* this run's private folder */
static char base_dir[PATH_MAX];   /* the copy with the prebuilt libraries */
static int base_ok;
static char base_log[8192];
/* Set when a test could not be graded for a fault of the grader's own (a
 * --run-as hand-over that failed), not of the submission's: the exit status
 * is then 1, and a batch's row says so. */
static int grader_trouble;
static char lab_trouble[512]; /* the first such fault of the lab being graded, for add_why */
static int prepare_cached_base(void);
static void refresh_student_files(const char *dir);

/* The memory limit of the cgroup the grader runs in (a container's, as on
 * Gradescope), in bytes, from cgroup v2 or v1; 0 when there is none. */
static long long cgroup_mem_limit(void) {
    static const char *const files[] = {"/sys/fs/cgroup/memory.max",
                                        "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "r");
        if (!f) continue;
        long long v = 0;
        int n = fscanf(f, "%lld", &v); /* "max" (v2, no limit) reads as nothing */
        fclose(f);
        return n == 1 && v > 0 ? v : 0;
    }
    return 0;
}

/* The default --mem-mb: half of this machine's memory (or of its container's
 * limit, when that is smaller), from 2 GiB to 16 GiB. Tests run one at a
 * time, so a test that allocates without bound fails its own allocation
 * before it can push the machine into swap or wake the OOM killer (which
 * might pick the grader); every course test passes in 2 GiB on the emulator. */
static long long default_mem_mb(void) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    long long bytes = pages > 0 && page > 0 ? (long long)pages * page : 32LL << 30;
    long long cg = cgroup_mem_limit();
    if (cg > 0 && cg < bytes) bytes = cg;
    long long mb = bytes / 2 / (1LL << 20);
    return mb < 2048 ? 2048 : mb > 16384 ? 16384 : mb;
}

/* The --help text; also what a usage error points to. */
static void usage(FILE *f) {
    fprintf(f,
            "usage: grade [--lab NN ... | --all] [--src DIR] [--json FILE] [--gradescope]\n"
            "             [--target cuda|emu] [--timeout S] [--batch DIR [--csv FILE]]\n"
            "             [--parallel N] [--seed N] [--only NAME ...] [--run-as USER[,USER...]] [--root DIR]\n"
            "             [--jobs N]"
            " [--mem-mb N] [--keep] [--base-cache DIR] [--mpirun 'CMD']\n"
            "             [--gpu-build] [--emu-speed-args 'ARGS'] | --prepare --base-cache DIR [--target T]\n"
            "\n"
            "Grades the student files in --src (default: labs) against the checks,\n"
            "harness and rubrics of the grader's own tree, each lab built in a private copy.\n"
            "  --lab NN       grade this lab (5 or 05; repeatable); --all: every lab with a rubric (default)\n"
            "  --src DIR      submission: DIR/NN-topic/<files>, DIR/labs/NN-topic/<files> or DIR/<files>\n"
            "  --json FILE    also write Gradescope's results.json there\n"
            "  --gradescope   grade only the labs the submission has files for; with --lab, those labs\n"
            "                 whatever it has, naming the files of other labs it ignores\n"
            "  --target T     cuda (a real GPU: numerics and speed) or emu (CPU emulator: numerics)\n"
            "  --timeout S    wall-clock seconds per test, at least 1 (default: the rubric's, else 120 for a\n"
            "                 check and 300 for a benchmark)\n"
            "  --batch DIR    grade DIR/<student>/ for every student; --csv FILE (default grades.csv in\n"
            "                 the current folder) gets the scores and notes (build error, no files, not\n"
            "                 graded); --json then names a folder for <student>.json files\n"
            "  --parallel N   with --batch: grade N submissions at once, each in a process of its own\n"
            "                 (default 1). Each student's messages are shown when it is done; the\n"
            "                 default --mem-mb is divided by N. Not with speed tests on --target cuda:\n"
            "                 they would time each other (add --only with numerics tests)\n"
            "  --seed N       inputs' seed (default: fresh from /dev/urandom each run; to reproduce)\n"
            "  --only NAME    grade only this check, speed kernel or test name (repeatable)\n"
            "  --run-as USER  run student code as this unprivileged user (when run as root), who must\n"
            "                 run nothing else: after each test every process of it is killed. With\n"
            "                 --parallel N, N users, one per worker: --run-as USER1,USER2,...\n"
            "  --root DIR     the trusted course tree (default: the one grade was built from)\n"
            "  --jobs N       parallel make jobs for builds (default: the number of CPUs, at most 8)\n"
            "  --mem-mb N     address-space limit per test on emu, MiB (default: half this\n"
            "                 machine's or container's memory, from 2048 to 16384; here %lld;\n"
            "                 below 2048, the least every course test is known to pass in, warns)\n"
            "  --keep         keep the private build folder and print where it is\n"
            "  --base-cache DIR  keep the course libraries built from the grader's tree in DIR and\n"
            "                 reuse them while the tree (but for student files) is unchanged;\n"
            "                 make grade uses build/grade-cache. Student code never runs there,\n"
            "                 but code run without --run-as runs as this user and could write to\n"
            "                 it, or to anything else that grades it: grade untrusted submissions\n"
            "                 as root with --run-as, or each in a throwaway container\n"
            "  --prepare      only build the course libraries into --base-cache (or find them there)\n"
            "                 and stop, so that later runs start grading at once (Gradescope's\n"
            "                 setup.sh does this when it builds the image)\n"
            "  --gpu-build    with --target emu only: also compile the student's .cu files with nvcc, as a\n"
            "                 GPU machine would, and count a file nvcc refuses as a build error of its\n"
            "                 lab (the emulator accepts C++ that device code may not use); needs the\n"
            "                 CUDA toolkit, not a GPU\n"
            "  --mpirun 'CMD' how tests on several MPI ranks (a rubric's \"ranks\") start: {n} in CMD\n"
            "                 becomes N (else \"-np N\" is added), then the program follows\n"
            "                 (default: '" DEFAULT_MPIRUN "'; Slurm: 'srun --mpi=pmix -n {n}')\n"
            "  --emu-speed-args 'ARGS'  for the grader's own tests: with --target emu, run the speed\n"
            "                 tests anyway, the bench given ARGS instead of the rubric's GPU-sized\n"
            "                 ones (the figures are emulator CPU times and mean nothing)\n",
            default_mem_mb());
}

/* Parse the flags into O; exits 2 with a message on anything malformed. */
static void parse_args(int argc, char **argv) {
    snprintf(O.root, sizeof O.root, "%s", GRADE_ROOT);
    snprintf(O.src, sizeof O.src, "labs");
    O.mem_mb = default_mem_mb();
    O.mpirun = DEFAULT_MPIRUN;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    O.jobs = n < 1 ? 1 : n > 8 ? 8 : (int)n;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                                  \
    do {                                                                              \
        if (!v) { fprintf(stderr, "grade: %s needs a value; see grade --help\n", a); exit(2); } \
        i++;                                                                          \
    } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); exit(0); }
        else if (!strcmp(a, "--all")) O.all = 1;
        else if (!strcmp(a, "--gradescope")) O.gradescope = 1;
        else if (!strcmp(a, "--keep")) O.keep = 1;
        else if (!strcmp(a, "--prepare")) O.prepare = 1;
        else if (!strcmp(a, "--gpu-build")) O.gpu_build = 1;
        else if (!strcmp(a, "--lab")) {
            /* "--lab 00 01" and "--lab 00 --lab 01" both work. */
            if (!v || v[0] == '-') { fprintf(stderr, "grade: --lab needs a lab number like 02\n"); exit(2); }
            while (i + 1 < argc && argv[i + 1][0] != '-') {
                const char *l = argv[++i];
                /* "5" is lab 05, as "05" and "05-single-gpu-training" are. */
                int one = isdigit((unsigned char)l[0]) && l[1] == '\0';
                if (!one && (!isdigit((unsigned char)l[0]) || !isdigit((unsigned char)l[1]) || (l[2] && l[2] != '-'))) {
                    fprintf(stderr, "grade: --lab expects a lab number like 02, got '%s'\n", l);
                    exit(2);
                }
                if (O.nlabs < GRADE_MAX_LABS) snprintf(O.labs[O.nlabs++], 8, one ? "0%.1s" : "%.2s", l);
            }
        } else if (!strcmp(a, "--src")) {
            NEED_VALUE();
            /* Cut, it would grade another folder, or call a present one missing. */
            if (path_fits(O.src, sizeof O.src, "read --src", "give a shorter path (move the submission, or cd "
                          "near it and give it relative)", "%s", v) != 0)
                exit(2);
            O.src_set = 1;
        } else if (!strcmp(a, "--root")) {
            NEED_VALUE();
            if (path_fits(O.root, sizeof O.root, "read --root", "move the course tree to a shorter path", "%s", v) != 0)
                exit(2);
        }
        else if (!strcmp(a, "--json")) { NEED_VALUE(); O.json_path = v; }
        else if (!strcmp(a, "--batch")) { NEED_VALUE(); O.batch = v; }
        else if (!strcmp(a, "--csv")) { NEED_VALUE(); O.csv_path = v; }
        else if (!strcmp(a, "--only")) {
            NEED_VALUE();
            if (O.nonly < (int)(sizeof O.only / sizeof *O.only)) O.only[O.nonly++] = v;
        }
        else if (!strcmp(a, "--run-as")) { NEED_VALUE(); O.run_as = v; }
        else if (!strcmp(a, "--emu-speed-args")) { NEED_VALUE(); O.emu_speed = v; }
        else if (!strcmp(a, "--base-cache")) { NEED_VALUE(); O.base_cache = v; }
        else if (!strcmp(a, "--mpirun")) {
            NEED_VALUE();
            if (!v[strspn(v, " ")]) { fprintf(stderr, "grade: --mpirun needs a command, e.g. 'mpirun --oversubscribe'\n"); exit(2); }
            O.mpirun = v;
        }
        else if (!strcmp(a, "--target")) {
            NEED_VALUE();
            if (strcmp(v, "cuda") && strcmp(v, "emu")) {
                fprintf(stderr, "grade: --target must be cuda or emu, not '%s'\n", v);
                exit(2);
            }
            snprintf(O.target, sizeof O.target, "%s", v);
        } else if (!strcmp(a, "--timeout") || !strcmp(a, "--seed") || !strcmp(a, "--jobs") || !strcmp(a, "--mem-mb") ||
                   !strcmp(a, "--parallel")) {
            NEED_VALUE();
            char *end;
            errno = 0;
            unsigned long long x = strtoull(v, &end, 10);
            if (errno || *end || end == v || v[0] == '-') {
                fprintf(stderr, "grade: %s expects a non-negative integer, got '%s'\n", a, v);
                exit(2);
            }
            if (!strcmp(a, "--timeout") && x == 0) {
                /* 0 used to mean "the rubric's" in silence; leaving the flag out says that. */
                fprintf(stderr, "grade: --timeout 0 is not a time limit: give seconds per test (at least 1), "
                                "or leave --timeout out for the rubric's\n");
                exit(2);
            }
            if (!strcmp(a, "--mem-mb") && x == 0) {
                fprintf(stderr, "grade: --mem-mb 0 is not a memory limit: give MiB per test (every course test "
                                "passes in 2048), or leave --mem-mb out for the default\n");
                exit(2);
            }
            if (!strcmp(a, "--parallel") && (x == 0 || x > 64)) {
                fprintf(stderr, "grade: --parallel %s: give how many submissions to grade at once, from 1 to 64 "
                                "(about the number of CPUs)\n", v);
                exit(2);
            }
            if (!strcmp(a, "--mem-mb") && x < 2048)
                fprintf(stderr, "grade: warning: --mem-mb %llu is below the 2048 MiB every course test is known to "
                                "pass in; a test that needs more fails as if the submission were wrong\n", x);
            if (!strcmp(a, "--timeout")) O.timeout_s = x > 86400 ? 86400 : (int)x;
            else if (!strcmp(a, "--jobs")) O.jobs = x < 1 ? 1 : x > 64 ? 64 : (int)x;
            else if (!strcmp(a, "--mem-mb")) O.mem_mb = (long long)x, O.mem_set = 1;
            else if (!strcmp(a, "--parallel")) O.parallel = (int)x;
            else { O.seed = x; O.seed_set = 1; }
        } else {
            fprintf(stderr, "grade: unknown option '%s'; see grade --help\n", a);
            exit(2);
        }
#undef NEED_VALUE
    }
    if (O.all && O.nlabs) {
        /* Which one was meant is a guess either way: grading every lab when
         * one was named wastes minutes, grading one when all were asked for
         * leaves labs out of the total. */
        fprintf(stderr, "grade: --all and --lab %s together: give --lab for some labs or --all for every lab, "
                        "not both (with make grade: LAB=NN, not --lab in GRADE_ARGS)\n", O.labs[0]);
        exit(2);
    }
    /* Flags that would be dropped in silence: each is refused, with what to
     * give instead, before anything is built. */
    if (O.batch && O.src_set) {
        fprintf(stderr, "grade: --batch %s grades every subfolder of it as one student's submission, so --src %s would "
                        "be ignored; give --batch DIR for a folder of submissions or --src DIR for one, not both\n",
                O.batch, O.src);
        exit(2);
    }
    if (O.csv_path && !O.batch) {
        fprintf(stderr, "grade: --csv %s writes one row per student of a batch, and needs --batch DIR; for one "
                        "submission read the table, or write Gradescope's results.json with --json FILE\n", O.csv_path);
        exit(2);
    }
    if (O.parallel > 1 && !O.batch) {
        fprintf(stderr, "grade: --parallel %d grades several submissions at once, so it needs --batch DIR; "
                        "one submission is graded one test at a time\n", O.parallel);
        exit(2);
    }
    if (O.parallel < 1) O.parallel = 1;
    /* The default limit assumes one test at a time on this machine. */
    if (O.parallel > 1 && !O.mem_set) {
        O.mem_mb /= O.parallel;
        if (O.mem_mb < 2048) O.mem_mb = 2048;
    }
    if (O.prepare && !O.base_cache) {
        fprintf(stderr, "grade: --prepare needs --base-cache DIR: it builds the course libraries there for later runs\n");
        exit(2);
    }
    if (O.prepare && (O.batch || O.json_path)) {
        fprintf(stderr, "grade: --prepare grades nothing, so %s would get nothing; leave it out\n",
                O.batch ? "--batch" : "--json");
        exit(2);
    }
}

/* ---- helpers -------------------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Random bytes from the kernel; falls back to time and pid (still fresh per run). */
static void random_bytes(void *buf, size_t n) {
    /* getrandom() first: it needs no file (a chroot or container without
     * /dev), so the guessable fallback below is a last resort only. */
    if (n <= 256 && getrandom(buf, n, 0) == (ssize_t)n) return;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t r = fd >= 0 ? read(fd, buf, n) : -1;
    if (fd >= 0) close(fd);
    if (r == (ssize_t)n) return;
    unsigned long long x = (unsigned long long)time(NULL) * 6364136223846793005ULL ^ (unsigned long long)getpid();
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        ((unsigned char *)buf)[i] = (unsigned char)(x >> 56);
    }
}

/* A fresh secret for one test: 32 hex digits. */
static void new_token(char out[33]) {
    unsigned char b[16];
    random_bytes(b, sizeof b);
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* Is there a real NVIDIA GPU? Same test as the Makefile's. */
static int have_gpu(void) {
    FILE *p = popen("nvidia-smi -L 2>/dev/null", "r");
    if (!p) return 0;
    char line[256];
    int found = 0;
    while (fgets(line, sizeof line, p)) found |= !strncmp(line, "GPU", 3);
    pclose(p);
    return found;
}

/* Does this machine show any sign of an NVIDIA GPU: one that nvidia-smi
 * lists, or a device node of the driver (/dev/nvidia0, ...; WSL's /dev/dxg)?
 * Not a test that CUDA can use it (CUDA_VISIBLE_DEVICES may hide it; a
 * container may have the device but not nvidia-smi), so the grader never
 * refuses --target cuda on it: it only says, when every check found no
 * device, whether the machine shows one, and a batch stops early only when
 * it shows none (a submission cannot add a GPU, so it cannot stop a batch). */
static int gpu_in_sight(void) {
    if (have_gpu() || access("/dev/dxg", F_OK) == 0) return 1;
    DIR *d = opendir("/dev");
    int found = 0;
    struct dirent *e;
    while (d && !found && (e = readdir(d)))
        found = !strncmp(e->d_name, "nvidia", 6) && isdigit((unsigned char)e->d_name[6]);
    if (d) closedir(d);
    return found;
}

static int find_program(const char *name, char *out, size_t n);

/* What the Makefile calls HAVE_CUDA: nvcc (on PATH, else in CUDA_HOME or
 * /usr/local/cuda) and the toolkit's headers beside it. A CUDA_HOME too long
 * for its paths to fit is said on stderr and is no toolkit: cut, the files
 * looked for would be others. */
static int have_cuda_toolkit(void) {
    char nvcc[PATH_MAX], hdr[PATH_MAX];
    const char *env = getenv("CUDA_HOME");
    const char *home = env && *env ? env : "/usr/local/cuda";
    const char *fix = "give CUDA_HOME a shorter path";
    int home_fits = path_fits(hdr, sizeof hdr, "look for the CUDA toolkit's headers at", fix,
                              "%s/include/cuda_runtime_api.h", home) == 0;
    if (find_program("nvcc", nvcc, sizeof nvcc) == 0) {
        if (home_fits && access(hdr, R_OK) == 0) return 1;
        char *slash = strrchr(nvcc, '/'); /* <home>/bin/nvcc */
        if (slash) *slash = 0;
        slash = strrchr(nvcc, '/');
        if (slash) *slash = 0;
        return path_fits(hdr, sizeof hdr, "look for the CUDA toolkit's headers at", "move the toolkit to a shorter "
                         "path", "%s/include/cuda_runtime_api.h", nvcc) == 0 && access(hdr, R_OK) == 0;
    }
    return home_fits && path_fits(nvcc, sizeof nvcc, "look for nvcc at", fix, "%s/bin/nvcc", home) == 0 &&
           access(nvcc, X_OK) == 0 && access(hdr, R_OK) == 0;
}

/* Replace every occurrence of `from` in s (in place) by `to` (not longer). */
static void replace_all(char *s, const char *from, const char *to) {
    size_t fl = strlen(from), tl = strlen(to);
    if (!fl || tl > fl) return;
    char *p = s;
    while ((p = strstr(p, from))) {
        memmove(p + tl, p + fl, strlen(p + fl) + 1);
        memcpy(p, to, tl);
        p += tl;
    }
}

/* Keep only printable text so a table or JSON never carries control bytes. */
static void sanitize(char *s) {
    for (unsigned char *p = (unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f) *p = '?';
}

/* The last `max` bytes of s, starting at a line, as a new string. */
static char *tail_lines(const char *s, size_t max) {
    size_t n = strlen(s);
    const char *p = n > max ? s + n - max : s;
    if (p != s) {
        const char *nl = strchr(p, '\n');
        if (nl) p = nl + 1;
    }
    return strdup(p);
}

/* One line of s that contains needle, without the part before and including
 * `after` when given; "" when none. */
static void find_line(const char *s, const char *needle, const char *after, char *out, size_t n) {
    out[0] = '\0';
    const char *p = strstr(s, needle);
    if (!p) return;
    const char *b = p;
    while (b > s && b[-1] != '\n') b--;
    const char *e = strchr(p, '\n');
    if (!e) e = p + strlen(p);
    if (after) {
        const char *a = strstr(b, after);
        if (a && a < e) b = a + strlen(after);
    }
    while (b < e && (*b == ' ' || *b == '\t')) b++;
    size_t len = (size_t)(e - b);
    if (len >= n) len = n - 1;
    memcpy(out, b, len);
    out[len] = '\0';
    sanitize(out);
}

/* ---- the environment of children --------------------------------------------- */

/* Build the allow-listed environment: nothing else from ours (tokens, CI
 * variables, MAKEFLAGS) reaches a child. extra is NULL-ended "K=V" strings. */
static char **child_env(const char *home, const char *const *extra) {
    /* CPATH and LIBRARY_PATH: where headers and libraries live on a machine that has them
     * outside the system folders (autograder/gpu_check.sh with common/tools/gpu_bundle.sh). */
    static const char *const allow[] = {"PATH", "LANG", "LC_ALL", "OMP_NUM_THREADS", "CUDA_HOME",
                                        "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "CPATH", "LIBRARY_PATH",
                                        NULL};
    extern char **environ;
    /* Room for every variable of ours and every extra one: a fixed count
     * dropped those past it without a word (a Slurm job has a hundred
     * SLURM_* variables). */
    size_t cap = 8, n = 0; /* PATH, HOME, TMPDIR, LANG and the NULL */
    for (char **e = environ; *e; e++) cap++;
    for (const char *const *x = extra; x && *x; x++) cap++;
    char **env = calloc(cap, sizeof *env);
    if (!env) return NULL;
    for (char **e = environ; *e; e++) {
        /* SIMT_*: the emulator's settings; OMPI_MCA_*: a cluster's Open MPI settings;
         * SLURM_*: the allocation that srun, as --mpirun, starts ranks in. */
        int ok = !strncmp(*e, "SIMT_", 5) || !strncmp(*e, "OMPI_MCA_", 9) || !strncmp(*e, "SLURM_", 6);
        for (const char *const *a = allow; *a; a++) {
            size_t l = strlen(*a);
            ok |= !strncmp(*e, *a, l) && (*e)[l] == '=';
        }
        if (ok) env[n++] = strdup(*e);
    }
    if (!getenv("PATH")) env[n++] = strdup("PATH=/usr/local/bin:/usr/bin:/bin");
    char buf[PATH_MAX + 16];
    snprintf(buf, sizeof buf, "HOME=%s", home);
    env[n++] = strdup(buf);
    snprintf(buf, sizeof buf, "TMPDIR=%s", home);
    env[n++] = strdup(buf);
    if (!getenv("LANG")) env[n++] = strdup("LANG=C.UTF-8");
    for (const char *const *x = extra; x && *x; x++) env[n++] = strdup(*x);
    env[n] = NULL;
    return env;
}

/* Environments are built per child; give each back. */
static void free_env(char **env) {
    for (char **e = env; e && *e; e++) free(*e);
    free(env);
}

/* ---- building ------------------------------------------------------------------- */

/* The words of a value with single spaces between them: "80  90a " is "80 90a". */
static void normalize_words(const char *s, char *out, size_t n) {
    size_t k = 0;
    for (const char *p = s; *p && k + 1 < n;) {
        if (isspace((unsigned char)*p)) { p++; continue; }
        if (k && k + 2 < n) out[k++] = ' ';
        while (*p && !isspace((unsigned char)*p) && k + 1 < n) out[k++] = *p++;
    }
    out[k] = '\0';
}

/* The architectures a GPU build compiles for, as make sees them: CUDA_ARCH
 * from the grader's environment when it is well formed (run_make passes it on
 * make's command line; make grade exports its own), else the default that
 * the tree's Makefile sets ("CUDA_ARCH ?= 80 90a"), read from the file. The
 * cache key hashes this value, not the environment's, so a direct call
 * without CUDA_ARCH and make grade, which passes the Makefile's default,
 * share a built base. from_env (when given) says which it was. */
static const char *cuda_arch(int *from_env) {
    static char arch[64], dflt[64];
    static int said, read_dflt;
    const char *ca = getenv("CUDA_ARCH");
    if (from_env) *from_env = 0;
    if (ca && *ca && strlen(ca) < 40 && strspn(ca, "0123456789abf ") == strlen(ca)) {
        normalize_words(ca, arch, sizeof arch);
        if (from_env) *from_env = 1;
        return arch;
    }
    if (ca && *ca && !said++)
        fprintf(stderr, "grade: ignoring CUDA_ARCH='%s' (expected numbers such as '90a' or '80 90a'); "
                        "building for the Makefile's default\n", ca);
    if (!read_dflt++) {
        char path[PATH_MAX + 16], line[1024];
        snprintf(path, sizeof path, "%s/Makefile", O.root);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f)) {
            if (strncmp(line, "CUDA_ARCH", 9)) continue;
            char *p = line + 9 + strspn(line + 9, " \t");
            if (!strncmp(p, "?=", 2) || !strncmp(p, ":=", 2)) p += 2;
            else if (*p == '=') p++;
            else continue;
            p[strcspn(p, "#")] = '\0';
            normalize_words(p, dflt, sizeof dflt);
            break;
        }
        if (f) fclose(f);
    }
    return dflt;
}

/* Run make in dir for one target (a path relative to dir); returns 0 on
 * success, log (relative paths) in *log (malloc'd). BUILD and the target are
 * relative because make cannot name a file whose path has a space in it, and
 * the course may sit in one ("/home/jane/GPU course"), as may its grade cache. A build of student files (as_student) runs as the
 * --run-as user like the tests: the compiler reads whatever a submission
 * #includes, and its errors are shown to the student, so as root it would
 * print root-only files. */
static int run_make(const char *dir, const char *target_path, int timeout_s, char **log, int as_student, int gpu) {
    char build[PATH_MAX + 8], tgt[16], jobs[16], home[PATH_MAX];
    snprintf(build, sizeof build, "BUILD=build");
    snprintf(tgt, sizeof tgt, "TARGET=%s", O.target);
    snprintf(jobs, sizeof jobs, "-j%d", O.jobs);
    /* Cut, the build's HOME would be a folder that is not there (or another one). */
    if (path_fits(home, sizeof home, "give the build the HOME", "set TMPDIR to a shorter path", "%s/home", tmp_root)) {
        *log = strdup("this run's folder is too long a path for the build's HOME; set TMPDIR to a shorter path");
        return -1;
    }
    /* CUDA_ARCH from the grader's environment (make grade passes its own) narrows the
     * GPU builds to the architectures of the grading machine: "90a" compiles once, not twice. */
    char arch[80] = "";
    int from_env;
    const char *ca = cuda_arch(&from_env);
    if (from_env) snprintf(arch, sizeof arch, "CUDA_ARCH=%s", ca);
    char *argv[] = {"/usr/bin/env", "make", "--no-print-directory", jobs, build, tgt, (char *)target_path,
                    arch[0] ? arch : NULL, NULL};
    char **env = child_env(home, NULL);
    sandbox_opts_t so = {0};
    so.timeout_s = timeout_s;
    so.fsize_bytes = 1LL << 30;
    /* A submission can make the compiler read forever (#include "/dev/zero"):
     * bound its memory too, as the tests' is by default (but at least 4 GiB:
     * a compiler's address space is larger than a test's). nvcc's tool chain
     * is left unbounded (untested). */
    long long build_mb = default_mem_mb() < 4096 ? 4096 : default_mem_mb();
    so.as_bytes = strcmp(O.target, "cuda") && !gpu ? build_mb << 20 : 0;
    so.out_cap = 256 << 10;
    so.out_kill = 64LL << 20;
    so.cwd = dir;
    so.env = env;
    if (as_student && O.run_as) {
        so.run_as = 1;
        so.uid = run_uid;
        so.gid = run_gid;
    }
    sandbox_result_t r;
    sandbox_run(argv, &so, &r);
    free_env(env);
    char prefix[PATH_MAX + 2];
    snprintf(prefix, sizeof prefix, "%s/", dir);
    replace_all(r.out, prefix, "");
    snprintf(prefix, sizeof prefix, "%s/", base_dir);
    replace_all(r.out, prefix, "");
    sanitize(r.out);
    int ok = r.exited && r.exit_code == 0 && !r.timed_out;
    if (r.timed_out) {
        size_t l = strlen(r.out) + 128;
        char *m = malloc(l);
        if (m) {
            snprintf(m, l, "%s\n(the build took longer than %d s and was stopped)\n", r.out, timeout_s);
            free(r.out);
            r.out = m;
        }
    }
    *log = r.out;
    r.out = NULL;
    sandbox_result_free(&r);
    return ok ? 0 : -1;
}

/* The emulator's compiler notes a lab file's code under #if on __CUDA_ARCH__
 * or __SIMT_EMULATOR__ (simtcc --memtrace: "f.cu:42: note: this line tests
 * __CUDA_ARCH__: ..."): the checks then ran another branch than a GPU runs.
 * Each such line of a build log becomes a warning in the notes, which a
 * build that succeeds would otherwise never show. */
static void forward_branch_notes(const char *log, const char *nn, char *notes, size_t notes_len) {
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *hit = strstr(line, ": note: this line tests ");
        if (hit && hit < line + len) {
            char w[1024];
            snprintf(w, sizeof w, "lab %s: warning: %.*s (only --target cuda tests the GPU's branch)\n", nn,
                     (int)len, line);
            fprintf(stderr, "grade: %s", w);
            snprintf(notes + strlen(notes), notes_len - strlen(notes), "%s", w);
        }
        line += len + (end != NULL);
    }
}

/* The first compiler error of a build log, for the table. */
static void first_error(const char *log, char *out, size_t n) {
    find_line(log, "error:", NULL, out, n);
    if (!out[0]) find_line(log, "Error", NULL, out, n);
    if (!out[0]) snprintf(out, n, "the build failed; see the output");
}

/* What the base copy leaves out of the grader's tree: every build folder
 * (build/, and build-debug/ or the like from make BUILD=...), hidden entries
 * (.git, .gpu-bundle: megabytes no lab builds from, which would be copied
 * and hashed on every run) and the solutions. */
static const char *const base_skip[] = {"build*", ".*", "solutions", NULL};

/* Copy the grader's tree into base_dir and build the libraries every lab
 * links. Student code never touches this step. */
static int build_base(void) {
    const char *const *skip = base_skip;
    if (tree_copy(O.root, base_dir, skip) != 0) {
        snprintf(base_log, sizeof base_log, "could not copy the course tree %s", O.root);
        return -1;
    }
    char tgt[32];
    snprintf(tgt, sizeof tgt, "grade-libs-%s", O.target);
    char *log = NULL;
    int rc = run_make(base_dir, tgt, 1800, &log, 0, 0);
    if (rc) snprintf(base_log, sizeof base_log, "%s", log ? log + (strlen(log) > 8000 ? strlen(log) - 8000 : 0) : "");
    free(log);
    return rc;
}

/* The base: built in this run's folder, or found in (or added to) --base-cache. */
static int prepare_base(void) {
    if (O.base_cache) return prepare_cached_base();
    /* Cut, the course tree would be copied into this run's folder itself, or beside it. */
    if (path_fits(base_dir, sizeof base_dir, "make the base copy", "set TMPDIR to a shorter path", "%s/base",
                  tmp_root) != 0) {
        snprintf(base_log, sizeof base_log, "this run's folder %s is too long a path for the course tree's copy; set "
                 "TMPDIR to a shorter path", tmp_root);
        return -1;
    }
    fprintf(stderr, "grade: building the course libraries for %s ...\n", O.target);
    return build_base();
}

/* ---- student files ---------------------------------------------------------------- */

/* Do two files hold the same bytes? */
static int same_contents(const char *a, const char *b) {
    int fa = open(a, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), fb = open(b, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    int same = fa >= 0 && fb >= 0;
    struct stat sa, sb;
    if (same) same = fstat(fa, &sa) == 0 && fstat(fb, &sb) == 0 && sa.st_size == sb.st_size;
    char ba[65536], bb[65536];
    while (same) {
        ssize_t ra = read(fa, ba, sizeof ba), rb = read(fb, bb, sizeof bb);
        if (ra != rb || ra < 0) same = 0;
        else if (ra == 0) break;
        else same = !memcmp(ba, bb, (size_t)ra);
    }
    if (fa >= 0) close(fa);
    if (fb >= 0) close(fb);
    return same;
}

/* Where a student file of a lab lives in the submission: DIR/NN-topic/f,
 * DIR/labs/NN-topic/f or DIR/f, the first of these that is there. Only
 * regular files count (no links). When others is given, it gets the copies
 * in the other layouts that lose to it, relative to DIR and ", "-separated
 * ("" when there are none), each saying whether it differs. */
static int find_student_file(const char *src, const char *lab, const char *f, char *out, size_t n, char *others,
                             size_t on) {
    char rel[3][PATH_MAX], path[PATH_MAX * 2];
    snprintf(rel[0], sizeof rel[0], "%s/%s", lab, f);
    snprintf(rel[1], sizeof rel[1], "labs/%s/%s", lab, f);
    snprintf(rel[2], sizeof rel[2], "%s", f);
    struct stat st;
    int found = 0;
    if (others) others[0] = '\0';
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", src, rel[i]);
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (!found++) {
            snprintf(out, n, "%s", path);
            if (!others) return 0;
        } else {
            snprintf(others + strlen(others), on - strlen(others), "%s%s (%s)", others[0] ? ", " : "", rel[i],
                     same_contents(out, path) ? "the same file" : "a different file");
        }
    }
    return found ? 0 : -1;
}

/* The lab's student files: the rubric's list when it has one, else every
 * file of labs/NN-topic/ that is not harness. */
static int student_files(const rubric_t *rb, char files[16][128]) {
    if (rb->nfiles == 0) return lab_student_files(O.root, rb->lab, files, 16);
    for (int i = 0; i < rb->nfiles; i++) snprintf(files[i], 128, "%s", rb->files[i]);
    return rb->nfiles;
}

/* ---- running one test ------------------------------------------------------------- */

/* With --run-as, the lab's copy (and the builds' HOME) belongs to that user
 * while a build of student files runs in it (on), and to root again before
 * any student code runs (off): student code may read its build but not
 * change anything in it. Only these two are taken back: nothing else of the
 * run's folder was the user's during the build but the earlier tests'
 * working folders, whose leftovers no build reads (and a test's code may
 * leave there what no chown can take, a path past 4096 bytes). 0, or -1
 * with why in msg (tree_chown said which entry on stderr): handed over in
 * part, the build would fail on files it cannot write and blame the
 * student; taken back in part, student code could change its own build.
 * Either way the lab is a grader error. */
static int student_build(const char *dir, int on, char *msg, size_t mn) {
    if (!O.run_as) return 0;
    char home[PATH_MAX + 8];
    snprintf(home, sizeof home, "%s/home", tmp_root); /* fits: tmp_root is shorter than PATH_MAX */
    uid_t uid = on ? run_uid : 0;
    gid_t gid = on ? run_gid : 0;
    /* Both, even when the first fails: what can be taken back is. */
    int dir_failed = tree_chown(dir, uid, gid) != 0, e = errno;
    int home_failed = tree_chown(home, uid, gid) != 0;
    if (dir_failed) errno = e;
    else if (!home_failed) return 0;
    const char *what = dir_failed ? dir : home;
    if (on)
        snprintf(msg, mn, "grader problem: could not hand %s to the --run-as user %s for the build (%s; the grader's "
                 "log names the entry); not graded", what, run_name, strerror(errno));
    else
        snprintf(msg, mn, "grader problem: could not take %s back from the --run-as user %s after the build (%s; the "
                 "grader's log names the entry), so student code could change its build; not run", what, run_name,
                 strerror(errno));
    return -1;
}

/* A private working folder for one child, empty and owned by the --run-as
 * user. 0, or -1 with why in msg: the grader, not the submission, fell short. */
static int make_workdir(char *out, size_t n, const char *nn, int number, const char *what, char *msg, size_t mn) {
    int fits = path_fits(out, n, "make the working folder", "set TMPDIR to a shorter path", "%s/run/%s-%s-%d",
                         tmp_root, nn, what, number) == 0;
    /* Empty: in a batch the same test of an earlier student ran here, and its
     * code may have left anything (a file the next one's code reads, one in
     * the place of its bench's JSON). */
    if (fits) {
        tree_remove(out);
        struct stat st;
        if (lstat(out, &st) == 0) { /* an entry tree_remove could not take away (chattr +i, a mount) */
            snprintf(msg, mn, "grader problem: could not empty the test's working folder %s, which an earlier "
                     "test left; not run (remove it by hand, and grade without it)", out);
            return -1;
        }
    }
    if (!fits || mkdirs(out, 0755) != 0) {
        snprintf(msg, mn, "grader problem: could not make the test's working folder %s (%s); not run", out,
                 strerror(errno));
        return -1;
    }
    if (O.run_as && tree_chown(out, run_uid, run_gid) != 0) {
        snprintf(msg, mn, "grader problem: could not hand the test's working folder %s to the --run-as user %s (%s); "
                 "not run", out, run_name, strerror(errno));
        return -1;
    }
    return 0;
}

/* A test's working folder once the test is over (but with --keep): what
 * its code left there (a disk filled with files of 256 MiB each, thousands
 * of them) is gone before the next build, which is another student's in a
 * batch. Best effort: make_workdir checks the folder is empty before it is
 * used again. */
static void drop_workdir(const char *wd) {
    if (!O.keep) tree_remove(wd);
}

/* A test the grader could not run for a fault of its own: a grader error
 * that says what failed, and the run's exit status 1. */
static void grader_failed(result_t *res, const char *msg) {
    res->status = ST_ERROR;
    res->score = 0;
    if (msg != res->message) snprintf(res->message, sizeof res->message, "%s", msg);
    if (!lab_trouble[0]) snprintf(lab_trouble, sizeof lab_trouble, "%s", res->message);
    grader_trouble = 1;
}

/* The wall-clock limit of one run of test t: the bench's or the check's. */
static int run_timeout_s(const rubric_test_t *t, int bench) {
    if (O.timeout_s) return O.timeout_s;
    if (t->timeout_s) return t->timeout_s;
    return bench ? 300 : 120;
}

/* Limits of one test. */
static void test_limits(sandbox_opts_t *so, const rubric_test_t *t) {
    so->timeout_s = run_timeout_s(t, 0);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    so->cpu_s = (long)so->timeout_s * (ncpu < 1 ? 1 : ncpu) + 10;
    /* The CUDA driver reserves far more address space than it uses. */
    so->as_bytes = strcmp(O.target, "cuda") ? O.mem_mb << 20 : 0;
    so->fsize_bytes = 256LL << 20;
    so->out_cap = 64 << 10;
    so->out_kill = 32LL << 20;
    so->run_as = O.run_as != NULL;
    so->uid = run_uid;
    so->gid = run_gid;
}

/* ---- tests on several ranks --------------------------------------------------------- */

/* A program's path: name itself when it holds a slash, else its first match
 * on PATH, of any length. A candidate that does not fit out's n bytes
 * (PATH_MAX: no program can run from it) is passed over, as execvp would:
 * cut, it would name another file. */
static int find_program(const char *name, char *out, size_t n) {
    if (strchr(name, '/')) {
        int len = snprintf(out, n, "%s", name);
        if (len < 0 || (size_t)len >= n) {
            errno = ENAMETOOLONG;
            return -1;
        }
        return access(out, X_OK);
    }
    const char *path = getenv("PATH");
    char *dirs = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    int rc = -1;
    for (char *save = NULL, *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d && rc; d = strtok_r(NULL, ":", &save)) {
        int len = snprintf(out, n, "%s/%s", *d ? d : ".", name);
        rc = len >= 0 && (size_t)len < n && access(out, X_OK) == 0 ? 0 : -1;
    }
    free(dirs);
    return rc;
}

/* How a test's program starts: by itself, or for a test on several ranks
 * under the words of --mpirun, with "{n}" in them replaced by N, or "-np N"
 * added when there is none (srun wants "-n {n}"). The caller appends the
 * program's own arguments and the final NULL. */
typedef struct {
    char words[1024];   /* --mpirun, split in place */
    char subst[8][64];  /* words with "{n}" replaced */
    char path[PATH_MAX]; /* the launcher's path */
    char np[16];
    char *argv[96];
    int argc;
    int ranks;          /* 0: no launcher */
    char channel[48];   /* the abstract socket's name */
    char env_channel[64];
    char env_wait[48];  /* COMM_TIMEOUT=S for the ranks */
} launch_t;

/* Fill L for test t and program prog; -1 with a message when the launcher is missing. */
static int launch_prepare(launch_t *L, const rubric_test_t *t, const char *prog, char *err, size_t errlen) {
    memset(L, 0, sizeof *L);
    if (t->ranks > 1) {
        snprintf(L->words, sizeof L->words, "%s", O.mpirun);
        for (char *save = NULL, *w = strtok_r(L->words, " ", &save); w && L->argc < 80; w = strtok_r(NULL, " ", &save))
            L->argv[L->argc++] = w;
        if (find_program(L->argv[0], L->path, sizeof L->path) != 0) {
            snprintf(err, errlen, "this test runs on %d MPI ranks, but '%s' (the --mpirun command) was not found; "
                                  "install Open MPI (sudo apt-get install openmpi-bin) or pass --mpirun", t->ranks,
                     L->argv[0]);
            return -1;
        }
        L->argv[0] = L->path;
        snprintf(L->np, sizeof L->np, "%d", t->ranks);
        int placed = 0;
        for (int i = 1; i < L->argc; i++) {
            char *at = strstr(L->argv[i], "{n}");
            if (!at || placed >= 8) continue;
            snprintf(L->subst[placed], sizeof L->subst[placed], "%.*s%s%s", (int)(at - L->argv[i]), L->argv[i], L->np,
                     at + 3);
            L->argv[i] = L->subst[placed++];
        }
        if (!placed) {
            L->argv[L->argc++] = "-np";
            L->argv[L->argc++] = L->np;
        }
        L->ranks = t->ranks;
        char name[33];
        new_token(name); /* not the token: the name is in the ranks' environment */
        snprintf(L->channel, sizeof L->channel, "course-grade-%s", name);
        snprintf(L->env_channel, sizeof L->env_channel, "GRADE_CHANNEL=%s", L->channel);
    }
    L->argv[L->argc++] = (char *)prog;
    return 0;
}

/* The environment entries a launch adds to a child's, after the caller's
 * own (NULL-ended, at most 8 in all). For ranks: the channel's name; the
 * communicator's watchdog (common/comm.h) at half the run's time limit, so
 * that ranks which wait for each other for ever (a deadlock) say in which
 * calls before the limit stops them; and, unless the grader's environment
 * sets them, Open MPI kept to shared memory on this machine (no network
 * interfaces, no cross-process copies a container may forbid), and allowed
 * to run as root when the grader is root without --run-as (as in CI). */
static void launch_env(launch_t *L, const char **extra, int n_given, int timeout_s) {
    int n = n_given;
    if (L->ranks) {
        static const char *const defaults[] = {"OMPI_MCA_btl=self,vader",
                                               "OMPI_MCA_btl_vader_single_copy_mechanism=none", NULL};
        extra[n++] = L->env_channel;
        snprintf(L->env_wait, sizeof L->env_wait, "COMM_TIMEOUT=%d", timeout_s / 2 > 1 ? timeout_s / 2 : 1);
        extra[n++] = L->env_wait;
        for (const char *const *d = defaults; *d; d++) {
            char key[64];
            snprintf(key, sizeof key, "%.*s", (int)(strchr(*d, '=') - *d), *d);
            if (!getenv(key)) extra[n++] = *d;
        }
        if (geteuid() == 0 && !O.run_as) {
            extra[n++] = "OMPI_ALLOW_RUN_AS_ROOT=1";
            extra[n++] = "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
        }
    }
    extra[n] = NULL;
}

/* A test on several ranks passes only if every rank sent the verdict want.
 * Returns the rank the result is about, its verdict in v: the first rank
 * that sent another verdict (a failed check); else the first that sent none
 * ("" in v). A rank that fails ends the job, so mpirun may stop the others
 * before they report: their silence is the failure's effect, not its
 * cause. -1 when every rank sent want. */
static void find_verdict(const char *report, const char *token, char *out, size_t n);
static int rank_verdicts(const sandbox_result_t *r, const char *token, int ranks, const char *want, char *v,
                         size_t n) {
    int silent = -1;
    for (int k = 0; k < ranks; k++) {
        find_verdict(r->rank_report[k], token, v, n);
        if (v[0] && strcmp(v, want)) return k;
        if (!v[0] && silent < 0) silent = k;
    }
    snprintf(v, n, "%s", silent < 0 ? want : "");
    return silent;
}

/* The ranks that sent no verdict, as "0, 2, 3". */
static void silent_ranks(const sandbox_result_t *r, const char *token, int ranks, char *out, size_t n) {
    out[0] = '\0';
    char v[256];
    for (int k = 0; k < ranks; k++) {
        find_verdict(r->rank_report[k], token, v, sizeof v);
        if (!v[0]) snprintf(out + strlen(out), n - strlen(out), "%s%d", out[0] ? ", " : "", k);
    }
}

/* Look for "<token> <word> ..." in what came back on the channel. Lines
 * without the token (anything the student's code wrote there) are ignored.
 * Returns the rest of the line after the token in out, or "" when none. */
static void find_verdict(const char *report, const char *token, char *out, size_t n) {
    out[0] = '\0';
    size_t tl = strlen(token);
    for (const char *p = report; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > tl && !strncmp(p, token, tl) && p[tl] == ' ') {
            size_t m = len - tl - 1;
            if (m >= n) m = n - 1;
            memcpy(out, p + tl + 1, m);
            out[m] = '\0';
            return;
        }
        p = e ? e + 1 : NULL;
    }
}

/* What a dead child with no verdict means. */
static void no_verdict(result_t *res, const sandbox_result_t *r, int timeout_s) {
    if (r->timed_out) {
        res->status = ST_TIMEOUT;
        snprintf(res->message, sizeof res->message, "no result after %d s (an infinite loop or a deadlock?); stopped", timeout_s);
    } else if (r->output_killed) {
        res->status = ST_FAIL;
        snprintf(res->message, sizeof res->message, "printed more than %lld MB; stopped", r->out_total >> 20);
    } else if (r->signaled) {
        res->status = ST_CRASH;
        snprintf(res->message, sizeof res->message, "killed by signal %d (%s)", r->sig, strsignal(r->sig));
    } else if (r->not_started) {
        /* The sandbox's own word (its start pipe), not a guess from exit
         * code 127: a program may exit 127 without a word itself. */
        res->status = ST_ERROR;
        if (r->start_errno)
            snprintf(res->message, sizeof res->message, "the grader could not start the test program (%s)",
                     strerror(r->start_errno));
        else
            snprintf(res->message, sizeof res->message, "the grader could not start the test program");
    } else {
        res->status = ST_CRASH;
        snprintf(res->message, sizeof res->message, "the program ended (exit code %d) without the check's verdict",
                 r->exited ? r->exit_code : -1);
    }
}

/* Attach the child's output (tail) to the result for the student to read. */
static void attach_output(result_t *res, const sandbox_result_t *r) {
    char *t = tail_lines(r->out, 6000);
    if (!t) return;
    sanitize(t);
    free(res->output);
    res->output = t;
}

/* Run a prepared launch with the test's limits in wd, then free env. A bench
 * gets 300 s unless told otherwise and no CPU limit (it may run long on
 * purpose). */
static void launch_run(const launch_t *L, const rubric_test_t *t, int bench, const char *wd, char **env,
                       const char *token, sandbox_opts_t *so, sandbox_result_t *r) {
    memset(so, 0, sizeof *so);
    test_limits(so, t);
    so->timeout_s = run_timeout_s(t, bench);
    if (bench) so->cpu_s = 0;
    so->cwd = wd;
    so->env = env;
    so->token = token;
    so->ranks = L->ranks;
    so->channel = L->channel;
    sandbox_run(L->argv, so, r);
    free_env(env);
}

/* What a verdict line v (or its absence, "") means for a numerics test. */
static void judge_numerics(result_t *res, const char *v, const sandbox_result_t *r, int timeout_s) {
    const rubric_test_t *t = res->t;
    char want[160];
    snprintf(want, sizeof want, "PASS %s", t->check);
    if (!v[0]) {
        no_verdict(res, r, timeout_s);
    } else if (!strcmp(v, want) && r->exited && r->exit_code == 0) {
        res->status = ST_PASS;
        res->score = t->points;
    } else if (!strncmp(v, "SKIP ", 5)) {
        res->status = ST_SKIPPED;
        if (t->may_skip) {
            /* Legitimately not runnable here (the rubric says so): out of the total. */
            res->counted = 0;
            find_line(r->out, "Hopper", NULL, res->message, sizeof res->message);
            if (!res->message[0]) snprintf(res->message, sizeof res->message, "not runnable on this machine; left out of the total");
        } else {
            snprintf(res->message, sizeof res->message, "the check skipped itself (no device to run kernels?)");
        }
    } else if (!strncmp(v, "NOTFOUND ", 9)) {
        res->status = ST_ERROR;
        snprintf(res->message, sizeof res->message, "the lab's checks have no test '%s' (rubric out of date)", t->check);
    } else if (!strcmp(v, want)) {
        /* Every rank passed, yet the launcher failed (MPI_Finalize, mpirun itself). */
        res->status = ST_FAIL;
        snprintf(res->message, sizeof res->message, "every rank passed, but mpirun ended with %s %d",
                 r->exited ? "exit code" : "signal", r->exited ? r->exit_code : r->sig);
    } else {
        /* cmocka catches a signal raised inside a test (a bad pointer, an
         * abort()), prints "Test failed with exception: Segmentation
         * fault(11)" and fails the test, so the process still reports FAIL.
         * That is told apart from a wrong number, since a student debugs it
         * another way. (The line is the child's output and could be forged,
         * but it only relabels a failed test: both earn nothing.) */
        char sig[sizeof res->message - 32];
        find_line(r->out, "Test failed with exception: ", "Test failed with exception: ", sig, sizeof sig);
        res->status = sig[0] ? ST_CRASH : strstr(r->out, "not implemented") ? ST_NOT_STARTED : ST_FAIL;
        if (sig[0]) snprintf(res->message, sizeof res->message, "crashed inside the check: %s", sig);
        /* cmocka prints a failed check's message as "ERROR: ...". */
        else find_line(r->out, "ERROR: ", "ERROR: ", res->message, sizeof res->message);
        /* A fault fails the check with "returned 'launch failed' ... the
         * device reports ..."; what faulted, and at which line, is in the
         * emulator's own line before it: show that, without the address
         * (the table keeps the first 100 characters). */
        char diag[sizeof res->message - 32] = "";
        const char *simt_line = strstr(res->message, "returned 'launch failed'") ? strstr(r->out, "\nsimt: ") : NULL;
        if (simt_line) find_line(simt_line + 1, "simt: ", "simt: ", diag, sizeof diag);
        if (diag[0]) {
            char *at = strstr(diag, " at 0x"), *comma = at ? strchr(at, ',') : NULL;
            if (comma) memmove(at, comma, strlen(comma) + 1);
            snprintf(res->message, sizeof res->message, "the emulator says: %s", diag);
        }
        if (!res->message[0]) find_line(r->out, "[  ERROR   ] --- ", "--- ", res->message, sizeof res->message);
        if (!res->message[0]) snprintf(res->message, sizeof res->message, "the check failed; see the output");
    }
}

/* Ranks that waited for each other until the communicator's watchdog ended
 * the job (COMM_TIMEOUT, set by launch_env): each waiting rank printed
 * "[rank R/N] comm: COMM_TIMEOUT: <call> (...) has waited S s ...". Turns
 * those lines into one message, "rank 0 in comm_recv from rank 3; rank 1 in
 * ...", which is where the ranks' sequences of calls parted. The lines are
 * the child's output and could be forged, but they only relabel a run that
 * has no verdict anyway: it earns nothing either way. 0 when there are none. */
static int deadlock_report(const char *out, char *msg, size_t n) {
    static const char mark[] = "] comm: COMM_TIMEOUT: ";
    int found = 0;
    double waited = 0;
    char calls[768] = "";
    for (const char *p = out ? strstr(out, mark) : NULL; p; p = strstr(p + 1, mark)) {
        const char *bol = p;
        while (bol > out && bol[-1] != '\n') bol--;
        int rank = -1, size = 0;
        if (sscanf(bol, "[rank %d/%d", &rank, &size) != 2) continue;
        const char *call = p + strlen(mark), *eol = strchr(call, '\n');
        const char *w = strstr(call, " has waited ");
        if (!w || (eol && w > eol)) continue;
        /* The call's name and peer, up to its " (...)"; a collective keeps its number. */
        const char *paren = memchr(call, '(', (size_t)(w - call));
        const char *end = paren && paren > call && paren[-1] == ' ' ? paren - 1 : w;
        char num[32] = "";
        long k;
        if (paren && sscanf(paren, "(collective number %ld", &k) == 1) snprintf(num, sizeof num, " (collective %ld)", k);
        size_t used = strlen(calls);
        snprintf(calls + used, sizeof calls - used, "%srank %d in %.*s%s", found ? "; " : "", rank,
                 (int)(end - call > 80 ? 80 : end - call), call, num);
        if (!found) waited = atof(w + strlen(" has waited "));
        found++;
    }
    if (!found) return 0;
    snprintf(msg, n, "deadlock: the ranks waited for each other for %.0f s and were stopped: %s", waited, calls);
    sanitize(msg);
    return 1;
}

/* A test on several ranks: say which rank the result is about. A rank with
 * no verdict gets mpirun's account of it when there is one ("noticed that
 * process rank 1 ... exited on signal 11"); a timeout lists every silent rank. */
static void blame_rank(result_t *res, const sandbox_result_t *r, const char *token, int ranks, int bad,
                       const char *v) {
    char msg[sizeof res->message];
    if (r->timed_out) {
        char silent[256];
        silent_ranks(r, token, ranks, silent, sizeof silent);
        snprintf(msg, sizeof msg, "%s; no verdict from rank%s %s of %d", res->message, strchr(silent, ',') ? "s" : "",
                 silent, ranks);
    } else if (!v[0]) {
        /* Open MPI: "mpirun noticed that process rank 1 with PID 0 on node x exited on signal 9 (Killed)." */
        char seen[256];
        find_line(r->out, "noticed that process rank ", "noticed that process rank ", seen, sizeof seen);
        const char *how = strstr(seen, " exited ");
        int dead = -1;
        if (seen[0] && sscanf(seen, "%d", &dead) == 1 && dead >= 0 && dead < ranks && how)
            snprintf(msg, sizeof msg, "rank %d of %d ended without a verdict: it%s", dead, ranks, how);
        else
            snprintf(msg, sizeof msg, "rank %d of %d: %s", bad, ranks, res->message);
    } else {
        /* The check's own message may name the rank already. */
        char named[48];
        snprintf(named, sizeof named, "rank %d of %d", bad, ranks);
        snprintf(msg, sizeof msg, "%s%s%s", strstr(res->message, named) ? "" : named,
                 strstr(res->message, named) ? "" : ": ", res->message);
    }
    snprintf(res->message, sizeof res->message, "%s", msg);
}

/* The check program's bytes as built, held in the grader's memory, where
 * no test can change them. Each numerics test runs the program from the
 * lab's copy, which a test's code running as the grader's user (no
 * --run-as) could rewrite for the tests after it: one that swapped in a
 * script, which reads the token of its own run, would pass every later
 * test. So before each test the file must still hold these bytes. */
typedef struct {
    char *bytes;
    size_t len;
} built_program_t;

static void program_keep(built_program_t *p, const char *path) {
    memset(p, 0, sizeof *p);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && st.st_size > 0 && (p->bytes = malloc((size_t)st.st_size))) {
        p->len = fread(p->bytes, 1, (size_t)st.st_size, f);
        if (p->len != (size_t)st.st_size) free(p->bytes), p->bytes = NULL, p->len = 0;
    }
    fclose(f);
}

/* 1 when path holds exactly the kept bytes (or none were kept). */
static int program_unchanged(const built_program_t *p, const char *path) {
    if (!p->bytes) return 1;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char buf[1 << 16];
    size_t at = 0, k;
    int same = 1;
    while (same && (k = fread(buf, 1, sizeof buf, f)) > 0) {
        same = at + k <= p->len && !memcmp(buf, p->bytes + at, k);
        at += k;
    }
    fclose(f);
    return same && at == p->len;
}

/* One numerics test: the graded check program runs only this cmocka test,
 * itself or on the rubric's number of ranks. */
static void run_numerics(const char *check_bin, const char *nn, result_t *res) {
    const rubric_test_t *t = res->t;
    char token[33], wd[PATH_MAX], seed[32], gt[160];
    launch_t L;
    if (launch_prepare(&L, t, check_bin, res->message, sizeof res->message) != 0) {
        res->status = ST_ERROR;
        res->counted = 0; /* the grading machine fell short, not the submission */
        return;
    }
    new_token(token);
    if (make_workdir(wd, sizeof wd, nn, res->number, "check", res->message, sizeof res->message) != 0) {
        grader_failed(res, res->message);
        return;
    }
    snprintf(seed, sizeof seed, "%llu", O.seed);
    snprintf(gt, sizeof gt, "GRADE_TEST=%s", t->check);
    const char *extra[12] = {gt};
    launch_env(&L, extra, 1, run_timeout_s(t, 0));
    char **env = child_env(wd, extra);
    L.argv[L.argc++] = "--seed";
    L.argv[L.argc++] = seed;
    L.argv[L.argc] = NULL;
    sandbox_opts_t so;
    sandbox_result_t r;
    launch_run(&L, t, 0, wd, env, token, &so, &r);
    snprintf(res->figure, sizeof res->figure, "%.2f s", r.wall_s);
    char v[256], want[160];
    snprintf(want, sizeof want, "PASS %s", t->check);
    if (L.ranks && r.channel_problem[0]) {
        /* Something besides the ranks' harness used the channel: the one way
         * a submission could try to learn the token. */
        res->status = ST_FAIL;
        snprintf(res->message, sizeof res->message, "the verdict channel was tampered with: %s", r.channel_problem);
    } else if (L.ranks) {
        int bad = rank_verdicts(&r, token, L.ranks, want, v, sizeof v);
        judge_numerics(res, v, &r, so.timeout_s);
        if (bad >= 0 && !v[0] && deadlock_report(r.out, res->message, sizeof res->message))
            res->status = ST_TIMEOUT;
        else if (bad >= 0)
            blame_rank(res, &r, token, L.ranks, bad, v);
    } else {
        find_verdict(r.report, token, v, sizeof v);
        judge_numerics(res, v, &r, so.timeout_s);
    }
    if (res->status != ST_PASS) attach_output(res, &r);
    sandbox_result_free(&r);
    drop_workdir(wd);
}

/* One run of a lab's bench, kept for the lab's later speed tests with the
 * same arguments and ranks: a matmul bench times the whole ladder in one
 * run (lab 04's two speed tests read two rows of the same 8192^3 table), so
 * running it again would only spend the GPU's time. */
typedef struct {
    char args[256];   /* the arguments it ran with */
    int ranks;
    char by[96];      /* the speed test that ran it */
    char *json;       /* the JSON it wrote, from its verdict; NULL when it gave none */
    result_t failed;  /* without a verdict: the status and message its test got */
    char *output;     /* its output's tail */
} bench_run_t;

/* The arguments a speed test's bench runs with: the rubric's, or on the
 * emulator --emu-speed-args. */
static const char *bench_args_of(const rubric_test_t *t) {
    return O.emu_speed && strcmp(O.target, "cuda") ? O.emu_speed : t->bench_args;
}

/* One speed test: the graded bench program, its JSON through the channel,
 * turned into points by speed.c (a kernel's ratio to the baseline, or an
 * absolute metric such as MFU). What the run gave is kept in *run. */
static void run_speed(const char *bench_bin, const char *nn, result_t *res, bench_run_t *run) {
    const rubric_test_t *t = res->t;
    char token[33], wd[PATH_MAX], jpath[PATH_MAX + 16], jenv[PATH_MAX + 32];
    launch_t L;
    if (launch_prepare(&L, t, bench_bin, res->message, sizeof res->message) != 0) {
        res->status = ST_ERROR;
        res->counted = 0;
        return;
    }
    new_token(token);
    if (make_workdir(wd, sizeof wd, nn, res->number, "bench", res->message, sizeof res->message) != 0) {
        grader_failed(res, res->message);
        return;
    }
    snprintf(jpath, sizeof jpath, "%s/bench.json", wd);
    snprintf(jenv, sizeof jenv, "GRADE_BENCH_JSON=%s", jpath);
    const char *extra[12] = {jenv};
    launch_env(&L, extra, 1, run_timeout_s(t, 1));
    char **env = child_env(wd, extra);
    L.argv[L.argc++] = "--json";
    L.argv[L.argc++] = jpath;
    char args[sizeof t->bench_args];
    snprintf(args, sizeof args, "%s", bench_args_of(t));
    for (char *s = strtok(args, " "); s && L.argc < 94; s = strtok(NULL, " ")) L.argv[L.argc++] = s;
    L.argv[L.argc] = NULL;
    sandbox_opts_t so;
    sandbox_result_t r;
    launch_run(&L, t, 1, wd, env, token, &so, &r);
    /* On several ranks the figures are rank 0's (the bench writes its JSON there). */
    const char *rep = L.ranks ? r.rank_report[0] : r.report;
    char *v = malloc(strlen(rep) + 1);
    if (v) find_verdict(rep, token, v, strlen(rep) + 1);
    if (L.ranks && r.channel_problem[0]) {
        res->status = ST_FAIL;
        snprintf(res->message, sizeof res->message, "the verdict channel was tampered with: %s", r.channel_problem);
    } else if (!v || !v[0] || strncmp(v, "BENCH ", 6)) {
        no_verdict(res, &r, so.timeout_s);
        if (L.ranks && deadlock_report(r.out, res->message, sizeof res->message))
            res->status = ST_TIMEOUT;
        else if (L.ranks)
            blame_rank(res, &r, token, L.ranks, 0, "");
    } else {
        /* "BENCH <exit code> <the JSON the bench wrote, on one line>" */
        const char *js = strchr(v + 6, ' ');
        speed_score(res, js ? js + 1 : NULL, strcmp(O.target, "cuda") != 0);
        if (js) run->json = strdup(js + 1);
    }
    free(v);
    if (!run->json) run->failed = *res;
    run->output = tail_lines(r.out, 6000);
    if (run->output) sanitize(run->output);
    if (res->status != ST_PASS) attach_output(res, &r);
    sandbox_result_free(&r);
    drop_workdir(wd);
}

/* A speed test whose bench already ran with its arguments: scored from that
 * run's JSON (or given its failure), and its output says which run it was. */
static void reuse_speed(const bench_run_t *run, result_t *res) {
    if (run->json) {
        speed_score(res, run->json, strcmp(O.target, "cuda") != 0);
    } else {
        res->status = run->failed.status;
        res->counted = run->failed.counted;
        res->score = run->failed.score;
        snprintf(res->message, sizeof res->message, "%s", run->failed.message);
    }
    char head[160];
    snprintf(head, sizeof head, "(from the benchmark run of '%s', which had the same arguments)\n", run->by);
    size_t n = strlen(head) + (run->output && res->status != ST_PASS ? strlen(run->output) : 0) + 1;
    free(res->output);
    res->output = malloc(n);
    if (res->output)
        snprintf(res->output, n, "%s%s", head, run->output && res->status != ST_PASS ? run->output : "");
}

/* ---- one lab ------------------------------------------------------------------------- */

/* Does this rubric test pass the --only filter? */
static int selected(const rubric_test_t *t) {
    if (!O.nonly) return 1;
    /* Whole names only: check names may contain commas ("mma: 1x1x1, K = 1"). */
    for (int i = 0; i < O.nonly; i++)
        if (!strcmp(O.only[i], t->check) || !strcmp(O.only[i], t->kernel) || !strcmp(O.only[i], t->name)) return 1;
    return 0;
}

/* Append one short reason to why ("; "-separated), as "lab NN: " + the text
 * when label is set (a batch of several labs), else the text alone. why is
 * what a batch's console line and CSV say about a score that is not what the
 * submission earned by its code: a build error, no student files. */
static void add_why(char *why, size_t wn, const char *nn, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add_why(char *why, size_t wn, const char *nn, const char *fmt, ...) {
    if (!why || !wn) return;
    size_t l = strlen(why);
    if (l) l += (size_t)snprintf(why + l, wn - l, "; ");
    if (nn && l < wn) l += (size_t)snprintf(why + l, wn - l, "lab %s: ", nn);
    if (l >= wn) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + l, wn - l, fmt, ap);
    va_end(ap);
    sanitize(why);
    for (char *c = why; *c; c++)
        if (*c == '\n' || *c == '\t') *c = ' ';
    /* gcc quotes with U+2018 and U+2019 under a UTF-8 locale (the grader's
     * children get C.UTF-8): a spreadsheet that opens the CSV as Latin-1
     * would show them as three odd characters each, so they become ' here. */
    char *o = why;
    for (const char *c = why; *c;) {
        if ((unsigned char)c[0] == 0xe2 && (unsigned char)c[1] == 0x80 &&
            ((unsigned char)c[2] == 0x98 || (unsigned char)c[2] == 0x99)) {
            *o++ = '\'';
            c += 3;
        } else {
            *o++ = *c++;
        }
    }
    *o = '\0';
}

/* Grade one lab of one submission, appending to res. Returns the count.
 * why gets a short reason (add_why) when the lab did not build or the
 * submission held none of its files (unless the caller says that for the
 * whole submission: lab_empty_known); labelled with the lab when label_lab. */
static int grade_lab(const char *src, const rubric_t *rb, result_t *res, char *notes, size_t notes_len, char *why,
                     size_t wn, int label_lab, int lab_empty_known) {
    const char *label = label_lab ? rb->nn : NULL;
    int n = 0;
    lab_trouble[0] = '\0';
    for (int i = 0; i < rb->ntests; i++) {
        if (!selected(&rb->tests[i])) continue;
        result_t *x = &res[n++];
        memset(x, 0, sizeof *x);
        x->t = &rb->tests[i];
        snprintf(x->lab, sizeof x->lab, "%s", rb->lab);
        snprintf(x->nn, sizeof x->nn, "%s", rb->nn);
        x->number = i + 1;
        x->max_score = rb->tests[i].points;
        x->counted = 1;
        x->measured = -1;
        x->status = ST_ERROR;
    }
    if (!base_ok) {
        for (int i = 0; i < n; i++) {
            snprintf(res[i].message, sizeof res[i].message, "the course libraries did not build (grader problem)");
            res[i].output = strdup(base_log);
        }
        return n;
    }
    /* The lab's private copy: the base with its libraries, plus student files. */
    char dir[PATH_MAX], from[PATH_MAX], to[PATH_MAX * 2], b1[PATH_MAX], b2[PATH_MAX];
    static const char *const skip[] = {"build", NULL};
    /* Cut, the lab's copy would go to (and be removed from) another folder. */
    const char *fix = "set TMPDIR (or --base-cache) to a shorter path";
    int fits = !path_fits(dir, sizeof dir, "copy the lab into", fix, "%s/lab-%s", tmp_root, rb->nn) &&
               !path_fits(b1, sizeof b1, "copy", fix, "%s/build", base_dir) &&
               !path_fits(b2, sizeof b2, "copy into", fix, "%s/build", dir);
    if (fits) tree_remove(dir);
    /* A copy that failed (stderr names the entry and why: a disk full, a path
     * too long under this run's folder) is the grader's fault: no test runs,
     * and the run's exit status is 1, as for any grader error. */
    char trouble[sizeof res->message];
    if (!fits || tree_copy(base_dir, dir, skip) || tree_copy(b1, b2, NULL)) {
        snprintf(trouble, sizeof trouble, "grader problem: could not copy the course tree into the lab's private "
                 "copy (the grader's output says which entry and why); not run");
        for (int i = 0; i < n; i++) grader_failed(&res[i], trouble);
        add_why(why, wn, label, "grader error: %s", lab_trouble);
        if (fits && !O.keep) tree_remove(dir); /* not a cut name: that is another folder */
        return n;
    }
    refresh_student_files(dir);
    char files[16][128];
    int nf = student_files(rb, files);
    if (nf < 0) { /* stderr said which path: the lab cannot be told from its starter */
        snprintf(trouble, sizeof trouble, "grader problem: could not list the lab's student files: the course "
                 "tree's path is too long; not run");
        for (int i = 0; i < n; i++) grader_failed(&res[i], trouble);
        add_why(why, wn, label, "grader error: %s", lab_trouble);
        if (!O.keep) tree_remove(dir);
        return n;
    }
    char missing[512] = "";
    int nmissing = 0, nsame = 0; /* files not submitted; submitted as the starter has them */
    for (int f = 0; f < nf; f++) {
        snprintf(to, sizeof to, "%s/labs/%s/%s", dir, rb->lab, files[f]);
        char others[PATH_MAX];
        if (find_student_file(src, rb->lab, files[f], from, sizeof from, others, sizeof others) == 0) {
            if (others[0]) {
                /* Several layouts hold the file: the first wins, and says so. */
                char w[PATH_MAX * 3];
                snprintf(w, sizeof w, "lab %s: warning: %s is in the submission more than once: graded %s, ignored %s\n",
                         rb->nn, files[f], from + strlen(src) + 1, others);
                fprintf(stderr, "grade: %s", w);
                snprintf(notes + strlen(notes), notes_len - strlen(notes), "%s", w);
            }
            nsame += same_contents(from, to); /* to: the starter's, in the lab's copy */
            unlink(to);
            if (file_copy(from, to) != 0) {
                nmissing++;
                snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s (unreadable)",
                         missing[0] ? ", " : "", files[f]);
            }
        } else {
            nmissing++;
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s", missing[0] ? ", " : "", files[f]);
        }
    }
    if (nf > 0 && nmissing == nf && !lab_empty_known) add_why(why, wn, label, "no student files: graded the starter");
    /* An untouched starter is not a wrong answer: the instructor may want
     * to ask whether the right files were handed in. */
    if (nsame > 0 && nmissing + nsame == nf) add_why(why, wn, label, "unchanged from the starter");
    if (missing[0])
        snprintf(notes + strlen(notes), notes_len - strlen(notes),
                 "lab %s: not in the submission, graded the starter instead: %s\n", rb->nn, missing);

    int need_check = 0;
    for (int i = 0; i < n; i++) need_check |= res[i].t->kind == KIND_NUMERICS;
    /* make is given the programs relative to dir (see run_make); they run by their full paths. */
    char check_rel[PATH_MAX], bench_rel[PATH_MAX], check_bin[PATH_MAX * 2], bench_bin[PATH_MAX * 2];
    snprintf(check_rel, sizeof check_rel, "build/%s/labs/%s/graded/check", O.target, rb->lab);
    snprintf(bench_rel, sizeof bench_rel, "build/%s/labs/%s/graded/bench", O.target, rb->lab);
    snprintf(check_bin, sizeof check_bin, "%s/%s", dir, check_rel);
    snprintf(bench_bin, sizeof bench_bin, "%s/%s", dir, bench_rel);
    char *log = NULL;
    if (student_build(dir, 1, trouble, sizeof trouble) != 0) {
        for (int i = 0; i < n; i++) grader_failed(&res[i], trouble);
        add_why(why, wn, label, "grader error: %s", lab_trouble);
        if (!O.keep) tree_remove(dir);
        return n;
    }
    int check_built = need_check ? run_make(dir, check_rel, 300, &log, 1, 0) == 0 : 1;
    if (log) forward_branch_notes(log, rb->nn, notes, notes_len);
    const char *gpu_file = NULL; /* --gpu-build: the student file nvcc refused */
    if (check_built && need_check && O.gpu_build && strcmp(O.target, "cuda")) {
        for (int f = 0; f < nf && !gpu_file; f++) {
            size_t fl = strlen(files[f]);
            if (fl < 3 || strcmp(files[f] + fl - 3, ".cu")) continue;
            char obj[PATH_MAX];
            snprintf(obj, sizeof obj, "build/cuda/labs/%s/%s.o", rb->lab, files[f]);
            free(log);
            log = NULL;
            if (run_make(dir, obj, 600, &log, 1, 1) != 0) gpu_file = files[f];
        }
        check_built = gpu_file == NULL;
    }
    if (!check_built) {
        char err[512];
        first_error(log, err, sizeof err);
        for (int i = 0; i < n; i++) {
            if (res[i].t->kind != KIND_NUMERICS) continue;
            res[i].status = ST_BUILD_ERROR;
            if (gpu_file) snprintf(res[i].message, sizeof res[i].message, "nvcc (--gpu-build): %s", err);
            else snprintf(res[i].message, sizeof res[i].message, "%s", err);
            res[i].output = tail_lines(log, 6000);
        }
        add_why(why, wn, label, "build error%s: %s", gpu_file ? " (nvcc, --gpu-build)" : "", err);
        snprintf(notes + strlen(notes), notes_len - strlen(notes), "lab %s: %s:\n%s\n", rb->nn,
                 gpu_file ? "does not compile for a GPU (nvcc, --gpu-build)" : "compile errors",
                 log + (strlen(log) > 3000 ? strlen(log) - 3000 : 0));
    }
    free(log);
    log = NULL;
    if (student_build(dir, 0, trouble, sizeof trouble) != 0) {
        /* No student code runs on a build it may have changed: not the build's verdicts either. */
        for (int i = 0; i < n; i++) grader_failed(&res[i], trouble);
        add_why(why, wn, label, "grader error: %s", lab_trouble);
        if (!O.keep) tree_remove(dir);
        return n;
    }
    built_program_t kept;
    program_keep(&kept, check_built && need_check ? check_bin : "");
    for (int i = 0; i < n; i++) {
        if (res[i].t->kind != KIND_NUMERICS || !check_built) continue;
        if (!program_unchanged(&kept, check_bin)) {
            res[i].status = ST_FAIL;
            res[i].score = 0;
            snprintf(res[i].message, sizeof res[i].message,
                     "not run: the check program was changed after it was built, by the code of an earlier test; "
                     "a submission must not write to the grader's files");
            continue;
        }
        run_numerics(check_bin, rb->nn, &res[i]);
    }
    free(kept.bytes);

    /* A test whose required checks did not all pass is worth nothing. */
    for (int i = 0; i < n; i++) {
        const rubric_test_t *t = res[i].t;
        for (int q = 0; q < t->nrequires; q++) {
            int ok = 0;
            for (int k = 0; k < n; k++)
                ok |= res[k].t->kind == KIND_NUMERICS && !strcmp(res[k].t->check, t->requires[q]) && res[k].status == ST_PASS;
            if (ok) continue;
            if (t->kind == KIND_NUMERICS && res[i].status != ST_PASS) break; /* its own failure says more */
            res[i].status = ST_NOT_GRADED;
            res[i].score = 0;
            snprintf(res[i].message, sizeof res[i].message, "counts once %s passes", t->requires[q]);
            break;
        }
    }

    bench_run_t runs[GRADE_MAX_TESTS];
    int nruns = 0;
    for (int i = 0; i < n; i++) {
        if (res[i].t->kind != KIND_SPEED) continue;
        if (strcmp(O.target, "cuda") && !O.emu_speed) {
            res[i].status = ST_NEEDS_GPU;
            res[i].counted = 0;
            res[i].score = 0;
            snprintf(res[i].message, sizeof res[i].message, "speed is graded only on a GPU (--target cuda)");
            continue;
        }
        if (res[i].status == ST_NOT_GRADED) continue;
        const bench_run_t *prev = NULL;
        for (int k = 0; k < nruns && !prev; k++)
            if (!strcmp(runs[k].args, bench_args_of(res[i].t)) && runs[k].ranks == res[i].t->ranks) prev = &runs[k];
        if (prev) {
            reuse_speed(prev, &res[i]);
            continue;
        }
        trouble[0] = '\0';
        int bench_built = student_build(dir, 1, trouble, sizeof trouble) == 0 &&
                          run_make(dir, bench_rel, 900, &log, 1, 0) == 0;
        if (!trouble[0]) student_build(dir, 0, trouble, sizeof trouble);
        if (trouble[0]) {
            /* This speed test and those after it: none of them is run. */
            for (int k = i; k < n; k++)
                if (res[k].t->kind == KIND_SPEED && res[k].status != ST_NEEDS_GPU && res[k].status != ST_NOT_GRADED)
                    grader_failed(&res[k], trouble);
            free(log);
            log = NULL;
            break;
        }
        if (!bench_built) {
            res[i].status = ST_BUILD_ERROR;
            first_error(log, res[i].message, sizeof res[i].message);
            res[i].output = tail_lines(log, 6000);
        } else {
            bench_run_t *run = &runs[nruns++];
            memset(run, 0, sizeof *run);
            snprintf(run->args, sizeof run->args, "%s", bench_args_of(res[i].t));
            run->ranks = res[i].t->ranks;
            snprintf(run->by, sizeof run->by, "%s", res[i].t->name);
            run_speed(bench_bin, rb->nn, &res[i], run);
        }
        free(log);
        log = NULL;
    }
    for (int k = 0; k < nruns; k++) {
        free(runs[k].json);
        free(runs[k].output);
    }
    if (lab_trouble[0]) add_why(why, wn, label, "grader error: %s", lab_trouble);
    if (!O.keep) tree_remove(dir);
    return n;
}

/* ---- one submission ---------------------------------------------------------------- */

typedef struct {
    char nn[GRADE_MAX_LABS][8];
    char lab[GRADE_MAX_LABS][96];
    int n;
} lab_list_t;

/* Labs with a folder labs/NN-*; the rubric is checked when grading. */
static void list_labs(lab_list_t *L) {
    memset(L, 0, sizeof *L);
    char dir[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/labs", O.root);
    struct dirent **ents;
    int m = scandir(dir, &ents, NULL, alphasort);
    for (int i = 0; i < m; i++) {
        const char *d = ents[i]->d_name;
        if (L->n < GRADE_MAX_LABS && isdigit((unsigned char)d[0]) && isdigit((unsigned char)d[1]) && d[2] == '-') {
            snprintf(L->nn[L->n], 8, "%.2s", d);
            snprintf(L->lab[L->n], 96, "%s", d);
            L->n++;
        }
        free(ents[i]);
    }
    if (m >= 0) free(ents);
}

/* ---- the course libraries, cached between runs (--base-cache) ----------------- */

static lab_list_t course_labs; /* every labs/NN-* of the grader's tree (main lists them) */

/* The student files of every lab as paths relative to the tree, into paths[]
 * (ptrs[] points at them); returns how many. */
static int student_paths(char (*paths)[256], const char **ptrs, int max) {
    int n = 0;
    for (int i = 0; i < course_labs.n; i++) {
        char files[16][128];
        int nf = lab_student_files(O.root, course_labs.lab[i], files, 16);
        for (int f = 0; f < nf && n < max; f++) {
            snprintf(paths[n], 256, "labs/%s/%s", course_labs.lab[i], files[f]);
            ptrs[n] = paths[n];
            n++;
        }
    }
    return n;
}

/* Every lab's student files in a lab's copy as the grader's tree has them
 * now. A cached base may hold older ones (they are not in its key); some
 * programs link other labs' files (the ladder, lab 05's matmul switch), and a
 * file missing from a submission is graded as the tree has it. */
static void refresh_student_files(const char *dir) {
    static char paths[GRADE_MAX_LABS * 16][256];
    static const char *ptrs[GRADE_MAX_LABS * 16];
    int n = student_paths(paths, ptrs, GRADE_MAX_LABS * 16);
    for (int i = 0; i < n; i++) {
        char from[PATH_MAX * 2], to[PATH_MAX * 2];
        snprintf(from, sizeof from, "%s/%s", O.root, paths[i]);
        snprintf(to, sizeof to, "%s/%s", dir, paths[i]);
        unlink(to);
        file_copy(from, to);
    }
}

/* Keep the cache small: remove all but the `keep` newest entries for this
 * target (by the time their stamp was last touched), skipping any another
 * run holds (its lock is taken). */
static void evict_old_bases(const char *cache, int keep) {
    struct dirent **ents;
    int m = scandir(cache, &ents, NULL, alphasort);
    if (m < 0) return;
    char names[64][96];
    double when[64];
    int n = 0;
    char suffix[16];
    snprintf(suffix, sizeof suffix, "-%s", O.target);
    for (int i = 0; i < m; i++) {
        const char *d = ents[i]->d_name;
        size_t l = strlen(d);
        if (n < 64 && l == 16 + strlen(suffix) && strspn(d, "0123456789abcdef") == 16 && !strcmp(d + 16, suffix)) {
            char stamp[PATH_MAX * 2];
            struct stat st;
            snprintf(stamp, sizeof stamp, "%s/%s/.complete", cache, d);
            when[n] = stat(stamp, &st) == 0 ? (double)st.st_mtim.tv_sec + 1e-9 * st.st_mtim.tv_nsec : 0.0;
            snprintf(names[n++], sizeof names[0], "%s", d);
        }
        free(ents[i]);
    }
    free(ents);
    for (int kept = 0; kept < n; kept++) {
        int newest = kept;
        for (int j = kept + 1; j < n; j++)
            if (when[j] > when[newest]) newest = j;
        char tn[96];
        double tw = when[kept];
        snprintf(tn, sizeof tn, "%s", names[kept]);
        snprintf(names[kept], sizeof names[0], "%s", names[newest]);
        when[kept] = when[newest];
        snprintf(names[newest], sizeof names[0], "%s", tn);
        when[newest] = tw;
        if (kept < keep) continue;
        char dir[PATH_MAX * 2], lock[PATH_MAX * 2 + 8];
        snprintf(dir, sizeof dir, "%s/%s", cache, names[kept]);
        snprintf(lock, sizeof lock, "%s.lock", dir);
        int fd = open(lock, O_RDWR | O_CLOEXEC);
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
            tree_remove(dir);
            unlink(lock);
        }
        if (fd >= 0) close(fd);
    }
}

static int cache_refused; /* --prepare could not use the cache, and said why */

/* The cache cannot be used: grade without it, or with --prepare (which
 * builds only for the cache) stop. */
static int without_cache(void) {
    if (O.prepare) {
        fprintf(stderr, "grade: --prepare: nothing was built\n");
        cache_refused = 1;
        return -1;
    }
    O.base_cache = NULL;
    return prepare_base();
}

/* One "name=value" piece of the cache key's environment, into the hash h:
 * each with its length first, so that no value runs on into the next
 * name ("CC" = "gcc CXX=" and "CXX" = "" hash apart from "CC" = "gcc"). */
static uint64_t salt_piece(uint64_t h, const char *name, const char *value) {
    uint64_t n = strlen(name), v = strlen(value);
    h = course_fnv1a(h, &n, sizeof n);
    h = course_fnv1a(h, name, n);
    h = course_fnv1a(h, &v, sizeof v);
    return course_fnv1a(h, value, v);
}

/* The base in --base-cache, named by a hash of the grader's tree (student
 * files by name only: each lab's copy gets them fresh), the target and the
 * build environment. Found complete, it is used as it is; else it is built
 * there, under a lock, before any student code runs. This run holds a
 * shared lock on it until it exits, so no other run removes it meanwhile. */
static int prepare_cached_base(void) {
    static int lock_fd = -1; /* held for the whole run */
    const char *then = O.prepare ? "" : "; building without the cache";
    if (mkdirs(O.base_cache, 0755) != 0) {
        fprintf(stderr, "grade: --base-cache %s: cannot create it (%s)%s\n", O.base_cache, strerror(errno), then);
        return without_cache();
    }
    static char paths[GRADE_MAX_LABS * 16][256];
    static const char *ptrs[GRADE_MAX_LABS * 16];
    int np = student_paths(paths, ptrs, GRADE_MAX_LABS * 16);
    /* What the build depends on besides the tree, hashed piece by piece with
     * each piece's length: none is cut however long (a CUDA_HOME or a PATH
     * folder of 4000 bytes), so two environments cannot share an entry. */
    uint64_t env_hash = COURSE_FNV1A_OFFSET;
    /* CUDA_ARCH as the build sees it (cuda_arch), not as the environment has it. */
    env_hash = salt_piece(env_hash, "CUDA_ARCH", cuda_arch(NULL));
    /* CUDA_HOME reaches the build (child_env) and picks its nvcc. CC, CXX
     * and NVCC do not (the Makefile sets its own, and child_env drops them),
     * so they are no part of the key: a CI job that sets CC for itself
     * reuses the entry instead of building the same libraries again. */
    env_hash = salt_piece(env_hash, "CUDA_HOME", getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "");
    /* The programs the build finds on PATH, rather than PATH itself: the
     * same compilers reached through a different PATH (Gradescope's setup.sh
     * and run_autograder need not share one) are the same build. */
    const char *tools[] = {"make", "gcc", "g++", "ar", "nvcc", "mpicc"};
    for (size_t i = 0; i < sizeof tools / sizeof *tools; i++) {
        char where[PATH_MAX];
        env_hash = salt_piece(env_hash, tools[i], find_program(tools[i], where, sizeof where) == 0 ? where : "-");
    }
    char salt[64];
    snprintf(salt, sizeof salt, "target=%.8s env=%016llx", O.target, (unsigned long long)env_hash);
    int err = 0;
    unsigned long long key = tree_hash(O.root, base_skip, ptrs, np, salt, &err);
    if (err) {
        fprintf(stderr, "grade: part of %s could not be read%s\n", O.root, then);
        return without_cache();
    }
    const char *cache = O.base_cache; /* made absolute by main */
    /* Cut, the entry would be locked, removed and built under another name. */
    if (path_fits(base_dir, sizeof base_dir, "use the cache entry", "give --base-cache a shorter path", "%s/%016llx-%s",
                  cache, key, O.target) != 0) {
        fprintf(stderr, "grade: --base-cache %s is too long a path for its entries%s\n", cache, then);
        return without_cache();
    }
    char lock[PATH_MAX + 8], stamp[PATH_MAX + 16];
    snprintf(lock, sizeof lock, "%s.lock", base_dir);
    snprintf(stamp, sizeof stamp, "%s/.complete", base_dir);
    lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd < 0 || flock(lock_fd, LOCK_EX) != 0) {
        fprintf(stderr, "grade: --base-cache: cannot lock %s (%s)%s\n", lock, strerror(errno), then);
        if (lock_fd >= 0) close(lock_fd);
        lock_fd = -1;
        return without_cache();
    }
    int rc = 0;
    if (access(stamp, F_OK) == 0) {
        fprintf(stderr, "grade: course libraries for %s: reused from %s\n", O.target, base_dir);
        utimensat(AT_FDCWD, stamp, NULL, 0); /* the newest: evicted last */
    } else {
        fprintf(stderr, "grade: building the course libraries for %s into %s ...\n", O.target, base_dir);
        tree_remove(base_dir); /* what a stopped run left half-built */
        rc = build_base();
        int fd = rc == 0 ? open(stamp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
        if (fd >= 0) close(fd);
        else if (rc == 0) fprintf(stderr, "grade: cannot write %s; the next run builds again\n", stamp);
    }
    flock(lock_fd, LOCK_SH);
    evict_old_bases(cache, 4);
    return rc;
}

/* Does the submission hold any student file of this lab? (--gradescope) */
static int submission_has_lab(const char *src, const rubric_t *rb) {
    const char *lab = rb->lab;
    char files[16][128], p[PATH_MAX];
    int nf = student_files(rb, files);
    for (int f = 0; f < nf; f++)
        if (find_student_file(src, lab, files[f], p, sizeof p, NULL, 0) == 0) return 1;
    return 0;
}

/* With --gradescope and --lab: the labs not graded and their student files,
 * so that their files in a submission are named as ignored. */
typedef struct {
    char nn[8];
    char lab[96];
    char files[16][128];
    int nf;
} other_lab_t;
static other_lab_t other_labs[GRADE_MAX_LABS];
static int n_other_labs;

/* Does the submission hold a student file of any of these labs? */
static int submission_has_any(const char *src, const rubric_t *rubrics, int nrub) {
    for (int i = 0; i < nrub; i++)
        if (submission_has_lab(src, &rubrics[i])) return 1;
    return 0;
}

/* What a folder holds, for messages: "my-hw/, notes.txt" (folders with a
 * slash; __MACOSX, which macOS's zip adds, and dotfiles left out). Returns
 * how many folders; the last one's name in folder. */
static int describe_folder(const char *dir, char *out, size_t n, char *folder, size_t fn) {
    out[0] = '\0';
    struct dirent **ents;
    int m = scandir(dir, &ents, NULL, alphasort), shown = 0, more = 0, folders = 0;
    for (int i = 0; i < m; i++) {
        const char *name = ents[i]->d_name;
        char p[PATH_MAX * 2];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        struct stat st;
        int seen = name[0] != '.' && strcmp(name, "__MACOSX") && lstat(p, &st) == 0;
        int too_long = !seen && name[0] != '.' && strcmp(name, "__MACOSX") && errno == ENAMETOOLONG;
        if (too_long) { /* left out, the submission read as empty: say it is there, and why it was not read */
            snprintf(out + strlen(out), n - strlen(out), "%s%s (its path is 4096 bytes or more, too long to read: "
                     "rename it shorter)", out[0] ? ", " : "", name);
            shown++;
        }
        if (seen) {
            int isdir = S_ISDIR(st.st_mode);
            if (isdir) {
                folders++;
                snprintf(folder, fn, "%s", name);
            }
            if (shown++ < 12)
                snprintf(out + strlen(out), n - strlen(out), "%s%s%s", out[0] ? ", " : "", name, isdir ? "/" : "");
            else
                more++;
        }
        free(ents[i]);
    }
    if (m >= 0) free(ents);
    if (more) snprintf(out + strlen(out), n - strlen(out), ", ... (%d more)", more);
    if (!out[0]) snprintf(out, n, "nothing (an empty submission)");
    return folders;
}

/* The folder that holds a submission's files: src itself, or, when src
 * holds no file of the graded labs and exactly one folder (besides __MACOSX
 * and dotfiles), that folder, a few levels down: a zip of a folder unpacks
 * as my-hw/00-hello/vector_add.cu. root gets the folder, inside its path
 * below src ("" for src itself, else "my-hw/"), found what it holds (for
 * messages). Returns whether it holds any file of the graded labs. */
static int submission_root(const char *src, const rubric_t *rubrics, int nrub, char *root, size_t rn, char *inside,
                           size_t in, char *found, size_t fn) {
    snprintf(root, rn, "%s", src);
    inside[0] = '\0';
    for (int depth = 0;; depth++) {
        if (submission_has_any(root, rubrics, nrub)) return 1;
        char only[256];
        int folders = describe_folder(root, found, fn, only, sizeof only);
        if (folders != 1 || depth == 4) return 0;
        snprintf(root + strlen(root), rn - strlen(root), "/%s", only); /* fits: describe_folder's lstat took it */
        snprintf(inside + strlen(inside), in - strlen(inside), "%s/", only);
    }
}

/* Grade the chosen labs of one submission; fills res (malloc'd) and notes,
 * and why with a short reason when a score is not what the code earned
 * (no student files, a build error; see add_why). */
static int grade_submission(const char *src_given, rubric_t *rubrics, int nrub, result_t **out, char *notes, size_t nl,
                            char *why, size_t wn) {
    result_t *res = calloc((size_t)nrub * GRADE_MAX_TESTS + 1, sizeof *res);
    int n = 0;
    if (!res) return 0;
    char src[PATH_MAX], inside[PATH_MAX], found[2048];
    int any = submission_root(src_given, rubrics, nrub, src, sizeof src, inside, sizeof inside, found, sizeof found);
    if (any && inside[0]) {
        fprintf(stderr, "grade: the submission's files are in its folder %s; grading those\n", inside);
        snprintf(notes + strlen(notes), nl - strlen(notes), "The submission's files are in its folder %s; graded those.\n",
                 inside);
    }
    char expected[2048] = "";
    for (int i = 0; i < nrub && !any; i++) {
        char files[16][128];
        int nf = student_files(&rubrics[i], files);
        for (int f = 0; f < nf; f++)
            snprintf(expected + strlen(expected), sizeof expected - strlen(expected), " %s", files[f]);
    }
    if (!any) add_why(why, wn, NULL, "no student files%s", O.gradescope && !O.nlabs ? "" : ": graded the starters");
    if (!any && !(O.gradescope && !O.nlabs)) {
        /* Every lab below is the starter: loud, since the score means nothing. */
        char w[4096];
        snprintf(w, sizeof w, "WARNING: the submission holds no student file of the graded lab%s, so %s graded on "
                              "its starter. Expected:%s. Found%s%s: %s\n",
                 nrub > 1 ? "s" : "", nrub > 1 ? "every lab is" : "the lab is", expected, inside[0] ? " in " : "",
                 inside, found);
        fprintf(stderr, "grade: %s", w);
        snprintf(notes + strlen(notes), nl - strlen(notes), "%s", w);
    }
    for (int k = 0; k < n_other_labs; k++) {
        /* An assignment for one lab: another lab's files earn nothing here, and the student should know. */
        char seen[1024] = "", p[PATH_MAX * 2];
        for (int f = 0; f < other_labs[k].nf; f++)
            if (find_student_file(src, other_labs[k].lab, other_labs[k].files[f], p, sizeof p, NULL, 0) == 0)
                snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s%s", seen[0] ? ", " : "",
                         other_labs[k].files[f]);
        if (!seen[0]) continue;
        char labs[64] = "", w[2048];
        for (int i = 0; i < nrub; i++)
            snprintf(labs + strlen(labs), sizeof labs - strlen(labs), "%s%s", i ? ", " : "", rubrics[i].nn);
        snprintf(w, sizeof w, "lab %s: ignored %s: this assignment grades lab%s %s only\n", other_labs[k].nn, seen,
                 nrub > 1 ? "s" : "", labs);
        fprintf(stderr, "grade: %s", w);
        snprintf(notes + strlen(notes), nl - strlen(notes), "%s", w);
    }
    for (int i = 0; i < nrub; i++) {
        if (O.gradescope && !O.nlabs && !submission_has_lab(src, &rubrics[i])) continue;
        fprintf(stderr, "grade: lab %s ...\n", rubrics[i].lab);
        n += grade_lab(src, &rubrics[i], res + n, notes, nl, why, wn, nrub > 1, !any);
    }
    if (O.gradescope && !O.nlabs && n == 0) {
        /* Say what was expected, and what came, rather than grading nothing in silence. */
        snprintf(notes + strlen(notes), nl - strlen(notes), "No lab files found in the submission. Expected:%s. Found%s%s: %s\n",
                 expected, inside[0] ? " in " : "", inside, found);
    }
    *out = res;
    return n;
}

/* On --target cuda: the labs (as "00-hello, 01-naive-matmul") whose every
 * counted numerics test was skipped by its check, which is what a check does
 * when it finds no device (LAB_REQUIRE_DEVICE); returns how many. Such a
 * lab's zeros are no grade: the machine, not the submission, fell short. A
 * check the rubric lets skip (may_skip, Hopper-only code) is not counted and
 * does not count here; a lab with a build error or a test that ran is not
 * one of them. */
static int labs_without_device(const result_t *r, int n, char *out, size_t on) {
    int k = 0;
    out[0] = '\0';
    if (strcmp(O.target, "cuda")) return 0;
    for (int i = 0; i < n; i++) {
        if (i && !strcmp(r[i].lab, r[i - 1].lab)) continue; /* a lab's results are together */
        int skipped = 0, other = 0;
        for (int j = i; j < n && !strcmp(r[j].lab, r[i].lab); j++) {
            if (r[j].t->kind != KIND_NUMERICS || !r[j].counted) continue;
            if (r[j].status == ST_SKIPPED) skipped++;
            else other++;
        }
        if (skipped && !other)
            k++, snprintf(out + strlen(out), on - strlen(out), "%s%s", out[0] ? ", " : "", r[i].lab);
    }
    return k;
}

/* What to say when every check of some labs found no device (labs_without_device). */
static void no_device_message(char *out, size_t n, const char *labs) {
    snprintf(out, n, "no GPU was visible to the checks: every check of %s skipped itself for want of a device, so "
                     "its zero is no grade (--target cuda). %s Grade the numerics with --target emu (the CPU "
                     "emulator), or run on a GPU node.", labs,
             gpu_in_sight() ? "This machine shows a GPU (nvidia-smi or /dev/nvidia*), but the checks found none: is "
                              "CUDA_VISIBLE_DEVICES empty, or the driver out of reach from here?"
                            : "This machine shows none (nvidia-smi lists no GPU, and there is no /dev/nvidia*).");
}

/* Results own their output text. */
static void free_results(result_t *r, int n) {
    for (int i = 0; i < n; i++) free(r[i].output);
    free(r);
}

/* ---- main -------------------------------------------------------------------------- */

/* Make a path absolute against the current directory (the submission may be
 * relative; children run elsewhere). 0, or -1 with a message naming flag
 * when the current directory cannot be named or the whole path does not fit
 * p's n bytes: left relative or cut, the path would name another folder in
 * the children, which run elsewhere. */
static int absolutize(const char *flag, char *p, size_t n) {
    if (p[0] == '/') return 0;
    char cwd[PATH_MAX], what[64];
    if (!getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "grade: %s %s is relative, and the current directory cannot be named (%s); give %s "
                "as a full path, or run from a shorter directory\n", flag, p, strerror(errno), flag);
        return -1;
    }
    snprintf(what, sizeof what, "read %s", flag);
    char whole[PATH_MAX];
    if (path_fits(whole, sizeof whole, what, "give a full path that is shorter, or run from a shorter directory",
                  "%s/%s", cwd, p) != 0 || path_fits(p, n, what, "give a shorter path", "%s", whole) != 0)
        return -1;
    return 0;
}

/* ---- the command line against the file system ------------------------------------
 *
 * What the flags name is checked before anything is built, so that a typo
 * costs no build time and destroys nothing: a mistyped --batch folder used
 * to leave an existing CSV with its header only. */

/* Is dir a folder this process may create files in? It tries (access()
 * says yes to root even on a read-only file system). 0, or -1 with the
 * reason in why. */
static int dir_writable(const char *dir, char *why, size_t n) {
    struct stat st;
    if (stat(dir, &st) != 0) { snprintf(why, n, "%s: %s", dir, strerror(errno)); return -1; }
    if (!S_ISDIR(st.st_mode)) { snprintf(why, n, "%s is not a folder", dir); return -1; }
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/.grade-probe-XXXXXX", dir);
    int fd = mkstemp(probe);
    if (fd < 0) { snprintf(why, n, "%s: %s", dir, strerror(errno)); return -1; }
    close(fd);
    unlink(probe);
    return 0;
}

/* The folder path is in: "." for a bare name, "/" for a name at the root. */
static void parent_of(const char *path, char *out, size_t n) {
    snprintf(out, n, "%s", path);
    size_t l = strlen(out);
    while (l > 1 && out[l - 1] == '/') out[--l] = '\0'; /* "dir/" names dir */
    char *s = strrchr(out, '/');
    if (!s) snprintf(out, n, ".");
    else if (s == out) out[1] = '\0';
    else *s = '\0';
}

/* Can a results file be written at path (--csv, or --json of one submission)?
 * need_dir: the file's folder must take new files even when the file exists
 * (the CSV is written beside it and renamed). Says why not on stderr. */
static int check_file_dest(const char *flag, const char *path, int need_dir) {
    char dir[PATH_MAX], why[PATH_MAX + 128], what[64];
    struct stat st;
    /* Cut, its folder would be another one: checked, and then the write would fail after grading. */
    snprintf(what, sizeof what, "write %s", flag);
    if (path_fits(dir, sizeof dir, what, "give a shorter path", "%s", path) != 0) return -1;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "grade: %s %s is a folder; give the name of a file to write\n", flag, path);
        return -1;
    }
    int fd = exists ? open(path, O_WRONLY | O_CLOEXEC) : -1; /* no O_TRUNC: the file stays as it is */
    if (exists && fd < 0) {
        fprintf(stderr, "grade: %s %s: cannot write it: %s\n", flag, path, strerror(errno));
        return -1;
    }
    if (fd >= 0) close(fd);
    parent_of(path, dir, sizeof dir);
    if ((need_dir || !exists) && dir_writable(dir, why, sizeof why) != 0) {
        fprintf(stderr, "grade: %s %s: cannot write there: %s\n", flag, path, why);
        return -1;
    }
    return 0;
}

/* Can the folder path be created, or written when it exists (--json of a
 * batch)? Its nearest existing ancestor must be a writable folder; the
 * folder is then made (grading would make it anyway). */
static int check_dir_dest(const char *flag, const char *path) {
    char p[PATH_MAX], why[PATH_MAX + 128], what[64];
    struct stat st;
    snprintf(what, sizeof what, "write %s", flag);
    if (path_fits(p, sizeof p, what, "give a shorter path", "%s", path) != 0) return -1; /* cut, another folder */
    while (stat(p, &st) != 0) {
        if (errno != ENOENT) {
            fprintf(stderr, "grade: %s %s: cannot create it: %s: %s\n", flag, path, p, strerror(errno));
            return -1;
        }
        char up[PATH_MAX];
        parent_of(p, up, sizeof up);
        if (!strcmp(up, p)) break;
        snprintf(p, sizeof p, "%s", up);
    }
    int made = strcmp(p, path) != 0;
    if (dir_writable(p, why, sizeof why) != 0 || (made && mkdirs(path, 0755) != 0 && snprintf(why, sizeof why, "%s", strerror(errno)))) {
        fprintf(stderr, "grade: %s %s: cannot %s: %s\n", flag, path, made ? "create it" : "write in it", why);
        return -1;
    }
    return 0;
}

/* A file name that is an archive of a submission, not the submission. */
static int is_archive(const char *name) {
    static const char *const ext[] = {".zip", ".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2", ".7z", ".rar", NULL};
    size_t l = strlen(name);
    for (const char *const *e = ext; *e; e++)
        if (l > strlen(*e) && !strcasecmp(name + l - strlen(*e), *e)) return 1;
    return 0;
}

/* A folder name of a lab (NN-topic) or of the labs/ layout: what a single
 * submission holds, not a student. */
static int looks_like_lab(const char *name) {
    return !strcmp(name, "labs") || (isdigit((unsigned char)name[0]) && isdigit((unsigned char)name[1]) && name[2] == '-');
}

/* --batch DIR before anything is built: says what is not a student's folder
 * (a zip, a file, a link) and warns when the subfolders look like the lab
 * folders of one submission. Returns the number of student folders, -1 when
 * DIR is not a readable folder. */
static int batch_check(const char *dir) {
    struct stat st;
    if (stat(dir, &st) != 0) {
        fprintf(stderr, "grade: --batch %s: %s\n", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "grade: --batch %s is not a folder; it must hold one folder per student%s\n", dir,
                is_archive(dir) ? " (unzip it first)" : "");
        return -1;
    }
    struct dirent **ents;
    int m = scandir(dir, &ents, NULL, alphasort);
    if (m < 0) {
        fprintf(stderr, "grade: --batch %s: %s\n", dir, strerror(errno));
        return -1;
    }
    int n = 0, nlike = 0;
    char like[512] = "";
    for (int i = 0; i < m; i++) {
        const char *name = ents[i]->d_name;
        char sub[PATH_MAX * 2];
        snprintf(sub, sizeof sub, "%s/%s", dir, name);
        if (name[0] == '.') { /* ., .., .DS_Store */
        } else if (lstat(sub, &st) != 0) {
            fprintf(stderr, "grade: skipping %s: %s\n", name, strerror(errno));
        } else if (S_ISLNK(st.st_mode)) {
            fprintf(stderr, "grade: skipping %s: a link (links are not followed)\n", name);
        } else if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "grade: skipping %s: not a folder%s\n", name, is_archive(name) ? "; unzip it first" : "");
        } else {
            n++;
            if (looks_like_lab(name) && nlike++ < 4)
                snprintf(like + strlen(like), sizeof like - strlen(like), "%s%s", like[0] ? ", " : "", name);
        }
        free(ents[i]);
    }
    free(ents);
    if (nlike)
        fprintf(stderr, "grade: warning: --batch grades each subfolder of %s as one student's submission, but %s%s "
                        "look%s like the lab folders of a single submission; for one submission use --src %s\n",
                dir, like, nlike > 4 ? ", ..." : "", nlike > 1 ? "" : "s", dir);
    if (!n) fprintf(stderr, "grade: --batch %s holds no student folders: nothing to grade\n", dir);
    return n;
}

/* ---- with --run-as: a watchman for a grader killed outright ------------------------
 *
 * SIGKILL (kill -9, the OOM killer, a job's time limit) runs no handler: the
 * running test's own process dies with the grader (it asked for
 * PR_SET_PDEATHSIG), but whatever that process had started would run on as
 * the --run-as user, the temp folder would stay, and the next grader would
 * refuse the user. So a grader with --run-as first starts a watchman: a
 * process in a session of its own (a kill of the grader's process group
 * leaves it) that waits on a pipe only the grader and its workers hold.
 * Before it ends, the grader writes one byte there (watchman_release); an
 * end without it means the grader was killed outright, and the watchman kills
 * every process of the users, removes what they left and the temp folder
 * (but with --keep), says so, and goes. It holds the grader's claim on the
 * users until then, so no new grader starts on them while it works. */
static int watchman_fd = -1; /* the pipe's write end (close on exec), -1 without a watchman */

/* Tell the watchman the grader has cleaned up after itself. Async-signal-safe. */
static void watchman_release(void) {
    if (watchman_fd < 0) return;
    char b = 'x';
    if (write(watchman_fd, &b, 1) != 1) { /* then it cleans up again: no harm */ }
}

static void start_watchman(void) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        fprintf(stderr, "grade: warning: no watchman (pipe: %s): a grader killed with SIGKILL would leave what its "
                        "tests started running as the --run-as user\n", strerror(errno));
        return;
    }
    fflush(NULL);
    pid_t grader = getpid(), w = fork();
    if (w == 0) {
        close(p[1]);
        setsid();
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        char b;
        ssize_t r;
        while ((r = read(p[0], &b, 1)) < 0 && errno == EINTR) {
        }
        if (r == 1) _exit(0); /* the grader ended as it should */
        for (int k = 0; k < O.parallel && k < n_run; k++) sandbox_clean_user(run_uids[k], run_gids[k]);
        struct stat st;
        int left = !O.keep && lstat(tmp_root, &st) == 0;
        if (left) tree_remove(tmp_root);
        fprintf(stderr, "grade: the grader (pid %d) was killed before it could clean up; ended every process of "
                        "the --run-as user%s%s%s\n", (int)grader, O.parallel > 1 ? "s" : "",
                left ? " and removed " : "", left ? tmp_root : "");
        _exit(0);
    }
    close(p[0]);
    if (w < 0) {
        close(p[1]);
        fprintf(stderr, "grade: warning: no watchman (fork: %s): a grader killed with SIGKILL would leave what its "
                        "tests started running as the --run-as user\n", strerror(errno));
        return;
    }
    watchman_fd = p[1];
    sandbox_spare(w); /* below the grader, but not a test's */
}

/* ---- stopping: SIGTERM, SIGINT (Ctrl-C), SIGHUP ------------------------------------ */

static volatile sig_atomic_t tmp_ready;       /* tmp_root names this run's folder */
static volatile sig_atomic_t csv_partial_open; /* a batch is writing FILE.partial */
static char csv_stop_note[PATH_MAX * 3];       /* where its rows are, said when stopped */

/* Write s to stderr with write() alone. */
static void say(const char *s) {
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(2, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

/* The running test's processes have a session of their own, so a signal to
 * the grader (or Ctrl-C to its process group) does not reach them: kill them
 * and everything else below the grader, remove the temp folder (unless
 * --keep), say so, and leave with 128 + the signal. Async-signal-safe calls
 * only; it never returns, so what it interrupts does not go on. */
static void on_signal(int sig) {
    sandbox_kill_all();
    if (tmp_ready && !O.keep) tree_remove(tmp_root);
    watchman_release();
    say(sig == SIGINT ? "\ngrade: interrupted (SIGINT)" : sig == SIGHUP ? "\ngrade: stopped by SIGHUP" : "\ngrade: stopped by SIGTERM");
    say(": killed the processes it started");
    if (tmp_ready) {
        say(O.keep ? "; kept " : "; the temp folder is removed\n");
        if (O.keep) { say(tmp_root); say("\n"); }
    } else {
        say("\n");
    }
    if (csv_partial_open) say(csv_stop_note);
    _exit(128 + sig);
}

/* handler (on_signal, or a worker's) for SIGTERM, SIGINT and SIGHUP, each blocked while it runs. A
 * signal this process was started ignoring (nohup, a background job of a
 * script) stays ignored. */
static void install_signal_handlers(void (*handler)(int)) {
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaddset(&sa.sa_mask, sigs[i]);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

/* Append s to a CSV row as one quoted field (a quote doubled; a folder name
 * may hold a comma or a quote), never past rn. A field that starts as a
 * formula does (= + - @, a tab or a carriage return) gets a ' before it: a
 * spreadsheet would otherwise run a folder named "=HYPERLINK(...)" when the
 * instructor opens the CSV. */
static void csv_field(char *row, size_t rn, const char *s) {
    size_t k = strlen(row);
    if (k + 4 >= rn) return;
    row[k++] = '"';
    if (*s && strchr("=+-@\t\r", *s)) row[k++] = '\'';
    for (const char *c = s; *c && k + 3 < rn; c++) {
        if (*c == '"') row[k++] = '"';
        row[k++] = *c;
    }
    row[k++] = '"';
    row[k] = '\0';
}

/* One student's CSV row, with its newline: the name, each lab's points, the
 * total and max, and the notes (why a score is not what the code earned; ""
 * when there is nothing to say). res NULL: not graded, so the points are
 * empty rather than 0, which a reader could take for a grade. */
static void csv_row(char *row, size_t rn, const char *name, const result_t *res, int n, const rubric_t *rubrics,
                    int nrub, const char *notes) {
    row[0] = '\0';
    csv_field(row, rn, name);
    char cell[32];
    for (int i = 0; i < nrub; i++) {
        double s2 = 0, m2 = 0;
        for (int j = 0; res && j < n; j++)
            if (!strcmp(res[j].nn, rubrics[i].nn) && res[j].counted) {
                s2 += res[j].score;
                if (!res[j].t->bonus) m2 += res[j].max_score; /* as results_total: a bonus may go past it */
            }
        if (res) points_for_csv(cell, sizeof cell, s2, m2);
        snprintf(row + strlen(row), rn - strlen(row), ",%s", res ? cell : "");
    }
    double max = 0, tot = res ? results_total(res, n, &max) : 0;
    if (res) {
        points_for_csv(cell, sizeof cell, tot, max);
        snprintf(row + strlen(row), rn - strlen(row), ",%s,%.2f,", cell, max);
    } else {
        snprintf(row + strlen(row), rn - strlen(row), ",,,");
    }
    csv_field(row, rn - 1, notes);
    snprintf(row + strlen(row), rn - strlen(row), "\n");
}

/* A reason cut for the console line: at most 100 characters, "..." when cut. */
static void short_reason(const char *why, char *out, size_t n) {
    if (strlen(why) <= 100 || n < 104) snprintf(out, n, "%s", why);
    else snprintf(out, n, "%.97s...", why);
}

/* What batch_one reports, besides the row. */
#define BATCH_JSON_FAILED 1 /* its results.json could not be written */
#define BATCH_NO_DEVICE 2   /* every check of a lab found no device (--target cuda): not graded */
#define BATCH_GRADER_ERROR 4 /* a test could not be graded for a fault of the grader's (grader_trouble) */

/* One student of a batch: grade O.batch/name, its CSV row (with the newline)
 * into row and its summary line into line, and write its results.json when
 * --json names a folder. Returns BATCH_* flags. */
static int batch_one(const char *name, rubric_t *rubrics, int nrub, char *row, size_t rn, char *line, size_t ln) {
    char sub[PATH_MAX * 2];
    snprintf(sub, sizeof sub, "%s/%s", O.batch, name);
    result_t *res = NULL;
    char notes[16384] = "", why[1024] = "";
    double t_student = now_s();
    grader_trouble = 0;
    int n = grade_submission(sub, rubrics, nrub, &res, notes, sizeof notes, why, sizeof why), flags = 0;
    if (grader_trouble) flags |= BATCH_GRADER_ERROR;
    char nodev_labs[512], nodev[1200] = "";
    if (labs_without_device(res, n, nodev_labs, sizeof nodev_labs)) {
        /* Zeros from a machine without a device are no grade: the row says so, with no points. */
        flags |= BATCH_NO_DEVICE;
        no_device_message(nodev, sizeof nodev, nodev_labs);
        snprintf(why, sizeof why, "not graded: no GPU was visible to the checks (every check of %s skipped itself)",
                 nodev_labs);
        snprintf(notes + strlen(notes), sizeof notes - strlen(notes), "ERROR: %s\n", nodev);
        fprintf(stderr, "grade: ERROR: %s\n", nodev);
    }
    csv_row(row, rn, name, flags & BATCH_NO_DEVICE ? NULL : res, n, rubrics, nrub, why);
    char pts[96];
    results_points(pts, sizeof pts, res, n);
    if (O.json_path) {
        /* In batch mode --json is a folder: one results.json per student. */
        char jp[PATH_MAX * 2], summary[20000];
        snprintf(jp, sizeof jp, "%s/%s.json", O.json_path, name);
        snprintf(summary, sizeof summary, "Graded on %s with seed %llu: %s.\n%s", O.target, O.seed, pts, notes);
        errno = 0;
        if (report_json(jp, res, n, now_s() - t_student, summary) != 0) {
            fprintf(stderr, "grade: cannot write %s: %s\n", jp, errno ? strerror(errno) : "write failed");
            flags |= BATCH_JSON_FAILED;
        }
    }
    char cut[128];
    short_reason(why, cut, sizeof cut);
    if (flags & BATCH_NO_DEVICE) snprintf(line, ln, "%-24s %s", name, cut);
    else snprintf(line, ln, "%-24s %s%s%s%s", name, pts, why[0] ? "  (" : "", cut, why[0] ? ")" : "");
    free_results(res, n);
    return flags;
}

/* ---- --parallel: several students at once ------------------------------------------
 *
 * Each student is graded by a worker: a fork of the grader, in a private
 * folder of its own under this run's (so that --run-as's chown of its folder
 * and its builds' HOME touch nobody else's), its messages into a file. With
 * --run-as, the worker in slot k runs student code as the k-th user, whose
 * processes alone it kills, and its folder is closed to the other users. It
 * sends back its CSV row and summary line on a pipe and exits. A worker is
 * a subreaper and kills what its tests leave (sandbox.c), as the grader
 * does with one student; the grader's signal handler kills every worker and
 * everything below them. A worker that dies without sending its row is
 * reported, and its student has no row. */

typedef struct {
    pid_t pid;     /* 0: a free slot */
    int fd;        /* the read end of its pipe */
    int student;   /* the index of its student */
} worker_t;

/* In a worker: on a signal, kill what it started and go, quietly (the
 * grader, signalled too or killing it, says what happened and cleans up). */
static void worker_on_signal(int sig) {
    sandbox_kill_all();
    _exit(128 + sig);
}

/* The worker's side: grade one student, send "B N\nROW LINE\n" on fd (B:
 * batch_one's BATCH_* flags; N: the row's length, since a quoted folder name
 * may hold a newline), and exit. Never returns. */
static void batch_worker(const char *name, int index, int slot, rubric_t *rubrics, int nrub, int fd, pid_t grader) {
    install_signal_handlers(worker_on_signal);
    /* The user of this slot, and only its processes are this worker's to kill. */
    if (O.run_as) {
        run_uid = run_uids[slot];
        run_gid = run_gids[slot];
        run_name = run_names[slot];
        sandbox_own_users(&run_uid, &run_gid, 1);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* A grader killed outright takes its workers with it, as they take their tests. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != grader) _exit(127);
    char log[PATH_MAX + 32];
    snprintf(log, sizeof log, "%s/student-%d.log", tmp_root, index);
    int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (lfd < 0 || dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0) _exit(127);
    close(lfd);
    char own[PATH_MAX];
    snprintf(own, sizeof own, "%s/student-%d", tmp_root, index);
    snprintf(tmp_root, sizeof tmp_root, "%s", own);
    char home[PATH_MAX + 8];
    snprintf(home, sizeof home, "%s/home", tmp_root);
    if (mkdirs(home, 0755) != 0) {
        fprintf(stderr, "grade: cannot create %s: %s\n", home, strerror(errno));
        _exit(1);
    }
    /* Entered by root and the slot's user alone (through its group): not by
     * the users of the students graded beside it, who would read this one's
     * submission and build. */
    if (O.run_as ? chown(tmp_root, 0, run_gid) != 0 || chmod(tmp_root, 0750) != 0 : chmod(tmp_root, 0755) != 0) {
        fprintf(stderr, "grade: cannot set the owner and mode of %s: %s\n", tmp_root, strerror(errno));
        _exit(1);
    }
    static char row[4096], line[1024];
    int flags = batch_one(name, rubrics, nrub, row, sizeof row, line, sizeof line);
    if (!O.keep) tree_remove(tmp_root);
    char msg[sizeof row + sizeof line + 32];
    int len = snprintf(msg, sizeof msg, "%d %zu\n%s%s\n", flags, strlen(row), row, line);
    /* Under the pipe's 64 KiB: written whole, and the grader reads it once this process is gone. */
    if (len < 0 || write(fd, msg, (size_t)len) != len) _exit(1);
    _exit(0);
}

/* Start a worker for student index in w, the slot-th (which --run-as user it runs as); returns 0, or -1 (said why). */
static int start_worker(worker_t *w, int slot, const char *name, int index, rubric_t *rubrics, int nrub) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        fprintf(stderr, "grade: cannot create a pipe for student %s: %s\n", name, strerror(errno));
        return -1;
    }
    fflush(NULL);
    /* As in sandbox_run: no signal handler of the grader may run in the worker. */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    pid_t grader = getpid(), pid = fork();
    if (pid == 0) {
        close(p[0]);
        batch_worker(name, index, slot, rubrics, nrub, p[1], grader);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(p[1]);
    if (pid < 0) {
        fprintf(stderr, "grade: cannot start a worker for student %s: %s\n", name, strerror(errno));
        close(p[0]);
        return -1;
    }
    w->pid = pid;
    w->fd = p[0];
    w->student = index;
    return 0;
}

/* A worker has exited (status): its row into *row (malloc'd; NULL when it
 * sent none: a row that says it was not graded), its messages shown, each as
 * "grade: NAME: ...", then its line; *flags gets the worker's BATCH_* flags.
 * Returns 1 when the worker died before it sent the student's scores. */
static int finish_worker(worker_t *w, const char *name, int status, char **row, int *flags, const rubric_t *rubrics,
                         int nrub) {
    char buf[8192];
    size_t len = 0;
    ssize_t r;
    while (len + 1 < sizeof buf && (r = read(w->fd, buf + len, sizeof buf - 1 - len)) != 0) {
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    close(w->fd);
    char log[PATH_MAX + 32];
    snprintf(log, sizeof log, "%s/student-%d.log", tmp_root, w->student);
    FILE *f = fopen(log, "r");
    char l[4096];
    while (f && fgets(l, sizeof l, f)) {
        const char *m = strncmp(l, "grade: ", 7) ? l : l + 7;
        fprintf(stderr, "grade: %s: %s%s", name, m, m[strlen(m) - 1] == '\n' ? "" : "\n");
    }
    if (f) fclose(f);
    if (!O.keep) unlink(log);
    *row = NULL;
    *flags = 0;
    int b = -1, used = 0;
    size_t rl = 0;
    if (sscanf(buf, "%d %zu\n%n", &b, &rl, &used) != 2 || used == 0 || b < 0 ||
        b > (BATCH_JSON_FAILED | BATCH_NO_DEVICE | BATCH_GRADER_ERROR) || rl > len - (size_t)used || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        char how[64], note[256], r[1024];
        if (WIFSIGNALED(status)) snprintf(how, sizeof how, "was killed by signal %d", WTERMSIG(status));
        else snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(status));
        fprintf(stderr, "grade: student %s was not graded: its worker process %s before it sent the scores; "
                        "its row says so. Grade it alone: grade --src %s/%s\n", name, how, O.batch, name);
        snprintf(note, sizeof note, "not graded: its worker process %s; grade it alone with --src", how);
        csv_row(r, sizeof r, name, NULL, 0, rubrics, nrub, note);
        *row = strdup(r);
        printf("%-24s %s\n", name, note);
        w->pid = 0;
        return 1;
    }
    *row = strndup(buf + used, rl);
    printf("%s", buf + used + rl);
    *flags = b;
    w->pid = 0;
    return !*row;
}

/* --batch: one submission per subfolder; a CSV row each, and one for every
 * other entry (a zip, a file, a link), marked not graded, so that no student
 * is missing from the CSV in silence. */
static int run_batch(rubric_t *rubrics, int nrub) {
    const char *csv_path = O.csv_path ? O.csv_path : "grades.csv";
    /* The rows go to NAME.partial beside NAME, each flushed as soon as its
     * student is graded, and NAME is replaced only when the batch is done: a
     * batch that dies (killed, a crash, a full disk) leaves the old NAME as it
     * was and every finished row in NAME.partial. A link is replaced through,
     * not by the file. */
    char final_path[PATH_MAX], part[PATH_MAX + 16];
    struct stat lst;
    if (!(lstat(csv_path, &lst) == 0 && S_ISLNK(lst.st_mode) && realpath(csv_path, final_path)))
        snprintf(final_path, sizeof final_path, "%s", csv_path);
    snprintf(part, sizeof part, "%s.partial", final_path);
    int cfd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    FILE *csv = cfd >= 0 ? fdopen(cfd, "w") : NULL;
    if (!csv) {
        fprintf(stderr, "grade: cannot write %s: %s\n", part, strerror(errno));
        if (cfd >= 0) close(cfd);
        return 1;
    }
    if (stat(final_path, &lst) == 0) fchmod(cfd, lst.st_mode & 0777); /* the old file's mode */
    snprintf(csv_stop_note, sizeof csv_stop_note, "grade: the rows graded so far are in %s; %s is unchanged\n",
             part, csv_path);
    csv_partial_open = 1;
    char header[64 + GRADE_MAX_LABS * 16];
    int hl = snprintf(header, sizeof header, "student");
    for (int i = 0; i < nrub; i++) hl += snprintf(header + hl, sizeof header - (size_t)hl, ",lab %s", rubrics[i].nn);
    snprintf(header + hl, sizeof header - (size_t)hl, ",total,max,notes\n");
    fputs(header, csv);
    struct dirent **ents;
    int m = scandir(O.batch, &ents, NULL, alphasort);
    if (m < 0) {
        fprintf(stderr, "grade: cannot read %s: %s\n", O.batch, strerror(errno));
        csv_partial_open = 0;
        fclose(csv);
        unlink(part);
        return 1;
    }
    /* The students: every entry not starting with a dot (.DS_Store), in name
     * order; those that are not folders get a row that says why they were
     * not graded (skip[s]), as batch_check named them. */
    int ns = 0, nskipped = 0;
    const char **skip = calloc((size_t)m + 1, sizeof *skip);
    if (!skip) {
        fprintf(stderr, "grade: out of memory for %d entries of %s\n", m, O.batch);
        m = 0;
    }
    for (int s = 0; s < m; s++) {
        char sub[PATH_MAX * 2];
        snprintf(sub, sizeof sub, "%s/%s", O.batch, ents[s]->d_name);
        struct stat st;
        if (ents[s]->d_name[0] == '.') {
            free(ents[s]);
            continue;
        }
        const char *why = NULL;
        if (lstat(sub, &st) != 0) why = "not graded: it could not be read";
        else if (S_ISLNK(st.st_mode)) why = "not graded: a link (links are not followed)";
        else if (!S_ISDIR(st.st_mode))
            why = is_archive(ents[s]->d_name) ? "not graded: not a folder; unzip it first"
                                              : "not graded: not a folder (a submission is a folder of files)";
        nskipped += why != NULL;
        skip[ns] = why;
        ents[ns++] = ents[s];
    }
    int graded = 0, bad = 0, nodev = 0, stop = 0, trouble = 0;
    if (O.json_path && mkdirs(O.json_path, 0755) != 0) {
        fprintf(stderr, "grade: cannot create %s: %s\n", O.json_path, strerror(errno));
        bad = 1;
    }
    char **rows = O.parallel > 1 ? calloc((size_t)ns + 1, sizeof *rows) : NULL; /* --parallel's, in name order */
    if (O.parallel > 1 && !rows) {
        fprintf(stderr, "grade: out of memory for %d students\n", ns);
        ns = 0;
        bad = 1;
    }
    if (rows) {
        /* The entries that are not folders: their rows now, as they need no worker. */
        for (int s = 0; s < ns; s++) {
            if (!skip[s]) continue;
            char row[1024];
            csv_row(row, sizeof row, ents[s]->d_name, NULL, 0, rubrics, nrub, skip[s]);
            rows[s] = strdup(row);
            fputs(row, csv);
            printf("%-24s %s\n", ents[s]->d_name, skip[s]);
        }
        fflush(csv);
    }
    if (O.parallel <= 1) {
        for (int s = 0; s < ns && !stop; s++) {
            static char row[4096], line[1024];
            int flags = 0;
            if (skip[s]) {
                csv_row(row, sizeof row, ents[s]->d_name, NULL, 0, rubrics, nrub, skip[s]);
                snprintf(line, sizeof line, "%-24s %s", ents[s]->d_name, skip[s]);
            } else {
                fprintf(stderr, "grade: student %s\n", ents[s]->d_name);
                flags = batch_one(ents[s]->d_name, rubrics, nrub, row, sizeof row, line, sizeof line);
                graded++;
            }
            bad |= flags & BATCH_JSON_FAILED;
            trouble += (flags & BATCH_GRADER_ERROR) != 0;
            fputs(row, csv);
            fflush(csv); /* the row survives whatever happens to the grader next */
            printf("%s\n", line);
            if (flags & BATCH_NO_DEVICE) {
                nodev++;
                /* Every later student would get the same zeros: stop, unless the machine shows a
                 * GPU (then it may be this submission that hid it, and the others are graded). */
                stop = !gpu_in_sight();
            }
        }
    } else {
        /* Rows reach NAME.partial as students finish, in that order; NAME
         * gets them in name order at the end. */
        worker_t w[64];
        memset(w, 0, sizeof w);
        int next = 0, running = 0;
        while ((next < ns && !stop) || running > 0) {
            for (int k = 0; k < O.parallel; k++) {
                while (next < ns && skip[next]) next++;
                if (next >= ns || stop) break;
                if (w[k].pid) continue;
                fprintf(stderr, "grade: student %s\n", ents[next]->d_name);
                if (start_worker(&w[k], k, ents[next]->d_name, next, rubrics, nrub) != 0) bad = 1;
                else running++;
                next++;
            }
            if (!running) continue;
            int status;
            pid_t p = waitpid(-1, &status, 0);
            if (p < 0 && errno == EINTR) continue;
            if (p < 0) break;
            int k = 0;
            while (k < O.parallel && w[k].pid != p) k++;
            if (k == O.parallel) continue; /* an orphan a worker left, re-parented here */
            running--;
            int s = w[k].student, flags = 0;
            int died = finish_worker(&w[k], ents[s]->d_name, status, &rows[s], &flags, rubrics, nrub);
            /* What the dead worker's tests left must not run beside the next student of its slot. */
            if (died && O.run_as) sandbox_clean_user(run_uids[k], run_gids[k]);
            bad |= died;
            bad |= flags & BATCH_JSON_FAILED;
            trouble += (flags & BATCH_GRADER_ERROR) != 0;
            if (flags & BATCH_NO_DEVICE) {
                nodev++;
                stop |= !gpu_in_sight(); /* as one at a time: the running ones finish, no new one starts */
            }
            if (rows[s]) {
                fputs(rows[s], csv);
                fflush(csv);
                graded += !died;
            }
        }
    }
    int werr = ferror(csv) || fflush(csv) != 0;
    if (rows && !werr) {
        /* Now in name order, as a batch graded one by one writes them. */
        werr = fseek(csv, 0, SEEK_SET) != 0 || ftruncate(cfd, 0) != 0;
        if (!werr) fputs(header, csv);
        for (int s = 0; s < ns && !werr; s++)
            if (rows[s]) fputs(rows[s], csv);
    }
    for (int s = 0; s < ns; s++) {
        if (rows) free(rows[s]);
        free(ents[s]);
    }
    free(rows);
    free(ents);
    free(skip);
    werr = werr || ferror(csv) || fflush(csv) != 0 || fsync(cfd) != 0;
    csv_partial_open = 0;
    werr |= fclose(csv) != 0;
    if (stop) {
        /* As a batch stopped by a signal: the old CSV stays, the rows so far are beside it. */
        fprintf(stderr, "grade: ERROR: stopped the batch after %d submission(s): no GPU was visible to the checks "
                        "and this machine shows none (nvidia-smi lists no GPU, and there is no /dev/nvidia*), so "
                        "every student would get zeros that are no grade. Grade the numerics with --target emu, "
                        "or run on a GPU node. The rows so far are in %s; %s is unchanged\n",
                graded, part, csv_path);
        return 1;
    }
    if (werr || rename(part, final_path) != 0) {
        fprintf(stderr, "grade: cannot write %s: %s; the rows are in %s\n", csv_path,
                werr ? "write failed" : strerror(errno), part);
        bad = 1;
    }
    if (nodev) {
        fprintf(stderr, "grade: ERROR: %d submission(s) not graded: every check of a lab skipped itself for want of "
                        "a device (their rows say so). Grade the numerics with --target emu, or run on a GPU node\n",
                nodev);
        bad = 1;
    }
    if (trouble) {
        fprintf(stderr, "grade: ERROR: %d submission(s) have tests the grader could not grade for a fault of its own "
                        "(their rows say 'grader error' and why); fix that and grade them again\n", trouble);
        bad = 1;
    }
    char skipped[64] = "";
    if (nskipped) snprintf(skipped, sizeof skipped, ", %d entr%s not graded (not a folder)", nskipped, nskipped > 1 ? "ies" : "y");
    printf("grade: %d submission(s)%s; scores in %s%s%s\n", graded, skipped, csv_path, O.json_path ? ", results in " : "",
           O.json_path ? O.json_path : "");
    /* Every submission had the same inputs: this reproduces a student's run. */
    printf("grade: seed %llu (grade --src <student's folder> --seed %llu grades one again on the same inputs)\n",
           O.seed, O.seed);
    return bad;
}

/* --run-as USER[,USER...]: look each user up, and claim the ones this run
 * uses (one per --parallel worker) for it alone, since every process of
 * them is killed after each test (sandbox.c). A student graded beside
 * another runs as a user of its own: its code can neither signal what runs
 * for the other nor write into the other's build. 0, or -1 (said why). */
static int run_as_users(void) {
    if (getuid() != 0) {
        fprintf(stderr, "grade: --run-as %s needs a grader run as root (it drops to that user for student code); "
                        "run it with sudo, or leave --run-as out\n", O.run_as);
        return -1;
    }
    const char *p = O.run_as;
    for (n_run = 0; *p || n_run == 0; n_run++) {
        size_t l = strcspn(p, ",");
        if (l == 0 || l >= sizeof run_names[0] || n_run == RUN_AS_MAX) {
            fprintf(stderr, "grade: --run-as %s: give user names separated by commas (at most %d, each shorter than "
                            "%zu bytes), e.g. --run-as grader1,grader2\n", O.run_as, RUN_AS_MAX, sizeof run_names[0]);
            return -1;
        }
        memcpy(run_names[n_run], p, l);
        run_names[n_run][l] = '\0';
        struct passwd *pw = getpwnam(run_names[n_run]);
        if (!pw || pw->pw_uid == 0) {
            fprintf(stderr, "grade: --run-as: %s is %s; give an existing unprivileged user (e.g. made with useradd "
                            "--system --no-create-home %s)\n", run_names[n_run], pw ? "root's uid" : "no user here",
                    pw ? "grader-student" : run_names[n_run]);
            return -1;
        }
        run_uids[n_run] = pw->pw_uid;
        run_gids[n_run] = pw->pw_gid;
        for (int k = 0; k < n_run; k++)
            if (run_uids[k] == run_uids[n_run]) {
                fprintf(stderr, "grade: --run-as: %s and %s are one user (uid %u); each worker needs one of its own\n",
                        run_names[k], run_names[n_run], (unsigned)run_uids[k]);
                return -1;
            }
        p += l + (p[l] == ',');
        if (p[-1] == ',' && !*p) {
            fprintf(stderr, "grade: --run-as %s ends with a comma; give user names separated by commas\n", O.run_as);
            return -1;
        }
    }
    if (n_run < O.parallel) {
        fprintf(stderr, "grade: --parallel %d with --run-as needs %d users, one per worker, so that no student's code "
                        "can signal or write into what runs for another graded beside it: give --run-as USER1,USER2,... "
                        "(%d given), or grade one at a time\n", O.parallel, O.parallel, n_run);
        return -1;
    }
    int used = O.parallel;
    for (int k = 0; k < used; k++) {
        char why[1024];
        if (sandbox_claim_user(run_uids[k], why, sizeof why) != 0) {
            fprintf(stderr, "grade: --run-as %s: %s\n", run_names[k], why);
            return -1;
        }
        for (int j = 0; j < k; j++)
            if (run_gids[j] == run_gids[k])
                fprintf(stderr, "grade: warning: --run-as users %s and %s share a group (gid %u), so each may read "
                                "what the other's student is graded with; give each a group of its own\n",
                        run_names[j], run_names[k], (unsigned)run_gids[k]);
    }
    sandbox_own_users(run_uids, run_gids, used);
    run_uid = run_uids[0];
    run_gid = run_gids[0];
    run_name = run_names[0];
    return 0;
}

/* Options, the private folder and the base build, then one submission (or a
 * batch), the table and results.json. Exit status: see the file comment. */
int main(int argc, char **argv) {
    /* Started with standard input, output or error closed (by a cron job or
     * a careless script), the pipes the grader makes would take those
     * numbers, and a child's fds 0-2 set up from them would clash: each
     * closed one is /dev/null instead. */
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd) return 1;
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    umask(022);
    parse_args(argc, argv);
    double t0 = now_s();
    int target_given = O.target[0] != '\0';
    if (!target_given) snprintf(O.target, sizeof O.target, "%s", have_gpu() ? "cuda" : "emu");
    if (O.gpu_build && !strcmp(O.target, "cuda")) {
        fprintf(stderr, "grade: --gpu-build adds nvcc's compile of the student's .cu files to the emulator's build "
                        "(--target emu); --target cuda%s compiles them with nvcc anyway: leave --gpu-build out\n",
                target_given ? "" : " (chosen because nvidia-smi lists a GPU here)");
        return 2;
    }
    if (O.gpu_build && !strcmp(O.target, "emu") && !have_cuda_toolkit()) {
        fprintf(stderr, "grade: --gpu-build compiles the student's .cu files with nvcc, and this machine has no CUDA "
                        "toolkit (nvcc on PATH, or CUDA_HOME or /usr/local/cuda with bin/nvcc and "
                        "include/cuda_runtime_api.h); install it, or leave --gpu-build out\n");
        return 2;
    }
    if (!O.seed_set) random_bytes(&O.seed, sizeof O.seed), O.seed %= 1000000000000ULL;
    if (O.seed == 2024 && !O.seed_set) O.seed++; /* never the checks' default */
    if (absolutize("--root", O.root, sizeof O.root) != 0) return 2;
    if (!O.batch && !O.prepare && absolutize("--src", O.src, sizeof O.src) != 0) return 2; /* unused otherwise */
    static char base_cache[PATH_MAX];
    if (O.base_cache) {
        if (path_fits(base_cache, sizeof base_cache, "read --base-cache", "give a shorter path", "%s", O.base_cache) ||
            absolutize("--base-cache", base_cache, sizeof base_cache) != 0)
            return 2;
        O.base_cache = base_cache;
        /* Inside the tree it would be copied into every base and change every key. */
        size_t rl = strlen(O.root);
        const char *rest = base_cache + rl; /* after the root, when the cache is inside it */
        int inside = !strncmp(base_cache, O.root, rl) && (rest[0] == '/' || !rest[0]);
        int in_build = inside && !strncmp(rest, "/build", 6) && (rest[6] == '/' || !rest[6]);
        if (inside && !in_build) {
            fprintf(stderr, "grade: --base-cache %s is inside the course tree %s, which is copied for every lab; "
                            "put it under %s/build or outside the tree\n", base_cache, O.root, O.root);
            return 2;
        }
    }
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/autograder/rubrics", O.root);
    struct stat st;
    if (stat(probe, &st) != 0) {
        fprintf(stderr, "grade: %s is not the course tree (no autograder/rubrics); use --root\n", O.root);
        return 2;
    }
    if (!O.batch && !O.prepare && stat(O.src, &st) != 0) {
        fprintf(stderr, "grade: --src %s: %s; give the folder of the submission (DIR/NN-topic/<files>, "
                        "DIR/labs/NN-topic/<files> or DIR/<files>; default: labs)\n", O.src, strerror(errno));
        return 2;
    }
    if (!O.batch && !O.prepare && !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "grade: --src %s is not a folder; a submission is a folder of files%s\n", O.src,
                is_archive(O.src) ? " (unzip it first)" : "");
        return 2;
    }
    if (O.batch && batch_check(O.batch) <= 0) return 2;
    if (O.batch && check_file_dest("--csv", O.csv_path ? O.csv_path : "grades.csv", 1) != 0) return 2;
    if (O.json_path && (O.batch ? check_dir_dest("--json", O.json_path) : check_file_dest("--json", O.json_path, 0)) != 0)
        return 2;
    if (O.run_as && run_as_users() != 0) return 2;

    /* Which labs: --lab, else every lab folder (a rubric is required). */
    lab_list_t L;
    list_labs(&L);
    static rubric_t rubrics[GRADE_MAX_LABS];
    int nrub = 0, bad_rubric = 0;
    char notes[16384] = "";
    for (int i = 0; i < L.n; i++) {
        int want = O.nlabs == 0;
        for (int k = 0; k < O.nlabs; k++) want |= !strcmp(O.labs[k], L.nn[i]);
        if (!want) continue;
        char err[512];
        if (rubric_load(O.root, L.nn[i], &rubrics[nrub], err, sizeof err) != 0) {
            snprintf(notes + strlen(notes), sizeof notes - strlen(notes), "lab %s: not graded: %s\n", L.lab[i], err);
            bad_rubric |= O.nlabs > 0;
            continue;
        }
        nrub++;
    }
    /* Every lab asked for has a rubric that cannot be read: say why now, not after building the
     * course libraries and under a table with no rows. On Gradescope the run goes on, so that
     * results.json carries the reason to the course's page. */
    if (bad_rubric && nrub == 0 && !O.gradescope && !O.prepare) {
        for (char *line = notes, *end; *line; line = end + 1) {
            end = strchr(line, '\n');
            if (!end) end = line + strlen(line) - 1;
            fprintf(stderr, "grade: %.*s\n", (int)(end - line), line);
        }
        return 2;
    }
    for (int i = 0; O.parallel > 1 && !strcmp(O.target, "cuda") && i < nrub; i++)
        for (int k = 0; k < rubrics[i].ntests; k++)
            if (rubrics[i].tests[k].kind == KIND_SPEED && selected(&rubrics[i].tests[k])) {
                fprintf(stderr, "grade: --parallel %d on --target cuda would run lab %s's speed test '%s' beside "
                                "other submissions' tests, and time them against each other: grade speed one "
                                "submission at a time, or add --only with the numerics tests\n",
                        O.parallel, rubrics[i].nn, rubrics[i].tests[k].name);
                return 2;
            }
    for (int i = 0; O.gradescope && O.nlabs && i < L.n && n_other_labs < GRADE_MAX_LABS; i++) {
        int graded = 0;
        for (int k = 0; k < O.nlabs; k++) graded |= !strcmp(O.labs[k], L.nn[i]);
        static rubric_t other;
        char err[512];
        if (graded || rubric_load(O.root, L.nn[i], &other, err, sizeof err) != 0) continue;
        other_lab_t *ol = &other_labs[n_other_labs++];
        snprintf(ol->nn, sizeof ol->nn, "%s", other.nn);
        snprintf(ol->lab, sizeof ol->lab, "%s", other.lab);
        ol->nf = student_files(&other, ol->files);
    }
    for (int k = 0; k < O.nlabs; k++) {
        int found = 0;
        for (int i = 0; i < L.n; i++) found |= !strcmp(O.labs[k], L.nn[i]);
        if (!found) {
            char have[GRADE_MAX_LABS * 4] = "";
            for (int i = 0; i < L.n; i++) snprintf(have + strlen(have), sizeof have - strlen(have), " %s", L.nn[i]);
            fprintf(stderr, "grade: no lab %s under %s/labs; labs:%s\n", O.labs[k], O.root, have[0] ? have : " none");
            return 2;
        }
    }

    if (!strcmp(O.target, "cuda") && !O.prepare && !gpu_in_sight())
        /* Not refused: CUDA may see a GPU that nvidia-smi and /dev do not show (a container, WSL). */
        fprintf(stderr, "grade: warning: --target cuda, but this machine shows no GPU (nvidia-smi lists none, no "
                        "/dev/nvidia*); if the checks find no device either, grading ends with an error. Without a "
                        "GPU, grade the numerics with --target emu\n");

    install_signal_handlers(on_signal);
    const char *tmpbase = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    /* Cut, the name would lose its XXXXXX and mkdtemp would fail with EINVAL, which says nothing of why. */
    if (path_fits(tmp_root, sizeof tmp_root, "make this run's folder", "set TMPDIR to a shorter path (or unset it "
                  "for /tmp)", "%s/grade.XXXXXX", tmpbase) != 0)
        return 1;
    if (!mkdtemp(tmp_root)) {
        fprintf(stderr, "grade: cannot create a temp folder under %s: %s\n", tmpbase, strerror(errno));
        return 1;
    }
    tmp_ready = 1;
    if (O.run_as) start_watchman();
    chmod(tmp_root, 0755);
    char home[PATH_MAX + 8];
    snprintf(home, sizeof home, "%s/home", tmp_root);
    mkdirs(home, 0755);
    course_labs = L;
    base_ok = prepare_base() == 0;
    if (!base_ok && !cache_refused) fprintf(stderr, "grade: the course libraries did not build:\n%s\n", base_log);

    int rc = 0;
    if (O.prepare) {
        if (base_ok) printf("grade: the course libraries for %s are ready in %s\n", O.target, base_dir);
    } else if (O.batch) {
        rc = run_batch(rubrics, nrub);
    } else {
        result_t *res = NULL;
        char why[1024] = "";
        int n = grade_submission(O.src, rubrics, nrub, &res, notes, sizeof notes, why, sizeof why);
        double wall = now_s() - t0;
        /* Which labs: one by its folder's name, several by number. On
         * Gradescope --src is a temp folder, which says nothing. */
        char graded[512] = "";
        int ng = 0;
        for (int i = 0; i < n; i++)
            if (!i || strcmp(res[i].lab, res[i - 1].lab)) ng++;
        for (int i = 0; i < n; i++)
            if (!i || strcmp(res[i].lab, res[i - 1].lab))
                snprintf(graded + strlen(graded), sizeof graded - strlen(graded), "%s%s", graded[0] ? ", " : "",
                         ng > 1 ? res[i].nn : res[i].lab);
        char title[PATH_MAX + 1024];
        snprintf(title, sizeof title, "Grade of %s, %s%s (target %s, seed %llu)",
                 O.gradescope ? "the submission" : O.src, ng == 0 ? "no lab" : ng > 1 ? "labs " : "lab ", graded,
                 O.target, O.seed);
        char rel[PATH_MAX + 2];
        snprintf(rel, sizeof rel, "%s/", O.root);
        replace_all(title, rel, "");
        char nodev_labs[512], nodev[1200] = "";
        if (labs_without_device(res, n, nodev_labs, sizeof nodev_labs)) {
            /* Zeros that say nothing of the submission: loud, and not a normal exit. */
            no_device_message(nodev, sizeof nodev, nodev_labs);
            snprintf(notes + strlen(notes), sizeof notes - strlen(notes), "ERROR: %s\n", nodev);
            rc = 1;
        }
        report_table(res, n, title, wall);
        if (!O.gradescope) report_rerun_hint(res, n, O.seed, O.src);
        if (notes[0]) printf("\n%s", notes);
        if (nodev[0]) fprintf(stderr, "grade: ERROR: %s\n", nodev);
        if (grader_trouble)
            fprintf(stderr, "grade: ERROR: some tests could not be graded for a fault of the grader's own (their "
                            "status is 'grader error', and the message says why); fix that and grade again\n");
        if (O.json_path) {
            char summary[20000], pts[96];
            results_points(pts, sizeof pts, res, n);
            int gpu_left_out = 0; /* a lab without speed tests has none to leave out */
            for (int i = 0; i < n; i++) gpu_left_out |= res[i].status == ST_NEEDS_GPU;
            snprintf(summary, sizeof summary, "Graded on %s with seed %llu: %s.%s\n%s", O.target, O.seed, pts,
                     gpu_left_out ? " Speed tests need a GPU and are not in this total." : "", notes);
            errno = 0;
            if (report_json(O.json_path, res, n, wall, summary) != 0) {
                fprintf(stderr, "grade: cannot write %s: %s\n", O.json_path, errno ? strerror(errno) : "write failed");
                rc = 1;
            } else {
                printf("results: %s\n", O.json_path);
            }
        }
        free_results(res, n);
    }
    if (!base_ok || bad_rubric || grader_trouble) rc = 1;
    if (O.keep) fprintf(stderr, "grade: kept %s\n", tmp_root);
    else tree_remove(tmp_root);
    tmp_ready = 0;
    watchman_release();
    return rc;
}
