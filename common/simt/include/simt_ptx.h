/** @file
 * SIMT emulator: the warp-level tensor-core instructions of sm_80 (mma.sync
 * m16n8k16 and m16n8k8 with bf16 or fp16 inputs, ldmatrix, cp.async) with
 * exactly the register layouts the PTX ISA documents, and the inline PTX
 * that simtcc's rewrite turns into calls of them and of a few more
 * instructions (loads and stores, conversions, approximate math, special
 * registers; namespace simt::ptx, below). common/warp_mma.cuh's wrappers
 * call the same functions, so a kernel written with either gets the same
 * numbers, the same checks and the same messages. cuda_runtime.h includes
 * this, after its built-ins (clock64).
 *   groupID = lane / 4, tig = lane % 4 (thread in group):
 *   A (16x16, row): a[0] = A[g][2t..2t+1]    a[1] = A[g+8][2t..2t+1]
 *                   a[2] = A[g][2t+8..2t+9]  a[3] = A[g+8][2t+8..2t+9]
 *   B (16x8, col):  b[0] = B[2t..2t+1][g]    b[1] = B[2t+8..2t+9][g]
 *   C, D (16x8):    c[0..1] = C[g][2t..2t+1] c[2..3] = C[g+8][2t..2t+1]
 * (m16n8k8 has only a[0..1] and b[0].)
 */
#ifndef SIMT_PTX_H
#define SIMT_PTX_H

#include <stdint.h>
#include <math.h>
#include <string.h>
#ifdef __cplusplus
#include <type_traits>
#endif

#include "simt_abi.h"
#include "simt_half_conv.h"

/** One lane's part of an mma.sync, deposited for the warp's combine step. */
struct simt_mma_lane {
    const uint32_t *a; /**< its four registers of A */
    const uint32_t *b; /**< its two registers of B */
    const float *c;        /**< its four accumulators in */
    float d[4];            /**< its four results, written by the combine step */
    int bf16;              /**< 1 bf16 inputs, 0 fp16 */
};

static inline double simt_mma_elem(uint32_t reg, int hi, int bf16)
{
    uint16_t h = (uint16_t)(hi ? reg >> 16 : reg & 0xffffu);
    return bf16 ? simt_bf16_bits_to_float(h) : simt_half_bits_to_float(h);
}

SIMT_COMBINE_STEP static inline void simt_mma_combine(void *const *args, unsigned int present)
{
    double A[16][16] = {{0}}, B[16][8] = {{0}}, C[16][8] = {{0}};
    for (int l = 0; l < 32; l++) {
        if (!(present >> l & 1)) continue;
        const struct simt_mma_lane *m = (const struct simt_mma_lane *)args[l];
        int g = l / 4, t = l % 4;
        for (int i = 0; i < 8; i++) { /* a0..a7: element i is half (i&1) of register i/2 */
            int row = g + ((i / 2) % 2) * 8, col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
            A[row][col] = simt_mma_elem(m->a[i / 2], i & 1, m->bf16);
        }
        for (int i = 0; i < 4; i++) { /* b0..b3 */
            int k = 2 * t + (i & 1) + (i >= 2 ? 8 : 0);
            B[k][g] = simt_mma_elem(m->b[i / 2], i & 1, m->bf16);
        }
        for (int i = 0; i < 4; i++) C[g + (i >= 2 ? 8 : 0)][2 * t + (i & 1)] = m->c[i];
    }
    /* k outside the columns: each element still adds its 16 products in
     * order, but a row's 8 sums do not wait for each other. */
    for (int row = 0; row < 16; row++)
        for (int k = 0; k < 16; k++)
            for (int col = 0; col < 8; col++) C[row][col] += A[row][k] * B[k][col];
    for (int l = 0; l < 32; l++) {
        if (!(present >> l & 1)) continue;
        struct simt_mma_lane *m = (struct simt_mma_lane *)args[l];
        int g = l / 4, t = l % 4;
        for (int i = 0; i < 4; i++) m->d[i] = (float)C[g + (i >= 2 ? 8 : 0)][2 * t + (i & 1)];
    }
}

/* Inlined always, as simt_ldmatrix is: the emulator names a failing
 * collective by its call's line, which is the kernel's only when this call
 * sits in the kernel's own code. */
