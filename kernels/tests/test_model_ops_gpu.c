/*
 * The course's fused model kernels (kernels/cuda/model_ops_gpu.h) against the
 * CPU reference ops (kernels/cpu/model_ops.h), on the emulator or a GPU; each
 * test skips, visibly, where there is no device. Shapes are awkward on
 * purpose: widths that are not multiples of a warp or of the 16-wide matmul
 * tile, one row, prime lengths, lengths one past a whole block of 4-wide
 * threads. Buffers sit between guard zones (gbuf), inputs between NaNs, so a
 * kernel that reads or writes one element past its end fails too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu/model_ops.h"
#include "cuda/fill.h"
#include "cuda/model_ops_gpu.h"
#include "gpu.h"
#include "half.h"
#include "labcheck.h"
#include "memory.h"
#include "numerics.h"
#include "rng.h"

static float *rnd(size_t n, float lo, float hi, uint64_t seed) {
    float *x = host_malloc(n * sizeof(float) + 4);
    rng_t r;
    rng_init(&r, seed);
    rng_fill_uniform(&r, x, n, lo, hi);
    return x;
}

static void *up(const void *h, size_t bytes) {
    void *d = gpu_malloc(bytes + 4);
    gpu_upload(d, h, bytes);
    return d;
}

static float *down(const float *d, size_t n) {
    float *h = host_malloc(n * sizeof(float) + 4);
    gpu_download(h, d, n * sizeof(float));
    return h;
}

/* ---- device buffers between guard zones ------------------------------------------- */

/* A device buffer of `bytes` with GUARD_BYTES on each side, all of it filled
 * with a 32-bit pattern. An input (IN_GUARD) is NaN past either end, in fp32
 * and in both bf16 halves: a kernel that reads one element too far makes its
 * result NaN even where it multiplies that element by 0. An output
 * (OUT_GUARD, a finite value no kernel computes here) fails gcheck() if one
 * element too many is written, whatever the value, NaN included; an element
 * left unwritten keeps the pattern, which no reference value equals. */
#define GUARD_BYTES 1024
#define IN_GUARD 0x7fc17fc1u  /* fp32 NaN; as bf16, 0x7fc1: NaN */
#define OUT_GUARD 0x4b1d4b1du /* fp32 10296605; as bf16, 0x4b1d: 10289152 */

typedef struct {
    unsigned char *base; /* device: GUARD_BYTES, the buffer, GUARD_BYTES */
    size_t bytes;
    uint32_t pattern;
} gbuf_t;

static gbuf_t gbuf(size_t bytes, uint32_t pattern) {
    const size_t total = 2 * GUARD_BYTES + (bytes + 3) / 4 * 4;
    gbuf_t g = {gpu_malloc(total), bytes, pattern};
    uint32_t *h = host_malloc(total);
    for (size_t i = 0; i < total / 4; i++) h[i] = pattern;
    gpu_upload(g.base, h, total);
    host_free(h);
    return g;
}

static void *gin(gbuf_t g) { return g.base + GUARD_BYTES; }

/* An input: h's bytes between NaN guards. */
static gbuf_t gup(const void *h, size_t bytes) {
    gbuf_t g = gbuf(bytes, IN_GUARD);
    gpu_upload(gin(g), h, bytes);
    return g;
}

/* Fails if a byte of either guard zone changed. */
static void gcheck(gbuf_t g, const char *what) {
    const size_t inner = (g.bytes + 3) / 4 * 4;
    unsigned char *h = host_malloc(inner + 2 * GUARD_BYTES);
    gpu_download(h, g.base, inner + 2 * GUARD_BYTES);
    for (size_t i = 0; i < GUARD_BYTES; i += 4) {
        uint32_t lo, hi;
        memcpy(&lo, h + i, 4);
        memcpy(&hi, h + GUARD_BYTES + inner + i, 4);
        if (lo != g.pattern) fail_msg("%s: written %zu bytes before its start", what, GUARD_BYTES - i);
        if (hi != g.pattern)
            fail_msg("%s: written %zu bytes past its end", what, inner - g.bytes + i);
    }
    host_free(h);
}

static void gfree(gbuf_t g) { gpu_free(g.base); }

/* The embedding forward and backward on one shape. The token buffer holds one
 * valid token past N, and every other buffer sits between guard zones: a
 * kernel that takes N + 1 rows reads that token and a NaN row of dout, or
 * writes a row past out. */
