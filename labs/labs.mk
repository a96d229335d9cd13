# labs/ and solutions/: every lab is built from the same rule.
#
# A lab folder labs/NN-topic/ holds the student's files (*.cu, and *.c other
# than the harness), plus the harness: check.c (cmocka numerics checks) and,
# optionally, bench.c. The harness always comes from labs/; the student files
# come from $(SRC) (labs or solutions). Each is built for every target this
# machine has: cuda (nvcc, for CUDA_ARCH) and emu (the CPU SIMT emulator), into
# $(BUILD)/<target>/<src>/<lab>/{check,bench}.

LAB_NAMES   := $(sort $(notdir $(wildcard labs/[0-9][0-9]-*)))
LAB_TARGETS := $(if $(HAVE_CUDA),cuda) $(if $(SIMT_LIB),emu)

lab_student = $(filter-out labs/$(1)/check.c labs/$(1)/bench.c,$(wildcard labs/$(1)/*.cu labs/$(1)/*.c))
lab_objs    = $(patsubst labs/$(1)/%,$(BUILD)/$(3)/$(2)/$(1)/%.o,$(call lab_student,$(1)))

# Objects a lab's programs link besides its own: a lab.mk (included next) may set
# LAB_EXTRA_OBJS_NN, a function of ($(1) source tree, $(2) target), e.g. lab 05
# links lab 04's kernels of the same tree. $(1) lab, $(2) source tree, $(3) target.
lab_extra_objs = $(call LAB_EXTRA_OBJS_$(firstword $(subst -, ,$(1))),$(2),$(3))

# The ladder: a lab's optional labs/NN-topic/lab.mk may set LAB_LADDER_NN to
# earlier labs (e.g. LAB_LADDER_02 := 01-naive-matmul). Its benchmark then also
# links those labs' solution objects (the student's own files if solutions/ is
# absent), so it can time every step so far side by side.
-include $(wildcard labs/[0-9][0-9]-*/lab.mk)
# A distributed lab: its lab.mk sets LAB_MPI_NN := 1, and its programs then
# also link the communicator (common/comm.h, $(LIBCOMM)) and MPI. Its rubric
# says on how many ranks the grader runs each test ("ranks"). $(1) lab.
lab_mpi        = $(LAB_MPI_$(firstword $(subst -, ,$(1))))
lab_mpi_libs   = $(if $(call lab_mpi,$(1)),$(LIBCOMM))
lab_mpi_ldlibs = $(if $(call lab_mpi,$(1)),$(COMM_LDLIBS) $(MPI_LDFLAGS))
lab_ladder_src  = $(if $(wildcard solutions/$(1)),solutions,labs)
# $(1) lab, $(2) target
lab_ladder_objs = $(foreach e,$(LAB_LADDER_$(firstword $(subst -, ,$(1)))),$(call lab_objs,$(e),$(call lab_ladder_src,$(e)),$(2)))
# Course kernels every lab program links (normal prerequisites, after the objects).
LAB_KLIBS_cuda = $(LIBKERNELS_CUDA) $(LIBKERNELS_CPU)
LAB_KLIBS_emu  = $(LIBKERNELS_EMU) $(LIBKERNELS_CPU)

# Link line per target: objects first, then the libraries they use.
LAB_LINK_cuda = $(CXX) -o $@ $^ $(CUDA_LIBCOMMON) $(LIBCOMMON) $(CUDA_LDLIBS) $(CUBLAS_LDLIBS) \
                $(BLAS_LDLIBS) $(CMOCKA_LIBS) $(LDLIBS)
LAB_LINK_emu  = $(CXX) -rdynamic -o $@ $^ $(EMU_LIBCOMMON) $(LIBCOMMON) $(SIMT_LIB) $(SIMT_LDLIBS) \
                $(BLAS_LDLIBS) $(CMOCKA_LIBS) $(LDLIBS)
LAB_CPPFLAGS_cuda = $(CUDA_CPPFLAGS)
LAB_CPPFLAGS_emu  = $(SIMT_CPPFLAGS) -DCOURSE_SIMT

# nvcc builds the labs with -Werror all-warnings (NVCCFLAGS): a variable
# declared or set and never used, a function never called, a comparison of
# an unsigned value with zero, or a function that can end without returning
# its value stops a GPU build. The emulator's build makes the same warnings
# of g++ errors, so such a file does not pass here and then fail on a GPU.
# Host functions also get what -Xcompiler -Wall,-Wextra,-Werror gives them
# under nvcc (SIMT_HOST_WERROR: an unused parameter, a signed/unsigned
# comparison). Not -Wall everywhere: nvcc never shows its host compiler a
# kernel's body, and g++ would reject kernels that nvcc accepts (threadIdx.x
# compared with an int). -Werror=cpp: a #warning, such as the one for
# including CUDA's internal device_functions.h, is an error to nvcc there.
SIMT_LAB_WERROR := -Werror=unused-variable -Werror=unused-but-set-variable -Werror=unused-function \
                   -Werror=return-type -Werror=type-limits -Werror=cpp -DSIMT_HOST_WERROR

# The labs' kernels are compiled for the emulator's memory-access tracer
# (common/simt/include/simt_memtrace.h): SIMT_MEMTRACE=1 make check LAB=NN
# prints each launch's sectors and bank passes per warp request, and lab
# 01's check counts them. About twice the emulator time of a kernel that does
# nothing but load and store; nothing when no launch is traced is measurable.
SIMT_LAB_MEMTRACE := --memtrace

# LAB_DEFS: extra flags for the student files' .cu objects only (both
# targets, and make ptxas), e.g. LAB_DEFS='-DMMA_BN=128 -DMMA_WARPS_N=2' to
# try another tile configuration. The value is kept in $(BUILD)/lab-defs,
# rewritten only when it changes, and every lab .cu object depends on that
# file: a new LAB_DEFS rebuilds them, the same one rebuilds nothing. To keep
# several configurations built side by side, give each its own BUILD.
LAB_DEFS ?=
LAB_DEFS_STAMP := $(BUILD)/lab-defs
ifneq ($(wildcard $(LAB_DEFS_STAMP))|$(strip $(file <$(LAB_DEFS_STAMP))),$(LAB_DEFS_STAMP)|$(strip $(LAB_DEFS)))
$(shell mkdir -p $(BUILD))
$(file >$(LAB_DEFS_STAMP),$(strip $(LAB_DEFS)))
endif

# An emulated .cu object is rebuilt when its sources change (the -MMD
# dependency file lists the headers, the emulator's included) and when the
# way simtcc compiles changes (SIMT_COMPILE_DEPS); a check or bench is
# relinked when libsimt changes.
# $(1) lab, $(2) src, $(3) target
define LAB_RULES
$(BUILD)/$(3)/$(2)/$(1)/%.cu.o: $(2)/$(1)/%.cu $(LAB_DEFS_STAMP) $(if $(filter emu,$(3)),$(SIMT_COMPILE_DEPS) | $(SIMTCC))
	@mkdir -p $$(@D)
	$(if $(filter cuda,$(3)),$$(Q)$$(NVCC) $$(NVCCFLAGS) $$(LAB_DEFS) -Ilabs/$(1) -MMD -MP -c $$< -o $$@,$$(Q)$$(SIMTCC) -O2 -g $$(SIMT_LAB_MEMTRACE) $$(SIMT_LAB_WERROR) $$(CPPFLAGS) $$(LAB_DEFS) -Ilabs/$(1) -MMD -MP -c $$< -o $$@)
$(BUILD)/$(3)/$(2)/$(1)/%.c.o: $(2)/$(1)/%.c
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(LAB_CPPFLAGS_$(3)) -Ilabs/$(1) $$(CFLAGS) -MMD -MP -c $$< -o $$@
$(BUILD)/$(3)/$(2)/$(1)/harness/%.o: labs/$(1)/%.c
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(LAB_CPPFLAGS_$(3)) -Ilabs/$(1) $$(CFLAGS) -MMD -MP -c $$< -o $$@
$(BUILD)/$(3)/$(2)/$(1)/check: $(BUILD)/$(3)/$(2)/$(1)/harness/check.o $(call lab_objs,$(1),$(2),$(3)) $(call lab_mpi_libs,$(1)) $(LAB_KLIBS_$(3)) $(if $(filter emu,$(3)),$(SIMT_LIB)) | $(LIBCOMMON) $(if $(filter cuda,$(3)),$(CUDA_LIBCOMMON),$(EMU_LIBCOMMON) $(SIMT_LIB) $(SIMTCC))
	$$(Q)$$(LAB_LINK_$(3)) $(call lab_mpi_ldlibs,$(1))
ALL_TARGETS += $(BUILD)/$(3)/$(2)/$(1)/check
ifneq ($(wildcard labs/$(1)/bench.c),)
$(BUILD)/$(3)/$(2)/$(1)/bench: $(BUILD)/$(3)/$(2)/$(1)/harness/bench.o $(call lab_objs,$(1),$(2),$(3)) $(call lab_ladder_objs,$(1),$(3)) $(call lab_extra_objs,$(1),$(2),$(3)) $(call lab_mpi_libs,$(1)) $(LAB_KLIBS_$(3)) $(if $(filter emu,$(3)),$(SIMT_LIB)) | $(LIBCOMMON) $(if $(filter cuda,$(3)),$(CUDA_LIBCOMMON),$(EMU_LIBCOMMON) $(SIMT_LIB) $(SIMTCC))
	$$(Q)$$(LAB_LINK_$(3)) $(call lab_mpi_ldlibs,$(1))
ALL_TARGETS += $(BUILD)/$(3)/$(2)/$(1)/bench
endif
endef

$(foreach l,$(LAB_NAMES),$(foreach s,labs solutions,$(foreach t,$(LAB_TARGETS),$(eval $(call LAB_RULES,$(l),$(s),$(t))))))

# make check LAB=NN SANITIZE=thread|address (emulator only): the lab's .cu
# files compiled with the emulator's ThreadSanitizer (a missing
# __syncthreads() is reported as a data race, with the two lines) or
# AddressSanitizer (a read or write past the end of a cudaMalloc array, with
# the line), linked with the matching libsimt, into $(BUILD)/emu-<sanitizer>/.
# The harness and the course's libraries stay as they are. -O1 keeps the
# reports' lines exact. $(1) lab, $(2) src, $(3) address or thread
SIMT_LIB_address := $(SIMT_LIB_ASAN)
SIMT_LIB_thread  := $(SIMT_LIB_TSAN)
define LAB_SAN_RULES
$(BUILD)/emu-$(3)/$(2)/$(1)/%.cu.o: $(2)/$(1)/%.cu $(LAB_DEFS_STAMP) $(SIMT_COMPILE_DEPS) | $(SIMTCC)
	@mkdir -p $$(@D)
	$$(Q)$$(SIMTCC) --sanitize=$(3) -O1 -g $$(SIMT_LAB_WERROR) $$(CPPFLAGS) $$(LAB_DEFS) -Ilabs/$(1) -MMD -MP -c $$< -o $$@
$(BUILD)/emu-$(3)/$(2)/$(1)/%.c.o: $(2)/$(1)/%.c
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(LAB_CPPFLAGS_emu) -Ilabs/$(1) $$(CFLAGS) -MMD -MP -c $$< -o $$@
$(BUILD)/emu-$(3)/$(2)/$(1)/check: $(BUILD)/emu/$(2)/$(1)/harness/check.o $(call lab_objs,$(1),$(2),emu-$(3)) $(call lab_mpi_libs,$(1)) $(LAB_KLIBS_emu) $(SIMT_LIB_$(3)) | $(LIBCOMMON) $(EMU_LIBCOMMON) $(SIMTCC)
	$$(Q)$$(CXX) -fsanitize=$(3) -o $$@ $$^ $(EMU_LIBCOMMON) $(LIBCOMMON) $(SIMT_LDLIBS) $(BLAS_LDLIBS) $(CMOCKA_LIBS) $(LDLIBS) -lgomp $(call lab_mpi_ldlibs,$(1))
endef
ifneq ($(SIMT_LIB),)
$(foreach l,$(LAB_NAMES),$(foreach s,labs solutions,$(foreach z,address thread,$(eval $(call LAB_SAN_RULES,$(l),$(s),$(z))))))
endif

-include $(shell find $(BUILD)/cuda $(BUILD)/emu $(BUILD)/emu-address $(BUILD)/emu-thread -name '*.d' 2>/dev/null)

# ---- make check / bench LAB=NN ------------------------------------------------
# LAB=05, LAB=5, LAB=05-single-gpu-training and labs/05-single-gpu-training/
# all name lab 05; SRC=solutions/ and ./solutions (a shell's completion) name
# solutions.
LAB_SRC = $(patsubst %/,%,$(patsubst ./%,%,$(SRC)))
LAB_WORD := $(notdir $(patsubst %/,%,$(LAB)))
LAB_DIR := $(if $(LAB_WORD),$(or $(filter $(LAB_WORD),$(LAB_NAMES)),$(firstword $(filter $(LAB_WORD)-% 0$(LAB_WORD)-%,$(LAB_NAMES)))))

.PHONY: lab-arg bench-run
lab-arg:
	@if [ -z "$(LAB)" ]; then echo "make: say which lab, e.g. make $(MAKECMDGOALS) LAB=00; labs: $(LAB_NAMES)"; exit 2; fi
	@if [ -z "$(LAB_DIR)" ]; then echo "make: no lab '$(LAB)'; pick one of: $(LAB_NAMES)"; exit 2; fi
	@case "$(LAB_SRC)" in labs|solutions) ;; *) echo "make: SRC=$(SRC) must be labs or solutions"; exit 2;; esac
	@if [ "$(LAB_SRC)" = solutions ] && [ ! -d "solutions/$(LAB_DIR)" ]; then \
	  echo "make: SRC=solutions, but this copy of the course has no solutions/$(LAB_DIR) (a student copy"; \
	  echo "  leaves them out); drop SRC= to build your own code in labs/"; exit 2; fi
	@case "$(TARGET)" in \
	  cuda) if [ -z "$(HAVE_CUDA)" ]; then echo "make: TARGET=cuda needs nvcc (CUDA toolkit); use TARGET=emu"; exit 2; fi; \
	        if [ -z "$(HAVE_GPU)" ]; then echo "make: TARGET=cuda but no GPU is visible (nvidia-smi); use TARGET=emu to run on the CPU"; exit 2; fi ;; \
	  emu)  if [ -z "$(SIMT_LIB)" ]; then echo "make: TARGET=emu but the SIMT emulator (common/simt) is not in this tree"; exit 2; fi ;; \
	  *) echo "make: TARGET=$(TARGET) must be cuda or emu"; exit 2;; \
	esac
	@case "$(SANITIZE)" in \
	  "") ;; \
	  address|thread) if [ "$(TARGET)" != emu ]; then echo "make: SANITIZE=$(SANITIZE) runs on the emulator: add TARGET=emu (on a GPU, use compute-sanitizer)"; exit 2; fi ;; \
	  *) echo "make: SANITIZE=$(SANITIZE) must be thread (data races: a missing __syncthreads()) or address (out-of-bounds reads and writes)"; exit 2;; \
	esac

