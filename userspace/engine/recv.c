// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The dispatch of received packets (the transport's entry for what
 * arrives): each to its QP (multicast datagrams to every member), then to
 * the responder (requests) or the completer (responses); and what the
 * owners' memory threads finished, handed to the transport by the pass.
 * Engine lock held.
 *
 * UC (IBTA 9.8) shares the RC code: Send and RDMA Write only, no ACKs and
 * no retransmission (a WQE completes once its last packet is sent), and a
 * responder that silently drops a message with a PSN gap or an error and
 * picks up again at the next FIRST/ONLY packet.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

static void recv_mcast(struct rxdp_engine *e, struct pkt_info *pi);

/*
 * RC/UC: only the connected peer may send to a QP: from the path's
 * destination address to its source address, and from the MAC the path
 * resolved to, where it resolved a unicast one (Soft-RoCE's check_addr();
 * the XDP program checks the same first, against qp_ctx). A frame looped
 * back inside the port (a QP talking to a GID of its own device) comes from
 * our own MAC and address, which is then what the path says.
 */
static bool recv_source_ok(const struct rxdp_eqp *qp, const struct pkt_info *pi)
{
	const struct rxdp_path *rp = &qp->rpath;
	uint32_t off = pi->ipv6 ? 0 : 12;

	return rxdp_source_ip_ok(pi->ipv6, rp->ipv6, pi->sip + off,
				 pi->dip + off, rp->dip, rp->sip) &&
	       (!rxdp_peer_mac_checked(rp->dmac) ||
		rxdp_source_mac_ok(pi->smac, rp->dmac));
}

/*
 * The notification point (RoCEv2 A17.9): a CE-marked packet for an RC/UC
 * QP sends a CNP to the peer's QP (BECN set, 16 reserved bytes), at most
 * one per np_min_time_between_cnps, with np_cnp_dscp (not ECN-capable, as
 * ConnectX sends them) and np_cnp_prio on a VLAN. An ECN-capable packet
 * that arrives while the receive path is nearly full (e->rx_crowded) counts
 * as marked: the receiver is a congestion point as a switch's port is.
 */
static void recv_ce(struct rxdp_eqp *qp)
{
	struct rxdp_engine *e = qp->e;
	struct pkt_desc d = { .opcode = ROCE_CNP,
			      .becn = 1,
			      .dqpn = qp->dest_qpn };
	struct pkt_path pp = qp->path;

	if (!eng_cc_np_due(&qp->cc_cnp_next, &e->cc, e->now))
		return;
	pp.traffic_class = (uint8_t)(e->cc.np_cnp_dscp << 2);
	if (pp.l2_len == PKT_ETH_LEN + PKT_VLAN_LEN)
		pp.l2[14] = (uint8_t)((pp.l2[14] & 0x1f) |
				      (e->cc.np_cnp_prio & 7) << 5);
	if (send_pkt_path(qp, &d, &pp))
		return;
	eng_hwc(qp, RXDP_HWC_NP_CNP_SENT);
	e->tx_urgent = true; /* not held back for a flush */
}

/*
 * The reaction point: a CNP from the QP's peer cuts its rate (cc.c), if
 * DCQCN moves it (the delay algorithm and off ignore CNPs)
 */
static void recv_cnp(struct rxdp_eqp *qp)
{
	struct rxdp_engine *e = qp->e;

	if (qp->type == IBV_QPT_UD || qp->cc.algo != ENG_CC_DCQCN) {
		eng_hwc(qp, RXDP_HWC_RP_CNP_IGNORED);
		return;
	}
	if (eng_cc_rp_cnp(&qp->cc, &e->cc, e->now))
		qpmap_cc(qp);
	eng_hwc(qp, RXDP_HWC_RP_CNP_HANDLED);
}

