/*
 * SIMT emulator: nvcuda::wmma, the C++ tensor-core API, on the CPU.
 * Shapes: 16x16x16 with __half or __nv_bfloat16 inputs, 16x16x8 with tf32
 * inputs, plus the other half-precision shapes (32x8x16, 8x32x16), all with
 * float (or __half) accumulators; row- and column-major operands.
 *
 * CUDA leaves the mapping of fragment elements to lanes unspecified; here
 * lane l holds elements [l*n, (l+1)*n) of the tile in row-major order, with
 * n = num_elements. Code that only uses load/store/fill/mma and elementwise
 * loops over x[] (the documented contract) behaves as on the GPU; code that
 * assumes a particular mapping is wrong on both.
 * load_matrix_sync, store_matrix_sync and mma_sync wait for the whole warp,
 * as CUDA specifies. Each of them also takes the file and line it is called
 * from, as default arguments that the caller's code fills in (as
 * __syncthreads does), so that a failure names the kernel's line even where
 * g++ keeps detail::load out of line and the return address lies here.
 * load_matrix_sync fails the launch when it reads bytes that a cp.async of
 * the block has not landed yet, naming both lines (as ldmatrix does).
 * mma_sync computes in double and rounds once; tf32 inputs
 * are truncated to 10 mantissa bits, as the tensor cores read them.
 * Not here: integer and sub-byte fragments, fp64 wmma.
 */
#ifndef SIMT_MMA_H
#define SIMT_MMA_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

#include "cuda_runtime.h"

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

namespace precision {
struct tf32 {};
} // namespace precision

namespace detail {

template <class Use, int M, int N, int K> struct shape;
template <int M, int N, int K> struct shape<matrix_a, M, N, K> { enum { rows = M, cols = K }; };
template <int M, int N, int K> struct shape<matrix_b, M, N, K> { enum { rows = K, cols = N }; };
template <int M, int N, int K> struct shape<accumulator, M, N, K> { enum { rows = M, cols = N }; };

template <class T> struct storage { typedef T type; };
template <> struct storage<precision::tf32> { typedef float type; };

static inline double to_double(float v) { return v; }
static inline double to_double(__half v) { return __half2float(v); }
static inline double to_double(__nv_bfloat16 v) { return __bfloat162float(v); }
/* The tensor cores read the top 19 bits of a tf32 operand. */
static inline double tf32_value(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    u &= 0xffffe000u;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline void from_double(double v, float &out) { out = (float)v; }
static inline void from_double(double v, __half &out) { out = __double2half(v); }


} // namespace detail

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
    typedef typename detail::storage<T>::type element_type;
    typedef element_type storage_element_type;
    enum { rows = detail::shape<Use, M, N, K>::rows, cols = detail::shape<Use, M, N, K>::cols };
    static const int num_elements = rows * cols / 32;
    element_type x[num_elements];
};

template <class Use, int M, int N, int K, class T, class L, class V>
static inline void fill_fragment(fragment<Use, M, N, K, T, L> &f, const V &v)
{
    typedef typename fragment<Use, M, N, K, T, L>::element_type E;
    E e = E(v);
    for (int i = 0; i < f.num_elements; i++) f.x[i] = e;
}

namespace detail {
template <class F, class P>
SIMT_UNTRACED static inline void load(F &f, const P *p, unsigned ldm, bool row_major, const char *file, int line)
{
    simt_check_wmma_at("wmma::load_matrix_sync", p, ldm, sizeof(P), file, line);
    /* all 32 lanes, as on a GPU */
    simt_warp_aligned_at("wmma::load_matrix_sync", nullptr, simt::nop_combine, file, line);
    unsigned base = simt_cur_thread ? simt_cur_thread->lane * F::num_elements : 0;
    for (int i = 0; i < F::num_elements; i++) {
        unsigned idx = base + i, r = idx / F::cols, c = idx % F::cols;
        const P *at = row_major ? &p[(size_t)r * ldm + c] : &p[(size_t)c * ldm + r];
        simt_check_landed_at("wmma::load_matrix_sync", at, sizeof(P), file, line);
        f.x[i] = *at;
    }
}
} // namespace detail

template <class Use, int M, int N, int K, class T, class P>
static inline void load_matrix_sync(fragment<Use, M, N, K, T, row_major> &f, const P *p, unsigned ldm,
                                    const char *simt_file = __builtin_FILE(), int simt_line = __builtin_LINE())
{ detail::load(f, p, ldm, true, simt_file, simt_line); }
template <class Use, int M, int N, int K, class T, class P>
static inline void load_matrix_sync(fragment<Use, M, N, K, T, col_major> &f, const P *p, unsigned ldm,
                                    const char *simt_file = __builtin_FILE(), int simt_line = __builtin_LINE())
{ detail::load(f, p, ldm, false, simt_file, simt_line); }
template <int M, int N, int K, class T, class P>
static inline void load_matrix_sync(fragment<accumulator, M, N, K, T, void> &f, const P *p, unsigned ldm, layout_t l,
                                    const char *simt_file = __builtin_FILE(), int simt_line = __builtin_LINE())
{ detail::load(f, p, ldm, l == mem_row_major, simt_file, simt_line); }

