# common/: the shared library.
#
# libcommon.a holds the host-only pieces (no CUDA, no MPI), so every program
# can link it. gpu.c is plain C against the CUDA runtime API and is built once
# per target: against the real runtime ($(BUILD)/cuda/lib) and against the
# SIMT emulator's ($(BUILD)/emu/lib). The communicator is in comm.mk.

COMMON_SRCS := common/error.c common/log.c common/memory.c common/timer.c common/rng.c \
               common/numerics.c common/half.c common/args.c common/trace.c common/json.c \
               common/model.c common/data.c common/checkpoint.c
COMMON_OBJS := $(COMMON_SRCS:common/%.c=$(BUILD)/obj/common/%.o)

$(BUILD)/obj/common/%.o: common/%.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIBCOMMON): $(COMMON_OBJS)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(LIBCOMMON)

# gpu.c against the real CUDA runtime.
ifeq ($(HAVE_CUDA),1)
CUDA_LIBCOMMON := $(BUILD)/cuda/lib/libcommon_gpu.a
$(BUILD)/cuda/obj/common/gpu.o: common/gpu.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CUDA_CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(CUDA_LIBCOMMON): $(BUILD)/cuda/obj/common/gpu.o
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^
ALL_TARGETS += $(CUDA_LIBCOMMON)
endif

# gpu.c against the emulator's runtime (common/simt/include/cuda_runtime_api.h).
ifneq ($(wildcard common/simt/simt.mk),)
EMU_LIBCOMMON := $(BUILD)/emu/lib/libcommon_gpu.a
$(BUILD)/emu/obj/common/gpu.o: common/gpu.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(SIMT_CPPFLAGS) -DCOURSE_SIMT $(CFLAGS) -MMD -MP -c $< -o $@
$(EMU_LIBCOMMON): $(BUILD)/emu/obj/common/gpu.o
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^
$(BUILD)/tests/test_gpu_emu: common/tests/test_gpu.c $(LIBCOMMON) $(EMU_LIBCOMMON) $(SIMT_LIB)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(SIMT_CPPFLAGS) -DCOURSE_SIMT $(CFLAGS) -c $< -o $@.o
	$(Q)$(CXX) -o $@ $@.o $(EMU_LIBCOMMON) $(LIBCOMMON) $(SIMT_LIB) $(SIMT_LDLIBS) $(CMOCKA_LIBS) $(LDLIBS)
$(BUILD)/tests/test_rng_device_emu: common/tests/test_rng_device.cu $(LIBCOMMON) $(EMU_LIBCOMMON) $(SIMT_LIB) | $(SIMTCC)
	@mkdir -p $(@D)
	$(Q)$(SIMTCC) -O2 -g $(CPPFLAGS) $< -o $@ $(EMU_LIBCOMMON) $(LIBCOMMON) $(CMOCKA_LIBS) -lm -lgomp
# The Hopper building blocks (common/hopper.cuh) on the emulator's TMA, mbarrier and wgmma.
$(BUILD)/tests/test_hopper_emu: common/tests/test_hopper.cu common/hopper.cuh $(LIBCOMMON) $(EMU_LIBCOMMON) $(SIMT_LIB) | $(SIMTCC)
	@mkdir -p $(@D)
	$(Q)$(SIMTCC) -O2 -g $(CPPFLAGS) $< -o $@ $(EMU_LIBCOMMON) $(LIBCOMMON) $(CMOCKA_LIBS) -lm -lgomp
# A kernel's fault and what gpu.h reports after it (sticky, as on a GPU).
$(BUILD)/tests/test_gpu_fault_emu: common/tests/test_gpu_fault.cu common/tests/child.h $(LIBCOMMON) $(EMU_LIBCOMMON) $(SIMT_LIB) | $(SIMTCC)
	@mkdir -p $(@D)
	$(Q)$(SIMTCC) -O2 -g $(CPPFLAGS) $< -o $@ $(EMU_LIBCOMMON) $(LIBCOMMON) $(CMOCKA_LIBS) -lm -lgomp
