/*
 * The emulator's Hopper model beyond what a GPU can be asked in a test:
 * cuTensorMapEncodeTiled refusing what the driver refuses, and the kernel
 * bugs the emulator turns into failures instead of undefined behaviour:
 * a wait that never completes (reported as a deadlock, not a hang), more
 * arrivals in one phase than a barrier's count, an expect_tx smaller than the bytes the
 * copies bring, reading a TMA destination before waiting (stale data, as a
 * GPU may show), reading wgmma accumulators before wgmma.wait_group (the old
 * values), threads of a warpgroup disagreeing on a wgmma, partial
 * warpgroups, TMA destinations outside dynamic shared memory or misaligned,
 * and descriptors the emulator does not model; the wgmma operand forms
 * the labs do not use (B K-major, A MN-major, the 64- and 32-byte
 * swizzles, fp16, negated operands), TMA boxes of 1-, 4- and 8-byte
 * elements, and which shared bytes a wgmma in flight is taken to read when
 * a TMA copy lands. The agreement of the model
 * with real hardware is tested by common/tests/test_hopper.cu, which also
 * runs on a GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
extern "C" {
#include <cmocka.h>
}
#include <cuda.h>

#include "hopper.cuh"
#include "no_fault_left.h"

/* ---- tensor maps ---------------------------------------------------------- */

static CUresult encode(CUtensorMap *m, void *base, cuuint64_t cols, cuuint64_t rows, cuuint64_t stride_bytes,
                       cuuint32_t box_cols, cuuint32_t box_rows, CUtensorMapSwizzle swz)
{
    cuuint64_t dims[2] = {cols, rows}, strides[1] = {stride_bytes};
    cuuint32_t box[2] = {box_cols, box_rows}, es[2] = {1, 1};
    return cuTensorMapEncodeTiled(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base, dims, strides, box, es,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, swz, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

static void test_encode_rules(void **state)
{
    (void)state;
    CUtensorMap m;
    char *g = NULL;
    assert_int_equal(cudaMalloc((void **)&g, 1 << 16), cudaSuccess);
    assert_int_equal(encode(&m, g, 64, 64, 128, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_SUCCESS);
    assert_int_equal(encode(&m, g + 8, 64, 64, 128, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(encode(&m, g, 64, 64, 136, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_INVALID_VALUE);
    /* A row stride given in elements instead of bytes: shorter than a row. */
    assert_int_equal(encode(&m, g, 64, 64, 64, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(encode(&m, g, 64, 64, 128, 64, 257, CU_TENSOR_MAP_SWIZZLE_NONE), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(encode(&m, g, 64, 64, 128, 64, 0, CU_TENSOR_MAP_SWIZZLE_NONE), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(encode(&m, g, 64, 64, 128, 12, 8, CU_TENSOR_MAP_SWIZZLE_NONE), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(encode(&m, g, 128, 64, 256, 128, 8, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(encode(&m, g, 64, 64, 128, 32, 8, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_ERROR_NOT_SUPPORTED);
    assert_int_equal(encode(&m, g, 64, 64, 128, 64, 8, CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B), CUDA_ERROR_NOT_SUPPORTED);
    assert_int_equal(encode((CUtensorMap *)((char *)&m + 8), g, 64, 64, 128, 64, 8, CU_TENSOR_MAP_SWIZZLE_NONE),
                     CUDA_ERROR_INVALID_VALUE);
    /* An element stride of 2 along rows would take every other element of
     * each row; the copy takes them all, so the map is refused, not wrong. */
    cuuint64_t dims[2] = {64, 64}, strides[1] = {128};
    cuuint32_t box[2] = {64, 8}, es[2] = {2, 1};
    assert_int_equal(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, g, dims, strides, box, es,
                                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                     CUDA_ERROR_NOT_SUPPORTED);
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    assert_int_equal(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q),
                     cudaSuccess);
    assert_int_equal(q, cudaDriverEntryPointSuccess);
    assert_ptr_equal(fn, (void *)cuTensorMapEncodeTiled);
    assert_int_equal(cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &q), cudaSuccess);
    assert_int_equal(q, cudaDriverEntryPointSymbolNotFound);
    assert_null(fn);
    cudaFree(g);
}

/* One call with every argument spelled out: a 2-D bf16 map of 64 x 64 over
 * g (128-byte rows, 64 x 8 boxes, no swizzle), changed by the caller. */
struct encode_args {
    CUtensorMapDataType type;
    cuuint32_t rank;
    cuuint64_t dims[6], strides[5];
    cuuint32_t box[6], es[6];
    int interleave, swizzle, l2, oob;
};

static encode_args plain_args(void)
{
    encode_args a;
    memset(&a, 0, sizeof a);
    a.type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    a.rank = 2;
    for (int i = 0; i < 6; i++) a.dims[i] = 2, a.box[i] = 1, a.es[i] = 1;
    a.dims[0] = a.dims[1] = 64;
    a.box[0] = 64, a.box[1] = 8;
    a.strides[0] = 128; /* each further dimension two of the one below */
    for (int i = 1; i < 5; i++) a.strides[i] = 8192ull << (i - 1);
    return a;
}

static CUresult encode_with(CUtensorMap *m, void *g, const encode_args &a)
{
    return cuTensorMapEncodeTiled(m, a.type, a.rank, g, a.dims, a.strides, a.box, a.es,
                                  (CUtensorMapInterleave)a.interleave, (CUtensorMapSwizzle)a.swizzle,
                                  (CUtensorMapL2promotion)a.l2, (CUtensorMapFloatOOBfill)a.oob);
}

/* The driver's limits at their edges: the last value allowed passes and
 * the first one past it is refused, and what the emulator does not model
 * says so (CUDA_ERROR_NOT_SUPPORTED) where the driver would accept it. */
static void test_encode_limits(void **state)
{
    (void)state;
    alignas(64) CUtensorMap maps[2];
    CUtensorMap *m = &maps[0];
    char *g = NULL;
    assert_int_equal(cudaMalloc((void **)&g, 1 << 16), cudaSuccess);
    encode_args a = plain_args();
    assert_int_equal(encode_with(m, g, a), CUDA_SUCCESS);
    /* The map itself must be 64-byte aligned: 32 is not enough. */
    assert_int_equal(encode_with((CUtensorMap *)((char *)m + 32), g, a), CUDA_ERROR_INVALID_VALUE);

    a = plain_args(), a.rank = 1; /* one dimension needs no strides */
    assert_int_equal(cuTensorMapEncodeTiled(m, a.type, 1, g, a.dims, NULL, a.box, a.es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                            CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                     CUDA_SUCCESS);
    a.dims[0] = 1ull << 32;
    assert_int_equal(encode_with(m, g, a), CUDA_SUCCESS);
    a.dims[0] = (1ull << 32) + 1;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_INVALID_VALUE);
    a.dims[0] = 1;
    assert_int_equal(encode_with(m, g, a), CUDA_SUCCESS);
    a = plain_args(), a.rank = 5;
    assert_int_equal(encode_with(m, g, a), CUDA_SUCCESS);
    a.rank = 6;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_INVALID_VALUE);
    a.rank = 0;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_INVALID_VALUE);
    a = plain_args(); /* two dimensions need the outer one's stride */
    assert_int_equal(cuTensorMapEncodeTiled(m, a.type, 2, g, a.dims, NULL, a.box, a.es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                            CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                     CUDA_ERROR_INVALID_VALUE);

    a = plain_args(), a.box[1] = 256;
    assert_int_equal(encode_with(m, g, a), CUDA_SUCCESS);
    a = plain_args(), a.es[1] = 9;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_INVALID_VALUE);
    a = plain_args(), a.es[1] = 8;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_NOT_SUPPORTED);
    a = plain_args(), a.strides[0] = (1ull << 40) - 16;
    assert_int_equal(encode_with(m, g, a), CUDA_SUCCESS);
    a.strides[0] = 1ull << 40;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_INVALID_VALUE);

    /* Types: the packed ones are not modelled; past the last one is not a type. */
    a = plain_args(), a.type = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_NOT_SUPPORTED);
    a.type = (CUtensorMapDataType)(CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B + 1);
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_INVALID_VALUE);

    /* Interleaved layouts are not modelled; a value past them is not one. */
    a = plain_args(), a.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_NOT_SUPPORTED);
    a.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_NOT_SUPPORTED);
    a.interleave = CU_TENSOR_MAP_INTERLEAVE_32B + 1;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_INVALID_VALUE);

    /* Swizzles: the three 128B_ATOM kinds are not modelled, nor rows
     * shorter than the span (32-byte rows under the 64-byte swizzle). */
    a = plain_args();
    for (int s = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B; s <= CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B; s++) {
        a.swizzle = s;
        assert_int_equal(encode_with(m, g, a), CUDA_ERROR_NOT_SUPPORTED);
    }
    a.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B + 1;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_INVALID_VALUE);
    a = plain_args(), a.swizzle = CU_TENSOR_MAP_SWIZZLE_64B, a.box[0] = 16;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_NOT_SUPPORTED);
    a.box[0] = 32;
    assert_int_equal(encode_with(m, g, a), CUDA_SUCCESS);

    /* L2 promotion: any of the four; NaN fill: not modelled. */
    a = plain_args(), a.l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    assert_int_equal(encode_with(m, g, a), CUDA_SUCCESS);
    a.l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B + 1;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_INVALID_VALUE);
    a = plain_args(), a.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_NOT_SUPPORTED);
    a.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA + 1;
    assert_int_equal(encode_with(m, g, a), CUDA_ERROR_INVALID_VALUE);
    cudaFree(g);
}

