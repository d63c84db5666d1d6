# Code shared by rxdp's userspace programs and libraries: a static archive.
COMMON_SRCS := $(wildcard userspace/common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(OBJ)/%.o)
COMMON_LIB  := $(BUILD)/lib/librxdp-common.a

$(COMMON_LIB): $(COMMON_OBJS)
	$(msg) AR $@
	@mkdir -p $(@D)
	$(Q)ar rcs $@ $^

LIBS += $(COMMON_LIB)
