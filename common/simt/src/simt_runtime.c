/*
 * SIMT emulator runtime: runs a kernel's grid on the CPU.
 *
 * Each block runs on one OS thread, its threads as fibers (user-level
 * contexts with their own stacks). A fiber runs until it reaches a barrier,
 * a warp collective, or its end, and then hands over to the next thread of
 * the block in round-robin order. So the threads of a block genuinely
 * interleave, and the order is deterministic: thread 0 runs ahead of the
 * others until its first barrier, which makes a missing __syncthreads show up
 * as a wrong result every time rather than now and then.
 * Blocks are spread over OS threads (SIMT_WORKERS, default: one per core).
 *
 * Hopper's asynchronous machinery is scheduled here too: a thread waiting on
 * an mbarrier sleeps until the barrier completes a phase, TMA copies queue
 * on the block and land when a thread waits on their barrier, and wgmma
 * groups run as a collective of the warpgroup at wgmma.wait_group
 * (the copies and the arithmetic themselves are in simt_hopper.c).
 *
 * Not modelled: timing (memory coalescing and bank conflicts are counted,
 * not timed, by simt_memtrace.c), independent
 * forward progress of spinning threads (a thread that busy-waits on another
 * thread of its block without a barrier never yields and hangs).
 *
 * Sanitizers: built with -fsanitize=address the switches are announced to
 * ASan so it tracks the fiber stacks; with -fsanitize=thread each fiber is a
 * TSan fiber and barriers and warp collectives are the only happens-before
 * edges between the threads of a block, so unsynchronised shared-memory
 * accesses are reported as data races.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "cuda_runtime_api.h"
#include "simt_abi.h"
#include "simt_internal.h"

/* The sanitizer builds of libsimt compile this file without instrumentation
 * (the scheduler's own bookkeeping is not what a student wants checked, and
 * TSan would see it as races between fibers) but with these macros, so that
 * it announces every fiber switch and every barrier to the sanitizer. */
#if defined(SIMT_ASAN_FIBERS) || defined(__SANITIZE_ADDRESS__)
#define SIMT_ASAN 1
#endif
#if defined(SIMT_TSAN_FIBERS) || defined(__SANITIZE_THREAD__)
#define SIMT_TSAN 1
#endif

#ifdef SIMT_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
void __asan_loadN(uintptr_t addr, uintptr_t size);
void __asan_storeN(uintptr_t addr, uintptr_t size);
#endif
#ifdef SIMT_ASAN
/* Programs often leave cudaMalloc'd memory to the end of the process, as
 * they may on a GPU; leak reports would bury the out-of-bounds reports this
 * build is for. ASAN_OPTIONS=detect_leaks=1 turns them back on. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}
#endif
#ifdef SIMT_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
void __tsan_set_fiber_name(void *fiber, const char *name);
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
void __tsan_func_entry(void *call_pc);
void __tsan_func_exit(void);
#define TSAN_ACQUIRE(p) __tsan_acquire((void *)(p))
#define TSAN_RELEASE(p) __tsan_release((void *)(p))
#define TSAN_IGNORE_BEGIN() __tsan_ignore_thread_begin()
#define TSAN_IGNORE_END() __tsan_ignore_thread_end()
/* ThreadSanitizer builds a report's stacks from the calls that instrumented
 * code announces. This file announces none, so a race found in what a
 * kernel's call into it does (a cp.async's fill, an ldmatrix's read) showed
 * the kernel's caller but not the kernel: the student's line was missing.
 * The entry points a kernel calls announce themselves with these, so the
 * kernel's line appears under them. */
#define TSAN_ENTER() __tsan_func_entry(__builtin_return_address(0))
#define TSAN_EXIT() __tsan_func_exit()
#else
#define TSAN_ACQUIRE(p) ((void)(p))
#define TSAN_RELEASE(p) ((void)(p))
#define TSAN_IGNORE_BEGIN() ((void)0)
#define TSAN_IGNORE_END() ((void)0)
#define TSAN_ENTER() ((void)0)
#define TSAN_EXIT() ((void)0)
#endif

#if !defined(__x86_64__) || defined(SIMT_FORCE_UCONTEXT)
#include <ucontext.h>
#define SIMT_UCONTEXT 1
#endif

__thread simt_thread_info *simt_cur_thread;
__thread simt_block_info simt_cur_block;

enum { ST_READY, ST_BARRIER, ST_WARP, ST_GROUP, ST_MBAR, ST_DONE };
enum { CP_MAX = 64, MAX_THREADS = 1024, MAX_WARPS = MAX_THREADS / 32, MAX_GROUP = 128, TMA_MAX = 256 };
enum { MAX_WG = MAX_THREADS / 128, READS_MAX = 64, BAR_READS_MAX = 32 };

/* A wgmma read that some thread is not known to be ordered after: warpgroup
 * wg's wgmma number seq, reading shared bytes [lo, hi) (two operands). */
typedef struct {
    unsigned int wg, seq;
    uint32_t lo[2], hi[2];
} read_mark;

/* What arriving on one mbarrier tells the thread that later waits on it: the
 * reads still in flight at the arrivals, and how far each warpgroup's
 * wait_group had got (its reads up to done[wg] are finished). */
typedef struct {
    const uint64_t *bar;
    int n;
    read_mark r[READS_MAX];
    unsigned int done[MAX_WG];
} bar_reads;

typedef struct cp_op {
    void *dst;
    const void *src;
    size_t size, src_size;
    int group;      /* committed group number, or -1 while the group is open */
    uintptr_t site; /* the kernel's cp.async call, for a read that comes too early */
} cp_op;

typedef struct worker worker;

/* Static __shared__ variables a block can have filled at first use; more
 * are left as they are. */
enum { SHARED_SEEN_MAX = 64 };
/* Shared ranges a TMA copy of the block has targeted (simt_tma_first_fill). */
enum { TMA_FILLED_MAX = 64 };

typedef struct fiber {
    simt_thread_info info; /* first: simt_cur_thread points here */
    void *sp;
#ifdef SIMT_UCONTEXT
    ucontext_t uc;
#endif
    char *stack; /* usable stack [stack, stack + stack_size) */
    size_t stack_size;
    int state;
    unsigned int wmask;
    void *warg;
    simt_warp_fn wfn;
    const char *walign; /* ST_WARP: the .aligned instruction waited at, or NULL */
    unsigned int bar_gen, warp_gen;
    unsigned int gsize;  /* ST_GROUP: the group's size */
    simt_group_fn gfn;
    uint64_t *mbar;      /* ST_MBAR: the barrier waited on */
    int mparity;         /* ST_MBAR: the parity waited for */
    const char *mfile;   /* ST_MBAR: where the wait is, when known */
    int mline;
    uintptr_t wsite;     /* ST_BARRIER, ST_WARP, ST_GROUP: the kernel's call (its return address), for reports */
    const char *wfile;   /* ST_WARP, ST_BARRIER: the call's file and line when its caller passed them (wmma,
                          * __syncthreads), else NULL */
    int wline;
    int cp_count, cp_groups;
    cp_op cp[CP_MAX];
    simt_wgmma_queue *wgq; /* allocated on the thread's first wgmma */
    read_mark *taint;      /* reads this thread may not overwrite yet (READS_MAX) */
    int ntaint;
    unsigned int known[MAX_WG]; /* each warpgroup's reads up to known[wg] are finished, as far as it knows */
    void *tsan_fiber;
#ifdef SIMT_TSAN
    char tsan_name[80]; /* "block (x,y,z) thread (x,y,z)" in race reports */
#endif
    void *asan_fake;
    worker *w;
} fiber;

struct launch;

struct worker {
    fiber main; /* the OS thread's own context */
    fiber *fibers;
    unsigned int nfibers;
    unsigned int nthreads, live;
    unsigned int bar_count, bar_gen;
    unsigned int streak_warp, warp_streak; /* the warp run on after its collectives, and how many times in a row */
    int bar_acc, bar_result, bar_op;
    const char *bar_file;              /* where the first thread of this barrier waits (NULL: unknown) */
    int bar_line;
    unsigned int warp_gen[MAX_WARPS];
    unsigned int group_gen[MAX_WARPS]; /* by the group's first warp */
    unsigned int group_waiting;        /* threads in ST_GROUP */
    unsigned char warp_waiting[MAX_WARPS]; /* lanes of each warp in ST_WARP */
    simt_tma_op *tma;                  /* TMA copies not landed yet, in issue order */
    bar_reads *breads;                 /* per mbarrier arrived on (BAR_READS_MAX) */
    int nbreads;
    int ntma;
    /* TSan sync objects: barrier, warp and group generations (two each, so a
     * fast thread's next arrival is not mistaken for the current one), and
     * the start and end of a block (host -> threads -> host, but never
     * between the threads of one block). */
    char tsan_bar[2], tsan_warp[MAX_WARPS][2], tsan_group[MAX_WARPS][2], tsan_block_start, tsan_block_end;
    /* The TMA queue is touched by whichever thread issues or lands a copy;
     * this orders those touches for TSan (the copies' own data accesses are
     * ordered by the mbarriers, as on the GPU). */
    char tsan_tma;
    const void *main_bottom;
    size_t main_size;
    fiber *switch_from;
    int aborted;
    struct launch *L;
    const void *shared_seen[SHARED_SEEN_MAX]; /* static __shared__ variables filled in this block */
    size_t shared_seen_bytes[SHARED_SEEN_MAX];  /* and their sizes */
    const char *shared_seen_name[SHARED_SEEN_MAX];
    unsigned int nshared_seen;
    size_t shared_static; /* their bytes */
    unsigned int cp_pending; /* cp.async copies of all its threads not landed yet */
    struct pend_slot *pend;  /* and how many of them fall in each 16-byte chunk (pend_find) */
    unsigned int pend_keys;  /* chunks in the table */
    uint32_t tma_filled[TMA_FILLED_MAX][2]; /* [lo, hi) of each TMA destination so far */
    int ntma_filled;
    void *alt_stack; /* where the fault handler runs (see "Faults"), kept across launches */
    char *dyn_map;   /* dynamic shared memory's mapping (see dyn_shared_get), kept across launches */
    size_t dyn_map_body; /* its bytes before the guard page */
};

typedef struct launch {
    dim3 grid, block;
    size_t shmem;
    size_t shared_limit; /* static + dynamic: 48 KB, or 227 KB once the kernel's limit was raised */
    void (*body)(void *);
    void *ctx;
    atomic_ulong next_block;
    unsigned long nblocks;
    atomic_int abort;
} launch;

static __thread worker *cur_worker;
static __thread fiber *cur_fiber;

static size_t stack_bytes(void)
{
    static size_t cached;
    if (cached) return cached;
    size_t kb = 64;
#if defined(SIMT_ASAN) || defined(SIMT_TSAN)
    kb = 256; /* instrumented frames are several times larger */
#endif
    const char *e = getenv("SIMT_STACK_KB");
    if (e && atol(e) >= 16) kb = (size_t)atol(e);
    cached = kb * 1024;
    return cached;
}

/* Read at every call (a launch, a device query): cheap next to emulating a
 * kernel, and a test can change it between calls. */
size_t simt_shared_optin(void)
{
    size_t kb = SIMT_SHARED_OPTIN / 1024;
    const char *e = getenv("SIMT_SHARED_OPTIN_KB");
    if (e && *e) {
        char *end;
        long v = strtol(e, &end, 10);
        if (*end || v < SIMT_SHARED_DEFAULT / 1024 || v > SIMT_SHARED_OPTIN / 1024)
            fprintf(stderr, "simt: SIMT_SHARED_OPTIN_KB=%s is not a whole number from %d to %d; using %zu\n", e,
                    SIMT_SHARED_DEFAULT / 1024, SIMT_SHARED_OPTIN / 1024, kb);
        else
            kb = (size_t)v;
    }
    return kb * 1024;
}

/* --- context switch ------------------------------------------------------ */

#ifndef SIMT_UCONTEXT
/* void simt_ctx_switch(void **save_sp, void *new_sp): saves the callee-saved
 * registers, MXCSR and the x87 control word on the current stack, stores the
 * stack pointer, and resumes the context saved at new_sp. A hand-written
 * switch: swapcontext makes a system call per switch, which dominates. */
void simt_ctx_switch(void **save_sp, void *new_sp);
__asm__(".text\n"
        ".globl simt_ctx_switch\n"
        ".type simt_ctx_switch,@function\n"
        "simt_ctx_switch:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  subq $8, %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  addq $8, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size simt_ctx_switch, .-simt_ctx_switch\n");
#endif

static void fiber_entry(void);

