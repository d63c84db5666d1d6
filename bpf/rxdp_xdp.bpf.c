// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp's XDP program: classify RoCEv2 packets like an HCA's receive logic
 * would, and steer the ones it accepts to the AF_XDP socket of the engine
 * that owns the destination QP. Everything that is not RoCEv2 goes to the
 * kernel untouched. No transport semantics that write memory: those belong
 * to the engine. Every packet is counted under exactly one verdict.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "rxdp/params.h"
#include "rxdp/maps.h"
#include "rxdp/roce.h"
#include "rxdp/opcodes.h"
#include "rxdp/psn.h"
#include "rxdp/rules.h"
#include "parse.h"
#include "maps.bpf.h"

#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

static __always_inline int verdict(__u32 v, int action)
{
	__u64 *cnt = bpf_map_lookup_elem(&stats, &v);

	if (cnt)
		*cnt += 1; /* per-CPU: no atomic needed */
	return action;
}

/* A verdict for a packet whose QP was found: also count it on the QP */
static __always_inline int qp_verdict(__u32 qpn, __u32 v, int action,
				      __u32 bytes)
{
	__u32 idx = qpn & RXDP_QP_INDEX_MASK;
	struct rxdp_qp_stats *qs = bpf_map_lookup_elem(&qp_stats, &idx);

	if (qs) {
		if (action == XDP_DROP) {
			qs->rx_drops++;
		} else {
			qs->rx_packets++;
			qs->rx_bytes += bytes;
		}
	}
	return verdict(v, action);
}

static __always_inline __u32 svc_flag(__u8 qp_type)
{
	switch (qp_type) {
	case RXDP_QPT_RC:
		return ROCE_OPF_SVC_RC;
	case RXDP_QPT_UC:
		return ROCE_OPF_SVC_UC;
	case RXDP_QPT_UD:
		return ROCE_OPF_SVC_UD;
	}
	return 0;
}

/*
 * RC/UC: the packet comes from the QP's peer to the QP's own address, and
 * from the peer's MAC where the path resolved one (qp_ctx, written at RTR;
 * Soft-RoCE's check_addr()). A QP before RTR has no peer: nothing matches.
 */
static __always_inline int source_ok(void *data, void *data_end,
				     const struct parsed *p,
				     const struct rxdp_qp_ctx *qc)
{
	struct ethhdr *eth = data;
	int path_v6 = !!(qc->flags & RXDP_QPF_PEER_IPV6);

	if ((void *)(eth + 1) > data_end || p->l3_off > 18)
		return 0;
	if ((qc->flags & RXDP_QPF_PEER_MAC) &&
	    !rxdp_source_mac_ok(eth->h_source, qc->peer_mac))
		return 0;
	if (p->ipv6) {
		struct ipv6hdr *ip6 = data + p->l3_off;

		if ((void *)(ip6 + 1) > data_end)
			return 0;
		return rxdp_source_ip_ok(1, path_v6, (__u8 *)&ip6->saddr,
					 (__u8 *)&ip6->daddr, qc->peer_ip,
					 qc->local_ip);
	}
	{
		struct iphdr *ip = data + p->l3_off;

		if ((void *)(ip + 1) > data_end)
			return 0;
		return rxdp_source_ip_ok(0, path_v6, (__u8 *)&ip->saddr,
					 (__u8 *)&ip->daddr, qc->peer_ip,
					 qc->local_ip);
	}
}

/*
 * Multicast (IBTA 10.5.2.4): a datagram to QPN 0xFFFFFF is for every QP of
 * the host attached to the group its destination address names. Only UD
 * sends may be multicast, and only groups with members here are taken (the
 * engine keeps the mcast map): a flood to other groups ends here, counted.
 * Which members get it, within their Q_Keys and P_Keys, is the engine's
 * work (it has the list); the frame goes to rxdpd's sockets.
 */
static __always_inline int mcast_classify(struct xdp_md *ctx, void *data,
					  void *data_end,
					  const struct parsed *p,
					  struct roce_bth *bth, __u32 opf)
{
	struct rxdp_mcast_key key = {};
	__u32 idx;

