/** @file
 * Lab 00's function, as its check and benchmark call it.
 *
 * The student's file (labs/00-hello/vector_add.cu) includes this header, so
 * a definition whose parameters differ from this one is a compile error
 * that names both, instead of a kernel that runs on garbage arguments; the
 * later labs' functions are declared the same way (kernels/matmul_ladder.h,
 * kernels/cuda/model_gpu.h).
 */
#ifndef COURSE_VECTOR_ADD_H
#define COURSE_VECTOR_ADD_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief c = a + b, elementwise, one GPU thread per element (lab 00).
 * @param a device pointer, n floats
 * @param b device pointer, n floats
 * @param c device pointer, n floats, written
 * @param n elements, >= 0 (0 does nothing)
 * @return a lab_status_t (common/lab.h): LAB_OK, LAB_NOT_IMPLEMENTED while
 *         the TODO is there, LAB_BAD_ARGUMENT for n < 0, LAB_LAUNCH_FAILED
 */
int vector_add(const float *a, const float *b, float *c, int n);

#ifdef __cplusplus
}
#endif

#endif /* COURSE_VECTOR_ADD_H */
