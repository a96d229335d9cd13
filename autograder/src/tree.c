/*
 * The grader's private copy of the course, and the student files in it.
 *
 * A lab is built in a fresh copy of the grader's own tree (never the
 * student's), into which only that lab's student files are copied from the
 * submission. So check.c, bench.c, the Makefile, common/ and kernels/ are
 * always the grader's: a submission that ships its own check.c is graded
 * against the real one. Copies keep file times, so libraries built once per
 * run in a base copy are seen as up to date in every lab's copy.
 *
 * Symbolic links are never followed: a submission's "vector_add.cu" that is
 * a link to some other file is not copied.
 */
#include "grade.h"
#include "hash.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* mkdir -p: working folders are created deep in the private tree. 0 when
 * path is a folder at the end; -1 with errno set (ENOTDIR where a file is
 * in the way, ENAMETOOLONG for a path of 4096 bytes or more). */
int mkdirs(const char *path, mode_t mode) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) { /* cut, it would make another folder */
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!tmp[0]) { /* the loop below starts past the first byte */
        errno = ENOENT;
        return -1;
    }
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, mode) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(tmp, mode) != 0) {
        /* There already: fine if it is a folder (or a link to one), not if it is a file. */
        struct stat st;
        if (errno != EEXIST) return -1;
        if (stat(tmp, &st) != 0 || !S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            return -1;
        }
    }
    return 0;
}

/* Copy one regular file's bytes, mode and times. */
static int copy_file_stat(const char *src, const char *dst, const struct stat *st) {
    int in = open(src, O_RDONLY | O_NOFOLLOW);
    if (in < 0) return -1;
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, st->st_mode & 0777);
    if (out < 0) { close(in); return -1; }
    char buf[65536];
    ssize_t r;
    int rc = 0;
    while ((r = read(in, buf, sizeof buf)) > 0) {
        for (ssize_t off = 0; off < r;) {
            ssize_t w = write(out, buf + off, (size_t)(r - off));
            if (w <= 0) { rc = -1; break; }
            off += w;
        }
        if (rc) break;
    }
    if (r < 0) rc = -1;
    fchmod(out, st->st_mode & 0777);
    struct timespec ts[2] = {st->st_atim, st->st_mtim};
    futimens(out, ts);
    close(in);
    if (close(out) != 0) rc = -1;
    return rc;
}

/* Only regular files: a submitted link to /etc/shadow or to the checks is
 * not copied. */
int file_copy(const char *src, const char *dst) {
    struct stat st;
    if (lstat(src, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    return copy_file_stat(src, dst, &st);
}

/* Whether name is one of skip's: a name ending in '*' is a prefix ("build*"
 * is build/ and build-debug/ alike, ".*" every hidden entry). */
static int skipped_name(const char *name, const char *const *skip) {
    for (const char *const *s = skip; s && *s; s++) {
        size_t l = strlen(*s);
        if (l && (*s)[l - 1] == '*' ? !strncmp(*s, name, l - 1) : !strcmp(*s, name)) return 1;
    }
    return 0;
}

/* A path that did not fit its buffer: cut, it would name another file (or
 * none, and the entry would be left out without a word). Says so on stderr
 * with the path's start and what to do (fix; NULL: move or flatten the
 * tree), and sets errno; the caller fails. A path of 4096 bytes or more is
 * also past what the kernel takes (PATH_MAX). */
static void path_too_long(const char *what, const char *path, size_t room, const char *fix) {
    fprintf(stderr, "grade: cannot %s %.80s... (%zu bytes or more, past the %zu a path may have here): %s\n", what,
            path, room, room,
            fix ? fix : "move the tree to a shorter path (the course tree, TMPDIR or --base-cache), or flatten its folders");
    errno = ENAMETOOLONG;
}

int path_fits(char *out, size_t n, const char *what, const char *fix, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(out, n, fmt, ap);
    va_end(ap);
    if (len >= 0 && (size_t)len < n) return 0;
    path_too_long(what, out, n, fix);
    return -1;
}

/* Why an entry of a copy failed, on stderr: the copy is then incomplete and
 * the caller fails (a build in a tree that silently lacks a file is graded
 * on a tree other than the grader's). to: where it went, for a file; why:
 * NULL for errno's text. Keeps errno. */
static void copy_failed(const char *what, const char *path, const char *to, const char *why) {
    int e = errno;
    fprintf(stderr, "grade: cannot copy %s%s%s%s%s: %s; the copy is incomplete\n", what, what[0] ? " " : "", path,
            to ? " to " : "", to ? to : "", why ? why : strerror(e));
    errno = e;
}

/* Whether path is gone (ENOENT) now: an entry removed after its folder was
 * listed is no longer part of the tree, and its copy is not missed. */
static int gone(const char *path) {
    struct stat st;
    return lstat(path, &st) != 0 && errno == ENOENT;
}

/* What a special file is, for the warning that leaves it out. */
static const char *special_kind(mode_t m) {
    return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "of no known kind";
}

/* The next entry of d other than "." and "..", or NULL at its end, with
 * *failed set when readdir failed rather than ran out (errno says why): a
 * folder read in part would be copied or handed over in part. */
static struct dirent *next_entry(DIR *d, int *failed) {
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            *failed = errno != 0;
            return NULL;
        }
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) return e;
    }
}

