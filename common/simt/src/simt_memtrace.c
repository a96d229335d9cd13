/*
 * SIMT emulator: memory-access tracing (see include/simt_memtrace.h).
 *
 * simtcc --memtrace compiles a .cu file with gcc's thread-sanitizer
 * instrumentation: every load and store becomes a call of
 * __tsan_readN(addr) or __tsan_writeN(addr), every atomic one of
 * __tsan_atomicN_op(addr, ...), and this file supplies those functions (no
 * sanitizer runtime is linked). Not the address sanitizer's calls: gcc
 * leaves out the check of a store to an address the same block of code has
 * just loaded, so `C[i] = alpha * acc + beta * C[i]` and `C[i] += x` would
 * record no store. While a
 * launch is traced, each call made by an emulated thread is kept if its
 * address is global memory (a live cudaMalloc allocation) or the block's
 * shared memory, with the call's return address, which names the load or
 * store in the code. When the block ends, each warp's records are sorted by
 * (code site, n-th execution by the thread, address): a run of equal
 * (site, n) is one warp request, and its sectors or bank passes are counted.
 *
 * The sanitizer flavours of libsimt get stubs only: TSan's runtime defines
 * the same functions, and simtcc does not instrument under a sanitizer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif
#include <elf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_runtime_api.h"
#include "simt_abi.h"
#include "simt_internal.h"
#include "simt_memtrace.h"

/* Used by the runtime's error messages too, so built in every flavour. */
void simt_source_line(uintptr_t site, char *out, size_t n)
{
    Dl_info info;
    out[0] = '\0';
    if (!dladdr((void *)site, &info) || !info.dli_fname || !info.dli_fbase) {
        snprintf(out, n, "%#lx", (unsigned long)site);
        return;
    }
    /* A position-independent object (ET_DYN) is looked up by offset, a
     * fixed-address executable by address. */
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)info.dli_fbase;
    uintptr_t at = site - 1 - (eh->e_type == ET_DYN ? (uintptr_t)info.dli_fbase : 0);
    const char *base = strrchr(info.dli_fname, '/');
    snprintf(out, n, "%.100s+%#lx", base ? base + 1 : info.dli_fname, (unsigned long)at);
    if (strchr(info.dli_fname, '\'') || strlen(info.dli_fname) > 3000) return;
    /* With -i addr2line lists the call's own line first, then the lines
     * that inlined it; the first in a .cu file is the kernel's, not that of
     * a course header's helper (ldmatrix, cp.async), and without one the
     * call's own line is kept. */
    char cmd[3200], line[1024];
    snprintf(cmd, sizeof(cmd), "addr2line -i -e '%s' %#lx 2>/dev/null", info.dli_fname, (unsigned long)at);
    FILE *p = popen(cmd, "r");
    if (!p) return;
    int have = 0;
    while (fgets(line, sizeof(line), p)) {
        if (line[0] == '?') continue;
        line[strcspn(line, " \n")] = '\0';
        const char *file = strrchr(line, '/');
        file = file ? file + 1 : line;
        const char *colon = strrchr(file, ':');
        size_t flen = colon ? (size_t)(colon - file) : strlen(file);
        int in_cu = flen > 3 && memcmp(file + flen - 3, ".cu", 3) == 0;
        if (have && !in_cu) continue;
        snprintf(out, n, "%s", file);
        have = 1;
        if (in_cu) break;
    }
    pclose(p);
}

/* --- guard zones ------------------------------------------------------------
 * Set from the host between launches, read by the hooks during them (a
 * launch's start orders the two). guard_lo .. guard_hi spans them all, so
 * an access elsewhere costs two comparisons. The sanitizer flavours have no
 * hooks: under AddressSanitizer a zone is poisoned instead, so ASan reports
 * the access with its line; under ThreadSanitizer it is only listed. */
enum { GUARDS_MAX = 16 };
static struct {
    uintptr_t lo, hi;
    const char *what;
    int before;
} guards[GUARDS_MAX];
static int nguards;
static uintptr_t guard_lo = UINTPTR_MAX, guard_hi;

static void guard_span(void)
{
    guard_lo = UINTPTR_MAX, guard_hi = 0;
    for (int i = 0; i < nguards; i++) {
        if (guards[i].lo < guard_lo) guard_lo = guards[i].lo;
        if (guards[i].hi > guard_hi) guard_hi = guards[i].hi;
    }
}

