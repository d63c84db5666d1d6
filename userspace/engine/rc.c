// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The RC transport (IBTA Vol 1 ch. 9), in three roles, one file each, as
 * Soft-RoCE has them:
 *   req.c   requester: SQ WQEs -> request packets (9.4, 9.7.1-9.7.3)
 *   comp.c  completer: ACK/NAK and read/atomic responses -> completions,
 *           and retransmission on NAK or timeout (9.7.5.2, 9.7.6, 10.8.3)
 *   resp.c  responder: request packets -> memory, RQ WQEs, ACK/NAK and
 *           read/atomic responses (9.7.4, 9.7.5.1)
 * and this file: what they share (packets out, the owner's buffers, keys,
 * completions, flush, reset) and the dispatch of received packets.
 * Everything here runs with the engine lock held.
 *
 * UC (IBTA 9.8) shares the code: Send and RDMA Write only, no ACKs and no
 * retransmission (a WQE completes once its last packet is sent), and a
 * responder that silently drops a message with a PSN gap or an error and
 * picks up again at the next FIRST/ONLY packet.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

/* --- small helpers --------------------------------------------------------- */

uint64_t rc_qp_timeout_ns(const struct rxdp_eqp *qp)
{
	/* IBTA 9.7.6.1.3: 4.096 us * 2^timeout; 0 means infinite */
	return qp->timeout ? 4096ULL << qp->timeout : 0;
}

/* Build and queue one packet along pp (d->dqpn already set) */
int rc_qp_send_pkt_path(struct rxdp_eqp *qp, struct pkt_desc *d,
			const struct pkt_path *pp)
{
	struct rxdp_engine *e = qp->e;
	uint32_t cap = 0;
	void *buf;
	int n;

	buf = e->cfg.ops->tx_get(e->cfg.port, &cap);
	if (!buf) {
		e->tx_blocked = true;
		e->stats.tx_no_buf++;
		return -EAGAIN;
	}
	d->pkey = qp->pkey;
	n = pkt_build(buf, cap, pp, d);
	if (n < 0) {
		e->cfg.ops->tx_abort(e->cfg.port, buf);
		if (n == -EAGAIN) /* its payload is being staged (mem.c) */
			return n;
		eng_hwc(qp, RXDP_HWC_SEND_ERR);
		if (n != -EFAULT)
			pr_warn("engine: QP %u: cannot build opcode 0x%x: %d\n",
				qp->qpn, d->opcode, n);
		return n;
	}
	if (d->dqpn == RXDP_MCAST_QPN)
		eng_mcast_loop(e, pp, buf, n); /* our own members */
	e->cfg.ops->tx_put(e->cfg.port, buf, n);
	e->stats.tx_packets++;
	e->tx_data += d->paylen != 0;
	/* a message out, not a retransmission (tail-loss probes included) */
	if ((roce_opcode_flags(d->opcode) &
	     (ROCE_OPF_REQUEST | ROCE_OPF_LAST)) ==
		    (ROCE_OPF_REQUEST | ROCE_OPF_LAST) &&
	    !psn_before(d->psn, qp->tx_hw))
		eng_stream_msg(e, false);
	eng_hwc(qp, RXDP_HWC_SENT_PKTS);
	eng_hwc_add(qp, RXDP_HWC_SENT_BYTES, d->paylen);
	/*
	 * An RC request behind requests already on the wire may wait for the
	 * next flush if their acknowledgement is sure to bring a pass
	 * (eng_ack_due). Anything else (the first one out, a retransmission, a
	 * response, UC, UD) goes out this pass.
	 */
	e->tx_unflushed++;
	if (d->ackreq)
		qp->ackreq_end = psn_add(d->psn, 1);
	if (qp->type != IBV_QPT_RC ||
	    (roce_opcode_flags(d->opcode) & ROCE_OPF_RESPONSE) ||
	    !eng_ack_due(qp) || psn_before(d->psn, qp->flushed_psn))
		e->tx_urgent = true;
	return 0;
}

/* ... to the connected peer */
int rc_qp_send_pkt(struct rxdp_eqp *qp, struct pkt_desc *d)
{
	d->dqpn = qp->dest_qpn;
	return rc_qp_send_pkt_path(qp, d, &qp->path);
}

/*
 * Copy len bytes into a scatter list (the owner's memory) at byte offset
 * off: 0, or -EAGAIN (nothing lost: drop the packet, it comes again)
 */
