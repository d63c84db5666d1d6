# The drop-in librdmacm.so.1: rdma-core 44's RDMA CM ABI (RDMACM_1.0 ... 1.3)
# on rxdpd's connection manager, and the rsocket API on top of it. Linked
# against build/lib/libibverbs.so.1 (the same name the system library has,
# so LD_LIBRARY_PATH=build/lib gives programs both of ours).
RDMACM_SRCS := $(wildcard userspace/rdmacm/*.c)
RDMACM_OBJS := $(RDMACM_SRCS:%.c=$(OBJ)/%.o)
RDMACM_MAP  := userspace/rdmacm/librdmacm.map
RDMACM_SO   := $(LIB)/librdmacm.so.1

$(RDMACM_SO): $(RDMACM_OBJS) $(COMMON_LIB) $(RDMACM_MAP) $(LIB)/libibverbs.so.1
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,librdmacm.so.1 \
		-Wl,--version-script=$(RDMACM_MAP) -Wl,-z,defs -Wl,-z,now \
		-o $@ $(RDMACM_OBJS) $(COMMON_LIB) -L$(LIB) -l:libibverbs.so.1 \
		-lmnl -lpthread

LIBS += $(RDMACM_SO)
