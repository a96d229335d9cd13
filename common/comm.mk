# The communicator library (common/comm.c) and its tests.
#
# Included by the top-level Makefile, which defines first: BUILD, CC, MPICC,
# CFLAGS, HAVE_NCCL, CUDA_CPPFLAGS, CUDA_LDLIBS, NCCL_LDLIBS, CMOCKA_LIBS and
# LIBCOMMON (error.c, log.c, ...; it must not contain comm.c, which needs mpi.h).
#
# Defines:
#   LIBCOMM      $(BUILD)/lib/libcomm.a, compiled with $(MPICC); with HAVE_NCCL
#                set it also holds the NCCL backend (-DCOURSE_HAVE_NCCL).
#   COMM_LDLIBS  what a program linking $(LIBCOMM) needs beyond mpicc's own
#                libraries: link with $(MPICC) ... $(LIBCOMM) $(LIBCOMMON) $(COMM_LDLIBS).
#   MPI_TESTS    += $(BUILD)/tests/test_comm, run as `mpirun -np N test_comm`
#                (passes for any N >= 1; the suite runs N = 2 and N = 4, and
#                N = 4 again with COMM_CHECK_ARGS=1 and COMM_TIMEOUT=60).
#   UNIT_TESTS   += $(BUILD)/tests/test_comm_abort, run WITHOUT mpirun. It
#                launches its own MPI jobs of $(BUILD)/tests/comm_fail_rank
#                (found next to the test binary; override with the first
#                argument or COMM_FAIL_RANK=path) through the command in the
#                environment variable MPIRUN (default "mpirun --oversubscribe"),
#                and checks that a job in which one rank fails ends quickly,
#                non-zero, naming the rank, and that with COMM_CHECK_ARGS=1 a
#                job whose ranks pass different arguments to a collective ends
#                the same way, naming the argument, and that with COMM_TIMEOUT
#                set a job whose ranks' calls do not match ends, each waiting
#                rank naming its call. COMM_TEST_FILTER='test_check_args*' (a
#                cmocka glob) runs only the tests whose names match, here and in
#                test_comm_nccl_wait.
#   UNIT_TESTS   += $(BUILD)/tests/test_comm_nccl_wait, with HAVE_NCCL only; run
#                WITHOUT mpirun, like test_comm_abort. It launches jobs of
#                $(BUILD)/tests/comm_nccl_standin, which is libcomm's NCCL
#                backend linked against stand-ins for libcudart and libnccl
#                (common/tests/nccl_standin.c), so the backend's waits and
#                NCCL_CHECK's message are tested without a GPU: a wait that
#                hangs on a failed peer fails.

LIBCOMM := $(BUILD)/lib/libcomm.a
COMM_OBJS := $(BUILD)/obj/common/comm.o

COMM_CPPFLAGS := -Icommon
# -lm: the MPI backend's max and min (fmax, fmin); -pthread: COMM_TIMEOUT's watchdog thread.
COMM_LDLIBS := -lm -pthread
ifneq ($(strip $(HAVE_NCCL)),)
COMM_CPPFLAGS += -DCOURSE_HAVE_NCCL $(CUDA_CPPFLAGS)
COMM_LDLIBS += $(NCCL_LDLIBS) $(CUDA_LDLIBS)
endif

ifeq ($(strip $(MPICC)),)
# Without Open MPI nothing here can be built; say so instead of failing obscurely.
$(LIBCOMM):
	@echo "comm: mpicc not found; install Open MPI (make deps) to build the communicator"; exit 1
else
ALL_TARGETS += $(LIBCOMM)

COMM_TEST_DIR := $(BUILD)/tests
COMM_TEST_OBJ := $(BUILD)/obj/common/tests

MPI_TESTS += $(COMM_TEST_DIR)/test_comm
UNIT_TESTS += $(COMM_TEST_DIR)/test_comm_abort

# Static pattern rules are explicit, so they win over any generic common/%.c rule.
$(COMM_OBJS): $(BUILD)/obj/common/%.o: common/%.c
	@mkdir -p $(@D)
	$(Q)$(MPICC) $(CPPFLAGS) $(CFLAGS) $(COMM_CPPFLAGS) -MMD -MP -c $< -o $@

