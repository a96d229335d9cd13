/*
 * Tests of the SIMT emulator's core: launch and indexing, barriers, static
 * and dynamic shared memory, warp shuffles and votes, atomics, the runtime
 * API and its launch errors, misaligned accesses and array overruns as
 * faults, fp16/bf16 conversions, and the rewriter's handling of awkward
 * launch syntax. Built with simtcc, run by make test.
 * Every test states something a wrong emulator would get wrong.
 */
#include <assert.h>
#include <fenv.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
extern "C" {
#include <cmocka.h>
}
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
/* Headers that nvcc's cuda_runtime.h includes, which older sources name
 * (device_functions.h too, which draws a warning: test_simt_rewrite). */
#include <builtin_types.h>
#include <driver_types.h>
#include "capture_stderr.h"
#include "no_fault_left.h"

/* --- launch and indexing ---------------------------------------------------- */

__global__ void write_coords(uint4 *out)
{
    unsigned int b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned int i = b * (blockDim.x * blockDim.y * blockDim.z) + t;
    out[i] = make_uint4(blockIdx.x * 100 + blockIdx.y * 10 + blockIdx.z,
                        threadIdx.x * 100 + threadIdx.y * 10 + threadIdx.z,
                        gridDim.x * 100 + gridDim.y * 10 + gridDim.z, blockDim.x * 100 + blockDim.y * 10 + blockDim.z);
}

/* Two shapes, the second with y and z different in both the grid and the
 * block, so that a linearisation that swaps them shows. */
static void test_indexing_3d(void **state)
{
    (void)state;
    const dim3 grids[2] = {dim3(3, 2, 2), dim3(2, 3, 4)}, blocks[2] = {dim3(4, 3, 2), dim3(2, 4, 3)};
    for (int s = 0; s < 2; s++) {
        dim3 grid = grids[s], block = blocks[s];
        int n = (int)(grid.x * grid.y * grid.z * block.x * block.y * block.z);
        uint4 *d;
        assert_int_equal(cudaMalloc(&d, n * sizeof(uint4)), cudaSuccess);
        write_coords<<<grid, block>>>(d);
        assert_int_equal(cudaGetLastError(), cudaSuccess);
        uint4 *h = (uint4 *)malloc(n * sizeof(uint4));
        cudaMemcpy(h, d, n * sizeof(uint4), cudaMemcpyDeviceToHost);
        int i = 0;
        for (unsigned bz = 0; bz < grid.z; bz++)
            for (unsigned by = 0; by < grid.y; by++)
                for (unsigned bx = 0; bx < grid.x; bx++)
                    for (unsigned tz = 0; tz < block.z; tz++)
                        for (unsigned ty = 0; ty < block.y; ty++)
                            for (unsigned tx = 0; tx < block.x; tx++, i++) {
                                assert_int_equal(h[i].x, bx * 100 + by * 10 + bz);
                                assert_int_equal(h[i].y, tx * 100 + ty * 10 + tz);
                                assert_int_equal(h[i].z, grid.x * 100 + grid.y * 10 + grid.z);
                                assert_int_equal(h[i].w, block.x * 100 + block.y * 10 + block.z);
                            }
        free(h);
        cudaFree(d);
    }
    /* kernel<<<grid>>>: a block of one thread, as nvcc's launch gives. */
    uint4 *d;
    assert_int_equal(cudaMallocManaged(&d, 3 * sizeof(uint4)), cudaSuccess);
    write_coords<<<3>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(d[2].x, 200);
    assert_int_equal(d[2].z, 311);
    assert_int_equal(d[2].w, 111);
    cudaFree(d);
}

/* Warps are cut from the block's linear thread index, threadIdx.x fastest
 * (CUDA C++ Programming Guide, SIMT Architecture): in an 8 x 8 block warp 0
 * is rows 0-3, lane 8 is thread (0, 1), and rows 2-3 are lanes 16-31, which
 * may vote among themselves with mask 0xffff0000. */
__global__ void warps_of_2d_block(unsigned int *out)
{
    unsigned int b = __ballot_sync(0xffffffffu, threadIdx.y % 4 == 1);
    unsigned int from = (unsigned int)__shfl_sync(0xffffffffu, (int)(threadIdx.y * 10 + threadIdx.x), 8);
    unsigned int half = __ballot_sync(threadIdx.y % 4 < 2 ? 0x0000ffffu : 0xffff0000u, threadIdx.x == 7);
    unsigned int *o = out + threadIdx.y / 4 * 4;
    if (threadIdx.x == 0 && threadIdx.y % 4 == 0) o[0] = b, o[1] = from, o[2] = half;
    if (threadIdx.x == 0 && threadIdx.y % 4 == 2) o[3] = half;
}

static void test_warps_of_2d_block(void **state)
{
    (void)state;
    unsigned int *d, h[8];
    cudaMalloc(&d, sizeof(h));
    warps_of_2d_block<<<1, dim3(8, 8)>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int w = 0; w < 2; w++) {
        assert_int_equal(h[w * 4 + 0], 0x0000ff00u);
        assert_int_equal(h[w * 4 + 1], 40u * w + 10u); /* thread (0, 1) or (0, 5) */
        assert_int_equal(h[w * 4 + 2], 0x00008080u);  /* lanes 7 and 15 */
        assert_int_equal(h[w * 4 + 3], 0x80800000u);  /* lanes 23 and 31 */
    }
    cudaFree(d);
}

/* --- barriers and shared memory --------------------------------------------- */

__global__ void reverse_static(float *d, int n)
{
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = d[blockIdx.x * n + t];
    __syncthreads();
    d[blockIdx.x * n + t] = s[n - 1 - t];
}

/* The same kernel without the barrier: a student's classic mistake. */
__global__ void reverse_missing_sync(float *d, int n)
{
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = d[blockIdx.x * n + t];
    d[blockIdx.x * n + t] = s[n - 1 - t];
}

__global__ void reverse_dynamic(float *d, int n)
{
    extern __shared__ float dyn[];
    int t = threadIdx.x;
    dyn[t] = d[blockIdx.x * n + t];
    __syncthreads();
    d[blockIdx.x * n + t] = dyn[n - 1 - t];
}

/* extern __shared__ at file scope, used through a pointer and a cast. */
extern __shared__ int file_scope_dyn[];

__global__ void dynamic_two_arrays(int *out, int n)
{
    int *a = file_scope_dyn;          /* n ints */
    float *b = (float *)(file_scope_dyn + n); /* then n floats */
    int t = threadIdx.x;
    a[t] = t * 3;
    b[t] = t * 0.5f;
    __syncthreads();
    out[t] = a[n - 1 - t] + (int)(2.0f * b[n - 1 - t]);
}

static void fill_iota(float *h, int n)
{
    for (int i = 0; i < n; i++) h[i] = (float)i;
}

static int count_reversed(const float *h, int blocks, int n)
{
    int ok = 0;
    for (int b = 0; b < blocks; b++)
        for (int t = 0; t < n; t++) ok += h[b * n + t] == (float)(b * n + n - 1 - t);
    return ok;
}

static void test_shared_static_reverse(void **state)
{
    (void)state;
    const int n = 256, blocks = 8;
    float h[n * blocks], *d;
    fill_iota(h, n * blocks);
    cudaMalloc(&d, sizeof(h));
    cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
    reverse_static<<<blocks, n>>>(d, n);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    assert_int_equal(count_reversed(h, blocks, n), n * blocks);
    cudaFree(d);
}

static void test_missing_syncthreads_gives_wrong_result(void **state)
{
    (void)state;
    const int n = 256, blocks = 4;
    float h[n * blocks], *d;
    fill_iota(h, n * blocks);
    cudaMalloc(&d, sizeof(h));
    cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
    reverse_missing_sync<<<blocks, n>>>(d, n);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    /* Threads run ahead of each other until a barrier, so the first half of
     * each block reads slots nobody has written yet. */
    assert_true(count_reversed(h, blocks, n) < n * blocks / 2 + blocks);
    cudaFree(d);
}

/* Warp 1 reads what warp 0 writes, with no barrier between: right only if
 * warp 0 happens to run first. Even blocks start with warp 0 and odd blocks
 * with the last warp, so the missing barrier shows in every odd block. */
__global__ void later_warp_reads(int *out)
{
    __shared__ int s[32];
    if (threadIdx.x < 32)
        s[threadIdx.x] = (int)threadIdx.x + 1;
    else
        out[blockIdx.x * 32 + threadIdx.x - 32] = s[threadIdx.x - 32];
}

static void test_missing_barrier_between_warps(void **state)
{
    (void)state;
    int *out;
    cudaMallocManaged(&out, 2 * 32 * sizeof(int));
    later_warp_reads<<<2, 64>>>(out);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    for (int i = 0; i < 32; i++) {
        assert_int_equal(out[i], i + 1);  /* block 0: warp 0 wrote first */
        assert_int_equal(out[32 + i], -1); /* block 1: warp 1 read first, shared memory's 0xff bytes */
    }
    cudaFree(out);
}

/* Warp 0 waits for warp 1's store, voting each time round the loop: after a
 * collective the emulator runs the same warp on, but not forever, so warp 1
 * gets its turn and the kernel ends (as on a GPU). */
__global__ void wait_for_other_warp(int *out)
{
    __shared__ int flag;
    if (threadIdx.x == 0) atomicExch(&flag, 0);
    __syncthreads();
    if (threadIdx.x >= 32)
        atomicExch(&flag, 1);
    else
        while (!__any_sync(0xffffffffu, atomicAdd(&flag, 0))) {
        }
    out[blockIdx.x * 64 + threadIdx.x] = 1;
}

static void test_voting_spin_lets_other_warps_run(void **state)
{
    (void)state;
    int *out;
    cudaMallocManaged(&out, 2 * 64 * sizeof(int));
    wait_for_other_warp<<<2, 64>>>(out);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    for (int i = 0; i < 2 * 64; i++) assert_int_equal(out[i], 1);
    cudaFree(out);
}

static void test_shared_dynamic(void **state)
{
    (void)state;
    const int n = 200, blocks = 5; /* not a power of two */
    float h[n * blocks], *d;
    fill_iota(h, n * blocks);
    cudaMalloc(&d, sizeof(h));
    cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
    reverse_dynamic<<<blocks, n, n * sizeof(float)>>>(d, n);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    assert_int_equal(count_reversed(h, blocks, n), n * blocks);
    cudaFree(d);

    int *o, ho[64];
    cudaMalloc(&o, sizeof(ho));
    dynamic_two_arrays<<<1, 64, 64 * (sizeof(int) + sizeof(float))>>>(o, 64);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    cudaMemcpy(ho, o, sizeof(ho), cudaMemcpyDeviceToHost);
    for (int t = 0; t < 64; t++) assert_int_equal(ho[t], (63 - t) * 3 + (63 - t));
    cudaFree(o);
}

/* Thread t reports the bits it finds in slot t of dynamic shared memory and
 * of two static __shared__ arrays (one declared after a barrier, when the
 * other threads have already passed the first), then writes zeros there.
 * Every block must find the 0xff fill, also the blocks that run after
 * another on the same OS thread, and the fill must not erase what threads
 * wrote before the later declaration. */
__global__ void reads_unwritten_shared(unsigned int *out)
{
    extern __shared__ unsigned int dyn_fill[];
    __shared__ __align__(16) unsigned int static_fill[64];
    unsigned int t = threadIdx.x, *o = out + (blockIdx.x * blockDim.x + t) * 4;
    o[0] = dyn_fill[t];
    o[1] = static_fill[t];
    __syncthreads();
    dyn_fill[t] = 0;
    static_fill[t] = t;
    __shared__ unsigned int later[2][32];
    if (t < 32) o[2] = later[1][t];
    __syncthreads();
    o[3] = static_fill[63 - t];
}

static void test_shared_starts_filled(void **state)
{
    (void)state;
    const int blocks = 16, n = 64;
    unsigned int *d, h[blocks * n * 4];
    cudaMalloc(&d, sizeof(h));
    memset(h, 0, sizeof(h));
    cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
    reads_unwritten_shared<<<blocks, n, n * sizeof(unsigned int)>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int b = 0; b < blocks; b++)
        for (int t = 0; t < n; t++) {
            const unsigned int *o = h + (b * n + t) * 4;
            assert_int_equal(o[0], 0xffffffffu);
            assert_int_equal(o[1], 0xffffffffu);
            if (t < 32) assert_int_equal(o[2], 0xffffffffu);
            assert_int_equal(o[3], (unsigned int)(63 - t));
        }
    float f;
    memcpy(&f, &h[0], sizeof f);
    assert_true(isnan(f)); /* as a float the fill is NaN, so it shows in any result */
    cudaFree(d);
}

/* A __shared__ variable whose struct type is declared in the declaration,
 * anonymous or named, starts as 0xff bytes too: thread 0 of each block
 * reports its fields before writing them. */
__global__ void reads_unwritten_shared_struct(int *out)
{
    __shared__ struct {
        int count;
        float sum[2];
    } acc;
    __shared__ struct Pair {
        int lo, hi;
    } range[2];
    if (threadIdx.x == 0) {
        int *o = out + blockIdx.x * 3;
        o[0] = acc.count;
        o[1] = isnan(acc.sum[1]) ? -1 : 0;
        o[2] = range[1].hi;
        acc.count = 0;
        acc.sum[1] = 0;
        range[1].hi = 0;
    }
}

static void test_shared_struct_starts_filled(void **state)
{
    (void)state;
    const int blocks = 8;
    int *d, h[blocks * 3];
    cudaMalloc(&d, sizeof(h));
    cudaMemset(d, 0, sizeof(h));
    reads_unwritten_shared_struct<<<blocks, 32>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int i = 0; i < blocks * 3; i++) assert_int_equal(h[i], -1);
    cudaFree(d);
}

/* Each block stages its own id in shared memory; blocks run on several OS
 * threads at once, so shared memory must not leak between them. */
__global__ void __launch_bounds__(128, 4) shared_is_per_block(int *out)
{
    __shared__ int tag[128];
    tag[threadIdx.x] = blockIdx.x;
    __syncthreads();
    int sum = 0;
    for (int i = 0; i < 128; i++) sum += tag[i] != (int)blockIdx.x;
    __syncthreads();
    out[blockIdx.x * 128 + threadIdx.x] = sum;
}

static void test_shared_per_block(void **state)
{
    (void)state;
    const int blocks = 64;
    int *d, h[blocks * 128];
    cudaMalloc(&d, sizeof(h));
    shared_is_per_block<<<blocks, 128>>>(d);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int i = 0; i < blocks * 128; i++) assert_int_equal(h[i], 0);
    cudaFree(d);
}

__global__ void sync_predicates(int *out)
{
    int t = threadIdx.x;
    int c = __syncthreads_count(t % 3 == 0);
    int a = __syncthreads_and(t < 1000);
    int o = __syncthreads_or(t == 77);
    int z = __syncthreads_and(t != 5);
    if (t == 0) {
        out[0] = c;
        out[1] = a;
        out[2] = o;
        out[3] = z;
    }
}

static void test_syncthreads_predicates(void **state)
{
    (void)state;
    int *d, h[4];
    cudaMalloc(&d, sizeof(h));
    sync_predicates<<<1, 100>>>(d);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    assert_int_equal(h[0], 34);
    assert_int_equal(h[1], 1);
    assert_int_equal(h[2], 1);
    assert_int_equal(h[3], 0);
    cudaFree(d);
}

/* __syncthreads_count counts the threads whose predicate is non-zero, not
 * the predicates' sum, and __syncthreads_and is non-zero when every
 * predicate is, whatever their bits (CUDA C++ Programming Guide,
 * Synchronization Functions). */
__global__ void count_nonzero(int *out)
{
    int c = __syncthreads_count((int)threadIdx.x * 3);
    int a = __syncthreads_and((int)threadIdx.x + 2);
    if (threadIdx.x == 0) out[0] = c, out[1] = a;
}

