// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The requester (IBTA 9.4, 9.7.1-9.7.3): send WQEs in order become request
 * packets (fence, max_rd_atomic, a window of PSNs), segmented by the path
 * MTU, with AckReq where the responder must answer. Engine lock held.
 */
#include <errno.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

/* The wire opcode of a packet of w: UC's and UD's are RC's in their service */
static uint8_t req_opcode(const struct rxdp_eqp *qp, const struct swqe *w,
			  bool first, bool last)
{
	uint8_t svc = qp->type == IBV_QPT_UC   ? ROCE_SVC_UC
		      : qp->type == IBV_QPT_UD ? ROCE_SVC_UD
					       : ROCE_SVC_RC;

	return rxdp_wr_wire_opcode(rxdp_wr_info(w->opcode), svc, first, last);
}

/*
 * A local operation (Bind MW, Local Invalidate, IBTA 10.6.7.2): done when
 * the requester reaches it, in order with the sends around it (a fenced
 * one waits for the reads and atomics before it); it takes no PSN and
 * completes when the WQEs before it have.
 */
static void req_local(struct rxdp_eqp *qp, struct swqe *w)
{
	w->started = w->done = true;
	w->first_psn = qp->req.next_psn;
	w->npkts = 0;
	if (w->opcode == IBV_WR_BIND_MW)
		w->status = mw_bind(qp, w);
	else if (mw_invalidate(qp, w->inv_rkey))
		w->status = IBV_WC_LOC_QP_OP_ERR; /* as Soft-RoCE */
}

/*
 * A WQE's local buffers checked and resolved (w->sg): at its start, and for
 * one a predecessor had started (takeover.c). false: it failed
 * (IBV_WC_LOC_PROT_ERR) and is done.
 */
bool req_resolve(struct rxdp_eqp *qp, struct swqe *w)
{
	uint32_t total;
	int n = 0;

	/* gathered bytes come with their SGEs, checked all the same */
	if (w->gathered)
		n = sge_resolve(qp->pd, w->sge, w->num_sge, 0, w->sg, &total);
	if (n >= 0 && w->inl) {
		w->sg[0].addr = (uintptr_t)w->inl;
		w->sg[0].len = w->length;
		w->nsg = w->length ? 1 : 0;
	} else if (n >= 0) {
		/* reads and atomics write into the local buffers */
		n = sge_resolve(qp->pd, w->sge, w->num_sge,
				(rxdp_wr_flags(w->opcode) & RXDP_WR_WRITES)
					? IBV_ACCESS_LOCAL_WRITE
					: 0,
				w->sg, &total);
		w->nsg = n;
	}
	if (n < 0) {
		w->status = IBV_WC_LOC_PROT_ERR;
		w->done = true;
		w->npkts = 0;
		return false;
	}
	return true;
}

/* Start a WQE: check its local buffers and give it its PSNs. */
static bool req_start(struct rxdp_eqp *qp, struct swqe *w)
{
	w->started = true;
	w->done = false;
	w->mem_seq = 0;
	w->first_psn = qp->req.next_psn;
	w->resp_psn = qp->req.next_psn;
	w->resp_off = 0;
	if (!req_resolve(qp, w))
		return false;
	if (qp->type == IBV_QPT_UD && w->length > qp->mtu) {
		/* a UD message is one packet (9.8.4) */
		w->status = IBV_WC_LOC_LEN_ERR;
		w->done = true;
		w->npkts = 0;
		return false;
	}
	/* one PSN but for a read: atomics, Atomic Write, Flush (A19) */
	if ((rxdp_wr_flags(w->opcode) & RXDP_WR_RESPONSE) &&
	    w->opcode != IBV_WR_RDMA_READ)
		w->npkts = 1;
	else
		w->npkts = w->length ? (w->length + qp->mtu - 1) / qp->mtu : 1;
	if ((rxdp_wr_flags(w->opcode) & RXDP_WR_RESPONSE))
		qp->req.rd_outstanding++;
	qp->req.next_psn = psn_add(qp->req.next_psn, w->npkts);
	qp->req.send_psn = w->first_psn;
	return true;
}

