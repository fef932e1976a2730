# pb: one non-recursive Makefile.
#   make            libpb and the tools into build/
#   make check      deps, build, unit tests, the layers of lib/, lit suite,
#                   end-to-end tests, the fast ONNX conformance subset
#   make conformance  the whole ONNX conformance suite, writes docs/ops.md
#   make demo       the bundled example through every stage
#   make install PREFIX=/usr/local
#   make SANITIZE=1 build with AddressSanitizer + UBSan (into build-san/)
#   make pb-run-lite  pb-run-lite and pb-prof-lite: PTX-only runners without
#                   LLVM/MLIR (for GPU machines that have no LLVM)
.DELETE_ON_ERROR:
.SUFFIXES:

LLVM     ?= /usr/lib/llvm-22
CUDA_HOME ?= /usr/local/cuda
PREFIX   ?= /usr/local
PYTHON   ?= /usr/bin/python3
CC       ?= gcc
ifeq ($(CC),cc)
CC := gcc
endif

ifeq ($(SANITIZE),1)
B := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer
else
B := build
SANFLAGS :=
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

WERROR := $(if $(CI),-Werror,)
CFLAGS  ?= -O2 -g
# isl: pb's own build (ISL=imath, the default), isl 0.25 with IMath and
# 32-bit small integers, built once by scripts/deps.sh --isl into
# ISL_PREFIX and linked statically, its symbols kept out of the
# executables' dynamic symbol table (libLLVM.so exports the isl bundled
# with Polly, another build: each keeps its own calls); or ISL=system,
# Debian's libisl (GMP integers, slower), linked before libLLVM so that
# the dynamic linker binds pb's isl calls to it (docs/design.md, "isl").
ISL ?= imath
ISL_PREFIX ?= $(HOME)/.cache/pb-deps/isl-0.25-imath32
ifeq ($(ISL),system)
ISL_CFLAGS := $(shell pkg-config --cflags isl 2>/dev/null)
ISL_LIBS := $(shell pkg-config --libs isl 2>/dev/null)
ISL_LIB :=
else ifeq ($(ISL),imath)
ISL_CFLAGS := -I$(ISL_PREFIX)/include
ISL_LIB := $(ISL_PREFIX)/lib/libisl.a
ISL_LIBS := -Wl,--exclude-libs,libisl.a $(ISL_LIB)
else
$(error ISL=$(ISL): imath (pb's own isl build) or system (Debian's libisl))
endif
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra $(WERROR) $(CFLAGS) $(SANFLAGS) \
	-MMD -MP -Ilib -I$(B)/gen $(ISL_CFLAGS) -I$(LLVM)/include \
	$(shell pkg-config --cflags jansson libprotobuf-c 2>/dev/null)
MLIR_LIBS := -L$(LLVM)/lib -Wl,--start-group -lMLIRCAPIIR -lMLIRCAPIRegisterEverything \
	-lMLIRCAPITransforms -lMLIRCAPIExecutionEngine -lMLIRCAPITarget -lMLIRCAPIGPU \
	-lMLIRCAPIConversion -Wl,--end-group -lMLIR -lLLVM -lstdc++ -Wl,-rpath,$(LLVM)/lib
LIBS := $(ISL_LIBS) $(MLIR_LIBS) \
	$(shell pkg-config --libs jansson libprotobuf-c 2>/dev/null) -ldl -lm -pthread
LDFLAGS_ALL := $(SANFLAGS) $(LDFLAGS)
# The tools allocate with jemalloc (MALLOC=jemalloc, the default), first in
# their library list so that it serves every library's malloc (MLIR's and
# LLVM's, isl's): 5-10% less CPU than glibc's malloc in pb-fuse and
# pb-codegen, whose threads no longer share glibc's arenas
# (bench/RESULTS.md, session 12 ctime8). MALLOC=libc keeps glibc's;
# sanitized builds always do (AddressSanitizer has its own).
MALLOC ?= jemalloc
ifeq ($(SANITIZE),1)
MALLOC_LIBS :=
else ifeq ($(MALLOC),jemalloc)
MALLOC_LIBS := -Wl,--push-state,--no-as-needed -ljemalloc -Wl,--pop-state
else ifeq ($(MALLOC),libc)
MALLOC_LIBS :=
else
$(error MALLOC=$(MALLOC): jemalloc or libc)
endif

