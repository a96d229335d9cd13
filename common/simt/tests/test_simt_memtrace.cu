/*
 * Tests of the emulator's memory-access tracer (simt_memtrace.h): each
 * kernel has an access pattern whose sector or bank-pass count on a GPU is
 * known by hand, and the test states that count. Built with simtcc
 * --memtrace, run by make test. A tracer that grouped the wrong threads
 * into a request, missed a kind of access, or counted a shared word twice
 * gets one of these numbers wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
extern "C" {
#include <cmocka.h>
}
#include "simt_memtrace.h"
#include "warp_mma.cuh"

static simt_memtrace_stats trace_one(void (*launch)(void *), void *arg)
{
    simt_memtrace_stats s;
    simt_memtrace_start();
    launch(arg);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    simt_memtrace_stop(&s);
    assert_int_equal(s.launches, 1);
    return s;
}

static void expect(const simt_memtrace_counts *c, unsigned long long requests, unsigned long long cost,
                   unsigned long long best)
{
    assert_int_equal(c->requests, requests);
    assert_int_equal(c->cost, cost);
    assert_int_equal(c->best, best);
}

/* --- global memory: sectors per request ------------------------------------- */

/* One 32 x 32 block over a 32 x 32 float matrix. Row-wise: a warp (one
 * row, threadIdx.x along it) reads and writes 128 contiguous bytes, 4
 * sectors. Column-wise: a warp's 32 threads are 32 rows apart, 32 sectors. */
__global__ void copy_rows(const float *in, float *out)
{
    int i = threadIdx.y * 32 + threadIdx.x;
    out[i] = in[i] + 1.0f;
}

__global__ void copy_cols(const float *in, float *out)
{
    int i = threadIdx.x * 32 + threadIdx.y;
    out[i] = in[i] + 1.0f;
}

/* Every thread of the warp reads one float: 1 sector, and the fewest. */
__global__ void broadcast(const float *in, float *out)
{
    out[threadIdx.x] = in[0];
}

/* float4 per thread: 512 contiguous bytes a warp, 16 sectors. Off by one
 * float, the same loads straddle one more sector. */
__global__ void copy_vec4(const float4 *in, float4 *out)
{
    out[threadIdx.x] = in[threadIdx.x];
}

/* A float4 whose parts are used one by one is still one 16-byte load per
 * thread on a GPU (LDG.128); g++ would split it into four 4-byte loads
 * unless simtcc --memtrace stops it (-fno-tree-sra). Two threads per row
 * of a 256-float matrix: 16 rows of 32 bytes a warp, 16 sectors, all used. */
__global__ void load_vec4_parts(const float *in, float *out)
{
    int i = threadIdx.x, r = i / 2, c = 4 * (i % 2);
    float4 v = *reinterpret_cast<const float4 *>(&in[r * 256 + c]);
    out[i] = v.x + 2.0f * v.y + 3.0f * v.z + 4.0f * v.w;
}

__global__ void load_shifted(const float *in, float *out)
{
    out[threadIdx.x] = in[threadIdx.x + 1];
}

/* A store to the address the same line has just loaded, the BLAS update
 * C = alpha * acc + beta * C and an accumulation +=: a load and a store
 * each (the address sanitizer's calls record no store here, as gcc takes
 * the load's check as covering it). An atomicAdd is not counted. */
__global__ void read_modify_write(const float *in, float *out)
{
    out[threadIdx.x] = 2.0f * in[threadIdx.x] + 0.5f * out[threadIdx.x];
    out[32 + threadIdx.x] += 1.0f;
    atomicAdd(&out[64], 1.0f);
}

struct bufs {
    float *in, *out;
};

static void launch_rows(void *p) { copy_rows<<<1, dim3(32, 32)>>>(((bufs *)p)->in, ((bufs *)p)->out); }
static void launch_cols(void *p) { copy_cols<<<1, dim3(32, 32)>>>(((bufs *)p)->in, ((bufs *)p)->out); }
static void launch_broadcast(void *p) { broadcast<<<1, 32>>>(((bufs *)p)->in, ((bufs *)p)->out); }
static void launch_vec4(void *p) { copy_vec4<<<1, 32>>>((const float4 *)((bufs *)p)->in, (float4 *)((bufs *)p)->out); }
static void launch_vec4_parts(void *p) { load_vec4_parts<<<1, 32>>>(((bufs *)p)->in, ((bufs *)p)->out); }
static void launch_rmw(void *p) { read_modify_write<<<1, 32>>>(((bufs *)p)->in, ((bufs *)p)->out); }
static void launch_shifted(void *p) { load_shifted<<<1, 32>>>(((bufs *)p)->in, ((bufs *)p)->out); }