int rc_sg_copy_to(struct rxdp_eqp *qp, const struct pkt_sg *sg, int nsg,
		  uint32_t off, const uint8_t *src, uint32_t len,
		  const struct eng_wtag *tag)
{
	for (int i = 0; i < nsg && len; i++) {
		uint32_t n;

		if (off >= sg[i].len) {
			off -= sg[i].len;
			continue;
		}
		n = sg[i].len - off;
		if (n > len)
			n = len;
		if (eng_mem_write(qp, sg[i].addr + off, src, n, tag))
			return -EAGAIN;
		src += n;
		len -= n;
		off = 0;
	}
	return 0;
}

/* The part [off, off+len) of a gather list, as a gather list */
int rc_sg_slice(const struct pkt_sg *sg, int nsg, uint32_t off, uint32_t len,
		struct pkt_sg *out)
{
	int n = 0;

	for (int i = 0; i < nsg && len; i++) {
		uint32_t k;

		if (off >= sg[i].len) {
			off -= sg[i].len;
			continue;
		}
		k = sg[i].len - off;
		if (k > len)
			k = len;
		out[n].addr = sg[i].addr + off;
		out[n].span = sg[i].span - off;
		out[n++].len = k;
		len -= k;
		off = 0;
	}
	return n;
}

/*
 * A local SGE list -> the owner's buffers, checking lkey (an MR of the QP's
 * PD, IBTA 10.6.3.2), bounds and access
 */
int rc_sge_resolve(struct rxdp_epd *pd, const struct ibv_sge *sge, int num,
		   unsigned int need, struct pkt_sg *out, uint32_t *total)
{
	struct rxdp_engine *e = pd->e;

	int n = 0;

	*total = 0;
	for (int i = 0; i < num; i++) {
		struct rxdp_emr *mr;

		if (!sge[i].length)
			continue;
		/* an L_Key names a region, never a window (IBTA 10.6.7) */
		mr = eng_mr_lookup(e, sge[i].lkey);
		if (!mr || mr->pd != pd || (mr->access & need) != need ||
		    sge[i].addr < mr->iova ||
		    sge[i].addr - mr->iova + sge[i].length > mr->len)
			return -EACCES;
		out[n].addr = mr->addr + (sge[i].addr - mr->iova);
		out[n].span = sge[i].length;
		out[n++].len = sge[i].length;
		*total += sge[i].length;
	}
	return n;
}

/*
 * R_Key check for a remote access (IBTA 10.6.3.3 / 9.7.4.1.7-9): the key
 * must name an MR of the QP's PD with the rights (every one in need), the
 * QP must grant them, and [va, va+len) must lie inside the MR. true and
 * *addr (the owner's address) if allowed.
 */
static bool rkey_range_ok(struct rxdp_eqp *qp, uint32_t rkey, uint64_t va,
			  uint64_t len, unsigned int need, uint64_t *addr)
{
	struct rxdp_emr *mr = eng_key_lookup(qp->e, rkey);

	if (!mr || mr->pd != qp->pd || (qp->access & need) != need)
		return false;
	if (mr->mw_type)
		return mw_access(qp, mr, va, len, need, addr);
	if ((mr->access & need) != need)
		return false;
	if (va < mr->iova || va - mr->iova > mr->len ||
	    len > mr->len - (va - mr->iova))
		return false;
	*addr = mr->addr + (va - mr->iova);
	return true;
}

/* ... where a zero-length access checks nothing (C9-88) */
bool rc_rkey_check(struct rxdp_eqp *qp, uint32_t rkey, uint64_t va,
		   uint64_t len, unsigned int need, uint64_t *addr)
{
	*addr = 0;
	return !len || rkey_range_ok(qp, rkey, va, len, need, addr);
}

/*
 * A Flush (IBTA 1.5 A19): the key is checked whatever the length, as
 * Soft-RoCE does (a zero-length Flush still says something of the memory
 * it names); selectivity MR flushes the whole region the key names, a
 * range must lie inside it. need: the placement types' access rights.
 */
