/* Fatal errors: one line naming file, line and rank; the job ends; the hook runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "child.h"
#include "error.h"
#include "log.h"

static int fatal_plain(void *arg) {
    (void)arg;
    FATAL("tensor has %d dims, expected %d", 3, 2);
    return 0; /* not reached */
}

static void test_fatal_names_location_and_exits(void **state) {
    (void)state;
    child_result_t r = run_in_child(fatal_plain, NULL);
    assert_int_equal(r.exited, 1);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "error: "));
    assert_non_null(strstr(r.out, "test_error.c:"));
    assert_non_null(strstr(r.out, "tensor has 3 dims, expected 2"));
    assert_null(strstr(r.out, "[rank")); /* not in a job: no rank prefix */
}

static int fatal_with_rank(void *arg) {
    (void)arg;
    log_set_rank(2, 4);
    FATAL("boom");
    return 0;
}

static void test_fatal_names_rank(void **state) {
    (void)state;
    child_result_t r = run_in_child(fatal_with_rank, NULL);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "[rank 2/4] error: "));
}

/* Like MPI_Abort: ends the process at once, without flushing stdio. */
static void hook_exit_7(int code) {
    fprintf(stderr, "hook ran with code %d\n", code);
    _exit(7);
}

static int fatal_with_hook(void *arg) {
    (void)arg;
    course_set_abort_hook(hook_exit_7);
    printf("step 10 done; "); /* no newline: still in stdout's buffer */
    FATAL("with hook");
    return 0;
}

/* The hook gets exit code 1 and ends the process; what the program had
 * printed to stdout is flushed before it runs (MPI_Abort would lose it). */
static void test_fatal_calls_abort_hook(void **state) {
    (void)state;
    child_result_t r = run_in_child(fatal_with_hook, NULL);
    assert_int_equal(r.exit_code, 7); /* the hook, not exit(1), ended the process */
    assert_non_null(strstr(r.out, "with hook"));
    assert_non_null(strstr(r.out, "hook ran with code 1\n"));
    assert_non_null(strstr(r.out, "step 10 done; "));
}

/* A message of 1500 characters, and the line it was raised on, printed first
 * so that the parent can check it. */
static int fatal_long(void *arg) {
    (void)arg;
    char msg[1501];
    memset(msg, 'm', sizeof msg - 1);
    msg[sizeof msg - 1] = '\0';
    fprintf(stderr, "line %d\n", __LINE__); FATAL("%s|end", msg);
    return 0;
}

/* The location is the FATAL's own line, and a long message comes out whole. */
static void test_fatal_line_and_long_message(void **state) {
    (void)state;
    child_result_t r = run_in_child(fatal_long, NULL);
    assert_int_equal(r.exit_code, 1);
    int line = 0;
    assert_int_equal(sscanf(r.out, "line %d", &line), 1);
    char want[64];
    snprintf(want, sizeof want, "test_error.c:%d: m", line);
    assert_non_null(strstr(r.out, want));
    const char *m = strstr(r.out, want) + strlen(want) - 1;
    assert_int_equal(strspn(m, "m"), 1500);
    assert_int_equal(strncmp(m + 1500, "|end\n", 5), 0);
}

/* A file the program was writing (a loss log) keeps what it had buffered:
 * without a hook the job ends through exit(), which flushes every stream. */
static int fatal_with_open_log(void *arg) {
    FILE *log = fopen((const char *)arg, "w");
    if (!log) return 3;
    fputs("step 1 loss 2.50\n", log);
    FATAL("diverged");
    return 0;
}

static void test_fatal_keeps_open_files(void **state) {
    (void)state;
    char dir[] = "/tmp/test_error.XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/loss.csv", dir);
    child_result_t r = run_in_child(fatal_with_open_log, path);
    assert_int_equal(r.exit_code, 1);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char got[64] = "";
    assert_non_null(fgets(got, sizeof got, f));
    fclose(f);
    assert_string_equal(got, "step 1 loss 2.50\n");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

static int check_false(void *arg) {
    int n = *(int *)arg;
    CHECK(n % 2 == 0, "n must be even, got %d", n);
    return 0;
}

/* course_error: the message for the caller, -1, and no write without a buffer or past its end. */
static void test_course_error(void **state) {
    (void)state;
    char err[16] = "untouched";
    assert_int_equal(course_error(err, sizeof err, "--heads %d is %s", 5, "wrong"), -1);
    assert_string_equal(err, "--heads 5 is wr"); /* cut to the buffer, still terminated */
    assert_int_equal(course_error(NULL, 0, "no buffer %d", 1), -1);
    assert_int_equal(course_error(NULL, 16, "no buffer, a length %d", 16), -1); /* NULL err wins */
    char keep[4] = "abc";
    assert_int_equal(course_error(keep, 0, "x"), -1);
    assert_string_equal(keep, "abc");
}