static void test_global_sectors(void **state)
{
    (void)state;
    assert_int_equal(simt_memtrace_available(), 1);
    bufs b;
    assert_int_equal(cudaMalloc(&b.in, 4096 * sizeof(float)), cudaSuccess);
    assert_int_equal(cudaMalloc(&b.out, 4096 * sizeof(float)), cudaSuccess);
    cudaMemset(b.in, 0, 4096 * sizeof(float));

    simt_memtrace_stats s = trace_one(launch_rows, &b);
    expect(&s.global_load, 32, 32 * 4, 32 * 4);
    expect(&s.global_store, 32, 32 * 4, 32 * 4);
    assert_int_equal(s.global_load.accesses, 1024);
    assert_int_equal(s.global_load.bytes, 4096); /* one float a thread */
    assert_int_equal(s.shared_load.requests + s.shared_store.requests, 0);

    s = trace_one(launch_cols, &b);
    expect(&s.global_load, 32, 32 * 32, 32 * 4);
    expect(&s.global_store, 32, 32 * 32, 32 * 4);

    s = trace_one(launch_broadcast, &b);
    expect(&s.global_load, 1, 1, 1);
    expect(&s.global_store, 1, 4, 4);

    s = trace_one(launch_vec4, &b);
    expect(&s.global_load, 1, 16, 16);
    expect(&s.global_store, 1, 16, 16);
    assert_int_equal(s.global_load.bytes, 32 * 16); /* one float4 a thread */
    assert_int_equal(s.global_store.bytes, 32 * 16);

    s = trace_one(launch_vec4_parts, &b);
    expect(&s.global_load, 1, 16, 16);
    assert_int_equal(s.global_load.bytes, 32 * 16); /* still 16 bytes a thread, not 4 x 4 */
    assert_int_equal(s.global_store.bytes, 32 * 4);

    s = trace_one(launch_shifted, &b);
    expect(&s.global_load, 1, 5, 4); /* bytes 4..131: sectors 0 to 4 */
    expect(&s.global_store, 1, 4, 4);

    s = trace_one(launch_rmw, &b);
    expect(&s.global_load, 3, 12, 12); /* in, out, out + 32 */
    expect(&s.global_store, 2, 8, 8);  /* out, out + 32; not the atomic */
    cudaFree(b.in);
    cudaFree(b.out);
}

/* A loop's n-th iteration in each thread is one request: with K = 8 and a
 * warp per row, 8 requests of one broadcast sector each, not 1 or 256. */
__global__ void row_sums(const float *in, float *out, int K)
{
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc += in[threadIdx.x * K + k];
    out[threadIdx.x] = acc;
}

static void launch_row_sums(void *p) { row_sums<<<1, 32>>>(((bufs *)p)->in, ((bufs *)p)->out, 8); }

static void test_loop_iterations_are_requests(void **state)
{
    (void)state;
    bufs b;
    cudaMalloc(&b.in, 256 * sizeof(float));
    cudaMalloc(&b.out, 32 * sizeof(float));
    simt_memtrace_stats s = trace_one(launch_row_sums, &b);
    /* Thread t reads in[8t + k]: 32 floats 32 bytes apart, one sector each;
     * their 128 distinct bytes would fit in 4. */
    expect(&s.global_load, 8, 8 * 32, 8 * 4);
    expect(&s.global_store, 1, 4, 4);
    cudaFree(b.in);
    cudaFree(b.out);
}

/* Threads of one partial warp: the 20 threads of the last warp of a
 * 52-thread block are a request of their own, 80 bytes, 3 sectors. */
static void launch_partial(void *p) { broadcast<<<1, 52>>>(((bufs *)p)->in, ((bufs *)p)->out); }

static void test_partial_warp(void **state)
{
    (void)state;
    bufs b;
    cudaMalloc(&b.in, 64 * sizeof(float));
    cudaMalloc(&b.out, 64 * sizeof(float));
    simt_memtrace_stats s = trace_one(launch_partial, &b);
    expect(&s.global_load, 2, 2, 2);
    expect(&s.global_store, 2, 4 + 3, 4 + 3); /* 128 bytes, then 80 starting at byte 128 */
    cudaFree(b.in);
    cudaFree(b.out);
}

