/*
 * Tests of the emulator's memory-access tracer (simt_memtrace.h): each
 * kernel has an access pattern whose sector or bank-pass count on a GPU is
 * known by hand, and the test states that count. Built with simtcc
 * --memtrace, run by make test. A tracer that grouped the wrong threads
 * into a request, missed a kind of access, or counted a shared word twice
 * gets one of these numbers wrong. Here too, as it needs a lab's build
 * (--memtrace -O2): wmma failures name the kernel's line, not mma.h's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
extern "C" {
#include <cmocka.h>
}
#include <mma.h>

#include "simt_memtrace.h"
#include "warp_mma.cuh"
#include "capture_stderr.h"
#include "no_fault_left.h"

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

static void expect_text(const char *text, const char *want)
{
    if (!strstr(text, want)) fail_msg("expected \"%s\" in:\n%s", want, text);
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

/* --- accesses the instrumentation reports in other ways ------------------------ */

/* A packed field has no alignment, so gcc reports its load as unaligned.
 * Threads 0 and 1 read 4 bytes at bytes 1 and 30: the second straddles
 * sectors 0 and 1, so 2 sectors for 8 distinct bytes that would fit in 1. */
struct __attribute__((packed)) u32_unaligned {
    uint32_t v;
};

__global__ void unaligned_loads(const uint8_t *in, float *out)
{
    if (threadIdx.x < 2) out[threadIdx.x] = (float)((const u32_unaligned *)(in + (threadIdx.x ? 30 : 1)))->v;
}

/* One thread copies a 256-byte struct: one range read and one range write
 * of 8 sectors each. */
struct row64 {
    float v[64];
};

__global__ void copy_struct(const row64 *in, row64 *out)
{
    if (threadIdx.x == 0) out[1] = in[0];
}

/* 16-byte shared accesses: a warp's 512 bytes are 128 words, 4 in each
 * bank, so 4 passes however they are laid out. */
__global__ void shared_vec4(float4 *out)
{
    extern __shared__ float4 v4[];
    v4[threadIdx.x] = make_float4(1.0f, 2.0f, 3.0f, (float)threadIdx.x);
    __syncwarp();
    out[threadIdx.x] = v4[threadIdx.x ^ 1];
}

/* One byte a thread in a static __shared__ array, its last byte too. */
__global__ void shared_bytes(float *out)
{
    __shared__ uint8_t b[32];
    b[threadIdx.x] = (uint8_t)threadIdx.x;
    __syncwarp();
    out[threadIdx.x] = b[31 - threadIdx.x];
}

static void launch_unaligned(void *p) { unaligned_loads<<<1, 32>>>((const uint8_t *)((bufs *)p)->in, ((bufs *)p)->out); }
static void launch_struct(void *p) { copy_struct<<<1, 32>>>((const row64 *)((bufs *)p)->in, (row64 *)((bufs *)p)->out); }
static void launch_shared_vec4(void *p) { shared_vec4<<<1, 32, 32 * sizeof(float4)>>>((float4 *)((bufs *)p)->out); }
static void launch_shared_bytes(void *p) { shared_bytes<<<1, 32>>>(((bufs *)p)->out); }
static void launch_doubles20(void *p) { doubles<<<1, 20, 64 * sizeof(double)>>>((double *)((bufs *)p)->out, 1); }

