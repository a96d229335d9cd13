# kernels/: course-provided compute. cpu/ holds the C references (OpenMP,
# OpenBLAS); cuda/ the CUDA ops (cuBLAS baselines now, fused kernels with the
# labs that need them); gemm_harness.c the matmul labs' check and benchmark.

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

# ---- the course model on the CPU and the training program --------------------
# trainer.o holds the loop (kernels/train/trainer.h) so that tests can run it
# in-process; train.c is only the flags.
TRAINER_OBJ := $(BUILD)/obj/kernels/train/trainer.o
$(BUILD)/bin/train: kernels/train/train.c $(TRAINER_OBJ) $(LIBKERNELS_CPU) $(LIBCOMMON)
	@mkdir -p $(@D)
	@mkdir -p $(BUILD)/obj/kernels/train
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -MF $(BUILD)/obj/kernels/train/train.d $< -o $@ \
	    $(TRAINER_OBJ) $(LIBKERNELS_CPU) $(LIBCOMMON) $(BLAS_LDLIBS) $(LDLIBS)
ALL_TARGETS += $(BUILD)/bin/train

$(BUILD)/tests/test_model_ops: kernels/tests/test_model_ops.c $(LIBKERNELS_CPU) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP $< -o $@ $(LIBKERNELS_CPU) $(LIBCOMMON) \
	    $(BLAS_LDLIBS) $(CMOCKA_LIBS) $(LDLIBS)
$(BUILD)/tests/test_train: kernels/tests/test_train.c $(TRAINER_OBJ) $(LIBKERNELS_CPU) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP $< -o $@ $(TRAINER_OBJ) $(LIBKERNELS_CPU) $(LIBCOMMON) \
	    $(BLAS_LDLIBS) $(CMOCKA_LIBS) $(LDLIBS)
UNIT_TESTS += $(BUILD)/tests/test_model_ops $(BUILD)/tests/test_train

# ---- per-target libraries for the labs ----------------------------------------
# libkernels_cuda.a: kernels/cuda/*.cu through nvcc (the cuBLAS baselines, later
# the fused ops), plus the matmul labs' harness (kernels/gemm_harness.c) built
# against the real CUDA runtime, where it can time cuBLAS. libkernels_emu.a:
# the same harness against the emulator's runtime (-DCOURSE_SIMT), without
# cuBLAS. Lab programs link the one of their target, then libkernels_cpu.a.
KERNELS_CUDA_SRCS := $(wildcard kernels/cuda/*.cu)
LIBKERNELS_CUDA   :=
LIBKERNELS_EMU    :=

ifeq ($(HAVE_CUDA),1)
LIBKERNELS_CUDA := $(BUILD)/cuda/lib/libkernels_cuda.a
$(BUILD)/cuda/obj/kernels/cuda/%.cu.o: kernels/cuda/%.cu
	@mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/cuda/obj/kernels/gemm_harness.o: kernels/gemm_harness.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CUDA_CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(LIBKERNELS_CUDA): $(KERNELS_CUDA_SRCS:kernels/cuda/%.cu=$(BUILD)/cuda/obj/kernels/cuda/%.cu.o) \
                    $(BUILD)/cuda/obj/kernels/gemm_harness.o
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^
ALL_TARGETS += $(LIBKERNELS_CUDA)
endif

ifneq ($(SIMT_LIB),)
LIBKERNELS_EMU := $(BUILD)/emu/lib/libkernels_emu.a
$(BUILD)/emu/obj/kernels/gemm_harness.o: kernels/gemm_harness.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(SIMT_CPPFLAGS) -DCOURSE_SIMT $(CFLAGS) -MMD -MP -c $< -o $@
$(LIBKERNELS_EMU): $(BUILD)/emu/obj/kernels/gemm_harness.o
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^
ALL_TARGETS += $(LIBKERNELS_EMU)
endif

-include $(wildcard $(BUILD)/obj/kernels/*/*.d $(BUILD)/cuda/obj/kernels/*.d \
                    $(BUILD)/cuda/obj/kernels/cuda/*.d $(BUILD)/emu/obj/kernels/*.d)
