/*
 * SIMT emulator: what a .cu file sees when built for the CPU.
 * simtcc includes this first in every .cu file, as nvcc does with the
 * toolkit's cuda_runtime.h. It turns CUDA's keywords into C++ (a kernel is an
 * ordinary function; __shared__ is per-OS-thread storage, and one OS thread
 * runs one block at a time), and gives the device built-ins: threadIdx and
 * friends, barriers, warp shuffles and votes, atomics, math intrinsics, and
 * the launch that kernel<<<grid, block, shmem, stream>>>(args) is rewritten
 * into. C files include cuda_runtime_api.h instead.
 * Not here: textures, surfaces, dynamic parallelism; cooperative groups are
 * in cooperative_groups.h, on top of the warp intrinsics here.
 */
#ifndef SIMT_CUDA_RUNTIME_H
#define SIMT_CUDA_RUNTIME_H

#include "cuda_runtime_api.h"

#ifdef __cplusplus

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "simt_abi.h"

/** The emulator's own combine steps (the warp-wide part of an mma or
 *  ldmatrix) index small local arrays by lane, and run once per warp
 *  instruction: simtcc's bounds and alignment checks, there to catch the
 *  kernel's own mistakes, only slow them down (a check on every index of
 *  their inner loops). The memory a kernel names is still checked where
 *  the instruction takes it (simt_check_aligned). */
/** The emulator's own stand-ins for warp-wide memory instructions (wmma's
 *  loads and stores): their per-lane loops are not the hardware's access
 *  pattern, so `simtcc --memtrace` (which defines __SIMT_MEMTRACE__ and
 *  traces through the thread sanitizer's calls) leaves them out of its
 *  counts (simt_memtrace.h), as it leaves out the combine steps above. A
 *  real TSan build (SANITIZE=thread) keeps checking them for races. */
#ifdef __SIMT_MEMTRACE__
#define SIMT_COMBINE_STEP __attribute__((no_sanitize("bounds", "alignment", "thread")))
#define SIMT_UNTRACED __attribute__((no_sanitize("thread")))
#else
#define SIMT_COMBINE_STEP __attribute__((no_sanitize("bounds", "alignment")))
#define SIMT_UNTRACED
#endif

/** simtcc's rewrite puts these around each host function of a .cu file.
 *  nvcc gives its host compiler the host functions only (kernels and
 *  __device__ functions are stripped), so the course's
 *  -Xcompiler -Wall,-Wextra,-Werror applies to host code alone; with
 *  SIMT_HOST_WERROR (a lab's emulated build) g++ treats the same host code
 *  the same way, and the kernels, which g++ sees here and nvcc's host
 *  compiler never does, keep their usual warnings. The warnings that hang
 *  on what the optimiser inlines (and the emulator's runtime is not the
 *  toolkit's) stay warnings, so that no correct file fails here alone.
 *  In every build they allow variable-length arrays again: nvcc accepts
 *  one in host code and refuses one in device code ("expression must have
 *  a constant value"), so simtcc compiles a .cu file with -Werror=vla. */
#ifdef SIMT_HOST_WERROR
#define SIMT_HOST_CODE_BEGIN                                                                         \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wvla\"")                       \
        _Pragma("GCC diagnostic error \"-Wall\"") _Pragma("GCC diagnostic error \"-Wextra\"")         \
            _Pragma("GCC diagnostic warning \"-Wmaybe-uninitialized\"")                             \
                _Pragma("GCC diagnostic warning \"-Warray-bounds\"")                                \
                    _Pragma("GCC diagnostic warning \"-Wstringop-overflow\"")                       \
                        _Pragma("GCC diagnostic warning \"-Wstringop-overread\"")
#else
#define SIMT_HOST_CODE_BEGIN _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wvla\"")
#endif
#define SIMT_HOST_CODE_END _Pragma("GCC diagnostic pop")

/* --- keywords ------------------------------------------------------------ */

#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __cluster_dims__(...)
/* A function-local static per OS thread: the blocks running at the same time
 * are on different OS threads, and a block's threads (fibers) share one. */
#define __shared__ static thread_local

/* --- built-in variables ---------------------------------------------------- */

#define threadIdx (simt_cur_thread->thread_idx)
#define blockIdx (simt_cur_block.block_idx)
#define blockDim (simt_cur_block.block_dim)
#define gridDim (simt_cur_block.grid_dim)
static constexpr int warpSize = 32;

/** @brief Base of this block's extern __shared__ memory (the rewriter points
 *  extern __shared__ arrays here). @return the pointer. */
static inline void *simt_dynamic_shared(void) { return simt_cur_block.dyn_shared; }

/** @brief The shared-memory address of a pointer into the block's shared
 *  memory (its extern __shared__ memory or a __shared__ variable), or one
 *  past the end of either (see simt_shared_addr). @param p the pointer.
 *  @return the address. */
static inline size_t __cvta_generic_to_shared(const void *p) { return simt_shared_addr(p); }

/* --- synchronisation ------------------------------------------------------- */

/* Each barrier passes the line it is written on (the default arguments are
 * evaluated where it is called): bar.sync is .aligned, so every thread of
 * the block must wait at the same one, and the runtime checks that they do.
 * A line, not a code address: g++ may copy a call into two paths of the
 * code (jump threading, unswitching) where nvcc keeps one bar.sync. */
static inline void __syncthreads(const char *simt_file = __builtin_FILE(), int simt_line = __builtin_LINE())
{ simt_syncthreads_at(0, 0, simt_file, simt_line); }
static inline int __syncthreads_count(int p, const char *simt_file = __builtin_FILE(), int simt_line = __builtin_LINE())
{ return simt_syncthreads_at(p, 1, simt_file, simt_line); }
static inline int __syncthreads_and(int p, const char *simt_file = __builtin_FILE(), int simt_line = __builtin_LINE())
{ return simt_syncthreads_at(p, 2, simt_file, simt_line); }
static inline int __syncthreads_or(int p, const char *simt_file = __builtin_FILE(), int simt_line = __builtin_LINE())
{ return simt_syncthreads_at(p, 3, simt_file, simt_line); }
static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
[[noreturn]] static inline void __trap(void) { simt_trap(); }
/* nvcc's __builtin_assume(e): the compiler may take e to be true, so code
 * that reaches it with e false is undefined. g++ has no such builtin; here
 * a false e stops the launch with its text and line. Unlike nvcc, this
 * evaluates e: keep side effects out of it (nvcc drops them). */