/* ---- kernels that must fail ------------------------------------------------- */

/* Each case runs one kernel that must fail the launch with
 * cudaErrorLaunchFailure (and a message) instead of hanging or passing. */
static void expect_launch_failure(cudaError_t launch_status)
{
    cudaError_t sync = cudaDeviceSynchronize();
    assert_true(launch_status == cudaErrorLaunchFailure || sync == cudaErrorLaunchFailure);
    cudaDeviceReset(); /* the fault is sticky, as on a GPU */
    assert_int_equal(cudaGetLastError(), cudaSuccess);
}

__global__ void never_completes(void)
{
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) mbar_init(&bar, 2);
    __syncthreads();
    if (threadIdx.x == 0) mbar_arrive(&bar); /* only one of the two arrivals */
    mbar_wait(&bar, 0);
}

/* Count 1: thread 0's arrival leaves the phase open for 1024 bytes that never
 * come, and thread 1 arrives in the same phase, one arrival too many (what a
 * producer that does not wait for its stage to be emptied does). */
__global__ void arrives_too_often(void)
{
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) mbar_init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) mbar_arrive_expect_tx(&bar, 1024);
    __syncthreads();
    if (threadIdx.x == 1) mbar_arrive(&bar);
}

/* A TMA box of 64 x 16 bf16 (2048 bytes) into dynamic shared memory at
 * offset dst_offset (0: aligned), announcing expect bytes. */
__global__ void tma_case(const __grid_constant__ CUtensorMap map, int dst_offset, unsigned int expect, int to_static)
{
    __shared__ uint64_t bar;
    __shared__ __align__(1024) uint8_t static_buf[2048];
    extern __shared__ __align__(1024) uint8_t dyn[];
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_arrive_expect_tx(&bar, expect);
        tma_load_2d(to_static ? static_buf : dyn + dst_offset, &map, 0, 0, &bar);
    }
    mbar_wait(&bar, 0);
}

static void make_box_map(CUtensorMap *m, void **g)
{
    assert_int_equal(cudaMalloc(g, 64 * 64 * 2), cudaSuccess);
    assert_int_equal(encode(m, *g, 64, 64, 128, 64, 16, CU_TENSOR_MAP_SWIZZLE_128B), CUDA_SUCCESS);
}

