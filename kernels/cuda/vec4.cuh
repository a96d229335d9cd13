/** @file
 * @brief Four consecutive floats per thread, in one 16-byte access where the
 * pointer and the length allow it (8 bytes for four bf16), and the bf16
 * widening and rounding the element-wise kernels share.
 *
 * An element-wise kernel that gives each thread VEC consecutive elements
 * issues one 16-byte load per fp32 array where a thread per element issues
 * four 4-byte loads for the same bytes. Fewer memory instructions in flight
 * per byte is what lets such kernels reach DRAM bandwidth. The caller checks
 * alignment once on the host (aligned16) and passes the answer as vec;
 * without it, and for the last elements of n, the functions fall back to
 * scalar accesses with the same values, zeros past n on a load.
 * Used by the model's element-wise kernels (model_ops.cu) and by lab 05's
 * solution.
 */
#ifndef COURSE_CUDA_VEC4_CUH
/* Doxygen does not take this for an include guard (as in common/hopper.cuh);
 * keep it out of the reference. */
/** @cond */
#define COURSE_CUDA_VEC4_CUH
/** @endcond */

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/** Elements per thread of the vectorised element-wise kernels. */
#define VEC 4

/** @brief 1 if p is 16-byte aligned, so float4 accesses through it are legal. */
static inline int aligned16(const void *p) { return (uintptr_t)p % 16 == 0; }

/** @brief 1 if p is 8-byte aligned, so four bf16 move in one 8-byte access through it. */
static inline int aligned8(const void *p) { return (uintptr_t)p % 8 == 0; }

/**
 * @brief p[i .. i+3] as a float4; elements at or past n read as 0.
 * @param p the array
 * @param i the first element (a multiple of VEC for the fast path to stay aligned)
 * @param n the array's length
 * @param vec 1 if p is 16-byte aligned (aligned16): one 16-byte load when i + 4 <= n
 */
static __device__ __forceinline__ float4 load4(const float *p, size_t i, size_t n, int vec) {
    if (vec && i + VEC <= n) return *(const float4 *)(p + i);
    float4 r = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (i < n) r.x = p[i];
    if (i + 1 < n) r.y = p[i + 1];
    if (i + 2 < n) r.z = p[i + 2];
    if (i + 3 < n) r.w = p[i + 3];
    return r;
}

/**
 * @brief Writes v to p[i .. i+3], leaving out the elements at or past n.
 * @param p the array
 * @param i the first element
 * @param n the array's length
 * @param vec 1 if p is 16-byte aligned: one 16-byte store when i + 4 <= n
 * @param v the values
 */
static __device__ __forceinline__ void store4(float *p, size_t i, size_t n, int vec, float4 v) {
    if (vec && i + VEC <= n) {
        *(float4 *)(p + i) = v;
        return;
    }
    if (i < n) p[i] = v.x;
    if (i + 1 < n) p[i + 1] = v.y;
    if (i + 2 < n) p[i + 2] = v.z;
    if (i + 3 < n) p[i + 3] = v.w;
}

/** @brief f rounded to bf16 (nearest even), as its 16 bits. */
static __device__ __forceinline__ uint16_t float_to_bf16(float f) {
    __nv_bfloat16_raw r = __nv_bfloat16_raw(__float2bfloat16(f));
    return r.x;
}

/** @brief a and b rounded to bf16 in one 32-bit word, a at the lower address (little-endian). */
static __device__ __forceinline__ uint32_t pack_bf16x2(float a, float b) {
    return (uint32_t)float_to_bf16(a) | (uint32_t)float_to_bf16(b) << 16;
}

/** @brief The float a bf16 bit pattern stands for (exact: bf16 is fp32's upper half). */
static __device__ __forceinline__ float bf16_bits_to_float(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }

/** @brief Two bf16 in one 32-bit word (x at the lower address, as pack_bf16x2() stores them), widened. */
static __device__ __forceinline__ float2 bf16x2_to_float2(uint32_t u) {
    return make_float2(__uint_as_float(u << 16), __uint_as_float(u & 0xffff0000u));
}

/**
 * @brief p[i .. i+3], bf16 bits widened to fp32, as a float4; elements at or past n read as 0.
 * @param p the bf16 array (bits)
 * @param i the first element (a multiple of VEC for the fast path to stay aligned)
 * @param n the array's length
 * @param vec 1 if p is 8-byte aligned: one 8-byte load when i + 4 <= n
 */
static __device__ __forceinline__ float4 load4_bf16(const uint16_t *p, size_t i, size_t n, int vec) {
    if (vec && i + VEC <= n) {
        const uint2 u = *(const uint2 *)(p + i);
        const float2 lo = bf16x2_to_float2(u.x), hi = bf16x2_to_float2(u.y);
        return make_float4(lo.x, lo.y, hi.x, hi.y);
    }
    float4 r = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (i < n) r.x = bf16_bits_to_float(p[i]);
    if (i + 1 < n) r.y = bf16_bits_to_float(p[i + 1]);
    if (i + 2 < n) r.z = bf16_bits_to_float(p[i + 2]);
    if (i + 3 < n) r.w = bf16_bits_to_float(p[i + 3]);
    return r;
}

/**
 * @brief Writes v rounded to bf16 to p[i .. i+3], leaving out the elements at or past n.
 * @param p the bf16 array (bits)
 * @param i the first element (a multiple of VEC for the fast path to stay aligned)
 * @param n the array's length
 * @param vec 1 if p is 8-byte aligned: one 8-byte store when i + 4 <= n
 * @param v the values, rounded to nearest even
 */
static __device__ __forceinline__ void store4_bf16(uint16_t *p, size_t i, size_t n, int vec, float4 v) {
    if (vec && i + VEC <= n) {
        uint2 u;
        u.x = pack_bf16x2(v.x, v.y);
        u.y = pack_bf16x2(v.z, v.w);
        *(uint2 *)(p + i) = u;
        return;
    }
    if (i < n) p[i] = float_to_bf16(v.x);
    if (i + 1 < n) p[i + 1] = float_to_bf16(v.y);
    if (i + 2 < n) p[i + 2] = float_to_bf16(v.z);
    if (i + 3 < n) p[i + 3] = float_to_bf16(v.w);
}

#endif