/* Recursive copy; skip applies at the top level only (build, .git, ...).
 * A path that does not fit 4096 bytes fails the copy (ENAMETOOLONG) rather
 * than being cut or left out. An entry that cannot be read (lstat, open,
 * readlink fail for another reason than its being gone) fails the copy with
 * a message naming it; one removed after its folder was listed (ENOENT) is
 * left out, as it is no longer in the tree. FIFOs, sockets and devices are
 * left out with a warning: no build reads one, and a stray socket in the
 * grader's tree should not stop grading. depth is 0 at the top. */
static int copy_dir(const char *src, const char *dst, const char *const *skip, int depth) {
    DIR *d = opendir(src);
    if (!d) {
        if (depth == 0 || errno != ENOENT) copy_failed("the folder", src, NULL, NULL); /* a subfolder's caller decides */
        return -1;
    }
    struct stat dst_st;
    if (lstat(src, &dst_st) != 0) {
        if (depth == 0 || errno != ENOENT) copy_failed("the folder", src, NULL, NULL);
        closedir(d);
        return -1;
    }
    if (mkdirs(dst, 0755) != 0) {
        if (errno == ENAMETOOLONG && strlen(dst) >= 4096) path_too_long("copy into", dst, 4096, NULL); /* mkdirs' limit */
        else copy_failed("into", dst, NULL, NULL);
        closedir(d);
        return -1;
    }
    int rc = 0, err = 0, unread = 0; /* err: the errno of the first failure, for the caller */
    for (struct dirent *e; (e = next_entry(d, &unread));) {
        if (skipped_name(e->d_name, skip)) continue;
        char a[4096], b[4096];
        if (path_fits(a, sizeof a, "copy", NULL, "%s/%s", src, e->d_name) != 0 ||
            path_fits(b, sizeof b, "copy into", NULL, "%s/%s", dst, e->d_name) != 0) {
            rc = -1, err = ENAMETOOLONG;
            break;
        }
        struct stat st;
        int failed = 0;
        if (lstat(a, &st) != 0) {
            if (errno == ENOENT) continue; /* removed since the folder was listed */
            copy_failed("", a, NULL, NULL);
            failed = 1;
        } else if (S_ISDIR(st.st_mode)) {
            if (copy_dir(a, b, NULL, depth + 1) != 0) {
                if (errno == ENAMETOOLONG) { /* stderr said where; the copy has failed */
                    rc = -1, err = ENAMETOOLONG;
                    break;
                }
                if (errno == ENOENT && gone(a)) continue;
                if (errno == ENOENT) copy_failed("the folder", a, NULL, NULL); /* not said below: it is there */
                failed = 1;
            }
        } else if (S_ISREG(st.st_mode)) {
            if (copy_file_stat(a, b, &st) != 0) {
                if (errno == ENOENT && gone(a)) { unlink(b); continue; }
                copy_failed("", a, b, NULL);
                failed = 1;
            }
        } else if (S_ISLNK(st.st_mode)) {
            /* Links inside the grader's own tree are kept as links. A target
             * that fills the buffer may have been cut (Linux makes none past
             * 4095 bytes, but a network or FUSE file system may hand one back),
             * and an empty one cannot be made again. */
            char target[4096];
            ssize_t n = readlink(a, target, sizeof target);
            if (n == (ssize_t)sizeof target) {
                path_too_long("copy the link target of", a, sizeof target, NULL);
                rc = -1, err = ENAMETOOLONG;
                break;
            }
            if (n < 0 && errno == ENOENT) continue; /* removed since the folder was listed */
            if (n < 0) copy_failed("the link", a, NULL, NULL), failed = 1;
            else if (n == 0) { /* Linux makes none, but another file system may hand one back */
                errno = EINVAL;
                copy_failed("the link", a, NULL, "its target is empty, and no link can be made with one");
                failed = 1;
            } else {
                target[n] = '\0';
                if (symlink(target, b) != 0) copy_failed("the link", a, NULL, NULL), failed = 1;
            }
        } else {
            fprintf(stderr, "grade: warning: left %s out of the copy: it is %s, and only files, folders and links are "
                    "copied\n", a, special_kind(st.st_mode));
        }
        if (failed) rc = -1, err = err ? err : errno;
    }
    if (unread) copy_failed("the folder", src, NULL, NULL), rc = -1, err = err ? err : errno;
    closedir(d);
    struct timespec ts[2] = {dst_st.st_atim, dst_st.st_mtim};
    utimensat(AT_FDCWD, dst, ts, AT_SYMLINK_NOFOLLOW);
    errno = err; /* the caller reads ENAMETOOLONG */
    return rc;
}