static void test_bugs_fail_the_launch(void **state)
{
    (void)state;
    never_completes<<<1, 32>>>();
    expect_launch_failure(cudaGetLastError());
    arrives_too_often<<<1, 2>>>();
    expect_launch_failure(cudaGetLastError());

    CUtensorMap m;
    void *g;
    make_box_map(&m, &g);
    tma_case<<<1, 32, 4096>>>(m, 0, 2048, 0); /* the correct case first: it must pass */
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    tma_case<<<1, 32, 4096>>>(m, 0, 1024, 0); /* expect_tx short of the box */
    expect_launch_failure(cudaGetLastError());
    tma_case<<<1, 32, 4096>>>(m, 0, 4096, 0); /* more bytes announced than come: never completes */
    expect_launch_failure(cudaGetLastError());
    tma_case<<<1, 32, 4096>>>(m, 0, 2048, 1); /* into a static __shared__ array */
    expect_launch_failure(cudaGetLastError());
    tma_case<<<1, 32, 8192>>>(m, 512, 2048, 0); /* not on the 1024-byte period of the 128-byte swizzle */
    expect_launch_failure(cudaGetLastError());
    tma_case<<<1, 32, 4096>>>(m, 3072, 2048, 0); /* the box runs past dynamic shared memory */
    expect_launch_failure(cudaGetLastError());
    tma_case<<<1, 32, 4096>>>(m, 4096, 2048, 0); /* the box starts at its end */
    expect_launch_failure(cudaGetLastError());
    cudaFree(g);
}

/* The shared address of dyn + offset, dyn being the block's dynamic shared
 * memory, both ways of asking for it. */
__global__ void shared_addr_at(size_t offset, unsigned int *out)
{
    extern __shared__ __align__(16) uint8_t dyn[];
    if (threadIdx.x == 0) {
        out[0] = hopper_smem_addr(dyn + offset);
        out[1] = (unsigned int)__cvta_generic_to_shared(dyn + offset);
    }
}

/* One past the end of dynamic shared memory has an address, its size, as on
 * a GPU: C lets a kernel form that pointer (a loop's bound, say), and only
 * a copy that writes there is wrong (the TMA case above). A byte further is
 * outside the window and refused. */
static void test_shared_addr_one_past_end(void **state)
{
    (void)state;
    unsigned int *d, h[2];
    assert_int_equal(cudaMalloc(&d, sizeof(h)), cudaSuccess);
    shared_addr_at<<<1, 32, 4096>>>(4095, d);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    assert_int_equal(h[0], 4095);
    assert_int_equal(h[1], 4095);
    shared_addr_at<<<1, 32, 4096>>>(4096, d);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    assert_int_equal(h[0], 4096);
    assert_int_equal(h[1], 4096);
    shared_addr_at<<<1, 32, 4096>>>(4097, d);
    expect_launch_failure(cudaGetLastError());
    cudaFree(d);
}

/* ---- element sizes ---------------------------------------------------------------- */

/* A 1-D box of 32 bytes at element x into a poisoned buffer, announcing
 * exactly the box's bytes, then the buffer's first 256 bytes out. variant
 * 1: two coordinates for the rank-1 map; 2: no mbarrier; 3: a destination
 * 64 bytes into the buffer (not 128-byte aligned). Each of those must fail. */
__global__ void tma_1d(const __grid_constant__ CUtensorMap map, int x, int variant, uint8_t *out)
{
    __shared__ __align__(8) uint64_t bar;
    extern __shared__ __align__(1024) uint8_t dyn[];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) dyn[i] = 0xAB;
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_arrive_expect_tx(&bar, 32);
        int c[2] = {x, 0};
        simt_tma_load(dyn + (variant == 3 ? 64 : 0), &map, c, variant == 1 ? 2 : 1, variant == 2 ? NULL : &bar);
    }
    mbar_wait(&bar, 0);
    for (int i = threadIdx.x; i < 256; i += blockDim.x) out[i] = dyn[i];
}

/* 1-, 4- and 8-byte elements: each box of 32 bytes starts inside the tensor
 * and runs past its end (or, the first, starts before it, with other bytes
 * of the allocation there), so the box holds the tensor's bytes and zeros
 * for the rest, and the buffer past the box keeps its poison. The mbarrier
 * completes only if the copy brings exactly the 32 bytes announced. */
static void test_tma_element_sizes(void **state)
{
    (void)state;
    uint8_t h[256], got[256];
    for (int i = 0; i < 256; i++) h[i] = (uint8_t)(i * 37 + 11) | 1; /* never 0 */
    uint8_t *g, *out;
    assert_int_equal(cudaMalloc((void **)&g, sizeof h), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&out, sizeof got), cudaSuccess);
    cudaMemcpy(g, h, sizeof h, cudaMemcpyHostToDevice);
    const struct {
        CUtensorMapDataType type;
        int esize, dim, x, base;
    } cases[] = {
        {CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, 100, -4, 32}, /* 4 before the start (g[28..31] are not its), 28 inside */
        {CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, 100, 80, 0},  /* 20 elements inside, 12 past the end */
        {CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, 20, 16, 0}, /* 4 inside, 4 past */
        {CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 8, 10, 8, 0},  /* 2 inside, 2 past */
    };
    alignas(64) CUtensorMap m;
    for (const auto &c : cases) {
        cuuint64_t dim = (cuuint64_t)c.dim;
        cuuint32_t box = (cuuint32_t)(32 / c.esize), es = 1;
        assert_int_equal(cuTensorMapEncodeTiled(&m, c.type, 1, g + c.base, &dim, NULL, &box, &es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                                CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                         CUDA_SUCCESS);
        tma_1d<<<1, 32, 1024>>>(m, c.x, 0, out);
        assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
        cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost);
        const int lo = c.x < 0 ? -c.x * c.esize : 0, hi = (c.dim - c.x) * c.esize;
        for (int i = 0; i < 256; i++)
            assert_int_equal(got[i], i >= lo && i < hi && i < 32 ? h[c.base + c.x * c.esize + i] : i < 32 ? 0 : 0xAB);
    }
    for (int v = 1; v <= 3; v++) { /* m is the last case's map: rank 1, no swizzle */
        tma_1d<<<1, 32, 1024>>>(m, 0, v, out);
        expect_launch_failure(cudaGetLastError());
    }
    cudaFree(g);
    cudaFree(out);
}

