# End to end through verbs programs on rxdp between network namespaces:
# needs root, skips (77) otherwise.
#  perftest.sh  unmodified Debian perftest and ibverbs-utils
#  faults.sh    a lossy bridge (XDP drops), and a capture tshark decodes
#  rc_ops.sh    rc_ops (our own verbs program, built against the system's
#               <infiniband/verbs.h> and libibverbs, run on build/lib's):
#               every RC operation and size, gather/scatter, immediate data,
#               atomicity, and the error completions
#  badwire.sh   the hosts joined through badwire (a forwarder that drops,
#               duplicates and reorders RoCEv2 frames: no netem here):
#               a clean run captured and decoded by tshark, then rc_ops,
#               checked streams and the stock tools through loss,
#               duplication, reordering
#  jumbo.sh     a 4096-byte path MTU on MTU-9000 veths (multi-buffer AF_XDP)
#  hca.sh       rxdpd as the HCA of whole hosts: 8 processes per host,
#               loopback, an unprivileged user, per-user limits, kill -9
#               (qp_hog: a verbs program creating QPs until refused)
#  counters.sh  the transport's counters (rxdp-ctl, --json): per device and
#               per QP, who may read a QP's, link_downed
#  classes.sh   service classes (rxdpd --tc): every interface's and one's
#               own, a ping-pong's SL in the strict class and a stream's
#               in a weighted one, each class's counters
#  ucx.sh       UCX: ucx_info -d, ucx_perftest over rc_verbs and ud_verbs
#  mpi.sh       Open MPI (UCX PML): a ping-pong and allreduces, one rank
#               per host (mpi_pingpong, built with mpicc)
#  memrules.sh  registered memory shared with rxdpd (memrules): writers
#               during registration, fork, DONTNEED, munmap, giving it
#               back, the batched path of shared file mappings
#  pairs.sh     8 ib_write_bw -D pairs and 8 checked streams (wirecheck)
#               at once over a 4-queue veth, all finishing, then again
#               beside a CPU hog on every CPU
#  poll.sh      rxdpd --poll: data-path threads that never sleep
#  txthread.sh  rxdpd --tx-thread: each engine's sendto() calls in a
#               thread of their own, traffic through two engines a side
#  engines.sh   --engines 2 on 2-queue veths: contexts spread over engines,
#               pairs whose packets arrive on the other engine's queue
#  users.sh     --engines 2: two users' contexts on different engines, a
#               user's own together beside another's, one alone spread
#  loopengines.sh  checked RC and UD streams looped back on one device
#               across its two engines, the handing engine running the
#               other's passes
#  qengines.sh  --engines-per-queue 2 on 1-queue veths: two engines'
#               sockets share the queue, each QP's packets steered to its
#               engine's socket, checked streams, none handed over
#  queues.sh    ethtool -L under a running data path: a new engine and new
#               sockets for the queues the interface gains, traffic on all
#  restart.sh   rxdpd stopped and restarted under running programs: they
#               fail at once, their WQEs flushed and IBV_EVENT_DEVICE_FATAL
#               (fatal.c), and a new rxdpd serves
#  odp.sh       on-demand paging (odp): capabilities, untouched memory past
#               RLIMIT_MEMLOCK, holes, implicit ODP, UC and UD, rereg,
#               ibv_advise_mr
#  incast.sh    three hosts into one through a switch port whose queue
#               overflows (netns_switch, a TBF), every byte checked
#  stall.sh     a receiving rxdpd stopped for 0.8 s under a UD stream: what
#               came meanwhile waits in its rings, none overrun
#  takeover.sh  rxdpd --takeover under running programs (checked streams,
#               ib_write_bw, UCX, rping), sixteen times, nothing lost; the
#               refusals (multicast, not root, another version, an impostor)
RC_LOSSY := $(GEN)/lossy.bpf.o
RC_OPS := $(BUILD)/tests/rc/rc_ops
RC_BADWIRE := $(BUILD)/tests/rc/badwire
RC_QP_HOG := $(BUILD)/tests/rc/qp_hog
RC_MPI := $(BUILD)/tests/rc/mpi_pingpong
RC_MEMRULES := $(BUILD)/tests/rc/memrules
RC_FATAL := $(BUILD)/tests/rc/fatal
RC_ODP := $(BUILD)/tests/rc/odp
RC_TWOCTX := $(BUILD)/tests/rc/twoctx

$(RC_LOSSY): tests/rc/lossy.bpf.c vmlinux.h
	$(msg) CLANG $<
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(RC_OPS): $(OBJ)/tests/rc/rc_ops.o $(OBJ)/tests/rc/rc_ops_mw.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -libverbs -lpthread

$(RC_MEMRULES): $(OBJ)/tests/rc/memrules.o $(OBJ)/tests/lib/vtest.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -libverbs -lpthread

$(RC_ODP): $(OBJ)/tests/rc/odp.o $(OBJ)/tests/lib/vtest.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -libverbs

$(RC_QP_HOG): $(OBJ)/tests/rc/qp_hog.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -libverbs

$(RC_FATAL): $(OBJ)/tests/rc/fatal.o $(OBJ)/tests/lib/vtest.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -libverbs

$(RC_TWOCTX): $(OBJ)/tests/rc/twoctx.o $(OBJ)/tests/lib/vtest.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -libverbs

# Open MPI's compiler wrapper (libopenmpi-dev)
$(RC_MPI): tests/rc/mpi_pingpong.c
	$(msg) MPICC $@
	@mkdir -p $(@D)
	$(Q)mpicc -O2 -Wall -Wextra -Werror -o $@ $<

$(RC_BADWIRE): $(OBJ)/tests/rc/badwire.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $<

# the scripts run the programs: build them first (a rule like
# `rc_ops.sh: $(RC_OPS)` would not: under .SECONDARY a missing prerequisite
# of an up-to-date file is not remade)
TEST_BINS += $(RC_OPS) $(RC_BADWIRE) $(RC_QP_HOG) $(RC_MPI) $(RC_MEMRULES) \
	     $(RC_FATAL) $(RC_ODP) $(RC_TWOCTX)

BUILD_DEPS += $(RC_LOSSY)
TESTS += tests/rc/perftest.sh tests/rc/faults.sh tests/rc/rc_ops.sh \
	 tests/rc/badwire.sh tests/rc/jumbo.sh tests/rc/hca.sh tests/rc/small.sh \
	 tests/rc/counters.sh tests/rc/ucx.sh tests/rc/mpi.sh tests/rc/memrules.sh \
	 tests/rc/pairs.sh tests/rc/poll.sh tests/rc/restart.sh tests/rc/odp.sh \
	 tests/rc/engines.sh tests/rc/queues.sh tests/rc/xskmode.sh \
	 tests/rc/txthread.sh tests/rc/incast.sh tests/rc/classes.sh \
	 tests/rc/stall.sh tests/rc/users.sh tests/rc/loopengines.sh \
	 tests/rc/qengines.sh tests/rc/takeover.sh \
	 tests/rc/fdstore.sh
