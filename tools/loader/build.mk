# rxdp-loader: attach/detach/status of the XDP program (program embedded via
# the skeleton, so the binary runs from anywhere).
# userspace/common/build.mk is read after this file: name its archive here.
LOADER_OBJS := $(OBJ)/tools/loader/rxdp_loader.o $(OBJ)/tools/loader/features.o \
	       $(OBJ)/tools/loader/stale.o \
	       $(OBJ)/tools/loader/xsks.o

$(BIN)/rxdp-loader: $(LOADER_OBJS) $(LIB)/librxdp-common.a
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lxdp -lbpf -lelf -lz -lmnl

BINS += $(BIN)/rxdp-loader