# The named pipelines (pipelines/, docs/pipelines.md): shell scripts over
# the tools, run by pb-run and pb-prof --pipeline.
PIPELINES := $(filter-out %.md,$(sort $(wildcard pipelines/*)))

TOOLS := pb-import pb-fuse pb-tile pb-mma pb-smem pb-codegen pb-run pb-prof

# The ONNX protobuf schema ships with libonnx-dev; its C bindings are
# generated at build time by protoc-c.
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
GEN_SRC := $(B)/gen/onnx/onnx.pb-c.c
GEN_HDR := $(B)/gen/onnx/onnx.pb-c.h
# The built-in GPU descriptions (docs/targets.md) are embedded as C strings,
# so that no tool depends on an install path.
TARGET_JSON := $(sort $(wildcard targets/*.json))
GEN_TARGETS := $(B)/gen/target/builtin.c

LIB_SRC := $(sort $(wildcard lib/*/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o) $(B)/obj/gen/onnx.pb-c.o \
	$(B)/obj/gen/target/builtin.o
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
BINS := $(TOOLS:%=$(B)/bin/%)
LITE_BINS := $(B)/bin/pb-run-lite $(B)/bin/pb-prof-lite

all: $(BINS) $(LITE_BINS)

$(GEN_SRC) $(GEN_HDR) &: $(ONNX_PROTO)
	@mkdir -p $(B)/gen/onnx
	$(Q)cp -f $(ONNX_PROTO) $(B)/gen/onnx/onnx.proto
	$(Q)cd $(B)/gen/onnx && protoc-c --c_out=. onnx.proto

$(B)/obj/gen/onnx.pb-c.o: $(GEN_SRC)
	@mkdir -p $(dir $@)
	@echo "  CC    $@"
	$(Q)$(CC) -std=c11 $(CFLAGS) $(SANFLAGS) -I$(B)/gen -c $< -o $@

$(GEN_TARGETS): $(TARGET_JSON)
	@mkdir -p $(dir $@)
	@echo "  GEN   $@"
	$(Q){ echo '/* generated from targets/ by the Makefile: do not edit */'; \
	echo '#include "target/internal.h"'; \
	echo 'const struct pb_target_builtin pb_target_builtins[] = {'; \
	for f in $(TARGET_JSON); do \
		echo "{\"$$(basename $$f .json)\", \"$$f\","; \
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $$f; \
		echo '},'; \
	done; \
	echo '{0, 0, 0}};'; } > $@

$(B)/obj/gen/target/builtin.o: $(GEN_TARGETS)
	@mkdir -p $(dir $@)
	@echo "  CC    $@"
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(B)/obj/%.o: %.c | $(GEN_HDR) $(ISL_LIB)
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# pb's isl, built once per ISL_PREFIX (a minute or two; the sources come
# from PyPI): scripts/deps.sh --isl.
ifneq ($(ISL_LIB),)
$(ISL_LIB):
	@scripts/deps.sh --isl $(ISL_PREFIX)
endif

$(B)/lib/libpb.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@echo "  AR    $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/bin/%: $(B)/obj/tools/%/main.o $(B)/lib/libpb.a $(ISL_LIB)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	$(Q)$(CC) $(LDFLAGS_ALL) $(MALLOC_LIBS) $< $(B)/lib/libpb.a $(LIBS) -o $@

$(B)/tests/%: $(B)/obj/tests/unit/%.o $(B)/lib/libpb.a $(ISL_LIB)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	$(Q)$(CC) $(LDFLAGS_ALL) $< $(B)/lib/libpb.a $(LIBS) -o $@

# pb-run-lite, pb-prof-lite: the same tools built with -DPB_NO_MLIR from the
# files that need no MLIR or isl; jansson and protobuf-c are linked
# statically so that the binaries run on machines without them, libcuda is
# opened with dlopen.
LITE_SRC := lib/core/buf.c lib/core/ctx.c lib/core/diag.c lib/driver/driver.c \
	lib/core/json.c \
	lib/core/npy.c \
	lib/core/tensor.c lib/onnx/tensor.c lib/onnx/weights.c lib/plan/plan.c \
	lib/plan/arena.c \
	lib/runtime/run.c lib/runtime/cuda.c lib/runtime/gpurun.c \
	lib/runtime/prof.c lib/runtime/roofline.c lib/target/target.c
LITE_OBJ := $(LITE_SRC:%.c=$(B)/lite/%.o) $(B)/obj/gen/onnx.pb-c.o \
	$(B)/obj/gen/target/builtin.o
LITE_LIBS := -Wl,-Bstatic -ljansson -lprotobuf-c -Wl,-Bdynamic -ldl -lm

$(B)/lite/%.o: %.c | $(GEN_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC    $< (lite)"
	$(Q)$(CC) $(ALL_CFLAGS) -DPB_NO_MLIR -c $< -o $@

$(B)/bin/%-lite: $(B)/lite/tools/%/main.o $(LITE_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	$(Q)$(CC) $(LDFLAGS_ALL) $^ $(LITE_LIBS) -o $@

pb-run-lite: $(LITE_BINS)

deps:
	@scripts/deps.sh

unit: $(UNIT_BIN)
	@fail=0; for t in $(UNIT_BIN); do $$t || fail=1; done; exit $$fail

lit: all
	$(Q)PB_BUILD=$(abspath $(B)) $(LLVM)/bin/lit -sv tests/lit

e2e: all
	$(Q)PB_BUILD=$(abspath $(B)) PYTHON=$(PYTHON) tests/e2e/run.sh

# The layers of lib/ (docs/design.md): includes and calls only downwards,
# no circle of calls between files.
layers: all
	$(Q)$(PYTHON) scripts/layers.py $(B)

# ONNX conformance suite (docs/testing.md): the full run writes docs/ops.md;
# the fast subset (tests/e2e/node-tests.txt, tests/conformance/fast.txt) is
# part of check.
.PHONY: conformance conformance-fast
conformance: all
	$(Q)PB_BUILD=$(abspath $(B)) PYTHON=$(PYTHON) tests/conformance/run.sh --report docs/ops.md

conformance-fast: all
	$(Q)PB_BUILD=$(abspath $(B)) tests/conformance/run.sh --fast

# The model zoo (docs/testing.md): torchvision models exported with seeded
# weights (cached in ~/.cache/pb-zoo), every stage on the CPU against
# PyTorch; not part of check (minutes). Installs Debian's python3-torch
# and python3-torchvision when missing.
zoo: all
	@scripts/deps.sh --zoo
	$(Q)PB_BUILD=$(abspath $(B)) PYTHON=$(PYTHON) tests/zoo/run.sh $(ZOO)

# check builds first (deps installed), then runs every suite even if one fails.
check:
	@scripts/deps.sh
	@$(MAKE) --no-print-directory all $(UNIT_BIN)
	@fail=0; \
	$(MAKE) --no-print-directory unit || fail=1; \
	$(MAKE) --no-print-directory layers || fail=1; \
	$(MAKE) --no-print-directory lit || fail=1; \
	$(MAKE) --no-print-directory e2e || fail=1; \
	$(MAKE) --no-print-directory conformance-fast || fail=1; \
	exit $$fail

demo:
	@scripts/deps.sh
	@$(MAKE) --no-print-directory all
	$(Q)PB_BUILD=$(abspath $(B)) PYTHON=$(PYTHON) examples/demo.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/doc/pb/docs \
		$(DESTDIR)$(PREFIX)/share/pb/targets $(DESTDIR)$(PREFIX)/share/pb/pipelines
	install -m 755 $(BINS) $(LITE_BINS) $(DESTDIR)$(PREFIX)/bin
	install -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/pb
	install -m 644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/pb/docs
	install -m 644 targets/*.json $(DESTDIR)$(PREFIX)/share/pb/targets
	install -m 755 $(PIPELINES) $(DESTDIR)$(PREFIX)/share/pb/pipelines

# make fuzz FUZZ_SECONDS=N [FUZZ_TARGET=import|mlir]: libFuzzer (clang-14)
# over the ONNX importer and tensor reader (import, the default) or over
# the textual MLIR entry of the stages (mlir), libpb rebuilt with
# ASan+UBSan into $(B)-fuzz, seeded by tests/fuzz/seed.sh (docs/testing.md,
# "Fuzzing").
FUZZ_SECONDS ?= 60
FUZZ_TARGET ?= import
FUZZ_CC ?= clang-14
FB := $(B)-fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-omit-frame-pointer
fuzz:
	@command -v $(FUZZ_CC) >/dev/null || apt-get install -y clang-14 libclang-rt-14-dev
	$(Q)$(MAKE) --no-print-directory B=$(FB) CC=$(FUZZ_CC) CFLAGS="-O1 -g" \
		SANFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" $(FB)/lib/libpb.a
	$(Q)$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer \
		-Ilib -I$(FB)/gen -I$(LLVM)/include tests/fuzz/fuzz_$(FUZZ_TARGET).c \
		$(FB)/lib/libpb.a $(LIBS) -o $(FB)/fuzz_$(FUZZ_TARGET)
	$(Q)tests/fuzz/seed.sh $(FB)/corpus-$(FUZZ_TARGET) $(FUZZ_TARGET)
	$(Q)mkdir -p $(FB)/found-$(FUZZ_TARGET)
	$(Q)cd $(FB)/found-$(FUZZ_TARGET) && ASAN_OPTIONS=detect_leaks=1 \
		../fuzz_$(FUZZ_TARGET) \
		-max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 \
		-max_len=65536 -close_fd_mask=2 $(FUZZ_FLAGS) ../corpus-$(FUZZ_TARGET)

clean:
	rm -rf build build-san build-fuzz

.PHONY: all deps unit lit e2e check demo install clean pb-run-lite fuzz layers zoo
.SECONDARY:

-include $(shell find $(B)/obj $(B)/lite -name '*.d' 2>/dev/null)