/** @brief mma.sync.aligned.m16n8k16 (or m16n8k8) .row.col.f32, bf16 or fp16
 *  inputs: D = A B + C for the warp, with the PTX ISA's fragment layouts.
 *  Warp-collective. @param d four fp32 outputs of this lane. @param a A's
 *  registers (four for k16, two for k8). @param b B's (two, or one).
 *  @param c four fp32 inputs; may alias d. @param bf16 1 bf16, 0 fp16.
 *  @param k 16 or 8: m16n8k8 is m16n8k16 with the upper half of K zero. */
__attribute__((always_inline)) static inline void simt_mma_m16n8(float d[4], const uint32_t *a, const uint32_t *b,
                                                                 const float c[4], int bf16, int k = 16)
{
    struct simt_mma_lane m;
    const uint32_t a8[4] = {a[0], a[1], 0u, 0u}, b8[2] = {b[0], 0u};
    m.a = k == 8 ? a8 : a;
    m.b = k == 8 ? b8 : b;
    m.c = c;
    m.bf16 = bf16;
    static const char *const names[2][2] = {{"mma.sync.m16n8k16 (f16)", "mma.sync.m16n8k16 (bf16)"},
                                            {"mma.sync.m16n8k8 (f16)", "mma.sync.m16n8k8 (bf16)"}};
    simt_warp_aligned(names[k == 8][bf16 != 0], &m, simt_mma_combine);
    for (int i = 0; i < 4; i++) d[i] = m.d[i];
}

/** One lane's part of an ldmatrix, deposited for the warp's combine step. */
struct simt_ldmatrix_lane {
    const uint16_t *row; /**< this lane's row address (lanes 0 .. 8 nmat - 1) */
    uint32_t r[4];       /**< the registers it receives */
    int nmat;            /**< matrices: 1, 2 or 4 */
    int trans;           /**< 1 for .trans */
};

SIMT_COMBINE_STEP static inline void simt_ldmatrix_combine(void *const *args, unsigned int present)
{
    uint16_t M[4][8][8];
    int nmat = 0, trans = 0;
    for (int l = 0; l < 32; l++)
        if (present >> l & 1) {
            nmat = ((struct simt_ldmatrix_lane *)args[l])->nmat;
            trans = ((struct simt_ldmatrix_lane *)args[l])->trans;
        }
    memset(M, 0, sizeof(M));
    for (int j = 0; j < nmat; j++)
        for (int r = 0; r < 8; r++) {
            int l = 8 * j + r;
            if (present >> l & 1) memcpy(M[j][r], ((struct simt_ldmatrix_lane *)args[l])->row, 16);
        }
    for (int l = 0; l < 32; l++) {
        if (!(present >> l & 1)) continue;
        struct simt_ldmatrix_lane *m = (struct simt_ldmatrix_lane *)args[l];
        int row = l / 4, col = 2 * (l % 4);
        for (int j = 0; j < nmat; j++) {
            uint16_t lo = trans ? M[j][col][row] : M[j][row][col];
            uint16_t hi = trans ? M[j][col + 1][row] : M[j][row][col + 1];
            m->r[j] = (uint32_t)lo | ((uint32_t)hi << 16);
        }
    }
}

/* simtcc --memtrace (which defines __SIMT_MEMTRACE__): the reads
 * and writes the emulator makes for ldmatrix and cp.async are noted for the
 * tracer (simt_memtrace.h), where the kernel's own code does not make them.
 * Always inlined, so that each use in a kernel is a code site of its own. */
__attribute__((always_inline)) static inline void simt_mma_note(const void *p, size_t bytes, int store,
                                                                unsigned int phase)
{
#if defined(__SIMT_MEMTRACE__)
    if (simt_cur_thread) simt_memtrace_note(p, bytes, store, phase);
#else
    (void)p, (void)bytes, (void)store, (void)phase;
#endif
}

/* cp.async: the global read (src_bytes of it; none for a zero fill) and the
 * shared write, which the hardware serves 128 bytes at a time: a quarter of
 * the warp for 16-byte copies, half for 8, the whole warp for 4. */
__attribute__((always_inline)) static inline void simt_cp_async_note(void *smem, const void *gmem, size_t size,
                                                                   size_t src_bytes)
{
    if (src_bytes) simt_mma_note(gmem, src_bytes, 0, 0);
    simt_mma_note(smem, size, 1, simt_cur_thread ? simt_cur_thread->lane * (unsigned int)size / 128u : 0);
}

/* One cp.async of size bytes, src_bytes of them read (the rest zero-filled):
 * its trace records and the copy, which fails the launch where src_bytes is
 * more than size. Every form of cp.async (inline PTX, warp_mma.cuh's
 * wrappers, cuda_pipeline.h) issues it here. */
