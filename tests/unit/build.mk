# cmocka unit tests of the headers shared by BPF and userspace (no root).
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(wildcard tests/unit/test_*.c))

$(BUILD)/tests/unit/%: $(OBJ)/tests/unit/%.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcmocka

TESTS += $(UNIT_TESTS)

# the pin-path API of userspace/common/bpffs.c (its archive is named here:
# userspace/common/build.mk is read after this file)
$(BUILD)/tests/unit/test_bpffs: $(LIB)/librxdp-common.a
ASAN_TESTS += $(UNIT_TESTS)
