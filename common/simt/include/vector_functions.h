/*
 * SIMT emulator: the make_* constructors for CUDA's vector types
 * (make_float4, make_int2, ...). Plain C, usable from host C files too.
 */
#ifndef SIMT_VECTOR_FUNCTIONS_H
#define SIMT_VECTOR_FUNCTIONS_H

#include "vector_types.h"

#define SIMT_MK1(T, N) static inline N##1 make_##N##1(T x) { N##1 v; v.x = x; return v; }
#define SIMT_MK2(T, N) static inline N##2 make_##N##2(T x, T y) { N##2 v; v.x = x; v.y = y; return v; }
#define SIMT_MK3(T, N) static inline N##3 make_##N##3(T x, T y, T z) { N##3 v; v.x = x; v.y = y; v.z = z; return v; }
#define SIMT_MK4(T, N) static inline N##4 make_##N##4(T x, T y, T z, T w) { N##4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
#define SIMT_MKS(T, N) SIMT_MK1(T, N) SIMT_MK2(T, N) SIMT_MK3(T, N) SIMT_MK4(T, N)

SIMT_MKS(signed char, char)
SIMT_MKS(unsigned char, uchar)
SIMT_MKS(short, short)
SIMT_MKS(unsigned short, ushort)
SIMT_MKS(int, int)
SIMT_MK1(unsigned int, uint) SIMT_MK2(unsigned int, uint) SIMT_MK4(unsigned int, uint)
SIMT_MKS(long long, longlong)
SIMT_MKS(unsigned long long, ulonglong)
SIMT_MKS(float, float)
SIMT_MKS(double, double)

static inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z)
{
    uint3 v;
    v.x = x; v.y = y; v.z = z;
    return v;
}

#undef SIMT_MK1
#undef SIMT_MK2
#undef SIMT_MK3
#undef SIMT_MK4
#undef SIMT_MKS

#endif /* SIMT_VECTOR_FUNCTIONS_H */
