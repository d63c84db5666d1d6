// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp-lossyhop's XDP programs. hop: on both ports of a forwarding hop,
 * every frame that arrives on one port leaves on the other (a devmap
 * redirect, so the hop itself costs little), and IPv4/IPv6 frames are
 * dropped at random, loss_ppm in a million, whatever they carry (RoCE
 * requests and ACKs, TCP segments and ACKs alike). pass: for the far end
 * of a veth that receives redirected frames (a veth takes them only while
 * an XDP program is attached to it).
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD

const volatile __u32 loss_ppm = 0;
const volatile __u32 port0_ifindex = 0;

/* 0: port 0, 1: port 1 */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} ports SEC(".maps");

enum {
	HOP_FORWARDED,
	HOP_DROPPED,
	HOP_NSTATS
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HOP_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &what);

	if (v)
		(*v)++;
}

SEC("xdp")
int hop(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 out = ctx->ingress_ifindex == port0_ifindex ? 1 : 0;

	if ((void *)(eth + 1) <= data_end &&
	    (eth->h_proto == bpf_htons(ETH_P_IP) ||
	     eth->h_proto == bpf_htons(ETH_P_IPV6)) &&
	    bpf_get_prandom_u32() % 1000000 < loss_ppm) {
		count(HOP_DROPPED);
		return XDP_DROP;
	}
	count(HOP_FORWARDED);
	return bpf_redirect_map(&ports, out, XDP_DROP);
}

SEC("xdp")
int pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