	if (!(opf & ROCE_OPF_SVC_UD))
		return verdict(RXDP_V_DROP_OPCODE_QP_TYPE, XDP_DROP);
	/* every QP has the default P_Key (a table of one entry) */
	if (!roce_pkey_match(bth_pkey(bth), ROCE_DEFAULT_PKEY))
		return verdict(RXDP_V_DROP_BAD_PKEY, XDP_DROP);
	if (p->l3_off > 18)
		return verdict(RXDP_V_DROP_TRUNCATED, XDP_DROP);
	if (p->ipv6) {
		struct ipv6hdr *ip6 = data + p->l3_off;

		if ((void *)(ip6 + 1) > data_end)
			return verdict(RXDP_V_DROP_TRUNCATED, XDP_DROP);
		__builtin_memcpy(key.gid, &ip6->daddr, 16);
		/* ff00::/8 (an IPv4-mapped address is no IPv6 group) */
		if (key.gid[0] != 0xff)
			return verdict(RXDP_V_DROP_MCAST_NO_GROUP, XDP_DROP);
	} else {
		struct iphdr *ip = data + p->l3_off;

		if ((void *)(ip + 1) > data_end)
			return verdict(RXDP_V_DROP_TRUNCATED, XDP_DROP);
		key.gid[10] = 0xff;
		key.gid[11] = 0xff;
		__builtin_memcpy(&key.gid[12], &ip->daddr, 4);
		if ((key.gid[12] & 0xf0) != 0xe0) /* 224.0.0.0/4 */
			return verdict(RXDP_V_DROP_MCAST_NO_GROUP, XDP_DROP);
	}
	if (!bpf_map_lookup_elem(&mcast, &key))
		return verdict(RXDP_V_DROP_MCAST_NO_GROUP, XDP_DROP);
	if (ctx->rx_queue_index >= RXDP_MAX_QUEUES)
		return verdict(RXDP_V_DROP_NO_XSK, XDP_DROP);
	/* owner slot 0: rxdpd's own sockets receive every QP's */
	idx = ctx->rx_queue_index;
	if (bpf_redirect_map(&xsks, idx, XDP_DROP) != XDP_REDIRECT)
		return verdict(RXDP_V_DROP_NO_XSK, XDP_DROP);
	return verdict(RXDP_V_REDIRECT, XDP_REDIRECT);
}

/*
 * PSNs an RC request takes: one, or for an RDMA Read request one per
 * response packet it asks for (IBTA 9.7.1.1).
 */
static __always_inline __u32 req_npkts(struct roce_bth *bth, void *data_end,
				       __u8 opcode, __u8 path_mtu)
{
	struct roce_reth *reth = (void *)(bth + 1);

	if (opcode != ROCE_RC_READ_REQUEST)
		return 1;
	if ((void *)(reth + 1) > data_end)
		return 1;
	return rxdp_read_npkts(reth_len(reth), rxdp_mtu_shift(path_mtu));
}

/*
 * RC PSN check (IBTA 9.7.4 responder, 9.7.5 requester). Returns the verdict
 * to drop with, or RXDP_V_REDIRECT to accept.
 *
 * Requests: epsn here is the program's own expected PSN, which it advances
 * as in-order requests pass (the engine sees them only later, so its view
 * always lags the wire; it seeds epsn at RTR and never writes it after).
 * Expected and duplicate PSNs pass (the engine re-acknowledges duplicates,
 * re-executes reads, replays atomics, and takes a retransmission the program
 * counted as a duplicate because the engine refused it the first time, e.g.
 * with an RNR NAK or a bad ICRC). Of the requests ahead of epsn only the
 * first passes, so the engine sends one sequence NAK (9.7.5.1.3); the
 * expected PSN arriving again clears the flag. Where the engine holds what
 * comes past a gap (RXDP_PSNF_HOLD), every request within RXDP_HOLD_WINDOW
 * passes; the engine then moves epsn on itself, past what it held, and
 * NAKs once per gap all the same. Responses must fall inside
 * the requester's outstanding window [una_psn, next_psn), which the engine
 * publishes before it transmits.
 */
