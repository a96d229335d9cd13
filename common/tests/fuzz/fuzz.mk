# common/tests/fuzz/: libFuzzer harnesses for the code that reads bytes a
# user or a submission controls (checkpoints, flags, --data files, traces,
# what a graded program prints, a .cu file the emulator rewrites, JSON, the
# --log a resumed run goes on with, what a graded program's ranks send on the
# verdict channel, a lab's rubric).
# Not part of `make test`: a fuzzing run takes minutes and needs clang; each
# defect it found has a cmocka test instead.
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_ONLY=checkpoint]  fuzz each harness in turn
#   make fuzz-replay                                     run the seed corpus and the saved
#                                                        reproducers once (seconds)
#
# Each harness is built from the sources it tests, not from libcommon.a, so
# that all of them carry the sanitizers and the fuzzer's coverage counters.
# New inputs go to $(BUILD)/fuzz/corpus/NAME, crashes to $(BUILD)/fuzz/crashes/;
# a crash worth keeping is copied to common/tests/fuzz/crashes/NAME/ with its fix.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_ONLY    ?=
FUZZ_DIR     := common/tests/fuzz
FUZZ_CFLAGS  := -std=c11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
                -Icommon -Iautograder/src
FUZZ_NAMES   := checkpoint args data trace grade_output speed_json rewrite json train_log channel rubric

FUZZ_SRCS_checkpoint   := common/checkpoint.c common/error.c common/log.c common/memory.c
FUZZ_SRCS_args         := common/args.c
FUZZ_SRCS_data         := common/data.c common/rng.c common/error.c common/log.c common/memory.c
FUZZ_SRCS_trace        := common/trace.c common/json.c common/timer.c common/memory.c common/error.c common/log.c
# grade.c's readers are static: its harness #includes grade.c (main renamed) and links the rest of the grader.
FUZZ_SRCS_grade_output := $(filter-out autograder/src/grade.c,$(wildcard autograder/src/*.c)) common/json.c
FUZZ_DEPS_grade_output := autograder/src/grade.c
FUZZ_SRCS_speed_json   := autograder/src/speed.c autograder/src/report.c common/json.c
# simt_rewrite.c's state is static and its main reads a file: its harness #includes it (main renamed).
FUZZ_SRCS_rewrite      :=
FUZZ_DEPS_rewrite      := common/simt/src/simt_rewrite.c
FUZZ_SRCS_json         := common/json.c
# trainer.c's log reader and sandbox.c's channel reader are static: each harness #includes its file
# (trainer.c then needs the model, the data and checkpoints to link; sandbox.c, tree_remove).
FUZZ_SRCS_train_log    := $(wildcard kernels/cpu/*.c) common/checkpoint.c common/data.c common/error.c common/json.c \
                          common/log.c common/memory.c common/model.c common/rng.c common/timer.c
FUZZ_DEPS_train_log    := kernels/train/trainer.c kernels/train/trainer.h $(wildcard kernels/cpu/*.h)
FUZZ_SRCS_channel      := autograder/src/tree.c
FUZZ_DEPS_channel      := autograder/src/sandbox.c
FUZZ_SRCS_rubric       := autograder/src/rubric.c autograder/src/speed.c autograder/src/report.c common/json.c
FUZZ_LIBS_trace        := -ljansson
FUZZ_LIBS_grade_output := -ljansson -lm
FUZZ_LIBS_speed_json   := -ljansson -lm
FUZZ_LIBS_json         := -ljansson -lm
FUZZ_LIBS_train_log    := -fopenmp -lopenblas -ljansson -lm
FUZZ_LIBS_rubric       := -ljansson -lm
FUZZ_CFLAGS_train_log  := -Ikernels -fopenmp $(if $(OPENBLAS_INC),-I$(dir $(OPENBLAS_INC)))
# trace_merge warns on stderr about every line it leaves out, and simt-rewrite
# names each call nvcc would refuse: keep the fuzzer's own output and the
# sanitizers' reports (libFuzzer moves them to another fd), not those.
FUZZ_OPTS_trace        := -close_fd_mask=2
FUZZ_OPTS_rewrite      := -close_fd_mask=2

define FUZZ_RULES
$(BUILD)/fuzz/fuzz_$(1): $(FUZZ_DIR)/fuzz_$(1).c $(FUZZ_SRCS_$(1)) $(FUZZ_DEPS_$(1)) $(wildcard common/*.h autograder/src/*.h)
	@mkdir -p $$(@D)
	$$(Q)command -v $(FUZZ_CC) >/dev/null || { echo "fuzz: $(FUZZ_CC) is missing (libFuzzer comes with clang); run: sudo apt-get install -y clang"; exit 1; }
	$$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_CFLAGS_$(1)) $$< $(FUZZ_SRCS_$(1)) -o $$@ $(FUZZ_LIBS_$(1))
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call FUZZ_RULES,$(n))))

FUZZ_RUN := $(or $(FUZZ_ONLY),$(FUZZ_NAMES))
ifneq ($(filter-out $(FUZZ_NAMES),$(FUZZ_ONLY)),)
$(error FUZZ_ONLY=$(FUZZ_ONLY): no such harness; pick from: $(FUZZ_NAMES))
endif

.PHONY: fuzz fuzz-replay
# One harness at a time, one job each: a run's figures then say what one core found.
fuzz: $(FUZZ_RUN:%=$(BUILD)/fuzz/fuzz_%)
	$(Q)for n in $(FUZZ_RUN); do \
	    mkdir -p $(BUILD)/fuzz/corpus/$$n $(BUILD)/fuzz/crashes; \
	    echo "=== fuzz_$$n: $(FUZZ_SECONDS) s"; \
	    opts=; case $$n in trace) opts='$(FUZZ_OPTS_trace)' ;; rewrite) opts='$(FUZZ_OPTS_rewrite)' ;; esac; \
	    $(BUILD)/fuzz/fuzz_$$n $$opts -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	        -artifact_prefix=$(BUILD)/fuzz/crashes/$$n- $(BUILD)/fuzz/corpus/$$n \
	        $$(ls -d $(FUZZ_DIR)/corpus/$$n 2>/dev/null) || exit 1; \
	done

# libFuzzer runs each file named on its command line once and exits.
fuzz-replay: $(FUZZ_RUN:%=$(BUILD)/fuzz/fuzz_%)
	$(Q)for n in $(FUZZ_RUN); do \
	    files=$$(find $(FUZZ_DIR)/corpus/$$n $(FUZZ_DIR)/crashes/$$n -type f 2>/dev/null); \
	    [ -n "$$files" ] || continue; \
	    echo "=== fuzz_$$n: $$(wc -w <<<"$$files") files"; \
	    $(BUILD)/fuzz/fuzz_$$n -timeout=10 $$files >$(BUILD)/fuzz/replay-$$n.log 2>&1 || \
	        { tail -n 40 $(BUILD)/fuzz/replay-$$n.log; echo "fuzz-replay: fuzz_$$n failed (log: $(BUILD)/fuzz/replay-$$n.log)"; exit 1; }; \
	done; echo "fuzz-replay: every file ran clean"

HELP += "fuzz [FUZZ_SECONDS=60] [FUZZ_ONLY=name]::build the libFuzzer harnesses (clang) and fuzz each for FUZZ_SECONDS (not part of make test)"
HELP += "fuzz-replay::run the fuzz seed corpus and saved crash reproducers once (seconds)"
