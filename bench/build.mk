# make bench: rxdp against the raw AF_XDP limit and kernel TCP on the same
# veth pair (bench/run.sh); results in build/bench/. Not part of make check
# (figures, not tests). The tools it runs are built by `make`:
#  rxdp-xskraw  the raw AF_XDP limit (ping-pong, stream), its own XDP program
#  rxdp-qp-rss  the memory of a process holding N QPs (a verbs program)
#  rxdp-lossyhop  a forwarding hop (XDP redirect) that drops frames at random
#  rxdp-ecnmark   ECN marking on a switch port (a tc program, K_min/K_max/P_max)
#  udpecho.bpf.o  the incast section's ping-pong echo (a tc program, loaded
#                 by tc itself)
XSKRAW_SKEL := $(GEN)/xskraw.skel.h
XSKRAW := $(BIN)/rxdp-xskraw

# the tools' BPF programs, as the top Makefile builds bpf/'s
$(GEN)/%.bpf.o: bench/%.bpf.c vmlinux.h
	$(msg) CLANG $<
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MF $@.d -MT $@ -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	@rm -f $@.tmp

$(XSKRAW): $(OBJ)/bench/xskraw.o $(OBJ)/userspace/engine/crc32.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lxdp -lbpf -lelf -lz -lisal

QP_RSS := $(BIN)/rxdp-qp-rss

$(QP_RSS): $(OBJ)/bench/qp_rss.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -libverbs

LOSSYHOP_SKEL := $(GEN)/lossyhop.skel.h
LOSSYHOP := $(BIN)/rxdp-lossyhop

$(LOSSYHOP): $(OBJ)/bench/lossyhop.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lbpf -lelf -lz

ECNMARK_SKEL := $(GEN)/ecnmark.skel.h
ECNMARK := $(BIN)/rxdp-ecnmark

$(ECNMARK): $(OBJ)/bench/ecnmark.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lbpf -lelf -lz

UDPECHO := $(GEN)/udpecho.bpf.o

BUILD_DEPS += $(XSKRAW_SKEL) $(LOSSYHOP_SKEL) $(ECNMARK_SKEL) $(UDPECHO)
BINS += $(XSKRAW) $(QP_RSS) $(LOSSYHOP) $(ECNMARK)

bench: all
	$(Q)bench/run.sh

.PHONY: bench
