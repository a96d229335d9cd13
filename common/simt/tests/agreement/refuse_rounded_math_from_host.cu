// expect: calling a __device__ function("__fadd_rn") from a __host__ function("host_0") is not allowed
// The GPU's arithmetic with a named rounding, its rounded conversions and its
// reinterpretations (__int_as_float and kin), called from host code: nvcc has
// them in device code only, and so does the emulator. Each line is one
// refusal (see test_simt_agreement.c).

float fv;
double dv;
int iv;
unsigned int uv;
long long llv;
unsigned long long ullv;

void host_0() { (void)__fadd_rn(fv, fv); } // refused
void host_1() { (void)__fadd_rz(fv, fv); } // refused
void host_2() { (void)__fadd_ru(fv, fv); } // refused
void host_3() { (void)__fadd_rd(fv, fv); } // refused
void host_4() { (void)__fsub_rn(fv, fv); } // refused
void host_5() { (void)__fsub_rz(fv, fv); } // refused
void host_6() { (void)__fsub_ru(fv, fv); } // refused
void host_7() { (void)__fsub_rd(fv, fv); } // refused
void host_8() { (void)__fmul_rn(fv, fv); } // refused
void host_9() { (void)__fmul_rz(fv, fv); } // refused
void host_10() { (void)__fmul_ru(fv, fv); } // refused
void host_11() { (void)__fmul_rd(fv, fv); } // refused
void host_12() { (void)__fdiv_rn(fv, fv); } // refused
void host_13() { (void)__fdiv_rz(fv, fv); } // refused
void host_14() { (void)__fdiv_ru(fv, fv); } // refused
void host_15() { (void)__fdiv_rd(fv, fv); } // refused
void host_16() { (void)__fmaf_rn(fv, fv, fv); } // refused
void host_17() { (void)__fmaf_rz(fv, fv, fv); } // refused
void host_18() { (void)__fmaf_ru(fv, fv, fv); } // refused
void host_19() { (void)__fmaf_rd(fv, fv, fv); } // refused
void host_20() { (void)__frcp_rn(fv); } // refused
void host_21() { (void)__frcp_rz(fv); } // refused
void host_22() { (void)__frcp_ru(fv); } // refused
void host_23() { (void)__frcp_rd(fv); } // refused
void host_24() { (void)__fsqrt_rn(fv); } // refused
void host_25() { (void)__fsqrt_rz(fv); } // refused
void host_26() { (void)__fsqrt_ru(fv); } // refused
void host_27() { (void)__fsqrt_rd(fv); } // refused
void host_28() { (void)__frsqrt_rn(fv); } // refused
void host_29() { (void)__dadd_rn(dv, dv); } // refused
void host_30() { (void)__dmul_rn(dv, dv); } // refused
void host_31() { (void)__fma_rn(dv, dv, dv); } // refused
void host_32() { (void)__float2int_rn(fv); } // refused
void host_33() { (void)__float2int_rz(fv); } // refused
void host_34() { (void)__float2int_ru(fv); } // refused
void host_35() { (void)__float2int_rd(fv); } // refused
void host_36() { (void)__float2uint_rn(fv); } // refused
void host_37() { (void)__float2uint_rz(fv); } // refused
void host_38() { (void)__float2uint_ru(fv); } // refused
void host_39() { (void)__float2uint_rd(fv); } // refused
void host_40() { (void)__float2ll_rn(fv); } // refused
void host_41() { (void)__float2ll_rz(fv); } // refused
void host_42() { (void)__float2ll_ru(fv); } // refused
void host_43() { (void)__float2ll_rd(fv); } // refused
void host_44() { (void)__float2ull_rn(fv); } // refused
void host_45() { (void)__float2ull_rz(fv); } // refused
void host_46() { (void)__float2ull_ru(fv); } // refused
void host_47() { (void)__float2ull_rd(fv); } // refused
void host_48() { (void)__double2float_rn(dv); } // refused
void host_49() { (void)__double2float_rz(dv); } // refused
void host_50() { (void)__double2float_ru(dv); } // refused
void host_51() { (void)__double2float_rd(dv); } // refused
void host_52() { (void)__double2int_rn(dv); } // refused
void host_53() { (void)__double2int_rz(dv); } // refused
void host_54() { (void)__double2int_ru(dv); } // refused
void host_55() { (void)__double2int_rd(dv); } // refused
void host_56() { (void)__double2uint_rn(dv); } // refused
void host_57() { (void)__double2uint_rz(dv); } // refused
void host_58() { (void)__double2uint_ru(dv); } // refused
void host_59() { (void)__double2uint_rd(dv); } // refused
void host_60() { (void)__double2ll_rn(dv); } // refused
void host_61() { (void)__double2ll_rz(dv); } // refused
void host_62() { (void)__double2ll_ru(dv); } // refused
void host_63() { (void)__double2ll_rd(dv); } // refused
void host_64() { (void)__double2ull_rn(dv); } // refused
void host_65() { (void)__double2ull_rz(dv); } // refused
void host_66() { (void)__double2ull_ru(dv); } // refused
void host_67() { (void)__double2ull_rd(dv); } // refused
void host_68() { (void)__int2float_rn(iv); } // refused
void host_69() { (void)__int2float_rz(iv); } // refused
void host_70() { (void)__int2float_ru(iv); } // refused
void host_71() { (void)__int2float_rd(iv); } // refused
void host_72() { (void)__uint2float_rn(uv); } // refused
void host_73() { (void)__uint2float_rz(uv); } // refused
void host_74() { (void)__uint2float_ru(uv); } // refused
void host_75() { (void)__uint2float_rd(uv); } // refused
void host_76() { (void)__ll2float_rn(llv); } // refused
void host_77() { (void)__ll2float_rz(llv); } // refused
void host_78() { (void)__ll2float_ru(llv); } // refused
void host_79() { (void)__ll2float_rd(llv); } // refused
void host_80() { (void)__ull2float_rn(ullv); } // refused
void host_81() { (void)__ull2float_rz(ullv); } // refused
void host_82() { (void)__ull2float_ru(ullv); } // refused
void host_83() { (void)__ull2float_rd(ullv); } // refused
void host_84() { (void)__int2double_rn(iv); } // refused
void host_85() { (void)__uint2double_rn(uv); } // refused
void host_86() { (void)__ll2double_rn(llv); } // refused
void host_87() { (void)__ull2double_rn(ullv); } // refused
void host_88() { (void)__int_as_float(iv); } // refused
void host_89() { (void)__float_as_int(fv); } // refused
void host_90() { (void)__uint_as_float(uv); } // refused
void host_91() { (void)__float_as_uint(fv); } // refused
void host_92() { (void)__double_as_longlong(dv); } // refused
void host_93() { (void)__longlong_as_double(llv); } // refused