static void fiber_prepare(fiber *f)
{
#ifdef SIMT_UCONTEXT
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = f->stack;
    f->uc.uc_stack.ss_size = f->stack_size;
    f->uc.uc_link = NULL;
    makecontext(&f->uc, fiber_entry, 0);
#else
    /* Stack image that simt_ctx_switch "returns" into fiber_entry from:
     * control words, six zeroed registers, the entry address, and a fake
     * return address so fiber_entry starts with the ABI's alignment. */
    uintptr_t top = ((uintptr_t)f->stack + f->stack_size) & ~(uintptr_t)15;
    uint64_t *p = (uint64_t *)top;
    *--p = 0;
    *--p = (uint64_t)(uintptr_t)fiber_entry;
    for (int i = 0; i < 6; i++) *--p = 0;
    *--p = 0x1f80ull | (0x037full << 32); /* default MXCSR, x87 control word */
    f->sp = p;
#endif
}

static void switch_to(fiber *from, fiber *to, int dying)
{
    worker *w = from->w;
    w->switch_from = from;
    cur_fiber = to;
    simt_cur_thread = (to == &w->main) ? NULL : &to->info;
#ifdef SIMT_ASAN
    if (to == &w->main)
        __sanitizer_start_switch_fiber(dying ? NULL : &from->asan_fake, w->main_bottom, w->main_size);
    else
        __sanitizer_start_switch_fiber(dying ? NULL : &from->asan_fake, to->stack, to->stack_size);
#else
    (void)dying;
#endif
#ifdef SIMT_TSAN
    __tsan_switch_to_fiber(to->tsan_fiber, 1 /* no synchronisation */);
#endif
#ifdef SIMT_UCONTEXT
    swapcontext(&from->uc, &to->uc);
#else
    simt_ctx_switch(&from->sp, to->sp);
#endif
#ifdef SIMT_ASAN
    {
        const void *bottom;
        size_t size;
        __sanitizer_finish_switch_fiber(from->asan_fake, &bottom, &size);
    }
#endif
    cur_fiber = from;
    simt_cur_thread = (from == &w->main) ? NULL : &from->info;
}

/* --- scheduling ---------------------------------------------------------- */

static unsigned int mbar_pending(uint64_t v);
static unsigned int mbar_expected(uint64_t v);
static int mbar_phase(uint64_t v);
static long mbar_tx(uint64_t v);

/* One line per mbarrier and parity that threads wait on in a deadlock: which
 * barrier (its shared address), where the first waiter waits, and the state
 * that keeps the phase open, so the report points at the wait or the arrival
 * that is wrong. */
