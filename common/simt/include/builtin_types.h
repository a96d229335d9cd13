/*
 * SIMT emulator: builtin_types.h. The toolkit's gathers the runtime API's
 * types and the vector types (cudaError_t, dim3, float4, ...); here they
 * are in cuda_runtime_api.h, plain C like this file.
 */
#ifndef SIMT_BUILTIN_TYPES_H
#define SIMT_BUILTIN_TYPES_H
#include "cuda_runtime_api.h"
#endif
