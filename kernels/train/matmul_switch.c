/*
 * The --matmul switch (matmul_switch.h). The lab-04 kernels are the
 * student's functions (kernels/matmul_ladder.h declares them): the lab-05
 * build links the lab-04 objects of the same source tree.
 */
#include "matmul_switch.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cuda/model_ops_gpu.h"
#include "gpu.h"
#include "lab.h"
#include "matmul_ladder.h"

static const struct {
    const char *name;
    gpu_gemm_nn_fn fn;
} lab04[] = {{"wmma", matmul_wmma}, {"mma", matmul_mma}, {"wgmma", matmul_wgmma}};

int train_select_matmul(const char *name, char *err, size_t errlen) {
    char dev[128];
    gpu_device_name(dev, sizeof dev);
    const int emulated = strstr(dev, "SIMT") != NULL;
    if (!name || !strcmp(name, "auto")) name = emulated ? "tiled" : "cublas";
    if (!strcmp(name, "cublas")) {
        if (emulated) {
            snprintf(err, errlen, "--matmul cublas: the emulator build has no cuBLAS; pass --matmul tiled "
                     "(its default) or a lab-04 kernel (wmma, mma, wgmma)");
            return -1;
        }
        gpu_gemm_use_custom(NULL, NULL);
        gpu_gemm_use_tiled(0);
        return 0;
    }
    if (!strcmp(name, "tiled")) {
        gpu_gemm_use_tiled(1);
        return 0;
    }
    for (size_t i = 0; i < sizeof lab04 / sizeof lab04[0]; i++)
        if (!strcmp(name, lab04[i].name)) {
            /* Try it once on a 1 x 1 x 1 product, so a step that is still a TODO, or wgmma
             * off a Hopper GPU, is refused here rather than at the model's first matmul. */
            uint16_t *ab = gpu_malloc(2 * sizeof(uint16_t));
            float *c = gpu_malloc(sizeof(float));
            gpu_memset(ab, 0, 2 * sizeof(uint16_t));
            const int st = lab04[i].fn(1, 1, 1, 1.0f, ab, ab + 1, 0.0f, c);
            gpu_sync_check("--matmul probe");
            gpu_free(ab);
            gpu_free(c);
            if (st != LAB_OK) {
                snprintf(err, errlen, "--matmul %s: your lab-04 %s kernel returned '%s'%s; pass --matmul %s",
                         name, name, lab_status_name(st),
                         st == LAB_NEEDS_HOPPER ? " (it runs on an H100/H200 with an sm_90a build, or the emulator)" : "",
                         emulated ? "tiled" : "cublas");
                return -1;
            }
            gpu_gemm_use_custom(lab04[i].fn, lab04[i].name);
            return 0;
        }
    snprintf(err, errlen, "--matmul %s: unknown kernel; pass one of %s", name, TRAIN_MATMUL_NAMES);
    return -1;
}