static int in_list(const char *s, const char *const *list, int n) {
    for (int i = 0; i < n; i++)
        if (!strcmp(s, list[i])) return 1;
    return 0;
}

/* A file's size, then its bytes. The size keeps one file's bytes from running
 * on into the next entry's name: without it, a holding "X" beside b holding
 * "Y" hashed as a alone holding "X", b's name, kind and mode, then "Y". A read
 * that fails partway, or a file that grows or shrinks while it is read, sets
 * *err: the hash would not name what is there. */
static uint64_t hash_file(const char *path, uint64_t h, int *err) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        *err = 1;
        if (fd >= 0) close(fd);
        return h;
    }
    uint64_t size = (uint64_t)st.st_size, total = 0;
    h = course_fnv1a(h, &size, sizeof size);
    char buf[65536];
    ssize_t got;
    while ((got = read(fd, buf, sizeof buf)) > 0) {
        h = course_fnv1a(h, buf, (size_t)got);
        total += (uint64_t)got;
    }
    if (got < 0 || total != size) *err = 1;
    close(fd);
    return h;
}

/* Hash the entries of root/rel (rel "" at the top), in name order. An entry
 * whose path does not fit 4096 bytes (what lstat takes) sets *err and
 * *too_long, and stderr says which: left out, the hash would not name what
 * is there. */
static uint64_t hash_dir(const char *root, const char *rel, const char *const *skip, const char *const *names_only,
                         int n_names_only, uint64_t h, int *err, int *too_long) {
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s%s%s", root, rel[0] ? "/" : "", rel) >= (int)sizeof dir) {
        path_too_long("hash", dir, sizeof dir, NULL);
        *err = *too_long = 1;
        return h;
    }
    struct dirent **ents;
    int m = scandir(dir, &ents, NULL, alphasort);
    if (m < 0) { *err = 1; return h; }
    for (int i = 0; i < m; i++) {
        const char *nm = ents[i]->d_name;
        int skipped = !strcmp(nm, ".") || !strcmp(nm, "..");
        skipped |= !rel[0] && skipped_name(nm, skip);
        char r[4096], path[4096];
        int cut = snprintf(r, sizeof r, "%s%s%s", rel, rel[0] ? "/" : "", nm) >= (int)sizeof r;
        cut |= snprintf(path, sizeof path, "%s/%s", root, r) >= (int)sizeof path;
        if (!skipped && cut) {
            if (!*too_long) path_too_long("hash", path, sizeof path, NULL); /* once: the others are alike */
            *err = *too_long = 1;
        }
        struct stat st;
        int listed = !skipped && !cut;
        /* An entry that cannot be looked at is an error, as it is for the
         * copy; one removed since the folder was listed is no longer there. */
        if (listed && lstat(path, &st) != 0) {
            if (errno != ENOENT) *err = 1;
            listed = 0;
        }
        if (listed) {
            h = course_fnv1a(h, r, strlen(r) + 1);
            char kind = S_ISDIR(st.st_mode) ? 'd' : S_ISREG(st.st_mode) ? 'f' : S_ISLNK(st.st_mode) ? 'l' : '?';
            h = course_fnv1a(h, &kind, 1);
            if (S_ISDIR(st.st_mode)) {
                h = hash_dir(root, r, skip, names_only, n_names_only, h, err, too_long);
            } else if (S_ISLNK(st.st_mode)) {
                char target[4096];
                ssize_t n = readlink(path, target, sizeof target);
                if (n == (ssize_t)sizeof target) { /* may be cut: see copy_dir() */
                    path_too_long("hash the link target of", path, sizeof target, NULL);
                    *err = *too_long = 1;
                } else if (n > 0) h = course_fnv1a(h, target, (size_t)n);
                else if (n == 0 || errno != ENOENT) *err = 1; /* a link whose target cannot be read */
            } else if (S_ISREG(st.st_mode) && !in_list(r, names_only, n_names_only)) {
                unsigned mode = st.st_mode & 0777;
                h = course_fnv1a(h, &mode, sizeof mode);
                h = hash_file(path, h, err);
            }
        }
        free(ents[i]);
    }
    free(ents);
    return h;
}