void simt_memtrace_guard(const void *p, size_t bytes, const char *what, int before)
{
    if (!bytes) return;
    if (nguards == GUARDS_MAX) {
        fprintf(stderr, "simt: more than %d guard zones at once (simt_memtrace_guard); %s's is not watched\n",
                GUARDS_MAX, what ? what : "a buffer");
        return;
    }
    guards[nguards].lo = (uintptr_t)p;
    guards[nguards].hi = (uintptr_t)p + bytes;
    guards[nguards].what = what ? what : "a buffer";
    guards[nguards].before = before;
    nguards++;
    guard_span();
#ifdef __SANITIZE_ADDRESS__
    __asan_poison_memory_region(p, bytes);
#endif
}

void simt_memtrace_unguard(const void *p, size_t bytes)
{
    const uintptr_t lo = (uintptr_t)p, hi = lo + bytes;
    int k = 0;
    for (int i = 0; i < nguards; i++) {
        if (!(guards[i].lo >= lo && guards[i].hi <= hi)) {
            guards[k++] = guards[i];
            continue;
        }
#ifdef __SANITIZE_ADDRESS__
        __asan_unpoison_memory_region((const void *)guards[i].lo, guards[i].hi - guards[i].lo);
#endif
    }
    nguards = k;
    guard_span();
}

/* A mangled C++ name's function name: "_Z4rowsPKfPfi" is rows,
 * "_ZN2ns4gemmE..." ns::gemm, and a template's arguments are shown as <...>
 * (enough to tell kernels apart; no C++ runtime is needed). */
static void demangle_name(const char *m, char *out, size_t n)
{
    snprintf(out, n, "%s", m);
    if (strncmp(m, "_Z", 2) != 0) return;
    const char *p = m + 2;
    int nested = *p == 'N';
    if (nested) p++;
    size_t k = 0;
    char buf[256];
    while (*p >= '1' && *p <= '9') {
        char *end;
        unsigned long len = strtoul(p, &end, 10);
        if (strlen(end) < len || k + len + 3 >= sizeof(buf)) return;
        if (k) buf[k++] = ':', buf[k++] = ':';
        memcpy(buf + k, end, len);
        k += len;
        p = end + len;
        if (!nested) break;
    }
    if (k == 0) return;
    if (*p == 'I' && k + 5 < sizeof(buf)) memcpy(buf + k, "<...>", 5), k += 5;
    buf[k] = '\0';
    snprintf(out, n, "%s", buf);
}

/* The kernel's name, when the executable exports its symbols (simtcc links
 * with -rdynamic, and so do the labs' emulator builds). */
void simt_kernel_name(const void *func, char *out, size_t n)
{
    Dl_info info;
    if (func && dladdr(func, &info) && info.dli_sname && info.dli_saddr == func)
        demangle_name(info.dli_sname, out, n);
    else
        snprintf(out, n, "kernel at %p", func);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)

int simt_memtrace_available(void) { return 0; }
void simt_memtrace_start(void) {}
void simt_memtrace_stop(simt_memtrace_stats *out)
{
    if (out) memset(out, 0, sizeof(*out));
}
void simt_memtrace_launch_begin(const void *func) { (void)func; }
void simt_memtrace_launch_end(dim3 grid, dim3 block) { (void)grid, (void)block; }
void simt_memtrace_block_begin(unsigned int nthreads) { (void)nthreads; }
void simt_memtrace_block_end(int aborted) { (void)aborted; }
void simt_memtrace_worker_end(void) {}
void simt_memtrace_shared_var(const void *var, size_t bytes) { (void)var, (void)bytes; }
void simt_memtrace_note(const void *addr, size_t size, int store, unsigned int phase)
{
    (void)addr, (void)size, (void)store, (void)phase;
}

#else

/* A noted access's phase goes into the top byte of its site (no user-space
 * code address reaches it), so each phase is a request of its own and the
 * report still finds the line. */
#define SITE_PHASE_SHIFT 56
#define SITE_CODE(s) ((s) & (((uintptr_t)1 << SITE_PHASE_SHIFT) - 1))

