# Fuzzing: libFuzzer targets built with clang -fsanitize=fuzzer,address,
# undefined (everything they reach compiled the same way, into
# build/fuzz/obj), each with a seed corpus committed in tests/fuzz/corpus/.
#  fuzz_engine_rx  the engine's packet parser and receive path (a host in
#                  RTS with requests outstanding, fed frames)
#  fuzz_ctl        rxdpd's control plane from outside: a client's control
#                  messages, CM MADs from the wire and rtnetlink messages,
#                  interleaved (tests/fuzz/fuzz_ctl.c)
#  fuzz_rings      a hostile client's shared rings: WQE slots, producer
#                  and CQ consumer indexes written at will between passes
#                  of its engine and an honest peer's (tests/fuzz/fuzz_rings.c)
#  fuzz_xdp        the XDP classifier on frames (BPF_PROG_TEST_RUN, root),
#                  held to the rules of tests/bpf/xdp_rig.h, the engine's
#                  parser among them
#
#   make fuzz            each target for FUZZ_SECONDS (default 300); new
#                        inputs accumulate in build/fuzz/work/, and are
#                        merged into the committed corpora (to commit)
#   make fuzz-corpus     write the seed corpora again (gen_corpus)
# `make check` runs each for RXDP_FUZZ_SECONDS (20) through run.sh.
FUZZ_DIR := $(BUILD)/fuzz
FUZZ_OBJ := $(FUZZ_DIR)/obj
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) \
	-fsanitize=fuzzer-no-link -std=gnu11 -Wall -Werror \
	-Wno-unused-parameter -Wno-missing-field-initializers -D_GNU_SOURCE \
	-Iinclude -Iuserspace -I$(GEN) -Itests/fuzz -Itests/engine -MMD -MP
FUZZ_SECONDS ?= 300

FUZZ_ENGINE := $(FUZZ_DIR)/fuzz_engine_rx
FUZZ_CTL := $(FUZZ_DIR)/fuzz_ctl
FUZZ_XDP := $(FUZZ_DIR)/fuzz_xdp
FUZZ_RINGS := $(FUZZ_DIR)/fuzz_rings
FUZZ_GEN := $(FUZZ_DIR)/gen_corpus
FUZZ_LIB_OBJS = $(patsubst %.c,$(FUZZ_OBJ)/%.o,$(ENGINE_SRCS) $(COMMON_SRCS))
FUZZ_LIBS := -lisal -lxdp -lbpf -lmnl -lelf -lz -lpthread

$(FUZZ_OBJ)/%.o: %.c | $(BUILD_DEPS)
	$(msg) CC-FUZZ $<
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_OBJ)/userspace/common/opts.o: $(GEN)/rxdp_version.h

$(FUZZ_ENGINE): $(FUZZ_OBJ)/tests/fuzz/fuzz_engine_rx.o \
		$(FUZZ_OBJ)/tests/fuzz/fuzz_host.o \
		$(FUZZ_OBJ)/tests/engine/poster.o $(FUZZ_LIB_OBJS)
	$(msg) LD $@
	$(Q)$(CLANG) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(FUZZ_LIBS)

# rxdpd without its main(): fuzz_ctl.c stands in for main.c
$(FUZZ_CTL): $(FUZZ_OBJ)/tests/fuzz/fuzz_ctl.o \
		$(patsubst %.c,$(FUZZ_OBJ)/%.o,$(filter-out %/main.c,$(DAEMON_SRCS))) \
		$(FUZZ_LIB_OBJS)
	$(msg) LD $@
	$(Q)$(CLANG) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(FUZZ_LIBS)

$(FUZZ_OBJ)/tests/fuzz/fuzz_xdp.o $(FUZZ_OBJ)/tests/bpf/xdp_rig.o: $(BPF_SKEL)

$(FUZZ_XDP): $(FUZZ_OBJ)/tests/fuzz/fuzz_xdp.o $(FUZZ_OBJ)/tests/bpf/xdp_rig.o \
		$(FUZZ_LIB_OBJS)
	$(msg) LD $@
	$(Q)$(CLANG) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(FUZZ_LIBS)

$(FUZZ_RINGS): $(FUZZ_OBJ)/tests/fuzz/fuzz_rings.o \
		$(FUZZ_OBJ)/tests/fuzz/fuzz_host.o \
		$(FUZZ_OBJ)/tests/engine/poster.o \
		$(FUZZ_OBJ)/tests/engine/memwire.o $(FUZZ_LIB_OBJS)
	$(msg) LD $@
	$(Q)$(CLANG) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(FUZZ_LIBS)

$(FUZZ_GEN): $(FUZZ_OBJ)/tests/fuzz/gen_corpus.o \
		$(FUZZ_OBJ)/tests/fuzz/fuzz_host.o \
		$(FUZZ_OBJ)/tests/engine/poster.o \
		$(FUZZ_OBJ)/tests/engine/memwire.o \
		$(FUZZ_OBJ)/userspace/daemon/cm_mad.o $(FUZZ_LIB_OBJS)
	$(msg) LD $@
	$(Q)$(CLANG) $(FUZZ_SAN) -o $@ $^ $(FUZZ_LIBS)

fuzz: $(FUZZ_ENGINE) $(FUZZ_CTL) $(FUZZ_XDP) $(FUZZ_RINGS)
	$(Q)RXDP_FUZZ_SECONDS=$(FUZZ_SECONDS) RXDP_FUZZ_KEEP=1 RXDP_FUZZ_GROW=1 \
		tests/fuzz/run.sh

fuzz-corpus: $(FUZZ_GEN) $(FUZZ_XDP)
	$(Q)rm -rf tests/fuzz/corpus/engine_rx tests/fuzz/corpus/ctl tests/fuzz/corpus/xdp
	$(Q)mkdir -p tests/fuzz/corpus/engine_rx tests/fuzz/corpus/ctl tests/fuzz/corpus/xdp
	$(Q)$(FUZZ_GEN) engine tests/fuzz/corpus/engine_rx
	$(Q)$(FUZZ_GEN) ctl tests/fuzz/corpus/ctl
	$(Q)RXDP_FUZZ_XDP_SEEDS=tests/fuzz/corpus/xdp $(FUZZ_XDP)

.PHONY: fuzz fuzz-corpus

TEST_BINS += $(FUZZ_ENGINE) $(FUZZ_CTL) $(FUZZ_XDP) $(FUZZ_RINGS)
TESTS += tests/fuzz/run.sh
