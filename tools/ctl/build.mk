# rxdp-ctl: a readable view of rxdpd's devices, GIDs, QPs and counters.
# userspace/common/build.mk is read after this file: name its archive here.
$(BIN)/rxdp-ctl: $(OBJ)/tools/ctl/rxdp_ctl.o $(LIB)/librxdp-common.a
	$(msg) LINK $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lmnl

BINS += $(BIN)/rxdp-ctl
