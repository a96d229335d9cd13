#define CP16(d, s) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(d), "l"(s))
__global__ void k(const float *g, float *o)
{
    __shared__ __align__(16) float s[64];
    unsigned lane, a[4], b[2];
    float d[4] = {0, 0, 0, 0};
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    CP16((unsigned)__cvta_generic_to_shared(s + 4 * lane), g + 4 * lane);
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group %0;" :: "n"(0) : "memory");
    if (lane) asm volatile("bar.sync 0;"); else __asm__ __volatile__("bar.sync 0;");
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4+16];"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(0u));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared::cta.b16 {%0,%1}, [%2];" : "=r"(b[0]), "=r"(b[1]) : "r"(0u));
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    asm("wgmma.fence.sync.aligned;");
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %0, 0; }" :: "r"(lane));
    asm("mov.u32 %[x], %%smid;" : [x] "=r"(lane));
    asm volatile("" ::: "memory");
    asm("pause");
    o[lane] = d[0] + s[lane];
}