__attribute__((always_inline)) static inline void simt_cp_async_issue(void *smem, const void *gmem, size_t size,
                                                                    size_t src_bytes)
{
    simt_cp_async_note(smem, gmem, size, src_bytes > size ? size : src_bytes);
    simt_cp_async(smem, gmem, size, src_bytes);
}

/** @brief ldmatrix.sync.aligned.m8n8 .x1, .x2 or .x4, with or without
 *  .trans, of 16-bit elements. Warp-collective. @param r nmat registers out.
 *  @param row this lane's row address (lanes 0 .. 8 nmat - 1; 16-byte
 *  aligned, in shared memory). @param nmat 1, 2 or 4. @param trans 1 for .trans. */
__attribute__((always_inline)) static inline void simt_ldmatrix(uint32_t *r, const void *row, int nmat,
                                                                    int trans)
{
    struct simt_ldmatrix_lane m;
    /* Lanes 0 .. 8 nmat - 1 each give a 16-byte row, which must be 16-byte
     * aligned; on a GPU a misaligned row stops the kernel. The hardware reads
     * one 8 x 8 matrix (8 rows of 16 bytes, 128 bytes) at a time: for the
     * tracer each matrix is a request of its own, conflict-free when its 8
     * rows fall in 8 different groups of 4 banks. */
    if (simt_cur_thread && simt_cur_thread->lane < 8u * (unsigned int)nmat) {
        simt_check_aligned(trans ? "ldmatrix.trans" : "ldmatrix", "row address", row, 16);
        simt_check_shared(trans ? "ldmatrix.trans" : "ldmatrix", "row address", row, 16);
        simt_mma_note(row, 16, 0, simt_cur_thread->lane / 8u);
    }
    m.row = (const uint16_t *)row;
    m.nmat = nmat;
    m.trans = trans;
    static const char *const names[2][5] = {
        {"", "ldmatrix.x1", "ldmatrix.x2", "", "ldmatrix.x4"},
        {"", "ldmatrix.x1.trans", "ldmatrix.x2.trans", "", "ldmatrix.x4.trans"}};
    simt_warp_aligned(names[trans != 0][nmat], &m, simt_ldmatrix_combine);
    for (int j = 0; j < nmat; j++) r[j] = m.r[j];
}

#ifdef __cplusplus
/* --- inline PTX ---------------------------------------------------------------
 * simtcc's rewrite turns each asm statement of a .cu file whose text is one
 * of the PTX instructions below into a call here, at the statement's line:
 *   asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
 *                : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
 *   -> do { ::simt::ptx::reg p[6]; (outputs bound, inputs copied into p)
 *           ::simt::ptx::ldmatrix(4, 0, p[0], p[1], p[2], p[3], p[4], 0);
 *           (p[0..3] stored into the outputs) } while (0)
 * Any other PTX becomes a static_assert that names it; an asm that is not
 * PTX (x86's, or the empty compiler barrier) is left alone. */
namespace simt {
namespace ptx {

/** @brief A PTX register: the bits of the C++ value an operand gives ("r",
 *  "l", "f", "d", "h" or "n"), as the hardware sees them. */
struct reg {
    unsigned long long bits; /**< the value's bytes, zero above its size */
    reg() : bits(0) {}
    /** @brief The bits of @p v. @param v a scalar or pointer of at most 8 bytes. */
    template <class T> reg(const T &v) : bits(0)
    {
        static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                      "an inline PTX operand is one register: a scalar or pointer of at most 8 bytes");
        memcpy(&bits, &v, sizeof v);
    }
    /** @brief The low 32 bits. @return them. */
    uint32_t u32() const { return (uint32_t)bits; }
    /** @brief The low 32 bits as a float. @return the float. */
    float f32() const
    {
        float f;
        uint32_t u = (uint32_t)bits;
        memcpy(&f, &u, 4);
        return f;
    }
};

/** @brief Stop a host function that runs PTX (nvcc would not compile it:
 *  host code goes to the host compiler, which has no PTX); nothing in a
 *  kernel. @param what the instruction. @param file, line the asm's place. */
static inline void device_only(const char *what, const char *file, int line)
{
    if (!simt_cur_thread)
        simt_fail("inline PTX '%s' at %s:%d ran in host code; nvcc compiles host code with the host compiler, "
                  "which has no PTX: run it in a __device__ or __global__ function",
                  what, file, line);
}

/** @brief Store an output register into its C++ lvalue (its size's worth of
 *  bits). @param x the operand's lvalue. @param r the register. */
template <class T> static inline void put(T &x, const reg &r)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                  "an inline PTX output is one register: a scalar of at most 8 bytes");
    memcpy((void *)&x, &r.bits, sizeof x);
}

