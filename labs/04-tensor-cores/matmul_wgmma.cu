/*
 * Lab 04, step C (bonus, Hopper): TMA loads and wgmma by warpgroups,
 * with a producer warpgroup and two consumer warpgroups.
 *
 * A block has 3 warpgroups of 4 warps (384 threads) and computes a
 * 128 x 256 tile of C. Warpgroup 0 is the producer: one of its threads asks
 * the TMA unit (the bulk tensor copy engine) for whole tiles of A and B,
 * which land in shared memory already swizzled, and an mbarrier counts the
 * bytes in. Warpgroups 1 and 2 are the consumers: each waits for a stage to
 * fill, then issues wgmma.mma_async on 64 rows x 256 columns, reading both
 * operands straight from shared memory through 64-bit matrix descriptors,
 * with the fp32 accumulators in registers (128 per thread). When a stage has
 * been consumed they arrive on its "empty" barrier so the producer can
 * refill it. WG_STAGES stages circulate, so copies run ahead of the math.
 *
 * Runs on a compute-capability 9.0 GPU from a binary built for sm_90a
 * (wgmma and setmaxnreg exist only there) and in the CPU emulator, which
 * emulates the mbarriers, TMA copies and wgmma of common/hopper.cuh as the
 * PTX ISA describes them. For every other build (sm_80, plain sm_90) the
 * kernel body is compiled out and matmul_wgmma() returns LAB_NEEDS_HOPPER;
 * the checks show that as a skip. The tensor maps for TMA are made on the
 * host with cuTensorMapEncodeTiled, a driver-API function, fetched at run
 * time through the runtime's entry point query so that the program neither
 * links nor needs libcuda to start. Plain C style over the one-instruction
 * wrappers of common/hopper.cuh: no CUTLASS, no CuTe.
 * [[maybe_unused]] marks the variables the starter declares for the TODO
 * blocks: until they are written, nvcc -Werror would reject them as unused.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include <cuda.h> /* CUtensorMap and its enums only: no cu* function is linked */

#include "hopper.cuh"
#include "lab.h"
#include "matmul_ladder.h"
#include "tile_order.cuh"

#define WG_BM 128          /* rows of C per block: 2 consumers x 64 */
#define WG_BN 256          /* columns of C per block */
#define WG_BK 64           /* 64 bf16 = 128 bytes: one 128-byte swizzle row */
#ifndef WG_STAGES
#define WG_STAGES 4        /* sweep with LAB_DEFS=-DWG_STAGES=3 */
#endif
#define WG_CONSUMERS 2
#ifndef WG_GROUP_M
#define WG_GROUP_M 16      /* rows of tiles per rasterisation group (grouped_tile_origin) */
#endif
#define WG_THREADS (128 * (WG_CONSUMERS + 1))
#define WG_A_BYTES (WG_BM * WG_BK * 2)  /* 16 KB */
#define WG_B_BOX_N 64                   /* TMA box of B: 64 columns (128 bytes) x WG_BK rows */
#define WG_B_BOX_BYTES (WG_B_BOX_N * WG_BK * 2)  /* 8 KB */
#define WG_B_BYTES (WG_BK * WG_BN * 2)  /* 32 KB: WG_BN / 64 boxes side by side */
#define WG_STAGE_BYTES (WG_A_BYTES + WG_B_BYTES)
/* 1 KB of slack to align the stages to 1024 bytes, the period of the
 * 128-byte swizzle pattern (8 rows x 128 bytes). The __align__(1024) of the
 * extern array already gives that alignment with nvcc, so the kernel's
 * realignment is a safeguard that costs nothing (ptxas folds it away). */
#define WG_SMEM_BYTES (WG_STAGES * WG_STAGE_BYTES + 1024)
/* A consumer releases the stage before the one its last wgmma reads, so
 * one stage alone would be refilled under that wgmma; and an H100/H200
 * gives a block at most 227 KB of shared memory. */
static_assert(WG_STAGES >= 2, "WG_STAGES: at least 2 (a consumer releases the stage before the one it reads)");
static_assert(WG_SMEM_BYTES <= 227 * 1024, "WG_STAGES: at most 4 stages of 48 KB fit the 227 KB of an H100/H200");
static_assert(WG_GROUP_M >= 1, "WG_GROUP_M: at least one row of tiles per group");

