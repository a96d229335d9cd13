// expect: calling a __device__ function("__syncthreads") from a __host__ function("host_0") is not allowed
// The GPU built-ins that work on a kernel's threads, atomics and cached
// loads and stores, called from host code: nvcc has them in device code only,
// and so does the emulator, though its kernels run on the host. Each line is
// one refusal (see test_simt_agreement.c).
#include <cuda_pipeline.h>

float fv;
double dv;
int iv;
unsigned int uv;
long long llv;
unsigned long long ullv;

void host_0() { (void)__syncthreads(); } // refused
void host_1() { (void)__syncthreads_count(1); } // refused
void host_2() { (void)__syncthreads_and(1); } // refused
void host_3() { (void)__syncthreads_or(1); } // refused
void host_4() { (void)__syncwarp(); } // refused
void host_5() { (void)__threadfence(); } // refused
void host_6() { (void)__threadfence_block(); } // refused
void host_7() { (void)__threadfence_system(); } // refused
void host_8() { (void)__nanosleep(1u); } // refused
void host_9() { (void)__trap(); } // refused
void host_10() { (void)clock64(); } // refused
void host_11() { (void)__activemask(); } // refused
void host_12() { (void)__ballot_sync(0xffffffffu, 1); } // refused
void host_13() { (void)__any_sync(0xffffffffu, 1); } // refused
void host_14() { (void)__all_sync(0xffffffffu, 1); } // refused
void host_15() { (void)__shfl_sync(0xffffffffu, fv, 0); } // refused
void host_16() { (void)__shfl_up_sync(0xffffffffu, fv, 1); } // refused
void host_17() { (void)__shfl_down_sync(0xffffffffu, fv, 1); } // refused
void host_18() { (void)__shfl_xor_sync(0xffffffffu, fv, 1); } // refused
void host_19() { (void)__match_any_sync(0xffffffffu, iv); } // refused
void host_20() { (void)__match_all_sync(0xffffffffu, iv, &iv); } // refused
void host_21() { (void)__reduce_add_sync(0xffffffffu, uv); } // refused
void host_22() { (void)__reduce_min_sync(0xffffffffu, uv); } // refused
void host_23() { (void)__reduce_max_sync(0xffffffffu, uv); } // refused
void host_24() { (void)__reduce_and_sync(0xffffffffu, uv); } // refused
void host_25() { (void)__reduce_or_sync(0xffffffffu, uv); } // refused
void host_26() { (void)__reduce_xor_sync(0xffffffffu, uv); } // refused
void host_27() { (void)__pipeline_memcpy_async(&fv, &fv, 4); } // refused
void host_28() { (void)__pipeline_commit(); } // refused
void host_29() { (void)__pipeline_wait_prior(0); } // refused
void host_30() { (void)__cvta_generic_to_shared(&fv); } // refused
void host_31() { (void)atomicAdd(&iv, 1); } // refused
void host_32() { (void)atomicSub(&iv, 1); } // refused
void host_33() { (void)atomicExch(&iv, 1); } // refused
void host_34() { (void)atomicMin(&iv, 1); } // refused
void host_35() { (void)atomicMax(&iv, 1); } // refused
void host_36() { (void)atomicInc(&uv, 1u); } // refused
void host_37() { (void)atomicDec(&uv, 1u); } // refused
void host_38() { (void)atomicCAS(&iv, 1, 2); } // refused
void host_39() { (void)atomicAnd(&iv, 1); } // refused
void host_40() { (void)atomicOr(&iv, 1); } // refused
void host_41() { (void)atomicXor(&iv, 1); } // refused
void host_42() { (void)atomicAdd_block(&iv, 1); } // refused
void host_43() { (void)atomicAdd_system(&iv, 1); } // refused
void host_44() { (void)atomicCAS_block(&iv, 1, 2); } // refused
void host_45() { (void)atomicExch_block(&iv, 1); } // refused
void host_46() { (void)atomicMax_block(&iv, 1); } // refused
void host_47() { (void)atomicMin_block(&iv, 1); } // refused
void host_48() { (void)__ldg(&fv); } // refused
void host_49() { (void)__ldcg(&fv); } // refused
void host_50() { (void)__ldca(&fv); } // refused
void host_51() { (void)__ldcs(&fv); } // refused
void host_52() { (void)__ldlu(&fv); } // refused
void host_53() { (void)__ldcv(&fv); } // refused
void host_54() { (void)__stwb(&fv, 1.0f); } // refused
void host_55() { (void)__stcg(&fv, 1.0f); } // refused
void host_56() { (void)__stcs(&fv, 1.0f); } // refused
void host_57() { (void)__stwt(&fv, 1.0f); } // refused

// A __host__ __device__ function is compiled for the host too.
__host__ __device__ void both() { __syncthreads(); } // refused

// In a template, a call without arguments is checked where it is written.
template <typename T> T host_template(T x) { __syncthreads(); return x; } // refused
