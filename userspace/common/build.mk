# Code shared by rxdp's userspace programs and libraries: a static archive.
COMMON_SRCS := $(wildcard userspace/common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(OBJ)/%.o)
COMMON_LIB  := $(BUILD)/lib/librxdp-common.a

$(COMMON_LIB): $(COMMON_OBJS)
	$(msg) AR $@
	@mkdir -p $(@D)
	$(Q)ar rcs $@ $^

LIBS += $(COMMON_LIB)

# The version every tool's --version prints: VERSION, and the commit when
# built from a git tree. Rewritten only when it changes, so that only
# opts.o is rebuilt then.
RXDP_VERSION := $(shell cat VERSION)
RXDP_GIT := $(shell git describe --always --dirty --abbrev=12 2>/dev/null)

$(GEN)/rxdp_version.h: FORCE
	@mkdir -p $(@D)
	@printf '#define RXDP_VERSION "%s"\n#define RXDP_GIT "%s"\n' \
		'$(RXDP_VERSION)' '$(RXDP_GIT)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(OBJ)/userspace/common/opts.o: $(GEN)/rxdp_version.h

FORCE:
.PHONY: FORCE
