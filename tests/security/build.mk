# A hostile network and hostile keys, end to end (root; 77 otherwise):
#  hostile_net.sh  two rxdp hosts and an attacker on one bridge: forged
#                  RDMA Writes (right QPN, PSN, R_Key and address, wrong
#                  source) and PSN sweeps are dropped as drop_bad_source,
#                  the victim's epsn stays, a real transfer lands beside them
#  keys.sh         the first R_Key of three fresh processes differs; any
#                  wrong key byte is a remote access error
#  isolation.sh    hostile local users (hog) against the HCA all share: a
#                  victim's pingpongs between the hosts finish while they
#                  stall their own memory, leap their rings' indexes, take
#                  memory and connection slots until refused
#  setuid.sh       a set-user-ID program on rxdp's libibverbs ignores the
#                  variables that name a library to load or the socket to
#                  give its /proc/self/mem to
# sec_peer: their verbs program (system <infiniband/verbs.h>, build/lib's
# libibverbs at run time); forge.py: the attacker (scapy.contrib.roce).
SEC_PEER := $(BUILD)/tests/security/sec_peer
SEC_HOG := $(BUILD)/tests/security/hog

$(SEC_PEER): $(OBJ)/tests/security/sec_peer.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -libverbs

$(SEC_HOG): $(OBJ)/tests/security/hog.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -libverbs -lpthread

TEST_BINS += $(SEC_PEER) $(SEC_HOG)
TESTS += tests/security/hostile_net.sh tests/security/keys.sh \
	 tests/security/isolation.sh tests/security/setuid.sh