#if !defined(__clang__)
#define __builtin_assume(e)                                                                                           \
    ((e) ? (void)0                                                                                                     \
         : simt_fail("__builtin_assume(%s) at %s:%d is false: nvcc compiles the code after it as if it were true, so " \
                     "on a GPU what follows is undefined",                                                             \
                     #e, __FILE__, __LINE__))
#endif
static inline void __nanosleep(unsigned int) {}
/* A cycle-like counter; emulated code has no meaningful cycle counts. */
static inline long long clock64(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#include "simt_ptx.h"

/* --- warp collectives -------------------------------------------------------- */

namespace simt {

/* One lane's part in a shuffle: its value in, the source it wants, the result out. */
struct ShflArg {
    uint64_t value;
    int mode; /* 0 idx, 1 up, 2 down, 3 xor */
    int arg;
    int width;
    uint64_t result;
};

static inline void shfl_combine(void *const *a, unsigned int present)
{
    for (int l = 0; l < 32; l++) {
        if (!(present >> l & 1)) continue;
        ShflArg *s = (ShflArg *)a[l];
        int w = s->width, seg = l & ~(w - 1), src = l;
        switch (s->mode) {
        case 0: src = seg + (s->arg & (w - 1)); break;
        case 1: src = ((l & (w - 1)) - s->arg < 0) ? l : l - s->arg; break;
        case 2: src = ((l & (w - 1)) + s->arg >= w) ? l : l + s->arg; break;
        default: src = l ^ s->arg; if ((src & ~(w - 1)) > seg) src = l; break;
        }
        /* Reading from a lane that is not taking part is undefined in CUDA;
         * here it returns the caller's own value. */
        ShflArg *from = (src >= 0 && src < 32 && (present >> src & 1)) ? (ShflArg *)a[src] : s;
        s->result = from->value;
    }
}

template <class T> static inline T shfl(unsigned int mask, T var, int mode, int arg, int width)
{
    static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
    ShflArg s{};
    memcpy(&s.value, &var, sizeof(T));
    s.mode = mode;
    s.arg = arg & 31; /* the hardware reads b[4:0] only (PTX ISA, shfl.sync: "bval[4:0] = b[4:0]") */
    s.width = (width >= 1 && width <= 32 && (width & (width - 1)) == 0) ? width : 32;
    simt_warp_collective(mask, &s, shfl_combine);
    T r;
    memcpy(&r, &s.result, sizeof(T));
    return r;
}

/* Votes and reductions: each lane brings a 64-bit value, all get the result. */
struct VoteArg {
    long long value;
    int op;
    long long result;
};

static inline void vote_combine(void *const *a, unsigned int present)
{
    int op = -1;
    long long acc = 0;
    unsigned int bal = 0, first = 1;
    for (int l = 0; l < 32; l++) {
        if (!(present >> l & 1)) continue;
        VoteArg *v = (VoteArg *)a[l];
        op = v->op;
        if (v->value) bal |= 1u << l;
        long long x = v->value;
        if (first) { acc = x; first = 0; continue; }
        switch (op) {
        case 4: acc += x; break;                               /* add */
        case 5: acc = (unsigned)x < (unsigned)acc ? x : acc; break; /* umin */
        case 6: acc = (unsigned)x > (unsigned)acc ? x : acc; break; /* umax */
        case 7: acc = (int)x < (int)acc ? x : acc; break;      /* min */
        case 8: acc = (int)x > (int)acc ? x : acc; break;      /* max */
        case 9: acc &= x; break;
        case 10: acc |= x; break;
        case 11: acc ^= x; break;
        default: break;
        }
    }
    long long res;
    switch (op) {
    case 0: res = bal; break;                  /* ballot */
    case 1: res = bal != 0; break;             /* any */
    case 2: res = bal == present; break;       /* all */
    default: res = acc; break;
    }
    for (int l = 0; l < 32; l++)
        if (present >> l & 1) ((VoteArg *)a[l])->result = res;
}

static inline long long vote(unsigned int mask, long long value, int op)
{
    VoteArg v{value, op, 0};
    simt_warp_collective(mask, &v, vote_combine);
    return v.result;
}

/* __match_any_sync: lanes with equal values. */
struct MatchArg {
    uint64_t value;
    unsigned int result;
    int all;
};

static inline void match_combine(void *const *a, unsigned int present)
{
    for (int l = 0; l < 32; l++) {
        if (!(present >> l & 1)) continue;
        MatchArg *m = (MatchArg *)a[l];
        unsigned int same = 0;
        for (int k = 0; k < 32; k++)
            if ((present >> k & 1) && ((MatchArg *)a[k])->value == m->value) same |= 1u << k;
        m->result = same;
        m->all = same == present;
    }
}

static inline void nop_combine(void *const *, unsigned int) {}

} // namespace simt

static inline void __syncwarp(unsigned int mask = 0xffffffffu) { simt_warp_collective(mask, nullptr, simt::nop_combine); }
static inline unsigned int __activemask(void) { return simt_active_mask(); }
template <class T> static inline T __shfl_sync(unsigned int mask, T var, int src, int width = 32)
{ return simt::shfl(mask, var, 0, src, width); }
template <class T> static inline T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32)
{ return simt::shfl(mask, var, 1, (int)delta, width); }
template <class T> static inline T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32)
{ return simt::shfl(mask, var, 2, (int)delta, width); }
template <class T> static inline T __shfl_xor_sync(unsigned int mask, T var, int lane_mask, int width = 32)
{ return simt::shfl(mask, var, 3, lane_mask, width); }
static inline unsigned int __ballot_sync(unsigned int mask, int pred) { return (unsigned int)simt::vote(mask, pred != 0, 0); }
static inline int __any_sync(unsigned int mask, int pred) { return (int)simt::vote(mask, pred != 0, 1); }
static inline int __all_sync(unsigned int mask, int pred) { return (int)simt::vote(mask, pred != 0, 2); }
static inline unsigned int __reduce_add_sync(unsigned int mask, unsigned int v) { return (unsigned int)simt::vote(mask, v, 4); }
static inline unsigned int __reduce_min_sync(unsigned int mask, unsigned int v) { return (unsigned int)simt::vote(mask, v, 5); }
static inline unsigned int __reduce_max_sync(unsigned int mask, unsigned int v) { return (unsigned int)simt::vote(mask, v, 6); }
static inline int __reduce_add_sync(unsigned int mask, int v) { return (int)simt::vote(mask, v, 4); }
static inline int __reduce_min_sync(unsigned int mask, int v) { return (int)simt::vote(mask, v, 7); }
static inline int __reduce_max_sync(unsigned int mask, int v) { return (int)simt::vote(mask, v, 8); }
static inline unsigned int __reduce_and_sync(unsigned int mask, unsigned int v) { return (unsigned int)simt::vote(mask, v, 9); }
static inline unsigned int __reduce_or_sync(unsigned int mask, unsigned int v) { return (unsigned int)simt::vote(mask, v, 10); }
static inline unsigned int __reduce_xor_sync(unsigned int mask, unsigned int v) { return (unsigned int)simt::vote(mask, v, 11); }
template <class T> static inline unsigned int __match_any_sync(unsigned int mask, T value)
{
    simt::MatchArg m{};
    memcpy(&m.value, &value, sizeof(T) < 8 ? sizeof(T) : 8);
    simt_warp_collective(mask, &m, simt::match_combine);
    return m.result;
}
template <class T> static inline unsigned int __match_all_sync(unsigned int mask, T value, int *pred)
{
    simt::MatchArg m{};
    memcpy(&m.value, &value, sizeof(T) < 8 ? sizeof(T) : 8);
    simt_warp_collective(mask, &m, simt::match_combine);
    *pred = m.all;
    return m.all ? m.result : 0;
}

/* --- atomics --------------------------------------------------------------- */
/* Sequentially consistent, so ThreadSanitizer sees the ordering that code
 * built on __threadfence relies on (it does not model fences). */

/* The overloads CUDA has, and no more: a call nvcc would not compile (an
 * atomicMax on a float, an atomicAdd on a long long) must not compile here
 * either. Add, Exch, CAS, And, Or, Xor: int, unsigned int, unsigned long
 * long; Sub: int, unsigned int; Min, Max: those and long long. The atomicAdd
 * of __half, __nv_bfloat16 and their pairs is in simt_half_ops.inc. */
#define SIMT_ATOMIC_RMW(T)                                                                                    \
    static inline T atomicAdd(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }               \
    static inline T atomicExch(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }             \
    static inline T atomicAnd(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }               \
    static inline T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }                 \
    static inline T atomicXor(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }               \
    static inline T atomicCAS(T *p, T cmp, T v)                                                               \
    {                                                                                                         \
        __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                   \
        return cmp;                                                                                           \
    }
