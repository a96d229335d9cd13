/*
 * SIMT emulator: math_functions.h. With nvcc, cuda_runtime.h includes it and
 * every .cu file sees what it declares; older sources include it by name.
 * Here those declarations are in cuda_runtime.h. nvcc warns that the file
 * is internal (an error under -Werror), and so does this one.
 */
#ifndef SIMT_MATH_FUNCTIONS_H
#define SIMT_MATH_FUNCTIONS_H
#warning "math_functions.h is an internal header of CUDA's, not to be included directly: include cuda_runtime.h (nvcc warns so too)"
#ifdef __cplusplus
#include "cuda_runtime.h"
#else
#include "cuda_runtime_api.h"
#endif
#endif