/* ---- what is seen before a wait ------------------------------------------------ */

/* Thread 0 issues a copy and reads the destination before it waits (stale:
 * the poison; other threads run after its wait, when the copy has landed),
 * then every thread reads it after the wait (the data). */
__global__ void read_before_wait(const __grid_constant__ CUtensorMap map, uint16_t *before, uint16_t *after)
{
    __shared__ uint64_t bar;
    extern __shared__ __align__(1024) uint8_t dyn[];
    uint16_t *buf = (uint16_t *)dyn;
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) buf[i] = 0x7777;
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_arrive_expect_tx(&bar, 2048);
        tma_load_2d(buf, &map, 0, 0, &bar);
    }
    if (threadIdx.x == 0)
        for (int i = 0; i < 1024; i++) before[i] = buf[i];
    __syncthreads();
    mbar_wait(&bar, 0);
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) after[i] = buf[i];
}

static void test_copies_land_at_the_wait(void **state)
{
    (void)state;
    CUtensorMap m;
    void *g;
    make_box_map(&m, &g);
    uint16_t h[64 * 64], before[1024], after[1024];
    for (int i = 0; i < 64 * 64; i++) h[i] = (uint16_t)(i + 1);
    cudaMemcpy(g, h, sizeof h, cudaMemcpyHostToDevice);
    uint16_t *db, *da;
    cudaMalloc((void **)&db, sizeof before);
    cudaMalloc((void **)&da, sizeof after);
    read_before_wait<<<1, 64, 2048>>>(m, db, da);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(before, db, sizeof before, cudaMemcpyDeviceToHost);
    cudaMemcpy(after, da, sizeof after, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 1024; i++) assert_int_equal(before[i], 0x7777);
    /* Row 0 is not moved by the 128-byte swizzle; row 1's chunks swap in pairs. */
    for (int j = 0; j < 64; j++) assert_int_equal(after[j], h[j]);
    for (int j = 0; j < 64; j++) assert_int_equal(after[64 + ((j / 8) ^ 1) * 8 + j % 8], h[64 + j]);
    cudaFree(db);
    cudaFree(da);
    cudaFree(g);
}

/* ---- wgmma ------------------------------------------------------------------------ */

/* One warpgroup: D = A B with A all ones (K-major) and B all twos
 * (N-major), no swizzle, so every D element is 16 * 2 = 32. d[0] is read
 * before wgmma.wait_group and after. variant 1: thread 5 passes another B
 * descriptor; 2: a nonzero base offset; 3: A starts one 128-byte row into
 * a swizzle pattern (its rows still inside the buffer); 4: no wgmma.fence
 * before the wgmma; 5 to 9 below. */