#define SIMT_ATOMIC_MINMAX(T)                                                                                 \
    static inline T atomicMax(T *p, T v)                                                                      \
    {                                                                                                         \
        T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                                         \
        while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) \
            ;                                                                                                 \
        return old;                                                                                           \
    }                                                                                                         \
    static inline T atomicMin(T *p, T v)                                                                      \
    {                                                                                                         \
        T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                                         \
        while (old > v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) \
            ;                                                                                                 \
        return old;                                                                                           \
    }

SIMT_ATOMIC_RMW(int)
SIMT_ATOMIC_RMW(unsigned int)
SIMT_ATOMIC_RMW(unsigned long long)
SIMT_ATOMIC_MINMAX(int)
SIMT_ATOMIC_MINMAX(unsigned int)
SIMT_ATOMIC_MINMAX(unsigned long long)
SIMT_ATOMIC_MINMAX(long long)
#undef SIMT_ATOMIC_RMW
#undef SIMT_ATOMIC_MINMAX
static inline int atomicSub(int *p, int v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned int atomicSub(unsigned int *p, unsigned int v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }

static inline unsigned short atomicCAS(unsigned short *p, unsigned short cmp, unsigned short v)
{
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;
}

static inline unsigned int atomicInc(unsigned int *p, unsigned int limit)
{
    unsigned int old = __atomic_load_n(p, __ATOMIC_SEQ_CST), nv;
    do nv = (old >= limit) ? 0 : old + 1;
    while (!__atomic_compare_exchange_n(p, &old, nv, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return old;
}

static inline unsigned int atomicDec(unsigned int *p, unsigned int limit)
{
    unsigned int old = __atomic_load_n(p, __ATOMIC_SEQ_CST), nv;
    do nv = (old == 0 || old > limit) ? limit : old - 1;
    while (!__atomic_compare_exchange_n(p, &old, nv, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return old;
}

namespace simt {
/* Floating-point read-modify-write through a compare-and-swap on the bits. */
template <class F, class U, class Op> static inline F atomic_float_rmw(F *p, Op op)
{
    U *u = (U *)p;
    U old = __atomic_load_n(u, __ATOMIC_SEQ_CST), nv;
    F of, nf;
    do {
        memcpy(&of, &old, sizeof(F));
        nf = op(of);
        memcpy(&nv, &nf, sizeof(F));
    } while (!__atomic_compare_exchange_n(u, &old, nv, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return of;
}
} // namespace simt

namespace simt {
/* A subnormal float as the zero of its sign. */
static inline float flush_subnormal(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }
} // namespace simt

/* On global memory the GPU's float atomic add (atom.add.f32) flushes
 * subnormal inputs and its result to zero, whatever -ftz says; on shared
 * memory it keeps them. So here too: an atomicAdd of 1e-40f to a cudaMalloc'd
 * 0.0f, or to a __device__ variable, leaves 0, and to a __shared__ one
 * leaves 1e-40f. */
static inline float atomicAdd(float *p, float v)
{
    if (simt_in_shared(p)) return simt::atomic_float_rmw<float, uint32_t>(p, [v](float o) { return o + v; });
    const float fv = simt::flush_subnormal(v);
    return simt::atomic_float_rmw<float, uint32_t>(
        p, [fv](float o) { return simt::flush_subnormal(simt::flush_subnormal(o) + fv); });
}
static inline double atomicAdd(double *p, double v) { return simt::atomic_float_rmw<double, uint64_t>(p, [v](double o) { return o + v; }); }
/* float2 and float4 (sm_90): each element an atomic add of its own (not the
 * vector as a whole, as on the GPU), on global memory only, where the GPU
 * has the instruction; one on shared memory stops the kernel. */
namespace simt {
static inline void vector_atomic_on_global(const void *p)
{
    if (!simt_in_shared(p)) return;
    fprintf(stderr, "simt: atomicAdd of a float2 or float4 on shared memory: the GPU has this atomic for global "
                    "memory only (nvcc says \"Cannot do vector atomic on shared memory\" where it can tell); add "
                    "the elements one by one (atomicAdd on each float)\n");
    simt_trap();
}
} // namespace simt
static inline float2 atomicAdd(float2 *p, float2 v)
{
    simt::vector_atomic_on_global(p);
    return make_float2(atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y));
}
static inline float4 atomicAdd(float4 *p, float4 v)
{
    simt::vector_atomic_on_global(p);
    return make_float4(atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y), atomicAdd(&p->z, v.z), atomicAdd(&p->w, v.w));
}
static inline float atomicExch(float *p, float v) { return simt::atomic_float_rmw<float, uint32_t>(p, [v](float) { return v; }); }
/* No atomicMax or atomicMin on float or double: CUDA has none (for floats
 * of one sign, atomicMax on __float_as_int does it). */
/* The _block and _system scopes are the same thing on one CPU. */
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicCAS_block atomicCAS
#define atomicExch_block atomicExch
#define atomicMax_block atomicMax
#define atomicMin_block atomicMin

/* --- math and bit intrinsics ---------------------------------------------- */

/* glibc declares its own __expf, __sinf, ... (internal, unexported), so
 * CUDA's fast intrinsics are macros for functions of ours. */
static inline float simt_expf(float x) { return expf(x); }
static inline float simt_exp10f(float x) { return exp10f(x); }
static inline float simt_logf(float x) { return logf(x); }
static inline float simt_log2f(float x) { return log2f(x); }
static inline float simt_log10f(float x) { return log10f(x); }
static inline float simt_sinf(float x) { return sinf(x); }
static inline float simt_cosf(float x) { return cosf(x); }
static inline float simt_tanf(float x) { return tanf(x); }
static inline void simt_sincosf(float x, float *s, float *c) { *s = sinf(x); *c = cosf(x); }
static inline float simt_powf(float x, float y) { return powf(x, y); }
#define __expf simt_expf
#define __exp10f simt_exp10f
#define __logf simt_logf
#define __log2f simt_log2f
#define __log10f simt_log10f
#define __sinf simt_sinf
#define __cosf simt_cosf
#define __tanf simt_tanf
#define __sincosf simt_sincosf
#define __powf simt_powf
static inline float __fdividef(float x, float y) { return x / y; }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : (x == x ? x : 0.0f)); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline float sinpif(float x) { return sinf((float)M_PI * x); }
static inline float cospif(float x) { return cosf((float)M_PI * x); }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static inline void sincospif(float x, float *s, float *c) { *s = sinpif(x); *c = cospif(x); }
/* erfcinv: a start from Giles's single-precision approximation ("Approximating
 * the erfinv function", GPU Computing Gems, 2011), or in the far tail from
 * erfc's asymptotic form, then Newton's steps on log erfc in double, which
 * land within an ulp of a float for any float argument. */
static inline double simt_erfcinv(double y)
{
    if (!(y > 0 && y < 2)) return y == 0 ? INFINITY : y == 2 ? -INFINITY : NAN;
    if (y > 1) return -simt_erfcinv(2 - y);
    double r;
    if (y > 1e-3) {
        double x = 1 - y, w = -log(y * (2 - y)), p;
        if (w < 5) {
            w -= 2.5;
            p = 2.81022636e-08;
            p = 3.43273939e-07 + p * w, p = -3.5233877e-06 + p * w, p = -4.39150654e-06 + p * w;
            p = 0.00021858087 + p * w, p = -0.00125372503 + p * w, p = -0.00417768164 + p * w;
            p = 0.246640727 + p * w, p = 1.50140941 + p * w;
        } else {
            w = sqrt(w) - 3;
            p = -0.000200214257;
            p = 0.000100950558 + p * w, p = 0.00134934322 + p * w, p = -0.00367342844 + p * w;
            p = 0.00573950773 + p * w, p = -0.0076224613 + p * w, p = 0.00943887047 + p * w;
            p = 1.00167406 + p * w, p = 2.83297682 + p * w;
        }
        r = p * x;
    } else {
        double t = -log(y);
        r = sqrt(t - 0.5 * log(M_PI * t));
    }
    for (int i = 0; i < 6; i++) {
        double e = erfc(r);
        r += (log(e) - log(y)) * e / (2 / sqrt(M_PI) * exp(-r * r));
    }
    return r;
}
static inline float erfcinvf(float y) { return (float)simt_erfcinv(y); }
static inline double erfcinv(double y) { return simt_erfcinv(y); }
static inline float erfinvf(float y) { return (float)simt_erfcinv(1.0 - y); }
static inline double erfinv(double y) { return simt_erfcinv(1.0 - y); }
/* The standard normal's quantile: normcdf(x) = erfc(-x / sqrt 2) / 2. */
static inline float normcdfinvf(float p) { return (float)(-M_SQRT2 * simt_erfcinv(2.0 * p)); }
static inline double normcdfinv(double p) { return -M_SQRT2 * simt_erfcinv(2.0 * p); }
static inline double sinpi(double x) { return sin(M_PI * x); }
static inline double cospi(double x) { return cos(M_PI * x); }
static inline void sincospi(double x, double *s, double *c) { *s = sinpi(x); *c = cospi(x); }
static inline float norm3df(float a, float b, float c) { return (float)sqrt((double)a * a + (double)b * b + (double)c * c); }
static inline float rnorm3df(float a, float b, float c) { return (float)(1 / sqrt((double)a * a + (double)b * b + (double)c * c)); }
static inline float norm4df(float a, float b, float c, float d)
{ return (float)sqrt((double)a * a + (double)b * b + (double)c * c + (double)d * d); }
static inline float rnorm4df(float a, float b, float c, float d)
{ return (float)(1 / sqrt((double)a * a + (double)b * b + (double)c * c + (double)d * d)); }
static inline float rhypotf(float a, float b) { return (float)(1 / hypot((double)a, (double)b)); }
/* Conversions to an integer saturate, as PTX's cvt does: a value past the
 * type's range gives its largest or smallest value, and NaN gives 0 (a C
 * cast of such a value is undefined; x86 gives INT_MIN). _rn rounds to
 * nearest even, _rz toward zero, _rd down, _ru up. */
namespace simt {
static inline double cvt_round(double x, int mode)
{ return mode == 0 ? nearbyint(x) : mode == 1 ? trunc(x) : mode == 2 ? floor(x) : ceil(x); }
template <class T> static inline T cvt_int(double x, int mode)
{
    const double past = ldexp(1.0, std::numeric_limits<T>::digits); /* max + 1, a power of two */
    double r = cvt_round(x, mode);
    if (r != r) return 0;
    if (r <= (double)std::numeric_limits<T>::min()) return std::numeric_limits<T>::min();
    if (r >= past) return std::numeric_limits<T>::max();
    return (T)r;
}

/* A float from the exact value s + e (|e| at most half an ulp of the
 * double s, as the two-sum below leaves it), rounded as mode says: (float)s
 * is the nearest float, and the exact value lies on the side of it that s
 * lies on, or, where s is that float, on e's side. Overflow comes right
 * too: rounded down, a value past FLT_MAX is FLT_MAX, not infinity. */
static inline float round_f(double s, double e, int mode)
{
    float f = (float)s;
    int above = (double)f > s ? 1 : (double)f < s ? -1 : e > 0 ? -1 : e < 0 ? 1 : 0; /* f against the exact value */
    if ((mode == 2 && above > 0) || (mode == 1 && s > 0 && above > 0)) f = nextafterf(f, -INFINITY);
    if ((mode == 3 && above < 0) || (mode == 1 && s < 0 && above < 0)) f = nextafterf(f, INFINITY);
    return f;
}
/* a + b exactly, as s + e (Knuth's two-sum; a, b doubles from floats). */
static inline float add_f(double a, double b, int mode)
{
    double s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);
    if (s == 0 && e == 0) /* an exact zero: -0 if both are -0, or rounding down (IEEE 754) */
        return (signbit(a) && signbit(b)) || (mode == 2 && !(a == 0 && b == 0 && !signbit(a) && !signbit(b))) ? -0.0f
                                                                                                             : 0.0f;
    return round_f(s, e, mode);
}
/* a / b: the double quotient q and the sign of the exact remainder a - q b. */
static inline float div_f(double a, double b, int mode)
{
    double q = a / b, r = fma(-q, b, a);
    return round_f(q, r == 0 || r != r ? 0.0 : (r > 0) == (b > 0) ? 1.0 : -1.0, mode);
}
static inline float sqrt_f(double a, int mode)
{
    double q = sqrt(a), r = fma(-q, q, a);
    return round_f(q, r == 0 || r != r ? 0.0 : r, mode);
}
/* A long long or double as a float: compared exactly in long double. */
static inline float to_f(long double v, int mode)
{
    float f = (float)v;
    if (v != v) return f;
    if ((mode == 2 && (long double)f > v) || (mode == 1 && v > 0 && (long double)f > v)) f = nextafterf(f, -INFINITY);
    if ((mode == 3 && (long double)f < v) || (mode == 1 && v < 0 && (long double)f < v)) f = nextafterf(f, INFINITY);
    return f;
}
} // namespace simt

#define SIMT_ROUNDED_CVT(rm, m)                                                                                        \
    static inline int __float2int_##rm(float x) { return simt::cvt_int<int>(x, m); }                                 \
    static inline unsigned int __float2uint_##rm(float x) { return simt::cvt_int<unsigned int>(x, m); }              \
    static inline long long __float2ll_##rm(float x) { return simt::cvt_int<long long>(x, m); }                      \
    static inline unsigned long long __float2ull_##rm(float x) { return simt::cvt_int<unsigned long long>(x, m); }   \
    static inline int __double2int_##rm(double x) { return simt::cvt_int<int>(x, m); }                               \
    static inline unsigned int __double2uint_##rm(double x) { return simt::cvt_int<unsigned int>(x, m); }            \
    static inline long long __double2ll_##rm(double x) { return simt::cvt_int<long long>(x, m); }                    \
    static inline unsigned long long __double2ull_##rm(double x) { return simt::cvt_int<unsigned long long>(x, m); } \
    static inline float __int2float_##rm(int x) { return simt::to_f(x, m); }                                         \
    static inline float __uint2float_##rm(unsigned int x) { return simt::to_f(x, m); }                               \
    static inline float __ll2float_##rm(long long x) { return simt::to_f(x, m); }                                    \
    static inline float __ull2float_##rm(unsigned long long x) { return simt::to_f(x, m); }                          \
    static inline float __double2float_##rm(double x) { return simt::to_f(x, m); }
/* Round to nearest even is the CPU's own float arithmetic; the others go
 * through the exact value (double rounding, the double's nearest then the
 * float's, could break a tie the wrong way under _rn, not under these). */
#define SIMT_ROUNDED_ARITH(rm, m)                                                                                      \
    static inline float __fadd_##rm(float a, float b) { return simt::add_f(a, b, m); }                               \
    static inline float __fsub_##rm(float a, float b) { return simt::add_f(a, -(double)b, m); }                      \
    static inline float __fmul_##rm(float a, float b) { return simt::round_f((double)a * b, 0.0, m); }               \
    static inline float __fdiv_##rm(float a, float b) { return simt::div_f(a, b, m); }                               \
    static inline float __frcp_##rm(float a) { return simt::div_f(1.0, a, m); }                                      \
    static inline float __fsqrt_##rm(float a) { return simt::sqrt_f(a, m); }                                         \
    static inline float __fmaf_##rm(float a, float b, float c) { return simt::add_f((double)a * b, c, m); }
SIMT_ROUNDED_CVT(rn, 0)
SIMT_ROUNDED_CVT(rz, 1)
SIMT_ROUNDED_CVT(rd, 2)
SIMT_ROUNDED_CVT(ru, 3)
SIMT_ROUNDED_ARITH(rz, 1)
SIMT_ROUNDED_ARITH(rd, 2)
SIMT_ROUNDED_ARITH(ru, 3)
#undef SIMT_ROUNDED_CVT
#undef SIMT_ROUNDED_ARITH
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
/* In double, then rounded once more: correct but for the rare double
 * rounding, as the directed roundings above. */
static inline float __frsqrt_rn(float x) { return (float)(1.0 / sqrt((double)x)); }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __int2double_rn(int x) { return x; }
static inline double __uint2double_rn(unsigned int x) { return x; }
static inline double __ll2double_rn(long long x) { return (double)x; }
static inline double __ull2double_rn(unsigned long long x) { return (double)x; }
static inline int __float_as_int(float x) { int r; memcpy(&r, &x, 4); return r; }
static inline unsigned int __float_as_uint(float x) { unsigned int r; memcpy(&r, &x, 4); return r; }
static inline float __int_as_float(int x) { float r; memcpy(&r, &x, 4); return r; }
static inline float __uint_as_float(unsigned int x) { float r; memcpy(&r, &x, 4); return r; }
static inline long long __double_as_longlong(double x) { long long r; memcpy(&r, &x, 8); return r; }
static inline double __longlong_as_double(long long x) { double r; memcpy(&r, &x, 8); return r; }
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned int)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
/* Funnel shifts: the 64 bits hi:lo shifted, 32 of them kept; the shift
 * counts mod 32, or is clamped to 32 (the _c forms). */
static inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift)
{ return (unsigned int)((((unsigned long long)hi << 32 | lo) << (shift & 31)) >> 32); }
static inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift)
{ return (unsigned int)((((unsigned long long)hi << 32 | lo) << (shift < 32 ? shift : 32)) >> 32); }
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift)
{ return (unsigned int)(((unsigned long long)hi << 32 | lo) >> (shift & 31)); }
static inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift)
{ return (unsigned int)(((unsigned long long)hi << 32 | lo) >> (shift < 32 ? shift : 32)); }
/* Dot products of packed 8- and 16-bit integers (dp4a, dp2a), added to c. */
static inline int __dp4a(int a, int b, int c)
{
    for (int k = 0; k < 4; k++) c += (int)(signed char)(a >> 8 * k) * (int)(signed char)(b >> 8 * k);
    return c;
}
static inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c)
{
    for (int k = 0; k < 4; k++) c += (a >> 8 * k & 0xffu) * (b >> 8 * k & 0xffu);
    return c;
}
static inline int __dp4a(char4 a, char4 b, int c) { return c + a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
static inline unsigned int __dp4a(uchar4 a, uchar4 b, unsigned int c)
{ return c + (unsigned int)(a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w); }
/* dp2a: a's two 16-bit halves against b's low (lo) or high (hi) two bytes. */
static inline int __dp2a_lo(int a, int b, int c)
{ return c + (short)a * (signed char)b + (short)(a >> 16) * (signed char)(b >> 8); }
static inline int __dp2a_hi(int a, int b, int c)
{ return c + (short)a * (signed char)(b >> 16) + (short)(a >> 16) * (signed char)(b >> 24); }
static inline unsigned int __dp2a_lo(unsigned int a, unsigned int b, unsigned int c)
{ return c + (a & 0xffffu) * (b & 0xffu) + (a >> 16) * (b >> 8 & 0xffu); }
static inline unsigned int __dp2a_hi(unsigned int a, unsigned int b, unsigned int c)
{ return c + (a & 0xffffu) * (b >> 16 & 0xffu) + (a >> 16) * (b >> 24); }
static inline unsigned int __brev(unsigned int x)
{
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
    return (x >> 16) | (x << 16);
}
static inline int __mul24(int a, int b) { return (int)((long long)(a << 8 >> 8) * (b << 8 >> 8)); }
static inline unsigned int __umul24(unsigned int a, unsigned int b) { return (a & 0xffffff) * (b & 0xffffff); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a * b) >> 32); }
static inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s)
{
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; i++) r |= (unsigned int)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __ldcg(const T *p) { return *p; }
template <class T> static inline T __ldcs(const T *p) { return *p; }
template <class T> static inline void __stcg(T *p, T v) { *p = v; }
template <class T> static inline void __stcs(T *p, T v) { *p = v; }
template <class T> static inline T __ldca(const T *p) { return *p; }
template <class T> static inline T __ldlu(const T *p) { return *p; }
template <class T> static inline T __ldcv(const T *p) { return *p; }
template <class T> static inline void __stwb(T *p, T v) { *p = v; }
template <class T> static inline void __stwt(T *p, T v) { *p = v; }
static inline unsigned int __sad(int x, int y, unsigned int z) { return z + (unsigned int)(x > y ? (long long)x - y : (long long)y - x); }
static inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return z + (x > y ? x - y : y - x); }
/* Averages without overflow: (x + y) >> 1, and rounded up (the r forms).
 * The int overloads go before cuda_fp16.h's __hadd of two halves. */
