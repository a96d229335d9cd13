/*
 * Negative and positive tests of the emulator's sanitizer builds. Each test
 * runs a small program built with simtcc --sanitize=... as a child process
 * and checks its exit status and report: a missing __syncthreads must be
 * reported by ThreadSanitizer as a data race at the student's line, an
 * out-of-bounds write by AddressSanitizer as a heap-buffer-overflow, and the
 * corrected programs (and the emulator's own test suites) must run clean,
 * so that a report always means a bug in the kernel, not in the emulator.
 * SIMT_CHILD_DIR is set by simt.mk to where the children were built.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#ifndef SIMT_CHILD_DIR
#error "SIMT_CHILD_DIR must name the directory of the child programs"
#endif

typedef struct {
    int status; /* exit status, or 128 + signal */
    char out[1 << 16];
} child_result;

static child_result result;

/* Run SIMT_CHILD_DIR/name with stderr folded into stdout; keep the head. */
static void run_child_with(const char *name, const char *arg)
{
    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "'%s/%s' %s 2>&1", SIMT_CHILD_DIR, name, arg);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = 0, k;
    char tmp[4096];
    while ((k = fread(tmp, 1, sizeof(tmp), p)) > 0) {
        size_t room = sizeof(result.out) - 1 - n;
        if (k > room) k = room;
        memcpy(result.out + n, tmp, k);
        n += k;
    }
    result.out[n] = 0;
    int st = pclose(p);
    result.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void run_child(const char *name) { run_child_with(name, ""); }

static void expect_in_output(const char *needle)
{
    if (!strstr(result.out, needle)) {
        print_error("expected \"%s\" in the child's output:\n%.2000s\n", needle, result.out);
        fail();
    }
}

static void expect_not_in_output(const char *needle)
{
    if (strstr(result.out, needle)) {
        print_error("did not expect \"%s\" in the child's output:\n%.2000s\n", needle, result.out);
        fail();
    }
}

static void expect_clean(void)
{
    if (result.status != 0 || strstr(result.out, "Sanitizer")) {
        print_error("expected a clean run, got status %d:\n%.3000s\n", result.status, result.out);
        fail();
    }
}

static void test_tsan_reports_missing_syncthreads(void **state)
{
    (void)state;
    run_child("race_tsan");
    assert_int_not_equal(result.status, 0);
    expect_in_output("ThreadSanitizer: data race");
    expect_in_output("race.cu:1"); /* the unsynchronised write or read, lines 12-13 */
}

/* The TSan flavour carries common/simt/tsan.supp itself: a race in a
 * function named as GCC names an OpenMP region's body is left out with no
 * TSAN_OPTIONS at all, so a check run by hand, from any folder, is as quiet
 * as under make. (Before, only make check and make test passed the file.) */
static void test_tsan_suppressions_built_in(void **state)
{
    (void)state;
    unsetenv("TSAN_OPTIONS");
    run_child("suppressed_tsan");
    expect_clean();
    expect_in_output("suppressed: ran (1), launch: no error");
}

static void test_tsan_silent_with_syncthreads(void **state)
{
    (void)state;
    run_child("norace_tsan");
    expect_clean();
}

static void test_asan_reports_out_of_bounds(void **state)
{
    (void)state;
    run_child("oob_asan");
    assert_int_not_equal(result.status, 0);
    expect_in_output("AddressSanitizer: heap-buffer-overflow");
    expect_in_output("oob.cu:13");
}

/* A cp.async whose source runs past its allocation: reported at the
 * cp.async (line 15), though the emulator moves the bytes at the wait. */
static void test_asan_reports_cp_async_at_its_line(void **state)
{
    (void)state;
    run_child("cp_oob_asan");
    assert_int_not_equal(result.status, 0);
    expect_in_output("AddressSanitizer: heap-buffer-overflow");
    expect_in_output("cp_oob.cu:15");
}

/* A check the runtime makes for a course header's wrapper (the alignment
 * of a cp.async) names the kernel's line, as the compiler's own alignment
 * checks do: line 15 of cp_misaligned.cu, not the wrapper's. */
static void test_runtime_check_names_kernel_line(void **state)
{
    (void)state;
    run_child("cp_misaligned");
    expect_in_output("misaligned address: cp.async of 16 bytes with its global source");
    expect_in_output("at cp_misaligned.cu:15;");
    expect_in_output("cp_misaligned: misaligned address");
}