/*
 * Whether the WQE after the one being sent is a request that goes out
 * behind it (not a local operation, which sends nothing)
 */
static bool req_followed(const struct rxdp_eqp *qp, uint32_t prod)
{
	const struct swqe *n;

	if (qp->req.sq_cur + 1 == prod)
		return false;
	n = &qp->sq[(qp->req.sq_cur + 1) & (qp->sq_size - 1)];
	return !(rxdp_wr_flags(n->opcode) & RXDP_WR_LOCAL);
}

/* A datagram to a group: the device's own members get it too (recv.c) */
static int req_send_mcast(struct rxdp_eqp *qp, struct pkt_desc *d,
			  const struct pkt_path *pp)
{
	int n;
	void *buf = send_build(qp, d, pp, &n);

	if (!buf)
		return n;
	recv_mcast_loop(qp->e, pp, buf, n);
	send_queue(qp, d, buf, n);
	return 0;
}

/* What the requester does after looking at the WQE at sq_cur */
enum req_step {
	REQ_STOP, /* nothing more this pass */
	REQ_NEXT, /* on to the next WQE */
	REQ_SEND, /* a packet of it goes out */
};

/*
 * The WQE at sq_cur: started (its PSNs given), or done here if it is a
 * local operation, or waiting (a fence, max_rd_atomic, an error before it)
 */
static enum req_step req_ready(struct rxdp_eqp *qp, struct swqe *w)
{
	uint32_t max_rd = qp->max_rd_atomic ? qp->max_rd_atomic : 1;
	uint32_t f = rxdp_wr_flags(w->opcode);

	if (w->started && w->status != IBV_WC_SUCCESS) {
		/*
		 * A WQE that failed before it went out (a bad one from the
		 * ring): it completes in error once those before it have
		 */
		req_retire(qp);
		return REQ_STOP;
	}
	if (!w->started) {
		/* 10.8.3.3: a fenced WR waits for earlier reads/atomics */
		if ((w->send_flags & IBV_SEND_FENCE) && qp->req.rd_outstanding)
			return REQ_STOP;
		if ((f & RXDP_WR_RESPONSE) && qp->req.rd_outstanding >= max_rd)
			return REQ_STOP;
		if (f & RXDP_WR_LOCAL) {
			/* a failed one waits for req_retire() */
			req_local(qp, w);
			if (w->status == IBV_WC_SUCCESS)
				qp->req.sq_cur++;
			req_retire(qp);
			return w->status == IBV_WC_SUCCESS ? REQ_NEXT
							   : REQ_STOP;
		}
		if (!req_start(qp, w)) {
			req_retire(qp);
			return REQ_STOP;
		}
		/* the XDP program drops responses beyond next_psn */
		qpmap_next(qp);
	}
	if (w->done) { /* a read answered in full before a rewind */
		qp->req.send_psn = psn_add(w->first_psn, w->npkts);
		qp->req.sq_cur++;
		return REQ_NEXT;
	}
	return REQ_SEND;
}

/*
 * Packets in flight, against the window: those after una; while a packet
 * resent alone repairs a gap (selective retransmission), those sent after
 * the NAK: what went before it is held by the responder or lost, not on
 * the wire, and the lost one is on its way again (as TCP's fast recovery
 * counts). Never more than the responder's hold takes past una.
 */
static int32_t req_in_flight(const struct rxdp_eqp *qp)
{
	int32_t n = psn_diff(qp->req.send_psn, qp->comp.una);

	if (n >= RXDP_HOLD_WINDOW)
		return INT32_MAX;
	if (qp->comp.sr_recovery &&
	    psn_after(qp->comp.sr_recovery_psn, qp->comp.una))
		n = psn_diff(qp->req.send_psn, qp->comp.sr_recovery_psn);
	return n;
}

