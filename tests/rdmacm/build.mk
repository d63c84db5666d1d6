# The RDMA connection manager (userspace/daemon/cm.c, gsi.c; the drop-in
# librdmacm.so.1 in userspace/rdmacm):
#  check-abi.sh  every RDMACM symbol@version that rdmacm-utils, perftest and
#                pyverbs import is exported; each program starts on ours
#  cm.sh         (root) rdma-core's CM programs, rsockets (rstream) and
#                perftest -R between two hosts, REJs, a killed peer, a
#                capture tshark decodes; cm_check for what they leave out
#  cm_check      built against the system's <rdma/rdma_cma.h> and
#                librdmacm.so.1, run on build/lib's
CM_CHECK := $(BUILD)/tests/rdmacm/cm_check

$(CM_CHECK): $(OBJ)/tests/rdmacm/cm_check.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -lrdmacm

TEST_BINS += $(CM_CHECK)
TESTS += tests/rdmacm/check-abi.sh tests/rdmacm/cm.sh