static void test_access_kinds(void **state)
{
    (void)state;
    bufs b;
    cudaMalloc(&b.in, 1024 * sizeof(float));
    cudaMalloc(&b.out, 1024 * sizeof(float));
    cudaMemset(b.in, 0, 1024 * sizeof(float));
    simt_memtrace_stats s = trace_one(launch_unaligned, &b);
    expect(&s.global_load, 1, 2, 1);
    assert_int_equal(s.global_load.bytes, 8);
    expect(&s.global_store, 1, 1, 1);

    s = trace_one(launch_struct, &b);
    expect(&s.global_load, 1, 8, 8);
    assert_int_equal(s.global_load.bytes, 256);
    expect(&s.global_store, 1, 8, 8);
    assert_int_equal(s.global_store.bytes, 256);

    s = trace_one(launch_shared_vec4, &b);
    expect(&s.shared_store, 1, 4, 4);
    expect(&s.shared_load, 1, 4, 4);
    assert_int_equal(s.shared_load.bytes, 32 * 16);

    s = trace_one(launch_shared_bytes, &b);
    expect(&s.shared_store, 1, 1, 1);
    assert_int_equal(s.shared_store.accesses, 32);
    expect(&s.shared_load, 1, 1, 1);
    assert_int_equal(s.shared_load.accesses, 32);

    /* 20 doubles, 160 bytes: 40 words, banks 0..7 twice; the fewest for
     * 160 bytes is 2 passes too (one per 128 bytes, rounded up). */
    s = trace_one(launch_doubles20, &b);
    expect(&s.shared_store, 1, 2, 2);
    cudaFree(b.in);
    cudaFree(b.out);
}

/* --- many blocks on each worker ---------------------------------------------------- */

/* Thread t reads t % 2 + 1 values at one site: in every block, 2 requests
 * (the first read by all 32 threads, the second by the 16 odd ones),
 * whatever the blocks its worker ran before. Each block also stores to
 * and loads from its static __shared__ array once, and the last block
 * from a second one. */
__global__ void uneven(const float *in, float *out)
{
    __shared__ float s[32];
    float acc = 0.0f;
    for (int k = 0; k <= (int)(threadIdx.x % 2); k++) acc += in[k * 32 + threadIdx.x];
    s[threadIdx.x] = acc;
    __syncwarp();
    acc = s[threadIdx.x ^ 1];
    if (blockIdx.x == gridDim.x - 1) { /* an array only the last block declares */
        __shared__ float last[32];
        last[threadIdx.x] = acc;
        __syncwarp();
        acc = last[threadIdx.x ^ 1];
    }
    out[blockIdx.x * 32 + threadIdx.x] = acc;
}

enum { UNEVEN_BLOCKS = 128 }; /* more than the 64 static __shared__ variables a worker's block notes */

static void launch_uneven(void *p) { uneven<<<UNEVEN_BLOCKS, 32>>>(((bufs *)p)->in, ((bufs *)p)->out); }

static void test_blocks_start_afresh(void **state)
{
    (void)state;
    bufs b;
    cudaMalloc(&b.in, 64 * sizeof(float));
    cudaMalloc(&b.out, UNEVEN_BLOCKS * 32 * sizeof(float));
    cudaMemset(b.in, 0, 64 * sizeof(float));
    /* One worker: every block follows another on the same OS thread. */
    setenv("SIMT_WORKERS", "1", 1);
    simt_memtrace_stats s = trace_one(launch_uneven, &b);
    expect(&s.global_load, 2 * UNEVEN_BLOCKS, 2 * 4 * UNEVEN_BLOCKS, (4 + 2) * UNEVEN_BLOCKS);
    assert_int_equal(s.global_load.accesses, 48 * UNEVEN_BLOCKS);
    expect(&s.shared_store, UNEVEN_BLOCKS + 1, UNEVEN_BLOCKS + 1, UNEVEN_BLOCKS + 1);
    expect(&s.shared_load, UNEVEN_BLOCKS + 1, UNEVEN_BLOCKS + 1, UNEVEN_BLOCKS + 1);
    /* Another kernel's static __shared__ array after them is still shared
     * memory to the tracer. */
    cudaMalloc(&b.in, 1024 * sizeof(float));
    s = trace_one(launch_transpose_pad, &b);
    expect(&s.shared_store, 32, 32, 32);
    expect(&s.shared_load, 32, 32, 32);
    unsetenv("SIMT_WORKERS");
    cudaFree(b.in);
    cudaFree(b.out);
}

/* A block that faults counts nothing: its loads ran, but a launch that
 * failed has no pattern to grade. */
