/** @file
 * Hopper (sm_90a) building blocks for the labs: mbarriers, TMA tile loads
 * (the bulk tensor copy engine), and wgmma, the warpgroup-wide asynchronous
 * matrix multiply, with register hand-over between warpgroups (setmaxnreg).
 *
 * On an sm_90a device build each function is one inline PTX instruction. In
 * the CPU emulator (TARGET=emu) each is emulated as the PTX ISA describes
 * it (common/simt/src/simt_hopper.c): an mbarrier counts arrivals and
 * transaction bytes and completes phases, a thread waiting on one sleeps, a
 * TMA copy fills its box (zeros past the tensor's edges) with the
 * shared-memory swizzle and lands when its barrier is waited on, and a wgmma
 * reads its operands through the matrix descriptors and runs when the
 * warpgroup waits for its group. So the same kernel runs, and is checked, on
 * both; a wrong descriptor, swizzle, parity or byte count gives the same kind
 * of wrong answer (or hang, reported as a deadlock) here as there. For every
 * other build (sm_80, plain sm_90, the host pass) the functions compile to
 * nothing and HOPPER_DEVICE is not defined: guard kernel bodies with it.
 *
 * The conventions the kernels rely on:
 *  - an mbarrier is a uint64_t in shared memory, in phase 0 after
 *    mbar_init; mbar_wait(bar, p) returns once the phase of parity p has
 *    completed, so on a fresh barrier mbar_wait(bar, 1) returns at once;
 *  - a TMA box lands row after row, innermost dimension first; with the
 *    128-byte swizzle, 16-byte chunk c of a 128-byte row r is stored at
 *    chunk c ^ (r % 8), counting rows by shared address (so align buffers to
 *    1024 bytes);
 *  - wgmma_m64n128k16: thread t of the warpgroup (warp w = t / 32, lane l)
 *    holds d[4j + e] = D[16w + l/4 + 8(e/2)][8j + 2(l%4) + e%2], j = 0..15;
 *    wgmma_m64n256k16 the same with j = 0..31, so its 128 accumulators are
 *    those of two m64n128k16 side by side (columns 0-127, then 128-255).
 */
#ifndef COMMON_HOPPER_CUH
/* Doxygen does not see this as an include guard once the file has
 * function-like macros (setmaxnreg_*); keep it out of the reference. */
/** @cond */
#define COMMON_HOPPER_CUH
/** @endcond */

#include <cuda.h> /* CUtensorMap and its enums only: no cu* function is linked */
#include <cuda_runtime.h>
#include <stdint.h>

/* The arch-specific feature macro is what nvcc defines for compute_90a, not
 * for compute_90 or older: wgmma and setmaxnreg exist only there. */
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
/** Defined in an sm_90a device pass: the functions are PTX. */
#define HOPPER_PTX 1
#endif
#if defined(__SIMT_EMULATOR__) && !defined(__CUDA_ARCH__)
/** Defined in the CPU emulator: the functions are emulated. */
#define HOPPER_EMU 1
#endif
#if defined(HOPPER_PTX) || defined(HOPPER_EMU)
/** Defined where the Hopper path runs: an sm_90a device pass, or the emulator. */
#define HOPPER_DEVICE 1
#endif

/** @brief The shared-memory address of a generic pointer into shared memory,
 *  as PTX operands and wgmma descriptors want it. @param p the pointer.
 *  @return its 32-bit shared address (0 where the Hopper path is not built). */
static __device__ __forceinline__ uint32_t hopper_smem_addr(const void *p)
{
#if defined(HOPPER_PTX)
    return (uint32_t)__cvta_generic_to_shared(p);
#elif defined(HOPPER_EMU)
    return simt_dynamic_shared_addr(p);
#else
    (void)p;
    return 0;
#endif
}

/** @brief mbarrier.init: a barrier that completes a phase after @p count
 *  arrivals (and, after mbar_arrive_expect_tx, the announced bytes).
 *  @param bar the barrier, in shared memory. @param count arrivals per phase. */
