/*
 * The emulator and nvcc agree on what builds. Each file of tests/agreement
 * is CUDA a student may write: accept_*.cu builds with both compilers, and
 * refuse_*.cu with neither, the emulator's message holding the text its
 * first line gives ("// expect: ..."). Both compile it as a lab's file: with
 * the labs' warnings as errors (nvcc's -Werror all-warnings, which makes a
 * host read of a __device__ variable an error, and the emulator's lab flags).
 * simtcc -c compiles each file always;
 * nvcc (CUDA 13, -arch=sm_90a) does where the toolkit is installed, so a
 * file that says nvcc builds it is checked against nvcc itself, and the
 * corpus cannot drift from the real compiler. A refusal where only the
 * emulator refuses (it is stricter in a few places, see common/simt/README.md)
 * does not belong here, nor one where only nvcc does.
 * A refuse_ file may end lines with "// refused": then each such line must
 * be one that both compilers name in an error, so one file can hold a whole
 * family of refusals (the GPU built-ins called from host code, one a line)
 * and every member of it is checked, not just the first. Neither compiler is
 * asked to report more than nvcc's limit of 100 errors a file.
 * AGREEMENT_DIR, SIMTCC, SIMT_LAB_WERROR, NVCC (empty without a toolkit)
 * and NVCC_FLAGS are set by simt.mk.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#if !defined(AGREEMENT_DIR) || !defined(SIMTCC) || !defined(NVCC) || !defined(SIMT_LAB_WERROR) || !defined(NVCC_FLAGS)
#error "AGREEMENT_DIR, SIMTCC, SIMT_LAB_WERROR, NVCC and NVCC_FLAGS must be defined (common/simt/simt.mk)"
#endif

static char tmp[] = "/tmp/simt-agreement-XXXXXX";
static char out[1 << 18];

/* Runs cmd (stdout and stderr into out); returns its exit status. */
static int run(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = 0, k;
    while (n < sizeof out - 1 && (k = fread(out + n, 1, sizeof out - 1 - n, p)) > 0) n += k;
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The file's first line after "// expect: ", or NULL. */
static char *expected(const char *path)
{
    static char line[512];
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    const char *tag = "// expect: ";
    if (!got || strncmp(line, tag, strlen(tag)) != 0) return NULL;
    line[strcspn(line, "\n")] = 0;
    return line + strlen(tag);
}

/* The numbers of the lines of path that end with "// refused"; returns
 * how many (at most max). */
static int refused_lines(const char *path, int *lines, int max)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    int n = 0, number = 0;
    while (fgets(line, sizeof line, f)) {
        number++;
        line[strcspn(line, "\n")] = 0;
        size_t len = strlen(line), tag = strlen("// refused");
        if (len >= tag && strcmp(line + len - tag, "// refused") == 0) {
            if (n == max) fail_msg("%s: more than %d lines marked \"// refused\"", path, max);
            lines[n++] = number;
        }
    }
    fclose(f);
    return n;
}

/* Does out hold an error at each marked line, in the form pattern gives
 * ("%s:%d: error" for the emulator, "%s(%d): error" for nvcc)? Fails naming
 * the first line it lacks. */
static void errors_at(const char *who, const char *pattern, const char *path, const int *lines, int n)
{
    char want[1200];
    for (int i = 0; i < n; i++) {
        snprintf(want, sizeof want, pattern, path, lines[i]);
        if (!strstr(out, want))
            fail_msg("%s: line %d is marked \"// refused\", but %s names no error there:\n%s", path, lines[i], who,
                     out);
    }
}

static void check_file(void **state)
{
    const char *name = (const char *)*state;
    char path[1024], cmd[4096];
    snprintf(path, sizeof path, "%s/%s", AGREEMENT_DIR, name);
    int accept = strncmp(name, "accept_", 7) == 0;
    const char *expect = accept ? NULL : expected(path);
    if (!accept && !expect) fail_msg("%s: a refuse_ file must open with \"// expect: <the emulator's message>\"", name);
    int lines[100];
    int nlines = refused_lines(path, lines, 99);
    if (accept && nlines) fail_msg("%s: an accept_ file has no lines marked \"// refused\"", name);

    snprintf(cmd, sizeof cmd, "'%s' %s -c '%s' -o '%s/simtcc.o' 2>&1", SIMTCC, SIMT_LAB_WERROR, path, tmp);
    int st = run(cmd);
    if (accept && st != 0)
        fail_msg("%s: named accept_, but the emulator does not build it (exit %d):\n%s", name, st, out);
    if (!accept && (st == 0 || !strstr(out, expect)))
        fail_msg("%s: the emulator must refuse it saying \"%s\"; exit %d:\n%s", name, expect, st, out);
    errors_at("the emulator", "%s:%d: error", path, lines, nlines);

    if (!NVCC[0]) return; /* said once, in main */
    snprintf(cmd, sizeof cmd, "'%s' %s -c '%s' -o '%s/nvcc.o' 2>&1", NVCC, NVCC_FLAGS, path, tmp);
    st = run(cmd);
    if (accept && st != 0) fail_msg("%s: named accept_, but nvcc refuses it (exit %d):\n%s", name, st, out);
    if (!accept && st == 0) fail_msg("%s: named refuse_, but nvcc builds it:\n%s", name, out);
    errors_at("nvcc", "%s(%d): error", path, lines, nlines);
}

/* The corpus: every .cu file of the folder, each a test of its own. */
static struct CMUnitTest tests[64];
static char names[64][256];

static int by_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static size_t find_files(void)
{
    DIR *d = opendir(AGREEMENT_DIR);
    if (!d) {
        perror(AGREEMENT_DIR);
        exit(1);
    }
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".cu") != 0) continue;
        if (strncmp(e->d_name, "accept_", 7) != 0 && strncmp(e->d_name, "refuse_", 7) != 0) {
            fprintf(stderr, "%s/%s: name it accept_*.cu or refuse_*.cu\n", AGREEMENT_DIR, e->d_name);
            exit(1);
        }
        if (n == sizeof tests / sizeof tests[0] || len >= sizeof names[0]) {
            fprintf(stderr, "%s: too many files, or a name too long, for this test's tables\n", AGREEMENT_DIR);
            exit(1);
        }
        memcpy(names[n], e->d_name, len + 1);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    for (size_t i = 0; i < n; i++)
        tests[i] = (struct CMUnitTest){names[i], check_file, NULL, NULL, names[i]};
    return n;
}

int main(void)
{
    size_t n = find_files();
    if (n == 0) {
        fprintf(stderr, "%s: no accept_*.cu or refuse_*.cu files\n", AGREEMENT_DIR);
        return 1;
    }
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    if (!NVCC[0])
        printf("nvcc not found: each file is checked against the emulator's side of its name only\n");
    int failed = _cmocka_run_group_tests("simt_agreement", tests, n, NULL, NULL);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return failed;
}
