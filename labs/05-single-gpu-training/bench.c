/*
 * Lab 05 benchmark: training throughput (tokens/s) and model FLOPs
 * utilisation of the GPU backend on a configuration given by flags.
 *
 * Default on a GPU: the GPT-2-small shape (d_model 768, 12 layers, 12 heads,
 * ffn 2048, sequence 1024, batch 8; 85.3M parameters with the byte
 * vocabulary); the target is 35% bf16 MFU on an H200. Under the emulator a
 * tiny shape, and the times are CPU times that say nothing about a GPU.
 * MFU = FLOPs per token (model_flops_per_token: 6 per matmul parameter
 * + 12 L D T) x tokens/s over the device's bf16 peak (model_peak_tflops, or
 * --peak-tflops). First each student function the
 * step calls is screened once at the step's sizes against the CPU reference
 * (a wrong one: nothing is timed, and the JSON says "wrong" and why). Steps
 * are timed end to end (data upload, forward, backward, norm, AdamW) after
 * warm-up steps; the median step is reported. One more step, at a random
 * place among the timed ones, is audited instead: the student functions are
 * compared with the CPU reference on its own tensors (wrong there: no
 * figure, and the JSON says why). --json FILE writes
 * tokens_per_s and mfu for the grader.
 * --matmul and --attention pick the kernels (by default cuBLAS, or the tiled
 * kernel under the emulator, and the fused flash attention where the head
 * size allows); the table row names them. --profile 1 adds a table of where
 * a step's device time goes, by category.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cpu/model_ops.h"
#include "cuda/model_gpu.h"
#include "cuda/model_ops_gpu.h"
#include "error.h"
#include "gpu.h"
#include "half.h"
#include "json.h"
#include "lab.h"
#include "train/matmul_switch.h"
#ifndef COURSE_SIMT
#include "cuda/cublas_gemm.h"
#endif
#include "memory.h"
#include "model.h"
#include "rng.h"
#include "timer.h"

/* 0 if every lab-05 function is done, else a message naming the first that is not. */
static int student_functions_done(void) {
    float *f = gpu_malloc(8 * sizeof(float));
    uint16_t *h = gpu_malloc(5 * sizeof(uint16_t));
    gpu_memset(f, 0, 8 * sizeof(float));
    gpu_memset(h, 0, 5 * sizeof(uint16_t));
    const char *missing = NULL;
    if (rmsnorm_backward_gpu(f, f + 1, f + 2, f + 3, f + 4, f + 5, 1, 1) != LAB_OK) missing = "rmsnorm_backward_gpu";
    else if (attention_softmax_backward_gpu(f, f + 1, f + 2, 1, 1, 1.0f) != LAB_OK) missing = "attention_softmax_backward_gpu";
    else if (swiglu_backward_gpu(h, h + 1, h + 2, h + 3, h + 4, 1) != LAB_OK) missing = "swiglu_backward_gpu";
    else if (adamw_step_gpu(f, h, f + 1, f + 2, f + 3, 1, 0.0f, 0.9f, 0.95f, 1e-8f, 0.0f, 1, 1.0f) != LAB_OK)
        missing = "adamw_step_gpu";
    gpu_sync_check("lab 05 functions");
    gpu_free(f);
    gpu_free(h);
    if (missing) printf("bench: %s is not implemented yet (labs/05-single-gpu-training/train_ops.cu); nothing to time\n", missing);
    return missing ? -1 : 0;
}

/* ---- the student's functions at this run's shapes ------------------------------------ */

/* check.c tests each function at small sizes. A kernel can still be wrong at
 * the benchmark's: rows a fixed-size grid never reaches, an index that
 * overflows, a shortcut taken above some size; the timing would then be of
 * the wrong work. So before timing, each student function the timed step
 * calls runs once on random inputs of the step's own sizes and is compared
 * with the CPU reference. A gross screen (1e-3 of the largest value): the
 * numerics are check.c's job. AdamW's bf16 copy is compared exactly, with the
 * rounding of the master the kernel itself wrote. */

/* Uniform in [lo, hi) from a hash of (seed, index): the screen needs inputs
 * that differ from element to element, not statistical quality, and at 85M
 * parameters the course's generator would take seconds of the GPU's time. */