static void report_mbar_waits(worker *w)
{
    int shown = 0;
    for (unsigned int i = 0; i < w->nthreads && shown < 8; i++) {
        const fiber *f = &w->fibers[i];
        if (f->state != ST_MBAR) continue;
        int first = 1;
        for (unsigned int j = 0; j < i && first; j++)
            if (w->fibers[j].state == ST_MBAR && w->fibers[j].mbar == f->mbar && w->fibers[j].mparity == f->mparity)
                first = 0;
        if (!first) continue;
        unsigned int count = 0;
        for (unsigned int j = i; j < w->nthreads; j++)
            count += w->fibers[j].state == ST_MBAR && w->fibers[j].mbar == f->mbar &&
                     w->fibers[j].mparity == f->mparity;
        const uint64_t v = *f->mbar;
        char where[256] = "";
        if (f->mfile) snprintf(where, sizeof where, " at %s:%d", f->mfile, f->mline);
        fprintf(stderr,
                "simt:   %u thread(s), the first thread %u%s, wait for parity %d of the mbarrier at %p; "
                "it is in phase %d with %u of %u arrivals still to come and %ld TMA bytes outstanding%s\n",
                count, i, where, f->mparity, (void *)f->mbar, mbar_phase(v), mbar_pending(v),
                mbar_expected(v), mbar_tx(v),
                mbar_pending(v) == mbar_expected(v) && mbar_tx(v) == 0
                    ? " (no arrival at all in this phase: is the thread that should arrive itself waiting, or "
                      "is the parity one phase ahead?)"
                    : "");
        shown++;
    }
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The line a report names for a call: the file and line its caller passed,
 * where it passed them, else the line of its return address. mma.h's wmma
 * functions pass the kernel's line because g++ may keep their helper out
 * of line (in a --memtrace build it does), and the return address is then
 * in mma.h, which is not where the fix is. */
static void call_line(uintptr_t site, const char *file, int line, char *out, size_t n)
{
    if (file)
        snprintf(out, n, "%s:%d", base_name(file), line);
    else
        simt_source_line(site, out, n);
}

/* Two waiting threads are at the same place: the same return address and
 * the same line passed. Two wmma calls of one kind share the helper's
 * return address, and only their lines tell them apart. */
static int same_wait(const fiber *a, const fiber *b)
{
    if (a->state != b->state || a->wsite != b->wsite || !a->wfile != !b->wfile) return 0;
    return !a->wfile || (a->wline == b->wline && strcmp(a->wfile, b->wfile) == 0);
}

/* Where the stuck threads of a deadlock wait: one line per place (a
 * barrier, a warp or warpgroup collective, by the kernel's line), with how
 * many threads and the first of them. Two lines that differ are usually
 * the answer: a barrier some threads reach and others skip. */
static void report_waits(worker *w)
{
    static const char *const kind[] = {[ST_BARRIER] = "__syncthreads", [ST_WARP] = "a warp collective",
                                       [ST_GROUP] = "a warpgroup collective"};
    int shown = 0;
    for (unsigned int i = 0; i < w->nthreads && shown < 6; i++) {
        const fiber *f = &w->fibers[i];
        if (f->state != ST_BARRIER && f->state != ST_WARP && f->state != ST_GROUP) continue;
        int first = 1;
        for (unsigned int j = 0; j < i && first; j++)
            first = !same_wait(&w->fibers[j], f);
        if (!first) continue;
        unsigned int count = 0;
        for (unsigned int j = i; j < w->nthreads; j++)
            count += same_wait(&w->fibers[j], f);
        char line[160] = "an unknown line";
        if (f->wsite || f->wfile) call_line(f->wsite, f->wfile, f->wline, line, sizeof line);
        fprintf(stderr, "simt:   %u thread(s), the first thread %u, wait at %s at %s\n", count, i, kind[f->state],
                line);
        shown++;
    }
}

static void report_deadlock(worker *w)
{
    unsigned int nbar = 0, nwarp = 0, ngroup = 0, nmbar = 0;
    for (unsigned int i = 0; i < w->nthreads; i++) {
        nbar += w->fibers[i].state == ST_BARRIER;
        nwarp += w->fibers[i].state == ST_WARP;
        ngroup += w->fibers[i].state == ST_GROUP;
        nmbar += w->fibers[i].state == ST_MBAR;
    }
    fprintf(stderr,
            "simt: deadlock in block (%u,%u,%u): %u thread(s) wait at __syncthreads, %u at a warp "
            "collective, and no thread can proceed (a barrier in divergent code, or a *_sync mask "
            "naming lanes that never arrive)\n",
            simt_cur_block.block_idx.x, simt_cur_block.block_idx.y, simt_cur_block.block_idx.z, nbar, nwarp);
    if (ngroup || nmbar)
        fprintf(stderr,
                "simt: ... and %u at a warpgroup collective (wgmma.wait_group that not all 128 threads reach), "
                "%u on an mbarrier whose phase never completes (fewer arrivals or TMA bytes than it "
                "expects, or the wrong parity)\n",
                ngroup, nmbar);
    report_mbar_waits(w);
    report_waits(w);
    simt_set_fault(cudaErrorLaunchFailure);
    w->aborted = 1;
}

/* Hand the OS thread to the next ready thread of the block after self. */
static void schedule_next(fiber *self, int dying)
{
    worker *w = self->w;
    unsigned int n = w->nthreads;
    unsigned int i = self->info.linear;
    for (unsigned int k = 1; k <= n; k++) {
        if (++i == n) i = 0; /* (me + k) % n without a division per step */
        fiber *f = &w->fibers[i];
        if (f->state != ST_READY) continue;
        if (f == self) return;
        switch_to(self, f, dying);
        return;
    }
    if (w->live != 0) report_deadlock(w);
    switch_to(self, &w->main, 1);
}

/* Hand the OS thread to the first ready thread at or after index start
 * (wrapping), or keep it if that is self. After a warp collective completes
 * the scheduler goes back to the warp's lane 0, so the warp runs on to its
 * next barrier before the other warps continue: a legal order on a GPU, and
 * the one that shows a warp overwriting shared memory other warps have yet
 * to read (warps in lockstep, one collective each in turn, would hide it). */
enum { WARP_STREAK_MAX = 4096 }; /* collectives a warp runs on through before the others get a turn */

static void schedule_from(fiber *self, unsigned int start)
{
    worker *w = self->w;
    unsigned int n = w->nthreads;
    for (unsigned int k = 0, i = start % n; k < n; k++, i = (i + 1 == n) ? 0 : i + 1) {
        fiber *f = &w->fibers[i];
        if (f->state != ST_READY) continue;
        if (f == self) return;
        switch_to(self, f, 0);
        return;
    }
    schedule_next(self, 0);
}

static void handoff_syncthreads(worker *w);

static void barrier_release(worker *w)
{
    handoff_syncthreads(w);
    w->bar_result = w->bar_acc;
    w->bar_count = 0;
    w->bar_acc = (w->bar_op == 2) ? 1 : 0;
    w->bar_gen++;
    w->warp_streak = 0;
    for (unsigned int i = 0; i < w->nthreads; i++)
        if (w->fibers[i].state == ST_BARRIER) w->fibers[i].state = ST_READY;
}

int simt_syncthreads_at(int pred, int op, const char *file, int line)
{
    fiber *self = cur_fiber;
    if (!simt_cur_thread || !self) return pred; /* host code: nothing to wait for */
    worker *w = self->w;
    if (w->bar_count == 0) {
        w->bar_op = op;
        w->bar_acc = (op == 2) ? 1 : 0;
        w->bar_file = file;
        w->bar_line = line;
    } else if (file && w->bar_file && (line != w->bar_line || strcmp(file, w->bar_file) != 0)) {
        /* PTX ISA, barrier: bar.sync (what __syncthreads is) is
         * barrier.sync.aligned, "all threads in CTA will execute the same
         * barrier instruction. In conditionally executed code, an aligned
         * barrier ... should only be used if it is known that all threads in
         * CTA evaluate the condition identically, otherwise behavior is
         * undefined." Here they would meet and go on; on a GPU they may hang
         * or pass each other. */
        simt_fail("__syncthreads at %s:%d while other threads of the block wait at the one at %s:%d: every thread "
                  "must reach the same barrier (is one inside an if or a loop that not all threads take the same "
                  "way? move it out, and keep the condition around the work only)",
                  base_name(file), line, base_name(w->bar_file), w->bar_line);
    }
    if (op == 1) w->bar_acc += pred != 0;
    if (op == 2) w->bar_acc = w->bar_acc && pred;
    if (op == 3) w->bar_acc = w->bar_acc || pred;
    unsigned int gen = w->bar_gen;
    self->state = ST_BARRIER;
    self->wsite = (uintptr_t)__builtin_return_address(0);
    self->wfile = file; /* the barrier's own line, as its mismatch message names it */
    self->wline = line;
    TSAN_RELEASE(&w->tsan_bar[gen & 1]);
    if (++w->bar_count == w->live) barrier_release(w);
    schedule_next(self, 0);
    TSAN_ACQUIRE(&w->tsan_bar[gen & 1]);
    return w->bar_result;
}

int simt_syncthreads(int pred, int op) { return simt_syncthreads_at(pred, op, NULL, 0); }

/* The thread a warp-wide failure names: the lane at fault, set just before
 * simt_fail, instead of whichever lane arrived last and found the fault. */
static __thread const simt_thread_info *report_as;

static unsigned int warp_lanes(worker *w, unsigned int warp)
{
    unsigned int base = warp * 32, n = w->nthreads - base;
    return n >= 32 ? 0xffffffffu : ((1u << n) - 1u);
}

/* Every lane that has arrived must be at the same operation: CUDA asks the
 * lanes named in a *_sync mask to execute the same intrinsic, and PTX's
 * .aligned instructions (mma.sync, ldmatrix, wmma) need all 32 lanes of the
 * warp at the same one, none exited. Anything else is undefined on a GPU,
 * where it gives garbage or hangs, so it stops the launch here. */
static void warp_check_same_op(worker *w, unsigned int warp, unsigned int lanes, unsigned int present)
{
    const fiber *first = NULL, *af = NULL;
    const char *aligned = NULL;
    char at1[160] = "?", at2[160] = "?";
    for (unsigned int l = 0; l < 32; l++) {
        if (!(present >> l & 1)) continue;
        const fiber *f = &w->fibers[warp * 32 + l];
        if (f->walign && !af) aligned = f->walign, af = f;
        if (!first) {
            first = f;
            continue;
        }
        if (f->wfn != first->wfn || (f->walign != first->walign &&
                                     (!f->walign || !first->walign || strcmp(f->walign, first->walign)))) {
            call_line(first->wsite, first->wfile, first->wline, at1, sizeof at1);
            call_line(f->wsite, f->wfile, f->wline, at2, sizeof at2);
            report_as = &f->info;
            simt_fail("warp %u: lanes %u and %u meet at different warp-wide operations (%s at %s and %s at %s) "
                      "with the same mask; every lane must reach the same one (divergent code around a *_sync "
                      "call, mma or ldmatrix?)",
                      warp, first->info.lane, l, first->walign ? first->walign : "a *_sync intrinsic", at1,
                      f->walign ? f->walign : first->walign ? "a *_sync intrinsic" : "another one", at2);
        }
    }
    if (!aligned || (lanes == 0xffffffffu && present == lanes)) return;
    /* Only now, on the way to a failure: finding a line starts a process. */
    call_line(af->wsite, af->wfile, af->wline, at1, sizeof at1);
    report_as = &af->info;
    if (lanes != 0xffffffffu)
        simt_fail("%s at %s in warp %u, which has only %d threads: it is a warp-wide instruction that needs all 32 "
                  "lanes (make the block's thread count a multiple of 32)",
                  aligned, at1, warp, __builtin_popcount(lanes));
    if (present != lanes) {
        unsigned int gone = lanes & ~present;
        simt_fail("%s at %s in warp %u reached by %d of its 32 lanes: lane %d (and %d more) had already returned; "
                  "every lane must execute it, so let the lanes that have no data compute on zeros instead of "
                  "leaving",
                  aligned, at1, warp, __builtin_popcount(present), __builtin_ctz(gone), __builtin_popcount(gone) - 1);
    }
}

/* Complete the collective on mask if every live lane of it has arrived. */
static int warp_try_complete(worker *w, unsigned int warp, unsigned int mask)
{
    unsigned int lanes = mask & warp_lanes(w, warp), present = 0;
    void *args[32];
    simt_warp_fn fn = NULL;
    /* Highest lane first: lanes run, and so arrive, in order, so until the
     * last one has arrived the first look usually finds it missing. */
    for (int l = 31; l >= 0; l--) {
        args[l] = NULL;
        if (!(lanes >> l & 1)) continue;
        fiber *f = &w->fibers[warp * 32 + l];
        if (f->state == ST_DONE) continue;
        if (f->state != ST_WARP || f->wmask != mask) return 0;
        args[l] = f->warg;
        fn = f->wfn;
        present |= 1u << l;
    }
    if (!present) return 0;
    warp_check_same_op(w, warp, lanes, present);
    /* The combine step reads what every lane deposited and writes their
     * results: it happens after all arrivals and before all departures. */
    TSAN_ACQUIRE(&w->tsan_warp[warp][w->warp_gen[warp] & 1]);
    fn(args, present);
    TSAN_RELEASE(&w->tsan_warp[warp][w->warp_gen[warp] & 1]);
    w->warp_gen[warp]++;
    for (unsigned int l = 0; l < 32; l++)
        if (present >> l & 1) w->fibers[warp * 32 + l].state = ST_READY;
    w->warp_waiting[warp] -= (unsigned char)__builtin_popcount(present);
    return 1;
}

static void warp_collective(uintptr_t site, unsigned int mask, void *arg, simt_warp_fn fn, const char *aligned,
                            const char *file, int line)
{
    fiber *self = cur_fiber;
    if (!simt_cur_thread || !self) {
        void *args[32] = {0};
        args[0] = arg;
        fn(args, 1u);
        return;
    }
    worker *w = self->w;
    unsigned int warp = self->info.warp;
    /* PTX ISA (shfl.sync, vote.sync, match.sync, redux.sync, bar.warp.sync):
     * "the behavior is undefined if the executing thread is not in
     * membermask". A GPU may run such a call without waiting for anyone, so
     * it stops the launch here instead of quietly adding the lane. */
    if (!(mask >> self->info.lane & 1)) {
        char at[160] = "?";
        simt_source_line(site, at, sizeof at);
        simt_fail("a *_sync call at %s with mask 0x%08x, which leaves out the calling lane %u: a lane must name "
                  "itself in the mask (its result is undefined on a GPU); pass the mask of every lane that takes "
                  "part, such as 0xffffffff or __ballot_sync(0xffffffff, taking_part)",
                  at, mask, self->info.lane);
    }
    self->state = ST_WARP;
    self->wsite = site;
    self->wfile = file;
    self->wline = line;
    self->walign = aligned;
    w->warp_waiting[warp]++;
    self->wmask = mask;
    self->warg = arg;
    self->wfn = fn;
    unsigned int gen = w->warp_gen[warp];
    TSAN_RELEASE(&w->tsan_warp[warp][gen & 1]);
    if (!warp_try_complete(w, warp, mask)) {
        schedule_next(self, 0);
    } else {
        /* Run the warp on, but not forever: a warp that waits in a loop
         * for another warp's store, voting each time round (__any_sync),
         * must let that warp run, as a GPU does. */
        if (w->streak_warp != warp) w->streak_warp = warp, w->warp_streak = 0;
        if (++w->warp_streak < WARP_STREAK_MAX) {
            schedule_from(self, warp * 32);
        } else {
            w->warp_streak = 0;
            schedule_next(self, 0);
        }
    }
    TSAN_ACQUIRE(&w->tsan_warp[warp][gen & 1]);
}

void simt_warp_collective(unsigned int mask, void *arg, simt_warp_fn fn)
{
    TSAN_ENTER();
    warp_collective((uintptr_t)__builtin_return_address(0), mask, arg, fn, NULL, NULL, 0);
    TSAN_EXIT();
}

void simt_warp_aligned(const char *what, void *arg, simt_warp_fn fn)
{
    TSAN_ENTER();
    warp_collective((uintptr_t)__builtin_return_address(0), 0xffffffffu, arg, fn, what, NULL, 0);
    TSAN_EXIT();
}

void simt_warp_aligned_at(const char *what, void *arg, simt_warp_fn fn, const char *file, int line)
{
    TSAN_ENTER();
    warp_collective((uintptr_t)__builtin_return_address(0), 0xffffffffu, arg, fn, what, file, line);
    TSAN_EXIT();
}

/* Complete the collective of the group starting at thread first if every
 * live thread of it has arrived at one of the same size. */
static int group_try_complete(worker *w, unsigned int first, unsigned int size)
{
    unsigned int end = first + size < w->nthreads ? first + size : w->nthreads, present = 0;
    void *args[MAX_GROUP];
    simt_group_fn fn = NULL;
    for (unsigned int i = end; i-- > first;) { /* last first: see warp_try_complete */
        fiber *f = &w->fibers[i];
        args[i - first] = NULL;
        if (f->state == ST_DONE) continue;
        if (f->state != ST_GROUP || f->gsize != size) return 0;
        args[i - first] = f->warg;
        fn = f->gfn;
        present++;
    }
    if (!present) return 0;
    unsigned int g = first / 32;
    TSAN_ACQUIRE(&w->tsan_group[g][w->group_gen[g] & 1]);
    fn(args, end - first);
    TSAN_RELEASE(&w->tsan_group[g][w->group_gen[g] & 1]);
    w->group_gen[g]++;
    for (unsigned int i = first; i < end; i++)
        if (w->fibers[i].state == ST_GROUP) {
            w->fibers[i].state = ST_READY;
            w->group_waiting--;
        }
    return 1;
}

static void group_collective(uintptr_t site, unsigned int size, void *arg, simt_group_fn fn)
{
    fiber *self = cur_fiber;
    if (size < 32 || size > MAX_GROUP || size % 32 != 0)
        simt_fail("a thread-group collective of %u threads (the emulator takes 32, 64, 96 or 128)", size);
    if (!simt_cur_thread || !self) {
        void *args[1] = {arg};
        fn(args, 1);
        return;
    }
    worker *w = self->w;
    unsigned int first = self->info.linear / size * size, g = first / 32;
    self->state = ST_GROUP;
    self->wsite = site;
    self->wfile = NULL;
    w->group_waiting++;
    self->gsize = size;
    self->warg = arg;
    self->gfn = fn;
    unsigned int gen = w->group_gen[g];
    TSAN_RELEASE(&w->tsan_group[g][gen & 1]);
    group_try_complete(w, first, size);
    schedule_next(self, 0);
    TSAN_ACQUIRE(&w->tsan_group[g][gen & 1]);
}

void simt_group_collective(unsigned int size, void *arg, simt_group_fn fn)
{
    TSAN_ENTER();
    group_collective((uintptr_t)__builtin_return_address(0), size, arg, fn);
    TSAN_EXIT();
}

int simt_in_shared(const void *p)
{
    const uintptr_t a = (uintptr_t)p, dyn = (uintptr_t)simt_cur_block.dyn_shared;
    if (dyn && a >= dyn && a < dyn + simt_cur_block.dyn_shared_size) return 1;
    const worker *w = cur_worker;
    if (!w || !simt_cur_thread) return 0;
    for (unsigned int i = 0; i < w->nshared_seen; i++) {
        const uintptr_t lo = (uintptr_t)w->shared_seen[i];
        if (a >= lo && a < lo + w->shared_seen_bytes[i]) return 1;
    }
    return 0;
}

/* The static __shared__ variable of this block that holds p (or, one
 * past its end, ends at p): its index in the order the block declared
 * them, or -1. */
int simt_static_shared_index(const void *p, const void **base, size_t *bytes)
{
    const worker *w = cur_worker;
    const uintptr_t a = (uintptr_t)p;
    if (!w || !simt_cur_thread) return -1;
    for (unsigned int i = 0; i < w->nshared_seen; i++) {
        const uintptr_t lo = (uintptr_t)w->shared_seen[i];
        if (a >= lo && a <= lo + w->shared_seen_bytes[i]) {
            *base = w->shared_seen[i];
            *bytes = w->shared_seen_bytes[i];
            return (int)i;
        }
    }
    return -1;
}

const void *simt_static_shared_var(unsigned int index, size_t *bytes, const char **name)
{
    const worker *w = cur_worker;
    if (!w || !simt_cur_thread || index >= w->nshared_seen) return NULL;
    *bytes = w->shared_seen_bytes[index];
    *name = w->shared_seen_name[index];
    return w->shared_seen[index];
}

unsigned int simt_active_mask(void)
{
    fiber *self = cur_fiber;
    if (!simt_cur_thread || !self) return 1u;
    worker *w = self->w;
    unsigned int warp = self->info.warp, m = 0, lanes = warp_lanes(w, warp);
    for (unsigned int l = 0; l < 32; l++)
        if ((lanes >> l & 1) && w->fibers[warp * 32 + l].state != ST_DONE) m |= 1u << l;
    return m;
}

/* --- cp.async ------------------------------------------------------------ */

/* Which 16-byte chunks of shared memory a copy in flight will write, so that
 * an ldmatrix row can be checked against them in one lookup instead of a
 * walk over every thread's queue (which made lab 04's checks half again as
 * slow). A copy of 4, 8 or 16 bytes is aligned to its size and so lies in one
 * chunk. Open addressing, keyed by the chunk's address; a count that falls
 * to 0 keeps its key, since a kernel refills the same stages again and
 * again. Static and dynamic shared memory keep their addresses from block
 * to block on a worker, so the table grows only with new kernels; it is
 * emptied at a block's start once it is half full (at most 227 KB / 16 =
 * 14528 more chunks fit in one block, so it never fills), or when a
 * failed block left copies counted. */
enum { PEND_SLOTS = 1 << 16, PEND_CLEAR_AT = PEND_SLOTS / 2 };
typedef struct pend_slot {
    uintptr_t chunk; /* address / 16, plus 1 (0: an empty slot) */
    unsigned int count;
} pend_slot;

static pend_slot *pend_find(worker *w, uintptr_t addr, int insert)
{
    const uintptr_t key = addr / 16 + 1;
    for (size_t i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 48);; i = (i + 1) % PEND_SLOTS) {
        pend_slot *s = &w->pend[i];
        if (s->chunk == key) return s;
        if (s->chunk == 0) {
            if (!insert) return NULL;
            s->chunk = key;
            w->pend_keys++;
            return s;
        }
    }
}

/* A copy into dst joins (+1) or leaves (-1) the copies in flight. */
static void pend_note(worker *w, const void *dst, int delta)
{
    if (!w->pend) return; /* no table (out of memory): reads are not checked */
    pend_slot *s = pend_find(w, (uintptr_t)dst, 1);
    s->count += (unsigned int)delta;
}

/* A block's start: its threads have no copies in flight yet. */
static void pend_reset(worker *w)
{
    if (w->pend && (w->cp_pending != 0 || w->pend_keys > PEND_CLEAR_AT)) {
        memset(w->pend, 0, sizeof(pend_slot) * PEND_SLOTS);
        w->pend_keys = 0;
    }
    w->cp_pending = 0;
}

static void cp_do(cp_op *op)
{
    memcpy(op->dst, op->src, op->src_size);
    if (op->size > op->src_size) memset((char *)op->dst + op->src_size, 0, op->size - op->src_size);
}

static void check_aligned_at(uintptr_t site, const char *file, int line, const char *what, const char *operand,
                             const void *addr, size_t align);