# comm.c compiled once more as NCCL 2.10-2.18's header shows itself to C (no ncclBfloat16),
# and once as 2.12's (no ncclGetLastError, no ncclInProgress): only to prove that it builds
# there. Not linked into anything.
ifneq ($(strip $(HAVE_NCCL)),)
COMM_OLD_NCCL_OBJ := $(BUILD)/obj/common/comm_with_nccl_2_18_header.o
COMM_NCCL_2_12_OBJ := $(BUILD)/obj/common/comm_with_nccl_2_12_header.o
ALL_TARGETS += $(COMM_OLD_NCCL_OBJ) $(COMM_NCCL_2_12_OBJ)
$(COMM_OLD_NCCL_OBJ): common/comm.c common/error.h common/tests/nccl-2.18-from-c/nccl.h
	@mkdir -p $(@D)
	$(Q)$(MPICC) $(CPPFLAGS) $(CFLAGS) -Icommon/tests/nccl-2.18-from-c $(COMM_CPPFLAGS) -c $< -o $@
$(COMM_NCCL_2_12_OBJ): common/comm.c common/error.h common/tests/nccl-2.12-from-c/nccl.h
	@mkdir -p $(@D)
	$(Q)$(MPICC) $(CPPFLAGS) $(CFLAGS) -Icommon/tests/nccl-2.12-from-c $(COMM_CPPFLAGS) -c $< -o $@

# The NCCL backend on stand-ins for libcudart and libnccl (no GPU needed): the program,
# linked without $(COMM_LDLIBS)'s real libraries, and the test that launches its jobs.
UNIT_TESTS += $(COMM_TEST_DIR)/test_comm_nccl_wait
COMM_STANDIN_OBJS := $(COMM_TEST_OBJ)/nccl_standin.o $(COMM_TEST_OBJ)/comm_nccl_standin.o \
                     $(COMM_TEST_OBJ)/test_comm_nccl_wait.o
$(COMM_STANDIN_OBJS): $(COMM_TEST_OBJ)/%.o: common/tests/%.c
	@mkdir -p $(@D)
	$(Q)$(MPICC) $(CPPFLAGS) $(CFLAGS) $(COMM_CPPFLAGS) -MMD -MP -c $< -o $@

$(COMM_TEST_DIR)/comm_nccl_standin: $(COMM_TEST_OBJ)/comm_nccl_standin.o $(COMM_TEST_OBJ)/nccl_standin.o \
                                    $(LIBCOMM) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(Q)$(MPICC) $(CFLAGS) -o $@ $(filter %.o,$^) $(LIBCOMM) $(LIBCOMMON) -lm -pthread

$(COMM_TEST_DIR)/test_comm_nccl_wait: $(COMM_TEST_OBJ)/test_comm_nccl_wait.o $(COMM_TEST_DIR)/comm_nccl_standin
	@mkdir -p $(@D)
	$(Q)$(MPICC) $(CFLAGS) -o $@ $< $(CMOCKA_LIBS)

-include $(COMM_STANDIN_OBJS:.o=.d)
endif

$(LIBCOMM): $(COMM_OBJS)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

COMM_TEST_OBJS := $(COMM_TEST_OBJ)/test_comm.o $(COMM_TEST_OBJ)/comm_fail_rank.o \
                  $(COMM_TEST_OBJ)/test_comm_abort.o

$(COMM_TEST_OBJS): $(COMM_TEST_OBJ)/%.o: common/tests/%.c
	@mkdir -p $(@D)
	$(Q)$(MPICC) $(CPPFLAGS) $(CFLAGS) $(COMM_CPPFLAGS) -MMD -MP -c $< -o $@

$(COMM_TEST_DIR)/test_comm $(COMM_TEST_DIR)/comm_fail_rank: $(COMM_TEST_DIR)/%: $(COMM_TEST_OBJ)/%.o $(LIBCOMM) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(Q)$(MPICC) $(CFLAGS) -o $@ $< $(LIBCOMM) $(LIBCOMMON) $(COMM_LDLIBS) $(CMOCKA_LIBS) -lm

# The abort test needs the program it launches, so building one builds both.
$(COMM_TEST_DIR)/test_comm_abort: $(COMM_TEST_OBJ)/test_comm_abort.o $(LIBCOMMON) $(COMM_TEST_DIR)/comm_fail_rank
	@mkdir -p $(@D)
	$(Q)$(MPICC) $(CFLAGS) -o $@ $< $(LIBCOMMON) $(CMOCKA_LIBS) -lm

-include $(COMM_OBJS:.o=.d) $(COMM_TEST_OBJS:.o=.d)
endif