template <int M, int N, int K, class T, class P>
SIMT_UNTRACED static inline void store_matrix_sync(P *p, const fragment<accumulator, M, N, K, T, void> &f, unsigned ldm,
                                                   layout_t l, const char *simt_file = __builtin_FILE(),
                                                   int simt_line = __builtin_LINE())
{
    typedef fragment<accumulator, M, N, K, T, void> F;
    simt_check_wmma_at("wmma::store_matrix_sync", p, ldm, sizeof(P), simt_file, simt_line);
    simt_warp_aligned_at("wmma::store_matrix_sync", nullptr, simt::nop_combine, simt_file, simt_line);
    unsigned base = simt_cur_thread ? simt_cur_thread->lane * F::num_elements : 0;
    for (int i = 0; i < F::num_elements; i++) {
        unsigned idx = base + i, r = idx / F::cols, c = idx % F::cols;
        if (l == mem_row_major)
            p[(size_t)r * ldm + c] = f.x[i];
        else
            p[(size_t)c * ldm + r] = f.x[i];
    }
}

namespace detail {

template <class FA, class FB, class FC, class FD> struct MmaArgs {
    FD *d;
    const FA *a;
    const FB *b;
    const FC *c;
};

template <class FA, class FB, class FC, class FD, bool TF32>
SIMT_COMBINE_STEP static void mma_combine(void *const *args, unsigned int present)
{
    const int M = FA::rows, K = FA::cols, N = FB::cols;
    double A[M * K], B[K * N], D[M * N];
    const int na = FA::num_elements, nb = FB::num_elements, nc = FC::num_elements;
    /* Lanes that have exited contribute zeros (undefined in CUDA). */
    for (int i = 0; i < M * K; i++) A[i] = 0;
    for (int i = 0; i < K * N; i++) B[i] = 0;
    for (int i = 0; i < M * N; i++) D[i] = 0;
    for (int l = 0; l < 32; l++) {
        if (!(present >> l & 1)) continue;
        const MmaArgs<FA, FB, FC, FD> *m = (const MmaArgs<FA, FB, FC, FD> *)args[l];
        for (int i = 0; i < na; i++) A[l * na + i] = TF32 ? tf32_value(m->a->x[i]) : to_double(m->a->x[i]);
        for (int i = 0; i < nb; i++) B[l * nb + i] = TF32 ? tf32_value(m->b->x[i]) : to_double(m->b->x[i]);
        for (int i = 0; i < nc; i++) D[l * nc + i] = to_double(m->c->x[i]);
    }
    /* k outside j: each element still adds its K products in order, but the
     * adds along a row of D do not wait for each other, as those of one
     * dot product must. */
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++) D[i * N + j] += A[i * K + k] * B[k * N + j];
    for (int l = 0; l < 32; l++) {
        if (!(present >> l & 1)) continue;
        const MmaArgs<FA, FB, FC, FD> *m = (const MmaArgs<FA, FB, FC, FD> *)args[l];
        for (int i = 0; i < FD::num_elements; i++) from_double(D[l * FD::num_elements + i], m->d->x[i]);
    }
}

} // namespace detail

template <int M, int N, int K, class Tin, class LA, class LB, class Tacc, class Tc>
static inline void mma_sync(fragment<accumulator, M, N, K, Tacc, void> &d, const fragment<matrix_a, M, N, K, Tin, LA> &a,
                            const fragment<matrix_b, M, N, K, Tin, LB> &b,
                            const fragment<accumulator, M, N, K, Tc, void> &c,
                            const char *simt_file = __builtin_FILE(), int simt_line = __builtin_LINE())
{
    typedef fragment<matrix_a, M, N, K, Tin, LA> FA;
    typedef fragment<matrix_b, M, N, K, Tin, LB> FB;
    typedef fragment<accumulator, M, N, K, Tc, void> FC;
    typedef fragment<accumulator, M, N, K, Tacc, void> FD;
    detail::MmaArgs<FA, FB, FC, FD> m{&d, &a, &b, &c};
    const bool tf32 = std::is_same<Tin, precision::tf32>::value;
    simt_warp_aligned_at("wmma::mma_sync", &m, detail::mma_combine<FA, FB, FC, FD, tf32>, simt_file, simt_line);
}

/** @brief Round a float to tf32 (10 mantissa bits), to nearest, ties away from
 *  zero, as cvt.rna.tf32.f32 does. @param f value. @return the rounded value. */
static inline float __float_to_tf32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&f, &u, 4);
    return f;
}

} // namespace wmma
} // namespace nvcuda

#endif /* SIMT_MMA_H */