static void test_syncthreads_predicate_values(void **state)
{
    (void)state;
    int *c;
    cudaMallocManaged(&c, 2 * sizeof(int));
    count_nonzero<<<1, 100>>>(c);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(c[0], 99);
    assert_true(c[1] != 0);
    cudaFree(c);
}

/* Threads that return early no longer count at later barriers (sm_70+). */
__global__ void early_exit_then_barrier(int *out)
{
    __shared__ int s[64];
    if (threadIdx.x >= 40) return;
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[39 - threadIdx.x];
}

static void test_barrier_after_early_exit(void **state)
{
    (void)state;
    int *d, h[40];
    cudaMalloc(&d, sizeof(h));
    early_exit_then_barrier<<<1, 64>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int i = 0; i < 40; i++) assert_int_equal(h[i], 39 - i);
    cudaFree(d);
}

/* Threads that return before the others reach a barrier no longer count
 * there either: here threads 0-23, which run first, leave, and the barrier
 * must open when the 40 still running arrive. */
__global__ void early_exit_before_barrier(int *out)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    if (t < 24) return;
    s[t] = t;
    __syncthreads();
    out[t - 24] = s[87 - t];
}

static void test_barrier_after_exit_of_first_threads(void **state)
{
    (void)state;
    int *d, h[40];
    cudaMalloc(&d, sizeof(h));
    early_exit_before_barrier<<<1, 64>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int i = 0; i < 40; i++) assert_int_equal(h[i], 63 - i);
    cudaFree(d);
}

/* __syncthreads is bar.sync, that is barrier.sync.aligned (PTX ISA,
 * "Parallel Synchronization and Communication Instructions: bar,
 * barrier"): every thread of the block must execute the same barrier
 * instruction, or the behaviour is undefined. mode 0: the condition around
 * the work only (fine); 1: each half of the block at a barrier of its own
 * branch; 2: one warp at __syncthreads_count in a branch, the other at a
 * plain __syncthreads after it. */
__global__ void divergent_barrier(int *out, int mode)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    if (mode == 0) {
        if (t < 32) s[t] = t;
        else s[t] = -t;
        __syncthreads();
    } else if (mode == 1) {
        if (t < 32) {
            s[t] = t;
            __syncthreads();
        } else {
            s[t] = -t;
            __syncthreads();
        }
    } else {
        s[t] = t;
        if (t < 32) out[64] = __syncthreads_count(1);
        __syncthreads();
    }
    out[t] = s[63 - t];
}

static void test_divergent_syncthreads_is_a_fault(void **state)
{
    (void)state;
    int *d;
    cudaMalloc(&d, 65 * sizeof(int));
    for (int mode = 0; mode < 3; mode++) {
        divergent_barrier<<<1, 64>>>(d, mode);
        cudaError_t e = cudaDeviceSynchronize(), want = mode == 0 ? cudaSuccess : cudaErrorLaunchFailure;
        if (e != want) fail_msg("mode %d: got %s, want %s", mode, cudaGetErrorName(e), cudaGetErrorName(want));
        cudaDeviceReset();
    }
    cudaFree(d);
}

/* Lanes that return while the others wait at a full-mask shuffle stop
 * counting there too: the shuffle completes when the last of them exits
 * (lanes run in order, so lanes 0-11 of each warp are waiting by then),
 * and a shuffle that names an exited lane returns the caller's value. */
__global__ void early_exit_then_shuffle(int *out)
{
    int lane = threadIdx.x % 32;
    if (lane >= 12) return;
    int v = 100 * (threadIdx.x / 32) + lane;
    out[threadIdx.x / 32 * 12 + lane] = __shfl_xor_sync(0xffffffffu, v, 1) * 1000 + __shfl_sync(0xffffffffu, v, 20);
}

static void test_shuffle_after_early_exit(void **state)
{
    (void)state;
    int *d, h[3 * 12];
    cudaMalloc(&d, sizeof(h));
    early_exit_then_shuffle<<<1, 96>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int w = 0; w < 3; w++)
        for (int l = 0; l < 12; l++) assert_int_equal(h[w * 12 + l], (100 * w + (l ^ 1)) * 1000 + 100 * w + l);
    cudaFree(d);
}

/* --- warps -------------------------------------------------------------------- */

__device__ float warp_reduce_down(float v)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

__device__ int warp_reduce_xor(int v)
{
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    return v;
}

/* Block sum: shuffles within warps, warp leaders through shared memory. */
__global__ void block_sum(const float *x, int n, float *fsum, int *isum)
{
    __shared__ float partial[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    int iv = warp_reduce_xor(i < n ? (int)x[i] : 0);
    v = warp_reduce_down(v);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) partial[warp] = v;
    if (lane == 0) atomicAdd(isum, iv);
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x / 32) ? partial[lane] : 0.0f;
        v = warp_reduce_down(v);
        if (lane == 0) atomicAdd(fsum, v);
    }
}

static void test_shuffle_reduction(void **state)
{
    (void)state;
    const int n = 10007; /* prime */
    float *h = (float *)malloc(n * sizeof(float));
    double ref = 0.0;
    long long iref = 0;
    for (int i = 0; i < n; i++) {
        h[i] = (float)((i * 37) % 101 - 50);
        ref += h[i];
        iref += (long long)h[i];
    }
    float *x, *fs;
    int *is;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&fs, sizeof(float));
    cudaMalloc(&is, sizeof(int));
    cudaMemset(fs, 0, sizeof(float));
    cudaMemset(is, 0, sizeof(int));
    cudaMemcpy(x, h, n * sizeof(float), cudaMemcpyHostToDevice);
    block_sum<<<(n + 255) / 256, 256>>>(x, n, fs, is);
    float got;
    int igot;
    cudaMemcpy(&got, fs, sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(&igot, is, sizeof(int), cudaMemcpyDeviceToHost);
    /* Small integers: every partial sum is exact in fp32. */
    assert_true(got == (float)ref);
    assert_int_equal(igot, iref);
    cudaFree(x);
    cudaFree(fs);
    cudaFree(is);
    free(h);
}

/* Every shuffle form, with widths, written to out[form][lane]. */
__global__ void shuffle_forms(int *out)
{
    int lane = threadIdx.x;
    int v = 1000 + lane;
    out[0 * 32 + lane] = __shfl_sync(0xffffffffu, v, (lane * 7) % 32);
    out[1 * 32 + lane] = __shfl_up_sync(0xffffffffu, v, 3);
    out[2 * 32 + lane] = __shfl_down_sync(0xffffffffu, v, 5);
    out[3 * 32 + lane] = __shfl_xor_sync(0xffffffffu, v, 1);
    out[4 * 32 + lane] = __shfl_sync(0xffffffffu, v, 3, 8);
    out[5 * 32 + lane] = __shfl_up_sync(0xffffffffu, v, 2, 8);
    out[6 * 32 + lane] = __shfl_down_sync(0xffffffffu, v, 2, 8);
    out[7 * 32 + lane] = __shfl_xor_sync(0xffffffffu, v, 8, 8);
    out[8 * 32 + lane] = (int)(__shfl_sync(0xffffffffu, (double)v * 0.5, 31) * 2.0);
    out[9 * 32 + lane] = __shfl_sync(0xffffffffu, v, lane + 9); /* out of range: modulo width */
    /* PTX ISA, shfl.sync, Semantics: "bval[4:0] = b[4:0]": a lane offset of
     * 32 or more counts modulo 32 in every mode, as the index does. */
    out[10 * 32 + lane] = __shfl_down_sync(0xffffffffu, v, 33);
    out[11 * 32 + lane] = __shfl_up_sync(0xffffffffu, v, 34);
    out[12 * 32 + lane] = __shfl_xor_sync(0xffffffffu, v, 33);
}

static void test_shuffle_forms(void **state)
{
    (void)state;
    int *d, h[13 * 32];
    cudaMalloc(&d, sizeof(h));
    shuffle_forms<<<1, 32>>>(d);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int l = 0; l < 32; l++) {
        int seg = l & ~7;
        assert_int_equal(h[0 * 32 + l], 1000 + (l * 7) % 32);
        assert_int_equal(h[1 * 32 + l], 1000 + (l >= 3 ? l - 3 : l));
        assert_int_equal(h[2 * 32 + l], 1000 + (l + 5 < 32 ? l + 5 : l));
        assert_int_equal(h[3 * 32 + l], 1000 + (l ^ 1));
        assert_int_equal(h[4 * 32 + l], 1000 + seg + 3);
        assert_int_equal(h[5 * 32 + l], 1000 + ((l & 7) >= 2 ? l - 2 : l));
        assert_int_equal(h[6 * 32 + l], 1000 + ((l & 7) + 2 < 8 ? l + 2 : l));
        /* xor 8 with width 8 leaves the segment; later segments are not readable */
        assert_int_equal(h[7 * 32 + l], 1000 + (((l ^ 8) & ~7) > seg ? l : (l ^ 8)));
        assert_int_equal(h[8 * 32 + l], 1031);
        assert_int_equal(h[9 * 32 + l], 1000 + (l + 9) % 32);
        assert_int_equal(h[10 * 32 + l], 1000 + (l + 1 < 32 ? l + 1 : l));
        assert_int_equal(h[11 * 32 + l], 1000 + (l >= 2 ? l - 2 : l));
        assert_int_equal(h[12 * 32 + l], 1000 + (l ^ 1));
    }
    cudaFree(d);
}

__global__ void votes(unsigned int *out)
{
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    unsigned int *o = out + warp * 6;
    unsigned int b = __ballot_sync(0xffffffffu, lane % 3 == 0);
    int any = __any_sync(0xffffffffu, lane == 17);
    int all = __all_sync(0xffffffffu, lane < 40);
    int none = __any_sync(0xffffffffu, 0);
    unsigned int am = __activemask();
    unsigned int radd = __reduce_add_sync(0xffffffffu, (unsigned int)lane);
    unsigned int sub = 0;
    if (lane < 16) sub = __ballot_sync(0x0000ffffu, lane & 1);
    else sub = __ballot_sync(0xffff0000u, lane & 1) | 1u;
    if (lane == 0 || lane == 16) o[lane == 0 ? 4 : 5] = sub;
    if (lane == 0) {
        o[0] = b;
        o[1] = (unsigned int)any | ((unsigned int)all << 1) | ((unsigned int)none << 2);
        o[2] = am;
        o[3] = radd;
    }
}

static void test_votes(void **state)
{
    (void)state;
    unsigned int *d, h[2 * 6];
    cudaMalloc(&d, sizeof(h));
    votes<<<1, 40>>>(d); /* second warp has only 8 lanes */
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    assert_int_equal(h[0], 0x49249249u);
    assert_int_equal(h[1], 3u);
    assert_int_equal(h[2], 0xffffffffu);
    assert_int_equal(h[3], 496u);
    assert_int_equal(h[4], 0x0000aaaau);
    assert_int_equal(h[5], 0xaaaa0001u);
    assert_int_equal(h[6 + 0], 0x49u); /* lanes 0,3,6 of 8 */
    assert_int_equal(h[6 + 1], 2u); /* no lane 17 in a warp of 8 */
    assert_int_equal(h[6 + 2], 0xffu);
    assert_int_equal(h[6 + 3], 28u);
    cudaFree(d);
}

/* Widths 16 and 1 (CUDA C++ Programming Guide, Warp Shuffle Functions:
 * width splits the warp into segments of that many lanes; a lane whose
 * source falls past its segment's end (up, down) or in a later segment
 * (xor) gets its own value back, not the segment's last lane's). */
__global__ void shuffle_widths(int *out)
{
    int lane = threadIdx.x;
    int v = 1000 + lane;
    out[0 * 32 + lane] = __shfl_sync(0xffffffffu, v, 5, 16);
    out[1 * 32 + lane] = __shfl_up_sync(0xffffffffu, v, 4, 16);
    out[2 * 32 + lane] = __shfl_down_sync(0xffffffffu, v, 4, 16);
    out[3 * 32 + lane] = __shfl_xor_sync(0xffffffffu, v, 16, 16);
    out[4 * 32 + lane] = __shfl_xor_sync(0xffffffffu, v, 4, 16);
    out[5 * 32 + lane] = __shfl_sync(0xffffffffu, v, 3, 1);
    out[6 * 32 + lane] = __shfl_down_sync(0xffffffffu, v, 1, 1);
}

static void test_shuffle_widths_16_and_1(void **state)
{
    (void)state;
    int *d, h[7 * 32];
    cudaMalloc(&d, sizeof(h));
    shuffle_widths<<<1, 32>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int l = 0; l < 32; l++) {
        int seg = l & ~15;
        assert_int_equal(h[0 * 32 + l], 1000 + seg + 5);
        assert_int_equal(h[1 * 32 + l], 1000 + ((l & 15) >= 4 ? l - 4 : l));
        assert_int_equal(h[2 * 32 + l], 1000 + ((l & 15) + 4 < 16 ? l + 4 : l));
        assert_int_equal(h[3 * 32 + l], 1000 + (l < 16 ? l : l - 16)); /* the upper half reads the lower */
        assert_int_equal(h[4 * 32 + l], 1000 + (l ^ 4));
        assert_int_equal(h[5 * 32 + l], 1000 + l); /* segments of one lane: each its own */
        assert_int_equal(h[6 * 32 + l], 1000 + l);
    }
    cudaFree(d);
}

/* __reduce_*_sync (CUDA C++ Programming Guide, Warp Reduce Functions): the
 * unsigned overloads of min and max compare as unsigned, the int ones as
 * signed; and, or and xor are bitwise. Lanes 0-15 reduce with mask
 * 0x0000ffff, so the other half's values must not count. __match_any_sync
 * gives the lanes of the mask holding the same value, __match_all_sync the
 * mask when all agree and 0 otherwise. */
__global__ void warp_reductions(unsigned int *out, const unsigned int *uv, const int *iv)
{
    int lane = threadIdx.x;
    unsigned int u = uv[lane], *o = out + lane * 16;
    int i = iv[lane];
    o[0] = __reduce_add_sync(0xffffffffu, u);
    o[1] = __reduce_min_sync(0xffffffffu, u);
    o[2] = __reduce_max_sync(0xffffffffu, u);
    o[3] = (unsigned int)__reduce_min_sync(0xffffffffu, i);
    o[4] = (unsigned int)__reduce_max_sync(0xffffffffu, i);
    o[5] = __reduce_and_sync(0xffffffffu, u);
    o[6] = __reduce_or_sync(0xffffffffu, u);
    o[7] = __reduce_xor_sync(0xffffffffu, u);
    unsigned int half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
    o[8] = __reduce_max_sync(half, u);
    o[9] = (unsigned int)__reduce_add_sync(half, i);
    o[10] = __match_any_sync(0xffffffffu, lane % 3);
    o[11] = __match_any_sync(half, lane / 4);
    int pred = -1;
    o[12] = __match_all_sync(0xffffffffu, 7, &pred);
    o[13] = (unsigned int)pred;
    o[14] = __match_all_sync(0xffffffffu, lane == 9, &pred);
    o[15] = (unsigned int)pred;
}

