# SIMT emulator: make fragment, included by the top-level Makefile.
# Builds libsimt (plain, AddressSanitizer and ThreadSanitizer flavours),
# the simt-rewrite helper and the simtcc driver into $(BUILD), and the
# emulator's own cmocka tests. Paths are relative to the repository root.
# Expects BUILD, CC, CXX, CFLAGS and CMOCKA_LIBS from the includer.

BUILD ?= build
CC ?= gcc
CXX ?= g++
CFLAGS ?= -std=c11 -O2 -g -Wall -Wextra -Werror
CMOCKA_LIBS ?= -lcmocka

SIMT_DIR := common/simt
SIMT_INC := $(SIMT_DIR)/include
SIMT_LIB := $(BUILD)/emu/lib/libsimt.a
SIMT_LIB_ASAN := $(BUILD)/emu/lib/libsimt_asan.a
SIMT_LIB_TSAN := $(BUILD)/emu/lib/libsimt_tsan.a
SIMT_REWRITE := $(BUILD)/bin/simt-rewrite
SIMTCC := $(BUILD)/bin/simtcc
# What decides how simtcc compiles a .cu file: an object built with it
# depends on these (not on simtcc itself, which is rewritten whenever
# libsimt changes and would rebuild every object for a relink's sake).
SIMT_COMPILE_DEPS := $(SIMT_DIR)/src/simtcc.in $(SIMT_REWRITE)
SIMT_CPPFLAGS := -I$(SIMT_INC)
SIMT_LDLIBS := -lstdc++ -lpthread -lm
SIMT_OBJDIR := $(BUILD)/emu/obj/simt
SIMT_TESTDIR := $(BUILD)/emu/tests