uint64_t tree_hash(const char *root, const char *const *skip, const char *const *names_only, int n_names_only,
                   const char *salt, int *err) {
    *err = 0;
    int too_long = 0;
    uint64_t h = hash_dir(root, "", skip, names_only, n_names_only,
                          course_fnv1a(COURSE_FNV1A_OFFSET, salt, strlen(salt) + 1), err, &too_long);
    if (too_long) errno = ENAMETOOLONG;
    return h;
}

/* See copy_dir(); the public name reads better at the call sites. */
int tree_copy(const char *src, const char *dst, const char *const *skip) {
    return copy_dir(src, dst, skip, 0);
}

/* What getdents64() returns, one entry after another. */
struct tree_dirent {
    unsigned long long ino;
    long long off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

/* How deep the removal goes with a descriptor open per level; a folder
 * found this deep is moved up to the top folder instead and removed from
 * there, so no depth of tree (a test's code can leave thousands of nested
 * folders) needs more descriptors than this. */
#define REMOVE_DEPTH 64

static int remove_at(int dfd, const char *name, int depth, int top);

/* Move the folder name in dfd into the folder top under a name no entry
 * there has (".tree-remove-<n>"), without following links: 0, or -1. Its
 * write permission is restored first, which moving a folder needs. Names
 * already taken (a test's code may have made any number of them) are
 * passed over, however many. */
static int move_to_top(int dfd, const char *name, int top) {
    static unsigned long next;
    fchmodat(dfd, name, 0700, AT_SYMLINK_NOFOLLOW); /* a link put there meanwhile is not followed */
    for (;;) {
        char fresh[40] = ".tree-remove-";
        char digits[24];
        int k = 0;
        for (unsigned long v = next++; k == 0 || v; v /= 10) digits[k++] = (char)('0' + v % 10);
        size_t l = strlen(fresh);
        while (k) fresh[l++] = digits[--k];
        fresh[l] = '\0';
#ifdef SYS_renameat2
        if (syscall(SYS_renameat2, dfd, name, top, fresh, 1 /* RENAME_NOREPLACE */) == 0) return 0;
        if (errno == EEXIST) continue;
        if (errno != EINVAL && errno != ENOSYS) return -1;
#endif
        /* A file system without RENAME_NOREPLACE: look first. */
        struct stat st;
        if (fstatat(top, fresh, &st, AT_SYMLINK_NOFOLLOW) == 0) continue;
        return renameat(dfd, name, top, fresh);
    }
}

/* Remove every entry of the open folder fd, depth first; top is the open
 * folder that tree_remove empties. Passes until one changes nothing more:
 * entries removed while a listing is read may shift it, and at the top,
 * the folders moved up from REMOVE_DEPTH levels down are new entries. */
static void remove_entries(int fd, int depth, int top) {
    long long buf[256]; /* 2 KiB of directory entries, aligned for them */
    /* Each pass at the top takes the tree REMOVE_DEPTH levels further down. */
    const int passes = depth == 0 ? 1 << 16 : 64;
    for (int pass = 0; pass < passes; pass++) {
        if (lseek(fd, 0, SEEK_SET) < 0) return;
        int left = 0, changed = 0;
        long got;
        while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
            for (long off = 0; off < got;) {
                const struct tree_dirent *e = (const struct tree_dirent *)((const char *)buf + off);
                off += e->reclen;
                const char *n = e->name;
                if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]))) continue;
                left++;
                changed += remove_at(fd, n, depth, top) >= 0;
            }
        if (!left || !changed) return;
    }
}

/* Remove name in the folder dfd: a file or link at once, a folder with what
 * it holds. Links are never followed. 0 when it is gone; 1 when it was a
 * folder REMOVE_DEPTH levels down, moved into top for a later pass; -1. */
static int remove_at(int dfd, const char *name, int depth, int top) {
    if (unlinkat(dfd, name, 0) == 0) return 0;
    if (depth >= REMOVE_DEPTH) return top >= 0 && move_to_top(dfd, name, top) == 0 ? 1 : -1;
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES && fchmodat(dfd, name, 0700, 0) == 0) /* a child made it unreadable */
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    fchmod(fd, 0700); /* a child may have made it read-only */
    remove_entries(fd, depth + 1, top);
    close(fd);
    return unlinkat(dfd, name, AT_REMOVEDIR) == 0 ? 0 : -1;
}

