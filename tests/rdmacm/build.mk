# The RDMA connection manager (userspace/daemon/cm.c, gsi.c; the drop-in
# librdmacm.so.1 in userspace/rdmacm):
#  check-abi.sh  every RDMACM symbol@version that rdmacm-utils, perftest and
#                pyverbs import is exported; each program starts on ours
#  cm.sh         (root) rdma-core's CM programs, rsockets (rstream) and
#                perftest -R between two hosts, REJs, a killed peer, a
#                capture tshark decodes; cm_check for what they leave out
#  cm_check      built against the system's <rdma/rdma_cma.h> and
#                librdmacm.so.1, run on build/lib's
#  mckey.sh      (root) multicast: mckey between two hosts and to several
#                receivers on one, the interface's group memberships, XDP
#                drops of groups without members; mcast_check (verbs
#                attach/detach errnos and caps, system headers, build/lib's
#                libibverbs.so.1)
CM_CHECK := $(BUILD)/tests/rdmacm/cm_check
MCAST_CHECK := $(BUILD)/tests/rdmacm/mcast_check

$(CM_CHECK): $(OBJ)/tests/rdmacm/cm_check.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -lrdmacm

$(MCAST_CHECK): $(OBJ)/tests/rdmacm/mcast_check.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -libverbs

TEST_BINS += $(CM_CHECK) $(MCAST_CHECK)
TESTS += tests/rdmacm/check-abi.sh tests/rdmacm/cm.sh tests/rdmacm/mckey.sh \
	 tests/rdmacm/mckey-engines.sh