void recv_pkt(struct rxdp_engine *e, struct pkt_info *pi)
{
	uint32_t qpn = bth_qpn(pi->bth);
	struct rxdp_eqp *qp = e->qp_tab[qpn & RXDP_QP_INDEX_MASK];
	uint32_t svc;

	if (qpn == RXDP_MCAST_QPN) {
		recv_mcast(e, pi);
		return;
	}
	if (!qp || qp->qpn != qpn) {
		e->stats.rx_drop_no_qp++;
		return;
	}
	svc = qp->type == IBV_QPT_UC   ? ROCE_OPF_SVC_UC
	      : qp->type == IBV_QPT_UD ? ROCE_OPF_SVC_UD
				       : ROCE_OPF_SVC_RC;
	if (!(pi->flags & svc)) {
		e->stats.rx_drop_malformed++;
		return;
	}
	if (qp->type != IBV_QPT_UD && !recv_source_ok(qp, pi)) {
		e->stats.rx_drop_source++;
		if (pi->flags & ROCE_OPF_CNP)
			eng_hwc(qp, RXDP_HWC_RP_CNP_IGNORED);
		return;
	}
	if (pi->flags & ROCE_OPF_CNP) {
		recv_cnp(qp);
		return;
	}
	if (qp->type != IBV_QPT_UD && e->cfg.cc_algo != ENG_CC_OFF && pi->ecn) {
		if (pi->ecn == PKT_ECN_CE) {
			eng_hwc(qp, RXDP_HWC_NP_ECN_MARKED);
			recv_ce(qp);
		} else if (e->rx_crowded) {
			/* ECN-capable, into a full receive path: as marked */
			eng_hwc(qp, RXDP_HWC_NP_RX_CONGESTED);
			recv_ce(qp);
		}
	}
	if (!pi->loop) /* looped back: no stream (engine.c) */
		eng_sched_data(&e->sched, true, pi->paylen != 0);
	/* a message in, in order: not a duplicate, not one past a gap */
	if (!pi->loop &&
	    (pi->flags & (ROCE_OPF_REQUEST | ROCE_OPF_LAST)) ==
		    (ROCE_OPF_REQUEST | ROCE_OPF_LAST) &&
	    (qp->type != IBV_QPT_RC || bth_psn(pi->bth) == qp->resp.epsn))
		eng_sched_msg(&e->sched, true);
	eng_hwc(qp, RXDP_HWC_RCVD_PKTS);
	eng_hwc_add(qp, RXDP_HWC_RCVD_BYTES, pi->paylen);
	e->stats.tc[qp->tc].rx_packets++;
	e->stats.tc[qp->tc].rx_bytes += pi->paylen;
	if (pi->flags & ROCE_OPF_REQUEST) {
		if (((pi->flags & ROCE_OPF_RETH) && !pi->reth) ||
		    ((pi->flags & ROCE_OPF_FETH) && !pi->feth))
			return;
		resp_rx(qp, pi);
	} else if (pi->flags & ROCE_OPF_RESPONSE) {
		req_rx(qp, pi);
	}
}

/* Write batches finished: what waited for them goes on */
static void recv_mem_resume(struct rxdp_eqp *qp)
{
	qp->mem_wait = false;
	while (qp->rcqe_head != qp->rcqe_tail) {
		struct eng_rcqe *r =
			&qp->rcqe[qp->rcqe_tail & (qp->rcqe_size - 1)];

		if (!eng_mem_written(qp, r->seq))
			break;
		eng_cq_add_data(qp->rcq, &r->wc, r->solicited,
				r->has_data ? &r->d : NULL);
		qp->rcqe_tail++;
	}
	req_retire(qp);
	if (qp->resp.ack_pending || qp->resp.rjob_head != qp->resp.rjob_tail)
		qp->mem_wait = true; /* resp_tx looks again */
}

/*
 * A queued write of qp failed (the memory went away): as a write that
 * failed at once would have. psn: the responder's request (~0: none), wqe:
 * else the completer's WQE.
 */