__global__ void wgmma_case(int variant, float *before, float *after)
{
    extern __shared__ __align__(1024) uint8_t dyn[];
    uint16_t *A = (uint16_t *)dyn, *B = (uint16_t *)(dyn + 4096);
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) A[i] = 0x3f80;  /* bf16 1.0 */
    for (int i = threadIdx.x; i < 16 * 128; i += blockDim.x) B[i] = 0x4000; /* bf16 2.0 */
    __syncthreads();
    /* No swizzle. A, K-major: core matrices of 8 rows x 16 bytes, the two K
     * halves 128 bytes apart (LBO), row groups 256 bytes apart (SBO).
     * B, N-major: 8 columns x 8 k-rows per 128-byte core matrix, column
     * groups 256 bytes apart (SBO), the two k-halves 128 bytes apart (LBO). */
    uint64_t da = (hopper_smem_addr(A) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
    uint64_t db = (hopper_smem_addr(B) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
    if (variant == 1 && threadIdx.x == 5) db += 1;
    if (variant == 2) da |= 1ull << 49;
    if (variant == 3) da = ((hopper_smem_addr(A) + 128) >> 4) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
    float d[64];
    for (int i = 0; i < 64; i++) d[i] = -1.0f;
    if (variant != 4) wgmma_fence(); /* 4: none before the first wgmma (PTX requires one) */
    if (variant == 5) simt_wgmma(d, 12, da, db, 0, 1, 1, 0, 1, 1); /* N not a multiple of 8 */
    if (variant == 6) /* one more than the emulator's queue holds, none waited for */
        for (int i = 0; i < 64; i++) wgmma_m64n128k16(d, da, db, 0);
    if (variant == 7) simt_wgmma(d, 128, da, db, 0, threadIdx.x == 5 ? -1 : 1, 1, 0, 1, 1); /* thread 5 negates A */
    if (variant == 8) simt_wgmma(d, 128, da, db, 0, 1, 1, 0, 1, threadIdx.x != 5); /* thread 5 says fp16 */
    if (variant == 9 && threadIdx.x == 5) wgmma_m64n128k16(d, da, db, 0); /* thread 5 issues one more */
    wgmma_m64n128k16(d, da, db, 0);
    wgmma_commit();
    before[threadIdx.x] = d[0];
    wgmma_wait_all();
    after[threadIdx.x] = d[0];
}

/* Two groups in flight; wgmma_wait_group(1) completes the older one only. */
__global__ void wgmma_two_groups(float *first, float *second, float *between)
{
    extern __shared__ __align__(1024) uint8_t dyn[];
    uint16_t *A = (uint16_t *)dyn, *B = (uint16_t *)(dyn + 4096);
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) A[i] = 0x3f80;  /* 1.0 */
    for (int i = threadIdx.x; i < 16 * 128; i += blockDim.x) B[i] = 0x4000; /* 2.0 */
    __syncthreads();
    uint64_t da = (hopper_smem_addr(A) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
    uint64_t db = (hopper_smem_addr(B) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
    float d0[64], d1[64];
    for (int i = 0; i < 64; i++) d1[i] = -1.0f;
    wgmma_fence();
    wgmma_m64n128k16(d0, da, db, 0);
    wgmma_commit();
    wgmma_m64n128k16(d1, da, db, 0);
    wgmma_commit();
    wgmma_wait_group(1); /* d0 is done; d1 may still be in flight */
    first[threadIdx.x] = d0[0];
    between[threadIdx.x] = d1[0]; /* the emulator runs the newer group at its wait: still -1 */
    wgmma_wait_group(0);
    second[threadIdx.x] = d1[0];
}

static void test_wgmma_results_arrive_at_the_wait(void **state)
{
    (void)state;
    float *db, *da, before[128], after[128];
    cudaMalloc((void **)&db, sizeof before);
    cudaMalloc((void **)&da, sizeof after);
    wgmma_case<<<1, 128, 8192>>>(0, db, da);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(before, db, sizeof before, cudaMemcpyDeviceToHost);
    cudaMemcpy(after, da, sizeof after, cudaMemcpyDeviceToHost);
    for (int t = 0; t < 128; t++) {
        assert_true(before[t] == -1.0f);
        assert_true(after[t] == 32.0f);
    }
    for (int v = 1; v <= 9; v++) {
        wgmma_case<<<1, 128, 16384>>>(v, db, da);
        expect_launch_failure(cudaGetLastError());
    }
    wgmma_case<<<1, 96, 8192>>>(0, db, da); /* not a whole warpgroup */
    expect_launch_failure(cudaGetLastError());
    float *dm, mid[128];
    cudaMalloc((void **)&dm, sizeof mid);
    wgmma_two_groups<<<1, 128, 8192>>>(db, da, dm);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(before, db, sizeof before, cudaMemcpyDeviceToHost);
    cudaMemcpy(after, da, sizeof after, cudaMemcpyDeviceToHost);
    for (int t = 0; t < 128; t++) {
        assert_true(before[t] == 32.0f);
        assert_true(after[t] == 32.0f);
    }
    cudaMemcpy(mid, dm, sizeof mid, cudaMemcpyDeviceToHost);
    for (int t = 0; t < 128; t++) assert_true(mid[t] == -1.0f);
    cudaFree(dm);
    cudaFree(db);
    cudaFree(da);
}

/* The other operand form: B K-major (as mma.sync's "col" B), both operands
 * without swizzle, m64n8k16, distinct values, against a direct product.
 * Core matrices of 8 rows x 16 bytes; LBO 128 steps to the second half of
 * K, SBO 256 to the next 8 rows (of A) or columns (of B). The kernel calls
 * the emulator's entry point directly: hopper.cuh wraps only the form the
 * labs use (B N-major). */
__global__ void wgmma_k_major_b(const uint16_t *a, const uint16_t *b, float *d)
{
    extern __shared__ __align__(1024) uint8_t dyn[];
    uint16_t *As = (uint16_t *)dyn, *Bs = (uint16_t *)(dyn + 2048);
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) {
        int m = i / 16, k = i % 16;
        As[(m / 8 * 256 + m % 8 * 16 + k / 8 * 128 + k % 8 * 2) / 2] = a[i];
    }
    for (int i = threadIdx.x; i < 8 * 16; i += blockDim.x) {
        int n = i / 16, k = i % 16; /* b holds B^T: row n, column k */
        Bs[(n % 8 * 16 + k / 8 * 128 + k % 8 * 2) / 2] = b[i];
    }
    __syncthreads();
    uint64_t da = (hopper_smem_addr(As) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
    uint64_t db = (hopper_smem_addr(Bs) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
    float acc[4] = {0, 0, 0, 0};
    simt_wgmma_fence();
    simt_wgmma(acc, 8, da, db, 0, 1, 1, /*trans_a=*/0, /*trans_b=*/0, /*bf16=*/1);
    simt_wgmma_commit();
    simt_wgmma_wait(0);
    int w = threadIdx.x / 32, l = threadIdx.x % 32;
    for (int e = 0; e < 4; e++) d[(16 * w + l / 4 + 8 * (e / 2)) * 8 + 2 * (l % 4) + e % 2] = acc[e];
}

static void test_wgmma_k_major_b(void **state)
{
    (void)state;
    uint16_t a[64 * 16], bt[8 * 16];
    float d[64 * 8];
    /* Small integers, exact in bf16: the top half of their fp32 bits. */
    for (int i = 0; i < 64 * 16; i++) {
        float v = (float)((i * 7) % 9 - 4);
        uint32_t u;
        memcpy(&u, &v, 4);
        a[i] = (uint16_t)(u >> 16);
    }
    for (int i = 0; i < 8 * 16; i++) {
        float v = (float)((i * 5) % 7 - 3);
        uint32_t u;
        memcpy(&u, &v, 4);
        bt[i] = (uint16_t)(u >> 16);
    }
    uint16_t *da, *db;
    float *dd;
    cudaMalloc((void **)&da, sizeof a);
    cudaMalloc((void **)&db, sizeof bt);
    cudaMalloc((void **)&dd, sizeof d);
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, bt, sizeof bt, cudaMemcpyHostToDevice);
    wgmma_k_major_b<<<1, 128, 4096>>>(da, db, dd);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(d, dd, sizeof d, cudaMemcpyDeviceToHost);
    for (int m = 0; m < 64; m++)
        for (int n = 0; n < 8; n++) {
            float s = 0;
            for (int k = 0; k < 16; k++) s += (float)((m * 16 + k) * 7 % 9 - 4) * (float)((n * 16 + k) * 5 % 7 - 3);
            assert_true(d[m * 8 + n] == s);
        }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dd);
}

/* ---- wgmma operand layouts ---------------------------------------------------------- */

/* Where the PTX ISA's canonical layouts put element (i along M or N, k
 * along K) of a 16-bit operand, before the swizzle; W = 16-byte chunks per
 * swizzle row (1 unswizzled, 2, 4, 8 for 32, 64, 128 bytes):
 *   K-major:  (i/8) SBO + (i%8) 16W + (k/8) 16 + (k%8) 2, or without a
 *             swizzle (i/8) SBO + (i%8) 16 + (k/8) LBO + (k%8) 2;
 *   MN-major: (i/8W) LBO + (i%8W) 2 + (k%8) 16W + (k/8) SBO, or without a
 *             swizzle (i/8) SBO + (i%8) 2 + (k%8) 16 + (k/8) LBO.
 * Then the swizzle XORs the address's chunk bits (4 and up) with its bits
 * 7 and up, masked to W - 1. */
struct wg_operand {
    int mode; /* descriptor's layout field: 0 none, 1 128-byte, 2 64-byte, 3 32-byte swizzle */
    int mn_major;
    uint32_t start, lbo, sbo;
};

static uint32_t wg_place(const wg_operand &o, uint32_t i, uint32_t k)
{
    const uint32_t w = o.mode == 1 ? 8 : o.mode == 2 ? 4 : o.mode == 3 ? 2 : 1;
    uint32_t off;
    if (!o.mn_major)
        off = w == 1 ? i / 8 * o.sbo + i % 8 * 16 + k / 8 * o.lbo + k % 8 * 2
                     : i / 8 * o.sbo + i % 8 * 16 * w + k / 8 * 16 + k % 8 * 2;
    else
        off = w == 1 ? i / 8 * o.sbo + i % 8 * 2 + k % 8 * 16 + k / 8 * o.lbo
                     : i / (8 * w) * o.lbo + i % (8 * w) * 2 + k % 8 * 16 * w + k / 8 * o.sbo;
    const uint32_t a = o.start + off;
    return a ^ ((a >> 7 & (w - 1)) << 4);
}

static __host__ __device__ uint64_t wg_desc(const wg_operand &o)
{
    return (uint64_t)(o.start >> 4) | (uint64_t)(o.lbo >> 4) << 16 | (uint64_t)(o.sbo >> 4) << 32 |
           (uint64_t)o.mode << 62;
}

/* A small integer's bits as bf16 or fp16 (exact for |v| <= 16). */
static uint16_t wg_bits(int v, int bf16)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    if (bf16) return (uint16_t)(u >> 16);
    if (v == 0) return 0;
    const uint32_t e = (u >> 23 & 0xff) - 127, m = u & 0x7fffff;
    return (uint16_t)((u >> 31) << 15 | (e + 15) << 10 | m >> 13);
}

