// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A lossy wire for the fault test: drops about 3% of the RoCEv2 frames that
 * cross a bridge port (this kernel has neither netem nor tc actions, and
 * AF_XDP transmits around the hosts' own qdiscs anyway). RC ACKs (opcode
 * 0x11) are spared: ibv_rc_pingpong, which runs through it, has no closing
 * handshake, and a lost ACK of its last exchange makes the other side retry
 * into a QP that is gone (badwire.sh loses ACKs, with rc_ops and perftest).
 * lossy_counts counts what it did (bpftool map dump name lossy_counts):
 * key 0 the RoCEv2 frames it dropped, key 1 those it passed.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} lossy_counts SEC(".maps");

SEC("xdp")
int lossy(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	__u8 *opcode = (void *)(udp + 1);
	__u32 k;
	__u64 *n;

	if ((void *)(opcode + 1) > end || eth->h_proto != bpf_htons(0x0800) ||
	    ip->protocol != 17 || ip->ihl != 5 ||
	    udp->dest != bpf_htons(4791) || *opcode == 0x11)
		return XDP_PASS;
	k = bpf_get_prandom_u32() % 100 < 3 ? 0 : 1;
	n = bpf_map_lookup_elem(&lossy_counts, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	return k ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