__global__ void load_then_trap(const float *in, float *out)
{
    out[threadIdx.x] = in[threadIdx.x];
    __syncwarp();
    if (threadIdx.x == 0) __trap();
}

static void test_faulting_block_not_counted(void **state)
{
    (void)state;
    bufs b;
    cudaMalloc(&b.in, 64 * sizeof(float));
    cudaMalloc(&b.out, 64 * sizeof(float));
    simt_memtrace_stats s;
    simt_memtrace_start();
    capture_begin();
    load_then_trap<<<1, 32>>>(b.in, b.out);
    assert_int_equal(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
    capture_end();
    simt_memtrace_stop(&s);
    assert_int_equal(s.global_load.requests + s.global_store.requests, 0);
    cudaDeviceReset();
    cudaFree(b.in);
    cudaFree(b.out);
}

/* More load sites than a thread tells apart (256): one loop, run once by
 * even threads and twice by odd ones, then 260 loads in a row, each its
 * own site. The loop takes the first slot, 255 loads the rest, and the
 * last 5 loads share the last slot's count with the load before them,
 * which every thread ran once: each is still one request. */
#define SITE1(k) acc += in[k];
#define SITE4(k) SITE1(k) SITE1(k + 1) SITE1(k + 2) SITE1(k + 3)
#define SITE16(k) SITE4(k) SITE4(k + 4) SITE4(k + 8) SITE4(k + 12)
#define SITE64(k) SITE16(k) SITE16(k + 16) SITE16(k + 32) SITE16(k + 48)
__global__ void many_sites(const float *in, float *out)
{
    float acc = 0.0f;
    for (int k = 0; k <= (int)(threadIdx.x % 2); k++) acc += in[300 + k];
    SITE64(0) SITE64(64) SITE64(128) SITE64(192) SITE4(256)
    out[threadIdx.x] = acc;
}

static void launch_many_sites(void *p) { many_sites<<<1, 32>>>(((bufs *)p)->in, ((bufs *)p)->out); }

static void test_sites_past_the_table(void **state)
{
    (void)state;
    bufs b;
    cudaMalloc(&b.in, 512 * sizeof(float));
    cudaMalloc(&b.out, 64 * sizeof(float));
    cudaMemset(b.in, 0, 512 * sizeof(float));
    simt_memtrace_stats s = trace_one(launch_many_sites, &b);
    expect(&s.global_load, 2 + 260, 2 + 260, 2 + 260); /* each a broadcast of one float */
    cudaFree(b.in);
    cudaFree(b.out);
}

/* --- guard zones ------------------------------------------------------------------- */

__global__ void read_range(const float *in, float *out, int lo, int n)
{
    if ((int)threadIdx.x < n) out[threadIdx.x] = in[lo + threadIdx.x];
}

/* Reads in[lo .. lo + n): "" when the launch runs, else what it printed. */
static const char *guarded_read(float *in, float *out, int lo, int n)
{
    capture_begin();
    read_range<<<1, 32>>>(in, out, lo, n);
    cudaError_t e = cudaDeviceSynchronize();
    const char *text = capture_end();
    if (e == cudaSuccess) return "";
    assert_int_equal(e, cudaErrorLaunchFailure);
    cudaDeviceReset();
    assert_true(text[0] != '\0');
    return text;
}

static void test_guard_zones(void **state)
{
    (void)state;
    float *in, *out;
    cudaMalloc((void **)&in, 64 * sizeof(float));
    cudaMalloc((void **)&out, 64 * sizeof(float));
    cudaMemset(in, 0, 64 * sizeof(float));
    /* Zones at floats 0..3 (in front of a buffer) and 8..11 (behind one):
     * floats 4..7, touching both, are free. */
    simt_memtrace_guard(in, 4 * sizeof(float), "front", 1);
    simt_memtrace_guard(in + 8, 4 * sizeof(float), "back", 0);
    assert_string_equal(guarded_read(in, out, 4, 4), "");
    const char *t = guarded_read(in, out, 3, 1);
    expect_text(t, "a load of 4 bytes at ");
    expect_text(t, ", 4 bytes before the start of front, at test_simt_memtrace.cu:");
    t = guarded_read(in, out, 10, 1);
    expect_text(t, ", 8 bytes past the end of back, at test_simt_memtrace.cu:");
    t = guarded_read(in, out, 8, 1);
    expect_text(t, ", just past the end of back, at ");
    /* Lifting exactly a zone's bytes lifts it. */
    simt_memtrace_unguard(in + 8, 4 * sizeof(float));
    assert_string_equal(guarded_read(in, out, 8, 4), "");
    t = guarded_read(in, out, 0, 1);
    expect_text(t, "before the start of front");
    simt_memtrace_unguard(in, 64 * sizeof(float));
    assert_string_equal(guarded_read(in, out, 0, 32), "");

    /* 16 zones at once are watched, the 17th is refused and said so. */
    for (int i = 0; i < 16; i++) simt_memtrace_guard(in + 2 * i, sizeof(float), "one of 16", 0);
    capture_begin();
    simt_memtrace_guard(in + 40, sizeof(float), "the 17th", 0);
    expect_text(capture_end(), "more than 16 guard zones at once (simt_memtrace_guard); the 17th's is not watched");
    assert_string_equal(guarded_read(in, out, 40, 1), "");
    expect_text(guarded_read(in, out, 30, 1), "just past the end of one of 16");
    simt_memtrace_unguard(in, 64 * sizeof(float));
    assert_string_equal(guarded_read(in, out, 0, 32), "");

    /* cudaFree lifts the zones inside what it frees: 16 zones in in, then
     * in freed, leave room for a zone in out (and none would be left on
     * memory that a later allocation gets). */
    for (int i = 0; i < 16; i++) simt_memtrace_guard(in + 2 * i, sizeof(float), "one of 16", 0);
    cudaFree(in);
    capture_begin();
    simt_memtrace_guard(out + 60, sizeof(float), "out's end", 0);
    assert_string_equal(capture_end(), "");
    simt_memtrace_unguard(out, 64 * sizeof(float));
    cudaFree(out);
}

/* --- the report SIMT_MEMTRACE=1 prints ------------------------------------------ */

/* A column read and write on one line (32 sectors a request where 4 would
 * do, both), and a row read on another (perfect: not listed). */
__global__ void report_cols(const float *in, float *out)
{
    float row = in[threadIdx.y * 32 + threadIdx.x];
    int i = threadIdx.x * 32 + threadIdx.y;
    out[i] = in[i] + row;
}

template <int V> __global__ void report_template(float *out) { out[threadIdx.x] = (float)V; }

__global__ void report_by_value(bufs b) { b.out[threadIdx.x] = 1.0f; }

__global__ void report_nothing(void) {}

static void test_report(void **state)
{
    (void)state;
    bufs b;
    cudaMalloc(&b.in, 8192 * sizeof(float));
    cudaMalloc(&b.out, 8192 * sizeof(float));
    cudaMemset(b.in, 0, 8192 * sizeof(float));
    setenv("SIMT_MEMTRACE", "1", 1);
    setenv("SIMT_WORKERS", "1", 1); /* both blocks on one thread, one after the other */
    capture_begin();
    report_cols<<<2, dim3(32, 32)>>>(b.in, b.out);
    cudaDeviceSynchronize();
    const char *t = capture_end();
    unsetenv("SIMT_WORKERS");
    expect_text(t, "simt memtrace: report_cols<<<(2,1,1), (32,32,1)>>>\n");
    expect_text(t, "  global load         128 requests   18.00 sectors each  (fewest possible 4.00)   22.2% efficient   4.0 B a thread\n");
    expect_text(t, "  global store         64 requests   32.00 sectors each  (fewest possible 4.00)   12.5% efficient   4.0 B a thread\n");
    expect_text(t, "  where the extra sectors and passes are:\n");
    /* The load and the store of one line are listed apart; the row read is
     * not listed, and each block's requests are counted once. */
    const char *each = "           64 requests   32.00 sectors each  (fewest possible 4.00)\n";
    const char *load = strstr(t, "    global load   test_simt_memtrace.cu:");
    assert_non_null(load);
    assert_ptr_equal(strstr(load, each), strchr(load, '\n') + 1 - strlen(each));
    assert_null(strstr(load + 1, "    global load   "));
    const char *store = strstr(t, "    global store  test_simt_memtrace.cu:");
    assert_non_null(store);
    assert_ptr_equal(strstr(store, each), strchr(store, '\n') + 1 - strlen(each));

    capture_begin();
    report_template<3><<<1, 32>>>(b.out);
    report_by_value<<<1, 32>>>(b);
    report_nothing<<<1, 1>>>();
    transpose_tile<<<1, dim3(32, 32)>>>(b.in, b.out, 0);
    launch_many(&b);
    cudaDeviceSynchronize();
    t = capture_end();
    expect_text(t, "simt memtrace: report_template<...><<<(1,1,1), (32,1,1)>>>\n");
    expect_text(t, "simt memtrace: report_by_value<<<(1,1,1), (32,1,1)>>>\n");
    expect_text(t, "simt memtrace: report_nothing<<<(1,1,1), (1,1,1)>>>\n"
                   "  no loads or stores recorded (is its .cu file compiled with simtcc --memtrace?)\n");
    expect_text(t, "  shared store         32 requests    1.00 wavefronts each  (fewest possible 1.00)  100.0% efficient   4.0 B a thread\n"
                   "  where the extra sectors and passes are:\n"
                   "    shared load   test_simt_memtrace.cu:");
    expect_text(t, "  11 accesses not counted (past 8192 a thread): trace a smaller problem\n");

    /* SIMT_MEMTRACE=0 is off. */
    setenv("SIMT_MEMTRACE", "0", 1);
    capture_begin();
    launch_broadcast(&b);
    cudaDeviceSynchronize();
    assert_null(strstr(capture_end(), "simt memtrace"));
    unsetenv("SIMT_MEMTRACE");
    cudaFree(b.in);
    cudaFree(b.out);
}

/* --- wmma failures name the kernel's line ------------------------------------ */

namespace wmma = nvcuda::wmma;

/* A failed wmma call must name the kernel's line, where the fix is, not a
 * line of mma.h. Built as a lab is (--memtrace -O2), g++ keeps mma.h's
 * helpers out of line, so the call's return address lies in mma.h, as it
 * did in lab 04's matmul_wmma. Before each call lane 0 notes the line it is
 * on in lines[]. mode 0-3: lane 5 returns before the load of A, the load of
 * the accumulator (the overload with a layout), the mma, the store; 4: lane
 * 5 stores while the others load; 5: lanes 0-15 and 16-30 wait at two
 * different loads and lane 31 at a barrier, a deadlock whose report lists
 * both lines; 6: a load with ldm 20 bf16 (40 bytes, not a multiple of 16);
 * 7: a store to a pointer 16 bytes past a 32-byte boundary. */
__global__ void wmma_lane_missing(const __nv_bfloat16 *A, float *C, int *lines, int mode)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    unsigned lane = threadIdx.x;
    wmma::fill_fragment(c, 0.0f);
    if (mode == 6) {
        if (lane == 0) lines[0] = __LINE__ + 1;
        wmma::load_matrix_sync(a, A, 20);
        return;
    }
    if (mode == 7) {
        if (lane == 0) lines[0] = __LINE__ + 1;
        wmma::store_matrix_sync(C + 4, c, 16, wmma::mem_row_major);
        return;
    }
    if (mode == 5) {
        if (lane == 0) lines[0] = __LINE__ + 3, lines[1] = __LINE__ + 5;
        if (lane == 31) __syncthreads();
        else if (lane < 16)
            wmma::load_matrix_sync(a, A, 16);
        else
            wmma::load_matrix_sync(a, A, 16);
        return;
    }
    if (mode == 4 && lane == 5) {
        lines[1] = __LINE__ + 1;
        wmma::store_matrix_sync(C, c, 16, wmma::mem_row_major);
        return;
    }
    if (mode == 0 && lane == 5) return;
    if (lane == 0) lines[0] = __LINE__ + 1;
    wmma::load_matrix_sync(a, A, 16);
    wmma::load_matrix_sync(b, A, 16);
    if (mode == 1 && lane == 5) return;
    if (lane == 0) lines[0] = __LINE__ + 1;
    wmma::load_matrix_sync(c, C, 16, wmma::mem_col_major);
    if (mode == 2 && lane == 5) return;
    if (lane == 0) lines[0] = __LINE__ + 1;
    wmma::mma_sync(c, a, b, c);
    if (mode == 3 && lane == 5) return;
    if (lane == 0) lines[0] = __LINE__ + 1;
    wmma::store_matrix_sync(C, c, 16, wmma::mem_row_major);
}