/* Shared-memory operands past their tile: a cp.async one chunk past the
 * launch's dynamic shared memory, an ldmatrix row past a static tile. Each
 * stops its kernel with the kernel's line, before a byte moves (without
 * the check the copy wrote the emulator's heap). */
static void test_shared_operand_past_tile(void **state)
{
    (void)state;
    run_child_with("shared_past_end", "cp");
    expect_in_output("cp.async of 16 bytes: its shared-memory destination, 16 bytes at byte 1024 of the block's "
                     "dynamic shared memory, runs past its end (1024 bytes");
    expect_in_output("at shared_past_end.cu:18:");
    expect_in_output("copy_past_end: an illegal memory access was encountered");
    run_child_with("shared_past_end", "ldmatrix");
    expect_in_output("ldmatrix: its row address, 16 bytes at byte 128 of __shared__ 'tile', runs past its end "
                     "(128 bytes)");
    expect_in_output("at shared_past_end.cu:29:");
    expect_in_output("ldmatrix_past_tile: an illegal memory access was encountered");
}

/* A kernel that touches memory nothing maps: the launch fails with an
 * illegal address and the kernel's line, and the process lives on (it died
 * of SIGSEGV, with no line). A frame larger than the thread's stack is named
 * as an overflow, at the kernel's line though the fault is in memset; a
 * store past the dynamic shared memory, as such (it wrote the heap). */
static void test_fault_fails_the_launch(void **state)
{
    (void)state;
    run_child_with("fault", "far");
    assert_int_equal(result.status, 0);
    expect_in_output("simt: segmentation fault at address");
    expect_in_output("at fault.cu:16: no allocation holds that address");
    expect_in_output("store_far: an illegal memory access was encountered");
    expect_in_output("after: an illegal memory access was encountered");
    run_child_with("fault", "stack");
    assert_int_equal(result.status, 0);
    expect_in_output("simt: a thread's stack overflowed, at fault.cu:21");
    expect_in_output("more than the 64 KB each emulated thread has");
    expect_in_output("big_locals: an illegal memory access was encountered");
    run_child_with("fault", "shared");
    assert_int_equal(result.status, 0);
    expect_in_output("simt: an access 0 bytes past the end of the block's dynamic shared memory (4096 bytes");
    expect_in_output("at fault.cu:29:");
    expect_in_output("shared_past_end: an illegal memory access was encountered");
}

/* Host code that reads or writes cudaMalloc memory through the device
 * pointer: a segmentation fault on a GPU, and here too, after a line that
 * names the access, the allocation and the program's line (through the C
 * library's memcpy too). Freed device memory stays unreadable for a while,
 * so a use after cudaFree, by the host or a kernel, is named as such. A
 * handler of the program's own still runs after the line; managed memory,
 * and copies, are the host's to use. */
