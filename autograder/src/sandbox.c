/*
 * Running one untrusted child: a build of student code or one graded test.
 *
 * The child gets its own session (so a timeout kills everything it started,
 * found by its session id and below the grader, and with --run-as every
 * process of its user, after which what that user left in the shared temp
 * folders goes too), resource limits (CPU seconds, address space,
 * file size, no core files), an environment the caller built from an allow-list, stdin
 * from /dev/null, and stdout+stderr through one pipe whose bytes are counted
 * and capped. With a token, fd 3 carries the token in and fd 4 carries the
 * verdict out (see autograder/harness/grade_main.c); every other descriptor
 * is closed. A test on several MPI ranks runs mpirun, which passes neither fd
 * on to the ranks; the verdicts then come on a listening Unix socket instead
 * (the channel, below), one connection per rank. Nothing the child does can
 * make this function fail or hang past the timeout: the worst outcome is a
 * result that says what went wrong.
 *
 * Not here: deciding what a result means (grade.c does that).
 */
#include "grade.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Seconds since an arbitrary start, immune to clock changes. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Set one limit, soft and hard, so the child cannot raise it again. */
static void limit(int what, long long v) {
    struct rlimit rl = {(rlim_t)v, (rlim_t)v};
    setrlimit(what, &rl);
}

/* Close every descriptor from lo up; close_range() is missing on old kernels. */
static void close_from(int lo) {
    if (close_range((unsigned)lo, ~0U, 0) != 0)
        for (int fd = lo; fd < 65536; fd++) close(fd);
}

/* The child could not be started: its errno on the start pipe ew, which
 * exec would have closed, then exit 127. The parent tells this apart from a
 * program that itself exits 127 without a word. */
static void start_failed(int ew) {
    int e = errno;
    if (ew >= 0 && write(ew, &e, sizeof e) != (ssize_t)sizeof e) { /* then it reads as a plain exit 127 */ }
    _exit(127);
}

/* The child side: everything between fork and exec. Only async-signal-safe
 * calls; on any failure it says why on the start pipe (start_w, close on
 * exec) and exits 127. parent is the grader's pid. */