/* course_create_output: a file that can be written is created (and emptied);
 * a missing folder or a folder in the file's place gets the reason and what
 * to do, under the name the caller gave. */
static void test_create_output(void **state) {
    (void)state;
    char dir[] = "/tmp/test_error.XXXXXX", path[64], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("old contents", f);
    fclose(f);
    f = course_create_output(path, "--json", err, sizeof err);
    assert_non_null(f);
    fputs("{}", f);
    fclose(f);
    f = fopen(path, "r");
    char got[32] = "";
    assert_non_null(fgets(got, sizeof got, f));
    fclose(f);
    assert_string_equal(got, "{}");

    snprintf(path, sizeof path, "%s/no-such/out.json", dir);
    assert_null(course_create_output(path, "--json", err, sizeof err));
    char want[256];
    snprintf(want, sizeof want, "--json %s: cannot create the file (No such file or directory); "
                                "give a path in a folder you can write to", path);
    assert_string_equal(err, want);
    assert_null(course_create_output(dir, "--log", err, sizeof err));
    snprintf(want, sizeof want, "--log %s: cannot create the file (Is a directory)", dir);
    assert_non_null(strstr(err, want));

    snprintf(path, sizeof path, "%s/out.json", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* course_open_regular: a regular file opens with its size (and is not handed
 * to programs this one starts); anything else gets a message that says what
 * the path is and what to give instead, under the name the caller gave. */
static void test_open_regular(void **state) {
    (void)state;
    char dir[] = "/tmp/test_error.XXXXXX", path[64], err[512], want[256];
    const char *hint = "give a regular text file";
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/corpus.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("hello", f);
    assert_int_equal(fclose(f), 0);
    size_t size = 0;
    f = course_open_regular(path, "--data corpus.txt", hint, &size, err, sizeof err);
    assert_non_null(f);
    assert_int_equal(size, 5);
    assert_true(fcntl(fileno(f), F_GETFD) & FD_CLOEXEC);
    char got[8] = "";
    assert_non_null(fgets(got, sizeof got, f));
    assert_string_equal(got, "hello");
    fclose(f);
    f = course_open_regular(path, "--data", hint, NULL, err, sizeof err); /* no size wanted */
    assert_non_null(f);
    fclose(f);

    char missing[64];
    snprintf(missing, sizeof missing, "%s/missing.txt", dir);
    assert_null(course_open_regular(missing, "--data missing.txt", hint, &size, err, sizeof err));
    assert_string_equal(err, "--data missing.txt: cannot open (No such file or directory); give a regular text file");
    assert_null(course_open_regular(dir, "--data DIR", hint, &size, err, sizeof err));
    assert_string_equal(err, "--data DIR is a directory; give a regular text file");

    char fifo[64], sock[64];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sock, sizeof sock, "%s/sock", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    const struct {
        const char *path, *kind;
    } others[] = {{fifo, "a FIFO (named pipe)"}, {sock, "a socket"}, {"/dev/null", "a character device"},
                  {"/dev/loop0", "a block device"}};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        struct stat st;
        if (i == 3 && (stat(others[i].path, &st) != 0 || !S_ISBLK(st.st_mode))) continue; /* none here */
        assert_null(course_open_regular(others[i].path, "--data X", hint, &size, err, sizeof err));
        snprintf(want, sizeof want, "--data X is %s, not a regular file; give a regular text file", others[i].kind);
        assert_string_equal(err, want);
    }
    close(fd);
    assert_int_equal(unlink(sock), 0);
    assert_int_equal(unlink(fifo), 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* course_same_file: existing files by device and inode, whatever the spelling
 * or link; files not yet there by name once the folder is resolved. */
static void test_same_file(void **state) {
    (void)state;
    char dir[] = "/tmp/test_error.XXXXXX", a[64], a2[96], sym[64], hard[64], b[64], n1[64], n2[96];
    assert_non_null(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/a.txt", dir);
    snprintf(a2, sizeof a2, "%s/./sub/../a.txt", dir);
    snprintf(sym, sizeof sym, "%s/link.txt", dir);
    snprintf(hard, sizeof hard, "%s/hard.txt", dir);
    snprintf(b, sizeof b, "%s/b.txt", dir);
    snprintf(n1, sizeof n1, "%s/new.csv", dir);
    snprintf(n2, sizeof n2, "%s/sub/../new.csv", dir);
    char sub[64];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    FILE *f = fopen(a, "w");
    assert_non_null(f);
    fclose(f);
    f = fopen(b, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(symlink(a, sym), 0);
    assert_int_equal(link(a, hard), 0);
    assert_true(course_same_file(a, a));
    assert_true(course_same_file(a, a2));
    assert_true(course_same_file(a, sym));
    assert_true(course_same_file(hard, sym));
    assert_false(course_same_file(a, b));
    assert_false(course_same_file(a, n1));   /* one exists, one does not */
    assert_true(course_same_file(n1, n2));   /* neither yet: the same name */
    assert_false(course_same_file(n1, b));
    assert_true(course_same_file("no-such-dir/x", "no-such-dir/x")); /* as given */
    assert_false(course_same_file("no-such-dir/x", "no-such-dir/y"));
    assert_false(course_same_file("no-such-dir/x", "no-such-dir-2/x")); /* two folders, neither there */
    assert_true(course_same_file("test-error-new.csv", "./test-error-new.csv")); /* no folder is "." */
    assert_true(course_same_file("/test-error-new.csv", "/./test-error-new.csv")); /* the folder is "/" */
    /* Links to files not there yet: writing through one creates its target,
     * so a dangling link is the file it points to (relative to its folder,
     * through a chain of links), and two links to one missing file match. */
    char dl[64], dl2[64], dl3[64], loop[64];
    snprintf(dl, sizeof dl, "%s/dangling.csv", dir);
    snprintf(dl2, sizeof dl2, "%s/sub/chain.csv", dir);
    snprintf(dl3, sizeof dl3, "%s/other.csv", dir);
    snprintf(loop, sizeof loop, "%s/loop.csv", dir);
    assert_int_equal(symlink("new.csv", dl), 0);         /* relative: <dir>/new.csv */
    assert_int_equal(symlink("../dangling.csv", dl2), 0); /* a link to the link */
    assert_int_equal(symlink("elsewhere.csv", dl3), 0);
    assert_int_equal(symlink("loop.csv", loop), 0);       /* to itself: never resolves */
    assert_true(course_same_file(dl, n1));
    assert_true(course_same_file(n2, dl));
    assert_true(course_same_file(dl2, n1));
    assert_true(course_same_file(dl, dl2));
    assert_false(course_same_file(dl3, n1));
    assert_false(course_same_file(dl3, dl));
    assert_true(course_same_file(loop, loop));
    assert_false(course_same_file(loop, n1));
    assert_false(course_same_file(dl, b)); /* a missing target and an existing file */
    /* Names of files not yet there are compared as they are spelt: on
     * Linux new.csv and NEW.csv are two files. */
    char upper[64];
    snprintf(upper, sizeof upper, "%s/NEW.csv", dir);
    assert_false(course_same_file(n1, upper));
    /* A dangling link given with no folder part, from inside its folder: its
     * relative target is the folder's too. */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    assert_true(course_same_file("dangling.csv", "new.csv"));
    assert_true(course_same_file("dangling.csv", n1));
    assert_false(course_same_file("other.csv", "new.csv"));
    assert_int_equal(chdir(cwd), 0);
    unlink(dl);
    unlink(dl2);
    unlink(dl3);
    unlink(loop);
    unlink(a);
    unlink(b);
    unlink(sym);
    unlink(hard);
    rmdir(sub);
    assert_int_equal(rmdir(dir), 0);
}

/* Two existing files are one only on the same device: the roots of two
 * file systems often share an inode number (/proc and /sys are both 1). */
static void test_same_file_counts_the_device(void **state) {
    (void)state;
    static const char *const roots[] = {"/proc", "/sys", "/dev", "/dev/pts", "/dev/shm", "/run"};
    const size_t n = sizeof roots / sizeof *roots;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            struct stat si, sj;
            if (stat(roots[i], &si) || stat(roots[j], &sj) || si.st_ino != sj.st_ino || si.st_dev == sj.st_dev)
                continue;
            assert_false(course_same_file(roots[i], roots[j]));
            assert_true(course_same_file(roots[i], roots[i]));
            return;
        }
    print_message("no two file systems here share a root inode: skipped\n");
    skip();
}

static void test_check_macro(void **state) {
    (void)state;
    int even = 4, odd = 5;
    child_result_t ok = run_in_child(check_false, &even);
    assert_int_equal(ok.exit_code, 0);
    assert_string_equal(ok.out, "");
    child_result_t bad = run_in_child(check_false, &odd);
    assert_int_equal(bad.exit_code, 1);
    assert_non_null(strstr(bad.out, "n must be even, got 5"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fatal_names_location_and_exits),
        cmocka_unit_test(test_fatal_names_rank),
        cmocka_unit_test(test_fatal_calls_abort_hook),
        cmocka_unit_test(test_fatal_line_and_long_message),
        cmocka_unit_test(test_fatal_keeps_open_files),
        cmocka_unit_test(test_check_macro),
        cmocka_unit_test(test_course_error),
        cmocka_unit_test(test_create_output),
        cmocka_unit_test(test_open_regular),
        cmocka_unit_test(test_same_file),
        cmocka_unit_test(test_same_file_counts_the_device),
    };
    return cmocka_run_group_tests_name("error", tests, NULL, NULL);
}