static float *rand_host(size_t n, float lo, float hi, uint64_t seed) {
    float *x = host_malloc(n * sizeof(float) + 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ULL ^ seed * 0xD1B54A32D192ED03ULL;
        z ^= z >> 29;
        z *= 0xBF58476D1CE4E5B9ULL;
        z ^= z >> 32;
        x[i] = lo + (hi - lo) * (float)(z >> 40) * 0x1p-24f;
    }
    return x;
}

static float *to_device(const float *h, size_t n) {
    float *d = gpu_malloc(n * sizeof(float) + 1);
    gpu_upload(d, h, n * sizeof(float));
    return d;
}

/* The call itself: not implemented, refused or faulted is a wrong result too. */
static int screen_call(int st, const char *fn, char *msg, size_t len) {
    char fault[256];
    if (st != LAB_OK) snprintf(msg, len, "%s returned %s", fn, lab_status_name(st));
    else if (gpu_sync_status(fault, sizeof fault) != GPU_DONE) snprintf(msg, len, "%s: %s", fn, fault);
    else return 0;
    return -1;
}

static int screen_rmsnorm(int N, int D, char *msg, size_t len) {
    const size_t ND = (size_t)N * D;
    float *x = rand_host(ND, -2.0f, 2.0f, 501), *w = rand_host((size_t)D, 0.5f, 1.5f, 502);
    float *dout = rand_host(ND, -1.0f, 1.0f, 503), *dinp = rand_host(ND, -1.0f, 1.0f, 504);
    float *dw = rand_host((size_t)D, -1.0f, 1.0f, 505);
    float *norm = host_malloc(ND * sizeof(float) + 1), *rstd = host_malloc((size_t)N * sizeof(float) + 1);
    rmsnorm_forward(norm, rstd, x, w, N, D, 1e-5f);
    float *d_x = to_device(x, ND), *d_w = to_device(w, (size_t)D), *d_dout = to_device(dout, ND);
    float *d_rstd = to_device(rstd, (size_t)N), *d_dinp = to_device(dinp, ND), *d_dw = to_device(dw, (size_t)D);
    rmsnorm_backward(dinp, dw, dout, x, w, rstd, N, D);
    char what[160];
    int bad = screen_call(rmsnorm_backward_gpu(d_dinp, d_dw, d_dout, d_x, d_w, d_rstd, N, D), "rmsnorm_backward_gpu",
                          msg, len);
    snprintf(what, sizeof what, "rmsnorm_backward_gpu dinp at this run's shape (N = %d rows, D = %d)", N, D);
    if (!bad) bad = model_gpu_screen_close(d_dinp, dinp, ND, what, msg, len);
    snprintf(what, sizeof what, "rmsnorm_backward_gpu dweight at this run's shape (N = %d rows, D = %d)", N, D);
    if (!bad) bad = model_gpu_screen_close(d_dw, dw, (size_t)D, what, msg, len);
    gpu_free(d_x); gpu_free(d_w); gpu_free(d_dout); gpu_free(d_rstd); gpu_free(d_dinp); gpu_free(d_dw);
    host_free(x); host_free(w); host_free(dout); host_free(dinp); host_free(dw); host_free(norm); host_free(rstd);
    return bad;
}

static int screen_swiglu(size_t n, char *msg, size_t len) {
    float *gate = rand_host(n, -8.0f, 8.0f, 511), *up = rand_host(n, -2.0f, 2.0f, 512);
    float *dout = rand_host(n, -1.0f, 1.0f, 513);
    float *dg = host_malloc(n * sizeof(float) + 1), *du = host_malloc(n * sizeof(float) + 1);
    /* rounded in place: the reference below sees what the kernel sees */
    uint16_t *d_gate = gpu_upload_bf16_rounded(gate, n), *d_up = gpu_upload_bf16_rounded(up, n);
    uint16_t *d_dout = gpu_upload_bf16_rounded(dout, n);
    swiglu_backward(dg, du, dout, gate, up, n);
    uint16_t *d_dg = gpu_malloc(n * sizeof(uint16_t)), *d_du = gpu_malloc(n * sizeof(uint16_t));
    gpu_memset(d_dg, 0xff, n * sizeof(uint16_t)); /* NaN: to be overwritten */
    gpu_memset(d_du, 0xff, n * sizeof(uint16_t));
    char what[160];
    int bad = screen_call(swiglu_backward_gpu(d_dg, d_du, d_dout, d_gate, d_up, n), "swiglu_backward_gpu", msg, len);
    snprintf(what, sizeof what, "swiglu_backward_gpu dgate at this run's size (n = %zu)", n);
    if (!bad) bad = model_gpu_screen_close_bf16(d_dg, dg, n, what, msg, len);
    snprintf(what, sizeof what, "swiglu_backward_gpu dup at this run's size (n = %zu)", n);
    if (!bad) bad = model_gpu_screen_close_bf16(d_du, du, n, what, msg, len);
    gpu_free(d_gate); gpu_free(d_up); gpu_free(d_dout); gpu_free(d_dg); gpu_free(d_du);
    host_free(gate); host_free(up); host_free(dout); host_free(dg); host_free(du);
    return bad;
}

