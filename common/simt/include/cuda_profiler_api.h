/*
 * SIMT emulator: cuda_profiler_api.h. cudaProfilerStart and cudaProfilerStop
 * mark the part of a program a profiler (nsys, ncu) records; there is no
 * profiler here, so both do nothing.
 */
#ifndef SIMT_CUDA_PROFILER_API_H
#define SIMT_CUDA_PROFILER_API_H

#include "cuda_runtime_api.h"

static inline cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
static inline cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

#endif