static void check_encoder(int N, int D, int V) {
    const size_t ND = (size_t)N * D, VD = (size_t)V * D;
    float *wte = rnd(VD, -1, 1, 1), *dout = rnd(ND, -1, 1, 2);
    int *tok = host_malloc((N + 1) * sizeof(int));
    for (int n = 0; n <= N; n++) tok[n] = (n * 7) % 5; /* repeated tokens: rows add into the same dwte row */
    float *want = host_malloc(ND * sizeof(float)), *dwte = rnd(VD, -1, 1, 3);
    gbuf_t g_wte = gup(wte, VD * 4), g_out = gbuf(ND * 4, OUT_GUARD), g_dout = gup(dout, ND * 4);
    gbuf_t g_dwte = gbuf(VD * 4, OUT_GUARD);
    gpu_upload(gin(g_dwte), dwte, VD * 4);
    int *d_tok = up(tok, (N + 1) * sizeof(int));
    char what[96];
    encoder_forward(want, tok, wte, N, D);
    gpu_encoder_forward(gin(g_out), d_tok, gin(g_wte), N, D);
    float *got = down(gin(g_out), ND);
    cmp_report_t rep;
    snprintf(what, sizeof what, "embedding forward, N %d D %d (a copy: exact)", N, D);
    LAB_REQUIRE_CLOSE(compare_close_f(got, want, ND, 0, 0, &rep), what, &rep);
    gcheck(g_out, "embedding forward out");
    encoder_backward(dwte, dout, tok, N, D);
    gpu_encoder_backward(gin(g_dwte), gin(g_dout), d_tok, N, D, V);
    host_free(got);
    got = down(gin(g_dwte), VD);
    /* The same additions in the same order (rows n = 0..N-1): exact. */
    snprintf(what, sizeof what, "embedding backward, N %d D %d V %d (exact)", N, D, V);
    LAB_REQUIRE_CLOSE(compare_close_f(got, dwte, VD, 0, 0, &rep), what, &rep);
    gcheck(g_dwte, "embedding backward dwte");
    gfree(g_wte); gfree(g_out); gfree(g_dout); gfree(g_dwte); gpu_free(d_tok);
    host_free(wte); host_free(dout); host_free(tok); host_free(want); host_free(dwte); host_free(got);
}

static void test_encoder(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    check_encoder(301, 19, 256); /* N above one 256-token chunk of the backward; D: one float at a time */
    check_encoder(37, 32, 5);    /* D a multiple of 4: the 16-byte forward path */
    check_encoder(70, 300, 7);   /* D above the backward's 256 columns a block: two column blocks */
}

static void test_rmsnorm_forward(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    /* N, D, and the inputs' amplitude: at 3e-3 the mean square (3e-6) is below eps (1e-5), so a
     * norm without eps is off by a factor of about 2. */
    const struct { int N, D; float amp; } shapes[] = {{1, 1, 3}, {5, 33, 3}, {40, 100, 3}, {9, 64, 3e-3f}};
    for (int s = 0; s < 4; s++) {
        const int N = shapes[s].N, D = shapes[s].D;
        const float a = shapes[s].amp;
        float *x = rnd((size_t)N * D, -a, a, 10 + s), *w = rnd((size_t)D, 0.5f, 1.5f, 20 + s);
        float *out = host_malloc((size_t)N * D * 4), *rs = host_malloc((size_t)N * 4);
        rmsnorm_forward(out, rs, x, w, N, D, 1e-5f);
        /* between guards: a warp that takes row N reads NaN and writes past out and rstd */
        gbuf_t g_x = gup(x, (size_t)N * D * 4), g_w = gup(w, (size_t)D * 4);
        gbuf_t g_out = gbuf((size_t)N * D * 4, OUT_GUARD), g_rs = gbuf((size_t)N * 4, OUT_GUARD);
        gpu_rmsnorm_forward(gin(g_out), gin(g_rs), gin(g_x), gin(g_w), N, D, 1e-5f);
        float *got = down(gin(g_out), (size_t)N * D), *grs = down(gin(g_rs), (size_t)N);
        cmp_report_t rep;
        char what[64];
        /* The mean square is a length-D fp32 sum in another order (D eps relative), then rsqrtf (2 ulp). */
        snprintf(what, sizeof what, "rmsnorm rstd (N %d D %d)", N, D);
        LAB_REQUIRE_CLOSE(compare_close_f(grs, rs, (size_t)N, (D + 4) * FLT_EPSILON, 0, &rep), what, &rep);
        snprintf(what, sizeof what, "rmsnorm out (N %d D %d)", N, D);
        LAB_REQUIRE_CLOSE(compare_close_f(got, out, (size_t)N * D, (D + 6) * FLT_EPSILON, 1e-7, &rep), what, &rep);
        gcheck(g_out, "rmsnorm out");
        gcheck(g_rs, "rmsnorm rstd");
        gfree(g_x); gfree(g_w); gfree(g_out); gfree(g_rs);
        host_free(x); host_free(w); host_free(out); host_free(rs); host_free(got); host_free(grs);
    }
}

