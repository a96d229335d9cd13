# Lab 05 also builds the training program with the GPU backend, per target and
# source tree: $(BUILD)/<target>/<src>/05-single-gpu-training/train, from
# kernels/train/train.c (with COURSE_TRAIN_GPU), the training loop, the
# student's (or the solution's) train_ops.cu and the target's kernels.
define LAB05_TRAIN
$(BUILD)/$(2)/$(1)/05-single-gpu-training/harness/train_main.o: kernels/train/train.c
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(CFLAGS) -DCOURSE_TRAIN_GPU -MMD -MP -c $$< -o $$@
$(BUILD)/$(2)/$(1)/05-single-gpu-training/train: $(BUILD)/$(2)/$(1)/05-single-gpu-training/harness/train_main.o \
    $(TRAINER_OBJ) $(TRAINER_GPU_OBJ) $(call lab_objs,05-single-gpu-training,$(1),$(2)) \
    $(if $(filter cuda,$(2)),$(LIBKERNELS_CUDA),$(LIBKERNELS_EMU)) $(LIBKERNELS_CPU) \
    | $(LIBCOMMON) $(if $(filter cuda,$(2)),$(CUDA_LIBCOMMON),$(EMU_LIBCOMMON) $(SIMT_LIB) $(SIMTCC))
	$$(Q)$$(LAB_LINK_$(2))
ALL_TARGETS += $(BUILD)/$(2)/$(1)/05-single-gpu-training/train
endef
$(foreach s,labs solutions,$(foreach t,$(LAB_TARGETS),$(eval $(call LAB05_TRAIN,$(s),$(t)))))
