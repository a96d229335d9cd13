/*
 * nccl.h as a C file saw it in NCCL 2.10 to 2.18, built on the installed one.
 *
 * Those headers declared ncclBfloat16 only `#if defined(__CUDA_BF16_TYPES_EXIST__)`,
 * a macro that cuda_bf16.h defines for C++ only, so in C (comm.c is C, built
 * by mpicc) the name did not exist. comm.mk compiles comm.c once more against
 * this header, so the build fails if comm.c names ncclBfloat16 again.
 */
#include_next <nccl.h>

#define ncclBfloat16 ncclBfloat16_is_undeclared_in_C_before_NCCL_2_19