static void test_warp_reductions(void **state)
{
    (void)state;
    unsigned int hu[32], *out, *du, h[32 * 16];
    int hi[32], *di;
    for (int l = 0; l < 32; l++) {
        hu[l] = l == 5 ? 0x80000001u : 0x0f0f0f00u | (unsigned int)(l + 1) | (l == 20 ? 0x40000000u : 0u);
        hi[l] = l - 16; /* -16 .. 15: as unsigned, -1 would be the largest */
    }
    cudaMalloc(&du, sizeof(hu));
    cudaMalloc(&di, sizeof(hi));
    cudaMalloc(&out, sizeof(h));
    cudaMemcpy(du, hu, sizeof(hu), cudaMemcpyHostToDevice);
    cudaMemcpy(di, hi, sizeof(hi), cudaMemcpyHostToDevice);
    warp_reductions<<<1, 32>>>(out, du, di);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost);
    unsigned int add = 0, mn = 0xffffffffu, mx = 0, an = 0xffffffffu, orr = 0, xr = 0, mx_lo = 0, mx_hi = 0;
    int add_lo = 0, add_hi = 0;
    for (int l = 0; l < 32; l++) {
        add += hu[l];
        mn = hu[l] < mn ? hu[l] : mn;
        mx = hu[l] > mx ? hu[l] : mx;
        an &= hu[l];
        orr |= hu[l];
        xr ^= hu[l];
        if (l < 16) mx_lo = hu[l] > mx_lo ? hu[l] : mx_lo, add_lo += hi[l];
        else mx_hi = hu[l] > mx_hi ? hu[l] : mx_hi, add_hi += hi[l];
    }
    for (int l = 0; l < 32; l++) {
        const unsigned int *o = h + l * 16;
        assert_int_equal(o[0], add);
        assert_int_equal(o[1], mn);
        assert_int_equal(o[2], 0x80000001u);
        assert_int_equal(o[3], (unsigned int)-16);
        assert_int_equal(o[4], 15u);
        assert_int_equal(o[5], an);
        assert_int_equal(o[6], orr);
        assert_int_equal(o[7], xr);
        assert_int_equal(o[8], l < 16 ? mx_lo : mx_hi);
        assert_int_equal(o[9], (unsigned int)(l < 16 ? add_lo : add_hi));
        unsigned int same = 0, quad = 0;
        for (int k = 0; k < 32; k++) {
            if (k % 3 == l % 3) same |= 1u << k;
            if (k / 4 == l / 4) quad |= 1u << k;
        }
        assert_int_equal(o[10], same);
        assert_int_equal(o[11], quad);
        assert_int_equal(o[12], 0xffffffffu);
        assert_int_equal(o[13], 1u);
        assert_int_equal(o[14], 0u);
        assert_int_equal(o[15], 0u);
    }
    assert_int_equal(mn, 0x0f0f0f01u); /* the test's own premise: 0x80000001 is the least as a signed value */
    cudaFree(du);
    cudaFree(di);
    cudaFree(out);
}

/* __activemask after lanes 20-31 of warp 0 have returned: only the lanes
 * still running. The barrier makes sure the others have exited (they run
 * after lanes 0-19 here) before anyone asks. Lane 0 asks, as the first
 * lane to go on: here each lane runs to its end before the next goes on,
 * so a later lane would find lane 0 gone, where a GPU's converged warp
 * would not. */
__global__ void activemask_after_exit(unsigned int *out)
{
    if (threadIdx.x >= 20 && threadIdx.x < 32) return;
    __syncthreads();
    unsigned int m = __activemask();
    if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = m;
}

static void test_activemask_after_exit(void **state)
{
    (void)state;
    unsigned int *d, h[2];
    cudaMalloc(&d, sizeof(h));
    activemask_after_exit<<<1, 64>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    assert_int_equal(h[0], 0x000fffffu);
    assert_int_equal(h[1], 0xffffffffu);
    cudaFree(d);
}

/* A lane must name itself in the mask of its *_sync call: PTX ISA,
 * shfl.sync, vote.sync and bar.warp.sync: "The behavior ... is undefined if
 * the executing thread is not in the membermask". mode 0: each half of the
 * warp votes with its own half (fine); 1: every lane calls
 * __syncwarp(0x0000ffff), so lanes 16-31 leave themselves out; 2: every lane
 * calls __ballot_sync(1, ...), a predicate passed where the mask goes. */
__global__ void mask_without_self(unsigned int *out, int mode)
{
    int lane = threadIdx.x;
    unsigned int r = 0;
    if (mode == 0) r = __ballot_sync(lane < 16 ? 0x0000ffffu : 0xffff0000u, lane & 1);
    if (mode == 1) __syncwarp(0x0000ffffu);
    if (mode == 2) r = __ballot_sync(1u, lane & 1);
    out[lane] = r;
}

static void test_mask_must_name_the_caller(void **state)
{
    (void)state;
    unsigned int *d;
    cudaMalloc(&d, 32 * sizeof(unsigned int));
    for (int mode = 0; mode < 3; mode++) {
        mask_without_self<<<1, 32>>>(d, mode);
        cudaError_t e = cudaDeviceSynchronize(), want = mode == 0 ? cudaSuccess : cudaErrorLaunchFailure;
        if (e != want) fail_msg("mode %d: got %s, want %s", mode, cudaGetErrorName(e), cudaGetErrorName(want));
        cudaDeviceReset();
    }
    cudaFree(d);
}

/* --- cooperative groups ------------------------------------------------------------ */

/* A block of 12 x 8 threads (three warps) split into tiles of 32 and of 8:
 * each thread reports what the groups tell it, computed on the host from
 * its linear rank alone. Tiles of 8 show that ranks, shuffles, votes and
 * reductions stay within the tile's lanes; the float3 shuffle moves 12
 * bytes, more than one shuffle does. */
enum { CG_FIELDS = 20 };
__global__ void cg_report(int *out, float *fout)
{
    namespace cg = cooperative_groups;
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    auto tile = cg::tiled_partition<8>(warp);
    int r = (int)block.thread_rank(), *o = out + CG_FIELDS * r;
    cg::thread_group g = tile;
    o[0] = r;
    o[1] = (int)block.num_threads();
    o[2] = (int)tile.thread_rank();
    o[3] = (int)tile.meta_group_rank();
    o[4] = (int)tile.meta_group_size();
    o[5] = cg::reduce(warp, r, cg::plus<int>());
    o[6] = cg::reduce(tile, r, cg::greater<int>());
    o[7] = cg::reduce(tile, r, cg::less<int>());
    o[8] = tile.shfl(r, 3);
    o[9] = tile.shfl_down(r, 1);
    o[10] = tile.shfl_up(r, 2);
    o[11] = tile.shfl_xor(r, 5);
    o[12] = (int)tile.ballot(r % 3 == 0);
    o[13] = tile.any(r % 8 == 5 && r < 40);
    o[14] = tile.all(r < 90);
    o[15] = (int)g.thread_rank() + 100 * (int)g.size();
    o[16] = (int)warp.meta_group_rank();
    o[17] = cg::reduce(tile, r, cg::bit_or<int>());
    o[18] = (int)(block.thread_index().y * 100 + block.group_index().x * 10 + block.group_dim().x);
    float3 v = make_float3((float)r, 0.5f * r, -1.0f * r);
    float3 w = tile.shfl_xor(v, 1);
    fout[r] = w.x + w.y + w.z;
    cg::sync(tile);
    g.sync(); /* a thread_group of a tile: __syncwarp with the tile's lanes */
    block.sync();
    o[19] = (int)cg::reduce(tile, 0.25 * r, cg::plus<double>()) * 4;
}

static void test_cooperative_groups(void **state)
{
    (void)state;
    const int n = 96;
    int *out;
    float *fout;
    cudaMallocManaged(&out, CG_FIELDS * n * sizeof(int));
    cudaMallocManaged(&fout, n * sizeof(float));
    cg_report<<<1, dim3(12, 8)>>>(out, fout);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    for (int r = 0; r < n; r++) {
        const int *o = out + CG_FIELDS * r;
        int t = r % 8, base = r - t, wbase = r - r % 32, ballot = 0, max = base + 7, wsum = 0, ors = 0, dsum = 0;
        for (int i = 0; i < 32; i++) wsum += wbase + i;
        for (int i = 0; i < 8; i++) {
            ballot |= ((base + i) % 3 == 0) << i;
            ors |= base + i;
            dsum += base + i;
        }
        int want[CG_FIELDS] = {r, n, t, r / 8, 12, wsum, max, base, base + 3, t + 1 < 8 ? r + 1 : r,
                               t >= 2 ? r - 2 : r, base + (t ^ 5), ballot, base + 5 < 40, base + 7 < 90,
                               t + 800, r / 32, ors, (r / 12) * 100 + 12, dsum};
        for (int f = 0; f < CG_FIELDS; f++)
            if (o[f] != want[f]) fail_msg("thread %d, field %d: %d, want %d", r, f, o[f], want[f]);
        float x = (float)(r ^ 1);
        assert_true(fout[r] == x + 0.5f * x - x);
    }
    cudaFree(out);
    cudaFree(fout);
}

/* --- tiled matmul ---------------------------------------------------------------- */

#define TILE 16
/* C (M x N) = A (M x K) * B (K x N), row-major, any sizes. */
__global__ void matmul_tiled(int M, int N, int K, const float *__restrict__ A, const float *__restrict__ B,
                             float *__restrict__ C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[threadIdx.y][threadIdx.x] = (row < M && t + (int)threadIdx.x < K) ? A[row * K + t + threadIdx.x] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (t + (int)threadIdx.y < K && col < N) ? B[(t + threadIdx.y) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

static void test_tiled_matmul(void **state)
{
    (void)state;
    const int M = 67, N = 45, K = 33;
    float *hA = (float *)malloc(M * K * 4), *hB = (float *)malloc(K * N * 4), *hC = (float *)malloc(M * N * 4);
    for (int i = 0; i < M * K; i++) hA[i] = sinf((float)i);
    for (int i = 0; i < K * N; i++) hB[i] = cosf((float)i * 0.7f);
    float *A, *B, *C;
    cudaMalloc(&A, M * K * 4);
    cudaMalloc(&B, K * N * 4);
    cudaMalloc(&C, M * N * 4);
    cudaMemcpy(A, hA, M * K * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(B, hB, K * N * 4, cudaMemcpyHostToDevice);
    matmul_tiled<<<dim3((N + TILE - 1) / TILE, (M + TILE - 1) / TILE), dim3(TILE, TILE)>>>(M, N, K, A, B, C);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(hC, C, M * N * 4, cudaMemcpyDeviceToHost);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                ref += (double)hA[i * K + k] * hB[k * N + j];
                mag += fabs((double)hA[i * K + k] * hB[k * N + j]);
            }
            /* fp32 dot product of length K: |err| <= K * 2^-24 * sum|ab| (Higham 3.1) */
            assert_true(fabs(hC[i * N + j] - ref) <= K * 6e-8 * mag + 1e-30);
        }
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    free(hA);
    free(hB);
    free(hC);
}

/* --- atomics ---------------------------------------------------------------------- */

__global__ void histogram(const int *x, int n, int *bins, int nbins, float *fsum, int *imax, float *fmax,
                          unsigned int *cas_count)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&bins[x[i] % nbins], 1);
        atomicAdd(fsum, 0.25f);
        atomicMax(imax, x[i]);
        /* CUDA has no float atomicMax; for non-negative floats the int order is the float order. */
        atomicMax((int *)fmax, __float_as_int((float)x[i] * 0.5f));
        unsigned int old = *(volatile unsigned int *)cas_count, seen;
        while ((seen = atomicCAS(cas_count, old, old + 1)) != old) old = seen;
    }
    __threadfence();
}