/*
 * A shared-memory matrix descriptor for wgmma (64 bits):
 *   bits  0-13  start address >> 4
 *   bits 16-29  leading-dimension byte offset >> 4
 *   bits 32-45  stride-dimension byte offset >> 4
 *   bits 49-51  base offset (0: our stages are 1024-byte aligned)
 *   bits 62-63  swizzle mode (1 = 128-byte swizzle)
 * With the 128-byte swizzle a "row" of the pattern is 128 bytes and the
 * pattern repeats every 8 rows (1024 bytes). For A (K-major: 64 K values
 * per 128-byte row) the stride offset is the step from one group of 8 rows
 * to the next, 1024 bytes, and the leading offset is unused (set to 16).
 * For B (N-major: 64 N values per 128-byte row, one row per k) the stride
 * offset steps 8 k-rows (1024 bytes) and the leading offset steps to the
 * next 64 columns of N, the next TMA box: WG_B_BOX_BYTES.
 */
__device__ __forceinline__ uint64_t make_smem_desc(const void *p, uint32_t lead_bytes,
                                                          uint32_t stride_bytes) {
    /* TODO(C1) begin */
    /* Task 9. Pack the descriptor as the comment above says: the shared
     * address (hopper_smem_addr(p)) >> 4 in bits 0-13, lead_bytes >> 4 in bits
     * 16-29, stride_bytes >> 4 in bits 32-45, and 1 in bits 62-63. */
    (void)p; (void)lead_bytes; (void)stride_bytes;
    return 0;
    /* TODO(C1) end */
}

/* C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, row-major; A and B
 * bf16 read through the tensor maps tmA (box WG_BK x WG_BM) and tmB (box
 * WG_B_BOX_N x WG_BK), C fp32. The grid has one block per tile of C
 * (ceil(N / WG_BN) x ceil(M / WG_BM)); grouped_tile_origin says which tile a block
 * owns. */