bool rc_flush_check(struct rxdp_eqp *qp, uint32_t rkey, uint64_t va,
		    uint32_t len, uint32_t sel, unsigned int need)
{
	struct rxdp_emr *mr = eng_key_lookup(qp->e, rkey);
	uint64_t addr;

	if (!mr)
		return false;
	if (sel == ROCE_FLUSH_MR)
		return rkey_range_ok(qp, rkey, mr->iova, mr->len, need, &addr);
	return rkey_range_ok(qp, rkey, va, len, need, &addr);
}

/* --- completions --------------------------------------------------------- */

/* The opcode of a send WQE's completion */
static enum ibv_wc_opcode wc_opcode(enum ibv_wr_opcode op)
{
	const struct rxdp_wr_opcode_info *i = rxdp_wr_info(op);

	return i ? (enum ibv_wc_opcode)i->wc_opcode : IBV_WC_SEND;
}

/* The completion of a send WQE; false if it completes silently */
bool rc_req_wc(struct rxdp_eqp *qp, const struct swqe *w, struct ibv_wc *wc)
{
	/* IBTA 10.8.3.1 / ibv_post_send(3): unsignaled WRs complete silently
	 * unless they fail */
	if (w->status == IBV_WC_SUCCESS && !qp->sq_sig_all &&
	    !(w->send_flags & IBV_SEND_SIGNALED))
		return false;
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->status = w->status;
	wc->opcode = wc_opcode(w->opcode);
	wc->byte_len = w->length;
	wc->qp_num = qp->qpn;
	return true;
}

/*
 * Send/receive WQE slots up to cons are free: for posters in this process
 * (sq_cons, rq_cons) and for a shared queue's owner (done). Before the
 * completion that says so is seen: an owner that reposts on a completion
 * must find the slot free.
 */
void rc_sq_free(struct rxdp_eqp *qp, uint32_t cons)
{
	atomic_store_explicit(&qp->sq_cons, cons, memory_order_release);
	if (qp->sh)
		atomic_store_explicit(&qp->sh->sq.done, cons,
				      memory_order_release);
}

static void rq_free(struct rxdp_eqp *qp, _Atomic uint32_t *consp, uint32_t cons)
{
	atomic_store_explicit(consp, cons, memory_order_release);
	if (qp->srq && qp->srq->sh)
		atomic_store_explicit(&qp->srq->sh->done, cons,
				      memory_order_release);
	else if (!qp->srq && qp->sh)
		atomic_store_explicit(&qp->sh->rq.done, cons,
				      memory_order_release);
}

/*
 * Take the next receive WQE (the QP's RQ or its SRQ) as the current one, if
 * there is no current one yet. false: none posted (RNR).
 */
bool rc_rq_take(struct rxdp_eqp *qp)
{
	_Atomic uint32_t *prodp = qp->srq ? &qp->srq->prod : &qp->rq_prod;
	_Atomic uint32_t *consp = qp->srq ? &qp->srq->cons : &qp->rq_cons;
	uint32_t prod, cons, size = qp->srq ? qp->srq->size : qp->rq_size;
	struct rwqe *r;

	if (qp->cur_valid)
		return true;
	prod = atomic_load_explicit(prodp, memory_order_acquire);
	cons = atomic_load_explicit(consp, memory_order_relaxed);
	if (prod == cons) {
		if (!eng_drain_recv(qp))
			return false;
		prod = atomic_load_explicit(prodp, memory_order_acquire);
	}
	r = &(qp->srq ? qp->srq->rq : qp->rq)[cons & (size - 1)];
	qp->cur_wr_id = r->wr_id;
	qp->cur_nsge = r->num_sge;
	memcpy(qp->cur_sge, r->sge, r->num_sge * sizeof(*r->sge));
	qp->cur_valid = true;
	rq_free(qp, consp, cons + 1);
	/* IBTA 11.2.7.1 (o11-?): the SRQ limit event fires once, then disarms */
	if (qp->srq && qp->srq->limit && prod - cons - 1 < qp->srq->limit) {
		qp->srq->limit = 0;
		eng_event(qp->e, IBV_EVENT_SRQ_LIMIT_REACHED, qp->srq->user);
	}
	return true;
}

void rc_recv_complete(struct rxdp_eqp *qp, enum ibv_wc_status status,
		      enum ibv_wc_opcode op, uint32_t len,
		      const struct pkt_info *pi)
{
	rc_recv_complete_data(qp, status, op, len, pi, NULL);
}

