/* Capturing what the emulator prints on stderr, for the CUDA test suites. */
#ifndef SIMT_TEST_CAPTURE_STDERR_H
#define SIMT_TEST_CAPTURE_STDERR_H

#include <stdio.h>
#include <unistd.h>

/* What the emulator prints on stderr between capture_begin and
 * capture_end (its reports and failure messages), as a string. */
static char captured[1 << 16];
static int saved_stderr = -1;
static FILE *capture_file;

static void capture_begin(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    assert_non_null(capture_file);
    saved_stderr = dup(2);
    dup2(fileno(capture_file), 2);
}

static const char *capture_end(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    rewind(capture_file);
    size_t n = fread(captured, 1, sizeof captured - 1, capture_file);
    captured[n] = '\0';
    fclose(capture_file);
    return captured;
}

#endif