static __device__ __forceinline__ void mbar_init(uint64_t *bar, int count)
{
#if defined(HOPPER_PTX)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(hopper_smem_addr(bar)), "r"(count));
#elif defined(HOPPER_EMU)
    simt_mbar_init(bar, (unsigned int)count);
#else
    (void)bar; (void)count;
#endif
}

/** @brief Make initialised barriers visible to the TMA unit (the async proxy);
 *  call once after the mbar_init calls, before a __syncthreads. */
static __device__ __forceinline__ void mbar_fence_init(void)
{
#if defined(HOPPER_PTX)
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

/** How long one mbar_wait may wait on a GPU before it stops the kernel
 *  (__trap, "unspecified launch failure"), in nanoseconds; 0 waits forever.
 *  A wrong parity, a short expect_tx or a missing arrival would otherwise
 *  hang the GPU until the process is killed; a correct pipeline waits
 *  microseconds. Short, because each graded test that hangs costs it once.
 *  Raise it (or 0) under compute-sanitizer or a debugger. */
#ifndef HOPPER_WAIT_TIMEOUT_NS
#define HOPPER_WAIT_TIMEOUT_NS 2000000000ull
#endif

/** @brief Block until the phase with this parity has completed. A fresh
 *  barrier is in phase 0, so waiting for parity 1 returns at once. On a GPU
 *  a wait longer than HOPPER_WAIT_TIMEOUT_NS stops the kernel; the emulator
 *  reports the deadlock itself.
 *  @param bar the barrier. @param parity 0 or 1. */
#if defined(HOPPER_EMU)
/* The emulator's version also takes the caller's file and line (filled in at
 * the call), which its deadlock report names. */
static __device__ __forceinline__ void mbar_wait(uint64_t *bar, int parity, const char *file = __builtin_FILE(),
                                                 int line = __builtin_LINE())
#else
static __device__ __forceinline__ void mbar_wait(uint64_t *bar, int parity)
#endif
{
#if defined(HOPPER_PTX)
    const uint32_t addr = hopper_smem_addr(bar);
    uint64_t start = 0;
    for (uint32_t spins = 0;; spins++) {
        uint32_t done;
        asm volatile("{\n"
                     ".reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n"
                     "}\n"
                     : "=r"(done)
                     : "r"(addr), "r"(parity)
                     : "memory");
        if (done) return;
        if (HOPPER_WAIT_TIMEOUT_NS != 0 && spins % 1024 == 0) { /* try_wait itself sleeps a little each time */
            uint64_t now;
            asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now));
            if (spins == 0) start = now;
            else if (now - start > (uint64_t)HOPPER_WAIT_TIMEOUT_NS) __trap();
        }
    }
#elif defined(HOPPER_EMU)
    simt_mbar_wait_parity_at(bar, parity, file, line);
#else
    (void)bar; (void)parity;
#endif
}

/** @brief Arrive once on the barrier. @param bar the barrier. */
static __device__ __forceinline__ void mbar_arrive(uint64_t *bar)
{
#if defined(HOPPER_PTX)
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(hopper_smem_addr(bar)) : "memory");
#elif defined(HOPPER_EMU)
    simt_mbar_arrive(bar, 0);
#else
    (void)bar;
#endif
}

/** @brief Arrive once and announce @p bytes of TMA traffic that the phase
 *  must also wait for. @param bar the barrier. @param bytes bytes to come. */
static __device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes)
{
#if defined(HOPPER_PTX)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(hopper_smem_addr(bar)),
                 "r"(bytes) : "memory");
#elif defined(HOPPER_EMU)
    simt_mbar_arrive(bar, bytes);
#else
    (void)bar; (void)bytes;
#endif
}

/** @brief TMA: copy the box at coordinates (x innermost, y) of a 2-D tensor
 *  map into shared memory; its bytes complete on @p bar. Coordinates past the
 *  tensor's edges are allowed: those elements arrive as zeros, and count.
 *  @param dst shared destination (128-byte aligned; 1024 with the 128-byte
 *  swizzle). @param tmap the CUtensorMap (a __grid_constant__ kernel
 *  parameter). @param x innermost coordinate. @param y outer coordinate.
 *  @param bar the barrier. */
