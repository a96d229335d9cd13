// expect: an operand named %[name]
__global__ void k(unsigned *o)
{
    unsigned x;
    asm("mov.u32 %[x], %%laneid;" : [x] "=r"(x));
    o[0] = x;
}