static int wg_a(int i, int k) { return (i * 7 + k * 3) % 11 - 5; }
static int wg_b(int k, int j) { return (k * 5 + j * 13) % 9 - 4; }

struct wg_case {
    int n, bf16, neg_a, neg_b;
    wg_operand a, b;
};

/* The image is copied into dynamic shared memory as it is; then one
 * m64nNk16 from the two descriptors, and each thread's accumulators out
 * by the documented layout (as in wgmma_k_major_b). */
__global__ void wgmma_layout(const uint8_t *image, int bytes, wg_case c, float *d)
{
    extern __shared__ __align__(1024) uint8_t dyn[];
    for (int i = threadIdx.x; i < bytes; i += blockDim.x) dyn[i] = image[i];
    __syncthreads();
    float acc[32];
    simt_wgmma_fence();
    simt_wgmma(acc, c.n, wg_desc(c.a), wg_desc(c.b), 0, c.neg_a ? -1 : 1, c.neg_b ? -1 : 1, c.a.mn_major,
               c.b.mn_major, c.bf16);
    simt_wgmma_commit();
    simt_wgmma_wait(0);
    int w = threadIdx.x / 32, l = threadIdx.x % 32;
    for (int j = 0; j < c.n / 8; j++)
        for (int e = 0; e < 4; e++) d[(16 * w + l / 4 + 8 * (e / 2)) * c.n + 8 * j + 2 * (l % 4) + e % 2] = acc[4 * j + e];
}

static void run_layout(const wg_case &c, int bytes)
{
    uint8_t *h = (uint8_t *)calloc((size_t)bytes, 1), *owner = (uint8_t *)calloc((size_t)bytes, 1);
    float *d = (float *)malloc(sizeof(float) * 64 * (size_t)c.n);
    assert_non_null(h);
    assert_non_null(owner);
    assert_non_null(d);
    /* Each element gets bytes of its own: a layout that puts two in one
     * place is a mistake in the case, not in the emulator. */
    for (int i = 0; i < 64; i++)
        for (int k = 0; k < 16; k++) {
            uint32_t at = wg_place(c.a, (uint32_t)i, (uint32_t)k);
            assert_true(at + 2 <= (uint32_t)bytes && !owner[at]);
            uint16_t v = wg_bits(wg_a(i, k), c.bf16);
            memcpy(h + at, &v, 2), owner[at] = 1;
        }
    for (int j = 0; j < c.n; j++)
        for (int k = 0; k < 16; k++) {
            uint32_t at = wg_place(c.b, (uint32_t)j, (uint32_t)k);
            assert_true(at + 2 <= (uint32_t)bytes && !owner[at]);
            uint16_t v = wg_bits(wg_b(k, j), c.bf16);
            memcpy(h + at, &v, 2), owner[at] = 1;
        }
    uint8_t *dimage;
    float *dd;
    assert_int_equal(cudaMalloc((void **)&dimage, (size_t)bytes), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&dd, sizeof(float) * 64 * (size_t)c.n), cudaSuccess);
    cudaMemcpy(dimage, h, (size_t)bytes, cudaMemcpyHostToDevice);
    assert_int_equal(cudaFuncSetAttribute(wgmma_layout, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), cudaSuccess);
    wgmma_layout<<<1, 128, (size_t)bytes>>>(dimage, bytes, c, dd);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(d, dd, sizeof(float) * 64 * (size_t)c.n, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < c.n; j++) {
            int s = 0;
            for (int k = 0; k < 16; k++) s += wg_a(i, k) * wg_b(k, j);
            if (c.neg_a != c.neg_b) s = -s;
            assert_true(d[i * c.n + j] == (float)s);
        }
    cudaFree(dimage);
    cudaFree(dd);
    free(h);
    free(owner);
    free(d);
}

/* Every operand form the labs do not reach, each with distinct values so
 * that a misplaced element shows: both majors without a swizzle and with
 * the 64- and 32-byte swizzles, fp16 as well as bf16, negated A and B, and
 * descriptor fields past 2^17 bytes (the start, LBO and SBO fields hold 14
 * bits of a 16-byte unit). */