static void check_shared_at(uintptr_t site, const char *what, const char *operand, const void *p, size_t n);

static void cp_async(uintptr_t site, void *dst, const void *src, size_t size, size_t src_size)
{
    fiber *f = cur_fiber;
    /* PTX ISA, cp.async: "Specifying src-size larger than cp-size results in
     * undefined behavior". A count computed as the bytes left in a row and
     * not clamped (or gone negative past the edge) would read past the
     * matrix on a GPU, so it stops the launch here. */
    if (src_size > size) {
        char at[160] = "?";
        simt_source_line(site, at, sizeof at);
        simt_fail("cp.async of %zu bytes at %s with src-size %lld: more than the %zu bytes it copies (undefined on "
                  "a GPU); clamp the count of bytes to read to 0 .. %zu",
                  size, at, src_size <= 0xffffffffu ? (long long)(int32_t)(uint32_t)src_size : (long long)src_size,
                  size, size);
    }
    /* Both addresses must be aligned to the copy's size (PTX ISA, "Addresses
     * as Operands"); the source only matters when bytes are read from it. */
    static const char *const what[17] = {[4] = "cp.async of 4 bytes", [8] = "cp.async of 8 bytes",
                                         [16] = "cp.async of 16 bytes"};
    const char *w = size <= 16 && what[size] ? what[size] : "cp.async";
    check_aligned_at(site, NULL, 0, w, "shared-memory destination", dst, size);
    if (src_size > 0) check_aligned_at(site, NULL, 0, w, "global source", src, size);
    check_shared_at(site, w, "shared-memory destination", dst, size);
#ifdef SIMT_ASAN
    /* The bytes move at the wait, in this uninstrumented file; checked here
     * too, an out-of-bounds copy is reported at the cp.async that names it,
     * not at a wait that may be far below. */
    if (src_size > 0) __asan_loadN((uintptr_t)src, src_size);
    __asan_storeN((uintptr_t)dst, size);
#endif
    cp_op op = {dst, src, size, src_size, -1, site};
    if (!simt_cur_thread || !f) {
        cp_do(&op);
        return;
    }
    /* Until its wait the destination holds no defined value on a GPU (the
     * copy lands at some moment in between). Filling it with NaN bytes now
     * and the data at the wait makes a read in between visible: a refill
     * issued before the barrier that ends the reads of the same stage gives
     * NaNs to the threads still reading it, and ThreadSanitizer reports the
     * race: this memset against the read (warp_ldmatrix_combine for an
     * ldmatrix), each stack with the kernel's line under it (TSAN_ENTER). */
    memset(dst, 0xff, size);
    if (f->cp_count == CP_MAX) {
        /* Queue full: completing the oldest copy early is allowed (a copy
         * may land any time before its wait). */
        cp_do(&f->cp[0]);
        pend_note(f->w, f->cp[0].dst, -1);
        memmove(&f->cp[0], &f->cp[1], sizeof(cp_op) * (CP_MAX - 1));
        f->cp_count--;
        f->w->cp_pending--;
    }
    if (!f->w->pend) f->w->pend = calloc(PEND_SLOTS, sizeof(pend_slot));
    f->cp[f->cp_count++] = op;
    f->w->cp_pending++;
    pend_note(f->w, dst, +1);
}

void simt_cp_async(void *dst, const void *src, size_t size, size_t src_size)
{
    TSAN_ENTER();
    cp_async((uintptr_t)__builtin_return_address(0), dst, src, size, src_size);
    TSAN_EXIT();
}

void simt_cp_async_commit(void)
{
    fiber *f = cur_fiber;
    if (!simt_cur_thread || !f) return;
    for (int i = 0; i < f->cp_count; i++)
        if (f->cp[i].group < 0) f->cp[i].group = f->cp_groups;
    f->cp_groups++;
}

static void cp_async_wait(int n)
{
    fiber *f = cur_fiber;
    if (!simt_cur_thread || !f) return;
    int keep_from = f->cp_groups - (n < 0 ? 0 : n); /* groups >= keep_from stay pending */
    int j = 0;
    for (int i = 0; i < f->cp_count; i++) {
        if (f->cp[i].group >= 0 && f->cp[i].group < keep_from) {
            cp_do(&f->cp[i]);
            pend_note(f->w, f->cp[i].dst, -1);
        } else
            f->cp[j++] = f->cp[i];
    }
    f->w->cp_pending -= (unsigned int)(f->cp_count - j);
    f->cp_count = j;
}

void simt_cp_async_wait(int n)
{
    TSAN_ENTER();
    cp_async_wait(n);
    TSAN_EXIT();
}

/* --- mbarrier ------------------------------------------------------------- *
 * The state lives in the barrier's own 64 bits, as on the GPU (whose
 * encoding is opaque): pending arrivals in bits 0-20, the expected count in
 * 21-41, the phase in 42, and the transaction count (bytes announced and
 * not yet arrived, signed) in 43-63. A block runs on one OS thread, so no
 * atomics are needed. */

enum { MBAR_COUNT_MAX = (1 << 20) - 1 };

/* --- Stage hand-off: wgmma reads against later TMA writes --------------- *
 * A consumer releases a stage by arriving on its "empty" mbarrier; the
 * producer waits there and refills the stage by TMA. On the GPU that is safe
 * only if the wgmma reading the stage had been let go by a wgmma.wait_group
 * before the arrival: the arrival orders what came before it in the
 * consumer, and an unfinished wgmma's reads are not "before" it. The
 * emulator runs each wgmma group at its wait_group, before any other thread
 * gets to run, so a release that comes too early still computes the right
 * result here; this bookkeeping reports it anyway, whatever the schedule.
 * An arrival records the arriving thread's unfinished reads (and those it
 * knows of) on the barrier; a thread whose wait on the barrier succeeds
 * takes them over; a thread learns that reads have finished from the same
 * arrivals (how far each warpgroup's wait_group had got) and from
 * __syncthreads. A TMA copy over a read it holds is reported
 * (simt_wgmma_reads_unordered). Tables that fill up drop entries: a missed
 * report, never a false one. */

static int mark_add(read_mark *set, int *n, const read_mark *m, const unsigned int *known)
{
    if (m->seq <= known[m->wg]) return 0;
    for (int i = 0; i < *n; i++)
        if (set[i].wg == m->wg && set[i].seq == m->seq) return 0;
    if (*n == READS_MAX) return 0;
    set[(*n)++] = *m;
    return 1;
}

static void mark_prune(read_mark *set, int *n, const unsigned int *known)
{
    int kept = 0;
    for (int i = 0; i < *n; i++)
        if (set[i].seq > known[set[i].wg]) set[kept++] = set[i];
    *n = kept;
}

static bar_reads *bar_reads_of(worker *w, const uint64_t *bar, int create)
{
    for (int i = 0; i < w->nbreads; i++)
        if (w->breads[i].bar == bar) return &w->breads[i];
    if (!create || w->nbreads == BAR_READS_MAX) return NULL;
    if (!w->breads && !(w->breads = malloc(sizeof(bar_reads) * BAR_READS_MAX)))
        simt_fail("out of memory for mbarrier bookkeeping");
    bar_reads *r = &w->breads[w->nbreads++];
    memset(r, 0, sizeof(*r));
    r->bar = bar;
    return r;
}

/* The emulator's own bookkeeping, shared by all threads of the block: TSan is
 * told to look away (ordering it would hide the kernel's own races). */
static void handoff_release(const uint64_t *bar)
{
    worker *w = cur_worker;
    fiber *f = cur_fiber;
    if (!w || !f || !simt_cur_thread) return;
    const simt_wgmma_queue *q = f->wgq;
    int knows = 0;
    for (unsigned int g = 0; g < MAX_WG; g++) knows |= f->known[g] != 0;
    if (!q && f->ntaint == 0 && !knows) return; /* nothing to hand on: no wgmma in sight */
    TSAN_IGNORE_BEGIN();
    bar_reads *r = bar_reads_of(w, bar, 1);
    if (r) {
        unsigned int wg = f->info.linear / 128;
        for (unsigned int g = 0; g < MAX_WG; g++)
            if (f->known[g] > r->done[g]) r->done[g] = f->known[g];
        if (q && q->done > r->done[wg]) r->done[wg] = q->done;
        for (int i = 0; q && i < q->count; i++) {
            read_mark m = {wg, q->op[i].seq, {q->op[i].lo[0], q->op[i].lo[1]}, {q->op[i].hi[0], q->op[i].hi[1]}};
            mark_add(r->r, &r->n, &m, r->done);
        }
        for (int i = 0; i < f->ntaint; i++) mark_add(r->r, &r->n, &f->taint[i], r->done);
        mark_prune(r->r, &r->n, r->done);
    }
    TSAN_IGNORE_END();
}

static void handoff_acquire(const uint64_t *bar)
{
    worker *w = cur_worker;
    fiber *f = cur_fiber;
    if (!w || !f || !simt_cur_thread) return;
    TSAN_IGNORE_BEGIN();
    const bar_reads *r = bar_reads_of(w, bar, 0);
    if (r) {
        if (!f->taint && !(f->taint = malloc(sizeof(read_mark) * READS_MAX)))
            simt_fail("out of memory for mbarrier bookkeeping");
        for (unsigned int g = 0; g < MAX_WG; g++)
            if (r->done[g] > f->known[g]) f->known[g] = r->done[g];
        for (int i = 0; i < r->n; i++) mark_add(f->taint, &f->ntaint, &r->r[i], f->known);
        mark_prune(f->taint, &f->ntaint, f->known);
    }
    TSAN_IGNORE_END();
}

/* After __syncthreads every thread knows how far every warpgroup's
 * wait_group had got (its first thread speaks for it). */
static void handoff_syncthreads(worker *w)
{
    unsigned int done[MAX_WG] = {0};
    int any = 0;
    for (unsigned int g = 0; g < MAX_WG && g * 128 < w->nthreads; g++)
        if (w->fibers[g * 128].wgq) done[g] = w->fibers[g * 128].wgq->done, any = 1;
    if (!any) return;
    TSAN_IGNORE_BEGIN();
    for (unsigned int i = 0; i < w->nthreads; i++) {
        fiber *f = &w->fibers[i];
        for (unsigned int g = 0; g < MAX_WG; g++)
            if (done[g] > f->known[g]) f->known[g] = done[g];
        mark_prune(f->taint, &f->ntaint, f->known);
    }
    TSAN_IGNORE_END();
}

int simt_wgmma_reads_unordered(uint32_t lo, uint32_t hi, unsigned int *warpgroup)
{
    fiber *f = cur_fiber;
    if (!f || !simt_cur_thread) return 0;
    unsigned int own = f->info.linear / 128, own_done = f->wgq ? f->wgq->done : 0;
    for (int i = 0; i < f->ntaint; i++) {
        const read_mark *m = &f->taint[i];
        if (m->wg == own && m->seq <= own_done) continue; /* its own wait_group ordered it */
        for (int o = 0; o < 2; o++)
            if (m->lo[o] < hi && lo < m->hi[o]) {
                *warpgroup = m->wg;
                return 1;
            }
    }
    return 0;
}

static unsigned int mbar_pending(uint64_t v) { return (unsigned int)(v & 0x1fffff); }
static unsigned int mbar_expected(uint64_t v) { return (unsigned int)(v >> 21 & 0x1fffff); }
static int mbar_phase(uint64_t v) { return (int)(v >> 42 & 1); }
/* mbarrier.init stores a count of 1 .. 2^20 - 1; memory that never saw one
 * holds 0 or, in dynamic shared memory, the emulator's 0xff fill (a count
 * of 2^21 - 1). */
static int mbar_initialised(uint64_t v) { return mbar_expected(v) != 0 && mbar_expected(v) <= MBAR_COUNT_MAX; }
static long mbar_tx(uint64_t v)
{
    long t = (long)(v >> 43 & 0x1fffff);
    return t >= (1L << 20) ? t - (1L << 21) : t;
}
static uint64_t mbar_pack(unsigned int pending, unsigned int expected, int phase, long tx)
{
    return (uint64_t)pending | (uint64_t)expected << 21 | (uint64_t)(phase & 1) << 42 |
           ((uint64_t)tx & 0x1fffff) << 43;
}

/* Threads asleep on this barrier look again: its state changed, or a copy
 * that may complete it was queued (they land it when they look). */
static void mbar_wake(uint64_t *bar)
{
    worker *w = cur_worker;
    if (!w) return;
    for (unsigned int i = 0; i < w->nthreads; i++)
        if (w->fibers[i].state == ST_MBAR && w->fibers[i].mbar == bar) w->fibers[i].state = ST_READY;
}

/* Store the new counts; complete the phase if nothing is outstanding. */
static void mbar_update(uint64_t *bar, unsigned int pending, long tx)
{
    uint64_t v = *bar;
    if (tx < -MBAR_COUNT_MAX || tx > MBAR_COUNT_MAX)
        simt_fail("mbarrier: transaction count %ld out of range (more than 2^20 - 1 bytes outstanding)", tx);
    if (pending == 0 && tx == 0)
        *bar = mbar_pack(mbar_expected(v), mbar_expected(v), mbar_phase(v) ^ 1, 0);
    else
        *bar = mbar_pack(pending, mbar_expected(v), mbar_phase(v), tx);
    mbar_wake(bar);
}