static void test_atomic_histogram(void **state)
{
    (void)state;
    const int n = 20011, nbins = 64;
    int *hx = (int *)malloc(n * sizeof(int)), ref[nbins] = {0}, mx = 0;
    for (int i = 0; i < n; i++) {
        hx[i] = (i * 7919) % 100003;
        ref[hx[i] % nbins]++;
        if (hx[i] > mx) mx = hx[i];
    }
    int *x, *bins, *imax;
    float *fsum, *fmax;
    unsigned int *cas;
    cudaMalloc(&x, n * sizeof(int));
    cudaMalloc(&bins, nbins * sizeof(int));
    cudaMalloc(&imax, sizeof(int));
    cudaMalloc(&fsum, sizeof(float));
    cudaMalloc(&fmax, sizeof(float));
    cudaMalloc(&cas, sizeof(unsigned int));
    cudaMemcpy(x, hx, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(bins, 0, nbins * sizeof(int));
    cudaMemset(imax, 0, sizeof(int));
    cudaMemset(fsum, 0, sizeof(float));
    cudaMemset(fmax, 0, sizeof(float));
    cudaMemset(cas, 0, sizeof(unsigned int));
    histogram<<<13, 128>>>(x, n, bins, nbins, fsum, imax, fmax, cas);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    int hb[nbins], hm;
    float hs, hf;
    unsigned int hc;
    cudaMemcpy(hb, bins, sizeof(hb), cudaMemcpyDeviceToHost);
    cudaMemcpy(&hm, imax, sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(&hs, fsum, sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(&hf, fmax, sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(&hc, cas, sizeof(unsigned int), cudaMemcpyDeviceToHost);
    for (int b = 0; b < nbins; b++) assert_int_equal(hb[b], ref[b]);
    assert_int_equal(hm, mx);
    assert_true(hs == 0.25f * n); /* exact: multiples of 1/4 below 2^22 */
    assert_true(hf == (float)mx * 0.5f);
    assert_int_equal(hc, (unsigned int)n);
    free(hx);
    cudaFree(x);
    cudaFree(bins);
    cudaFree(imax);
    cudaFree(fsum);
    cudaFree(fmax);
    cudaFree(cas);
}

/* A float atomicAdd on global memory flushes subnormal inputs and its
 * result to zero, whatever -ftz says; on shared memory it keeps them (PTX
 * ISA, atom: atom.add.f32 flushes subnormals; on shared memory they are
 * kept, as measured on GPUs since Fermi). A reduction of tiny values into a
 * cudaMalloc'd sum therefore loses them on a GPU: so must it here. */
__device__ float device_sum; /* a __device__ variable: global memory on a GPU */

__global__ void atomic_subnormal(float *g, float *old, float *out, float tiny)
{
    __shared__ float s;
    extern __shared__ float dyn[];
    s = 0.0f;
    dyn[1] = 0.0f;
    device_sum = 0.0f;
    __syncthreads();
    atomicAdd(&g[0], tiny);           /* 0 + a subnormal: 0 */
    atomicAdd(&g[1], 1e-30f);         /* normal values: added */
    old[0] = atomicAdd(&g[2], 0.0f);  /* a subnormal already there: read back as it was, then 0 */
    atomicAdd(&g[3], 2.0f * tiny);    /* a normal value + a subnormal one: the subnormal is dropped */
    atomicAdd(&s, tiny);              /* shared: kept */
    atomicAdd(&dyn[1], tiny);         /* dynamic shared too */
    atomicAdd(&device_sum, tiny);     /* a __device__ variable is global: 0 */
    atomicAdd(&g[4], 0.75e-38f);      /* from -0.5e-38: a subnormal result, 0 */
    __syncthreads();
    out[0] = s;
    out[1] = dyn[1];
    out[2] = device_sum;
}

static void test_atomic_float_subnormals(void **state)
{
    (void)state;
    const float tiny = 1e-40f; /* subnormal: below FLT_MIN, about 1.18e-38 */
    assert_int_equal(std::fpclassify(tiny), FP_SUBNORMAL);
    float *g, *old, *out;
    assert_int_equal(cudaMallocManaged(&g, 5 * sizeof(float)), cudaSuccess);
    assert_int_equal(cudaMallocManaged(&old, sizeof(float)), cudaSuccess);
    assert_int_equal(cudaMallocManaged(&out, 3 * sizeof(float)), cudaSuccess);
    g[0] = 0.0f;
    g[1] = 1e-30f;
    g[2] = tiny;
    g[3] = 1.2e-38f;
    g[4] = -0.5e-38f;
    atomic_subnormal<<<1, 1, 2 * sizeof(float)>>>(g, old, out, tiny);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_true(g[0] == 0.0f);
    assert_true(g[1] == 2e-30f);
    assert_true(old[0] == tiny);
    assert_true(g[2] == 0.0f);
    assert_true(g[3] == 1.2e-38f);
    assert_true(out[0] == tiny);
    assert_true(out[1] == tiny);
    assert_true(out[2] == 0.0f);
    assert_true(g[4] == 0.0f);
    cudaFree(g);
    cudaFree(old);
    cudaFree(out);
}

/* What each atomic returns and where it wraps (CUDA C++ Programming Guide,
 * Atomic Functions): atomicAdd, atomicSub and atomicExch return the old
 * value, so n threads adding 1 see each of 0 .. n-1 once; atomicInc(p, v)
 * stores ((old >= v) ? 0 : old + 1) and atomicDec(p, v) stores
 * (((old == 0) || (old > v)) ? v : old - 1); atomicMin keeps the least;
 * the unsigned long long forms carry past 32 bits and compare as unsigned. */
__global__ void atomic_returns(int *iold, float *fold, int *sold, unsigned int *xold, int *counters, float *fcount,
                               unsigned int *wrap, unsigned long long *wide)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    iold[i] = atomicAdd(&counters[0], 1);
    fold[i] = atomicAdd(fcount, 1.0f);
    sold[i] = atomicSub(&counters[1], 1);
    xold[i] = atomicExch(&wrap[4], (unsigned int)i + 1);
    atomicMin(&counters[2], 1000 - (i * 37) % 1000);
    atomicInc(&wrap[0], 9);  /* 0 .. 9, then 0 again */
    atomicDec(&wrap[1], 6);  /* from 0: 6, 5, .. 0, 6, .. */
    atomicDec(&wrap[2], 5);  /* from 100 (past 5): 5, 4, .. */
    atomicInc(&wrap[3], 0);  /* a limit of 0: always 0 */
    atomicAdd(&wide[0], 0x10000001ull);
    atomicMax(&wide[1], (unsigned long long)i << 58); /* i = 32 .. 63 set the top bit */
    atomicMin(&wide[2], 0xffffffff00000000ull + (unsigned long long)i);
}

static void test_atomic_returns_and_wraps(void **state)
{
    (void)state;
    const int n = 64;
    int *iold, *sold, *counters;
    float *fold, *fcount;
    unsigned int *xold, *wrap;
    unsigned long long *wide;
    cudaMallocManaged(&iold, n * sizeof(int));
    cudaMallocManaged(&fold, n * sizeof(float));
    cudaMallocManaged(&sold, n * sizeof(int));
    cudaMallocManaged(&xold, n * sizeof(unsigned int));
    cudaMallocManaged(&counters, 3 * sizeof(int));
    cudaMallocManaged(&fcount, sizeof(float));
    cudaMallocManaged(&wrap, 5 * sizeof(unsigned int));
    cudaMallocManaged(&wide, 3 * sizeof(unsigned long long));
    counters[0] = 0;
    counters[1] = 100;
    counters[2] = 5000;
    *fcount = 0.0f;
    wrap[0] = wrap[1] = wrap[3] = 0;
    wrap[2] = 100;
    wrap[4] = 0;
    wide[0] = 0xfffffff0ull;
    wide[1] = 0;
    wide[2] = ~0ull;
    atomic_returns<<<2, n / 2>>>(iold, fold, sold, xold, counters, fcount, wrap, wide);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    int seen_i[64] = {0}, seen_f[64] = {0}, seen_s[64] = {0}, seen_x[65] = {0};
    for (int i = 0; i < n; i++) {
        assert_true(iold[i] >= 0 && iold[i] < n);
        seen_i[iold[i]]++;
        assert_true(fold[i] >= 0.0f && fold[i] < (float)n && fold[i] == (float)(int)fold[i]);
        seen_f[(int)fold[i]]++;
        assert_true(sold[i] > 100 - n && sold[i] <= 100);
        seen_s[100 - sold[i]]++;
        assert_true(xold[i] <= (unsigned int)n);
        seen_x[xold[i]]++;
    }
    seen_x[wrap[4]]++; /* the last value stored: every value but one was returned to someone */
    for (int k = 0; k < n; k++) {
        assert_int_equal(seen_i[k], 1);
        assert_int_equal(seen_f[k], 1);
        assert_int_equal(seen_s[k], 1);
    }
    for (int k = 0; k <= n; k++) assert_int_equal(seen_x[k], 1);
    assert_int_equal(counters[0], n);
    assert_int_equal(counters[1], 100 - n);
    int mn = 5000;
    for (int i = 0; i < n; i++) mn = 1000 - (i * 37) % 1000 < mn ? 1000 - (i * 37) % 1000 : mn;
    assert_int_equal(counters[2], mn);
    assert_true(*fcount == (float)n);
    assert_int_equal(wrap[0], n % 10);
    assert_int_equal(wrap[1], (7 - n % 7) % 7);
    assert_int_equal(wrap[2], 5 - (n - 1) % 6); /* 100 -> 5 on the first, then 4, .., 0, 5, .. */
    assert_int_equal(wrap[3], 0u);
    assert_true(wide[0] == 0xfffffff0ull + (unsigned long long)n * 0x10000001ull);
    assert_true(wide[1] == 63ull << 58);
    assert_true(wide[2] == 0xffffffff00000000ull);
    cudaFree(iold);
    cudaFree(fold);
    cudaFree(sold);
    cudaFree(xold);
    cudaFree(counters);
    cudaFree(fcount);
    cudaFree(wrap);
    cudaFree(wide);
}

/* atomicAdd on __half, __nv_bfloat16 and their pairs (CUDA C++ Programming
 * Guide, Atomic Functions): nvcc compiles these for sm_80 and newer, so they
 * must compile here. Each add rounds once to nearest even: 1 added to a bf16
 * 256 is a tie between 256 and 258, and stays 256; 0.25 added to 64 ties
 * between 64 and 64.5 and stays 64. Subnormals are kept (atom.add.noftz),
 * unlike fp32's on global memory. A pair adds its halves independently. */
__global__ void atomic_half_types(__half *h, __nv_bfloat16 *b, __half2 *h2, __nv_bfloat162 *b2, float *hold,
                                  __half *hsub, __nv_bfloat16 *bsub)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    hold[i] = __half2float(atomicAdd(h, __float2half(1.0f)));
    atomicAdd(b, __float2bfloat16(1.0f));
    atomicAdd(h2, __floats2half2_rn(1.0f, 0.5f));
    atomicAdd(b2, __floats2bfloat162_rn(0.25f, 2.0f));
    if (i == 0) {
        atomicAdd(hsub, __ushort_as_half((unsigned short)0x0001u));        /* 2^-24, fp16's least subnormal */
        atomicAdd(bsub, __ushort_as_bfloat16((unsigned short)0x0001u));    /* 2^-133, bf16's least */
    }
}

static void test_atomic_half_types(void **state)
{
    (void)state;
    const int n = 300;
    __half *h, *hsub;
    __nv_bfloat16 *b, *bsub;
    __half2 *h2;
    __nv_bfloat162 *b2;
    float *hold;
    assert_int_equal(cudaMallocManaged(&h, sizeof *h), cudaSuccess);
    assert_int_equal(cudaMallocManaged(&b, sizeof *b), cudaSuccess);
    assert_int_equal(cudaMallocManaged(&h2, sizeof *h2), cudaSuccess);
    assert_int_equal(cudaMallocManaged(&b2, sizeof *b2), cudaSuccess);
    assert_int_equal(cudaMallocManaged(&hold, n * sizeof(float)), cudaSuccess);
    assert_int_equal(cudaMallocManaged(&hsub, sizeof *hsub), cudaSuccess);
    assert_int_equal(cudaMallocManaged(&bsub, sizeof *bsub), cudaSuccess);
    *h = __float2half(0.0f);
    *b = __float2bfloat16(0.0f);
    *h2 = __floats2half2_rn(0.0f, 0.0f);
    *b2 = __floats2bfloat162_rn(0.0f, 0.0f);
    *hsub = __float2half(0.0f);
    *bsub = __float2bfloat16(0.0f);
    atomic_half_types<<<2, n / 2>>>(h, b, h2, b2, hold, hsub, bsub);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    /* fp16 holds every integer to 2048: each old value 0 .. n-1 once. */
    int seen[300] = {0};
    for (int i = 0; i < n; i++) {
        float v = hold[i];
        assert_true(v >= 0.0f && v < (float)n && v == (float)(int)v);
        seen[(int)v]++;
    }
    for (int k = 0; k < n; k++) assert_int_equal(seen[k], 1);
    assert_true(__half2float(*h) == 300.0f);
    assert_true(__bfloat162float(*b) == 256.0f);
    assert_true(__half2float(h2->x) == 300.0f);
    assert_true(__half2float(h2->y) == 150.0f);
    assert_true(__bfloat162float(b2->x) == 64.0f);
    assert_true(__bfloat162float(b2->y) == 512.0f);
    assert_int_equal(__half_as_ushort(*hsub), 0x0001);
    assert_int_equal(__bfloat16_as_ushort(*bsub), 0x0001);
    cudaFree(h);
    cudaFree(b);
    cudaFree(h2);
    cudaFree(b2);
    cudaFree(hold);
    cudaFree(hsub);
    cudaFree(bsub);
}

/* --- math and vector types --------------------------------------------------------- */

__device__ __forceinline__ float sq(float x) { return x * x; }

__global__ void math_intrinsics(const float4 *__restrict__ in, float *out, int *iout)
{
    int t = threadIdx.x;
    float4 v = __ldg(&in[t]);
    float x = v.x;
    out[t * 8 + 0] = __expf(x);
    out[t * 8 + 1] = rsqrtf(v.y);
    out[t * 8 + 2] = __fdividef(v.z, v.w);
    out[t * 8 + 3] = fmaf(x, v.y, v.z);
    out[t * 8 + 4] = __sinf(x) + __cosf(x);
    out[t * 8 + 5] = __logf(v.y) + __powf(v.y, 1.5f);
    out[t * 8 + 6] = __saturatef(x) + sq(max(x, 0.25f)) + min(v.w, 2.0f);
    out[t * 8 + 7] = tanhf(x) + erff(x) + sqrtf(v.y) + normcdff(x);
    unsigned int u = (unsigned int)(t * 2654435761u);
    iout[t * 4 + 0] = __popc(u);
    iout[t * 4 + 1] = __clz((int)u);
    iout[t * 4 + 2] = (int)__brev(u);
    iout[t * 4 + 3] = __float2int_rn(x * 3.0f) + min(t, 5) + max(t, 7);
}

static void test_math_intrinsics(void **state)
{
    (void)state;
    const int n = 64;
    float4 *in;
    float *out;
    int *iout;
    cudaMallocManaged(&in, n * sizeof(float4));
    cudaMallocManaged(&out, n * 8 * sizeof(float));
    cudaMallocManaged(&iout, n * 4 * sizeof(int));
    for (int t = 0; t < n; t++) in[t] = make_float4(-2.0f + t * 0.0625f, 0.5f + t * 0.25f, t * 1.5f, 1.0f + t);
    math_intrinsics<<<1, n>>>(in, out, iout);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    for (int t = 0; t < n; t++) {
        double x = in[t].x, y = in[t].y, z = in[t].z, w = in[t].w;
        double ref[8] = {exp(x), 1 / sqrt(y), z / w, x * y + z, sin(x) + cos(x), log(y) + pow(y, 1.5),
                         (x < 0 ? 0 : x > 1 ? 1 : x) + pow(x > 0.25 ? x : 0.25, 2) + (w < 2 ? w : 2),
                         tanh(x) + erf(x) + sqrt(y) + 0.5 * erfc(-x / sqrt(2.0))};
        /* The CUDA intrinsics are accurate to a few ulp; 1e-5 relative covers them. */
        for (int k = 0; k < 8; k++) assert_true(fabs(out[t * 8 + k] - ref[k]) <= 1e-5 * (1 + fabs(ref[k])));
        unsigned int u = (unsigned int)(t * 2654435761u), r = 0;
        for (int b = 0; b < 32; b++) r |= ((u >> b) & 1u) << (31 - b);
        assert_int_equal(iout[t * 4 + 0], __builtin_popcount(u));
        assert_int_equal(iout[t * 4 + 1], u ? __builtin_clz(u) : 32);
        assert_int_equal((unsigned int)iout[t * 4 + 2], r);
        assert_int_equal(iout[t * 4 + 3], (int)nearbyint(x * 3.0) + (t < 5 ? t : 5) + (t > 7 ? t : 7));
    }
    assert_int_equal(sizeof(float4), 16);
    assert_int_equal(alignof(float4), 16);
    assert_int_equal(alignof(int4), 16);
    assert_int_equal(alignof(float2), 8);
    cudaFree(in);
    cudaFree(out);
    cudaFree(iout);
}

/* The rest of CUDA's math and load/store forms: the inverse error
 * functions undo erff and erfcf (out to erfc's far tail, 1e-40), the norms,
 * the sums of absolute differences, and the cache-hint loads and stores,
 * which move the same values as plain ones. */
__global__ void more_math(const float *x, float *o, unsigned int *u)
{
    int t = threadIdx.x;
    float v = __ldca(&x[t]) + __ldlu(&x[t]) - __ldcv(&x[t]);
    __stwb(&o[8 * t + 0], erfinvf(erff(v)));
    __stwt(&o[8 * t + 1], erfcinvf(erfcf(v)));
    o[8 * t + 2] = erfcinvf(1e-40f);
    o[8 * t + 3] = norm3df(1.0f, 2.0f, 2.0f) + rnorm3df(v, 0.0f, 0.0f);
    o[8 * t + 4] = norm4df(1.0f, 1.0f, 1.0f, 1.0f) + rnorm4df(0.0f, 0.0f, 0.0f, 2.0f) + rhypotf(3.0f, 4.0f);
    o[8 * t + 5] = (float)erfinv(0.5) + (float)erfcinv(0.5);
    u[t] = __sad(t, 4, 10u) + 100u * __usad(5u, (unsigned int)t, 1u);
}

static void test_more_math(void **state)
{
    (void)state;
    const int n = 8;
    float *x, *o;
    unsigned int *u;
    cudaMallocManaged(&x, n * sizeof(float));
    cudaMallocManaged(&o, 8 * n * sizeof(float));
    cudaMallocManaged(&u, n * sizeof(unsigned int));
    for (int t = 0; t < n; t++) x[t] = -1.75f + 0.5f * t;
    more_math<<<1, n>>>(x, o, u);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    for (int t = 0; t < n; t++) {
        double v = x[t];
        assert_true(fabs(o[8 * t + 0] - v) <= 4e-6 * 2); /* erf is flat out there: a few ulp of v */
        assert_true(fabs(o[8 * t + 1] - v) <= 4e-6 * 2);
        assert_true(fabs(erfc((double)o[8 * t + 2]) / 1e-40 - 1) < 1e-4); /* dx of an ulp moves erfc by 2x ulp */
        assert_true(fabs(o[8 * t + 3] - (3 + 1 / fabs(v))) < 1e-6);
        assert_true(fabs(o[8 * t + 4] - 2.7) < 1e-6);
        assert_true(fabs(o[8 * t + 5] - (0.4769362762044699 + 0.4769362762044699)) < 1e-6);
        assert_int_equal(u[t], 10 + abs(t - 4) + 100 * (1 + abs(5 - t)));
    }
    cudaFree(x);
    cudaFree(o);
    cudaFree(u);
}

/* The integer averages, __frsqrt_rn, the normal quantile, sincospif, and
 * the half and bf16 math functions on pairs (h2exp is hexp of each half). */
__global__ void averages_and_pair_math(int *i, float *f)
{
    i[0] = __hadd(-3, 4);
    i[1] = __rhadd(-3, 4);
    i[2] = __hadd(INT_MAX, INT_MAX);
    i[3] = (int)(__uhadd(UINT_MAX, UINT_MAX) == UINT_MAX);
    i[4] = (int)__urhadd(1u, 2u);
    f[0] = __frsqrt_rn(4.0f);
    f[1] = __frsqrt_rn(2.0f);
    f[2] = normcdfinvf(0.975f);
    f[3] = normcdfinvf(0.5f);
    sincospif(0.5f, &f[4], &f[5]);
    __half2 h = h2exp(__floats2half2_rn(0.0f, 1.0f));
    f[6] = __low2float(h);
    f[7] = __high2float(h);
    __nv_bfloat162 b = h2floor(__floats2bfloat162_rn(-1.5f, 2.5f));
    f[8] = __low2float(b);
    f[9] = __high2float(b);
    h = h2rcp(__floats2half2_rn(2.0f, 4.0f));
    f[10] = __low2float(h) + __high2float(h);
    f[11] = __half2float(hrint(__float2half(2.5f))) + __half2float(hlog2(__float2half(8.0f)));
    int t = threadIdx.x;
    __builtin_assume(t >= 0);
}

static void test_averages_and_pair_math(void **state)
{
    (void)state;
    int *i;
    float *f;
    cudaMallocManaged(&i, 8 * sizeof(int));
    cudaMallocManaged(&f, 16 * sizeof(float));
    averages_and_pair_math<<<1, 1>>>(i, f);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(i[0], 0);       /* (-3 + 4) >> 1 */
    assert_int_equal(i[1], 1);       /* (-3 + 4 + 1) >> 1 */
    assert_int_equal(i[2], INT_MAX); /* no overflow */
    assert_int_equal(i[3], 1);
    assert_int_equal(i[4], 2);
    assert_true(f[0] == 0.5f);
    assert_true(f[1] == (float)(1.0 / sqrt(2.0))); /* 0.70710677f, correctly rounded */
    assert_true(fabs(f[2] - 1.959963985) < 1e-6);
    assert_true(f[3] == 0.0f);
    assert_true(f[4] == 1.0f && fabs(f[5]) < 1e-7);
    assert_true(f[6] == 1.0f && f[7] == 2.71875f); /* e rounded to a half */
    assert_true(f[8] == -2.0f && f[9] == 2.0f);
    assert_true(f[10] == 0.75f);
    assert_true(f[11] == 2.0f + 3.0f); /* rint ties to even */
    cudaFree(i);
    cudaFree(f);
}

/* __builtin_assume(e) with e false is undefined on a GPU: here the launch
 * stops, naming e. */
__global__ void assumes(int n) { __builtin_assume(n > 0 && n % 32 == 0); }

static void test_builtin_assume_false(void **state)
{
    (void)state;
    assumes<<<1, 32>>>(64);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    capture_begin();
    assumes<<<1, 32>>>(48);
    cudaError_t e = cudaDeviceSynchronize();
    const char *err = capture_end();
    assert_int_not_equal(e, cudaSuccess);
    if (!strstr(err, "__builtin_assume(n > 0 && n % 32 == 0) at ") || !strstr(err, "test_simt_core.cu:"))
        fail_msg("a false __builtin_assume: %s", err);
    cudaDeviceReset();
}

/* Funnel shifts, 8-bit dot products (dp4a, dp2a), and sm_90's float2 and
 * float4 atomicAdd (each element atomic), which a GPU has for global memory
 * only: on shared memory the kernel stops. */
__global__ void packed_ops(int *o, float2 *f2, float4 *f4, int shared_too)
{
    __shared__ float4 s;
    o[0] = (int)__funnelshift_l(0x80000001u, 0x1u, 4);
    o[1] = (int)__funnelshift_r(0x80000001u, 0x1u, 36); /* the shift counts mod 32 */
    o[2] = (int)__funnelshift_rc(0x80000001u, 0x1u, 36); /* clamped to 32 */
    o[3] = __dp4a(0x01ff0203, 0x02030405, 10);           /* bytes low first: 3*5 + 2*4 - 1*3 + 1*2 + 10 */
    o[4] = (int)__dp4a(0x01ff0203u, 0x02030405u, 10u);   /* 3*5 + 2*4 + 255*3 + 1*2 + 10 */
    o[5] = __dp2a_lo(0x0002fffe, 0x00000305, 1);         /* -2*5 + 2*3 + 1 */
    o[6] = __dp2a_hi(0x0002fffe, 0x03050000, 1);
    atomicAdd(f2, make_float2(1.0f, 2.0f));
    atomicAdd(f4, make_float4(1.0f, 2.0f, 3.0f, 4.0f));
    if (shared_too) atomicAdd(&s, make_float4(1.0f, 1.0f, 1.0f, 1.0f));
}

static void test_packed_and_vector_atomics(void **state)
{
    (void)state;
    int *o;
    float2 *f2;
    float4 *f4;
    cudaMallocManaged(&o, 8 * sizeof(int));
    cudaMallocManaged(&f2, sizeof(float2));
    cudaMallocManaged(&f4, sizeof(float4));
    *f2 = make_float2(0.0f, 0.0f);
    *f4 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    packed_ops<<<2, 64>>>(o, f2, f4, 0);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    const int want[7] = {0x18, 0x18000000, 1, 32, 800, -3, -3};
    for (int k = 0; k < 7; k++)
        if (o[k] != want[k]) fail_msg("packed op %d: %#x, want %#x", k, o[k], want[k]);
    assert_true(f2->x == 128.0f && f2->y == 256.0f);
    assert_true(f4->x == 128.0f && f4->w == 512.0f);
    capture_begin();
    packed_ops<<<1, 32>>>(o, f2, f4, 1);
    cudaError_t e = cudaDeviceSynchronize();
    const char *err = capture_end();
    assert_int_equal(e, cudaErrorLaunchFailure);
    assert_non_null(strstr(err, "atomicAdd of a float2 or float4 on shared memory"));
    cudaDeviceReset();
    cudaFree(o);
    cudaFree(f2);
    cudaFree(f4);
}

/* The directed roundings (_rz, _rd, _ru) of float arithmetic, against
 * the CPU's own rounding modes: random bit patterns (subnormals, huge and
 * tiny values, infinities, NaNs), pairs far apart in size (their sums are
 * where a double's rounding would lose the smaller one) and fmas that
 * nearly cancel. */
enum { ROUND_OPS = 7 };
__global__ void rounded_ops(const float *a, const float *b, const float *c, float *o, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i], z = c[i], *r = o + 3 * ROUND_OPS * i;
    r[0] = __fadd_rz(x, y), r[1] = __fadd_rd(x, y), r[2] = __fadd_ru(x, y);
    r[3] = __fsub_rz(x, y), r[4] = __fsub_rd(x, y), r[5] = __fsub_ru(x, y);
    r[6] = __fmul_rz(x, y), r[7] = __fmul_rd(x, y), r[8] = __fmul_ru(x, y);
    r[9] = __fdiv_rz(x, y), r[10] = __fdiv_rd(x, y), r[11] = __fdiv_ru(x, y);
    r[12] = __fsqrt_rz(fabsf(x)), r[13] = __fsqrt_rd(fabsf(x)), r[14] = __fsqrt_ru(fabsf(x));
    r[15] = __fmaf_rz(x, y, z), r[16] = __fmaf_rd(x, y, z), r[17] = __fmaf_ru(x, y, z);
    r[18] = __frcp_rz(y), r[19] = __frcp_rd(y), r[20] = __frcp_ru(y);
}

static void test_directed_rounding(void **state)
{
    (void)state;
    const int n = 1 << 14;
    float *a, *b, *c, *o;
    cudaMallocManaged(&a, n * sizeof(float));
    cudaMallocManaged(&b, n * sizeof(float));
    cudaMallocManaged(&c, n * sizeof(float));
    cudaMallocManaged(&o, 3 * ROUND_OPS * n * sizeof(float));
    uint64_t st = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < n; i++) {
        uint32_t bits[3];
        for (int k = 0; k < 3; k++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            bits[k] = (uint32_t)(st >> 32);
        }
        memcpy(&a[i], &bits[0], 4);
        memcpy(&b[i], &bits[1], 4);
        memcpy(&c[i], &bits[2], 4);
        if (i % 4 == 1) b[i] = ldexpf(a[i], -(int)(bits[2] % 60)) * (bits[2] & 64 ? 1.0f : -1.0f);
        if (i % 4 == 2) c[i] = -a[i] * b[i];
    }
    rounded_ops<<<n / 256, 256>>>(a, b, c, o, n);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    const int modes[3] = {FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
    int differ = 0; /* results where the modes disagree: the reference did change mode */
    for (int i = 0; i < n; i++) {
        volatile float x = a[i], y = b[i], z = c[i];
        for (int m = 0; m < 3; m++) {
            fesetround(modes[m]);
            volatile float want[ROUND_OPS] = {x + y, x - y, x * y, x / y, sqrtf(fabsf(x)), fmaf(x, y, z), 1.0f / y};
            fesetround(FE_TONEAREST);
            for (int f = 0; f < ROUND_OPS; f++) {
                float got = o[3 * ROUND_OPS * i + 3 * f + m], w = want[f];
                if (memcmp(&got, &w, 4) != 0 && !(isnan(got) && isnan(w)))
                    fail_msg("op %d, mode %d: %a and %a (and %a) gave %a, want %a", f, m, (float)x, (float)y,
                             (float)z, got, w);
                differ += m > 0 && memcmp(&got, &o[3 * ROUND_OPS * i + 3 * f], 4) != 0;
            }
        }
    }
    assert_true(differ > n);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(o);
}

/* Conversions to an integer (from float, double, half and bf16) saturate
 * and take NaN to 0, as PTX's cvt does; to a float they round as their
 * suffix says; an exact zero sum is -0 rounding down. */
__global__ void conversions(const float *f, const double *d, long long *io, float *fo)
{
    float inf = f[0], nan = f[1];
    long long r[] = {__float2int_rn(3e9f), __float2int_rz(-3e9f), __float2int_rn(nan), __float2uint_rn(-1.0f),
                     __float2uint_ru(-0.5f), __float2int_rd(-1.5f), __float2int_ru(-1.5f), __float2int_rn(2.5f),
                     __float2int_rz(-2.7f), (long long)__float2uint_rz(inf), __float2ll_rd(-inf),
                     __float2ll_ru(9.3e18f), (long long)__float2ull_rz(2e19f), __double2int_rd(-0.5),
                     __double2uint_ru(0.1), __double2ll_rn(-4.5), (long long)__double2ull_rn(nan),
                     __half2int_rn(__float2half(inf)), __bfloat162int_rz(__float2bfloat16(-1e20f)),
                     __bfloat162int_rn(__float2bfloat16(nan)), __half2int_rd(__float2half(-1.5f)),
                     __bfloat162int_ru(__float2bfloat16(-1.5f))};
    for (int i = 0; i < (int)(sizeof r / sizeof r[0]); i++) io[i] = r[i];
    float q[] = {__int2float_rd(16777217), __int2float_ru(16777217), __int2float_rz(-16777217),
                 __uint2float_ru(4294967295u), __ll2float_rd(-(1ll << 60) - 1), __ull2float_rz(~0ull),
                 __double2float_rd(d[0]), __double2float_ru(d[0]), __double2float_rz(-d[0]), __double2float_rd(1e300),
                 __fadd_rd(1.0f, -1.0f), __fadd_rz(1.0f, -1.0f), __fsub_rd(2.0f, 2.0f), __fadd_ru(-0.0f, -0.0f),
                 __fmul_rz(3e38f, 3e38f), __fmul_rd(-3e38f, 3e38f)};
    for (int i = 0; i < (int)(sizeof q / sizeof q[0]); i++) fo[i] = q[i];
}

static void test_conversions_saturate(void **state)
{
    (void)state;
    float *f, *fo;
    double *d;
    long long *io;
    cudaMallocManaged(&f, 2 * sizeof(float));
    cudaMallocManaged(&d, sizeof(double));
    cudaMallocManaged(&io, 22 * sizeof(long long));
    cudaMallocManaged(&fo, 16 * sizeof(float));
    f[0] = INFINITY;
    f[1] = NAN;
    d[0] = 0.1;
    conversions<<<1, 1>>>(f, d, io, fo);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    const long long wi[22] = {INT_MAX, INT_MIN, 0, 0, 0, -2, -1, 2, -2, (long long)UINT_MAX, LLONG_MIN,
                              LLONG_MAX, -1 /* ULLONG_MAX */, -1, 1, -4, 0, INT_MAX, INT_MIN, 0, -2, -1};
    for (int i = 0; i < 22; i++)
        if (io[i] != wi[i]) fail_msg("integer conversion %d: %lld, want %lld", i, io[i], wi[i]);
    const float below = nextafterf(0.1f, 0.0f), above = 0.1f; /* 0.1f lies above 0.1 */
    const float wf[16] = {16777216.0f, 16777218.0f, -16777216.0f, 4294967296.0f, -0x1.000002p60f,
                          0x1.fffffep63f, below, above, -below, FLT_MAX, -0.0f, 0.0f, -0.0f, -0.0f, FLT_MAX, -INFINITY};
    for (int i = 0; i < 16; i++)
        if (memcmp(&fo[i], &wf[i], 4) != 0) fail_msg("float result %d: %a, want %a", i, fo[i], wf[i]);
    cudaFree(f);
    cudaFree(d);
    cudaFree(io);
    cudaFree(fo);
}

/* --- launch errors and faults --------------------------------------------------------- */

__global__ void noop(int *p)
{
    if (p) p[threadIdx.x] = 1;
}

__global__ void uses_dynamic(int *p)
{
    extern __shared__ int big[];
    big[threadIdx.x] = 1;
    __syncthreads();
    if (p) p[0] = big[0];
}

/* A copy to or from a __device__ symbol that runs past its end fails with
 * cudaErrorInvalidValue, and cudaGetLastError reports it, as after any
 * failed runtime call (it did not: the header returned the error alone). */
__device__ float g_symbol_taps[4];

static void test_symbol_copy_bounds(void **state)
{
    (void)state;
    float h[5] = {1, 2, 3, 4, 5};
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(cudaMemcpyToSymbol(g_symbol_taps, h, sizeof h), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaMemcpyFromSymbol(h, g_symbol_taps, sizeof(float), 4 * sizeof(float)), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaSuccess); /* not sticky */
    assert_int_equal(cudaMemcpyToSymbol(g_symbol_taps, h, sizeof(float), 3 * sizeof(float)), cudaSuccess);
    assert_int_equal(cudaMemcpyFromSymbol(h + 4, g_symbol_taps, sizeof(float), 3 * sizeof(float)), cudaSuccess);
    assert_true(h[4] == 1.0f);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
}

/* Copies and memsets that run past the end of a cudaMalloc allocation, and
 * frees of what cudaMalloc did not return, fail as on a GPU
 * (cudaErrorInvalidValue) instead of overwriting the heap or crashing in
 * free(); copies inside an allocation, at any offset, and host-to-host
 * copies are not affected. */
static void test_allocation_bounds(void **state)
{
    (void)state;
    const int n = 100;
    float h[2 * 100];
    for (int i = 0; i < 2 * n; i++) h[i] = (float)i;
    float *d;
    assert_int_equal(cudaMalloc(&d, n), cudaSuccess); /* bytes: the sizeof forgotten */
    assert_int_equal(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaSuccess); /* not sticky */
    assert_int_equal(cudaMemset(d, 0, n * sizeof(float)), cudaErrorInvalidValue);
    assert_int_equal(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    assert_int_equal(cudaMemcpy2D(d, 40, h, 40, 40, 3, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    assert_int_equal(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy((char *)d + n - 4, h, 4, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy2D(d, 40, h, 40, 20, 3, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(h + n, h, n * sizeof(float), cudaMemcpyHostToHost), cudaSuccess);
    assert_int_equal(cudaFree((char *)d + 4), cudaErrorInvalidValue);
    cudaGetLastError();
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaFree(d), cudaErrorInvalidValue); /* twice */
    cudaGetLastError();
    assert_int_equal(cudaFree(NULL), cudaSuccess);
}

/* Fresh device memory is never zero by luck: every cudaMalloc fills its
 * bytes with 0xff (NaN as a float), the second one of a freed size too,
 * which malloc would otherwise hand back holding the first one's data; so a
 * kernel that adds into a sum it never zeroed gets NaN every time. */
__global__ void add_into(float *sum, const float *x, int n)
{
    for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(sum, x[i]);
}

static void test_fresh_memory_is_not_zero(void **state)
{
    (void)state;
    const int n = 1000;
    for (int round = 0; round < 2; round++) {
        unsigned char *d;
        assert_int_equal(cudaMalloc(&d, n), cudaSuccess);
        unsigned char h[1000];
        assert_int_equal(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost), cudaSuccess);
        for (int i = 0; i < n; i++) assert_int_equal(h[i], 0xff);
        assert_int_equal(cudaMemset(d, 0, n), cudaSuccess); /* what the next allocation must not see */
        assert_int_equal(cudaFree(d), cudaSuccess);
    }
    float *sum, *x;
    assert_int_equal(cudaMalloc(&sum, sizeof(float)), cudaSuccess);
    assert_int_equal(cudaMallocManaged(&x, 64 * sizeof(float)), cudaSuccess);
    for (int i = 0; i < 64; i++) x[i] = 1.0f;
    add_into<<<1, 32>>>(sum, x, 64);
    float got = 0.0f;
    assert_int_equal(cudaMemcpy(&got, sum, sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    assert_true(std::isnan(got));
    assert_int_equal(cudaMemset(sum, 0, sizeof(float)), cudaSuccess);
    add_into<<<1, 32>>>(sum, x, 64);
    assert_int_equal(cudaMemcpy(&got, sum, sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    assert_true(got == 64.0f);
    cudaFree(sum);
    cudaFree(x);
}

static void test_launch_errors(void **state)
{
    (void)state;
    noop<<<1, 2048>>>(NULL);
    cudaError_t e = cudaGetLastError();
    assert_int_equal(e, cudaErrorInvalidConfiguration);
    assert_string_equal(cudaGetErrorString(e), "invalid configuration argument");
    assert_int_equal(cudaGetLastError(), cudaSuccess); /* cleared by the read */
    noop<<<1, dim3(1, 1, 65)>>>(NULL);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
    noop<<<dim3(1, 70000), 32>>>(NULL);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
    noop<<<0, 32>>>(NULL);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);

    /* A refusal on request (the checks' test of a caller's error path):
     * the next launch only, not sticky, and a cancelled one never comes. */
    int *flag;
    assert_int_equal(cudaMalloc((void **)&flag, 32 * sizeof(int)), cudaSuccess);
    cudaMemset(flag, 0, 32 * sizeof(int));
    simt_refuse_next_launch(1);
    noop<<<1, 32>>>(flag);
    assert_int_equal(cudaGetLastError(), cudaErrorLaunchOutOfResources);
    int h[32];
    cudaMemcpy(h, flag, sizeof h, cudaMemcpyDeviceToHost);
    assert_int_equal(h[0], 0); /* the refused kernel did not run */
    noop<<<1, 32>>>(flag);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    cudaMemcpy(h, flag, sizeof h, cudaMemcpyDeviceToHost);
    assert_int_equal(h[31], 1);
    simt_refuse_next_launch(1);
    simt_refuse_next_launch(0);
    noop<<<1, 32>>>(flag);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    cudaFree(flag);

    /* More than 48 KiB of dynamic shared memory needs the opt-in attribute;
     * the refusal says so on stderr, as every refused launch does. */
    capture_begin();
    uses_dynamic<<<1, 32, 64 * 1024>>>(NULL);
    cudaError_t first = cudaGetLastError();
    assert_int_equal(cudaFuncSetAttribute(uses_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024),
                     cudaSuccess);
    uses_dynamic<<<1, 32, 100 * 1024>>>(NULL);
    cudaError_t second = cudaGetLastError();
    const char *said = capture_end();
    assert_int_equal(first, cudaErrorInvalidValue);
    assert_int_equal(second, cudaErrorInvalidValue);
    assert_non_null(strstr(said, "simt: launch at test_simt_core.cu:")); /* the launch's own line */
    assert_non_null(strstr(said, " refused (cudaErrorInvalidValue): 65536 bytes of dynamic shared memory, "
                                 "above the 49152 a kernel gets without cudaFuncSetAttribute("));
    assert_non_null(strstr(said, "102400 bytes of dynamic shared memory, above the 65536 that cudaFuncSetAttribute "
                                 "allowed this kernel"));
    uses_dynamic<<<1, 32, 64 * 1024>>>(NULL);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(cudaFuncSetAttribute(uses_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 20),
                     cudaErrorInvalidValue);
    cudaGetLastError();

    /* SIMT_SHARED_OPTIN_KB makes a GPU with less to opt in to (99 KB: an RTX 30/40). */
    int optin = 0;
    setenv("SIMT_SHARED_OPTIN_KB", "99", 1);
    assert_int_equal(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), cudaSuccess);
    assert_int_equal(optin, 99 * 1024);
    assert_int_equal(cudaFuncSetAttribute(uses_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024),
                     cudaErrorInvalidValue);
    cudaGetLastError();
    assert_int_equal(cudaFuncSetAttribute(uses_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, 99 * 1024),
                     cudaSuccess);
    setenv("SIMT_SHARED_OPTIN_KB", "300", 1); /* out of range: the default (and a message) */
    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
    assert_int_equal(optin, 227 * 1024);
    unsetenv("SIMT_SHARED_OPTIN_KB");
    noop<<<1, 1024>>>(NULL);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
}

/* The launch limits of CUDA's Compute Capabilities table (all current
 * devices): 1024 threads per block in x * y * z, a block's z at most 64, a
 * grid's y and z at most 65535, and no dimension of 0. Each limit is
 * checked on its own dimension, and a launch exactly at it runs. */
__global__ void count_blocks(unsigned int *n) { atomicAdd(n, 1u); }

static void test_launch_limits_each_dimension(void **state)
{
    (void)state;
    const dim3 bad_blocks[] = {dim3(16, 16, 8), dim3(32, 0, 1), dim3(32, 1, 0), dim3(1, 1, 65)};
    for (const dim3 &b : bad_blocks) {
        noop<<<1, b>>>(NULL);
        cudaError_t e = cudaGetLastError();
        if (e != cudaErrorInvalidConfiguration)
            fail_msg("block (%u,%u,%u): got %s, want cudaErrorInvalidConfiguration", b.x, b.y, b.z, cudaGetErrorName(e));
    }
    const dim3 bad_grids[] = {dim3(1, 0, 1), dim3(1, 1, 0), dim3(1, 1, 65536), dim3(1, 65536, 1)};
    for (const dim3 &g : bad_grids) {
        noop<<<g, 32>>>(NULL);
        cudaError_t e = cudaGetLastError();
        if (e != cudaErrorInvalidConfiguration)
            fail_msg("grid (%u,%u,%u): got %s, want cudaErrorInvalidConfiguration", g.x, g.y, g.z, cudaGetErrorName(e));
    }
    unsigned int *n;
    cudaMallocManaged(&n, sizeof(unsigned int));
    *n = 0;
    count_blocks<<<dim3(1, 65535, 1), 1>>>(n);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    count_blocks<<<dim3(1, 1, 65535), 1>>>(n);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    count_blocks<<<dim3(2, 3, 5), dim3(8, 8, 16)>>>(n); /* 1024 threads, in all three dimensions */
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    count_blocks<<<1, dim3(1, 1, 64)>>>(n);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(*n, 2u * 65535u + 30u * 1024u + 64u);
    int v = 0;
    assert_int_equal(cudaDeviceGetAttribute(&v, cudaDevAttrMaxGridDimY, 0), cudaSuccess);
    assert_int_equal(v, 65535);
    assert_int_equal(cudaDeviceGetAttribute(&v, cudaDevAttrMaxGridDimZ, 0), cudaSuccess);
    assert_int_equal(v, 65535);
    assert_int_equal(cudaDeviceGetAttribute(&v, cudaDevAttrMaxBlockDimZ, 0), cudaSuccess);
    assert_int_equal(v, 64);
    cudaFree(n);
}

__global__ void traps_in_block_two(int *out)
{
    if (blockIdx.x == 2 && threadIdx.x == 5) __trap();
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

__global__ void deadlocks(int *out)
{
    int lane = threadIdx.x;
    if (lane < 16)
        __syncthreads();
    else
        out[lane] = __shfl_sync(0xffffffffu, lane, 0); /* waits for lanes stuck at the barrier */
}

__global__ void asserts_in_block_one(int *out)
{
    assert(blockIdx.x != 1 || threadIdx.x < 5);
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

static void test_trap_and_deadlock_are_faults(void **state)
{
    (void)state;
    int *d;
    cudaMalloc(&d, 8 * 64 * sizeof(int));
    asserts_in_block_one<<<4, 32>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorAssert);
    cudaDeviceReset();
    cudaFree(d);
    cudaMalloc(&d, 8 * 64 * sizeof(int));
    traps_in_block_two<<<8, 64>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorLaunchFailure); /* sticky */
    noop<<<1, 1>>>(NULL);
    assert_int_equal(cudaGetLastError(), cudaErrorLaunchFailure);
    /* Streams, events and kernel attributes too, as the README says. */
    cudaEvent_t e = NULL;
    cudaStream_t st = NULL;
    cudaFuncAttributes fa;
    assert_int_equal(cudaEventCreate(&e), cudaErrorLaunchFailure);
    assert_int_equal(cudaStreamCreate(&st), cudaErrorLaunchFailure);
    assert_int_equal(cudaFuncSetAttribute((const void *)noop, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024),
                     cudaErrorLaunchFailure);
    assert_int_equal(cudaFuncGetAttributes(&fa, (const void *)noop), cudaErrorLaunchFailure);
    cudaDeviceReset();
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);

    deadlocks<<<1, 32>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
    cudaDeviceReset();
    noop<<<2, 32>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaFree(d);
}

/* A kernel given host memory (malloc, new, a local array) or freed device
 * memory faults on a GPU at its first access through it; the launch fails
 * here as that fault does, and a line names the argument. Device memory of every kind passes:
 * cudaMalloc and its forms, a pointer one past an allocation's end, NULL,
 * a __device__ or __managed__ variable. */
__device__ int dev_counter;
__managed__ int managed_counter;
__global__ void add_one(int *p, const int *q)
{
    if (p) p[threadIdx.x] += 1;
    (void)q;
}

static void test_host_pointer_argument(void **state)
{
    (void)state;
    int *heap = (int *)malloc(32 * sizeof(int)), *d = NULL, *h = NULL, *m = NULL, local[32], *sym = NULL;
    int *arr = new int[32];
    memset(heap, 0, 32 * sizeof(int));
    memset(local, 0, sizeof local);
    int *bad[3] = {heap, arr, local};
    const char *where[3] = {"the heap", "the heap", "the stack"};
    for (int k = 0; k < 3; k++) {
        capture_begin();
        add_one<<<1, 32>>>(d, bad[k]); /* argument 2, and NULL for argument 1 */
        cudaError_t e = cudaDeviceSynchronize();
        const char *err = capture_end();
        assert_int_equal(e, cudaErrorIllegalAddress);
        if (!strstr(err, "add_one, launched at test_simt_core.cu:") || !strstr(err, "its argument 2 is") ||
            !strstr(err, where[k]) || !strstr(err, "cudaMemcpy"))
            fail_msg("host pointer %d: the message does not say which argument and why: %s", k, err);
        cudaDeviceReset();
    }
    assert_int_equal(heap[0], 0); /* and nothing ran */
    int *gone = NULL; /* device memory freed: no longer the kernel's either */
    assert_int_equal(cudaMalloc(&gone, 64), cudaSuccess);
    cudaFree(gone);
    capture_begin();
    add_one<<<1, 1>>>(gone, NULL);
    cudaError_t e = cudaDeviceSynchronize();
    const char *err = capture_end();
    assert_int_equal(e, cudaErrorIllegalAddress);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    const char *freed = "device memory already freed"; /* the heap's again in these builds */
#else
    const char *freed = "in device memory that cudaFree has freed (a pointer used after its cudaFree)";
#endif
    if (!strstr(err, "its argument 1") || !strstr(err, freed))
        fail_msg("freed memory: the message does not say so: %s", err);
    cudaDeviceReset();
    assert_int_equal(cudaMalloc(&d, 32 * sizeof(int)), cudaSuccess);
    assert_int_equal(cudaMallocHost(&h, 32 * sizeof(int)), cudaSuccess);
    assert_int_equal(cudaMallocManaged(&m, 32 * sizeof(int)), cudaSuccess);
    assert_int_equal(cudaGetSymbolAddress((void **)&sym, dev_counter), cudaSuccess);
    cudaMemset(d, 0, 32 * sizeof(int));
    int *whole[3] = {d, h, m}, *part[3] = {d + 32 /* one past the end: nothing reads it */, sym, &managed_counter};
    for (int k = 0; k < 3; k++) {
        add_one<<<1, 32>>>(whole[k], part[k]);
        if (cudaDeviceSynchronize() != cudaSuccess) fail_msg("device pointers %d refused", k);
    }
    add_one<<<1, 1>>>(sym, &managed_counter);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    int back = 0;
    cudaMemcpy(&back, d + 31, sizeof back, cudaMemcpyDeviceToHost);
    assert_int_equal(back, 1); /* the kernels ran: 0 + 1 */
    assert_int_equal(m[31], 0); /* -1, fresh memory's 0xff bytes, + 1 */
    free(heap);
    delete[] arr;
    cudaFree(d);
    cudaFreeHost(h);
    cudaFree(m);
}

/* After a fault the copies, memsets and allocations fail too (sticky until
 * cudaDeviceReset), and the reset leaves no error behind. */
static void test_fault_stops_memory_calls(void **state)
{
    (void)state;
    int *d, h[64] = {0};
    cudaMalloc(&d, 8 * 64 * sizeof(int));
    traps_in_block_two<<<8, 64>>>(d);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
    int *e = NULL;
    assert_int_equal(cudaMalloc(&e, 64), cudaErrorLaunchFailure);
    assert_int_equal(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost), cudaErrorLaunchFailure);
    assert_int_equal(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice), cudaErrorLaunchFailure);
    assert_int_equal(cudaMemset(d, 0, sizeof(h)), cudaErrorLaunchFailure);
    assert_int_equal(cudaPeekAtLastError(), cudaErrorLaunchFailure);
    cudaDeviceReset();
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(cudaMemset(d, 0, sizeof(h)), cudaSuccess);
    cudaFree(d);
}

/* --- misaligned accesses ------------------------------------------------------------- */

/* Thread 3 of block 1 reads a float4 off + 4 floats into p; everyone else
 * reads an aligned one. With off = 1 that one load is 4 bytes past a
 * 16-byte boundary: a GPU stops the kernel with "misaligned address". */
__global__ void loads_float4(const float *p, float *out, int off)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int at = (blockIdx.x == 1 && threadIdx.x == 3) ? 4 + off : 4 * i;
    float4 v = *reinterpret_cast<const float4 *>(p + at);
    out[i] = v.x + v.y + v.z + v.w;
}

/* A float2 store to an address that is 4 bytes off its 8-byte alignment. */
__global__ void stores_float2(float *p, int off)
{
    *reinterpret_cast<float2 *>(p + off) = make_float2(1.0f, 2.0f);
}

static void test_misaligned_access_is_a_fault(void **state)
{
    (void)state;
    float *p, *out;
    cudaMallocManaged(&p, 64 * 4 * sizeof(float));
    cudaMallocManaged(&out, 64 * sizeof(float));
    for (int i = 0; i < 256; i++) p[i] = (float)i;

    loads_float4<<<2, 32>>>(p, out, 0);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_true(out[35] == 4.0f + 5.0f + 6.0f + 7.0f); /* thread 3 of block 1 read p[4..7] */
    assert_true(out[0] == 0.0f + 1.0f + 2.0f + 3.0f);

    loads_float4<<<2, 32>>>(p, out, 1);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorMisalignedAddress);
    assert_string_equal(cudaGetErrorString(cudaErrorMisalignedAddress), "misaligned address");
    noop<<<1, 1>>>(NULL);
    assert_int_equal(cudaGetLastError(), cudaErrorMisalignedAddress); /* sticky, as on a GPU */
    cudaDeviceReset();

    stores_float2<<<1, 1>>>(p, 2);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_true(p[2] == 1.0f && p[3] == 2.0f);
    stores_float2<<<1, 1>>>(p, 1);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorMisalignedAddress);
    cudaDeviceReset();

    /* The same load in host code runs on the CPU, which allows it: the
     * alignment check is reported only inside a kernel. */
    const volatile float4 *hp = reinterpret_cast<const volatile float4 *>(p + 1);
    assert_true(hp->x == 1.0f && hp->w == 4.0f);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaFree(p);
    cudaFree(out);
}

