// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp-xskraw's XDP program: IPv4/UDP frames to one port go to the AF_XDP
 * socket of the receiving queue, everything else to the kernel. No RoCE, no
 * validation: the raw limit the benchmark compares rxdp with. xdp.frags,
 * so it attaches to a jumbo-frame veth and its large frames reach a
 * multi-buffer socket.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ETH_P_IP 0x0800
#define IPPROTO_UDP 17

const volatile __u16 udp_port = 4792;

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

SEC("xdp.frags")
int xskraw(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp;

	if ((void *)(ip + 1) > data_end ||
	    eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > data_end || udp->dest != bpf_htons(udp_port))
		return XDP_PASS;
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