/*
 * Scatter to CQE (common/hca.h): where the first len bytes of a message go
 * in the buffers sg names, into d, when the receive CQ is an owner's (it
 * scatters them when it polls), they fit, and they are in memory rxdpd
 * reaches only through a system call. false: the caller writes them into
 * the owner's memory itself.
 */
bool rc_scatter_prep(struct rxdp_eqp *qp, const struct pkt_sg *sg, int nsg,
		     uint32_t len, struct rxdp_hca_cqd *d)
{
	struct pkt_sg piece[ENG_MAX_SGE];
	bool direct = true;
	int n;

	if (qp->rcq->own || !len || len > RXDP_HCA_SCATTER_MAX)
		return false;
	/*
	 * Not into ODP memory: the owner may have unmapped it, and its poll
	 * would fault where rxdpd's write is an error completion
	 */
	for (int i = 0; i < qp->cur_nsge; i++) {
		const struct rxdp_emr *mr =
			eng_mr_lookup(qp->e, qp->cur_sge[i].lkey);

		if (qp->cur_sge[i].length && mr &&
		    (mr->access & IBV_ACCESS_ON_DEMAND))
			return false;
	}
	n = rc_sg_slice(sg, nsg, 0, len, piece);
	if (n > RXDP_HCA_SCATTER_SGES)
		return false;
	/* memory rxdpd maps too costs no system call: written at once */
	for (int i = 0; i < n && direct; i++)
		direct = eng_mem_direct(qp->pd, piece[i].addr, piece[i].len);
	if (direct)
		return false;
	memset(d, 0, offsetof(struct rxdp_hca_cqd, data));
	for (int i = 0; i < n; i++) {
		d->addr[i] = piece[i].addr;
		d->len[i] = piece[i].len;
	}
	qp->e->stats.rx_scattered++;
	return true;
}

void rc_recv_complete_data(struct rxdp_eqp *qp, enum ibv_wc_status status,
			   enum ibv_wc_opcode op, uint32_t len,
			   const struct pkt_info *pi,
			   const struct rxdp_hca_cqd *d)
{
	const struct roce_immdt *imm = pi ? pi->immdt : NULL;
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = qp->cur_wr_id;
	wc.status = status;
	wc.opcode = op;
	wc.byte_len = len;
	wc.qp_num = qp->qpn;
	wc.src_qp = qp->dest_qpn;
	if (imm) {
		wc.imm_data = immdt_imm(imm);
		wc.wc_flags |= IBV_WC_WITH_IMM;
	}
	/* Send with Invalidate: the key, in host order (ibv_wc's union) */
	if (pi && pi->ieth && status == IBV_WC_SUCCESS) {
		wc.invalidated_rkey = ieth_rkey(pi->ieth);
		wc.wc_flags |= IBV_WC_WITH_INV;
	}
	if (status == IBV_WC_SUCCESS)
		eng_hwc(qp, RXDP_HWC_RDMA_RECVS);
	qp->cur_valid = false;
	rc_recv_cqe(qp, &wc, pi && bth_se(pi->bth), d);
}

/* --- the batched path of the owner's memory (mem.c) ---------------------- */

/*
 * A receive completion goes on the CQ once the bytes it says arrived are
 * written (a write to memory not shared with rxdpd is queued), and after
 * every earlier one of the QP
 */
void rc_recv_cqe(struct rxdp_eqp *qp, const struct ibv_wc *wc, bool solicited,
		 const struct rxdp_hca_cqd *d)
{
	struct eng_rcqe *r;

	if (qp->rcqe_head == qp->rcqe_tail &&
	    eng_mem_written(qp, qp->mem_seq)) {
		eng_cq_add_data(qp->rcq, wc, solicited, d);
		return;
	}
	if (qp->rcqe_head - qp->rcqe_tail == qp->rcqe_size) {
		uint32_t size = qp->rcqe_size ? qp->rcqe_size * 2 : 16;
		struct eng_rcqe *t = malloc(size * sizeof(*t));

		if (!t) { /* cannot wait: lost, as on a CQ overflow */
			qp->e->stats.cq_overflows++;
			return;
		}
		for (uint32_t i = 0; i < qp->rcqe_size; i++)
			t[i] = qp->rcqe[(qp->rcqe_tail + i) &
					(qp->rcqe_size - 1)];
		free(qp->rcqe);
		qp->rcqe = t;
		qp->rcqe_head -= qp->rcqe_tail;
		qp->rcqe_tail = 0;
		qp->rcqe_size = size;
	}
	r = &qp->rcqe[qp->rcqe_head++ & (qp->rcqe_size - 1)];
	r->wc = *wc;
	r->solicited = solicited;
	r->has_data = d != NULL;
	if (d)
		r->d = *d;
	r->seq = qp->mem_seq;
	qp->mem_wait = true;
}

