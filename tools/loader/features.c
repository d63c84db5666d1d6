// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "features.h"

#define INSN(c, d, s, o, i)                 \
	((struct bpf_insn){ .code = (c),    \
			    .dst_reg = (d), \
			    .src_reg = (s), \
			    .off = (o),     \
			    .imm = (i) })

/*
 * The three atomic operations rxdp_xdp.bpf.c uses, on 32 bits of the stack:
 *	*(u32 *)(r10 - 8) = 0
 *	r1 = 1; r0 = 0
 *	r0 = atomic_cmpxchg((u32 *)(r10 - 8), r0, r1)
 *	r1 = atomic_fetch_or((u32 *)(r10 - 8), r1)
 *	lock *(u32 *)(r10 - 8) &= r1
 *	return XDP_PASS
 * A kernel before 5.12 refuses the first with EINVAL.
 */
static int probe_atomics(void)
{
	const struct bpf_insn prog[] = {
		INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -8, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_STX | BPF_ATOMIC | BPF_W, BPF_REG_10, BPF_REG_1, -8,
		     BPF_CMPXCHG),
		INSN(BPF_STX | BPF_ATOMIC | BPF_W, BPF_REG_10, BPF_REG_1, -8,
		     BPF_OR | BPF_FETCH),
		INSN(BPF_STX | BPF_ATOMIC | BPF_W, BPF_REG_10, BPF_REG_1, -8,
		     BPF_AND),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int fd;

	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "rxdp_probe", "Dual BSD/GPL",
			   prog, sizeof(prog) / sizeof(prog[0]), NULL);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == EPERM ? -EPERM : 0;
}

int rxdp_kernel_probe(struct rxdp_kernel_features *f)
{
	int ret;

	memset(f, 0, sizeof(*f));
	ret = probe_atomics();
	if (ret < 0)
		return ret;
	f->atomics = ret;
	ret = libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP,
				      BPF_FUNC_xdp_get_buff_len, NULL);
	if (ret == -EPERM)
		return ret;
	f->frags = ret > 0;
	return 0;
}