static void test_rope(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const int B = 2, T = 7, H = 3, hd = 6, D = H * hd, N = B * T;
    float *c = host_malloc((size_t)T * hd / 2 * 4), *s = host_malloc((size_t)T * hd / 2 * 4);
    rope_tables(c, s, T, hd, 10000.0f);
    float *x = rnd((size_t)N * D, -1, 1, 30), *want = host_malloc((size_t)N * D * 4);
    float *d_c = up(c, (size_t)T * hd / 2 * 4), *d_s = up(s, (size_t)T * hd / 2 * 4), *d_x = up(x, (size_t)N * D * 4);
    cmp_report_t rep;
    for (int dir = 0; dir < 2; dir++) {
        if (dir == 0) rope_forward(want, x, c, s, N, T, D, H);
        else rope_backward(want, x, c, s, N, T, D, H);
        gbuf_t g_o = gbuf((size_t)N * D * 4, OUT_GUARD);
        float *d_o = gin(g_o);
        gpu_upload(d_o, x, (size_t)N * D * 4);
        gpu_rope(d_o, d_o, d_c, d_s, N, T, D, H, dir == 0 ? 1.0f : -1.0f); /* in place */
        float *got = down(d_o, (size_t)N * D);
        gcheck(g_o, dir == 0 ? "rope forward" : "rope backward");
        /* Out of place, from an input between NaNs: in place, a thread past the end would rotate
         * the guard by position 0's angle (the identity) and write it back unchanged. */
        gbuf_t g_i = gup(x, (size_t)N * D * 4), g_o2 = gbuf((size_t)N * D * 4, OUT_GUARD);
        gpu_rope(gin(g_o2), gin(g_i), d_c, d_s, N, T, D, H, dir == 0 ? 1.0f : -1.0f);
        float *got2 = down(gin(g_o2), (size_t)N * D);
        if (memcmp(got2, got, (size_t)N * D * 4) != 0) fail_msg("rope out of place differs from in place");
        gcheck(g_o2, "rope out of place");
        gfree(g_i);
        gfree(g_o2);
        host_free(got2);
        /* Two products and a sum, possibly fused into an FMA on a GPU: 2 ulps. */
        LAB_REQUIRE_CLOSE(compare_close_f(got, want, (size_t)N * D, 2 * FLT_EPSILON, 2 * FLT_EPSILON, &rep),
                      dir == 0 ? "rope forward" : "rope backward", &rep);
        gfree(g_o);
        host_free(got);
    }
    gpu_free(d_c); gpu_free(d_s); gpu_free(d_x);
    host_free(c); host_free(s); host_free(x); host_free(want);
}

static void test_heads_layout_and_cast(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const int B = 2, T = 5, H = 3, D = 12, hd = D / H;
    const size_t n = (size_t)B * T * D;
    float *x = rnd(n, -3, 3, 40);
    gbuf_t g_x = gup(x, n * 4), g_back = gbuf(n * 4, OUT_GUARD), g_h = gbuf(n * 2, OUT_GUARD);
    float *d_x = gin(g_x), *d_back = gin(g_back);
    uint16_t *d_h = gin(g_h), *d_c = gpu_malloc(n * 2), *h = host_malloc(n * 2), *c = host_malloc(n * 2);
    gpu_heads_split_bf16(d_h, d_x, B, T, D, H);
    gpu_cast_to_bf16(d_c, d_x, n);
    gpu_download(h, d_h, n * 2);
    gpu_download(c, d_c, n * 2);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int k = 0; k < D; k++) {
                size_t src = ((size_t)b * T + t) * D + k, dst = (((size_t)b * H + k / hd) * T + t) * hd + k % hd;
                /* Round to nearest even, bit for bit as the host conversion. */
                assert_int_equal(h[dst], bf16_from_float(x[src]));
                assert_int_equal(c[src], bf16_from_float(x[src]));
            }
    /* merge undoes the split's permutation exactly (fp32 in, fp32 out). */
    float *perm = host_malloc(n * 4);
    for (size_t i = 0; i < n; i++) perm[i] = float_from_bf16(h[i]);
    float *d_perm = up(perm, n * 4);
    gpu_heads_merge(d_back, d_perm, B, T, D, H);
    float *back = down(d_back, n);
    for (size_t i = 0; i < n; i++) assert_true(back[i] == round_to_bf16(x[i]));
    gcheck(g_h, "heads split");
    gcheck(g_back, "heads merge");
    gfree(g_x); gfree(g_back); gfree(g_h); gpu_free(d_c); gpu_free(d_perm);
    host_free(x); host_free(h); host_free(c); host_free(perm); host_free(back);
}

/* Two bf16 bit patterns equal, or (on a GPU, where one kernel may fuse a multiply-add the other
 * does not) one bf16 step apart; the emulator compiles both kernels the same way: equal. */
static int bf16_near(uint16_t a, uint16_t b) {
#ifdef COURSE_SIMT
    return a == b;
#else
    return a == b || ((a ^ b) < 0x8000u && (a > b ? a - b : b - a) <= 1);
#endif
}