__global__ void __launch_bounds__(WG_THREADS, 1)
matmul_wgmma_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                    int M, int N, int K, float alpha, float beta, float *C) {
#if defined(HOPPER_DEVICE)
    extern __shared__ __align__(1024) uint8_t wg_smem_raw[];
    __shared__ __align__(8) uint64_t full[WG_STAGES], empty[WG_STAGES];
    /* The swizzle pattern is anchored at 1024-byte boundaries of the shared
     * address space, so start the stages on one. */
    [[maybe_unused]] uint8_t *smem = wg_smem_raw + ((1024 - (hopper_smem_addr(wg_smem_raw) & 1023)) & 1023);
    [[maybe_unused]] int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    [[maybe_unused]] int m0, n0;
    grouped_tile_origin(WG_GROUP_M, WG_BM, WG_BN, &m0, &n0); /* kernels/tile_order.cuh: the grouped order, for L2 */
    [[maybe_unused]] int ktiles = (K + WG_BK - 1) / WG_BK;

    if (threadIdx.x == 0) {
        for (int s = 0; s < WG_STAGES; s++) {
            mbar_init(&full[s], 1);                   /* the producer's arrive + the bytes */
            mbar_init(&empty[s], WG_CONSUMERS * 128); /* every consumer thread */
        }
        mbar_fence_init();
    }
    __syncthreads();

    if (wg == 0) {
        /* ---- producer warpgroup ---- */
        setmaxnreg_dec(40); /* registers to the consumers: 40 x 128 + 232 x 256 <= 65536 */
        /* TODO(C2) begin */
        /* Task 10. Thread 0 of the producer loops over the k-tiles kt:
         * stage s = kt % WG_STAGES, round kt / WG_STAGES; wait on empty[s]
         * for parity (round & 1) ^ 1; mbar_arrive_expect_tx(&full[s],
         * WG_STAGE_BYTES); tma_load_2d the A box at (kt * WG_BK, m0) and the
         * WG_BN / WG_B_BOX_N boxes of B at (n0 + j * WG_B_BOX_N, kt * WG_BK)
         * into their places in the stage, all completing on full[s]. */
        (void)tid; (void)m0; (void)n0; (void)ktiles; (void)smem;
        /* TODO(C2) end */
    } else {
        /* ---- consumer warpgroups ---- */
        setmaxnreg_inc(232); /* 128 accumulators each */
        [[maybe_unused]] int c = wg - 1; /* this consumer's 64 rows: c * 64 .. c * 64 + 63 */
        [[maybe_unused]] float acc[128]; /* this consumer's 64 x 256 piece of C */
#pragma unroll
        for (int i = 0; i < 128; i++) acc[i] = 0.0f;
        /* TODO(C3) begin */
        /* Task 11. Loop over the k-tiles: wait on full[s] for parity
         * round & 1; wgmma_fence(); for each of the WG_BK / 16 slices kk make
         * A's descriptor (this consumer's 64 rows start c * 64 * 128 bytes
         * into the stage; + 32 bytes per kk; lead 16, stride 1024) and B's
         * (+ 16 * 128 bytes per kk; lead WG_B_BOX_BYTES, the step from one
         * 64-column box to the next; stride 1024) and call wgmma_m64n256k16
         * on acc with scale_d = 1 (add to acc, which starts at 0), all 256
         * columns at once; wgmma_commit(). Then
         * wgmma_wait_group(1), which leaves this k-tile's group in flight,
         * and release the stage before it
         * (kt > 0: mbar_arrive(&empty[(kt - 1) % WG_STAGES])). After the
         * loop, wgmma_wait_all() before the accumulators are read. After
         * each wait, wgmma_fence_acc(acc) keeps the compiler from moving
         * work on acc across it. */
        (void)c; (void)ktiles;
        /* TODO(C3) end */

        /* TODO(C4) begin */
        /* Task 12. Write acc: in warp w = tid / 32, lane l, acc[4 j + e]
         * (j = 0..31) is row c * 64 + 16 w + l / 4 (+ 8 for e >= 2), column
         * 8 j + 2 (l % 4) + e % 2 of the block's tile; store
         * alpha * acc + beta * C inside C only, not reading C when beta == 0. */
        (void)acc; (void)M; (void)N; (void)alpha; (void)beta; (void)C; (void)m0; (void)n0;
        /* TODO(C4) end */
    }
#else
    (void)M; (void)N; (void)K; (void)alpha; (void)beta; (void)C;
#endif
}

/* Whether this build can run wgmma here: 1 from an sm_90a build (or the
 * emulator), 0 from the PTX or machine code of any other target (which the
 * driver may pick). */
__global__ void matmul_wgmma_probe(int *out) {
#if defined(HOPPER_DEVICE)
    *out = 1;
#else
    *out = 0;
#endif
}

/* Copy a rows x cols bf16 matrix into one with row pitch ld >= cols, zeros
 * in the extra columns (for TMA, whose row strides must be multiples of 16 bytes). */
__global__ void matmul_wgmma_pad(const uint16_t *src, int rows, int cols, uint16_t *dst, int ld) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)rows * ld) return;
    int r = (int)(i / ld), c = (int)(i % ld);
    dst[i] = c < cols ? src[(size_t)r * cols + c] : (uint16_t)0;
}

/* The tile sizes this file was compiled with, for the checks' edge cases. */
extern "C" void matmul_wgmma_tiles(int *bm, int *bn, int *bk) {
    *bm = WG_BM;
    *bn = WG_BN;
    *bk = WG_BK;
}

/* A 2-D tensor map over a row-major bf16 matrix of rows x cols with row
 * pitch ld elements (ld * 2 must be a multiple of 16), copied in boxes of
 * box_rows x box_cols with the 128-byte swizzle; elements outside the
 * matrix read as zero. Returns 0 on success. */
static int wg_make_map(CUtensorMap *map, const uint16_t *base, int rows, int cols, int ld,
                       int box_rows, int box_cols) {
    /* TODO(C5) begin */
    /* Task 13. Call hopper_tensor_map_encoder()'s function for a 2-D bf16 map: sizes
     * {cols, rows} (innermost first), row stride {ld * 2} bytes, box
     * {box_cols, box_rows}, element strides {1, 1}, no interleave, the
     * 128-byte swizzle, L2 promotion 256B, out-of-bounds fill NONE (zeros).
     * Return 0 on CUDA_SUCCESS. */
    (void)map; (void)base; (void)rows; (void)cols; (void)ld; (void)box_rows; (void)box_cols;
    return -1;
    /* TODO(C5) end */
}

