# End to end through unmodified verbs programs (perftest, ibverbs-utils) on
# rxdp between network namespaces: needs root, skips (77) otherwise.
RC_LOSSY := $(GEN)/lossy.bpf.o

$(RC_LOSSY): tests/rc/lossy.bpf.c vmlinux.h
	$(msg) CLANG $<
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

BUILD_DEPS += $(RC_LOSSY)
TESTS += tests/rc/perftest.sh tests/rc/faults.sh