/* The bf16-output kernels against the fp32 kernel followed by the cast they replace. */
static void test_bf16_output_fusions(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const int B = 2, T = 7, H = 3, hd = 6, D = H * hd, N = B * T, F = 29;
    const size_t ND = (size_t)N * D, NF = (size_t)N * F;
    float *c = host_malloc((size_t)T * hd / 2 * 4), *s = host_malloc((size_t)T * hd / 2 * 4);
    rope_tables(c, s, T, hd, 10000.0f);
    float *x = rnd(ND, -3, 3, 60), *w = rnd((size_t)D, 0.5f, 1.5f, 61);
    float *g = rnd(NF, -4, 4, 62), *u = rnd(NF, -2, 2, 63);
    for (size_t i = 0; i < NF; i++) { /* SwiGLU's inputs are bf16: the fp32 kernel gets the same values */
        g[i] = round_to_bf16(g[i]);
        u[i] = round_to_bf16(u[i]);
    }
    float *d_c = up(c, (size_t)T * hd / 2 * 4), *d_s = up(s, (size_t)T * hd / 2 * 4);
    float *d_x = up(x, ND * 4), *d_w = up(w, (size_t)D * 4), *d_g = up(g, NF * 4), *d_u = up(u, NF * 4);
    float *d_f = gpu_malloc(NF * 4), *d_rs = gpu_malloc((size_t)N * 4), *d_rs2 = gpu_malloc((size_t)N * 4);
    uint16_t *d_want = gpu_malloc(NF * 2), *d_got = gpu_malloc(NF * 2);
    uint16_t *want = host_malloc(NF * 2), *got = host_malloc(NF * 2);
#define COMPARE(n, what)                                                                           \
    do {                                                                                           \
        gpu_download(want, d_want, (n) * 2);                                                       \
        gpu_download(got, d_got, (n) * 2);                                                         \
        for (size_t i_ = 0; i_ < (n); i_++)                                                        \
            if (!bf16_near(got[i_], want[i_]))                                                     \
                fail_msg("%s: element %zu is 0x%04x, fp32 kernel + cast gives 0x%04x", what, i_,   \
                         got[i_], want[i_]);                                                       \
    } while (0)
    /* RMSNorm: same statistics, output rounded at the store */
    gpu_rmsnorm_forward(d_f, d_rs, d_x, d_w, N, D, 1e-5f);
    gpu_cast_to_bf16(d_want, d_f, ND);
    gpu_rmsnorm_forward_bf16(d_got, d_rs2, d_x, d_w, N, D, 1e-5f);
    COMPARE(ND, "rmsnorm bf16");
    float *rs = down(d_rs, (size_t)N), *rs2 = down(d_rs2, (size_t)N);
    for (int i = 0; i < N; i++) assert_true(rs[i] == rs2[i]);
    /* SwiGLU: bf16 in (exact casts of the fp32 inputs), bf16 out */
    uint16_t *d_gb = gpu_malloc(NF * 2), *d_ub = gpu_malloc(NF * 2);
    gpu_cast_to_bf16(d_gb, d_g, NF);
    gpu_cast_to_bf16(d_ub, d_u, NF);
    gpu_swiglu_forward(d_f, d_g, d_u, NF);
    gpu_cast_to_bf16(d_want, d_f, NF);
    gpu_swiglu_forward_bf16(d_got, d_gb, d_ub, NF);
    COMPARE(NF, "swiglu bf16");
    gpu_swiglu_forward_bf16(d_got, d_gb + 1, d_ub + 1, NF - 1); /* misaligned: the scalar path */
    gpu_swiglu_forward(d_f, d_g + 1, d_u + 1, NF - 1);
    gpu_cast_to_bf16(d_want, d_f, NF - 1);
    COMPARE(NF - 1, "swiglu bf16, misaligned");
    gpu_free(d_gb);
    gpu_free(d_ub);
    /* RoPE + head split (q, k) and the plain split (v) */
    for (int rotate = 0; rotate < 2; rotate++) {
        gpu_memset(d_f, 0, ND * 4);
        gpu_rope(d_f, d_x, d_c, d_s, N, T, D, H, 1.0f);
        gpu_heads_split_bf16(d_want, rotate ? d_f : d_x, B, T, D, H);
        gpu_rope_heads_bf16(d_got, d_x, d_c, d_s, B, T, D, H, rotate);
        COMPARE(ND, rotate ? "rope + heads split" : "heads split without rope");
    }
    /* RoPE backward + cast */
    gpu_rope(d_f, d_x, d_c, d_s, N, T, D, H, -1.0f);
    gpu_cast_to_bf16(d_want, d_f, ND);
    gpu_rope_cast_bf16(d_got, d_x, d_c, d_s, N, T, D, H, -1.0f);
    COMPARE(ND, "rope backward + cast");
#undef COMPARE
    gpu_free(d_c); gpu_free(d_s); gpu_free(d_x); gpu_free(d_w); gpu_free(d_g); gpu_free(d_u);
    gpu_free(d_f); gpu_free(d_rs); gpu_free(d_rs2); gpu_free(d_want); gpu_free(d_got);
    host_free(c); host_free(s); host_free(x); host_free(w); host_free(g); host_free(u);
    host_free(want); host_free(got); host_free(rs); host_free(rs2);
}

/* fp32 results of two kernels that claim the same values: equal under the
 * emulator (one compiler, one order); on a GPU nvcc may contract a multiply
 * and an add into an fma in one kernel and not the other, a few ulps. */
static int f32_near(float a, float b) {
#ifdef COURSE_SIMT
    return a == b;
#else
    return a == b || fabsf(a - b) <= 4 * FLT_EPSILON * fabsf(b);
#endif
}

/* The three launches that replace two or three: each against the calls it
 * stands for, at a width the 16-byte path takes (hd 8, D 24) and at one it
 * cannot (hd 6, D 18), and once more with every input one float off its
 * 16-byte alignment, which must fall back to scalar accesses. */