SIMT_HEADERS := $(wildcard $(SIMT_INC)/*.h $(SIMT_INC)/*/*.h $(SIMT_INC)/*.inc) $(SIMT_DIR)/src/simt_internal.h common/warp_mma.cuh \
                common/hopper.cuh
# The CUDA test suites also include their shared teardown.
SIMT_TEST_HEADERS := $(SIMT_HEADERS) $(SIMT_DIR)/tests/no_fault_left.h $(SIMT_DIR)/tests/capture_stderr.h
SIMT_SRCS := $(SIMT_DIR)/src/simt_runtime.c $(SIMT_DIR)/src/simt_api.c $(SIMT_DIR)/src/simt_hopper.c \
             $(SIMT_DIR)/src/simt_memtrace.c
# The runtime needs GNU extensions (inline asm, ucontext, pthread attributes)
# on top of the project's C11 flags.
SIMT_RT_CFLAGS = $(CFLAGS) -std=gnu11 -pthread -I$(SIMT_INC)

$(SIMT_OBJDIR)/%.o: $(SIMT_DIR)/src/%.c $(SIMT_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(SIMT_RT_CFLAGS) -c $< -o $@

# Sanitizer flavours: the API is instrumented; the scheduler is not (its own
# bookkeeping would read as races between fibers) but announces fiber
# switches and barriers to the sanitizer (SIMT_*SAN_FIBERS).
$(SIMT_OBJDIR)/asan/simt_runtime.o: $(SIMT_DIR)/src/simt_runtime.c $(SIMT_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(SIMT_RT_CFLAGS) -DSIMT_ASAN_FIBERS -c $< -o $@

$(SIMT_OBJDIR)/tsan/simt_runtime.o: $(SIMT_DIR)/src/simt_runtime.c $(SIMT_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(SIMT_RT_CFLAGS) -DSIMT_TSAN_FIBERS -c $< -o $@

$(SIMT_OBJDIR)/asan/%.o: $(SIMT_DIR)/src/%.c $(SIMT_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(SIMT_RT_CFLAGS) -fsanitize=address -fno-omit-frame-pointer -c $< -o $@

$(SIMT_OBJDIR)/tsan/%.o: $(SIMT_DIR)/src/%.c $(SIMT_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(SIMT_RT_CFLAGS) -I$(SIMT_OBJDIR)/tsan -fsanitize=thread -c $< -o $@

# The TSan flavour carries common/simt/tsan.supp in itself (simt_api.c's
# __tsan_default_suppressions), so every program built with it has the
# suppressions, from any folder and without TSAN_OPTIONS: the file's lines
# as C strings, comments and blank lines left out.
SIMT_TSAN_SUPP := $(SIMT_OBJDIR)/tsan/tsan_supp.inc
$(SIMT_TSAN_SUPP): $(SIMT_DIR)/tsan.supp
	@mkdir -p $(dir $@)
	$(Q)sed -e '/^#/d' -e '/^[[:space:]]*$$/d' -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/.*/"&\\n"/' $< > $@
$(SIMT_OBJDIR)/tsan/simt_api.o: $(SIMT_TSAN_SUPP)

$(SIMT_LIB): $(patsubst $(SIMT_DIR)/src/%.c,$(SIMT_OBJDIR)/%.o,$(SIMT_SRCS))
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(SIMT_LIB_ASAN): $(patsubst $(SIMT_DIR)/src/%.c,$(SIMT_OBJDIR)/asan/%.o,$(SIMT_SRCS))
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(SIMT_LIB_TSAN): $(patsubst $(SIMT_DIR)/src/%.c,$(SIMT_OBJDIR)/tsan/%.o,$(SIMT_SRCS))
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(SIMT_REWRITE): $(SIMT_DIR)/src/simt_rewrite.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $< -o $@

# simtcc is a shell script; the absolute paths of this checkout's include
# directory, libraries and helper are filled in when it is built.
$(SIMTCC): $(SIMT_DIR)/src/simtcc.in $(SIMT_REWRITE) $(SIMT_LIB) $(SIMT_LIB_ASAN) $(SIMT_LIB_TSAN)
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@SIMT_INCLUDE@|$(abspath $(SIMT_INC))|' \
	    -e 's|@SIMT_LIBDIR@|$(abspath $(dir $(SIMT_LIB)))|' \
	    -e 's|@SIMT_REWRITE@|$(abspath $(SIMT_REWRITE))|' \
	    -e 's|@CXX@|$(CXX)|' -e 's|@CC@|$(CC)|' $< > $@.tmp
	$(Q)chmod +x $@.tmp && mv $@.tmp $@

# --- tests -------------------------------------------------------------------

SIMT_TESTS := $(SIMT_TESTDIR)/test_simt_core $(SIMT_TESTDIR)/test_simt_capi $(SIMT_TESTDIR)/test_simt_mma \
              $(SIMT_TESTDIR)/test_simt_hopper $(SIMT_TESTDIR)/test_simt_sanitizers \
              $(SIMT_TESTDIR)/test_simt_rewrite $(SIMT_TESTDIR)/test_simt_memtrace \
              $(SIMT_TESTDIR)/test_simt_agreement
UNIT_TESTS += $(SIMT_TESTS)

# Small programs the sanitizer test runs as child processes.
SIMT_CHILDREN := $(SIMT_TESTDIR)/children/race_tsan $(SIMT_TESTDIR)/children/norace_tsan \
                 $(SIMT_TESTDIR)/children/oob_asan $(SIMT_TESTDIR)/children/inbounds_asan \
                 $(SIMT_TESTDIR)/children/core_asan $(SIMT_TESTDIR)/children/mma_tsan \
                 $(SIMT_TESTDIR)/children/tma_race_tsan $(SIMT_TESTDIR)/children/tma_norace_tsan \
                 $(SIMT_TESTDIR)/children/hopper_asan $(SIMT_TESTDIR)/children/hopper_tsan \
                 $(SIMT_TESTDIR)/children/cp_race_tsan $(SIMT_TESTDIR)/children/cp_keeps_races_tsan \
                 $(SIMT_TESTDIR)/children/cp_oob_asan $(SIMT_TESTDIR)/children/cp_misaligned \
                 $(SIMT_TESTDIR)/children/deadlock $(SIMT_TESTDIR)/children/early_return \
                 $(SIMT_TESTDIR)/children/shared_past_end $(SIMT_TESTDIR)/children/fault \
                 $(SIMT_TESTDIR)/children/guard $(SIMT_TESTDIR)/children/guard_asan \
                 $(SIMT_TESTDIR)/children/suppressed_tsan $(SIMT_TESTDIR)/children/host_access

$(SIMT_OBJDIR)/tests/%.o: $(SIMT_DIR)/tests/%.cu $(SIMTCC) $(SIMT_TEST_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) -c -O2 -g -Wall -Wextra -Werror -Icommon -o $@ $<

$(SIMT_TESTDIR)/test_simt_core: $(SIMT_OBJDIR)/tests/test_simt_core.o $(SIMTCC)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) -o $@ $< $(CMOCKA_LIBS)

