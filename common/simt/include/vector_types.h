/*
 * SIMT emulator: CUDA's built-in vector types (float2, float4, int4, dim3, ...)
 * with the sizes and alignments the CUDA headers give them, so structures that
 * hold them have the same layout on the CPU as on the GPU.
 * Plain C: host files compiled as C11 include this through
 * cuda_runtime_api.h. The make_* helpers live in vector_functions.h.
 */
#ifndef SIMT_VECTOR_TYPES_H
#define SIMT_VECTOR_TYPES_H

#define SIMT_VEC1(T, N) typedef struct N##1 { T x; } N##1;
#define SIMT_VEC2(T, N, A) typedef struct __attribute__((aligned(A))) N##2 { T x, y; } N##2;
#define SIMT_VEC3(T, N) typedef struct N##3 { T x, y, z; } N##3;
#define SIMT_VEC4(T, N, A) typedef struct __attribute__((aligned(A))) N##4 { T x, y, z, w; } N##4;
#define SIMT_VECS(T, N, A2, A4) SIMT_VEC1(T, N) SIMT_VEC2(T, N, A2) SIMT_VEC3(T, N) SIMT_VEC4(T, N, A4)

SIMT_VECS(signed char, char, 2, 4)
SIMT_VECS(unsigned char, uchar, 2, 4)
SIMT_VECS(short, short, 4, 8)
SIMT_VECS(unsigned short, ushort, 4, 8)
SIMT_VECS(int, int, 8, 16)
SIMT_VEC1(unsigned int, uint) SIMT_VEC2(unsigned int, uint, 8) SIMT_VEC4(unsigned int, uint, 16)
SIMT_VECS(long long, longlong, 16, 16)
SIMT_VECS(unsigned long long, ulonglong, 16, 16)
SIMT_VECS(float, float, 8, 16)
SIMT_VECS(double, double, 16, 16)

#undef SIMT_VEC1
#undef SIMT_VEC2
#undef SIMT_VEC3
#undef SIMT_VEC4
#undef SIMT_VECS

#ifdef __cplusplus
/* uint3 and dim3 get constructors in C++, as in CUDA, where
 * dim3 grid(64) means (64, 1, 1). */
struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};
#else
typedef struct uint3 { unsigned int x, y, z; } uint3;
typedef struct dim3 { unsigned int x, y, z; } dim3;
#endif

#endif /* SIMT_VECTOR_TYPES_H */