static void check_qkv_and_norm_fusions(int B, int T, int H, int hd, int shift) {
    const int D = H * hd, N = B * T;
    const size_t ND = (size_t)N * D;
    float *c = host_malloc((size_t)T * hd / 2 * 4), *s = host_malloc((size_t)T * hd / 2 * 4);
    rope_tables(c, s, T, hd, 10000.0f);
    float *x = rnd(3 * ND + 1, -3, 3, 70), *y = rnd(ND + 1, -3, 3, 71), *w = rnd((size_t)D + 1, 0.5f, 1.5f, 72);
    /* x and y are bf16 values, so the bf16 inputs of the fused calls (q, k, v from their matmul, the
     * branch added to the residual stream) hold exactly what the fp32 calls they replace read. */
    for (size_t i = 0; i < 3 * ND + 1; i++) x[i] = round_to_bf16(x[i]);
    for (size_t i = 0; i < ND + 1; i++) y[i] = round_to_bf16(y[i]);
    float *d_c = up(c, (size_t)T * hd / 2 * 4), *d_s = up(s, (size_t)T * hd / 2 * 4);
    /* shift = 1: the inputs start 4 bytes into their allocations (up() leaves room) */
    float *d_x = (float *)up(x, (3 * ND + 1) * 4) + shift, *d_y = (float *)up(y, (ND + 1) * 4) + shift;
    float *d_w = (float *)up(w, ((size_t)D + 1) * 4) + shift;
    float *d_res = gpu_malloc(ND * 4), *d_res2 = gpu_malloc(ND * 4);
    float *d_rs = gpu_malloc((size_t)N * 4), *d_rs2 = gpu_malloc((size_t)N * 4);
    uint16_t *d_want = gpu_malloc(3 * ND * 2), *d_got = gpu_malloc(3 * ND * 2);
    uint16_t *want = host_malloc(3 * ND * 2), *got = host_malloc(3 * ND * 2);
    /* the same shift in bf16: 2 bytes off, which the 4- and 8-byte bf16 paths must notice */
    uint16_t *d_xb = (uint16_t *)gpu_malloc((3 * ND + 1) * 2) + shift;
    uint16_t *d_yb = (uint16_t *)gpu_malloc((ND + 1) * 2) + shift;
    gpu_cast_to_bf16(d_xb, d_x, 3 * ND);
    gpu_cast_to_bf16(d_yb, d_y, ND);
#define COMPARE16(n, name)                                                                         \
    do {                                                                                           \
        gpu_download(want, d_want, (n) * 2);                                                       \
        gpu_download(got, d_got, (n) * 2);                                                         \
        for (size_t i_ = 0; i_ < (n); i_++)                                                        \
            if (!bf16_near(got[i_], want[i_]))                                                     \
                fail_msg("%s (D %d, shift %d): element %zu is 0x%04x, the separate calls give 0x%04x", \
                         name, D, shift, i_, got[i_], want[i_]);                                   \
    } while (0)
    /* residual add + RMSNorm: the sum, the bf16 output and rstd */
    gpu_residual_forward(d_res, d_x, d_y, ND);
    gpu_rmsnorm_forward_bf16(d_want, d_rs, d_res, d_w, N, D, 1e-5f);
    gpu_residual_rmsnorm_forward_bf16(d_res2, d_got, d_rs2, d_x, d_yb, d_w, N, D, 1e-5f);
    COMPARE16(ND, "residual + rmsnorm bf16");
    float *r1 = down(d_res, ND), *r2 = down(d_res2, ND), *rs = down(d_rs, (size_t)N), *rs2 = down(d_rs2, (size_t)N);
    for (size_t i = 0; i < ND; i++)
        if (r1[i] != r2[i]) fail_msg("residual + rmsnorm (D %d, shift %d): sum %zu is %.9g, want %.9g", D, shift, i,
                                     (double)r2[i], (double)r1[i]);
    for (int i = 0; i < N; i++)
        if (!f32_near(rs2[i], rs[i]))
            fail_msg("residual + rmsnorm (D %d, shift %d): rstd[%d] is %.9g, want %.9g", D, shift, i, (double)rs2[i],
                     (double)rs[i]);
    /* RoPE + cast of q and k (backward sign), plain cast of v, in one launch */
    gpu_rope_cast_bf16(d_want, d_x, d_c, d_s, N, T, D, H, -1.0f);
    gpu_rope_cast_bf16(d_want + ND, d_x + ND, d_c, d_s, N, T, D, H, -1.0f);
    gpu_cast_to_bf16(d_want + 2 * ND, d_x + 2 * ND, ND);
    gpu_rope_cast_qkv_bf16(d_got, d_x, d_c, d_s, N, T, D, H, -1.0f);
    COMPARE16(3 * ND, "rope + cast of q, k, v");
    /* RoPE + head split of q and k, head split of v, in one launch */
    gpu_rope_heads_bf16(d_want, d_x, d_c, d_s, B, T, D, H, 1);
    gpu_rope_heads_bf16(d_want + ND, d_x + ND, d_c, d_s, B, T, D, H, 1);
    gpu_rope_heads_bf16(d_want + 2 * ND, d_x + 2 * ND, d_c, d_s, B, T, D, H, 0);
    gpu_rope_heads_qkv_bf16(d_got, d_got + ND, d_got + 2 * ND, d_xb, d_c, d_s, B, T, D, H);
    COMPARE16(3 * ND, "rope + heads split of q, k, v");
#undef COMPARE16
    gpu_free(d_c); gpu_free(d_s); gpu_free(d_x - shift); gpu_free(d_y - shift); gpu_free(d_w - shift);
    gpu_free(d_res); gpu_free(d_res2); gpu_free(d_rs); gpu_free(d_rs2); gpu_free(d_want);
    gpu_free(d_got); gpu_free(d_xb - shift); gpu_free(d_yb - shift);
    host_free(c); host_free(s); host_free(x); host_free(y); host_free(w); host_free(want); host_free(got);
    host_free(r1); host_free(r2); host_free(rs); host_free(rs2);
}