/* A kernel's access that touches a guard zone stops its launch. */
static void guard_check(uintptr_t a, size_t size, int store, uintptr_t site)
{
    if (!simt_cur_thread) return;
    for (int i = 0; i < nguards; i++) {
        if (a >= guards[i].hi || a + size <= guards[i].lo) continue;
        char at[160];
        simt_source_line(SITE_CODE(site), at, sizeof at);
        if (guards[i].before)
            simt_fail("a %s of %zu bytes at %p, %llu bytes before the start of %s, at %s: the checks leave a "
                      "guard zone there, and no kernel should touch it; on a GPU it would read or write whatever "
                      "lies there. An index below 0, or a tile's offset subtracted?",
                      store ? "store" : "load", size, (void *)a, (unsigned long long)(guards[i].hi - a),
                      guards[i].what, at);
        /* An access that starts inside the buffer and runs on past its end is
         * a vector access at the tail: say so, since its index test passed. */
        char past[96] = "just past";
        if (a > guards[i].lo)
            snprintf(past, sizeof past, "%llu bytes past", (unsigned long long)(a - guards[i].lo));
        else if (a < guards[i].lo)
            snprintf(past, sizeof past, "whose last %llu bytes run past",
                     (unsigned long long)(a + size - guards[i].lo));
        simt_fail("a %s of %zu bytes at %p, %s the end of %s, at %s: the checks leave a guard zone "
                  "there, and no kernel should touch it; on a GPU it would read or write whatever lies there, "
                  "unseen unless the value reaches the output. %s",
                  store ? "store" : "load", size, (void *)a, past, guards[i].what, at,
                  a < guards[i].lo
                      ? "Test that the whole vector fits (i + 4 <= n for a float4) before a wide access, and "
                        "take the last elements one at a time"
                  : store ? "Test the index against the buffer's size (i < n; for C: row < M and col < N) "
                            "before the store, and skip the store outside"
                          : "Test the index against the buffer's size (i < n; for a matrix: row < M, col < N, "
                            "k < K) before the load, not after it, and where a tile still needs a value there, "
                            "use 0");
    }
}

enum { KIND_GLD, KIND_GST, KIND_SLD, KIND_SST };
/* Code sites a thread tells apart for counting executions; a kernel with
 * more (unrolled loops) counts the rest together, as one site. */
enum { SITES_MAX = 256, SHARED_VARS_MAX = 64 };

typedef struct {
    uintptr_t site, addr;
    uint32_t n;     /* this thread's execution count of the site before this one */
    uint16_t size;
    uint8_t kind, lane;
} rec;

typedef struct {
    rec *r;
    unsigned int count, cap;
    unsigned int nsites;
    uintptr_t site[SITES_MAX];
    uint32_t runs[SITES_MAX];
} thread_log;

/* One load or store in the code, and what its requests cost: the report
 * lists the sites that cost most above the fewest. */
typedef struct {
    uintptr_t site;
    int kind;
    unsigned long long requests, cost, best;
} site_count;

enum { SITE_TABLE_MAX = 512 };

typedef struct {
    site_count s[SITE_TABLE_MAX];
    unsigned int n;
} site_table;

/* The site's entry (one is added if there is room), or NULL. */
static site_count *site_entry(site_table *t, uintptr_t site, int kind)
{
    for (unsigned int i = 0; i < t->n; i++)
        if (t->s[i].site == site && t->s[i].kind == kind) return &t->s[i];
    if (t->n == SITE_TABLE_MAX) return NULL;
    site_count *e = &t->s[t->n++];
    memset(e, 0, sizeof(*e));
    e->site = site;
    e->kind = kind;
    return e;
}

typedef struct {
    int active;
    site_table sites; /* this block's */
    unsigned int nthreads;
    thread_log *log; /* [nthreads], grown as needed */
    unsigned int nlog;
    rec *tmp; /* one warp's records, for sorting */
    size_t tmp_cap;
    uintptr_t shared_lo[SHARED_VARS_MAX], shared_hi[SHARED_VARS_MAX];
    unsigned int nshared;
    unsigned long long dropped;
} worker_trace;

static __thread worker_trace *wt;

static atomic_int api_on;      /* between simt_memtrace_start and _stop */
static atomic_int launch_on;   /* the current launch is traced */
static pthread_mutex_t acc_lock = PTHREAD_MUTEX_INITIALIZER;
static simt_memtrace_stats launch_acc, api_acc;
static site_table launch_sites;
static const void *launch_func;

static int env_on(void)
{
    const char *e = getenv("SIMT_MEMTRACE");
    return e && *e && strcmp(e, "0") != 0;
}

int simt_memtrace_available(void) { return 1; }

void simt_memtrace_start(void)
{
    pthread_mutex_lock(&acc_lock);
    memset(&api_acc, 0, sizeof(api_acc));
    pthread_mutex_unlock(&acc_lock);
    atomic_store(&api_on, 1);
}