void simt_mbar_init(uint64_t *bar, unsigned int count)
{
    if (count < 1 || count > MBAR_COUNT_MAX)
        simt_fail("mbarrier.init with count %u (it takes 1 .. 2^20 - 1)", count);
    *bar = mbar_pack(count, count, 0, 0);
}

void simt_mbar_arrive(uint64_t *bar, unsigned int tx_bytes)
{
    uint64_t v = *bar;
    if (!mbar_initialised(v)) simt_fail("mbarrier.arrive on a barrier that was never initialised (mbarrier.init)");
    if (mbar_pending(v) == 0)
        simt_fail("mbarrier.arrive: more arrivals in one phase than the barrier's count (%u); did a thread "
                  "arrive twice, or skip waiting for the previous phase?",
                  mbar_expected(v));
    TSAN_RELEASE(bar);
    handoff_release(bar);
    mbar_update(bar, mbar_pending(v) - 1, mbar_tx(v) + (long)tx_bytes);
}

/* The TMA unit's side: bytes of a copy have landed. */
static void mbar_complete_tx(uint64_t *bar, unsigned int bytes)
{
    uint64_t v = *bar;
    mbar_update(bar, mbar_pending(v), mbar_tx(v) - (long)bytes);
}

/* --- TMA copies ------------------------------------------------------------ *
 * A copy may land any time between its issue and the wait that needs it; the
 * emulator lands it as late as it can, at that wait, so a kernel that reads
 * a stage before waiting for its barrier sees stale data, as it might on the
 * GPU. */

static void tma_land(worker *w, int i)
{
    TSAN_ACQUIRE(&w->tsan_tma);
    simt_tma_op op = w->tma[i];
    memmove(&w->tma[i], &w->tma[i + 1], sizeof(simt_tma_op) * (size_t)(w->ntma - i - 1));
    w->ntma--;
    TSAN_RELEASE(&w->tsan_tma);
    simt_tma_run(&op);
    TSAN_RELEASE(op.bar); /* the copy's writes happen before every wait that sees its phase complete */
    mbar_complete_tx(op.bar, op.bytes);
}

void simt_tma_enqueue(const simt_tma_op *op)
{
    worker *w = cur_worker;
    if (!simt_cur_thread || !w) simt_fail("cp.async.bulk.tensor outside a kernel");
    if (w->ntma == TMA_MAX) tma_land(w, 0); /* landing early is allowed */
    TSAN_ACQUIRE(&w->tsan_tma);
    if (!w->tma && !(w->tma = malloc(sizeof(simt_tma_op) * TMA_MAX))) simt_fail("out of memory for TMA copies");
    w->tma[w->ntma] = *op;
    w->tma[w->ntma++].phase = mbar_phase(*op->bar);
    TSAN_RELEASE(&w->tsan_tma);
    mbar_wake(op->bar);
}

/* Land the copies of this barrier, oldest first, until its phase completes.
 * A copy issued in that phase and still in flight when it completes is a
 * kernel bug: the phase's expect_tx announced fewer bytes than its copies
 * bring, so on a GPU the stage may be read before they land. */
static void tma_land_for(worker *w, uint64_t *bar)
{
    int phase = mbar_phase(*bar);
    for (int i = 0; i < w->ntma && mbar_phase(*bar) == phase;) {
        if (w->tma[i].bar == bar)
            tma_land(w, i);
        else
            i++;
    }
    if (mbar_phase(*bar) == phase) return;
    unsigned int late = 0;
    for (int i = 0; i < w->ntma; i++)
        if (w->tma[i].bar == bar && w->tma[i].phase == phase) late += w->tma[i].bytes;
    if (late)
        simt_fail("mbarrier: a phase completed with %u bytes of its TMA copies still in flight: the expect_tx "
                  "count is smaller than the bytes the copies bring (every box counts whole, zero-filled "
                  "elements too)",
                  late);
}

int simt_mbar_test_parity(uint64_t *bar, int parity)
{
    worker *w = cur_worker;
    if (!mbar_initialised(*bar)) simt_fail("mbarrier wait on a barrier that was never initialised (mbarrier.init)");
    if (w && simt_cur_thread) tma_land_for(w, bar);
    if (mbar_phase(*bar) == (parity & 1)) return 0;
    TSAN_ACQUIRE(bar);
    handoff_acquire(bar);
    return 1;
}

void simt_mbar_wait_parity_at(uint64_t *bar, int parity, const char *file, int line)
{
    fiber *self = cur_fiber;
    while (!simt_mbar_test_parity(bar, parity)) {
        if (!simt_cur_thread || !self) simt_fail("mbarrier wait in host code on a phase that has not completed");
        self->state = ST_MBAR;
        self->mbar = bar;
        self->mparity = parity & 1;
        self->mfile = file;
        self->mline = line;
        schedule_next(self, 0);
    }
}

void simt_mbar_wait_parity(uint64_t *bar, int parity) { simt_mbar_wait_parity_at(bar, parity, NULL, 0); }

/* --- errors and per-thread Hopper state ------------------------------------ */

static void abort_current(void) __attribute__((noreturn));

/* "simt: <message>" on stderr, as one line (blocks on other workers may
 * fail at the same time), followed by where: the block and thread, or
 * "in host code"; nothing after it when where is 0. */
static void report(int where, const char *fmt, va_list ap)
{
    const simt_thread_info *t = report_as ? report_as : simt_cur_thread;
    report_as = NULL;
    fflush(stdout);
    flockfile(stderr);
    fprintf(stderr, "simt: ");
    vfprintf(stderr, fmt, ap);
    if (!where) fprintf(stderr, "\n");
    else if (!simt_cur_thread || !cur_fiber) fprintf(stderr, " (in host code)\n");
    else
        fprintf(stderr, " (block (%u,%u,%u) thread (%u,%u,%u))\n", simt_cur_block.block_idx.x,
                simt_cur_block.block_idx.y, simt_cur_block.block_idx.z, t->thread_idx.x, t->thread_idx.y,
                t->thread_idx.z);
    funlockfile(stderr);
}

/* Print "simt: <message> (block ... thread ...)" and stop the running
 * thread's launch with the fault code; in host code, print and abort. */
static void fail_with(cudaError_t code, const char *fmt, va_list ap) __attribute__((noreturn));
static void fail_with(cudaError_t code, const char *fmt, va_list ap)
{
    report(1, fmt, ap);
    if (!simt_cur_thread || !cur_fiber) abort();
    simt_set_fault(code);
    abort_current();
}

void simt_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_with(cudaErrorLaunchFailure, fmt, ap);
}

static void fail_code(cudaError_t code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void fail_code(cudaError_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_with(code, fmt, ap);
}

/* A launch a GPU would refuse before running it (a bad configuration for
 * this kernel) fails with an error that, unlike a fault, is not sticky:
 * simt_run_grid returns it once and the next launch runs. */
static atomic_int launch_refused;

static void refuse_launch(cudaError_t code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void refuse_launch(cudaError_t code, const char *fmt, ...)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&launch_refused, &expected, (int)code)) { /* one line per launch */
        va_list ap;
        va_start(ap, fmt);
        report(0, fmt, ap);
        va_end(ap);
    }
    abort_current();
}

/* --- Misaligned accesses ---
 * A GPU requires every access to be aligned to its size: a float4 load from
 * an address that is not a multiple of 16 stops the kernel with
 * cudaErrorMisalignedAddress. An x86 CPU loads it anyway, so a kernel that
 * forgot its alignment fallback would pass here and fail on its first GPU
 * run. simtcc therefore compiles .cu files with -fsanitize=alignment: before
 * each access through a pointer or reference the compiler tests the address
 * against the type's alignment and, when it is off, calls the handler below
 * (the undefined-behaviour sanitizer's interface, here without its runtime
 * library). Inside a kernel the handler fails the launch as the GPU would;
 * host code runs on the CPU, which allows the access, so it returns. */
typedef struct {
    const char *file;
    uint32_t line, column;
} ubsan_location;

typedef struct {
    uint16_t kind, info;
    char name[]; /* the type as written, quoted: 'const float4' */
} ubsan_type;

typedef struct {
    ubsan_location loc;
    const ubsan_type *type;
    unsigned char log_alignment;
    unsigned char check_kind; /* what the access was: the sanitizer's TypeCheckKind */
} ubsan_type_mismatch;

/* The sanitizer's kinds of check: 0 a load, 1 a store; the others (binding
 * a reference, a member access, ...) lead to a load or store as well. */
static const char *access_kind(unsigned int k) { return k == 0 ? "load of" : k == 1 ? "store to" : "access to"; }

/* The type as the compiler names it ('const struct float4'), without the
 * keyword C++ code does not write. */
static void type_name(const ubsan_type *t, char *out, size_t n)
{
    const char *s = t ? t->name : "a value";
    size_t k = 0;
    while (*s && k + 1 < n) {
        if (!strncmp(s, "struct ", 7)) {
            s += 7;
            continue;
        }
        out[k++] = *s++;
    }
    out[k] = 0;
}

static void misaligned(const ubsan_type_mismatch *d, uintptr_t ptr)
{
    const uintptr_t align = (uintptr_t)1 << d->log_alignment;
    if (!simt_cur_thread || !cur_fiber || ptr == 0 || (ptr & (align - 1)) == 0) return;
    char type[128];
    type_name(d->type, type, sizeof type);
    fail_code(cudaErrorMisalignedAddress,
              "misaligned address: %s %s at %p, %u bytes past a multiple of %u, at %s:%u; a GPU needs "
              "every access aligned to its size and stops the kernel here (cudaErrorMisalignedAddress)",
              access_kind(d->check_kind), type, (void *)ptr, (unsigned int)(ptr & (align - 1)),
              (unsigned int)align, d->loc.file ? d->loc.file : "?", d->loc.line);
}

/* A static __shared__ variable is a thread-local static of the OS thread
 * that runs the block, so it would start as zeros in the first block a
 * worker runs and keep the previous block's values after. A GPU gives
 * neither guarantee. simtcc's rewrite calls this where the variable is
 * declared; the first thread of a block to get there fills it with 0xff
 * bytes (NaN as float), before any thread of the block can use it. */
void simt_shared_first_use(const volatile void *variable, size_t bytes, const char *name, const char *file, int line)
{
    const void *var = (const void *)(uintptr_t)variable; /* a volatile __shared__ flag is bytes like any other */
    worker *w = cur_worker;
    if (!w || !simt_cur_thread) return;
    for (unsigned int i = 0; i < w->nshared_seen; i++)
        if (w->shared_seen[i] == var) return;
    if (w->nshared_seen == SHARED_SEEN_MAX) return;
    w->shared_seen_bytes[w->nshared_seen] = bytes;
    w->shared_seen_name[w->nshared_seen] = name;
    w->shared_seen[w->nshared_seen++] = var;
    simt_memtrace_shared_var(var, bytes);
    /* A GPU gives a kernel at most 48 KB of static shared memory (ptxas
     * refuses more: "uses too much shared data"), and a block at most 227 KB
     * of static and dynamic together. Each thread-local static here could
     * be any size, so a kernel whose tiles outgrew the limit would pass on
     * the emulator and not build for a GPU. */
    w->shared_static += bytes;
    if (w->shared_static > SIMT_SHARED_DEFAULT)
        fail_code(cudaErrorLaunchOutOfResources,
                  "too much static __shared__ memory: with '%s' (%zu bytes, %s:%d) this kernel's __shared__ "
                  "variables take %zu bytes, more than the %d (48 KB) a GPU allows; nvcc refuses to build such a "
                  "kernel (ptxas: \"uses too much shared data\"). Put the large tiles in dynamic shared memory "
                  "(extern __shared__, its size given at launch) and raise the kernel's limit with "
                  "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)",
                  name, bytes, file, line, w->shared_static, SIMT_SHARED_DEFAULT);
    if (w->L->shmem > 0 && w->shared_static + w->L->shmem > w->L->shared_limit &&
        w->L->shared_limit == SIMT_SHARED_DEFAULT)
        refuse_launch(cudaErrorInvalidValue,
                      "too much shared memory: with '%s' (%s:%d), %zu bytes of static __shared__ variables and %zu "
                      "of dynamic shared memory take %zu, more than the %d (48 KB) a kernel may have before its limit "
                      "is raised; on a GPU the launch fails (cudaErrorInvalidValue, \"invalid argument\"). Call "
                      "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, %zu) before launching",
                      name, file, line, w->shared_static, w->L->shmem, w->shared_static + w->L->shmem,
                      SIMT_SHARED_DEFAULT, w->L->shmem);
    else if (w->shared_static + w->L->shmem > simt_shared_optin())
        refuse_launch(cudaErrorInvalidValue,
                      "too much shared memory: with '%s' (%s:%d), %zu bytes of static __shared__ variables and %zu "
                      "of dynamic shared memory take %zu, more than the %zu (%zu KB) a block may have on this device "
                      "(227 KB on an H100 or H200); on a GPU cudaFuncSetAttribute refuses a dynamic size that leaves "
                      "no room for them, and the launch fails (cudaErrorInvalidValue, \"invalid argument\")",
                      name, file, line, w->shared_static, w->L->shmem, w->shared_static + w->L->shmem,
                      simt_shared_optin(), simt_shared_optin() / 1024);
    /* The emulator's write, not the kernel's: TSan must not pair it with
     * the threads' own first stores. */
    TSAN_IGNORE_BEGIN();
    memset((void *)var, 0xff, bytes);
    TSAN_IGNORE_END();
}