/* --- shared memory: bank passes (wavefronts) per request -------------------- */

/* A 32 x 32 float tile written by rows, read back by columns: the column
 * read puts all 32 words of a request in one bank (32 passes); one float of
 * padding per row (33 columns) spreads them over all 32 banks (1 pass). */
__global__ void transpose_tile(const float *in, float *out, int pad)
{
    __shared__ float t[32][33];
    int x = threadIdx.x, y = threadIdx.y;
    if (pad)
        t[y][x] = in[y * 32 + x];
    else
        (&t[0][0])[y * 32 + x] = in[y * 32 + x];
    __syncthreads();
    out[y * 32 + x] = pad ? t[x][y] : (&t[0][0])[x * 32 + y];
}

static void launch_transpose_pad(void *p) { transpose_tile<<<1, dim3(32, 32)>>>(((bufs *)p)->in, ((bufs *)p)->out, 1); }
static void launch_transpose_nopad(void *p)
{
    transpose_tile<<<1, dim3(32, 32)>>>(((bufs *)p)->in, ((bufs *)p)->out, 0);
}

/* Dynamic shared memory, 8-byte accesses: a warp's 256 bytes are 64 words,
 * two in each bank, so 2 passes at the least; a stride of 2 doubles (16
 * bytes) leaves half the banks idle and puts 4 words in each of the others.
 * Every thread storing to and reading the same double: its 2 words, 1 pass. */
__global__ void doubles(double *out, int stride)
{
    extern __shared__ double d[];
    d[threadIdx.x * stride] = threadIdx.x;
    __syncwarp();
    out[threadIdx.x] = d[stride == 0 ? 0 : threadIdx.x * stride];
}

static void launch_doubles1(void *p) { doubles<<<1, 32, 64 * sizeof(double)>>>((double *)((bufs *)p)->out, 1); }
static void launch_doubles2(void *p) { doubles<<<1, 32, 64 * sizeof(double)>>>((double *)((bufs *)p)->out, 2); }
static void launch_doubles0(void *p) { doubles<<<1, 32, 64 * sizeof(double)>>>((double *)((bufs *)p)->out, 0); }

static void test_shared_banks(void **state)
{
    (void)state;
    bufs b;
    cudaMalloc(&b.in, 1024 * sizeof(float));
    cudaMalloc(&b.out, 1024 * sizeof(float));
    simt_memtrace_stats s = trace_one(launch_transpose_pad, &b);
    expect(&s.shared_store, 32, 32, 32);
    expect(&s.shared_load, 32, 32, 32);
    expect(&s.global_load, 32, 128, 128);

    s = trace_one(launch_transpose_nopad, &b);
    expect(&s.shared_store, 32, 32, 32);
    expect(&s.shared_load, 32, 32 * 32, 32);

    s = trace_one(launch_doubles1, &b);
    expect(&s.shared_store, 1, 2, 2);
    expect(&s.shared_load, 1, 2, 2);
    s = trace_one(launch_doubles2, &b);
    expect(&s.shared_store, 1, 4, 2);
    expect(&s.shared_load, 1, 4, 2);
    s = trace_one(launch_doubles0, &b);
    expect(&s.shared_store, 1, 1, 1);
    expect(&s.shared_load, 1, 1, 1);
    assert_int_equal(s.shared_load.bytes, 32 * 8); /* one word pair, but each thread asked for 8 bytes */
    cudaFree(b.in);
    cudaFree(b.out);
}

/* --- what the emulator does for a kernel: cp.async and ldmatrix ---------------- */

/* 32 rows of 128 bytes (64 bf16) copied into shared memory with cp.async,
 * lane l taking chunk l % 8 of row l / 8 + 4 i in round i: each round's
 * source is 512 contiguous bytes (16 sectors), and its shared side is 4
 * requests of 128 bytes (a quarter warp each, one row: 1 pass). Then one
 * ldmatrix.x4, lane l giving chunk 3 of row l: 4 requests of 8 rows (one
 * per matrix). Plain layout: the 8 rows' chunk 3 all sit in banks 12-15,
 * 8 passes each; swizzled (chunk c of row r at c ^ (r % 8)): 8 different
 * groups of 4 banks, 1 pass each. */