/* How the packets of one pass ask for ACKs */
struct req_pace {
	uint32_t prod; /* the SQ's producer index */
	int32_t window; /* packets in flight at most */
	uint32_t ackreq_every;
};

/* The packet at send_psn of a Send or an RDMA Write, its payload into sg */
static void req_fill_data(struct rxdp_eqp *qp, struct swqe *w,
			  struct pkt_desc *d, struct pkt_sg *sg,
			  const struct req_pace *p)
{
	uint32_t idx = psn_diff(qp->req.send_psn, w->first_psn);
	uint32_t off = idx * qp->mtu;
	bool first = idx == 0, last = idx + 1 == w->npkts;

	d->opcode = req_opcode(qp, w, first, last);
	d->paylen = w->length - off < qp->mtu ? w->length - off : qp->mtu;
	d->nsg = sge_slice(w->sg, w->nsg, off, d->paylen, sg);
	d->sg = sg;
	d->mem = w->inl ? NULL : &qp->mem_req;
	if (!w->inl)
		eng_stage_use(&qp->stage_req, qp->pd, w, w->first_psn);
	d->va = w->raddr;
	d->rkey = w->rkey;
	d->dma_len = w->length;
	d->imm = w->imm;
	d->ieth_rkey = w->inv_rkey;
	d->se = last && (w->send_flags & IBV_SEND_SOLICITED);
	/*
	 * AckReq (9.7.2): on a message's last packet unless a request follows
	 * it at once (the responder's ACK of a later PSN acknowledges both: a
	 * stream of small messages is acknowledged per burst, not per
	 * message), now and then in a long one, and on the packet that fills
	 * the window, or nothing would ever open it again. A paced QP asks in
	 * time as well as in packets: at a low rate 64 packets take longer
	 * than the timers wait (the tail-loss probe's 50 us, the timeout's
	 * 0.5 ms), which would resend what merely waits for its turn. So it
	 * asks once ENG_PACED_ACKREQ_NS passed since it last asked, and on
	 * every packet when packets go further apart than that.
	 */
	d->ackreq =
		(last && !req_followed(qp, p->prod)) ||
		qp->req.since_ackreq + 1 >= p->ackreq_every ||
		req_in_flight(qp) + 1 >= p->window ||
		(eng_cc_rp_paced(&qp->cc) &&
		 (qp->e->now - qp->req.ackreq_at >= ENG_PACED_ACKREQ_NS ||
		  eng_cc_gap_ns(qp->cc.rc, qp->mtu) >= ENG_PACED_ACKREQ_NS));
	if (qp->type != IBV_QPT_RC)
		d->ackreq = 0;
}

/* The request packet of w at send_psn */
static void req_fill(struct rxdp_eqp *qp, struct swqe *w, struct pkt_desc *d,
		     struct pkt_sg *sg, const struct req_pace *p)
{
	d->psn = qp->req.send_psn;
	d->opcode = req_opcode(qp, w, true, true);
	d->va = w->raddr;
	d->rkey = w->rkey;
	switch ((unsigned int)w->opcode) { /* RXDP_WR_FLUSH: not enum */
	case IBV_WR_RDMA_READ:
		d->psn = w->resp_psn;
		d->va = w->raddr + w->resp_off;
		d->dma_len = w->length - w->resp_off;
		d->ackreq = 1;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		d->swap_add = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP
				      ? w->swap
				      : w->compare_add;
		d->compare = w->compare_add;
		d->ackreq = 1;
		break;
	case IBV_WR_ATOMIC_WRITE:
		/* A19: its 8 bytes the payload, as the WR gave them */
		sg[0].addr = (uintptr_t)&w->compare_add;
		sg[0].len = sg[0].span = 8;
		d->sg = sg;
		d->nsg = 1;
		d->paylen = 8;
		d->dma_len = 8;
		d->ackreq = 1;
		break;
	case RXDP_WR_FLUSH:
		d->flush_type = w->flush_type;
		d->flush_level = w->flush_level;
		d->dma_len = w->length;
		d->ackreq = 1;
		break;
	default:
		req_fill_data(qp, w, d, sg, p);
		break;
	}
	/* the first packet of a go-back, a tail-loss probe */
	if (qp->req.ackreq_next && qp->type == IBV_QPT_RC)
		d->ackreq = 1;
}

