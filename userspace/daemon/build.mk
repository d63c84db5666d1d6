# rxdpd, the daemon: control plane and, around the engine, the data path.
# The pure parts (state machine, netlink decoding) are also linked into the
# unit tests in tests/daemon/. (The engine's archive is named literally: its
# build.mk is read after this one.)
DAEMON_SRCS := $(wildcard userspace/daemon/*.c)
DAEMON_OBJS := $(DAEMON_SRCS:%.c=$(OBJ)/%.o)
DAEMON_LIBS := -lisal -lxdp -lbpf -lmnl -lelf -lz -lpthread

$(BIN)/rxdpd: $(DAEMON_OBJS) $(LIB)/librxdp-engine.a $(LIB)/librxdp-common.a
	$(msg) LINK $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(DAEMON_LIBS)

BINS += $(BIN)/rxdpd