static void child_exec(char *const argv[], const sandbox_opts_t *o, int out_w, int tok_r, int rep_w, int start_w,
                       pid_t parent) {
    setsid();
    int ew = fcntl(start_w, F_DUPFD_CLOEXEC, 10); /* out of the way of fds 0-4 */
    int devnull = open("/dev/null", O_RDONLY);
    if (ew < 0 || devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(out_w, 2) < 0) start_failed(ew);
    if (tok_r >= 0) {
        /* Move the ends to 3 and 4 without clobbering one with the other. */
        int t = fcntl(tok_r, F_DUPFD, 10), r = fcntl(rep_w, F_DUPFD, 10);
        if (t < 0 || r < 0 || dup2(t, 3) < 0 || dup2(r, 4) < 0 || dup3(ew, 5, O_CLOEXEC) < 0) start_failed(ew);
        ew = 5;
        close_from(6);
    } else {
        if (dup3(ew, 3, O_CLOEXEC) < 0) start_failed(ew);
        ew = 3;
        close_from(4);
    }
    if (o->cpu_s > 0) limit(RLIMIT_CPU, o->cpu_s);
    if (o->as_bytes > 0) limit(RLIMIT_AS, o->as_bytes);
    if (o->fsize_bytes > 0) limit(RLIMIT_FSIZE, o->fsize_bytes);
    limit(RLIMIT_CORE, 0);
    if (o->run_as) {
        /* A dedicated user: its process count limit is its own. */
        limit(RLIMIT_NPROC, 4096);
        if (setgroups(0, NULL) != 0 || setgid(o->gid) != 0 || setuid(o->uid) != 0) start_failed(ew);
    }
    /* A backstop for a grader that dies without running its signal handler
     * (SIGKILL, a crash): the child dies with it instead of running on in a
     * session of its own. After setuid(), which clears the setting; and if
     * the grader is already gone, the child is not started at all. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) start_failed(ew);
    if (o->cwd && chdir(o->cwd) != 0) start_failed(ew);
    signal(SIGPIPE, SIG_DFL);
    execve(argv[0], argv, o->env);
    start_failed(ew);
}

/* Append what arrived to a growing, capped buffer. Bytes past the cap are
 * counted but dropped. */
static void keep(char **buf, size_t *len, size_t *cap, long long cap_max, const char *data, size_t n) {
    if ((long long)*len >= cap_max) return;
    if ((long long)(*len + n) > cap_max) n = (size_t)(cap_max - (long long)*len);
    if (*len + n + 1 > *cap) {
        size_t nc = (*cap ? *cap : 4096);
        while (nc < *len + n + 1) nc *= 2;
        char *nb = realloc(*buf, nc);
        if (!nb) return;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
}

/* What getdents64() returns, one entry after another. */
struct proc_dirent {
    unsigned long long ino;
    long long off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

/* A decimal number at *p (after spaces), *p moved past it; -1 when none. */
static long scan_long(const char **p, const char *end) {
    const char *s = *p;
    while (s < end && *s == ' ') s++;
    int neg = s < end && *s == '-';
    s += neg;
    if (s >= end || *s < '0' || *s > '9') { *p = s; return -1; }
    long v = 0;
    while (s < end && *s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    *p = s;
    return neg ? -v : v;
}

/* ---- the --run-as users: every process of one is the grader's ----------------------
 *
 * A --run-as user is the grader's alone (sandbox_claim_user makes sure of it
 * at the start), so every process of that user is a test's, wherever it is,
 * and all of them can be killed at once: a process that has become the user
 * sends SIGKILL to -1, which reaches every process it may signal (those of
 * its uid, even one running a set-uid program) but itself. The kernel adds
 * no process while it sends that round, and a fork whose parent has just
 * been sent it fails, so nothing forks its way out: a process that keeps
 * changing its pid, its group and its session, which can slip between the
 * passes of kill_left_behind below, cannot slip through this. */

enum { OWN_MAX = 64 };
static uid_t own_uid[OWN_MAX];
static gid_t own_gid[OWN_MAX];
static volatile int n_own;
/* The user of the child sandbox_run is running, with --run-as (run_as_now: 0 without). */
static volatile int run_as_now;
static volatile uid_t run_as_uid;
static volatile gid_t run_as_gid;

/* Every process of uid, killed at once (above). A raw fork: the grader's
 * signal handler calls this, and glibc's fork() takes locks (malloc's) that
 * the code it interrupted may hold; the child makes only system calls. */
static void kill_user(uid_t uid, gid_t gid) {
    if (uid == 0) return; /* never: it would be everything */
    int saved = errno;
    long k = syscall(SYS_clone, (unsigned long)SIGCHLD, 0L, 0L, 0L, 0L);
    if (k == 0) {
        if (syscall(SYS_setgroups, 0, NULL) == 0 && syscall(SYS_setgid, gid) == 0 && syscall(SYS_setuid, uid) == 0)
            kill(-1, SIGKILL);
        syscall(SYS_exit_group, 0);
    }
    while (k > 0 && waitpid((pid_t)k, NULL, 0) < 0 && errno == EINTR) {
    }
    errno = saved;
}

/* The user of the running child (with --run-as), then every user this
 * grader owns (sandbox_own_users). */
static void kill_users(void) {
    int cur = run_as_now;
    uid_t cu = run_as_uid;
    if (cur) kill_user(cu, run_as_gid);
    for (int i = 0; i < n_own; i++)
        if (!cur || own_uid[i] != cu) kill_user(own_uid[i], own_gid[i]);
}

void sandbox_own_users(const uid_t *uids, const gid_t *gids, int n) {
    n_own = 0;
    for (int i = 0; i < n && i < OWN_MAX; i++) {
        own_uid[i] = uids[i];
        own_gid[i] = gids[i];
    }
    n_own = n < OWN_MAX ? n : OWN_MAX;
}

/* A live process's real, effective and saved uids and name from
 * /proc/PID/status; 0, or -1 when it is gone or a zombie (dead) or already
 * sent SIGKILL (dying). */
static int process_of(long pid, unsigned long uids[3], char name[64]) {
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int zombie = 0, threads = 1, dying = 0, have_uid = 0;
    name[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        unsigned long long pend;
        char st;
        if (!strncmp(line, "Name:\t", 6)) {
            snprintf(name, 64, "%s", line + 6);
            name[strcspn(name, "\n")] = '\0';
        }
        else if (sscanf(line, "State: %c", &st) == 1) zombie = st == 'Z';
        else if (sscanf(line, "Threads: %d", &threads) == 1) {}
        else if (sscanf(line, "Uid: %lu %lu %lu", &uids[0], &uids[1], &uids[2]) == 3) have_uid = 1;
        else if ((sscanf(line, "SigPnd: %llx", &pend) == 1 || sscanf(line, "ShdPnd: %llx", &pend) == 1) &&
                 (pend >> (SIGKILL - 1) & 1))
            dying = 1;
    }
    fclose(f);
    return have_uid && !(zombie && threads <= 1) && !dying ? 0 : -1;
}

/* A stream socket bound to name in the abstract namespace (at most 107
 * bytes, what sun_path holds after its leading NUL: no file, so nothing to
 * remove and nothing for --run-as to own; the kernel drops the name with the
 * last descriptor), close on exec, with flags; -1 on failure (errno says why:
 * EADDRINUSE when the name is taken). */
static int abstract_bind(const char *name, int flags) {
    size_t l = strlen(name);
    struct sockaddr_un a;
    if (l + 1 > sizeof a.sun_path) { errno = ENAMETOOLONG; return -1; } /* an abstract name has no '\0' at its end */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
    if (fd < 0) return -1;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path + 1, name, l); /* sun_path[0] = '\0': the abstract namespace */
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l);
    if (bind(fd, (struct sockaddr *)&a, alen) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Where every user may write, outside the grader's folders: a test's code
 * can leave files there (for the next test, another student's in a batch,
 * to read or trip over) or fill them. */
static const char *const shared_dirs[] = {"/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue", NULL};

/* Remove what uid left in the shared folders (each entry at their top that
 * it owns, whatever is in it: tree_remove, no link followed) and every
 * System V shared memory segment, semaphore set and message queue it owns
 * or made (those outlive their processes). Called once every process of uid has
 * been sent SIGKILL (kill_users), so no code of the user's runs any more
 * while it works. Not entries it left inside a folder of another user's; a
 * container per submission is the whole fix. */
static void drop_user_leftovers(uid_t uid) {
    if (uid == 0) return;
    for (int i = 0; shared_dirs[i]; i++) {
        /* Passes until one removes nothing: a listing need not show what
         * comes after an entry removed while it runs. */
        for (int pass = 0, removed = 1; removed && pass < 4; pass++) {
            removed = 0;
            DIR *d = opendir(shared_dirs[i]);
            for (struct dirent *e; d && (e = readdir(d));) {
                struct stat st;
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
                    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_uid != uid)
                    continue;
                char path[PATH_MAX];
                if (snprintf(path, sizeof path, "%s/%s", shared_dirs[i], e->d_name) >= (int)sizeof path) continue;
                tree_remove(path);
                removed = 1;
            }
            if (d) closedir(d);
        }
    }
    /* /proc/sysvipc/{shm,sem,msg}: a header of column names, then one line per object. */
    static const char *const kinds[] = {"shm", "sem", "msg"};
    for (int k = 0; k < 3; k++) {
        char path[64], line[1024];
        snprintf(path, sizeof path, "/proc/sysvipc/%s", kinds[k]);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        /* The owner (uid) and the creator (cuid): an owner may give an object
         * away with IPC_SET, but not the fact that it made it. */
        int id_col = -1, uid_col = -1, cuid_col = -1;
        if (fgets(line, sizeof line, f)) {
            int col = 0;
            for (char *t = strtok(line, " \t\n"); t; t = strtok(NULL, " \t\n"), col++) {
                if (!strcmp(t, "shmid") || !strcmp(t, "semid") || !strcmp(t, "msqid")) id_col = col;
                if (!strcmp(t, "uid")) uid_col = col;
                if (!strcmp(t, "cuid")) cuid_col = col;
            }
        }
        while (id_col >= 0 && uid_col >= 0 && fgets(line, sizeof line, f)) {
            long id = -1, owner = -1, creator = -1;
            int col = 0;
            for (char *t = strtok(line, " \t\n"); t; t = strtok(NULL, " \t\n"), col++) {
                if (col == id_col) id = atol(t);
                if (col == uid_col) owner = atol(t);
                if (col == cuid_col) creator = atol(t);
            }
            if (id < 0 || (owner != (long)uid && creator != (long)uid)) continue;
            if (k == 0) shmctl((int)id, IPC_RMID, NULL);
            else if (k == 1) semctl((int)id, 0, IPC_RMID);
            else msgctl((int)id, IPC_RMID, NULL);
        }
        fclose(f);
    }
}

void sandbox_clean_user(uid_t uid, gid_t gid) {
    kill_user(uid, gid);
    drop_user_leftovers(uid);
}

/* The name of this grader's claim on uid (an abstract socket name). */
static void claim_name(uid_t uid, char *out, size_t n) {
    snprintf(out, n, "grade-run-as-%lu", (unsigned long)uid);
}

int sandbox_claim_user(uid_t uid, char *why, size_t n) {
    static int nheld; /* claims made; each socket stays open (close on exec) for the grader's life */
    char name[64];
    claim_name(uid, name, sizeof name);
    if (nheld >= OWN_MAX) {
        snprintf(why, n, "more than %d users", OWN_MAX);
        return -1;
    }
    /* A grader that has just ended may hold it a moment longer: its watchman
     * (grade.c) keeps the claim while it makes sure nothing of it is left. */
    int fd = abstract_bind(name, 0);
    for (double end = now_s() + 2.0; fd < 0 && errno == EADDRINUSE && now_s() < end; fd = abstract_bind(name, 0))
        usleep(50000);
    if (fd < 0) {
        snprintf(why, n, errno == EADDRINUSE
                             ? "another grader is running tests as this user now (it holds the name @%s), and each "
                               "kills every process of its user after a test; give each grader running at once "
                               "users of its own"
                             : "cannot claim it (the socket @%s: %s)",
                 name, strerror(errno));
        return -1;
    }
    nheld++;
    /* What runs as it now: wait a little for processes a grader that has
     * just ended left dying. */
    for (double end = now_s() + 2.0;; usleep(50000)) {
        long who = 0;
        char wname[64] = "";
        DIR *d = opendir("/proc");
        for (struct dirent *e; d && (e = readdir(d)) && !who;) {
            long pid = atol(e->d_name);
            unsigned long u[3];
            if (pid > 0 && pid != (long)getpid() && process_of(pid, u, wname) == 0 &&
                (u[0] == uid || u[1] == uid || u[2] == uid))
                who = pid;
        }
        if (d) closedir(d);
        if (!who) return 0;
        if (now_s() > end) {
            snprintf(why, n, "process %ld (%s) runs as it; the grader kills every process of its --run-as user "
                             "after each test, and student code run as it could signal or trace them: give a user "
                             "that runs nothing else (useradd --system --no-create-home grader-student), or, if "
                             "they are what a grader stopped with SIGKILL left running, end them (pkill -KILL -U %lu)",
                     who, wname, (unsigned long)uid);
            return -1;
        }
    }
}

/* Kill everything a child left: every process of its session (sid, the
 * child's pid: it called setsid(); -1 for none) and every process below the
 * grader. The grader is a child subreaper (sandbox_run sets it), so an
 * orphan of a test re-parents to the grader instead of init, and even a
 * process that left the session with setsid() of its own is still found
 * below it; the grader runs one child at a time, so nothing below it is
 * anyone else's. killpg() alone would miss mpirun's ranks, which each get a
 * process group of their own, but each pass starts with it on the child's
 * group (whose id is sid): a pass kills the pids it found, and a process
 * that keeps changing its pid (it forks and the parent exits, over and
 * over) has moved on by then, while no fork escapes a signal to its group.
 * (One that also changes its group each time still can, without --run-as:
 * with it, kill_users() takes it first; without, only a pid namespace or a
 * cgroup would hold it.) A few passes, for processes forked
 * while a pass ran. Async-signal-safe (raw getdents64 and hand-made
 * parsing, no stdio or malloc): the grader's signal handler calls it too. */
/* A process below the grader that is not a test's: its watchman (sandbox_spare). */
static volatile pid_t spared;

void sandbox_spare(pid_t pid) { spared = pid; }

static void kill_left_behind(pid_t sid) {
    enum { MAXP = 65536, PID_BITS = 1 << 22 }; /* 2^22: the largest pid_max Linux allows */
    static long pids[MAXP], ppids[MAXP];
    static unsigned char below[MAXP], mark[PID_BITS / 8];
    static long long dbuf[1024]; /* 8 KiB of directory entries, aligned for them */
    long self = (long)getpid();
    kill_users();
    for (int pass = 0; pass < 8; pass++) {
        if (sid > 0) kill(-sid, SIGKILL);
        int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) return;
        int n = 0, found = 0;
        long got;
        while (n < MAXP && (got = syscall(SYS_getdents64, dfd, dbuf, sizeof dbuf)) > 0) {
            for (long off = 0; off < got && n < MAXP;) {
                const struct proc_dirent *e = (const struct proc_dirent *)((const char *)dbuf + off);
                off += e->reclen;
                long pid = 0;
                size_t len = 0;
                while (e->name[len] >= '0' && e->name[len] <= '9' && len < 20) pid = pid * 10 + (e->name[len++] - '0');
                if (!len || e->name[len] || pid == self || (spared > 0 && pid == (long)spared)) continue;
                char path[32], buf[512];
                memcpy(path, e->name, len);
                memcpy(path + len, "/stat", 6);
                int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
                if (fd < 0) continue;
                ssize_t r = read(fd, buf, sizeof buf);
                close(fd);
                if (r <= 0) continue;
                /* "pid (name) state ppid pgrp session ...": the name may hold spaces and ')' */
                const char *end = buf + r, *p = end;
                while (p > buf && p[-1] != ')') p--;
                if (p == buf || p + 2 >= end) continue;
                p++; /* the space after ')' */
                char state = *p++;
                long ppid = scan_long(&p, end), pgrp = scan_long(&p, end), session = scan_long(&p, end);
                /* A zombie is dead, and waits only to be reaped, unless it is
                 * a leader whose own thread exited while its others run on:
                 * then it says Z, with more than one thread (field 20). Such
                 * a process is alive, and was passed over, it and all it forks. */
                long threads = 0;
                for (int f = 7; f <= 20 && p < end; f++) threads = scan_long(&p, end);
                if (pgrp < 0 || session < 0 || (state == 'Z' && threads <= 1)) continue;
                pids[n] = pid;
                ppids[n] = ppid;
                below[n] = session == (long)sid || ppid == self;
                n++;
            }
        }
        close(dfd);
        /* Close "below" over the parent links (a process is below when its
         * parent is), with a bitmap by pid: linear passes, however many processes. */
        memset(mark, 0, sizeof mark);
        for (int a = 0; a < n; a++)
            if (below[a] && pids[a] < PID_BITS) mark[pids[a] >> 3] |= (unsigned char)(1u << (pids[a] & 7));
        for (int changed = 1; changed;) {
            changed = 0;
            for (int a = 0; a < n; a++)
                if (!below[a] && ppids[a] > 0 && ppids[a] < PID_BITS && (mark[ppids[a] >> 3] >> (ppids[a] & 7) & 1)) {
                    below[a] = changed = 1;
                    if (pids[a] < PID_BITS) mark[pids[a] >> 3] |= (unsigned char)(1u << (pids[a] & 7));
                }
        }
        for (int a = 0; a < n; a++)
            if (below[a]) {
                kill((pid_t)pids[a], SIGKILL);
                found = 1;
            }
        if (!found) return;
    }
}

/* The child sandbox_run is waiting for (0: none); read by sandbox_kill_all. */
static volatile pid_t current_child;

/* For the grader's signal handler: kill the running child's session and
 * everything below the grader. Async-signal-safe. */
void sandbox_kill_all(void) {
    pid_t c = current_child;
    kill_left_behind(c > 0 ? c : -1);
}

/* Reap the orphans that re-parented to the grader (never the child being
 * waited for: call this only once it is reaped). */
static void reap_orphans(void) {
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

/* ---- the channel of a test on several ranks ------------------------------------
 *
 * A listening socket in the abstract namespace (no file, so no path-length
 * limit and nothing for --run-as to own), named by a fresh random string the
 * ranks find in GRADE_CHANNEL. Each rank's harness connects before main(),
 * sends "HELLO <rank>\n" and gets the token back; everything it sends later
 * is that rank's report. What a forger could try is refused: a connection
 * beyond the number of ranks, a rank claimed twice, a second connection from
 * one process, or a malformed hello each put a problem on the result, and
 * grade.c fails a test with a problem. */

#define CONN_MAX (GRADE_MAX_RANKS + 8)

typedef struct {
    int fd;          /* -1 once closed */
    int rank;        /* -1 until its hello */
    pid_t pid;       /* the peer process, from SO_PEERCRED */
    char hello[64];
    size_t hlen;
} conn_t;

/* The listening socket for name (an abstract name, abstract_bind), non-blocking; -1 on failure. */
static int channel_listen(const char *name) {
    int fd = abstract_bind(name, SOCK_NONBLOCK);
    if (fd >= 0 && listen(fd, CONN_MAX) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Note the first protocol problem; later ones add nothing the first does not say. */
static void channel_problem(sandbox_result_t *res, const char *fmt, ...) {
    if (res->channel_problem[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->channel_problem, sizeof res->channel_problem, fmt, ap);
    va_end(ap);
}

/* Accept what is waiting on the listening socket. An abstract socket has
 * no permissions, so any local user could connect: a connection from a user
 * other than the test's (uid) is closed unread and counted for nothing, so
 * another user of a shared machine can neither learn the token nor have an
 * honest test failed for tampering. */
static void channel_accept(int lfd, conn_t *c, int *nc, int ranks, uid_t uid, sandbox_result_t *res) {
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) return;
        struct ucred cr;
        socklen_t cl = sizeof cr;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || cr.uid != uid) {
            close(fd);
            continue;
        }
        if (*nc >= ranks || *nc >= CONN_MAX) {
            channel_problem(res, "more connections to the verdict channel than the %d ranks", ranks);
            close(fd);
            continue;
        }
        conn_t *k = &c[(*nc)++];
        memset(k, 0, sizeof *k);
        k->fd = fd;
        k->rank = -1;
        k->pid = cr.pid;
        for (int i = 0; i < *nc - 1; i++)
            if (k->pid > 0 && c[i].pid == k->pid)
                channel_problem(res, "one process (pid %d) connected to the verdict channel twice", (int)k->pid);
    }
}

/* Read what one connection sent: its hello first, then its rank's report. */
static void channel_read(conn_t *k, conn_t *all, int nc, int ranks, const char *token, sandbox_result_t *res,
                         size_t *rep_len, size_t *rep_cap) {
    char buf[65536];
    ssize_t r = read(k->fd, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (r <= 0) {
        /* A hello that filled its buffer is refused when the connection ends
         * there, as when a character other than its newline follows. */
        if (k->rank < 0 && k->hlen + 1 == sizeof k->hello)
            channel_problem(res, "a connection to the verdict channel did not say which of the %d ranks it is",
                            ranks);
        close(k->fd);
        k->fd = -1;
        return;
    }
    size_t off = 0;
    if (k->rank < 0) {
        while (off < (size_t)r && k->hlen + 1 < sizeof k->hello && buf[off] != '\n') k->hello[k->hlen++] = buf[off++];
        /* The rest of the hello, or the newline after a full buffer, is still
         * coming: a hello is read the same whichever reads its bytes come in. */
        if (off == (size_t)r) return;
        k->hello[k->hlen] = '\0';
        /* A hello that has not ended when the buffer is full is refused, not
         * read as its first characters ("HELLO 0000...01" as rank 0). The
         * number is read with strtol, which says when it is too large for a
         * long: sscanf's %d leaves that undefined, and glibc's cut
         * "HELLO 4294967297" to rank 1. A NUL byte would end the string
         * strtol reads, not the hello: "HELLO 1", NUL, "junk" is refused. */
        char *end = k->hello;
        long rank = -1;
        if (strlen(k->hello) == k->hlen && !strncmp(k->hello, "HELLO", 5)) {
            errno = 0;
            rank = strtol(k->hello + 5, &end, 10);
            if (errno || end == k->hello + 5) rank = -1;
        }
        if (buf[off] != '\n' || *end || rank < 0 || rank >= ranks) {
            channel_problem(res, "a connection to the verdict channel did not say which of the %d ranks it is",
                            ranks);
            close(k->fd);
            k->fd = -1;
            return;
        }
        for (int i = 0; i < nc; i++)
            if (&all[i] != k && all[i].rank == rank) {
                channel_problem(res, "rank %d connected to the verdict channel twice (of %d ranks)", (int)rank, ranks);
                close(k->fd);
                k->fd = -1;
                return;
            }
        k->rank = (int)rank;
        res->ranks_heard++;
        off++; /* the newline */
        char line[GRADE_TOKEN_MAX + 2];
        int n = snprintf(line, sizeof line, "%s\n", token);
        /* MSG_NOSIGNAL: a rank that hung up at once must not end the grader
         * with SIGPIPE, whatever the caller does with that signal. */
        if (send(k->fd, line, (size_t)n, MSG_NOSIGNAL) != n) { /* the rank then sends nothing valid */ }
    }
    if (off < (size_t)r)
        keep(&res->rank_report[k->rank], &rep_len[k->rank], &rep_cap[k->rank], 1 << 21, buf + off, (size_t)r - off);
}

/* A child that never started: exit code 127, the reason as its output. */
static void not_started(sandbox_result_t *res, int ranks, const char *why) {
    res->not_started = 1;
    res->exited = 1;
    res->exit_code = 127;
    res->out = strdup(why);
    res->out_len = res->out ? strlen(res->out) : 0;
    res->report = strdup("");
    for (int k = 0; k < ranks; k++) res->rank_report[k] = strdup("");
}

/* Fork, exec with limits, then read output and verdicts until the pipes and
 * the ranks' connections close, killing the session at the deadline or past
 * the output limit. */
void sandbox_run(char *const argv[], const sandbox_opts_t *o, sandbox_result_t *res) {
    memset(res, 0, sizeof *res);
    int outp[2] = {-1, -1}, tokp[2] = {-1, -1}, repp[2] = {-1, -1}, startp[2] = {-1, -1}, lfd = -1;
    int ranks = o->token && o->ranks > 0 && o->channel ? (o->ranks < GRADE_MAX_RANKS ? o->ranks : GRADE_MAX_RANKS) : 0;
    int pipes = o->token && !ranks; /* fds 3 and 4 */
    double t0 = now_s();
    /* A longer token would be cut, or sent with what follows its line's buffer. */
    if (o->token && strlen(o->token) > GRADE_TOKEN_MAX) {
        char why[96];
        snprintf(why, sizeof why, "grade: the token is longer than %d characters", GRADE_TOKEN_MAX);
        not_started(res, ranks, why);
        return;
    }
    if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(startp, O_CLOEXEC) != 0 ||
        (pipes && (pipe2(tokp, O_CLOEXEC) != 0 || pipe2(repp, O_CLOEXEC) != 0)) ||
        (ranks && (lfd = channel_listen(o->channel)) < 0)) {
        /* What did open is closed: a grader that grades many tests must not
         * run out of descriptors because some of them could not start. */
        int opened[] = {outp[0], outp[1], startp[0], startp[1], tokp[0], tokp[1], repp[0], repp[1], lfd};
        for (size_t i = 0; i < sizeof opened / sizeof *opened; i++)
            if (opened[i] >= 0) close(opened[i]);
        not_started(res, ranks, ranks ? "grade: could not open the verdict channel for the ranks"
                                      : "grade: could not create pipes for the child");
        return;
    }
    if (pipes) {
        /* The token is short: it fits in the pipe before the child starts. */
        char line[GRADE_TOKEN_MAX + 2];
        int n = snprintf(line, sizeof line, "%s\n", o->token);
        if (write(tokp[1], line, (size_t)n) != n) { /* reported as a missing verdict */ }
        close(tokp[1]);
        tokp[1] = -1;
    }
    /* Orphans of the child come to the grader, not to init (kill_left_behind).
     * Set each time: a fork of the grader (a --parallel worker) does not inherit it. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    fflush(NULL);
    /* Signals wait until the child is known (current_child) and, in the
     * child, until the grader's handlers are gone: a Ctrl-C before setsid()
     * reaches the child too, and must not run the grader's clean-up there. */
    sigset_t all, old_mask;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old_mask);
    run_as_uid = o->uid;
    run_as_gid = o->gid;
    run_as_now = o->run_as;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* Every signal at its default and none blocked, whatever the grader
         * inherited, so a test runs the same however the grader was started:
         * under nohup SIGHUP is ignored, and GNU make starts its commands with
         * the C library's own signals 32 and 33 ignored, which glibc's
         * sigaction() refuses to change. Those take the system call itself: an
         * all-zero kernel sigaction is SIG_DFL with no flags and an empty mask
         * in every architecture's layout. */
        for (int sig = 1; sig < NSIG; sig++) {
            if (sig == SIGKILL || sig == SIGSTOP) continue;
            if (signal(sig, SIG_DFL) == SIG_ERR) {
                unsigned long kernel_sa[4] = {0};
                syscall(SYS_rt_sigaction, sig, kernel_sa, NULL, (size_t)8);
            }
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        child_exec(argv, o, outp[1], tokp[0], repp[1], startp[1], parent);
    }
    if (pid > 0) current_child = pid;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    close(outp[1]);
    close(startp[1]);
    if (tokp[0] >= 0) close(tokp[0]);
    if (repp[1] >= 0) close(repp[1]);
    if (pid > 0) {
        /* The start pipe ends at the child's exec (close on exec), or brings
         * the errno of what failed before it. The child does nothing that
         * blocks on its way there. */
        int err = 0;
        ssize_t got;
        do got = read(startp[0], &err, sizeof err);
        while (got < 0 && errno == EINTR);
        if (got == (ssize_t)sizeof err) res->not_started = 1, res->start_errno = err;
    }
    close(startp[0]);
    if (pid < 0) {
        close(outp[0]);
        if (repp[0] >= 0) close(repp[0]);
        if (lfd >= 0) close(lfd);
        run_as_now = 0;
        not_started(res, ranks, "grade: fork failed");
        return;
    }

    char *out = NULL, *rep = NULL;
    size_t out_len = 0, out_capb = 0, rep_len = 0, rep_capb = 0;
    size_t rank_len[GRADE_MAX_RANKS] = {0}, rank_cap[GRADE_MAX_RANKS] = {0};
    conn_t conns[CONN_MAX];
    int nconn = 0;
    int out_open = 1, rep_open = repp[0] >= 0, reaped = 0, status = 0;
    double deadline = t0 + (o->timeout_s > 0 ? o->timeout_s : 3600);
    double reaped_at = 0;
    for (;;) {
        int conns_open = 0;
        for (int i = 0; i < nconn; i++) conns_open += conns[i].fd >= 0;
        /* Not before the child is reaped: a program may close its stdout and
         * stderr before it exits (make and coreutils do, at exit), and a kill
         * in between would turn its exit code into SIGKILL. */
        if (!out_open && !rep_open && !conns_open && reaped) break;
        struct pollfd pf[3 + CONN_MAX];
        int pc[CONN_MAX]; /* which connection each poll entry past the first ones is */
        int np = 0, io = -1, ir = -1, il = -1, first_conn;
        if (out_open) { pf[np].fd = outp[0]; pf[np].events = POLLIN; io = np++; }
        if (rep_open) { pf[np].fd = repp[0]; pf[np].events = POLLIN; ir = np++; }
        if (lfd >= 0 && !reaped) { pf[np].fd = lfd; pf[np].events = POLLIN; il = np++; }
        first_conn = np;
        for (int i = 0; i < nconn; i++)
            if (conns[i].fd >= 0) { pc[np - first_conn] = i; pf[np].fd = conns[i].fd; pf[np].events = POLLIN; np++; }
        int pr = poll(pf, (nfds_t)np, 100);
        if (pr < 0 && errno != EINTR) break;
        char buf[65536];
        if (pr > 0 && io >= 0 && (pf[io].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t r = read(outp[0], buf, sizeof buf);
            if (r > 0) {
                res->out_total += r;
                keep(&out, &out_len, &out_capb, o->out_cap, buf, (size_t)r);
                if (o->out_kill > 0 && res->out_total > o->out_kill && !res->output_killed) {
                    res->output_killed = 1;
                    kill_left_behind(pid);
                }
            } else if (r == 0 || errno != EINTR) {
                out_open = 0;
            }
        }
        if (pr > 0 && ir >= 0 && (pf[ir].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t r = read(repp[0], buf, sizeof buf);
            if (r > 0) keep(&rep, &rep_len, &rep_capb, 1 << 21, buf, (size_t)r);
            else if (r == 0 || errno != EINTR) rep_open = 0;
        }
        for (int e = first_conn; pr > 0 && e < np; e++)
            if (pf[e].revents & (POLLIN | POLLHUP | POLLERR))
                channel_read(&conns[pc[e - first_conn]], conns, nconn, ranks, o->token, res, rank_len, rank_cap);
        if (pr > 0 && il >= 0 && (pf[il].revents & POLLIN)) channel_accept(lfd, conns, &nconn, ranks, o->run_as ? o->uid : geteuid(), res);
        if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
            reaped = 1;
            current_child = 0;
            reaped_at = now_s();
            /* Whatever the child left running (a forked sleeper holding the
             * pipes open, a rank mpirun did not take down) goes with it. */
            kill_left_behind(pid);
        }
        double t = now_s();
        if (!reaped && t > deadline && !res->timed_out) {
            res->timed_out = 1;
            kill_left_behind(pid);
            kill(pid, SIGKILL);
        }
        /* Grandchildren outside the session could hold the pipes: stop
         * waiting for EOF two seconds after the child itself is gone. */
        if (reaped && t - reaped_at > 2.0) break;
    }
    if (!reaped) {
        kill_left_behind(pid);
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        current_child = 0;
    }
    reap_orphans(); /* what kill_left_behind() killed and re-parented here */
    run_as_now = 0;
    if (o->run_as) drop_user_leftovers(o->uid);
    close(outp[0]);
    if (repp[0] >= 0) close(repp[0]);
    if (lfd >= 0) close(lfd);
    for (int i = 0; i < nconn; i++)
        if (conns[i].fd >= 0) close(conns[i].fd);
    res->wall_s = now_s() - t0;
    if (WIFEXITED(status)) {
        res->exited = 1;
        res->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        res->signaled = 1;
        res->sig = WTERMSIG(status);
    }
    res->out = out ? out : strdup("");
    res->out_len = out_len;
    res->report = rep ? rep : strdup("");
    for (int k = 0; k < ranks; k++)
        if (!res->rank_report[k]) res->rank_report[k] = strdup("");
}

/* Output and reports are malloc'd by sandbox_run. */
void sandbox_result_free(sandbox_result_t *res) {
    free(res->out);
    free(res->report);
    res->out = res->report = NULL;
    for (int k = 0; k < GRADE_MAX_RANKS; k++) {
        free(res->rank_report[k]);
        res->rank_report[k] = NULL;
    }
}