/* Write batches finished: what waited for them goes on */
void rc_mem_resume(struct rxdp_eqp *qp)
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
	if (qp->ack_pending || qp->rjob_head != qp->rjob_tail)
		qp->mem_wait = true; /* resp_tx looks again */
}

/*
 * A queued write of qp failed (the memory went away): as a write that
 * failed at once would have. psn: the responder's request (~0: none), wqe:
 * else the completer's WQE.
 */
void rc_mem_failed(struct rxdp_eqp *qp, uint64_t seq, uint32_t psn,
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
		d.msn = qp->msn;
		rc_qp_send_pkt(qp, &d);
		rc_qp_to_err(qp, true);
	}
}

/*
 * Flush what is posted to a QP in ERR (IBTA 10.3.1: WR_FLUSH_ERR), a bounded
 * number per pass (the rest in the next ones: a pass returns work done)
 */
int rc_flush(struct rxdp_eqp *qp)
{
	uint32_t prod, cons;
	struct ibv_wc wc;
	int n = 0;

	if (atomic_load(&qp->state) != IBV_QPS_ERR)
		return 0;
	prod = atomic_load_explicit(&qp->sq_prod, memory_order_acquire);
	cons = atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);
	for (; cons != prod && n < ENG_FLUSH_BUDGET; cons++, n++) {
		struct swqe *w = &qp->sq[cons & (qp->sq_size - 1)];

		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = wc_opcode(w->opcode);
		wc.qp_num = qp->qpn;
		rc_sq_free(qp, cons + 1);
		eng_cq_add(qp->scq, &wc, false);
	}
	qp->sq_cur = cons;
	if (qp->cur_valid) {
		rc_recv_complete(qp, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, NULL);
		n++;
	}
	if (qp->srq)
		return n; /* the SRQ's WQEs belong to every QP on it */
	prod = atomic_load_explicit(&qp->rq_prod, memory_order_acquire);
	cons = atomic_load_explicit(&qp->rq_cons, memory_order_relaxed);
	for (; cons != prod && n < 2 * ENG_FLUSH_BUDGET; cons++, n++) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = qp->rq[cons & (qp->rq_size - 1)].wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = IBV_WC_RECV;
		wc.qp_num = qp->qpn;
		rq_free(qp, &qp->rq_cons, cons + 1);
		rc_recv_cqe(qp, &wc, false, NULL);
	}
	return n;
}

void rc_qp_to_err(struct rxdp_eqp *qp, bool event)
{
	eng_qp_set_state(qp, IBV_QPS_ERR);
	qp->attr.qp_state = qp->attr.cur_qp_state = IBV_QPS_ERR;
	/* the XDP program drops what still comes for it */
	qpmap_ctx(qp);
	qp->timer_at = qp->tlp_at = 0;
	qp->rnr_at = 0;
	qp->rjob_tail = qp->rjob_head;
	qp->ack_pending = false;
	rc_flush(qp);
	if (event)
		eng_event(qp->e, IBV_EVENT_QP_FATAL, qp->user);
	/* 11.6.3: a QP on an SRQ reports that it will take no more WQEs */
	if (qp->srq)
		eng_event(qp->e, IBV_EVENT_QP_LAST_WQE_REACHED, qp->user);
}