/* Out it goes: to the connected peer, or a datagram's destination */
static int req_send(struct rxdp_eqp *qp, const struct swqe *w,
		    struct pkt_desc *d)
{
	if (qp->type != IBV_QPT_UD)
		return send_pkt(qp, d);
	d->ackreq = 0;
	d->qkey = w->ud_qkey;
	d->sqp = qp->qpn;
	d->dqpn = w->ud_qpn;
	return d->dqpn == RXDP_MCAST_QPN ? req_send_mcast(qp, d, &w->ud_path)
					 : send_pkt_path(qp, d, &w->ud_path);
}

/*
 * A packet of w went out: the PSNs move on; UC and UD are done when it is
 * sent (9.8.2, 9.8.4). false: the QP failed meanwhile.
 */
static bool req_went(struct rxdp_eqp *qp, struct swqe *w,
		     const struct pkt_desc *d, bool retx)
{
	bool last = roce_opcode_flags(d->opcode) & ROCE_OPF_LAST;

	if (retx)
		qp->e->stats.retransmits++;
	else
		qp->req.tx_hw = d->opcode == ROCE_RC_READ_REQUEST
					? psn_add(w->first_psn, w->npkts)
					: psn_add(d->psn, 1);
	qp->req.since_ackreq = d->ackreq ? 0 : qp->req.since_ackreq + 1;
	if (d->ackreq)
		qp->req.ackreq_at = qp->e->now;
	if (qp->type != IBV_QPT_RC) {
		qp->comp.una = psn_add(d->psn, 1);
		qp->req.send_psn = qp->comp.una;
		if (!last)
			return true;
		w->done = true;
		qp->req.sq_cur++;
		req_retire(qp);
		return atomic_load(&qp->state) != IBV_QPS_ERR;
	}
	qp->req.ackreq_next = false;
	req_sent(qp, d->psn, retx, d->ackreq);
	if (d->opcode == ROCE_RC_READ_REQUEST || last) {
		qp->req.send_psn = psn_add(w->first_psn, w->npkts);
		qp->req.sq_cur++;
	} else {
		qp->req.send_psn = psn_add(qp->req.send_psn, 1);
	}
	return true;
}

/*
 * DCQCN's pacing: whether the QP's next request packet must wait for its
 * current rate (the pass comes back at cc_pace_at, eng_next_deadline)
 */
static bool req_cc_wait(struct rxdp_eqp *qp)
{
	qp->cc_pace_wait = eng_cc_rp_paced(&qp->cc) &&
			   qp->e->now < qp->cc_pace_at;
	return qp->cc_pace_wait;
}

/*
 * A packet of len bytes went: the byte counter, and the next one's time.
 * From when this one was due, if it went within a gap of that (the pass
 * came late, not the QP), else from now: no credit saved while idle.
 */
static void req_cc_went(struct rxdp_eqp *qp, const struct pkt_desc *d)
{
	struct rxdp_engine *e = qp->e;
	uint32_t len = pkt_len(&qp->path, d->opcode, d->paylen);
	uint64_t gap;

	eng_cc_rp_sent(&qp->cc, &e->cc, len, e->now);
	if (!eng_cc_rp_paced(&qp->cc))
		return;
	gap = eng_cc_gap_ns(qp->cc.rc, len);
	if (qp->cc_pace_at > e->now || e->now - qp->cc_pace_at >= gap)
		qp->cc_pace_at = e->now;
	qp->cc_pace_at += gap;
}

