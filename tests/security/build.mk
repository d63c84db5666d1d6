# A hostile network and hostile keys, end to end (root; 77 otherwise):
#  hostile_net.sh  two rxdp hosts and an attacker on one bridge: forged
#                  RDMA Writes (right QPN, PSN, R_Key and address, wrong
#                  source) and PSN sweeps are dropped as drop_bad_source,
#                  the victim's epsn stays, a real transfer lands beside them
#  keys.sh         the first R_Key of three fresh processes differs; any
#                  wrong key byte is a remote access error
# sec_peer: their verbs program (system <infiniband/verbs.h>, build/lib's
# libibverbs at run time); forge.py: the attacker (scapy.contrib.roce).
SEC_PEER := $(BUILD)/tests/security/sec_peer

$(SEC_PEER): $(OBJ)/tests/security/sec_peer.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -libverbs

TEST_BINS += $(SEC_PEER)
TESTS += tests/security/hostile_net.sh tests/security/keys.sh
