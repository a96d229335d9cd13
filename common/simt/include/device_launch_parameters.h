/*
 * SIMT emulator: threadIdx, blockIdx, blockDim, gridDim and warpSize.
 * They are defined in cuda_runtime.h, which every .cu file sees; this file
 * exists because some sources include it by name.
 */
#ifndef SIMT_DEVICE_LAUNCH_PARAMETERS_H
#define SIMT_DEVICE_LAUNCH_PARAMETERS_H
#include "cuda_runtime.h"
#endif