static void test_host_access_to_device_memory_faults(void **state)
{
    (void)state;
    enum { SEGV = 128 + 11 };
    static const struct {
        const char *mode;
        int status;
        const char *says[4];
    } cases[] = {
        {"read", SEGV,
         {"simt: host code read device memory at ", "(byte 20 of a 400-byte cudaMalloc allocation at ",
          "at host_access.cu:83. On a GPU that is a segmentation fault"}},
        {"write", SEGV, {"simt: host code wrote device memory at ", "at host_access.cu:72, in "}},
        {"past", SEGV, {"(12 bytes past the end of a 400-byte cudaMalloc allocation", "at host_access.cu:88."}},
        {"freed", SEGV,
         {"simt: host code read device memory at ",
          " after its cudaFree, at host_access.cu:93. On a GPU that is a segmentation fault"}},
        {"freed_kernel", 0,
         {"segmentation fault at address ",
          "at host_access.cu:35: device memory that cudaFree freed (a pointer used after its cudaFree)",
          "freed_kernel: an illegal memory access was encountered"}},
        {"freed_copy", 0,
         {"simt: cudaMemcpy's source at ",
          " is device memory that cudaFree has freed (a pointer used after its cudaFree)",
          "freed_copy: cudaErrorInvalidValue"}},
        {"handler", 0,
         {"simt: host code read device memory at ", "at host_access.cu:103.",
          "handler: the program's own SIGSEGV handler ran", "handler: h[5] = 6.0"}},
        {"copy", 0, {"copy: h[5] = 6.0"}},
        {"managed", 0, {"managed: d[5] = 6.0"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run_child_with("host_access", cases[i].mode);
        if (result.status != cases[i].status)
            fail_msg("mode %s: exit status %d, want %d:\n%.2000s", cases[i].mode, result.status, cases[i].status,
                     result.out);
        for (int k = 0; k < 4 && cases[i].says[k]; k++) expect_in_output(cases[i].says[k]);
        expect_not_in_output("unreached"); /* the faulting access ended the process */
        if (!strcmp(cases[i].mode, "copy") || !strcmp(cases[i].mode, "managed"))
            expect_not_in_output("simt:"); /* the right ways: not a word from the emulator */
    }
}

/* A deadlock report says where each group of stuck threads waits, by the
 * kernel's line: the barrier some threads skipped, the shuffle the others
 * wait at. */
static void test_deadlock_names_wait_lines(void **state)
{
    (void)state;
    run_child("deadlock");
    expect_in_output("simt: deadlock in block (0,0,0): 16 thread(s) wait at __syncthreads, 16 at a warp collective");
    expect_in_output("16 thread(s), the first thread 0, wait at __syncthreads at deadlock.cu:16");
    expect_in_output("16 thread(s), the first thread 16, wait at a warp collective at deadlock.cu:18");
    expect_in_output("deadlock: unspecified launch failure");
}

/* A warp-wide instruction that some lanes left before, and a *_sync call
 * the two halves of a warp reach from different lines: the messages name
 * the kernel's lines and a thread at fault. */
static void test_warp_wide_names_line(void **state)
{
    (void)state;
    run_child("early_return");
    expect_in_output("simt: ldmatrix.x4 at early_return.cu:22 in warp 0 reached by 24 of its 32 lanes");
    expect_in_output("lane 24 (and 7 more) had already returned");
    expect_in_output("(block (0,0,0) thread (0,0,0))"); /* a lane that got there, not the last to arrive */
    expect_in_output("early_return: unspecified launch failure");
    run_child_with("early_return", "diverge");
    expect_in_output("simt: warp 0: lanes 0 and 16 meet at different warp-wide operations");
    expect_in_output("a *_sync intrinsic at early_return.cu:30");
    expect_in_output("another one at early_return.cu:32");
    expect_in_output("(block (0,0,0) thread (16,0,0))");
    expect_in_output("diverge: unspecified launch failure");
}

/* A load into a guard zone the host marked fails the launch at its line,
 * in the tracer's build (no sanitizer); before the zone is set, or after it
 * is lifted, the same kernel runs. */
static void test_guard_zone_names_line(void **state)
{
    (void)state;
    run_child("guard");
    assert_int_equal(result.status, 0);
    expect_in_output("in bounds: no error");
    expect_in_output("unguarded: no error");
    expect_in_output("simt: a load of 4 bytes at ");
    expect_in_output("just past the end of in (32 floats), at guard.cu:20");
    expect_in_output("(block (0,0,0) thread (32,0,0))");
    expect_in_output("one past: unspecified launch failure");
    expect_in_output("simt: a load of 16 bytes at ");
    expect_in_output("whose last 8 bytes run past the end of in (30 floats), at guard.cu:27");
    expect_in_output("i + 4 <= n for a float4");
    expect_in_output("float4 tail: unspecified launch failure");
}

/* The same child in the AddressSanitizer flavour, which has no tracer's
 * hooks: simt_memtrace_guard poisons the zone, so ASan stops the read at its
 * line; the in-bounds launch, and the one after the zone is lifted, run.
 * (Before, this flavour ignored the call, and each program that wanted it
 * poisoned the zone itself.) */
static void test_guard_zone_asan(void **state)
{
    (void)state;
    run_child("guard_asan");
    assert_int_not_equal(result.status, 0);
    expect_in_output("in bounds: no error");
    expect_in_output("unguarded: no error");
    expect_in_output("AddressSanitizer: use-after-poison");
    expect_in_output("guard.cu:20");
}

static void test_asan_silent_in_bounds(void **state)
{
    (void)state;
    run_child("inbounds_asan");
    expect_clean();
}

/* The emulator's own suites under the sanitizers: barriers, shuffles,
 * atomics, traps, deadlocks and tensor-core emulation raise no reports. */
static void test_core_suite_clean_under_asan(void **state)
{
    (void)state;
    run_child("core_asan");
    expect_clean();
    expect_in_output("[  PASSED  ]");
}

static void test_mma_suite_clean_under_tsan(void **state)
{
    (void)state;
    run_child("mma_tsan");
    expect_clean();
    expect_in_output("[  PASSED  ]");
}

/* Hopper: a thread that reads a TMA destination without waiting for its
 * mbarrier races with the copy; waiting first is clean, and so are the
 * emulator's Hopper tests (TMA, mbarriers, wgmma, and the kernels they
 * make fail on purpose) under AddressSanitizer. */
static void test_tsan_reports_read_before_tma_wait(void **state)
{
    (void)state;
    run_child("tma_race_tsan");
    assert_int_not_equal(result.status, 0);
    expect_in_output("ThreadSanitizer: data race");
    expect_in_output("tma_race.cu:22");
}

/* cp.async: a refill issued before the barrier that ends the reads of its
 * stage races with those reads (a NaN in the plain build, the two lines
 * under ThreadSanitizer: the read, and the cp.async whose fill the emulator
 * makes, which shows only because its entry point announces the call). */
static void test_tsan_reports_refill_before_barrier(void **state)
{
    (void)state;
    run_child("cp_race_tsan");
    assert_int_not_equal(result.status, 0);
    expect_in_output("ThreadSanitizer: data race");
    expect_in_output("cp_race.cu:21");
    expect_in_output("cp_race.cu:19");
}

/* The emulator's own bookkeeping on each cp.async (finding its destination
 * among the cudaMalloc allocations) must not order a block's threads: a race
 * around the copies is still reported. */
static void test_tsan_sees_races_around_cp_async(void **state)
{
    (void)state;
    run_child("cp_keeps_races_tsan");
    assert_int_not_equal(result.status, 0);
    expect_in_output("ThreadSanitizer: data race");
    expect_in_output("cp_keeps_races.cu:23");
}

static void test_tsan_silent_after_tma_wait(void **state)
{
    (void)state;
    run_child("tma_norace_tsan");
    expect_clean();
}

static void test_hopper_suite_clean_under_asan(void **state)
{
    (void)state;
    run_child("hopper_asan");
    expect_clean();
    expect_in_output("[  PASSED  ]");
}

/* The same suite under ThreadSanitizer: it makes kernels fail on purpose
 * and launches again in the same process, so the threads a failure leaves
 * behind must not show up as races with the host or the next launch. */
static void test_hopper_suite_clean_under_tsan(void **state)
{
    (void)state;
    run_child("hopper_tsan");
    expect_clean();
    expect_in_output("[  PASSED  ]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tsan_reports_missing_syncthreads),
        cmocka_unit_test(test_tsan_silent_with_syncthreads),
        cmocka_unit_test(test_tsan_suppressions_built_in),
        cmocka_unit_test(test_asan_reports_out_of_bounds),
        cmocka_unit_test(test_asan_reports_cp_async_at_its_line),
        cmocka_unit_test(test_runtime_check_names_kernel_line),
        cmocka_unit_test(test_shared_operand_past_tile),
        cmocka_unit_test(test_fault_fails_the_launch),
        cmocka_unit_test(test_host_access_to_device_memory_faults),
        cmocka_unit_test(test_deadlock_names_wait_lines),
        cmocka_unit_test(test_warp_wide_names_line),
        cmocka_unit_test(test_guard_zone_names_line),
        cmocka_unit_test(test_guard_zone_asan),
        cmocka_unit_test(test_asan_silent_in_bounds),
        cmocka_unit_test(test_core_suite_clean_under_asan),
        cmocka_unit_test(test_mma_suite_clean_under_tsan),
        cmocka_unit_test(test_tsan_reports_read_before_tma_wait),
        cmocka_unit_test(test_tsan_silent_after_tma_wait),
        cmocka_unit_test(test_tsan_reports_refill_before_barrier),
        cmocka_unit_test(test_tsan_sees_races_around_cp_async),
        cmocka_unit_test(test_hopper_suite_clean_under_asan),
        cmocka_unit_test(test_hopper_suite_clean_under_tsan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