static void test_qkv_and_norm_fusions(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    check_qkv_and_norm_fusions(2, 7, 3, 8, 0); /* D 24: 16-byte accesses */
    check_qkv_and_norm_fusions(2, 7, 3, 6, 0); /* D 18: rows not a multiple of 4 floats */
    check_qkv_and_norm_fusions(2, 7, 3, 8, 1); /* D 24, every input 4 bytes off alignment */
    check_qkv_and_norm_fusions(1, 3, 12, 64, 0); /* D 768 (GPT-2 small), hd 64: the model's own shape */
    check_qkv_and_norm_fusions(1, 3, 12, 64, 1); /* D 768, misaligned */
}

static void test_causal_softmax(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const int BH = 3, T = 37;
    const size_t n = (size_t)BH * T * T;
    float *S = rnd(n, -6, 6, 50);
    /* Head 1's scores above the diagonal are far above the visible ones, as a full-square Q K^T
     * can hold: a maximum taken over the whole row would underflow every visible exponential. */
    for (int t = 0; t < T; t++)
        for (int u = t + 1; u < T; u++) S[((size_t)T + t) * T + u] = 1000.0f + u;
    double *want = host_malloc(n * sizeof(double));
    for (size_t r = 0; r < (size_t)BH * T; r++) {
        int t = (int)(r % T);
        double mx = -INFINITY, sum = 0;
        for (int u = 0; u <= t; u++) mx = fmax(mx, S[r * T + u]);
        for (int u = 0; u <= t; u++) sum += exp(S[r * T + u] - mx);
        for (int u = 0; u < T; u++) want[r * T + u] = u <= t ? exp(S[r * T + u] - mx) / sum : 0.0;
    }
    gbuf_t g = gbuf(n * 4, OUT_GUARD);
    float *d = gin(g);
    gpu_upload(d, S, n * 4);
    gpu_causal_softmax(d, d, BH, T);
    float *got = down(d, n);
    gcheck(g, "causal softmax");
    cmp_report_t rep;
    /* expf (a few ulps) and a length-T fp32 sum: (T + 8) eps relative to each probability. */
    LAB_REQUIRE_CLOSE(compare_close(got, want, n, (T + 8) * FLT_EPSILON, 1e-9, &rep), "causal softmax", &rep);
    gfree(g);
    host_free(S); host_free(want); host_free(got);
}

/* C = alpha op(A) op(B) + beta C0 over a batch, against double on the same bf16 inputs. */
static void check_gemm(int tA, int tB, int M, int N, int K, int batch, float beta, uint64_t seed) {
    const size_t sa = (size_t)M * K, sb = (size_t)K * N, sc = (size_t)M * N;
    float *a = rnd(sa * batch, -1, 1, seed), *b = rnd(sb * batch, -1, 1, seed + 1), *c0 = rnd(sc * batch, -1, 1, seed + 2);
    /* beta 0: C is not read (the model passes uninitialised outputs), so NaN there must not show */
    if (beta == 0.0f)
        for (size_t i = 0; i < sc * batch; i++) c0[i] = NAN;
    uint16_t *ah = host_malloc(sa * batch * 2), *bh = host_malloc(sb * batch * 2);
    bf16_from_float_array(ah, a, sa * batch);
    bf16_from_float_array(bh, b, sb * batch);
    double *want = host_malloc(sc * batch * sizeof(double)), *bound = host_malloc(sc * batch * sizeof(double));
    const float alpha = 0.75f;
    const int lda = tA ? M : K, ldb = tB ? K : N;
    for (int z = 0; z < batch; z++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0, sabs = 0;
                for (int k = 0; k < K; k++) {
                    double x = float_from_bf16(ah[z * sa + (tA ? (size_t)k * lda + i : (size_t)i * lda + k)]);
                    double y = float_from_bf16(bh[z * sb + (tB ? (size_t)j * ldb + k : (size_t)k * ldb + j)]);
                    s += x * y;
                    sabs += fabs(x * y);
                }
                size_t at = z * sc + (size_t)i * N + j;
                const double c = beta == 0.0f ? 0.0 : beta * c0[at];
                want[at] = alpha * s + c;
                /* fp32 accumulation of K exact bf16 products: K eps |a||b| (Higham 3.1), plus the scaling. */
                bound[at] = 2.0 * (K + 2) * FLT_EPSILON * (alpha * sabs + fabs(c));
            }
    /* A and B between NaN guards: a tile that loads one element past K (or M, N) and multiplies it
     * by a zero gets NaN, not 0 */
    gbuf_t g_a = gup(ah, sa * batch * 2), g_b = gup(bh, sb * batch * 2);
    uint16_t *d_a = gin(g_a), *d_b = gin(g_b);
    gbuf_t g_c = gbuf(sc * batch * 4, OUT_GUARD); /* a row past M lands in the guard */
    float *d_c = gin(g_c);
    gpu_upload(d_c, c0, sc * batch * 4);
    gpu_gemm_bf16(tA, tB, M, N, K, alpha, d_a, lda, (long long)sa, d_b, ldb, (long long)sb, beta, d_c, N,
                  (long long)sc, batch);
    float *got = down(d_c, sc * batch);
    if (beta == 0.0f) { /* the bf16-output product: the same fp32 result, rounded once to nearest even */
        gbuf_t g_h = gbuf(sc * batch * 2, OUT_GUARD); /* the pattern: every element must be written */
        uint16_t *d_h = gin(g_h), *h = host_malloc(sc * batch * 2);
        gpu_gemm_bf16_out(tA, tB, M, N, K, alpha, d_a, lda, (long long)sa, d_b, ldb, (long long)sb, d_h, N,
                          (long long)sc, batch);
        gpu_download(h, d_h, sc * batch * 2);
        for (size_t i = 0; i < sc * batch; i++)
            if (!bf16_near(h[i], bf16_from_float(got[i])))
                fail_msg("gemm bf16 out tA %d tB %d M %d N %d K %d batch %d: element %zu is 0x%04x, the fp32 "
                         "product %.9g rounds to 0x%04x", tA, tB, M, N, K, batch, i, h[i], (double)got[i],
                         bf16_from_float(got[i]));
        gcheck(g_h, "gemm bf16 C");
        gfree(g_h);
        host_free(h);
    }
    size_t bad = 0, worst = 0;
    for (size_t i = 0; i < sc * batch; i++)
        if (!(fabs(got[i] - want[i]) <= bound[i])) {
            if (!bad || fabs(got[i] - want[i]) > fabs(got[worst] - want[worst])) worst = i;
            bad++;
        }
    if (bad)
        fail_msg("gemm tA %d tB %d M %d N %d K %d batch %d: %zu outside the bound; worst at %zu: %g vs %g", tA, tB,
                 M, N, K, batch, bad, worst, (double)got[worst], want[worst]);
    gcheck(g_c, "gemm C");
    gfree(g_a); gfree(g_b); gfree(g_c);
    host_free(a); host_free(b); host_free(c0); host_free(ah); host_free(bh); host_free(want); host_free(bound);
    host_free(got);
}