# Both install missing Debian packages first (deps), then build in a fresh
# make that sees them.
CHECK_DIR = $(BUILD)/$(TARGET)$(if $(SANITIZE),-$(SANITIZE))/$(LAB_SRC)/$(LAB_DIR)
# A lab's lab.mk may set LAB_CHECK_ALSO_NN to programs its handout runs next
# (lab 05: the training programs), built with the checks, not run. -s (unless
# V=1): no "is up to date" line for each of them on every run.
check: lab-arg deps
	$(Q)$(MAKE) --no-print-directory $(if $(Q),-s) $(CHECK_DIR)/check $(if $(SANITIZE),,$(LAB_CHECK_ALSO_$(firstword $(subst -, ,$(LAB_DIR)))))
	$(Q)echo "== lab $(LAB_DIR) checks ($(LAB_SRC), TARGET=$(TARGET)$(if $(SANITIZE), SANITIZE=$(SANITIZE)))"
	$(Q)$(CHECK_DIR)/check $(if $(ONLY),--only '$(ONLY)') $(if $(SEED),--seed '$(SEED)')

# make ptxas LAB=NN: compile each of the lab's .cu for PTXAS_ARCH with ptxas's
# resource report (registers, spills, what it did to wgmma), read by
# common/tools/ptxas_report.sh, which fails on spills or serialised wgmma.
# Needs nvcc, not a GPU.
# make ptxas-kernels does the same for the course kernels (kernels/cuda: the
# model's fused ops and the flash attention that lab 05's MFU rests on).
PTXAS_ARCH ?= 90a
PTXAS_FLAGS = $(filter-out -gencode arch=%,$(NVCCFLAGS)) -gencode arch=compute_$(PTXAS_ARCH),code=sm_$(PTXAS_ARCH) -Xptxas -v
# $(1) the .cu files, $(2) extra flags
PTXAS_RUN = st=0; for f in $(sort $(1)); do echo "-- $$f"; \
	  { $(NVCC) $(PTXAS_FLAGS) $(CUDA_CPPFLAGS) $(2) -c $$f -o /dev/null 2>&1 || echo "ptxas error: nvcc failed on $$f"; } | \
	    bash common/tools/ptxas_report.sh || st=1; done; exit $$st
