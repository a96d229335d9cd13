# The course's one entry point. Run `make help` for the list of targets.
#
# Non-recursive: this file includes one fragment per folder (common/, kernels/,
# labs/, autograder/, slides/). Every output goes under $(BUILD); source
# folders stay clean. The only re-invocation of make is after `deps`, so that
# packages it just installed are seen when the build variables are computed.

SHELL := /bin/bash
.DEFAULT_GOAL := all
.SUFFIXES:
.DELETE_ON_ERROR:

# ---- user-facing knobs ------------------------------------------------------
BUILD     ?= build
# The CUDA toolkit: /usr/local/cuda, else the folder above the nvcc on PATH.
CUDA_HOME ?= $(if $(wildcard /usr/local/cuda/include/cuda_runtime_api.h),/usr/local/cuda,$(or $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)),/usr/local/cuda))
# GPU architectures for nvcc: real code for each, plus PTX for the first one so
# that newer GPUs can JIT it. Hopper-only code needs 90a.
CUDA_ARCH ?= 80 90a
# MPI ranks for the distributed tests and labs.
NP        ?= 4
# Which labs tree `make check` / `make grade` use: labs (starters) or solutions.
SRC       ?= labs
V         ?= 0

ifeq ($(V),0)
Q := @
else
Q :=
endif

# ---- what this machine has --------------------------------------------------
NVCC      := $(or $(shell command -v nvcc 2>/dev/null),$(wildcard $(CUDA_HOME)/bin/nvcc))
HAVE_CUDA := $(if $(and $(NVCC),$(wildcard $(CUDA_HOME)/include/cuda_runtime_api.h)),1,)
HAVE_NCCL := $(if $(and $(HAVE_CUDA),$(or $(wildcard $(CUDA_HOME)/include/nccl.h),$(wildcard /usr/include/nccl.h))),1,)
HAVE_GPU  := $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU' && echo 1)
MPICC     := $(shell command -v mpicc 2>/dev/null)
# What a program that calls MPI links (Open MPI's wrapper says): the distributed labs.
MPI_LDFLAGS := $(if $(MPICC),$(shell $(MPICC) --showme:link 2>/dev/null))
# Where kernels run: a real GPU when there is one, else the CPU SIMT emulator.
TARGET    ?= $(if $(HAVE_GPU),cuda,emu)

