# rxdpd's tests: cmocka unit tests (no root) and the namespace integration
# test (root; exit 77 otherwise). The control-protocol decoder test is built
# with AddressSanitizer and UBSan so a stray read fails it.
DTEST := $(BUILD)/tests/daemon

$(DTEST)/test_qp_sm: $(OBJ)/tests/daemon/test_qp_sm.o $(OBJ)/userspace/engine/qp_sm.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcmocka

$(DTEST)/test_nl_parse: tests/daemon/test_nl_parse.c tests/daemon/rtnl_recorded.h \
		userspace/daemon/nl_parse.c userspace/daemon/nl_parse.h
	$(msg) CC-ASAN $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -fsanitize=address,undefined \
		-fno-sanitize-recover=all -o $@ tests/daemon/test_nl_parse.c \
		userspace/daemon/nl_parse.c -lcmocka -lmnl

$(DTEST)/test_ctl_proto: tests/daemon/test_ctl_proto.c userspace/common/ctl_proto.c \
		userspace/common/ctl.h userspace/common/ctl_client.h
	$(msg) CC-ASAN $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -fsanitize=address,undefined \
		-fno-sanitize-recover=all -o $@ tests/daemon/test_ctl_proto.c \
		userspace/common/ctl_proto.c -lcmocka -lmnl

$(DTEST)/ctl_client_test: $(OBJ)/tests/daemon/ctl_client_test.o $(LIB)/librxdp-common.a
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lbpf -lmnl -lelf -lz

$(DTEST)/test_cm_mad: tests/daemon/test_cm_mad.c userspace/daemon/cm_mad.c \
		userspace/daemon/cm_mad.h
	$(msg) CC-ASAN $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -fsanitize=address,undefined \
		-fno-sanitize-recover=all -o $@ tests/daemon/test_cm_mad.c \
		userspace/daemon/cm_mad.c -lcmocka

DAEMON_TESTS := $(DTEST)/test_qp_sm $(DTEST)/test_nl_parse $(DTEST)/test_ctl_proto \
	$(DTEST)/test_cm_mad

# the integration test drives rxdpd with this client
BINS += $(DTEST)/ctl_client_test
TESTS += $(DAEMON_TESTS) tests/daemon/integration.sh tests/daemon/health.sh
ASAN_TESTS += $(DAEMON_TESTS)