static void test_wgmma_layouts(void **state)
{
    (void)state;
    /* A K-major, B MN-major, no swizzle; bf16; A negated. */
    run_layout({64, 1, 1, 0, {0, 0, 0, 128, 256}, {0, 1, 4096, 1024, 128}}, 8192);
    /* A MN-major, B K-major, no swizzle; fp16; B negated. */
    run_layout({64, 0, 0, 1, {0, 1, 0, 1024, 128}, {0, 0, 4096, 128, 256}}, 8192);
    /* 64-byte swizzle: A K-major (8 rows of 64 bytes a group), B MN-major
     * (32 columns a row, the next 32 LBO further); both negated. */
    run_layout({64, 1, 1, 1, {2, 0, 0, 0, 512}, {2, 1, 4096, 1024, 512}}, 8192);
    /* 32-byte swizzle: A MN-major (16 rows a row of the pattern), B K-major; fp16. */
    run_layout({64, 0, 0, 0, {3, 1, 0, 512, 256}, {3, 0, 4096, 0, 256}}, 8192);
    /* Past 2^17: A starts at 136 KiB; B's second 8 columns are 128 KiB on. */
    run_layout({16, 1, 0, 0, {0, 0, 139264, 128, 256}, {0, 0, 0, 128, 131072}}, 139264 + 2048);
    /* ... and B's second half of K is 128 KiB on. */
    run_layout({64, 1, 0, 0, {0, 0, 139264, 128, 256}, {0, 0, 0, 131072, 256}}, 139264 + 2048);
}

/* ---- stage hand-off: wgmma reads, then a TMA refill ------------------------------ */

/* Warpgroup 0 multiplies A and B (as in wgmma_case) while thread 128, the
 * producer, refills B's bytes by TMA. variant 0: the consumers wait for
 * their wgmma, then release the stage on the empty barrier (correct).
 * 1: they release it first and wait after, so the refill may overwrite B
 * before the tensor cores read it. 2: no barrier at all; the producer copies
 * after a __syncthreads, which does not wait for wgmma either. Variants 1
 * and 2 compute the right D in the emulator (it runs the wgmma at the wait,
 * before the producer gets to run), so only the hand-off check fails them. */
__global__ void handoff(const __grid_constant__ CUtensorMap map, int variant, float *out)
{
    __shared__ __align__(8) uint64_t empty, full;
    extern __shared__ __align__(1024) uint8_t dyn[];
    uint16_t *A = (uint16_t *)dyn, *B = (uint16_t *)(dyn + 4096);
    if (threadIdx.x == 0) {
        mbar_init(&empty, 128);
        mbar_init(&full, 1);
        mbar_fence_init();
    }
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) A[i] = 0x3f80;  /* 1.0 */
    for (int i = threadIdx.x; i < 16 * 128; i += blockDim.x) B[i] = 0x4000; /* 2.0 */
    __syncthreads();
    uint64_t da = (hopper_smem_addr(A) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
    uint64_t db = (hopper_smem_addr(B) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
    float d[64];
    if (threadIdx.x < 128) {
        wgmma_fence();
        wgmma_m64n128k16(d, da, db, 0);
        wgmma_commit();
        if (variant == 0) {
            wgmma_wait_all();
            mbar_arrive(&empty);
        } else if (variant == 1) {
            mbar_arrive(&empty);
            wgmma_wait_all();
        }
    }
    if (variant == 2) __syncthreads();
    if (threadIdx.x == 128) {
        if (variant != 2) mbar_wait(&empty, 0);
        mbar_arrive_expect_tx(&full, 2048);
        tma_load_2d(B, &map, 0, 0, &full);
        mbar_wait(&full, 0);
    }
    if (variant == 2) {
        __syncthreads();
        if (threadIdx.x < 128) wgmma_wait_all();
    }
    if (threadIdx.x < 128) out[threadIdx.x] = d[0];
}

static void test_stage_handoff(void **state)
{
    (void)state;
    CUtensorMap m;
    void *g;
    float *out, h[128];
    make_box_map(&m, &g);
    assert_int_equal(cudaMalloc((void **)&out, sizeof h), cudaSuccess);
    handoff<<<1, 256, 8192>>>(m, 0, out);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 128; i++) assert_true(h[i] == 32.0f);
    handoff<<<1, 256, 8192>>>(m, 1, out); /* released before the wgmma was waited for */
    expect_launch_failure(cudaGetLastError());
    make_box_map(&m, &g);
    assert_int_equal(cudaMalloc((void **)&out, sizeof h), cudaSuccess);
    handoff<<<1, 256, 8192>>>(m, 2, out); /* refilled while the wgmma is in flight */
    expect_launch_failure(cudaGetLastError());
}

/* Two stages, released in turn by a consumer that keeps one wgmma group in
 * flight, as lab 04's pipeline does: it waits for group 0 (stage 0) with
 * wgmma_wait_group(1) and releases stage 0 while group 1 still reads
 * stage 1, then waits for group 1 and releases stage 1. The producer
 * (thread 128) refills stage 0 once it is released, then stage 1: both
 * correct, so the launch must run; the second refill is right only because
 * the release of stage 1 says that group 1 has finished. */
