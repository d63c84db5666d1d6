// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A lossy wire for the fault test: drops about 3% of the RoCEv2 frames that
 * cross a bridge port (this kernel has neither netem nor tc actions, and
 * AF_XDP transmits around the hosts' own qdiscs anyway). RC ACKs (opcode
 * 0x11) are spared: ibv_rc_pingpong, which runs through it, has no closing
 * handshake, and a lost ACK of its last exchange makes the other side retry
 * into a QP that is gone (badwire.sh loses ACKs, with rc_ops and perftest).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

SEC("xdp")
int lossy(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);

	__u8 *opcode = (void *)(udp + 1);

	if ((void *)(opcode + 1) > end || eth->h_proto != bpf_htons(0x0800) ||
	    ip->protocol != 17 || ip->ihl != 5 ||
	    udp->dest != bpf_htons(4791) || *opcode == 0x11)
		return XDP_PASS;
	return bpf_get_prandom_u32() % 100 < 3 ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