static inline int __hadd(int x, int y) { return (int)(((long long)x + y) >> 1); }
static inline int __rhadd(int x, int y) { return (int)(((long long)x + y + 1) >> 1); }
static inline unsigned int __uhadd(unsigned int x, unsigned int y) { return (unsigned int)(((unsigned long long)x + y) >> 1); }
static inline unsigned int __urhadd(unsigned int x, unsigned int y) { return (unsigned int)(((unsigned long long)x + y + 1) >> 1); }

/* CUDA's min/max are overloaded device functions, not macros. */
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline unsigned int max(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline unsigned int min(int a, unsigned int b) { return min((unsigned int)a, b); }
static inline unsigned int max(int a, unsigned int b) { return max((unsigned int)a, b); }
static inline unsigned int min(unsigned int a, int b) { return min(a, (unsigned int)b); }
static inline unsigned int max(unsigned int a, int b) { return max(a, (unsigned int)b); }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
static inline long min(long a, long b) { return a < b ? a : b; }
static inline long max(long a, long b) { return a > b ? a : b; }
static inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
static inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline float min(float a, double b) { return fminf(a, (float)b); }
static inline float max(float a, double b) { return fmaxf(a, (float)b); }

/* --- launch ------------------------------------------------------------------ */

namespace simt {

/** The <<<grid, block, shmem, stream>>> part of a launch, and the launch's
 *  line (the default arguments take the caller's). */
struct LaunchConfig {
    dim3 grid, block;
    size_t shmem;
    cudaStream_t stream;
    const char *file;
    int line;
    /* kernel<<<grid>>>(...) builds with nvcc too: its configuration call
     * defaults the block to one thread. */
    LaunchConfig(dim3 g, dim3 b = 1, size_t s = 0, cudaStream_t st = 0, const char *f = __builtin_FILE(),
                 int l = __builtin_LINE())
        : grid(g), block(b), shmem(s), stream(st), file(f), line(l) {}
};

/* An argument as the launch checks it: a data pointer, or NULL for anything
 * else (a function pointer from host code means nothing on a GPU either,
 * but a kernel that only passes it on does no harm). */
template <class T> static inline const void *arg_pointer(const T &v, std::true_type) { return (const void *)v; }
template <class T> static inline const void *arg_pointer(const T &, std::false_type) { return nullptr; }
template <class T> static inline const void *arg_pointer(const T &v)
{
    typedef std::integral_constant<bool, std::is_pointer<T>::value &&
                                             !std::is_function<typename std::remove_pointer<T>::type>::value>
        data_pointer;
    return arg_pointer(v, data_pointer());
}

/** A kernel and its arguments, bound once at the launch. */
template <class... P> struct Bound {
    void (*kernel)(P...);
    std::tuple<typename std::decay<P>::type...> args;
};

/* The call of the kernel by one thread. Written out rather than with
 * std::apply, whose four frames (std::apply, __apply_impl, __invoke,
 * __invoke_impl) would stand under the kernel's line in every stack of a
 * ThreadSanitizer or AddressSanitizer report. */
template <class... P, size_t... I> static void call_kernel(const Bound<P...> *b, std::index_sequence<I...>)
{
    b->kernel(std::get<I>(b->args)...);
}
template <class... P> static void run_thread(void *p)
{
    call_kernel((const Bound<P...> *)p, std::index_sequence_for<P...>{});
}

/** kernel<<<cfg>>>(args) is rewritten to launch(cfg, kernel)(args): the call
 *  converts the arguments to the kernel's parameter types exactly as a call
 *  of the kernel would (so NULL and 0 work for pointers), binds them once, as
 *  CUDA copies them at launch, checks that its pointers are ones a GPU could
 *  reach (simt_launch_at), and runs every thread of every block. */
template <class... P> struct Launcher {
    LaunchConfig cfg;
    void (*kernel)(P...);
    void operator()(P... params) const
    {
        const Bound<P...> bound{kernel, std::tuple<typename std::decay<P>::type...>(params...)};
        const void *ptrs[] = {arg_pointer(params)..., nullptr};
        simt_launch_at((const void *)kernel, cfg.grid, cfg.block, cfg.shmem, cfg.stream, run_thread<P...>,
                       (void *)&bound, ptrs, sizeof...(P), cfg.file, cfg.line);
    }
};

template <class... P> static inline Launcher<P...> launch(const LaunchConfig &cfg, void (*kernel)(P...))
{
    return Launcher<P...>{cfg, kernel};
}

/** Stand-in for an extern __shared__ array declared outside a function: it
 *  reads the current block's dynamic shared memory at every use. */
template <class T> struct DynShared {
    operator T *() const { return (T *)simt_dynamic_shared(); }
    template <class U> explicit operator U *() const { return (U *)simt_dynamic_shared(); }
    T &operator[](size_t i) const { return ((T *)simt_dynamic_shared())[i]; }
    T *operator+(ptrdiff_t i) const { return (T *)simt_dynamic_shared() + i; }
};

} // namespace simt

/* --- host API in C++ form ------------------------------------------------------ */

template <class T> static inline cudaError_t cudaFuncSetAttribute(T *func, cudaFuncAttribute attr, int value)
{ return cudaFuncSetAttribute((const void *)func, attr, value); }
template <class T> static inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, T *func)
{ return cudaFuncGetAttributes(a, (const void *)func); }
template <class T> static inline cudaError_t cudaFuncSetCacheConfig(T *func, cudaFuncCache config)
{ return cudaFuncSetCacheConfig((const void *)func, config); }
template <class T>
__attribute__((deprecated)) static inline cudaError_t cudaFuncSetSharedMemConfig(T *func, cudaSharedMemConfig config)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return cudaFuncSetSharedMemConfig((const void *)func, config);
#pragma GCC diagnostic pop
}
template <class T> static inline cudaError_t cudaGetSymbolSize(size_t *size, const T &symbol)
{
    (void)symbol;
    if (!size) return simt_runtime_error(cudaErrorInvalidValue);
    *size = sizeof(T);
    return cudaSuccess;
}