/** @brief mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32.
 *  @param bf16 1 for bf16 inputs, 0 for fp16. @param d0 ... c3 the fourteen
 *  registers in the instruction's order: D, A, B, C. */
__attribute__((always_inline)) static inline void mma_m16n8k16(int bf16, reg &d0, reg &d1, reg &d2, reg &d3, reg a0,
                                                               reg a1, reg a2, reg a3, reg b0, reg b1, reg c0, reg c1,
                                                               reg c2, reg c3)
{
    const uint32_t a[4] = {a0.u32(), a1.u32(), a2.u32(), a3.u32()}, b[2] = {b0.u32(), b1.u32()};
    const float c[4] = {c0.f32(), c1.f32(), c2.f32(), c3.f32()};
    float d[4];
    simt_mma_m16n8(d, a, b, c, bf16, 16);
    d0 = reg(d[0]), d1 = reg(d[1]), d2 = reg(d[2]), d3 = reg(d[3]);
}

/** @brief mma.sync.aligned.m16n8k8.row.col.f32.{bf16,f16}.{bf16,f16}.f32.
 *  @param bf16 1 for bf16 inputs, 0 for fp16. @param d0 ... c3 the eleven
 *  registers in the instruction's order: D, A, B, C. */
__attribute__((always_inline)) static inline void mma_m16n8k8(int bf16, reg &d0, reg &d1, reg &d2, reg &d3, reg a0,
                                                              reg a1, reg b0, reg c0, reg c1, reg c2, reg c3)
{
    const uint32_t a[2] = {a0.u32(), a1.u32()}, b[1] = {b0.u32()};
    const float c[4] = {c0.f32(), c1.f32(), c2.f32(), c3.f32()};
    float d[4];
    simt_mma_m16n8(d, a, b, c, bf16, 8);
    d0 = reg(d[0]), d1 = reg(d[1]), d2 = reg(d[2]), d3 = reg(d[3]);
}

/** @brief ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16.
 *  @param nmat 1, 2 or 4. @param trans 1 for .trans. @param r0 ... r3 the
 *  destination registers (those past nmat are not written). @param addr
 *  this lane's row, a shared-window address. @param offset the immediate of
 *  [%n+offset]. @param file, line the asm's place, for messages. */
__attribute__((always_inline)) static inline void ldmatrix(int nmat, int trans, reg &r0, reg &r1, reg &r2, reg &r3,
                                                           reg addr, long long offset, const char *file, int line)
{
    uint32_t r[4];
    const void *row = NULL; /* only lanes 0 .. 8 nmat - 1 give a row */
    if (simt_cur_thread && simt_cur_thread->lane < 8u * (unsigned int)nmat)
        row = simt_shared_ptr(addr.bits + (unsigned long long)offset, trans ? "ldmatrix.trans" : "ldmatrix", file,
                              line);
    simt_ldmatrix(r, row, nmat, trans);
    reg *out[4] = {&r0, &r1, &r2, &r3};
    for (int j = 0; j < nmat; j++) *out[j] = reg(r[j]);
}

/** @brief cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}.
 *  @param dst the shared-window address. @param dst_offset its immediate.
 *  @param src the global address. @param src_offset its immediate.
 *  @param cp_size 4, 8 or 16 bytes. @param src_size the bytes read (the
 *  rest zero-filled). @param cg 1 for .cg, which copies 16 bytes only.
 *  @param file, line the asm's place, for messages. */
__attribute__((always_inline)) static inline void cp_async(reg dst, long long dst_offset, reg src,
                                                           long long src_offset, reg cp_size, reg src_size, int cg,
                                                           const char *file, int line)
{
    const uint32_t size = cp_size.u32();
    if (cg ? size != 16 : size != 4 && size != 8 && size != 16)
        simt_fail("cp.async.%s at %s:%d: a copy of %u bytes; PTX allows %s", cg ? "cg" : "ca", file, line, size,
                  cg ? "only 16 with .cg" : "4, 8 or 16");
    void *smem = simt_shared_ptr(dst.bits + (unsigned long long)dst_offset, "cp.async", file, line);
    const void *gmem = (const void *)(uintptr_t)(src.bits + (unsigned long long)src_offset);
    const uint32_t n = src_size.u32(); /* a .u32 operand: a negative count is huge */
    simt_cp_async_issue(smem, gmem, size, n);
}