static __always_inline __u32 rc_psn_check(struct rxdp_qp_psn *ps, __u32 opf,
					  __u32 psn, __u32 npkts)
{
	if (opf & ROCE_OPF_REQUEST) {
		__u32 epsn = READ_ONCE(ps->epsn);
		__s32 d = psn_diff(psn, epsn);

		if (d < 0)
			return RXDP_V_REDIRECT;
		if (d == 0) {
			/* another CPU may have moved it already: then it won */
			__sync_val_compare_and_swap(&ps->epsn, epsn,
						    psn_add(psn, npkts));
			if (READ_ONCE(ps->flags) & RXDP_PSNF_NAK_SENT)
				__sync_fetch_and_and(&ps->flags,
						     ~RXDP_PSNF_NAK_SENT);
			return RXDP_V_REDIRECT;
		}
		if ((READ_ONCE(ps->flags) & RXDP_PSNF_HOLD) &&
		    d < RXDP_HOLD_WINDOW)
			return RXDP_V_REDIRECT;
		if (__sync_fetch_and_or(&ps->flags, RXDP_PSNF_NAK_SENT) &
		    RXDP_PSNF_NAK_SENT)
			return RXDP_V_DROP_PSN_OOS;
		return RXDP_V_REDIRECT;
	}
	if (opf & ROCE_OPF_RESPONSE) {
		__u32 una = READ_ONCE(ps->una_psn);
		__u32 next = READ_ONCE(ps->next_psn);

		if (!rxdp_resp_psn_ok(psn, una, next))
			return RXDP_V_DROP_PSN_STALE_RESP;
	}
	return RXDP_V_REDIRECT;
}

/*
 * The classifier, for a frame of frame_len bytes whose headers are in
 * [ctx->data, ctx->data_end): all of it, or its first fragment.
 */
