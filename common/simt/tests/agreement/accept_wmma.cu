// A 16x16x16 bf16 tile on the tensor cores through nvcuda::wmma.
#include <cuda_bf16.h>
#include <mma.h>
using namespace nvcuda;

__global__ void wmma_tile(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *c)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    for (int i = 0; i < fc.num_elements; i++) fc.x[i] *= 2.0f;
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
