# kernels/: course-provided compute. cpu/ holds the C references (OpenMP,
# OpenBLAS); CUDA ops (cuBLAS baselines, fused kernels) arrive with the labs
# that need them, in cuda/.

KERNELS_CPU_SRCS := $(wildcard kernels/cpu/*.c)
KERNELS_CPU_OBJS := $(KERNELS_CPU_SRCS:kernels/%.c=$(BUILD)/obj/kernels/%.o)
LIBKERNELS_CPU   := $(BUILD)/lib/libkernels_cpu.a
BLAS_LDLIBS      := -lopenblas

$(BUILD)/obj/kernels/%.o: kernels/%.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIBKERNELS_CPU): $(KERNELS_CPU_OBJS)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(LIBKERNELS_CPU)

$(BUILD)/tests/test_gemm_ref: kernels/tests/test_gemm_ref.c $(LIBKERNELS_CPU) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP $< -o $@ $(LIBKERNELS_CPU) $(LIBCOMMON) \
	    $(BLAS_LDLIBS) $(CMOCKA_LIBS) $(LDLIBS)
UNIT_TESTS += $(BUILD)/tests/test_gemm_ref

-include $(wildcard $(BUILD)/obj/kernels/*/*.d)
