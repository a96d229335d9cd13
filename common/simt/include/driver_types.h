/*
 * SIMT emulator: driver_types.h. The toolkit's holds the runtime API's
 * types (cudaError_t, cudaStream_t, cudaMemcpyKind, ...); here they are in
 * cuda_runtime_api.h, plain C like this file.
 */
#ifndef SIMT_DRIVER_TYPES_H
#define SIMT_DRIVER_TYPES_H
#include "cuda_runtime_api.h"
#endif