/* Depth-first removal; never follows links out of the tree. Only
 * async-signal-safe calls (no opendir, no stdio, no malloc), folders by
 * descriptor, so no path grows with the depth, and at most REMOVE_DEPTH
 * of them open however deep the tree. */
void tree_remove(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    chmod(path, 0700); /* a child may have made it read-only */
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        remove_entries(fd, 0, fd);
        close(fd);
    }
    rmdir(path);
}

/* Why the owner of path could not change, on stderr. Keeps errno. */
static void chown_failed(const char *path, uid_t uid, gid_t gid) {
    int e = errno;
    fprintf(stderr, "grade: cannot change the owner of %s to %u:%u: %s\n", path, (unsigned)uid, (unsigned)gid,
            strerror(e));
    errno = e;
}

/* tree_chown below the top (depth > 0): an entry removed after its folder
 * was listed (ENOENT) has no owner left to change, and is no failure. */
static int chown_tree(const char *path, uid_t uid, gid_t gid, int depth) {
    struct stat st;
    if (lstat(path, &st) != 0 || lchown(path, uid, gid) != 0) {
        if (depth > 0 && errno == ENOENT) return 0;
        chown_failed(path, uid, gid);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return 0;
    DIR *d = opendir(path);
    if (!d) {
        if (depth > 0 && errno == ENOENT) return 0;
        chown_failed(path, uid, gid);
        return -1;
    }
    int rc = 0, err = 0, unread = 0; /* err: the errno of the first failure, for the caller */
    for (struct dirent *e; (e = next_entry(d, &unread));) {
        char p[4096];
        if (path_fits(p, sizeof p, "change the owner of", NULL, "%s/%s", path, e->d_name) != 0) {
            rc = -1, err = ENAMETOOLONG; /* stderr said where; the other entries here are about as long */
            break;
        }
        if (chown_tree(p, uid, gid, depth + 1) != 0) /* the entries beside it still change owner */
            rc = -1, err = err ? err : errno;
    }
    if (unread) chown_failed(path, uid, gid), rc = -1, err = err ? err : errno;
    closedir(d);
    errno = err;
    return rc;
}

/* With --run-as: hand a working folder to the student user, or take the
 * build back so student code cannot change it. 0, or -1 when an entry's
 * owner could not be changed (stderr names it, and errno says why; the
 * other entries still change owner): with the build's files left as they
 * were, a build as the student user could not write them, or student code
 * could change its own build. A path of 4096 bytes or more is refused
 * (ENAMETOOLONG), not cut: cut, it would chown another entry. */
int tree_chown(const char *path, uid_t uid, gid_t gid) {
    return chown_tree(path, uid, gid, 0);
}

/* Sort names so the order of files (and messages) is stable. */
static int cmp_dirents(const struct dirent **a, const struct dirent **b) {
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* What the student may change is whatever the lab folder has besides the
 * harness; taken from the grader's tree, never from the submission. */
int lab_student_files(const char *root, const char *lab, char names[][128], int max) {
    static const char *const harness[] = {"check.c", "bench.c", "README.md", "lab.mk", NULL};
    char dir[4096];
    if (path_fits(dir, sizeof dir, "list the student files of", NULL, "%s/labs/%s", root, lab) != 0) return -1;
    /* In name order, so that past max the same files are taken on every run
     * and every machine, whatever order the folder lists them in. */
    struct dirent **ents;
    int m = scandir(dir, &ents, NULL, cmp_dirents);
    if (m < 0) return 0;
    int n = 0, more = 0, cut = 0;
    for (int i = 0; i < m; i++) {
        const char *nm = ents[i]->d_name;
        int h = nm[0] == '.' || strlen(nm) >= 128;
        for (const char *const *s = harness; *s; s++) h |= !strcmp(*s, nm);
        char p[4096];
        /* Cut, a student file would be left out of the grade without a word. */
        cut = cut || (!h && path_fits(p, sizeof p, "list the student file", NULL, "%s/%s", dir, nm) != 0);
        struct stat st;
        if (!h && !cut && lstat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            if (n < max) snprintf(names[n++], 128, "%s", nm);
            else more++;
        }
        free(ents[i]);
    }
    free(ents);
    if (cut) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (more)
        fprintf(stderr, "grade: labs/%s has %d student files, more than the %d the grader takes; the first %d "
                "by name are graded and the other %d are not; list the student files in the rubric's "
                "\"student_files\"\n",
                lab, n + more, max, max, more);
    return n;
}