ALL_TARGETS += $(EMU_LIBCOMMON)
UNIT_TESTS += $(BUILD)/tests/test_gpu_emu $(BUILD)/tests/test_rng_device_emu $(BUILD)/tests/test_hopper_emu \
              $(BUILD)/tests/test_gpu_fault_emu
endif

# ---- tests -------------------------------------------------------------------
COMMON_TESTS := test_error test_log test_memory test_timer test_rng test_numerics test_half test_args test_trace \
                test_json test_model test_data test_checkpoint
$(foreach t,$(COMMON_TESTS),$(eval $(BUILD)/tests/$(t): common/tests/$(t).c $(LIBCOMMON)))
$(COMMON_TESTS:%=$(BUILD)/tests/%):
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP $< -o $@ $(LIBCOMMON) $(CMOCKA_LIBS) $(LDLIBS)
UNIT_TESTS += $(COMMON_TESTS:%=$(BUILD)/tests/%)

$(BUILD)/tests/test_trace $(BUILD)/tests/test_json: LDLIBS += -ljansson

# bf16/fp16 against the toolkit's own host conversions (C++: cuda_bf16.h is C++).
ifeq ($(HAVE_CUDA),1)
$(BUILD)/tests/test_half_cuda: common/tests/test_half_cuda.cpp $(LIBCOMMON)
	@mkdir -p $(@D)
	$(Q)$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror $(CPPFLAGS) $(CUDA_CPPFLAGS) $< -o $@ \
	    $(LIBCOMMON) $(CMOCKA_LIBS) -lm
$(BUILD)/tests/test_gpu_cuda: common/tests/test_gpu.c $(LIBCOMMON) $(CUDA_LIBCOMMON)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CUDA_CPPFLAGS) $(CFLAGS) $< -o $@ $(CUDA_LIBCOMMON) $(LIBCOMMON) \
	    $(CUDA_LDLIBS) $(CMOCKA_LIBS) $(LDLIBS)
# The RNG in a kernel, compiled by nvcc; runs (rather than skips) only on a GPU.
$(BUILD)/tests/test_rng_device_cuda: common/tests/test_rng_device.cu $(LIBCOMMON) $(CUDA_LIBCOMMON)
	@mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCCFLAGS) $< -o $@ $(CUDA_LIBCOMMON) $(LIBCOMMON) $(CMOCKA_LIBS) -lgomp
# The same on a real GPU: runs on a Hopper GPU (the sm_90a code), skips elsewhere.
$(BUILD)/tests/test_hopper_cuda: common/tests/test_hopper.cu common/hopper.cuh $(LIBCOMMON) $(CUDA_LIBCOMMON)
	@mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCCFLAGS) $< -o $@ $(CUDA_LIBCOMMON) $(LIBCOMMON) $(CMOCKA_LIBS) -lgomp
# The same fault on a real GPU: checks the emulator's model of sticky faults.
$(BUILD)/tests/test_gpu_fault_cuda: common/tests/test_gpu_fault.cu common/tests/child.h $(LIBCOMMON) $(CUDA_LIBCOMMON)
	@mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCCFLAGS) $< -o $@ $(CUDA_LIBCOMMON) $(LIBCOMMON) $(CMOCKA_LIBS) -lgomp
UNIT_TESTS += $(BUILD)/tests/test_half_cuda $(BUILD)/tests/test_gpu_cuda $(BUILD)/tests/test_rng_device_cuda \
              $(BUILD)/tests/test_hopper_cuda $(BUILD)/tests/test_gpu_fault_cuda
endif

# The libFuzzer harnesses (make fuzz, make fuzz-replay; not in make test).
include common/tests/fuzz/fuzz.mk

-include $(wildcard $(BUILD)/obj/common/*.d $(BUILD)/cuda/obj/common/*.d $(BUILD)/emu/obj/common/*.d $(BUILD)/tests/*.d)
