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
#  rsock.sh      (root) rsock_check between two hosts: the rsockets calls
#                rstream leaves out (rread/rwrite, vector and message forms,
#                rselect, names, riomap's refusal), every byte checked
#  cm-foreign.sh (root) rdma-core's CM beside rxdp's: every call on an id
#                that stands for an rdma-core id reaches rdma-core's (a
#                stand-in librdmacm, fake_rdmacm.c; cm_foreign)
CM_CHECK := $(BUILD)/tests/rdmacm/cm_check
MCAST_CHECK := $(BUILD)/tests/rdmacm/mcast_check
RSOCK_CHECK := $(BUILD)/tests/rdmacm/rsock_check

$(CM_CHECK): $(OBJ)/tests/rdmacm/cm_check.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -lrdmacm -libverbs

$(RSOCK_CHECK): $(OBJ)/tests/rdmacm/rsock_check.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -lrdmacm

$(MCAST_CHECK): $(OBJ)/tests/rdmacm/mcast_check.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -libverbs

CM_FOREIGN := $(BUILD)/tests/rdmacm/cm_foreign
FAKE_RDMACM := $(BUILD)/tests/rdmacm/fake-rdmacm/librdmacm.so.1

$(CM_FOREIGN): $(OBJ)/tests/rdmacm/cm_foreign.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -lrdmacm -libverbs

FAKE_RDMACM_OBJS := $(OBJ)/tests/rdmacm/fake_rdmacm.o \
		    $(OBJ)/tests/rdmacm/fake_rdmacm_event.o

$(FAKE_RDMACM): $(FAKE_RDMACM_OBJS) userspace/rdmacm/librdmacm.map
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,librdmacm.so.1 \
		-Wl,--version-script=userspace/rdmacm/librdmacm.map \
		-o $@ $(FAKE_RDMACM_OBJS)

TEST_BINS += $(CM_CHECK) $(MCAST_CHECK) $(RSOCK_CHECK) $(CM_FOREIGN) $(FAKE_RDMACM) \
	     $(BUILD)/tests/verbs/fake-rdmacore/libibverbs.so.1
TESTS += tests/rdmacm/check-abi.sh tests/rdmacm/cm-foreign.sh tests/rdmacm/cm.sh tests/rdmacm/rsock.sh \
	 tests/rdmacm/mckey.sh \
	 tests/rdmacm/mckey-engines.sh