void simt_memtrace_stop(simt_memtrace_stats *out)
{
    atomic_store(&api_on, 0);
    pthread_mutex_lock(&acc_lock);
    if (out) *out = api_acc;
    pthread_mutex_unlock(&acc_lock);
}

/* --- recording ------------------------------------------------------------ */

static int in_shared(const worker_trace *w, uintptr_t a)
{
    uintptr_t dyn = (uintptr_t)simt_cur_block.dyn_shared;
    if (dyn && a >= dyn && a < dyn + simt_cur_block.dyn_shared_size) return 1;
    for (unsigned int i = 0; i < w->nshared; i++)
        if (a >= w->shared_lo[i] && a < w->shared_hi[i]) return 1;
    return 0;
}

static void record(uintptr_t a, size_t size, int store, uintptr_t site)
{
    if (a < guard_hi && a + size > guard_lo) guard_check(a, size, store, site);
    /* A read of bytes a cp.async has not landed yet: named here with the
     * read's line and the copy's, where otherwise it reads NaN bytes. */
    if (!store) simt_check_load_landed(site, (const void *)a, size);
    if (!atomic_load_explicit(&launch_on, memory_order_relaxed)) return;
    const simt_thread_info *t = simt_cur_thread;
    worker_trace *w = wt;
    if (!t || !w || !w->active || size == 0) return;
    int kind;
    if (in_shared(w, a)) kind = store ? KIND_SST : KIND_SLD;
    else if (simt_in_allocation((const void *)a)) kind = store ? KIND_GST : KIND_GLD;
    else return; /* the thread's own stack, the emulator's bookkeeping */
    thread_log *L = &w->log[t->linear];
    if (L->count == SIMT_MEMTRACE_PER_THREAD) {
        w->dropped++;
        return;
    }
    if (L->count == L->cap) {
        unsigned int cap = L->cap ? L->cap * 2 : 64;
        if (cap > SIMT_MEMTRACE_PER_THREAD) cap = SIMT_MEMTRACE_PER_THREAD;
        rec *r = realloc(L->r, cap * sizeof(rec));
        if (!r) {
            w->dropped++;
            return;
        }
        L->r = r;
        L->cap = cap;
    }
    /* The n-th run of this site by this thread: the last slot collects
     * every site past SITES_MAX. */
    unsigned int s = 0;
    while (s < L->nsites && L->site[s] != site) s++;
    if (s == L->nsites) {
        if (L->nsites < SITES_MAX) L->site[L->nsites++] = site;
        else s = SITES_MAX - 1;
    }
    rec *r = &L->r[L->count++];
    r->site = site;
    r->addr = a;
    r->n = L->runs[s]++;
    r->size = (uint16_t)(size > 0xffff ? 0xffff : size);
    r->kind = (uint8_t)kind;
    r->lane = (uint8_t)t->lane;
}

/* The calls gcc's instrumentation makes (-fsanitize=thread, with
 * tsan-instrument-func-entry-exit=0): one per load or store, aligned or not,
 * and one per range (an aggregate copy). */
#define SIMT_MT_RA ((uintptr_t)__builtin_return_address(0))
#define SIMT_MT_SIZED(n)                                                                          \
    void __tsan_read##n(void *a);                                                                 \
    void __tsan_write##n(void *a);                                                                \
    void __tsan_unaligned_read##n(void *a);                                                       \
    void __tsan_unaligned_write##n(void *a);                                                      \
    void __tsan_read##n(void *a) { record((uintptr_t)a, n, 0, SIMT_MT_RA); }                       \
    void __tsan_write##n(void *a) { record((uintptr_t)a, n, 1, SIMT_MT_RA); }                      \
    void __tsan_unaligned_read##n(void *a) { record((uintptr_t)a, n, 0, SIMT_MT_RA); }             \
    void __tsan_unaligned_write##n(void *a) { record((uintptr_t)a, n, 1, SIMT_MT_RA); }
SIMT_MT_SIZED(1)
SIMT_MT_SIZED(2)
SIMT_MT_SIZED(4)
SIMT_MT_SIZED(8)
SIMT_MT_SIZED(16)
void __tsan_read_range(void *a, unsigned long n);
void __tsan_write_range(void *a, unsigned long n);
void __tsan_init(void);
void __tsan_read_range(void *a, unsigned long n) { record((uintptr_t)a, n, 0, SIMT_MT_RA); }
void __tsan_write_range(void *a, unsigned long n) { record((uintptr_t)a, n, 1, SIMT_MT_RA); }
void __tsan_init(void) {} /* each instrumented file's constructor calls it */