static __device__ __forceinline__ void tma_load_2d(void *dst, const void *tmap, int x, int y, uint64_t *bar)
{
#if defined(HOPPER_PTX)
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(hopper_smem_addr(dst)),
                 "l"(tmap), "r"(x), "r"(y), "r"(hopper_smem_addr(bar)) : "memory");
#elif defined(HOPPER_EMU)
    int c[2] = {x, y};
    simt_tma_load(dst, tmap, c, 2, bar);
#else
    (void)dst; (void)tmap; (void)x; (void)y; (void)bar;
#endif
}

/** @brief Order this thread's ordinary shared-memory accesses before later
 *  ones of the async proxy (TMA, wgmma) to the same memory:
 *  fence.proxy.async. Nothing to order in the emulator. */
static __device__ __forceinline__ void hopper_fence_proxy_async(void)
{
#if defined(HOPPER_PTX)
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

/** @brief Order this warpgroup's register accesses before the wgmma that follow. */
static __device__ __forceinline__ void wgmma_fence(void)
{
#if defined(HOPPER_PTX)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#elif defined(HOPPER_EMU)
    simt_wgmma_fence();
#endif
}

/** @brief Close the group of wgmma issued since the last commit. */
static __device__ __forceinline__ void wgmma_commit(void)
{
#if defined(HOPPER_PTX)
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#elif defined(HOPPER_EMU)
    simt_wgmma_commit();
#endif
}

/** @brief Wait until at most @p n committed wgmma groups of this warpgroup
 *  are still in flight (wgmma.wait_group n): the older groups' accumulators
 *  and operand shared memory are the kernel's again. The PTX takes n as an
 *  immediate, so pass a constant from 0 to 3.
 *  @param n groups that may stay in flight. */
static __device__ __forceinline__ void wgmma_wait_group(int n)
{
#if defined(HOPPER_PTX)
    switch (n) {
    case 0: asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); break;
    case 1: asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); break;
    case 2: asm volatile("wgmma.wait_group.sync.aligned 2;\n" ::: "memory"); break;
    default: asm volatile("wgmma.wait_group.sync.aligned 3;\n" ::: "memory"); break;
    }
#elif defined(HOPPER_EMU)
    simt_wgmma_wait(n < 0 ? 0 : n > 3 ? 3 : n);
#else
    (void)n;
#endif
}

/** @brief Wait until every committed wgmma group of this warpgroup has
 *  finished (wgmma_wait_group(0)); only then are the accumulators (and the
 *  operands' shared memory) the kernel's again. */
static __device__ __forceinline__ void wgmma_wait_all(void)
{
    wgmma_wait_group(0);
}

/** @brief Pin the accumulators at this point of the program.
 *
 *  To the compiler a wgmma's accumulators are ordinary registers written
 *  when the instruction is issued, and the waits above do not name them,
 *  so it may move arithmetic on them across a wait (ptxas then serialises
 *  the wgmmas to stay correct, which `make ptxas` reports as lost speed).
 *  An empty asm that reads and writes each one keeps every use of them on
 *  its side of the wait: call it after wgmma_wait_group() or
 *  wgmma_wait_all() (CUTLASS's warpgroup_fence_operand does the same).
 *  @param acc the accumulator array (its size is a template argument). */
template <int N>
static __device__ __forceinline__ void wgmma_fence_acc(float (&acc)[N])
{
#if defined(HOPPER_PTX)
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+f"(acc[i])::"memory");
#else
    (void)acc;
#endif
}

/* setmaxnreg hands registers between warpgroups: a producer that needs few
 * gives them to consumers that hold many accumulators. n is a literal
 * multiple of 8 in 24..256. Nothing happens in the emulator. */
#if defined(HOPPER_PTX)
/** Lower this warpgroup's register limit to n (a literal). */
#define setmaxnreg_dec(n) asm volatile("setmaxnreg.dec.sync.aligned.u32 " #n ";\n")
/** Raise this warpgroup's register limit to n (a literal). */
#define setmaxnreg_inc(n) asm volatile("setmaxnreg.inc.sync.aligned.u32 " #n ";\n")
#else
/** Lower this warpgroup's register limit to n (a literal). */
#define setmaxnreg_dec(n) ((void)0)
/** Raise this warpgroup's register limit to n (a literal). */
#define setmaxnreg_inc(n) ((void)0)
#endif

