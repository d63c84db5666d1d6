# Code shared by rxdp's userspace programs and libraries: a static archive.
COMMON_SRCS := $(wildcard userspace/common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(OBJ)/%.o)
COMMON_LIB  := $(BUILD)/lib/librxdp-common.a

$(COMMON_LIB): $(COMMON_OBJS)
	$(msg) AR $@
	@mkdir -p $(@D)
	$(Q)ar rcs $@ $^

LIBS += $(COMMON_LIB)

# rdma-core's own libraries, loaded beside rxdp's where the kernel has RDMA
# devices (sysdl.c): their paths as the toolchain finds them, symlinks kept
rdma_core_lib = $(if $(findstring /,$(1)),$(abspath $(1)))
RDMA_CORE_VERBS := $(call rdma_core_lib,$(shell $(CC) -print-file-name=libibverbs.so.1))
RDMA_CORE_CM := $(call rdma_core_lib,$(shell $(CC) -print-file-name=librdmacm.so.1))
$(OBJ)/userspace/common/sysdl.o: CFLAGS += \
	-DRXDP_RDMA_CORE_VERBS='"$(RDMA_CORE_VERBS)"' -DRXDP_RDMA_CORE_CM='"$(RDMA_CORE_CM)"'

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
