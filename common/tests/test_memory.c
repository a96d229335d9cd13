/* Checked host allocation: aligned, zeroed, and a clear fatal error when it cannot succeed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <malloc.h>
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
        assert_true(malloc_usable_size(p) >= sizes[i]); /* rounded up, never down */
        memset(p, 0xab, sizes[i]); /* the whole block is usable (ASan would object otherwise) */
        host_free(p);
    }
    host_free(NULL);
}

/* n x 0 bytes is 0 bytes, no division by zero: a valid, freeable block. */
static void test_calloc_of_size_zero(void **state) {
    (void)state;
    void *p = host_calloc(5, 0), *q = host_calloc(0, 0);
    assert_non_null(p);
    assert_non_null(q);
    assert_int_equal((uintptr_t)p % 64, 0);
    host_free(p);
    host_free(q);
}

static void test_calloc_zeroes(void **state) {
    (void)state;
    /* Fresh memory from the system is zero anyway: glibc's M_PERTURB fills
     * every block it hands out with a nonzero byte, so that only the memset
     * in host_calloc can make this one zero. */
    mallopt(M_PERTURB, 0x5a);
    int *p = host_calloc(1001, sizeof(int));
    mallopt(M_PERTURB, 0);
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

/* A size that is no multiple of 64: the message gives the size asked for,
 * not the rounded one the block would have had. */
static int alloc_too_much_odd(void *arg) {
    (void)arg;
    struct rlimit rl = {256u << 20, 256u << 20};
    setrlimit(RLIMIT_AS, &rl);
    void *p = host_malloc(((size_t)1 << 40) + 1);
    return p ? 0 : 3;
}

/* The largest multiple of 64 rounds to itself: no overflow, only too much. */
static int alloc_largest_multiple(void *arg) {
    (void)arg;
    void *p = host_malloc(SIZE_MAX - 63);
    return p ? 0 : 3;
}

static void test_out_of_memory_is_fatal_and_clear(void **state) {
    (void)state;
    child_result_t r = run_in_child(alloc_too_much, NULL);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "out of host memory"));
    assert_non_null(strstr(r.out, "could not allocate 1.00 TiB (1099511627776 bytes); use a smaller size"));
    assert_non_null(strstr(r.out, "test_memory.c:"));
    r = run_in_child(alloc_too_much_odd, NULL);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "could not allocate 1.00 TiB (1099511627777 bytes); use a smaller size"));
    r = run_in_child(alloc_largest_multiple, NULL);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "out of host memory: could not allocate 16777216.0 TiB (18446744073709551552 bytes)"));
    assert_null(strstr(r.out, "overflows"));
}

/* The largest n for its size is no overflow: n * size fits in size_t, and
 * the allocation fails for want of memory, which is what is said. */
static int calloc_largest_n(void *arg) {
    (void)arg;
    struct rlimit rl = {256u << 20, 256u << 20};
    setrlimit(RLIMIT_AS, &rl);
    host_calloc(SIZE_MAX >> 40, (size_t)1 << 40); /* 2^64 - 2^40 bytes */
    return 0;
}

static void test_calloc_largest_n_is_out_of_memory(void **state) {
    (void)state;
    child_result_t r = run_in_child(calloc_largest_n, NULL);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "out of host memory: could not allocate 16777215.0 TiB"));
    assert_null(strstr(r.out, "overflows"));
}

/* host_free gives the memory back: a large block (mapped on its own by
 * glibc) is unmapped again. */
static void test_free_returns_memory(void **state) {
    (void)state;
    const size_t before = mallinfo2().hblkhd;
    void *p = host_malloc(64u << 20);
    assert_true(mallinfo2().hblkhd >= before + (64u << 20));
    host_free(p);
    assert_true(mallinfo2().hblkhd <= before);
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

/* Sizes whose rounding to 64 bytes, or whose n x size, wraps past SIZE_MAX
 * to a small number: without the checks they would return a tiny block. */
static int malloc_wraps(void *arg) {
    (void)arg;
    host_malloc(SIZE_MAX - 10);
    return 0;
}

static int calloc_wraps_to_zero(void *arg) {
    (void)arg;
    host_calloc(SIZE_MAX / 8 + 1, 8); /* 2^61 x 8 = 2^64, which is 0 */
    return 0;
}

static void test_sizes_that_wrap_are_caught(void **state) {
    (void)state;
    child_result_t r = run_in_child(malloc_wraps, NULL);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "host_malloc: size 18446744073709551605 overflows"));
    assert_non_null(strstr(r.out, "test_memory.c:")); /* the caller's line, not memory.c's */
    r = run_in_child(calloc_wraps_to_zero, NULL);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "host_calloc: 2305843009213693952 x 8 bytes overflows size_t"));
}

static void test_format_bytes(void **state) {
    (void)state;
    char b[32];
    assert_string_equal(format_bytes(512, b, sizeof b), "512 B");
    assert_string_equal(format_bytes(3 * 1024, b, sizeof b), "3.00 KiB");
    assert_string_equal(format_bytes(1.5 * 1024 * 1024 * 1024, b, sizeof b), "1.50 GiB");
    assert_string_equal(format_bytes(80.0 * 1024 * 1024 * 1024, b, sizeof b), "80.0 GiB");
    /* The edges: 1024 of a unit is one of the next; from 10 on, one decimal. */
    assert_string_equal(format_bytes(1024, b, sizeof b), "1.00 KiB");
    assert_string_equal(format_bytes(1023, b, sizeof b), "1023 B");
    assert_string_equal(format_bytes(10 * 1024, b, sizeof b), "10.0 KiB");
    /* Every unit, and TiB the last: a PiB is 1024 TiB. */
    assert_string_equal(format_bytes(5.0 * 1024 * 1024, b, sizeof b), "5.00 MiB");
    assert_string_equal(format_bytes(2.0 * 1024 * 1024 * 1024 * 1024, b, sizeof b), "2.00 TiB");
    assert_string_equal(format_bytes(1024.0 * 1024 * 1024 * 1024 * 1024, b, sizeof b), "1024.0 TiB");
    assert_string_equal(format_bytes(0, b, sizeof b), "0 B");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alignment_and_sizes),
        cmocka_unit_test(test_calloc_of_size_zero),
        cmocka_unit_test(test_calloc_zeroes),
        cmocka_unit_test(test_out_of_memory_is_fatal_and_clear),
        cmocka_unit_test(test_calloc_overflow_is_caught),
        cmocka_unit_test(test_sizes_that_wrap_are_caught),
        cmocka_unit_test(test_calloc_largest_n_is_out_of_memory),
        cmocka_unit_test(test_free_returns_memory),
        cmocka_unit_test(test_format_bytes),
    };
    return cmocka_run_group_tests_name("memory", tests, NULL, NULL);
}
