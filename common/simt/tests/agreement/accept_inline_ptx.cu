// A tensor-core tile written with inline PTX, as tutorials write it.
#include <cuda_bf16.h>
#include <stdint.h>

__global__ void mma_tile(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *c)
{
    __shared__ __align__(16) __nv_bfloat16 sa[16 * 16], sb[16 * 8];
    int lane = threadIdx.x;
    uint32_t dst = (uint32_t)__cvta_generic_to_shared(&sa[lane * 8]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(&a[lane * 8]));
    if (lane < 16) sb[lane * 8] = b[lane * 8];
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    __syncthreads();
    uint32_t ra[4], rb[2];
    uint32_t row = (uint32_t)__cvta_generic_to_shared(&sa[(lane % 16) * 16 + (lane / 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3])
                 : "r"(row));
    uint32_t col = (uint32_t)__cvta_generic_to_shared(&sb[(lane % 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n" : "=r"(rb[0]), "=r"(rb[1]) : "r"(col));
    float d[4] = {0, 0, 0, 0};
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
    for (int i = 0; i < 4; i++) c[lane * 4 + i] = d[i];
}
