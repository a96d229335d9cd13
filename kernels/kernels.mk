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
# The lab-05 model backend (kernels/cuda/model_gpu.c) is plain C over the
# launch wrappers and common/gpu.h, so one object serves both targets; it
# calls the student's lab-05 functions, which the programs that use it link
# (static archives pull it in only where it is referenced). The fused model
# kernels (kernels/cuda/model_ops.cu), the fused attention and the device
# fills the matmul bench draws its inputs with (kernels/cuda/fill.cu) are built
# for both targets: by nvcc with cuBLAS for the matmuls, and by simtcc for the
# emulator, where the matmuls run on a tiled kernel. cublas_gemm.cu stays out
# of the emulator build.
MODEL_GPU_OBJ     := $(BUILD)/obj/kernels/cuda/model_gpu.o
TRAINER_GPU_OBJ   := $(BUILD)/obj/kernels/train/trainer_gpu.o
KERNELS_EMU_CU    := kernels/cuda/model_ops.cu kernels/cuda/flash_attention.cu kernels/cuda/fill.cu

ifeq ($(HAVE_CUDA),1)
LIBKERNELS_CUDA := $(BUILD)/cuda/lib/libkernels_cuda.a
$(BUILD)/cuda/obj/kernels/cuda/%.cu.o: kernels/cuda/%.cu
	@mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/cuda/obj/kernels/gemm_harness.o: kernels/gemm_harness.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CUDA_CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(LIBKERNELS_CUDA): $(KERNELS_CUDA_SRCS:kernels/cuda/%.cu=$(BUILD)/cuda/obj/kernels/cuda/%.cu.o) \
                    $(BUILD)/cuda/obj/kernels/gemm_harness.o $(MODEL_GPU_OBJ)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^
ALL_TARGETS += $(LIBKERNELS_CUDA)
endif

ifneq ($(SIMT_LIB),)
LIBKERNELS_EMU := $(BUILD)/emu/lib/libkernels_emu.a
$(BUILD)/emu/obj/kernels/gemm_harness.o: kernels/gemm_harness.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(SIMT_CPPFLAGS) -DCOURSE_SIMT $(CFLAGS) -MMD -MP -c $< -o $@
# SIMT_KERNELS_FLAGS: extra simtcc flags for the course's own kernels on the
# emulator, e.g. SIMT_KERNELS_FLAGS=--memtrace BUILD=build/trace, then
# SIMT_MEMTRACE=1 on a test that runs them, to see how they meet memory
# (their own BUILD: objects are not rebuilt when the flags change; the
# emulator tests link with -rdynamic then, so the report can name kernels).
SIMT_KERNELS_FLAGS ?=
$(BUILD)/emu/obj/kernels/cuda/%.cu.o: kernels/cuda/%.cu $(SIMT_COMPILE_DEPS) | $(SIMTCC)
	@mkdir -p $(@D)
	$(Q)$(SIMTCC) -O2 -g $(SIMT_KERNELS_FLAGS) $(CPPFLAGS) -MMD -MP -c $< -o $@
KERNELS_EMU_HDRS := kernels/cuda/model_ops_gpu.h common/error.h kernels/cuda/flash_attention.h kernels/cuda/fill.h \
    common/rng.h common/warp_mma.cuh common/lab.h
$(KERNELS_EMU_CU:kernels/cuda/%.cu=$(BUILD)/emu/obj/kernels/cuda/%.cu.o): $(KERNELS_EMU_HDRS)
$(LIBKERNELS_EMU): $(BUILD)/emu/obj/kernels/gemm_harness.o $(MODEL_GPU_OBJ) \
                   $(KERNELS_EMU_CU:kernels/cuda/%.cu=$(BUILD)/emu/obj/kernels/cuda/%.cu.o)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^
ALL_TARGETS += $(LIBKERNELS_EMU)

# The fused model kernels against the CPU reference ops, on the emulator.
$(BUILD)/tests/test_model_ops_gpu_emu: kernels/tests/test_model_ops_gpu.c $(LIBKERNELS_EMU) $(LIBKERNELS_CPU) \
                                       $(LIBCOMMON) $(EMU_LIBCOMMON) $(SIMT_LIB)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(SIMT_CPPFLAGS) -DCOURSE_SIMT $(CFLAGS) -MMD -MP -MT $@ -c $< -o $@.o
	$(Q)$(CXX) $(if $(SIMT_KERNELS_FLAGS),-rdynamic) -o $@ $@.o $(LIBKERNELS_EMU) $(LIBKERNELS_CPU) $(EMU_LIBCOMMON) $(LIBCOMMON) $(SIMT_LIB) \
	    $(SIMT_LDLIBS) $(BLAS_LDLIBS) $(CMOCKA_LIBS) $(LDLIBS)
