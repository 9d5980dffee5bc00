# strux - one entry point (ARCHITECTURE.md §2):
#   make            build bin/strux and lib/libstrux.a (installs missing Debian packages first)
#   make demo       train yeast with mpirun -np 2, write the model, print test metrics
#   make check      build and run every test; ends with "N passed, N failed"
#   make check-slurm the sbatch templates on a private single-node Slurm (installs slurm-wlm, munge)
#   make check-asan the unit, MPI and end-to-end tests on a copy built with AddressSanitizer and
#                   UBSan in build-asan/ (leaks of Open MPI and HDF5 suppressed: tests/asan-leaks.supp)
#   make fuzz FUZZ_SECONDS=N   each libFuzzer target of tests/fuzz/ for N seconds (clang, build-fuzz/)
#   make bench      benchmarks that print tables (long; not part of check)
#   make data       convert CoNLL-2000 and the OCR words into build/data/ (configs/conll2000.ini,
#                   ocr.ini, ocr_letters.ini read from there)
#   make install PREFIX=/usr/local
# Portable code generation by default (-march=x86-64-v2): models and binaries move between nodes.

# One build job per core unless make is given -j (CI calls plain `make check`).
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc)
endif

PREFIX ?= /usr/local
BUILD ?= build
CC := mpicc
OPT ?= -O2 -march=x86-64-v2 -g
CFLAGS_ALL = -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror $(OPT) -Iinclude -I$(BUILD)/gen \
             $(DEP_CFLAGS) -MMD -MP
LDLIBS_ALL = $(DEP_LIBS) -lglpk -lm

export OMPI_ALLOW_RUN_AS_ROOT = 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = 1

