/*
 * nccl.h as a C file saw it in NCCL 2.12, built on the installed one: no
 * ncclGetLastError (2.13) and no ncclInProgress (2.14), and, as before 2.19,
 * no ncclBfloat16 in C. comm.mk compiles comm.c once more against this
 * header, so the build fails if comm.c or NCCL_CHECK uses those names
 * without asking NCCL_VERSION_CODE first.
 */
#include_next <nccl.h>

#undef NCCL_VERSION_CODE
#define NCCL_VERSION_CODE NCCL_VERSION(2, 12, 12)
#define ncclGetLastError ncclGetLastError_is_undeclared_before_NCCL_2_13
#define ncclInProgress ncclInProgress_is_undeclared_before_NCCL_2_14
#define ncclBfloat16 ncclBfloat16_is_undeclared_in_C_before_NCCL_2_19
