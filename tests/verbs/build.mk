# Tests of the drop-in libibverbs.so.1 (userspace/verbs).
#  test_verbs_shell  cmocka, compiled against <infiniband/verbs.h>, linked to
#                    build/lib/libibverbs.so.1 (runpath), fake rxdpd inside
#  test_verbs_events  cmocka, white box: completion/async event queues
#  test_verbs_foreign  rdma-core beside rxdp: every verb of the ops table on a
#                    stand-in rdma-core's device (fake_rdmacore.c) reaches it
#  test_verbs_private  the kernel ABI copies (known values), each
#                    IBVERBS_PRIVATE_34 stub's EOPNOTSUPP (dlsym), the fork
#                    ranges
#  check-abi.sh      every Debian perftest/ibverbs-utils binary starts on it
#  devinfo-netns.sh  ibv_devices / ibv_devinfo -v against the real rxdpd
#                    in a namespace (root; skips until rxdpd is built)
#  pyverbs.sh        rdma-core's pyverbs suite (Debian's python3-pyverbs)
#                    on one rxdp host, then its traffic tests with a player
#                    on each of two hosts (pyverbs_across.py) (root)
#  coexist           one process, several devices side by side (run in the
#                    guests by tests/vm/coexist.sh: rxdp's and Soft-RoCE's)
#
# This file is read before userspace/*/build.mk, so prerequisites name the
# library files literally (recipes may use their variables: they expand late).
VERBS_TEST := $(BUILD)/tests/verbs/test_verbs_shell
VERBS_T_SO := $(LIB)/libibverbs.so.1
VERBS_T_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(wildcard userspace/verbs/*.c))
VERBS_T_DEPS := $(LIB)/librxdp-common.a

VERBS_EVENTS_TEST := $(BUILD)/tests/verbs/test_verbs_events
FAKE_RXDPD := $(OBJ)/tests/verbs/fake_rxdpd.o

$(VERBS_TEST): $(OBJ)/tests/verbs/test_verbs_shell.o $(FAKE_RXDPD) \
		$(VERBS_T_SO) $(VERBS_T_DEPS)
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(OBJ)/tests/verbs/test_verbs_shell.o \
		$(FAKE_RXDPD) $(COMMON_LIB) -L$(LIB) -l:libibverbs.so.1 \
		-Wl,-rpath,$(abspath $(LIB)) -lmnl -lcmocka -lpthread -ldl

# The library's internal helpers (event queues, PD counts), white box: the
# verbs objects linked straight into the test
$(VERBS_EVENTS_TEST): $(OBJ)/tests/verbs/test_verbs_events.o $(FAKE_RXDPD) \
		$(VERBS_T_OBJS) $(VERBS_T_DEPS)
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(OBJ)/tests/verbs/test_verbs_events.o \
		$(FAKE_RXDPD) $(VERBS_OBJS) $(VERBS_LINK) $(VERBS_LDLIBS) \
		-lcmocka

VERBS_COEXIST := $(BUILD)/tests/verbs/coexist

$(VERBS_COEXIST): $(OBJ)/tests/verbs/coexist.o $(OBJ)/tests/lib/vtest.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -libverbs

TEST_BINS += $(VERBS_COEXIST)
TESTS += $(VERBS_TEST) $(VERBS_EVENTS_TEST) tests/verbs/check-abi.sh \
	 tests/verbs/devinfo-netns.sh tests/verbs/pyverbs.sh
# (test_verbs_shell runs Debian binaries on the library: not sanitized)
ASAN_TESTS += $(VERBS_EVENTS_TEST)

# rdma-core beside rxdp without a kernel RDMA device: a stand-in rdma-core
# library (versioned with rdma-core's nodes, libibverbs.map) and a program
# on build/lib's libibverbs.so.1 that hands it every verb of its device
VERBS_FOREIGN_TEST := $(BUILD)/tests/verbs/test_verbs_foreign
FAKE_RDMACORE := $(BUILD)/tests/verbs/fake-rdmacore/libibverbs.so.1

$(FAKE_RDMACORE): $(OBJ)/tests/verbs/fake_rdmacore.o userspace/verbs/libibverbs.map
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=userspace/verbs/libibverbs.map \
		-o $@ $(OBJ)/tests/verbs/fake_rdmacore.o

$(VERBS_FOREIGN_TEST): $(OBJ)/tests/verbs/test_verbs_foreign.o $(VERBS_T_SO) \
		$(FAKE_RDMACORE)
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(OBJ)/tests/verbs/test_verbs_foreign.o \
		-L$(LIB) -l:libibverbs.so.1 -Wl,-rpath,$(abspath $(LIB))

TESTS += $(VERBS_FOREIGN_TEST)

# The exported calls no device program makes: the kernel ABI copies, the
# provider interface's stubs (each ibv_cmd_* of the map, by dlsym), the
# fork ranges
VERBS_PRIVATE_TEST := $(BUILD)/tests/verbs/test_verbs_private

$(OBJ)/tests/verbs/test_verbs_private.o: CPPFLAGS += \
	-DVERBS_MAP='"$(abspath userspace/verbs/libibverbs.map)"'
$(OBJ)/tests/verbs/test_verbs_private.o: userspace/verbs/libibverbs.map

$(VERBS_PRIVATE_TEST): $(OBJ)/tests/verbs/test_verbs_private.o $(VERBS_T_SO)
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(OBJ)/tests/verbs/test_verbs_private.o \
		-L$(LIB) -l:libibverbs.so.1 -Wl,-rpath,$(abspath $(LIB)) -ldl

TESTS += $(VERBS_PRIVATE_TEST)
