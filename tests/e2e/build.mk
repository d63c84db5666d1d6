# End-to-end tests in network namespaces (root; they skip with 77 otherwise).
TESTS += tests/e2e/loader.sh tests/e2e/cli.sh tests/e2e/linear.sh \
	tests/e2e/quickstart.sh tests/e2e/docs.sh \
	tests/e2e/metrics.sh

# A program the verifier refuses (loader.sh: the verifier's log is shown)
REFUSED_OBJ := $(BUILD)/tests/e2e/refused.bpf.o

$(REFUSED_OBJ): tests/e2e/refused.bpf.c vmlinux.h
	$(msg) CLANG $<
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MF $@.d -MT $@ -c $< -o $@

TEST_BINS += $(REFUSED_OBJ)