static void test_wmma_failures_name_the_kernel_line(void **state)
{
    (void)state;
    __nv_bfloat16 *A;
    float *C;
    int *lines;
    cudaMallocManaged(&A, 16 * 20 * sizeof(__nv_bfloat16));
    cudaMallocManaged(&C, (16 * 16 + 4) * sizeof(float));
    cudaMallocManaged(&lines, 2 * sizeof(int));
    for (int i = 0; i < 16 * 20; i++) A[i] = __float2bfloat16((float)(i % 7));
    for (int i = 0; i < 16 * 16 + 4; i++) C[i] = 0.0f;
    static const char *const op[4] = {"wmma::load_matrix_sync", "wmma::load_matrix_sync", "wmma::mma_sync",
                                      "wmma::store_matrix_sync"};
    char want[256];
    int wrong = 0;
    for (int mode = 0; mode < 8; mode++) {
        lines[0] = lines[1] = 0;
        capture_begin();
        wmma_lane_missing<<<1, 32>>>(A, C, lines, mode);
        cudaError_t e = cudaDeviceSynchronize();
        const char *text = capture_end();
        cudaDeviceReset();
        cudaError_t want_e = mode == 7 ? cudaErrorMisalignedAddress : cudaErrorLaunchFailure;
        if (e != want_e) {
            print_error("mode %d: got %s, want %s\n", mode, cudaGetErrorName(e), cudaGetErrorName(want_e));
            wrong++;
        }
        if (mode < 4)
            snprintf(want, sizeof want, "%s at test_simt_memtrace.cu:%d in warp 0 reached by 31 of its 32 lanes: lane 5",
                     op[mode], lines[0]);
        else if (mode == 4)
            snprintf(want, sizeof want,
                     "(wmma::load_matrix_sync at test_simt_memtrace.cu:%d and wmma::store_matrix_sync at "
                     "test_simt_memtrace.cu:%d)",
                     lines[0], lines[1]);
        else if (mode == 6)
            snprintf(want, sizeof want, "wmma::load_matrix_sync with ldm 20, at test_simt_memtrace.cu:%d:", lines[0]);
        else if (mode == 7)
            snprintf(want, sizeof want, "16 bytes past a multiple of 32, at test_simt_memtrace.cu:%d;", lines[0]);
        else
            snprintf(want, sizeof want,
                     "16 thread(s), the first thread 0, wait at a warp collective at test_simt_memtrace.cu:%d\n"
                     "simt:   15 thread(s), the first thread 16, wait at a warp collective at "
                     "test_simt_memtrace.cu:%d\n",
                     lines[0], lines[1]);
        if (!strstr(text, want)) {
            print_error("mode %d: expected \"%s\" in:\n%s\n", mode, want, text);
            wrong++;
        }
    }
    assert_int_equal(wrong, 0);
    cudaFree(A);
    cudaFree(C);
    cudaFree(lines);
}

