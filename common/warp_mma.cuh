/** @file
 * Warp-level tensor-core building blocks for the labs: mma.sync m16n8k16
 * (bf16 or fp16 inputs, fp32 accumulators), ldmatrix (x1, x2, x4, with and
 * without .trans) and cp.async (4, 8 and 16 bytes, commit and wait groups).
 *
 * On the GPU (sm_80 and newer) each function is one inline PTX instruction.
 * In the CPU emulator (TARGET=emu) each is emulated with exactly the
 * register layouts the PTX ISA documents, so a kernel that gets a fragment
 * layout wrong produces the same wrong numbers on both. With
 *   groupID = lane / 4, tig = lane % 4 (thread in group):
 *   A (16x16, row): a[0] = A[g][2t..2t+1]    a[1] = A[g+8][2t..2t+1]
 *                   a[2] = A[g][2t+8..2t+9]  a[3] = A[g+8][2t+8..2t+9]
 *   B (16x8, col):  b[0] = B[2t..2t+1][g]    b[1] = B[2t+8..2t+9][g]
 *   C, D (16x8):    c[0..1] = C[g][2t..2t+1] c[2..3] = C[g+8][2t..2t+1]
 * (two 16-bit values per 32-bit register, the lower column or row in the
 * low half). ldmatrix: lanes 8j..8j+7 give the row addresses of matrix j;
 * register j of lane l receives row l/4, columns 2(l%4) and 2(l%4)+1 of
 * matrix j (with .trans: rows 2(l%4) and 2(l%4)+1 of column l/4).
 * The emulator runs cp.async copies when the group is waited for, not when
 * they are issued, and fills the destination with NaN bytes at the issue,
 * so a kernel that reads before waiting, or refills a stage other warps
 * still read, sees NaN.
 *
 * Not here: Hopper's wgmma, TMA and clusters, which only run on sm_90a GPUs.
 */
#ifndef COMMON_WARP_MMA_CUH
#define COMMON_WARP_MMA_CUH

#include <stdint.h>

#if defined(__SIMT_EMULATOR__) && !defined(__CUDA_ARCH__)
#include <string.h>
#include "simt_half_conv.h"
#endif

#if defined(__CUDA_ARCH__)
/* Shared-memory address of a generic pointer, as the PTX operands want it. */
static __device__ __forceinline__ uint32_t warp_mma_smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}
#endif

#if defined(__SIMT_EMULATOR__) && !defined(__CUDA_ARCH__)
/* --- emulator: the documented layouts, gathered and scattered per warp ----- */

struct warp_mma_lane {
    const uint32_t *a, *b;
    const float *c;
    float d[4];
    int bf16;
};

static inline double warp_mma_elem(uint32_t reg, int hi, int bf16)
{
    uint16_t h = (uint16_t)(hi ? reg >> 16 : reg & 0xffffu);
    return bf16 ? simt_bf16_bits_to_float(h) : simt_half_bits_to_float(h);
}

