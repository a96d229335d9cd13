/** @file
 * The matmul ladder of labs 01-04: the functions students write, one per
 * step, as the checks, the benchmarks and the train program call them.
 *
 * Each student file includes this header, so a definition whose parameters
 * differ from these (a double alpha, a size_t size) is a compile error that
 * names both, instead of a kernel that runs on garbage arguments. The
 * definitions live in the .cu files of labs/NN-topic/ (and solutions/):
 * nothing here is implemented by the course.
 *
 * Every matmul computes C = alpha * A * B + beta * C on device pointers,
 * row-major, A M x K, B K x N, C M x N, for any M, N, K >= 1, and does not
 * read C when beta == 0 (kernels/gemm_harness.h tests exactly that). Each
 * returns a lab_status_t (common/lab.h): LAB_OK, LAB_NOT_IMPLEMENTED while
 * its TODO is there, LAB_BAD_ARGUMENT for a size below 1, LAB_LAUNCH_FAILED,
 * and for wgmma LAB_NEEDS_HOPPER. The *_tiles functions report the tile
 * sizes a file was compiled with (they may be changed with -D), so the
 * checks aim their edge cases at the tiles that are really there.
 */
#ifndef COURSE_MATMUL_LADDER_H
#define COURSE_MATMUL_LADDER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- lab 01: one thread per element of C ------------------------------------ */

/** @brief Lab 01, task 1-2: the naive matmul with threadIdx.x along the rows
 *  of C (uncoalesced loads of A, strided stores of C).
 *  @param M rows of A and C @param N columns of B and C @param K inner dimension
 *  @param alpha scale of A*B @param A M x K @param B K x N
 *  @param beta scale of C @param C M x N, updated in place
 *  @return a lab_status_t */
int matmul_naive_uncoalesced(int M, int N, int K, float alpha, const float *A, const float *B,
                             float beta, float *C);

/** @brief Lab 01, task 3: the naive matmul with threadIdx.x along the columns
 *  of C (a warp reads 32 neighbouring floats of B).
 *  @param M rows of A and C @param N columns of B and C @param K inner dimension
 *  @param alpha scale of A*B @param A M x K @param B K x N
 *  @param beta scale of C @param C M x N, updated in place
 *  @return a lab_status_t */
int matmul_naive(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                 float *C);

/* ---- lab 02: tiles in shared memory ----------------------------------------- */

/** @brief Lab 02: TILE x TILE tiles of A and B staged in shared memory.
 *  @param M rows of A and C @param N columns of B and C @param K inner dimension
 *  @param alpha scale of A*B @param A M x K @param B K x N
 *  @param beta scale of C @param C M x N, updated in place
 *  @return a lab_status_t */
int matmul_smem(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                float *C);

/** @brief The TILE that matmul_smem's file was compiled with.
 *  @return the tile edge, in elements */
int matmul_smem_tile(void);

/* ---- lab 03: register tiling ------------------------------------------------ */

/** @brief Lab 03, step 1: each thread computes TM elements of a column of C.
 *  @param M rows of A and C @param N columns of B and C @param K inner dimension
 *  @param alpha scale of A*B @param A M x K @param B K x N
 *  @param beta scale of C @param C M x N, updated in place
 *  @return a lab_status_t */
int matmul_blocktile_1d(int M, int N, int K, float alpha, const float *A, const float *B,
                        float beta, float *C);

/** @brief Lab 03, step 2: each thread computes a TM x TN micro-tile of C.
 *  @param M rows of A and C @param N columns of B and C @param K inner dimension
 *  @param alpha scale of A*B @param A M x K @param B K x N
 *  @param beta scale of C @param C M x N, updated in place
 *  @return a lab_status_t */
int matmul_blocktile_2d(int M, int N, int K, float alpha, const float *A, const float *B,
                        float beta, float *C);

/** @brief Lab 03, step 3: step 2 with 128-bit loads and the A tile
 *  transposed in shared memory (scalar loads where a row is not 16-byte aligned).
 *  @param M rows of A and C @param N columns of B and C @param K inner dimension
 *  @param alpha scale of A*B @param A M x K @param B K x N
 *  @param beta scale of C @param C M x N, updated in place
 *  @return a lab_status_t */
