# The XDP program: build/gen/rxdp_xdp.bpf.o (with BTF) and its skeleton.
BPF_OBJ  := $(GEN)/rxdp_xdp.bpf.o
BPF_SKEL := $(GEN)/rxdp_xdp.skel.h
BUILD_DEPS += $(BPF_SKEL)