.PHONY: ptxas ptxas-kernels ptxas-need-nvcc
ptxas-need-nvcc:
	$(Q)if [ -z "$(HAVE_CUDA)" ]; then echo "make: ptxas needs nvcc (the CUDA toolkit)"; exit 2; fi
ptxas: lab-arg ptxas-need-nvcc
	$(Q)echo "== lab $(LAB_DIR): ptxas resource report ($(LAB_SRC), sm_$(PTXAS_ARCH))"
	$(Q)$(call PTXAS_RUN,$(wildcard $(LAB_SRC)/$(LAB_DIR)/*.cu),-Ilabs/$(LAB_DIR) $(LAB_DEFS))
ptxas-kernels: ptxas-need-nvcc
	$(Q)echo "== course kernels: ptxas resource report (sm_$(PTXAS_ARCH))"
	$(Q)$(call PTXAS_RUN,$(wildcard kernels/cuda/*.cu),)

bench: lab-arg deps
	$(Q)if [ ! -f labs/$(LAB_DIR)/bench.c ]; then echo "make: lab $(LAB_DIR) has no benchmark"; exit 2; fi
	$(Q)$(MAKE) --no-print-directory $(BUILD)/$(TARGET)/$(LAB_SRC)/$(LAB_DIR)/bench
	$(Q)$(BUILD)/$(TARGET)/$(LAB_SRC)/$(LAB_DIR)/bench $(ARGS)