/* --- shared-memory limits ------------------------------------------------------------ */

/* 32 KB of static shared memory, and with two != 0 another 32 KB: more than
 * the 48 KB of static shared memory ptxas allows a kernel. */
__global__ void static_tiles(float *out, int two)
{
    __shared__ float a[8192];
    a[threadIdx.x] = 1.0f;
    if (two) {
        __shared__ float b[8192];
        b[threadIdx.x] = 2.0f;
        out[1] = b[threadIdx.x];
    }
    out[0] = a[threadIdx.x];
}

/* 40 KB static plus the dynamic size of the launch. A template, so that
 * each instantiation is a kernel of its own with its own limit:
 * <0> has it raised with cudaFuncSetAttribute, <1> keeps the default. */
template <int Which> __global__ void static_and_dynamic(float *out)
{
    __shared__ float s[10240];
    extern __shared__ float d[];
    s[threadIdx.x] = 1.0f;
    d[threadIdx.x] = 2.0f;
    out[threadIdx.x] = s[threadIdx.x] + d[threadIdx.x] + Which;
}

/* A GPU build refuses more than 48 KB of static shared memory per kernel,
 * and a block may not have more than 227 KB of static and dynamic together;
 * a kernel past either limit fails here rather than running. */
static void test_shared_memory_limits(void **state)
{
    (void)state;
    float *out;
    cudaMallocManaged(&out, 32 * sizeof(float));
    static_tiles<<<1, 32>>>(out, 0);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_true(out[0] == 1.0f);
    static_tiles<<<2, 32>>>(out, 1);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorLaunchOutOfResources);
    cudaDeviceReset();

    const int dyn_ok = 180 * 1024, dyn_over = 188 * 1024; /* 40 + 180 <= 227 < 40 + 188 KB */
    assert_int_equal(cudaFuncSetAttribute(static_and_dynamic<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_over),
                     cudaSuccess);
    static_and_dynamic<0><<<1, 32, dyn_ok>>>(out);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_true(out[31] == 3.0f);
    static_and_dynamic<0><<<1, 32, dyn_over>>>(out);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue); /* refused, not a fault */
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);

    /* Without cudaFuncSetAttribute the dynamic memory gets only what the
     * static leaves of 48 KB: 40 + 8 fits, 40 + 12 does not. */
    static_and_dynamic<1><<<1, 32, 8 * 1024>>>(out);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_true(out[31] == 4.0f);
    static_and_dynamic<1><<<1, 32, 12 * 1024>>>(out);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaFree(out);
}