$(SIMT_TESTDIR)/test_simt_mma: $(SIMT_OBJDIR)/tests/test_simt_mma.o $(SIMTCC)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) -o $@ $< $(CMOCKA_LIBS)

$(SIMT_TESTDIR)/test_simt_hopper: $(SIMT_OBJDIR)/tests/test_simt_hopper.o $(SIMTCC)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) -o $@ $< $(CMOCKA_LIBS)

# The tracer's test is compiled for it, as the labs' files are.
$(SIMT_TESTDIR)/test_simt_memtrace: $(SIMT_DIR)/tests/test_simt_memtrace.cu $(SIMTCC) $(SIMT_TEST_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) --memtrace -O2 -g -Wall -Wextra -Werror -Icommon -o $@ $< $(CMOCKA_LIBS)

# A C11 host file against the emulator's cuda_runtime_api.h, with the
# project's strict C flags: the header must stay plain C.
$(SIMT_TESTDIR)/test_simt_capi: $(SIMT_DIR)/tests/test_simt_capi.c common/half.c common/half.h $(SIMT_LIB) $(SIMT_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(SIMT_CPPFLAGS) -Icommon $< common/half.c -o $@ $(SIMT_LIB) $(CMOCKA_LIBS) $(SIMT_LDLIBS)

$(SIMT_TESTDIR)/children/race_tsan $(SIMT_TESTDIR)/children/norace_tsan $(SIMT_TESTDIR)/children/suppressed_tsan: \
  $(SIMT_TESTDIR)/children/%_tsan: $(SIMT_DIR)/tests/children/%.cu $(SIMTCC)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) --sanitize=thread -O1 -g -o $@ $<

$(SIMT_TESTDIR)/children/tma_race_tsan $(SIMT_TESTDIR)/children/tma_norace_tsan $(SIMT_TESTDIR)/children/cp_race_tsan \
  $(SIMT_TESTDIR)/children/cp_keeps_races_tsan: \
  $(SIMT_TESTDIR)/children/%_tsan: $(SIMT_DIR)/tests/children/%.cu $(SIMTCC) $(SIMT_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) --sanitize=thread -O1 -g -Icommon -o $@ $<

$(SIMT_TESTDIR)/children/hopper_asan: $(SIMT_DIR)/tests/test_simt_hopper.cu $(SIMTCC) $(SIMT_TEST_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) --sanitize=address -O1 -g -Icommon -o $@ $< $(CMOCKA_LIBS)

$(SIMT_TESTDIR)/children/hopper_tsan: $(SIMT_DIR)/tests/test_simt_hopper.cu $(SIMTCC) $(SIMT_TEST_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) --sanitize=thread -O1 -g -Icommon -o $@ $< $(CMOCKA_LIBS)

$(SIMT_TESTDIR)/children/oob_asan $(SIMT_TESTDIR)/children/inbounds_asan: \
  $(SIMT_TESTDIR)/children/%_asan: $(SIMT_DIR)/tests/children/%.cu $(SIMTCC)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) --sanitize=address -O1 -g -o $@ $<

$(SIMT_TESTDIR)/children/cp_misaligned $(SIMT_TESTDIR)/children/deadlock $(SIMT_TESTDIR)/children/early_return \
  $(SIMT_TESTDIR)/children/shared_past_end $(SIMT_TESTDIR)/children/fault $(SIMT_TESTDIR)/children/host_access: \
  $(SIMT_TESTDIR)/children/%: $(SIMT_DIR)/tests/children/%.cu $(SIMTCC) $(SIMT_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) -O1 -g -Icommon -o $@ $<

$(SIMT_TESTDIR)/children/guard: $(SIMT_DIR)/tests/children/guard.cu $(SIMTCC) $(SIMT_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) --memtrace -O1 -g -Icommon -o $@ $<

# The same guard zones in the AddressSanitizer flavour, which poisons them.
$(SIMT_TESTDIR)/children/guard_asan: $(SIMT_DIR)/tests/children/guard.cu $(SIMTCC) $(SIMT_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) --sanitize=address -O1 -g -Icommon -o $@ $<