namespace simt {
/* cudaLaunchKernel's launch: args[i] points at the i-th argument, of the
 * kernel's i-th parameter type, as CUDA reads it; then as a <<<...>>> launch. */
template <class... P, size_t... I>
static inline cudaError_t launch_from_args(void (*kernel)(P...), dim3 grid, dim3 block, void **args, size_t shmem,
                                           cudaStream_t stream, const char *file, int line, std::index_sequence<I...>)
{
    if (sizeof...(P) && !args) return simt_runtime_error(cudaErrorInvalidValue);
    const Bound<P...> bound{kernel, std::tuple<typename std::decay<P>::type...>(
                                        *(const typename std::decay<P>::type *)args[I]...)};
    const void *ptrs[] = {arg_pointer(std::get<I>(bound.args))..., nullptr};
    return simt_launch_at((const void *)kernel, grid, block, shmem, stream, run_thread<P...>, (void *)&bound, ptrs,
                          sizeof...(P), file, line);
}
/* Templates whose call stops the build with its message: the API exists in
 * CUDA, and the emulator cannot give what a GPU would. */
template <class T> struct not_emulated_occupancy {
    static_assert(sizeof(T) == 0,
                  "cudaOccupancy* is not emulated: a kernel's occupancy depends on the registers and static shared "
                  "memory that nvcc gives it, which the emulator does not know; keep the call under #ifndef "
                  "__SIMT_EMULATOR__, and see nvcc -Xptxas -v or ncu for the GPU's figures");
};
template <class T> struct not_emulated_cooperative {
    static_assert(sizeof(T) == 0, "cudaLaunchCooperativeKernel is not emulated (nor grid-wide cooperative groups, "
                                  "this_grid().sync()): split the kernel at the grid-wide barrier into two launches");
};
/* The call of a refused API: instantiating Why stops the build with its message. */
template <class Why> static inline cudaError_t refused(cudaError_t e = cudaErrorNotSupported)
{
    (void)sizeof(Why);
    return e;
}
template <class T> struct kernel_not_pointer {
    static_assert(sizeof(T) == 0, "cudaLaunchKernel with a void * for the kernel: pass the kernel itself "
                                  "(cudaLaunchKernel(my_kernel, ...)), whose parameter types the emulator needs to "
                                  "read args");
};
} // namespace simt