/* A float4 store at the start of dynamic shared memory: its base is aligned
 * for any vector type whatever the size launched (the emulator gives 128
 * bytes), or the alignment check stops the launch. */
__global__ void dynamic_base_float4(float *out)
{
    extern __shared__ float4 dyn4[];
    dyn4[0] = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
    out[0] = dyn4[0].w;
}

/* The dynamic shared-memory limits at their edges: exactly 48 KiB runs
 * without cudaFuncSetAttribute, 4 bytes past what 40 KB of static memory
 * leaves does not; cudaFuncGetAttributes reports the limit last set (also
 * after many sets); and a raised limit is checked against the device's
 * opt-in maximum as SIMT_SHARED_OPTIN_KB sets it. */
static void test_shared_memory_limit_edges(void **state)
{
    (void)state;
    float *out;
    cudaMallocManaged(&out, 32 * sizeof(float));
    uses_dynamic<<<1, 32, 48 * 1024>>>(NULL);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    static_and_dynamic<1><<<1, 32, 8 * 1024 + 4>>>(out);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    dynamic_base_float4<<<1, 1, 100>>>(out);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_true(out[0] == 4.0f);

    cudaFuncAttributes fa;
    for (int k = 1; k <= 300; k++)
        assert_int_equal(cudaFuncSetAttribute(dynamic_base_float4, cudaFuncAttributeMaxDynamicSharedMemorySize, 256 * k),
                         cudaSuccess);
    assert_int_equal(cudaFuncGetAttributes(&fa, (const void *)dynamic_base_float4), cudaSuccess);
    assert_int_equal(fa.maxDynamicSharedSizeBytes, 256 * 300);
    assert_int_equal(cudaFuncGetAttributes(&fa, (const void *)count_blocks), cudaSuccess);
    assert_int_equal(fa.maxDynamicSharedSizeBytes, 48 * 1024); /* never set: the default */

    /* 40 KB static and 60 KB dynamic: within an H100's 227 KB, not within
     * the 99 KB of an RTX 30/40. */
    setenv("SIMT_SHARED_OPTIN_KB", "99", 1);
    assert_int_equal(cudaFuncSetAttribute(static_and_dynamic<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, 60 * 1024),
                     cudaSuccess);
    static_and_dynamic<2><<<1, 32, 60 * 1024>>>(out);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    unsetenv("SIMT_SHARED_OPTIN_KB");
    assert_int_equal(cudaFuncGetAttributes(&fa, (const void *)dynamic_base_float4), cudaSuccess);
    assert_int_equal(fa.maxDynamicSharedSizeBytes, 256 * 300); /* each kernel keeps its own */
    static_and_dynamic<2><<<1, 32, 60 * 1024>>>(out);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_true(out[31] == 5.0f);
    cudaFree(out);
}

