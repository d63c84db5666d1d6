# (The libraries are named literally: this file is read before theirs.)
# Engine tests (cmocka, no root): packets and ICRC against scapy's golden
# packets, and the RC transport between two engines over an in-memory wire.
ENGINE_TESTS := $(patsubst tests/engine/%.c,$(BUILD)/tests/engine/%,$(wildcard tests/engine/test_*.c))
ENGINE_TEST_HELPERS := $(OBJ)/tests/engine/memwire.o $(OBJ)/tests/engine/poster.o

$(BUILD)/tests/engine/%: $(OBJ)/tests/engine/%.o $(ENGINE_TEST_HELPERS) $(LIB)/librxdp-engine.a $(LIB)/librxdp-common.a
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(ENGINE_LDLIBS)

TESTS += $(ENGINE_TESTS)
TESTS += tests/engine/tshark_decode.sh
ASAN_TESTS += $(ENGINE_TESTS)