$(SIMT_TESTDIR)/children/cp_oob_asan: $(SIMT_DIR)/tests/children/cp_oob.cu $(SIMTCC) $(SIMT_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) --sanitize=address -O1 -g -Icommon -o $@ $<

$(SIMT_TESTDIR)/children/core_asan: $(SIMT_DIR)/tests/test_simt_core.cu $(SIMTCC) $(SIMT_TEST_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) --sanitize=address -O1 -g -Icommon -o $@ $< $(CMOCKA_LIBS)

$(SIMT_TESTDIR)/children/mma_tsan: $(SIMT_DIR)/tests/test_simt_mma.cu $(SIMTCC) $(SIMT_TEST_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) --sanitize=thread -O1 -g -Icommon -o $@ $< $(CMOCKA_LIBS)

$(SIMT_TESTDIR)/test_simt_sanitizers: $(SIMT_DIR)/tests/test_simt_sanitizers.c $(SIMT_CHILDREN) $(SIMT_HEADERS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -D_POSIX_C_SOURCE=200809L -DSIMT_CHILD_DIR='"$(abspath $(SIMT_TESTDIR)/children)"' \
	    $< -o $@ $(CMOCKA_LIBS)

# simt-rewrite's execution-space check and host-code marks, on small files it writes itself,
# compiled with a lab's flags (SIMT_LAB_WERROR, labs/labs.mk) where a lab's build is meant.
$(SIMT_TESTDIR)/test_simt_rewrite: $(SIMT_DIR)/tests/test_simt_rewrite.c $(SIMT_REWRITE) $(SIMTCC) $(wildcard labs/labs.mk)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -D_POSIX_C_SOURCE=200809L -DSIMT_REWRITE='"$(abspath $(SIMT_REWRITE))"' \
	    -DSIMTCC='"$(abspath $(SIMTCC))"' -DSIMT_LAB_WERROR='"$(SIMT_LAB_WERROR)"' $< -o $@ $(CMOCKA_LIBS)

# The emulator and nvcc agree on what builds: the files of tests/agreement,
# compiled as a lab's are, by simtcc with a lab's flags (SIMT_LAB_WERROR) and,
# where the toolkit is installed, by nvcc (NVCC, empty without one) with the
# labs' warnings of NVCCFLAGS for one architecture. The files are read when
# the test runs.
AGREEMENT_NVCC_FLAGS := -arch=sm_90a -std=c++17 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror
$(SIMT_TESTDIR)/test_simt_agreement: $(SIMT_DIR)/tests/test_simt_agreement.c $(SIMTCC) $(wildcard labs/labs.mk)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -D_POSIX_C_SOURCE=200809L -DAGREEMENT_DIR='"$(abspath $(SIMT_DIR)/tests/agreement)"' \
	    -DSIMTCC='"$(abspath $(SIMTCC))"' -DSIMT_LAB_WERROR='"$(SIMT_LAB_WERROR)"' -DNVCC='"$(NVCC)"' \
	    -DNVCC_FLAGS='"$(AGREEMENT_NVCC_FLAGS)"' $< -o $@ $(CMOCKA_LIBS)

# --- benchmark ---------------------------------------------------------------

SIMT_BENCH := $(BUILD)/emu/bin/bench_matmul

$(SIMT_BENCH): $(SIMT_DIR)/bench_matmul.cu $(SIMTCC)
	@mkdir -p $(dir $@)
	$(Q)$(SIMTCC) -O2 -o $@ $<

HELP += "simt::build the CPU SIMT emulator: libsimt, $(SIMTCC) and its tests"
HELP += "simt-test::run the emulator's own tests"
HELP += "simt-bench::time an emulated 256^3 tiled matmul on one core"

.PHONY: simt simt-bench simt-test
simt: $(SIMT_LIB) $(SIMTCC) $(SIMT_TESTS)

# One core, as the figure in common/simt/README.md is quoted.
simt-bench: $(SIMT_BENCH)
	SIMT_WORKERS=1 $(SIMT_BENCH)

simt-test: $(SIMT_TESTS)
	@set -e; for t in $(SIMT_TESTS); do echo "== $$t"; $$t; done