/* The n words an ld or st touches: the address converted (.shared) or taken
 * as it is (.global), then checked for its alignment and, in shared memory,
 * for lying in a tile. Inlined always, as simt_check_aligned's message names
 * the line of the code it is inlined into. */
__attribute__((always_inline)) static inline uint32_t *ldst_words(int shared, int n, reg addr, long long offset,
                                                                  const char *what, const char *file, int line)
{
    const unsigned long long a = addr.bits + (unsigned long long)offset;
    uint32_t *p = (uint32_t *)(shared ? simt_shared_ptr(a, what, file, line) : (void *)(uintptr_t)a);
    simt_check_aligned(what, "address", p, 4u * (unsigned int)n);
    if (shared) simt_check_shared(what, "address", p, 4u * (unsigned int)n);
    return p;
}

/** @brief ld.shared, ld.global and their .v2/.v4 forms, of 32-bit elements:
 *  n registers from consecutive words. @param shared 1 for .shared (addr is
 *  a shared-window address), 0 for .global (a pointer). @param n 1, 2 or 4.
 *  @param r0 ... r3 the destinations (those past n are not written).
 *  @param addr, offset the [%n+offset] operand. @param what the
 *  instruction, for messages. @param file, line the asm's place. */
__attribute__((always_inline)) static inline void ld(int shared, int n, reg &r0, reg &r1, reg &r2, reg &r3, reg addr,
                                                     long long offset, const char *what, const char *file, int line)
{
    const uint32_t *p = ldst_words(shared, n, addr, offset, what, file, line);
    reg *out[4] = {&r0, &r1, &r2, &r3};
    for (int j = 0; j < n; j++) *out[j] = reg(p[j]); /* the kernel's own loads, for the tracer */
}

/** @brief st.shared, st.global and their .v2/.v4 forms, of 32-bit elements.
 *  @param shared 1 for .shared, 0 for .global. @param n 1, 2 or 4.
 *  @param addr, offset the [%n+offset] operand. @param r0 ... r3 the
 *  values (those past n unused). @param what, file, line as for ld. */
__attribute__((always_inline)) static inline void st(int shared, int n, reg addr, long long offset, reg r0, reg r1,
                                                     reg r2, reg r3, const char *what, const char *file, int line)
{
    uint32_t *p = ldst_words(shared, n, addr, offset, what, file, line);
    const reg in[4] = {r0, r1, r2, r3};
    for (int j = 0; j < n; j++) p[j] = in[j].u32();
}

/** @brief cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32 d, a, b: a rounded into the
 *  upper half of d, b into the lower. @param bf16 1 bf16, 0 fp16.
 *  @param d the packed result. @param a, b the two floats. */
static inline void cvt_x2(int bf16, reg &d, reg a, reg b)
{
    const uint16_t hi = bf16 ? simt_float_to_bf16_bits(a.f32()) : simt_float_to_half_bits(a.f32());
    const uint16_t lo = bf16 ? simt_float_to_bf16_bits(b.f32()) : simt_float_to_half_bits(b.f32());
    d = reg((uint32_t)lo | (uint32_t)hi << 16);
}

/** @brief cvt.rn.bf16.f32 / cvt.rn.f16.f32 d, a. @param bf16 1 bf16, 0
 *  fp16. @param d the 16-bit result. @param a the float. */
static inline void cvt_1(int bf16, reg &d, reg a)
{
    d = reg((uint16_t)(bf16 ? simt_float_to_bf16_bits(a.f32()) : simt_float_to_half_bits(a.f32())));
}

/** @brief The one-input float instructions ex2, lg2, rcp, rsqrt, sqrt,
 *  tanh, sin and cos (.approx, or .rn for rcp and sqrt), with the C
 *  library's results, which a GPU's approximations are within a few ulp
 *  of. @param op which: 'e' ex2, 'l' lg2, 'r' rcp, 'q' rsqrt, 's' sqrt,
 *  't' tanh, 'S' sin, 'C' cos. @param ftz 1 for .ftz: subnormal inputs and
 *  results flushed to zero. @param a the input. @return the result. */