/* Atomics (the emulator's atomicAdd and friends are gcc __atomic builtins,
 * which the instrumentation turns into these calls): done, sequentially
 * consistent whatever order was asked, and not counted (a GPU serves them
 * in its L2, not as the sectors and wavefronts counted here). */
#define SIMT_MT_ATOMIC(n, T)                                                                      \
    T __tsan_atomic##n##_load(const volatile T *a, int mo);                                       \
    void __tsan_atomic##n##_store(volatile T *a, T v, int mo);                                    \
    T __tsan_atomic##n##_exchange(volatile T *a, T v, int mo);                                    \
    T __tsan_atomic##n##_fetch_add(volatile T *a, T v, int mo);                                   \
    T __tsan_atomic##n##_fetch_sub(volatile T *a, T v, int mo);                                   \
    T __tsan_atomic##n##_fetch_and(volatile T *a, T v, int mo);                                   \
    T __tsan_atomic##n##_fetch_or(volatile T *a, T v, int mo);                                    \
    T __tsan_atomic##n##_fetch_xor(volatile T *a, T v, int mo);                                   \
    T __tsan_atomic##n##_fetch_nand(volatile T *a, T v, int mo);                                  \
    int __tsan_atomic##n##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo);     \
    int __tsan_atomic##n##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo);       \
    T __tsan_atomic##n##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo);           \
    T __tsan_atomic##n##_load(const volatile T *a, int mo)                                        \
    {                                                                                             \
        (void)mo;                                                                                 \
        return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                              \
    }                                                                                             \
    void __tsan_atomic##n##_store(volatile T *a, T v, int mo)                                     \
    {                                                                                             \
        (void)mo;                                                                                 \
        __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                 \
    }                                                                                             \
    SIMT_MT_RMW(n, T, exchange, __atomic_exchange_n)                                              \
    SIMT_MT_RMW(n, T, fetch_add, __atomic_fetch_add)                                              \
    SIMT_MT_RMW(n, T, fetch_sub, __atomic_fetch_sub)                                              \
    SIMT_MT_RMW(n, T, fetch_and, __atomic_fetch_and)                                              \
    SIMT_MT_RMW(n, T, fetch_or, __atomic_fetch_or)                                                \
    SIMT_MT_RMW(n, T, fetch_xor, __atomic_fetch_xor)                                              \
    SIMT_MT_RMW(n, T, fetch_nand, __atomic_fetch_nand)                                            \
    int __tsan_atomic##n##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo)      \
    {                                                                                             \
        (void)mo, (void)fmo;                                                                      \
        return __atomic_compare_exchange_n(a, c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);        \
    }                                                                                             \
    int __tsan_atomic##n##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo)        \
    {                                                                                             \
        (void)mo, (void)fmo;                                                                      \
        return __atomic_compare_exchange_n(a, c, v, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);        \
    }                                                                                             \
    T __tsan_atomic##n##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo)            \
    {                                                                                             \
        (void)mo, (void)fmo;                                                                      \
        __atomic_compare_exchange_n(a, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);              \
        return c;                                                                                 \
    }
#define SIMT_MT_RMW(n, T, op, builtin)                                                            \
    T __tsan_atomic##n##_##op(volatile T *a, T v, int mo)                                         \
    {                                                                                             \
        (void)mo;                                                                                 \
        return builtin(a, v, __ATOMIC_SEQ_CST);                                                   \
    }
SIMT_MT_ATOMIC(8, uint8_t)
SIMT_MT_ATOMIC(16, uint16_t)
SIMT_MT_ATOMIC(32, uint32_t)
SIMT_MT_ATOMIC(64, uint64_t)
void __tsan_atomic_thread_fence(int mo);
void __tsan_atomic_signal_fence(int mo);
void __tsan_atomic_thread_fence(int mo) { (void)mo, __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int mo) { (void)mo, __atomic_signal_fence(__ATOMIC_SEQ_CST); }


void simt_memtrace_note(const void *addr, size_t size, int store, unsigned int phase)
{
    record((uintptr_t)addr, size, store,
           (uintptr_t)__builtin_return_address(0) | (uintptr_t)(phase & 0xff) << SITE_PHASE_SHIFT);
}

/* --- counting ------------------------------------------------------------- */

static int rec_order(const void *pa, const void *pb)
{
    const rec *a = pa, *b = pb;
    if (a->site != b->site) return a->site < b->site ? -1 : 1;
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
    return 0;
}

