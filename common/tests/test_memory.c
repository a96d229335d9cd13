/* Checked host allocation: aligned, zeroed, and a clear fatal error when it cannot succeed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <sys/resource.h>

#include "child.h"
#include "memory.h"

static void test_alignment_and_sizes(void **state) {
    (void)state;
    size_t sizes[] = {0, 1, 63, 64, 65, 1000, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned char *p = host_malloc(sizes[i]);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 64, 0);
        memset(p, 0xab, sizes[i]); /* the whole block is usable (ASan would object otherwise) */
        host_free(p);
    }
    host_free(NULL);
}

static void test_calloc_zeroes(void **state) {
    (void)state;
    int *p = host_calloc(1001, sizeof(int));
    for (int i = 0; i < 1001; i++) assert_int_equal(p[i], 0);
    host_free(p);
}

static int alloc_too_much(void *arg) {
    (void)arg;
    /* Cap the address space so the failure is real and quick on any machine. */
    struct rlimit rl = {256u << 20, 256u << 20};
    setrlimit(RLIMIT_AS, &rl);
    void *p = host_malloc((size_t)1 << 40);
    return p ? 0 : 3;
}

static void test_out_of_memory_is_fatal_and_clear(void **state) {
    (void)state;
    child_result_t r = run_in_child(alloc_too_much, NULL);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "out of host memory"));
    assert_non_null(strstr(r.out, "1.00 TiB"));
    assert_non_null(strstr(r.out, "test_memory.c:"));
}

static int calloc_overflow(void *arg) {
    (void)arg;
    host_calloc(SIZE_MAX / 2, 4);
    return 0;
}

static void test_calloc_overflow_is_caught(void **state) {
    (void)state;
    child_result_t r = run_in_child(calloc_overflow, NULL);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "overflows"));
}

static void test_format_bytes(void **state) {
    (void)state;
    char b[32];
    assert_string_equal(format_bytes(512, b, sizeof b), "512 B");
    assert_string_equal(format_bytes(3 * 1024, b, sizeof b), "3.00 KiB");
    assert_string_equal(format_bytes(1.5 * 1024 * 1024 * 1024, b, sizeof b), "1.50 GiB");
    assert_string_equal(format_bytes(80.0 * 1024 * 1024 * 1024, b, sizeof b), "80.0 GiB");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alignment_and_sizes),
        cmocka_unit_test(test_calloc_zeroes),
        cmocka_unit_test(test_out_of_memory_is_fatal_and_clear),
        cmocka_unit_test(test_calloc_overflow_is_caught),
        cmocka_unit_test(test_format_bytes),
    };
    return cmocka_run_group_tests_name("memory", tests, NULL, NULL);
}
