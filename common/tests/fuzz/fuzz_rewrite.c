/*
 * libFuzzer harness: simt-rewrite (common/simt/src/simt_rewrite.c), which
 * reads a student's .cu file and writes the C++ that g++ compiles for the
 * emulator. A submission controls every byte of that file.
 *
 * Feeds: the input, as the .cu file's text (NUL bytes and all; the program
 * reads a file into a buffer with one NUL after it, and so does this).
 * Asserts: no crash, sanitizer report or hang; it either refuses the file
 * with a message (fail(): exit status 1), reports calls nvcc would refuse
 * (returns 1), or writes C++ that keeps the file's lines: every line break
 * of the input is in the output, plus the one after its first #line and
 * the two of each "SIMT_HOST_CODE_BEGIN / #line N" it puts before a host
 * function, so that compiler messages point at the student's lines. And
 * the same input rewritten a second time, after itself rather than after
 * the input before it, gives the same result, byte for byte: the rewrite's
 * state is cleared between files.
 *
 * simt_rewrite.c's state is static, so it is included whole, its main
 * renamed; rewrite() clears that state (rewrite_reset) before each input,
 * so each starts from it as the program does. fail() ends the program with
 * exit(1): here exit() returns to the input's start instead (longjmp),
 * which the rewrite allows, since the program ends there and the state is
 * reset before the next input. A refused file leaves a few bytes
 * allocated, as the program does when it exits, so leak checking is off.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf refusal;
static int refusal_code;

static void refused(int code)
{
    refusal_code = code;
    longjmp(refusal, 1);
}

#define exit(code) refused(code)
#define main simt_rewrite_main
#include "simt/src/simt_rewrite.c"
#undef main
#undef exit

const char *__asan_default_options(void) { return "detect_leaks=0"; }

static size_t line_breaks(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += s[i] == '\n';
    return c;
}

static buf out; /* static: written by the rewrite before a longjmp may come back */

/* The rewrite of src into out: its return, or -1 where fail() refused it. */
static int run(void)
{
    out = (buf){0};
    refusal_code = 0;
    if (setjmp(refusal)) return -1;
    return rewrite(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    src = text;
    len = size;
    path = "kernel.cu";
    int rc = run();

    if (rc == -1 && refusal_code != 1) abort(); /* exit(2): out of memory */
    if (rc == 0) {
        /* A host function's mark on a line of its own, "SIMT_HOST_CODE_BEGIN\n#line N ...\n", is the one
         * insertion with line breaks (the others: a mark's end, a deduction helper). */
        size_t marks = 0;
        for (size_t k = 0; k < st.ninserts; k++) marks += strchr(st.inserts[k].text, '\n') != NULL;
        size_t want = line_breaks(text, size) + 1 + 2 * marks, got = line_breaks(out.s, out.n);
        if (got != want) {
            fprintf(stderr, "the rewrite has %zu line breaks, the input %zu (+1, +2 for each of %zu host marks)\n", got,
                    want - 1 - 2 * marks, marks);
            abort();
        }
    }
    /* Again, after the rewrite of this input instead of the one before: the
     * same C++, or state that rewrite_reset does not clear changed it. */
    buf first = out;
    int again = run();
    if (again != rc || out.n != first.n || (out.n && memcmp(out.s, first.s, out.n) != 0)) {
        fprintf(stderr, "the same input rewritten again: %d and %zu bytes, first %d and %zu bytes\n", again, out.n,
                rc, first.n);
        abort();
    }
    free(first.s);
    free(out.s);
    free(text);
    return 0;
}
