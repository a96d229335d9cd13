# autograder/: the grader (build/bin/grade), the programs it builds inside its
# private copy of the course, its own tests, and the Gradescope zip.
#
# `make grade` builds $(BUILD)/bin/grade and grades $(SRC) (labs/ by default,
# SRC=solutions for the reference). The grader copies this tree into a temp
# folder and calls the grade-* targets below there; they are not meant to be
# run by hand.

GRADE_BIN  := $(BUILD)/bin/grade
# common/json.c: the UTF-8 rule results.json shares with the course's JSON writers.
GRADE_SRCS := $(wildcard autograder/src/*.c) common/json.c
GRADE_HDRS := $(wildcard autograder/src/*.h)
# Extra grader flags for `make grade`, e.g. GRADE_ARGS='--json results.json'.
GRADE_ARGS ?=

# The grader knows where its own tree is (the checks, harness and rubrics it
# trusts); it is baked in at build time, never written into a committed file.
# Paths and messages go into fixed buffers with snprintf on purpose (cut, never
# overflowed), so gcc's truncation warning is off for these files only.
$(GRADE_BIN): $(GRADE_SRCS) $(GRADE_HDRS)
	@mkdir -p $(@D)
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -Wno-format-truncation -D_GNU_SOURCE \
	    -DGRADE_ROOT='"$(abspath .)"' -Icommon $(GRADE_SRCS) -o $@ -ljansson -lm

# The grader's self-test (autograder/tests/test_grade.c): the known-wrong
# submissions in autograder/wrong/, solutions, starters, --batch, Gradescope,
# and unit tests of the parts that need no grading run (rubric validation,
# speed scoring, the table and results.json, copying, hashing and removing
# trees), linked in directly: speed cannot be run without a GPU, but its
# scoring can be tested anywhere.
# GRADE_TEST_FILTER='test_speed*' runs only the tests whose names match.
GRADE_SELFTEST := $(BUILD)/tests/test_grade
GRADE_UNIT_SRCS := autograder/src/rubric.c autograder/src/speed.c autograder/src/report.c autograder/src/tree.c common/json.c
$(GRADE_SELFTEST): autograder/tests/test_grade.c autograder/tests/report_fixture.h $(GRADE_UNIT_SRCS) $(GRADE_HDRS) $(GRADE_BIN)
	@mkdir -p $(@D)
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -Wno-format-truncation -D_GNU_SOURCE -Iautograder/src -Icommon \
	    -DGRADE_BIN='"$(abspath $(GRADE_BIN))"' -DGRADE_ROOT='"$(abspath .)"' $< $(GRADE_UNIT_SRCS) -o $@ \
	    -ljansson -lm $(CMOCKA_LIBS)
UNIT_TESTS += $(GRADE_SELFTEST)

# The sandbox's own tests (autograder/tests/test_sandbox.c): sandbox_run on
# tiny children, field by field, in seconds; test_grade reaches it only
# through whole gradings. SANDBOX_TEST_FILTER='test_channel*' runs some.
SANDBOX_TEST := $(BUILD)/tests/test_sandbox
$(SANDBOX_TEST): autograder/tests/test_sandbox.c autograder/src/sandbox.c autograder/src/tree.c $(GRADE_HDRS)
	@mkdir -p $(@D)
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -Wno-format-truncation -D_GNU_SOURCE -Iautograder/src -Icommon \
	    $< autograder/src/sandbox.c autograder/src/tree.c -o $@ $(CMOCKA_LIBS) -pthread
UNIT_TESTS += $(SANDBOX_TEST)

# report.c alone (autograder/tests/test_report.c): the table's rounding and
# columns, in milliseconds. REPORT_TEST_FILTER='test_table*' runs some.
REPORT_TEST := $(BUILD)/tests/test_report
$(REPORT_TEST): autograder/tests/test_report.c autograder/tests/report_fixture.h autograder/src/report.c autograder/src/speed.c common/json.c $(GRADE_HDRS)
	@mkdir -p $(@D)
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -Wno-format-truncation -D_GNU_SOURCE -Iautograder/src -Icommon \
	    $< autograder/src/report.c autograder/src/speed.c common/json.c -o $@ -ljansson -lm $(CMOCKA_LIBS)
UNIT_TESTS += $(REPORT_TEST)

.PHONY: grade grade-run gradescope-zip
grade: deps
	$(Q)$(MAKE) --no-print-directory grade-run

# A low score is not an error: the grader exits non-zero only when it could
# not grade at all. The course libraries it builds from this tree are kept in
# $(BUILD)/grade-cache and reused while only student files change.
grade-run: $(GRADE_BIN)
	$(Q)CUDA_ARCH='$(CUDA_ARCH)' $(GRADE_BIN) --src $(SRC) --target $(TARGET) $(if $(LAB),--lab $(LAB),--all) \
	    --base-cache $(BUILD)/grade-cache $(GRADE_ARGS)

# ---- inside the grader's private copy ---------------------------------------
# The check and bench programs the grader runs: the lab's own check.c/bench.c
# with main renamed, linked to autograder/harness/grade_main.c, which runs one
# named cmocka test and reports the verdict, with a per-run secret, on a
# channel that only the grader reads (see autograder/README.md).
# The communicator too, where Open MPI is installed: the distributed labs link it.
GRADE_LIBS_emu  := $(SIMTCC) $(SIMT_LIB) $(LIBCOMMON) $(EMU_LIBCOMMON) $(LIBKERNELS_EMU) $(LIBKERNELS_CPU) \
                   $(if $(MPICC),$(LIBCOMM))
GRADE_LIBS_cuda := $(LIBCOMMON) $(CUDA_LIBCOMMON) $(LIBKERNELS_CUDA) $(LIBKERNELS_CPU) $(if $(MPICC),$(LIBCOMM))
# The objects of the programs that are the grader's, not the student's (the
# harness, each lab's check.c and bench.c) are built with the libraries too:
# the base every submission is graded in already holds them, so grading one
# compiles the student's files and links.
# $(1) target
grade_harness_objs = $(BUILD)/grade/harness/grade_main.o \
                     $(foreach l,$(LAB_NAMES),$(foreach p,check $(if $(wildcard labs/$(l)/bench.c),bench),$(BUILD)/$(1)/labs/$(l)/graded/$(p).o))
GRADE_HARNESS_OBJS_emu  = $(call grade_harness_objs,emu)
GRADE_HARNESS_OBJS_cuda = $(call grade_harness_objs,cuda)
.PHONY: grade-libs-emu grade-libs-cuda
grade-libs-emu: $(GRADE_LIBS_emu) $(GRADE_HARNESS_OBJS_emu)
grade-libs-cuda: $(GRADE_LIBS_cuda) $(GRADE_HARNESS_OBJS_cuda)

$(BUILD)/grade/harness/grade_main.o: autograder/harness/grade_main.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
-include $(wildcard $(BUILD)/grade/harness/*.d)

# The link goes through autograder/harness/check_link.sh, which refuses the
# program (a build error the student sees, naming the symbol) when the
# student's objects define a symbol another input defines (cmocka's _fail,
# libc's clock_gettime, the course's or the runtime's functions) or call what
# would do the work for them (BLAS, cuBLAS, the course's kernels, dlsym): they
# are linked first, so their definitions would win. (Order-only: the link
# line takes every normal prerequisite as an input.)
GRADE_CHECK_LINK := autograder/harness/check_link.sh
# $(1) lab, $(2) target, $(3) check or bench
define GRADE_RULES
$(BUILD)/$(2)/labs/$(1)/graded/$(3).o: labs/$(1)/$(3).c
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(LAB_CPPFLAGS_$(2)) -Ilabs/$(1) $$(CFLAGS) -Dmain=grade_lab_main -MMD -MP -c $$< -o $$@
$(BUILD)/$(2)/labs/$(1)/graded/$(3): $(BUILD)/grade/harness/grade_main.o $(BUILD)/$(2)/labs/$(1)/graded/$(3).o $(call lab_objs,$(1),labs,$(2)) $(if $(filter bench,$(3)),$(call lab_ladder_objs,$(1),$(2)) $(call lab_extra_objs,$(1),labs,$(2))) $(call lab_mpi_libs,$(1)) $(LAB_KLIBS_$(2)) | $(GRADE_LIBS_$(2)) $(GRADE_CHECK_LINK)
	$$(Q)bash $(GRADE_CHECK_LINK) $(foreach o,$(call lab_objs,$(1),labs,$(2)),-s $(o)) \
	    -h $(BUILD)/grade/harness/grade_main.o -h $(BUILD)/$(2)/labs/$(1)/graded/$(3).o -- \
	    $$(LAB_LINK_$(2)) -Wl,--wrap=_cmocka_run_group_tests $(call lab_mpi_ldlibs,$(1))
# Built by make all too, so a program the grader would link only on a GPU
# (a speed test's bench) cannot break unnoticed where there is none.
ALL_TARGETS += $(BUILD)/$(2)/labs/$(1)/graded/$(3)
endef
$(foreach l,$(LAB_NAMES),$(foreach t,$(LAB_TARGETS),$(foreach p,check $(if $(wildcard labs/$(l)/bench.c),bench),$(eval $(call GRADE_RULES,$(l),$(t),$(p))))))

# ---- Gradescope ---------------------------------------------------------------
# LAB=NN (or LAB='04 05'): the zip grades those labs only, whatever else a
# submission holds, and is named after them (autograder-05.zip); one zip per
# assignment. Without LAB= it grades any lab a submission has files for.
# A one-digit lab number gets its leading zero (LAB=5 is lab 05).
lab_nn = $(if $(filter 0 1 2 3 4 5 6 7 8 9,$(1)),0$(1),$(1))
GRADESCOPE_LABS := $(foreach l,$(LAB),$(call lab_nn,$(firstword $(subst -, ,$(l)))))
GRADESCOPE_ZIP := $(BUILD)/gradescope/autograder$(subst $(space),,$(addprefix -,$(GRADESCOPE_LABS))).zip
# ALLOW_CHANGED=1: ship student files of labs/ that differ from the last
# commit as the starters (make_zip.sh refuses them otherwise; a starter that
# is its solution is refused either way).
gradescope-zip:
	$(Q)bash autograder/gradescope/make_zip.sh $(if $(ALLOW_CHANGED),--allow-changed) $(GRADESCOPE_ZIP) $(LAB)

HELP += "gradescope-zip [LAB=NN]::write $(BUILD)/gradescope/autograder[-NN].zip for Gradescope (setup.sh, run_autograder, the course without solutions/); LAB= grades only that lab; ALLOW_CHANGED=1 ships uncommitted starters"