# ---- compilers and flags ----------------------------------------------------
CC        := gcc
CXX       := g++
CFLAGS    := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -fopenmp
# OpenBLAS's own cblas.h first: /usr/include/<triplet>/cblas.h may be netlib's
# (libblas-dev), which lacks the openblas_* thread controls.
OPENBLAS_INC := $(firstword $(wildcard /usr/include/*/openblas-pthread/cblas.h /usr/include/*/openblas-openmp/cblas.h \
                  /usr/include/*/openblas-serial/cblas.h /usr/include/openblas/cblas.h))
CPPFLAGS  := -Icommon -Ikernels $(if $(OPENBLAS_INC),-I$(dir $(OPENBLAS_INC)))
LDLIBS    := -lm -fopenmp
CMOCKA_LIBS := -lcmocka
CUDA_CPPFLAGS := -I$(CUDA_HOME)/include
CUDA_LDLIBS   := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart
CUBLAS_LDLIBS := -lcublas -lcublasLt
NCCL_LDLIBS   := -lnccl
comma := ,
space := $(empty) $(empty)
NVCC_GENCODE := $(foreach a,$(CUDA_ARCH),-gencode arch=compute_$(a),code=sm_$(a)) \
                -gencode arch=compute_$(firstword $(CUDA_ARCH)),code=compute_$(firstword $(CUDA_ARCH))
NVCCFLAGS := -O3 -std=c++17 -lineinfo $(NVCC_GENCODE) -Werror all-warnings \
             -Xcompiler -Wall,-Wextra,-Werror $(CPPFLAGS)

# Collected by the fragments.
UNIT_TESTS :=
MPI_TESTS  :=
ALL_TARGETS :=
HELP :=
LIBCOMMON      := $(BUILD)/lib/libcommon.a
CUDA_LIBCOMMON :=
EMU_LIBCOMMON  :=

-include common/simt/simt.mk
include common/common.mk
include common/comm.mk
include kernels/kernels.mk
include labs/labs.mk
include autograder/autograder.mk
include slides/slides.mk

# ---- top-level targets ------------------------------------------------------
.PHONY: all all-cuda deps test test-run test-gpu-run check bench grade docs gpu-check help clean

all: $(ALL_TARGETS)

# The GPU builds of all, without the emulator's (gpu-check: minutes of a lent
# GPU are not spent compiling what only runs on the CPU).
all-cuda: $(filter-out $(BUILD)/emu/%,$(ALL_TARGETS))

# NO_DEPS=1 skips the package check: gpu_check.sh passes it when it runs on a
# package bundle, whose packages are unpacked, not installed, so deps.sh would
# not see them and would try apt-get on a machine that cannot reach a registry.
deps:
	$(Q)$(if $(filter 1,$(NO_DEPS)),true,bash common/tools/deps.sh)

test: deps
	$(Q)$(MAKE) --no-print-directory test-run

test-run: $(ALL_TARGETS) $(UNIT_TESTS) $(MPI_TESTS)
	+$(Q)BUILD=$(BUILD) NP=$(NP) HAVE_CUDA=$(HAVE_CUDA) \
	    bash common/tests/run_suites.sh \
	    --unit "$(UNIT_TESTS)" --mpi "$(MPI_TESTS)" --labs "$(LAB_NAMES)"

# What gpu-check runs: the suites built against the real CUDA runtime (they skip
# without a GPU) and the NCCL refusal test; the rest of make test runs in CI.
GPU_UNIT_TESTS = $(filter %_cuda,$(UNIT_TESTS)) $(filter %/test_comm_abort,$(UNIT_TESTS))
test-gpu-run: $(GPU_UNIT_TESTS)
	+$(Q)BUILD=$(BUILD) RUN_SUITES_DOCS=0 bash common/tests/run_suites.sh --unit "$(GPU_UNIT_TESTS)"

docs: $(BUILD)/docs/html/index.html

# Doxygen only reports an undocumented function when its file is documented,
# so every public header must open with a /** @file comment (checked below).
DOC_HEADERS := $(wildcard common/*.h common/*.cuh kernels/*.h kernels/*/*.h kernels/*/*.cuh \
                          common/simt/include/simt_*.h)

$(BUILD)/docs/html/index.html: Doxyfile $(wildcard common/*.[ch] common/*.cuh kernels/*.[ch] kernels/*/*.[ch] kernels/*/*.cu kernels/*/*.cuh common/simt/include/*.h README.md)
	$(Q)command -v doxygen >/dev/null || { echo "docs: doxygen is missing; run: sudo apt-get install -y doxygen"; exit 1; }
	$(Q)missing=$$(grep -L '@file' $(DOC_HEADERS)); if [ -n "$$missing" ]; then \
	    echo "docs: these headers do not open with /** @file, so Doxygen would not check their functions:"; \
	    echo "$$missing"; exit 1; fi
	$(Q)mkdir -p $(BUILD)/docs
	$(Q)( cat Doxyfile; echo "OUTPUT_DIRECTORY=$(BUILD)/docs" ) | doxygen - > $(BUILD)/docs/doxygen.log 2>&1 || \
	    { cat $(BUILD)/docs/doxygen.log; echo "docs: Doxygen reported warnings (treated as errors); see above"; exit 1; }
	$(Q)echo "docs: wrote $(BUILD)/docs/html/index.html"

# With a package bundle (common/tools/gpu_bundle.sh) there is nothing to install:
# gpu_check.sh unpacks it; a GPU machine without a registry could not apt-get anyway.
gpu-check: $(if $(wildcard .gpu-bundle/debs/*.deb),,deps)
	$(Q)$(MAKE) --no-print-directory gpu-check-run

gpu-check-run:
	+$(Q)BUILD=$(BUILD) NP=$(NP) bash autograder/gpu_check.sh

clean:
	rm -rf $(BUILD)

# make print-VAR: one variable's value (for scripts, e.g. gpu_check.sh's log).
print-%:
	@echo '$($*)'


HELP += "all::build everything this machine can (host code; every .cu with nvcc if present; MPI programs)"
HELP += "all-cuda::the same without the emulator's builds"
HELP += "deps::install missing Debian packages (apt-get as root, else print the command)"
HELP += "test::run every unit, MPI and lab test, the docs check; ends with 'N passed, N failed, N skipped'"
HELP += "check LAB=NN [SRC=..] [TARGET=..] [SANITIZE=..]::build and run one lab's checks (SANITIZE=thread|address: on the emulator, under its race or bounds checker)"
HELP += "bench LAB=NN [SRC=labs|solutions]::build and run one lab's benchmark (speed needs a GPU)"
HELP += "ptxas LAB=NN [SRC=labs|solutions]::registers, spills and wgmma notes of the lab's kernels for sm_90a (nvcc only)"
HELP += "ptxas-kernels::the same for the course kernels in kernels/cuda"
HELP += "grade [LAB=NN] [SRC=labs|solutions]::run every lab's checks (or lab NN's) and print a table of what passes"
HELP += "docs::Doxygen HTML into $(BUILD)/docs (warnings are errors)"
HELP += "slides::build the lecture decks into $(BUILD)/slides (needs pandoc)"
HELP += "gpu-check::on a GPU machine: build for sm_90a, run every GPU test and benchmark, print a summary"
HELP += "test-gpu-run::only the suites built against the real CUDA runtime (they skip without a GPU)"
HELP += "clean::remove $(BUILD)"
HELP += "help::this list"

help:
	@echo "usage: make [target] [VAR=value ...]"
	@echo
	@for h in $(HELP); do printf '  %-46s %s\n' "$${h%%::*}" "$${h#*::}"; done
	@echo
	@echo "variables: TARGET=cuda|emu (now: $(TARGET))  SRC=labs|solutions  CUDA_ARCH='$(CUDA_ARCH)'"
	@echo "           NP=$(NP) (MPI ranks)  BUILD=$(BUILD)  CUDA_HOME=$(CUDA_HOME)  V=1 (show commands)"
	@echo "           ARGS='...' (bench's flags)  GRADE_ARGS='...' (grade's flags, see build/bin/grade --help)"
	@echo "           ONLY='pattern' (make check: only the tests whose name matches, e.g. ONLY='mma*' or ONLY='adamw|mixed*')  SEED=N (make check: the inputs of a graded run)"
	@echo "           GPU_CHECK_BUDGET=S (gpu-check, default 300)  PTXAS_ARCH (ptxas, default 90a)  NO_DEPS=1 (skip make deps)"
	@echo "           LAB_DEFS='-D...' (extra flags for the lab's .cu files, e.g. tile sizes; a change rebuilds them)"
	@echo "           RUN_SUITES_SERIAL=1 (make test: the grader's own test in turn, not in the background beside the rest)"
	@echo "found: nvcc=$(if $(HAVE_CUDA),yes,no) nccl=$(if $(HAVE_NCCL),yes,no) gpu=$(if $(HAVE_GPU),yes,no) mpicc=$(if $(MPICC),yes,no)"