UNIT_TESTS += $(BUILD)/tests/test_model_ops_gpu_emu

# The fused (flash) attention against the CPU reference attention, on the emulator.
$(BUILD)/tests/test_flash_attention_emu: kernels/tests/test_flash_attention.c $(LIBKERNELS_EMU) $(LIBKERNELS_CPU) \
                                         $(LIBCOMMON) $(EMU_LIBCOMMON) $(SIMT_LIB)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(SIMT_CPPFLAGS) -DCOURSE_SIMT $(CFLAGS) -MMD -MP -MT $@ -c $< -o $@.o
	$(Q)$(CXX) $(if $(SIMT_KERNELS_FLAGS),-rdynamic) -o $@ $@.o $(LIBKERNELS_EMU) $(LIBKERNELS_CPU) $(EMU_LIBCOMMON) $(LIBCOMMON) $(SIMT_LIB) \
	    $(SIMT_LDLIBS) $(BLAS_LDLIBS) $(CMOCKA_LIBS) $(LDLIBS)
UNIT_TESTS += $(BUILD)/tests/test_flash_attention_emu

# The same two tests with the course's kernels under the emulator's race
# detector (tsan: a missing __syncthreads() or cp.async wait in the fused
# attention or the model ops is a reported race, whatever the schedule) and
# its bounds checker (asan: a read or write past a cudaMalloc array). As
# make check SANITIZE= builds a lab: simtcc --sanitize at -O1, so the
# reports' lines are exact, linked with the matching libsimt; the harness
# and the CPU references stay as they are. The TSan libsimt carries
# common/simt/tsan.supp (OpenBLAS and OpenMP, which the references use, are
# not built for ThreadSanitizer). $(1) tsan or asan, $(2) thread or
# address, $(3) the libsimt built for it.
define KERNELS_SAN_RULES
$(BUILD)/emu-$(2)/obj/kernels/cuda/%.cu.o: kernels/cuda/%.cu $(SIMT_COMPILE_DEPS) | $(SIMTCC)
	@mkdir -p $$(@D)
	$$(Q)$$(SIMTCC) --sanitize=$(2) -O1 -g $$(CPPFLAGS) -MMD -MP -c $$< -o $$@
$(KERNELS_EMU_CU:kernels/cuda/%.cu=$(BUILD)/emu-$(2)/obj/kernels/cuda/%.cu.o): $(KERNELS_EMU_HDRS)
$(BUILD)/emu-$(2)/lib/libkernels_emu.a: $(BUILD)/emu/obj/kernels/gemm_harness.o \
                                        $(KERNELS_EMU_CU:kernels/cuda/%.cu=$(BUILD)/emu-$(2)/obj/kernels/cuda/%.cu.o)
	@mkdir -p $$(@D)
	$$(Q)rm -f $$@ && ar rcs $$@ $$^
$(BUILD)/tests/test_model_ops_gpu_emu_$(1) $(BUILD)/tests/test_flash_attention_emu_$(1): \
  $(BUILD)/tests/%_emu_$(1): $(BUILD)/tests/%_emu $(BUILD)/emu-$(2)/lib/libkernels_emu.a $(3)
	$$(Q)$$(CXX) -fsanitize=$(2) -o $$@ $$<.o $(BUILD)/emu-$(2)/lib/libkernels_emu.a $$(LIBKERNELS_CPU) \
	    $$(EMU_LIBCOMMON) $$(LIBCOMMON) $(3) $$(SIMT_LDLIBS) $$(BLAS_LDLIBS) $$(CMOCKA_LIBS) $$(LDLIBS) -lgomp
UNIT_TESTS += $(BUILD)/tests/test_model_ops_gpu_emu_$(1) $(BUILD)/tests/test_flash_attention_emu_$(1)
endef
$(eval $(call KERNELS_SAN_RULES,tsan,thread,$(SIMT_LIB_TSAN)))
$(eval $(call KERNELS_SAN_RULES,asan,address,$(SIMT_LIB_ASAN)))

