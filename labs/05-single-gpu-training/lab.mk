# Lab 05 also builds the training program with the GPU backend, per target and
# source tree: $(BUILD)/<target>/<src>/05-single-gpu-training/train, from
# kernels/train/train.c (with COURSE_TRAIN_GPU), the training loop, the
# student's (or the solution's) train_ops.cu and the target's kernels.
# Both it and lab 05's bench also link lab 04's kernels from the same source
# tree behind the --matmul switch (kernels/train/matmul_switch.h), so a
# student's own tensor-core matmul can run the model.
LAB05_MATMUL_OBJ := $(BUILD)/obj/kernels/train/matmul_switch.o
LAB_EXTRA_OBJS_05 = $(LAB05_MATMUL_OBJ) $(call lab_objs,04-tensor-cores,$(1),$(2))
define LAB05_TRAIN
$(BUILD)/$(2)/$(1)/05-single-gpu-training/harness/train_main.o: kernels/train/train.c
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(CFLAGS) -DCOURSE_TRAIN_GPU -MMD -MP -c $$< -o $$@
$(BUILD)/$(2)/$(1)/05-single-gpu-training/train: $(BUILD)/$(2)/$(1)/05-single-gpu-training/harness/train_main.o \
    $(TRAINER_OBJ) $(TRAINER_GPU_OBJ) $(call lab_objs,05-single-gpu-training,$(1),$(2)) \
    $(call lab_extra_objs,05-single-gpu-training,$(1),$(2)) \
    $(if $(filter cuda,$(2)),$(LIBKERNELS_CUDA),$(LIBKERNELS_EMU)) $(LIBKERNELS_CPU) \
    | $(LIBCOMMON) $(if $(filter cuda,$(2)),$(CUDA_LIBCOMMON),$(EMU_LIBCOMMON) $(SIMT_LIB) $(SIMTCC))
	$$(Q)$$(LAB_LINK_$(2))
ALL_TARGETS += $(BUILD)/$(2)/$(1)/05-single-gpu-training/train
endef
$(foreach s,labs solutions,$(foreach t,$(LAB_TARGETS),$(eval $(call LAB05_TRAIN,$(s),$(t)))))
# make check LAB=05 builds the programs the handout runs after the checks: the
# training program with the checked kernels, and the CPU one to compare with.
LAB_CHECK_ALSO_05 = $(BUILD)/$(TARGET)/$(LAB_SRC)/05-single-gpu-training/train $(BUILD)/bin/train

# The GPU backend's variants (--matmul with the lab-04 solution kernels,
# --attention flash against naive), per target: the _cuda binary runs on a
# GPU (and skips without one), the _emu binary in CI.
define LAB05_VARIANTS_TEST
$(BUILD)/tests/test_model_gpu_variants_$(1): kernels/tests/test_model_gpu_variants.c \
    $(call lab_objs,05-single-gpu-training,solutions,$(1)) $(call lab_extra_objs,05-single-gpu-training,solutions,$(1)) \
    $(if $(filter cuda,$(1)),$(LIBKERNELS_CUDA),$(LIBKERNELS_EMU)) $(LIBKERNELS_CPU) \
    | $(LIBCOMMON) $(if $(filter cuda,$(1)),$(CUDA_LIBCOMMON),$(EMU_LIBCOMMON) $(SIMT_LIB) $(SIMTCC))
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(LAB_CPPFLAGS_$(1)) $$(CFLAGS) -MMD -MP -MT $$@ -c $$< -o $$@.o
	$$(Q)$$(CXX) -o $$@ $$@.o $$(filter %.o %.a,$$^) $$(if $$(filter cuda,$(1)),$$(CUDA_LIBCOMMON),$$(EMU_LIBCOMMON)) \
	    $$(LIBCOMMON) $$(if $$(filter cuda,$(1)),$$(CUDA_LDLIBS) $$(CUBLAS_LDLIBS),$$(SIMT_LIB) $$(SIMT_LDLIBS)) \
	    $$(BLAS_LDLIBS) $$(CMOCKA_LIBS) $$(LDLIBS)
UNIT_TESTS += $(BUILD)/tests/test_model_gpu_variants_$(1)
endef
$(foreach t,$(LAB_TARGETS),$(eval $(call LAB05_VARIANTS_TEST,$(t))))