/* Only with --attention naive: the fused kernels do their own softmax backward. */
static int screen_softmax(int BH, int T, char *msg, size_t len) {
    const size_t n = (size_t)BH * T * T;
    const float scale = 0.125f;
    /* Causal probabilities (rows sum to 1, zeros above the diagonal), and the reference. */
    float *P = rand_host(n, -4.0f, 4.0f, 521), *dP = rand_host(n, -1.0f, 1.0f, 522);
    float *want = host_malloc(n * sizeof(float) + 1);
    for (size_t r = 0; r < (size_t)BH * T; r++) {
        const int t = (int)(r % T);
        float *p = P + r * T, mx = -INFINITY, sum = 0.0f;
        const float *dp = dP + r * T;
        for (int u = 0; u <= t; u++) mx = fmaxf(mx, p[u]);
        for (int u = 0; u <= t; u++) sum += (p[u] = expf(p[u] - mx));
        double dot = 0.0;
        for (int u = 0; u < T; u++) {
            p[u] = u <= t ? p[u] / sum : 0.0f;
            dot += (double)p[u] * dp[u];
        }
        for (int u = 0; u < T; u++) want[r * T + u] = (float)(scale * (double)p[u] * (dp[u] - dot));
    }
    float *d_P = to_device(P, n), *d_dP = to_device(dP, n), *d_dS = to_device(dP, n);
    char what[160];
    int bad = screen_call(attention_softmax_backward_gpu(d_dS, d_P, d_dP, BH, T, scale),
                          "attention_softmax_backward_gpu", msg, len);
    snprintf(what, sizeof what, "attention_softmax_backward_gpu at this run's shape (BH = %d, T = %d)", BH, T);
    if (!bad) bad = model_gpu_screen_close(d_dS, want, n, what, msg, len);
    gpu_free(d_P); gpu_free(d_dP); gpu_free(d_dS);
    host_free(P); host_free(dP); host_free(want);
    return bad;
}

static int screen_adamw(size_t n, char *msg, size_t len) {
    const float lr = 1e-3f, b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.1f, gs = 0.5f;
    float *p = rand_host(n, -1.0f, 1.0f, 531), *g = rand_host(n, -0.1f, 0.1f, 532);
    float *m = rand_host(n, -0.01f, 0.01f, 533), *v = rand_host(n, 0.0f, 1e-4f, 534);
    float *d_p = to_device(p, n), *d_g = to_device(g, n), *d_m = to_device(m, n), *d_v = to_device(v, n);
    uint16_t *d_b = gpu_malloc(n * sizeof(uint16_t) + 2);
    gpu_memset(d_b, 0xff, n * sizeof(uint16_t)); /* NaN: to be overwritten */
    for (size_t i = 0; i < n; i++) g[i] *= gs; /* the clip factor, as the CPU applies it */
    adamw_update(p, g, m, v, n, lr, b1, b2, eps, wd, 3);
    char what[160];
    int bad = screen_call(adamw_step_gpu(d_p, d_b, d_g, d_m, d_v, n, lr, b1, b2, eps, wd, 3, gs), "adamw_step_gpu",
                          msg, len);
    snprintf(what, sizeof what, "adamw_step_gpu master weights at this run's size (n = %zu parameters)", n);
    if (!bad) bad = model_gpu_screen_close(d_p, p, n, what, msg, len);
    snprintf(what, sizeof what, "adamw_step_gpu first moment at this run's size (n = %zu parameters)", n);
    if (!bad) bad = model_gpu_screen_close(d_m, m, n, what, msg, len);
    snprintf(what, sizeof what, "adamw_step_gpu second moment at this run's size (n = %zu parameters)", n);
    if (!bad) bad = model_gpu_screen_close(d_v, v, n, what, msg, len);
    /* bit for bit: the device's own master rounded to nearest-even bf16 (model_gpu_screen_bf16_copy) */
    snprintf(what, sizeof what, "adamw_step_gpu bf16 copy at this run's size (n = %zu parameters)", n);
    if (!bad) bad = model_gpu_screen_bf16_copy(d_b, d_p, n, what, msg, len);
    gpu_free(d_p); gpu_free(d_g); gpu_free(d_m); gpu_free(d_v); gpu_free(d_b);
    host_free(p); host_free(g); host_free(m); host_free(v);
    return bad;
}