/* nvcc compiles a kernel with __launch_bounds__(n) for at most n threads
 * per block (its registers are allotted for that many), and a GPU refuses
 * a launch with more; the emulator has no such limit, so the kernel's
 * first statement (simtcc's rewrite) compares. */
void simt_check_launch_bounds(unsigned long long max_threads, const char *file, int line)
{
    worker *w = cur_worker;
    if (!w || !simt_cur_thread || !cur_fiber || w->nthreads <= max_threads) return;
    refuse_launch(cudaErrorInvalidValue,
                  "launched with %u threads per block, more than the %llu of the kernel's __launch_bounds__ "
                  "(%s:%d); a GPU refuses such a launch (cudaErrorInvalidValue, \"invalid argument\"): launch at "
                  "most %llu threads per block, or change the bound",
                  w->nthreads, max_threads, file, line, max_threads);
}

/* The checks below are called from a kernel's line (an ldmatrix, a wmma
 * load, a cp.async), through a course header's inline helper or one of this
 * file's entry points; site is that call's return address, so a failure
 * names the student's line as the misaligned-access handler above does. */
static void check_aligned_at(uintptr_t site, const char *file, int at_line, const char *what, const char *operand,
                             const void *addr, size_t align)
{
    const uintptr_t a = (uintptr_t)addr;
    if (!simt_cur_thread || !cur_fiber || align == 0 || a % align == 0) return;
    char line[160];
    call_line(site, file, at_line, line, sizeof line);
    fail_code(cudaErrorMisalignedAddress,
              "misaligned address: %s with its %s at %p, %u bytes past a multiple of %zu, at %s; a GPU needs "
              "that address aligned to %zu bytes and stops the kernel here (cudaErrorMisalignedAddress)",
              what, operand, addr, (unsigned int)(a % align), align, line, align);
}

/* Where [p, p + n) lies: 1 inside the block's shared memory (its dynamic
 * shared memory or a static __shared__ variable it has declared), 0 not,
 * -1 cannot tell (more static variables than the emulator keeps). */
static int in_block_shared(const worker *w, uintptr_t a, size_t n)
{
    const uintptr_t dyn = (uintptr_t)simt_cur_block.dyn_shared;
    if (dyn && a >= dyn && a + n <= dyn + simt_cur_block.dyn_shared_size) return 1;
    for (unsigned int i = 0; i < w->nshared_seen; i++) {
        const uintptr_t v = (uintptr_t)w->shared_seen[i];
        if (a >= v && a + n <= v + w->shared_seen_bytes[i]) return 1;
    }
    return w->nshared_seen == SHARED_SEEN_MAX ? -1 : 0;
}

static void check_shared_at(uintptr_t site, const char *what, const char *operand, const void *p, size_t n)
{
    if (!simt_cur_thread || !cur_fiber || !cur_worker) return;
    char line[160];
    if (simt_in_allocation(p)) {
        simt_source_line(site, line, sizeof line);
        fail_code(cudaErrorIllegalAddress,
                  "%s: its %s %p points into a cudaMalloc allocation, global memory, at %s, where the instruction "
                  "takes a shared-memory address; on a GPU that address means nothing in the shared window and "
                  "the kernel faults or reads the wrong bytes: pass the shared tile (As + ..., not A + ...)",
                  what, operand, p, line);
    }
    /* An index past a tile's end: on a GPU the access lands in another
     * tile, or past the block's shared memory, where it faults; here it
     * would write the emulator's heap, and the run would die later, far
     * from the cause (glibc's "corrupted top size"). */
    const uintptr_t a = (uintptr_t)p, dyn = (uintptr_t)simt_cur_block.dyn_shared;
    const size_t size = simt_cur_block.dyn_shared_size;
    if (in_block_shared(cur_worker, a, n) != 0) return;
    simt_source_line(site, line, sizeof line);
    /* The static variable that starts closest below p: a tile it ran past. */
    int near = -1;
    for (unsigned int i = 0; i < cur_worker->nshared_seen; i++) {
        const uintptr_t v = (uintptr_t)cur_worker->shared_seen[i];
        if (v <= a && a - v < ((size_t)1 << 20) &&
            (near < 0 || v > (uintptr_t)cur_worker->shared_seen[near]))
            near = (int)i;
    }
    if (near >= 0 && (!dyn || a < dyn || (uintptr_t)cur_worker->shared_seen[near] > dyn))
        fail_code(cudaErrorIllegalAddress,
                  "%s: its %s, %zu bytes at byte %zu of __shared__ '%s', runs past its end (%zu bytes), at %s: "
                  "an index past the tile",
                  what, operand, n, (size_t)(a - (uintptr_t)cur_worker->shared_seen[near]),
                  cur_worker->shared_seen_name[near], cur_worker->shared_seen_bytes[near], line);
    if (dyn && a >= dyn && a < dyn + size + (1u << 20))
        fail_code(cudaErrorIllegalAddress,
                  "%s: its %s, %zu bytes at byte %zu of the block's dynamic shared memory, runs past its end "
                  "(%zu bytes, the launch's third <<< >>> argument), at %s: an index past the last tile, or a "
                  "tile larger than the bytes launched",
                  what, operand, n, (size_t)(a - dyn), size, line);
    else if (dyn && a < dyn && dyn - a <= (1u << 20))
        fail_code(cudaErrorIllegalAddress,
                  "%s: its %s %p lies %zu bytes before the block's dynamic shared memory, at %s: a negative "
                  "index into a shared tile",
                  what, operand, p, (size_t)(dyn - a), line);
    else
        fail_code(cudaErrorIllegalAddress,
                  "%s: its %s %p is not in the block's shared memory (%zu bytes of dynamic shared memory, and "
                  "the static __shared__ variables), at %s; on a GPU the instruction takes a shared-memory "
                  "address: pass a pointer into a __shared__ array or the extern __shared__ one",
                  what, operand, p, size, line);
}

void simt_check_aligned(const char *what, const char *operand, const void *addr, size_t align)
{
    check_aligned_at((uintptr_t)__builtin_return_address(0), NULL, 0, what, operand, addr, align);
}

/* "byte 256 of __shared__ 'As'" or "byte 256 of the dynamic shared memory". */
static void shared_place(const worker *w, uintptr_t a, char *out, size_t len)
{
    const uintptr_t dyn = (uintptr_t)simt_cur_block.dyn_shared;
    if (dyn && a >= dyn && a < dyn + simt_cur_block.dyn_shared_size) {
        snprintf(out, len, "byte %zu of the dynamic shared memory", (size_t)(a - dyn));
        return;
    }
    for (unsigned int i = 0; i < w->nshared_seen; i++) {
        const uintptr_t v = (uintptr_t)w->shared_seen[i];
        if (a >= v && a < v + w->shared_seen_bytes[i]) {
            snprintf(out, len, "byte %zu of __shared__ '%s'", (size_t)(a - v), w->shared_seen_name[i]);
            return;
        }
    }
    snprintf(out, len, "shared address %p", (void *)a);
}

/* A read of shared bytes that a cp.async of some thread of the block has
 * not landed yet. On a GPU it returns the old bytes, the new ones or a mix,
 * depending on timing; here the bytes hold NaN until the wait, and this
 * names the two lines instead, which the NaNs alone cannot. Correct code
 * never gets here: a stage is read after its copies' wait and a barrier,
 * and refilled only after the barrier that ends its reads. */
static void check_cp_pending_at(uintptr_t site, const char *file, int at_line, const char *what, const void *p,
                                size_t n)
{
    worker *w = cur_worker;
    if (!simt_cur_thread || !cur_fiber || !w || w->cp_pending == 0 || !w->pend) return;
    const uintptr_t a = (uintptr_t)p;
    int any = 0;
    for (uintptr_t c = a & ~(uintptr_t)15; c < a + n && !any; c += 16) {
        const pend_slot *s = pend_find(w, c, 0);
        any = s && s->count > 0;
    }
    if (!any) return;
    for (unsigned int t = 0; t < w->nfibers; t++) {
        const fiber *f = &w->fibers[t];
        for (int i = 0; i < f->cp_count; i++) {
            const cp_op *op = &f->cp[i];
            const uintptr_t d = (uintptr_t)op->dst;
            if (a >= d + op->size || d >= a + n) continue;
            char line[160], cp_line[160], place[160], whose[64], group[400];
            call_line(site, file, at_line, line, sizeof line);
            simt_source_line(op->site, cp_line, sizeof cp_line);
            shared_place(w, d, place, sizeof place);
            if (f == cur_fiber)
                snprintf(whose, sizeof whose, "this thread");
            else
                snprintf(whose, sizeof whose, "thread (%u,%u,%u)", f->info.thread_idx.x, f->info.thread_idx.y,
                         f->info.thread_idx.z);
            if (op->group < 0)
                snprintf(group, sizeof group,
                         "in a group not committed yet: cp.async.commit_group (cp_async_commit_group) closes a "
                         "group, and only closed groups are waited for");
            else {
                int open = 0; /* copies of the thread after its last commit */
                for (int j = 0; j < f->cp_count; j++) open |= f->cp[j].group < 0;
                snprintf(group, sizeof group,
                         "in its group %d, which its cp.async.wait_group has not waited for yet (%d of its "
                         "groups are committed; wait_group n leaves the n most recent in flight)%s",
                         op->group, f->cp_groups,
                         open ? "; its later copies are in a group not committed yet, which the wait does not "
                                "count (a cp_async_commit_group missing after them)"
                              : "");
            }
            simt_fail("%s at %s reads shared bytes that a cp.async has not finished writing: the %zu bytes at %s, "
                      "copied by %s at %s, %s. On a GPU the read gets the old bytes, the new ones or a mix, as "
                      "timing falls. Wait for the stage's group and __syncthreads() before reading it, and "
                      "refill a stage only after the __syncthreads() that ends its reads",
                      what, line, op->size, place, whose, cp_line, group);
        }
    }
}

void simt_check_shared(const char *what, const char *operand, const void *p, size_t n)
{
    const uintptr_t site = (uintptr_t)__builtin_return_address(0);
    check_shared_at(site, what, operand, p, n);
    check_cp_pending_at(site, NULL, 0, what, p, n);
}

void simt_check_landed_at(const char *what, const void *p, size_t n, const char *file, int line)
{
    check_cp_pending_at((uintptr_t)__builtin_return_address(0), file, line, what, p, n);
}

void simt_check_load_landed(uintptr_t site, const void *p, size_t n)
{
    check_cp_pending_at(site, NULL, 0, "a load", p, n);
}

static void check_wmma_at(uintptr_t site, const char *file, int at_line, const char *what, const void *p,
                          unsigned ldm, size_t elem_size)
{
    if (!simt_cur_thread || !cur_fiber) return;
    check_aligned_at(site, file, at_line, what, "matrix pointer (CUDA asks for 256-bit alignment)", p, 32);
    if ((size_t)ldm * elem_size % 16 != 0) {
        char line[160];
        call_line(site, file, at_line, line, sizeof line);
        simt_fail("%s with ldm %u, at %s: CUDA asks for a leading dimension that is a multiple of 16 bytes (%zu "
                  "elements of %zu bytes); a GPU gives undefined results. Pad the rows to a multiple of %zu",
                  what, ldm, line, 16 / elem_size, elem_size, 16 / elem_size);
    }
}

void simt_check_wmma_at(const char *what, const void *p, unsigned ldm, size_t elem_size, const char *file, int line)
{
    check_wmma_at((uintptr_t)__builtin_return_address(0), file, line, what, p, ldm, elem_size);
}

/* --- Indices past an array's end ---
 * simtcc also compiles .cu files with -fsanitize=bounds: an index into an
 * array whose size the compiler knows (a static __shared__ tile, a
 * thread's register array such as acc[TM][TN]) is tested against that
 * size. On a GPU such an index writes into whatever lies next to the array
 * (another tile, another thread's registers spilled to local memory) or
 * faults, and compute-sanitizer sees it only when the address leaves the
 * block's shared memory or the thread's local memory. Here it fails the
 * launch, with the line, as an illegal address. */
typedef struct {
    ubsan_location loc;
    const ubsan_type *array_type;
    const ubsan_type *index_type;
} ubsan_out_of_bounds;