/* A plain load of shared bytes whose cp.async has not landed (the lab
 * builds' hooks see every load): the launch stops there and names the
 * load's line and the copy's, where before the load just read NaN bytes.
 * Lane l copies 16 bytes into its own slot of the tile and reads its
 * neighbour's. mode 0: wait_group 0 and __syncwarp first (fine); 1: no
 * wait; 2: the copies committed and waited for, but the lane's second
 * copy, into the neighbour's read slot of a second tile, left in flight. */
__global__ void load_too_early(const float *src, float *out, int *line, int mode)
{
    __shared__ __align__(16) float tile[2][32 * 4];
    int lane = threadIdx.x, next = (lane + 1) % 32;
    cp_async_16(&tile[0][4 * lane], &src[4 * lane]);
    cp_async_commit_group();
    if (mode == 2) cp_async_16(&tile[1][4 * lane], &src[4 * lane]);
    if (mode != 1) cp_async_wait_group(0);
    __syncwarp();
    if (lane == 0) line[0] = __LINE__ + 1;
    float x = tile[0][4 * next] + (mode == 2 ? tile[1][4 * next] : 0.0f);
    out[lane] = x;
}

static void test_plain_load_before_its_copy_lands(void **state)
{
    (void)state;
    float *src, *out;
    int *line;
    cudaMallocManaged(&src, 128 * sizeof(float));
    cudaMallocManaged(&out, 32 * sizeof(float));
    cudaMallocManaged(&line, sizeof(int));
    for (int i = 0; i < 128; i++) src[i] = (float)i;
    for (int mode = 0; mode < 3; mode++) {
        capture_begin();
        load_too_early<<<1, 32>>>(src, out, line, mode);
        cudaError_t e = cudaDeviceSynchronize();
        const char *err = capture_end();
        if (mode == 0) {
            if (e != cudaSuccess) fail_msg("mode 0: got %s (%s)", cudaGetErrorName(e), err);
            for (int t = 0; t < 32; t++) assert_true(out[t] == src[4 * ((t + 1) % 32)]);
            continue;
        }
        char want[160];
        snprintf(want, sizeof want, "a load at test_simt_memtrace.cu:%d reads shared bytes that a cp.async has not "
                 "finished writing", line[0]);
        const char *group = mode == 1 ? "in its group 0, which its cp.async.wait_group has not waited for yet"
                                      : "in a group not committed yet";
        if (e != cudaErrorLaunchFailure || !strstr(err, want) || !strstr(err, "copied by thread (1,0,0)") ||
            !strstr(err, group))
            fail_msg("mode %d: got %s, and the message does not say what and where:\n%s", mode,
                     cudaGetErrorName(e), err);
        cudaDeviceReset();
    }
    cudaFree(src);
    cudaFree(out);
    cudaFree(line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_global_sectors, no_fault_left),
        cmocka_unit_test_teardown(test_loop_iterations_are_requests, no_fault_left),
        cmocka_unit_test_teardown(test_partial_warp, no_fault_left),
        cmocka_unit_test_teardown(test_shared_banks, no_fault_left),
        cmocka_unit_test_teardown(test_cp_async_and_ldmatrix, no_fault_left),
        cmocka_unit_test_teardown(test_plain_load_before_its_copy_lands, no_fault_left),
        cmocka_unit_test_teardown(test_limits_and_api, no_fault_left),
        cmocka_unit_test_teardown(test_access_kinds, no_fault_left),
        cmocka_unit_test_teardown(test_blocks_start_afresh, no_fault_left),
        cmocka_unit_test_teardown(test_faulting_block_not_counted, no_fault_left),
        cmocka_unit_test_teardown(test_sites_past_the_table, no_fault_left),
        cmocka_unit_test_teardown(test_guard_zones, no_fault_left),
        cmocka_unit_test_teardown(test_report, no_fault_left),
        cmocka_unit_test_teardown(test_wmma_failures_name_the_kernel_line, no_fault_left),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