static void test_gemm_bf16(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    for (int tA = 0; tA < 2; tA++)
        for (int tB = 0; tB < 2; tB++) {
            check_gemm(tA, tB, 1, 1, 1, 1, 0.0f, 60);
            check_gemm(tA, tB, 17, 33, 45, 1, 1.0f, 61);   /* not multiples of the 16-wide tile */
            check_gemm(tA, tB, 16, 8, 31, 3, 0.0f, 62);    /* a batch */
        }
}

/* The element-wise kernels at length n, every buffer between guards. */
static void check_elementwise(size_t n) {
    float *a = rnd(n, -8, 8, 70 + n), *b = rnd(n, -2, 2, 71 + n), *want = host_malloc(n * 4);
    gbuf_t g_a = gup(a, n * 4), g_b = gup(b, n * 4), g_o = gbuf(n * 4, OUT_GUARD), g_h = gbuf(n * 2, OUT_GUARD);
    float *d_a = gin(g_a), *d_b = gin(g_b), *d_o = gin(g_o);
    cmp_report_t rep;
    char what[80];
    swiglu_forward(want, a, b, n);
    gpu_swiglu_forward(d_o, d_a, d_b, n);
    float *got = down(d_o, n);
    /* expf (a few ulps) and three roundings. */
    snprintf(what, sizeof what, "swiglu forward (n %zu)", n);
    LAB_REQUIRE_CLOSE(compare_close_f(got, want, n, 8 * FLT_EPSILON, 1e-7, &rep), what, &rep);
    host_free(got);
    residual_forward(want, a, b, n);
    gpu_residual_forward(d_o, d_a, d_b, n);
    got = down(d_o, n);
    snprintf(what, sizeof what, "residual add (n %zu; one rounding: exact)", n);
    LAB_REQUIRE_CLOSE(compare_close_f(got, want, n, 0, 0, &rep), what, &rep);
    host_free(got);
    gpu_add_inplace(d_o, d_a, n);
    got = down(d_o, n);
    for (size_t i = 0; i < n; i++) want[i] += a[i];
    snprintf(what, sizeof what, "add in place (n %zu; exact)", n);
    LAB_REQUIRE_CLOSE(compare_close_f(got, want, n, 0, 0, &rep), what, &rep);
    gcheck(g_o, "element-wise out");
    /* the cast: round to nearest even, bit for bit as the host rounds */
    uint16_t *h = host_malloc(n * 2);
    gpu_cast_to_bf16(gin(g_h), d_a, n);
    gpu_download(h, gin(g_h), n * 2);
    for (size_t i = 0; i < n; i++)
        if (h[i] != bf16_from_float(a[i]))
            fail_msg("cast to bf16 (n %zu): element %zu is 0x%04x, want 0x%04x", n, i, h[i], bf16_from_float(a[i]));
    gcheck(g_h, "cast to bf16 out");
    gfree(g_a); gfree(g_b); gfree(g_o); gfree(g_h);
    host_free(a); host_free(b); host_free(want); host_free(got); host_free(h);
}

static void test_elementwise(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    check_elementwise(1031); /* 258 threads of 4: a second block, mostly idle */
    check_elementwise(1027); /* 256 whole groups of 4 fill one block; the last 3 elements need a 257th thread */
    check_elementwise(3);    /* shorter than one group of 4 */
}