/** @brief Launch a kernel with its arguments given as pointers (CUDA's C++
 *  form, the kernel passed itself). @param kernel the kernel. @param grid,
 *  block the launch's shape. @param args args[i] points at argument i.
 *  @param shmem dynamic shared bytes. @param stream the stream.
 *  @return the launch's error, as cudaGetLastError would have it. */
template <class... P>
static inline cudaError_t cudaLaunchKernel(void (*kernel)(P...), dim3 grid, dim3 block, void **args, size_t shmem = 0,
                                           cudaStream_t stream = 0, const char *file = __builtin_FILE(),
                                           int line = __builtin_LINE())
{
    return ::simt::launch_from_args(kernel, grid, block, args, shmem, stream, file, line,
                                    std::index_sequence_for<P...>{});
}
template <class T = void>
static inline cudaError_t cudaLaunchKernel(const void *, dim3, dim3, void **, size_t = 0, cudaStream_t = 0)
{ return ::simt::refused<::simt::kernel_not_pointer<T>>(cudaErrorInvalidDeviceFunction); }
template <class F>
static inline cudaError_t cudaLaunchCooperativeKernel(F, dim3, dim3, void **, size_t = 0, cudaStream_t = 0)
{ return ::simt::refused<::simt::not_emulated_cooperative<F>>(); }
template <class F>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *, F, int, size_t)
{ return ::simt::refused<::simt::not_emulated_occupancy<F>>(); }
template <class F>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *, F, int, size_t, unsigned int)
{ return ::simt::refused<::simt::not_emulated_occupancy<F>>(); }
template <class F>
static inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int *, int *, F, size_t = 0, int = 0)
{ return ::simt::refused<::simt::not_emulated_occupancy<F>>(); }
template <class F>
static inline cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *, F, int, int)
{ return ::simt::refused<::simt::not_emulated_occupancy<F>>(); }
template <class T> static inline cudaError_t cudaMallocAsync(T **p, size_t size, cudaStream_t stream)
{ return cudaMallocAsync((void **)p, size, stream); }
template <class T>
static inline cudaError_t cudaMemcpyToSymbol(T &symbol, const void *src, size_t count, size_t offset = 0,
                                             cudaMemcpyKind kind = cudaMemcpyHostToDevice)
{
    if (offset + count > sizeof(T)) return simt_runtime_error(cudaErrorInvalidValue); /* as a GPU: recorded */
    return cudaMemcpy((char *)&symbol + offset, src, count, kind);
}
template <class T>
static inline cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t count, size_t offset = 0,
                                               cudaMemcpyKind kind = cudaMemcpyDeviceToHost)
{
    if (offset + count > sizeof(T)) return simt_runtime_error(cudaErrorInvalidValue); /* as a GPU: recorded */
    return cudaMemcpy(dst, (const char *)&symbol + offset, count, kind);
}
template <class T> static inline cudaError_t cudaGetSymbolAddress(void **p, T &symbol)
{
    *p = (void *)&symbol;
    return cudaSuccess;
}
template <class T> static inline cudaError_t cudaMalloc(T **p, size_t size) { return cudaMalloc((void **)p, size); }
template <class T> static inline cudaError_t cudaMallocManaged(T **p, size_t size, unsigned int flags = cudaMemAttachGlobal)
{ return cudaMallocManaged((void **)p, size, flags); }
template <class T> static inline cudaError_t cudaMallocHost(T **p, size_t size) { return cudaMallocHost((void **)p, size); }
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k)
{ return cudaMemcpyAsync(d, s, n, k, 0); }
static inline cudaError_t cudaMemsetAsync(void *p, int v, size_t n) { return cudaMemsetAsync(p, v, n, 0); }
static inline cudaError_t cudaMemcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h,
                                            cudaMemcpyKind k)
{ return cudaMemcpy2DAsync(d, dp, s, sp, w, h, k, 0); }
static inline cudaError_t cudaMemset2DAsync(void *p, size_t pitch, int v, size_t w, size_t h)
{ return cudaMemset2DAsync(p, pitch, v, w, h, 0); }
static inline cudaError_t cudaMemPrefetchAsync(const void *p, size_t n, cudaMemLocation loc, unsigned int flags)
{ return cudaMemPrefetchAsync(p, n, loc, flags, 0); }
template <class T> static inline cudaError_t cudaMallocPitch(T **p, size_t *pitch, size_t width, size_t height)
{ return cudaMallocPitch((void **)p, pitch, width, height); }
template <class T> static inline cudaError_t cudaHostGetDevicePointer(T **dev, void *host, unsigned int flags)
{ return cudaHostGetDevicePointer((void **)dev, host, flags); }
static inline cudaError_t cudaEventRecord(cudaEvent_t e) { return cudaEventRecord(e, 0); }

#endif /* __cplusplus */

#endif /* SIMT_CUDA_RUNTIME_H */
