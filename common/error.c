/*
 * Fatal-error path shared by every program: one readable line, then the
 * whole job ends (see error.h for why MPI jobs need the abort hook). Also
 * the errors a caller reports itself, opening an input file that may
 * turn out not to be one, and telling whether two paths name one file.
 */
#include "error.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void (*abort_hook)(int code) = NULL;

void course_set_abort_hook(void (*hook)(int code)) { abort_hook = hook; }

void course_fatal(const char *file, int line, const char *fmt, ...) {
    char prefix[64];
    log_prefix(prefix, (int)sizeof prefix);
    /* Build the whole line first and write it with one call so that lines
     * from different ranks do not interleave mid-line. */
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%serror: %s:%d: %s\n", prefix, file, line, msg);
    fflush(stderr);
    fflush(stdout);
    if (abort_hook) abort_hook(1);
    exit(1);
}

int course_error(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* What a path that is not a regular file is, for the message. */
static const char *file_kind(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "a special file";
}

FILE *course_open_regular(const char *path, const char *what, const char *hint, size_t *size_out, char *err,
                          size_t errlen) {
    struct stat st;
    if (stat(path, &st) != 0) {
        course_error(err, errlen, "%s: cannot open (%s); %s", what, strerror(errno), hint);
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        course_error(err, errlen, "%s is a directory; %s", what, hint);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        course_error(err, errlen, "%s is %s, not a regular file; %s", what, file_kind(st.st_mode), hint);
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        course_error(err, errlen, "%s: cannot open (%s); %s", what, strerror(errno), hint);
        return NULL;
    }
    FILE *f = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        course_error(err, errlen, "%s changed while being opened and is no longer a regular file; %s", what, hint);
        return NULL;
    }
    if (!(f = fdopen(fd, "rb"))) {
        course_error(err, errlen, "%s: cannot open (%s); %s", what, strerror(errno), hint);
        close(fd);
        return NULL;
    }
    if (size_out) *size_out = (size_t)st.st_size;
    return f;
}

FILE *course_create_output(const char *path, const char *flag, char *err, size_t errlen) {
    FILE *f = fopen(path, "w");
    if (!f)
        course_error(err, errlen, "%s %s: cannot create the file (%s); give a path in a folder you can write to",
                     flag, path, strerror(errno));
    return f;
}

/* Where a path that does not exist yet will be created: itself, or, for a
 * symbolic link whose target is missing (which fopen(path, "w") creates),
 * that target, followed through further links (at most 40, as the kernel
 * does); a relative target is relative to its link's folder. */
static void link_target(const char *path, char *out, size_t len) {
    snprintf(out, len, "%s", path);
    for (int hop = 0; hop < 40; hop++) {
        char target[PATH_MAX], next[2 * PATH_MAX];
        ssize_t n = readlink(out, target, sizeof target - 1);
        if (n < 0) return; /* not a link: where the file will be */
        target[n] = '\0';
        const char *slash = strrchr(out, '/');
        if (target[0] == '/' || !slash) snprintf(next, sizeof next, "%s", target);
        else snprintf(next, sizeof next, "%.*s/%s", (int)(slash - out), out, target);
        if (strlen(next) >= len) return;
        snprintf(out, len, "%s", next);
    }
}

/* A path that need not exist yet, with its folder resolved (and a dangling
 * link's target taken): "./runs/../x.csv" -> "/home/me/x.csv". -1 if the
 * folder does not exist either. */
static int resolved_name(const char *given, char *out, size_t len) {
    char path[PATH_MAX], dir[PATH_MAX];
    link_target(given, path, sizeof path);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? path + (slash - dir) + 1 : path;
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0'; /* "/x": the folder is "/" */
    else *slash = '\0';
    char real[PATH_MAX];
    if (!realpath(dir, real)) return -1;
    return (size_t)snprintf(out, len, "%s/%s", real, base) < len ? 0 : -1;
}

int course_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    const int has_a = stat(a, &sa) == 0, has_b = stat(b, &sb) == 0;
    if (has_a && has_b) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (has_a != has_b) return 0;
    char ra[PATH_MAX + 256], rb[PATH_MAX + 256];
    if (resolved_name(a, ra, sizeof ra) || resolved_name(b, rb, sizeof rb)) return strcmp(a, b) == 0;
    return strcmp(ra, rb) == 0;
}
