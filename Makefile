# rxdp top-level Makefile.
#
#   make            build everything into build/
#   make check      install what is missing, build, run every test (and
#                   check-asan: the unit and in-memory-wire tests sanitized)
#   make demo       the main job (see README.md)
#   make coverage   line and branch coverage under the tests, per folder
#                   (scripts/coverage.sh; build/coverage/summary.txt)
#   make mutants    each tests/mutants/*.patch breaks the code on purpose:
#                   the tests it names must fail (scripts/mutants.sh)
#   make vmlinux    regenerate vmlinux.h from the running kernel's BTF
#
# Each component has a build.mk beside its sources that appends to the lists
# below; this file holds the shared rules. Quiet unless V=1.

.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:
.DEFAULT_GOAL := all

ifeq ($(V),1)
Q :=
msg := @true
else
Q := @
msg = @printf '  %-8s %s\n'
endif

BUILD   := build
OBJ     := $(BUILD)/obj
GEN     := $(BUILD)/gen
BIN     := $(BUILD)/bin
LIB     := $(BUILD)/lib

CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool

CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	   -Wno-missing-field-initializers -fPIC -D_GNU_SOURCE \
	   -Iinclude -Iuserspace -I$(GEN) -MMD -MP
LDFLAGS ?=
# check-asan adds the sanitizers here (CFLAGS/LDFLAGS on the command line
# would replace the flags above instead)
CFLAGS  += $(EXTRA_CFLAGS)
LDFLAGS += $(EXTRA_LDFLAGS)
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -Wall -Werror -I. -Iinclude -I$(GEN) -MMD -MP

# Filled by the build.mk files
BINS      :=
LIBS      :=
TESTS     :=   # test programs/scripts run by `make check`, in order
TEST_BINS :=   # programs the test scripts run (built by `make test`)
ASAN_TESTS :=  # test programs `make check-asan` builds and runs sanitized
BUILD_DEPS :=

all:

# Components first, tests last, so a test's prerequisites can name the
# variables the components define.
BUILD_MKS := $(sort $(wildcard */build.mk */*/build.mk))
include $(filter-out tests/%,$(BUILD_MKS)) $(filter tests/%,$(BUILD_MKS))

all: $(BUILD_DEPS) $(BINS) $(LIBS)

# --- generic rules ---------------------------------------------------------

$(OBJ)/%.o: %.c | $(BUILD_DEPS)
	$(msg) CC $<
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(GEN)/%.bpf.o: bpf/%.bpf.c vmlinux.h
	$(msg) CLANG $<
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MF $@.d -MT $@ -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	@rm -f $@.tmp

$(GEN)/%.skel.h: $(GEN)/%.bpf.o
	$(msg) SKEL $@
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# --- top-level targets -----------------------------------------------------

deps:
	$(Q)scripts/install-deps.sh

# The suite's time is bounded (tests/run-tests.sh): from here on, every
# test's limit is also what is left of RXDP_CHECK_BUDGET seconds
check: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)export RXDP_CHECK_START=$$(date +%s); \
		$(MAKE) --no-print-directory test && \
		$(MAKE) --no-print-directory check-asan

test: all $(TEST_BINS) $(TESTS)
	$(Q)tests/run-tests.sh $(TESTS)

test-bins: $(TEST_BINS) $(filter $(BUILD)/%,$(TESTS))

print-tests:
	@echo $(TESTS)

coverage: deps
	$(Q)scripts/coverage.sh

mutants: deps
	$(Q)MUTANTS="$(MUTANTS)" scripts/mutants.sh

# Hours of mixed, byte-checked traffic through a bad wire, with restarts
# (scripts/soak.sh; SOAK_SECONDS, default an hour).
soak: deps
	$(Q)$(MAKE) --no-print-directory all test-bins
	$(Q)scripts/soak.sh

# The unit and in-memory-wire tests again, built with AddressSanitizer and
# UBSan into build/asan (any error aborts the test). Not the BPF programs:
# none of these tests loads one. Their transport timers are at least 268 ms
# (test_rc): a sanitized build on a busy machine is slow. They share the
# generated headers (the skeleton's types name the pinned maps).
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	     -fno-omit-frame-pointer
check-asan: $(BPF_SKEL)
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/asan GEN=$(GEN) BUILD_DEPS= \
		EXTRA_CFLAGS="$(SAN_FLAGS)" EXTRA_LDFLAGS="$(SAN_FLAGS)" \
		asan-tests

asan-tests: $(ASAN_TESTS)
	$(Q)RXDP_TEST_TIMEOUT_MIN=16 tests/run-tests.sh $(ASAN_TESTS)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux.h

clean:
	rm -rf $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^vmlinux.h$$')

.PHONY: all deps check test test-bins print-tests coverage mutants soak check-asan asan-tests \
	demo vmlinux clean format

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