/**
 * @brief D (64 x 128, fp32, registers) += A (64 x 16, bf16, shared, K-major)
 * * B (16 x 128, bf16, shared, N-major), warpgroup-wide and asynchronous: the
 * result is there after wgmma_commit and wgmma_wait_all.
 * @param d this thread's 64 accumulators (layout in the file comment).
 * @param desc_a A's shared-memory matrix descriptor (rows of A hold K, as a
 * row-major A does). @param desc_b B's (rows of B hold N, as a row-major B
 * does). @param scale_d 0: ignore the old D (D = A B).
 */
static __device__ __forceinline__ void wgmma_m64n128k16(float d[64], uint64_t desc_a, uint64_t desc_b, int scale_d)
{
#if defined(HOPPER_PTX)
    /* Trailing immediates: scale-a 1, scale-b 1, transpose-a 0 (K-major),
     * transpose-b 1 (N-major). */
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
#elif defined(HOPPER_EMU)
    simt_wgmma(d, 128, desc_a, desc_b, scale_d, 1, 1, /*trans_a=*/0, /*trans_b=*/1, /*bf16=*/1);
#else
    (void)d; (void)desc_a; (void)desc_b; (void)scale_d;
#endif
}

/**
 * @brief D (64 x 256, fp32, registers) += A (64 x 16, bf16, shared, K-major)
 * * B (16 x 256, bf16, shared, N-major), warpgroup-wide and asynchronous, as
 * wgmma_m64n128k16 but twice as wide: A is read from shared memory once for
 * all 256 columns, not once per 128, the widest wgmma there is.
 * @param d this thread's 128 accumulators (layout in the file comment).
 * @param desc_a A's shared-memory matrix descriptor (rows of A hold K).
 * @param desc_b B's (rows of B hold N; with the 128-byte swizzle its four
 * 64-column pieces lie the leading offset apart). @param scale_d 0: ignore
 * the old D (D = A B).
 */
static __device__ __forceinline__ void wgmma_m64n256k16(float d[128], uint64_t desc_a, uint64_t desc_b, int scale_d)
{
#if defined(HOPPER_PTX)
    /* Operands: 128 accumulators, then the descriptors (%128, %129) and scale-d (%130). */
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
#elif defined(HOPPER_EMU)
    simt_wgmma(d, 256, desc_a, desc_b, scale_d, 1, 1, /*trans_a=*/0, /*trans_b=*/1, /*bf16=*/1);
#else
    (void)d; (void)desc_a; (void)desc_b; (void)scale_d;
#endif
}

/* ---- host: the tensor-map encoder ---------------------------------------- */

/** cuTensorMapEncodeTiled's type, from the driver API (cuda.h). */
typedef CUresult (*hopper_encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                           const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                           const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                           CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

/**
 * @brief The driver's cuTensorMapEncodeTiled, looked up once through the
 * runtime, so that a program neither links libcuda nor fails to start on a
 * machine without a driver.
 *
 * The versioned lookup, cudaGetDriverEntryPointByVersion, exists from CUDA
 * 12.5 on (and is the only one left in 13); older toolkits have only
 * cudaGetDriverEntryPoint, which 12.5 deprecated. Asks for the 12.0 ABI of
 * the function, the first that has it.
 * @return the function, or NULL when the driver lacks it (the error the
 *         lookup left is cleared)
 */
static inline hopper_encode_tiled_fn hopper_tensor_map_encoder(void)
{
    static hopper_encode_tiled_fn fn;
    static int looked;
    if (!looked) {
        looked = 1;
        void *p = NULL;
        cudaDriverEntryPointQueryResult q;
#if CUDART_VERSION >= 12050
        cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                         cudaEnableDefault, &q);
#else
        cudaError_t e = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &q);
#endif
        if (e == cudaSuccess && q == cudaDriverEntryPointSuccess) fn = (hopper_encode_tiled_fn)p;
        else (void)cudaGetLastError();
    }
    return fn;
}

#endif /* COMMON_HOPPER_CUH */