static void test_crossentropy(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const int N = 13, V = 251; /* V not a multiple of the 256-thread block: the backward has a partial last block */
    float *logits = rnd((size_t)N * V, -5, 5, 80), *probs = host_malloc((size_t)N * V * 4), *loss = host_malloc(N * 4);
    int tg[14];
    for (int n = 0; n <= N; n++) tg[n] = (n * 37) % V; /* one valid target past N */
    crossentropy_forward(loss, probs, logits, tg, N, V);
    /* logits, probs and dlogits in place, between guards: a thread past N * V writes the guard */
    gbuf_t g_l = gbuf((size_t)N * V * 4, OUT_GUARD);
    float *d_l = gin(g_l), *d_loss = gpu_malloc(N * 4);
    gpu_upload(d_l, logits, (size_t)N * V * 4);
    int *d_t = up(tg, sizeof tg);
    gpu_crossentropy_forward(d_loss, d_l, d_l, d_t, N, V); /* probs over the logits, as the model calls it */
    float *gl = down(d_loss, N), *gp = down(d_l, (size_t)N * V);
    cmp_report_t rep;
    /* A length-V fp32 sum of exponentials in another order, then logf: (V + 8) eps. */
    LAB_REQUIRE_CLOSE(compare_close_f(gl, loss, N, (V + 8) * FLT_EPSILON, 1e-6, &rep), "cross-entropy loss", &rep);
    LAB_REQUIRE_CLOSE(compare_close_f(gp, probs, (size_t)N * V, (V + 8) * FLT_EPSILON, 1e-9, &rep), "softmax probs", &rep);
    crossentropy_backward(probs, probs, tg, 1.0f / N, N, V);
    gpu_crossentropy_backward(d_l, d_l, d_t, 1.0f / N, N, V);
    host_free(gp);
    gp = down(d_l, (size_t)N * V);
    LAB_REQUIRE_CLOSE(compare_close_f(gp, probs, (size_t)N * V, (V + 8) * FLT_EPSILON, 1e-9, &rep), "cross-entropy backward",
                  &rep);
    gcheck(g_l, "cross-entropy logits, probs and dlogits");
    gfree(g_l); gpu_free(d_loss); gpu_free(d_t);
    host_free(logits); host_free(probs); host_free(loss); host_free(gl); host_free(gp);
}

/* The device fills (the matmul bench's fresh inputs) are the host
 * generator's values, element for element, in fp32 and rounded to bf16;
 * another seed gives other values. n is not a multiple of the block. */
static void test_fill_uniform(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const size_t n = 1000;
    float *d = gpu_malloc(n * sizeof(float));
    uint16_t *dh = gpu_malloc(n * sizeof(uint16_t)), *h = host_malloc(n * sizeof(uint16_t));
    gpu_fill_uniform(d, n, 77, 1, -1.0f, 1.0f);
    gpu_fill_uniform_bf16(dh, n, 77, 1, -1.0f, 1.0f);
    float *got = down(d, n);
    gpu_download(h, dh, n * sizeof(uint16_t));
    for (size_t i = 0; i < n; i++) {
        float want = -1.0f + 2.0f * rng_uniform_at(77, 1, i);
        assert_true(got[i] == want);
        assert_int_equal(h[i], bf16_from_float(want));
    }
    gpu_fill_uniform(d, n, 78, 1, -1.0f, 1.0f);
    float *other = down(d, n);
    size_t same = 0;
    for (size_t i = 0; i < n; i++) same += other[i] == got[i];
    assert_true(same < n / 100);
    host_free(got); host_free(other); host_free(h);
    gpu_free(d); gpu_free(dh);
}

static void test_sum_squares(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    const size_t n = 3 * GPU_NORM_CHUNK + 123, chunks = 4;
    float *g = rnd(n, -1, 1, 90);
    float *d_g = up(g, n * 4);
    double *d_p = gpu_malloc(chunks * sizeof(double)), p[4], s = 0;
    gpu_sum_squares_chunks(d_p, d_g, n);
    gpu_download(p, d_p, sizeof p);
    for (size_t c = 0; c < chunks; c++) s += p[c];
    double want = grad_norm_squared(g, n);
    /* Both sum in double, in different orders: relative 1e-12 is far above double rounding. */
    if (!(fabs(s - want) <= 1e-12 * want)) fail_msg("sum of squares %.17g vs %.17g", s, want);
    gpu_free(d_g); gpu_free(d_p);
    host_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoder),       cmocka_unit_test(test_rmsnorm_forward),
        cmocka_unit_test(test_rope),          cmocka_unit_test(test_heads_layout_and_cast),
        cmocka_unit_test(test_causal_softmax), cmocka_unit_test(test_gemm_bf16),
        cmocka_unit_test(test_elementwise),   cmocka_unit_test(test_crossentropy),
        cmocka_unit_test(test_sum_squares),   cmocka_unit_test(test_bf16_output_fusions),
        cmocka_unit_test(test_qkv_and_norm_fusions),
        cmocka_unit_test(test_fill_uniform),
    };
    return cmocka_run_group_tests_name("model_ops_gpu", tests, NULL, NULL);
}