static inline float math(char op, int ftz, reg a)
{
    float x = a.f32(), y;
    if (ftz && x != 0.0f && fabsf(x) < 1.17549435e-38f) x = copysignf(0.0f, x);
    switch (op) {
    case 'e': y = exp2f(x); break;
    case 'l': y = log2f(x); break;
    case 'r': y = 1.0f / x; break;
    case 'q': y = 1.0f / sqrtf(x); break;
    case 's': y = sqrtf(x); break;
    case 't': y = tanhf(x); break;
    case 'S': y = sinf(x); break;
    default: y = cosf(x); break;
    }
    if (ftz && y != 0.0f && fabsf(y) < 1.17549435e-38f) y = copysignf(0.0f, y);
    return y;
}

/** @brief membar and fence: a full fence, as __threadfence (the thread
 *  sanitizer, which does not model fences, gets the compiler's only). */
static inline void fence(void)
{
#if defined(__SANITIZE_THREAD__)
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/** @brief cp.async.commit_group. */
static inline void cp_async_commit_group(void) { simt_cp_async_commit(); }
/** @brief cp.async.wait_group n. @param n the groups left in flight. */
static inline void cp_async_wait_group(reg n) { simt_cp_async_wait((int)n.u32()); }
/** @brief cp.async.wait_all: commit, then wait for every group. */
static inline void cp_async_wait_all(void)
{
    simt_cp_async_commit();
    simt_cp_async_wait(0);
}

/** @brief bar.sync (barrier.sync.aligned) with barrier 0, which is
 *  __syncthreads. @param id the barrier. @param file, line the asm's place. */
static inline void bar_sync(reg id, const char *file, int line)
{
    if (id.u32() != 0)
        simt_fail("bar.sync %u at %s:%d: the emulator has only barrier 0 (__syncthreads); named barriers "
                  "(1 to 15) are not emulated",
                  id.u32(), file, line);
    simt_syncthreads_at(0, 0, file, line);
}

/* The special registers a mov may read (%%laneid and friends). */
static inline unsigned int sreg_laneid(void) { return simt_cur_thread->lane; }
static inline unsigned int sreg_warpid(void) { return simt_cur_thread->warp; }
static inline unsigned int sreg_tid_x(void) { return simt_cur_thread->thread_idx.x; }
static inline unsigned int sreg_tid_y(void) { return simt_cur_thread->thread_idx.y; }
static inline unsigned int sreg_tid_z(void) { return simt_cur_thread->thread_idx.z; }
static inline unsigned int sreg_ntid_x(void) { return simt_cur_block.block_dim.x; }
static inline unsigned int sreg_ntid_y(void) { return simt_cur_block.block_dim.y; }
static inline unsigned int sreg_ntid_z(void) { return simt_cur_block.block_dim.z; }
static inline unsigned int sreg_ctaid_x(void) { return simt_cur_block.block_idx.x; }
static inline unsigned int sreg_ctaid_y(void) { return simt_cur_block.block_idx.y; }
static inline unsigned int sreg_ctaid_z(void) { return simt_cur_block.block_idx.z; }
static inline unsigned int sreg_nctaid_x(void) { return simt_cur_block.grid_dim.x; }
static inline unsigned int sreg_nctaid_y(void) { return simt_cur_block.grid_dim.y; }
static inline unsigned int sreg_nctaid_z(void) { return simt_cur_block.grid_dim.z; }
static inline unsigned int sreg_lanemask_eq(void) { return 1u << simt_cur_thread->lane; }
static inline unsigned int sreg_lanemask_lt(void) { return (1u << simt_cur_thread->lane) - 1u; }
static inline unsigned int sreg_lanemask_le(void) { return sreg_lanemask_lt() | sreg_lanemask_eq(); }
static inline unsigned int sreg_lanemask_gt(void) { return ~sreg_lanemask_le(); }
static inline unsigned int sreg_lanemask_ge(void) { return ~sreg_lanemask_lt(); }
static inline unsigned int sreg_dynamic_smem_size(void) { return (unsigned int)simt_cur_block.dyn_shared_size; }
/* clock64()'s nanoseconds stand for the cycle counters and the timer. */
static inline unsigned long long sreg_globaltimer(void) { return (unsigned long long)clock64(); }
static inline unsigned long long sreg_clock64(void) { return (unsigned long long)clock64(); }
static inline unsigned int sreg_clock(void) { return (unsigned int)clock64(); }

} /* namespace ptx */
} /* namespace simt */
#endif /* __cplusplus */

#endif /* SIMT_PTX_H */