int matmul_vectorized(int M, int N, int K, float alpha, const float *A, const float *B,
                      float beta, float *C);

/** @brief Lab 03, step 4: warp tiling, the block's tile split among warps.
 *  @param M rows of A and C @param N columns of B and C @param K inner dimension
 *  @param alpha scale of A*B @param A M x K @param B K x N
 *  @param beta scale of C @param C M x N, updated in place
 *  @return a lab_status_t */
int matmul_warptile(int M, int N, int K, float alpha, const float *A, const float *B,
                    float beta, float *C);

/** @brief The block tile matmul_blocktile_1d's file was compiled with.
 *  @param bm BM, rows of C per block @param bn BN, columns @param bk BK, the K step */
void matmul_blocktile_1d_tiles(int *bm, int *bn, int *bk);

/** @brief The block tile matmul_blocktile_2d's file was compiled with.
 *  @param bm BM, rows of C per block @param bn BN, columns @param bk BK, the K step */
void matmul_blocktile_2d_tiles(int *bm, int *bn, int *bk);

/** @brief The block tile matmul_vectorized's file was compiled with.
 *  @param bm BM, rows of C per block @param bn BN, columns @param bk BK, the K step */
void matmul_vectorized_tiles(int *bm, int *bn, int *bk);

/** @brief The block tile matmul_warptile's file was compiled with.
 *  @param bm BM, rows of C per block @param bn BN, columns @param bk BK, the K step */
void matmul_warptile_tiles(int *bm, int *bn, int *bk);

/* ---- lab 04: tensor cores, bf16 inputs, fp32 accumulation -------------------- */

/** @brief Lab 04, step A: WMMA 16x16x16 fragments from shared-memory tiles.
 *  @param M rows of A and C @param N columns of B and C @param K inner dimension
 *  @param alpha scale of A*B @param A M x K, bf16 bit patterns @param B K x N, bf16
 *  @param beta scale of C @param C M x N, fp32, updated in place
 *  @return a lab_status_t */
int matmul_wmma(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B, float beta,
                float *C);

/** @brief Lab 04, step B: mma.sync m16n8k16 with ldmatrix from swizzled
 *  shared memory, fed by a cp.async pipeline.
 *  @param M rows of A and C @param N columns of B and C @param K inner dimension
 *  @param alpha scale of A*B @param A M x K, bf16 bit patterns @param B K x N, bf16
 *  @param beta scale of C @param C M x N, fp32, updated in place
 *  @return a lab_status_t */
int matmul_mma(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B, float beta,
               float *C);

/** @brief Lab 04, step C (Hopper bonus): TMA loads and wgmma, producer and
 *  consumer warpgroups. LAB_NEEDS_HOPPER where it cannot run.
 *  @param M rows of A and C @param N columns of B and C @param K inner dimension
 *  @param alpha scale of A*B @param A M x K, bf16 bit patterns @param B K x N, bf16
 *  @param beta scale of C @param C M x N, fp32, updated in place
 *  @return a lab_status_t */
int matmul_wgmma(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B,
                 float beta, float *C);

/** @brief Can matmul_wgmma run in this process: a compute-capability 9.0 GPU,
 *  sm_90a code in the binary and a driver with cuTensorMapEncodeTiled (the
 *  emulator has all three)?
 *  @return LAB_OK or LAB_NEEDS_HOPPER */
int matmul_wgmma_supported(void);

/** @brief The block tile matmul_wmma's file was compiled with.
 *  @param bm rows of C per block @param bn columns @param bk the K step */
void matmul_wmma_tiles(int *bm, int *bn, int *bk);

/** @brief The block tile matmul_mma's file was compiled with.
 *  @param bm rows of C per block @param bn columns @param bk the K step */
void matmul_mma_tiles(int *bm, int *bn, int *bk);

/** @brief The block tile matmul_wgmma's file was compiled with.
 *  @param bm rows of C per block @param bn columns @param bk the K step */
void matmul_wgmma_tiles(int *bm, int *bn, int *bk);

#ifdef __cplusplus
}
#endif

#endif /* COURSE_MATMUL_LADDER_H */
