/*
 * SIMT emulator: stand-in for the toolkit's cuda.h. The emulator has no
 * driver API; this header only brings in the runtime API and version macros,
 * so files that include <cuda.h> for CUDA_VERSION still build.
 */
#ifndef SIMT_CUDA_H
#define SIMT_CUDA_H
#include "cuda_runtime_api.h"
#endif
