/*
 * The lab-05 GPU backend behind the training loop (trainer.h): adapts
 * model_gpu.h to train_backend_t. Linked only into the per-target train
 * programs (build/<target>/<src>/05-single-gpu-training/train), with the
 * student's (or the solution's) train_ops.cu and the target's kernels.
 */
#include "trainer_gpu.h"

#include <stdio.h>
#include <string.h>

#include "cuda/model_gpu.h"
#include "cuda/model_ops_gpu.h"
#include "gpu.h"
#include "memory.h"
#include "model.h"

static double g_forward(void *m, const int *in, const int *tg) { return model_gpu_forward(m, in, tg); }
static void g_zero_grad(void *m) { model_gpu_zero_grad(m); }
static void g_backward(void *m, float scale) { model_gpu_backward(m, scale); }
static double g_grad_norm(void *m) { return model_gpu_grad_norm(m); }
static void g_step(void *m, double gnorm, double clip, float lr, float b1, float b2, float eps, float wd,
                   long t) {
    /* Clipping is a factor folded into the AdamW kernel (the CPU scales the gradients first: same products). */
    float scale = (clip > 0.0 && gnorm > clip) ? (float)(clip / gnorm) : 1.0f;
    model_gpu_adamw(m, lr, b1, b2, eps, wd, t, scale);
    /* The update is queued, not done: wait, so that the step's time (tokens/s,
     * MFU) includes it, and an eval that follows does not absorb it. */
    gpu_sync_check("the AdamW step");
}
static void g_state(void *mp, float **p, float **am, float **av) {
    model_gpu_t *m = mp;
    model_gpu_download_state(m);
    *p = m->host_params;
    *am = m->host_m;
    *av = m->host_v;
}
static void g_state_loaded(void *m) { model_gpu_upload_state(m); }
/* -1: auto; else a model_attn_t. */
static int attention_choice = -1;

int train_gpu_set_attention(const char *name, char *err, size_t errlen) {
    if (!strcmp(name, "auto")) attention_choice = -1;
    else if (!strcmp(name, "naive")) attention_choice = MODEL_ATTN_NAIVE;
    else if (!strcmp(name, "flash")) attention_choice = MODEL_ATTN_FLASH;
    else {
        snprintf(err, errlen, "--attention %s: pass auto, naive or flash", name);
        return -1;
    }
    return 0;
}

static size_t g_bytes(void *m) { return model_gpu_bytes(m); }
static size_t g_device_used(void *m) {
    (void)m;
    return gpu_memory_used();
}
static void g_destroy(void *m) {
    model_gpu_free(m);
    host_free(m);
}

int train_gpu_backend_open(train_backend_t *b, const char *name, const model_config_t *cfg, int B, int T,
                           uint64_t seed, char *err, size_t errlen) {
    if (!gpu_available()) {
        snprintf(err, errlen, "--backend %s: no GPU is visible (nvidia-smi); on the CPU run the emulator build "
                 "with --backend emu: make check LAB=05 TARGET=emu builds "
                 "build/emu/labs/05-single-gpu-training/train (your kernels; solutions/ for the reference ones)",
                 name);
        return -1;
    }
    char dev[128];
    gpu_device_name(dev, sizeof dev);
    const int emulated = strstr(dev, "SIMT") != NULL;
    if (emulated != !strcmp(name, "emu")) {
        snprintf(err, errlen, "--backend %s: this program is the %s build; pass --backend %s or run the "
                 "%s build of the lab-05 train program", name, emulated ? "emulator" : "GPU",
                 emulated ? "emu" : "cuda", emulated ? "GPU" : "emulator");
        return -1;
    }
    /* A GPU's shape on the emulator runs for hours with nothing printed: say so before it starts. */
    char how_long[48];
    if (emulated && gpu_emu_too_slow(model_flops_per_token(cfg, T) * B * T, 60, how_long, sizeof how_long))
        fprintf(stderr, "train: warning: on the emulator each forward and backward of %d x %d tokens takes %s "
                "(%.3g GFLOP at about %.1f GFLOP/s) and nothing prints until the first step ends; the emulator is "
                "for small shapes like the default (d_model 64, 2 layers, seq 64), a GPU build for this one\n",
                B, T, how_long, model_flops_per_token(cfg, T) * B * T / 1e9, GPU_EMU_FLOPS / 1e9);
    const int flash_ok = model_gpu_flash_supported(cfg, B);
    if (attention_choice == MODEL_ATTN_FLASH && !flash_ok) {
        snprintf(err, errlen, "--attention flash: the fused kernels need a head size (--d-model / --heads = %d) "
                 "of 16, 32, 64 or 128 that this GPU's shared memory allows, and batch x heads <= 65535; "
                 "change --heads or pass --attention naive", cfg->d_model / cfg->n_heads);
        return -1;
    }
    const model_attn_t attn = attention_choice >= 0 ? (model_attn_t)attention_choice
                                                    : flash_ok ? MODEL_ATTN_FLASH : MODEL_ATTN_NAIVE;
    model_gpu_t *m = host_malloc(sizeof *m);
    model_gpu_init_attn(m, cfg, B, T, seed, attn);
    memset(b, 0, sizeof *b);
    b->model = m;
    b->n_params = m->n_params;
    snprintf(b->device, sizeof b->device, "%s", dev);
    b->peak_tflops = model_peak_tflops(dev, "bf16");
    /* Only the emulator runs on this CPU; a GPU missing from the table has no MFU (--peak-tflops gives one). */
    b->measure_cpu_peak = emulated;
    /* What a checkpoint records, so that a resume computes the same way: the choices as
     * resolved here ("auto" is flash or naive by head size, cuBLAS or tiled by build). */
    b->precision = "bf16 mixed";
    b->attention = attn == MODEL_ATTN_FLASH ? "flash" : "naive";
    b->matmul = gpu_gemm_kernel_name();
    gpu_gemm_library(b->library, sizeof b->library);
    b->forward = g_forward;
    b->zero_grad = g_zero_grad;
    b->backward = g_backward;
    b->grad_norm = g_grad_norm;
    b->step = g_step;
    b->state = g_state;
    b->state_loaded = g_state_loaded;
    b->bytes = g_bytes;
    b->device_used = emulated ? NULL : g_device_used; /* the emulator's "device" is the host: RSS says it */
    b->destroy = g_destroy;
    return 0;
}
