/*
 * libFuzzer harness: scoring a speed test from the JSON a submission's bench
 * wrote (speed_score in autograder/src/speed.c), and results.json after it.
 *
 * Feeds: byte 0 picks the rubric test (a ratio to cuBLAS, a speed-up over
 * another kernel, MFU, tokens per second) and, in bit 2, whether the grader
 * ran the emulator's build; the rest is the bench's --json.
 * Asserts: no crash; the score is between 0 and the test's points, and full
 * points only with "pass"; a result left out of the total is a grader error,
 * never a pass; a JSON whose "emulator" is not the build the grader ran
 * counts and earns nothing; the message is one line without control bytes
 * (it is printed in the grader's table); results.json shows the status and
 * the message.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "grade.h"

static int out_fd = -1;
static char out_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    if (out_fd < 0) {
        out_fd = memfd_create("results", 0);
        snprintf(out_path, sizeof out_path, "/proc/self/fd/%d", out_fd);
    }
    rubric_test_t t;
    memset(&t, 0, sizeof t);
    t.kind = KIND_SPEED;
    t.points = 4;
    t.ranks = 1;
    snprintf(t.baseline, sizeof t.baseline, "cuBLAS");
    switch (data[0] % 4) {
    case 0: snprintf(t.kernel, sizeof t.kernel, "tiled"); t.full_at = 0.5, t.zero_at = 0.1; break;
    case 1:
        snprintf(t.kernel, sizeof t.kernel, "coalesced");
        snprintf(t.over, sizeof t.over, "naive");
        t.full_at = 4, t.zero_at = 1;
        break;
    case 2: snprintf(t.metric, sizeof t.metric, "mfu"); t.full_at = 0.3, t.zero_at = 0.05; break;
    case 3: snprintf(t.metric, sizeof t.metric, "tokens_per_s"); t.full_at = 2e5, t.zero_at = 1e4; break;
    }
    snprintf(t.name, sizeof t.name, "speed %d", data[0] % 4);
    char *js = malloc(size);
    memcpy(js, data + 1, size - 1);
    js[size - 1] = '\0';

    result_t res;
    memset(&res, 0, sizeof res);
    res.t = &t;
    snprintf(res.nn, sizeof res.nn, "03");
    res.max_score = t.points;
    res.counted = 1;
    res.measured = -1;
    const int emulated = (data[0] >> 2) & 1;
    speed_score(&res, js, emulated);
    /* The grader's reading of "emulator", made independently: an object
     * whose key is there and is not the boolean the build was. */
    json_t *root = json_loads(js, 0, NULL), *e = json_object_get(root, "emulator");
    const int forged = e && !(json_is_boolean(e) && json_is_true(e) == emulated);
    json_decref(root);
    free(js);
    if (forged && (res.status != ST_FAIL || !res.counted || res.score != 0)) abort();

    if (!(res.score >= 0 && res.score <= t.points)) abort();
    if ((res.status == ST_PASS) != (res.score == t.points && res.score > 0)) abort();
    if (!res.counted && res.status != ST_ERROR) abort();
    if (res.status != ST_PASS && res.status != ST_PARTIAL && res.status != ST_FAIL && res.status != ST_ERROR) abort();
    if (!res.message[0]) abort();
    for (const unsigned char *c = (const unsigned char *)res.message; *c; c++)
        if (*c < 0x20 || *c == 0x7f) {
            fprintf(stderr, "control byte 0x%02x in the message: %s\n", *c, res.message);
            abort();
        }

    if (ftruncate(out_fd, 0) != 0 || report_json(out_path, &res, 1, 1.0, "") != 0) abort();
    root = json_load_file(out_path, 0, NULL);
    const char *shown = json_string_value(json_object_get(json_array_get(json_object_get(root, "tests"), 0), "output"));
    if (!shown || strncmp(shown, status_name(res.status), strlen(status_name(res.status)))) abort();
    json_decref(root);
    return 0;
}
