# The drop-in libibverbs.so.1: the rdma-core 44 verbs ABI, built against the
# system's <infiniband/verbs.h>. Only the symbols in libibverbs.map are
# exported (the common archive stays internal; the transport runs in
# rxdpd, not here). Linked with
# -z defs so a missing definition fails the build, not a program's start.
VERBS_SRCS := $(wildcard userspace/verbs/*.c)
VERBS_OBJS := $(VERBS_SRCS:%.c=$(OBJ)/%.o)
VERBS_MAP  := userspace/verbs/libibverbs.map
VERBS_SO   := $(LIB)/libibverbs.so.1
# What the verbs objects link with (also used by tests/verbs)
VERBS_LINK   := $(COMMON_LIB)
VERBS_LDLIBS := -lmnl -lpthread -ldl

$(VERBS_SO): $(VERBS_OBJS) $(VERBS_LINK) $(VERBS_MAP)
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=$(VERBS_MAP) -Wl,-z,defs -Wl,-z,now \
		-o $@ $(VERBS_OBJS) $(VERBS_LINK) $(VERBS_LDLIBS)

LIBS += $(VERBS_SO)
