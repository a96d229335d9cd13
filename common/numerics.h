/** @file
 * Comparing a kernel's output with a reference, the same way in every check.
 *
 * Every comparison is NaN- and Inf-safe: a bound is written !(err <= bound),
 * so a NaN error fails instead of slipping through a `err > bound` test, and
 * an infinite reference (whose bound is infinite too) is met only by the
 * same infinity, as an infinite bound is only by an exact match. The
 * report names the worst element (index, got, want), the largest absolute and
 * relative errors, and how many elements failed, which is what a student needs
 * to find an off-by-one tile or a missing barrier.
 */
#ifndef COURSE_NUMERICS_H
#define COURSE_NUMERICS_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Unit roundoff u = 2^-(p) of each format, p = mantissa bits including the
 * implicit one: the relative error of one correctly rounded operation. */
#define EPS_FP32 0x1p-24 /**< fp32: 24-bit significand */
#define EPS_TF32 0x1p-11 /**< tf32: 11-bit significand (fp32 range) */
#define EPS_FP16 0x1p-11 /**< fp16: 11-bit significand */
#define EPS_BF16 0x1p-8  /**< bf16: 8-bit significand */

/** The outcome of one comparison. */
typedef struct {
    size_t n;            /**< elements compared */
    size_t mismatches;   /**< elements outside their bound (NaN/Inf included) */
    size_t nonfinite;    /**< elements where the result was NaN or Inf but the reference was not */
    size_t worst_index;  /**< element with the largest error relative to its bound */
    double worst_got;    /**< result at worst_index */
    double worst_want;   /**< reference at worst_index */
    double worst_bound;  /**< allowed error at worst_index */
    double max_abs_err;  /**< largest |got - want| (NaN if any error was NaN) */
    double max_rel_err;  /**< largest |got - want| / |want| over nonzero want */
} cmp_report_t;

/**
 * @brief Compare got against want elementwise: |got - want| <= atol + rtol * |want|.
 * @param got result, n floats
 * @param want reference, n doubles
 * @param n element count
 * @param rtol relative tolerance
 * @param atol absolute tolerance
 * @param rep filled with the details (may be NULL)
 * @return 1 if every element is within its bound, else 0
 */
int compare_close(const float *got, const double *want, size_t n, double rtol, double atol,
                  cmp_report_t *rep);

/**
 * @brief As compare_close(), with a float reference.
 * @param got result, n floats
 * @param want reference, n floats
 * @param n element count
 * @param rtol relative tolerance
 * @param atol absolute tolerance
 * @param rep filled with the details (may be NULL)
 * @return 1 if every element is within its bound, else 0
 */
int compare_close_f(const float *got, const float *want, size_t n, double rtol, double atol,
                    cmp_report_t *rep);

/**
 * @brief Norm-wise relative difference ||got - ref||_2 / ||ref||_2, in double
 * (||got||_2 when ref is all zero).
 *
 * For whole tensors that went through different roundings (a bf16 model
 * against the fp32 one, two kernels against each other), where an
 * element-wise tolerance would be dominated by the near-zero elements.
 * @param got computed values
 * @param ref reference values
 * @param n elements
 * @return the relative difference (NaN if either holds a NaN)
 */
double rel_l2_diff(const float *got, const float *ref, size_t n);

/**
 * @brief Compare a matmul result with the componentwise error bound.
 *
 * For C = alpha*A*B + beta*C0 computed with length-K dot products in a format
 * with unit roundoff eps, each element may be off by about K * eps times
 * (|alpha| |A| |B| + |beta| |C0|)_ij (Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., section 3.5). The check allows
 * c * K * eps * absAB_ij, plus the smallest normal float, so that a result
 * flushed to zero (a GPU's FTZ arithmetic) where the exact value is subnormal
 * still passes.
 * @param got computed C, M*N floats, row-major
 * @param want reference C in double, M*N
 * @param absAB the bound's magnitudes (|alpha||A||B| + |beta||C0|), M*N doubles
 * @param M rows
 * @param N columns
 * @param K inner dimension
 * @param eps unit roundoff of the arithmetic (EPS_FP32, EPS_BF16, ...)
 * @param c safety factor, usually 1 to 4
 * @param rep filled with the details (may be NULL)
 * @return 1 if every element is within its bound, else 0
 */
int check_gemm_bound(const float *got, const double *want, const double *absAB, int M, int N,
                     int K, double eps, double c, cmp_report_t *rep);

/**
 * @brief The bound check_gemm_bound() allows one element: c * K * eps * absAB
 *        plus the smallest normal float.
 * @param absAB the element's |alpha||A||B| + |beta||C0|
 * @param K inner dimension
 * @param eps unit roundoff
 * @param c safety factor
 * @return the largest absolute error allowed
 */
double gemm_elem_bound(double absAB, int K, double eps, double c);

/**
 * @brief The verdict every comparison here gives one element: |got - want|
 *        within bound, where NaN never passes, an infinite want is met only
 *        by the same infinity, and an infinite bound only by got == want.
 *        For callers that need to know which elements failed (a mask for a
 *        message) by the same rule the check used.
 * @param got computed value
 * @param want reference value
 * @param bound largest absolute error allowed
 * @return 1 within bound, else 0
 */
int within_bound(double got, double want, double bound);

/**
 * @brief Print a one-line summary of a comparison, e.g. for a failing check.
 * @param out stream
 * @param what name of the compared quantity
 * @param rep the report
 */
void cmp_report_print(FILE *out, const char *what, const cmp_report_t *rep);

/**
 * @brief Write the summary line into a buffer (for cmocka's fail_msg).
 * @param buf destination
 * @param len size of buf
 * @param what name of the compared quantity
 * @param rep the report
 * @return buf
 */
char *cmp_report_format(char *buf, size_t len, const char *what, const cmp_report_t *rep);

/**
 * @brief The same line for a row-major matrix: the worst element is named
 *        by row and column ("worst at [36][0]"), not by its flat index.
 * @param buf destination
 * @param len size of buf
 * @param what name of the compared quantity
 * @param rep the report
 * @param cols the matrix's number of columns (0: the flat index, as cmp_report_format)
 * @return buf
 */
char *cmp_report_format_rc(char *buf, size_t len, const char *what, const cmp_report_t *rep, size_t cols);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_NUMERICS_H */
