/*
 * SIMT emulator: CUDA's __half and __half2 (IEEE binary16) for the CPU.
 * Storage and conversions are bit-exact with the toolkit (round to nearest
 * even, canonical NaN 0x7fff); arithmetic rounds once, like the hardware.
 * C++ only, as in the toolkit; C code uses the uint16_t helpers of
 * common/half.h instead.
 */
#ifndef SIMT_CUDA_FP16_H
#define SIMT_CUDA_FP16_H

#include <math.h>
#include "simt_half_conv.h"
#include "vector_types.h"

#ifdef __cplusplus
#include <type_traits>

struct __half_raw {
    unsigned short x;
};

struct __half {
    /* Zero by default: that makes the default constructor constexpr, so a
     * __shared__ array of these (a function-local thread_local here) is
     * initialised statically, with no guard variable that the fibers of a
     * block would race on under ThreadSanitizer. */
    unsigned short __x = 0;
    __half() = default;
    constexpr __half(const __half_raw &r) : __x(r.x) {}
    __half(float f) : __x(simt_float_to_half_bits(f)) {}
    __half(double d) : __x(simt_double_to_half_bits(d)) {}
    __half(int i) : __x(simt_float_to_half_bits((float)i)) {}
    __half(unsigned int i) : __x(simt_float_to_half_bits((float)i)) {}
    __half(long long i) : __x(simt_double_to_half_bits((double)i)) {}
    __half(unsigned long long i) : __x(simt_double_to_half_bits((double)i)) {}
    __half(short i) : __x(simt_float_to_half_bits((float)i)) {}
    __half(unsigned short i) : __x(simt_float_to_half_bits((float)i)) {}
    operator float() const { return simt_half_bits_to_float(__x); }
    operator __half_raw() const { return __half_raw{__x}; }
    __half &operator=(const __half_raw &r) { __x = r.x; return *this; }
};

struct __half2_raw {
    unsigned short x, y;
};

struct __attribute__((aligned(4))) __half2 {
    __half x, y;
    __half2() = default;
    constexpr __half2(__half a, __half b) : x(a), y(b) {}
    __half2(const __half2_raw &r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
    operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};

typedef __half half;
typedef __half2 half2;

static inline __half __float2half(float f) { return __half(f); }
static inline __half __float2half_rn(float f) { return __half(f); }
static inline __half __double2half(double d) { return __half(d); }
static inline float __half2float(__half h) { return simt_half_bits_to_float(h.__x); }
static inline __half __int2half_rn(int i) { return __half(i); }
static inline int __half2int_rn(__half h) { return simt_whole_to_int(nearbyintf(__half2float(h))); }
static inline int __half2int_rz(__half h) { return simt_whole_to_int(truncf(__half2float(h))); }
static inline int __half2int_rd(__half h) { return simt_whole_to_int(floorf(__half2float(h))); }
static inline int __half2int_ru(__half h) { return simt_whole_to_int(ceilf(__half2float(h))); }
static inline __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
static inline __half2 __float22half2_rn(float2 f) { return __half2(__half(f.x), __half(f.y)); }
static inline float2 __half22float2(__half2 h) { float2 r; r.x = __half2float(h.x); r.y = __half2float(h.y); return r; }
static inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
static inline __half2 make_half2(__half a, __half b) { return __half2(a, b); }
static inline __half2 __half2half2(__half a) { return __half2(a, a); }
static inline __half __low2half(__half2 a) { return a.x; }
static inline __half __high2half(__half2 a) { return a.y; }
static inline float __low2float(__half2 a) { return __half2float(a.x); }
static inline float __high2float(__half2 a) { return __half2float(a.y); }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline __half __ushort_as_half(unsigned short u) { return __half(__half_raw{u}); }
static inline __half __short_as_half(short s) { return __half(__half_raw{(unsigned short)s}); }

namespace simt {
static inline __half half_from_double(double d) { return __half(__half_raw{simt_double_to_half_bits(d)}); }
}

#define SIMT_H __half
#define SIMT_H2 __half2
#define SIMT_TOF(a) __half2float(a)
#define SIMT_FROMF(f) __float2half_rn(f)
#define SIMT_FROMD(d) ::simt::half_from_double(d)
#include "simt_half_ops.inc"
#undef SIMT_H
#undef SIMT_H2
#undef SIMT_TOF
#undef SIMT_FROMF
#undef SIMT_FROMD

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)

#else /* C: the storage types only */
typedef struct __half_raw { unsigned short x; } __half_raw;
typedef struct __half { unsigned short __x; } __half;
typedef struct __half2 { __half x, y; } __half2;
#endif

#endif /* SIMT_CUDA_FP16_H */