static void recv_mem_failed(struct rxdp_eqp *qp, uint64_t seq, uint32_t psn,
			    uint32_t wqe)
{
	int state = atomic_load(&qp->state);

	if (psn == ~0U) {
		struct swqe *w = &qp->sq[wqe & (qp->sq_size - 1)];

		if (w->started && w->mem_seq == seq)
			w->status = IBV_WC_LOC_PROT_ERR;
		return;
	}
	/* the receive it was for, if it waits: in error */
	for (uint32_t i = qp->rcqe_tail; i != qp->rcqe_head; i++) {
		struct eng_rcqe *r = &qp->rcqe[i & (qp->rcqe_size - 1)];

		if (r->seq >= seq && r->wc.status == IBV_WC_SUCCESS) {
			r->wc.status = IBV_WC_LOC_PROT_ERR;
			break;
		}
	}
	if (qp->type != IBV_QPT_RC || state == IBV_QPS_ERR ||
	    state == IBV_QPS_RESET)
		return;
	{
		struct pkt_desc d = { 0 };

		/* 9.9.3.1.3: the NAK the write would have drawn, then ERR */
		d.opcode = ROCE_RC_ACK;
		d.psn = psn;
		d.syndrome = ROCE_AETH_NAK | ROCE_NAK_REM_ACCESS_ERR;
		d.msn = qp->resp.msn;
		send_pkt(qp, &d);
		qpstate_to_err(qp, true);
	}
}

/*
 * A datagram to QPN 0xFFFFFF: one receive for every QP attached to the
 * group of its destination address (each checks its P_Key, state and
 * Q_Key), at most RXDP_MAX_MCAST_QP_ATTACH. Engine lock held.
 */
static void recv_mcast(struct rxdp_engine *e, struct pkt_info *pi)
{
	struct eng_mcast_grp *g;

	if (!(pi->flags & ROCE_OPF_SVC_UD)) {
		e->stats.rx_drop_malformed++;
		return;
	}
	g = eng_mcast_find(e, pi->dip, NULL);
	if (!g) {
		e->stats.rx_drop_no_qp++;
		return;
	}
	e->stats.rx_mcast++;
	/* resp_rx() changes no group: the list holds still meanwhile */
	for (uint32_t i = 0; i < g->n; i++) {
		struct rxdp_eqp *qp = g->qp[i];

		if (!roce_pkey_match(bth_pkey(pi->bth), qp->pkey)) {
			e->stats.rx_drop_ud++;
			continue;
		}
		eng_hwc(qp, RXDP_HWC_RCVD_PKTS);
		eng_hwc_add(qp, RXDP_HWC_RCVD_BYTES, pi->paylen);
		resp_rx(qp, pi);
	}
}

/*
 * A frame this device sends to a group (built, not yet queued): the
 * device's own members get it too. Engine lock held.
 */
void recv_mcast_loop(struct rxdp_engine *e, const struct pkt_path *pp,
		     void *frame, uint32_t len)
{
	struct rxdp_frame f = { .data = frame, .len = len };
	uint8_t gid[16] = { 0 };
	struct pkt_info pi;

	if (!e->mcast_ngrp && !e->cfg.group)
		return;
	/* a path's IPv4 address is its last 4 bytes; a GID's is mapped */
	if (pp->ipv6) {
		memcpy(gid, pp->dip, 16);
	} else {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, pp->dip + 12, 4);
	}
	eng_mcast_handoff(e, gid, &f); /* the other engines' members */
	if (!eng_mcast_find(e, gid, NULL))
		return;
	if (pkt_parse(frame, len, &pi)) {
		e->stats.rx_drop_malformed++;
		return;
	}
	recv_mcast(e, &pi);
}

/*
 * What the owners' memory threads finished (eng_mem_poll): the writes that
 * failed fail what they were for, and the QPs that waited go on
 */
void recv_mem_done(struct rxdp_engine *e)
{
	for (uint32_t i = 0; i < e->nmem_faults; i++) {
		const struct eng_mem_fault *f = &e->mem_faults[i];
		struct rxdp_eqp *qp = e->qp_tab[f->qpn & RXDP_QP_INDEX_MASK];

		if (qp && qp->qpn == f->qpn)
			recv_mem_failed(qp, f->seq, f->psn, f->wqe);
	}
	e->nmem_faults = 0;
	for (struct rxdp_eqp *qp = e->qps; qp; qp = qp->next)
		if (qp->mem_wait)
			recv_mem_resume(qp);
}