MODULES := core linalg data tasks lp search solvers dist io
LIB_SRC := $(foreach m,$(MODULES),$(wildcard src/$(m)/*.c))
CLI_SRC := $(wildcard src/cli/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
LIB := $(BUILD)/lib/libstrux.a
BIN := $(BUILD)/bin/strux

TEST_COMMON := $(wildcard tests/common/*.c)
TEST_COMMON_OBJ := $(TEST_COMMON:%.c=$(BUILD)/obj/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
MPI_SRC := $(wildcard tests/mpi/*.c)
MPI_BIN := $(MPI_SRC:tests/mpi/%.c=$(BUILD)/tests/mpi_%)
# Benchmark programs: built by make check too, so they cannot rot between benchmark runs.
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all demo check check-slurm check-asan fuzz fuzz-build bench data install clean deps FORCE
.SECONDARY:
all: $(BIN) $(LIB)

# Toolchain and library flags, found after the packages are installed; make re-reads this file.
ifeq ($(filter clean,$(MAKECMDGOALS)),)
-include $(BUILD)/config.mk
endif
$(BUILD)/config.mk: scripts/install-deps
	@scripts/install-deps
	@mkdir -p $(@D)
	@echo "DEP_CFLAGS := $$(pkg-config --cflags hdf5 openblas inih zlib)" > $@.tmp
	@echo "DEP_LIBS := $$(pkg-config --libs hdf5 openblas inih zlib)" >> $@.tmp
	@echo "TEST_LIBS := $$(pkg-config --libs cmocka)" >> $@.tmp
	@mv $@.tmp $@

deps:
	@scripts/install-deps

# Provenance: the git commit compiled into model files, rewritten only when it changes.
$(BUILD)/gen/strux_git.h: FORCE
	@mkdir -p $(@D)
	@c=$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown); \
	 git diff --quiet HEAD -- src include 2>/dev/null || c="$$c-dirty"; \
	 echo "#define STRUX_GIT_COMMIT \"$$c\"" > $@.tmp; \
	 cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(BUILD)/obj/%.o: %.c $(BUILD)/config.mk
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/obj/src/cli/train.o: $(BUILD)/gen/strux_git.h

# The weight store's kernels: vectorised inner loops over contiguous rows (bench/weights.sh).
$(BUILD)/obj/src/linalg/store_dense.o: CFLAGS_ALL += -ftree-vectorize -fno-trapping-math

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CLI_OBJ) $(LIB) $(LDLIBS_ALL) -o $@

$(BUILD)/tests/%: tests/unit/%.c $(TEST_COMMON_OBJ) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Isrc -Itests/common $< $(TEST_COMMON_OBJ) $(LIB) $(LDLIBS_ALL) \
	    $(TEST_LIBS) -o $@

$(BUILD)/tests/mpi_%: tests/mpi/%.c $(TEST_COMMON_OBJ) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Isrc -Itests/common $< $(TEST_COMMON_OBJ) $(LIB) $(LDLIBS_ALL) \
	    $(TEST_LIBS) -o $@

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $< $(LIB) $(LDLIBS_ALL) -o $@

# LIBLINEAR through its API (liblinear-dev): bench/m3l.sh times it in memory
$(BUILD)/bench/liblinear_time: LDLIBS_ALL += -llinear

$(BUILD)/obj/tests/%.o: CFLAGS_ALL += -Itests/common

demo: $(BIN)
	@mkdir -p out
	mpirun -np 2 --oversubscribe $(BIN) train configs/yeast.ini \
	    --set output.model=out/yeast.h5 --set output.metrics=out/yeast.metrics.jsonl
	$(BIN) inspect out/yeast.h5 | head -n 8

check: $(BIN) $(UNIT_BIN) $(MPI_BIN) $(BENCH_BIN)
	@BUILD=$(BUILD) tests/run

# Starts munged, slurmctld and slurmd itself (tests/common/slurm.sh) and stops them on exit.
check-slurm: $(BIN)
	@scripts/install-deps --slurm
	@BUILD=$(BUILD) SUITES=slurm JOBS=1 tests/run

# Sanitized copy: its own BUILD, the same tests. UBSan findings stop the program (halt_on_error), and
# sanitizer exits use status 99, which no strux error uses, so a test expecting exit 1 cannot pass
# on a sanitizer report. Leak stacks are unwound slowly (fast_unwind_on_malloc=0: Open MPI and
# HDF5 have no frame pointers) and Open MPI keeps its plugins loaded (disable_dlclose), so that
# every leak of theirs has a library frame that tests/asan-leaks.supp names. A failing malloc
# returns NULL as in a normal build (allocator_may_return_null), so strux reports it (exit 5).
# __tls_get_addr is not intercepted (intercept_tls_get_addr=0, google/sanitizers#1322): with it,
# LeakSanitizer's stop-the-world tracer crashed at exit in bursts ("Tracer caught signal 11", 46
# failures in one check-asan run, reruns included); without it the whole suite passes with no
# new leak report.
ASAN_BUILD ?= build-asan
ASAN_CC ?= mpicc -fsanitize=address,undefined
SAN_ENV = ASAN_OPTIONS=exitcode=99:fast_unwind_on_malloc=0:allocator_may_return_null=1:intercept_tls_get_addr=0 \
          LSAN_OPTIONS=suppressions=$(CURDIR)/tests/asan-leaks.supp:print_suppressions=0 \
          UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99 \
          OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
# The bad-input corpus runs as singletons only here (each sanitized process spends ~3 s in
# MPI_Init's allocations, unwound slowly for the leak suppressions; make check runs every case at
# -np 1 and 2, and every rank's error path is the same code).
# Under the sanitizers every unit, MPI and fault test runs, and the end-to-end scripts of input,
# output and error handling (bad_inputs, file_safety, reader_errors, fuzz_corpus, text_split,
# convert_stream, memory), one or two scripts per method (rates, rates_resume, bias, hier_ssvm,
# hier_ssvm_dual, hier_read_rank0, m3l_kernel, active_sets, share, sparse_duals,
# sgd_reference) and the short ones. Left out, because their code runs under ASan through those
# and the unit tests: the long scripts that train the same solvers, tasks and store kernels again
# on larger data for accuracy (against LIBLINEAR, per layout, per task, rta_solver, m3l,
# hier_margin_lp), the same runs at other rank counts and block counts (blocks, determinism,
# slack_determinism, hierarchy_ranks), comparisons with references already checked without the
# sanitizers (rates_solver's SLSQP, gen_shape's independent generator, the consumers, sparse.sh's
# layouts and weights.sh, whose kernels test_model_store checks), scripts of one reader or
# command's messages whose parser runs under ASan in the unit tests and fuzz_corpus (svmhmm_errors,
# cli, search_cli, gen, binary), progress output, and resume.sh and rta_reliability.sh (checkpoint
# and signal paths: faults/signals, rates_resume, hier_ssvm, mpi/rounds), rta.sh (the rta task and
# solver: test_task_rta, test_solver_rta, test_rta_kbest, test_rta_tree) and mpi/hier_ssvm (the α
# update at np 1, 2, 4; e2e/hier_ssvm and hier_ssvm_dual run it under ASan). This keeps .ci/run
# (check, check-asan with JOBS = cores, check-slurm) near 45 minutes on 2 cores.
ASAN_SKIP := e2e/dual_solvers.sh e2e/layouts.sh e2e/hierarchy.sh e2e/m3l.sh e2e/consumers.sh \
    e2e/rta_consumers.sh e2e/tasks.sh e2e/blocks.sh e2e/determinism.sh e2e/hierarchy_ranks.sh \
    e2e/hier_consumers.sh e2e/rates_solver.sh e2e/gen_shape.sh e2e/sparse.sh e2e/resume.sh \
    e2e/gen.sh e2e/weights.sh e2e/binary.sh e2e/progress.sh e2e/search_cli.sh \
    e2e/hier_margin_lp.sh e2e/rta_solver.sh e2e/rta_reliability.sh e2e/slack_determinism.sh \
    e2e/cli.sh e2e/svmhmm_errors.sh e2e/rta.sh mpi/hier_ssvm.sh
check-asan:
	@$(SAN_ENV) BAD_INPUTS_NP=1 SKIP="$(ASAN_SKIP)" $(MAKE) --no-print-directory \
	    BUILD=$(ASAN_BUILD) CC="$(ASAN_CC)" OPT="-O1 -g -fno-omit-frame-pointer" check

# libFuzzer targets (tests/fuzz/): the library and cli/config.o rebuilt with clang in FUZZ_BUILD
# (coverage and ASan/UBSan instrumentation; MPI through its include and link flags), then
# tests/fuzz/run runs each target FUZZ_SECONDS (FUZZ_JOBS at a time) on a corpus kept in
# FUZZ_BUILD/corpus, seeded from tests/fixtures, configs, tests/corpus and model files that
# $(BIN) writes. Crashing inputs land in FUZZ_BUILD/crashes/<target>/.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
FUZZ_TARGETS := libsvm svmhmm config model hierarchy
FUZZ_CC = clang $(shell mpicc -showme:compile) -fsanitize=fuzzer-no-link,address,undefined \
          -fno-sanitize-recover=undefined
# clang warns of {NULL} table terminators that gcc accepts; gcc stays the -Werror gate.
FUZZ_OPT = -O1 -g -Wno-missing-field-initializers
FUZZ_BIN := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%)
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(BUILD)/obj/src/cli/config.o \
                      $(LIB)
	@mkdir -p $(@D)
	$(CC) -fsanitize=fuzzer $(CFLAGS_ALL) $< $(BUILD)/obj/src/cli/config.o $(LIB) $(LDLIBS_ALL) \
	    $(shell mpicc -showme:link) -o $@
fuzz-build: $(FUZZ_BIN)
fuzz: $(BIN)
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC="$(FUZZ_CC)" OPT="$(FUZZ_OPT)" fuzz-build
	@STRUX=$(BIN) FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) \
	    tests/fuzz/run $(FUZZ_TARGETS)

bench: $(BIN) $(BENCH_BIN)
	@BUILD=$(BUILD) bench/run

SHARED_DATA ?= ../shared/data
data: $(BUILD)/data/conll2000.tags $(BUILD)/data/ocr.tags

$(BUILD)/data/conll2000.tags: scripts/convert-conll2000
	/usr/bin/python3 scripts/convert-conll2000 --data $(SHARED_DATA)/conll2000 --out $(@D)

$(BUILD)/data/ocr.tags: scripts/convert-ocr
	/usr/bin/python3 scripts/convert-ocr --data $(SHARED_DATA)/ocr_taskar --out $(@D)

# strux.pc: `pkg-config --cflags --libs strux` builds a program on the static library (see
# docs/example_predict.c); the dependencies are plain Requires/Libs because the library is static.
# Programs that call strux_comm_* also need MPI: compile them with mpicc. A sanitized library
# (make check-asan installs one in tests/e2e/consumers.sh) needs its sanitizer runtimes at link.
SAN_LIBS = $(filter -fsanitize=%,$(CC))
install: $(BIN) $(LIB)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include/strux
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/strux
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libstrux.a
	install -m 644 include/strux/*.h $(DESTDIR)$(PREFIX)/include/strux/
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	    'Name: strux' 'Description: distributed max-margin structured prediction' \
	    'Version: '"$$(sed -n 's/^#define STRUX_VERSION "\(.*\)"/\1/p' include/strux/core.h)" \
	    'Requires: hdf5 openblas zlib' 'Cflags: -I$${includedir}' \
	    'Libs: -L$${libdir} -lstrux -lglpk -lm $(SAN_LIBS)' >$(DESTDIR)$(PREFIX)/lib/pkgconfig/strux.pc

clean:
	rm -rf $(BUILD) out

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