/*
 * The packet a NAK asked for alone (selective retransmission, comp.c):
 * sent, and the requester carries on where it was. 1 if it went, 0 if
 * there is nothing (or no longer anything) to resend, -1 if it must wait
 * (pacing, no buffer, its payload not read yet): nothing else goes first.
 */
static int req_resend(struct rxdp_eqp *qp, const struct req_pace *p)
{
	struct swqe *w = &qp->sq[qp->req.resend_wqe & (qp->sq_size - 1)];
	uint32_t cur = qp->req.sq_cur, send_psn = qp->req.send_psn;
	bool ackreq_next = qp->req.ackreq_next;
	struct pkt_sg sg[ENG_MAX_SGE];
	struct pkt_desc d = { 0 };
	int err;

	/* answered meanwhile, or gone back over since (a late packet) */
	if (psn_before(qp->req.resend_psn, qp->comp.una) || !w->started ||
	    w->done ||
	    !psn_in_window(qp->req.resend_psn, w->first_psn,
			   psn_add(w->first_psn, w->npkts))) {
		qp->req.resend = false;
		return 0;
	}
	if (req_cc_wait(qp))
		return -1;
	qp->req.sq_cur = qp->req.resend_wqe;
	qp->req.send_psn = qp->req.resend_psn;
	qp->req.ackreq_next = true; /* its ACK ends the recovery at once */
	req_fill(qp, w, &d, sg, p);
	err = req_send(qp, w, &d);
	if (err == -EFAULT) {
		/*
		 * the local buffer went away: the main loop goes on from
		 * here, meets it again and fails the WQE
		 */
		qp->req.resend = false;
		return 0;
	}
	if (!err) {
		req_cc_went(qp, &d);
		req_went(qp, w, &d, true);
		qp->req.resend = false;
		qp->e->stats.sr_resends++;
	}
	qp->req.sq_cur = cur;
	qp->req.send_psn = send_psn;
	qp->req.ackreq_next = ackreq_next;
	return err ? -1 : 1;
}

int req_tx(struct rxdp_eqp *qp, int budget)
{
	struct req_pace p = {
		.prod = atomic_load_explicit(&qp->sq_prod,
					     memory_order_acquire),
		.window = qp->type != IBV_QPT_RC ? ENG_WINDOW
			  : qp->comp.probing	 ? 1 /* after an expiry */
						 : (int32_t)qp->comp.cwnd,
	};
	struct pkt_sg sg[ENG_MAX_SGE];
	int sent = 0, err;

	p.ackreq_every = p.window / 4 < ENG_ACKREQ_EVERY ? p.window / 4
							 : ENG_ACKREQ_EVERY;
	if (qp->comp.rnr_at)
		return 0;
	if (qp->req.resend) {
		int r = req_resend(qp, &p);

		if (r < 0)
			return 0;
		sent += r;
	}
	while (sent < budget && qp->req.sq_cur != p.prod) {
		struct swqe *w = &qp->sq[qp->req.sq_cur & (qp->sq_size - 1)];
		struct pkt_desc d = { 0 };
		enum req_step step = req_ready(qp, w);
		bool retx;

		if (step == REQ_STOP)
			break;
		if (step == REQ_NEXT)
			continue;
		if (req_in_flight(qp) >= p.window || req_cc_wait(qp))
			break;
		req_fill(qp, w, &d, sg, &p);
		retx = psn_before(d.psn, qp->req.tx_hw);
		err = req_send(qp, w, &d);
		if (err == -EFAULT) {
			/* the local buffer went away: 10.8.3 protection error */
			w->status = IBV_WC_LOC_PROT_ERR;
			w->done = true;
			if (rxdp_wr_flags(w->opcode) & RXDP_WR_RESPONSE)
				qp->req.rd_outstanding--;
			req_retire(qp);
			break;
		}
		if (err)
			break;
		sent++;
		if (qp->type != IBV_QPT_UD)
			req_cc_went(qp, &d);
		if (!req_went(qp, w, &d, retx))
			break;
	}
	return sent;
}