void __ubsan_handle_out_of_bounds(const ubsan_out_of_bounds *d, uintptr_t index);
void __ubsan_handle_out_of_bounds(const ubsan_out_of_bounds *d, uintptr_t index)
{
    if (!simt_cur_thread || !cur_fiber) return; /* host code: not what the emulator checks */
    /* An integer type's info is log2(bit width) << 1 | signed; small
     * integers are passed in the handle itself. */
    long long v = (long long)index;
    const ubsan_type *t = d->index_type;
    if (t && t->kind == 0 && (t->info & 1)) {
        unsigned int bits = 1u << (t->info >> 1);
        if (bits < 64) v = (long long)((uint64_t)index << (64 - bits)) >> (64 - bits);
    }
    char type[128];
    type_name(d->array_type, type, sizeof type);
    fail_code(cudaErrorIllegalAddress,
              "index %lld out of bounds for %s at %s:%u; on a GPU it reads or writes whatever lies next "
              "to the array, or faults (compute-sanitizer sees it only outside the block's shared or the "
              "thread's local memory)",
              v, type, d->loc.file ? d->loc.file : "?", d->loc.line);
}

void __ubsan_handle_out_of_bounds_abort(const ubsan_out_of_bounds *d, uintptr_t index);
void __ubsan_handle_out_of_bounds_abort(const ubsan_out_of_bounds *d, uintptr_t index)
{
    __ubsan_handle_out_of_bounds(d, index);
    fprintf(stderr, "simt: index %lld out of bounds in host code, at %s:%u\n", (long long)index,
            d->loc.file ? d->loc.file : "?", d->loc.line);
    abort();
}

void __ubsan_handle_type_mismatch_v1(const ubsan_type_mismatch *d, uintptr_t ptr);
void __ubsan_handle_type_mismatch_v1(const ubsan_type_mismatch *d, uintptr_t ptr) { misaligned(d, ptr); }

void __ubsan_handle_type_mismatch_v1_abort(const ubsan_type_mismatch *d, uintptr_t ptr);
void __ubsan_handle_type_mismatch_v1_abort(const ubsan_type_mismatch *d, uintptr_t ptr)
{
    misaligned(d, ptr);
    /* Only with -fno-sanitize-recover: the caller does not expect a return. */
    char type[128];
    type_name(d->type, type, sizeof type);
    fprintf(stderr, "simt: misaligned %s %s at %p in host code, at %s:%u\n", access_kind(d->check_kind), type,
            (void *)ptr, d->loc.file ? d->loc.file : "?", d->loc.line);
    abort();
}

simt_wgmma_queue *simt_thread_wgmma_queue(void)
{
    fiber *f = cur_fiber;
    if (!simt_cur_thread || !f) return NULL;
    if (!f->wgq) {
        f->wgq = calloc(1, sizeof(simt_wgmma_queue));
        if (!f->wgq) simt_fail("out of memory for wgmma state");
    }
    return f->wgq;
}

/* Looks at the other threads' queues: bookkeeping of the emulator, not an
 * access of the kernel's, so TSan is told to look away (an acquire here
 * would order the kernel's threads and hide the races it should report). */
int simt_wgmma_reads_in_flight(uint32_t lo, uint32_t hi, unsigned int *thread)
{
    worker *w = cur_worker;
    int found = 0;
    if (!w || !simt_cur_thread) return 0;
    TSAN_IGNORE_BEGIN();
    for (unsigned int t = 0; t < w->nthreads && !found; t++) {
        const simt_wgmma_queue *q = w->fibers[t].wgq;
        for (int i = 0; q && i < q->count && !found; i++)
            for (int o = 0; o < 2; o++)
                if (q->op[i].lo[o] < hi && lo < q->op[i].hi[o]) {
                    *thread = t;
                    found = 1;
                }
    }
    TSAN_IGNORE_END();
    return found;
}

int simt_tma_first_fill(uint32_t lo, uint32_t hi)
{
    worker *w = cur_worker;
    if (!w || !simt_cur_thread) return 0;
    int seen = 0;
    TSAN_IGNORE_BEGIN();
    for (int i = 0; i < w->ntma_filled && !seen; i++)
        if (w->tma_filled[i][0] < hi && lo < w->tma_filled[i][1]) seen = 1;
    if (!seen) {
        if (w->ntma_filled < TMA_FILLED_MAX) {
            w->tma_filled[w->ntma_filled][0] = lo;
            w->tma_filled[w->ntma_filled][1] = hi;
            w->ntma_filled++;
        } else {
            seen = 1; /* the table is full: claim nothing */
        }
    }
    TSAN_IGNORE_END();
    return !seen;
}

/* --- thread start and end ------------------------------------------------ */

static void thread_exit(fiber *self)
{
    worker *w = self->w;
    /* Copies still in flight at exit land anyway, as on the GPU. */
    for (int i = 0; i < self->cp_count; i++) {
        cp_do(&self->cp[i]);
        pend_note(w, self->cp[i].dst, -1);
    }
    w->cp_pending -= (unsigned int)self->cp_count;
    self->cp_count = 0;
    self->state = ST_DONE;
    w->live--;
    TSAN_RELEASE(&w->tsan_block_end);
    if (w->bar_count > 0 && w->bar_count == w->live) barrier_release(w);
    unsigned int warp = self->info.warp, lanes = warp_lanes(w, warp);
    for (unsigned int l = 0; l < 32 && w->warp_waiting[warp]; l++) {
        fiber *f = &w->fibers[warp * 32 + l];
        if ((lanes >> l & 1) && f->state == ST_WARP) warp_try_complete(w, warp, f->wmask);
    }
    /* A group collective waiting only for this thread completes without it.
     * wgmma results that were never waited for are lost, as on the GPU. */
    if (self->wgq) self->wgq->count = 0;
    for (unsigned int size = 32; w->group_waiting && size <= MAX_GROUP; size += 32) {
        unsigned int first = self->info.linear / size * size;
        for (unsigned int i = first; i < first + size && i < w->nthreads; i++)
            if (w->fibers[i].state == ST_GROUP && w->fibers[i].gsize == size) {
                group_try_complete(w, first, size);
                break;
            }
    }
}

static void fiber_entry(void)
{
    fiber *self = cur_fiber;
    worker *w = self->w;
#ifdef SIMT_ASAN
    {
        const void *bottom;
        size_t size;
        __sanitizer_finish_switch_fiber(NULL, &bottom, &size);
        if (w->switch_from == &w->main) {
            w->main_bottom = bottom;
            w->main_size = size;
        }
    }
#endif
    simt_cur_thread = &self->info;
    TSAN_ACQUIRE(&w->tsan_block_start);
    w->L->body(w->L->ctx);
    thread_exit(self);
    schedule_next(self, 1);
    abort(); /* a finished fiber is never resumed */
}

static void abort_current(void)
{
    fiber *self = cur_fiber;
    worker *w = self->w;
    w->aborted = 1;
    switch_to(self, &w->main, 1);
    abort();
}

void simt_trap(void)
{
    simt_fail("__trap()");
}

void simt_assert_fail(const char *expr, const char *file, int line, const char *func)
{
    if (!simt_cur_thread || !cur_fiber) {
        fprintf(stderr, "%s:%d: %s: Assertion `%s' failed.\n", file, line, func, expr);
        abort();
    }
    /* The same message a GPU prints for a failed device assert. */
    fprintf(stderr, "%s:%d: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file, line,
            func, simt_cur_block.block_idx.x, simt_cur_block.block_idx.y, simt_cur_block.block_idx.z,
            simt_cur_thread->thread_idx.x, simt_cur_thread->thread_idx.y, simt_cur_thread->thread_idx.z, expr);
    simt_set_fault(cudaErrorAssert);
    abort_current();
}

/* assert() in a kernel: glibc's assert calls __assert_fail, and a definition
 * in the program takes precedence over the C library's. Inside a kernel it
 * fails the launch with cudaErrorAssert, as a device assert does; in host
 * code it behaves as glibc's does (message, then abort). */
void __assert_fail(const char *expr, const char *file, unsigned int line, const char *func)
    __attribute__((noreturn));
void __assert_fail(const char *expr, const char *file, unsigned int line, const char *func)
{
    if (simt_cur_thread && cur_fiber) simt_assert_fail(expr, file, (int)line, func);
    fflush(stdout);
    fprintf(stderr, "%s: %s:%u: %s: Assertion `%s' failed.\n", program_invocation_short_name, file, line, func,
            expr);
    abort();
}

/* --- workers ------------------------------------------------------------- */

static int worker_reserve(worker *w, unsigned int n)
{
    if (n <= w->nfibers) return 0;
    fiber *nf = realloc(w->fibers, n * sizeof(fiber));
    if (!nf) return -1;
    w->fibers = nf;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), size = stack_bytes();
    for (unsigned int i = w->nfibers; i < n; i++) {
        fiber *f = &w->fibers[i];
        memset(f, 0, sizeof(*f));
        /* A guard page below each stack turns an overflow into a crash. */
        char *m = mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (m == MAP_FAILED) return -1;
        mprotect(m, page, PROT_NONE);
        f->stack = m + page;
        f->stack_size = size;
#ifdef SIMT_TSAN
        f->tsan_fiber = __tsan_create_fiber(0);
#endif
        w->nfibers = i + 1;
    }
    return 0;
}

static void run_block(worker *w, unsigned long b)
{
    launch *L = w->L;
    simt_cur_block.block_idx.x = (unsigned int)(b % L->grid.x);
    simt_cur_block.block_idx.y = (unsigned int)(b / L->grid.x % L->grid.y);
    simt_cur_block.block_idx.z = (unsigned int)(b / ((unsigned long)L->grid.x * L->grid.y));
    unsigned int n = L->block.x * L->block.y * L->block.z;
    w->nthreads = n;
    w->live = n;
    w->bar_count = 0;
    w->bar_gen = 0;
    w->bar_file = NULL;
    w->streak_warp = 0;
    w->warp_streak = 0;
    w->aborted = 0;
    memset(w->warp_gen, 0, sizeof(w->warp_gen));
    memset(w->group_gen, 0, sizeof(w->group_gen));
    w->group_waiting = 0;
    memset(w->warp_waiting, 0, sizeof(w->warp_waiting));
    w->ntma = 0; /* copies a finished block never waited for are dropped */
    w->nshared_seen = 0;
    w->shared_static = 0;
    pend_reset(w);
    w->nbreads = 0;
    w->ntma_filled = 0;
    for (unsigned int i = 0; i < n; i++) {
        fiber *f = &w->fibers[i];
        f->info.thread_idx.x = i % L->block.x;
        f->info.thread_idx.y = i / L->block.x % L->block.y;
        f->info.thread_idx.z = i / (L->block.x * L->block.y);
        f->info.linear = i;
        f->info.lane = i % 32;
        f->info.warp = i / 32;
        f->state = ST_READY;
        f->cp_count = 0;
        f->cp_groups = 0;
        if (f->wgq) f->wgq->count = f->wgq->groups = f->wgq->fenced = 0, f->wgq->issued = f->wgq->done = 0;
        f->ntaint = 0;
        memset(f->known, 0, sizeof(f->known));
        f->asan_fake = NULL;
        f->w = w;
#ifdef SIMT_TSAN
        snprintf(f->tsan_name, sizeof(f->tsan_name), "block (%u,%u,%u) thread (%u,%u,%u)", simt_cur_block.block_idx.x,
                 simt_cur_block.block_idx.y, simt_cur_block.block_idx.z, f->info.thread_idx.x, f->info.thread_idx.y,
                 f->info.thread_idx.z);
        __tsan_set_fiber_name(f->tsan_fiber, f->tsan_name);
#endif
        fiber_prepare(f);
    }
    TSAN_RELEASE(&w->tsan_block_start);
    /* Even blocks start with warp 0, odd ones with the last warp (then warp
     * 0, 1, ...): a warp that reads, without a barrier, what another warp
     * writes finds it unwritten in one block or the other, whichever warp
     * writes. */
    unsigned int first = (b % 2 == 1 && n > 32) ? (n - 1) / 32 * 32 : 0;
    simt_memtrace_block_begin(n);
    switch_to(&w->main, &w->fibers[first], 0);
    TSAN_ACQUIRE(&w->tsan_block_end);
    simt_memtrace_block_end(w->aborted);
    if (w->aborted) {
        atomic_store(&L->abort, 1);
#ifdef SIMT_TSAN
        /* The threads a failure left behind never reached thread_exit's
         * release, so TSan would see their accesses as racing with what the
         * host does next (freeing shared memory, the next launch's
         * arguments). A synchronising switch into each and back orders them
         * (no code runs in between: it is TSan's bookkeeping only). */
        for (unsigned int i = 0; i < n; i++)
            if (w->fibers[i].state != ST_DONE && w->fibers[i].tsan_fiber) {
                __tsan_switch_to_fiber(w->fibers[i].tsan_fiber, 0);
                __tsan_switch_to_fiber(w->main.tsan_fiber, 0);
            }
#endif
#ifdef SIMT_ASAN
        /* Abandoned fibers leave poisoned frames on their stacks. */
        for (unsigned int i = 0; i < n; i++) __asan_unpoison_memory_region(w->fibers[i].stack, w->fibers[i].stack_size);
#endif
    }
}

