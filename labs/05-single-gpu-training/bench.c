/*
 * Lab 05 benchmark: training throughput (tokens/s) and model FLOPs
 * utilisation of the GPU backend on a configuration given by flags.
 *
 * Default on a GPU: the GPT-2-small shape (d_model 768, 12 layers, 12 heads,
 * ffn 2048, sequence 1024, batch 8; 85.3M parameters with the byte
 * vocabulary); the target is 35% bf16 MFU on an H200. Under the emulator a tiny shape, and the times are CPU times that say
 * nothing about a GPU. MFU = FLOPs per token (model_flops_per_token: 6 per
 * matmul parameter + 12 L D T) x tokens/s over the device's bf16 peak
 * (model_peak_tflops, or --peak-tflops). Steps are timed end to end (data
 * upload, forward, backward, norm, AdamW) after warm-up steps; the median
 * step is reported. --json FILE writes tokens_per_s and mfu for the grader.
 * --matmul and --attention pick the kernels (by default cuBLAS, or the tiled
 * kernel under the emulator, and the fused flash attention where the head
 * size allows); the table row names them. --profile 1 adds a table of where
 * a step's device time goes, by category.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cuda/model_gpu.h"
#include "cuda/model_ops_gpu.h"
#include "gpu.h"
#include "lab.h"
#include "train/matmul_switch.h"
#include "memory.h"
#include "model.h"
#include "rng.h"
#include "timer.h"

/* 0 if every lab-05 function is done, else a message naming the first that is not. */
static int student_functions_done(void) {
    float *f = gpu_malloc(8 * sizeof(float));
    uint16_t *h = gpu_malloc(2 * sizeof(uint16_t));
    gpu_memset(f, 0, 8 * sizeof(float));
    const char *missing = NULL;
    if (rmsnorm_backward_gpu(f, f + 1, f + 2, f + 3, f + 4, f + 5, 1, 1) != LAB_OK) missing = "rmsnorm_backward_gpu";
    else if (attention_softmax_backward_gpu(f, f + 1, f + 2, 1, 1, 1.0f) != LAB_OK) missing = "attention_softmax_backward_gpu";
    else if (swiglu_backward_gpu(f, f + 1, f + 2, f + 3, f + 4, 1) != LAB_OK) missing = "swiglu_backward_gpu";
    else if (adamw_step_gpu(f, h, f + 1, f + 2, f + 3, 1, 0.0f, 0.9f, 0.95f, 1e-8f, 0.0f, 1, 1.0f) != LAB_OK)
        missing = "adamw_step_gpu";
    gpu_sync_check("lab 05 functions");
    gpu_free(f);
    gpu_free(h);
    if (missing) printf("bench: %s is not implemented yet (labs/05-single-gpu-training/train_ops.cu); nothing to time\n", missing);
    return missing ? -1 : 0;
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

/* One more step with every op timed by category: where the device time goes. */
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
    printf("#   %-22s %10s %7s %7s\n", "category", "ms", "%", "ops");
    for (int c = 0; c < MODEL_PROF_COUNT; c++)
        printf("#   %-22s %10.3f %7.1f %7ld\n", model_gpu_profile_name(c), m->prof->ms[c],
               sum > 0 ? 100.0 * m->prof->ms[c] / sum : 0.0, m->prof->calls[c]);
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
    model_gpu_t m;
    model_gpu_init_attn(&m, &cfg, batch, seq, 1, attn);
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
#ifdef COURSE_SIMT
    printf("# emulator: the times below are CPU times of the emulated kernels, not GPU times\n");
#endif
    double *t = host_malloc((size_t)steps * sizeof(double)), loss = 0.0;
    for (int s = 0; s < warmup + steps; s++) {
        gpu_sync_check("bench step");
        double t0 = wall_time();
        loss = train_step(&m, in, tg, s);
        gpu_sync_check("bench step");
        if (s >= warmup) t[s - warmup] = wall_time() - t0;
    }
    qsort(t, (size_t)steps, sizeof(double), cmp_double);
    const double step_s = t[steps / 2], tps = N / step_s;
    const double flops = model_flops_per_token(&cfg, seq);
    const double mfu = peak > 0 ? flops * tps / (peak * 1e12) : NAN;
    if (profile) print_profile(&m, in, tg, warmup + steps, 1e3 * step_s);
    /* The notes first: the table row is the last line, the one summaries quote. */
    if (peak <= 0) printf("# MFU: no bf16 peak known for '%s'; pass --peak-tflops\n", dev);
    else printf("# MFU against a bf16 peak of %.0f TFLOP/s; %.3g GFLOP per token; median of %d steps\n", peak,
                flops / 1e9, steps);
    char variant[48];
    snprintf(variant, sizeof variant, "%s+%s", kernel, attn_name);
    printf("%-16s %12s %14s %12s %10s %10s\n", "matmul+attn", "step (ms)", "tokens/s", "TFLOP/s", "MFU (%)", "loss");
    printf("%-16s %12.2f %14.1f %12.2f %10.2f %10.4f\n", variant, 1e3 * step_s, tps,
           flops * tps / 1e12, 100.0 * mfu, loss);
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            fprintf(stderr, "bench: --json %s: cannot create the file\n", json);
            return 1;
        }
        fprintf(f, "{\"device\": \"%s\", \"d_model\": %d, \"layers\": %d, \"seq\": %d, \"batch\": %d, "
                   "\"matmul\": \"%s\", \"attention\": \"%s\", \"step_ms\": %.4f, \"tokens_per_s\": %.2f, "
                   "\"mfu\": ",
                dev, d_model, layers, seq, batch, kernel, attn_name, 1e3 * step_s, tps);
        if (isnan(mfu)) fprintf(f, "null}\n");
        else fprintf(f, "%.5f}\n", mfu);
        fclose(f);
    }
    host_free(t);
    host_free(in);
    host_free(tg);
    model_gpu_free(&m);
    return 0;
}
