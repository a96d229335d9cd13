/*
 * SIMT emulator: CUDA's __nv_bfloat16 and __nv_bfloat162 for the CPU.
 * Storage and conversions are bit-exact with the toolkit (round to nearest
 * even, canonical NaN 0x7fff); arithmetic rounds once, like the hardware.
 * C++ only, as in the toolkit; C code uses common/half.h.
 */
#ifndef SIMT_CUDA_BF16_H
#define SIMT_CUDA_BF16_H

#include <math.h>
#include "cuda_fp16.h"
#include "simt_half_conv.h"
#include "vector_types.h"

#ifdef __cplusplus

struct __nv_bfloat16_raw {
    unsigned short x;
};

struct __nv_bfloat16 {
    /* Zero by default: that makes the default constructor constexpr, so a
     * __shared__ array of these (a function-local thread_local here) is
     * initialised statically, with no guard variable that the fibers of a
     * block would race on under ThreadSanitizer. */
    unsigned short __x = 0;
    __nv_bfloat16() = default;
    constexpr __nv_bfloat16(const __nv_bfloat16_raw &r) : __x(r.x) {}
    __nv_bfloat16(float f) : __x(simt_float_to_bf16_bits(f)) {}
    __nv_bfloat16(double d) : __x(simt_double_to_bf16_bits(d)) {}
    __nv_bfloat16(int i) : __x(simt_double_to_bf16_bits((double)i)) {}
    __nv_bfloat16(unsigned int i) : __x(simt_double_to_bf16_bits((double)i)) {}
    __nv_bfloat16(long long i) : __x(simt_double_to_bf16_bits((double)i)) {}
    __nv_bfloat16(short i) : __x(simt_float_to_bf16_bits((float)i)) {}
    operator float() const { return simt_bf16_bits_to_float(__x); }
    operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
    __nv_bfloat16 &operator=(const __nv_bfloat16_raw &r) { __x = r.x; return *this; }
};

struct __nv_bfloat162_raw {
    unsigned short x, y;
};

struct __attribute__((aligned(4))) __nv_bfloat162 {
    __nv_bfloat16 x, y;
    __nv_bfloat162() = default;
    constexpr __nv_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) : x(a), y(b) {}
    __nv_bfloat162(const __nv_bfloat162_raw &r) : x(__nv_bfloat16_raw{r.x}), y(__nv_bfloat16_raw{r.y}) {}
    operator __nv_bfloat162_raw() const { return __nv_bfloat162_raw{x.__x, y.__x}; }
};

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

static inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16(d); }
static inline float __bfloat162float(__nv_bfloat16 h) { return simt_bf16_bits_to_float(h.__x); }
static inline __nv_bfloat16 __int2bfloat16_rn(int i) { return __nv_bfloat16(i); }
static inline int __bfloat162int_rn(__nv_bfloat16 h) { return simt_whole_to_int(nearbyintf(__bfloat162float(h))); }
static inline int __bfloat162int_rz(__nv_bfloat16 h) { return simt_whole_to_int(truncf(__bfloat162float(h))); }
static inline int __bfloat162int_rd(__nv_bfloat16 h) { return simt_whole_to_int(floorf(__bfloat162float(h))); }
static inline int __bfloat162int_ru(__nv_bfloat16 h) { return simt_whole_to_int(ceilf(__bfloat162float(h))); }
static inline __nv_bfloat162 __float2bfloat162_rn(float f) { return __nv_bfloat162(__nv_bfloat16(f), __nv_bfloat16(f)); }
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(__nv_bfloat16(a), __nv_bfloat16(b)); }
static inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return __nv_bfloat162(__nv_bfloat16(f.x), __nv_bfloat16(f.y)); }
static inline float2 __bfloat1622float2(__nv_bfloat162 h)
{ float2 r; r.x = __bfloat162float(h.x); r.y = __bfloat162float(h.y); return r; }
static inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
static inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
static inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return __nv_bfloat162(a, a); }
static inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 a) { return a.x; }
static inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 a) { return a.y; }
static inline float __low2float(__nv_bfloat162 a) { return __bfloat162float(a.x); }
static inline float __high2float(__nv_bfloat162 a) { return __bfloat162float(a.y); }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
static inline short __bfloat16_as_short(__nv_bfloat16 h) { return (short)h.__x; }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return __nv_bfloat16(__nv_bfloat16_raw{u}); }
static inline __nv_bfloat16 __short_as_bfloat16(short s) { return __nv_bfloat16(__nv_bfloat16_raw{(unsigned short)s}); }

namespace simt {
static inline __nv_bfloat16 bf16_from_double(double d) { return __nv_bfloat16(__nv_bfloat16_raw{simt_double_to_bf16_bits(d)}); }
}

#define SIMT_H __nv_bfloat16
#define SIMT_H2 __nv_bfloat162
#define SIMT_TOF(a) __bfloat162float(a)
#define SIMT_FROMF(f) __float2bfloat16_rn(f)
#define SIMT_FROMD(d) ::simt::bf16_from_double(d)
#include "simt_half_ops.inc"
#undef SIMT_H
#undef SIMT_H2
#undef SIMT_TOF
#undef SIMT_FROMF
#undef SIMT_FROMD

/* __half and __nv_bfloat16 in one arithmetic or comparison: nvcc refuses it
 * ("more than one conversion function from __half to a built-in type
 * applies", since each type converts to float and to every integer type),
 * while here both would quietly become float. Convert one side first. */
#define SIMT_NO_MIXED(op)                                     \
    void operator op(__half, __nv_bfloat16) = delete;         \
    void operator op(__nv_bfloat16, __half) = delete;
SIMT_NO_MIXED(+) SIMT_NO_MIXED(-) SIMT_NO_MIXED(*) SIMT_NO_MIXED(/)
SIMT_NO_MIXED(==) SIMT_NO_MIXED(!=) SIMT_NO_MIXED(<) SIMT_NO_MIXED(<=) SIMT_NO_MIXED(>) SIMT_NO_MIXED(>=)
#undef SIMT_NO_MIXED

#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)

#else
typedef struct __nv_bfloat16_raw { unsigned short x; } __nv_bfloat16_raw;
typedef struct __nv_bfloat16 { unsigned short __x; } __nv_bfloat16;
typedef struct __nv_bfloat162 { __nv_bfloat16 x, y; } __nv_bfloat162;
#endif

#endif /* SIMT_CUDA_BF16_H */