/* Distinct bytes of records r[0..n), sorted by address. */
static unsigned long long distinct_bytes(const rec *r, size_t n)
{
    unsigned long long bytes = 0;
    uintptr_t covered = 0; /* everything below is counted */
    for (size_t i = 0; i < n; i++) {
        uintptr_t lo = r[i].addr, hi = r[i].addr + r[i].size;
        if (lo < covered) lo = covered;
        if (hi > lo) bytes += hi - lo, covered = hi;
    }
    return bytes;
}

/* Global memory: the distinct 32-byte sectors a request touches. */
static unsigned long long sectors(const rec *r, size_t n)
{
    unsigned long long count = 0;
    uintptr_t next = 0; /* first sector not yet counted */
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        uintptr_t s0 = r[i].addr >> 5, s1 = (r[i].addr + r[i].size - 1) >> 5;
        if (any && s0 < next) s0 = next;
        if (s1 >= s0) count += s1 - s0 + 1, next = s1 + 1;
        any = 1;
    }
    return count;
}

static int word_order(const void *pa, const void *pb)
{
    uintptr_t a = *(const uintptr_t *)pa, b = *(const uintptr_t *)pb;
    return a < b ? -1 : a > b;
}

/* Shared memory: a request takes as many passes as the most distinct 4-byte
 * words one of the 32 banks must deliver (word w lives in bank w % 32;
 * threads that read the same word share one delivery). An access wider than
 * 4 bytes covers several banks, so a warp's 8- or 16-byte accesses need at
 * least 2 or 4 passes however they are laid out. */
static unsigned long long wavefronts(const rec *r, size_t n)
{
    enum { WORDS_MAX = 32 * 4 };
    uintptr_t words[WORDS_MAX];
    size_t nw = 0;
    for (size_t i = 0; i < n; i++)
        for (uintptr_t wd = r[i].addr >> 2; wd <= (r[i].addr + r[i].size - 1) >> 2 && nw < WORDS_MAX; wd++)
            words[nw++] = wd;
    qsort(words, nw, sizeof(words[0]), word_order);
    unsigned int per_bank[32] = {0}, most = 1;
    for (size_t i = 0; i < nw; i++) {
        if (i > 0 && words[i] == words[i - 1]) continue; /* one word, delivered once for all */
        unsigned int b = (unsigned int)(words[i] & 31);
        if (++per_bank[b] > most) most = per_bank[b];
    }
    return most;
}

static simt_memtrace_counts *counts_of(simt_memtrace_stats *s, int kind)
{
    switch (kind) {
    case KIND_GLD: return &s->global_load;
    case KIND_GST: return &s->global_store;
    case KIND_SLD: return &s->shared_load;
    default: return &s->shared_store;
    }
}

static void count_request(simt_memtrace_stats *s, site_table *sites, const rec *r, size_t n)
{
    simt_memtrace_counts *c = counts_of(s, r[0].kind);
    unsigned long long bytes = distinct_bytes(r, n), cost, best;
    if (r[0].kind == KIND_GLD || r[0].kind == KIND_GST) {
        cost = sectors(r, n);
        best = (bytes + 31) / 32;
    } else {
        cost = wavefronts(r, n);
        best = bytes > 128 ? (bytes + 127) / 128 : 1;
    }
    c->requests++;
    c->accesses += n;
    for (size_t i = 0; i < n; i++) c->bytes += r[i].size;
    c->cost += cost;
    c->best += best;
    site_count *e = site_entry(sites, r[0].site, r[0].kind);
    if (e) e->requests++, e->cost += cost, e->best += best;
}

static void count_warp(worker_trace *w, simt_memtrace_stats *s, unsigned int first, unsigned int last)
{
    size_t n = 0;
    for (unsigned int t = first; t < last; t++) n += w->log[t].count;
    if (n == 0) return;
    if (n > w->tmp_cap) {
        rec *tmp = realloc(w->tmp, n * sizeof(rec));
        if (!tmp) {
            w->dropped += n;
            return;
        }
        w->tmp = tmp;
        w->tmp_cap = n;
    }
    size_t k = 0;
    for (unsigned int t = first; t < last; t++) {
        memcpy(w->tmp + k, w->log[t].r, w->log[t].count * sizeof(rec));
        k += w->log[t].count;
    }
    qsort(w->tmp, n, sizeof(rec), rec_order);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && w->tmp[j].site == w->tmp[i].site && w->tmp[j].n == w->tmp[i].n &&
               w->tmp[j].kind == w->tmp[i].kind)
            j++;
        count_request(s, &w->sites, w->tmp + i, j - i);
        i = j;
    }
}