__global__ void ldmatrix_tile(const uint16_t *in, float *out, int swizzle)
{
    extern __shared__ uint16_t t[];
    const int l = threadIdx.x, c = l % 8;
    for (int i = 0; i < 8; i++) {
        const int r = 4 * i + l / 8;
        cp_async_16(&t[r * 64 + 8 * (swizzle ? c ^ (r % 8) : c)], &in[r * 64 + 8 * c]);
    }
    cp_async_commit_group();
    cp_async_wait_all();
    __syncwarp();
    uint32_t reg[4];
    ldmatrix_x4(reg, &t[l * 64 + 8 * (swizzle ? 3 ^ (l % 8) : 3)]);
    out[l] = (float)(reg[0] & 1u);
}

struct ldm_bufs {
    uint16_t *in;
    float *out;
};

static void launch_ldm_plain(void *p) { ldmatrix_tile<<<1, 32, 32 * 128>>>(((ldm_bufs *)p)->in, ((ldm_bufs *)p)->out, 0); }
static void launch_ldm_swizzled(void *p)
{
    ldmatrix_tile<<<1, 32, 32 * 128>>>(((ldm_bufs *)p)->in, ((ldm_bufs *)p)->out, 1);
}

static void test_cp_async_and_ldmatrix(void **state)
{
    (void)state;
    ldm_bufs b;
    assert_int_equal(cudaMalloc(&b.in, 32 * 64 * sizeof(uint16_t)), cudaSuccess);
    assert_int_equal(cudaMalloc(&b.out, 32 * sizeof(float)), cudaSuccess);
    cudaMemset(b.in, 0, 32 * 64 * sizeof(uint16_t));
    simt_memtrace_stats s = trace_one(launch_ldm_plain, &b);
    expect(&s.global_load, 8, 8 * 16, 8 * 16);
    assert_int_equal(s.global_load.bytes, 32 * 128);
    expect(&s.shared_store, 8 * 4, 8 * 4, 8 * 4);
    expect(&s.shared_load, 4, 4 * 8, 4);
    assert_int_equal(s.shared_load.bytes, 32 * 16);
    expect(&s.global_store, 1, 4, 4);

    s = trace_one(launch_ldm_swizzled, &b);
    expect(&s.global_load, 8, 8 * 16, 8 * 16);
    expect(&s.shared_store, 8 * 4, 8 * 4, 8 * 4);
    expect(&s.shared_load, 4, 4, 4);
    cudaFree(b.in);
    cudaFree(b.out);
}

/* --- the API and its limits --------------------------------------------------- */

/* One thread past the per-thread limit: the extra accesses are dropped and
 * said so, not counted wrong. */
__global__ void many_loads(const float *in, float *out, int n)
{
    float acc = 0.0f;
    for (int i = 0; i < n; i++) acc += in[i & 63];
    out[0] = acc;
}

static void launch_many(void *p) { many_loads<<<1, 1>>>(((bufs *)p)->in, ((bufs *)p)->out, SIMT_MEMTRACE_PER_THREAD + 10); }

static void test_limits_and_api(void **state)
{
    (void)state;
    bufs b;
    cudaMalloc(&b.in, 64 * sizeof(float));
    cudaMalloc(&b.out, 64 * sizeof(float));
    simt_memtrace_stats s = trace_one(launch_many, &b);
    /* The loads fill the thread's log; the store after them is dropped too. */
    assert_int_equal(s.global_load.requests, SIMT_MEMTRACE_PER_THREAD);
    assert_int_equal(s.dropped, 10 + 1);

    /* After stop nothing is counted (a second stop still sees none), and
     * stop with NULL is fine. */
    simt_memtrace_start();
    simt_memtrace_stop(NULL);
    launch_broadcast(&b);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    simt_memtrace_stop(&s);
    assert_int_equal(s.launches, 0);
    assert_int_equal(s.global_load.requests, 0);

    /* Two launches between start and stop add up. */
    simt_memtrace_start();
    launch_broadcast(&b);
    launch_broadcast(&b);
    simt_memtrace_stop(&s);
    assert_int_equal(s.launches, 2);
    expect(&s.global_load, 2, 2, 2);
    cudaFree(b.in);
    cudaFree(b.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_global_sectors),
        cmocka_unit_test(test_loop_iterations_are_requests),
        cmocka_unit_test(test_partial_warp),
        cmocka_unit_test(test_shared_banks),
        cmocka_unit_test(test_cp_async_and_ldmatrix),
        cmocka_unit_test(test_limits_and_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