/* --- Faults ----------------------------------------------------------------
 * A kernel that touches memory nothing maps (an index far past an array, a
 * pointer never set, a host pointer) gets "an illegal memory access" on a
 * GPU. Here the CPU raises SIGSEGV (or SIGBUS), and the process died with
 * no word of where, or, inside a test runner that catches signals, with
 * its longjmp out of a fiber. While a grid runs, the handler below turns a
 * fault in a kernel's thread into the launch's cudaErrorIllegalAddress,
 * with the kernel's line, as the other checks do; a thread that overflows
 * its stack (the guard page below each fiber's) is named as such. It runs
 * on a stack of its own, as the thread's stack may be what overflowed.
 * Faults outside a kernel's thread go to the handler that was there before
 * the launch (a test runner's, or the default). The sanitizer builds keep
 * their own handlers, which already report the line.
 * The handler formats the message and runs addr2line (popen), which a
 * signal handler may not in general: a fault inside malloc or stdio could
 * find their locks held. A fault in a kernel's own code holds none of
 * them, and the alternative is a death with no word of where. */
#if !defined(SIMT_ASAN) && !defined(SIMT_TSAN)
enum { ALT_STACK_BYTES = 128 * 1024 };
static struct sigaction prev_segv, prev_bus;

/* The kernel's line for a fault at pc: pc's own when it is in a .cu file,
 * else (a library function the kernel called, memset or memcpy) the first
 * caller that is, found by unwinding from here. */
static void fault_line(uintptr_t pc, char *out, size_t n)
{
    simt_source_line(pc + 1, out, n); /* it looks up the byte before a return address */
    if (strstr(out, ".cu:")) return;
    void *frames[24];
    int k = backtrace(frames, 24);
    for (int i = 0; i < k; i++) {
        char l[160];
        simt_source_line((uintptr_t)frames[i], l, sizeof l);
        if (strstr(l, ".cu:")) {
            char lib[160];
            snprintf(lib, sizeof lib, "%.150s", out);
            snprintf(out, n, "%.160s, in %.150s", l, lib);
            return;
        }
    }
}

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
    worker *w = cur_worker;
    fiber *f = cur_fiber;
    if (simt_cur_thread && f && w && f != &w->main) {
        uintptr_t pc = 0, sp = 0;
        const ucontext_t *uc = ucv;
#if defined(__x86_64__)
        pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
        sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
        pc = (uintptr_t)uc->uc_mcontext.pc;
        sp = (uintptr_t)uc->uc_mcontext.sp;
#endif
        char line[400];
        fault_line(pc, line, sizeof line);
        /* Past the bottom of the thread's stack: its frame, or the guard
         * page below the stack that a large frame's first write hit. */
        const uintptr_t a = (uintptr_t)si->si_addr, bottom = (uintptr_t)f->stack;
        const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        const uintptr_t dyn = (uintptr_t)simt_cur_block.dyn_shared, dyn_end = dyn + simt_cur_block.dyn_shared_size;
        if (dyn && a >= dyn_end && a < dyn_end + 128 + page)
            fail_code(cudaErrorIllegalAddress,
                      "an access %zu bytes past the end of the block's dynamic shared memory (%zu bytes, the "
                      "launch's third <<< >>> argument), at %s: an index past the last tile, or a tile larger "
                      "than the bytes launched",
                      (size_t)(a - dyn_end), simt_cur_block.dyn_shared_size, line);
        if ((sp && sp < bottom) || (a < bottom && a + page >= bottom))
            fail_code(cudaErrorIllegalAddress,
                      "a thread's stack overflowed, at %s: its local variables (and the calls it makes) take more "
                      "than the %zu KB each emulated thread has; large local arrays belong in shared memory, or "
                      "raise SIMT_STACK_KB",
                      line, f->stack_size / 1024);
        if (simt_in_freed(si->si_addr, 1))
            fail_code(cudaErrorIllegalAddress,
                      "%s at address %p, at %s: device memory that cudaFree freed (a pointer used after its "
                      "cudaFree), an illegal memory access on a GPU, or a read of whatever buffer took its place",
                      sig == SIGBUS ? "bus error" : "segmentation fault", si->si_addr, line);
        /* An address past the top of the address space (an index some
         * terabytes out) raises a general-protection fault, which comes
         * with no address. */
        if (si->si_code == SI_KERNEL && !si->si_addr)
            fail_code(cudaErrorIllegalAddress,
                      "%s at %s: an address outside the address space, an illegal memory access on a GPU (an "
                      "index far past an array, a pointer never set, or a garbage offset)",
                      sig == SIGBUS ? "bus error" : "segmentation fault", line);
        fail_code(cudaErrorIllegalAddress,
                  "%s at address %p, at %s: no allocation holds that address, an illegal memory access on a "
                  "GPU (an index far past an array, a pointer never set, or a host pointer passed to a kernel)",
                  sig == SIGBUS ? "bus error" : "segmentation fault", si->si_addr, line);
    }
    const struct sigaction *p = sig == SIGBUS ? &prev_bus : &prev_segv;
    if ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction) {
        p->sa_sigaction(sig, si, ucv);
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
    } else {
        sigaction(sig, p, NULL); /* returning repeats the access, which now ends the process as before */
    }
}

/* Around a grid, on the launching thread: process-wide, so the workers'
 * faults come here too. */
static void fault_handler_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fault;
    sigemptyset(&sa.sa_mask);
    /* SA_NODEFER: the handler leaves by a context switch, not a return, so
     * the signal must not stay blocked on this thread. */
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    /* backtrace loads its unwinder on first use: here, not in the handler. */
    static int warm;
    if (!warm) {
        void *frame[1];
        backtrace(frame, 1);
        warm = 1;
    }
    sigaction(SIGSEGV, &sa, &prev_segv);
    sigaction(SIGBUS, &sa, &prev_bus);
}

static void fault_handler_remove(void)
{
    sigaction(SIGSEGV, &prev_segv, NULL);
    sigaction(SIGBUS, &prev_bus, NULL);
}

/* Each worker thread's alternate signal stack, for the run of a grid;
 * old receives the thread's earlier one, put back by alt_stack_leave. */
static void alt_stack_enter(worker *w, stack_t *old)
{
    old->ss_flags = SS_DISABLE;
    if (!w->alt_stack && !(w->alt_stack = malloc(ALT_STACK_BYTES))) return;
    stack_t st = {.ss_sp = w->alt_stack, .ss_size = ALT_STACK_BYTES, .ss_flags = 0};
    sigaltstack(&st, old);
}

static void alt_stack_leave(const stack_t *old)
{
    stack_t off = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
    sigaltstack(old->ss_flags & SS_DISABLE ? &off : old, NULL);
}
#else
static void fault_handler_install(void) {}
static void fault_handler_remove(void) {}
static void alt_stack_enter(worker *w, stack_t *old) { (void)w; (void)old; }
static void alt_stack_leave(const stack_t *old) { (void)old; }
#endif

/* Dynamic shared memory, 128-byte aligned, more than any vector access
 * needs. Under ASan it is a heap block of exactly the launch's size, so
 * ASan sees accesses past its end. Otherwise it ends where a guard page
 * begins (to within the 127 bytes that the alignment leaves), so a store
 * past the last tile faults at once, and the fault handler names the line,
 * instead of writing the emulator's heap; the mapping is kept for the
 * worker's next launch. NULL when it cannot be had. */
static void *dyn_shared_get(worker *w, size_t n)
{
#ifdef SIMT_ASAN
    (void)w;
    void *p = NULL;
    return posix_memalign(&p, 128, n) == 0 ? p : NULL;
#else
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), body = (n + page - 1) / page * page;
    if (w->dyn_map && w->dyn_map_body != body) {
        munmap(w->dyn_map, w->dyn_map_body + page);
        w->dyn_map = NULL;
    }
    if (!w->dyn_map) {
        char *m = mmap(NULL, body + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        if (mprotect(m + body, page, PROT_NONE) != 0) {
            munmap(m, body + page);
            return NULL;
        }
        w->dyn_map = m;
        w->dyn_map_body = body;
    }
    return w->dyn_map + body - (n + 127) / 128 * 128;
#endif
}

static void dyn_shared_put(void *p)
{
#ifdef SIMT_ASAN
    free(p);
#else
    (void)p; /* kept in the worker */
#endif
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    launch *L = w->L;
    void *dyn = NULL;
    /* Not cleared, as on a GPU: each block starts from 0xff bytes (NaN as
     * float, bf16 and fp16; -1 as an integer), so a kernel that reads what
     * it never wrote (padding it forgot to zero) gets NaN every time, not
     * zeros by luck. */
    if (L->shmem && !(dyn = dyn_shared_get(w, L->shmem))) {
        simt_set_fault(cudaErrorLaunchOutOfResources);
        return NULL;
    }
    simt_cur_block.block_dim = L->block;
    simt_cur_block.grid_dim = L->grid;
    simt_cur_block.dyn_shared = dyn;
    simt_cur_block.dyn_shared_size = L->shmem;
    cur_worker = w;
    w->main.w = w;
    cur_fiber = &w->main;
#ifdef SIMT_TSAN
    w->main.tsan_fiber = __tsan_get_current_fiber();
#endif
    stack_t old_alt;
    alt_stack_enter(w, &old_alt);
    for (;;) {
        if (atomic_load(&L->abort)) break;
        unsigned long b = atomic_fetch_add(&L->next_block, 1);
        if (b >= L->nblocks) break;
        if (dyn) memset(dyn, 0xff, L->shmem);
        run_block(w, b);
    }
    alt_stack_leave(&old_alt);
    cur_fiber = NULL;
    cur_worker = NULL;
    simt_memtrace_worker_end();
    simt_cur_block.dyn_shared = NULL;
    simt_cur_block.dyn_shared_size = 0;
    dyn_shared_put(dyn);
    return NULL;
}

static unsigned int worker_count(unsigned long nblocks)
{
    /* One per core, at most 16 by default: each worker keeps up to 1024
     * fiber stacks mapped (two mappings each, with the guard page), and the
     * kernel's limit on mappings per process is about 65000. */
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n > 16) n = 16;
    const char *e = getenv("SIMT_WORKERS");
    if (e && atoi(e) > 0) n = atoi(e);
    if (n < 1) n = 1;
    if (n > 64) n = 64;
    if ((unsigned long)n > nblocks) n = (long)nblocks;
    return (unsigned int)n;
}

static worker workers[64];
static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;

cudaError_t simt_run_grid(dim3 grid, dim3 block, size_t shmem, size_t shared_limit, void (*body)(void *), void *ctx)
{
    launch L;
    memset(&L, 0, sizeof(L));
    L.grid = grid;
    L.block = block;
    L.shmem = shmem;
    L.shared_limit = shared_limit;
    L.body = body;
    L.ctx = ctx;
    L.nblocks = (unsigned long)grid.x * grid.y * grid.z;
    atomic_init(&L.next_block, 0);
    atomic_init(&L.abort, 0);
    unsigned int nthreads = block.x * block.y * block.z;
    unsigned int nw = worker_count(L.nblocks);

    /* One launch at a time: kernels are synchronous, as on the null stream. */
    pthread_mutex_lock(&launch_lock);
    fault_handler_install();
    for (unsigned int i = 0; i < nw; i++) {
        if (worker_reserve(&workers[i], nthreads) != 0) {
            fault_handler_remove();
            pthread_mutex_unlock(&launch_lock);
            return cudaErrorMemoryAllocation;
        }
        workers[i].L = &L;
    }
    if (nw == 1) {
        /* Run on the calling thread: gdb then sees kernels on the main thread. */
        simt_block_info saved = simt_cur_block;
        worker_main(&workers[0]);
        simt_cur_block = saved;
    } else {
        pthread_t tids[64];
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 16u << 20); /* room for large __shared__ arrays in TLS */
        unsigned int started = 0;
        for (unsigned int i = 1; i < nw; i++) {
            if (pthread_create(&tids[i], &attr, worker_main, &workers[i]) != 0) break;
            started = i;
        }
        pthread_attr_destroy(&attr);
        simt_block_info saved = simt_cur_block;
        worker_main(&workers[0]);
        simt_cur_block = saved;
        for (unsigned int i = 1; i <= started; i++) pthread_join(tids[i], NULL);
    }
    fault_handler_remove();
    pthread_mutex_unlock(&launch_lock);
    cudaError_t refused = (cudaError_t)atomic_exchange(&launch_refused, 0);
    cudaError_t fault = simt_get_fault();
    return fault != cudaSuccess ? fault : refused;
}

int simt_in_kernel(void)
{
    return simt_cur_thread != NULL;
}
