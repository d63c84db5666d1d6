# Tests of the drop-in libibverbs.so.1 (userspace/verbs).
#  test_verbs_shell  cmocka, compiled against <infiniband/verbs.h>, linked to
#                    build/lib/libibverbs.so.1 (runpath), fake rxdpd inside
#  check-abi.sh      every Debian perftest/ibverbs-utils binary starts on it
#  devinfo-netns.sh  ibv_devices / ibv_devinfo -v against the real rxdpd
#                    in a namespace (root; skips until rxdpd is built)
VERBS_TEST := $(BUILD)/tests/verbs/test_verbs_shell

$(VERBS_TEST): $(OBJ)/tests/verbs/test_verbs_shell.o $(VERBS_SO) $(COMMON_LIB)
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(OBJ)/tests/verbs/test_verbs_shell.o \
		$(COMMON_LIB) -L$(LIB) -l:libibverbs.so.1 \
		-Wl,-rpath,$(abspath $(LIB)) -lmnl -lcmocka -lpthread -ldl

TESTS += $(VERBS_TEST) tests/verbs/check-abi.sh tests/verbs/devinfo-netns.sh
