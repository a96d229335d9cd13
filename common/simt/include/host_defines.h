/*
 * SIMT emulator: host_defines.h. With nvcc, cuda_runtime.h includes it and
 * every .cu file sees what it declares; older sources include it by name.
 * Here those declarations are in cuda_runtime.h. nvcc warns that the file
 * is internal (an error under -Werror), and so does this one.
 */
#ifndef SIMT_HOST_DEFINES_H
#define SIMT_HOST_DEFINES_H
#warning "host_defines.h is an internal header of CUDA's, not to be included directly: include cuda_runtime.h (nvcc warns so too)"
#ifdef __cplusplus
#include "cuda_runtime.h"
#else
#include "cuda_runtime_api.h"
#endif
#endif
