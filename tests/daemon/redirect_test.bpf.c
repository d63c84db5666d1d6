// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A minimal stand-in for rxdp's XDP program, for tests/daemon/integration.sh
 * only: the same maps, and every IPv4 UDP 4791 packet whose BTH names a QP
 * in qp_ctx redirected to xsks[owner_slot * RXDP_MAX_QUEUES + rx queue].
 * It checks that what rxdpd provisions (contexts, XSK slots, sockets on the
 * client's UMEM) delivers packets, independently of the real classifier.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "rxdp/params.h"
#include "rxdp/maps.h"
#include "bpf/maps.bpf.h"

#define ETH_P_IP 0x0800
#define ROCE_V2_PORT 4791

SEC("xdp")
int redirect_test(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	struct rxdp_qp_ctx *qc;
	__u8 *bth;
	__u32 qpn, idx;

	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > end || udp->dest != bpf_htons(ROCE_V2_PORT))
		return XDP_PASS;
	bth = (void *)(udp + 1);
	if ((void *)(bth + 12) > end)
		return XDP_PASS;
	qpn = ((__u32)bth[5] << 16) | ((__u32)bth[6] << 8) | bth[7];
	qc = bpf_map_lookup_elem(&qp_ctx, &qpn);
	if (!qc || qc->owner_slot >= RXDP_MAX_OWNERS)
		return XDP_PASS;
	idx = qc->owner_slot * RXDP_MAX_QUEUES + ctx->rx_queue_index;
	return bpf_redirect_map(&xsks, idx, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
