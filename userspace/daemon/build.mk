# rxdpd, the control daemon. The pure parts (state machine, netlink
# decoding) are also linked into the unit tests in tests/daemon/.
DAEMON_SRCS := $(wildcard userspace/daemon/*.c)
DAEMON_OBJS := $(DAEMON_SRCS:%.c=$(OBJ)/%.o)
DAEMON_LIBS := -lbpf -lmnl -lelf -lz

$(BIN)/rxdpd: $(DAEMON_OBJS) $(LIB)/librxdp-common.a
	$(msg) LINK $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(DAEMON_LIBS)

BINS += $(BIN)/rxdpd