/* LAB_OK when this process can run the wgmma kernel: a compute-capability
 * 9.0 GPU, sm_90a code in this binary, and a driver with
 * cuTensorMapEncodeTiled (the emulator is all three). LAB_NEEDS_HOPPER
 * otherwise. */
extern "C" int matmul_wgmma_supported(void) {
    static int cached = -1;
    if (cached >= 0) return cached;
    cached = LAB_NEEDS_HOPPER;
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return cached;
    }
    if (major != 9 || minor != 0 || !hopper_tensor_map_encoder()) return cached;
    int *d = NULL, h = 0;
    if (cudaMalloc((void **)&d, sizeof(int)) != cudaSuccess) {
        (void)cudaGetLastError();
        return cached;
    }
    matmul_wgmma_probe<<<1, 1>>>(d);
    if (cudaGetLastError() == cudaSuccess && cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess &&
        h == 1)
        cached = LAB_OK;
    (void)cudaGetLastError();
    cudaFree(d);
    return cached;
}

/* Launch over all of C. A, B hold bf16 bit patterns on the device; C fp32.
 * Returns LAB_OK, LAB_BAD_ARGUMENT for a size below 1, LAB_NEEDS_HOPPER
 * where wgmma cannot run, or LAB_LAUNCH_FAILED. */
extern "C" int matmul_wgmma(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B,
                            float beta, float *C) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    int st = matmul_wgmma_supported();
    if (st != LAB_OK) return st;
    /* TMA wants 16-byte-aligned rows: K and N multiples of 8 bf16 and
     * aligned base pointers. Otherwise copy A and/or B once into padded
     * buffers (zeros in the extra columns), which costs O(MK + KN) against
     * the matmul's O(MNK). */
    int ldA = (K + 7) / 8 * 8, ldB = (N + 7) / 8 * 8;
    uint16_t *Ap = NULL, *Bp = NULL;
    [[maybe_unused]] const uint16_t *Ause = A, *Buse = B;
    if (ldA != K || (uintptr_t)A % 16 != 0) {
        if (cudaMalloc((void **)&Ap, (size_t)M * ldA * 2) != cudaSuccess) return LAB_LAUNCH_FAILED;
        size_t n = (size_t)M * ldA;
        matmul_wgmma_pad<<<(unsigned)((n + 255) / 256), 256>>>(A, M, K, Ap, ldA);
        Ause = Ap;
    }
    if (ldB != N || (uintptr_t)B % 16 != 0) {
        if (cudaMalloc((void **)&Bp, (size_t)K * ldB * 2) != cudaSuccess) {
            cudaFree(Ap);
            return LAB_LAUNCH_FAILED;
        }
        size_t n = (size_t)K * ldB;
        matmul_wgmma_pad<<<(unsigned)((n + 255) / 256), 256>>>(B, K, N, Bp, ldB);
        Buse = Bp;
    }
    int status = LAB_OK;
    /* TODO(C6) begin */
    /* Task 14. Make the tensor maps (A: M rows x ldA columns, box
     * WG_BM x WG_BK; B: K rows x ldB columns, box WG_BK x WG_B_BOX_N), raise
     * the kernel's dynamic shared memory to WG_SMEM_BYTES, launch
     * ceil(N / WG_BN) x ceil(M / WG_BM) blocks of WG_THREADS threads, and set
     * status to LAB_LAUNCH_FAILED on any error. Delete the lines below. */
    (void)wg_make_map; (void)Ause; (void)Buse; (void)alpha; (void)beta; (void)C;
    status = LAB_NOT_IMPLEMENTED;
    /* TODO(C6) end */
    /* cudaFree waits for the kernel that still reads the padded copies. */
    if (Ap) cudaFree(Ap);
    if (Bp) cudaFree(Bp);
    return status;
}