static __always_inline int rxdp_classify(struct xdp_md *ctx, __u32 frame_len)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct parsed p = {};
	struct roce_bth *bth;
	struct rxdp_qp_ctx *qc;
	__u32 opf, qpn, hdrs, len, idx, v;
	__u8 opcode;

	switch (parse_to_udp(data, data_end, frame_len, &p)) {
	case PARSE_ROCE:
		break;
	case PARSE_TRUNCATED:
		return verdict(RXDP_V_DROP_TRUNCATED, XDP_DROP);
	case PARSE_FRAGMENT:
		return verdict(RXDP_V_DROP_IP_FRAGMENT, XDP_DROP);
	case PARSE_BAD_UDP:
		return verdict(RXDP_V_DROP_BAD_UDP, XDP_DROP);
	default:
		return verdict(RXDP_V_PASS_NOT_ROCE, XDP_PASS);
	}

	/* the RoCE part: from the BTH to the end of the UDP datagram */
	if (p.l4_off > 128)
		return verdict(RXDP_V_DROP_TRUNCATED, XDP_DROP);
	bth = data + p.l4_off + sizeof(struct udphdr);
	if ((void *)(bth + 1) > data_end)
		return verdict(RXDP_V_DROP_TRUNCATED, XDP_DROP);
	len = p.ip_end - p.l4_off - sizeof(struct udphdr);

	if (bth_tver(bth) != 0)
		return verdict(RXDP_V_DROP_BAD_TVER, XDP_DROP);
	opcode = bth_opcode(bth);
	opf = roce_opcode_flags(opcode);
	if (!opf)
		return verdict(RXDP_V_DROP_BAD_OPCODE, XDP_DROP);

	/* BTH + extension headers + pad + ICRC must fit; no payload where
	 * the opcode carries none (IBTA 9.2.2, 9.3). */
	hdrs = sizeof(*bth) + roce_ext_hdr_len(opf) + ROCE_ICRC_LEN;
	if (len < hdrs + bth_pad(bth))
		return verdict(RXDP_V_DROP_TRUNCATED, XDP_DROP);
	if (!(opf & ROCE_OPF_PAYLOAD) && len != hdrs)
		return verdict(RXDP_V_DROP_TRUNCATED, XDP_DROP);

	qpn = bth_qpn(bth);
	if (qpn == RXDP_MCAST_QPN)
		return mcast_classify(ctx, data, data_end, &p, bth, opf);
	qc = bpf_map_lookup_elem(&qp_ctx, &qpn);
	if (!qc)
		return verdict(RXDP_V_DROP_UNKNOWN_QP, XDP_DROP);

	if (!(opf & svc_flag(qc->qp_type)))
		return qp_verdict(qpn, RXDP_V_DROP_OPCODE_QP_TYPE, XDP_DROP, 0);

	/* IBTA 10.3.1: RESET and INIT take no packets; ERR drops them too */
	if (!rxdp_state_takes_packets(qc->state))
		return qp_verdict(qpn, RXDP_V_DROP_QP_STATE, XDP_DROP, 0);

	/* before anything reads or moves the QP's PSN state */
	if (qc->qp_type != RXDP_QPT_UD && !source_ok(data, data_end, &p, qc))
		return qp_verdict(qpn, RXDP_V_DROP_BAD_SOURCE, XDP_DROP, 0);

	if (!roce_pkey_match(bth_pkey(bth), qc->pkey))
		return qp_verdict(qpn, RXDP_V_DROP_BAD_PKEY, XDP_DROP, 0);

	if (opf & ROCE_OPF_DETH) {
		/* the DETH comes first after the BTH (IBTA 9.3) */
		struct roce_deth *deth = (void *)(bth + 1);

		if ((void *)(deth + 1) > data_end)
			return qp_verdict(qpn, RXDP_V_DROP_TRUNCATED, XDP_DROP,
					  0);
		if (!rxdp_qkey_ok(deth_qkey(deth), qc->qkey))
			return qp_verdict(qpn, RXDP_V_DROP_BAD_QKEY, XDP_DROP,
					  0);
	}

	if (qc->qp_type == RXDP_QPT_RC && !(opf & ROCE_OPF_CNP)) {
		__u32 pidx = qpn & RXDP_QP_INDEX_MASK;
		struct rxdp_qp_psn *ps = bpf_map_lookup_elem(&qp_psn, &pidx);
		__u32 cpu;

		if (!ps || READ_ONCE(ps->qpn) != qpn)
			return verdict(RXDP_V_DROP_UNKNOWN_QP, XDP_DROP);
		v = rc_psn_check(ps, opf, bth_psn(bth),
				 req_npkts(bth, data_end, opcode,
					   qc->path_mtu));
		if (v != RXDP_V_REDIRECT)
			return qp_verdict(qpn, v, XDP_DROP, 0);
		/* written only when it changes: the line stays where it is */
		cpu = bpf_get_smp_processor_id() + 1;
		if (READ_ONCE(ps->rx_cpu) != cpu)
			WRITE_ONCE(ps->rx_cpu, cpu);
	}

	if (qc->owner_slot >= RXDP_MAX_OWNERS ||
	    ctx->rx_queue_index >= RXDP_MAX_QUEUES)
		return qp_verdict(qpn, RXDP_V_DROP_NO_XSK, XDP_DROP, 0);
	/*
	 * To the socket of the QP's engine on this queue; where its engine
	 * has none here (an engine beyond one per queue serves only some),
	 * to the queue's first, whose engine hands the packet over
	 */
	idx = qc->owner_slot * RXDP_MAX_QUEUES + ctx->rx_queue_index;
	if (bpf_redirect_map(&xsks, idx, XDP_PASS) != XDP_REDIRECT &&
	    bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_DROP) !=
		    XDP_REDIRECT)
		return qp_verdict(qpn, RXDP_V_DROP_NO_XSK, XDP_DROP, 0);
	return qp_verdict(qpn, RXDP_V_REDIRECT, XDP_REDIRECT, frame_len);
}

/*
 * xdp.frags: a frame larger than a page (a 4096-byte path MTU on a jumbo
 * interface) arrives in fragments; the headers are in the first one, which
 * is all the program reads, and the lengths it checks are the whole frame's.
 * Multi-buffer XDP and bpf_xdp_get_buff_len() came with Linux 5.18.
 */
SEC("xdp.frags")
int rxdp_xdp(struct xdp_md *ctx)
{
	return rxdp_classify(ctx, bpf_xdp_get_buff_len(ctx));
}

/*
 * The same classifier for kernels without multi-buffer XDP (before 5.18:
 * Ubuntu 22.04's 5.15, RHEL 9's 5.14): every frame is one buffer, so its
 * length is data_end - data. rxdp-loader loads this one where the kernel
 * lacks bpf_xdp_get_buff_len(); rxdpd's ports then offer 2048 bytes at most
 * (no frame there is larger than a page).
 */
SEC("xdp")
int rxdp_xdp_linear(struct xdp_md *ctx)
{
	return rxdp_classify(ctx, (__u32)(ctx->data_end - ctx->data));
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
