/** @file
 * Warp-level tensor-core building blocks for the labs: mma.sync m16n8k16
 * (bf16 or fp16 inputs, fp32 accumulators), ldmatrix (x1, x2, x4, with and
 * without .trans) and cp.async (4, 8 and 16 bytes, commit and wait groups).
 *
 * On the GPU (sm_80 and newer) each function is one inline PTX instruction.
 * In the CPU emulator (TARGET=emu) each calls the emulator's model of the
 * instruction (common/simt/include/simt_ptx.h), which has exactly the
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

#if defined(__CUDA_ARCH__)
/* Shared-memory address of a generic pointer, as the PTX operands want it. */
static __device__ __forceinline__ uint32_t warp_mma_smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
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
    simt_mma_m16n8(d, a, b, c, 1);
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
    simt_mma_m16n8(d, a, b, c, 0);
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
    simt_ldmatrix(r, row_ptr, 1, 0);
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
    simt_ldmatrix(r, row_ptr, 2, 0);
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
    simt_ldmatrix(r, row_ptr, 4, 0);
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
    simt_ldmatrix(r, row_ptr, 1, 1);
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
    simt_ldmatrix(r, row_ptr, 2, 1);
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
    simt_ldmatrix(r, row_ptr, 4, 1);
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
    simt_cp_async_issue(smem, gmem, 4, 4);
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
    simt_cp_async_issue(smem, gmem, 8, 8);
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
    simt_cp_async_issue(smem, gmem, 16, 16);
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
    simt_cp_async_issue(smem, gmem, 16, (size_t)(uint32_t)src_bytes); /* a .u32 operand, as the PTX has it */
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