/* --- hooks the runtime calls ---------------------------------------------- */

void simt_memtrace_launch_begin(const void *func)
{
    int on = atomic_load(&api_on) || env_on();
    if (on) {
        pthread_mutex_lock(&acc_lock);
        memset(&launch_acc, 0, sizeof(launch_acc));
        launch_sites.n = 0;
        launch_func = func;
        pthread_mutex_unlock(&acc_lock);
    }
    atomic_store(&launch_on, on);
}

void simt_memtrace_block_begin(unsigned int nthreads)
{
    if (!atomic_load(&launch_on)) {
        if (wt) wt->active = 0;
        return;
    }
    if (!wt) {
        wt = calloc(1, sizeof(*wt));
        if (!wt) return;
    }
    worker_trace *w = wt;
    if (nthreads > w->nlog) {
        thread_log *log = realloc(w->log, nthreads * sizeof(thread_log));
        if (!log) {
            w->active = 0;
            return;
        }
        memset(log + w->nlog, 0, (nthreads - w->nlog) * sizeof(thread_log));
        w->log = log;
        w->nlog = nthreads;
    }
    for (unsigned int t = 0; t < nthreads; t++) {
        /* Only the slots the last block used (the overflow slot is one of
         * them once the table is full), not the whole table per thread. */
        memset(w->log[t].runs, 0, w->log[t].nsites * sizeof(w->log[t].runs[0]));
        w->log[t].count = 0;
        w->log[t].nsites = 0;
    }
    w->nthreads = nthreads;
    w->nshared = 0;
    w->dropped = 0;
    w->sites.n = 0;
    w->active = 1;
}

void simt_memtrace_shared_var(const void *var, size_t bytes)
{
    worker_trace *w = wt;
    if (!w || !w->active || w->nshared == SHARED_VARS_MAX) return;
    w->shared_lo[w->nshared] = (uintptr_t)var;
    w->shared_hi[w->nshared] = (uintptr_t)var + bytes;
    w->nshared++;
}

void simt_memtrace_worker_end(void)
{
    worker_trace *w = wt;
    if (!w) return;
    for (unsigned int t = 0; t < w->nlog; t++) free(w->log[t].r);
    free(w->log);
    free(w->tmp);
    free(w);
    wt = NULL;
}

/* dst += src, count by count (not launches). */
static void stats_add(simt_memtrace_stats *dst, const simt_memtrace_stats *src)
{
    simt_memtrace_counts *d[4] = {&dst->global_load, &dst->global_store, &dst->shared_load, &dst->shared_store};
    const simt_memtrace_counts *s[4] = {&src->global_load, &src->global_store, &src->shared_load, &src->shared_store};
    for (int i = 0; i < 4; i++) {
        d[i]->requests += s[i]->requests;
        d[i]->accesses += s[i]->accesses;
        d[i]->bytes += s[i]->bytes;
        d[i]->cost += s[i]->cost;
        d[i]->best += s[i]->best;
    }
    dst->dropped += src->dropped;
}

void simt_memtrace_block_end(int aborted)
{
    worker_trace *w = wt;
    if (!w || !w->active) return;
    w->active = 0;
    if (aborted) return; /* a faulting block's counts mean nothing */
    simt_memtrace_stats s;
    memset(&s, 0, sizeof(s));
    for (unsigned int first = 0; first < w->nthreads; first += 32)
        count_warp(w, &s, first, first + 32 < w->nthreads ? first + 32 : w->nthreads);
    s.dropped = w->dropped;
    pthread_mutex_lock(&acc_lock);
    stats_add(&launch_acc, &s);
    for (unsigned int i = 0; i < w->sites.n; i++) {
        const site_count *b = &w->sites.s[i];
        site_count *e = site_entry(&launch_sites, b->site, b->kind);
        if (e) e->requests += b->requests, e->cost += b->cost, e->best += b->best;
    }
    pthread_mutex_unlock(&acc_lock);
}

static void print_counts(const char *what, const char *unit, const simt_memtrace_counts *c)
{
    if (c->requests == 0) return;
    fprintf(stderr, "  %-13s %9llu requests  %6.2f %s each  (fewest possible %.2f)  %5.1f%% efficient  %4.1f B a thread\n",
            what, c->requests, (double)c->cost / (double)c->requests, unit, (double)c->best / (double)c->requests,
            c->cost ? 100.0 * (double)c->best / (double)c->cost : 100.0,
            c->accesses ? (double)c->bytes / (double)c->accesses : 0.0);
}