# The matmul labs' harness itself (gemm_harness.c): kernels wrong in each way
# it promises to catch fail with its message, and right ones pass; its
# benchmark's flags, JSON and screen. Emulator only: most of its kernels are
# host functions on the emulator's device memory; the few that must be
# launched are compiled as the labs' are (simtcc --memtrace), so that the
# emulator's tracer and its watch on the guard zones see their accesses.
GEMM_HARNESS_TEST_CU := $(BUILD)/emu/obj/kernels/tests/gemm_harness_kernels.cu.o
$(GEMM_HARNESS_TEST_CU): kernels/tests/gemm_harness_kernels.cu $(SIMT_COMPILE_DEPS) | $(SIMTCC)
	@mkdir -p $(@D)
	$(Q)$(SIMTCC) -O2 -g --memtrace $(CPPFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/tests/test_gemm_harness_emu: kernels/tests/test_gemm_harness.c $(GEMM_HARNESS_TEST_CU) $(LIBKERNELS_EMU) \
                                      $(LIBKERNELS_CPU) $(LIBCOMMON) $(EMU_LIBCOMMON) $(SIMT_LIB)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(SIMT_CPPFLAGS) -DCOURSE_SIMT $(CFLAGS) -MMD -MP -MT $@ -c $< -o $@.o
	$(Q)$(CXX) -rdynamic -o $@ $@.o $(GEMM_HARNESS_TEST_CU) $(LIBKERNELS_EMU) $(LIBKERNELS_CPU) $(EMU_LIBCOMMON) \
	    $(LIBCOMMON) $(SIMT_LIB) $(SIMT_LDLIBS) $(BLAS_LDLIBS) $(CMOCKA_LIBS) -ljansson $(LDLIBS)
UNIT_TESTS += $(BUILD)/tests/test_gemm_harness_emu
endif

# The same tests against the real runtime: they run on a GPU and skip without one.
ifeq ($(HAVE_CUDA),1)
$(BUILD)/tests/test_model_ops_gpu_cuda: kernels/tests/test_model_ops_gpu.c $(LIBKERNELS_CUDA) $(LIBKERNELS_CPU) \
                                        $(LIBCOMMON) $(CUDA_LIBCOMMON)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CUDA_CPPFLAGS) $(CFLAGS) -MMD -MP -MT $@ -c $< -o $@.o
	$(Q)$(CXX) -o $@ $@.o $(LIBKERNELS_CUDA) $(LIBKERNELS_CPU) $(CUDA_LIBCOMMON) $(LIBCOMMON) $(CUDA_LDLIBS) \
	    $(CUBLAS_LDLIBS) $(BLAS_LDLIBS) $(CMOCKA_LIBS) $(LDLIBS)
UNIT_TESTS += $(BUILD)/tests/test_model_ops_gpu_cuda

$(BUILD)/tests/test_flash_attention_cuda: kernels/tests/test_flash_attention.c $(LIBKERNELS_CUDA) $(LIBKERNELS_CPU) \
                                          $(LIBCOMMON) $(CUDA_LIBCOMMON)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CUDA_CPPFLAGS) $(CFLAGS) -MMD -MP -MT $@ -c $< -o $@.o
	$(Q)$(CXX) -o $@ $@.o $(LIBKERNELS_CUDA) $(LIBKERNELS_CPU) $(CUDA_LIBCOMMON) $(LIBCOMMON) $(CUDA_LDLIBS) \
	    $(CUBLAS_LDLIBS) $(BLAS_LDLIBS) $(CMOCKA_LIBS) $(LDLIBS)
UNIT_TESTS += $(BUILD)/tests/test_flash_attention_cuda
endif

-include $(wildcard $(BUILD)/obj/kernels/*/*.d $(BUILD)/cuda/obj/kernels/*.d $(BUILD)/tests/*.d \
                    $(BUILD)/cuda/obj/kernels/cuda/*.d $(BUILD)/emu/obj/kernels/*.d $(BUILD)/emu/obj/kernels/tests/*.d \
                    $(BUILD)/emu-thread/obj/kernels/cuda/*.d $(BUILD)/emu-address/obj/kernels/cuda/*.d \
                    $(BUILD)/obj/kernels/*/*.d)