SIMT_COMBINE_STEP static inline void warp_mma_combine(void *const *args, unsigned int present)
{
    double A[16][16] = {{0}}, B[16][8] = {{0}}, C[16][8] = {{0}};
    for (int l = 0; l < 32; l++) {
        if (!(present >> l & 1)) continue;
        const struct warp_mma_lane *m = (const struct warp_mma_lane *)args[l];
        int g = l / 4, t = l % 4;
        for (int i = 0; i < 8; i++) { /* a0..a7: element i is half (i&1) of register i/2 */
            int row = g + ((i / 2) % 2) * 8, col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
            A[row][col] = warp_mma_elem(m->a[i / 2], i & 1, m->bf16);
        }
        for (int i = 0; i < 4; i++) { /* b0..b3 */
            int k = 2 * t + (i & 1) + (i >= 2 ? 8 : 0);
            B[k][g] = warp_mma_elem(m->b[i / 2], i & 1, m->bf16);
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
        struct warp_mma_lane *m = (struct warp_mma_lane *)args[l];
        int g = l / 4, t = l % 4;
        for (int i = 0; i < 4; i++) m->d[i] = (float)C[g + (i >= 2 ? 8 : 0)][2 * t + (i & 1)];
    }
}

/* Inlined always, as warp_ldmatrix_run is: the emulator names a failing
 * collective by its call's line, which is the kernel's only when this call
 * sits in the kernel's own code. */
__attribute__((always_inline)) static inline void warp_mma_run(float d[4], const uint32_t a[4], const uint32_t b[2],
                                                               const float c[4], int bf16)
{
    struct warp_mma_lane m;
    m.a = a;
    m.b = b;
    m.c = c;
    m.bf16 = bf16;
    simt_warp_aligned(bf16 ? "mma.sync.m16n8k16 (bf16)" : "mma.sync.m16n8k16 (f16)", &m, warp_mma_combine);
    for (int i = 0; i < 4; i++) d[i] = m.d[i];
}

struct warp_ldmatrix_lane {
    const uint16_t *row; /* this lane's row address */
    uint32_t r[4];
    int nmat, trans;
};

SIMT_COMBINE_STEP static inline void warp_ldmatrix_combine(void *const *args, unsigned int present)
{
    uint16_t M[4][8][8];
    int nmat = 0, trans = 0;
    for (int l = 0; l < 32; l++)
        if (present >> l & 1) {
            nmat = ((struct warp_ldmatrix_lane *)args[l])->nmat;
            trans = ((struct warp_ldmatrix_lane *)args[l])->trans;
        }
    memset(M, 0, sizeof(M));
    for (int j = 0; j < nmat; j++)
        for (int r = 0; r < 8; r++) {
            int l = 8 * j + r;
            if (present >> l & 1) memcpy(M[j][r], ((struct warp_ldmatrix_lane *)args[l])->row, 16);
        }
    for (int l = 0; l < 32; l++) {
        if (!(present >> l & 1)) continue;
        struct warp_ldmatrix_lane *m = (struct warp_ldmatrix_lane *)args[l];
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
__attribute__((always_inline)) static inline void warp_mma_note(const void *p, size_t bytes, int store,
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
__attribute__((always_inline)) static inline void warp_mma_note_cp(void *smem, const void *gmem, size_t size,
                                                                   size_t src_bytes)
{
    if (src_bytes) warp_mma_note(gmem, src_bytes, 0, 0);
    warp_mma_note(smem, size, 1, simt_cur_thread ? simt_cur_thread->lane * (unsigned int)size / 128u : 0);
}

__attribute__((always_inline)) static inline void warp_ldmatrix_run(uint32_t *r, const void *row, int nmat,
                                                                    int trans)
{
    struct warp_ldmatrix_lane m;
    /* Lanes 0 .. 8 nmat - 1 each give a 16-byte row, which must be 16-byte
     * aligned; on a GPU a misaligned row stops the kernel. The hardware reads
     * one 8 x 8 matrix (8 rows of 16 bytes, 128 bytes) at a time: for the
     * tracer each matrix is a request of its own, conflict-free when its 8
     * rows fall in 8 different groups of 4 banks. */
    if (simt_cur_thread && simt_cur_thread->lane < 8u * (unsigned int)nmat) {
        simt_check_aligned(trans ? "ldmatrix.trans" : "ldmatrix", "row address", row, 16);
        simt_check_shared(trans ? "ldmatrix.trans" : "ldmatrix", "row address", row, 16);
        warp_mma_note(row, 16, 0, simt_cur_thread->lane / 8u);
    }
    m.row = (const uint16_t *)row;
    m.nmat = nmat;
    m.trans = trans;
    static const char *const names[2][5] = {
        {"", "ldmatrix.x1", "ldmatrix.x2", "", "ldmatrix.x4"},
        {"", "ldmatrix.x1.trans", "ldmatrix.x2.trans", "", "ldmatrix.x4.trans"}};
    simt_warp_aligned(names[trans != 0][nmat], &m, warp_ldmatrix_combine);
    for (int j = 0; j < nmat; j++) r[j] = m.r[j];
}
#endif

/**
 * @brief D = A * B + C for one m16n8k16 tile, bf16 inputs, fp32 accumulate
 *        (mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32). Warp-collective.
 * @param d four fp32 outputs of this lane (layout in the file comment).
 * @param a four registers of A, two bf16 each. @param b two registers of B.
 * @param c four fp32 inputs of this lane; may alias d.
 */
static __device__ __forceinline__ void mma_m16n8k16_bf16_f32(float d[4], const uint32_t a[4], const uint32_t b[2],
                                                             const float c[4])
{
#if defined(__CUDA_ARCH__)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                   "f"(c[2]), "f"(c[3]));
#elif defined(__SIMT_EMULATOR__)
    warp_mma_run(d, a, b, c, 1);
#else
    (void)d; (void)a; (void)b; (void)c;
#endif
}

/**
 * @brief D = A * B + C for one m16n8k16 tile, fp16 inputs, fp32 accumulate
 *        (mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32). Warp-collective.
 * @param d four fp32 outputs. @param a four registers of A (two fp16 each).
 * @param b two registers of B. @param c four fp32 inputs; may alias d.
 */
static __device__ __forceinline__ void mma_m16n8k16_f16_f32(float d[4], const uint32_t a[4], const uint32_t b[2],
                                                            const float c[4])
{
#if defined(__CUDA_ARCH__)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                   "f"(c[2]), "f"(c[3]));
#elif defined(__SIMT_EMULATOR__)
    warp_mma_run(d, a, b, c, 0);
#else
    (void)d; (void)a; (void)b; (void)c;
#endif
}

/** @brief ldmatrix .x1: one 8x8 matrix of 16-bit elements from shared memory.
 *  @param r one register out. @param row_ptr this lane's row address (lanes 0-7 used; 16-byte aligned). */
static __device__ __forceinline__ void ldmatrix_x1(uint32_t r[1], const void *row_ptr)
{
#if defined(__CUDA_ARCH__)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(warp_mma_smem_addr(row_ptr)));
#elif defined(__SIMT_EMULATOR__)
    warp_ldmatrix_run(r, row_ptr, 1, 0);
#else
    (void)r; (void)row_ptr;
#endif
}

/** @brief ldmatrix .x2: two 8x8 matrices. @param r two registers out.
 *  @param row_ptr this lane's row address (lanes 0-15 used). */
static __device__ __forceinline__ void ldmatrix_x2(uint32_t r[2], const void *row_ptr)
{
#if defined(__CUDA_ARCH__)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(warp_mma_smem_addr(row_ptr)));
#elif defined(__SIMT_EMULATOR__)
    warp_ldmatrix_run(r, row_ptr, 2, 0);
#else
    (void)r; (void)row_ptr;
#endif
}

/** @brief ldmatrix .x4: four 8x8 matrices. @param r four registers out.
 *  @param row_ptr this lane's row address (all 32 lanes used). */
static __device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void *row_ptr)
{
#if defined(__CUDA_ARCH__)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(warp_mma_smem_addr(row_ptr)));
#elif defined(__SIMT_EMULATOR__)
    warp_ldmatrix_run(r, row_ptr, 4, 0);
#else
    (void)r; (void)row_ptr;
#endif
}

/** @brief ldmatrix .x1.trans: one 8x8 matrix, transposed. @param r one register out.
 *  @param row_ptr this lane's row address (lanes 0-7 used). */
static __device__ __forceinline__ void ldmatrix_x1_trans(uint32_t r[1], const void *row_ptr)
{
#if defined(__CUDA_ARCH__)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                 : "=r"(r[0]) : "r"(warp_mma_smem_addr(row_ptr)));
#elif defined(__SIMT_EMULATOR__)
    warp_ldmatrix_run(r, row_ptr, 1, 1);
#else
    (void)r; (void)row_ptr;
#endif
}

/** @brief ldmatrix .x2.trans: two 8x8 matrices, transposed. @param r two registers out.
 *  @param row_ptr this lane's row address (lanes 0-15 used). */
static __device__ __forceinline__ void ldmatrix_x2_trans(uint32_t r[2], const void *row_ptr)
{
#if defined(__CUDA_ARCH__)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(warp_mma_smem_addr(row_ptr)));
#elif defined(__SIMT_EMULATOR__)
    warp_ldmatrix_run(r, row_ptr, 2, 1);
#else
    (void)r; (void)row_ptr;
#endif
}

/** @brief ldmatrix .x4.trans: four 8x8 matrices, transposed. @param r four registers out.
 *  @param row_ptr this lane's row address (all 32 lanes used). */
static __device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void *row_ptr)
{
#if defined(__CUDA_ARCH__)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(warp_mma_smem_addr(row_ptr)));
#elif defined(__SIMT_EMULATOR__)
    warp_ldmatrix_run(r, row_ptr, 4, 1);
#else
    (void)r; (void)row_ptr;
#endif
}

/** @brief cp.async of 4 bytes, global to shared, cached in L1 (.ca).
 *  @param smem destination in shared memory (4-byte aligned). @param gmem source in global memory. */
static __device__ __forceinline__ void cp_async_4(void *smem, const void *gmem)
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(warp_mma_smem_addr(smem)), "l"(gmem));
#elif defined(__SIMT_EMULATOR__)
    warp_mma_note_cp(smem, gmem, 4, 4);
    simt_cp_async(smem, gmem, 4, 4);
#else
    (void)smem; (void)gmem;
#endif
}