/* --- uninitialised locals ---------------------------------------------------------------- */

/* An accumulator never zeroed: simtcc starts it as 0xfe bytes every time
 * (-ftrivial-auto-var-init=pattern), so the sum is wrong in every block,
 * not only where the stack happens to hold old values. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__global__ void sum_without_zero(const float *a, int n, float *out)
{
    float acc;
    for (int i = 0; i < n; i++) acc += a[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
#pragma GCC diagnostic pop

static void test_uninitialised_locals_are_a_pattern(void **state)
{
    (void)state;
    float *a, *out;
    cudaMallocManaged(&a, sizeof(float));
    cudaMallocManaged(&out, 64 * sizeof(float));
    a[0] = 1.0f;
    sum_without_zero<<<2, 32>>>(a, 0, out);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    for (int i = 0; i < 64; i++) {
        unsigned int bits; /* __float_as_uint is device code only, as on a GPU */
        memcpy(&bits, &out[i], sizeof bits);
        assert_int_equal(bits, 0xfefefefeu);
    }
    cudaFree(a);
    cudaFree(out);
}

/* --- launch bounds ---------------------------------------------------------------------- */

/* A GPU refuses to launch a kernel with more threads per block than its
 * __launch_bounds__ (ptxas gave each thread registers for that many). */
__global__ void __launch_bounds__(64) bounded(int *p) { atomicAdd(p, 1); }

template <int N>
__global__ void __launch_bounds__(N * 2,
                                  1) bounded_twice(int *p) { atomicAdd(p, 1); }

__global__ void __launch_bounds__(32) declared_first(int *p);
__global__ void __launch_bounds__(32) declared_first(int *p) { atomicAdd(p, 1); }

static void test_launch_bounds(void **state)
{
    (void)state;
    int *p;
    cudaMallocManaged(&p, sizeof(int));
    *p = 0;
    bounded<<<2, 64>>>(p);
    bounded_twice<16><<<1, dim3(8, 4)>>>(p);
    declared_first<<<1, 32>>>(p);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(*p, 128 + 32 + 32);
    /* Refused at the launch, no block runs, and the error is not sticky:
     * cudaGetLastError reports it once, and the next launch runs. */
    bounded<<<4, 65>>>(p);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    bounded_twice<16><<<1, 33>>>(p);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    declared_first<<<1, 64>>>(p);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(*p, 128 + 32 + 32);
    bounded<<<1, 64>>>(p);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(*p, 128 + 32 + 32 + 64);
    cudaFree(p);
}

/* Launch bounds from a macro, as students write them. The emulator does not
 * follow a macro to the kernel that uses it, so these bounds go unchecked
 * (a launch past one runs here); what matters is that such kernels build
 * and run, and that no check lands in the struct or the function after the
 * macros, as one did. */
#define BOUND_BY_MACRO __launch_bounds__(64)
#define BOUND_OF(n) __launch_bounds__(n)
#define BOUNDED_KERNEL __global__ void __launch_bounds__(32)
struct after_bound_macros {
    int unused;
};
__global__ void BOUND_BY_MACRO bounded_by_macro(int *p) { atomicAdd(p, 1); }
__global__ void BOUND_OF(64) bounded_by_param(int *p) { atomicAdd(p, 2); }
BOUNDED_KERNEL bounded_kernel_macro(int *p) { atomicAdd(p, 4); }

static void test_launch_bounds_from_macros(void **state)
{
    (void)state;
    int *p;
    cudaMallocManaged(&p, sizeof(int));
    *p = 0;
    bounded_by_macro<<<2, 64>>>(p);
    bounded_by_param<<<1, 64>>>(p);
    bounded_kernel_macro<<<1, 32>>>(p);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(*p, 128 + 128 + 128);
    assert_int_equal(sizeof(after_bound_macros), sizeof(int));
    cudaFree(p);
}

/* --- indices past an array's end ------------------------------------------------------ */

/* A static shared tile and a register array indexed off their ends when
 * off = 1: thread 31 writes t[32] of a 32-float tile, and thread 7 reads
 * acc[4] of a 4-float array. Neither faults reliably on a GPU (the first
 * lands in whatever follows the tile); the emulator stops the launch. */
__global__ void overruns(float *out, int off, int reg)
{
    __shared__ float t[2][32];
    float acc[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    int x = threadIdx.x;
    t[0][x + (reg ? 0 : off)] = (float)x;
    __syncthreads();
    int i = x % 4 + (reg && x == 7 ? off : 0);
    out[x] = t[0][x] + acc[i];
}

static void test_array_overrun_is_a_fault(void **state)
{
    (void)state;
    float *out;
    cudaMallocManaged(&out, 32 * sizeof(float));
    overruns<<<1, 32>>>(out, 0, 0);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_true(out[5] == 5.0f + 2.0f);
    overruns<<<1, 32>>>(out, 1, 0);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    cudaDeviceReset();
    overruns<<<1, 32>>>(out, 1, 1);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    cudaDeviceReset();
    cudaFree(out);
}

/* --- runtime API --------------------------------------------------------------------- */

/* cudaLaunchKernel: the arguments read through args as the kernel's
 * parameter types, a launch like <<<...>>>, and a bad shape returned (and
 * kept as the last error). cudaGetSymbolSize, and the bank width that GPUs
 * since Volta accept and do not act on. */
__global__ void add_scaled(float *o, int n, double v)
{
    int i = threadIdx.x;
    if (i < n) o[i] += (float)v;
}

__device__ float4 sym4[3];

static void test_launch_kernel_by_args(void **state)
{
    (void)state;
    float *o;
    cudaMallocManaged(&o, 32 * sizeof(float));
    for (int i = 0; i < 32; i++) o[i] = (float)i;
    int n = 16;
    double v = 0.5;
    void *args[] = {&o, &n, &v};
    assert_int_equal(cudaLaunchKernel(add_scaled, dim3(1), dim3(32), args, 0, 0), cudaSuccess);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_true(o[15] == 15.5f && o[16] == 16.0f);
    capture_begin();
    cudaError_t e = cudaLaunchKernel(add_scaled, dim3(1), dim3(2048), args);
    const char *said = capture_end();
    assert_int_equal(e, cudaErrorInvalidConfiguration);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
    assert_non_null(strstr(said, "more than 1024 threads per block"));
    assert_int_equal(cudaLaunchKernel(add_scaled, dim3(1), dim3(32), NULL), cudaErrorInvalidValue);
    cudaGetLastError();
    size_t size = 0;
    assert_int_equal(cudaGetSymbolSize(&size, sym4), cudaSuccess);
    assert_int_equal(size, 3 * sizeof(float4));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    cudaSharedMemConfig c = cudaSharedMemBankSizeDefault;
    assert_int_equal(cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte), cudaSuccess);
    assert_int_equal(cudaDeviceGetSharedMemConfig(&c), cudaSuccess);
    assert_int_equal(c, cudaSharedMemBankSizeFourByte);
    assert_int_equal(cudaFuncSetSharedMemConfig(add_scaled, (cudaSharedMemConfig)7), cudaErrorInvalidValue);
#pragma GCC diagnostic pop
    cudaFree(o);
}

