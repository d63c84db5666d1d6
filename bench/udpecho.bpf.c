// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The incast bench's ping-pong echo, in the receiver's kernel: a tc
 * ingress program (attached with tc's own loader) that sends every IPv4
 * UDP datagram to UDPECHO_PORT back where it came from, out of the
 * interface it came in on: MACs, addresses and ports swapped, which
 * changes no checksum (each sums the same words). The echo waits for no
 * process to be scheduled: on the 2-core VM, beside 17 rxdpds, a Python
 * echo's wake-ups were most of the ping-pong's p99, which is meant to show
 * the switch port's queue.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define UDPECHO_PORT 9400 /* bench/run.sh's INCAST_ECHO */
#define ETH_P_IP 0x0800
#define ETH_ALEN 6
#define TC_ACT_OK 0

SEC("tc")
int udpecho(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	unsigned char mac[ETH_ALEN];
	__be32 addr;
	__be16 port;

	if ((void *)(udp + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
	    udp->dest != bpf_htons(UDPECHO_PORT))
		return TC_ACT_OK;
	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
	addr = ip->daddr;
	ip->daddr = ip->saddr;
	ip->saddr = addr;
	port = udp->dest;
	udp->dest = udp->source;
	udp->source = port;
	return bpf_redirect(skb->ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