/** @brief cp.async of 8 bytes (.ca). @param smem destination (8-byte aligned). @param gmem source. */
static __device__ __forceinline__ void cp_async_8(void *smem, const void *gmem)
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(warp_mma_smem_addr(smem)), "l"(gmem));
#elif defined(__SIMT_EMULATOR__)
    warp_mma_note_cp(smem, gmem, 8, 8);
    simt_cp_async(smem, gmem, 8, 8);
#else
    (void)smem; (void)gmem;
#endif
}

/** @brief cp.async of 16 bytes, bypassing L1 (.cg). @param smem destination (16-byte aligned).
 *  @param gmem source (16-byte aligned). */
static __device__ __forceinline__ void cp_async_16(void *smem, const void *gmem)
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(warp_mma_smem_addr(smem)), "l"(gmem));
#elif defined(__SIMT_EMULATOR__)
    warp_mma_note_cp(smem, gmem, 16, 16);
    simt_cp_async(smem, gmem, 16, 16);
#else
    (void)smem; (void)gmem;
#endif
}

/** @brief cp.async of 16 bytes of which only src_bytes are read; the rest of the
 *  destination is zero-filled (for tiles that run past a matrix edge).
 *  @param smem destination. @param gmem source. @param src_bytes 0..16 bytes to read;
 *  more (or a negative count, a huge one to the hardware) is undefined on a GPU
 *  and stops the launch in the emulator. */