static void test_runtime_api(void **state)
{
    (void)state;
    int count = 0, dev = -1;
    assert_int_equal(cudaGetDeviceCount(&count), cudaSuccess);
    assert_int_equal(count, 1);
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(dev, 0);
    assert_int_equal(cudaSetDevice(1), cudaErrorInvalidDevice);
    cudaGetLastError();
    cudaDeviceProp p;
    assert_int_equal(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    assert_string_equal(p.name, "SIMT emulator (CPU)");
    assert_int_equal(p.warpSize, 32);
    assert_int_equal(p.maxThreadsPerBlock, 1024);
    assert_true(p.major >= 8);
    int smem = 0;
    cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
    assert_int_equal((size_t)smem, p.sharedMemPerBlockOptin);

    cudaStream_t s;
    cudaEvent_t a, b;
    assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    float ms = -1;
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle); /* never recorded */
    assert_int_equal(cudaEventQuery(a), cudaSuccess);                                  /* ditto: complete */
    cudaGetLastError();
    int *d;
    cudaMalloc(&d, 1024 * sizeof(int));
    cudaEventRecord(a, s);
    for (int r = 0; r < 20; r++) noop<<<64, 1024, 0, s>>>(d);
    cudaEventRecord(b, s);
    assert_int_equal(cudaEventSynchronize(b), cudaSuccess);
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    assert_true(ms > 0.0f && ms < 60000.0f);

    int h[1024];
    assert_int_equal(cudaMemsetAsync(d, 0xff, sizeof(h), s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    cudaMemcpyAsync(h, d, sizeof(h), cudaMemcpyDeviceToHost, s);
    assert_int_equal(h[1023], -1);
    int src2d[3][5], dst2d[3][4];
    for (int i = 0; i < 15; i++) (&src2d[0][0])[i] = i;
    assert_int_equal(cudaMemcpy2D(dst2d, 4 * sizeof(int), src2d, 5 * sizeof(int), 4 * sizeof(int), 3,
                                  cudaMemcpyHostToHost),
                     cudaSuccess);
    assert_int_equal(dst2d[2][3], 13);
    cudaFree(d);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaStreamDestroy(s);
    assert_string_equal(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
}

/* --- rewriter ----------------------------------------------------------------------------- */

static int plus(int a, int b) { return a + b; }

__global__ void add_to(int *p, int v) { atomicAdd(p, v); }

static void test_rewriter_forms(void **state)
{
    (void)state;
    int *d, h = 0;
    cudaMalloc(&d, sizeof(int));
    cudaMemset(d, 0, sizeof(int));
    /* Two launches on one line, nested parentheses in both parts, a comment
     * and a string with <<< in it, and a launch split over lines. */
    add_to<<<dim3(plus(1, (1))), dim3(min(4, 8))>>>(d, plus(2, (3))); add_to<<<1, 1>>>(d, 100); /* x<<<y>>>(z) */
    const char *text = "k<<<1,1>>>()";
    (void)text;
    add_to<<<
        2,
        3
    >>>
        (d,
         1000);
#define LAUNCH_ADD(p, v) add_to<<<1, 2>>>(p, v)
    LAUNCH_ADD(d, 10000);
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    assert_int_equal(h, 2 * 4 * 5 + 100 + 6 * 1000 + 2 * 10000);
    cudaFree(d);
}

/* --- fp16 and bf16 ------------------------------------------------------------------------ */

/* The float whose bits are u, in host code (__uint_as_float is device code
 * only, as on a GPU). */
static float float_of_bits(unsigned int u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* out[0] = a * b + c in half precision, rounded once. */
__global__ void half_fma(const __half *abc, __half *out) { out[0] = __hfma(abc[0], abc[1], abc[2]); }

static void test_half_conversions(void **state)
{
    (void)state;
    assert_int_equal(__half_as_ushort(__float2half(1.0f)), 0x3c00);
    assert_int_equal(__half_as_ushort(__float2half(65504.0f)), 0x7bff);
    assert_int_equal(__half_as_ushort(__float2half(65519.0f)), 0x7bff);
    assert_int_equal(__half_as_ushort(__float2half(65520.0f)), 0x7c00); /* ties to even: overflow */
    assert_int_equal(__half_as_ushort(__float2half(-0.0f)), 0x8000);
    assert_int_equal(__half_as_ushort(__float2half(5.9604645e-8f)), 0x0001);
    assert_int_equal(__half_as_ushort(__float2half(2.9802322e-8f)), 0x0000); /* half the smallest: tie to 0 */
    assert_int_equal(__half_as_ushort(__float2half(NAN)), 0x7fff);
    assert_int_equal(__half_as_ushort(__float2half(1.0f + 1.0f / 2048)), 0x3c00); /* tie to even */
    assert_int_equal(__half_as_ushort(__float2half(1.0f + 3.0f / 2048)), 0x3c02);
    assert_int_equal(__bfloat16_as_ushort(__float2bfloat16(1.0f)), 0x3f80);
    assert_int_equal(__bfloat16_as_ushort(__float2bfloat16(float_of_bits(0x3f808000u))), 0x3f80);
    assert_int_equal(__bfloat16_as_ushort(__float2bfloat16(float_of_bits(0x3f818000u))), 0x3f82);
    assert_int_equal(__bfloat16_as_ushort(__float2bfloat16(float_of_bits(0x3f808001u))), 0x3f81);
    assert_int_equal(__bfloat16_as_ushort(__float2bfloat16(NAN)), 0x7fff);
    assert_int_equal(__bfloat16_as_ushort(__float2bfloat16(INFINITY)), 0x7f80);
    assert_int_equal(__bfloat16_as_ushort(__float2bfloat16(3.4e38f)), 0x7f80);
    /* Every finite half survives a round trip through float. */
    for (unsigned int u = 0; u < 0x10000u; u++) {
        __half h = __ushort_as_half((unsigned short)u);
        float f = __half2float(h);
        if (f != f) {
            assert_int_equal(__half_as_ushort(__float2half(f)), 0x7fff);
            continue;
        }
        assert_int_equal(__half_as_ushort(__float2half(f)), u);
        __nv_bfloat16 b = __ushort_as_bfloat16((unsigned short)u);
        float g = __bfloat162float(b);
        if (g == g) assert_int_equal(__bfloat16_as_ushort(__float2bfloat16(g)), u);
    }
    /* Arithmetic rounds once. */
    __half a = __float2half(1.0f), eps = __float2half(1.0f / 1024);
    assert_int_equal(__half_as_ushort(a + eps), 0x3c01);
    __half *abc;
    cudaMallocManaged(&abc, 4 * sizeof(__half));
    abc[0] = eps;
    abc[1] = eps;
    abc[2] = a;
    half_fma<<<1, 1>>>(abc, abc + 3);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(__half_as_ushort(abc[3]), 0x3c00);
    cudaFree(abc);
    __nv_bfloat162 p = __floats2bfloat162_rn(1.5f, -2.25f);
    float2 q = __bfloat1622float2(p * p);
    assert_true(q.x == 2.25f && q.y == 5.0625f);
}

/* Pitched 2-D memory (cudaMallocPitch, cudaMemset2D, cudaMemcpy2DAsync),
 * zero-copy host memory (cudaHostRegister, cudaHostGetDevicePointer), the
 * managed-memory hints of CUDA 13 (cudaMemPrefetchAsync, cudaMemAdvise
 * with a cudaMemLocation), device limits and host functions in a stream:
 * the calls and checks of a GPU, and the errors it gives. */
__global__ void scale_rows(float *m, size_t pitch, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) {
        float *row = (float *)((char *)m + y * pitch);
        row[x] = row[x] * 2.0f + (float)y;
    }
}

static void add_ten(void *p) { *(int *)p += 10; }

static void test_pitched_mapped_and_managed_memory(void **state)
{
    (void)state;
    enum { W = 100, H = 7 };
    static float host[H][W];
    float *m = NULL;
    size_t pitch = 0;
    assert_int_equal(cudaMallocPitch(&m, &pitch, W * sizeof(float), H), cudaSuccess);
    assert_int_equal(pitch, 512); /* 400 bytes rounded up to the 512-byte row alignment */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) host[y][x] = (float)x;
    assert_int_equal(cudaMemset2D(m, pitch, 0, W * sizeof(float), H), cudaSuccess);
    assert_int_equal(cudaMemcpy2D(m, pitch, host, sizeof host[0], sizeof host[0], H, cudaMemcpyHostToDevice),
                     cudaSuccess);
    scale_rows<<<dim3(1, H), 128>>>(m, pitch, W, H);
    assert_int_equal(cudaMemcpy2DAsync(host, sizeof host[0], m, pitch, sizeof host[0], H, cudaMemcpyDeviceToHost),
                     cudaSuccess);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) assert_true(host[y][x] == 2.0f * (float)x + (float)y);
    assert_int_equal(cudaMemset2D(m, pitch, 0, pitch + 1, 1), cudaErrorInvalidPitchValue);
    capture_begin();
    cudaError_t past = cudaMemset2D(m, pitch, 0, W * sizeof(float), H + 1); /* a row past the allocation */
    capture_end();
    assert_int_equal(past, cudaErrorInvalidValue);
    assert_int_equal(cudaMallocPitch(&m, NULL, 4, 4), cudaErrorInvalidValue);

    int *buf = (int *)malloc(64 * sizeof(int)), *dbuf = NULL;
    for (int i = 0; i < 64; i++) buf[i] = i;
    assert_int_equal(cudaHostRegister(buf, 64 * sizeof(int), cudaHostRegisterMapped), cudaSuccess);
    assert_int_equal(cudaHostRegister(buf + 8, 8, 0), cudaErrorHostMemoryAlreadyRegistered);
    assert_int_equal(cudaHostGetDevicePointer(&dbuf, buf, 0), cudaSuccess);
    assert_ptr_equal(dbuf, buf);
    add_one<<<1, 64>>>(dbuf, NULL); /* registered host memory: a kernel may be given it */
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    for (int i = 0; i < 64; i++) assert_int_equal(buf[i], i + 1);
    capture_begin();
    cudaError_t freed = cudaFreeHost(buf); /* registered, not the runtime's to free */
    cudaError_t unmapped = cudaHostGetDevicePointer(&dbuf, m, 0);
    capture_end();
    assert_int_equal(freed, cudaErrorInvalidValue);
    assert_int_equal(unmapped, cudaErrorInvalidValue);
    assert_int_equal(cudaHostUnregister(buf), cudaSuccess);
    assert_int_equal(cudaHostUnregister(buf), cudaErrorHostMemoryNotRegistered);
    free(buf);

    int *u = NULL;
    assert_int_equal(cudaMallocManaged(&u, 256 * sizeof(int)), cudaSuccess);
    cudaMemLocation dev = {cudaMemLocationTypeDevice, 0}, hst = {cudaMemLocationTypeHost, 0};
    assert_int_equal(cudaMemAdvise(u, 256 * sizeof(int), cudaMemAdviseSetPreferredLocation, dev), cudaSuccess);
    assert_int_equal(cudaMemAdvise(u, 256 * sizeof(int), cudaMemAdviseSetReadMostly, hst), cudaSuccess);
    assert_int_equal(cudaMemPrefetchAsync(u, 256 * sizeof(int), dev, 0), cudaSuccess);
    assert_int_equal(cudaMemPrefetchAsync(&managed_counter, sizeof(int), hst, 0), cudaSuccess);
    assert_int_equal(cudaMemPrefetchAsync(u, 16, (cudaMemLocation){cudaMemLocationTypeDevice, 1}, 0),
                     cudaErrorInvalidDevice);
    capture_begin();
    cudaError_t too_far = cudaMemPrefetchAsync(u, 257 * sizeof(int), dev, 0);
    cudaError_t not_managed = cudaMemPrefetchAsync(m, 4, dev, 0);
    const char *err = capture_end();
    assert_int_equal(too_far, cudaErrorInvalidValue);
    assert_int_equal(not_managed, cudaErrorInvalidValue);
    assert_non_null(strstr(err, "not managed memory (cudaMallocManaged or __managed__)"));

    size_t v = 0;
    assert_int_equal(cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize), cudaSuccess);
    assert_int_equal(v, 8u << 20);
    assert_int_equal(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 4u << 20), cudaSuccess);
    assert_int_equal(cudaDeviceGetLimit(&v, cudaLimitPrintfFifoSize), cudaSuccess);
    assert_int_equal(v, 4u << 20);
    assert_int_equal(cudaDeviceSetLimit((cudaLimit)7, 1), cudaErrorUnsupportedLimit);
    int count = 1;
    assert_int_equal(cudaLaunchHostFunc(0, add_ten, &count), cudaSuccess);
    assert_int_equal(count, 11);
    cudaGetLastError();
    cudaFree(m);
    cudaFree(u);
}

/* An allocation of 2 MB or more takes its own path (2 MB aligned, in
 * huge pages where the system gives them, trimmed to its length): every
 * byte of it, the last included, is a kernel's and a copy's, and two of
 * them next to each other stay apart. */
__global__ void fill_index(int *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (int)(i * 7);
}

static void test_large_allocations(void **state)
{
    (void)state;
    const size_t n = (3u << 20) / sizeof(int) + 5; /* 3 MB and 20 bytes: a partial last page */
    int *a = NULL, *b = NULL;
    assert_int_equal(cudaMalloc(&a, n * sizeof(int)), cudaSuccess);
    assert_int_equal(cudaMalloc(&b, n * sizeof(int)), cudaSuccess);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    assert_int_equal((uintptr_t)a % (2u << 20), 0);
    assert_int_equal((uintptr_t)b % (2u << 20), 0);
#endif
    fill_index<<<64, 256>>>(a, n);
    assert_int_equal(cudaMemset(b, 0, n * sizeof(int)), cudaSuccess);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    int *h = (int *)malloc(n * sizeof(int));
    assert_int_equal(cudaMemcpy(h, a, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < n; i++)
        if (h[i] != (int)(i * 7)) fail_msg("a[%zu] = %d, want %d", i, h[i], (int)(i * 7));
    assert_int_equal(cudaMemcpy(h, b, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < n; i++)
        if (h[i] != 0) fail_msg("b[%zu] = %d after a's fill, want 0", i, h[i]);
    free(h);
    assert_int_equal(cudaFree(a), cudaSuccess);
    assert_int_equal(cudaFree(b), cudaSuccess);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_indexing_3d, no_fault_left),
        cmocka_unit_test_teardown(test_warps_of_2d_block, no_fault_left),
        cmocka_unit_test_teardown(test_shared_static_reverse, no_fault_left),
        cmocka_unit_test_teardown(test_missing_syncthreads_gives_wrong_result, no_fault_left),
        cmocka_unit_test_teardown(test_missing_barrier_between_warps, no_fault_left),
        cmocka_unit_test_teardown(test_voting_spin_lets_other_warps_run, no_fault_left),
        cmocka_unit_test_teardown(test_shared_dynamic, no_fault_left),
        cmocka_unit_test_teardown(test_shared_starts_filled, no_fault_left),
        cmocka_unit_test_teardown(test_shared_struct_starts_filled, no_fault_left),
        cmocka_unit_test_teardown(test_shared_per_block, no_fault_left),
        cmocka_unit_test_teardown(test_syncthreads_predicates, no_fault_left),
        cmocka_unit_test_teardown(test_syncthreads_predicate_values, no_fault_left),
        cmocka_unit_test_teardown(test_barrier_after_early_exit, no_fault_left),
        cmocka_unit_test_teardown(test_barrier_after_exit_of_first_threads, no_fault_left),
        cmocka_unit_test_teardown(test_divergent_syncthreads_is_a_fault, no_fault_left),
        cmocka_unit_test_teardown(test_shuffle_after_early_exit, no_fault_left),
        cmocka_unit_test_teardown(test_shuffle_reduction, no_fault_left),
        cmocka_unit_test_teardown(test_shuffle_forms, no_fault_left),
        cmocka_unit_test_teardown(test_votes, no_fault_left),
        cmocka_unit_test_teardown(test_shuffle_widths_16_and_1, no_fault_left),
        cmocka_unit_test_teardown(test_warp_reductions, no_fault_left),
        cmocka_unit_test_teardown(test_cooperative_groups, no_fault_left),
        cmocka_unit_test_teardown(test_activemask_after_exit, no_fault_left),
        cmocka_unit_test_teardown(test_mask_must_name_the_caller, no_fault_left),
        cmocka_unit_test_teardown(test_tiled_matmul, no_fault_left),
        cmocka_unit_test_teardown(test_atomic_histogram, no_fault_left),
        cmocka_unit_test_teardown(test_atomic_returns_and_wraps, no_fault_left),
        cmocka_unit_test_teardown(test_atomic_half_types, no_fault_left),
        cmocka_unit_test_teardown(test_atomic_float_subnormals, no_fault_left),
        cmocka_unit_test_teardown(test_math_intrinsics, no_fault_left),
        cmocka_unit_test_teardown(test_more_math, no_fault_left),
        cmocka_unit_test_teardown(test_packed_and_vector_atomics, no_fault_left),
        cmocka_unit_test_teardown(test_directed_rounding, no_fault_left),
        cmocka_unit_test_teardown(test_conversions_saturate, no_fault_left),
        cmocka_unit_test_teardown(test_allocation_bounds, no_fault_left),
        cmocka_unit_test_teardown(test_fresh_memory_is_not_zero, no_fault_left),
        cmocka_unit_test_teardown(test_launch_errors, no_fault_left),
        cmocka_unit_test_teardown(test_launch_limits_each_dimension, no_fault_left),
        cmocka_unit_test_teardown(test_trap_and_deadlock_are_faults, no_fault_left),
        cmocka_unit_test_teardown(test_host_pointer_argument, no_fault_left),
        cmocka_unit_test_teardown(test_pitched_mapped_and_managed_memory, no_fault_left),
        cmocka_unit_test_teardown(test_large_allocations, no_fault_left),
        cmocka_unit_test_teardown(test_fault_stops_memory_calls, no_fault_left),
        cmocka_unit_test_teardown(test_misaligned_access_is_a_fault, no_fault_left),
        cmocka_unit_test_teardown(test_array_overrun_is_a_fault, no_fault_left),
        cmocka_unit_test_teardown(test_shared_memory_limits, no_fault_left),
        cmocka_unit_test_teardown(test_shared_memory_limit_edges, no_fault_left),
        cmocka_unit_test_teardown(test_launch_bounds, no_fault_left),
        cmocka_unit_test_teardown(test_launch_bounds_from_macros, no_fault_left),
        cmocka_unit_test_teardown(test_uninitialised_locals_are_a_pattern, no_fault_left),
        cmocka_unit_test_teardown(test_runtime_api, no_fault_left),
        cmocka_unit_test_teardown(test_launch_kernel_by_args, no_fault_left),
        cmocka_unit_test_teardown(test_symbol_copy_bounds, no_fault_left),
        cmocka_unit_test_teardown(test_rewriter_forms, no_fault_left),
        cmocka_unit_test_teardown(test_half_conversions, no_fault_left),
        cmocka_unit_test_teardown(test_averages_and_pair_math, no_fault_left),
        cmocka_unit_test_teardown(test_builtin_assume_false, no_fault_left),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
