/*
 * SIMT emulator: stand-in for the toolkit's cuda.h. The emulator has no
 * driver API beyond the tensor-map encoder that TMA needs: the CUtensorMap
 * type and its enums, with the toolkit's names and values, and
 * cuTensorMapEncodeTiled, which checks its arguments as the driver's
 * documentation says and fills a map that the emulated
 * cp.async.bulk.tensor reads. The runtime's cudaGetDriverEntryPoint*
 * hands it out too, so code that fetches it that way (and so does not link
 * libcuda) runs unchanged. Everything else here is the runtime API and the
 * version macros, so files that include <cuda.h> for CUDA_VERSION build.
 */
#ifndef SIMT_CUDA_H
#define SIMT_CUDA_H
#include <stdint.h>

#include "cuda_runtime_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;

/** The driver API's result codes that the emulated encoder returns. */
typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_NOT_SUPPORTED = 801
} CUresult;

/** An opaque TMA descriptor: 128 bytes, 64-byte aligned, passed to kernels by value. */
typedef struct CUtensorMap_st {
#if defined(__cplusplus)
    alignas(64)
#else
    _Alignas(64)
#endif
    cuuint64_t opaque[16];
} CUtensorMap;

/** Element types of a tensor map. */
typedef enum CUtensorMapDataType_enum {
    CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
    CU_TENSOR_MAP_DATA_TYPE_UINT16,
    CU_TENSOR_MAP_DATA_TYPE_UINT32,
    CU_TENSOR_MAP_DATA_TYPE_INT32,
    CU_TENSOR_MAP_DATA_TYPE_UINT64,
    CU_TENSOR_MAP_DATA_TYPE_INT64,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ,
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ,
    CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B,
    CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B,
    CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B
} CUtensorMapDataType;

/** Interleaved layouts (the emulator copies only INTERLEAVE_NONE). */
typedef enum CUtensorMapInterleave_enum {
    CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
    CU_TENSOR_MAP_INTERLEAVE_16B,
    CU_TENSOR_MAP_INTERLEAVE_32B
} CUtensorMapInterleave;

/** How TMA permutes 16-byte chunks in shared memory. */
typedef enum CUtensorMapSwizzle_enum {
    CU_TENSOR_MAP_SWIZZLE_NONE = 0,
    CU_TENSOR_MAP_SWIZZLE_32B,
    CU_TENSOR_MAP_SWIZZLE_64B,
    CU_TENSOR_MAP_SWIZZLE_128B,
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B,
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B,
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B
} CUtensorMapSwizzle;

/** L2 fetch granularity (no effect in the emulator). */
typedef enum CUtensorMapL2promotion_enum {
    CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
    CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
    CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
    CU_TENSOR_MAP_L2_PROMOTION_L2_256B
} CUtensorMapL2promotion;

/** What out-of-bounds elements read as (the emulator fills zeros only). */
typedef enum CUtensorMapFloatOOBfill_enum {
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
} CUtensorMapFloatOOBfill;

/**
 * @brief Make a tiled tensor map, as the driver does: the same argument rules
 * (CUDA_ERROR_INVALID_VALUE when one is broken, with a line on stderr saying
 * which), then a map the emulated TMA copies read. Interleaved layouts,
 * element strides other than 1, the NaN fill, the 128B_ATOM swizzles, and a
 * swizzled box whose rows are narrower than the swizzle span are not
 * emulated: CUDA_ERROR_NOT_SUPPORTED.
 * @param tensorMap the map to fill. @param tensorDataType element type.
 * @param tensorRank 1 to 5. @param globalAddress the tensor (16-byte aligned).
 * @param globalDim sizes, innermost first. @param globalStrides byte strides of
 * dimensions 1 .. rank-1 (multiples of 16). @param boxDim the box, innermost
 * first (each 1 .. 256). @param elementStrides steps per dimension.
 * @param interleave layout. @param swizzle shared-memory swizzle.
 * @param l2Promotion ignored. @param oobFill out-of-bounds fill.
 * @return CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE or CUDA_ERROR_NOT_SUPPORTED.
 */
CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill);

#ifdef __cplusplus
}
#endif

#endif /* SIMT_CUDA_H */