/* Every student function the timed step calls, at its sizes; 0, or -1 with msg. */
static int screen_student_ops(const model_config_t *cfg, int batch, int seq, model_attn_t attn, size_t n_params,
                              char *msg, size_t len) {
    const int N = batch * seq;
    if (screen_rmsnorm(N, cfg->d_model, msg, len)) return -1;
    if (screen_swiglu((size_t)N * cfg->d_ff, msg, len)) return -1;
    if (attn == MODEL_ATTN_NAIVE && screen_softmax(batch * cfg->n_heads, seq, msg, len)) return -1;
    return screen_adamw(n_params, msg, len);
}

/* The benchmark found a student function wrong: say so, and write the
 * grader's JSON with the reason; returns the exit status. */
static int report_wrong(FILE *jf, const char *dev, const char *msg) {
    if (jf) {
        fprintf(jf, "{\"device\": ");
        course_json_string(jf, dev);
        fprintf(jf, ", \"status\": \"wrong\", \"message\": ");
        course_json_string(jf, msg);
        fprintf(jf, ", \"tokens_per_s\": null, \"mfu\": null}\n");
        fclose(jf);
    }
    return 1;
}

/* A number that differs from run to run (where the audited step falls). */
static uint64_t run_entropy(void) {
    uint64_t x = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&x, sizeof x, 1, f) != 1) x = (uint64_t)(wall_time() * 1e9) ^ ((uint64_t)getpid() << 32);
    if (f) fclose(f);
    return x;
}

/* One training step as the train program takes it: forward, backward, clipping factor, AdamW. */
static double train_step(model_gpu_t *m, const int *in, const int *tg, int s) {
    double loss = model_gpu_forward(m, in, tg);
    model_gpu_zero_grad(m);
    model_gpu_backward(m, 1.0f);
    double norm = model_gpu_grad_norm(m);
    model_gpu_adamw(m, 1e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, s + 1, norm > 1.0 ? (float)(1.0 / norm) : 1.0f);
    return loss;
}

/* A device-to-device copy of 256 MiB, the median of 5: the bandwidth a
 * kernel that reads and writes once can hope for, measured in this run
 * (bytes read plus bytes written per second). */
static double copy_bandwidth(void) {
    const size_t bytes = (size_t)256 << 20;
    void *a = gpu_malloc(bytes), *b = gpu_malloc(bytes);
    gpu_memset(a, 0, bytes);
    gpu_timer_t t;
    gpu_timer_init(&t, NULL);
    double ms[5];
    for (int i = 0; i < 5; i++) {
        gpu_timer_start(&t);
        gpu_copy(b, a, bytes);
        ms[i] = gpu_timer_stop_ms(&t);
    }
    gpu_timer_free(&t);
    gpu_free(a);
    gpu_free(b);
    return gbps(2.0 * bytes, 1e-3 * median(ms, 5)) * 1e-3; /* TB/s */
}

/* "%8.3g" of x, or a dash where it is not known. */
static const char *fig(char *buf, size_t len, double x, int known) {
    if (known) snprintf(buf, len, "%8.3g", x);
    else snprintf(buf, len, "%8s", "-");
    return buf;
}

/* One more step with every op timed by category: where the device time goes,
 * and for each category the rate it reached: TB/s of the bytes its ops must
 * move at the least (inputs read once, outputs written once), against a copy
 * in this run, and TFLOP/s where it computes (matmuls; attention over the
 * causal triangle). An element-wise category far below the copy's TB/s moves
 * more than it must or does not keep enough bytes in flight. */