void rc_qp_reset(struct rxdp_eqp *qp)
{
	atomic_store(&qp->sq_prod, 0);
	atomic_store(&qp->sq_cons, 0);
	atomic_store(&qp->rq_prod, 0);
	atomic_store(&qp->rq_cons, 0);
	qp->sq_cur = 0;
	qp->send_psn = qp->next_psn = qp->una = qp->tx_hw = qp->flushed_psn = 0;
	qp->ackreq_end = qp->flushed_ackreq = 0;
	qp->rd_outstanding = 0;
	qp->since_ackreq = 0;
	qp->timer_at = qp->rnr_at = qp->tlp_at = 0;
	qp->read_rewound = false;
	qp->probing = false;
	qp->seq_nak_seen = false;
	qp->backoff = 0;
	qp->rtt_known = qp->rtt_timing = false;
	qp->srtt = qp->rttvar = 0;
	qp->tlp_sent = qp->ackreq_next = qp->cwr = false;
	qp->cwnd = ENG_WINDOW;
	qp->cwnd_acked = 0;
	qp->epsn = qp->msn = 0;
	qp->resp_sent = false;
	qp->nak_sent = false;
	qp->rseq = RSEQ_NONE;
	qp->cur_valid = false;
	qp->rjob_head = qp->rjob_tail = 0;
	memset(qp->acache, 0, sizeof(qp->acache));
	qp->ack_pending = false;
	/* what waited for the owner's memory thread is forgotten */
	qp->rcqe_head = qp->rcqe_tail = 0;
	qp->mem_wait = false;
	eng_mem_qp_gone(qp);
	qpmap_psn_sync(qp);
	qpmap_seed_epsn(qp);
}

uint64_t rc_deadline(struct rxdp_eqp *qp)
{
	uint64_t d = UINT64_MAX;

	if (qp->timer_at && qp->timer_at < d)
		d = qp->timer_at;
	if (qp->rnr_at && qp->rnr_at < d)
		d = qp->rnr_at;
	if (qp->tlp_at && qp->tlp_at < d)
		d = qp->tlp_at;
	return d;
}

/* --- dispatch -------------------------------------------------------------- */

/*
 * RC/UC: only the connected peer may send to a QP: from the path's
 * destination address to its source address, and from the MAC the path
 * resolved to, where it resolved a unicast one (Soft-RoCE's check_addr();
 * the XDP program checks the same first, against qp_ctx). A frame looped
 * back inside the port (a QP talking to a GID of its own device) comes from
 * our own MAC and address, which is then what the path says.
 */
static bool rc_source_ok(const struct rxdp_eqp *qp, const struct pkt_info *pi)
{
	const struct rxdp_path *rp = &qp->rpath;
	uint32_t off = pi->ipv6 ? 0 : 12;

	return rxdp_source_ip_ok(pi->ipv6, rp->ipv6, pi->sip + off,
				 pi->dip + off, rp->dip, rp->sip) &&
	       (!rxdp_peer_mac_checked(rp->dmac) ||
		rxdp_source_mac_ok(pi->smac, rp->dmac));
}

void rc_rx(struct rxdp_engine *e, struct pkt_info *pi)
{
	uint32_t qpn = bth_qpn(pi->bth);
	struct rxdp_eqp *qp = e->qp_tab[qpn & RXDP_QP_INDEX_MASK];
	uint32_t svc;

	if (qpn == RXDP_MCAST_QPN) {
		eng_mcast_rx(e, pi);
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
	if (qp->type != IBV_QPT_UD && !rc_source_ok(qp, pi)) {
		e->stats.rx_drop_source++;
		return;
	}
	e->rx_data += pi->paylen != 0;
	/* a message in, in order: not a duplicate, not one past a gap */
	if ((pi->flags & (ROCE_OPF_REQUEST | ROCE_OPF_LAST)) ==
		    (ROCE_OPF_REQUEST | ROCE_OPF_LAST) &&
	    (qp->type != IBV_QPT_RC || bth_psn(pi->bth) == qp->epsn))
		eng_stream_msg(e, true);
	eng_hwc(qp, RXDP_HWC_RCVD_PKTS);
	eng_hwc_add(qp, RXDP_HWC_RCVD_BYTES, pi->paylen);
	if (pi->flags & ROCE_OPF_REQUEST) {
		if (((pi->flags & ROCE_OPF_RETH) && !pi->reth) ||
		    ((pi->flags & ROCE_OPF_FETH) && !pi->feth))
			return;
		resp_rx(qp, pi);
	} else if (pi->flags & ROCE_OPF_RESPONSE) {
		req_rx(qp, pi);
	}
}

/* Up to budget packets of the QP: responses first, then requests */
int rc_tx(struct rxdp_eqp *qp, int budget)
{
	int state = atomic_load(&qp->state);
	int sent = 0;

	if (state == IBV_QPS_RTR || state == IBV_QPS_RTS ||
	    state == IBV_QPS_SQD)
		sent += resp_tx(qp, budget);
	if (state == IBV_QPS_RTS && sent < budget)
		sent += req_tx(qp, budget - sent);
	return sent;
}