static __device__ __forceinline__ void cp_async_16_zfill(void *smem, const void *gmem, int src_bytes)
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(warp_mma_smem_addr(smem)), "l"(gmem),
                 "r"(src_bytes));
#elif defined(__SIMT_EMULATOR__)
    warp_mma_note_cp(smem, gmem, 16, src_bytes < 0 ? 0 : src_bytes > 16 ? 16 : (size_t)src_bytes);
    simt_cp_async(smem, gmem, 16, (size_t)(uint32_t)src_bytes); /* a .u32 operand, as the PTX has it */
#else
    (void)smem; (void)gmem; (void)src_bytes;
#endif
}

/** @brief Close the current group of cp.async copies (cp.async.commit_group). */
static __device__ __forceinline__ void cp_async_commit_group(void)
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.commit_group;\n" ::);
#elif defined(__SIMT_EMULATOR__)
    simt_cp_async_commit();
#endif
}

/** @brief Wait until at most @p n committed groups are pending (cp.async.wait_group n).
 *  The PTX takes n as an immediate, so pass a constant from 0 to 7.
 *  @param n groups that may stay in flight. */
static __device__ __forceinline__ void cp_async_wait_group(int n)
{
#if defined(__CUDA_ARCH__)
    switch (n) {
    case 0: asm volatile("cp.async.wait_group 0;\n" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;\n" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;\n" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;\n" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;\n" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 7;\n" ::: "memory"); break;
    }
#elif defined(__SIMT_EMULATOR__)
    simt_cp_async_wait(n);
#else
    (void)n;
#endif
}

/** @brief Wait for every cp.async copy of this thread (cp.async.wait_all). */
static __device__ __forceinline__ void cp_async_wait_all(void)
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#elif defined(__SIMT_EMULATOR__)
    simt_cp_async_commit();
    simt_cp_async_wait(0);
#endif
}

#endif /* COMMON_WARP_MMA_CUH */
