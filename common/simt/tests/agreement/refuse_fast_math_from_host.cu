// expect: calling a __device__ function("__expf") from a __host__ function("host_0") is not allowed
// The GPU's fast-math, bit and half-precision math intrinsics, called from
// host code (a CPU reference, say): nvcc has them in device code only, and so
// does the emulator. Each line is one refusal (see test_simt_agreement.c).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

float fv;
double dv;
int iv;
unsigned int uv;
long long llv;
unsigned long long ullv;
__half hv;
__half2 h2v;
__nv_bfloat16 bv;

void host_0() { (void)__expf(fv); } // refused
void host_1() { (void)__exp10f(fv); } // refused
void host_2() { (void)__logf(fv); } // refused
void host_3() { (void)__log2f(fv); } // refused
void host_4() { (void)__log10f(fv); } // refused
void host_5() { (void)__sinf(fv); } // refused
void host_6() { (void)__cosf(fv); } // refused
void host_7() { (void)__tanf(fv); } // refused
void host_8() { (void)__sincosf(fv, &fv, &fv); } // refused
void host_9() { (void)__powf(fv, fv); } // refused
void host_10() { (void)__fdividef(fv, fv); } // refused
void host_11() { (void)__saturatef(fv); } // refused
void host_12() { (void)__popc(uv); } // refused
void host_13() { (void)__popcll(ullv); } // refused
void host_14() { (void)__clz(iv); } // refused
void host_15() { (void)__clzll(llv); } // refused
void host_16() { (void)__ffs(iv); } // refused
void host_17() { (void)__ffsll(llv); } // refused
void host_18() { (void)__brev(uv); } // refused
void host_19() { (void)__byte_perm(uv, uv, 0u); } // refused
void host_20() { (void)__funnelshift_l(uv, uv, 1u); } // refused
void host_21() { (void)__funnelshift_r(uv, uv, 1u); } // refused
void host_22() { (void)__funnelshift_lc(uv, uv, 1u); } // refused
void host_23() { (void)__funnelshift_rc(uv, uv, 1u); } // refused
void host_24() { (void)__mulhi(iv, iv); } // refused
void host_25() { (void)__umulhi(uv, uv); } // refused
void host_26() { (void)__mul24(iv, iv); } // refused
void host_27() { (void)__umul24(uv, uv); } // refused
void host_28() { (void)__sad(iv, iv, uv); } // refused
void host_29() { (void)__usad(uv, uv, uv); } // refused
void host_30() { (void)__rhadd(iv, iv); } // refused
void host_31() { (void)__uhadd(uv, uv); } // refused
void host_32() { (void)__urhadd(uv, uv); } // refused
void host_33() { (void)__dp4a(iv, iv, iv); } // refused
void host_34() { (void)__dp2a_lo(iv, iv, iv); } // refused
void host_35() { (void)__dp2a_hi(iv, iv, iv); } // refused
void host_36() { (void)hexp(hv); } // refused
void host_37() { (void)hexp2(hv); } // refused
void host_38() { (void)hexp10(hv); } // refused
void host_39() { (void)hlog(hv); } // refused
void host_40() { (void)hlog2(hv); } // refused
void host_41() { (void)hlog10(hv); } // refused
void host_42() { (void)hsin(hv); } // refused
void host_43() { (void)hcos(hv); } // refused
void host_44() { (void)htanh(hv); } // refused
void host_45() { (void)hsqrt(hv); } // refused
void host_46() { (void)hrsqrt(hv); } // refused
void host_47() { (void)hrcp(hv); } // refused
void host_48() { (void)hceil(hv); } // refused
void host_49() { (void)hfloor(hv); } // refused
void host_50() { (void)hrint(hv); } // refused
void host_51() { (void)htrunc(hv); } // refused
void host_52() { (void)h2exp(h2v); } // refused
void host_53() { (void)h2exp2(h2v); } // refused
void host_54() { (void)h2exp10(h2v); } // refused
void host_55() { (void)h2log(h2v); } // refused
void host_56() { (void)h2log2(h2v); } // refused
void host_57() { (void)h2log10(h2v); } // refused
void host_58() { (void)h2sin(h2v); } // refused
void host_59() { (void)h2cos(h2v); } // refused
void host_60() { (void)h2tanh(h2v); } // refused
void host_61() { (void)h2sqrt(h2v); } // refused
void host_62() { (void)h2rsqrt(h2v); } // refused
void host_63() { (void)h2rcp(h2v); } // refused
void host_64() { (void)h2ceil(h2v); } // refused
void host_65() { (void)h2floor(h2v); } // refused
void host_66() { (void)h2rint(h2v); } // refused
void host_67() { (void)h2trunc(h2v); } // refused
void host_68() { (void)__hfma(hv, hv, hv); } // refused
void host_69() { (void)__hfma2(h2v, h2v, h2v); } // refused
void host_70() { (void)__half2int_rn(hv); } // refused
void host_71() { (void)__half2int_rd(hv); } // refused
void host_72() { (void)__half2int_ru(hv); } // refused
void host_73() { (void)__bfloat162int_rn(bv); } // refused