__global__ void two_stages(const __grid_constant__ CUtensorMap map, float *out)
{
    __shared__ __align__(8) uint64_t empty[2], full;
    extern __shared__ __align__(1024) uint8_t dyn[];
    uint16_t *A = (uint16_t *)dyn, *B0 = (uint16_t *)(dyn + 4096), *B1 = (uint16_t *)(dyn + 8192);
    if (threadIdx.x == 0) {
        mbar_init(&empty[0], 128);
        mbar_init(&empty[1], 128);
        mbar_init(&full, 1);
        mbar_fence_init();
    }
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) A[i] = 0x3f80; /* 1.0 */
    for (int i = threadIdx.x; i < 16 * 128; i += blockDim.x) B0[i] = B1[i] = 0x4000; /* 2.0 */
    __syncthreads();
    if (threadIdx.x < 128) {
        uint64_t da = (hopper_smem_addr(A) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
        uint64_t db0 = (hopper_smem_addr(B0) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
        uint64_t db1 = (hopper_smem_addr(B1) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
        float d0[64], d1[64];
        wgmma_fence();
        wgmma_m64n128k16(d0, da, db0, 0);
        wgmma_commit();
        wgmma_m64n128k16(d1, da, db1, 0);
        wgmma_commit();
        wgmma_wait_group(1);
        mbar_arrive(&empty[0]);
        wgmma_wait_group(0);
        mbar_arrive(&empty[1]);
        out[threadIdx.x] = d0[0] + d1[0];
    } else if (threadIdx.x == 128) {
        for (int s = 0; s < 2; s++) {
            mbar_wait(&empty[s], 0);
            mbar_arrive_expect_tx(&full, 128);
            tma_load_2d(s ? (void *)B1 : (void *)B0, &map, 0, 0, &full);
            mbar_wait(&full, s);
        }
    }
}

static void test_two_stages_in_turn(void **state)
{
    (void)state;
    CUtensorMap m;
    void *g;
    float *out, h[128];
    assert_int_equal(cudaMalloc(&g, 64 * 64 * 2), cudaSuccess);
    assert_int_equal(encode(&m, g, 64, 64, 128, 64, 1, CU_TENSOR_MAP_SWIZZLE_NONE), CUDA_SUCCESS);
    assert_int_equal(cudaMalloc((void **)&out, sizeof h), cudaSuccess);
    two_stages<<<1, 160, 12288>>>(m, out);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 128; i++) assert_true(h[i] == 64.0f);
    cudaFree(out);
    cudaFree(g);
}

/* ---- which bytes a wgmma in flight reads ---------------------------------------- */

/* A wgmma in flight (A and B as in wgmma_case: B MN-major, N = 128, the
 * second half of K 128 bytes on, groups of 8 columns 256 apart, so B's
 * bytes are [4096, 8192) of the buffer) while thread 0 copies one 128-byte
 * row by TMA to byte off of B. With twice set the same row was copied
 * there once before the wgmma (a refill, not a first fill). */
__global__ void refill_row(const __grid_constant__ CUtensorMap map, int off, int twice, float *out)
{
    __shared__ __align__(8) uint64_t bar;
    extern __shared__ __align__(1024) uint8_t dyn[];
    uint16_t *A = (uint16_t *)dyn, *B = (uint16_t *)(dyn + 4096);
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) A[i] = 0x3f80;  /* 1.0 */
    for (int i = threadIdx.x; i < 16 * 128; i += blockDim.x) B[i] = 0x4000; /* 2.0 */
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    __syncthreads();
    int phase = 0;
    if (twice) {
        if (threadIdx.x == 0) {
            mbar_arrive_expect_tx(&bar, 128);
            tma_load_2d(dyn + 4096 + off, &map, 0, 0, &bar);
        }
        mbar_wait(&bar, phase++);
        __syncthreads(); /* all have seen phase 0 before thread 0 starts phase 1 */
    }
    uint64_t da = (hopper_smem_addr(A) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
    uint64_t db = (hopper_smem_addr(B) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
    float d[64];
    wgmma_fence();
    wgmma_m64n128k16(d, da, db, 0);
    wgmma_commit();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, 128);
        tma_load_2d(dyn + 4096 + off, &map, 0, 0, &bar);
    }
    mbar_wait(&bar, phase);
    wgmma_wait_all();
    out[threadIdx.x] = d[0];
}

/* The refill check knows B's bytes to the end: a row that holds columns
 * 64..71 (past the first 64), one that holds only the second half of K of
 * the last columns, each first filled or refilled, fail; the row just past
 * B runs, and leaves the product alone. */
static void test_wgmma_read_span(void **state)
{
    (void)state;
    CUtensorMap m;
    void *g;
    float *out, h[128];
    assert_int_equal(cudaMalloc(&g, 64 * 64 * 2), cudaSuccess);
    cudaMemset(g, 0, 64 * 64 * 2);
    assert_int_equal(encode(&m, g, 64, 64, 128, 64, 1, CU_TENSOR_MAP_SWIZZLE_NONE), CUDA_SUCCESS);
    assert_int_equal(cudaMalloc((void **)&out, sizeof h), cudaSuccess);
    refill_row<<<1, 128, 8192 + 128>>>(m, 4096, 1, out);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 128; i++) assert_true(h[i] == 32.0f);
    const int offs[2] = {2048, 3968}; /* columns 64..71; k 8..15 of columns 120..127 */
    for (int i = 0; i < 2; i++)
        for (int twice = 0; twice < 2; twice++) {
            refill_row<<<1, 128, 8192 + 128>>>(m, offs[i], twice, out);
            expect_launch_failure(cudaGetLastError()); /* the emulator's reset keeps allocations */
        }
    cudaFree(out);
    cudaFree(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_encode_rules, no_fault_left),
        cmocka_unit_test_teardown(test_encode_limits, no_fault_left),
        cmocka_unit_test_teardown(test_bugs_fail_the_launch, no_fault_left),
        cmocka_unit_test_teardown(test_shared_addr_one_past_end, no_fault_left),
        cmocka_unit_test_teardown(test_tma_element_sizes, no_fault_left),
        cmocka_unit_test_teardown(test_copies_land_at_the_wait, no_fault_left),
        cmocka_unit_test_teardown(test_wgmma_results_arrive_at_the_wait, no_fault_left),
        cmocka_unit_test_teardown(test_wgmma_k_major_b, no_fault_left),
        cmocka_unit_test_teardown(test_wgmma_layouts, no_fault_left),
        cmocka_unit_test_teardown(test_stage_handoff, no_fault_left),
        cmocka_unit_test_teardown(test_wgmma_read_span, no_fault_left),
        cmocka_unit_test_teardown(test_two_stages_in_turn, no_fault_left),
    };
    return cmocka_run_group_tests_name("simt_hopper", tests, NULL, NULL);
}
