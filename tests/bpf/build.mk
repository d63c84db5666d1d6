# The XDP classifier on crafted packets (BPF_PROG_TEST_RUN; root, else 77),
# and against the engine's parser (its archive named literally: read later).
BPF_TEST := $(BUILD)/tests/bpf/test_xdp

$(OBJ)/tests/bpf/test_xdp.o $(OBJ)/tests/bpf/xdp_rig.o: $(BPF_SKEL)

$(BPF_TEST): $(OBJ)/tests/bpf/test_xdp.o $(OBJ)/tests/bpf/xdp_rig.o $(LIB)/librxdp-engine.a
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcmocka -lxdp -lbpf -lisal

TESTS += $(BPF_TEST)

# rxdp-ecnmark's tc program (the many-hosts rig's ECN marking) on crafted
# frames (BPF_PROG_TEST_RUN; root, else 77)
ECNMARK_TEST := $(BUILD)/tests/bpf/test_ecnmark

$(OBJ)/tests/bpf/test_ecnmark.o: $(ECNMARK_SKEL)
$(OBJ)/tests/bpf/test_ecnmark.o: CFLAGS += -Ibench

$(ECNMARK_TEST): $(OBJ)/tests/bpf/test_ecnmark.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcmocka -lbpf -lelf -lz

TESTS += $(ECNMARK_TEST)