static void print_profile(model_gpu_t *m, const int *in, const int *tg, int s, double step_ms) {
    gpu_sync_check("bench profile");
    const double t0 = wall_time();
    model_gpu_profile_start(m);
    train_step(m, in, tg, s);
    model_gpu_profile_stop(m);
    gpu_sync_check("bench profile");
    const double wall_ms = 1e3 * (wall_time() - t0);
    double sum = 0.0;
    for (int c = 0; c < MODEL_PROF_COUNT; c++) sum += m->prof->ms[c];
    printf("# where a step's device time goes (one profiled step, every op waited for: %.2f ms of device time,\n"
           "# %.2f ms wall; an unprofiled step took %.2f ms)\n", sum, wall_ms, step_ms);
    const double copy = copy_bandwidth();
    printf("#   %-22s %10s %7s %7s %8s %8s %8s\n", "category", "ms", "%", "ops", "GB", "TB/s", "TFLOP/s");
    double bytes = 0.0, bytes_ms = 0.0;
    for (int c = 0; c < MODEL_PROF_COUNT; c++) {
        const double ms = m->prof->ms[c], gb = 1e-9 * m->prof->bytes[c], tf = 1e-12 * m->prof->flops[c];
        char b1[16], b2[16], b3[16];
        printf("#   %-22s %10.3f %7.1f %7ld %s %s %s\n", model_gpu_profile_name(c), ms,
               sum > 0 ? 100.0 * ms / sum : 0.0, m->prof->calls[c], fig(b1, sizeof b1, gb, gb > 0),
               fig(b2, sizeof b2, gb / ms, gb > 0 && ms > 0), fig(b3, sizeof b3, 1e3 * tf / ms, tf > 0 && ms > 0));
        if (c != MODEL_PROF_MATMUL && c != MODEL_PROF_ATTENTION && c != MODEL_PROF_ATTENTION_BWD && gb > 0) {
            bytes += gb;
            bytes_ms += ms;
        }
    }
    printf("# a device-to-device copy in this run: %.2f TB/s. The element-wise categories (all but matmul and\n"
           "# attention) must move %.2f GB: %.2f ms at that rate; they took %.2f ms (%.0f%% of the copy's rate)\n",
           copy, bytes, bytes / copy, bytes_ms, bytes_ms > 0 ? 100.0 * (bytes / copy) / bytes_ms : 0.0);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
#ifdef COURSE_SIMT
    int d_model = 32, layers = 2, heads = 2, ffn = 64, seq = 32, batch = 4, steps = 3, warmup = 1;
#else
    int d_model = 768, layers = 12, heads = 12, ffn = 2048, seq = 1024, batch = 8, steps = 10, warmup = 3;
#endif
    const char *matmul = "auto", *attention = "auto";
    double peak_arg = 0.0;
    const char *json = NULL;
    int profile = 0;
    const arg_spec_t specs[] = {
        {"d-model", ARG_INT, &d_model, "width of the residual stream", 2, 16384},
        {"layers", ARG_INT, &layers, "transformer blocks", 1, 256},
        {"heads", ARG_INT, &heads, "attention heads", 1, 16384},
        {"ffn", ARG_INT, &ffn, "SwiGLU hidden width", 1, 65536},
        {"seq", ARG_INT, &seq, "tokens per sequence", 1, 65536},
        {"batch", ARG_INT, &batch, "sequences per step", 1, 1 << 20},
        {"steps", ARG_INT, &steps, "timed steps (median reported)", 1, 100000},
        {"warmup", ARG_INT, &warmup, "untimed steps first", 0, 100000},
        {"matmul", ARG_STRING, &matmul, "matmul kernel: auto (cuBLAS on a GPU, tiled on the emulator), " TRAIN_MATMUL_NAMES " (lab 04)", 1, 0},
        {"attention", ARG_STRING, &attention, "auto (flash where the head size allows), naive (T x T stored; your softmax backward) or flash", 1, 0},
        {"peak-tflops", ARG_DOUBLE, &peak_arg, "MFU denominator (0: the device's bf16 peak by name)", 0, 1e6},
        {"profile", ARG_INT, &profile, "1: one more step with every op timed by category (matmul, attention, ...)", 0, 1},
        {"json", ARG_STRING, &json, "also write {tokens_per_s, mfu, ...} to this file", 1, 0},
    };
    const args_t args = {"bench", "lab 05: training tokens/s and MFU of the GPU backend", specs,
                         (int)(sizeof specs / sizeof specs[0])};
    args_parse_or_exit(&args, argc, argv);
    if (!gpu_available()) {
        printf("bench: no GPU here; build with TARGET=emu to run on the CPU emulator\n");
        return 0;
    }
    model_config_t cfg = model_config_default();
    cfg.d_model = d_model;
    cfg.n_layers = layers;
    cfg.n_heads = heads;
    cfg.d_ff = ffn;
    cfg.max_seq = seq;
    char err[512];
    if (model_config_validate(&cfg, err, sizeof err)) {
        fprintf(stderr, "bench: %s\n", err);
        return 2;
    }
#ifdef COURSE_SIMT
    /* The GPU's shape on the emulator runs for hours with nothing printed: say so before it starts. */
    char how_long[48];
    const double step_flops = model_flops_per_token(&cfg, seq) * batch * seq;
    if (gpu_emu_too_slow(step_flops * (warmup + steps + 1), 60, how_long, sizeof how_long))
        fprintf(stderr, "bench: warning: on the emulator these %d steps of %d x %d tokens take %s (%.3g GFLOP "
                "each at about %.1f GFLOP/s) and nothing prints until they end; the emulator's default is a "
                "tiny shape, and a GPU build times this one\n",
                warmup + steps + 1, batch, seq, how_long, step_flops / 1e9, GPU_EMU_FLOPS / 1e9);
#endif
    if (student_functions_done()) return 1;
    if (train_select_matmul(matmul, err, sizeof err)) {
        fprintf(stderr, "bench: %s\n", err);
        return 2;
    }
    char kernel[32];
    snprintf(kernel, sizeof kernel, "%s", strcmp(matmul, "auto") ? matmul :
#ifdef COURSE_SIMT
             "tiled"
#else
             "cublas"
#endif
    );
    char dev[128];
    gpu_device_name(dev, sizeof dev);
    const double peak = peak_arg > 0 ? peak_arg : model_peak_tflops(dev, "bf16");
    const int flash_ok = model_gpu_flash_supported(&cfg, batch);
    model_attn_t attn = flash_ok ? MODEL_ATTN_FLASH : MODEL_ATTN_NAIVE;
    if (!strcmp(attention, "naive")) attn = MODEL_ATTN_NAIVE;
    else if (!strcmp(attention, "flash") && flash_ok) attn = MODEL_ATTN_FLASH;
    else if (strcmp(attention, "auto")) {
        fprintf(stderr, "bench: --attention %s: %s\n", attention,
                strcmp(attention, "flash") ? "pass auto, naive or flash"
                                           : "the fused kernels need a head size of 16, 32, 64 or 128 that this "
                                             "GPU's shared memory allows; change --heads");
        return 2;
    }
    const char *attn_name = attn == MODEL_ATTN_FLASH ? "flash" : "naive";
    /* Opened before anything runs: a path that cannot be written costs no run. */
    FILE *jf = NULL;
    char jerr[256 + PATH_MAX];
    if (json && !(jf = course_create_output(json, "--json", jerr, sizeof jerr))) {
        fprintf(stderr, "bench: %s\n", jerr);
        return 2;
    }
    model_gpu_t m;
    model_gpu_init_attn(&m, &cfg, batch, seq, 1, attn);
    char wrong[1024];
    if (screen_student_ops(&cfg, batch, seq, attn, m.n_params, wrong, sizeof wrong)) {
        /* Not timed: the figure would be of the wrong work. The JSON says why, for the grader. */
        printf("bench: wrong at this run's sizes, so not timed: %s\n"
               "bench: if make check LAB=05 passes, the difference is the size: look for rows or elements "
               "the launch does not reach at this one\n",
               wrong);
        model_gpu_free(&m);
        return report_wrong(jf, dev, wrong);
    }
    const int N = batch * seq;
    int *in = host_malloc((size_t)N * sizeof(int)), *tg = host_malloc((size_t)N * sizeof(int));
    rng_t r;
    rng_init(&r, 7);
    for (int i = 0; i < N; i++) {
        in[i] = (int)rng_below(&r, 256);
        tg[i] = (int)rng_below(&r, 256);
    }
    printf("# device: %s; d_model %d, %d layers, %d heads, ffn %d, seq %d, batch %d; %zu parameters; %.2f GB on the device\n",
           dev, d_model, layers, heads, ffn, seq, batch, m.n_params, model_gpu_bytes(&m) / 1e9);
#ifndef COURSE_SIMT
    char blas[64];
    cublas_version(blas, sizeof blas); /* MFU depends on it wherever cuBLAS does the matmuls */
    printf("# matmuls: %s; %s loaded\n", kernel, blas);
#else
    printf("# emulator: the times below are CPU times of the emulated kernels, not GPU times\n");
#endif
    /* One step more than the timed ones, placed among them at random (a new
     * place each run), is audited instead of timed: each student function it
     * calls is compared with the CPU reference on that step's own tensors
     * (model_gpu_audit). A function that is right when screened but does
     * less once training is under way (skips a repeated call, say) is found
     * there, and the run gives no figure. Never the first step of the run:
     * a call repeated from an earlier step must be possible. */
    const int first = warmup > 0 ? warmup : 1;
    const int audit_at = first + (int)(run_entropy() % (uint64_t)(warmup + steps + 1 - first));
    double *t = host_malloc((size_t)steps * sizeof(double)), loss = 0.0;
    int timed = 0;
    for (int s = 0; s < warmup + steps + 1; s++) {
        gpu_sync_check("bench step");
        if (s == audit_at) {
            model_gpu_audit(&m, 1);
            loss = train_step(&m, in, tg, s);
            model_gpu_audit(&m, 0);
            if (model_gpu_audit_failure(&m)) {
                snprintf(wrong, sizeof wrong, "%s (step %d of the run)", model_gpu_audit_failure(&m), s + 1);
                printf("bench: wrong in an audited training step, so no figure: %s\n", wrong);
                host_free(t); host_free(in); host_free(tg);
                model_gpu_free(&m);
                return report_wrong(jf, dev, wrong);
            }
            continue;
        }
        double t0 = wall_time();
        loss = train_step(&m, in, tg, s);
        gpu_sync_check("bench step");
        if (s >= warmup) t[timed++] = wall_time() - t0;
    }
    qsort(t, (size_t)steps, sizeof(double), cmp_double);
    const double step_s = t[steps / 2], tps = N / step_s;
    const double flops = model_flops_per_token(&cfg, seq);
    const double mfu = peak > 0 ? flops * tps / (peak * 1e12) : NAN;
    if (profile) print_profile(&m, in, tg, warmup + steps + 1, 1e3 * step_s);
    /* The notes first: the table row is the last line, the one summaries quote. */
    if (peak <= 0) printf("# MFU: no bf16 peak known for '%s'; pass --peak-tflops\n", dev);
    else printf("# MFU against a bf16 peak of %.0f TFLOP/s; %.3g GFLOP per token; median of %d steps\n", peak,
                flops / 1e9, steps);
    char variant[48];
    snprintf(variant, sizeof variant, "%s+%s", kernel, attn_name);
    printf("%-16s %12s %14s %12s %10s %10s\n", "matmul+attn", "step (ms)", "tokens/s", "TFLOP/s", "MFU (%)", "loss");
    char mfu_text[16] = "n/a"; /* no peak known: there is no MFU to print */
    if (!isnan(mfu)) snprintf(mfu_text, sizeof mfu_text, "%.2f", 100.0 * mfu);
    printf("%-16s %12.2f %14.1f %12.2f %10s %10.4f\n", variant, 1e3 * step_s, tps, flops * tps / 1e12, mfu_text,
           loss);
    if (jf) {
        fprintf(jf, "{\"device\": ");
        course_json_string(jf, dev);
        fprintf(jf, ", \"status\": \"ok\", \"d_model\": %d, \"layers\": %d, \"seq\": %d, \"batch\": %d, "
                    "\"matmul\": \"%s\", \"attention\": \"%s\", \"step_ms\": %.4f, \"tokens_per_s\": %.2f, "
                    "\"mfu\": ",
                d_model, layers, seq, batch, kernel, attn_name, 1e3 * step_s, tps);
        if (isnan(mfu)) fprintf(jf, "null}\n");
        else fprintf(jf, "%.5f}\n", mfu);
        fclose(jf);
    }
    host_free(t);
    host_free(in);
    host_free(tg);
    model_gpu_free(&m);
    return 0;
}
