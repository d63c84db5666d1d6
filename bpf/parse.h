/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Header parsing for the XDP program: Ethernet (+ one 802.1Q tag), IPv4
 * (no options), IPv6, UDP. Each step checks bounds against data_end before
 * reading. What it calls RoCE is what the engine's pkt_parse() does (a test
 * feeds both the same frames, tests/bpf/test_xdp.c): RoCEv2 senders put no
 * options in the IPv4 header (its ICRC covers a 20-byte one) and no 802.1ad
 * S-tag, so such frames go to the kernel like any other traffic.
 */
#ifndef RXDP_BPF_PARSE_H
#define RXDP_BPF_PARSE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define ETH_P_IP_BE bpf_htons(0x0800)
#define ETH_P_IPV6_BE bpf_htons(0x86DD)
#define ETH_P_8021Q_BE bpf_htons(0x8100)
#define ROCE_PORT_BE bpf_htons(4791)
#define IP_MF_OFFSET_BE bpf_htons(0x3fff) /* MF flag | fragment offset */
#define IPPROTO_UDP_ 17

/* What parse_to_udp() found; offsets are from the start of the frame */
struct parsed {
	__u32 l3_off; /* IP header */
	__u32 l4_off; /* UDP header */
	__u32 ip_end; /* end of the IP datagram per the IP header */
	__u32 ipv6;
};

enum parse_result {
	PARSE_NOT_ROCE = 0,
	PARSE_ROCE,
	PARSE_TRUNCATED,
	PARSE_FRAGMENT,
	PARSE_BAD_UDP,
};

/*
 * Walk to a UDP header addressed to port 4791. Anything that is not that is
 * PARSE_NOT_ROCE and goes to the kernel untouched.
 */
static __always_inline enum parse_result
parse_to_udp(void *data, void *data_end, __u32 frame_len, struct parsed *p)
{
	struct ethhdr *eth = data;
	__u32 off = sizeof(*eth);
	__u16 proto;
	struct udphdr *udp;

	if ((void *)(eth + 1) > data_end)
		return PARSE_NOT_ROCE;
	proto = eth->h_proto;
	if (proto == ETH_P_8021Q_BE) {
		struct vlan_hdr *vh = data + off;

		if ((void *)(vh + 1) > data_end)
			return PARSE_NOT_ROCE;
		proto = vh->h_vlan_encapsulated_proto;
		off += sizeof(*vh);
	}
	p->l3_off = off;

	if (proto == ETH_P_IP_BE) {
		struct iphdr *ip = data + off;
		__u32 ihl;

		if ((void *)(ip + 1) > data_end)
			return PARSE_NOT_ROCE;
		if (ip->version != 4 || ip->protocol != IPPROTO_UDP_)
			return PARSE_NOT_ROCE;
		ihl = ip->ihl * 4;
		if (ihl != sizeof(*ip))
			return PARSE_NOT_ROCE;
		if (ip->frag_off & IP_MF_OFFSET_BE) {
			/* only the first fragment shows the port; count all
			 * fragments that could be RoCE as such: RoCEv2 sets DF
			 * and never fragments (A17.4.5.2) */
			if (ip->frag_off & bpf_htons(0x1fff))
				return PARSE_NOT_ROCE;
			udp = data + off + ihl;
			if ((void *)(udp + 1) > data_end)
				return PARSE_NOT_ROCE;
			return udp->dest == ROCE_PORT_BE ? PARSE_FRAGMENT
							 : PARSE_NOT_ROCE;
		}
		p->ip_end = off + bpf_ntohs(ip->tot_len);
		off += ihl;
	} else if (proto == ETH_P_IPV6_BE) {
		struct ipv6hdr *ip6 = data + off;

		if ((void *)(ip6 + 1) > data_end)
			return PARSE_NOT_ROCE;
		if (ip6->version != 6 || ip6->nexthdr != IPPROTO_UDP_)
			return PARSE_NOT_ROCE;
		p->ipv6 = 1;
		off += sizeof(*ip6);
		p->ip_end = off + bpf_ntohs(ip6->payload_len);
	} else {
		return PARSE_NOT_ROCE;
	}

	udp = data + off;
	if ((void *)(udp + 1) > data_end)
		return PARSE_NOT_ROCE;
	if (udp->dest != ROCE_PORT_BE)
		return PARSE_NOT_ROCE;
	/*
	 * The UDP length must cover the UDP header and end where the IP
	 * datagram ends, and inside the frame (Ethernet padding may follow).
	 */
	{
		__u32 ulen = bpf_ntohs(udp->len);

		if (ulen < sizeof(*udp) || off + ulen != p->ip_end)
			return PARSE_BAD_UDP;
		if (p->ip_end > frame_len)
			return PARSE_TRUNCATED;
	}
	p->l4_off = off;
	return PARSE_ROCE;
}

#endif /* RXDP_BPF_PARSE_H */
