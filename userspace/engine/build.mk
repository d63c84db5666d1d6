# The transport engine: a static library linked into the verbs library and
# the engine tests. Needs libisal (ICRC) and libxdp's ring helpers (AF_XDP).
ENGINE_SRCS := $(wildcard userspace/engine/*.c)
ENGINE_OBJS := $(ENGINE_SRCS:%.c=$(OBJ)/%.o)
ENGINE_LIB  := $(LIB)/librxdp-engine.a
ENGINE_LDLIBS := -lisal -lxdp -lbpf -lmnl -lpthread

$(ENGINE_LIB): $(ENGINE_OBJS)
	$(msg) AR $@
	@mkdir -p $(@D)
	$(Q)ar rcs $@ $^

LIBS += $(ENGINE_LIB)