static int excess_order(const void *pa, const void *pb)
{
    const site_count *a = pa, *b = pb;
    unsigned long long ea = a->cost - a->best, eb = b->cost - b->best;
    return ea < eb ? 1 : ea > eb ? -1 : 0;
}

/* Where the loads and stores of t (those that cost more than the fewest)
 * are in the source, one addr2line per site: a handful of calls, once per
 * launch, and only under SIMT_MEMTRACE. A site is the instrumentation
 * call's return address. */
static void sites_where(const site_count *t, unsigned int n, char (*where)[128])
{
    for (unsigned int i = 0; i < n; i++) simt_source_line(SITE_CODE(t[i].site), where[i], sizeof(where[i]));
}

static const char *kind_name(int kind)
{
    return kind == KIND_GLD ? "global load" : kind == KIND_GST ? "global store" : kind == KIND_SLD ? "shared load"
                                                                                                 : "shared store";
}

/* The source lines whose loads or stores cost most above the fewest, worst
 * first. An unrolled loop puts several sites on one line; they are added
 * up. */
static void print_sites(site_table *t)
{
    enum { RESOLVED = 64, SHOWN = 6 };
    qsort(t->s, t->n, sizeof(site_count), excess_order);
    unsigned int n = 0;
    while (n < t->n && n < RESOLVED && t->s[n].cost > t->s[n].best) n++;
    if (n == 0) return;
    char where[RESOLVED][128];
    sites_where(t->s, n, where);
    for (unsigned int i = 0; i < n; i++)
        for (unsigned int j = i + 1; j < n; j++)
            if (t->s[j].requests && t->s[j].kind == t->s[i].kind && strcmp(where[j], where[i]) == 0) {
                t->s[i].requests += t->s[j].requests, t->s[i].cost += t->s[j].cost, t->s[i].best += t->s[j].best;
                t->s[j].requests = t->s[j].cost = t->s[j].best = 0;
            }
    fprintf(stderr, "  where the extra sectors and passes are:\n");
    for (unsigned int shown = 0; shown < SHOWN; shown++) {
        unsigned int worst = n;
        for (unsigned int i = 0; i < n; i++)
            if (t->s[i].requests && (worst == n || t->s[i].cost - t->s[i].best > t->s[worst].cost - t->s[worst].best))
                worst = i;
        if (worst == n) break;
        site_count *e = &t->s[worst];
        fprintf(stderr, "    %-13s %-28s %9llu requests  %6.2f %s each  (fewest possible %.2f)\n",
                kind_name(e->kind), where[worst], e->requests, (double)e->cost / (double)e->requests,
                e->kind == KIND_GLD || e->kind == KIND_GST ? "sectors" : "wavefronts",
                (double)e->best / (double)e->requests);
        e->requests = 0;
    }
}

void simt_memtrace_launch_end(dim3 grid, dim3 block)
{
    if (!atomic_load(&launch_on)) return;
    atomic_store(&launch_on, 0);
    pthread_mutex_lock(&acc_lock);
    simt_memtrace_stats s = launch_acc;
    const void *func = launch_func;
    if (atomic_load(&api_on)) {
        stats_add(&api_acc, &s);
        api_acc.launches++;
    }
    pthread_mutex_unlock(&acc_lock);
    if (!env_on()) return;
    char name[256];
    simt_kernel_name(func, name, sizeof(name));
    fprintf(stderr, "simt memtrace: %s<<<(%u,%u,%u), (%u,%u,%u)>>>\n", name, grid.x, grid.y, grid.z, block.x,
            block.y, block.z);
    if (s.global_load.requests + s.global_store.requests + s.shared_load.requests + s.shared_store.requests == 0)
        fprintf(stderr, "  no loads or stores recorded (is its .cu file compiled with simtcc --memtrace?)\n");
    print_counts("global load", "sectors", &s.global_load);
    print_counts("global store", "sectors", &s.global_store);
    print_counts("shared load", "wavefronts", &s.shared_load);
    print_counts("shared store", "wavefronts", &s.shared_store);
    print_sites(&launch_sites);
    if (s.dropped)
        fprintf(stderr, "  %llu accesses not counted (past %d a thread): trace a smaller problem\n", s.dropped,
                SIMT_MEMTRACE_PER_THREAD);
}

#endif
